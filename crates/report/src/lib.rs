//! Renderers: pure functions from run descriptions and results to text.
//! `legacy` holds every width, label and header of the originals' tables in
//! one place; `bw_text` renders the bandwidth tools' banner and table byte
//! for byte; `json` defines fabdiag's JSON documents. Nothing here measures,
//! prints or touches the network.

#![forbid(unsafe_code)]

pub mod bw_text;
pub mod json;
pub mod legacy;
pub mod model;

pub use model::{BwRun, BwTool, Hugepages, Role, RowView, TestMode};
