//! The NIC counters set beside a pair test's result: this side's change
//! of every counter across the measurement, and the peer's as it sent
//! them. Describes; reads nothing (fabdiag-counters reads, the session
//! carries, the renderers show).

pub use fabdiag_counters::{of_the_path, severity, NicFacts};
pub use fabdiag_counters::{Change, Class, CounterChange, Counters, Deltas, Family, Noted, SourceDeltas, WHOLE_SOURCE};
use serde::Serialize;

/// Both sides' counters across one pair test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairCounters {
    /// This side's.
    pub local: Counters,
    /// The peer's, as it sent them; None where there is no peer process
    /// (gpu-loopback-bw) or the run ended before they were exchanged.
    pub peer: Option<Counters>,
}
