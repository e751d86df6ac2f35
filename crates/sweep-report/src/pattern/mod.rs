//! A traffic pattern's report: each step's aggregate, the sum of its
//! flows' figures while all of them ran at once; each flow's share of it;
//! the flows well below the step's median flow named (the sweep's outlier
//! fraction). Each pattern's own summaries live beside it: `bisection`
//! (the weakest split, a fraction of what the halves' NICs could carry),
//! `incast` (against one sender alone, Jain's fairness, the starved
//! senders), `alltoall` (each phase's slowest flow, each rank's receive
//! side, the heatmap of flows). `document` makes it, `text` is its page.
//! Pure: no I/O, no clock.

mod alltoall;
mod bisection;
mod doc;
mod incast;
mod victim;

pub(crate) use doc::host;
pub use doc::{
    AllToAllSummary, Flow, Group, Heatmap, IncastSummary, Overran, PatternDoc, PatternVerdict, PhaseSummary, RankSides,
    SplitSummary, VictimFigures, VictimSummary, PATTERN_SCHEMA,
};

/// A flow measured for more than this many times the pair tool's `-D` ran
/// well past the others of its step (a window ends at an iteration's end,
/// a little past `-D` in a run that keeps an iteration short).
pub(crate) const OVERRAN: f64 = 1.25;

use fabdiag_sweep_judge::doc::Metric;
use fabdiag_sweep_plan::{Coordinated, NodeStatus, Pattern, PatternStep};
use std::fmt::Write as _;

/// What a pattern's document is made from.
pub struct PatternInputs<'a> {
    pub sweep: Coordinated,
    pub metric: Metric,
    /// The sweep's outlier fraction: a flow below it times the step's
    /// median flow is slow.
    pub fraction: f64,
    pub expect: Option<f64>,
    pub bidirectional: bool,
    /// What the victim pair ran, when there was one (`--victim`).
    pub victim: Option<Metric>,
    pub options: fabdiag_sweep_plan::folder::RunOptions,
    pub fabdiag_version: &'a str,
    pub libfabric_version: Option<String>,
}

pub fn document(i: PatternInputs<'_>) -> Option<PatternDoc> {
    let s = i.sweep;
    let run = s.pattern?;
    let streams = if i.bidirectional { 2.0 } else { 1.0 };
    let mut doc = PatternDoc {
        schema: PATTERN_SCHEMA.into(),
        fabdiag_version: i.fabdiag_version.into(),
        libfabric_version: i.libfabric_version,
        options: i.options,
        metric: i.metric,
        started: humantime::format_rfc3339_millis(s.started).to_string(),
        ended: humantime::format_rfc3339_millis(s.ended).to_string(),
        pattern: run.pattern.clone(),
        nodes: s.nodes,
        expect: i.expect,
        bidirectional: i.bidirectional,
        splits: Vec::new(),
        weakest: None,
        incasts: Vec::new(),
        phases: Vec::new(),
        alltoall: None,
        heatmap: None,
        victim: None,
        verdict: PatternVerdict::default(),
        stopped: s.stopped,
    };
    match run.pattern {
        Pattern::Bisection { .. } => bisection::fill(&mut doc, &run.steps, i.fraction, streams),
        Pattern::Incast { .. } => incast::fill(&mut doc, &run.steps, i.fraction, streams),
        Pattern::AllToAll => alltoall::fill(&mut doc, &run.steps, i.fraction),
    }
    if let Some(m) = i.victim {
        victim::fill(&mut doc, &run.steps, m);
    }
    doc.verdict = verdict(&doc, &run.steps);
    Some(doc)
}

