//! Every wait on the GPU is bounded (unless `--no-timeout`): a test gets
//! the time its work should take at a floor speed far below any GPU's,
//! plus a margin for start-up; `fabdiag_gpu::poll_until` stops there with
//! an error that says which wait ran out. A hung kernel or a lost device
//! then ends the test in seconds to minutes, never never.

use std::time::Duration;

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
}
