//! The atomic tools' session (atomic_bw, atomic_lat). Before anything runs,
//! each side asks its provider whether it supports the op on the type in
//! the needed form (fi_atomicvalid and friends) and refuses cleanly if not.
//! Target slots start at the operand scheme's initial value; after the run
//! every side whose memory was hit compares each slot with the value the
//! operations must have produced, and the two verdicts are exchanged so the
//! client reports both. A wrong value is an error naming what was expected
//! and what was found.

use super::{
    addresses, client_prelude, conclude, exchange_endpoints, expect_params, lat_clock, server_provider, server_start,
    Failed, Outcome,
};
use crate::driver::{AtomicPlan, DriverConfig, FabricDriver, LatClock, Op, AMO_STRIDE, TARGET};
use crate::options::amo::AmoOptions;
use crate::options::bw::MAX_LIST;
use anyhow::{anyhow, bail, Context, Result};
use fabdiag_engine::amo::{
    libfabric_op, validate, verify_value, AmoOp, AmoType, CswapOp, FiCall, Scheme, Verification,
};
use fabdiag_engine::{run_lat_size, run_size, Activity, LatConfig, LatResult, Mode, SizeResult};
use fabdiag_fabric::{AtomicKind, AtomicSpec, Capability, Endpoint, FabricError, HostBuffer, InfoList};
use fabdiag_proto::{Control, Listener, Message, Phase, ProtoError};
use fabdiag_report::json::{AmoBw, AmoLat};
use fabdiag_report::{legacy, AmoRun, Role, TestMode};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Test hook: pretend this many more iterations hit the target, so the
/// final-value check must fail (proves the check can fail end to end).
const EXTRA_ENV: &str = "FABDIAG_TEST_AMO_EXTRA_ITERATIONS";

/// Where an atomic run's text goes.
pub trait AmoSink: super::Announce {
    fn banner(&mut self, run: &AmoRun);
    fn bw_row(&mut self, run: &AmoRun, r: &SizeResult);
    fn lat_size(&mut self, run: &AmoRun, r: &LatResult);
    fn end(&mut self, run: &AmoRun, lat: Option<&LatResult>);
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AmoParams {
    pub tool: String,
    pub provider: String,
    pub op: String,
    pub cswap: String,
    pub ty: String,
    pub fetching: bool,
    pub matching: bool,
    pub unrestricted: bool,
    pub use_idc: bool,
    pub use_hrp: bool,
    pub list_size: u64,
    pub bidirectional: bool,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    pub warmup: u64,
    pub gap_us: u64,
    pub report_all: bool,
    pub clock: String,
}

/// The parsed form of `AmoParams`.
#[derive(Clone, Copy, Debug)]
struct Parsed {
    op: AmoOp,
    cswap: CswapOp,
    ty: AmoType,
}

impl AmoParams {
    fn from_options(o: &AmoOptions, provider: &str) -> Self {
        AmoParams {
            tool: tool_name(o.latency).into(),
            provider: provider.into(),
            op: o.op.name().into(),
            cswap: o.cswap.name().into(),
            ty: o.ty.name().into(),
            fetching: o.fetching,
            matching: o.matching,
            unrestricted: o.unrestricted,
            use_idc: o.use_idc,
            use_hrp: o.use_hrp,
            list_size: if o.latency { 1 } else { o.list_size },
            bidirectional: o.bidirectional && !o.latency,
            iterations: o.c.iterations,
            duration_s: o.c.duration_s,
            warmup: o.warmup,
            gap_us: o.gap_us,
            report_all: o.report_all,
            clock: if o.cycles { "cycles" } else { "clock_gettime" }.into(),
        }
    }

    fn parse(&self, latency: bool) -> Result<Parsed, String> {
        if self.tool != tool_name(latency) {
            return Err(format!(
                "client runs {}, this server runs {}",
                self.tool,
                tool_name(latency)
            ));
        }
        let bad = || format!("client sent invalid run parameters: {self:?}");
        let op = AmoOp::parse(&self.op).ok_or_else(bad)?;
        let cswap = CswapOp::parse(&self.cswap).ok_or_else(bad)?;
        let ty = AmoType::parse(&self.ty).ok_or_else(bad)?;
        validate(op, cswap, ty)?;
        let ok = (1..=MAX_LIST).contains(&self.list_size)
            && self.iterations >= 1
            && self.duration_s.is_none_or(|d| d >= 1 && d <= u32::MAX as u64);
        if !ok {
            return Err(bad());
        }
        Ok(Parsed { op, cswap, ty })
    }

