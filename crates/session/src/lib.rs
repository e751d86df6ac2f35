//! The pair test as a library. One call runs one test of any tool:
//! `client(spec, env, host, port, sink)` against a server, `serve_one` or
//! `serve_stream` for the server side, `local` for both in one process.
//! The choreography is written once (`session`); each tool family supplies
//! only what differs (`family`); the fabric driver (`driver`) runs the
//! engine's methods over a libfabric endpoint and talks to the peer only
//! through a `Link`, so a single-process test can use it with `Alone`;
//! every byte of registered memory is read or written in `memory`.
//!
//! This crate never prints, never exits, and never reads argv or the
//! environment: settings arrive in `TestSpec` (what the client decides)
//! and `Env` (this side's own), both built from fabdiag-model's
//! vocabulary, progress leaves through a `Sink`, and the
//! outcome is a `Report` or a `Failure` that says phase, side and kind.

mod counters;
mod device;
mod driver;
mod env;
pub(crate) mod family;
mod memory;
mod net;
mod outcome;
mod probe;
mod provider;
mod session;
mod sink;
mod station;
#[cfg(test)]
mod tests;

pub use driver::{stall_limit, DriveError, LatClock};
pub use env::{Env, GpuUse, Hooks, HostAsGpu, StallHook};
pub use fabdiag_proto::{Alone, Link};
pub use family::capability;
pub use outcome::{Failure, FailureKind, Report, SessionError, Side};
pub use probe::{atomic_support, provider_caps, providers, AtomicSupport};
pub use provider::{candidates, choose, PREFERENCE};
pub use session::{check, check_server, client, hello, local, loopback, serve_one, serve_stream, VERSION};
pub use sink::{Event, Silent, Sink};
pub use station::{reusable, Station, StationStats};
