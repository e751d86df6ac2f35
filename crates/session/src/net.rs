//! The fabric side of a session, behind two small traits so the
//! choreography can be tested without libfabric: a `Net` finds the
//! provider and opens this side's endpoint with its memory; the `Port` it
//! returns tells the peer about itself, learns the peer, and hands out the
//! driver for the run. `FabricNet` is the real one, over libfabric.

use crate::counters;
use crate::driver::{Drive, DriverConfig, FabricDriver, INITIATOR, TARGET};
use crate::env::Env;
use crate::memory::{self, MemFacts, MemoryPlan};
use crate::outcome::SessionError;
use crate::provider;
use fabdiag_fabric::{AtomicSpec, Capability, Endpoint, FabricError, InfoList, PeerId, RemoteRegion};
use fabdiag_model::counters::NicFacts;
use fabdiag_model::{PollMode, Provider};
use fabdiag_proto::Link;
use fabdiag_proto::{Message, Phase, ProtoError, RegionDesc};
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub trait Net {
    /// Before any network traffic: can this side run a test that needs
    /// `cap` with the user's `-P` and `-d`? (The originals opened their
    /// device before connecting.)
    fn check(&mut self, env: &Env, cap: Capability) -> Result<(), SessionError>;
    /// Opens this side's endpoint: `provider` (None: the best one), the
    /// domain from `-d` or else the one whose network holds `near`, and the
    /// plan's buffers registered with it.
    fn open<'n>(
        &'n mut self,
        provider: Option<&Provider>,
        env: &Env,
        cap: Capability,
        near: Option<IpAddr>,
        plan: &MemoryPlan,
    ) -> Result<Box<dyn Port + 'n>, SessionError>;
}

pub trait Port {
    fn provider(&self) -> &str;
    fn domain(&self) -> &str;
    /// What libfabric says of the NIC behind the domain (fi_nic), where
    /// the provider fills it in.
    fn nic(&self) -> Option<NicFacts> {
        None
    }
    /// Something the user should know of how the domain was chosen.
    fn note(&self) -> Option<&str> {
        None
    }
    /// True when a completion means the data reached the target.
    fn delivery_complete(&self) -> bool;
    fn memory(&self) -> &MemFacts;
    /// Does the provider support this atomic (fi_*atomicvalid)?
    fn atomic_valid(&self, spec: &AtomicSpec) -> Result<bool, SessionError>;
    /// A provider defect that would crash the process on this atomic.
    fn atomic_defect(&self, spec: &AtomicSpec) -> Option<&'static str>;
    /// A provider defect that crashes a process holding both ends of a
    /// test once both send more than the bytes given to each other.
    fn same_process_defect(&self) -> Option<(u64, &'static str)>;
    /// The Endpoint message that tells the peer our address and buffers.
    fn advertise(&self) -> Result<Message, SessionError>;
    /// Takes the peer's Endpoint message; returns our printable address
    /// (with the provider) and the peer's, for the banner.
    fn connect(&mut self, peer: Message) -> Result<(String, String), SessionError>;
    /// The driver for the run, once connected.
    fn driver<'a>(&'a mut self, link: &'a mut dyn Link, cfg: DriverConfig)
        -> Result<Box<dyn Drive + 'a>, SessionError>;
}

/// Providers and endpoints from libfabric.
#[derive(Default)]
pub struct FabricNet {
    /// The last discovery, reused when the same question is asked again
    /// (a client checks before connecting and opens after).
    cached: Option<(Query, InfoList)>,
}

#[derive(Clone, PartialEq)]
struct Query {
    provider: Option<Provider>,
    device: Option<String>,
    cap: Capability,
}

/// How long a side waits for the domain holding its address to be listed
/// again: a link that is down for a moment as the run starts.
const HIDDEN_LINK_WAIT: Duration = Duration::from_secs(2);

/// Variables by which the user names the tcp/sockets/udp providers'
/// interface themselves: then a missing one is their choice, not a flap.
const IFACE_VARIABLES: [&str; 3] = ["FI_TCP_IFACE", "FI_SOCKETS_IFACE", "FI_UDP_IFACE"];

impl FabricNet {
    fn list(&mut self, q: Query) -> Result<&InfoList, FabricError> {
        if self.cached.as_ref().map(|(k, _)| k) != Some(&q) {
            let list = provider::candidates(q.provider.as_ref(), q.device.as_deref(), q.cap)?;
            self.cached = Some((q, list));
        }
        match &self.cached {
            Some((_, list)) => Ok(list),
            None => Err(FabricError::Bounds("no provider list".into())),
        }
    }

