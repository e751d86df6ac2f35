//! Renderers: pure functions from run descriptions and results to text.
//! `legacy` holds every width, label and header of the originals' tables in
//! one place; `bw_text` and `lat_text` render the originals' banners and
//! tables byte for byte; `json` defines fabdiag's JSON documents. Nothing here measures,
//! prints or touches the network.

pub mod amo_text;
mod banner;
pub mod bw_text;
pub mod json;
pub mod lat_text;
pub mod legacy;
pub mod model;
pub mod traffic;

pub use model::{AmoRun, BwRun, BwTool, Hugepages, LatRun, LatTool, Role, RowView, TestMode};
