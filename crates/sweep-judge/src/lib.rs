//! What a finished sweep says, judged: `analysis` finds the slow links and
//! nodes (the rules the run's choice of re-tests uses too), `blame` sets
//! the NIC counters beside them, `error_rates` compares each node's
//! counter rates, `fabric` names the fabric's elements the slow pairs
//! share when the sweep has its map, `baseline` compares with an earlier sweep, `build` makes
//! the document (`doc`, the JSON schema), and `reread` takes a finished
//! sweep's document (or folder) apart again.
//!
//! Pure functions of data: no sockets, no libfabric, no clock, no
//! printing, no file opened here, and nothing drawn or laid out (the
//! text, pictures and page are fabdiag-sweep-report's), so the sweep's run
//! links none of the picture and font crates.

pub mod analysis;
pub mod baseline;
pub mod blame;
pub mod build;
pub mod doc;
mod error;
pub mod error_rates;
pub mod fabric;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod node_summary;
pub mod reread;

pub use build::{build, Inputs};
pub use doc::{Limits, Metric, SweepDoc, SCHEMA};
pub use error::ReportError;
