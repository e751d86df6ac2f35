//! The bandwidth tools' session: run parameters (the client decides, spec
//! §2.6.4), buffers as each role needs them (§2.5), the banner, and the
//! engine's bandwidth method for every size.

use super::{
    addresses, allocate, client_prelude, conclude, exchange_endpoints, expect_params, server_provider, server_start,
    Failed, Memory, Outcome,
};
use crate::driver::{DriverConfig, FabricDriver, LatClock, Op};
use crate::numbers::MAX_SIZE;
use crate::options::bw::{BwOptions, MAX_LIST};
use anyhow::{anyhow, Context, Result};
use fabdiag_engine::{buffer_size, run_size, sizes, Activity, Mode, SizeResult};
use fabdiag_fabric::{Capability, Endpoint, HugePageSize, InfoList};
use fabdiag_proto::{Control, Listener, Message, Phase};
use fabdiag_report::{legacy, BwRun, BwTool, Role, TestMode};
use serde::{Deserialize, Serialize};

/// Where a bandwidth run's text goes; implemented by the output module.
pub trait BwSink: super::Announce {
    fn banner(&mut self, run: &BwRun);
    fn row(&mut self, run: &BwRun, result: &SizeResult);
    fn footer(&mut self, run: &BwRun);
}

pub type BwFailed = Failed<BwRun, SizeResult>;
pub type BwOutcome = Outcome<BwRun, SizeResult>;

/// What the server learns from the client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunParams {
    pub tool: String,
    pub provider: String,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    pub min_size: u64,
    pub max_size: u64,
    pub list_size: u64,
    pub bidirectional: bool,
    pub use_idc: bool,
    pub use_hrp: bool,
    pub unrestricted: bool,
    pub rdzv: bool,
    pub max_buf: u64,
    pub buf_align: u64,
    pub hugepages: Option<String>,
}

impl RunParams {
    fn from_options(o: &BwOptions, provider: &str) -> Self {
        RunParams {
            tool: o.tool.original_name().into(),
            provider: provider.into(),
            iterations: o.c.iterations,
            duration_s: o.c.duration_s,
            min_size: o.c.min_size,
            max_size: o.c.max_size,
            list_size: o.list_size,
            bidirectional: o.bidirectional,
            use_idc: o.use_idc,
            use_hrp: o.use_hrp,
            unrestricted: o.unrestricted,
            rdzv: o.rdzv,
            max_buf: o.max_buf,
            buf_align: o.buf_align,
            hugepages: o.c.hugepages.map(|h| h.label().to_string()),
        }
    }

    /// The server re-checks what it is told; a peer is not trusted to be sane.
    fn validate(&self, tool: BwTool) -> Result<Option<HugePageSize>, String> {
        if self.tool != tool.original_name() {
            return Err(format!(
                "client runs {}, this server runs {}",
                self.tool,
                tool.original_name()
            ));
        }
        let ok = self.min_size >= 1
            && self.min_size <= self.max_size
            && self.max_size <= MAX_SIZE
            && (1..=MAX_LIST).contains(&self.list_size)
            && self.max_size <= self.max_buf
            && self.buf_align >= 1
            && self.iterations >= 1
            && self.duration_s.is_none_or(|d| d >= 1 && d <= u32::MAX as u64);
        if !ok {
            return Err(format!("client sent invalid run parameters: {self:?}"));
        }
        parse_hugepages(self.hugepages.as_deref())
    }

    fn mode(&self) -> Mode {
        match self.duration_s {
            Some(s) => Mode::Duration(s),
            None => Mode::Iterations(self.iterations),
        }
    }
}

pub fn parse_hugepages(h: Option<&str>) -> Result<Option<HugePageSize>, String> {
    match h {
        None => Ok(None),
        Some("2M") => Ok(Some(HugePageSize::TwoMiB)),
        Some("1G") => Ok(Some(HugePageSize::OneGiB)),
        Some(other) => Err(format!("client sent an invalid hugepage size {other:?}")),
    }
}

pub fn capability(tool: BwTool) -> Capability {
    match tool {
        BwTool::WriteBw => Capability::RmaWrite,
        BwTool::ReadBw => Capability::RmaRead,
        BwTool::SendBw => Capability::Msg,
    }
}

fn op(tool: BwTool) -> Op {
    match tool {
        BwTool::WriteBw => Op::Write,
        BwTool::ReadBw => Op::Read,
        BwTool::SendBw => Op::Send,
    }
}

fn activity(tool: BwTool, role: Role, bidir: bool) -> Activity {
    match (role, bidir, tool) {
        (Role::Client, _, _) => Activity::Active,
        (Role::Server, false, _) => Activity::Passive,
        (Role::Server, true, BwTool::SendBw) => Activity::Follower,
        (Role::Server, true, _) => Activity::Active,
    }
}

fn open(
    list: &InfoList,
    idx: usize,
    p: &RunParams,
    role: Role,
    hp: Option<HugePageSize>,
) -> Result<(Endpoint, Memory)> {
    // spec §2.5: a full buffer for each role this side plays
    let full = buffer_size(p.max_size, p.buf_align, p.list_size, p.max_buf);
    let (buffers, mem) = allocate(
        full,
        role == Role::Client || p.bidirectional,
        role == Role::Server || p.bidirectional,
        hp,
    )?;
    Ok((Endpoint::open(list, idx, buffers)?, mem))
}

