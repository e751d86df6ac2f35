//! One bandwidth run, client or server side, from the first TCP byte to the
//! last result: handshake, run parameters (the client decides), endpoint
//! and memory-key exchange, the ready barrier, then the engine for every
//! size. Output goes through a `Sink`; this module itself never prints.
//! After the handshake any failure is also sent to the peer, so both sides
//! can say what went wrong and where.

use crate::bw_options::{BwOptions, MAX_LIST};
use crate::driver::{DriveError, DriverConfig, FabricDriver, INITIATOR, TARGET};
use crate::numbers::MAX_SIZE;
use crate::provider;
use anyhow::{anyhow, bail, Context, Result};
use fabdiag_engine::{buffer_size, run_size, sizes, Activity, Mode, SizeResult};
use fabdiag_fabric::{
    free_hugepages, Capability, Endpoint, FabricError, HostBuffer, HugePageSize, RemoteRegion,
};
use fabdiag_proto::{
    Control, Hello, Listener, Message, Phase, ProtoError, RegionDesc, MAGIC, PROTOCOL,
};
use fabdiag_report::{BwRun, BwTool, Hugepages, Role, TestMode};
use serde::{Deserialize, Serialize};

/// Where a run's text goes; implemented by the binary's output module.
pub trait Sink {
    fn listening(&mut self, port: u16);
    fn banner(&mut self, run: &BwRun);
    fn row(&mut self, run: &BwRun, result: &SizeResult);
    fn footer(&mut self, run: &BwRun);
    fn warn(&mut self, message: &str);
}

/// What the server learns from the client (spec §2.6.4: the client decides).
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
            iterations: o.iterations,
            duration_s: o.duration_s,
            min_size: o.min_size,
            max_size: o.max_size,
            list_size: o.list_size,
            bidirectional: o.bidirectional,
            use_idc: o.use_idc,
            use_hrp: o.use_hrp,
            unrestricted: o.unrestricted,
            rdzv: o.rdzv,
            max_buf: o.max_buf,
            buf_align: o.buf_align,
            hugepages: o.hugepages.map(|h| h.label().to_string()),
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
            && self
                .duration_s
                .is_none_or(|d| d >= 1 && d <= u32::MAX as u64);
        if !ok {
            return Err(format!("client sent invalid run parameters: {self:?}"));
        }
        match self.hugepages.as_deref() {
            None => Ok(None),
            Some("2M") => Ok(Some(HugePageSize::TwoMiB)),
            Some("1G") => Ok(Some(HugePageSize::OneGiB)),
            Some(other) => Err(format!("client sent an invalid hugepage size {other:?}")),
        }
    }

    fn mode(&self) -> Mode {
        match self.duration_s {
            Some(s) => Mode::Duration(s),
            None => Mode::Iterations(self.iterations),
        }
    }
}

