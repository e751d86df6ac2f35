//! The sweep's result as a person and a script read it: `SweepDoc` (the
//! schema-versioned JSON document: nodes, matrix, every pair, re-tests,
//! analysis, thresholds, overhead) and its one-page text summary. Pure
//! functions of a finished sweep: no I/O, no exit codes (the binary maps
//! `Verdict` to one).

use crate::analysis::{Analysis, Better, Matrix, NodeRule, Rules};
use crate::baseline::{self, AbsentNode, Baseline, Comparison, LinkChange, NodeChange};
use crate::coordinator::{first_records, Coordinated, Node, NodeStatus, PairRecord, StepKind, StepRecord};
use crate::schedule::Schedule;
use fabdiag_engine::lat::LatFigure;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

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
    pub fn of(spec: &fabdiag_session::TestSpec, figure: LatFigure) -> Metric {
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
            better: crate::runner::better(spec),
            test,
        }
    }

    /// The figure a sweep's options say its latency pairs were judged by
    /// (`options.figure`; the mean when it is not there).
    pub fn figure_in(options: &serde_json::Value) -> LatFigure {
        options["figure"]
            .as_str()
            .and_then(LatFigure::parse)
            .unwrap_or_default()
    }
}

/// Pass/fail limits on every pair (in the metric's unit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub min_bw_mb_s: Option<f64>,
    pub max_lat_us: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSummary {
    #[serde(flatten)]
    pub node: Node,
    pub median: Option<f64>,
    pub pairs_measured: usize,
    pub pairs_failed: usize,
    pub slow: bool,
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
    #[serde(default = "crate::schedule::one_rail")]
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
}

