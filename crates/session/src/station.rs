//! A station: one rank of a sweep, running pair test after pair test with
//! the same endpoint. Opening an endpoint (domain, CQ, AV, registration)
//! is most of a pair test's set-up, and a sweep runs thousands of them, so
//! a station opens one with buffers for either role and lends it to every
//! test whose operations leave nothing behind on it: the RMA tools (write
//! and read), which complete every operation they post. The send tools
//! leave receives posted and the atomic tools need their slots reset, so
//! for those (and after any failed test, whose endpoint may hold work for
//! a lost peer) the next test opens a fresh endpoint. The choreography is
//! exactly `client`/`serve_one`'s; only where the endpoint comes from
//! differs. Never prints, never reads the environment.

use crate::env::Env;
use crate::family;
use crate::memory::{Buffer, MemoryPlan};
use crate::net::{FabricNet, FabricPort, Net, Port};
use crate::outcome::{Failure, Report, SessionError};
use crate::session::{client_on, serve_stream_on};
use crate::sink::Sink;
use fabdiag_fabric::Capability;
use fabdiag_model::TestSpec;
use fabdiag_model::{Provider, Role, Tool};
use fabdiag_proto::{Control, Phase};
use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant};

/// What keeping the endpoint saved, for the sweep's overhead report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StationStats {
    /// Endpoints opened (1 for a whole sweep of RMA tests that all passed).
    pub opens: u64,
    /// Time spent opening them.
    pub open_time: Duration,
    /// Tests that ran on an endpoint kept from an earlier test.
    pub reused: u64,
}

#[derive(Default)]
pub struct Station {
    net: FabricNet,
    kept: Option<Kept>,
    /// The plan the next open uses: both roles' buffers.
    plan: Option<MemoryPlan>,
    stats: StationStats,
}

struct Kept {
    port: FabricPort,
    provider: Option<Provider>,
    cap: Capability,
    plan: MemoryPlan,
}

/// Can an endpoint be lent to the next test after this tool's test?
pub fn reusable(tool: Tool) -> bool {
    matches!(tool, Tool::WriteBw | Tool::ReadBw | Tool::WriteLat | Tool::ReadLat)
}

fn either(a: Buffer, b: Buffer) -> Buffer {
    Buffer {
        len: a.len.max(b.len),
        used: a.used || b.used,
        init: a.init,
    }
}

fn fits(have: &MemoryPlan, want: &MemoryPlan) -> bool {
    let ok = |h: &Buffer, w: &Buffer| h.len >= w.len && (h.used || !w.used) && h.init == w.init;
    ok(&have.initiator, &want.initiator) && ok(&have.target, &want.target) && have.hugepages == want.hugepages
}

impl Station {
    pub fn new() -> Station {
        Station::default()
    }

    pub fn stats(&self) -> StationStats {
        self.stats
    }

    /// Buffers for both roles of `spec`, so one endpoint serves either.
    fn plan_for(&mut self, spec: &TestSpec, env: &Env) -> Result<(), SessionError> {
        let fam = family::plan(spec, env)?;
        let (c, s) = (fam.memory(Role::Client), fam.memory(Role::Server));
        self.plan = Some(MemoryPlan {
            initiator: either(c.initiator, s.initiator),
            target: either(c.target, s.target),
            hugepages: c.hugepages.or(s.hugepages),
            gpu_allowed: c.gpu_allowed && s.gpu_allowed,
        });
        if !reusable(spec.tool) {
            self.kept = None;
        }
        Ok(())
    }

    /// Runs `spec` as the client of the station at the other end of
    /// `stream` (connected, and introduced, by the caller).
    pub fn client(
        &mut self,
        spec: TestSpec,
        env: &Env,
        stream: TcpStream,
        sink: &mut dyn Sink,
    ) -> Result<Report, Failure> {
        self.plan_for(&spec, env)
            .map_err(|e| Failure::early(Phase::Connect, e))?;
        let r = client_on(self, spec, env, || Control::client(stream), sink);
        self.settle(&r);
        r
    }

    /// Serves one client of `spec` (what both were told to run) on a
    /// connection accepted elsewhere.
    pub fn serve(
        &mut self,
        spec: &TestSpec,
        env: &Env,
        stream: TcpStream,
        sink: &mut dyn Sink,
    ) -> Result<Report, Failure> {
        self.plan_for(spec, env)
            .map_err(|e| Failure::early(Phase::Connect, e))?;
        let r = serve_stream_on(self, stream, Some(spec.tool), env, sink);
        self.settle(&r);
        r
    }

    /// A failed test's endpoint may hold work for a lost peer: not lent
    /// again (dropping it closes it, or leaks it if the driver said so).
    fn settle(&mut self, r: &Result<Report, Failure>) {
        if r.is_err() {
            self.kept = None;
        }
    }
}

impl Net for Station {
    fn check(&mut self, env: &Env, cap: Capability) -> Result<(), SessionError> {
        self.net.check(env, cap)
    }

    fn open<'n>(
        &'n mut self,
        provider: Option<&Provider>,
        env: &Env,
        cap: Capability,
        near: Option<IpAddr>,
        plan: &MemoryPlan,
    ) -> Result<Box<dyn Port + 'n>, SessionError> {
        let want = self.plan.unwrap_or(*plan);
        if !fits(&want, plan) {
            return Err(SessionError::Mismatch(
                "the peer's test needs buffers this station was not told to expect".into(),
            ));
        }
        // A client asks for the best provider (None) or its -P; a server
        // for the one the client opened: both are the kept one if it is.
        let same = |k: &Kept| {
            let prov = match provider {
                None => true,
                Some(p) => k.provider.as_ref() == Some(p) || Provider::named(k.port.provider()).matches(p.name()),
            };
            prov && k.cap == cap && fits(&k.plan, plan)
        };
        if self.kept.as_ref().is_some_and(same) {
            self.stats.reused += 1;
        } else {
            self.kept = None;
            let t0 = Instant::now();
            let port = self.net.open_port(provider, env, cap, near, &want)?;
            self.stats.opens += 1;
            self.stats.open_time += t0.elapsed();
            self.kept = Some(Kept {
                port,
                provider: provider.cloned(),
                cap,
                plan: want,
            });
        }
        match self.kept.as_mut() {
            Some(k) => Ok(Box::new(&mut k.port)),
            None => Err(SessionError::Internal("station lost its endpoint".into())),
        }
    }
}
