//! The sweep's document, as a script reads it: `SweepDoc`, schema
//! `fabdiag-sweep/1` (nodes, matrix, every pair, re-tests, analysis,
//! thresholds, overhead, verdict, baseline), with the metric it judged
//! and the limits it held pairs to. Types and their JSON form only: the
//! builder is `build`; the text and the page are fabdiag-sweep-report's.

use crate::analysis::{Analysis, Better, Matrix};
use crate::blame::Blame;
pub use crate::node_summary::NodeSummary;
use fabdiag_engine::lat::LatFigure;
use fabdiag_model::counters::{Class, Family};
use fabdiag_sweep_plan::folder::RunOptions;
use fabdiag_sweep_plan::{PairRecord, StepRecord};
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "fabdiag-sweep/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// "bandwidth" or "latency".
    pub name: String,
    /// "MB/s" or "us".
    pub unit: String,
    pub better: Better,
    /// What every pair ran, e.g. "write-bw 65536 B".
    pub test: String,
}

impl Metric {
    /// What a sweep of the pair test `spec` compares: the largest size's
    /// bandwidth, or its latency figure (`figure`: the originals' mean, or
    /// another, which the name and test then say: "p99 latency",
    /// "write-lat 8 B, p99").
    pub fn of(spec: &fabdiag_model::TestSpec, figure: LatFigure) -> Metric {
        let lat = spec.tool.is_latency();
        let sizes = if spec.min_size == spec.max_size {
            String::new()
        } else {
            format!("{}-", spec.min_size)
        };
        let mut test = format!("{} {sizes}{} B", spec.tool.subcommand(), spec.max_size);
        let name = match (lat, figure) {
            (false, _) => "bandwidth".to_string(),
            (true, LatFigure::Mean) => "latency".to_string(),
            (true, f) => {
                test.push_str(&format!(", {}", f.name()));
                format!("{} latency", f.name())
            }
        };
        Metric {
            name,
            unit: if lat { "us" } else { "MB/s" }.into(),
            better: Better::for_tool(spec.tool),
            test,
        }
    }

    /// The figure a sweep's options say its latency pairs were judged by
    /// (`options.figure`; the mean when it is not there).
    pub fn figure_in(options: &RunOptions) -> LatFigure {
        options.figure.as_deref().and_then(LatFigure::parse).unwrap_or_default()
    }
}

/// Pass/fail limits on every pair (in the metric's unit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub min_bw_mb_s: Option<f64>,
    pub max_lat_us: Option<f64>,
}

impl Limits {
    /// The limit on a metric where `better` wins: a floor on bandwidth or
    /// a ceiling on latency, with its word and flag ("at least", "--min-bw").
    pub fn applicable(&self, better: Better) -> Option<(f64, &'static str, &'static str)> {
        match better {
            Better::Higher => self.min_bw_mb_s.map(|m| (m, "at least", "--min-bw")),
            Better::Lower => self.max_lat_us.map(|m| (m, "at most", "--max-lat")),
        }
    }
}

