//! The sweep's run: every pair of ranks runs the pair tools' own test
//! once, in the rounds fabdiag-sweep-plan schedules. `coordinator` (rank 0)
//! runs the rounds and re-tests over the `wire` protocol; `worker` is
//! every rank's side, running pair tests through a `runner` (the real
//! session over libfabric, or a fixed pause for the coordination
//! simulation); `auth` has a rank and rank 0 prove the shared key;
//! `launch` reads who this rank is from a launcher's variables; `folder`
//! reads an `--output` folder back. What the sweep found is
//! fabdiag-sweep-judge's to judge (the run's choice of re-tests uses the
//! same rules) and fabdiag-sweep-report's to say. Never prints, never exits, never reads
//! the environment.

pub mod auth;
pub mod coordinator;
mod error;
pub mod folder;
pub mod launch;
pub mod protocol;
pub mod runner;
pub mod worker;

pub use error::SweepError;

/// Open files rank 0 needs beyond one connection per rank: its own
/// endpoint, pair-test sockets, output files, libraries.
pub const SPARE_FILES: u64 = 128;
