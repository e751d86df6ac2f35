//! Which elements of the fabric its slow pairs share. Each pair's ways
//! say which elements it crossed for sure (on every equal-cost path) and
//! which it may have crossed; an element that clean pairs crossed for sure
//! is cleared, and of the rest the one that the most still unexplained
//! slow pairs may have crossed is blamed, the one with the fewest other
//! pairs through it first when several explain as many. Elements that
//! explain the same slow pairs equally well are named together, as one
//! suspect that this map cannot tell apart ("leaf2-spine1 or
//! leaf2-spine2"). Repeated while an element explains enough slow pairs.
//! Pure: the pairs' verdicts (slow or not) are the caller's.

use crate::map::{Element, Fabric};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The fewest slow pairs an element must explain to be blamed.
pub const MIN_PAIRS: usize = 3;

/// One tested pair, by its ranks, and whether it was slow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub a: usize,
    pub b: usize,
    pub slow: bool,
}

/// One suspect: the elements it may be (best first), and the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suspect {
    pub elements: Vec<Element>,
    /// Slow pairs that may have crossed it, not explained by an earlier
    /// suspect.
    pub explained: usize,
    /// Every tested pair that may have crossed it.
    pub through: usize,
    /// Of those, the slow ones.
    pub slow_through: usize,
}

/// What attribution found: the suspects in the order found, the slow
/// pairs none explains, and the pairs whose hosts the map does not have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attribution {
    pub suspects: Vec<Suspect>,
    pub unexplained: usize,
    pub off_map: usize,
}

/// The elements a way between two switches crosses for sure (on every
/// equal-cost path), and those it may cross.
type Crossed = (BTreeSet<Element>, BTreeSet<Element>);

#[derive(Default)]
struct Tally {
    /// Pairs that crossed it for sure, and how many of them were clean.
    certain: usize,
    certain_clean: usize,
    /// Pairs that may have crossed it.
    possible: BTreeSet<usize>,
}

