//! The sweep's report, made from a finished sweep and nothing else:
//! `analysis` finds the slow links and nodes, `baseline` compares with an
//! earlier sweep, `blame` sets the NIC counters beside them, `build` makes the document (`doc`, the JSON schema),
//! `reread` takes a finished sweep's document (or folder) apart again,
//! `phrases` holds the sentences the text and the page share, `text` is
//! the one-page summary, `picture` the heatmap, change and histogram PNGs,
//! `html` the self-contained page, `metrics` its Prometheus metrics;
//! `pattern` is a traffic pattern's report (bisection), `pattern_html`
//! its page.
//!
//! Pure functions of data: no sockets, no libfabric, no clock, no
//! printing, and no file opened here (the binary opens files and hands
//! over readers), so all of it builds and is tested without the run side
//! (fabdiag-sweep).

pub mod analysis;
pub mod baseline;
pub mod blame;
pub mod build;
pub mod doc;
mod error;
pub mod error_rates;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod html;
pub mod metrics;
mod node_summary;
pub mod pattern;
pub mod pattern_html;
mod phrases;
pub mod picture;
pub mod reread;
pub mod text;

pub use build::{build, Inputs};
pub use doc::{Limits, Metric, SweepDoc, SCHEMA};
pub use error::ReportError;
pub use phrases::rails_note;
pub use text::text;