    fn mode(&self) -> Mode {
        match self.duration_s {
            Some(s) => Mode::Duration(s),
            None => Mode::Iterations(self.iterations),
        }
    }
}

fn tool_name(latency: bool) -> &'static str {
    if latency {
        "cxi_atomic_lat"
    } else {
        "cxi_atomic_bw"
    }
}

fn plan(p: &Parsed, fetching: bool, list: u64) -> AtomicPlan {
    let (fi_op, call) = libfabric_op(p.op, p.cswap, fetching);
    let kind = match call {
        FiCall::Atomic => AtomicKind::Plain,
        FiCall::Fetch => AtomicKind::Fetch,
        FiCall::Compare => AtomicKind::Compare,
    };
    AtomicPlan {
        spec: AtomicSpec {
            kind,
            datatype: p.ty as i32,
            op: fi_op.code(),
            size: p.ty.size(),
        },
        scheme: Scheme::new(p.op, p.cswap, p.ty),
        result_base: AMO_STRIDE * list,
    }
}

/// "[NON-]FETCHING <OP> <CSWAPOP or empty>", with the originals' trailing
/// space when the op is not CSWAP.
fn op_label(p: &Parsed, fetching: bool) -> String {
    let f = if fetching { "FETCHING" } else { "NON-FETCHING" };
    let c = if p.op == AmoOp::Cswap { p.cswap.name() } else { "" };
    format!("{f} {} {c}", p.op.name())
}

/// Opens the endpoint with the operand/result buffer and the target slots
/// set to the scheme's initial value, then asks the provider whether it
/// can run this atomic at all.
fn open(list: &InfoList, idx: usize, params: &AmoParams, plan: &AtomicPlan) -> Result<Endpoint> {
    let slots = params.list_size;
    let initiator = HostBuffer::new(2 * AMO_STRIDE * slots, None, 0)?;
    let mut target = HostBuffer::new(AMO_STRIDE * slots, None, 0)?;
    let ty = plan.scheme.ty;
    for i in 0..slots {
        plan.scheme
            .initial_target
            .encode(ty, &mut target.as_mut_slice()[(i * AMO_STRIDE) as usize..]);
    }
    let ep = Endpoint::open(list, idx, vec![initiator, target])?;
    if !ep.atomic_valid(&plan.spec)? {
        let call = match plan.spec.kind {
            AtomicKind::Plain => "fi_atomicvalid",
            AtomicKind::Fetch => "fi_fetch_atomicvalid",
            AtomicKind::Compare => "fi_compare_atomicvalid",
        };
        return Err(FabricError::ProviderLacks {
            provider: ep.provider().into(),
            what: format!("{} on {} ({call})", op_name(params), params.ty),
        }
        .into());
    }
    if let Some(why) = ep.known_atomic_defect(&plan.spec) {
        return Err(FabricError::KnownDefect {
            provider: ep.provider().into(),
            what: format!("{} on {}", op_name(params), params.ty),
            why: why.into(),
        }
        .into());
    }
    Ok(ep)
}

fn op_name(p: &AmoParams) -> String {
    let f = if p.fetching { "fetching " } else { "" };
    if p.op == "CSWAP" {
        format!("{f}CSWAP {}", p.cswap)
    } else {
        format!("{f}{}", p.op)
    }
}

#[allow(clippy::too_many_arguments)]
fn describe(
    latency: bool,
    role: Role,
    p: &AmoParams,
    parsed: &Parsed,
    ep: &Endpoint,
    svc: u32,
    clock: &LatClock,
    local: String,
    remote: String,
) -> AmoRun {
    let (fi_op, call) = libfabric_op(parsed.op, parsed.cswap, p.fetching);
    let na = legacy::NOT_APPLICABLE.to_string();
    AmoRun {
        tool: if latency { "atomic_lat" } else { "atomic_bw" }.into(),
        role,
        provider: ep.provider().into(),
        device: ep.domain().into(),
        service_id: svc,
        mode: match p.duration_s {
            Some(s) => TestMode::Duration { duration_s: s },
            None => TestMode::Iterations {
                iterations: p.iterations,
            },
        },
        atomic_op: op_label(parsed, p.fetching),
        op: p.op.clone(),
        cswap_op: (parsed.op == AmoOp::Cswap).then(|| p.cswap.clone()),
        atomic_type: p.ty.clone(),
        size_bytes: parsed.ty.size(),
        fetching: p.fetching,
        libfabric_op: fi_op.name().into(),
        libfabric_call: call.name().into(),
        list_size: (!latency).then_some(p.list_size),
        bidirectional: (!latency).then_some(p.bidirectional),
        warmup_iterations: latency.then_some(p.warmup),
        gap_us: latency.then_some(p.gap_us),
        // HRP, matching list entries, restricted packets and LL launch are
        // CXI features with no libfabric control (spec §2.13)
        hrp: (!latency).then(|| na.clone()),
        // atomics are never injected: libfabric 1.17's rxm (tcp) does not
        // complete atomics posted with FI_INJECT, so IDC cannot be honoured
        idc: na.clone(),
        matching: na.clone(),
        restricted: na.clone(),
        ll: latency.then(|| na.clone()),
        report_all: latency.then_some(p.report_all),
        local_address: local,
        remote_address: remote,
        clock: latency.then(|| p.clock.clone()),
        cycles_mhz: match clock {
            LatClock::Cycles(c) => Some(c.mhz),
            LatClock::Raw => None,
        },
        delivery_complete: ep.delivery_complete(),
    }
}

