//! One run, client or server side, from the first TCP byte to the last
//! result. The steps every tool shares live here: the client's prelude
//! (provider check before any traffic, connect, hello, domain choice), the
//! server's accept, buffer allocation, the endpoint and memory-key
//! exchange, and telling the peer why this side failed. `bw` and `lat` hold
//! each family's parameters and size loop. Output goes through the sinks;
//! nothing here prints.

pub mod amo;
pub mod bw;
pub mod lat;

use crate::driver::{INITIATOR, TARGET};
use crate::provider;
use anyhow::{anyhow, bail, Result};
use fabdiag_fabric::{
    free_hugepages, Capability, Endpoint, FabricError, HostBuffer, HugePageSize, InfoList, RemoteRegion,
};
use fabdiag_proto::{Control, Hello, Listener, Message, Phase, ProtoError, RegionDesc, MAGIC, PROTOCOL};
use fabdiag_report::{Hugepages, Role};

/// What every sink can do before a run has a shape: say where the server
/// listens, and warn.
pub trait Announce {
    fn listening(&mut self, port: u16);
    fn warn(&mut self, message: &str);
}

pub fn hello(original_name: &str) -> Hello {
    Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        tool: original_name.into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// A failure with what was known of the run (for the JSON document).
#[derive(Debug)]
pub struct Failed<C, R> {
    pub run: Option<Box<C>>,
    pub results: Vec<R>,
    pub error: anyhow::Error,
}

impl<C, R> Failed<C, R> {
    pub fn early(error: impl Into<anyhow::Error>) -> Self {
        Failed {
            run: None,
            results: Vec::new(),
            error: error.into(),
        }
    }
}

pub struct Outcome<C, R> {
    pub run: C,
    pub results: Vec<R>,
}

/// The client's steps up to an agreed provider: the provider is checked
/// before any network traffic (the originals opened the device before
/// connecting), then connect, hello, and the domain that reaches the peer.
pub fn client_prelude(
    tool: &str,
    provider_wanted: Option<&str>,
    device: Option<&str>,
    cap: Capability,
    host: &str,
    port: u16,
) -> Result<(Control, InfoList, usize)> {
    let list = provider::candidates(provider_wanted, device, cap)?;
    let mut ctl = fabdiag_proto::connect(host, port)?;
    ctl.handshake(&hello(tool))?;
    let idx = provider::choose(&list, Some(ctl.local_addr().ip()));
    Ok((ctl, list, idx))
}

/// Accepts one client of this tool; strangers are reported through `warn`.
pub fn server_accept(tool: &str, listener: Listener, warn: &mut dyn FnMut(&str)) -> Result<Control> {
    // The server keeps listening after turning a stranger away; say why.
    let mut rejected =
        |r: fabdiag_proto::Rejection| warn(&format!("rejected connection from {}: {}", r.peer, r.reason));
    let (ctl, _) = listener.accept(&hello(tool), &mut rejected)?;
    Ok(ctl)
}

/// The server's steps up to an accepted client: warn about run options
/// given to the server (the originals ignored them silently, spec §6.6),
/// say where it listens, accept one client of this tool.
pub fn server_start(tool: &str, ignored: &[&str], listener: Listener, out: &mut dyn Announce) -> Result<Control> {
    if !ignored.is_empty() {
        out.warn(&format!(
            "warning: the client decides the run parameters; ignoring {} given to the server",
            ignored.join(" ")
        ));
    }
    out.listening(listener.port());
    server_accept(tool, listener, &mut |m| out.warn(m))
}

/// Waits for the client's run parameters.
pub fn expect_params<T: serde::de::DeserializeOwned>(ctl: &mut Control) -> Result<T> {
    let phase = Phase::Config;
    match ctl.expect(phase)? {
        Message::Config { params } => {
            serde_json::from_value(params).map_err(|e| anyhow!("client sent undecodable run parameters: {e}"))
        }
        other => Err(ProtoError::Unexpected {
            phase,
            got: other.kind().into(),
        }
        .into()),
    }
}

/// The latency clock: CLOCK_MONOTONIC_RAW, or the cycle counter once
/// calibrated (0.2 s; its warning goes to `out`).
pub fn lat_clock(cycles: bool, ignore_mismatch: bool, out: &mut dyn Announce) -> Result<crate::driver::LatClock> {
    if !cycles {
        return Ok(crate::driver::LatClock::Raw);
    }
    let c = fabdiag_clock::calibrate(ignore_mismatch)?;
    if let Some(w) = &c.warning {
        out.warn(w);
    }
    Ok(crate::driver::LatClock::Cycles(c))
}

/// The server's side of provider agreement: the client's provider, this
/// side's -d (or the domain that reaches the client).
pub fn server_provider(
    ctl: &Control,
    client_provider: &str,
    mine: Option<&str>,
    device: Option<&str>,
    cap: Capability,
) -> Result<(InfoList, usize)> {
    if let Some(mine) = mine {
        let core = client_provider.split(';').next().unwrap_or("");
        if !client_provider.eq_ignore_ascii_case(mine) && !core.eq_ignore_ascii_case(mine) {
            bail!("provider mismatch: the client uses '{client_provider}', this server was given -P {mine}");
        }
    }
    let list = provider::candidates(Some(client_provider), device, cap)?;
    let idx = provider::choose(&list, Some(ctl.local_addr().ip()));
    Ok((list, idx))
}

/// What this side registered, for the banner.
pub struct Memory {
    pub used: u64,
    pub hugepages: Hugepages,
}

/// Allocates this side's initiator and target buffers: `full` bytes for
/// each role it plays, one page for the other; huge pages only for
/// full-size buffers, after checking enough are free (spec §2.8).
pub fn allocate(
    full: u64,
    initiator_full: bool,
    target_full: bool,
    hp: Option<HugePageSize>,
) -> Result<(Vec<HostBuffer>, Memory), FabricError> {
    let page = fabdiag_fabric::page_size();
    let count = u64::from(initiator_full) + u64::from(target_full);
    let (used, hugepages) = match hp {
        None => (full.div_ceil(page) * page, Hugepages::Disabled),
        Some(_) if count == 0 => (full.div_ceil(page) * page, Hugepages::NotApplicable),
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
        HostBuffer::new(if is_full { used } else { page }, if is_full { hp } else { None }, fill)
    };
    // Initiator buffers carry the originals' 0xA5 pattern, targets zeros.
    let buffers = vec![mk(initiator_full, 0xA5)?, mk(target_full, 0)?];
    Ok((buffers, Memory { used, hugepages }))
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

pub struct Peer {
    pub address: Vec<u8>,
    pub target: RemoteRegion,
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

/// Endpoint exchange, client first: each side learns the other's address
/// and target buffer.
pub fn exchange_endpoints(ctl: &mut Control, role: Role, ep: &Endpoint) -> Result<Peer> {
    let phase = Phase::Endpoint;
    let ours = endpoint_message(ep)?;
    match role {
        Role::Client => {
            ctl.send(phase, &ours)?;
            parse_peer_endpoint(ctl.expect(phase)?, ep.provider())
        }
        Role::Server => {
            let peer = parse_peer_endpoint(ctl.expect(phase)?, ep.provider())?;
            ctl.send(phase, &ours)?;
            Ok(peer)
        }
    }
}

/// The endpoint's and the peer's printable addresses, for Local/Remote.
pub fn addresses(ep: &mut Endpoint, peer: &Peer) -> Result<(fabdiag_fabric::PeerId, String, String)> {
    let own = ep.name()?;
    let id = ep.insert_peer(&peer.address)?;
    Ok((
        id,
        format!("{} ({})", ep.address_string(&own), ep.provider()),
        ep.address_string(&peer.address),
    ))
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

/// Turns a session body's outcome into the caller's result, telling the
/// peer about a failure on our side.
pub fn conclude<C, R>(
    r: Result<()>,
    run: Option<C>,
    results: Vec<R>,
    ctl: &Control,
    phase: Phase,
) -> Result<Outcome<C, R>, Failed<C, R>> {
    match (r, run) {
        (Ok(()), Some(run)) => Ok(Outcome { run, results }),
        (Ok(()), None) => Err(Failed {
            run: None,
            results,
            error: anyhow!("internal error: run ended without a description"),
        }),
        (Err(e), run) => {
            tell_peer(ctl, phase, &e);
            Err(Failed {
                run: run.map(Box::new),
                results,
                error: e,
            })
        }
    }
}
