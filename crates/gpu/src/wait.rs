//! The one bounded wait on a GPU: every wait polls through here, so a hung
//! kernel or a lost device ends in `GpuError::TimedOut`.

use crate::error::GpuError;
use std::time::{Duration, Instant};

/// Polls `done` until it says true or fails, or until `limit` has passed
/// since `since` (None: no limit), pausing `pause` between polls: every
/// wait on a GPU goes through here, so a hung kernel or a lost device ends
/// in `GpuError::TimedOut` naming `what`.
pub fn poll_until<E: From<GpuError>>(
    what: &str,
    since: Instant,
    limit: Option<Duration>,
    pause: Duration,
    mut done: impl FnMut() -> Result<bool, E>,
) -> Result<Duration, E> {
    loop {
        if done()? {
            return Ok(since.elapsed());
        }
        if let Some(l) = limit {
            if since.elapsed() >= l {
                return Err(GpuError::TimedOut {
                    what: what.into(),
                    secs: l.as_secs(),
                }
                .into());
            }
        }
        std::thread::sleep(pause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_done_failed_or_timed_out() {
        let t0 = Instant::now();
        let mut n = 0;
        let r: Result<_, GpuError> = poll_until("x", t0, Some(Duration::from_secs(60)), Duration::ZERO, || {
            n += 1;
            Ok(n == 3)
        });
        assert!(r.is_ok());
        assert_eq!(n, 3);
        let r = poll_until::<GpuError>(
            "kernel",
            Instant::now(),
            Some(Duration::from_millis(20)),
            Duration::from_millis(1),
            || Ok(false),
        );
        let e = r.unwrap_err();
        assert_eq!(
            e,
            GpuError::TimedOut {
                what: "kernel".into(),
                secs: 0
            }
        );
        assert!(e.to_string().starts_with("kernel did not finish within 0 s"));
        let lost = || GpuError::Bounds("device lost".into());
        let r = poll_until("x", Instant::now(), None, Duration::ZERO, || Err::<bool, _>(lost()));
        assert_eq!(r.unwrap_err(), lost());
    }
}