/// The ranks whose nodes the verdict names: `Verdict::suspect_hosts`
/// are their hosts (a rank that never joined has none).
fn suspect_ranks(v: &Verdict, slow: &HashSet<usize>, regressed: &[NodeChange]) -> BTreeSet<usize> {
    if v.all_others_lost {
        return BTreeSet::from([0]);
    }
    slow.iter()
        .copied()
        .chain(v.lost_nodes.iter().copied())
        .chain(regressed.iter().map(|x| x.rank))
        .chain(v.threshold_nodes.iter().copied())
        .collect()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the report and the page say of a slow rail.
pub(crate) const SLOW_RAIL: &str = "slow rail, suspect what its ranks share (its switches and cables)";

/// What the report says when rank 0 lost every other rank.
pub(crate) const ALL_OTHERS_LOST: &str =
    "rank 0 lost every other rank: suspect rank 0's own node or link first (each rank's stderr says what it saw)";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepDoc {
    pub schema: String,
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
    pub options: serde_json::Value,
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
}

pub struct Inputs<'a> {
    /// Taken, not borrowed: its pair records move into the document (a
    /// copy of them would double the memory of a big sweep).
    pub sweep: Coordinated,
    pub metric: Metric,
    pub rules: Rules,
    pub limits: Limits,
    pub options: serde_json::Value,
    pub fabdiag_version: &'a str,
    pub libfabric_version: Option<String>,
    /// An earlier sweep to compare with, and `--baseline-fraction`.
    pub baseline: Option<(&'a Baseline, f64)>,
}

impl Limits {
    /// The limit on a metric where `better` wins: a floor on bandwidth or
    /// a ceiling on latency, with its word and flag ("at least", "--min-bw").
    fn applicable(&self, better: Better) -> Option<(f64, &'static str, &'static str)> {
        match better {
            Better::Higher => self.min_bw_mb_s.map(|m| (m, "at least", "--min-bw")),
            Better::Lower => self.max_lat_us.map(|m| (m, "at most", "--max-lat")),
        }
    }
}

fn misses(limits: &Limits, better: Better, v: f64) -> bool {
    limits.applicable(better).is_some_and(|(m, _, _)| match better {
        Better::Higher => v < m,
        Better::Lower => v > m,
    })
}

pub fn build(i: Inputs<'_>) -> SweepDoc {
    let s = &i.sweep;
    let n = s.nodes.len();
    let better = i.metric.better;
    // one matrix for the analysis and the document (N² cells)
    let m = s.matrix();
    let mut an = Analysis::of(&m, better, i.rules);
    // each re-tested pair's and each slow link's figure in the sweep, in
    // one pass over the pairs
    let keys = s.retests.iter().map(|r| (r.a, r.b));
    let firsts = first_records(&s.pairs, keys.chain(an.slow_links.iter().map(|f| (f.a, f.b))));
    let retests = s
        .retests
        .iter()
        .map(|r| {
            let first = firsts.get(&(r.a, r.b)).and_then(|p| p.value);
            let node = an
                .slow_nodes
                .iter()
                .find(|f| f.node == r.a || f.node == r.b)
                .map(|f| f.node);
            // (always one in the sweep that chose it; a report made again
            // with other rules may find it no suspect)
            let suspect = node.is_some() || an.slow_links.iter().any(|f| (f.a, f.b) == (r.a, r.b));
            let bad = r.value.is_none_or(|v| match node {
                Some(_) => an.is_low(v),
                None => an.is_outlier(v),
            });
            Retest {
                a: r.a,
                b: r.b,
                node,
                first,
                alone: r.value,
                error: r.error.as_deref().map(str::to_string),
                verdict: if !suspect {
                    RetestVerdict::NotSuspect
                } else if bad {
                    RetestVerdict::Confirmed
                } else {
                    RetestVerdict::Cleared
                },
            }
        })
        .collect::<Vec<_>>();
    // a cleared re-test takes its node or link off the slow lists
    let cleared: Vec<&Retest> = retests.iter().filter(|r| r.verdict == RetestVerdict::Cleared).collect();
    an.slow_nodes
        .retain(|f| !cleared.iter().any(|r| r.node == Some(f.node)));
    an.slow_links
        .retain(|f| !cleared.iter().any(|r| r.node.is_none() && (r.a, r.b) == (f.a, f.b)));
    // each slow link's figure as measured: the analysis works in f32, and
    // its 207466.89 printed beside the pair's own 207466.88 read as two
    // measurements
    for f in &mut an.slow_links {
        if let Some(v) = firsts.get(&(f.a, f.b)).and_then(|p| p.value) {
            f.value = v;
        }
    }
    let slow: HashSet<usize> = an.slow_nodes.iter().map(|f| f.node).collect();
    // every node's measured and failed pairs, counted in one pass (a scan
    // of all pairs per node took 2 s at 1,000 nodes, and grows as N³)
    // (ranks are 0..n: the coordinator refuses any other)
    let mut counts = vec![(0usize, 0usize); n];
    for p in &s.pairs {
        for rank in [p.a, p.b] {
            if let Some(c) = counts.get_mut(rank) {
                if p.value.is_some() {
                    c.0 += 1;
                } else {
                    c.1 += 1;
                }
            }
        }
    }
    let nodes: Vec<NodeSummary> = s
        .nodes
        .iter()
        .map(|node| {
            let (ok, failed) = counts.get(node.rank).copied().unwrap_or_default();
            NodeSummary {
                node: node.clone(),
                median: an.node_medians.get(node.rank).copied().flatten(),
                pairs_measured: ok,
                pairs_failed: failed,
                slow: slow.contains(&node.rank),
            }
        })
        .collect();
    let compared = i
        .baseline
        .map(|(b, fraction)| baseline::compare(b, &s.nodes, &m, better, fraction, an.rules.node_fraction));
    let sched = Schedule::on_rails(n, s.rails).ok();
    let rails = sched.map_or_else(Vec::new, |x| rail_summaries(&m, &x, &slow, an.rules.node_fraction));
    let all_rounds: Vec<&StepRecord> = s.steps.iter().filter(|x| x.kind == StepKind::Round).collect();
    let first_round_s = all_rounds.first().map_or(0.0, |x| x.overhead_s);
    let rounds: Vec<&StepRecord> = all_rounds.iter().skip(1).copied().collect();
    let mean = |f: &dyn Fn(&StepRecord) -> f64| {
        if rounds.is_empty() {
            0.0
        } else {
            rounds.iter().map(|x| f(x)).sum::<f64>() / rounds.len() as f64
        }
    };
    let overhead = Overhead {
        join_s: s.join_s,
        first_round_s,
        round_mean_s: mean(&|x| x.overhead_s),
        round_max_s: rounds.iter().map(|x| x.overhead_s).fold(0.0, f64::max),
        coordinator_mean_s: mean(&|x| x.coordinator_busy_s),
        endpoint_opens: s.nodes.iter().map(|x| x.endpoint_opens).sum(),
        endpoint_open_s: s.nodes.iter().map(|x| x.endpoint_open_s).sum(),
        steps: s.steps.clone(),
    };
    let threshold_pairs: Vec<(usize, usize)> = s
        .pairs
        .iter()
        .filter(|p| p.value.is_some_and(|v| misses(&i.limits, better, v)))
        .map(|p| (p.a, p.b))
        .collect();
    let threshold_nodes = nodes
        .iter()
        .filter(|x| x.median.is_some_and(|v| misses(&i.limits, better, v)))
        .map(|x| x.node.rank)
        .collect();
    let verdict = Verdict {
        failed_pairs: s.pairs.iter().filter(|p| p.error.is_some() && !p.untested).count(),
        untested_pairs: s.pairs.iter().filter(|p| p.untested).count(),
        lost_nodes: s
            .nodes
            .iter()
            .filter(|x| x.status != NodeStatus::Ok)
            .map(|x| x.rank)
            .collect(),
        threshold_pairs,
        threshold_nodes,
        slow_links: an.slow_links.len(),
        slow_nodes: an.slow_nodes.len(),
        slow_rails: rails.iter().filter(|r| r.slow).map(|r| r.rail).collect(),
        all_others_lost: n > 2 && s.nodes.iter().skip(1).all(|x| x.status == NodeStatus::Lost),
        regressed_links: compared.as_ref().map_or(0, |c| c.links.len()),
        regressed_nodes: compared.as_ref().map_or(0, |c| c.nodes.len()),
        fabric_regressed: compared.as_ref().is_some_and(|c| c.fabric_regressed),
        suspect_hosts: Vec::new(),
    };
    let regressed = compared.as_ref().map_or(&[][..], |c| &c.nodes[..]);
    let hosts: BTreeSet<&str> = suspect_ranks(&verdict, &slow, regressed)
        .into_iter()
        .filter_map(|r| s.nodes.get(r).and_then(|x| x.host.as_deref()))
        .collect();
    let verdict = Verdict {
        suspect_hosts: hosts.into_iter().map(str::to_string).collect(),
        ..verdict
    };
    let rail_count = s.rails;
    let (started, ended) = (s.started, s.ended);
    let Coordinated { pairs, stopped, .. } = i.sweep;
    SweepDoc {
        schema: SCHEMA.into(),
        fabdiag_version: i.fabdiag_version.into(),
        libfabric_version: i.libfabric_version,
        options: i.options,
        metric: i.metric,
        started: humantime::format_rfc3339_millis(started).to_string(),
        ended: humantime::format_rfc3339_millis(ended).to_string(),
        schedule: ScheduleSummary {
            rails: rail_count,
            rounds: sched.map_or(0, |x| x.rounds()),
            pairs_per_round: sched.map_or(0, |x| x.pairs_per_round()),
            total_pairs: sched.map_or(0, |x| x.total_pairs()),
        },
        nodes,
        rails,
        matrix: m,
        pairs,
        retests,
        analysis: an,
        limits: i.limits,
        overhead,
        verdict,
        baseline: compared,
        stopped,
    }
}

/// Every rank's name, made once per document: whether a host name is
/// shared depends on all the nodes, so naming rank by rank would scan them
/// all each time (N² for the node tables at thousands of ranks).
pub(crate) struct Names(Vec<String>);

impl Names {
    pub(crate) fn new(doc: &SweepDoc) -> Self {
        let mut ranks_on: HashMap<&str, usize> = HashMap::new();
        for h in doc.nodes.iter().filter_map(|x| x.node.host.as_deref()) {
            *ranks_on.entry(h).or_default() += 1;
        }
        let shared = |h: &str| ranks_on.get(h).is_some_and(|&n| n > 1);
        Names(doc.nodes.iter().map(|x| name_of(&x.node, shared)).collect())
    }

    /// "rank 3 (host cxi1 GPU 1)"; "rank 9" for a rank the document lacks.
    pub(crate) fn of(&self, rank: usize) -> Cow<'_, str> {
        match self.0.get(rank) {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(format!("rank {rank}")),
        }
    }
}

/// "rank 3 (host)", with its NIC when it chose one, else with the address
/// when the host name is `shared` (several ranks on a node, or network
/// namespaces); then its GPU when its buffers are on one
/// ("rank 3 (host cxi1 GPU 1)").
fn name_of(node: &Node, shared: impl Fn(&str) -> bool) -> String {
    let rank = node.rank;
    let Some(h) = node.host.as_deref() else {
        return format!("rank {rank}");
    };
    let mut parts = vec![h];
    if let Some(d) = node.device.as_deref() {
        parts.push(d);
    } else if let Some((ip, _)) = node
        .addr
        .as_deref()
        .and_then(|a| a.rsplit_once(':'))
        .filter(|_| shared(h))
    {
        parts.push(ip);
    }
    if let Some(g) = node.gpu.as_deref() {
        parts.push(g);
    }
    format!("rank {rank} ({})", parts.join(" "))
}

