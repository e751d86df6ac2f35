//! CLOCK_MONOTONIC_RAW without the call, where the kernel allows it.
//!
//! Where the kernel's clock source is the TSC, CLOCK_MONOTONIC_RAW is that
//! counter scaled by a constant (the raw clock is never slewed by NTP), so
//! reading the counter and scaling it by the rate measured against the
//! call gives the same clock for less: on the 2-core AMD EPYC development
//! VM a read costs 12 ns against the call's 32 (`scripts/dev/cost/clock-cost.c`).
//! A latency sample holds about one read's cost (what follows the first
//! read's capture and precedes the second's), in every sample. Elsewhere
//! (another clock source, another architecture) the call is made: there the
//! counter is not known to be stable and synchronised between CPUs. This
//! module only reads clocks; it never prints or decides.

use std::time::Duration;

/// How `now` reads CLOCK_MONOTONIC_RAW.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RawClock {
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`; readings are nanoseconds.
    Call,
    /// The TSC, which the kernel's clock source is; readings are ticks,
    /// `ns_per_tick` the rate measured against the call.
    Counter { ns_per_tick: f64 },
}

/// How long `RawClock::measured` spends measuring the counter's rate (it
/// sleeps): the rate is then known to about 4 parts in a million (a pair
/// of readings is placed to within about 20 ns), 4 ns in a 1 ms sample.
pub const RATE_SPAN: Duration = Duration::from_millis(10);

impl RawClock {
    /// The cheapest faithful way to read CLOCK_MONOTONIC_RAW here: the
    /// counter when the kernel's current clock source is `tsc` on x86-64
    /// and its rate measures sensibly over `span`, the call otherwise.
    pub fn measured(span: Duration) -> RawClock {
        if !cfg!(target_arch = "x86_64") || kernel_clock_source().as_deref() != Some("tsc") {
            return RawClock::Call;
        }
        match rate(span) {
            Some(ns_per_tick) => RawClock::Counter { ns_per_tick },
            None => RawClock::Call,
        }
    }

    /// A reading: nanoseconds (the call) or ticks (the counter); only
    /// `elapsed_ns` gives it meaning.
    #[inline]
    pub fn now(&self) -> u64 {
        match self {
            RawClock::Call => crate::monotonic_raw_ns(),
            RawClock::Counter { .. } => crate::cycles().unwrap_or(0),
        }
    }

    /// Nanoseconds from reading `t0` to reading `t1` (truncated; 0 if
    /// `t1` is earlier).
    #[inline]
    pub fn elapsed_ns(&self, t0: u64, t1: u64) -> u64 {
        match self {
            RawClock::Call => t1.saturating_sub(t0),
            RawClock::Counter { ns_per_tick } => (t1.saturating_sub(t0) as f64 * ns_per_tick) as u64,
        }
    }

    /// What each reading costs a call to, as the JSON records it.
    pub fn reads(&self) -> &'static str {
        match self {
            RawClock::Call => "clock_gettime",
            RawClock::Counter { .. } => "rdtsc",
        }
    }
}

/// The kernel's current clock source ("tsc", "kvm-clock", ...), if it
/// says.
pub fn kernel_clock_source() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Nanoseconds per counter tick over `span`, or None where the counter
/// does not advance with the clock.
fn rate(span: Duration) -> Option<f64> {
    let (c0, n0) = pair()?;
    std::thread::sleep(span);
    let (c1, n1) = pair()?;
    if c1 <= c0 || n1 <= n0 {
        return None;
    }
    let r = (n1 - n0) as f64 / (c1 - c0) as f64;
    // a counter between 100 MHz and 100 GHz; anything else is not a TSC
    // that the kernel would count time by
    (0.01..=10.0).contains(&r).then_some(r)
}

/// A (counter, nanoseconds) pair read as nearly at once as this CPU
/// allows: of five tries, the one whose two counter reads bracket the
/// call most tightly, the counter taken at the bracket's middle.
fn pair() -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64, u64)> = None;
    for _ in 0..5 {
        let a = crate::cycles()?;
        let ns = crate::monotonic_raw_ns();
        let b = crate::cycles()?;
        let width = b.wrapping_sub(a);
        if best.is_none_or(|(w, _, _)| width < w) {
            best = Some((width, a + width / 2, ns));
        }
    }
    best.map(|(_, c, ns)| (c, ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_of_reading_agree_with_the_call() {
        let counter = RawClock::measured(RATE_SPAN);
        for clock in [RawClock::Call, counter] {
            let (t0, n0) = (clock.now(), crate::monotonic_raw_ns());
            std::thread::sleep(Duration::from_millis(20));
            let (n1, t1) = (crate::monotonic_raw_ns(), clock.now());
            let (ours, call) = (clock.elapsed_ns(t0, t1), n1 - n0);
            // ours brackets the call's span: shorter only by the rate's
            // error, longer only by two reads and that error
            assert!(
                ours + call / 10_000 + 1 >= call && ours < call + call / 1000 + 10_000,
                "{clock:?}: {ours} ns against the call's {call}"
            );
        }
        assert_eq!(RawClock::Call.elapsed_ns(5, 3), 0, "never a wrapped difference");
        assert_eq!(RawClock::Counter { ns_per_tick: 0.5 }.elapsed_ns(10, 4), 0);
        assert_eq!(RawClock::Counter { ns_per_tick: 0.5 }.elapsed_ns(4, 10), 3);
    }

    #[test]
    fn the_counter_is_read_only_where_the_kernel_counts_time_by_it() {
        let source = kernel_clock_source();
        let clock = RawClock::measured(RATE_SPAN);
        if source.as_deref() == Some("tsc") && cfg!(target_arch = "x86_64") {
            assert_eq!(clock.reads(), "rdtsc", "{clock:?}");
        } else {
            assert_eq!(clock, RawClock::Call, "clock source {source:?}");
        }
    }
}
