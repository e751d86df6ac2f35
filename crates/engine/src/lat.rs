//! The latency method of the originals (originals §2.10), transport-neutral.
//!
//! Per size: a pre-run barrier; `warmup` unmeasured iterations, then
//! iterations (or a duration counted from the first measured one), each
//! followed by the inter-iteration gap; a post-run barrier; the two sides'
//! operation counts are exchanged so a de-synchronised peer is caught.
//! Statistics follow the originals' integer arithmetic (mean = sum / n,
//! population stddev = floor(sqrt(floor(Σx²/n) − mean²))), with 128-bit
//! sums. Percentiles and a histogram are fabdiag's additions.

use crate::bw::{Activity, Mode, SyncPoint};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub trait LatDriver {
    type Error;
    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), Self::Error>;
    /// One operation; its latency in nanoseconds (halved for round trips).
    fn measure(&mut self, size: u64) -> Result<u64, Self::Error>;
    /// Sends how many operations this side ran (warmups included) and
    /// returns the peer's count.
    fn exchange(&mut self, size: u64, ops: u64) -> Result<u64, Self::Error>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatConfig {
    pub mode: Mode,
    pub warmup: u64,
    pub gap: Duration,
    /// Keep every sample for `--report-all`.
    pub keep_all: bool,
    /// Wait out the gap giving the CPU away (`wait_gap`'s `yielding`).
    pub yield_in_gap: bool,
}

/// Samples kept for exact percentiles; beyond this a uniform reservoir of
/// this size stands in (64 MiB of samples).
pub const EXACT_LIMIT: usize = 8 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// Samples in [previous bucket's upper, upper_ns).
    pub upper_ns: u64,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatStats {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: u64,
    pub stddev_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// False when the run outgrew `EXACT_LIMIT` samples and percentiles
    /// come from a uniform reservoir sample.
    pub percentiles_exact: bool,
    /// Power-of-two buckets, empty ones left out.
    pub histogram: Vec<Bucket>,
}

