//! The peer-sync half of a driver: per-size barriers and the exchange of
//! each side's figures, over a `Link`. While a side waits for its peer it
//! keeps its own fabric progressing (the peer's operations into our memory
//! may need it). Written once for every driver through `SyncHost`, which
//! the fabric driver and the tests' fake drivers implement.

use super::{DataPath, DriveError, FabricDriver};
use fabdiag_engine::lat::wait_gap;
use fabdiag_engine::{Activity, Measure, SyncPoint};
use fabdiag_proto::Link;
use fabdiag_proto::{Message, Phase, ProtoError};
use std::time::Duration;

/// What the peer-sync code needs from a driver.
pub(crate) trait SyncHost {
    fn link(&mut self) -> &mut dyn Link;
    /// One round of this side's own progress.
    fn progress(&mut self) -> Result<usize, DriveError>;
    /// Reset the per-size counters (before anything of `size` can arrive).
    fn start_size(&mut self, size: u64);
    fn activity(&self) -> Activity;
    /// A post-run barrier that arrived early (a follower sees it while
    /// waiting for the leader's next batch).
    fn take_stashed_post_run(&mut self) -> Option<Message>;
    /// How long to wait after an empty progress round now (zero: poll
    /// again at once).
    fn idle_pause(&self) -> Duration {
        Duration::ZERO
    }
    /// Waits for the device work this side queued (`DataPath::settle`).
    fn settle(&mut self) -> Result<(), DriveError> {
        Ok(())
    }
}

/// Both sides reach `point` for `size`: the client sends first, the server
/// answers once its counters are reset, so nothing of this size can arrive
/// before it is ready. At the post-run barrier each side first waits for
/// the device work it queued: a provider may complete an operation on GPU
/// memory once its copy is queued, not done (shm's CUDA IPC copies), and
/// the client's clock, which stops when the server answers, must include
/// the copies either side still had queued.
pub(crate) fn barrier(h: &mut (impl SyncHost + ?Sized), point: SyncPoint, size: u64) -> Result<(), DriveError> {
    let phase = match point {
        SyncPoint::PreRun => Phase::PreRun,
        SyncPoint::PostRun => Phase::PostRun,
    };
    let ours = Message::Barrier {
        phase,
        size: Some(size),
    };
    let leads = h.link().leads();
    if leads {
        ready(h, point, size)?;
        h.link().send(phase, &ours)?;
    }
    match wait(h, phase)? {
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
    if !leads {
        ready(h, point, size)?;
        h.link().send(phase, &ours)?;
    }
    Ok(())
}

/// What this side does before it says it has reached `point`: reset its
/// counters before a size, wait for its device's queued work after one.
fn ready(h: &mut (impl SyncHost + ?Sized), point: SyncPoint, size: u64) -> Result<(), DriveError> {
    match point {
        SyncPoint::PreRun => {
            h.start_size(size);
            Ok(())
        }
        SyncPoint::PostRun => h.settle(),
    }
}

/// Waits for the peer's message in `phase` while progressing the fabric.
fn wait(h: &mut (impl SyncHost + ?Sized), phase: Phase) -> Result<Message, DriveError> {
    if phase == Phase::PostRun {
        if let Some(m) = h.take_stashed_post_run() {
            return Ok(m);
        }
    }
    // A passive side waits in the post-run barrier for the whole run; a peer
    // lost meanwhile was lost "during run".
    let label = if phase == Phase::PostRun && h.activity() == Activity::Passive {
        Phase::Run
    } else {
        phase
    };
    // the control connection is looked at every few rounds: a look costs
    // more than a CQ poll, and a side that echoes must answer fast
    let mut round = 0u32;
    loop {
        if h.progress()? == 0 {
            // a busy wait: a sleep would take tens of µs to come back
            // (the poll has just yielded, where this side yields)
            wait_gap(h.idle_pause(), false);
        }
        round = round.wrapping_add(1);
        if round.is_multiple_of(LINK_ROUNDS) {
            if let Some(m) = h.link().poll(label)? {
                return Ok(m);
            }
        }
    }
}

/// Progress rounds between two looks at the control connection while a
/// side waits for its peer.
const LINK_ROUNDS: u32 = 16;

/// Trades this side's figures for one size for the peer's.
pub(crate) fn exchange(h: &mut (impl SyncHost + ?Sized), size: u64, mine: Measure) -> Result<Measure, DriveError> {
    let msg = Message::Results {
        size,
        elapsed_ns: mine.elapsed_ns,
        ops: mine.ops,
    };
    match h.link().exchange(Phase::Results, &msg)? {
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

impl<W: DataPath + ?Sized> SyncHost for FabricDriver<'_, W> {
    fn link(&mut self) -> &mut dyn Link {
        &mut *self.link
    }
    // (inlined into the waits: a passive side's empty poll makes no call
    // of fabdiag's own, see `FabricDriver::progress`)
    #[inline]
    fn progress(&mut self) -> Result<usize, DriveError> {
        FabricDriver::progress(self)
    }
    fn start_size(&mut self, size: u64) {
        FabricDriver::start_size(self, size)
    }
    fn activity(&self) -> Activity {
        self.cfg.activity
    }
    fn take_stashed_post_run(&mut self) -> Option<Message> {
        self.stashed_post_run.take()
    }
    fn settle(&mut self) -> Result<(), DriveError> {
        Ok(self.ep.settle()?)
    }
    fn idle_pause(&self) -> Duration {
        // Only send_bw's receiver counts a batch down (every other driver
        // keeps batch_left at list_size), so this is its middle of a batch:
        // the first message in, two or more still to come.
        if 1 < self.batch_left && self.batch_left < self.cfg.list_size {
            self.mid_batch_pause
        } else {
            Duration::ZERO
        }
    }
}