pub fn hello(tool: BwTool) -> Hello {
    Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        tool: tool.original_name().into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

pub fn capability(tool: BwTool) -> Capability {
    match tool {
        BwTool::WriteBw => Capability::RmaWrite,
        BwTool::ReadBw => Capability::RmaRead,
        BwTool::SendBw => Capability::Msg,
    }
}

pub struct Outcome {
    pub run: BwRun,
    pub results: Vec<SizeResult>,
}

/// A failure with the run description known so far (for JSON documents).
#[derive(Debug)]
pub struct Failed {
    pub run: Option<Box<BwRun>>,
    pub results: Vec<SizeResult>,
    pub error: anyhow::Error,
}

struct Memory {
    used: u64,
    hugepages: Hugepages,
}

/// Allocates this side's initiator and target buffers (spec §2.5, §2.8): a
/// side gets a full-size buffer for each role it plays and a single page
/// for the other; huge pages only for full-size buffers.
fn allocate(
    p: &RunParams,
    role: Role,
    hp: Option<HugePageSize>,
) -> Result<(Vec<HostBuffer>, Memory), FabricError> {
    let full = buffer_size(p.max_size, p.buf_align, p.list_size, p.max_buf);
    let initiator_full = role == Role::Client || p.bidirectional;
    let target_full = role == Role::Server || p.bidirectional;
    let count = u64::from(initiator_full) + u64::from(target_full);
    let (used, hugepages) = match hp {
        None => (full.div_ceil(page()) * page(), Hugepages::Disabled),
        Some(h) => {
            let per = full.div_ceil(h.bytes());
            let needed = per * count;
            if free_hugepages(h)? < needed {
                return Err(FabricError::InsufficientHugePages {
                    size: h.label().into(),
                    needed,
                });
            }
            (
                per * h.bytes(),
                Hugepages::Enabled {
                    size: h.label().into(),
                    pages: needed,
                },
            )
        }
    };
    let mk = |is_full: bool, fill: u8| {
        HostBuffer::new(
            if is_full { used } else { page() },
            if is_full { hp } else { None },
            fill,
        )
    };
    // Initiator buffers carry the originals' 0xA5 pattern, targets zeros.
    let buffers = vec![mk(initiator_full, 0xA5)?, mk(target_full, 0)?];
    Ok((buffers, Memory { used, hugepages }))
}

fn page() -> u64 {
    4096
}

fn endpoint_message(ep: &Endpoint) -> Result<Message, FabricError> {
    let regions = [INITIATOR, TARGET]
        .iter()
        .filter_map(|&r| ep.remote_region(r))
        .map(|r| RegionDesc {
            addr: r.addr,
            key: r.key,
            len: r.len,
        })
        .collect();
    Ok(Message::Endpoint {
        provider: ep.provider().into(),
        domain: ep.domain().into(),
        address: ep.name()?,
        regions,
    })
}

struct Peer {
    address: Vec<u8>,
    target: RemoteRegion,
}

fn parse_peer_endpoint(m: Message, our_provider: &str) -> Result<Peer> {
    match m {
        Message::Endpoint {
            provider,
            address,
            regions,
            ..
        } => {
            if provider != our_provider {
                bail!("peer opened provider '{provider}' but this side uses '{our_provider}'");
            }
            let t = regions
                .get(1)
                .ok_or_else(|| anyhow!("peer advertised no target buffer"))?;
            Ok(Peer {
                address,
                target: RemoteRegion {
                    addr: t.addr,
                    key: t.key,
                    len: t.len,
                },
            })
        }
        other => Err(ProtoError::Unexpected {
            phase: Phase::Endpoint,
            got: other.kind().into(),
        }
        .into()),
    }
}

fn describe(
    tool: BwTool,
    role: Role,
    p: &RunParams,
    ep: &Endpoint,
    mem: &Memory,
    local: String,
    remote: String,
) -> BwRun {
    // HRP and restricted/unrestricted puts are CXI command-queue features
    // with no libfabric control: shown as not applicable (spec §2.13).
    let hrp = (tool == BwTool::WriteBw).then(|| fabdiag_report::legacy::NOT_APPLICABLE.to_string());
    let idc = (tool != BwTool::ReadBw).then(|| {
        if p.use_idc {
            fabdiag_report::legacy::ENABLED
        } else {
            fabdiag_report::legacy::DISABLED
        }
        .to_string()
    });
    BwRun {
        tool,
        role,
        provider: ep.provider().into(),
        device: ep.domain().into(),
        service_id: 1,
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

fn activity(tool: BwTool, role: Role, bidir: bool) -> Activity {
    match (role, bidir, tool) {
        (Role::Client, _, _) => Activity::Active,
        (Role::Server, false, _) => Activity::Passive,
        (Role::Server, true, BwTool::SendBw) => Activity::Follower,
        (Role::Server, true, _) => Activity::Active,
    }
}

/// Everything after the handshake, shared by both roles.
#[allow(clippy::too_many_arguments)]
fn run_with_endpoint(
    tool: BwTool,
    role: Role,
    ctl: &mut Control,
    p: &RunParams,
    mut ep: Endpoint,
    mem: Memory,
    peer: Peer,
    service_id: u32,
    sink: &mut dyn Sink,
    run_out: &mut Option<BwRun>,
    results: &mut Vec<SizeResult>,
) -> Result<()> {
    let own_name = ep.name()?;
    let peer_id = ep.insert_peer(&peer.address)?;
    let local = format!("{} ({})", ep.address_string(&own_name), ep.provider());
    let remote = ep.address_string(&peer.address);
    let mut run = describe(tool, role, p, &ep, &mem, local, remote);
    run.service_id = service_id;
    *run_out = Some(run.clone());
    sink.banner(&run);
    ctl.barrier(Phase::Ready, None)?;
    let cfg = DriverConfig {
        tool,
        activity: activity(tool, role, p.bidirectional),
        bidirectional: p.bidirectional,
        list_size: p.list_size,
        align: p.buf_align,
        max_buf: p.max_buf,
        use_idc: p.use_idc,
        unrestricted: p.unrestricted,
        max_size: p.max_size,
    };
    let act = cfg.activity;
    let mut d = FabricDriver::new(ep, ctl, peer_id, peer.target, cfg)?;
    for size in sizes(p.min_size, p.max_size) {
        let r = run_size(&mut d, act, p.mode(), size, p.list_size)
            .map_err(|e: DriveError| anyhow::Error::new(e))?;
        sink.row(&run, &r);
        results.push(r);
    }
    drop(d);
    sink.footer(&run);
    Ok(())
}

/// Sends our failure to the peer unless the peer is the one who failed.
fn tell_peer(ctl: &Control, phase: Phase, e: &anyhow::Error) {
    let from_peer = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<ProtoError>(),
            Some(ProtoError::Peer { .. } | ProtoError::Closed { .. } | ProtoError::Silent { .. })
        )
    });
    if !from_peer {
        ctl.send_error(phase, &format!("{e:#}"));
    }
}

