//! The sweep's report, drawn and written from a finished sweep's judged
//! document (fabdiag-sweep-judge): `phrases` holds the sentences the text
//! and the page share, `fabric` the fabric's verdict in words, `text` is the one-page summary, `picture` the heatmap, change and histogram PNGs,
//! `html` the self-contained page, `metrics` its Prometheus metrics;
//! `pattern` is a traffic pattern's report (bisection), `pattern_html`
//! its page.
//!
//! Pure functions of data: no sockets, no libfabric, no clock, no
//! printing, and no file opened here (the binary opens files and hands
//! over readers), so all of it builds and is tested without the run side
//! (fabdiag-sweep).

mod fabric;
pub mod html;
pub mod metrics;
pub mod pattern;
pub mod pattern_html;
mod phrases;
pub mod picture;
pub mod text;

pub use phrases::rails_note;
pub use text::text;