    /// The entry to open for `q`. When the best provider's domain holding
    /// `near` is missing from the list (its link down at this moment: see
    /// `provider::hides_network_of`), libfabric is asked again for up to
    /// `HIDDEN_LINK_WAIT`, so a link that flaps as the run starts is still
    /// the one used, and its counters the ones read; after that,
    /// `choose`'s fallback as before, said in the note returned. Not when
    /// the user named the domain (-d) or the interface.
    fn entry_for(&mut self, q: Query, near: Option<IpAddr>) -> Result<(usize, Option<String>), FabricError> {
        let named = q.device.is_some() || IFACE_VARIABLES.iter().any(|v| std::env::var_os(v).is_some());
        let deadline = Instant::now() + HIDDEN_LINK_WAIT;
        loop {
            let list = self.list(q.clone())?;
            let hidden = near.filter(|&ip| !named && provider::hides_network_of(list, ip));
            if hidden.is_none() || Instant::now() >= deadline {
                let idx = provider::choose(list, near);
                let note = hidden.map(|ip| {
                    let e = list.entries().nth(idx);
                    format!(
                        "libfabric lists no {} domain holding {ip}, the address this side talks to its peer from (is its link down?): using {}",
                        e.map_or("", |e| e.provider.as_str()),
                        e.map_or("", |e| e.domain.as_str())
                    )
                });
                return Ok((idx, note));
            }
            std::thread::sleep(Duration::from_millis(100));
            self.cached = None;
        }
    }
}

impl Net for FabricNet {
    fn check(&mut self, env: &Env, cap: Capability) -> Result<(), SessionError> {
        self.list(Query {
            provider: env.provider.clone(),
            device: env.device.clone(),
            cap,
        })?;
        Ok(())
    }

    fn open<'n>(
        &'n mut self,
        provider: Option<&Provider>,
        env: &Env,
        cap: Capability,
        near: Option<IpAddr>,
        plan: &MemoryPlan,
    ) -> Result<Box<dyn Port + 'n>, SessionError> {
        Ok(Box::new(self.open_port(provider, env, cap, near, plan)?))
    }
}

impl FabricNet {
    /// `open` with the concrete port, for a `Station` that keeps it.
    pub(crate) fn open_port(
        &mut self,
        provider: Option<&Provider>,
        env: &Env,
        cap: Capability,
        near: Option<IpAddr>,
        plan: &MemoryPlan,
    ) -> Result<FabricPort, SessionError> {
        let query = Query {
            provider: provider.cloned(),
            device: env.device.clone(),
            cap,
        };
        let (idx, note) = self.entry_for(query.clone(), near)?;
        let list = self.list(query)?;
        let nic = list
            .entries()
            .nth(idx)
            .and_then(|e| e.nic.as_ref())
            .map(counters::facts_of);
        let (buffers, memory) = memory::allocate(plan, env.gpu.as_ref(), env.hooks.host_as_gpu, !env.peer_in_process)?;
        let mut ep = match env.hooks.lend_contexts {
            Some(slots) => Endpoint::open_lending_contexts(list, idx, buffers, slots)?,
            None => Endpoint::open(list, idx, buffers)?,
        };
        if let Some(h) = env.hooks.stall_data_call {
            ep.stall_data_call(h.nth, h.hold)?;
        }
        if let Some(w) = &env.calls {
            ep.watched_by(w);
        }
        if env.poll == PollMode::Yield {
            ep.yield_when_empty();
        }
        Ok(FabricPort {
            ep,
            memory,
            peer: None,
            nic,
            note,
        })
    }
}

pub(crate) struct FabricPort {
    ep: Endpoint,
    memory: MemFacts,
    peer: Option<(PeerId, RemoteRegion)>,
    nic: Option<NicFacts>,
    note: Option<String>,
}

