//! What every family implements (`FamilyRun`) and is given: the facts a
//! side knows once connected (`Facts`) and where finished rows go
//! (`Rows`); with the capability each tool needs and a spec's test mode,
//! which every family shares.

use crate::driver::{Drive, DriverConfig, LatClock};
use crate::memory::MemoryPlan;
use crate::net::Port;
use crate::outcome::SessionError;
use crate::sink::{Event, Sink};
use fabdiag_fabric::Capability;
use fabdiag_model::{BwTool, Family, LatTool, PollMode, Role, Row, RunDesc, SideMem, TestMode, TestSpec, Tool};

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
    /// What this side does when its completion queue is empty.
    pub poll: PollMode,
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
