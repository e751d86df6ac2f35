//! One node's line in the sweep's document: its median, its pairs
//! measured and failed, and whether it is a slow node. A type of its own
//! because both the document (`doc`) and the blame (`blame`) read it, and
//! the document holds the blame. Types and their JSON form only.

use fabdiag_sweep_plan::Node;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSummary {
    #[serde(flatten)]
    pub node: Node,
    pub median: Option<f64>,
    pub pairs_measured: usize,
    pub pairs_failed: usize,
    pub slow: bool,
}