/// What the sweep cost beyond its measurements, in one line.
pub(crate) fn overhead_line(doc: &SweepDoc) -> String {
    let ov = &doc.overhead;
    if ov.steps.is_empty() {
        // (stopped during the join, or made from pairs.jsonl, which keeps
        // no timing beyond each pair's)
        return "none recorded (no round's timing)".into();
    }
    format!(
        "join {:.2} s; first round {:.0} ms beyond the measurement (endpoints opened), later rounds {:.1} ms mean, {:.1} ms max; coordinator {:.3} ms per round; {} endpoint opens ({:.2} s)",
        ov.join_s,
        ov.first_round_s * 1e3,
        ov.round_mean_s * 1e3,
        ov.round_max_s * 1e3,
        ov.coordinator_mean_s * 1e3,
        ov.endpoint_opens,
        ov.endpoint_open_s
    )
}

/// The re-test of the slow link (a, b), if it had one.
pub(crate) fn retest_for(doc: &SweepDoc, a: usize, b: usize) -> Option<&Retest> {
    doc.retests.iter().find(|r| r.node.is_none() && (r.a, r.b) == (a, b))
}

/// The re-test of the slow node `node`, if it had one, and its partner.
pub(crate) fn retest_of_node(doc: &SweepDoc, node: usize) -> Option<(usize, &Retest)> {
    doc.retests
        .iter()
        .find_map(|r| r.node_and_partner().filter(|&(x, _)| x == node).map(|(_, p)| (p, r)))
}

/// What a re-test re-tested: "rank 6 (node6), with rank 3 (node3)" for a
/// slow node, "rank 2 (node2) <-> rank 5 (node5)" for a link (`between`
/// is the arrow); `name` names a rank.
pub(crate) fn retested(r: &Retest, name: impl Fn(usize) -> String, between: &str) -> String {
    match r.node_and_partner() {
        Some((x, partner)) => format!("{}, with {}", name(x), name(partner)),
        None => format!("{}{between}{}", name(r.a), name(r.b)),
    }
}

/// The outlier and slow-node rules in one sentence, as the text and the
/// page say them.
pub(crate) fn rules(an: &Analysis) -> String {
    let r = &an.rules;
    format!(
        "a pair is an outlier below {fraction} of the {reference} and more than {} scaled MADs from the median; \
         a node is slow when over {nodes} of its pairs are, or when it has {} pairs or more, over {nodes} of them \
         below {fraction} of the {reference} and their median more than {} MADs out as a median",
        r.z,
        crate::analysis::MEDIAN_RULE_MIN_PAIRS,
        r.median_z(),
        fraction = r.fraction,
        reference = r.reference.name(),
        nodes = r.node_fraction,
    )
}

/// A link's figure as a fraction of the median or the best: two decimals,
/// or two significant digits below 0.01, so a link hundreds of times
/// worse (a lossy link's latency) reads 0.0025, not 0.00.
pub(crate) fn fraction(x: f64) -> String {
    if x >= 0.01 || x <= 0.0 || !x.is_finite() {
        format!("{x:.2}")
    } else {
        let decimals = (1.0 - x.log10().floor()).min(12.0) as usize;
        format!("{x:.decimals$}")
    }
}

/// The pairs not tested, counted by reason ("rank 3 ... was lost in round
/// 2"), in the order the reasons first appear.
pub(crate) fn untested_by_reason(doc: &SweepDoc) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for p in doc.pairs.iter().filter(|p| p.untested) {
        let why = p.error.as_deref().unwrap_or("unknown");
        let why = why.strip_prefix("not tested: ").unwrap_or(why);
        match at.get(why) {
            Some(&i) => out[i].1 += 1,
            None => {
                at.insert(why, out.len());
                out.push((why, 1));
            }
        }
    }
    out
}

/// "alone 0.60: confirmed", as the text and the page say a re-test.
pub(crate) fn alone(r: &Retest) -> String {
    let verdict = match r.verdict {
        RetestVerdict::Confirmed => "confirmed",
        RetestVerdict::Cleared => "cleared",
        RetestVerdict::NotSuspect => "no suspect under these rules",
    };
    match r.alone {
        Some(v) => format!("alone {v:.2}: {verdict}"),
        None => format!("alone: failed, {verdict}"),
    }
}

/// Each rail's ranks (g, g+K, ...), its slow ones, and the median of the
/// pairs among them (only those were paired); none when every pair was.
fn rail_summaries(m: &Matrix, sched: &Schedule, slow: &HashSet<usize>, node_fraction: f64) -> Vec<RailSummary> {
    if sched.rails() < 2 {
        return Vec::new();
    }
    (0..sched.rails())
        .map(|g| {
            let ranks: Vec<usize> = sched.rail(g).collect();
            let mut vals: Vec<f64> = ranks
                .iter()
                .enumerate()
                .flat_map(|(i, &a)| ranks[i + 1..].iter().filter_map(move |&b| m.get(a, b)))
                .collect();
            let slow_ranks = ranks.iter().filter(|x| slow.contains(x)).count();
            RailSummary {
                rail: g,
                ranks: ranks.len(),
                slow_ranks,
                median: (!vals.is_empty()).then(|| crate::analysis::median(&mut vals)),
                slow: slow_ranks as f64 > node_fraction * ranks.len() as f64,
            }
        })
        .collect()
}

/// " on 4 rails (rank mod 4)" when only ranks of one rail are paired;
/// nothing when every pair is (the text, the page, the heatmap and
/// `--plan` say it alike).
pub fn rails_note(rails: usize) -> String {
    if rails > 1 {
        format!(" on {rails} rails (rank mod {rails})")
    } else {
        String::new()
    }
}

/// "report made again from DIR/sweep.json (--report): nothing was run
/// for it", when it was (`options.report_from`), and which fabdiag made
/// it when that is not the one that measured.
pub(crate) fn remade_from(doc: &SweepDoc) -> Option<String> {
    let from = doc.options.get("report_from")?.as_str()?;
    let maker = doc.options.get("report_fabdiag_version").and_then(|v| v.as_str());
    let versions = match maker {
        Some(m) if m != doc.fabdiag_version => {
            format!("; made by fabdiag {m}, measured by fabdiag {}", doc.fabdiag_version)
        }
        _ => String::new(),
    };
    Some(format!(
        "report made again from {from} (--report): nothing was run for it{versions}"
    ))
}

/// What a list in the text summary shows before "... and N more".
const LISTED: usize = 20;

/// "title: none", or the title and its lines indented under it.
fn section(o: &mut String, title: &str, lines: Vec<String>) {
    if lines.is_empty() {
        let _ = writeln!(o, "{title}: none");
    } else {
        let _ = writeln!(o, "{title}:");
        for l in lines {
            let _ = writeln!(o, "  {l}");
        }
    }
}

/// The first `LISTED` of the `total` lines `items` makes (made only for
/// those: a list may have millions), then `more(n)` for the n left out.
fn first_listed(items: impl Iterator<Item = String>, total: usize, more: impl Fn(usize) -> String) -> Vec<String> {
    let mut lines: Vec<String> = items.take(LISTED).collect();
    if total > LISTED {
        lines.push(more(total - LISTED));
    }
    lines
}

