//! How another thread tells that a provider's data call has not returned.
//! Some providers wait inside the call rather than answer EAGAIN: psm3
//! polls inside fi_writemsg (psm3_am_request_short) for a peer that is
//! gone, for good, so the caller's own time limits never run. Each endpoint counts its
//! entries into and returns from its data calls (an odd count: inside
//! one), and a `CallWatcher` polled from another thread names a call whose
//! count stood still for too long.
//!
//! A working provider may also hold a call for long: shm (1.17) takes its
//! peer's lock to post, and the peer's progress holds that lock while it
//! copies every queued operation in full, so with a window of large
//! writes queued a post waits for all of them. So each endpoint also says
//! how many bytes its current batch may have in flight (`expect_work`),
//! and a call is named with that figure, for the caller to judge by.
//!
//! Only counts and compares: deciding what to say, printing and exiting
//! are the caller's. The count costs the posting thread two plain stores
//! a call (it is the only writer of its endpoint's count).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// The data calls an endpoint makes, as named in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum DataCall {
    Write,
    Read,
    Send,
    Inject,
    Recv,
    Atomic,
    CqRead,
}

impl DataCall {
    const ALL: [DataCall; 7] = [
        DataCall::Write,
        DataCall::Read,
        DataCall::Send,
        DataCall::Inject,
        DataCall::Recv,
        DataCall::Atomic,
        DataCall::CqRead,
    ];

    fn name(self) -> &'static str {
        match self {
            DataCall::Write => "fi_writemsg",
            DataCall::Read => "fi_readmsg",
            DataCall::Send => "fi_sendmsg",
            DataCall::Inject => "fi_inject",
            DataCall::Recv => "fi_recv",
            DataCall::Atomic => "fi_atomicmsg",
            DataCall::CqRead => "fi_cq_read",
        }
    }
}

/// One endpoint's count of entries into and returns from its data calls.
pub(crate) struct CallCount {
    count: AtomicU64,
    call: AtomicU8,
    /// Bytes the current batch may have in flight (0: not said).
    work: AtomicU64,
    provider: String,
    /// Test hook: the call whose entry makes the count this (odd) value
    /// never returns; u64::MAX (even): none. Set before the count is
    /// shared, so the posting path compares it with the count it already
    /// holds (one instruction, not another atomic load).
    stall_inside: u64,
    /// Test hook: how long that call stays inside (None: for good).
    stall_for: Option<Duration>,
}

impl CallCount {
    pub(crate) fn new(provider: &str) -> Arc<CallCount> {
        Arc::new(CallCount {
            count: AtomicU64::new(0),
            call: AtomicU8::new(0),
            work: AtomicU64::new(0),
            provider: provider.to_string(),
            stall_inside: u64::MAX,
            stall_for: None,
        })
    }

    /// Test hook: the `nth` data call from now on (1: the next) stays
    /// inside for `hold`, or for good (None) as psm3's fi_writemsg does
    /// when its peer is gone.
    pub(crate) fn stall_after(&mut self, nth: u64, hold: Option<Duration>) {
        let now = *self.count.get_mut();
        self.stall_inside = now + 2 * (nth.max(1) - 1) + 1;
        self.stall_for = hold;
    }

    /// The bytes the batch now starting may have in flight at once.
    pub(crate) fn expect_work(&self, bytes: u64) {
        self.work.store(bytes, Ordering::Relaxed);
    }

    /// `f`, the provider call `call`, counted on the way in and out.
    #[inline]
    pub(crate) fn around<R>(&self, call: DataCall, f: impl FnOnce() -> R) -> R {
        if self.enter(call) == self.stall_inside {
            stall(self.stall_for);
        }
        let r = f();
        self.leave();
        r
    }

    /// Counts the way in; returns the count inside the call.
    #[inline]
    fn enter(&self, call: DataCall) -> u64 {
        self.call.store(call as u8, Ordering::Relaxed);
        self.bump()
    }

