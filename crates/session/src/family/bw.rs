//! The bandwidth tools (write_bw, read_bw, send_bw; spec §3.1-3.3): a full
//! buffer for each role a side plays (§2.5), the banner's fields, and the
//! engine's bandwidth method for every size.

use super::{test_mode, Facts, FamilyRun, Rows};
use crate::driver::{Drive, DriverConfig, LatClock, Op};
use crate::memory::MemoryPlan;
use crate::outcome::SessionError;
use crate::spec::TestSpec;
use fabdiag_engine::{buffer_size, run_size, sizes, Activity};
use fabdiag_fabric::Capability;
use fabdiag_report::{BwRun, BwTool, Knob, Role, Row, RunDesc};

pub(crate) struct Bandwidth {
    tool: BwTool,
    spec: TestSpec,
}

impl Bandwidth {
    pub fn new(tool: BwTool, spec: TestSpec) -> Self {
        Bandwidth { tool, spec }
    }

    fn activity(&self, role: Role) -> Activity {
        match (role, self.spec.bidirectional, self.tool) {
            (Role::Client, _, _) => Activity::Active,
            (Role::Server, false, _) => Activity::Passive,
            // two-sided: the server's batches follow the client's
            (Role::Server, true, BwTool::SendBw) => Activity::Follower,
            (Role::Server, true, _) => Activity::Active,
        }
    }
}

impl FamilyRun for Bandwidth {
    fn capability(&self) -> Capability {
        super::capability(self.tool.into())
    }

    fn memory(&self, role: Role) -> MemoryPlan {
        let s = &self.spec;
        // spec §2.5: a full buffer for each role this side plays
        let len = buffer_size(s.max_size, s.buf_align, s.list_size, s.max_buf);
        let both = s.bidirectional;
        MemoryPlan::roles(
            len,
            role == Role::Client || both,
            role == Role::Server || both,
            s.hugepages,
        )
    }

    fn describe(&self, f: &Facts<'_>) -> RunDesc {
        let s = &self.spec;
        RunDesc::Bw(BwRun {
            tool: self.tool,
            role: f.role,
            provider: f.port.provider().into(),
            device: f.port.domain().into(),
            service_id: f.svc_id,
            mode: test_mode(s),
            min_size_bytes: s.min_size,
            max_size_bytes: s.max_size,
            list_size: s.list_size,
            bidirectional: s.bidirectional,
            // HRP and restricted/unrestricted puts are CXI command-queue
            // features with no libfabric control (spec §2.13)
            hrp: (self.tool == BwTool::WriteBw).then(|| Knob::NotApplicable.into()),
            idc: (self.tool != BwTool::ReadBw).then(|| Knob::on(s.use_idc).into()),
            max_buf_bytes: s.max_buf,
            buf_used_bytes: f.port.memory().used,
            buf_align_bytes: s.buf_align,
            hugepages: f.port.memory().hugepages.clone(),
            local_address: f.local.clone(),
            remote_address: f.remote.clone(),
            delivery_complete: f.port.delivery_complete(),
        })
    }

    fn driver(&self, role: Role, clock: LatClock) -> DriverConfig {
        let s = &self.spec;
        DriverConfig {
            op: match self.tool {
                BwTool::WriteBw => Op::Write,
                BwTool::ReadBw => Op::Read,
                BwTool::SendBw => Op::Send,
            },
            activity: self.activity(role),
            bidirectional: s.bidirectional,
            list_size: s.list_size,
            align: s.buf_align,
            max_buf: s.max_buf,
            use_idc: s.use_idc,
            unrestricted: s.unrestricted,
            max_size: s.max_size,
            echo: false,
            clock,
        }
    }

    fn measure(&self, role: Role, d: &mut dyn Drive, out: &mut Rows<'_>) -> Result<Option<SessionError>, SessionError> {
        let s = &self.spec;
        for size in sizes(s.min_size, s.max_size) {
            let r = run_size(d, self.activity(role), s.mode(), size, s.list_size)?;
            out.push(Row::Bw(r));
        }
        Ok(None)
    }
}