/// How long a target keeps polling for operations still in flight before
/// it judges its memory.
const SETTLE: Duration = Duration::from_secs(2);

/// Checks our own target (if the peer hit it) and trades verdicts.
fn verify_and_trade(
    d: &mut FabricDriver<'_>,
    plan: &AtomicPlan,
    role: Role,
    hit_by_iterations: Option<u64>,
    slots: u64,
) -> Result<Vec<Verification>> {
    let me = if role == Role::Client { "client" } else { "server" };
    let mine = match hit_by_iterations {
        Some(n) => {
            let extra: u64 = std::env::var(EXTRA_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
            let iterations = n + extra;
            let want = plan.scheme.expected(iterations);
            let check = |ep: &Endpoint| {
                let mem = ep.region(TARGET).unwrap_or(&[]);
                verify_value(plan.scheme.ty, want, me, mem, slots, AMO_STRIDE, iterations)
            };
            let waited = d.progress_until(|ep| check(ep).ok, SETTLE)?;
            let (ep, _) = d.parts();
            let mut v = check(ep);
            v.settle_us = waited.as_micros() as u64;
            Some(v)
        }
        None => None,
    };
    let (_, ctl) = d.parts();
    let report = serde_json::to_value(&mine).context("encoding the verification")?;
    let theirs = match ctl.exchange(Phase::Results, &Message::Verify { report })? {
        Message::Verify { report } => serde_json::from_value::<Option<Verification>>(report)
            .map_err(|e| anyhow!("peer sent an undecodable verification: {e}"))?,
        other => {
            return Err(ProtoError::Unexpected {
                phase: Phase::Results,
                got: other.kind().into(),
            }
            .into())
        }
    };
    let mut all: Vec<Verification> = mine.into_iter().chain(theirs).collect();
    all.sort_by(|a, b| a.target.cmp(&b.target));
    Ok(all)
}

fn check(v: &[Verification]) -> Result<()> {
    for x in v {
        if !x.ok {
            bail!(
                "final value check failed on the {}'s target: after {} iterations every slot should hold {}, {} of {} slots hold another value (first: {})",
                x.target,
                x.iterations,
                x.expected,
                x.wrong_slots,
                x.slots,
                x.actual
            );
        }
    }
    Ok(())
}

/// One atomic result row, of either tool.
pub enum AmoResults {
    Bw(AmoBw),
    Lat(AmoLat),
}

#[allow(clippy::too_many_arguments)]
fn measure(
    latency: bool,
    role: Role,
    ctl: &mut Control,
    p: &AmoParams,
    parsed: &Parsed,
    mut ep: Endpoint,
    plan: AtomicPlan,
    svc: u32,
    clock: LatClock,
    sink: &mut dyn AmoSink,
    run_out: &mut Option<AmoRun>,
    rows: &mut Vec<AmoResults>,
    phase: &mut Phase,
) -> Result<()> {
    *phase = Phase::Endpoint;
    let peer = exchange_endpoints(ctl, role, &ep)?;
    let (peer_id, local, remote) = addresses(&mut ep, &peer)?;
    let run = describe(latency, role, p, parsed, &ep, svc, &clock, local, remote);
    *run_out = Some(run.clone());
    sink.banner(&run);
    *phase = Phase::Ready;
    ctl.barrier(Phase::Ready, None)?;
    *phase = Phase::Run;
    let act = match (role, p.bidirectional) {
        (Role::Client, _) | (Role::Server, true) => Activity::Active,
        (Role::Server, false) => Activity::Passive,
    };
    let size = parsed.ty.size();
    let cfg = DriverConfig {
        op: Op::Atomic(plan),
        activity: act,
        bidirectional: p.bidirectional,
        list_size: p.list_size,
        align: AMO_STRIDE,
        max_buf: u64::MAX,
        use_idc: p.use_idc,
        unrestricted: p.unrestricted,
        max_size: size,
        echo: false,
        clock,
    };
    let mut d = FabricDriver::new(ep, ctl, peer_id, peer.target, cfg)?;
    if latency {
        let lc = LatConfig {
            mode: p.mode(),
            warmup: p.warmup,
            gap: Duration::from_micros(p.gap_us),
            keep_all: p.report_all,
        };
        let r = run_lat_size(&mut d, act, &lc, size)?;
        // the server's target took every operation the client ran
        let hit = (role == Role::Server).then_some(r.peer_ops);
        let v = verify_and_trade(&mut d, &plan, role, hit, 1)?;
        if role == Role::Client {
            sink.lat_size(&run, &r);
        }
        sink.end(&run, Some(&r));
        rows.push(AmoResults::Lat(AmoLat {
            result: r,
            verification: v.clone(),
        }));
        d.finish();
        check(&v)
    } else {
        let r = run_size(&mut d, act, p.mode(), size, p.list_size)?;
        // each side's target took the peer's iterations
        let hit = (role == Role::Server || p.bidirectional).then_some(r.peer.ops / p.list_size);
        let v = verify_and_trade(&mut d, &plan, role, hit, p.list_size)?;
        sink.bw_row(&run, &r);
        sink.end(&run, None);
        rows.push(AmoResults::Bw(AmoBw {
            result: r,
            verification: v.clone(),
        }));
        d.finish();
        check(&v)
    }
}

pub type AmoFailed = Failed<AmoRun, AmoResults>;

pub fn run_client(
    o: &AmoOptions,
    host: &str,
    port: u16,
    sink: &mut dyn AmoSink,
) -> Result<Outcome<AmoRun, AmoResults>, AmoFailed> {
    let clock = lat_clock(o.cycles, o.ignore_cpu_freq_mismatch, &mut *sink).map_err(Failed::early)?;
    let name = tool_name(o.latency);
    let (mut ctl, list, idx) = client_prelude(
        name,
        o.c.provider.as_deref(),
        o.c.device.as_deref(),
        Capability::Atomic,
        host,
        port,
    )
    .map_err(Failed::early)?;
    let params = AmoParams::from_options(o, &list.get(idx).map(|e| e.provider.clone()).unwrap_or_default());
    let (mut run, mut rows) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let parsed = params.parse(o.latency).map_err(|e| anyhow!(e))?;
        let plan = plan(&parsed, params.fetching, params.list_size);
        let ep = open(&list, idx, &params, &plan)?;
        let config = serde_json::to_value(&params).context("encoding run parameters")?;
        ctl.send(phase, &Message::Config { params: config })?;
        measure(
            o.latency,
            Role::Client,
            &mut ctl,
            &params,
            &parsed,
            ep,
            plan,
            o.c.svc_id,
            clock,
            sink,
            &mut run,
            &mut rows,
            &mut phase,
        )
    })();
    conclude(r, run, rows, &ctl, phase)
}

pub fn run_server(
    o: &AmoOptions,
    listener: Listener,
    sink: &mut dyn AmoSink,
) -> Result<Outcome<AmoRun, AmoResults>, AmoFailed> {
    let name = tool_name(o.latency);
    let mut ctl = server_start(name, &o.ignored_on_server, listener, &mut *sink).map_err(Failed::early)?;
    let (mut run, mut rows) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let params: AmoParams = expect_params(&mut ctl)?;
        let parsed = params.parse(o.latency).map_err(|e| anyhow!(e))?;
        let (list, idx) = server_provider(
            &ctl,
            &params.provider,
            o.c.provider.as_deref(),
            o.c.device.as_deref(),
            Capability::Atomic,
        )?;
        let plan = plan(&parsed, params.fetching, params.list_size);
        let ep = open(&list, idx, &params, &plan)?;
        measure(
            o.latency,
            Role::Server,
            &mut ctl,
            &params,
            &parsed,
            ep,
            plan,
            o.c.svc_id,
            LatClock::Raw,
            sink,
            &mut run,
            &mut rows,
            &mut phase,
        )
    })();
    conclude(r, run, rows, &ctl, phase)
}