/// What the run came to, every step's flows (the victim's too) together.
fn verdict(doc: &PatternDoc, steps: &[PatternStep]) -> PatternVerdict {
    let flows = || {
        steps
            .iter()
            .flat_map(|st| st.flows.iter().chain(st.victim.as_ref().map(|v| &v.record)))
    };
    let groups = doc
        .splits
        .iter()
        .map(|x| &x.group)
        .chain(doc.incasts.iter().flat_map(|x| x.single.iter().chain([&x.group])))
        .chain(doc.phases.iter().map(|x| &x.group));
    let mut overran: Vec<Overran> = match duration_s(doc).filter(|d| *d > 0.0) {
        Some(d) => flows()
            .filter(|f| f.value.is_some() && f.measure_s > OVERRAN * d)
            .map(|f| Overran {
                client: f.client,
                server: f.server,
                measured_s: f.measure_s,
            })
            .collect(),
        None => Vec::new(),
    };
    overran.sort_by(|a, b| b.measured_s.total_cmp(&a.measured_s));
    PatternVerdict {
        measured_flows: flows().filter(|f| f.value.is_some()).count(),
        failed_flows: flows().filter(|f| f.value.is_none() && !f.untested).count(),
        untested_flows: flows().filter(|f| f.untested).count(),
        slow_flows: groups.flat_map(|g| &g.flows).filter(|f| f.slow).count(),
        lost_nodes: doc
            .nodes
            .iter()
            .filter(|n| n.status != NodeStatus::Ok)
            .map(|n| n.rank)
            .collect(),
        overran,
    }
}

/// The one-page text: what ran, each step, the pattern's summary, the
/// verdict.
pub fn text(doc: &PatternDoc) -> String {
    let mut o = String::new();
    match doc.pattern {
        Pattern::Bisection { .. } => bisection::text(&mut o, doc),
        Pattern::Incast { .. } => incast::text(&mut o, doc),
        Pattern::AllToAll => alltoall::text(&mut o, doc),
    }
    victim::text(&mut o, doc);
    verdict_text(&mut o, doc);
    o
}

fn verdict_text(o: &mut String, doc: &PatternDoc) {
    let v = &doc.verdict;
    for n in &v.lost_nodes {
        let why = doc.nodes.get(*n).and_then(|x| x.reason.as_deref()).unwrap_or("lost");
        let _ = writeln!(o, "rank {}: {why}", host(doc, *n));
    }
    if let Some(s) = &doc.stopped {
        let what = match doc.pattern {
            Pattern::Bisection { .. } => "splits",
            Pattern::Incast { .. } | Pattern::AllToAll => "steps",
        };
        let _ = writeln!(o, "stopped by {s}: the {what} left were not run");
    }
    let slow = match doc.pattern {
        Pattern::Bisection { .. } => "slow (below the outlier fraction of their split's median flow)",
        Pattern::Incast { .. } => "starved (below the outlier fraction of their incast's median sender)",
        Pattern::AllToAll => "slow (below the outlier fraction of their phase's median flow)",
    };
    let _ = writeln!(
        o,
        "flows: {} failed, {} not run, {} {slow}",
        v.failed_flows, v.untested_flows, v.slow_flows
    );
    if let Some(w) = overran_line(doc) {
        let _ = writeln!(o, "{w}");
    }
}

/// The pair tool's `-D` (seconds), from the options the document keeps.
fn duration_s(doc: &PatternDoc) -> Option<f64> {
    doc.options.test.as_ref()?.get("duration_s")?.as_f64()
}

