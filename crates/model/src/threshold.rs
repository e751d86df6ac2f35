//! A pass/fail threshold as the user set it (`--min-bw`, `--max-lat`).
//! The verdict on results is fabdiag-report's; nothing here judges.

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// Every size's bandwidth must reach this many MB/s.
    MinBw(f64),
    /// The same in Gb/s, the unit gpu_loopback_bw's table prints.
    MinGbit(f64),
    /// Every size's mean latency must stay at or below this many µs.
    MaxLat(f64),
}
