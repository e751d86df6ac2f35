//! The latency tools' session: parameters from the client, one buffer of
//! the largest size per role (send_lat: both roles on both sides), the
//! optional cycle-counter calibration, and the engine's latency method for
//! every size. The server is passive (send_lat: it echoes every message);
//! after each size both sides compare operation counts, so the de-sync the
//! original send_lat fought is reported instead of measured.

use super::bw::parse_hugepages;
use super::{
    addresses, allocate, client_prelude, conclude, exchange_endpoints, expect_params, lat_clock, server_provider,
    server_start, Failed, Memory, Outcome,
};
use crate::driver::{DriverConfig, FabricDriver, LatClock, Op};
use crate::numbers::MAX_SIZE;
use crate::options::lat::{ClockKind, LatOptions};
use anyhow::{anyhow, bail, Context, Result};
use fabdiag_engine::{run_lat_size, sizes, Activity, LatConfig, LatResult, Mode};
use fabdiag_fabric::{Capability, Endpoint, HugePageSize, InfoList};
use fabdiag_proto::{Control, Listener, Message, Phase};
use fabdiag_report::{legacy, LatRun, LatTool, Role, TestMode};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where a latency run's text goes; implemented by the output module.
pub trait LatSink: super::Announce {
    fn banner(&mut self, run: &LatRun);
    /// One finished size (client).
    fn size(&mut self, run: &LatRun, result: &LatResult, first: bool);
    fn end(&mut self, run: &LatRun, results: &[LatResult]);
}

pub type LatFailed = Failed<LatRun, LatResult>;
pub type LatOutcome = Outcome<LatRun, LatResult>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatParams {
    pub tool: String,
    pub provider: String,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    pub warmup: u64,
    pub gap_us: u64,
    pub min_size: u64,
    pub max_size: u64,
    pub use_idc: bool,
    pub unrestricted: bool,
    pub rdzv: bool,
    pub report_all: bool,
    pub hugepages: Option<String>,
    pub clock: String,
}

impl LatParams {
    fn from_options(o: &LatOptions, provider: &str) -> Self {
        LatParams {
            tool: o.tool.original_name().into(),
            provider: provider.into(),
            iterations: o.c.iterations,
            duration_s: o.c.duration_s,
            warmup: o.warmup,
            gap_us: o.gap_us,
            min_size: o.c.min_size,
            max_size: o.c.max_size,
            use_idc: o.use_idc,
            unrestricted: o.unrestricted,
            rdzv: o.rdzv,
            report_all: o.report_all,
            hugepages: o.c.hugepages.map(|h| h.label().to_string()),
            clock: o.clock.name().into(),
        }
    }

    fn validate(&self, tool: LatTool) -> Result<Option<HugePageSize>, String> {
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
            && self.iterations >= 1
            && self.duration_s.is_none_or(|d| d >= 1 && d <= u32::MAX as u64);
        if !ok {
            return Err(format!("client sent invalid run parameters: {self:?}"));
        }
        parse_hugepages(self.hugepages.as_deref())
    }

    fn config(&self) -> LatConfig {
        LatConfig {
            mode: match self.duration_s {
                Some(s) => Mode::Duration(s),
                None => Mode::Iterations(self.iterations),
            },
            warmup: self.warmup,
            gap: Duration::from_micros(self.gap_us),
            keep_all: self.report_all,
        }
    }
}

pub fn capability(tool: LatTool) -> Capability {
    match tool {
        LatTool::WriteLat => Capability::RmaWrite,
        LatTool::ReadLat => Capability::RmaRead,
        LatTool::SendLat => Capability::Msg,
    }
}

fn op(tool: LatTool) -> Op {
    match tool {
        LatTool::WriteLat => Op::Write,
        LatTool::ReadLat => Op::Read,
        LatTool::SendLat => Op::Send,
    }
}

fn open(
    list: &InfoList,
    idx: usize,
    p: &LatParams,
    tool: LatTool,
    role: Role,
    hp: Option<HugePageSize>,
) -> Result<(Endpoint, Memory)> {
    let both = tool == LatTool::SendLat;
    let (buffers, mem) = allocate(
        p.max_size,
        both || role == Role::Client,
        both || role == Role::Server,
        hp,
    )?;
    Ok((Endpoint::open(list, idx, buffers)?, mem))
}

#[allow(clippy::too_many_arguments)]
fn describe(
    tool: LatTool,
    role: Role,
    p: &LatParams,
    ep: &Endpoint,
    mem: &Memory,
    svc: u32,
    clock: &LatClock,
    local: String,
    remote: String,
) -> LatRun {
    LatRun {
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
        warmup_iterations: p.warmup,
        gap_us: p.gap_us,
        min_size_bytes: p.min_size,
        max_size_bytes: p.max_size,
        idc: (tool != LatTool::ReadLat).then(|| if p.use_idc { legacy::ENABLED } else { legacy::DISABLED }.to_string()),
        // low-latency command launch is a CXI command-queue path with no
        // libfabric control (spec §2.13)
        ll: legacy::NOT_APPLICABLE.into(),
        report_all: p.report_all,
        hugepages: mem.hugepages.clone(),
        local_address: local,
        remote_address: remote,
        clock: p.clock.clone(),
        cycles_mhz: match clock {
            LatClock::Cycles(c) => Some(c.mhz),
            LatClock::Raw => None,
        },
        delivery_complete: ep.delivery_complete(),
    }
}

