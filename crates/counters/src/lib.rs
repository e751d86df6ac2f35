//! A NIC's own counters, read around a test and set beside its result.
//!
//! From a libfabric provider and domain, `sources` finds where the
//! domain's device keeps its counters (`locate`): a network interface's
//! statistics and carrier changes, the network namespace's TCP
//! retransmissions, an InfiniBand or RoCE port's counters and hardware
//! counters, an EFA device's hardware counters, a Slingshot CXI device's
//! telemetry. `Snapshot::take` reads them (`read`); `Snapshot::since`
//! gives each counter's change (`delta`), saying a counter that went
//! back (wrapped or reset), sits at its ceiling, or could not be read as
//! such, never as a change of zero. `meaning` classes every counter
//! (physical, flap, congestion, retransmit, drop, traffic) and says
//! whether a rise is a fault or a sign of load.
//!
//! This crate reads files under a root it is given (`/` outside tests)
//! and never writes, prints, or touches libfabric.

mod delta;
mod locate;
mod meaning;
mod noted;
mod read;

pub use delta::{Change, CounterChange, Counters, Deltas, NicFacts, SourceDeltas};
pub use locate::{device_of, pick_port, sources, Family, Source, Unavailable};
pub use meaning::{known, meaning, Class, Limit, Meaning};
pub use noted::{devices_read, of_the_path, severity, Noted, WHOLE_SOURCE};
pub use read::{Snapshot, Values};