#[allow(clippy::too_many_arguments)]
fn describe(
    tool: BwTool,
    role: Role,
    p: &RunParams,
    ep: &Endpoint,
    mem: &Memory,
    svc: u32,
    local: String,
    remote: String,
) -> BwRun {
    // HRP and restricted/unrestricted puts are CXI command-queue features
    // with no libfabric control: shown as not applicable (spec §2.13).
    let hrp = (tool == BwTool::WriteBw).then(|| legacy::NOT_APPLICABLE.to_string());
    let idc = (tool != BwTool::ReadBw).then(|| if p.use_idc { legacy::ENABLED } else { legacy::DISABLED }.to_string());
    BwRun {
        tool,
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
        min_size_bytes: p.min_size,
        max_size_bytes: p.max_size,
        list_size: p.list_size,
        bidirectional: p.bidirectional,
        hrp,
        idc,
        max_buf_bytes: p.max_buf,
        buf_used_bytes: mem.used,
        buf_align_bytes: p.buf_align,
        hugepages: mem.hugepages.clone(),
        local_address: local,
        remote_address: remote,
        delivery_complete: ep.delivery_complete(),
    }
}

/// Everything after the endpoints are open, shared by both roles.
#[allow(clippy::too_many_arguments)]
fn measure(
    tool: BwTool,
    role: Role,
    ctl: &mut Control,
    p: &RunParams,
    mut ep: Endpoint,
    mem: Memory,
    svc: u32,
    sink: &mut dyn BwSink,
    run_out: &mut Option<BwRun>,
    results: &mut Vec<SizeResult>,
    phase: &mut Phase,
) -> Result<()> {
    *phase = Phase::Endpoint;
    let peer = exchange_endpoints(ctl, role, &ep)?;
    let (peer_id, local, remote) = addresses(&mut ep, &peer)?;
    let run = describe(tool, role, p, &ep, &mem, svc, local, remote);
    *run_out = Some(run.clone());
    sink.banner(&run);
    *phase = Phase::Ready;
    ctl.barrier(Phase::Ready, None)?;
    *phase = Phase::Run;
    let act = activity(tool, role, p.bidirectional);
    let cfg = DriverConfig {
        op: op(tool),
        activity: act,
        bidirectional: p.bidirectional,
        list_size: p.list_size,
        align: p.buf_align,
        max_buf: p.max_buf,
        use_idc: p.use_idc,
        unrestricted: p.unrestricted,
        max_size: p.max_size,
        echo: false,
        clock: LatClock::Raw,
    };
    let mut d = FabricDriver::new(ep, ctl, peer_id, peer.target, cfg)?;
    for size in sizes(p.min_size, p.max_size) {
        let r = run_size(&mut d, act, p.mode(), size, p.list_size)?;
        sink.row(&run, &r);
        results.push(r);
    }
    d.finish();
    sink.footer(&run);
    Ok(())
}

/// Client side: `host:port` is the server's control address.
pub fn run_client(o: &BwOptions, host: &str, port: u16, sink: &mut dyn BwSink) -> Result<BwOutcome, BwFailed> {
    let tool = o.tool;
    let (mut ctl, list, idx) = client_prelude(
        tool.original_name(),
        o.c.provider.as_deref(),
        o.c.device.as_deref(),
        capability(tool),
        host,
        port,
    )
    .map_err(Failed::early)?;
    let params = RunParams::from_options(o, &list.get(idx).map(|e| e.provider.clone()).unwrap_or_default());
    let (mut run, mut results) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let (ep, mem) = open(&list, idx, &params, Role::Client, o.c.hugepages)?;
        let config = serde_json::to_value(&params).context("encoding run parameters")?;
        ctl.send(phase, &Message::Config { params: config })?;
        measure(
            tool,
            Role::Client,
            &mut ctl,
            &params,
            ep,
            mem,
            o.c.svc_id,
            sink,
            &mut run,
            &mut results,
            &mut phase,
        )
    })();
    conclude(r, run, results, &ctl, phase)
}

/// Server side: waits for one client on `listener`, then runs what it asks.
pub fn run_server(o: &BwOptions, listener: Listener, sink: &mut dyn BwSink) -> Result<BwOutcome, BwFailed> {
    let tool = o.tool;
    let mut ctl =
        server_start(tool.original_name(), &o.ignored_on_server, listener, &mut *sink).map_err(Failed::early)?;
    let (mut run, mut results) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let params: RunParams = expect_params(&mut ctl)?;
        let hp = params.validate(tool).map_err(|e| anyhow!(e))?;
        let (list, idx) = server_provider(
            &ctl,
            &params.provider,
            o.c.provider.as_deref(),
            o.c.device.as_deref(),
            capability(tool),
        )?;
        let (ep, mem) = open(&list, idx, &params, Role::Server, hp)?;
        measure(
            tool,
            Role::Server,
            &mut ctl,
            &params,
            ep,
            mem,
            o.c.svc_id,
            sink,
            &mut run,
            &mut results,
            &mut phase,
        )
    })();
    conclude(r, run, results, &ctl, phase)
}
