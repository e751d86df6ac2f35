//! The NIC counters set beside the sweep's verdicts. For each rank, the
//! fault counters its own side of its pair tests saw rise, summed per
//! device and counter, beside what the figures said of it: a slow node,
//! the slow links it is in, or nothing. A rank is named by its port's own
//! counters (physical, flap, drop) whenever they rose; by path counters
//! only (retransmissions, congestion, every TCP counter: a rank sees them
//! rise when its partner's link is the bad one, and a namespace's TCP
//! counters count all its connections) when its pair tests' rose far
//! above the rest of the sweep's, test for test (both ends of each test
//! counted). A slow rank with rises is named with them; a rank whose
//! counters rose while its pairs ran at normal speed is
//! a warning of its own (errors that do not slow it yet). A counter that
//! went back or sits at its ceiling is said as untrusted, never summed as
//! zero. Pure: reads the records it is handed.

use crate::analysis::Analysis;
use crate::node_summary::NodeSummary;
use fabdiag_model::counters::{of_the_path, severity, Change, Class, Family, Noted};
use fabdiag_sweep_plan::PairRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One counter's rises on one rank's side, over its pair tests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterRise {
    pub family: Family,
    pub device: String,
    pub name: String,
    pub class: Class,
    /// The sum of its known rises (an at-ceiling counter's at least).
    pub rise: u64,
    /// It went back or sat at its ceiling in some test: the sum is a
    /// floor, not a count.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted: bool,
}

impl CounterRise {
    /// A counter of the path, not the port (`Noted::of_the_path`).
    pub fn of_the_path(&self) -> bool {
        of_the_path(self.family, self.class)
    }
}

/// A rank whose own counters rose during its pair tests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeCounters {
    pub rank: usize,
    /// The port's own counters first (physical, flap, drop), then the
    /// path's; the largest rise first within each.
    pub rises: Vec<CounterRise>,
    /// Its pair tests in which a fault counter rose on its side, and all
    /// its pair tests that ran.
    pub tests_with_rises: usize,
    pub tests: usize,
    /// What the figures said of it: a slow node, and the partners of the
    /// slow links it is in.
    pub slow_node: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow_links_with: Vec<usize>,
    /// Its median as a fraction of the sweep's, where better is higher
    /// (below 1: worse, for latency too).
    pub of_median: Option<f64>,
    /// Its pair tests that failed (a flapping link fails tests rather
    /// than slowing them).
    #[serde(default)]
    pub failed_pairs: usize,
}

impl NodeCounters {
    /// Whether the figures named it (slow, or in a slow link).
    pub fn is_slow(&self) -> bool {
        self.slow_node || !self.slow_links_with.is_empty()
    }

    /// The first of its rises (the port's own before the path's): what
    /// to suspect.
    pub fn worst(&self) -> Option<&CounterRise> {
        self.rises.first()
    }
}

/// Rank `rank`'s tally of fault rises over the pair tests in `pairs`.
#[derive(Default)]
struct Tally {
    rises: BTreeMap<(String, String), CounterRise>,
    /// Every test it ran: the partner, and the sum of the path counters'
    /// rises on both sides of the test (0: none rose). Both: a lost
    /// packet is resent by whichever end sent it, and in a one-way test
    /// a lossy rank that receives sees little of its own loss.
    tests: Vec<(usize, u64)>,
    /// Tests in which a fault counter rose on its side.
    rise_tests: usize,
    /// Its port's own counters rose in some test.
    port: bool,
}

/// The sum of the path counters' rises among `alarming`.
fn path_rise(alarming: &[&Noted]) -> u64 {
    alarming
        .iter()
        .filter(|x| x.of_the_path())
        .map(|x| x.change.rise().unwrap_or(1))
        .sum()
}

/// Rank `rank`'s fault counters that rose (or cannot be trusted) in
/// pair test `p`.
fn alarming_of(p: &PairRecord, rank: usize) -> Vec<&Noted> {
    let noted = p.counters.as_deref().map_or(&[][..], |c| c.of(p, rank));
    noted.iter().filter(|x| x.alarming()).collect()
}