/// The sweep's threshold, when it has one: "at least 5000.00 MB/s for every
/// pair and node (--min-bw)".
pub(crate) fn threshold(doc: &SweepDoc) -> Option<String> {
    let (limit, word, flag) = doc.limits.applicable(doc.metric.better)?;
    Some(format!(
        "{word} {limit:.2} {} for every pair and node ({flag})",
        doc.metric.unit
    ))
}

/// "1 pair", "3 pairs".
pub(crate) fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// "3 pairs and 1 node": who missed the threshold.
pub(crate) fn threshold_missed(v: &Verdict) -> String {
    format!(
        "{} and {}",
        count(v.threshold_pairs.len(), "pair"),
        count(v.threshold_nodes.len(), "node")
    )
}

/// `--min-bw`/`--max-lat` in the text summary: the limit, how many pairs
/// and nodes missed it, and those nodes with their medians.
fn threshold_text(o: &mut String, doc: &SweepDoc, names: &Names) {
    let Some(limit) = threshold(doc) else { return };
    let v = &doc.verdict;
    let _ = writeln!(o, "thresholds: {limit}: {} missed it", threshold_missed(v));
    let nodes = v.threshold_nodes.iter().map(|&r| {
        let median = doc.nodes.get(r).and_then(|n| n.median);
        match median {
            Some(m) => format!("{}: median {m:.2} {}", names.of(r), doc.metric.unit),
            None => names.of(r).to_string(),
        }
    });
    for l in first_listed(nodes, v.threshold_nodes.len(), |n| format!("... and {n} more nodes")) {
        let _ = writeln!(o, "  {l}");
    }
}

/// This sweep against its baseline, in the text summary.
fn baseline_text(o: &mut String, c: &Comparison, names: &Names, unit: &str) {
    let _ = writeln!(o, "baseline: {}", baseline_line(c));
    if c.fabric_regressed {
        let _ = writeln!(o, "  {}", fabric_regressed(c));
    }
    if c.compared_pairs > 0 {
        let nodes = c.nodes.iter().map(|x| node_change(x, &names.of(x.rank))).collect();
        section(o, "regressed nodes", nodes);
        let links = c
            .links
            .iter()
            .map(|x| format!("{} <-> {}: {}", names.of(x.a), names.of(x.b), link_change(x, unit)));
        let links = first_listed(links, c.links.len(), |n| {
            format!("... and {n} more (sweep.json has every one)")
        });
        section(o, "regressed links", links);
    }
    let new = c.new_nodes.iter().map(|&r| names.of(r).into_owned());
    let new = first_listed(new, c.new_nodes.len(), |n| format!("and {n} more"));
    if !new.is_empty() {
        let _ = writeln!(o, "not in the baseline: {}", new.join(", "));
    }
    let gone = first_listed(c.absent_nodes.iter().map(absent), c.absent_nodes.len(), |n| {
        format!("and {n} more")
    });
    if !gone.is_empty() {
        let _ = writeln!(o, "in the baseline, not in this sweep: {}", gone.join(", "));
    }
}

/// "base/sweep.json (started ..., fabdiag 0.1.0): 28 pairs compared, their
/// median 0.98 of the baseline; a pair has regressed below 0.80 of its
/// baseline figure, a node when over 0.5 of its pairs have", as the text
/// and the page say it.
pub(crate) fn baseline_line(c: &Comparison) -> String {
    let from = format!("{} (started {}, fabdiag {})", c.file, c.started, c.fabdiag_version);
    let Some(med) = c.median.filter(|_| c.compared_pairs > 0) else {
        return format!(
            "{from}: no pair of this sweep was measured there (its nodes are named by host, NIC and GPU; none of this sweep's pairs matched one with a figure)"
        );
    };
    let limit = if c.limit < c.fraction {
        format!(
            "{:.2} of its baseline figure ({} times their median, under 1)",
            c.limit, c.fraction
        )
    } else {
        format!("{} of its baseline figure", c.fraction)
    };
    format!(
        "{from}: {} pairs compared, their median {:.2} of their baseline figures; a pair has regressed below {limit}, a node when over {} of its pairs have",
        c.compared_pairs, med, c.node_fraction
    )
}

/// What the report says when the fabric as a whole is slower than its
/// baseline.
pub(crate) fn fabric_regressed(c: &Comparison) -> String {
    format!(
        "the fabric as a whole is at {:.2} of its baseline: suspect what every pair shares (the provider and its settings, the software stack, the switches' configuration)",
        c.median.unwrap_or(0.0)
    )
}

/// "0.12 of its baseline (median), 7 of 7 pairs regressed; rank 4 there".
pub(crate) fn node_change(x: &NodeChange, name: &str) -> String {
    format!(
        "{name}: {} of its baseline (median), {} of {} pairs regressed; rank {} in the baseline",
        fraction(x.of_baseline),
        x.regressed_pairs,
        x.compared_pairs,
        x.baseline_rank
    )
}

/// "4.80 MB/s against 9.70 in the baseline (0.49)".
pub(crate) fn link_change(x: &LinkChange, unit: &str) -> String {
    format!(
        "{:.2} {unit} against {:.2} in the baseline ({})",
        x.value,
        x.baseline,
        fraction(x.of_baseline)
    )
}

/// "node8 cxi1 (rank 7 in the baseline)".
pub(crate) fn absent(x: &AbsentNode) -> String {
    format!("{} (rank {} in the baseline)", x.name, x.baseline_rank)
}

