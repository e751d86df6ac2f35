//! A traffic pattern's report (bisection): each split's aggregate, the sum
//! of its flows' figures while all of them ran at once; each flow's share
//! of it; the flows well below the split's median flow named (the sweep's
//! outlier fraction); the weakest split; and, given the rate one node's
//! NIC can carry (`--expect`), each split's aggregate as a fraction of
//! what its halves' NICs could carry together. `document` makes it,
//! `text` is its page. Pure: no I/O, no clock.

use crate::doc::Metric;
use fabdiag_sweep_plan::{Coordinated, Node, NodeStatus, Pattern, PatternStep, SplitBy};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The document's schema name.
pub const PATTERN_SCHEMA: &str = "fabdiag-pattern/1";

/// One flow of a split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub client: usize,
    pub server: usize,
    /// Its figure (MB/s), when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Its part of the split's aggregate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Below the outlier fraction of the split's median flow.
    pub slow: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One split, its flows at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    pub index: usize,
    pub halves: [Vec<usize>; 2],
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<usize>,
    /// The measured flows' figures added up.
    pub aggregate: f64,
    pub measured: usize,
    /// `aggregate` over what its flows' NICs could carry (`--expect`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    pub flows: Vec<Flow>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternVerdict {
    /// Flows measured, all splits together (none: nothing was learnt).
    pub measured_flows: usize,
    pub failed_flows: usize,
    pub untested_flows: usize,
    pub slow_flows: usize,
    pub lost_nodes: Vec<usize>,
}

/// A pattern run's document (`pattern.json`, `--json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternDoc {
    pub schema: String,
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
    pub options: serde_json::Value,
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
    pub splits: Vec<SplitSummary>,
    /// The split with the lowest aggregate.
    pub weakest: Option<usize>,
    pub verdict: PatternVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// What a pattern's document is made from.
pub struct PatternInputs<'a> {
    pub sweep: Coordinated,
    pub metric: Metric,
    /// The sweep's outlier fraction: a flow below it times the split's
    /// median flow is slow.
    pub fraction: f64,
    pub expect: Option<f64>,
    pub bidirectional: bool,
    pub options: serde_json::Value,
    pub fabdiag_version: &'a str,
    pub libfabric_version: Option<String>,
}

fn summary(step: &PatternStep, fraction: f64, expect: Option<f64>, streams: f64) -> SplitSummary {
    let values: Vec<f64> = step.flows.iter().filter_map(|f| f.value).collect();
    let aggregate: f64 = values.iter().sum();
    let middle = (!values.is_empty()).then(|| crate::analysis::median(&mut values.clone()));
    let flows = step
        .flows
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
    SplitSummary {
        index: step.index,
        halves: step.split.halves.clone(),
        idle: step.split.idle.clone(),
        aggregate,
        measured: values.len(),
        fraction: expect
            .filter(|e| *e > 0.0 && !step.flows.is_empty())
            .map(|e| aggregate / (e * streams * step.flows.len() as f64)),
        flows,
    }
}

pub fn document(i: PatternInputs<'_>) -> Option<PatternDoc> {
    let s = i.sweep;
    let run = s.pattern?;
    let streams = if i.bidirectional { 2.0 } else { 1.0 };
    let splits: Vec<SplitSummary> = run
        .steps
        .iter()
        .map(|st| summary(st, i.fraction, i.expect, streams))
        .collect();
    let weakest = splits
        .iter()
        .filter(|x| x.measured > 0)
        .min_by(|a, b| a.aggregate.total_cmp(&b.aggregate))
        .map(|x| x.index);
    let flows = || run.steps.iter().flat_map(|st| &st.flows);
    let verdict = PatternVerdict {
        measured_flows: splits.iter().map(|x| x.measured).sum(),
        failed_flows: flows().filter(|f| f.value.is_none() && !f.untested).count(),
        untested_flows: flows().filter(|f| f.untested).count(),
        slow_flows: splits.iter().flat_map(|x| &x.flows).filter(|f| f.slow).count(),
        lost_nodes: s
            .nodes
            .iter()
            .filter(|n| n.status != NodeStatus::Ok)
            .map(|n| n.rank)
            .collect(),
    };
    Some(PatternDoc {
        schema: PATTERN_SCHEMA.into(),
        fabdiag_version: i.fabdiag_version.into(),
        libfabric_version: i.libfabric_version,
        options: i.options,
        metric: i.metric,
        started: humantime::format_rfc3339_millis(s.started).to_string(),
        ended: humantime::format_rfc3339_millis(s.ended).to_string(),
        pattern: run.pattern,
        nodes: s.nodes,
        expect: i.expect,
        bidirectional: i.bidirectional,
        splits,
        weakest,
        verdict,
        stopped: s.stopped,
    })
}

