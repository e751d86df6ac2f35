//! The shape of a traffic pattern's document (`pattern.json`): every
//! record it holds, each pattern's summaries among them, and the small
//! helpers every pattern's page shares (a rank with its host, a flow's
//! line). Plain data and formatting; what fills it is in the pattern's
//! own module.

use fabdiag_sweep_judge::doc::Metric;
use fabdiag_sweep_plan::{LatFigures, Node, PairRecord, Pattern, PatternStep, Shape};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The document's schema name.
pub const PATTERN_SCHEMA: &str = "fabdiag-pattern/1";

/// One flow of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub client: usize,
    pub server: usize,
    /// Its figure (MB/s), when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Its part of the step's aggregate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Below the outlier fraction of the step's median flow (in an
    /// incast: a starved sender).
    pub slow: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A step's flows, all at once, and what they carried together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The measured flows' figures added up.
    pub aggregate: f64,
    pub measured: usize,
    pub flows: Vec<Flow>,
}

impl Group {
    /// `flows`, each measured one's share of their aggregate, and those
    /// below `fraction` times their median marked slow.
    pub fn of(flows: &[PairRecord], fraction: f64) -> Group {
        let values: Vec<f64> = flows.iter().filter_map(|f| f.value).collect();
        let aggregate: f64 = values.iter().sum();
        let middle = (!values.is_empty()).then(|| fabdiag_sweep_judge::analysis::median(&mut values.clone()));
        let flows = flows
            .iter()
            .map(|f| Flow {
                client: f.client,
                server: f.server,
                value: f.value,
                share: f.value.filter(|_| aggregate > 0.0).map(|v| v / aggregate),
                slow: matches!((f.value, middle), (Some(v), Some(m)) if v < fraction * m),
                error: f.error.as_deref().map(str::to_string),
            })
            .collect();
        Group {
            aggregate,
            measured: values.len(),
            flows,
        }
    }

    /// The measured flow with the lowest figure.
    pub fn slowest(&self) -> Option<&Flow> {
        self.flows
            .iter()
            .filter(|f| f.value.is_some())
            .min_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
    }
}

/// Every flow's figure, sender (row) by receiver (column), over the
/// ranks that took part: what the page draws as a heatmap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heatmap {
    pub ranks: Vec<usize>,
    /// `values[i][j]`: ranks\[i] to ranks\[j] (None: not run, or failed;
    /// a pair run twice keeps its lowest figure).
    pub values: Vec<Vec<Option<f64>>>,
}

impl Heatmap {
    pub fn of<'a>(flows: impl Iterator<Item = &'a Flow> + Clone) -> Heatmap {
        let mut ranks: Vec<usize> = flows.clone().flat_map(|f| [f.client, f.server]).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let at = |r: usize| ranks.binary_search(&r).unwrap_or(0);
        let mut values = vec![vec![None; ranks.len()]; ranks.len()];
        for f in flows {
            let cell: &mut Option<f64> = &mut values[at(f.client)][at(f.server)];
            if let Some(v) = f.value {
                *cell = Some(cell.map_or(v, |c: f64| c.min(v)));
            }
        }
        Heatmap { ranks, values }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternVerdict {
    /// Flows measured, all steps together (none: nothing was learnt).
    pub measured_flows: usize,
    pub failed_flows: usize,
    pub untested_flows: usize,
    /// Flows below their step's median (slow, or starved in an incast).
    pub slow_flows: usize,
    pub lost_nodes: Vec<usize>,
    /// Flows measured well past the pair tool's `-D` (a window of more than
    /// `OVERRAN` times it), longest first: a flow's window ends at its
    /// first iteration's end past `-D`, so a step whose flows ran on like
    /// this did not measure them all at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overran: Vec<Overran>,
}

/// A flow whose window ran well past `-D`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overran {
    pub client: usize,
    pub server: usize,
    /// How long its client measured, seconds.
    pub measured_s: f64,
}

/// A pattern run's document (`pattern.json`, `--json`): the section of
/// its pattern filled, the others left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternDoc {
    pub schema: String,
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
    pub options: fabdiag_sweep_plan::folder::RunOptions,
    pub metric: Metric,
    pub started: String,
    pub ended: String,
    pub pattern: Pattern,
    pub nodes: Vec<Node>,
    /// The rate one node's NIC can carry (`--expect`, MB/s per direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<f64>,
    /// Both directions at once (`-b`): every flow carries two streams.
    pub bidirectional: bool,
    /// A bisection's splits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<SplitSummary>,
    /// The split with the lowest aggregate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weakest: Option<usize>,
    /// An incast's receivers, each with its lone sender and all at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incasts: Vec<IncastSummary>,
    /// An all-to-all's phases, and the whole of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alltoall: Option<AllToAllSummary>,
    /// Every flow's figure, sender by receiver (incast, all-to-all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heatmap: Option<Heatmap>,
    /// The pair measured alone and beside every step (`--victim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<VictimSummary>,
    pub verdict: PatternVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The steps of `steps` of one shape, with what `pick` takes of it.
pub(crate) fn shaped<'a, T>(
    steps: &'a [PatternStep],
    pick: impl Fn(&'a Shape) -> Option<T> + 'a,
) -> impl Iterator<Item = (T, &'a PatternStep)> + 'a {
    steps.iter().filter_map(move |st| pick(&st.shape).map(|t| (t, st)))
}

/// Ranks as a short list: "0-3", "0 2 5 7".
pub(crate) fn ranks(v: &[usize]) -> String {
    let run = v.windows(2).all(|w| w[1] == w[0] + 1);
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if run && v.len() > 2 => format!("{a}-{b}"),
        _ => v.iter().map(usize::to_string).collect::<Vec<_>>().join(" "),
    }
}