/// The suspects among `fabric`'s elements, rank r being host `hosts[r]`.
pub fn attribute(fabric: &Fabric, hosts: &[String], pairs: &[Seen]) -> Attribution {
    let mut tally: BTreeMap<Element, Tally> = BTreeMap::new();
    let mut slow: BTreeSet<usize> = BTreeSet::new();
    let mut off_map = 0;
    // the ways between two switches, worked out once for all their hosts
    let mut between: HashMap<(&str, &str), Option<Crossed>> = HashMap::new();
    for (i, p) in pairs.iter().enumerate() {
        let on_map = |r: usize| hosts.get(r).and_then(|h| fabric.host(h));
        let (Some(a), Some(b)) = (on_map(p.a), on_map(p.b)) else {
            off_map += 1;
            continue;
        };
        let sets = between
            .entry((a.switch.as_str(), b.switch.as_str()))
            .or_insert_with(|| {
                fabric
                    .switch_ways(&a.switch, &b.switch)
                    .map(|w| (w.certain(), w.possible()))
            });
        let Some((certain, possible)) = sets else {
            off_map += 1;
            continue;
        };
        let ends = [Element::Host(a.name.clone()), Element::Host(b.name.clone())];
        for e in certain.iter().chain(&ends) {
            let t = tally.entry(e.clone()).or_default();
            t.certain += 1;
            t.certain_clean += usize::from(!p.slow);
        }
        for e in possible.iter().chain(&ends) {
            tally.entry(e.clone()).or_default().possible.insert(i);
        }
        if p.slow {
            slow.insert(i);
        }
    }
    // crossed for sure by clean pairs, mostly: not the fault
    let cleared = |t: &Tally| t.certain_clean >= 2 && t.certain_clean * 2 > t.certain;
    let mut suspects = Vec::new();
    loop {
        let mut best: Option<(usize, usize, Vec<&Element>)> = None;
        for (e, t) in tally.iter().filter(|(_, t)| !cleared(t)) {
            let covers = t.possible.intersection(&slow).count();
            if covers < MIN_PAIRS {
                continue;
            }
            let through = t.possible.len();
            match &mut best {
                // more slow pairs explained, or as many through fewer pairs
                Some((c, n, _)) if covers > *c || (covers == *c && through < *n) => {
                    best = Some((covers, through, vec![e]));
                }
                Some((c, n, group)) if covers == *c && through == *n => group.push(e),
                Some(_) => {}
                None => best = Some((covers, through, vec![e])),
            }
        }
        let Some((covers, through, group)) = best else { break };
        let first = &tally[group[0]];
        let explained: BTreeSet<usize> = first.possible.intersection(&slow).copied().collect();
        // only elements that explain the very same pairs are one suspect
        let group: Vec<Element> = group
            .into_iter()
            .filter(|e| tally[*e].possible.intersection(&slow).copied().collect::<BTreeSet<_>>() == explained)
            .cloned()
            .collect();
        let slow_through = first.possible.iter().filter(|i| pairs[**i].slow).count();
        suspects.push(Suspect {
            elements: group,
            explained: covers,
            through,
            slow_through,
        });
        slow.retain(|i| !explained.contains(i));
    }
    Attribution {
        suspects,
        unexplained: slow.len(),
        off_map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    /// Every pair of `n` ranks, each slow when the path its flow was
    /// hashed onto (one of its equal-cost ways, drawn from the pair and
    /// `seed`) crosses an element of `bad`.
    fn sweep(f: &Fabric, bad: &[Element], seed: u64) -> (Vec<String>, Vec<Seen>) {
        let hosts: Vec<String> = f.hosts.iter().map(|h| h.name.clone()).collect();
        let mut pairs = Vec::new();
        for a in 0..hosts.len() {
            for b in a + 1..hosts.len() {
                let ways = f.ways(&hosts[a], &hosts[b]).unwrap();
                let mut h = seed ^ ((a as u64) << 32) ^ b as u64;
                h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                h ^= h >> 29;
                let path = &ways.paths[(h % ways.paths.len() as u64) as usize];
                let slow = path.iter().any(|e| bad.contains(e));
                pairs.push(Seen { a, b, slow });
            }
        }
        (hosts, pairs)
    }

    fn named(f: &Fabric, s: &str) -> Element {
        f.element(s).unwrap_or_else(|| panic!("{s}"))
    }

    fn first(f: &Fabric, bad: &str, seed: u64) -> Attribution {
        let (hosts, pairs) = sweep(f, &[named(f, bad)], seed);
        attribute(f, &hosts, &pairs)
    }

    #[test]
    fn a_slow_host_cable_is_blamed_alone() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        for seed in 0..5 {
            let a = first(&f, "node5", seed);
            assert_eq!(a.suspects.len(), 1, "{a:?}");
            assert_eq!(a.suspects[0].elements, [named(&f, "node5")]);
            assert_eq!((a.suspects[0].explained, a.unexplained), (15, 0));
        }
    }

    #[test]
    fn a_slow_leaf_is_blamed_not_its_hosts() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        let a = first(&f, "leaf3", 1);
        assert_eq!(a.suspects[0].elements, [named(&f, "leaf3")], "{a:?}");
        assert_eq!(a.unexplained, 0);
    }

    #[test]
    fn a_slow_uplink_is_narrowed_to_its_leafs_uplinks() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        for seed in 0..5 {
            let a = first(&f, "leaf2-spine1", seed);
            let blamed: Vec<String> = a.suspects[0].elements.iter().map(Element::to_string).collect();
            // one flow a pair and no routes: which of leaf2's two uplinks
            // cannot be told, only that it is one of them
            assert_eq!(blamed, ["leaf2-spine1", "leaf2-spine2"], "seed {seed}: {a:?}");
            assert_eq!(a.unexplained, 0, "seed {seed}: {a:?}");
        }
    }

    #[test]
    fn a_slow_spine_is_said_to_be_one_of_the_spines() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        let a = first(&f, "spine2", 3);
        let blamed: Vec<String> = a.suspects[0].elements.iter().map(Element::to_string).collect();
        assert_eq!(blamed, ["spine1", "spine2"], "{a:?}");
        assert_eq!(a.unexplained, 0);
    }

    #[test]
    fn a_slow_global_bundle_is_blamed_in_a_dragonfly() {
        let f = generate::dragonfly(4, 2, 2).unwrap();
        let bundle = f
            .ways("node0", "node4")
            .unwrap()
            .certain()
            .into_iter()
            .find(|e| matches!(e, Element::Cable(a, b) if a[..2] != b[..2]))
            .unwrap();
        let (hosts, pairs) = sweep(&f, std::slice::from_ref(&bundle), 7);
        let a = attribute(&f, &hosts, &pairs);
        assert_eq!(a.suspects[0].elements, [bundle], "{a:?}");
    }

    #[test]
    fn a_clean_sweep_blames_nothing() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        let (hosts, pairs) = sweep(&f, &[], 0);
        assert_eq!(attribute(&f, &hosts, &pairs), Attribution::default());
    }
}
