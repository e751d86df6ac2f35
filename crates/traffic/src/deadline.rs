//! Every wait on the GPU is bounded (unless `--no-timeout`): a test gets
//! the time its work should take at a floor speed far below any GPU's,
//! plus a margin for start-up, and polling stops there with an error that
//! says which wait ran out. A hung kernel or a lost device then ends the
//! test in seconds to minutes, never never.

use std::time::{Duration, Instant};
use thiserror::Error;

/// The slowest speed a test is allowed before it counts as hung.
pub const FLOOR_BYTES_PER_S: f64 = 1e9;
/// Added to every limit: context set-up, module loading, first touch.
pub const MARGIN: Duration = Duration::from_secs(30);

/// How long a test of `bytes` (tile work or host streaming), or lasting
/// `seconds` (host-only tests), may take; None with `--no-timeout`.
pub fn limit(bytes: u64, seconds: f64, enabled: bool) -> Option<Duration> {
    if !enabled {
        return None;
    }
    let work = bytes as f64 / FLOOR_BYTES_PER_S + seconds.max(0.0);
    Some(MARGIN + Duration::from_secs_f64(work.min(1e9)))
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum WaitError<E> {
    #[error("{what} did not finish within {} s (a hung kernel or a lost GPU); --no-timeout waits forever", .limit.as_secs())]
    TimedOut { what: String, limit: Duration },
    #[error(transparent)]
    Failed(E),
}

/// Polls `done` until it says true, fails, or `limit` has passed since
/// `since`, pausing `pause` between polls.
pub fn wait_for<E>(
    what: &str,
    since: Instant,
    limit: Option<Duration>,
    pause: Duration,
    mut done: impl FnMut() -> Result<bool, E>,
) -> Result<Duration, WaitError<E>> {
    loop {
        if done().map_err(WaitError::Failed)? {
            return Ok(since.elapsed());
        }
        if let Some(l) = limit {
            if since.elapsed() >= l {
                return Err(WaitError::TimedOut {
                    what: what.into(),
                    limit: l,
                });
            }
        }
        std::thread::sleep(pause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_grow_with_the_work_and_vanish_with_no_timeout() {
        assert_eq!(limit(0, 0.0, true), Some(MARGIN));
        assert_eq!(limit(10_000_000_000, 5.0, true), Some(MARGIN + Duration::from_secs(15)));
        assert_eq!(limit(u64::MAX, 0.0, false), None);
        assert!(limit(u64::MAX, f64::MAX, true).is_some(), "no overflow");
    }

    #[test]
    fn a_wait_ends_done_failed_or_timed_out() {
        let t0 = Instant::now();
        let mut n = 0;
        let r: Result<_, WaitError<String>> = wait_for("x", t0, Some(Duration::from_secs(60)), Duration::ZERO, || {
            n += 1;
            Ok(n == 3)
        });
        assert!(r.is_ok());
        assert_eq!(n, 3);
        let r = wait_for(
            "kernel",
            Instant::now(),
            Some(Duration::from_millis(20)),
            Duration::from_millis(1),
            || Ok::<bool, String>(false),
        );
        let e = r.unwrap_err();
        assert_eq!(
            e,
            WaitError::TimedOut {
                what: "kernel".into(),
                limit: Duration::from_millis(20)
            }
        );
        assert!(e.to_string().starts_with("kernel did not finish within 0 s"));
        let r = wait_for("x", Instant::now(), None, Duration::ZERO, || {
            Err::<bool, _>("device lost".to_string())
        });
        assert_eq!(r.unwrap_err(), WaitError::Failed("device lost".to_string()));
    }
}
