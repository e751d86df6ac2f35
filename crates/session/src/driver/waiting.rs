//! How a waiting driver notices that it waits in vain: the control
//! connection is checked every 100 ms (the peer failed, closed or fell
//! silent), and a fabric that completes nothing for too long is a stall;
//! and where a latency sample ends (`wait_marked`).
//! When the fabric itself fails, the control connection's account (a peer
//! that died) is preferred, since it is the likelier story. The watch's
//! clock is read only here, and only every `IDLE_POLLS` empty polls, so
//! waiting for the next completion costs a CQ poll and nothing else.

use super::{DataPath, DriveError, FabricDriver};
use fabdiag_proto::Phase;
use std::time::{Duration, Instant};

/// Empty polls between two looks at the clock and the control connection.
const IDLE_POLLS: u32 = 64;

/// Time without any completion after which the peer counts as gone, for
/// a batch of `batch_bytes`: 5 s plus the time the batch would take at
/// the floor rate (100 MB/s).
pub fn stall_limit(batch_bytes: u64) -> Duration {
    Duration::from_secs(5) + fabdiag_model::at_floor(batch_bytes)
}

impl<W: DataPath + ?Sized> FabricDriver<'_, W> {
    /// The stall clock starts again at the next look (a new wait begins).
    pub(super) fn rearm_watch(&mut self) {
        self.watch_seen = u64::MAX;
    }
    fn stall_limit(&self) -> Duration {
        stall_limit(self.current_size.saturating_mul(self.cfg.list_size))
    }

    /// Called while waiting on the fabric with nothing completed.
    pub(super) fn watch(&mut self) -> Result<(), DriveError> {
        let now = Instant::now();
        if self.completions != self.watch_seen {
            self.watch_seen = self.completions;
            self.watch_since = now;
        }
        if now.duration_since(self.last_ctl_check) >= Duration::from_millis(100) {
            self.last_ctl_check = now;
            self.link.check_alive(Phase::Run)?;
        }
        if now.duration_since(self.watch_since) > self.stall_limit() {
            return Err(DriveError::Stalled {
                phase: Phase::Run,
                size: self.current_size,
                secs: self.stall_limit().as_secs(),
            });
        }
        Ok(())
    }

    /// Progresses until `done` holds, watching for a dead peer.
    pub(super) fn wait_until(&mut self, done: impl Fn(&Self) -> bool) -> Result<(), DriveError> {
        self.wait_marked(done, |_| 0).map(drop)
    }

    /// `wait_until`, returning `mark` taken right after the poll that made
    /// `done` hold and before what it found is accounted (a latency
    /// sample's end: the moment the completion was dequeued, originals
    /// §4, with none of fabdiag's bookkeeping inside the sample); taken
    /// at once if `done` holds already.
    #[inline]
    pub(super) fn wait_marked(
        &mut self,
        done: impl Fn(&Self) -> bool,
        mark: impl Fn(&Self) -> u64,
    ) -> Result<u64, DriveError> {
        if done(self) {
            return Ok(mark(self));
        }
        self.rearm_watch();
        let mut idle = 0u32;
        loop {
            let n = self.ep.poll(&mut self.comps[..self.poll_max])?;
            if n == 0 {
                self.after_poll(0)?;
                idle += 1;
                if idle.is_multiple_of(IDLE_POLLS) {
                    self.watch()?;
                }
                continue;
            }
            let m = mark(self);
            self.after_poll(n)?;
            if done(self) {
                return Ok(m);
            }
        }
    }

    /// A fabric error is re-told as the peer's failure when the control
    /// connection reports one within 300 ms.
    pub(super) fn explain(&mut self, e: DriveError) -> DriveError {
        if let DriveError::Fabric(_) = e {
            let deadline = Instant::now() + Duration::from_millis(300);
            while Instant::now() < deadline {
                if let Err(pe) = self.link.check_alive(Phase::Run) {
                    return DriveError::Proto(pe);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        e
    }
}
