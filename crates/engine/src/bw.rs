//! The bandwidth method of the originals (originals §2.9), made transport-neutral.
//!
//! Per size: a pre-run barrier, then the timed loop (an iteration queues
//! `list_size` operations and waits for all of them), then a post-run
//! barrier, then each side's count and time are exchanged and summed.
//! Time is read from the monotonic clock in nanoseconds (the originals used
//! gettimeofday in µs); the elapsed time includes the post-run barrier, as
//! in the originals, so bidirectional figures err low rather than high.

use serde::Serialize;
use std::time::{Duration, Instant};

/// The originals' packet size for the packet-rate column (Portals MTU).
pub const PACKET_BYTES: u64 = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Iterations(u64),
    /// Seconds, in 64 bits: the originals' 32-bit product wrapped past 4294 s.
    Duration(u64),
}

/// How this side takes part in one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Runs its own timed loop (client; both sides when bidirectional).
    Active,
    /// Only serves the peer's operations until the post-run barrier.
    Passive,
    /// Runs iterations paced by the peer until the peer reaches post-run
    /// (two-sided bidirectional server: both must do the same iterations).
    Follower,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPoint {
    PreRun,
    PostRun,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One iteration finished.
    Done,
    /// Progress was made but the iteration is not finished; call again.
    Again,
    /// (Follower only) the peer has reached the post-run barrier.
    PeerFinished,
}

/// What a transport must provide. The driver decides how to wait; while it
/// waits in a barrier it must keep the fabric progressing, since the peer's
/// operations may depend on it.
pub trait BwDriver {
    type Error;
    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), Self::Error>;
    fn iteration(&mut self, size: u64) -> Result<Step, Self::Error>;
    /// Sends our measurement and returns the peer's.
    fn exchange(&mut self, size: u64, mine: Measure) -> Result<Measure, Self::Error>;
}

/// One side's own figures for one size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Measure {
    pub elapsed_ns: u64,
    /// Operations this side initiated.
    pub ops: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SizeResult {
    pub size: u64,
    pub iterations: u64,
    pub own: Measure,
    pub peer: Measure,
    /// Whether this side initiated operations (false: the table shows `-`).
    pub initiated: bool,
    /// Both directions summed when bidirectional; MB = 10^6 bytes.
    pub bw_mb_s: f64,
    pub pkt_rate_mpkt_s: f64,
}

/// ceil(size / 2048), as the originals count packets.
pub fn packets_per_op(size: u64) -> u64 {
    size.saturating_sub(1) / PACKET_BYTES + 1
}

fn contribution(size: u64, m: Measure) -> (f64, f64) {
    if m.elapsed_ns == 0 || m.ops == 0 {
        return (0.0, 0.0);
    }
    let us = m.elapsed_ns as f64 / 1000.0;
    let bw = size as f64 * m.ops as f64 / us;
    let rate = m.ops as f64 * packets_per_op(size) as f64 / us;
    (bw, rate)
}

/// Runs one size on this side and returns the combined result.
pub fn run_size<D: BwDriver + ?Sized>(
    d: &mut D,
    activity: Activity,
    mode: Mode,
    size: u64,
    list_size: u64,
) -> Result<SizeResult, D::Error> {
    d.barrier(SyncPoint::PreRun, size)?;
    let start = Instant::now();
    let mut iterations = 0u64;
    match activity {
        Activity::Passive => {}
        Activity::Active => {
            let limit = match mode {
                Mode::Duration(s) => Some(Duration::from_secs(s)),
                Mode::Iterations(_) => None,
            };
            loop {
                match (mode, limit) {
                    (Mode::Iterations(n), _) if iterations >= n => break,
                    (_, Some(l)) if start.elapsed() >= l => break,
                    _ => {}
                }
                match d.iteration(size)? {
                    Step::Done => iterations += 1,
                    Step::Again | Step::PeerFinished => {}
                }
            }
        }
        Activity::Follower => loop {
            match d.iteration(size)? {
                Step::Done => iterations += 1,
                Step::Again => {}
                Step::PeerFinished => break,
            }
        },
    }
    d.barrier(SyncPoint::PostRun, size)?;
    let elapsed_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let initiated = activity != Activity::Passive;
    let own = if initiated {
        Measure {
            elapsed_ns,
            ops: iterations.saturating_mul(list_size),
        }
    } else {
        Measure::default()
    };
    let peer = d.exchange(size, own)?;
    let (b1, r1) = contribution(size, own);
    let (b2, r2) = contribution(size, peer);
    Ok(SizeResult {
        size,
        iterations,
        own,
        peer,
        initiated,
        bw_mb_s: b1 + b2,
        pkt_rate_mpkt_s: r1 + r2,
    })
}

