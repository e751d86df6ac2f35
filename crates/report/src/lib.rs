//! Renderers: pure functions from run descriptions and results to text.
//! `catalog` names every tool once; `model` describes a run as a session
//! sees it; `legacy` holds every width, label and word of the originals'
//! tables in one place; `bw_text`, `lat_text` and `amo_text` render the
//! originals' banners and tables byte for byte and `text` picks among them
//! by family; `json` defines fabdiag's JSON documents and `threshold` the
//! pass/fail verdicts. Nothing here measures, prints or touches the network.

pub mod amo_text;
mod banner;
pub mod bw_text;
pub mod catalog;
pub mod doctor;
pub mod json;
pub mod lat_text;
pub mod legacy;
pub mod model;
pub mod support;
pub mod text;
pub mod threshold;
pub mod traffic;

pub use catalog::{Family, Tool};
pub use model::{
    AmoRun, BwRun, BwTool, Hugepages, Knob, LatRun, LatTool, Mem, Role, Row, RowView, RunDesc, SideMem, TestMode,
};
