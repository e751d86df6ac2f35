//! The sweep's one-page text summary (`summary.txt`, and what rank 0
//! prints): the verdict first, then each section in turn, lists cut to a
//! page with "... and N more". One function per section; the sentences
//! are `phrases`'. Pure: builds a string, prints nothing.

use crate::phrases::*;
use fabdiag_sweep_judge::analysis::{Better, NodeRule};
use fabdiag_sweep_judge::doc::{Comparison, ErrorRateChange, ErrorRates};
use fabdiag_sweep_judge::doc::{RetestVerdict, SweepDoc};
use fabdiag_sweep_plan::{NodeStatus, PairRecord};
use std::fmt::Write;

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
    error_rates_text(o, &c.error_rates, names);
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

/// The NIC error rates against the baseline, in the text summary.
fn error_rates_text(o: &mut String, e: &ErrorRates, names: &Names) {
    let _ = writeln!(o, "{}", error_rates_line(e));
    if e.not_compared.is_some() {
        return;
    }
    let lines = |l: &[ErrorRateChange]| {
        let all = l.iter().map(|x| error_rate_change(x, &names.of(x.rank)));
        first_listed(all, l.len(), |n| format!("... and {n} more (sweep.json has every one)"))
    };
    section(o, "NIC error rates risen since the baseline", lines(&e.risen));
    if !e.fallen.is_empty() {
        section(o, "NIC error rates fallen since the baseline", lines(&e.fallen));
    }
}

/// The one-page text summary.
pub fn text(doc: &SweepDoc) -> String {
    let mut o = String::new();
    let names = Names::new(doc);
    heading(&mut o, doc);
    // the fabric's elements first: a slow cable explains slow pairs and nodes
    crate::fabric::fabric_text(&mut o, doc, &names);
    crate::fabric::path_sensitive_text(&mut o, doc, &names);
    slow_nodes(&mut o, doc, &names);
    slow_links(&mut o, doc, &names);
    nic_counters(&mut o, doc, &names);
    rails(&mut o, doc);
    if let Some(c) = &doc.baseline {
        baseline_text(&mut o, c, &names, &doc.metric.unit);
    }
    cleared(&mut o, doc, &names);
    lost(&mut o, doc, &names);
    failed(&mut o, doc, &names);
    untested(&mut o, doc);
    slowest(&mut o, doc, &names);
    threshold_text(&mut o, doc, &names);
    node_medians(&mut o, doc, &names);
    let _ = writeln!(o, "{}", suspects_line(doc));
    let _ = writeln!(o, "overhead: {}", overhead_line(doc));
    o
}

/// What ran, how it ended, the pairs' figures and the rules.
fn heading(o: &mut String, doc: &SweepDoc) {
    let u = &doc.metric.unit;
    let an = &doc.analysis;
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
}

/// Each slow node, the rule that named it, and its re-test.
fn slow_nodes(o: &mut String, doc: &SweepDoc, names: &Names) {
    let u = &doc.metric.unit;
    let an = &doc.analysis;
    let reference = an.rules.reference.name();
    section(
        o,
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
                let under = crate::fabric::accounted_for(doc, f.node)
                    .map(|e| format!(" (accounted for by {e}, blamed above)"))
                    .unwrap_or_default();
                format!("{}: median {:.2} {u}, {why}{re}{under}", names.of(f.node), f.median)
            })
            .collect(),
    );
}