/// MIN, 2·MIN, 4·MIN, … ≤ MAX (a single size when MIN == MAX).
pub fn sizes(min: u64, max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = min.max(1);
    while s <= max {
        v.push(s);
        match s.checked_mul(2) {
            Some(n) => s = n,
            None => break,
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        steps: Vec<Step>,
        peer: Measure,
        barriers: Vec<(SyncPoint, u64)>,
    }

    impl BwDriver for Fake {
        type Error = String;
        fn barrier(&mut self, p: SyncPoint, size: u64) -> Result<(), String> {
            self.barriers.push((p, size));
            Ok(())
        }
        fn iteration(&mut self, _: u64) -> Result<Step, String> {
            if self.steps.is_empty() {
                return Err("too many iterations".into());
            }
            Ok(self.steps.remove(0))
        }
        fn exchange(&mut self, _: u64, _: Measure) -> Result<Measure, String> {
            Ok(self.peer)
        }
    }

    #[test]
    fn counts_only_done_iterations() {
        let mut f = Fake {
            steps: vec![Step::Done, Step::Again, Step::Done, Step::Done],
            peer: Measure::default(),
            barriers: vec![],
        };
        let r = run_size(&mut f, Activity::Active, Mode::Iterations(3), 4096, 256).unwrap();
        assert_eq!(r.iterations, 3);
        assert_eq!(r.own.ops, 768);
        assert!(r.initiated && r.bw_mb_s > 0.0);
        assert_eq!(f.barriers, vec![(SyncPoint::PreRun, 4096), (SyncPoint::PostRun, 4096)]);
    }

    #[test]
    fn passive_side_reports_the_peer() {
        let peer = Measure {
            elapsed_ns: 757_600_000,
            ops: 256_000,
        };
        let mut f = Fake {
            steps: vec![],
            peer,
            barriers: vec![],
        };
        let r = run_size(&mut f, Activity::Passive, Mode::Iterations(1000), 65536, 256).unwrap();
        assert!(!r.initiated);
        assert_eq!(r.own.ops, 0);
        // the originals' worked check (originals §4): 256000 × 65536 B in 0.7576 s
        assert_eq!(format!("{:.2}", r.bw_mb_s), "22145.22");
        assert_eq!(format!("{:.6}", r.pkt_rate_mpkt_s), "10.813094");
    }

    #[test]
    fn follower_stops_when_peer_finishes() {
        let mut f = Fake {
            steps: vec![Step::Done, Step::Done, Step::PeerFinished],
            peer: Measure::default(),
            barriers: vec![],
        };
        let r = run_size(&mut f, Activity::Follower, Mode::Duration(1), 8, 2).unwrap();
        assert_eq!(r.iterations, 2);
        assert_eq!(r.own.ops, 4);
    }

    #[test]
    fn size_ranges_and_packets() {
        assert_eq!(sizes(1024, 65536), vec![1024, 2048, 4096, 8192, 16384, 32768, 65536]);
        assert_eq!(sizes(100, 100), vec![100]);
        assert_eq!(sizes(1 << 31, u32::MAX as u64), vec![1 << 31]);
        assert_eq!(packets_per_op(1), 1);
        assert_eq!(packets_per_op(2048), 1);
        assert_eq!(packets_per_op(2049), 2);
        assert_eq!(packets_per_op(65536), 32);
    }
}