fn fail(run: Option<BwRun>, results: Vec<SizeResult>, error: anyhow::Error) -> Failed {
    Failed {
        run: run.map(Box::new),
        results,
        error,
    }
}

/// Opens the endpoint for entry `idx` with this side's buffers.
fn open(
    list: &fabdiag_fabric::InfoList,
    idx: usize,
    p: &RunParams,
    role: Role,
    hp: Option<HugePageSize>,
) -> Result<(Endpoint, Memory)> {
    let (buffers, mem) = allocate(p, role, hp)?;
    let ep = Endpoint::open(list, idx, buffers)?;
    Ok((ep, mem))
}

/// Client side: `host:port` is the server's control address.
pub fn run_client(
    opts: &BwOptions,
    host: &str,
    port: u16,
    sink: &mut dyn Sink,
) -> Result<Outcome, Failed> {
    let tool = opts.tool;
    // Provider problems are found before any network traffic, as the
    // originals opened the device before connecting.
    let list = provider::candidates(
        opts.provider.as_deref(),
        opts.device.as_deref(),
        capability(tool),
    )
    .map_err(|e| fail(None, vec![], e.into()))?;
    let mut ctl = fabdiag_proto::connect(host, port).map_err(|e| fail(None, vec![], e.into()))?;
    ctl.handshake(&hello(tool))
        .map_err(|e| fail(None, vec![], e.into()))?;
    let idx = provider::choose(&list, Some(ctl.local_addr().ip()));
    let provider_name = list
        .get(idx)
        .map(|e| e.provider.clone())
        .unwrap_or_default();
    let params = RunParams::from_options(opts, &provider_name);
    let mut run = None;
    let mut results = Vec::new();
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let (ep, mem) = open(&list, idx, &params, Role::Client, opts.hugepages)?;
        let config = serde_json::to_value(&params).context("encoding run parameters")?;
        ctl.send(phase, &Message::Config { params: config })?;
        phase = Phase::Endpoint;
        ctl.send(phase, &endpoint_message(&ep)?)?;
        let peer = parse_peer_endpoint(ctl.expect(phase)?, ep.provider())?;
        phase = Phase::Run;
        run_with_endpoint(
            tool,
            Role::Client,
            &mut ctl,
            &params,
            ep,
            mem,
            peer,
            opts.svc_id,
            sink,
            &mut run,
            &mut results,
        )
    })();
    match (r, run) {
        (Ok(()), Some(run)) => Ok(Outcome { run, results }),
        (Ok(()), None) => Err(fail(
            None,
            results,
            anyhow!("internal error: run ended without a description"),
        )),
        (Err(e), run) => {
            tell_peer(&ctl, phase, &e);
            Err(fail(run, results, e))
        }
    }
}