/// Each slow link, how far off it is, and its re-test.
fn slow_links(o: &mut String, doc: &SweepDoc, names: &Names) {
    let u = &doc.metric.unit;
    section(
        o,
        "slow links",
        doc.analysis
            .slow_links
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
}

/// The ranks whose own NIC counters rose, beside what the figures said
/// of them; and the ranks whose counters could not be read. Nothing when
/// no rank read counters (a simulated sweep).
fn nic_counters(o: &mut String, doc: &SweepDoc, names: &Names) {
    if doc.nodes.iter().all(|n| n.node.counters.is_none()) {
        return;
    }
    let name = |r: usize| names.of(r).into_owned();
    section(
        o,
        "NIC counters that rose",
        first_listed(
            doc.counters.named.iter().map(|c| counters_line(c, &name)),
            doc.counters.named.len(),
            |n| format!("... and {n} more ranks"),
        ),
    );
    if let Some(line) = scattered_line(doc) {
        let _ = writeln!(o, "{line}");
    }
    for (why, k) in counters_unavailable(doc) {
        let _ = writeln!(o, "NIC counters not available on {}: {why}", count(k, "rank"));
    }
}

/// Each rail's median and slow ranks, on rails.
fn rails(o: &mut String, doc: &SweepDoc) {
    if doc.rails.is_empty() {
        return;
    }
    let u = &doc.metric.unit;
    section(
        o,
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

/// The suspects a re-test alone cleared, when any did.
fn cleared(o: &mut String, doc: &SweepDoc, names: &Names) {
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
        section(o, "cleared by re-test", cleared);
    }
}

/// The nodes that never joined or were lost, and why.
fn lost(o: &mut String, doc: &SweepDoc, names: &Names) {
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
    section(o, "missing or lost nodes", lost);
}

/// Pairs that ran and failed, one by one up to a page's worth.
fn failed(o: &mut String, doc: &SweepDoc, names: &Names) {
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
    section(o, "failed pairs", lines);
}

/// Pairs not tested, by reason: a node lost at 1,000 ranks leaves 999 of
/// them, which one by one would hide every real failure behind one cause.
fn untested(o: &mut String, doc: &SweepDoc) {
    let untested = untested_by_reason(doc);
    if !untested.is_empty() {
        let lines = untested
            .iter()
            .map(|(why, n)| format!("{n} {}: {why}", if *n == 1 { "pair" } else { "pairs" }));
        let lines = first_listed(lines, untested.len(), |n| {
            format!("... and {n} more reasons (sweep.json)")
        });
        section(o, "not tested", lines);
    }
}

/// The five worst pairs, in one pass, not a sort of every pair (millions
/// of them at thousands of ranks); ties in pair order, so the list is
/// stable.
fn slowest(o: &mut String, doc: &SweepDoc, names: &Names) {
    let u = &doc.metric.unit;
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
        o,
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
}

/// Every node's median, in a sweep small enough to list them.
fn node_medians(o: &mut String, doc: &SweepDoc, names: &Names) {
    if doc.nodes.len() > 64 {
        return;
    }
    let _ = writeln!(o, "node medians ({}):", doc.metric.unit);
    // one column for the names, however long (NIC, address, GPU)
    let w = names.0.iter().map(String::len).max().unwrap_or(0).max(28);
    for (x, n) in doc.nodes.iter().zip(&names.0) {
        let v = x.median.map_or("-".to_string(), |v| format!("{v:.2}"));
        let flag = if x.slow { "  slow" } else { "" };
        let _ = writeln!(o, "  {n:<w$} {v:>12}{flag}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a baseline where node1 flapped, now node2 does and node1
    /// no longer: both said, node by node, in the text and on the page.
    #[test]
    fn nic_error_rates_against_a_baseline_are_said_in_the_text_and_on_the_page() {
        use fabdiag_sweep_judge::fixtures::{baseline_of, build_with, flapping_on, now_sweep, section_of};
        let base = baseline_of(&flapping_on(1, 0));
        let now = flapping_on(0, 2);
        let doc = build_with(now_sweep(&now), Some((&base, 0.8)));
        let text = text(&doc);
        assert_eq!(
            section_of(&text, "NIC error rates risen since the baseline:"),
            ["  rank 2 (node2): eth0 carrier_changes 2.00 per pair test against 0 in the baseline; rank 1 there"],
            "{text}"
        );
        assert_eq!(
            section_of(&text, "NIC error rates fallen since the baseline:"),
            ["  rank 1 (node1): eth0 carrier_changes 0 per pair test against 2.00 in the baseline; rank 0 there"]
        );
        assert!(
            text.contains("NIC error rates, per pair test: 4 nodes compared;"),
            "{text}"
        );
        let page = crate::html::page(&doc, &crate::picture::Pictures::default());
        assert!(
            page.contains("<li>rank 2 (node2): eth0 carrier_changes 2.00 per pair test against 0"),
            "{page}"
        );
    }

    /// Every pair at half its baseline figure but one at a fifth: the
    /// fabric's change said once, the pair worse than that named.
    #[test]
    fn a_fabric_slower_as_a_whole_is_said_once_and_the_pair_worse_than_that_named() {
        use fabdiag_sweep_judge::fixtures::{baseline_of, build_with, doc_with, sweep_with};
        let base = baseline_of(&doc_with(8, &[], &[], &[]));
        let mut values: Vec<((usize, usize), f64)> = Vec::new();
        for a in 0..8 {
            for b in a + 1..8 {
                values.push(((a, b), if (a, b) == (1, 4) { 20.0 } else { 50.0 }));
            }
        }
        let t = text(&build_with(sweep_with(8, &values, &[], &[]), Some((&base, 0.8))));
        assert!(t.contains("the fabric as a whole is at 0.50 of its baseline"), "{t}");
        assert!(
            t.contains(
                "a pair has regressed below 0.40 of its baseline figure (0.8 times their median, under 1), a node"
            ),
            "{t}"
        );
        assert!(
            t.contains("rank 1 (host<1>) <-> rank 4 (host<4>): 20.00 MB/s against 100.00 in the baseline (0.20)"),
            "{t}"
        );
    }

    #[test]
    fn the_text_lists_the_first_twenty_links_and_the_nodes_swapped() {
        use fabdiag_sweep_judge::fixtures::{baseline_of, build_with, section_of, sweep_on, sweep_with};
        // every pair of nodes 0-9 at twice its figure now: 45 regressed
        // links between 18 nodes, none of them most of a node's pairs
        let mut was = Vec::new();
        for a in 0..10 {
            for b in a + 1..10 {
                was.push(((a, b), 200.0));
            }
        }
        let base = baseline_of(&sweep_on(30, &was, |r| format!("node{r}")));
        let now = sweep_on(30, &[], |r| if r == 29 { "spare".into() } else { format!("node{r}") });
        let mut s = sweep_with(30, &[], &[], &[]);
        s.nodes = now.nodes.iter().map(|x| x.node.clone()).collect();
        let t = text(&build_with(s, Some((&base, 0.8))));
        let links = section_of(&t, "regressed links:");
        assert_eq!(links.len(), 21, "{t}");
        assert_eq!(links[20], "  ... and 25 more (sweep.json has every one)");
        assert!(t.contains("regressed nodes: none\n"), "{t}");
        assert!(t.contains("\nnot in the baseline: rank 29 (spare)\n"), "{t}");
        assert!(
            t.contains("\nin the baseline, not in this sweep: node29 (rank 29 in the baseline)\n"),
            "{t}"
        );
    }
    use fabdiag_sweep_judge::fixtures::*;

    #[test]
    fn a_node_named_by_its_median_says_which_rule_and_why() {
        let doc = doc_with(8, &ci_run(), &[], &[]);
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
        let d = fabdiag_sweep_judge::build::build(fabdiag_sweep_judge::build::Inputs {
            limits: fabdiag_sweep_judge::doc::Limits {
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