fn tally(pairs: &[PairRecord], n: usize) -> Vec<Tally> {
    let mut t: Vec<Tally> = (0..n).map(|_| Tally::default()).collect();
    for p in pairs.iter().filter(|p| !p.untested) {
        let (client, server) = (alarming_of(p, p.client), alarming_of(p, p.server));
        let both = path_rise(&client) + path_rise(&server);
        for (rank, partner, alarming) in [(p.client, p.server, client), (p.server, p.client, server)] {
            let Some(me) = t.get_mut(rank) else { continue };
            me.tests.push((partner, both));
            me.rise_tests += usize::from(!alarming.is_empty());
            me.port |= alarming.iter().any(|x| !x.of_the_path());
            add_rises(&mut me.rises, &alarming);
        }
    }
    t
}

/// Adds `alarming` changes to `rises`, summed per device and counter.
pub(crate) fn add_rises(rises: &mut BTreeMap<(String, String), CounterRise>, alarming: &[&Noted]) {
    for x in alarming {
        let r = rises
            .entry((x.device.clone(), x.name.clone()))
            .or_insert_with(|| CounterRise {
                family: x.family,
                device: x.device.clone(),
                name: x.name.clone(),
                class: x.class,
                rise: 0,
                untrusted: false,
            });
        r.rise = r.rise.saturating_add(x.change.rise().unwrap_or(0));
        r.untrusted |= matches!(x.change, Change::WentBack { .. } | Change::AtCeiling { .. });
    }
}

/// How far above the sweep's typical path rises a rank's must be, test
/// for test, to name it, and the least they must be on one side
/// (retransmitted segments, say, per test).
pub const PATH_FACTOR: u64 = 4;
pub const PATH_FLOOR: u64 = 8;
/// The least for a pair test's two sides together.
const PAIR_FLOOR: u64 = 2 * PATH_FLOOR;

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// A rank's typical path rise per test (both sides'): the median over its
/// tests, not counting those with a partner whose port's own counters
/// rose (its trouble, seen from here).
fn typical(t: &Tally, all: &[Tally]) -> u64 {
    let own = t
        .tests
        .iter()
        .filter(|(partner, _)| !all.get(*partner).is_some_and(|p| p.port))
        .map(|(_, path)| *path);
    median(own.collect())
}

/// The ranks the counters name, and those whose path rises were not
/// enough to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Blame {
    /// Every rank named by its own counters: slow ones first, then by
    /// the size of their largest rise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<NodeCounters>,
    /// Ranks whose only rises were path counters no higher than the rest
    /// of the sweep's, test for test (or in their tests with a rank whose
    /// port is named): not named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scattered: Vec<usize>,
}

impl Blame {
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.scattered.is_empty()
    }
}

/// Every rank whose own fault counters rose, named or not.
pub fn blame(pairs: &[PairRecord], nodes: &[NodeSummary], an: &Analysis) -> Blame {
    let tallies = tally(pairs, nodes.len());
    let typicals: Vec<u64> = tallies.iter().map(|t| typical(t, &tallies)).collect();
    // the sweep's typical: the median of the ranks' that no port names
    let sweep = median(
        tallies
            .iter()
            .zip(&typicals)
            .filter(|(t, _)| !t.port && !t.tests.is_empty())
            .map(|(_, &x)| x)
            .collect(),
    );
    let bar = (PATH_FACTOR * sweep).max(PAIR_FLOOR);
    let mut out = Blame::default();
    for (rank, t) in tallies.iter().enumerate().filter(|(_, t)| !t.rises.is_empty()) {
        if t.port || typicals[rank] >= bar {
            out.named.push(node_counters(rank, t, nodes, an));
        } else {
            out.scattered.push(rank);
        }
    }
    out.named.sort_by(|a, b| {
        b.is_slow()
            .cmp(&a.is_slow())
            .then_with(|| b.rises[0].rise.cmp(&a.rises[0].rise))
            .then_with(|| a.rank.cmp(&b.rank))
    });
    out
}

