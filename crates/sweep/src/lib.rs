//! The cluster sweep: every pair of ranks runs the pair tools' own test
//! once, in rounds of disjoint pairs, and the result names the slow link or
//! node. `schedule` says who tests whom when; `coordinator` (rank 0) runs
//! the rounds and re-tests over the `wire` protocol; `worker` is every
//! rank's side, running pair tests through a `runner` (the real session
//! over libfabric, or a fixed pause for the coordination simulation);
//! `analysis` finds outliers; `baseline` compares with an earlier
//! sweep; `reread` reads a finished sweep's document back; `report` builds the JSON document and the
//! text summary, `picture` the heatmap and histogram, `html` the page; `launch` reads who this rank is from a launcher's
//! variables. Never prints, never exits, never reads the environment.

pub mod analysis;
pub mod baseline;
pub mod coordinator;
mod error;
pub mod html;
pub mod launch;
pub mod picture;
pub mod report;
pub mod reread;
pub mod runner;
pub mod schedule;
pub mod wire;
pub mod worker;

pub use error::SweepError;

/// Open files rank 0 needs beyond one connection per rank: its own
/// endpoint, pair-test sockets, output files, libraries.
pub const SPARE_FILES: u64 = 128;
