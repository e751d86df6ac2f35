//! The latency tools (send_lat, write_lat, read_lat; originals §3.6, §3.7,
//! §3.9): one buffer of the largest size per role (send_lat: both roles on
//! both sides), and the engine's latency method for every size. The server
//! is passive (send_lat: it echoes every message); after each size the
//! sides compare operation counts, so the de-sync the original send_lat
//! fought is reported instead of measured.

use super::run::{capability, test_mode, Facts, FamilyRun, Rows};
use crate::driver::{Drive, DriverConfig, LatClock, Op};
use crate::memory::MemoryPlan;
use crate::outcome::SessionError;
use fabdiag_engine::{run_lat_size, sizes, Activity};
use fabdiag_fabric::Capability;
use fabdiag_model::TestSpec;
use fabdiag_model::{Knob, LatRun, LatTool, PollMode, Role, Row, RunDesc};

pub(crate) struct Latency {
    tool: LatTool,
    spec: TestSpec,
    /// `--poll`: how the gap between iterations is waited out.
    poll: PollMode,
}

impl Latency {
    pub fn new(tool: LatTool, spec: TestSpec, poll: PollMode) -> Self {
        Latency { tool, spec, poll }
    }
}

fn activity(role: Role) -> Activity {
    match role {
        Role::Client => Activity::Active,
        Role::Server => Activity::Passive,
    }
}

impl FamilyRun for Latency {
    fn capability(&self) -> Capability {
        capability(self.tool.into())
    }

    fn memory(&self, role: Role) -> MemoryPlan {
        let both = self.tool == LatTool::SendLat;
        let (initiator, target) = (both || role == Role::Client, both || role == Role::Server);
        MemoryPlan::roles(self.spec.max_size, initiator, target, self.spec.hugepages)
    }

    fn describe(&self, f: &Facts<'_>) -> RunDesc {
        let s = &self.spec;
        let (client_mem, server_mem) = f.mems();
        RunDesc::Lat(LatRun {
            tool: self.tool,
            role: f.role,
            provider: f.port.provider().into(),
            device: f.port.domain().into(),
            service_id: f.svc_id,
            mode: test_mode(s),
            warmup_iterations: s.warmup,
            gap_us: s.gap_us,
            min_size_bytes: s.min_size,
            max_size_bytes: s.max_size,
            idc: (self.tool != LatTool::ReadLat).then(|| Knob::on(s.use_idc).into()),
            // low-latency command launch is a CXI command-queue path with no
            // libfabric control (originals §2.13)
            ll: Knob::NotApplicable.into(),
            report_all: s.report_all,
            hugepages: f.port.memory().hugepages.clone(),
            local_address: f.local.clone(),
            remote_address: f.remote.clone(),
            clock: s.clock.name().into(),
            cycles_mhz: f.clock.mhz(),
            clock_reads: f.clock.reads().into(),
            delivery_complete: f.port.delivery_complete(),
            poll: f.poll,
            client_mem,
            server_mem,
            gpus_found: f.port.memory().gpus_found,
        })
    }

    fn driver(&self, role: Role, clock: LatClock) -> DriverConfig {
        let s = &self.spec;
        DriverConfig {
            op: match self.tool {
                LatTool::WriteLat => Op::Write,
                LatTool::ReadLat => Op::Read,
                LatTool::SendLat => Op::Send,
            },
            activity: activity(role),
            bidirectional: false,
            list_size: 1,
            align: 64,
            max_buf: s.max_size,
            use_idc: s.use_idc,
            unrestricted: s.unrestricted,
            max_size: s.max_size,
            echo: self.tool == LatTool::SendLat && role == Role::Server,
            clock,
        }
    }

    fn measure(&self, role: Role, d: &mut dyn Drive, out: &mut Rows<'_>) -> Result<Option<SessionError>, SessionError> {
        let s = &self.spec;
        let lc = s.lat_config(self.poll);
        for size in sizes(s.min_size, s.max_size) {
            let r = run_lat_size(d, activity(role), &lc, size)?;
            // every message the client sent must have been echoed once
            let sent = r.warmup + r.iterations;
            if self.tool == LatTool::SendLat && role == Role::Client && sent != r.peer_ops {
                return Err(SessionError::Mismatch(format!(
                    "client and server disagree on size {size}: the client sent {sent} messages, the server echoed {}",
                    r.peer_ops
                )));
            }
            out.push(Row::Lat(r));
        }
        Ok(None)
    }
}
