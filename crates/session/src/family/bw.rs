//! The bandwidth tools (write_bw, read_bw, send_bw; originals §3.1-3.3) and
//! cxi_gpu_loopback_bw (§3.5, one process playing both roles): a full
//! buffer for each role a side plays (§2.5), the banner's fields, the
//! engine's bandwidth method for every size, and `--verify`: before each
//! size the source is stamped with that size's pattern, after it the
//! destination is checked where the run put data.

use super::run::{capability, test_mode, Facts, FamilyRun, Rows};
use crate::driver::{Drive, DriverConfig, LatClock, Op, INITIATOR, TARGET};
use crate::memory::{MemoryPlan, Pattern};
use crate::outcome::SessionError;
use fabdiag_engine::{buffer_size, run_size, sizes, Activity, Stepper};
use fabdiag_fabric::{Capability, RegionId};
use fabdiag_model::TestSpec;
use fabdiag_model::{BwRun, BwTool, Knob, Role, Row, RunDesc};
use fabdiag_proto::Phase;
use std::time::Duration;

/// How long a side waits for data that the run says was sent before it
/// calls the target wrong (providers whose completions mean "sent", not
/// "delivered", may still be applying it).
const SETTLE: Duration = Duration::from_secs(2);

pub(crate) struct Bandwidth {
    tool: BwTool,
    spec: TestSpec,
    /// The test hook: flip byte N of the first checked operation's data
    /// before each check.
    corrupt: Option<u64>,
}

/// Where a side's check looks.
enum Dest {
    /// One-sided operations: every offset of a batch, in this region.
    Batch(RegionId),
    /// Sends: every receive slot a message of the size landed in.
    Received,
}

impl Bandwidth {
    pub fn new(tool: BwTool, spec: TestSpec, corrupt: Option<u64>) -> Self {
        Bandwidth { tool, spec, corrupt }
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

    /// The roles this side plays: (initiates, is a target).
    fn roles(&self, role: Role) -> (bool, bool) {
        let both = self.spec.bidirectional || self.tool == BwTool::GpuLoopbackBw;
        (role == Role::Client || both, role == Role::Server || both)
    }

    fn op(&self) -> Op {
        match self.tool {
            BwTool::WriteBw | BwTool::GpuLoopbackBw => Op::Write,
            BwTool::ReadBw => Op::Read,
            BwTool::SendBw => Op::Send,
        }
    }

    /// `--verify` on this side: the region it stamps (the data's source)
    /// and where it checks (the data's destination). Writes and sends go
    /// from the initiator to the target; reads the other way.
    fn verify_plan(&self, role: Role) -> (Option<RegionId>, Option<Dest>) {
        let (initiates, target) = self.roles(role);
        match self.op() {
            Op::Read => (target.then_some(TARGET), initiates.then_some(Dest::Batch(INITIATOR))),
            Op::Send => (initiates.then_some(INITIATOR), target.then_some(Dest::Received)),
            _ => (initiates.then_some(INITIATOR), target.then_some(Dest::Batch(TARGET))),
        }
    }

    /// The offsets one batch of `size` uses (the same locally and remotely).
    fn batch_offsets(&self, d: &dyn Drive, region: RegionId, size: u64) -> Vec<u64> {
        let s = &self.spec;
        let mut st = Stepper::new(size, s.buf_align, d.region_len(region), s.max_buf);
        let mut offs: Vec<u64> = (0..s.list_size).map(|_| st.next_offset()).collect();
        offs.sort_unstable();
        offs.dedup();
        offs
    }

    fn pattern(&self, size: u64) -> Pattern {
        let op = match self.op() {
            Op::Read => 2,
            Op::Send => 3,
            _ => 1,
        };
        Pattern::new(op, size)
    }

    /// Checks this side's destination after `size`; the error names the
    /// first bad offset.
    fn check(&self, role: Role, d: &mut dyn Drive, dest: &Dest, size: u64) -> Result<(), SessionError> {
        let p = self.pattern(size);
        // one process has no client or server, only its buffers
        let whose = if self.tool == BwTool::GpuLoopbackBw {
            String::new()
        } else {
            format!("{}'s ", side(role))
        };
        let (region, offsets) = match dest {
            Dest::Batch(r) => (*r, self.batch_offsets(d, *r, size)),
            Dest::Received => {
                let got = d.received();
                if got.is_empty() {
                    return Err(SessionError::Verify(format!(
                        "data check failed for size {size}: no message of this size arrived at the {}",
                        side(role)
                    )));
                }
                if let Some(&(off, len)) = got.iter().find(|&&(_, len)| len != size) {
                    return Err(SessionError::Verify(format!(
                        "data check failed for size {size}: the {} received a message of {len} bytes (at RX offset {off})",
                        side(role)
                    )));
                }
                (TARGET, got.into_iter().map(|(off, _)| off).collect())
            }
        };
        let mut found = None;
        let mut look = |mem: &[u8]| {
            found = p.first_mismatch(mem, &offsets, size);
            found.is_none()
        };
        if let Some(at) = self.corrupt {
            // let the data land first, or the flip could be overwritten
            d.settle_region(region, &mut look, SETTLE)?;
            let first = offsets.first().copied().unwrap_or(0);
            d.fill(region, &mut |mem| {
                if let Some(x) = mem.get_mut((first + at) as usize) {
                    *x ^= 0x5A;
                }
            })?;
        }
        d.settle_region(region, &mut look, SETTLE)?;
        match found {
            None => Ok(()),
            Some((off, want, got)) => Err(SessionError::Verify(format!(
                "data check failed for size {size}: the {whose}{} buffer at offset {off} holds {}, the pattern says 0x{want:02x}",
                if region == TARGET { "RX" } else { "TX" },
                got.map_or("nothing (past the end)".to_string(), |g| format!("0x{g:02x}"))
            ))),
        }
    }
}

fn side(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Server => "server",
    }
}

