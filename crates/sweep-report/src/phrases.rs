//! The sentences the text summary and the HTML page share, so the two say
//! a thing the same way: a rank's name, the rules in one sentence, a
//! re-test's verdict, a fraction, a threshold, a baseline's line, the
//! hosts to look at. Pure functions of the document; no layout.

use fabdiag_model::units::thousands;
use fabdiag_sweep_judge::analysis::Analysis;
use fabdiag_sweep_judge::blame::{suspect, NodeCounters};
use fabdiag_sweep_judge::doc::{AbsentNode, Comparison, ErrorRateChange, ErrorRates, LinkChange, NodeChange};
use fabdiag_sweep_judge::doc::{Retest, RetestVerdict, SweepDoc, Verdict};
use fabdiag_sweep_plan::{Node, NodeStatus};
use std::borrow::Cow;
use std::collections::HashMap;

/// What the report and the page say of a slow rail.
pub(crate) const SLOW_RAIL: &str = "slow rail, suspect what its ranks share (its switches and cables)";

/// What the report says when rank 0 lost every other rank.
pub(crate) const ALL_OTHERS_LOST: &str =
    "rank 0 lost every other rank: suspect rank 0's own node or link first (each rank's stderr says what it saw)";

/// Every rank's name, made once per document: whether a host name is
/// shared depends on all the nodes, so naming rank by rank would scan them
/// all each time (N² for the node tables at thousands of ranks).
pub(crate) struct Names(pub(crate) Vec<String>);

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
        fabdiag_sweep_judge::analysis::MEDIAN_RULE_MIN_PAIRS,
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
    let from = doc.options.report_from.as_deref()?;
    let maker = doc.options.report_fabdiag_version.as_deref();
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

/// "rank 2 (node2): eth0 carrier_changes 2.0 per pair test against 0 in
/// the baseline; rank 1 there".
pub(crate) fn error_rate_change(x: &ErrorRateChange, name: &str) -> String {
    let rate = |v: f64| {
        if v == 0.0 {
            "0".to_string()
        } else if v < 10.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.0}")
        }
    };
    let floor = if x.untrusted {
        " (it went back or sat at its ceiling: a floor, not a count)"
    } else {
        ""
    };
    format!(
        "{name}: {} {} {} per pair test against {} in the baseline{floor}; rank {} there",
        x.device,
        x.name,
        rate(x.per_test),
        rate(x.baseline_per_test),
        x.baseline_rank
    )
}

/// The error rates' one line when none were compared, or how many were.
pub(crate) fn error_rates_line(e: &ErrorRates) -> String {
    match &e.not_compared {
        Some(why) => format!("NIC error rates: not compared ({why})"),
        None => format!(
            "NIC error rates, per pair test: {} compared; a port's own counter is said when its rate at least doubles or first appears, a path counter (retransmissions, congestion, TCP) when it changes fourfold and reaches {} per test",
            count(e.compared_nodes, "node"),
            fabdiag_sweep_judge::blame::PATH_FLOOR
        ),
    }
}

/// "node8 cxi1 (rank 7 in the baseline)".
pub(crate) fn absent(x: &AbsentNode) -> String {
    format!("{} (rank {} in the baseline)", x.name, x.baseline_rank)
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
    let fabric = if v.suspect_elements.is_empty() {
        String::new()
    } else {
        format!("; fabric to look at: {}", v.suspect_elements.join(", "))
    };
    match unnamed {
        0 => format!("hosts to look at: {hosts}{fabric}"),
        n => format!(
            "hosts to look at: {hosts}; and {} that never joined (no host known){fabric}",
            count(n, "rank")
        ),
    }
}

