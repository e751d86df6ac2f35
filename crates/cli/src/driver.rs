//! The engine's drivers over a libfabric endpoint and the control
//! connection: how one bandwidth iteration of write_bw, read_bw and send_bw
//! is carried out (spec §3.1-3.3) and one latency operation of write_lat,
//! read_lat and send_lat (§3.6, §3.7, §3.9); how a side keeps the fabric
//! progressing while it waits in a barrier (and, for send_lat's server,
//! echoes what arrives); and how a dead peer is noticed (control silence or
//! closure, or no fabric completion for too long). Never prints.

use fabdiag_clock::Calibration;
use fabdiag_engine::amo::{Operands, Scheme};
use fabdiag_engine::{Activity, BwDriver, LatDriver, Measure, Step, Stepper, SyncPoint};
use fabdiag_fabric::{
    AtomicOperands, AtomicSpec, Completion, Endpoint, FabricError, OpFlags, PeerId, Posted, RegionId, RemoteRegion,
};
use fabdiag_proto::{Control, Message, Phase, ProtoError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Our initiator (TX) buffer and our target (RX) buffer.
pub const INITIATOR: RegionId = RegionId(0);
pub const TARGET: RegionId = RegionId(1);

/// IDC payload limits of the originals (restricted / unrestricted puts, and
/// sends), further capped by the provider's inject size.
const IDC_MAX_RESTRICTED: u64 = 224;
const IDC_MAX_UNRESTRICTED: u64 = 192;
const IDC_MAX_SEND: u64 = 192;

#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Fabric(#[from] FabricError),
    #[error(transparent)]
    Proto(#[from] ProtoError),
    #[error("no fabric completion for {secs} s during {phase} (size {size}): the peer's endpoint is unreachable over the fabric or hung")]
    Stalled { phase: Phase, size: u64, secs: u64 },
    #[error("{0}")]
    Protocol(String),
}

/// The fabric operation a tool measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Write,
    Read,
    Send,
    /// One atomic per slot, as the plan says.
    Atomic(AtomicPlan),
}

/// Slot size of the atomic tools (spec §3.4): operand at +0, compare
/// operand at +16, and the fetched value in the second half of the
/// initiator buffer at the same slot.
pub const AMO_STRIDE: u64 = 64;
pub const AMO_COMPARE_AT: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomicPlan {
    pub spec: AtomicSpec,
    pub scheme: Scheme,
    /// Where fetched values go: the second half of the initiator buffer.
    pub result_base: u64,
}

/// How latency is timed.
#[derive(Clone, Debug)]
pub enum LatClock {
    /// CLOCK_MONOTONIC_RAW.
    Raw,
    /// The CPU cycle counter, converted with this calibration.
    Cycles(Calibration),
}

impl LatClock {
    fn now(&self) -> u64 {
        match self {
            LatClock::Raw => fabdiag_clock::monotonic_raw_ns(),
            LatClock::Cycles(_) => fabdiag_clock::cycles().unwrap_or(0),
        }
    }

    fn elapsed_ns(&self, t0: u64, t1: u64) -> u64 {
        match self {
            LatClock::Raw => t1.saturating_sub(t0),
            LatClock::Cycles(c) => c.to_ns(t1.wrapping_sub(t0)),
        }
    }
}

pub struct DriverConfig {
    pub op: Op,
    pub activity: Activity,
    pub bidirectional: bool,
    pub list_size: u64,
    pub align: u64,
    pub max_buf: u64,
    pub use_idc: bool,
    pub unrestricted: bool,
    /// Largest message this run sends; receive slots are this long.
    pub max_size: u64,
    /// send_lat: the passive side sends every message back (an echo)
    /// instead of answering whole batches.
    pub echo: bool,
    pub clock: LatClock,
}