impl FamilyRun for Bandwidth {
    fn capability(&self) -> Capability {
        capability(self.tool.into())
    }

    fn memory(&self, role: Role) -> MemoryPlan {
        let s = &self.spec;
        // originals §2.5: a full buffer for each role this side plays
        let len = buffer_size(s.max_size, s.buf_align, s.list_size, s.max_buf);
        let (initiates, target) = self.roles(role);
        MemoryPlan::roles(len, initiates, target, s.hugepages)
    }

    fn describe(&self, f: &Facts<'_>) -> RunDesc {
        let s = &self.spec;
        let (client_mem, server_mem) = f.mems();
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
            // features with no libfabric control (originals §2.13)
            hrp: (self.tool == BwTool::WriteBw).then(|| Knob::NotApplicable.into()),
            idc: matches!(self.tool, BwTool::WriteBw | BwTool::SendBw).then(|| Knob::on(s.use_idc).into()),
            max_buf_bytes: s.max_buf,
            buf_used_bytes: f.port.memory().used,
            buf_align_bytes: s.buf_align,
            hugepages: f.port.memory().hugepages.clone(),
            local_address: f.local.clone(),
            remote_address: f.remote.clone(),
            delivery_complete: f.port.delivery_complete(),
            poll: f.poll,
            client_mem,
            server_mem,
            gpus_found: f.port.memory().gpus_found,
            verify: s.verify,
        })
    }

    fn driver(&self, role: Role, clock: LatClock) -> DriverConfig {
        let s = &self.spec;
        DriverConfig {
            op: self.op(),
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
        let (stamp, dest) = if s.verify { self.verify_plan(role) } else { (None, None) };
        for size in sizes(s.min_size, s.max_size) {
            if let Some(region) = stamp {
                // before the pre-run barrier: the peer starts only after it
                let offsets = self.batch_offsets(d, region, size);
                let p = self.pattern(size);
                d.fill(region, &mut |mem| p.stamp(mem, &offsets, size))?;
            }
            let r = run_size(d, self.activity(role), s.mode(), size, s.list_size)?;
            out.push(Row::Bw(r));
            if let Some(dest) = &dest {
                self.check(role, d, dest, size)?;
            }
        }
        if s.verify {
            // A side whose check fails tells the other, which hears it at
            // the next size's pre-run barrier; after the last size this
            // barrier is where it hears it, instead of ending as a success
            // while its peer found bad data.
            d.link().barrier(Phase::Results, None)?;
        }
        Ok(None)
    }
}