    #[inline]
    fn leave(&self) {
        self.bump();
    }

    #[inline]
    fn bump(&self) -> u64 {
        // one writer (the thread that owns the endpoint): no read-modify-
        // write instruction needed; Release orders the call's name first
        let n = self.count.load(Ordering::Relaxed).wrapping_add(1);
        self.count.store(n, Ordering::Release);
        n
    }

    /// The call in progress, if any, with the count that identifies it.
    fn inside(&self) -> Option<(u64, &'static str)> {
        let n = self.count.load(Ordering::Acquire);
        let call = DataCall::ALL.get(usize::from(self.call.load(Ordering::Relaxed)))?;
        (n % 2 == 1).then_some((n, call.name()))
    }
}

/// The stall test hook's call, out of line: the posting path only
/// compares the count it holds with `stall_inside`.
#[cold]
#[inline(never)]
fn stall(hold: Option<Duration>) {
    match hold {
        Some(d) => std::thread::sleep(d),
        None => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
    }
}

/// A data call that has not returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckCall {
    pub provider: String,
    pub call: &'static str,
    /// How long it has been inside, as seen by the watcher's polls.
    pub for_at_least: Duration,
    /// The bytes its endpoint's batch may have in flight (0: not said):
    /// what a working provider may be moving while it holds the call.
    pub work_bytes: u64,
}

impl std::fmt::Display for StuckCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "provider '{}' has not returned from {} for {} s",
            self.provider,
            self.call,
            self.for_at_least.as_secs()
        )
    }
}

/// Watches the data calls of every endpoint added to it. Clones share
/// what they watch: the session adds endpoints as it opens them, and a
/// thread of the caller's polls `stuck`.
#[derive(Clone, Default)]
pub struct CallWatcher(Arc<Mutex<Vec<Watched>>>);

struct Watched {
    count: Weak<CallCount>,
    /// The count last seen inside a call, and since when.
    seen: Option<(u64, Instant)>,
}

impl CallWatcher {
    pub(crate) fn add(&self, count: &Arc<CallCount>) {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // endpoints closed since no longer count
        w.retain(|x| x.count.strong_count() > 0);
        w.push(Watched {
            count: Arc::downgrade(count),
            seen: None,
        });
    }

    /// A call that has stayed inside the provider for `limit` or more
    /// since an earlier poll first saw it there. Poll it more often than
    /// `limit`: a call is timed from the first poll that sees it.
    pub fn stuck(&self, limit: Duration) -> Option<StuckCall> {
        self.stuck_at(limit, Instant::now())
    }

    fn stuck_at(&self, limit: Duration, now: Instant) -> Option<StuckCall> {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found = None;
        for x in w.iter_mut() {
            let Some(count) = x.count.upgrade() else {
                x.seen = None;
                continue;
            };
            match count.inside() {
                None => x.seen = None,
                Some((n, call)) => {
                    let since = match x.seen {
                        Some((m, t)) if m == n => t,
                        _ => {
                            x.seen = Some((n, now));
                            now
                        }
                    };
                    let inside = now.saturating_duration_since(since);
                    if inside >= limit && found.is_none() {
                        found = Some(StuckCall {
                            provider: count.provider.clone(),
                            call,
                            for_at_least: inside,
                            work_bytes: count.work.load(Ordering::Relaxed),
                        });
                    }
                }
            }
        }
        found
    }
}

/// Clones watch the same endpoints: equal.
impl PartialEq for CallWatcher {
    fn eq(&self, other: &CallWatcher) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CallWatcher {}

impl std::fmt::Debug for CallWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallWatcher")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watcher of one endpoint's count, of provider `provider`.
    fn watching(provider: &str) -> (CallWatcher, Arc<CallCount>) {
        let w = CallWatcher::default();
        let c = CallCount::new(provider);
        w.add(&c);
        (w, c)
    }

