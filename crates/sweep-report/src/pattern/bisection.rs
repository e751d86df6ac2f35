//! A bisection's part of the pattern report: each split's aggregate, its
//! flows' shares, the weakest split, and, given the rate one node's NIC
//! can carry (`--expect`), each split's aggregate as a fraction of what
//! its flows' NICs could carry together. Pure.

use super::doc::{flow_line, ranks, shaped, Group, PatternDoc, SplitSummary};
use fabdiag_sweep_plan::{Pattern, PatternStep, Shape, SplitBy};
use std::fmt::Write as _;

/// The splits of `steps` and the weakest of them, into `doc`.
pub(super) fn fill(doc: &mut PatternDoc, steps: &[PatternStep], fraction: f64, streams: f64) {
    let expect = doc.expect;
    doc.splits = shaped(steps, |s| match s {
        Shape::Split(split) => Some(split.clone()),
        _ => None,
    })
    .map(|(split, st)| {
        let group = Group::of(&st.flows, fraction);
        SplitSummary {
            index: st.index,
            fraction: expect
                .filter(|e| *e > 0.0 && !st.flows.is_empty())
                .map(|e| group.aggregate / (e * streams * st.flows.len() as f64)),
            halves: split.halves,
            idle: split.idle,
            group,
        }
    })
    .collect();
    doc.weakest = doc
        .splits
        .iter()
        .filter(|x| x.group.measured > 0)
        .min_by(|a, b| a.group.aggregate.total_cmp(&b.group.aggregate))
        .map(|x| x.index);
}

pub(super) fn text(o: &mut String, doc: &PatternDoc) {
    let u = &doc.metric.unit;
    let Pattern::Bisection { by, splits, seed } = doc.pattern else {
        return;
    };
    let seed = if by == SplitBy::Random {
        format!(", seed {seed}")
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "fabdiag sweep --pattern bisection: {}, {splits} split(s) by {}{seed}; {}{}, every flow of a split at once",
        super::doc::ranks_and_nodes(&doc.nodes),
        by.name(),
        doc.metric.test,
        if doc.bidirectional { ", both directions" } else { "" },
    );
    for x in &doc.splits {
        if x.group.flows.is_empty() {
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
            x.group.measured,
            x.group.flows.len(),
            x.group.aggregate
        );
        for f in &x.group.flows {
            flow_line(o, doc, f, "slow");
        }
    }
    if let Some(w) = doc.weakest.and_then(|i| doc.splits.iter().find(|x| x.index == i)) {
        let _ = writeln!(
            o,
            "bisection: {:.1} {u} (split {}, the weakest of {})",
            w.group.aggregate,
            w.index + 1,
            doc.splits.len()
        );
    }
}