/// One figure of a size's latency statistics: what a latency sweep judges
/// each pair by (`fabdiag sweep --figure`). The mean is the originals'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatFigure {
    #[default]
    Mean,
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl LatFigure {
    pub const ALL: [LatFigure; 6] = [
        LatFigure::Mean,
        LatFigure::P50,
        LatFigure::P90,
        LatFigure::P99,
        LatFigure::P999,
        LatFigure::Max,
    ];

    /// As written on the command line and in the JSON ("p99").
    pub fn name(self) -> &'static str {
        match self {
            LatFigure::Mean => "mean",
            LatFigure::P50 => "p50",
            LatFigure::P90 => "p90",
            LatFigure::P99 => "p99",
            LatFigure::P999 => "p999",
            LatFigure::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<LatFigure> {
        LatFigure::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Every name, for messages: "mean, p50, p90, p99, p999 or max".
    pub fn names() -> String {
        let names: Vec<&str> = LatFigure::ALL.iter().map(|f| f.name()).collect();
        let (last, rest) = names.split_last().map_or(("", &[][..]), |(l, r)| (*l, r));
        format!("{} or {last}", rest.join(", "))
    }
}

impl LatStats {
    /// The figure `f` of these statistics, in ns.
    pub fn figure_ns(&self, f: LatFigure) -> u64 {
        match f {
            LatFigure::Mean => self.mean_ns,
            LatFigure::P50 => self.p50_ns,
            LatFigure::P90 => self.p90_ns,
            LatFigure::P99 => self.p99_ns,
            LatFigure::P999 => self.p999_ns,
            LatFigure::Max => self.max_ns,
        }
    }
}

/// Accumulates samples.
#[derive(Clone, Debug)]
pub struct Recorder {
    count: u64,
    sum: u128,
    sumsq: u128,
    min: u64,
    max: u64,
    reservoir: Vec<u64>,
    all: Option<Vec<u64>>,
    log2: [u64; 65],
    rng: u64,
}

impl Recorder {
    pub fn new(keep_all: bool) -> Self {
        Recorder {
            count: 0,
            sum: 0,
            sumsq: 0,
            min: u64::MAX,
            max: 0,
            reservoir: Vec::new(),
            all: keep_all.then(Vec::new),
            log2: [0; 65],
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.sum += ns as u128;
        self.sumsq += (ns as u128) * (ns as u128);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.log2[(64 - ns.leading_zeros()) as usize] += 1;
        if let Some(a) = &mut self.all {
            a.push(ns);
        }
        if self.reservoir.len() < EXACT_LIMIT {
            self.reservoir.push(ns);
        } else {
            // Algorithm R: keep each of the n samples with probability k/n
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let j = self.rng % self.count;
            if (j as usize) < EXACT_LIMIT {
                self.reservoir[j as usize] = ns;
            }
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn samples(&self) -> Option<&[u64]> {
        self.all.as_deref()
    }

    pub fn stats(&self) -> LatStats {
        if self.count == 0 {
            return LatStats {
                count: 0,
                min_ns: 0,
                max_ns: 0,
                mean_ns: 0,
                stddev_ns: 0,
                p50_ns: 0,
                p90_ns: 0,
                p99_ns: 0,
                p999_ns: 0,
                percentiles_exact: true,
                histogram: Vec::new(),
            };
        }
        let n = self.count as u128;
        let mean = self.sum / n;
        let var = (self.sumsq / n).saturating_sub(mean * mean);
        let stddev = (var as f64).sqrt().floor() as u64;
        let mut sorted = self.reservoir.clone();
        sorted.sort_unstable();
        // nearest rank, in integers: rank = ceil(permille × n / 1000)
        let pct = |permille: usize| -> u64 {
            let rank = (permille * sorted.len()).div_ceil(1000).max(1);
            sorted[rank.min(sorted.len()) - 1]
        };
        let histogram = self
            .log2
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| Bucket {
                upper_ns: if i >= 64 { u64::MAX } else { 1u64 << i },
                count: *c,
            })
            .collect();
        LatStats {
            count: self.count,
            min_ns: self.min,
            max_ns: self.max,
            mean_ns: mean as u64,
            stddev_ns: stddev,
            p50_ns: pct(500),
            p90_ns: pct(900),
            p99_ns: pct(990),
            p999_ns: pct(999),
            percentiles_exact: self.count as usize == sorted.len(),
            histogram,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatResult {
    pub size: u64,
    /// Measured iterations (warmups excluded).
    pub iterations: u64,
    pub warmup: u64,
    /// Operations the peer counted (warmups included); 0 if it cannot see them.
    pub peer_ops: u64,
    pub stats: LatStats,
    /// Every measurement, for --report-all.
    pub samples: Option<Vec<u64>>,
}

/// Waits `gap` for real, spinning for anything under 2 ms (also the pause
/// of send_bw's receiver); `yielding` (a side polling with `--poll
/// yield`), giving the CPU to any other thread ready to run each time
/// round instead, as its empty polls do. (The originals' busy-wait summed
/// cumulative elapsed times and waited far less than asked, originals
/// §6.1.)
#[inline]
pub fn wait_gap(gap: Duration, yielding: bool) {
    if gap.is_zero() {
        return;
    }
    let start = Instant::now();
    // sleep through most of a long gap, spin the rest for accuracy
    if gap > Duration::from_millis(2) {
        std::thread::sleep(gap - Duration::from_millis(1));
    }
    while start.elapsed() < gap {
        if yielding {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

pub fn run_lat_size<D: LatDriver + ?Sized>(
    d: &mut D,
    activity: Activity,
    cfg: &LatConfig,
    size: u64,
) -> Result<LatResult, D::Error> {
    d.barrier(SyncPoint::PreRun, size)?;
    let mut rec = Recorder::new(cfg.keep_all);
    let mut warm = 0u64;
    if activity != Activity::Passive {
        let mut start: Option<Instant> = None;
        loop {
            let done = match (cfg.mode, start) {
                (Mode::Iterations(n), _) => rec.count() >= n,
                (Mode::Duration(s), Some(t)) => t.elapsed() >= Duration::from_secs(s),
                (Mode::Duration(_), None) => false,
            };
            if done {
                break;
            }
            let ns = d.measure(size)?;
            if warm < cfg.warmup {
                warm += 1;
            } else {
                rec.add(ns);
                start.get_or_insert_with(Instant::now);
            }
            wait_gap(cfg.gap, cfg.yield_in_gap);
        }
    }
    d.barrier(SyncPoint::PostRun, size)?;
    let peer_ops = d.exchange(size, warm + rec.count())?;
    Ok(LatResult {
        size,
        iterations: rec.count(),
        warmup: warm,
        peer_ops,
        stats: rec.stats(),
        samples: rec.samples().map(<[u64]>::to_vec),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_follow_the_originals_integer_math() {
        let mut r = Recorder::new(true);
        // the original's report-all example: 1.688 1.898 1.688 1.693 1.683 µs
        for ns in [1688, 1898, 1688, 1693, 1683] {
            r.add(ns);
        }
        let s = r.stats();
        assert_eq!((s.min_ns, s.max_ns, s.mean_ns), (1683, 1898, 1730));
        // Σx²/5 = 2999966 (truncated), − 1730² = 7066, sqrt → 84: the original's
        // row "8  5  1.68  1.89  1.73  0.08" exactly
        assert_eq!(s.stddev_ns, 84);
        assert_eq!((s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns), (1688, 1898, 1898, 1898));
        assert!(s.percentiles_exact);
        assert_eq!(r.samples().unwrap().len(), 5);
        assert_eq!(
            s.histogram,
            vec![Bucket {
                upper_ns: 2048,
                count: 5
            }]
        );
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut r = Recorder::new(false);
        for ns in 1..=1000 {
            r.add(ns);
        }
        let s = r.stats();
        assert_eq!((s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns), (500, 900, 990, 999));
        assert_eq!(s.mean_ns, 500);
        assert!(r.samples().is_none());
        assert_eq!(
            Recorder::new(false).stats().count,
            0,
            "no samples: zeros, not a division by zero"
        );
    }

    #[test]
    fn each_figure_a_sweep_judges_by_is_the_statistic_of_its_name() {
        // 1..=999 and one 100 µs outlier: every figure differs
        let mut r = Recorder::new(false);
        for ns in (1..=999).chain([100_000]) {
            r.add(ns);
        }
        let s = r.stats();
        let got: Vec<(&str, u64)> = LatFigure::ALL.iter().map(|f| (f.name(), s.figure_ns(*f))).collect();
        assert_eq!(
            got,
            [
                ("mean", 599),
                ("p50", 500),
                ("p90", 900),
                ("p99", 990),
                ("p999", 999),
                ("max", 100_000)
            ]
        );
        assert!(LatFigure::ALL.iter().all(|f| LatFigure::parse(f.name()) == Some(*f)));
        assert_eq!(LatFigure::parse("p95"), None);
        assert_eq!(serde_json::to_string(&LatFigure::P999).unwrap(), "\"p999\"");
    }

    struct Fake {
        calls: u64,
        barriers: Vec<SyncPoint>,
    }

    impl LatDriver for Fake {
        type Error = ();
        fn barrier(&mut self, p: SyncPoint, _: u64) -> Result<(), ()> {
            self.barriers.push(p);
            Ok(())
        }
        fn measure(&mut self, _: u64) -> Result<u64, ()> {
            self.calls += 1;
            Ok(1000 * self.calls)
        }
        fn exchange(&mut self, _: u64, ops: u64) -> Result<u64, ()> {
            Ok(ops)
        }
    }

    #[test]
    fn a_gap_waited_yielding_is_as_long_as_one_spun() {
        for yielding in [false, true] {
            // under 2 ms all spun or yielded; over it, mostly slept
            for gap in [Duration::from_micros(500), Duration::from_micros(3000)] {
                let t = Instant::now();
                wait_gap(gap, yielding);
                assert!(t.elapsed() >= gap, "{gap:?} (yielding: {yielding}): {:?}", t.elapsed());
            }
        }
    }

    #[test]
    fn warmups_are_discarded_and_the_gap_is_real() {
        let mut f = Fake {
            calls: 0,
            barriers: vec![],
        };
        let cfg = LatConfig {
            mode: Mode::Iterations(5),
            warmup: 3,
            gap: Duration::from_micros(1000),
            keep_all: true,
            yield_in_gap: false,
        };
        let t = Instant::now();
        let r = run_lat_size(&mut f, Activity::Active, &cfg, 8).unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(8),
            "8 gaps of 1 ms: {:?}",
            t.elapsed()
        );
        assert_eq!(f.calls, 8);
        assert_eq!((r.iterations, r.warmup, r.peer_ops), (5, 3, 8));
        assert_eq!(r.samples.unwrap(), vec![4000, 5000, 6000, 7000, 8000]);
        assert_eq!(f.barriers, vec![SyncPoint::PreRun, SyncPoint::PostRun]);
        let mut p = Fake {
            calls: 0,
            barriers: vec![],
        };
        let r = run_lat_size(&mut p, Activity::Passive, &cfg, 8).unwrap();
        assert_eq!((p.calls, r.iterations), (0, 0));
    }
}