/// Ranks as a short list: "0-3", "0 2 5 7".
fn ranks(v: &[usize]) -> String {
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

/// The one-page text: what ran, each split, the weakest, the verdict.
pub fn text(doc: &PatternDoc) -> String {
    let mut o = String::new();
    let u = &doc.metric.unit;
    let Pattern::Bisection { by, splits, seed } = doc.pattern;
    let seed = if by == SplitBy::Random {
        format!(", seed {seed}")
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "fabdiag sweep --pattern bisection: {} nodes, {splits} split(s) by {}{seed}; {}{}, every flow of a split at once",
        doc.nodes.len(),
        by.name(),
        doc.metric.test,
        if doc.bidirectional { ", both directions" } else { "" },
    );
    for x in &doc.splits {
        if x.flows.is_empty() {
            let _ = writeln!(
                o,
                "split {}: no flow crosses the halves (every rank on one node? --split-by rank or random)",
                x.index + 1
            );
            continue;
        }
        let weakest = if doc.weakest == Some(x.index) && doc.splits.len() > 1 {
            " (weakest)"
        } else {
            ""
        };
        let of = x
            .fraction
            .map(|f| format!(", {:.0} % of --expect", f * 100.0))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "split {}: ranks {} | {}: {} of {} flows, aggregate {:.1} {u}{of}{weakest}",
            x.index + 1,
            ranks(&x.halves[0]),
            ranks(&x.halves[1]),
            x.measured,
            x.flows.len(),
            x.aggregate
        );
        for f in &x.flows {
            let what = match (f.value, &f.error) {
                (Some(v), _) => format!(
                    "{v:>10.1} {u} {:>5.1} %{}",
                    f.share.unwrap_or(0.0) * 100.0,
                    if f.slow { "  slow" } else { "" }
                ),
                (None, Some(e)) => format!("failed: {e}"),
                (None, None) => "no figure".into(),
            };
            let _ = writeln!(o, "  {} -> {}  {what}", host(doc, f.client), host(doc, f.server));
        }
    }
    verdict_text(&mut o, doc);
    o
}

