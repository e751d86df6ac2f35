//! An all-to-all's part of the pattern report: each phase's aggregate
//! and its slowest flow; over the whole run, the mean aggregate a phase,
//! the weakest phase, the slowest flow, and each rank's send and receive
//! sides (the median of its flows each way), those below the outlier
//! fraction of the median rank named: a slow receive side points at a
//! rank's NIC or its switch port, not at one link. Pure.

use super::doc::{flow_line, host, shaped, AllToAllSummary, Flow, Group, Heatmap, PatternDoc, PhaseSummary, RankSides};
use fabdiag_sweep_plan::{PatternStep, Shape};
use std::fmt::Write as _;

/// The phases of `steps`, their summary and the heatmap, into `doc`.
pub(super) fn fill(doc: &mut PatternDoc, steps: &[PatternStep], fraction: f64) {
    doc.phases = shaped(steps, |s| match s {
        Shape::Phase { shift } => Some(*shift),
        _ => None,
    })
    .map(|(shift, st)| {
        let group = Group::of(&st.flows, fraction);
        PhaseSummary {
            index: st.index,
            shift,
            slowest: group.slowest().map(|f| [f.client, f.server]),
            group,
        }
    })
    .collect();
    let measured: Vec<&PhaseSummary> = doc.phases.iter().filter(|p| p.group.measured > 0).collect();
    let flows = || {
        doc.phases
            .iter()
            .flat_map(|p| p.group.flows.iter().map(move |f| (p.index, f)))
    };
    let slowest = flows()
        .filter(|(_, f)| f.value.is_some())
        .min_by(|a, b| a.1.value.unwrap_or(0.0).total_cmp(&b.1.value.unwrap_or(0.0)));
    let summary = AllToAllSummary {
        mean_aggregate: match measured.len() {
            0 => 0.0,
            n => measured.iter().map(|p| p.group.aggregate).sum::<f64>() / n as f64,
        },
        weakest_phase: measured
            .iter()
            .min_by(|a, b| a.group.aggregate.total_cmp(&b.group.aggregate))
            .map(|p| p.index),
        slowest_phase: slowest.map(|(i, _)| i),
        slowest: slowest.map(|(_, f)| f.clone()),
        ranks: sides(doc.nodes.len(), &flows().map(|(_, f)| f).collect::<Vec<_>>(), fraction),
    };
    doc.heatmap = Some(Heatmap::of(flows().map(|(_, f)| f)));
    doc.alltoall = Some(summary);
}

/// Each rank's median send and receive figure, the slow sides marked.
/// The median, not the mean: one slow link among a rank's flows is that
/// link's, and must not mark a whole side of either of its ranks. Send
/// sides are judged without the flows into a slow receive side, which
/// every sender shares.
fn sides(n: usize, flows: &[&Flow], fraction: f64) -> Vec<RankSides> {
    let middle = |v: &[f64]| (!v.is_empty()).then(|| fabdiag_sweep_judge::analysis::median(&mut v.to_vec()));
    // each rank's median flow one way (0 send, 1 receive), over `flows`
    let per_rank = |way: usize, take: &dyn Fn(&Flow) -> bool| -> Vec<Option<f64>> {
        let mut seen: Vec<Vec<f64>> = vec![Vec::new(); n];
        for f in flows.iter().filter(|f| take(f)) {
            let rank = if way == 0 { f.client } else { f.server };
            if let (Some(v), Some(s)) = (f.value, seen.get_mut(rank)) {
                s.push(v);
            }
        }
        seen.iter().map(|s| middle(s)).collect()
    };
    let below = |figures: &[Option<f64>]| -> Vec<bool> {
        let m = middle(&figures.iter().flatten().copied().collect::<Vec<f64>>());
        figures
            .iter()
            .map(|x| matches!((x, m), (Some(x), Some(m)) if *x < fraction * m))
            .collect()
    };
    let receive = per_rank(1, &|_| true);
    let slow_receive = below(&receive);
    let send = per_rank(0, &|f| !slow_receive.get(f.server).copied().unwrap_or(false));
    let slow_send = below(&send);
    (0..n)
        .filter(|&r| send[r].is_some() || receive[r].is_some())
        .map(|rank| RankSides {
            rank,
            send: send[rank],
            receive: receive[rank],
            slow_send: slow_send[rank],
            slow_receive: slow_receive[rank],
        })
        .collect()
}

pub(super) fn text(o: &mut String, doc: &PatternDoc) {
    let u = &doc.metric.unit;
    let _ = writeln!(
        o,
        "fabdiag sweep --pattern alltoall: {}, {} phases (rank i to rank i+k in phase k); {}{}, every flow of a phase at once",
        super::doc::ranks_and_nodes(&doc.nodes),
        doc.phases.len(),
        doc.metric.test,
        if doc.bidirectional { ", both directions" } else { "" },
    );
    for p in &doc.phases {
        let slowest = p
            .slowest
            .and_then(|[c, s]| p.group.flows.iter().find(|f| f.client == c && f.server == s))
            .map(|f| {
                format!(
                    ", slowest {} -> {} {:.1} {u}",
                    host(doc, f.client),
                    host(doc, f.server),
                    f.value.unwrap_or(0.0)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "phase {}: {} of {} flows, aggregate {:.1} {u}{slowest}",
            p.shift,
            p.group.measured,
            p.group.flows.len(),
            p.group.aggregate
        );
        for f in p.group.flows.iter().filter(|f| f.slow || f.value.is_none()) {
            flow_line(o, doc, f, "slow");
        }
    }
    let Some(a) = &doc.alltoall else { return };
    let phase = |i: usize| doc.phases.iter().find(|p| p.index == i);
    if let (Some(w), Some(f), Some(fp)) = (
        a.weakest_phase.and_then(phase),
        a.slowest.as_ref(),
        a.slowest_phase.and_then(phase),
    ) {
        let _ = writeln!(
            o,
            "all-to-all: {:.1} {u} a phase on average; the weakest phase {} ({:.1} {u}); the slowest flow {} -> {}, {:.1} {u} in phase {}",
            a.mean_aggregate,
            w.shift,
            w.group.aggregate,
            host(doc, f.client),
            host(doc, f.server),
            f.value.unwrap_or(0.0),
            fp.shift
        );
    }
    for (way, slow, fig) in [
        (
            "receive",
            a.ranks.iter().filter(|r| r.slow_receive).collect::<Vec<_>>(),
            1,
        ),
        ("send", a.ranks.iter().filter(|r| r.slow_send).collect(), 0),
    ] {
        for r in slow {
            let v = if fig == 1 { r.receive } else { r.send };
            let _ = writeln!(
                o,
                "rank {}'s {way} side is slow: {:.1} {u} its median flow, all phases",
                host(doc, r.rank),
                v.unwrap_or(0.0)
            );
        }
    }
}