/// One rail of a sweep on rails (`--rails`): its ranks, how many of them
/// are slow nodes, and the median of its pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RailSummary {
    pub rail: usize,
    pub ranks: usize,
    pub slow_ranks: usize,
    pub median: Option<f64>,
    /// More than the node fraction of its ranks are slow: what they share
    /// (the rail's switches and cables) is the likelier fault.
    pub slow: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetestVerdict {
    /// Still slow (or failed) when tested alone: a link still an outlier,
    /// a node still below the fraction of the reference.
    Confirmed,
    /// Normal when tested alone: the first figure was load or noise.
    Cleared,
    /// Its pair is no suspect under the rules this report was made with
    /// (made again with other rules, `--report`): kept, judged by nothing.
    NotSuspect,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Retest {
    pub a: usize,
    pub b: usize,
    /// The slow node this pair re-tested (with a healthy partner); none:
    /// a slow link's re-test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    pub first: Option<f64>,
    pub alone: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub verdict: RetestVerdict,
}

impl Retest {
    /// A slow node's re-test: the node and its healthy partner.
    pub fn node_and_partner(&self) -> Option<(usize, usize)> {
        self.node.map(|x| (x, if self.a == x { self.b } else { self.a }))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleSummary {
    /// Only ranks on one rail (rank mod rails) were paired; 1: every pair.
    #[serde(default = "fabdiag_sweep_plan::schedule::one_rail")]
    pub rails: usize,
    pub rounds: usize,
    pub pairs_per_round: usize,
    pub total_pairs: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Waiting for every rank to join.
    pub join_s: f64,
    /// The first round's wall time beyond its longest measurement: it
    /// includes every rank opening its endpoint.
    pub first_round_s: f64,
    /// Per round after the first: wall time beyond the longest measurement.
    pub round_mean_s: f64,
    pub round_max_s: f64,
    /// The coordinator's own work per round (orders and answers).
    pub coordinator_mean_s: f64,
    /// Endpoint openings, all ranks together, and their time.
    pub endpoint_opens: u64,
    pub endpoint_open_s: f64,
    pub steps: Vec<StepRecord>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub failed_pairs: usize,
    pub untested_pairs: usize,
    pub lost_nodes: Vec<usize>,
    /// Pairs and nodes below --min-bw / above --max-lat.
    pub threshold_pairs: Vec<(usize, usize)>,
    pub threshold_nodes: Vec<usize>,
    pub slow_links: usize,
    pub slow_nodes: usize,
    /// Rails most of whose ranks are slow (`--rails`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow_rails: Vec<usize>,
    /// Rank 0 lost every other rank (two or more) during the sweep: its
    /// own node or link, not theirs, is the likelier fault.
    #[serde(default)]
    pub all_others_lost: bool,
    /// Against `--baseline`: links and nodes below their own earlier
    /// figures, and whether the fabric as a whole is.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub regressed_links: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub regressed_nodes: usize,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fabric_regressed: bool,
    /// The hosts of the nodes named above (slow, lost, below the baseline
    /// or a threshold; rank 0's alone when it lost every other rank),
    /// each once, sorted: what to look at or drain. Not the ends of slow
    /// links: a link is a cable or a switch port between two hosts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspect_hosts: Vec<String>,
    /// With the fabric's map: each blamed switch or cable (several joined
    /// by " or " where the map cannot tell them apart); the slow nodes it
    /// accounts for are then not among `suspect_hosts`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspect_elements: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepDoc {
    pub schema: String,
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
    pub options: RunOptions,
    pub metric: Metric,
    pub started: String,
    pub ended: String,
    pub schedule: ScheduleSummary,
    pub nodes: Vec<NodeSummary>,
    /// Each rail, on rails (`--rails`); none otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rails: Vec<RailSummary>,
    /// N × N, symmetric, null where there is no figure: the analysis's
    /// f32 figures, written as f32 (the shortest digits that are that
    /// value; `pairs` holds each figure in full). Kept as the analysis's
    /// triangle and written out row by row.
    pub matrix: Matrix,
    pub pairs: Vec<PairRecord>,
    pub retests: Vec<Retest>,
    pub analysis: Analysis,
    pub limits: Limits,
    pub overhead: Overhead,
    pub verdict: Verdict,
    /// This sweep against `--baseline`, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Comparison>,
    /// Why the sweep ended before its last round (a signal's name); the
    /// pairs it did not reach are `untested`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The ranks whose own NIC counters rose during their pair tests,
    /// beside what the figures said of them (`blame`).
    #[serde(default, skip_serializing_if = "Blame::is_empty")]
    pub counters: Blame,
    /// With `--flows`: the pairs whose flows split into slow and clean (a
    /// path is slow, not a host), low rank first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_sensitive: Vec<(usize, usize)>,
    /// The fabric's elements judged, when the sweep had its map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric: Option<crate::fabric::FabricVerdict>,
}

/// A pair measured in both sweeps that has fallen below the limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkChange {
    /// Its ranks in this sweep.
    pub a: usize,
    pub b: usize,
    pub value: f64,
    pub baseline: f64,
    /// Its figure as a fraction of its baseline figure (below 1: worse,
    /// for latency too).
    pub of_baseline: f64,
}

/// A node most of whose compared pairs have fallen below the limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeChange {
    pub rank: usize,
    /// Its rank in the baseline.
    pub baseline_rank: usize,
    /// The median of its pairs' fractions of their baseline figures.
    pub of_baseline: f64,
    pub regressed_pairs: usize,
    pub compared_pairs: usize,
}

/// A node of the baseline that this sweep does not have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbsentNode {
    pub baseline_rank: usize,
    /// "node8 cxi1".
    pub name: String,
}

/// This sweep against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub file: String,
    pub started: String,
    pub fabdiag_version: String,
    /// `--baseline-fraction`.
    pub fraction: f64,
    /// `--node-fraction`, as the sweep's own rules.
    pub node_fraction: f64,
    /// Pairs measured in both sweeps.
    pub compared_pairs: usize,
    /// The median of their fractions of their baseline figures: the
    /// fabric as a whole against its baseline.
    pub median: Option<f64>,
    /// A pair has regressed below this fraction of its baseline figure:
    /// `fraction`, times the median when that is below 1 (so a fabric
    /// that is slower as a whole names the pairs slower than the rest,
    /// and says the rest once, as `fabric_regressed`).
    pub limit: f64,
    pub regressed_pairs: usize,
    /// The median is below `fraction`.
    pub fabric_regressed: bool,
    pub nodes: Vec<NodeChange>,
    /// Regressed pairs between nodes not regressed themselves, worst first.
    pub links: Vec<LinkChange>,
    /// Ranks of this sweep that the baseline does not have.
    pub new_nodes: Vec<usize>,
    pub absent_nodes: Vec<AbsentNode>,
    /// Each node's NIC error rates against its own in the baseline
    /// (absent from a document made before they were compared).
    #[serde(default)]
    pub error_rates: ErrorRates,
}

/// NIC error rates, this sweep's against the baseline's, node for node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorRates {
    /// Nodes in both sweeps whose counters both read.
    pub compared_nodes: usize,
    /// Why none were compared (the baseline read no counters, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
    /// Counters whose rate rose past the rule, the port's own first.
    #[serde(default)]
    pub risen: Vec<ErrorRateChange>,
    /// Counters whose rate fell past the rule (a part replaced, say).
    #[serde(default)]
    pub fallen: Vec<ErrorRateChange>,
}

/// One fault counter of one node, per pair test, in both sweeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorRateChange {
    /// Its rank in this sweep, and in the baseline.
    pub rank: usize,
    pub baseline_rank: usize,
    pub family: Family,
    pub device: String,
    pub name: String,
    pub class: Class,
    /// Its rise per pair test of the node's, now and then.
    pub per_test: f64,
    pub baseline_per_test: f64,
    /// It went back or sat at its ceiling in some test, in either sweep:
    /// the rates are floors.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted: bool,
}