pub struct FabricDriver<'a> {
    ep: Endpoint,
    ctl: &'a mut Control,
    peer: PeerId,
    peer_target: RemoteRegion,
    cfg: DriverConfig,
    comps: Vec<Completion>,
    // Counters are cumulative for the whole run; each size keeps baselines.
    tx_posted: u64,
    tx_done: u64,
    rx_data: u64,
    rx_responses: u64,
    base_data: u64,
    base_responses: u64,
    iteration: u64,
    responses_owed: u64,
    recv_slot_len: u64,
    recv_gran: u64,
    recv_slots: u64,
    /// A post-run barrier the follower saw while waiting for a batch.
    stashed_post_run: Option<Message>,
    /// send_lat server: echoes owed (sizes) and sent in this size.
    echoes_owed: VecDeque<u64>,
    echoes_sent: u64,
    /// The atomic operands of the next iteration, and those in the buffer.
    amo_next: Option<Operands>,
    amo_loaded: Option<Operands>,
    /// Set by `finish`: the run ended well, so the endpoint may be closed.
    clean: bool,
    last_progress: Instant,
    last_ctl_check: Instant,
    current_size: u64,
}

impl<'a> FabricDriver<'a> {
    pub fn new(
        ep: Endpoint,
        ctl: &'a mut Control,
        peer: PeerId,
        peer_target: RemoteRegion,
        cfg: DriverConfig,
    ) -> Result<Self, DriveError> {
        let mut d = FabricDriver {
            ep,
            ctl,
            peer,
            peer_target,
            cfg,
            comps: vec![Completion::default(); 64],
            tx_posted: 0,
            tx_done: 0,
            rx_data: 0,
            rx_responses: 0,
            base_data: 0,
            base_responses: 0,
            iteration: 0,
            responses_owed: 0,
            recv_slot_len: 0,
            recv_gran: 1,
            recv_slots: 1,
            stashed_post_run: None,
            echoes_owed: VecDeque::new(),
            echoes_sent: 0,
            amo_next: None,
            amo_loaded: None,
            clean: false,
            last_progress: Instant::now(),
            last_ctl_check: Instant::now(),
            current_size: 0,
        };
        if d.cfg.op == Op::Send {
            d.post_initial_receives()?;
        }
        if let Op::Atomic(plan) = d.cfg.op {
            d.amo_next = Some(plan.scheme.first);
        }
        Ok(d)
    }

    /// Drives progress until `done` holds for the endpoint or `limit`
    /// passes; returns how long it took. (Incoming operations are applied
    /// while this side polls, and may still be queued when the peer's
    /// post-run message arrives over TCP.)
    pub fn progress_until(
        &mut self,
        done: impl Fn(&Endpoint) -> bool,
        limit: Duration,
    ) -> Result<Duration, DriveError> {
        let t0 = Instant::now();
        while !done(&self.ep) && t0.elapsed() < limit {
            self.progress()?;
        }
        Ok(t0.elapsed())
    }

    /// The endpoint and control connection, for checks after a run.
    pub fn parts(&mut self) -> (&Endpoint, &mut Control) {
        (&self.ep, &mut *self.ctl)
    }

    /// The run ended well: the endpoint is closed normally. Dropped any
    /// other way (an error returned through `?`), the driver leaves the
    /// endpoint unclosed (see `Endpoint::leak_on_drop`).
    pub fn finish(mut self) {
        self.clean = true;
    }

    fn post_initial_receives(&mut self) -> Result<(), DriveError> {
        let region = self.ep.region_len(TARGET);
        self.recv_slot_len = self.cfg.max_size.min(region);
        let align = self.cfg.align.max(1);
        self.recv_gran = self.recv_slot_len.div_ceil(align).max(1) * align;
        self.recv_slots = (region / self.recv_gran).max(1);
        // A batch plus the response; the provider buffers any excess as
        // unexpected messages.
        let depth = (self.cfg.list_size + 2).min(self.ep.rx_depth()).max(1);
        for i in 0..depth {
            let slot = i % self.recv_slots;
            if self.ep.recv(TARGET, slot * self.recv_gran, self.recv_slot_len, slot)? == Posted::Busy {
                break;
            }
        }
        Ok(())
    }

