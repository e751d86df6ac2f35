//! The ways between two hosts: every shortest route through the switches
//! (the equal-cost paths ECMP spreads flows over, where the map knows no
//! routes), as the elements they cross: both hosts' cables, the switches,
//! the cables between them. What a pair crosses for sure and what it may
//! cross come from all the shortest routes at once (a node or cable is on
//! every one when it is the only one of its hop), never from a sample;
//! the routes themselves are listed up to `MAX_PATHS`. Pure; nothing here
//! judges a figure.

use crate::map::{Element, Fabric};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// The most routes listed for one pair (a large fabric's three-level pairs
/// have thousands); `certain` and `possible` always cover them all.
pub const MAX_PATHS: usize = 64;

/// The ways a pair's traffic may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ways {
    /// The routes, in name order, up to `MAX_PATHS`.
    pub paths: Vec<Vec<Element>>,
    /// The elements every route crosses: what the pair crosses for sure.
    pub certain: BTreeSet<Element>,
    /// The elements some route crosses.
    pub possible: BTreeSet<Element>,
}

fn cable(a: &str, b: &str) -> Element {
    if a < b {
        Element::Cable(a.to_string(), b.to_string())
    } else {
        Element::Cable(b.to_string(), a.to_string())
    }
}

/// Hops from `start` to every switch that reaches it.
fn hops<'a>(adjacent: &HashMap<&'a str, Vec<&'a str>>, start: &'a str) -> HashMap<&'a str, usize> {
    let mut dist = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(s) = queue.pop_front() {
        let d = dist[s];
        for &n in adjacent.get(s).map(Vec::as_slice).unwrap_or_default() {
            if !dist.contains_key(n) {
                dist.insert(n, d + 1);
                queue.push_back(n);
            }
        }
    }
    dist
}

impl Fabric {
    /// Every shortest way from host `a` to host `b`, or None when either
    /// is not on the map or no cable joins their switches. Two ranks on
    /// one host cross nothing of the fabric: no element at all.
    pub fn ways(&self, a: &str, b: &str) -> Option<Ways> {
        let (ha, hb) = (self.host(a)?, self.host(b)?);
        if a == b {
            return Some(Ways {
                paths: vec![Vec::new()],
                certain: BTreeSet::new(),
                possible: BTreeSet::new(),
            });
        }
        // with forwarding tables, the one way each direction takes: what
        // both take is crossed for sure (a bandwidth test's data goes one
        // way, its acknowledgements the other)
        if let Some((there, certain, possible)) = self.routed_pair(a, b) {
            return Some(Ways {
                paths: vec![there],
                certain,
                possible,
            });
        }
        let mut w = self.switch_ways(&ha.switch, &hb.switch)?;
        let ends = [Element::Host(a.to_string()), Element::Host(b.to_string())];
        for p in &mut w.paths {
            p.insert(0, ends[0].clone());
            p.push(ends[1].clone());
        }
        w.certain.extend(ends.iter().cloned());
        w.possible.extend(ends);
        Some(w)
    }

    /// Every shortest way between two switches: the switches and the
    /// cables between them, both ends' switches included.
    pub fn switch_ways(&self, from: &str, to: &str) -> Option<Ways> {
        let b = Between::new(self, from, to)?;
        let (certain, possible) = b.crossed();
        Some(Ways {
            paths: routes(&b.adjacent, &b.to_end, from, to),
            certain,
            possible,
        })
    }

    /// What every shortest way between two switches crosses for sure, and
    /// what some of them cross, without listing the routes (what a sweep's
    /// judging needs for each of its pairs).
    pub fn crossing(&self, from: &str, to: &str) -> Option<(BTreeSet<Element>, BTreeSet<Element>)> {
        Some(Between::new(self, from, to)?.crossed())
    }
}

/// The switches between two ends: who is cabled to whom, and every
/// switch's hops from each end.
struct Between<'a> {
    adjacent: HashMap<&'a str, Vec<&'a str>>,
    from_start: HashMap<&'a str, usize>,
    to_end: HashMap<&'a str, usize>,
    length: usize,
}