impl Port for FabricPort {
    fn provider(&self) -> &str {
        self.ep.provider()
    }
    fn domain(&self) -> &str {
        self.ep.domain()
    }
    fn nic(&self) -> Option<NicFacts> {
        self.nic.clone()
    }
    fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
    fn delivery_complete(&self) -> bool {
        self.ep.delivery_complete()
    }
    fn memory(&self) -> &MemFacts {
        &self.memory
    }
    fn atomic_valid(&self, spec: &AtomicSpec) -> Result<bool, SessionError> {
        Ok(self.ep.atomic_valid(spec)?)
    }
    fn atomic_defect(&self, spec: &AtomicSpec) -> Option<&'static str> {
        self.ep.known_atomic_defect(spec)
    }
    fn same_process_defect(&self) -> Option<(u64, &'static str)> {
        self.ep.known_same_process_defect()
    }

    fn advertise(&self) -> Result<Message, SessionError> {
        let regions = [INITIATOR, TARGET]
            .iter()
            .filter_map(|&r| self.ep.remote_region(r))
            .map(|r| RegionDesc {
                addr: r.addr,
                key: r.key,
                len: r.len,
            })
            .collect();
        Ok(Message::Endpoint {
            provider: self.ep.provider().into(),
            domain: self.ep.domain().into(),
            address: self.ep.name()?,
            regions,
            memory: Some(self.memory.describe()),
        })
    }

    fn connect(&mut self, peer: Message) -> Result<(String, String), SessionError> {
        let (provider, address, regions) = match peer {
            Message::Endpoint {
                provider,
                address,
                regions,
                ..
            } => (provider, address, regions),
            other => {
                return Err(ProtoError::Unexpected {
                    phase: Phase::Endpoint,
                    got: other.kind().into(),
                }
                .into())
            }
        };
        if provider != self.ep.provider() {
            // (seen between libfabric 1.17 and 2.6: `-P tcp` is
            // 'tcp;ofi_rxm' on one and the native 'tcp' on the other)
            return Err(SessionError::Mismatch(format!(
                "peer opened provider '{provider}' but this side uses '{}': the two sides' libfabric \
                 resolve the provider differently (other versions?); give the client -P with the full \
                 name of one both have (`fabdiag providers` on each side lists them)",
                self.ep.provider()
            )));
        }
        let t = regions
            .get(1)
            .ok_or_else(|| SessionError::Mismatch("peer advertised no target buffer".into()))?;
        let own = self.ep.name()?;
        let id = self.ep.insert_peer(&address)?;
        let target = RemoteRegion {
            addr: t.addr,
            key: t.key,
            len: t.len,
        };
        self.peer = Some((id, target));
        Ok((
            format!("{} ({})", self.ep.address_string(&own), self.ep.provider()),
            self.ep.address_string(&address),
        ))
    }

    fn driver<'a>(
        &'a mut self,
        link: &'a mut dyn Link,
        cfg: DriverConfig,
    ) -> Result<Box<dyn Drive + 'a>, SessionError> {
        let peer = self
            .peer
            .ok_or_else(|| SessionError::Internal("driver asked for before the peer was known".into()))?;
        Ok(Box::new(FabricDriver::new(&mut self.ep, link, peer, cfg)?))
    }
}

/// A port lent out by its keeper (a `Station` keeps one between tests).
impl<P: Port + ?Sized> Port for &mut P {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn domain(&self) -> &str {
        (**self).domain()
    }
    fn nic(&self) -> Option<NicFacts> {
        (**self).nic()
    }
    fn note(&self) -> Option<&str> {
        (**self).note()
    }
    fn delivery_complete(&self) -> bool {
        (**self).delivery_complete()
    }
    fn memory(&self) -> &MemFacts {
        (**self).memory()
    }
    fn atomic_valid(&self, spec: &AtomicSpec) -> Result<bool, SessionError> {
        (**self).atomic_valid(spec)
    }
    fn atomic_defect(&self, spec: &AtomicSpec) -> Option<&'static str> {
        (**self).atomic_defect(spec)
    }
    fn same_process_defect(&self) -> Option<(u64, &'static str)> {
        (**self).same_process_defect()
    }
    fn advertise(&self) -> Result<Message, SessionError> {
        (**self).advertise()
    }
    fn connect(&mut self, peer: Message) -> Result<(String, String), SessionError> {
        (**self).connect(peer)
    }
    fn driver<'a>(
        &'a mut self,
        link: &'a mut dyn Link,
        cfg: DriverConfig,
    ) -> Result<Box<dyn Drive + 'a>, SessionError> {
        (**self).driver(link, cfg)
    }
}
