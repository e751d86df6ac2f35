//! fabdiag's measurement engine. It runs the originals' bandwidth method
//! (originals §2.9) and latency method (§2.10) over any transport that implements `BwDriver`, and computes
//! results; it knows nothing of libfabric, TCP or output formats, and it
//! never prints. Addressing inside a batch (`--buf-sz` overlap and
//! `--buf-align`) lives in `addressing` so every transport steps the same way.

pub mod addressing;
pub mod amo;
pub mod bw;
pub mod lat;

pub use addressing::{buffer_size, Stepper};
pub use bw::{packets_per_op, run_size, sizes, Activity, BwDriver, Measure, Mode, SizeResult, Step, SyncPoint};
pub use lat::{run_lat_size, LatConfig, LatDriver, LatResult, LatStats};