/// A rank and its host, "3 (node3)" (unescaped).
pub(crate) fn host(doc: &PatternDoc, rank: usize) -> String {
    match doc.nodes.get(rank).and_then(|n| n.host.as_deref()) {
        Some(h) => format!("{rank} ({h})"),
        None => rank.to_string(),
    }
}

/// One flow's line: from, to, its figure and share (or why it has none),
/// `mark` after a flow below its step's median.
pub(crate) fn flow_line(o: &mut String, doc: &PatternDoc, f: &Flow, mark: &str) {
    let u = &doc.metric.unit;
    let what = match (f.value, &f.error) {
        (Some(v), _) => format!(
            "{v:>10.1} {u} {:>5.1} %{}",
            f.share.unwrap_or(0.0) * 100.0,
            if f.slow { format!("  {mark}") } else { String::new() }
        ),
        (None, Some(e)) => format!("failed: {e}"),
        (None, None) => "no figure".into(),
    };
    let _ = writeln!(o, "  {} -> {}  {what}", host(doc, f.client), host(doc, f.server));
}

/// One split, its flows at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    pub index: usize,
    pub halves: [Vec<usize>; 2],
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<usize>,
    #[serde(flatten)]
    pub group: Group,
    /// `aggregate` over what its flows' NICs could carry (`--expect`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
}

/// One receiver's incast.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IncastSummary {
    pub receiver: usize,
    /// The step of every sender at once.
    pub index: usize,
    /// One sender alone into the receiver, just before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single: Option<Group>,
    /// Every sender at once.
    #[serde(flatten)]
    pub group: Group,
    /// The aggregate over the lone sender's figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against_single: Option<f64>,
    /// Jain's fairness index over the measured senders: 1 when every one
    /// had the same share, 1/n when one had all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain: Option<f64>,
    /// The aggregate over what the receiver's NIC could take (`--expect`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Senders below the outlier fraction of the median sender.
    pub starved: Vec<usize>,
}

/// One phase: every rank to the rank `shift` places on, at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub index: usize,
    pub shift: usize,
    #[serde(flatten)]
    pub group: Group,
    /// Its slowest measured flow, [client, server].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<[usize; 2]>,
}

/// One rank's flows each way, all phases together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSides {
    pub rank: usize,
    /// The median figure of its flows as sender, and as receiver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive: Option<f64>,
    /// Below the outlier fraction of the median rank's, that way.
    pub slow_send: bool,
    pub slow_receive: bool,
}

/// The whole all-to-all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AllToAllSummary {
    /// The phases' aggregates' mean (phases that measured a flow).
    pub mean_aggregate: f64,
    /// The phase (its index) with the lowest aggregate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weakest_phase: Option<usize>,
    /// The slowest flow of all, and the phase it was in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<Flow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest_phase: Option<usize>,
    pub ranks: Vec<RankSides>,
}

/// The victim's test in one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VictimFigures {
    /// The step it ran beside (None: alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The step as the run named it ("split 1", "incast into rank 3").
    pub step: String,
    /// Its figure (µs or MB/s), when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// A latency victim's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<LatFigures>,
    /// Loaded over alone: the figure's ratio, and a latency victim's
    /// p50, p99 and p99.9 ratios.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratios: Option<[f64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VictimSummary {
    pub client: usize,
    pub server: usize,
    /// What the victim ran ("write-lat 8 B").
    pub metric: Metric,
    pub alone: Option<VictimFigures>,
    pub loaded: Vec<VictimFigures>,
    /// The loaded step that hurt it most (its index): the highest p99
    /// ratio, or the lowest bandwidth ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<usize>,
}

/// The header's count of who ran: "8 nodes" when each rank is a node of
/// its own, "4 ranks on 1 node" when some share one, "4 ranks" when not
/// every rank said its host.
pub(crate) fn ranks_and_nodes(nodes: &[fabdiag_sweep_plan::Node]) -> String {
    let n = nodes.len();
    let hosts: Option<std::collections::BTreeSet<&str>> = nodes.iter().map(|x| x.host.as_deref()).collect();
    match hosts.map(|h| h.len()) {
        Some(h) if h == n => format!("{n} nodes"),
        Some(1) => format!("{n} ranks on 1 node"),
        Some(h) => format!("{n} ranks on {h} nodes"),
        None => format!("{n} ranks"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks on one host are not nodes: the header counts both as they are.
    #[test]
    fn the_header_counts_ranks_and_nodes_as_they_are() {
        let on = |hosts: &[Option<&str>]| {
            let nodes: Vec<fabdiag_sweep_plan::Node> = hosts
                .iter()
                .enumerate()
                .map(|(rank, h)| fabdiag_sweep_plan::Node {
                    host: h.map(str::to_string),
                    ..fabdiag_sweep_plan::Node::awaited(rank)
                })
                .collect();
            ranks_and_nodes(&nodes)
        };
        assert_eq!(on(&[Some("a"), Some("b"), Some("c")]), "3 nodes");
        assert_eq!(on(&[Some("a"); 4]), "4 ranks on 1 node");
        assert_eq!(on(&[Some("a"), Some("a"), Some("b"), Some("b")]), "4 ranks on 2 nodes");
        assert_eq!(on(&[Some("a"), None]), "2 ranks");
    }
}