/// A rank whose own NIC counters rose: the rises, in how many of its
/// pair tests, and what the figures said of it ("rank 2 (vm07): vaX
/// carrier_changes +4, tcp RetransSegs +288 during 3 of its 7 pair tests;
/// a slow node, its pairs at 0.61 of the median: vaX's link went down or
/// retrained").
pub(crate) fn counters_line(c: &NodeCounters, name: &dyn Fn(usize) -> String) -> String {
    const SHOWN: usize = 4;
    let mut rises: Vec<String> = c
        .rises
        .iter()
        .take(SHOWN)
        .map(|r| {
            let at_least = if r.untrusted { "at least " } else { "" };
            format!("{} {} {at_least}+{}", r.device, r.name, thousands(r.rise))
        })
        .collect();
    if c.rises.len() > SHOWN {
        rises.push(format!("and {} more", c.rises.len() - SHOWN));
    }
    let suspect = c.worst().map(suspect).unwrap_or_default();
    let speed = c
        .of_median
        .map(|f| format!(" at {} of the median", fraction(f)))
        .unwrap_or_default();
    let verdict = if c.slow_node {
        format!("a slow node, its pairs{speed}: {suspect}")
    } else if !c.slow_links_with.is_empty() {
        let with: Vec<String> = c.slow_links_with.iter().map(|&r| name(r)).collect();
        format!("its links with {} are slow: {suspect}", with.join(", "))
    } else if c.failed_pairs > 0 {
        format!(
            "{} of its pair tests failed, the others ran{speed}: {suspect}",
            c.failed_pairs
        )
    } else {
        format!("its pairs at normal speed{speed}: errors that do not slow it yet ({suspect})")
    };
    format!(
        "{}: {} during {} of its {} pair tests; {verdict}",
        name(c.rank),
        rises.join(", "),
        c.tests_with_rises,
        c.tests
    )
}

/// The ranks whose counters could not be read, counted by why, in rank
/// order of first appearance.
pub(crate) fn counters_unavailable(doc: &SweepDoc) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for n in &doc.nodes {
        let why = n
            .node
            .counters
            .as_deref()
            .and_then(|c| c.strip_prefix("not available ("));
        let Some(why) = why.map(|w| w.strip_suffix(')').unwrap_or(w)) else {
            continue;
        };
        match out.iter_mut().find(|(w, _)| *w == why) {
            Some((_, k)) => *k += 1,
            None => out.push((why, 1)),
        }
    }
    out
}

/// The ranks whose path rises were not enough to name them, said once.
pub(crate) fn scattered_line(doc: &SweepDoc) -> Option<String> {
    let s = &doc.counters.scattered;
    (!s.is_empty()).then(|| {
        let names = Names::new(doc);
        let who: Vec<String> = s.iter().map(|&r| names.of(r).into_owned()).collect();
        format!(
            "not named: {} whose only rises were retransmissions or waits no higher than the rest of the sweep's, or in their tests with a rank named above ({})",
            count(s.len(), "rank"),
            who.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters' line of each rank `fixtures::counters_sweep` names:
    /// what rose, in how many of its tests, and what that points at.
    #[test]
    fn a_named_rank_s_line_says_what_rose_and_what_it_points_at() {
        use fabdiag_sweep_judge::fixtures::{counters_sweep, doc_of};
        let doc = doc_of(&counters_sweep());
        let b = &doc.counters;
        let two = &b.named[0];
        let name = |r: usize| format!("rank{r}");
        let line = counters_line(two, &name);
        assert!(
            line.starts_with(
                "rank2: eth0 carrier_changes +4 during 2 of its 5 pair tests; a slow node, its pairs at 0."
            ),
            "{line}"
        );
        assert!(line.ends_with(": eth0's link went down or retrained"), "{line}");
        let three = counters_line(&b.named[2], &name);
        assert!(
            three.contains(
                "; 1 of its pair tests failed, the others ran at 1.00 of the median: packets were dropped at eth0"
            ),
            "{three}"
        );
        let four = counters_line(&b.named[1], &name);
        assert!(
            four.starts_with("rank4: tcp RetransSegs +500 during 5 of its 5 pair tests;"),
            "{four}"
        );
        assert!(
            four.ends_with("(packets were lost on its path (TCP resent them))"),
            "{four}"
        );
    }

    #[test]
    fn fractions_keep_two_significant_digits_when_small() {
        assert_eq!(fraction(0.0625), "0.06");
        assert_eq!(fraction(1.0), "1.00");
        assert_eq!(fraction(0.0025), "0.0025");
        assert_eq!(fraction(0.000_493), "0.00049");
        assert_eq!(fraction(0.0), "0.00");
    }
}