impl<'a> Between<'a> {
    /// None when no cable joins the two ends.
    fn new(fabric: &'a Fabric, from: &'a str, to: &'a str) -> Option<Between<'a>> {
        let mut adjacent: HashMap<&str, Vec<&str>> = HashMap::new();
        for c in &fabric.cables {
            adjacent.entry(c.a.as_str()).or_default().push(c.b.as_str());
            adjacent.entry(c.b.as_str()).or_default().push(c.a.as_str());
        }
        let from_start = hops(&adjacent, from);
        let to_end = hops(&adjacent, to);
        let length = *from_start.get(to)?;
        Some(Between {
            adjacent,
            from_start,
            to_end,
            length,
        })
    }

    /// On a shortest route: its hops from both ends add up to the length.
    fn on(&self, s: &str) -> bool {
        matches!((self.from_start.get(s), self.to_end.get(s)), (Some(x), Some(y)) if x + y == self.length)
    }

    /// (certain, possible): a switch or cable is on every shortest route
    /// when it is the only one of its hop.
    fn crossed(&self) -> (BTreeSet<Element>, BTreeSet<Element>) {
        let mut layers: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        let mut steps: BTreeMap<usize, BTreeSet<Element>> = BTreeMap::new();
        for (&s, &d) in self.from_start.iter().filter(|(s, _)| self.on(s)) {
            layers.entry(d).or_default().push(s);
            for &n in self.adjacent.get(s).map(Vec::as_slice).unwrap_or_default() {
                if self.on(n) && self.from_start.get(n) == Some(&(d + 1)) {
                    steps.entry(d).or_default().insert(cable(s, n));
                }
            }
        }
        let mut certain = BTreeSet::new();
        let mut possible = BTreeSet::new();
        for nodes in layers.values() {
            possible.extend(nodes.iter().map(|s| Element::Switch(s.to_string())));
            if let [only] = nodes.as_slice() {
                certain.insert(Element::Switch(only.to_string()));
            }
        }
        for cables in steps.into_values() {
            if cables.len() == 1 {
                certain.extend(cables.iter().cloned());
            }
            possible.extend(cables);
        }
        (certain, possible)
    }
}

/// The shortest routes from `from` to `to` as elements, in name order, up
/// to `MAX_PATHS`.
fn routes(
    adjacent: &HashMap<&str, Vec<&str>>,
    to_end: &HashMap<&str, usize>,
    from: &str,
    to: &str,
) -> Vec<Vec<Element>> {
    let mut out = Vec::new();
    let mut stack = vec![vec![from]];
    while let Some(route) = stack.pop() {
        if out.len() >= MAX_PATHS {
            break;
        }
        let last = route.last().copied().unwrap_or(from);
        if last == to {
            let mut p = Vec::with_capacity(route.len() * 2);
            for (i, s) in route.iter().enumerate() {
                if i > 0 {
                    p.push(cable(route[i - 1], s));
                }
                p.push(Element::Switch(s.to_string()));
            }
            out.push(p);
            continue;
        }
        let d = to_end.get(last).copied().unwrap_or(0);
        let mut next: Vec<&str> = adjacent
            .get(last)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .copied()
            .filter(|n| d > 0 && to_end.get(n) == Some(&(d - 1)))
            .collect();
        next.sort_unstable();
        next.dedup();
        // pushed in reverse, so the routes come out in name order
        for n in next.into_iter().rev() {
            let mut r = route.clone();
            r.push(n);
            stack.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    fn names(p: &[Element]) -> Vec<String> {
        p.iter().map(Element::to_string).collect()
    }

    #[test]
    fn a_fat_tree_pair_across_leaves_has_one_way_per_spine() {
        let f = generate::fat_tree(4, 2, 2).unwrap();
        // node0 and node1 under leaf1, node2 under leaf2
        let same = f.ways("node0", "node1").unwrap();
        assert_eq!(same.paths.len(), 1);
        assert_eq!(names(&same.paths[0]), ["node0", "leaf1", "node1"]);
        let across = f.ways("node0", "node2").unwrap();
        assert_eq!(across.paths.len(), 2);
        assert_eq!(
            names(&across.paths[0]),
            [
                "node0",
                "leaf1",
                "leaf1-spine1",
                "spine1",
                "leaf2-spine1",
                "leaf2",
                "node2"
            ]
        );
        assert_eq!(names(&across.paths[1])[3], "spine2");
        let sure: Vec<String> = across.certain.iter().map(Element::to_string).collect();
        assert_eq!(sure, ["node0", "node2", "leaf1", "leaf2"]);
        assert_eq!(across.possible.len(), 10);
        // two ranks on one host cross nothing
        assert!(f.ways("node0", "node0").unwrap().possible.is_empty());
        assert!(f.ways("node0", "nobody").is_none());
    }

    /// More shortest routes than are listed: what a pair crosses for sure
    /// and may cross still covers every one of them.
    #[test]
    fn sure_and_possible_cover_every_route_past_the_listed_ones() {
        let f = generate::fat_tree(2, MAX_PATHS + 6, 1).unwrap();
        let w = f.ways("node0", "node1").unwrap();
        assert_eq!(w.paths.len(), MAX_PATHS);
        let last = format!("spine{}", MAX_PATHS + 6);
        assert!(
            w.possible.contains(&Element::Switch(last)),
            "the 70th spine is a way too"
        );
        let sure: Vec<String> = w.certain.iter().map(Element::to_string).collect();
        assert_eq!(sure, ["node0", "node1", "leaf1", "leaf2"]);
    }

    #[test]
    fn a_dragonfly_pair_across_groups_crosses_their_global_bundle() {
        let f = generate::dragonfly(3, 2, 1).unwrap();
        // node1 on g1r2, node2 on g2r1: the bundle between g1 and g2 joins
        // g1r1 and g2r1, so the way is g1's local cable, then the bundle
        let w = f.ways("node1", "node2").unwrap();
        assert_eq!(w.paths.len(), 1, "{w:?}");
        assert_eq!(
            names(&w.paths[0]),
            ["node1", "g1r2", "g1r1-g1r2", "g1r1", "g1r1-g2r1", "g2r1", "node2"]
        );
    }
}