/// The flows that ran well past `-D`, in a line (None: none did).
pub(crate) fn overran_line(doc: &PatternDoc) -> Option<String> {
    let v = &doc.verdict;
    let longest = v.overran.first()?;
    let d = duration_s(doc)?;
    Some(format!(
        "windows: {} flow(s) measured well past -D {d} s (the longest {} -> {}, {:.1} s): a flow's window ends at its first iteration's end past -D, so these did not run with the rest of their step; lower -l",
        v.overran.len(),
        host(doc, longest.client),
        host(doc, longest.server),
        longest.measured_s
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use fabdiag_sweep_plan::{Node, Pair, PairRecord, PatternRun, Shape, Split, SplitBy};

    pub(crate) fn flow(client: usize, server: usize, value: Option<f64>) -> PairRecord {
        PairRecord {
            value,
            error: value.is_none().then(|| "cannot connect".into()),
            ..PairRecord::planned(&Pair { client, server }, Some(0))
        }
    }

    pub(crate) fn doc(steps: Vec<PatternStep>, expect: Option<f64>, bidirectional: bool) -> PatternDoc {
        let pattern = Pattern::Bisection {
            by: SplitBy::Rank,
            splits: steps.len(),
            seed: 0,
        };
        doc_of(pattern, steps, expect, bidirectional)
    }

    pub(crate) fn doc_of(
        pattern: Pattern,
        steps: Vec<PatternStep>,
        expect: Option<f64>,
        bidirectional: bool,
    ) -> PatternDoc {
        let nodes = (0..8)
            .map(|r| Node {
                host: Some(format!("node{r}")),
                status: NodeStatus::Ok,
                ..Node::awaited(r)
            })
            .collect();
        let mut sweep = Coordinated::of(nodes, Vec::new());
        sweep.pattern = Some(PatternRun {
            pattern,
            steps,
            victim: None,
        });
        document(PatternInputs {
            sweep,
            metric: Metric {
                name: "bandwidth".into(),
                unit: "MB/s".into(),
                better: fabdiag_sweep_judge::analysis::Better::Higher,
                test: "write-bw 65536 B".into(),
            },
            fraction: 0.75,
            expect,
            bidirectional,
            victim: None,
            options: fabdiag_sweep_plan::folder::RunOptions {
                test: Some(serde_json::json!({"duration_s": 4})),
                ..Default::default()
            },
            fabdiag_version: "0.1.0",
            libfabric_version: None,
        })
        .expect("a pattern run")
    }

    pub(crate) fn step(index: usize, values: [Option<f64>; 4]) -> PatternStep {
        PatternStep {
            index,
            shape: Shape::Split(Split {
                halves: [vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
                idle: vec![],
            }),
            flows: (0..4).map(|i| flow(i, i + 4, values[i])).collect(),
            victim: None,
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
        assert_eq!((d.splits[0].group.aggregate, d.splits[1].group.aggregate), (40.0, 22.0));
        assert_eq!(d.weakest, Some(1));
        assert_eq!(d.splits[0].fraction, Some(0.8));
        assert_eq!(d.splits[0].group.flows[0].share, Some(0.25));
        let slow: Vec<usize> = d.splits[1]
            .group
            .flows
            .iter()
            .filter(|f| f.slow)
            .map(|f| f.client)
            .collect();
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
    fn flows_measured_well_past_d_are_named_longest_first_and_the_rest_are_not() {
        // -D 4: a window of 5.0 s is within a quarter past it, 5.1 and 10.5 are not
        let mut st = step(0, [Some(10.0); 4]);
        for (f, s) in st.flows.iter_mut().zip([4.1, 5.1, 10.5, 5.0]) {
            f.measure_s = s;
        }
        let d = doc(vec![st], None, false);
        let named: Vec<(usize, f64)> = d.verdict.overran.iter().map(|o| (o.client, o.measured_s)).collect();
        assert_eq!(named, vec![(2, 10.5), (1, 5.1)]);
        let t = text(&d);
        assert!(
            t.contains("windows: 2 flow(s) measured well past -D 4 s (the longest 2 (node2) -> 6 (node6), 10.5 s)"),
            "{t}"
        );
        assert!(crate::pattern_html::page(&d).contains("<p>windows: 2 flow(s) measured well past -D 4 s"));
        let j = serde_json::to_value(&d).expect("JSON");
        assert_eq!(
            j["verdict"]["overran"][0],
            serde_json::json!({"client": 2, "server": 6, "measured_s": 10.5})
        );
        // every window near -D: no line, and nothing in the JSON
        let d = doc(vec![step(0, [Some(10.0); 4])], None, false);
        assert!(d.verdict.overran.is_empty() && !text(&d).contains("windows:"));
        assert!(serde_json::to_value(&d).expect("JSON")["verdict"]
            .get("overran")
            .is_none());
        assert!(!crate::pattern_html::page(&d).contains("windows:"));
    }

    #[test]
    fn both_directions_double_what_the_nics_could_carry_and_json_keeps_every_flow() {
        let d = doc(vec![step(0, [Some(20.0); 4])], Some(12.5), true);
        assert_eq!(d.splits[0].fraction, Some(0.8));
        let j = serde_json::to_value(&d).expect("JSON");
        assert_eq!(j["schema"], PATTERN_SCHEMA);
        assert_eq!(j["pattern"]["kind"], "bisection");
        assert_eq!(j["splits"][0]["flows"].as_array().map(Vec::len), Some(4));
        assert_eq!(doc::ranks(&[0, 2, 5]), "0 2 5");
        assert_eq!(doc::ranks(&[4, 5, 6, 7]), "4-7");
    }

    fn at_once(index: usize, shape: Shape, flows: Vec<PairRecord>) -> PatternStep {
        PatternStep {
            index,
            shape,
            flows,
            victim: None,
        }
    }

    #[test]
    fn an_incast_holds_its_aggregate_against_one_sender_alone_and_names_the_starved() {
        let into0 = |c: usize, v: f64| flow(c, 0, Some(v));
        let d = doc_of(
            Pattern::Incast { receivers: vec![0] },
            vec![
                at_once(0, Shape::Single { receiver: 0 }, vec![into0(1, 4.0)]),
                at_once(
                    1,
                    Shape::Incast { receiver: 0 },
                    vec![into0(1, 2.0), into0(2, 2.0), into0(3, 1.0)],
                ),
            ],
            Some(6.25),
            false,
        );
        let x = &d.incasts[0];
        assert_eq!((x.receiver, x.group.aggregate, x.against_single), (0, 5.0, Some(1.25)));
        assert_eq!((x.jain, x.fraction), (Some(25.0 / 27.0), Some(0.8)));
        assert_eq!(x.starved, vec![3]);
        assert_eq!(d.verdict.slow_flows, 1);
        assert_eq!(d.heatmap.as_ref().map(|h| h.values[3][0]), Some(Some(1.0)));
        let t = text(&d);
        assert!(t.starts_with("fabdiag sweep --pattern incast: 8 nodes, into rank 0; write-bw 65536 B, every sender at once\nincast into 0 (node0): 3 of 3 senders, aggregate 5.0 MB/s, 1.25 x one sender alone (4.0 MB/s from 1 (node1)), Jain's index 0.93, 80 % of --expect\n"), "{t}");
        assert!(
            t.contains(
                "  3 (node3) -> 0 (node0)         1.0 MB/s  20.0 %  starved\nstarved into 0 (node0): 3 (node3)\n"
            ),
            "{t}"
        );
        assert!(
            t.ends_with(
                "flows: 0 failed, 0 not run, 1 starved (below the outlier fraction of their incast's median sender)\n"
            ),
            "{t}"
        );
        let j = serde_json::to_value(&d).expect("JSON");
        assert_eq!(j["pattern"], serde_json::json!({"kind": "incast", "receivers": [0]}));
        assert!(j.get("splits").is_none() && j["incasts"][0]["single"]["flows"][0]["client"] == 1);
    }

    #[test]
    fn an_alltoall_names_each_phases_slowest_flow_and_a_slow_receive_side_not_a_slow_links_ranks() {
        // six ranks; link 1-2 slow both ways (phase 1: 1->2, phase 5: 2->1);
        // rank 3 slow to receive in every phase
        let v = |c: usize, s: usize| match (c, s) {
            (1, 2) | (2, 1) => 1.0,
            (_, 3) => 3.0,
            _ => 10.0,
        };
        let steps = (1..6)
            .map(|k| {
                let flows = (0..6).map(|i| flow(i, (i + k) % 6, Some(v(i, (i + k) % 6)))).collect();
                at_once(k - 1, Shape::Phase { shift: k }, flows)
            })
            .collect();
        let d = doc_of(Pattern::AllToAll, steps, None, false);
        assert_eq!(d.phases[0].slowest, Some([1, 2]));
        assert_eq!(d.phases[4].slowest, Some([2, 1]));
        let a = d.alltoall.as_ref().expect("a summary");
        let slow_recv: Vec<usize> = a.ranks.iter().filter(|r| r.slow_receive).map(|r| r.rank).collect();
        let slow_send: Vec<usize> = a.ranks.iter().filter(|r| r.slow_send).map(|r| r.rank).collect();
        assert_eq!((slow_recv, slow_send), (vec![3], vec![]));
        assert_eq!(
            d.heatmap
                .as_ref()
                .map(|h| (h.ranks.len(), h.values[1][2], h.values[0][0])),
            Some((6, Some(1.0), None))
        );
        let t = text(&d);
        assert!(
            t.contains("\nphase 1: 6 of 6 flows, aggregate 44.0 MB/s, slowest 1 (node1) -> 2 (node2) 1.0 MB/s\n"),
            "{t}"
        );
        assert!(
            t.contains("\nrank 3 (node3)'s receive side is slow: 3.0 MB/s its median flow, all phases\n"),
            "{t}"
        );
        assert!(t.contains("\nall-to-all: 49.4 MB/s a phase on average; the weakest phase 1 (44.0 MB/s); the slowest flow 1 (node1) -> 2 (node2), 1.0 MB/s in phase 1\n"), "{t}");
    }
}