    #[test]
    fn a_call_that_stays_inside_is_named_once_it_passes_the_limit() {
        let (w, c) = watching("psm3");
        let t0 = Instant::now();
        let limit = Duration::from_secs(10);
        assert_eq!(w.stuck_at(limit, t0), None, "not inside any call");
        c.enter(DataCall::Write);
        assert_eq!(w.stuck_at(limit, t0), None, "first seen now");
        assert_eq!(w.stuck_at(limit, t0 + Duration::from_secs(9)), None);
        let s = w.stuck_at(limit, t0 + Duration::from_secs(10)).expect("stuck");
        assert_eq!((s.provider.as_str(), s.call), ("psm3", "fi_writemsg"));
        assert_eq!(s.for_at_least, limit);
    }

    #[test]
    fn calls_that_return_never_add_up_however_long_the_run() {
        let (w, c) = watching("tcp");
        let t0 = Instant::now();
        for s in 0..100 {
            // a new call each poll, always inside one when polled
            c.enter(DataCall::CqRead);
            assert_eq!(w.stuck_at(Duration::from_secs(10), t0 + Duration::from_secs(s)), None);
            c.leave();
        }
        // and a long wait outside any call is not a stuck call
        assert_eq!(
            w.stuck_at(Duration::from_secs(10), t0 + Duration::from_secs(1000)),
            None
        );
    }

    #[test]
    fn a_held_call_carries_the_work_its_batch_may_have_in_flight() {
        let (w, c) = watching("shm");
        c.expect_work(256 << 30);
        c.enter(DataCall::Write);
        let t0 = Instant::now();
        assert_eq!(w.stuck_at(Duration::from_secs(1), t0), None);
        let s = w
            .stuck_at(Duration::from_secs(1), t0 + Duration::from_secs(2))
            .expect("held");
        assert_eq!((s.call, s.work_bytes), ("fi_writemsg", 256 << 30));
        // the next batch says its own
        c.leave();
        c.expect_work(4096);
        c.enter(DataCall::CqRead);
        w.stuck_at(Duration::from_secs(1), t0);
        let s = w
            .stuck_at(Duration::from_secs(1), t0 + Duration::from_secs(2))
            .expect("held");
        assert_eq!((s.call, s.work_bytes), ("fi_cq_read", 4096));
    }

    #[test]
    fn the_hook_holds_its_call_for_a_while_or_for_good() {
        let mut c = CallCount::new("tcp");
        Arc::get_mut(&mut c)
            .expect("not shared yet")
            .stall_after(2, Some(Duration::from_millis(300)));
        let t0 = Instant::now();
        c.around(DataCall::Send, || ());
        assert!(t0.elapsed() < Duration::from_millis(200), "the first call is not held");
        c.around(DataCall::Send, || ());
        assert!(
            t0.elapsed() >= Duration::from_millis(300),
            "the second is held, then returns"
        );
        c.around(DataCall::Send, || ());
        assert!(t0.elapsed() < Duration::from_millis(600), "the third is not held");
    }

    #[test]
    fn a_closed_endpoint_is_no_longer_watched() {
        let (w, c) = watching("psm3");
        c.enter(DataCall::Send);
        let t0 = Instant::now();
        assert_eq!(w.stuck_at(Duration::from_secs(1), t0), None);
        drop(c);
        assert_eq!(w.stuck_at(Duration::from_secs(1), t0 + Duration::from_secs(5)), None);
    }

    #[test]
    fn clones_watch_the_same_endpoints() {
        let w = CallWatcher::default();
        let other = w.clone();
        assert_eq!(w, other);
        assert_ne!(w, CallWatcher::default());
        let c = CallCount::new("psm3");
        other.add(&c);
        c.enter(DataCall::Recv);
        let t0 = Instant::now();
        w.stuck_at(Duration::from_secs(1), t0);
        assert_eq!(
            w.stuck_at(Duration::from_secs(1), t0 + Duration::from_secs(2))
                .map(|s| s.call),
            Some("fi_recv")
        );
    }
}
