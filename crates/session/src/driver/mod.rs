//! The engine's drivers over a libfabric endpoint: how one bandwidth
//! iteration or one timed latency operation is carried out on the fabric.
//! Split by job: this file holds the driver's state, completion accounting
//! and posting; `peer` the barriers and result exchanges over a `Link` (the
//! only contact with the other side, so a single-process test can pass
//! `Alone`); `waiting` how a dead peer or a hung fabric is noticed;
//! `data_path` the endpoint as the driver sees it (libfabric's, or a fake
//! one for tests); `bw` and `lat` the engine's two driver traits. Registered bytes are read and
//! written only through `crate::memory`. Never prints.

mod bw;
#[cfg(test)]
mod fake;
mod lat;
pub(crate) mod peer;
mod waiting;

pub(crate) mod data_path;
pub use waiting::stall_limit;

pub(crate) use data_path::{DataPath, Post, What};
pub use lat::LatClock;
#[cfg(test)]
pub(crate) use peer::SyncHost;

use crate::memory;
use fabdiag_engine::amo::{Operands, Scheme};
use fabdiag_engine::{Activity, BwDriver, LatDriver, Stepper};
use fabdiag_fabric::{
    AtomicOperands, AtomicSpec, Completion, Endpoint, FabricError, OpFlags, PeerId, Posted, RegionId, RemoteRegion,
};
use fabdiag_model::Provider;
use fabdiag_proto::Link;
use fabdiag_proto::{Message, Phase, ProtoError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Our initiator (TX) buffer and our target (RX) buffer.
pub const INITIATOR: RegionId = RegionId(0);
pub const TARGET: RegionId = RegionId(1);

/// IDC payload limits of the originals (restricted / unrestricted puts, and
/// sends), further capped by the provider's inject size. IDC is CXI's own;
/// see `inject_limit` for sends on other providers.
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

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomicPlan {
    pub spec: AtomicSpec,
    pub scheme: Scheme,
    /// Where fetched values go: the second half of the initiator buffer.
    pub result_base: u64,
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

/// How long send_bw's receiver waits after an empty poll in the middle of
/// a batch: after its first message, with two or more still to come.
/// Its polls are not what is measured, but on shm they are not free for
/// the sender: libfabric 1.17's shm progress takes the receiving region's
/// spin lock on every poll, empty or not (smr_progress_cmd), and the sender
/// takes the same lock to queue each message, so a receiver polling as
/// fast as it can holds the sender up. `perf record` of send-bw, shm, 64 B:
/// the sender spent 18-52 % of its time in pthread_spin_lock inside
/// fi_inject. (fi_rdm_tagged_bw's receiver polls slower: a clock read per
/// empty poll and a syscall now and then.) With the pause the receiver
/// takes the queued messages in bunches (figures in the README's speed
/// section). A batch's first and last messages are awaited without
/// pauses, so neither the response the sender waits for nor the post-run
/// barrier (part of the client's elapsed time) is delayed: `-l 1` and
/// `-l 2` never pause. The other tools never pause: their peer's
/// operations (RMA writes with delivery complete, reads, atomics) complete
/// only through this side's progress, and a pause made write-bw slower
/// (0.43 to 0.33 M writes/s, shm, 64 B). Only on shm, whose lock it works
/// around: on psm3 a receive moves its data in this side's polls, which
/// return nothing until it is in, and the pause cut send-bw at 64 KiB
/// from 3.6 to 2.3 GB/s (window 64; README, "Speed"); on tcp it changed
/// nothing measurable.
pub const SEND_BW_IDLE_PAUSE: Duration = Duration::from_micros(2);

/// The provider whose receives the pause helps (`SEND_BW_IDLE_PAUSE`).
fn pauses_when_idle(provider: &str) -> bool {
    Provider::named(provider).is("shm")
}

/// Everything a session does with a driver: the engine's two methods, the
/// atomic tools' settling of the target, and the link for trading verdicts.
pub trait Drive: BwDriver<Error = DriveError> + LatDriver<Error = DriveError> {
    /// Keeps the fabric progressing until `done` holds for the target's
    /// bytes or `limit` passes; returns the time taken. `done` sees the
    /// bytes at every look, the last look being the state they were left
    /// in, so a caller keeps what it found there rather than looking again.
    /// (Incoming operations are applied while this side polls, and may still
    /// be queued when the peer's post-run message arrives over TCP.)
    fn settle(&mut self, done: &mut dyn FnMut(&[u8]) -> bool, limit: Duration) -> Result<Duration, DriveError> {
        self.settle_region(TARGET, done, limit)
    }
    /// `settle` on any of our regions.
    fn settle_region(
        &mut self,
        region: RegionId,
        done: &mut dyn FnMut(&[u8]) -> bool,
        limit: Duration,
    ) -> Result<Duration, DriveError>;
    /// Writes into one of our regions between sizes (`--verify`'s stamp).
    fn fill(&mut self, region: RegionId, f: &mut dyn FnMut(&mut [u8])) -> Result<(), DriveError>;
    /// The length of one of our regions.
    fn region_len(&self, region: RegionId) -> u64;
    /// Every place in our target a message of this size landed (offset,
    /// and the length of the latest message there), on a side that
    /// receives sends.
    fn received(&self) -> Vec<(u64, u64)>;
    fn link(&mut self) -> &mut dyn Link;
    /// The run ended well: the endpoint may be closed normally. Dropped any
    /// other way, the driver leaves the endpoint unclosed (libfabric 1.17
    /// can crash closing an endpoint whose peer vanished, see
    /// docs/known-defects.md).
    fn finish(self: Box<Self>);
}

pub struct FabricDriver<'a, W: DataPath + ?Sized = Endpoint> {
    ep: &'a mut W,
    link: &'a mut dyn Link,
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
    /// send_bw's receiver: messages still to come in the current batch (a
    /// countdown, so the per-message path has no division).
    batch_left: u64,
    /// Its pause after an empty poll mid-batch: `SEND_BW_IDLE_PAUSE` on
    /// shm, none elsewhere.
    mid_batch_pause: Duration,
    iteration: u64,
    responses_owed: u64,
    recv_slot_len: u64,
    recv_gran: u64,
    recv_slots: u64,
    /// A post-run barrier the follower saw while waiting for a batch.
    stashed_post_run: Option<Message>,
    /// send_lat server: echoes owed (sizes) and sent in this size.
    echoes_owed: VecDeque<u64>,
    /// Receive slots that completed and are not yet posted again: a
    /// receive is posted again after the echo goes out (server) or after
    /// the round trip's clock is read (client), off the round trip's
    /// critical path; other slots stay posted meanwhile.
    reposts: Vec<u64>,
    /// Each receive slot, checked once.
    recv_prepared: Vec<W::Prepared>,
    /// The send last posted from offset 0 (its length and whether it was
    /// injected), checked once: every send of send_lat and its echoes.
    send_prepared: Option<(u64, bool, W::Prepared)>,
    /// Set while send_lat's client waits for its echo: `progress` leaves
    /// the reposts to `measure`.
    hold_reposts: bool,
    /// The most completions one poll asks for. A provider may keep
    /// polling its wire until it has the number asked for or nothing more
    /// (psm3's CQ read does: one more socket poll, a system call, per
    /// round trip when asked for more than one), so send_lat's sides,
    /// which wait for one message at a time, ask for one.
    poll_max: usize,
    echoes_sent: u64,
    /// The atomic operands of the next iteration, and those in the buffer.
    amo_next: Option<Operands>,
    amo_loaded: Option<Operands>,
    /// Set by `finish`: the run ended well, so the endpoint may be closed.
    clean: bool,
    /// Completions seen in the whole run; the stall watch compares it.
    completions: u64,
    /// `completions` when the watch last saw it change, and since when it
    /// has not changed (u64::MAX: re-arm at the next look).
    watch_seen: u64,
    watch_since: Instant,
    last_ctl_check: Instant,
    current_size: u64,
    /// The largest payload posted with FI_INJECT (None: never).
    inject_max: Option<u64>,
    /// Per posted receive slot: the length of the latest message of this
    /// size that landed in it (0: none did), for the data check.
    slot_len: Vec<u64>,
}

/// Completions read at most per poll (the driver's table of them).
const COMPLETIONS_PER_POLL: usize = 64;

/// The largest payload this run posts with FI_INJECT. The originals use
/// IDC (the payload inside the NIC command) up to CXI's limits, and those
/// hold on cxi. On other providers a send's payload goes inline up to the
/// provider's own inject size, as fi_pingpong's does (shm: 4 KiB): what a
/// send measures is unchanged (send_lat's echo and send_bw's response
/// still confirm every message), only the copy path the provider offers
/// for small messages is used. Writes keep the originals' limits
/// everywhere; atomics are never injected.
fn inject_limit<W: DataPath + ?Sized>(cfg: &DriverConfig, ep: &W) -> Option<u64> {
    // FI_INJECT copies the payload with the CPU: never from device memory
    // (the originals turned IDC off for TX GPU buffers, originals §2.12)
    if !cfg.use_idc || ep.on_device(INITIATOR) {
        return None;
    }
    let original = match cfg.op {
        // libfabric 1.17's rxm (tcp) never completes atomics posted with
        // FI_INJECT, so atomics are never injected
        Op::Atomic(_) => return None,
        Op::Send if !Provider::named(ep.provider()).is("cxi") => u64::MAX,
        Op::Send => IDC_MAX_SEND,
        _ if cfg.unrestricted => IDC_MAX_UNRESTRICTED,
        _ => IDC_MAX_RESTRICTED,
    };
    Some(original.min(ep.inject_size()))
}

impl<'a, W: DataPath + ?Sized> FabricDriver<'a, W> {
    pub fn new(
        ep: &'a mut W,
        link: &'a mut dyn Link,
        peer: (PeerId, RemoteRegion),
        cfg: DriverConfig,
    ) -> Result<Self, DriveError> {
        let inject_max = inject_limit(&cfg, &*ep);
        let batch_left = cfg.list_size;
        let mid_batch_pause = if pauses_when_idle(ep.provider()) {
            SEND_BW_IDLE_PAUSE
        } else {
            Duration::ZERO
        };
        let mut d = FabricDriver {
            ep,
            link,
            peer: peer.0,
            peer_target: peer.1,
            cfg,
            comps: vec![Completion::default(); COMPLETIONS_PER_POLL],
            tx_posted: 0,
            tx_done: 0,
            rx_data: 0,
            rx_responses: 0,
            base_data: 0,
            batch_left,
            mid_batch_pause,
            base_responses: 0,
            iteration: 0,
            responses_owed: 0,
            recv_slot_len: 0,
            recv_gran: 1,
            recv_slots: 1,
            stashed_post_run: None,
            echoes_owed: VecDeque::new(),
            reposts: Vec::with_capacity(COMPLETIONS_PER_POLL),
            recv_prepared: Vec::new(),
            send_prepared: None,
            hold_reposts: false,
            poll_max: COMPLETIONS_PER_POLL,
            echoes_sent: 0,
            amo_next: None,
            amo_loaded: None,
            clean: false,
            completions: 0,
            watch_seen: u64::MAX,
            watch_since: Instant::now(),
            last_ctl_check: Instant::now(),
            current_size: 0,
            inject_max,
            slot_len: Vec::new(),
        };
        if d.cfg.op == Op::Send {
            d.post_initial_receives()?;
        }
        if d.cfg.echo {
            // send_lat's server: one message at a time
            d.poll_max = 1;
        }
        if let Op::Atomic(plan) = d.cfg.op {
            d.amo_next = Some(plan.scheme.first);
        }
        Ok(d)
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
        let slots = depth.min(self.recv_slots);
        self.slot_len = vec![0; slots as usize];
        self.recv_prepared = (0..slots)
            .map(|slot| {
                self.ep
                    .prepare(TARGET, slot * self.recv_gran, self.recv_slot_len, OpFlags::default())
            })
            .collect::<Result<_, _>>()?;
        for i in 0..depth {
            let slot = i % self.recv_slots;
            if self.post_recv(slot)? == Posted::Busy {
                break;
            }
        }
        Ok(())
    }

    /// Posts the receive of slot `slot` (its context).
    fn post_recv(&mut self, slot: u64) -> Result<Posted, DriveError> {
        Ok(match self.recv_prepared.get(slot as usize) {
            Some(p) => self.ep.recv_prepared(p, slot)?,
            None => self.ep.recv(TARGET, slot * self.recv_gran, self.recv_slot_len, slot)?,
        })
    }

    /// Polls the CQ once; accounts receives and sends; returns how many
    /// completions it saw. Inlined into the waits, an empty poll with
    /// nothing owed returns at once (see `Endpoint::poll`: an empty poll's
    /// cost is paid in every latency on some providers).
    #[inline]
    fn progress(&mut self) -> Result<usize, DriveError> {
        let n = self.ep.poll(&mut self.comps[..self.poll_max])?;
        self.after_poll(n)
    }

    /// `progress` past the poll that found `n` completions.
    #[inline]
    fn after_poll(&mut self, n: usize) -> Result<usize, DriveError> {
        // what `accounted` would do with no completion: send what is owed,
        // post again what completed
        if n == 0
            && self.responses_owed == 0
            && self.echoes_owed.is_empty()
            && (self.hold_reposts || self.reposts.is_empty())
        {
            return Ok(0);
        }
        self.accounted(n)
    }

    /// `progress` past the poll: the `n` completions in `comps` counted,
    /// and what they owe sent or posted.
    #[inline(never)]
    fn accounted(&mut self, n: usize) -> Result<usize, DriveError> {
        for i in 0..n {
            let c = self.comps[i];
            if c.is_recv {
                if c.len > 0 && self.cfg.echo {
                    // send_lat's server (`echo` is set for it alone) answers
                    // before it counts anything: its turnaround is inside
                    // every round trip timed
                    self.echo(c.len)?;
                }
                // Reuse the slot that just completed; the receive queue
                // therefore cannot be full. (The context is the slot it was
                // posted with; the modulo, a division, only guards it.)
                let slot = if c.context < self.recv_slots {
                    c.context
                } else {
                    c.context % self.recv_slots
                };
                if c.len == 0 {
                    self.rx_responses += 1;
                } else {
                    self.rx_data += 1;
                    // (a slot index past the table was never posted)
                    if let Some(l) = self.slot_len.get_mut(slot as usize) {
                        *l = c.len;
                    }
                    // A passive receiver answers: every message with its echo
                    // (send_lat, above), or every full batch (send_bw); active
                    // sides answer from their iteration.
                    if self.cfg.activity == Activity::Passive && !self.cfg.echo {
                        self.batch_left = self.batch_left.saturating_sub(1);
                        if self.batch_left == 0 {
                            self.responses_owed += 1;
                            self.batch_left = self.cfg.list_size;
                        }
                    }
                }
                self.reposts.push(slot);
            } else {
                self.tx_done += 1;
            }
        }
        // (no clock read here: the stall watch looks at this count now and
        // then, which keeps the hot path free of time stamps)
        self.completions += n as u64;
        if self.responses_owed > 0 {
            // the next batch finds its receives posted
            self.repost()?;
        }
        while self.responses_owed > 0 {
            if self.send_response()? == Posted::Busy {
                break;
            }
            self.responses_owed -= 1;
        }
        while let Some(&len) = self.echoes_owed.front() {
            if self.send_at(0, len, self.inject_ok(len))? == Posted::Busy {
                break;
            }
            self.echoes_sent += 1;
            self.echoes_owed.pop_front();
        }
        if !self.hold_reposts {
            self.repost()?;
        }
        Ok(n)
    }

    /// send_lat's echo of a `len`-byte message: sent now, unless earlier
    /// echoes still wait for room (then it waits behind them).
    #[inline]
    fn echo(&mut self, len: u64) -> Result<(), DriveError> {
        if self.echoes_owed.is_empty() && self.send_at(0, len, self.inject_ok(len))? == Posted::Queued {
            self.echoes_sent += 1;
        } else {
            self.echoes_owed.push_back(len);
        }
        Ok(())
    }

    /// Posts again the receive slots that completed (`reposts`).
    fn repost(&mut self) -> Result<(), DriveError> {
        for i in 0..self.reposts.len() {
            self.post_recv(self.reposts[i])?;
        }
        self.reposts.clear();
        Ok(())
    }

    /// Posts a send of `len` bytes from our initiator at `off`, injected
    /// if `inject` (the caller's `inject_ok`, computed once per size in the
    /// timed loop) and then without a completion entry, since every send of
    /// these tools is confirmed by the peer (send_bw's response ends a
    /// batch only once all of it arrived; send_lat's echo answers each
    /// message). Counts it as awaited only if it will leave a completion.
    fn send_at(&mut self, off: u64, len: u64, inject: bool) -> Result<Posted, DriveError> {
        let f = OpFlags { inject, silent: inject };
        let p = if off == 0 {
            let prepared = self.prepared_send(len, f)?;
            self.ep.send_prepared(&prepared, self.peer)?
        } else {
            self.ep.post(&Post {
                what: What::Send,
                off,
                len,
                peer: self.peer,
                flags: f,
            })?
        };
        if p == Posted::Queued && self.ep.completes(f) {
            self.tx_posted += 1;
        }
        Ok(p)
    }

    /// The send of `len` bytes from offset 0 with flags `f`, checked once
    /// for as long as the length and flags stay the same.
    fn prepared_send(&mut self, len: u64, f: OpFlags) -> Result<W::Prepared, DriveError> {
        match self.send_prepared {
            Some((l, inject, p)) if l == len && inject == f.inject => Ok(p),
            _ => {
                let p = self.ep.prepare(INITIATOR, 0, len, f)?;
                self.send_prepared = Some((len, f.inject, p));
                Ok(p)
            }
        }
    }

    /// The zero-length message that closes a send_bw batch.
    fn send_response(&mut self) -> Result<Posted, DriveError> {
        self.send_at(0, 0, self.inject_ok(0))
    }

    fn inject_ok(&self, size: u64) -> bool {
        self.inject_max.is_some_and(|m| size <= m)
    }

    fn post_batch(&mut self, size: u64) -> Result<(), DriveError> {
        if let Op::Atomic(plan) = self.cfg.op {
            self.load_operands(plan, self.cfg.list_size)?;
        }
        let registered = self.ep.region_len(INITIATOR).min(self.peer_target.len);
        let mut st = Stepper::new(size, self.cfg.align, registered, self.cfg.max_buf);
        let inject = self.inject_ok(size);
        let mut posted = 0;
        self.rearm_watch();
        while posted < self.cfg.list_size {
            let off = st.peek();
            match self.post(size, off, inject)? {
                Posted::Queued => {
                    st.next_offset();
                    posted += 1;
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

    /// Posts one operation of the run; counts it as awaited if it will
    /// leave a completion (sends may not: see `send_at`).
    fn post(&mut self, size: u64, off: u64, inject: bool) -> Result<Posted, DriveError> {
        let flags = OpFlags { inject, silent: false };
        let target = &self.peer_target;
        let what = match self.cfg.op {
            Op::Write => What::Write(target),
            Op::Read => What::Read(target),
            Op::Send => return self.send_at(off, size, inject),
            Op::Atomic(ref plan) => {
                let ops = AtomicOperands {
                    region: INITIATOR,
                    operand: off,
                    compare: off + memory::AMO_COMPARE_AT,
                    result: plan.result_base + off,
                };
                What::Atomic(&plan.spec, ops, target)
            }
        };
        let p = self.ep.post(&Post {
            what,
            off,
            len: size,
            peer: self.peer,
            flags,
        })?;
        if p == Posted::Queued {
            self.tx_posted += 1;
        }
        Ok(p)
    }

    /// Puts this iteration's operands into the first `slots` slots (unless
    /// they are there already) and steps the scheme for the next one
    /// (originals §3.4.1: once per iteration).
    fn load_operands(&mut self, plan: AtomicPlan, slots: u64) -> Result<(), DriveError> {
        let Some(o) = self.amo_next else { return Ok(()) };
        self.amo_next = Some(plan.scheme.next(o));
        if self.amo_loaded == Some(o) {
            return Ok(());
        }
        memory::write_operands(self.ep, INITIATOR, plan.scheme.ty, o, slots)?;
        self.amo_loaded = Some(o);
        Ok(())
    }

    fn start_size(&mut self, size: u64) {
        self.current_size = size;
        self.ep.expect_work(size.saturating_mul(self.cfg.list_size));
        self.echoes_sent = 0;
        self.base_data = self.rx_data;
        self.batch_left = self.cfg.list_size;
        self.base_responses = self.rx_responses;
        self.iteration = 0;
        self.slot_len.fill(0);
    }
}

impl<W: DataPath + ?Sized> Drop for FabricDriver<'_, W> {
    fn drop(&mut self) {
        if !self.clean {
            self.ep.leak_on_drop();
        }
    }
}

impl<W: DataPath + ?Sized> Drive for FabricDriver<'_, W> {
    fn settle_region(
        &mut self,
        region: RegionId,
        done: &mut dyn FnMut(&[u8]) -> bool,
        limit: Duration,
    ) -> Result<Duration, DriveError> {
        let t0 = Instant::now();
        while !memory::view(self.ep, region, |b| done(b))? && t0.elapsed() < limit {
            self.progress()?;
        }
        Ok(t0.elapsed())
    }

    fn fill(&mut self, region: RegionId, f: &mut dyn FnMut(&mut [u8])) -> Result<(), DriveError> {
        Ok(memory::fill(self.ep, region, f)?)
    }

    fn region_len(&self, region: RegionId) -> u64 {
        self.ep.region_len(region)
    }

    fn received(&self) -> Vec<(u64, u64)> {
        let at = |slot: usize| slot as u64 * self.recv_gran;
        self.slot_len
            .iter()
            .enumerate()
            .filter(|(_, &len)| len > 0)
            .map(|(slot, &len)| (at(slot), len))
            .collect()
    }

    fn link(&mut self) -> &mut dyn Link {
        &mut *self.link
    }

    fn finish(mut self: Box<Self>) {
        self.clean = true;
    }
}
