//! What differs between the tool families, behind one trait: the
//! capability a provider needs, the memory each side registers, the run's
//! description for the banner and JSON, the driver's settings, and the
//! measured part itself. The choreography around them (connect, hello,
//! config, endpoints, barriers, results, telling the peer) is written once
//! in `crate::session`. Families never touch the network or bytes directly.

mod atomic;
mod bw;
mod lat;

pub(crate) use atomic::atomic_spec;

use crate::driver::{Drive, DriverConfig, LatClock};
use crate::env::Env;
use crate::memory::MemoryPlan;
use crate::net::Port;
use crate::outcome::SessionError;
use crate::sink::{Event, Sink};
use crate::spec::TestSpec;
use fabdiag_fabric::Capability;
use fabdiag_report::{BwTool, Family, LatTool, Role, Row, RunDesc, SideMem, TestMode, Tool};

pub(crate) trait FamilyRun {
    fn capability(&self) -> Capability;
    fn memory(&self, role: Role) -> MemoryPlan;
    /// After the endpoint is open and before the peer hears of it: can
    /// this provider run the test at all?
    fn check(&self, _port: &dyn Port) -> Result<(), SessionError> {
        Ok(())
    }
    fn describe(&self, facts: &Facts<'_>) -> RunDesc;
    fn driver(&self, role: Role, clock: LatClock) -> DriverConfig;
    /// Every size of the run, each row handed to `out` when it finishes.
    /// `Ok(Some(e))`: the run finished but its data check failed.
    fn measure(&self, role: Role, d: &mut dyn Drive, out: &mut Rows<'_>) -> Result<Option<SessionError>, SessionError>;
}

/// What a side knows once its endpoint is connected.
pub(crate) struct Facts<'a> {
    pub role: Role,
    pub port: &'a dyn Port,
    pub svc_id: u32,
    pub clock: &'a LatClock,
    pub local: String,
    pub remote: String,
    /// Where the peer's buffers live (from its Endpoint message).
    pub peer_mem: SideMem,
}

impl Facts<'_> {
    /// (client's buffers, server's buffers) for the banner.
    pub fn mems(&self) -> (SideMem, SideMem) {
        let own = self.port.memory().side.clone();
        match self.role {
            Role::Client => (own, self.peer_mem.clone()),
            Role::Server => (self.peer_mem.clone(), own),
        }
    }
}

/// Collects finished rows and tells the sink about each.
pub(crate) struct Rows<'a> {
    pub run: &'a RunDesc,
    pub rows: &'a mut Vec<Row>,
    pub sink: &'a mut dyn Sink,
}

impl Rows<'_> {
    pub fn push(&mut self, row: Row) {
        self.sink.event(Event::Row {
            run: self.run,
            row: &row,
            index: self.rows.len(),
        });
        self.rows.push(row);
    }
}

/// The family that runs `spec` (already validated).
pub(crate) fn plan(spec: &TestSpec, env: &Env) -> Result<Box<dyn FamilyRun>, SessionError> {
    Ok(match spec.tool.family() {
        Family::Bandwidth(tool) => Box::new(bw::Bandwidth::new(tool, spec.clone(), env.hooks.corrupt_offset)),
        Family::Latency(tool) => Box::new(lat::Latency::new(tool, spec.clone())),
        Family::Atomic { latency } => Box::new(atomic::Atomic::new(latency, spec.clone(), env)?),
    })
}

/// What a provider must offer to run `tool`.
pub fn capability(tool: Tool) -> Capability {
    match tool.family() {
        Family::Bandwidth(BwTool::WriteBw | BwTool::GpuLoopbackBw) | Family::Latency(LatTool::WriteLat) => {
            Capability::RmaWrite
        }
        Family::Bandwidth(BwTool::ReadBw) | Family::Latency(LatTool::ReadLat) => Capability::RmaRead,
        Family::Bandwidth(BwTool::SendBw) | Family::Latency(LatTool::SendLat) => Capability::Msg,
        Family::Atomic { .. } => Capability::Atomic,
    }
}

pub(crate) fn test_mode(spec: &TestSpec) -> TestMode {
    match spec.duration_s {
        Some(s) => TestMode::Duration { duration_s: s },
        None => TestMode::Iterations {
            iterations: spec.iterations,
        },
    }
}
