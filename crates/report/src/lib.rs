//! Renderers: pure functions from run descriptions and results (the run
//! model is fabdiag-model's) to text. `legacy` holds every width, label
//! and word of the originals' tables in one place; `bw_text`, `lat_text`
//! and `amo_text` render the originals' banners and tables byte for byte
//! and `text` picks among them by family; `counters_text` the NIC counter
//! block `--counters` adds; `json` defines fabdiag's JSON documents,
//! `metrics` a run's Prometheus metrics (made from its document) and
//! `threshold` the pass/fail verdicts; `host_traffic` renders host-traffic's
//! lines and JSON, `doctor` and `support` what those commands print. Nothing here measures, prints or touches the network.

pub mod amo_text;
mod banner;
pub mod bw_text;
pub mod counters_text;
pub mod doctor;
pub mod host_traffic;
pub mod json;
pub mod lat_text;
pub mod legacy;
pub mod metrics;
pub mod support;
pub mod text;
pub mod threshold;