    /// Polls the CQ once; accounts receives and sends; returns how many
    /// completions it saw.
    fn progress(&mut self) -> Result<usize, DriveError> {
        let n = self.ep.poll(&mut self.comps)?;
        for i in 0..n {
            let c = self.comps[i];
            if c.is_recv {
                if c.len == 0 {
                    self.rx_responses += 1;
                } else {
                    self.rx_data += 1;
                    // A passive receiver answers: every message with its echo
                    // (send_lat), or every full batch (send_bw); active sides
                    // answer from their iteration.
                    if self.cfg.activity == Activity::Passive {
                        if self.cfg.echo {
                            self.echoes_owed.push_back(c.len);
                        } else if (self.rx_data - self.base_data).is_multiple_of(self.cfg.list_size) {
                            self.responses_owed += 1;
                        }
                    }
                }
                // Reuse the slot that just completed; the receive queue
                // therefore cannot be full.
                let slot = c.context % self.recv_slots;
                self.ep.recv(TARGET, slot * self.recv_gran, self.recv_slot_len, slot)?;
            } else {
                self.tx_done += 1;
            }
        }
        if n > 0 {
            self.last_progress = Instant::now();
        }
        while self.responses_owed > 0 {
            if self.send_response()? == Posted::Busy {
                break;
            }
            self.responses_owed -= 1;
        }
        while let Some(&len) = self.echoes_owed.front() {
            let inject = self.inject_ok(len);
            if self.ep.send(INITIATOR, 0, len, self.peer, OpFlags { inject }, 0)? == Posted::Busy {
                break;
            }
            self.tx_posted += 1;
            self.echoes_sent += 1;
            self.echoes_owed.pop_front();
        }
        Ok(n)
    }

    /// The zero-length message that closes a send_bw batch.
    fn send_response(&mut self) -> Result<Posted, DriveError> {
        let p = self.ep.send(
            INITIATOR,
            0,
            0,
            self.peer,
            OpFlags {
                inject: self.inject_ok(0),
            },
            0,
        )?;
        if p == Posted::Queued {
            self.tx_posted += 1;
        }
        Ok(p)
    }

    fn inject_ok(&self, size: u64) -> bool {
        if !self.cfg.use_idc {
            return false;
        }
        let idc_max = match self.cfg.op {
            // libfabric 1.17's rxm (tcp) never completes atomics posted with
            // FI_INJECT, so atomics are never injected
            Op::Atomic(_) => return false,
            Op::Send => IDC_MAX_SEND,
            _ if self.cfg.unrestricted => IDC_MAX_UNRESTRICTED,
            _ => IDC_MAX_RESTRICTED,
        };
        size <= idc_max.min(self.ep.inject_size())
    }

    /// Time without any completion after which the peer counts as gone:
    /// 5 s plus the time one batch would take at 100 MB/s.
    fn stall_limit(&self) -> Duration {
        let batch = self.current_size.saturating_mul(self.cfg.list_size);
        Duration::from_secs(5) + Duration::from_micros(batch / 100)
    }

    /// While waiting on the fabric: checks the control connection every
    /// 100 ms, and the fabric for a stall.
    fn watch(&mut self) -> Result<(), DriveError> {
        if self.last_ctl_check.elapsed() >= Duration::from_millis(100) {
            self.last_ctl_check = Instant::now();
            self.ctl.check_alive(Phase::Run)?;
        }
        if self.last_progress.elapsed() > self.stall_limit() {
            return Err(DriveError::Stalled {
                phase: Phase::Run,
                size: self.current_size,
                secs: self.stall_limit().as_secs(),
            });
        }
        Ok(())
    }

    fn wait_until(&mut self, done: impl Fn(&Self) -> bool) -> Result<(), DriveError> {
        self.last_progress = Instant::now();
        while !done(self) {
            if self.progress()? == 0 {
                self.watch()?;
            }
        }
        Ok(())
    }

