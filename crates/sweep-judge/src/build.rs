//! The sweep's document made from a finished sweep: the analysis of its
//! matrix, each re-test judged, every node summarised, the rails, the
//! overhead, the verdict and, against a baseline, what has regressed.
//! `build` is the one entry; each part is a function of its own. Pure:
//! no I/O, no clock.

use crate::analysis::Rules;
use crate::analysis::{Analysis, Better, Matrix};
use crate::baseline::{self, Baseline};
use crate::blame::blame;
use crate::doc::{Comparison, NodeChange};
use crate::doc::{
    Limits, Metric, NodeSummary, Overhead, RailSummary, Retest, RetestVerdict, ScheduleSummary, SweepDoc, Verdict,
    SCHEMA,
};
use fabdiag_sweep_plan::{first_records, Coordinated, NodeStatus, PairRecord, Schedule, StepKind, StepRecord};
use std::collections::{BTreeSet, HashMap, HashSet};

/// What a sweep's document is made from.
pub struct Inputs<'a> {
    /// Taken, not borrowed: its pair records move into the document (a
    /// copy of them would double the memory of a big sweep).
    pub sweep: Coordinated,
    pub metric: Metric,
    pub rules: Rules,
    pub limits: Limits,
    pub options: fabdiag_sweep_plan::folder::RunOptions,
    pub fabdiag_version: &'a str,
    pub libfabric_version: Option<String>,
    /// An earlier sweep to compare with, and `--baseline-fraction`.
    pub baseline: Option<(&'a Baseline, f64)>,
    /// The fabric's map, and where it came from.
    pub fabric: Option<(&'a fabdiag_topology::Fabric, &'a str)>,
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
    let m = Matrix::of_pairs(n, &s.pairs);
    let mut an = Analysis::of(&m, better, i.rules);
    // each re-tested pair's and each slow link's figure in the sweep, in
    // one pass over the pairs
    let keys = s.retests.iter().map(|r| (r.a, r.b));
    let firsts = first_records(&s.pairs, keys.chain(an.slow_links.iter().map(|f| (f.a, f.b))));
    let retests = judged_retests(s, &an, &firsts);
    settle(&mut an, &retests, &firsts);
    let slow: HashSet<usize> = an.slow_nodes.iter().map(|f| f.node).collect();
    let nodes = node_summaries(s, &an, &slow);
    let compared = i
        .baseline
        .map(|(b, fraction)| baseline::compare(b, &s.nodes, &s.pairs, &m, better, fraction, an.rules.node_fraction));
    let sched = Schedule::on_rails(n, s.rails).ok();
    let rails = sched.map_or_else(Vec::new, |x| rail_summaries(&m, &x, &slow, an.rules.node_fraction));
    let overhead = overhead_of(s);
    let verdict = verdict_of(&i, &an, &nodes, &rails, compared.as_ref(), &slow);
    let rail_count = s.rails;
    let (started, ended) = (s.started, s.ended);
    let counters = blame(&s.pairs, &nodes, &an);
    let fabric = i
        .fabric
        .map(|(f, source)| crate::fabric::judge(f, source, &s.nodes, &s.pairs, &s.retests, &an));
    let path_sensitive = crate::fabric::path_sensitive(&s.pairs, &an);
    let mut verdict = verdict;
    if let Some(f) = &fabric {
        crate::fabric::to_look_at(f, &s.nodes, &mut verdict);
    }
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
        counters,
        path_sensitive,
        fabric,
    }
}

/// Every re-test the sweep ran, judged: confirmed while still slow alone
/// (a node below the fraction, a link still an outlier), cleared when not,
/// and no suspect under rules that no longer name its pair.
fn judged_retests(s: &Coordinated, an: &Analysis, firsts: &HashMap<(usize, usize), &PairRecord>) -> Vec<Retest> {
    s.retests
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
        .collect()
}

/// The analysis after its re-tests: a cleared re-test takes its node or
/// link off the slow lists, and each slow link shows its figure as
/// measured.
fn settle(an: &mut Analysis, retests: &[Retest], firsts: &HashMap<(usize, usize), &PairRecord>) {
    let cleared: Vec<&Retest> = retests.iter().filter(|r| r.verdict == RetestVerdict::Cleared).collect();
    an.slow_nodes
        .retain(|f| !cleared.iter().any(|r| r.node == Some(f.node)));
    an.slow_links
        .retain(|f| !cleared.iter().any(|r| r.node.is_none() && (r.a, r.b) == (f.a, f.b)));
    // the analysis works in f32, and its 207466.89 printed beside the
    // pair's own 207466.88 read as two measurements
    for f in &mut an.slow_links {
        if let Some(v) = firsts.get(&(f.a, f.b)).and_then(|p| p.value) {
            f.value = v;
        }
    }
}

/// Every node with its median and its measured and failed pairs, counted
/// in one pass (a scan of all pairs per node took 2 s at 1,000 nodes, and
/// grows as N³).
fn node_summaries(s: &Coordinated, an: &Analysis, slow: &HashSet<usize>) -> Vec<NodeSummary> {
    // (ranks are 0..n: the coordinator refuses any other)
    let mut counts = vec![(0usize, 0usize); s.nodes.len()];
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
    s.nodes
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
        .collect()
}

/// What the sweep cost beyond its measurements, from its steps' timing.
fn overhead_of(s: &Coordinated) -> Overhead {
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
    Overhead {
        join_s: s.join_s,
        first_round_s,
        round_mean_s: mean(&|x| x.overhead_s),
        round_max_s: rounds.iter().map(|x| x.overhead_s).fold(0.0, f64::max),
        coordinator_mean_s: mean(&|x| x.coordinator_busy_s),
        endpoint_opens: s.nodes.iter().map(|x| x.endpoint_opens).sum(),
        endpoint_open_s: s.nodes.iter().map(|x| x.endpoint_open_s).sum(),
        steps: s.steps.clone(),
    }
}

/// The verdict: what failed, was lost, missed a threshold, is slow or
/// has regressed, and the hosts to look at.
fn verdict_of(
    i: &Inputs<'_>,
    an: &Analysis,
    nodes: &[NodeSummary],
    rails: &[RailSummary],
    compared: Option<&Comparison>,
    slow: &HashSet<usize>,
) -> Verdict {
    let s = &i.sweep;
    let n = s.nodes.len();
    let better = i.metric.better;
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
        regressed_links: compared.map_or(0, |c| c.links.len()),
        regressed_nodes: compared.map_or(0, |c| c.nodes.len()),
        fabric_regressed: compared.is_some_and(|c| c.fabric_regressed),
        suspect_hosts: Vec::new(),
        suspect_elements: Vec::new(),
    };
    let regressed = compared.map_or(&[][..], |c| &c.nodes[..]);
    let hosts: BTreeSet<&str> = suspect_ranks(&verdict, slow, regressed)
        .into_iter()
        .filter_map(|r| s.nodes.get(r).and_then(|x| x.host.as_deref()))
        .collect();
    Verdict {
        suspect_hosts: hosts.into_iter().map(str::to_string).collect(),
        ..verdict
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::*;

    #[test]
    fn every_node_counts_its_measured_and_failed_pairs() {
        // 1-3 failed; 4 never joined, so its four pairs are untested
        let doc = doc_with(5, &[], &[(1, 3)], &[4]);
        let counts: Vec<(usize, usize)> = doc.nodes.iter().map(|x| (x.pairs_measured, x.pairs_failed)).collect();
        assert_eq!(counts, [(3, 1), (2, 2), (3, 1), (2, 2), (0, 4)]);
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
}