fn verdict_text(o: &mut String, doc: &PatternDoc) {
    let v = &doc.verdict;
    if let Some(w) = doc.weakest.and_then(|i| doc.splits.get(i)) {
        let _ = writeln!(
            o,
            "bisection: {:.1} {} (split {}, the weakest of {})",
            w.aggregate,
            doc.metric.unit,
            w.index + 1,
            doc.splits.len()
        );
    }
    for n in &v.lost_nodes {
        let why = doc.nodes.get(*n).and_then(|x| x.reason.as_deref()).unwrap_or("lost");
        let _ = writeln!(o, "rank {}: {why}", host(doc, *n));
    }
    if let Some(s) = &doc.stopped {
        let _ = writeln!(o, "stopped by {s}: the splits left were not run");
    }
    let _ = writeln!(
        o,
        "flows: {} failed, {} not run, {} slow (below the outlier fraction of their split's median flow)",
        v.failed_flows, v.untested_flows, v.slow_flows
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use fabdiag_sweep_plan::{Pair, PairRecord, PatternRun, Split};

    fn flow(client: usize, server: usize, value: Option<f64>) -> PairRecord {
        PairRecord {
            value,
            error: value.is_none().then(|| "cannot connect".into()),
            ..PairRecord::planned(&Pair { client, server }, Some(0))
        }
    }

    pub(crate) fn doc(steps: Vec<PatternStep>, expect: Option<f64>, bidirectional: bool) -> PatternDoc {
        let nodes = (0..8)
            .map(|r| Node {
                host: Some(format!("node{r}")),
                status: NodeStatus::Ok,
                ..Node::awaited(r)
            })
            .collect();
        let mut sweep = Coordinated::of(nodes, Vec::new());
        sweep.pattern = Some(PatternRun {
            pattern: Pattern::Bisection {
                by: SplitBy::Rank,
                splits: steps.len(),
                seed: 0,
            },
            steps,
        });
        document(PatternInputs {
            sweep,
            metric: Metric {
                name: "bandwidth".into(),
                unit: "MB/s".into(),
                better: crate::analysis::Better::Higher,
                test: "write-bw 65536 B".into(),
            },
            fraction: 0.75,
            expect,
            bidirectional,
            options: serde_json::Value::Null,
            fabdiag_version: "0.1.0",
            libfabric_version: None,
        })
        .expect("a pattern run")
    }

    pub(crate) fn step(index: usize, values: [Option<f64>; 4]) -> PatternStep {
        PatternStep {
            index,
            split: Split {
                halves: [vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
                idle: vec![],
            },
            flows: (0..4).map(|i| flow(i, i + 4, values[i])).collect(),
        }
    }

    #[test]
    fn each_split_adds_its_flows_names_the_slow_one_and_the_weakest_split() {
        let d = doc(
            vec![
                step(0, [Some(10.0), Some(10.0), Some(10.0), Some(10.0)]),
                step(1, [Some(10.0), Some(2.0), Some(10.0), None]),
            ],
            Some(12.5),
            false,
        );
        assert_eq!((d.splits[0].aggregate, d.splits[1].aggregate), (40.0, 22.0));
        assert_eq!(d.weakest, Some(1));
        assert_eq!(d.splits[0].fraction, Some(0.8));
        assert_eq!(d.splits[0].flows[0].share, Some(0.25));
        let slow: Vec<usize> = d.splits[1].flows.iter().filter(|f| f.slow).map(|f| f.client).collect();
        assert_eq!(slow, vec![1]);
        assert_eq!((d.verdict.failed_flows, d.verdict.slow_flows), (1, 1));
        let t = text(&d);
        assert!(
            t.contains("split 2: ranks 0-3 | 4-7: 3 of 4 flows, aggregate 22.0 MB/s, 44 % of --expect (weakest)"),
            "{t}"
        );
        assert!(
            t.contains("  1 (node1) -> 5 (node5)         2.0 MB/s   9.1 %  slow"),
            "{t}"
        );
        assert!(t.contains("  3 (node3) -> 7 (node7)  failed: cannot connect"), "{t}");
        assert!(t.contains("bisection: 22.0 MB/s (split 2, the weakest of 2)"), "{t}");
    }

    #[test]
    fn both_directions_double_what_the_nics_could_carry_and_json_keeps_every_flow() {
        let d = doc(vec![step(0, [Some(20.0); 4])], Some(12.5), true);
        assert_eq!(d.splits[0].fraction, Some(0.8));
        let j = serde_json::to_value(&d).expect("JSON");
        assert_eq!(j["schema"], PATTERN_SCHEMA);
        assert_eq!(j["pattern"]["kind"], "bisection");
        assert_eq!(j["splits"][0]["flows"].as_array().map(Vec::len), Some(4));
        assert_eq!(ranks(&[0, 2, 5]), "0 2 5");
        assert_eq!(ranks(&[4, 5, 6, 7]), "4-7");
    }
}