    fn post_batch(&mut self, size: u64) -> Result<(), DriveError> {
        if let Op::Atomic(plan) = self.cfg.op {
            self.load_operands(plan, self.cfg.list_size)?;
        }
        let registered = self.ep.region_len(INITIATOR).min(self.peer_target.len);
        let mut st = Stepper::new(size, self.cfg.align, registered, self.cfg.max_buf);
        let inject = self.inject_ok(size);
        let mut posted = 0;
        self.last_progress = Instant::now();
        while posted < self.cfg.list_size {
            let off = st.peek();
            let r = self.post(size, off, inject)?;
            match r {
                Posted::Queued => {
                    st.next_offset();
                    posted += 1;
                    self.tx_posted += 1;
                }
                // queue full: retire completions, then retry the same slot
                Posted::Busy => {
                    if self.progress()? == 0 {
                        self.watch()?;
                    }
                }
            }
        }
        Ok(())
    }

    fn post(&mut self, size: u64, off: u64, inject: bool) -> Result<Posted, DriveError> {
        Ok(match self.cfg.op {
            Op::Write => self.ep.write(
                INITIATOR,
                off,
                size,
                self.peer,
                &self.peer_target,
                off,
                OpFlags { inject },
                0,
            )?,
            Op::Read => self
                .ep
                .read(INITIATOR, off, size, self.peer, &self.peer_target, off, 0)?,
            Op::Send => self.ep.send(INITIATOR, off, size, self.peer, OpFlags { inject }, 0)?,
            Op::Atomic(plan) => {
                let ops = AtomicOperands {
                    region: INITIATOR,
                    operand: off,
                    compare: off + AMO_COMPARE_AT,
                    result: plan.result_base + off,
                };
                self.ep.atomic(
                    &plan.spec,
                    &ops,
                    self.peer,
                    &self.peer_target,
                    off,
                    OpFlags { inject },
                    0,
                )?
            }
        })
    }

    /// Writes this iteration's operands into the first `slots` slots (if
    /// they differ from what the buffer holds) and steps the scheme for the
    /// next one (spec §3.4.1: once per iteration).
    fn load_operands(&mut self, plan: AtomicPlan, slots: u64) -> Result<(), DriveError> {
        let Some(o) = self.amo_next else { return Ok(()) };
        self.amo_next = Some(plan.scheme.next(o));
        if self.amo_loaded == Some(o) {
            return Ok(());
        }
        let ty = plan.scheme.ty;
        let mem = self
            .ep
            .region_mut(INITIATOR)
            .ok_or_else(|| DriveError::Protocol("no initiator buffer".into()))?;
        for i in 0..slots {
            let at = (i * AMO_STRIDE) as usize;
            if at + AMO_STRIDE as usize > mem.len() {
                break;
            }
            o.op1.encode(ty, &mut mem[at..]);
            o.op2.encode(ty, &mut mem[at + AMO_COMPARE_AT as usize..]);
        }
        self.amo_loaded = Some(o);
        Ok(())
    }