/// Server side: waits for one client on `listener`, then runs what it asks.
pub fn run_server(
    opts: &BwOptions,
    listener: Listener,
    sink: &mut dyn Sink,
) -> Result<Outcome, Failed> {
    let tool = opts.tool;
    if !opts.ignored_on_server.is_empty() {
        sink.warn(&format!(
            "warning: the client decides the run parameters; ignoring {} given to the server",
            opts.ignored_on_server.join(" ")
        ));
    }
    sink.listening(listener.port());
    // The server keeps listening after turning a stranger away; say why.
    let mut rejected = |r: fabdiag_proto::Rejection| {
        sink.warn(&format!(
            "rejected connection from {}: {}",
            r.peer, r.reason
        ))
    };
    let (mut ctl, _) = listener
        .accept(&hello(tool), &mut rejected)
        .map_err(|e| fail(None, vec![], e.into()))?;
    drop(listener);
    let mut run = None;
    let mut results = Vec::new();
    let mut phase = Phase::Config;
    let r = (|| -> Result<()> {
        let params: RunParams = match ctl.expect(phase)? {
            Message::Config { params } => serde_json::from_value(params)
                .map_err(|e| anyhow!("client sent undecodable run parameters: {e}"))?,
            other => {
                return Err(ProtoError::Unexpected {
                    phase,
                    got: other.kind().into(),
                }
                .into())
            }
        };
        let hp = params.validate(tool).map_err(|e| anyhow!(e))?;
        if let Some(mine) = &opts.provider {
            let core = params.provider.split(';').next().unwrap_or("");
            if !params.provider.eq_ignore_ascii_case(mine) && !core.eq_ignore_ascii_case(mine) {
                bail!(
                    "provider mismatch: the client uses '{}', this server was given -P {mine}",
                    params.provider
                );
            }
        }
        let list = provider::candidates(
            Some(&params.provider),
            opts.device.as_deref(),
            capability(tool),
        )?;
        let idx = provider::choose(&list, Some(ctl.local_addr().ip()));
        let (ep, mem) = open(&list, idx, &params, Role::Server, hp)?;
        phase = Phase::Endpoint;
        let peer = parse_peer_endpoint(ctl.expect(phase)?, ep.provider())?;
        ctl.send(phase, &endpoint_message(&ep)?)?;
        phase = Phase::Run;
        run_with_endpoint(
            tool,
            Role::Server,
            &mut ctl,
            &params,
            ep,
            mem,
            peer,
            opts.svc_id,
            sink,
            &mut run,
            &mut results,
        )
    })();
    match (r, run) {
        (Ok(()), Some(run)) => Ok(Outcome { run, results }),
        (Ok(()), None) => Err(fail(
            None,
            results,
            anyhow!("internal error: run ended without a description"),
        )),
        (Err(e), run) => {
            tell_peer(&ctl, phase, &e);
            Err(fail(run, results, e))
        }
    }
}