#[allow(clippy::too_many_arguments)]
fn measure(
    tool: LatTool,
    role: Role,
    ctl: &mut Control,
    p: &LatParams,
    mut ep: Endpoint,
    mem: Memory,
    svc: u32,
    clock: LatClock,
    sink: &mut dyn LatSink,
    run_out: &mut Option<LatRun>,
    results: &mut Vec<LatResult>,
    phase: &mut Phase,
) -> Result<()> {
    *phase = Phase::Endpoint;
    let peer = exchange_endpoints(ctl, role, &ep)?;
    let (peer_id, local, remote) = addresses(&mut ep, &peer)?;
    let run = describe(tool, role, p, &ep, &mem, svc, &clock, local, remote);
    *run_out = Some(run.clone());
    sink.banner(&run);
    *phase = Phase::Ready;
    ctl.barrier(Phase::Ready, None)?;
    *phase = Phase::Run;
    let act = if role == Role::Client {
        Activity::Active
    } else {
        Activity::Passive
    };
    let cfg = DriverConfig {
        op: op(tool),
        activity: act,
        bidirectional: false,
        list_size: 1,
        align: 64,
        max_buf: p.max_size,
        use_idc: p.use_idc,
        unrestricted: p.unrestricted,
        max_size: p.max_size,
        echo: tool == LatTool::SendLat && role == Role::Server,
        clock,
    };
    let mut d = FabricDriver::new(ep, ctl, peer_id, peer.target, cfg)?;
    let lc = p.config();
    for (i, size) in sizes(p.min_size, p.max_size).into_iter().enumerate() {
        let r = run_lat_size(&mut d, act, &lc, size)?;
        if tool == LatTool::SendLat {
            // every message the client sent must have been echoed once
            let sent = r.warmup + r.iterations;
            if role == Role::Client && sent != r.peer_ops {
                bail!(
                    "client and server disagree on size {size}: the client sent {sent} messages, the server echoed {}",
                    r.peer_ops
                );
            }
        }
        if role == Role::Client {
            sink.size(&run, &r, i == 0);
        }
        results.push(r);
    }
    d.finish();
    sink.end(&run, results);
    Ok(())
}

/// Client side.
pub fn run_client(o: &LatOptions, host: &str, port: u16, sink: &mut dyn LatSink) -> Result<LatOutcome, LatFailed> {
    let tool = o.tool;
    // Calibrate first: it takes 0.2 s and can fail on its own.
    let clock =
        lat_clock(o.clock == ClockKind::Cycles, o.ignore_cpu_freq_mismatch, &mut *sink).map_err(Failed::early)?;
    let (mut ctl, list, idx) = client_prelude(
        tool.original_name(),
        o.c.provider.as_deref(),
        o.c.device.as_deref(),
        capability(tool),
        host,
        port,
    )
    .map_err(Failed::early)?;
    let params = LatParams::from_options(o, &list.get(idx).map(|e| e.provider.clone()).unwrap_or_default());
    let (mut run, mut results) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let (ep, mem) = open(&list, idx, &params, tool, Role::Client, o.c.hugepages)?;
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
            clock,
            sink,
            &mut run,
            &mut results,
            &mut phase,
        )
    })();
    conclude(r, run, results, &ctl, phase)
}

/// Server side.
pub fn run_server(o: &LatOptions, listener: Listener, sink: &mut dyn LatSink) -> Result<LatOutcome, LatFailed> {
    let tool = o.tool;
    let mut ctl =
        server_start(tool.original_name(), &o.ignored_on_server, listener, &mut *sink).map_err(Failed::early)?;
    let (mut run, mut results) = (None, Vec::new());
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let params: LatParams = expect_params(&mut ctl)?;
        let hp = params.validate(tool).map_err(|e| anyhow!(e))?;
        let (list, idx) = server_provider(
            &ctl,
            &params.provider,
            o.c.provider.as_deref(),
            o.c.device.as_deref(),
            capability(tool),
        )?;
        let (ep, mem) = open(&list, idx, &params, tool, Role::Server, hp)?;
        measure(
            tool,
            Role::Server,
            &mut ctl,
            &params,
            ep,
            mem,
            o.c.svc_id,
            LatClock::Raw,
            sink,
            &mut run,
            &mut results,
            &mut phase,
        )
    })();
    conclude(r, run, results, &ctl, phase)
}
