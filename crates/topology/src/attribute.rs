//! Which elements of the fabric its slow pairs share. Each pair's ways
//! say which elements it crossed for sure (on every equal-cost path) and
//! which it may have crossed; an element that at least two clean pairs,
//! and more clean pairs than slow, crossed for sure is cleared (a pair of
//! two ranks on one host crosses nothing), and of the rest the one that
//! the most still unexplained slow pairs may have crossed is blamed, or,
//! of those that explain nearly as many, the one the most of whose pairs
//! are slow (so that a pair slowed by load does not draw the blame from a
//! leaf's uplinks to the spines above them). Elements that
//! explain the same slow pairs equally well are named together, as one
//! suspect that this map cannot tell apart ("leaf2-spine1 or
//! leaf2-spine2"). Repeated while an element explains enough slow pairs.
//! Pure: the pairs' verdicts (slow or not) are the caller's.

use crate::map::{Element, Fabric, Host};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The fewest slow pairs an element must explain to be blamed.
pub const MIN_PAIRS: usize = 3;

/// The most suspects named: past them, a fabric slow all over is one
/// fault the report says as such, not a list of every element.
pub const MOST_SUSPECTS: usize = 64;

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
    /// The slow pairs it explains (indices into the pairs given).
    pub pairs: Vec<u32>,
}

/// What attribution found: the suspects in the order found, the slow
/// pairs none explains, and the pairs whose hosts the map does not have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attribution {
    pub suspects: Vec<Suspect>,
    /// Elements crossed for sure by clean pairs, mostly: not the fault.
    pub cleared: Vec<Element>,
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
    /// The pairs (their indices, rising) that may have crossed it.
    possible: Vec<u32>,
}

impl Tally {
    /// Crossed for sure by clean pairs, mostly: not the fault.
    fn cleared(&self) -> bool {
        self.certain_clean >= 2 && self.certain_clean * 2 > self.certain
    }

    /// The still unexplained slow pairs that may have crossed it.
    fn covers<'a>(&'a self, slow: &'a [bool]) -> impl Iterator<Item = u32> + 'a {
        self.possible.iter().copied().filter(|&i| slow[i as usize])
    }
}

/// Every element's tally over `pairs`, the slow pairs flagged, and how
/// many pairs the map does not place.
fn tally(fabric: &Fabric, hosts: &[String], pairs: &[Seen]) -> (BTreeMap<Element, Tally>, Vec<bool>, usize) {
    let mut tally: BTreeMap<Element, Tally> = BTreeMap::new();
    let mut slow = vec![false; pairs.len()];
    let mut off_map = 0;
    // the ways between two switches, worked out once for all their hosts
    let mut between: HashMap<(&str, &str), Option<Crossed>> = HashMap::new();
    let by_name: HashMap<&str, &Host> = fabric.hosts.iter().map(|h| (h.name.as_str(), h)).collect();
    let on_map = |r: usize| hosts.get(r).and_then(|h| by_name.get(h.as_str()).copied());
    for (i, p) in pairs.iter().enumerate() {
        let (Some(a), Some(b)) = (on_map(p.a), on_map(p.b)) else {
            off_map += 1;
            continue;
        };
        if a.name == b.name {
            // two ranks on one host: nothing of the fabric between them
            continue;
        }
        // with forwarding tables each pair's own way; else the ways
        // between its two switches, worked out once for all their hosts
        let switches_only = |set: BTreeSet<Element>| -> BTreeSet<Element> {
            set.into_iter().filter(|e| !matches!(e, Element::Host(_))).collect()
        };
        // (the hosts' own elements are added below, as for every pair)
        // (a pair the tables do not cover takes the cached ways below)
        let routed = (!fabric.routes.is_empty())
            .then(|| {
                fabric
                    .routed_pair(&a.name, &b.name)
                    .map(|(_, certain, possible)| (switches_only(certain), switches_only(possible)))
            })
            .flatten();
        let sets = match &routed {
            Some(r) => Some(r),
            None => between
                .entry((a.switch.as_str(), b.switch.as_str()))
                .or_insert_with(|| fabric.crossing(&a.switch, &b.switch))
                .as_ref(),
        };
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
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        for e in possible.iter().chain(&ends) {
            tally.entry(e.clone()).or_default().possible.push(index);
        }
        slow[i] = p.slow;
    }
    (tally, slow, off_map)
}

/// How near the most explained an element's count must be to be weighed
/// by its density: short of it by a tenth of it at most, or by one pair.
const NEAR: usize = 10;

/// Is an element explaining `x.0` slow pairs of `x.1` through it denser
/// than one explaining `y.0` of `y.1`: more of its pairs slow, or as many
/// and more of them?
fn denser(x: (usize, usize), y: (usize, usize)) -> bool {
    let (a, b) = ((x.0 as u128) * (y.1 as u128), (y.0 as u128) * (x.1 as u128));
    a > b || (a == b && x.0 > y.0)
}