    /// Send a batch, take the peer's batch, answer it, take the answer.
    fn bidirectional_send_iteration(&mut self, size: u64) -> Result<Step, DriveError> {
        self.post_batch(size)?;
        let k = self.iteration + 1;
        let want_data = self.base_data + k * self.cfg.list_size;
        self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_data >= want_data)?;
        while self.send_response()? == Posted::Busy {
            self.progress()?;
        }
        let want_resp = self.base_responses + k;
        self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_responses >= want_resp)?;
        self.iteration = k;
        Ok(Step::Done)
    }

    /// Waits in a barrier while keeping the fabric progressing (the peer's
    /// operations into our memory may need it).
    fn wait_control(&mut self, phase: Phase) -> Result<Message, DriveError> {
        if phase == Phase::PostRun {
            if let Some(m) = self.stashed_post_run.take() {
                return Ok(m);
            }
        }
        // A passive side waits in the post-run barrier for the whole run;
        // a peer lost meanwhile was lost "during run".
        let label = if phase == Phase::PostRun && self.cfg.activity == Activity::Passive {
            Phase::Run
        } else {
            phase
        };
        loop {
            self.progress()?;
            if let Some(m) = self.ctl.poll(label)? {
                return Ok(m);
            }
        }
    }

    /// When the fabric fails, a peer that died is the likelier story: prefer
    /// the control connection's account if it has one.
    fn explain(&mut self, e: DriveError) -> DriveError {
        if let DriveError::Fabric(_) = e {
            let deadline = Instant::now() + Duration::from_millis(300);
            while Instant::now() < deadline {
                if let Err(pe) = self.ctl.check_alive(Phase::Run) {
                    return DriveError::Proto(pe);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        e
    }

    fn iteration_inner(&mut self, size: u64) -> Result<Step, DriveError> {
        match (self.cfg.op, self.cfg.activity, self.cfg.bidirectional) {
            (_, Activity::Passive, _) => Err(DriveError::Protocol("a passive side runs no iterations".into())),
            (Op::Write | Op::Read | Op::Atomic(_), _, _) => {
                self.post_batch(size)?;
                self.wait_until(|d| d.tx_done >= d.tx_posted)?;
                Ok(Step::Done)
            }
            (Op::Send, Activity::Active, false) => {
                self.post_batch(size)?;
                let k = self.iteration + 1;
                let want = self.base_responses + k;
                self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_responses >= want)?;
                self.iteration = k;
                Ok(Step::Done)
            }
            (Op::Send, Activity::Active, true) => self.bidirectional_send_iteration(size),
            (Op::Send, Activity::Follower, _) => {
                // Start a batch only once the leader has started one, so no
                // message is left in flight when the leader stops.
                let started = self.base_data + self.iteration * self.cfg.list_size;
                loop {
                    if self.rx_data > started {
                        return self.bidirectional_send_iteration(size);
                    }
                    self.progress()?;
                    match self.ctl.poll(Phase::Run)? {
                        None => {}
                        Some(
                            m @ Message::Barrier {
                                phase: Phase::PostRun, ..
                            },
                        ) => {
                            self.stashed_post_run = Some(m);
                            return Ok(Step::PeerFinished);
                        }
                        Some(other) => {
                            return Err(DriveError::Proto(ProtoError::Unexpected {
                                phase: Phase::Run,
                                got: other.kind().into(),
                            }))
                        }
                    }
                }
            }
        }
    }
}

impl FabricDriver<'_> {
    /// Both sides reach `point` for `size`; the fabric keeps progressing
    /// while this side waits.
    fn sync(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        let phase = match point {
            SyncPoint::PreRun => Phase::PreRun,
            SyncPoint::PostRun => Phase::PostRun,
        };
        let ours = Message::Barrier {
            phase,
            size: Some(size),
        };
        let client = self.ctl.role() == fabdiag_proto::Role::Client;
        if client {
            if point == SyncPoint::PreRun {
                self.start_size(size);
            }
            self.ctl.send(phase, &ours)?;
        }
        let theirs = self.wait_control(phase)?;
        match theirs {
            Message::Barrier { phase: p, size: s } if p == phase && s == Some(size) => {}
            Message::Barrier { phase: p, size: s } => {
                return Err(DriveError::Proto(ProtoError::Desync {
                    phase,
                    theirs: format!("{p}{}", s.map(|s| format!(" (size {s})")).unwrap_or_default()),
                }))
            }
            other => {
                return Err(DriveError::Proto(ProtoError::Unexpected {
                    phase,
                    got: other.kind().into(),
                }))
            }
        }
        if !client {
            // reset before answering, so nothing of this size can arrive first
            if point == SyncPoint::PreRun {
                self.start_size(size);
            }
            self.ctl.send(phase, &ours)?;
        }
        Ok(())
    }

    fn results(&mut self, size: u64, elapsed_ns: u64, ops: u64) -> Result<(u64, u64), DriveError> {
        let msg = Message::Results { size, elapsed_ns, ops };
        match self.ctl.exchange(Phase::Results, &msg)? {
            Message::Results {
                size: s,
                elapsed_ns,
                ops,
            } if s == size => Ok((elapsed_ns, ops)),
            Message::Results { size: s, .. } => Err(DriveError::Proto(ProtoError::Desync {
                phase: Phase::Results,
                theirs: format!("results for size {s}"),
            })),
            other => Err(DriveError::Proto(ProtoError::Unexpected {
                phase: Phase::Results,
                got: other.kind().into(),
            })),
        }
    }

    /// One timed latency operation (spec §3.6, §3.7, §3.9).
    fn measure_inner(&mut self, size: u64) -> Result<u64, DriveError> {
        if let Op::Atomic(plan) = self.cfg.op {
            self.load_operands(plan, 1)?;
        }
        let inject = self.inject_ok(size);
        let want_echo = self.rx_data + 1;
        let t0 = self.cfg.clock.now();
        while self.post(size, 0, inject)? == Posted::Busy {
            if self.progress()? == 0 {
                self.watch()?;
            }
        }
        self.tx_posted += 1;
        let ns = if self.cfg.op == Op::Send {
            // a round trip: our message out, the server's echo back; halved
            self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_data >= want_echo)?;
            let t1 = self.cfg.clock.now();
            self.cfg.clock.elapsed_ns(t0, t1) / 2
        } else {
            self.wait_until(|d| d.tx_done >= d.tx_posted)?;
            let t1 = self.cfg.clock.now();
            self.cfg.clock.elapsed_ns(t0, t1)
        };
        Ok(ns)
    }
}

