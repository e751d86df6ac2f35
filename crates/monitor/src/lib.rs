//! `fabdiag monitor`'s parts, pure: which peers it watches (`peers`), when
//! each probe may run within the budget of link time (`schedule`), what a
//! probe's run said (`probe`), what is kept per peer between scrapes, in
//! bounded memory (`watch`), and that as Prometheus metrics (`metrics`).
//! Nothing here starts a process, reads a clock, opens a socket or prints:
//! the binary runs the probes and serves `/metrics`, and hands the time in.

pub mod metrics;
pub mod peers;
pub mod probe;
pub mod schedule;
pub mod watch;

pub use peers::{Peer, PeersError};
pub use probe::{Ended, Figures, Outcome, ProbeKind, Reason};
pub use schedule::{Next, Plan, Schedule};
pub use watch::{Change, Status, Watch};
