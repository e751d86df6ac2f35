//! The ways between two hosts: every shortest route through the switches
//! (the equal-cost paths ECMP spreads flows over, where the map knows no
//! routes), each as the elements it crosses: both hosts' cables, the
//! switches, the cables between them. Pure; nothing here judges a figure.

use crate::map::{Element, Fabric};
use std::collections::{BTreeSet, HashMap, VecDeque};

/// The most paths listed for one pair: past it, the ones listed stand for
/// all (a large fabric's three-level pairs have thousands).
pub const MAX_PATHS: usize = 64;

/// The elements a pair's traffic may take: each equal-cost path's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ways {
    pub paths: Vec<Vec<Element>>,
}

impl Ways {
    /// The elements every path crosses: what the pair crosses for sure.
    pub fn certain(&self) -> BTreeSet<Element> {
        let mut it = self.paths.iter();
        let Some(first) = it.next() else {
            return BTreeSet::new();
        };
        let mut all: BTreeSet<Element> = first.iter().cloned().collect();
        for p in it {
            let here: BTreeSet<Element> = p.iter().cloned().collect();
            all = all.intersection(&here).cloned().collect();
        }
        all
    }

    /// The elements some path crosses.
    pub fn possible(&self) -> BTreeSet<Element> {
        self.paths.iter().flatten().cloned().collect()
    }
}

impl Fabric {
    /// Every shortest way from host `a` to host `b` (up to `MAX_PATHS`),
    /// or None when either is not on the map or no cable joins their
    /// switches.
    pub fn ways(&self, a: &str, b: &str) -> Option<Ways> {
        let (ha, hb) = (self.host(a)?, self.host(b)?);
        let between = self.switch_ways(&ha.switch, &hb.switch)?;
        let paths = between
            .paths
            .into_iter()
            .map(|inner| {
                let mut p = Vec::with_capacity(inner.len() + 2);
                p.push(Element::Host(a.to_string()));
                p.extend(inner);
                p.push(Element::Host(b.to_string()));
                p
            })
            .collect();
        Some(Ways { paths })
    }

    /// Every shortest way between two switches: the switches and the
    /// cables between them, both ends' switches included.
    pub fn switch_ways(&self, from: &str, to: &str) -> Option<Ways> {
        let routes = self.routes(from, to)?;
        let paths = routes
            .into_iter()
            .map(|route| {
                let mut p = Vec::with_capacity(route.len() * 2);
                for (i, s) in route.iter().enumerate() {
                    if i > 0 {
                        let prev = &route[i - 1];
                        let (x, y) = if prev < s { (prev, s) } else { (s, prev) };
                        p.push(Element::Cable(x.clone(), y.clone()));
                    }
                    p.push(Element::Switch(s.clone()));
                }
                p
            })
            .collect();
        Some(Ways { paths })
    }

    /// Every shortest route of switches from `from` to `to`.
    fn routes(&self, from: &str, to: &str) -> Option<Vec<Vec<String>>> {
        // hops to `to` from every switch that reaches it
        let mut dist: HashMap<&str, usize> = HashMap::from([(to, 0)]);
        let mut queue = VecDeque::from([to]);
        while let Some(s) = queue.pop_front() {
            let d = dist[s];
            for n in self.neighbours(s) {
                if !dist.contains_key(n) {
                    dist.insert(n, d + 1);
                    queue.push_back(n);
                }
            }
        }
        dist.get(from)?;
        let mut out = Vec::new();
        let mut stack = vec![vec![from.to_string()]];
        while let Some(route) = stack.pop() {
            if out.len() >= MAX_PATHS {
                break;
            }
            let last = route.last().map(String::as_str).unwrap_or(from);
            if last == to {
                out.push(route);
                continue;
            }
            let d = dist[last];
            let mut next: Vec<&str> = self
                .neighbours(last)
                .into_iter()
                .filter(|n| dist.get(n) == Some(&(d - 1)))
                .collect();
            next.sort_unstable();
            // pushed in reverse, so the routes come out in name order
            for n in next.into_iter().rev() {
                let mut r = route.clone();
                r.push(n.to_string());
                stack.push(r);
            }
        }
        Some(out)
    }
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
        let sure: Vec<String> = across.certain().iter().map(Element::to_string).collect();
        assert_eq!(sure, ["node0", "node2", "leaf1", "leaf2"]);
        assert_eq!(across.possible().len(), 10);
        assert!(f.ways("node0", "nobody").is_none());
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