impl Drop for FabricDriver<'_> {
    fn drop(&mut self) {
        if !self.clean {
            self.ep.leak_on_drop();
        }
    }
}

impl LatDriver for FabricDriver<'_> {
    type Error = DriveError;

    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        self.sync(point, size)
    }

    fn measure(&mut self, size: u64) -> Result<u64, DriveError> {
        self.measure_inner(size).map_err(|e| self.explain(e))
    }

    /// The server reports how many echoes it sent (send_lat) so a
    /// de-synchronised run is caught instead of reported.
    fn exchange(&mut self, size: u64, ops: u64) -> Result<u64, DriveError> {
        let mine = if self.cfg.activity == Activity::Passive {
            self.echoes_sent
        } else {
            ops
        };
        let (_, theirs) = self.results(size, 0, mine)?;
        Ok(theirs)
    }
}

impl BwDriver for FabricDriver<'_> {
    type Error = DriveError;

    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        self.sync(point, size)
    }

    fn iteration(&mut self, size: u64) -> Result<Step, DriveError> {
        self.iteration_inner(size).map_err(|e| self.explain(e))
    }

    fn exchange(&mut self, size: u64, mine: Measure) -> Result<Measure, DriveError> {
        let msg = Message::Results {
            size,
            elapsed_ns: mine.elapsed_ns,
            ops: mine.ops,
        };
        match self.ctl.exchange(Phase::Results, &msg)? {
            Message::Results {
                size: s,
                elapsed_ns,
                ops,
            } if s == size => Ok(Measure { elapsed_ns, ops }),
            Message::Results { size: s, .. } => Err(DriveError::Proto(ProtoError::Desync {
                phase: Phase::Results,
                theirs: format!("results for size {s}"),
            })),
            other => Err(DriveError::Proto(ProtoError::Unexpected {
                phase: Phase::Results,
                got: other.kind().into(),
            })),
        }
    }
}

impl FabricDriver<'_> {
    fn start_size(&mut self, size: u64) {
        self.current_size = size;
        self.echoes_sent = 0;
        self.base_data = self.rx_data;
        self.base_responses = self.rx_responses;
        self.iteration = 0;
    }
}