fn node_counters(rank: usize, t: &Tally, nodes: &[NodeSummary], an: &Analysis) -> NodeCounters {
    let mut rises: Vec<CounterRise> = t.rises.values().cloned().collect();
    // the port's own counters first: they say what the path's cannot
    rises.sort_by(|a, b| {
        weight(a)
            .cmp(&weight(b))
            .then_with(|| b.rise.cmp(&a.rise))
            .then_with(|| a.name.cmp(&b.name))
    });
    let slow_links_with = an
        .slow_links
        .iter()
        .filter_map(|f| match (f.a == rank, f.b == rank) {
            (true, _) => Some(f.b),
            (_, true) => Some(f.a),
            _ => None,
        })
        .collect();
    NodeCounters {
        rank,
        rises,
        tests_with_rises: t.rise_tests,
        tests: t.tests.len(),
        slow_node: an.slow_nodes.iter().any(|f| f.node == rank),
        slow_links_with,
        of_median: nodes
            .get(rank)
            .and_then(|s| s.median)
            .map(|m| Analysis::relative(an.better, m, an.stats.median)),
        failed_pairs: nodes.get(rank).map_or(0, |s| s.pairs_failed),
    }
}

/// The order a rank's rises are listed and judged in (`severity`).
fn weight(r: &CounterRise) -> u8 {
    severity(r.family, r.class)
}

/// What a rise points at, for the report's line.
pub fn suspect(r: &CounterRise) -> String {
    let device = &r.device;
    match (r.family, r.class) {
        (Family::Tcp, _) => "packets were lost on its path (TCP resent them)".into(),
        (_, Class::Physical) => format!("suspect the cable or port of {device}"),
        (_, Class::Flap) => format!("{device}'s link went down or retrained"),
        (_, Class::Retransmit) => format!("packets were lost on {device}'s path"),
        (_, Class::Drop) => format!("packets were dropped at {device}"),
        (_, Class::Congestion) => format!("{device} was congested"),
        (_, Class::Traffic | Class::Other) => format!("look at {device}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{doc_of, noted, sweep_with};
    use fabdiag_model::counters::Noted;
    use fabdiag_sweep_plan::PairNoted;

    fn rose(device: &str, name: &str, class: Class, by: u64) -> Noted {
        noted(device, name, class, Change::Rose { by })
    }

    /// Six ranks, their counters as `fixtures::counters_sweep` sets them.
    #[test]
    fn the_counters_name_the_rank_whose_port_or_path_is_bad_and_no_other() {
        let sweep = crate::fixtures::counters_sweep();
        let doc = doc_of(&sweep);
        let b = &doc.counters;
        let named: Vec<usize> = b.named.iter().map(|n| n.rank).collect();
        // the slow node first, then by the largest rise
        assert_eq!(named, [2, 4, 3], "{b:#?}");
        assert_eq!(b.scattered, [1, 5]);
        let two = &b.named[0];
        assert!(two.slow_node && two.of_median.is_some_and(|f| f < 0.5), "{two:?}");
        assert_eq!((two.tests_with_rises, two.tests), (2, 5));
        assert_eq!(b.named[1].rises[0].rise, 500);
    }

    /// A lossy rank that mostly receives: in a one-way test the sender
    /// resends what its link lost, so rank 4, the server of four of its
    /// five tests, resends little itself while its partners resend 100 a
    /// test; its one test as the client failed before any counter was
    /// read. Rank 0 (a sweep's coordinator talks to every rank) resends a
    /// few in every test. Rank 4 is named by its pairs' resends; its
    /// partners, each with one lossy test, are not; neither is rank 0.
    #[test]
    fn a_lossy_rank_is_named_by_what_its_pairs_resent_whichever_end_sent() {
        let mut sweep = sweep_with(6, &[], &[(4, 5)], &[]);
        for p in sweep.pairs.iter_mut().filter(|p| p.error.is_none()) {
            let mut n = PairNoted::default();
            if p.server == 4 {
                n.client.push(rose("tcp", "RetransSegs", Class::Retransmit, 100));
                n.server.push(rose("tcp", "RetransSegs", Class::Retransmit, 3));
            } else if p.client == 0 {
                n.client.push(rose("tcp", "RetransSegs", Class::Retransmit, 3));
            }
            if !n.client.is_empty() {
                p.counters = Some(Box::new(n));
            }
        }
        let b = doc_of(&sweep).counters;
        let named: Vec<usize> = b.named.iter().map(|n| n.rank).collect();
        assert_eq!(named, [4], "{b:#?}");
        assert_eq!(b.scattered, [0, 1, 2, 3]);
        // its own rises are what it lists
        assert_eq!(b.named[0].rises[0].rise, 12);
    }
}
