//! Clocks for latency measurement: `CLOCK_MONOTONIC_RAW` nanoseconds (the
//! originals' default) and the CPU cycle counter (`rdtsc` on x86-64, the
//! virtual counter `cntvct_el0` on aarch64) with the originals' calibration
//! against the system clock and /proc/cpuinfo (originals §3.9). Reading a
//! hardware counter needs `unsafe`, which is why this is its own crate;
//! it never prints: warnings are returned to the caller.

use std::time::{Duration, Instant};

mod raw_counter;
pub use raw_counter::{kernel_clock_source, RawClock, RATE_SPAN};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ClockError {
    #[error("the cycle counter is not supported on this CPU architecture; use --clock clock_gettime")]
    Unsupported,
    #[error("cannot calibrate the cycle counter: correlation coefficient r^2 {r2:.3} < 0.9 (a busy or virtualised CPU?); use --clock clock_gettime")]
    PoorFit { r2: f64 },
    #[error("cannot calibrate the cycle counter: it does not advance")]
    Stopped,
}

/// Nanoseconds from CLOCK_MONOTONIC_RAW (not slewed by NTP).
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable timespec; the clock id is a constant
    // every Linux kernel since 2.6.28 supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    if rc != 0 {
        // cannot happen on Linux; fall back to a monotonic clock rather
        // than return a wrong time
        return fallback_ns();
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn fallback_ns() -> u64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The CPU's cycle counter, or None where fabdiag cannot read one.
pub fn cycles() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86-64 (every x86-64 CPU
        // has a time-stamp counter); it only reads a register.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading CNTVCT_EL0 is permitted at EL0 on Linux (the
        // kernel enables it for the vDSO); isb orders it after prior code.
        unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack)) };
        Some(v)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// Result of calibrating the cycle counter.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Counter ticks per microsecond (i.e. MHz) used for conversions.
    pub mhz: f64,
    pub sample_mhz: f64,
    pub proc_mhz: Option<f64>,
    pub r2: f64,
    /// The originals' warning text when CPUs report different frequencies.
    pub warning: Option<String>,
}

impl Calibration {
    /// Cycles to nanoseconds (truncated, as the originals).
    pub fn to_ns(&self, cycles: u64) -> u64 {
        (cycles as f64 * 1000.0 / self.mhz) as u64
    }
}

fn busy_wait(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Least-squares slope and r² of y over x.
pub fn regression(x: &[f64], y: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    if x.len() < 2 {
        return (0.0, 0.0);
    }
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return (0.0, 0.0);
    }
    (sxy / sxx, sxy * sxy / (sxx * syy))
}

/// "cpu MHz" values from /proc/cpuinfo text.
pub fn proc_cpu_mhz(cpuinfo: &str) -> Vec<f64> {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect()
}

/// Chooses the frequency as the originals do: /proc's value unless the
/// measured one differs from it by more than 2%; warns (unless told not to)
/// when CPUs disagree by more than 2%.
pub fn choose(sample_mhz: f64, proc_values: &[f64], ignore_mismatch: bool) -> (Option<f64>, f64, Option<String>) {
    let first = proc_values.first().copied().filter(|v| *v >= 1.0);
    let mut warning = None;
    if let Some(f) = first {
        if let Some(other) = proc_values.iter().find(|v| ((*v - f) / f).abs() > 0.02) {
            if !ignore_mismatch {
                warning = Some(format!(
                    "Conflicting CPU frequency values detected: {f:.6} != {other:.6}. CPU Frequency is not max."
                ));
            }
        }
    }
    let mhz = match first {
        Some(p) if ((p - sample_mhz) / p).abs() <= 0.02 => p,
        _ => sample_mhz,
    };
    (first, mhz, warning)
}

/// Calibrates the cycle counter (about 0.22 s: 200 busy waits of
/// 100 + 10·i µs, timed by the monotonic clock and the counter).
pub fn calibrate(ignore_mismatch: bool) -> Result<Calibration, ClockError> {
    let Some(_) = cycles() else {
        return Err(ClockError::Unsupported);
    };
    let mut x = Vec::with_capacity(200);
    let mut y = Vec::with_capacity(200);
    for i in 0..200u64 {
        let t0 = monotonic_raw_ns();
        let c0 = cycles().unwrap_or(0);
        busy_wait(Duration::from_micros(100 + 10 * i));
        let c1 = cycles().unwrap_or(0);
        let t1 = monotonic_raw_ns();
        x.push((t1 - t0) as f64 / 1000.0);
        y.push(c1.wrapping_sub(c0) as f64);
    }
    let (slope, r2) = regression(&x, &y);
    if slope <= 0.0 {
        return Err(ClockError::Stopped);
    }
    if r2 < 0.9 {
        return Err(ClockError::PoorFit { r2 });
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (proc_mhz, mhz, warning) = choose(slope, &proc_cpu_mhz(&cpuinfo), ignore_mismatch);
    if mhz.is_nan() || mhz <= 0.0 {
        return Err(ClockError::Stopped);
    }
    Ok(Calibration {
        mhz,
        sample_mhz: slope,
        proc_mhz,
        r2,
        warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_recovers_a_line() {
        let x: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let y: Vec<f64> = x.iter().map(|v| 2400.0 * v + 7.0).collect();
        let (s, r2) = regression(&x, &y);
        assert!((s - 2400.0).abs() < 1e-9 && (r2 - 1.0).abs() < 1e-12);
        assert_eq!(regression(&[1.0], &[1.0]), (0.0, 0.0));
        assert_eq!(regression(&[1.0, 1.0], &[1.0, 2.0]), (0.0, 0.0));
    }

    #[test]
    fn frequency_choice_and_warning() {
        let info = "processor : 0\ncpu MHz\t\t: 2400.000\nprocessor : 1\ncpu MHz\t\t: 1200.000\n";
        let vals = proc_cpu_mhz(info);
        assert_eq!(vals, vec![2400.0, 1200.0]);
        let (p, mhz, w) = choose(2410.0, &vals, false);
        assert_eq!(p, Some(2400.0));
        assert_eq!(mhz, 2400.0, "within 2%: /proc wins");
        assert_eq!(
            w.unwrap(),
            "Conflicting CPU frequency values detected: 2400.000000 != 1200.000000. CPU Frequency is not max."
        );
        let (_, mhz, w) = choose(3000.0, &vals, true);
        assert_eq!(mhz, 3000.0, "beyond 2%: the measurement wins");
        assert!(w.is_none(), "--ignore-cpu-freq-mismatch silences only the warning");
        // no cpu MHz line (aarch64): the measurement
        assert_eq!(choose(50.0, &[], false).1, 50.0);
    }

    #[test]
    fn clocks_advance_and_calibrate_here() {
        let a = monotonic_raw_ns();
        busy_wait(Duration::from_millis(2));
        assert!(monotonic_raw_ns() - a >= 2_000_000);
        match calibrate(true) {
            Ok(c) => {
                assert!(c.mhz > 1.0, "{c:?}");
                let c0 = cycles().unwrap();
                let t0 = monotonic_raw_ns();
                busy_wait(Duration::from_millis(20));
                let ns = c.to_ns(cycles().unwrap() - c0);
                let real = monotonic_raw_ns() - t0;
                assert!(
                    (ns as f64 - real as f64).abs() < real as f64 * 0.1,
                    "{ns} vs {real} ns ({c:?})"
                );
            }
            // a loaded VM can fail the fit; that must be an error, not 0 MHz
            Err(e) => assert!(matches!(e, ClockError::PoorFit { .. }), "{e}"),
        }
    }
}
