//! An incast's part of the pattern report: for each receiver, what one
//! sender alone carried into it, then every sender at once: the
//! aggregate against the lone sender's figure, each sender's share,
//! Jain's fairness index over the senders, and the starved senders (below
//! the outlier fraction of the median sender). Pure.

use super::doc::{flow_line, host, shaped, Group, Heatmap, IncastSummary, PatternDoc};
use fabdiag_sweep_plan::{PatternStep, Shape};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Above this many senders an incast's text names only the starved and
/// the failed ones (the JSON and the page keep every one).
const LISTED_SENDERS: usize = 16;

/// Jain's fairness index of `x`: (Σx)² / (n Σx²).
pub fn jain(x: &[f64]) -> Option<f64> {
    let sq: f64 = x.iter().map(|v| v * v).sum();
    let sum: f64 = x.iter().sum();
    (!x.is_empty() && sq > 0.0).then(|| sum * sum / (x.len() as f64 * sq))
}

/// Each receiver's incast of `steps`, into `doc`.
pub(super) fn fill(doc: &mut PatternDoc, steps: &[PatternStep], fraction: f64, streams: f64) {
    let expect = doc.expect.filter(|e| *e > 0.0);
    let singles: HashMap<usize, Group> = shaped(steps, |s| match s {
        Shape::Single { receiver } => Some(*receiver),
        _ => None,
    })
    .map(|(r, st)| (r, Group::of(&st.flows, fraction)))
    .collect();
    doc.incasts = shaped(steps, |s| match s {
        Shape::Incast { receiver } => Some(*receiver),
        _ => None,
    })
    .map(|(receiver, st)| {
        let group = Group::of(&st.flows, fraction);
        let single = singles.get(&receiver).cloned();
        let alone = single.as_ref().and_then(|g| g.flows.first()).and_then(|f| f.value);
        let values: Vec<f64> = group.flows.iter().filter_map(|f| f.value).collect();
        IncastSummary {
            receiver,
            index: st.index,
            against_single: alone
                .filter(|a| *a > 0.0 && group.measured > 0)
                .map(|a| group.aggregate / a),
            jain: jain(&values),
            fraction: expect
                .filter(|_| group.measured > 0)
                .map(|e| group.aggregate / (e * streams)),
            starved: group.flows.iter().filter(|f| f.slow).map(|f| f.client).collect(),
            single,
            group,
        }
    })
    .collect();
    let flows = doc.incasts.iter().flat_map(|x| &x.group.flows);
    doc.heatmap = Some(Heatmap::of(flows));
}

pub(super) fn text(o: &mut String, doc: &PatternDoc) {
    let u = &doc.metric.unit;
    let into = match doc.incasts.len() {
        1 => format!("into rank {}", doc.incasts[0].receiver),
        n => format!("into {n} receivers in turn"),
    };
    let _ = writeln!(
        o,
        "fabdiag sweep --pattern incast: {}, {into}; {}{}, every sender at once",
        super::doc::ranks_and_nodes(&doc.nodes),
        doc.metric.test,
        if doc.bidirectional { ", both directions" } else { "" },
    );
    for x in &doc.incasts {
        let mut line = format!(
            "incast into {}: {} of {} senders, aggregate {:.1} {u}",
            host(doc, x.receiver),
            x.group.measured,
            x.group.flows.len(),
            x.group.aggregate
        );
        let lone = x.single.as_ref().and_then(|g| g.flows.first());
        match (x.against_single, lone) {
            (Some(r), Some(f)) => {
                let _ = write!(
                    line,
                    ", {r:.2} x one sender alone ({:.1} {u} from {})",
                    f.value.unwrap_or(0.0),
                    host(doc, f.client)
                );
            }
            (None, Some(f)) if f.value.is_none() => line.push_str(", one sender alone: failed"),
            _ => {}
        }
        if let Some(j) = x.jain {
            let _ = write!(line, ", Jain's index {j:.2}");
        }
        if let Some(f) = x.fraction {
            let _ = write!(line, ", {:.0} % of --expect", f * 100.0);
        }
        let _ = writeln!(o, "{line}");
        let all = x.group.flows.len() <= LISTED_SENDERS;
        for f in x.group.flows.iter().filter(|f| all || f.slow || f.value.is_none()) {
            flow_line(o, doc, f, "starved");
        }
        if !x.starved.is_empty() {
            let who: Vec<String> = x.starved.iter().map(|&r| host(doc, r)).collect();
            let _ = writeln!(o, "starved into {}: {}", host(doc, x.receiver), who.join(", "));
        }
    }
    if doc.incasts.is_empty() {
        let _ = writeln!(o, "no incast ran: it needs two ranks or more");
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jains_index_is_one_for_equal_shares_and_one_over_n_for_one_taker() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), Some(1.0));
        assert_eq!(jain(&[6.0, 0.0, 0.0]), Some(1.0 / 3.0));
        // 2 2 1: 25 / (3 × 9)
        assert_eq!(jain(&[2.0, 2.0, 1.0]), Some(25.0 / 27.0));
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