/// The suspects among `fabric`'s elements, rank r being host `hosts[r]`.
pub fn attribute(fabric: &Fabric, hosts: &[String], pairs: &[Seen]) -> Attribution {
    if pairs.len() >= u32::MAX as usize {
        return Attribution {
            off_map: pairs.len(),
            ..Attribution::default()
        };
    }
    let (tally, mut slow, off_map) = tally(fabric, hosts, pairs);
    let open: Vec<(&Element, &Tally)> = tally.iter().filter(|(_, t)| !t.cleared()).collect();
    let mut suspects = Vec::new();
    while suspects.len() < MOST_SUSPECTS {
        // the most slow pairs explained, and of the elements that explain
        // nearly as many (a tenth fewer, or one), the densest: the most of
        // its pairs slow. A host whose 7 pairs are slow beats its leaf
        // through which one more pair was slowed by load;
        // A leaf's two uplinks that explain all 12 of their pairs beat the
        // spines that explain those 12 and one pair slowed by load, of 24;
        // a spine that explains 12 pairs across every leaf still beats a
        // leaf's uplinks that by chance explain 9 of them.
        let counted: Vec<(usize, usize, usize)> = open
            .iter()
            .enumerate()
            .map(|(k, (_, t))| (k, t.covers(&slow).count(), t.possible.len()))
            .filter(|&(_, c, _)| c >= MIN_PAIRS)
            .collect();
        let most = counted.iter().map(|&(_, c, _)| c).max().unwrap_or(0);
        let mut best: Option<(usize, usize, Vec<usize>)> = None;
        let near = |c: usize| c + (most / NEAR).max(1) >= most;
        for &(k, covers, through) in counted.iter().filter(|&&(_, c, _)| near(c)) {
            match &mut best {
                Some((c, n, group)) if covers == *c && through == *n => group.push(k),
                Some((c, n, _)) if !denser((covers, through), (*c, *n)) => {}
                _ => best = Some((covers, through, vec![k])),
            }
        }
        let Some((covers, through, group)) = best else { break };
        let first = open[group[0]].1;
        let explained: Vec<u32> = first.covers(&slow).collect();
        // only elements that explain the very same pairs are one suspect
        let elements: Vec<Element> = group
            .iter()
            .filter(|&&k| open[k].1.covers(&slow).eq(explained.iter().copied()))
            .map(|&k| open[k].0.clone())
            .collect();
        let slow_through = first.possible.iter().filter(|&&i| pairs[i as usize].slow).count();
        for &i in &explained {
            slow[i as usize] = false;
        }
        suspects.push(Suspect {
            elements,
            explained: covers,
            through,
            slow_through,
            pairs: explained,
        });
    }
    Attribution {
        suspects,
        cleared: tally
            .iter()
            .filter(|(_, t)| t.cleared())
            .map(|(e, _)| e.clone())
            .collect(),
        unexplained: slow.iter().filter(|&&s| s).count(),
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
            .certain
            .into_iter()
            .find(|e| matches!(e, Element::Cable(a, b) if a[..2] != b[..2]))
            .unwrap();
        let (hosts, pairs) = sweep(&f, std::slice::from_ref(&bundle), 7);
        let a = attribute(&f, &hosts, &pairs);
        assert_eq!(a.suspects[0].elements, [bundle], "{a:?}");
    }

    /// Two ranks on each host: the pairs within a host cross nothing and
    /// clear nothing; a slow host cable is still blamed.
    #[test]
    fn ranks_sharing_a_host_neither_blame_nor_clear_its_cable() {
        let f = generate::fat_tree(2, 2, 4).unwrap();
        let hosts: Vec<String> = f.hosts.iter().flat_map(|h| [h.name.clone(), h.name.clone()]).collect();
        let bad = named(&f, "node2");
        let mut pairs = Vec::new();
        for a in 0..hosts.len() {
            for b in a + 1..hosts.len() {
                let w = f.ways(&hosts[a], &hosts[b]).unwrap();
                pairs.push(Seen {
                    a,
                    b,
                    slow: w.possible.contains(&bad),
                });
            }
        }
        let a = attribute(&f, &hosts, &pairs);
        assert_eq!(a.suspects.len(), 1, "{a:?}");
        assert_eq!(a.suspects[0].elements, [bad]);
    }

    #[test]
    fn a_clean_sweep_blames_nothing() {
        let f = generate::fat_tree(4, 2, 4).unwrap();
        let (hosts, pairs) = sweep(&f, &[], 0);
        let a = attribute(&f, &hosts, &pairs);
        assert_eq!((a.suspects.len(), a.unexplained, a.off_map), (0, 0, 0));
        // what clean pairs crossed for sure
        assert_eq!(
            a.cleared.len(),
            16 + 4,
            "the hosts and leaves; the spines and uplinks only maybe crossed"
        );
    }
}