/// The one-page text summary.
pub fn text(doc: &SweepDoc) -> String {
    let mut o = String::new();
    let names = Names::new(doc);
    let u = &doc.metric.unit;
    let an = &doc.analysis;
    let reference = an.rules.reference.name();
    let better = match doc.metric.better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    let _ = writeln!(
        o,
        "fabdiag sweep: {} nodes, {} pairs{} in {} rounds, {} ({u}, {better})",
        doc.nodes.len(),
        doc.schedule.total_pairs,
        rails_note(doc.schedule.rails),
        doc.schedule.rounds,
        doc.metric.test
    );
    if let Some(from) = remade_from(doc) {
        let _ = writeln!(o, "{from}");
    }
    if let Some(why) = &doc.stopped {
        let _ = writeln!(
            o,
            "stopped by {why}: the pairs of the rounds left were not tested; this report covers the rest"
        );
    }
    let measured = doc.pairs.iter().filter(|p| p.value.is_some()).count();
    let _ = writeln!(
        o,
        "pairs: {measured} measured, {} failed, {} not tested; median {:.2} {u}, best {:.2}, worst {:.2}",
        doc.verdict.failed_pairs, doc.verdict.untested_pairs, an.stats.median, an.stats.best, an.stats.worst
    );
    let _ = writeln!(o, "rules: {}", rules(an));
    section(
        &mut o,
        "slow nodes",
        an.slow_nodes
            .iter()
            .map(|f| {
                let why = match f.rule {
                    NodeRule::Pairs => format!("{} of {} pairs slow", f.outlier_pairs, f.measured_pairs),
                    NodeRule::Median => format!(
                        "{} of {} pairs below {} of the {reference} ({} slow), their median {:.1} MADs out",
                        f.low_pairs, f.measured_pairs, an.rules.fraction, f.outlier_pairs, f.median_score
                    ),
                };
                let re = retest_of_node(doc, f.node)
                    .map(|(partner, r)| format!("; with {}, {}", names.of(partner), alone(r)))
                    .unwrap_or_default();
                format!("{}: median {:.2} {u}, {why}{re}", names.of(f.node), f.median)
            })
            .collect(),
    );
    section(
        &mut o,
        "slow links",
        an.slow_links
            .iter()
            .map(|f| {
                let re = retest_for(doc, f.a, f.b)
                    .map(|r| format!("; {}", alone(r)))
                    .unwrap_or_default();
                format!(
                    "{} <-> {}: {:.2} {u} ({} of median, {} of best, score {:.1}){re}",
                    names.of(f.a),
                    names.of(f.b),
                    f.value,
                    fraction(f.of_median),
                    fraction(f.of_best),
                    f.score
                )
            })
            .collect(),
    );
    if !doc.rails.is_empty() {
        section(
            &mut o,
            "rails",
            doc.rails
                .iter()
                .map(|r| {
                    let v = r.median.map_or("-".to_string(), |v| format!("{v:.2} {u}"));
                    let flag = if r.slow {
                        format!(": {SLOW_RAIL}")
                    } else {
                        String::new()
                    };
                    format!(
                        "rail {}: median {v}, {} of {} ranks slow{flag}",
                        r.rail, r.slow_ranks, r.ranks
                    )
                })
                .collect(),
        );
    }
    if let Some(c) = &doc.baseline {
        baseline_text(&mut o, c, &names, u);
    }
    let cleared: Vec<String> = doc
        .retests
        .iter()
        .filter(|r| r.verdict == RetestVerdict::Cleared)
        .map(|r| {
            format!(
                "{}: {:.2} in the sweep, {:.2} alone",
                retested(r, |x| names.of(x).into_owned(), " <-> "),
                r.first.unwrap_or(0.0),
                r.alone.unwrap_or(0.0)
            )
        })
        .collect();
    if !cleared.is_empty() {
        section(&mut o, "cleared by re-test", cleared);
    }
    let mut lost: Vec<String> = doc
        .nodes
        .iter()
        .filter(|x| x.node.status != NodeStatus::Ok)
        .map(|x| {
            format!(
                "{}: {}",
                names.of(x.node.rank),
                x.node.reason.as_deref().unwrap_or("unknown")
            )
        })
        .collect();
    if doc.verdict.all_others_lost {
        lost.push(ALL_OTHERS_LOST.into());
    }
    section(&mut o, "missing or lost nodes", lost);
    // pairs that ran and failed, one by one up to a page's worth; pairs
    // not tested, by reason (a node lost at 1,000 ranks leaves 999 of
    // them, which would hide every real failure behind one cause)
    let failed: Vec<&PairRecord> = doc.pairs.iter().filter(|p| p.error.is_some() && !p.untested).collect();
    let lines = failed.iter().map(|p| {
        format!(
            "{} <-> {}: {}",
            names.of(p.a),
            names.of(p.b),
            p.error.as_deref().unwrap_or("")
        )
    });
    let lines = first_listed(lines, failed.len(), |n| {
        format!("... and {n} more (sweep.json has every one)")
    });
    section(&mut o, "failed pairs", lines);
    let untested = untested_by_reason(doc);
    if !untested.is_empty() {
        let lines = untested
            .iter()
            .map(|(why, n)| format!("{n} {}: {why}", if *n == 1 { "pair" } else { "pairs" }));
        let lines = first_listed(lines, untested.len(), |n| {
            format!("... and {n} more reasons (sweep.json)")
        });
        section(&mut o, "not tested", lines);
    }
    // the five worst in one pass, not a sort of every pair (millions of
    // them at thousands of ranks); ties in pair order, so the list is stable
    let worst_first = |p: &&PairRecord, q: &&PairRecord| {
        doc.metric
            .better
            .worse_first(p.value.unwrap_or(0.0), q.value.unwrap_or(0.0))
            .then((p.a, p.b).cmp(&(q.a, q.b)))
    };
    let mut order: Vec<&PairRecord> = Vec::with_capacity(6);
    for p in doc.pairs.iter().filter(|p| p.value.is_some()) {
        let at = order.partition_point(|q| worst_first(q, &p).is_lt());
        if at < 5 {
            order.insert(at, p);
            order.truncate(5);
        }
    }
    section(
        &mut o,
        "slowest pairs",
        order
            .iter()
            .map(|p| {
                format!(
                    "{} <-> {}: {:.2} {u}",
                    names.of(p.a),
                    names.of(p.b),
                    p.value.unwrap_or(0.0)
                )
            })
            .collect(),
    );
    threshold_text(&mut o, doc, &names);
    if doc.nodes.len() <= 64 {
        let _ = writeln!(o, "node medians ({u}):");
        // one column for the names, however long (NIC, address, GPU)
        let w = names.0.iter().map(String::len).max().unwrap_or(0).max(28);
        for (x, n) in doc.nodes.iter().zip(&names.0) {
            let v = x.median.map_or("-".to_string(), |v| format!("{v:.2}"));
            let flag = if x.slow { "  slow" } else { "" };
            let _ = writeln!(o, "  {n:<w$} {v:>12}{flag}");
        }
    }
    let _ = writeln!(o, "{}", suspects_line(doc));
    let _ = writeln!(o, "overhead: {}", overhead_line(doc));
    o
}

/// "hosts to look at: node005,node007", comma-separated as `scontrol`
/// takes them, and the ranks named that never joined (no host known).
pub(crate) fn suspects_line(doc: &SweepDoc) -> String {
    let v = &doc.verdict;
    let hosts = if v.suspect_hosts.is_empty() {
        "none".to_string()
    } else {
        v.suspect_hosts.join(",")
    };
    let unnamed = if v.all_others_lost {
        0
    } else {
        doc.nodes
            .iter()
            .filter(|x| x.node.host.is_none() && x.node.status != NodeStatus::Ok)
            .count()
    };
    match unnamed {
        0 => format!("hosts to look at: {hosts}"),
        n => format!(
            "hosts to look at: {hosts}; and {} that never joined (no host known)",
            count(n, "rank")
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::Reference;
    use crate::coordinator::{Node, NodeStatus};
    use crate::schedule::Pair;

    /// A finished bandwidth sweep of `n` ranks: every pair at 100 MB/s
    /// except `values`; `failed` pairs ran and failed; `missing` ranks never
    /// joined (their pairs untested).
    pub(crate) fn doc_with(
        n: usize,
        values: &[((usize, usize), f64)],
        failed: &[(usize, usize)],
        missing: &[usize],
    ) -> SweepDoc {
        doc_of(&sweep_with(n, values, failed, missing))
    }

    pub(crate) fn sweep_with(
        n: usize,
        values: &[((usize, usize), f64)],
        failed: &[(usize, usize)],
        missing: &[usize],
    ) -> Coordinated {
        let nodes = (0..n)
            .map(|rank| Node {
                host: Some(format!("host<{rank}>")),
                addr: Some(format!("198.18.0.{}:4000", rank % 250)),
                status: if missing.contains(&rank) {
                    NodeStatus::Missing
                } else {
                    NodeStatus::Ok
                },
                reason: missing.contains(&rank).then(|| "never joined".to_string()),
                endpoint_opens: 1,
                endpoint_open_s: 0.01,
                ..Node::awaited(rank)
            })
            .collect();
        let mut pairs = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let untested = missing.contains(&a) || missing.contains(&b);
                let fail = failed.contains(&(a, b));
                let value = values.iter().find(|(p, _)| *p == (a, b)).map_or(100.0, |(_, v)| *v);
                pairs.push(PairRecord {
                    value: (!untested && !fail).then_some(value),
                    error: if untested {
                        Some("rank missing".into())
                    } else if fail {
                        Some("provider error".into())
                    } else {
                        None
                    },
                    untested,
                    elapsed_s: 0.1,
                    measure_s: 0.1,
                    ..PairRecord::planned(&Pair { client: a, server: b }, Some(0))
                });
            }
        }
        Coordinated::of(nodes, pairs)
    }

    /// The lines of the text summary's section `title` ("failed pairs:"),
    /// indented as printed.
    pub(crate) fn section_of<'a>(t: &'a str, title: &str) -> Vec<&'a str> {
        t.lines()
            .skip_while(|l| *l != title)
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .collect()
    }

    fn doc_of(sweep: &Coordinated) -> SweepDoc {
        build_with(sweep.clone(), None)
    }

    /// `sweep`'s document, as a bandwidth sweep of 64 KiB writes, against
    /// `baseline` when given.
    pub(crate) fn build_with(sweep: Coordinated, baseline: Option<(&Baseline, f64)>) -> SweepDoc {
        build(inputs(sweep, baseline))
    }

    /// What `build_with` builds from.
    pub(crate) fn inputs(sweep: Coordinated, baseline: Option<(&Baseline, f64)>) -> Inputs<'_> {
        Inputs {
            sweep,
            metric: Metric {
                name: "bandwidth".into(),
                unit: "MB/s".into(),
                better: Better::Higher,
                test: "write-bw 65536 B".into(),
            },
            rules: Rules {
                fraction: 0.75,
                reference: Reference::Median,
                z: 3.5,
                node_fraction: 0.5,
            },
            limits: Limits::default(),
            options: serde_json::Value::Null,
            fabdiag_version: "test",
            libfabric_version: None,
            baseline,
        }
    }

    #[test]
    fn a_node_named_by_its_median_says_which_rule_and_why() {
        let doc = doc_with(8, &crate::analysis::tests::ci_run(), &[], &[]);
        let t = text(&doc);
        let line = t.lines().find(|l| l.contains("rank 6 ")).unwrap_or_default();
        assert!(
            line.contains(": median 4.70 MB/s, 7 of 7 pairs below 0.75 of the median (3 slow), their median ")
                && line.ends_with(" MADs out"),
            "{t}"
        );
        // the text and the page say the rules in the same words
        let rule = "a node is slow when over 0.5 of its pairs are, or when it has 7 pairs or more, over 0.5 of them below 0.75 of the median and their median more than 5.25 MADs out as a median";
        assert!(t.contains(&format!("{rule}\n")), "{t}");
        // a node named by its pairs keeps its line
        let pairs = doc_with(8, &(1..8).map(|b| ((0, b), 10.0)).collect::<Vec<_>>(), &[], &[]);
        assert!(
            text(&pairs).contains(": median 10.00 MB/s, 7 of 7 pairs slow\n"),
            "{}",
            text(&pairs)
        );
        let html = crate::html::page(&doc, &Default::default());
        assert!(html.contains("<td>its median, "), "{html}");
        assert!(html.contains(&format!("{rule}.</p>")), "{html}");
        assert!(crate::html::page(&pairs, &Default::default()).contains("<td>its slow pairs</td>"));
    }

    #[test]
    fn every_node_counts_its_measured_and_failed_pairs() {
        // 1-3 failed; 4 never joined, so its four pairs are untested
        let doc = doc_with(5, &[], &[(1, 3)], &[4]);
        let counts: Vec<(usize, usize)> = doc.nodes.iter().map(|x| (x.pairs_measured, x.pairs_failed)).collect();
        assert_eq!(counts, [(3, 1), (2, 2), (3, 1), (2, 2), (0, 4)]);
    }

    /// The CI run's sweep with re-tests alone of (a, b) at these figures.
    pub(crate) fn ci_with_retests(alone: &[((usize, usize), Option<f64>)]) -> SweepDoc {
        let mut sweep = sweep_with(8, &crate::analysis::tests::ci_run(), &[], &[]);
        for &((a, b), v) in alone {
            let mut rec = sweep
                .pairs
                .iter()
                .find(|p| (p.a, p.b) == (a, b))
                .expect("a swept pair")
                .clone();
            rec.round = None;
            rec.value = v;
            rec.error = v.is_none().then(|| "peer lost".into());
            sweep.retests.push(rec);
        }
        doc_of(&sweep)
    }

    #[test]
    fn a_slow_node_re_tested_alone_is_confirmed_while_still_low_and_cleared_when_not() {
        // median 51.3: alone at 30 (0.58) the node is still slow; at 45
        // (0.88) it was load, and it leaves the slow list; the link stays
        let still = ci_with_retests(&[((3, 6), Some(30.0)), ((2, 5), Some(2.4))]);
        assert_eq!(
            still.analysis.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(),
            [6]
        );
        assert_eq!(still.retests[0].node, Some(6));
        assert_eq!(still.retests[0].verdict, RetestVerdict::Confirmed);
        assert_eq!(
            (still.retests[1].node, &still.retests[1].verdict),
            (None, &RetestVerdict::Confirmed)
        );
        let t = text(&still);
        assert!(
            t.contains(" MADs out; with rank 3 (host<3>), alone 30.00: confirmed\n"),
            "{t}"
        );
        assert!(
            t.contains("(host<5>): 2.30 MB/s (0.04 of median, 0.02 of best, score 4.5); alone 2.40: confirmed\n"),
            "{t}"
        );
        assert!(crate::html::page(&still, &Default::default())
            .contains("with rank 3 (host&lt;3&gt;), alone 30.00: confirmed"));
        assert_eq!(still.verdict.slow_nodes, 1);

        let load = ci_with_retests(&[((3, 6), Some(45.0))]);
        assert_eq!(load.retests[0].verdict, RetestVerdict::Cleared);
        assert!(load.analysis.slow_nodes.is_empty());
        assert!(load.nodes.iter().all(|x| !x.slow));
        assert_eq!((load.verdict.slow_nodes, load.verdict.slow_links), (0, 1));
        let t = text(&load);
        assert!(t.contains("slow nodes: none\n"), "{t}");
        assert!(
            t.contains("  rank 6 (host<6>), with rank 3 (host<3>): 4.50 in the sweep, 45.00 alone\n"),
            "{t}"
        );

        // a re-test that failed confirms
        let lost = ci_with_retests(&[((3, 6), None)]);
        assert_eq!(lost.retests[0].verdict, RetestVerdict::Confirmed);
        assert!(text(&lost).contains("with rank 3 (host<3>), alone: failed, confirmed"));
    }

    /// When rank 0 loses every other rank, the report points at rank 0;
    /// with one rank still in, or only two ranks, it cannot tell.
    #[test]
    fn losing_every_other_rank_points_at_rank_0() {
        let lose = |n: usize, lost: &[usize]| {
            let mut s = sweep_with(n, &[], &[], &[]);
            for &r in lost {
                s.nodes[r].status = NodeStatus::Lost;
                s.nodes[r].reason = Some("was lost in round 2: connection closed".into());
            }
            doc_of(&s)
        };
        let d = lose(4, &[1, 2, 3]);
        assert!(d.verdict.all_others_lost);
        let t = text(&d);
        assert!(t.contains(&format!("  {ALL_OTHERS_LOST}\n")), "{t}");
        assert!(crate::html::page(&d, &Default::default()).contains("suspect rank 0&#39;s own node"));
        for d in [lose(4, &[1, 3]), lose(2, &[1])] {
            assert!(!d.verdict.all_others_lost);
            assert!(!text(&d).contains(ALL_OTHERS_LOST));
        }
    }

    #[test]
    fn the_hosts_to_look_at_are_those_of_every_node_named_once_each() {
        // 10 ranks, two per host (host<r / 2>): rank 3 slow, rank 5 lost,
        // rank 8 below a threshold, rank 9 never joined and nameless; the
        // slow link 0-6 names no host
        let mut s = sweep_with(10, &[((0, 6), 20.0)], &[], &[9]);
        for x in &mut s.nodes {
            x.host = Some(format!("host<{}>", x.rank / 2));
        }
        s.nodes[9].host = None;
        s.nodes[5].status = NodeStatus::Lost;
        s.nodes[5].reason = Some("was lost in round 4".into());
        for p in s.pairs.iter_mut().filter(|p| p.a == 3 || p.b == 3) {
            p.value = Some(30.0);
        }
        for p in s.pairs.iter_mut().filter(|p| p.a == 8 || p.b == 8) {
            p.value = p.value.map(|_| 90.0);
        }
        let d = build(Inputs {
            limits: Limits {
                min_bw_mb_s: Some(95.0),
                max_lat_us: None,
            },
            ..inputs(s, None)
        });
        assert_eq!(
            d.analysis.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(),
            vec![3]
        );
        assert!(d.verdict.threshold_nodes.contains(&8), "{:?}", d.verdict);
        assert_eq!(d.verdict.suspect_hosts, vec!["host<1>", "host<2>", "host<4>"]);
        assert!(
            text(&d).contains(
                "\nhosts to look at: host<1>,host<2>,host<4>; and 1 rank that never joined (no host known)\n"
            ),
            "{}",
            text(&d)
        );
        // none: said so; rank 0 alone when it lost every other rank
        assert!(text(&doc_with(4, &[], &[], &[])).contains("\nhosts to look at: none\n"));
        let mut s = sweep_with(3, &[], &[], &[]);
        for x in &mut s.nodes[1..] {
            x.status = NodeStatus::Lost;
        }
        assert_eq!(doc_of(&s).verdict.suspect_hosts, vec!["host<0>"]);
    }

    #[test]
    fn fractions_keep_two_significant_digits_when_small() {
        assert_eq!(fraction(0.0625), "0.06");
        assert_eq!(fraction(1.0), "1.00");
        assert_eq!(fraction(0.0025), "0.0025");
        assert_eq!(fraction(0.000_493), "0.00049");
        assert_eq!(fraction(0.0), "0.00");
    }

    /// Failed pairs are listed up to 20 with a count of the rest; pairs
    /// not tested are counted by reason, not listed one by one.
    #[test]
    fn failed_pairs_are_listed_and_untested_ones_counted_by_reason() {
        let failed: Vec<(usize, usize)> = (1..26).map(|b| (0, b)).collect();
        let t = text(&doc_with(30, &[], &failed, &[29]));
        let section = |title: &str| section_of(&t, title);
        let f = section("failed pairs:");
        assert_eq!(f.len(), 21, "{t}");
        assert_eq!(f[0], "  rank 0 (host<0>) <-> rank 1 (host<1>): provider error");
        assert_eq!(f[20], "  ... and 5 more (sweep.json has every one)");
        assert_eq!(section("not tested:"), ["  29 pairs: rank missing"], "{t}");
        // the page counts them by reason too
        let page = crate::html::page(&doc_with(30, &[], &failed, &[29]), &Default::default());
        let at = page.find("<h2>Not tested</h2>").expect("a Not tested section");
        assert!(
            page[at..].contains("29") && page[at..].contains("rank missing"),
            "{page}"
        );
        // a sweep with nothing untested has no such section
        assert!(!text(&doc_with(4, &[], &[(0, 1)], &[])).contains("not tested:"));
    }

    /// The five worst pairs, worst first, ties in pair order: picked in one
    /// pass, so the sixth worst and the fast pairs stay out.
    #[test]
    fn the_slowest_pairs_are_the_five_worst_in_order() {
        let values = [
            ((0, 1), 10.0),
            ((2, 3), 5.0),
            ((1, 4), 50.0),
            ((0, 5), 50.0),
            ((3, 5), 70.0),
            ((1, 2), 80.0),
        ];
        let t = text(&doc_with(6, &values, &[], &[]));
        let listed = section_of(&t, "slowest pairs:");
        assert_eq!(
            listed,
            [
                "  rank 2 (host<2>) <-> rank 3 (host<3>): 5.00 MB/s",
                "  rank 0 (host<0>) <-> rank 1 (host<1>): 10.00 MB/s",
                "  rank 0 (host<0>) <-> rank 5 (host<5>): 50.00 MB/s",
                "  rank 1 (host<1>) <-> rank 4 (host<4>): 50.00 MB/s",
                "  rank 3 (host<3>) <-> rank 5 (host<5>): 70.00 MB/s",
            ],
            "{t}"
        );
    }

    /// A slow link's figure is the pair's own, not the analysis's f32 of
    /// it: 300000.014 is 300000.0 in f32, and the two would print apart.
    #[test]
    fn a_slow_link_shows_the_figure_its_pair_measured() {
        let mut s = sweep_with(6, &[], &[], &[]);
        for p in &mut s.pairs {
            p.value = Some(if (p.a, p.b) == (1, 4) { 300_000.014 } else { 1_000_000.0 });
        }
        let d = doc_of(&s);
        assert_eq!(d.analysis.slow_links.len(), 1, "{:?}", d.analysis);
        assert_eq!(d.analysis.slow_links[0].value, 300_000.014);
        let t = text(&d);
        assert!(section_of(&t, "slow links:")[0].contains(": 300000.01 MB/s ("), "{t}");
        assert!(section_of(&t, "slowest pairs:")[0].ends_with(": 300000.01 MB/s"), "{t}");
    }

    /// On rails, each rail's median and slow ranks; a rail whose ranks
    /// are mostly slow is named as such (its switches, not each node).
    #[test]
    fn on_rails_a_rail_of_slow_ranks_is_named() {
        let rail_1 = [1usize, 4, 7, 10];
        let slow: Vec<((usize, usize), f64)> = rail_1
            .iter()
            .flat_map(|&a| rail_1.iter().filter(move |&&b| b > a).map(move |&b| ((a, b), 25.0)))
            .collect();
        let mut sweep = sweep_with(12, &slow, &[], &[]);
        sweep.pairs.retain(|p| p.a % 3 == p.b % 3);
        sweep.rails = 3;
        let doc = doc_of(&sweep);
        assert_eq!(doc.schedule.total_pairs, 18);
        assert_eq!(doc.rails.len(), 3);
        let r1 = &doc.rails[1];
        assert_eq!((r1.ranks, r1.slow_ranks, r1.median, r1.slow), (4, 4, Some(25.0), true));
        assert_eq!(
            (doc.rails[0].slow_ranks, doc.rails[0].median, doc.rails[0].slow),
            (0, Some(100.0), false)
        );
        assert_eq!(doc.verdict.slow_rails, vec![1]);
        let t = text(&doc);
        assert!(t.contains("\n  rail 1: median 25.00 MB/s, 4 of 4 ranks slow: slow rail, suspect what its ranks share (its switches and cables)\n"), "{t}");
        assert!(t.contains("\n  rail 2: median 100.00 MB/s, 0 of 4 ranks slow\n"), "{t}");
        let page = crate::html::page(&doc, &Default::default());
        assert!(
            page.contains("1 slow rail") && page.contains(&format!("<td>{SLOW_RAIL}</td>")),
            "{page}"
        );
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["verdict"]["slow_rails"], serde_json::json!([1]));
        // every pair paired: no rails in the report
        let plain = doc_with(12, &slow, &[], &[]);
        assert!(plain.rails.is_empty() && !text(&plain).contains("rails"));
        assert!(serde_json::to_value(&plain).unwrap().get("rails").is_none());
    }

    /// The JSON matrix: N rows of N, symmetric, null on the diagonal and
    /// wherever a pair has no figure; read back, it is the same matrix.
    #[test]
    fn the_matrix_is_written_whole_from_its_triangle() {
        let doc = doc_with(5, &[((0, 1), 60.5), ((2, 4), 1.0e9)], &[(1, 3)], &[4]);
        let m = &doc.matrix;
        let rows: Vec<Vec<Option<f32>>> = (0..5)
            .map(|a| (0..5).map(|b| m.get(a, b).map(|v| v as f32)).collect())
            .collect();
        assert_eq!(serde_json::to_value(m).unwrap(), serde_json::to_value(&rows).unwrap());
        let text = serde_json::to_string(m).unwrap();
        assert_eq!(text.split("],[").next(), Some("[[null,60.5,100.0,100.0,null"), "{text}");
        assert!(
            text.contains("[100.0,null,100.0,null,null]"),
            "rank 1: failed with 3, 4 missing: {text}"
        );
        let back: Matrix = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, m);
        assert!(
            serde_json::from_str::<Matrix>("[[null,1.0],[1.0]]").is_err(),
            "a short row"
        );
        // every cell in its place, for a few sizes
        for n in [1usize, 2, 3, 9, 16] {
            let mut m = Matrix::new(n);
            for a in 0..n {
                for b in a + 1..n {
                    m.set(a, b, (100 * a + b) as f64);
                }
            }
            let rows: Vec<Vec<Option<f32>>> = (0..n)
                .map(|a| {
                    (0..n)
                        .map(|b| (a != b).then(|| (100 * a.min(b) + a.max(b)) as f32))
                        .collect()
                })
                .collect();
            assert_eq!(
                serde_json::to_value(&m).unwrap(),
                serde_json::to_value(&rows).unwrap(),
                "n={n}"
            );
        }
    }

    /// A rank is named by its host, then its NIC or (on a shared host) its
    /// address, then its GPU: what tells ranks of one node apart.
    #[test]
    fn a_rank_is_named_by_host_nic_or_address_and_gpu() {
        let mut d = doc_with(4, &[], &[], &[]);
        let name = |d: &SweepDoc, rank| Names::new(d).of(rank).into_owned();
        assert_eq!(name(&d, 1), "rank 1 (host<1>)");
        d.nodes[0].node.device = Some("cxi1".into());
        d.nodes[0].node.gpu = Some("GPU 1".into());
        d.nodes[1].node.gpu = Some("TX GPU 0 RX GPU 1".into());
        d.nodes[2].node.host = Some("host<3>".into());
        d.nodes[2].node.gpu = Some("GPU 2".into());
        assert_eq!(name(&d, 0), "rank 0 (host<0> cxi1 GPU 1)");
        assert_eq!(name(&d, 1), "rank 1 (host<1> TX GPU 0 RX GPU 1)");
        assert_eq!(name(&d, 2), "rank 2 (host<3> 198.18.0.2 GPU 2)");
        assert_eq!(name(&d, 3), "rank 3 (host<3> 198.18.0.3)");
        assert_eq!(name(&d, 9), "rank 9");
        // the node medians keep one column past the longest name
        let t = text(&d);
        let medians: Vec<&str> = t
            .lines()
            .skip_while(|l| !l.starts_with("node medians"))
            .skip(1)
            .take(4)
            .collect();
        assert!(medians.iter().all(|l| l.len() == medians[0].len()), "{t}");
        assert!(medians[1].starts_with("  rank 1 (host<1> TX GPU 0 RX GPU 1) "), "{t}");
    }
}
