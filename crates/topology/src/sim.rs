//! A simulated sweep's fabric: rank r on the map's host r, and each flow
//! of a pair hashed onto one of its equal-cost ways (as ECMP hashes a
//! flow's addresses and ports), slow when that way crosses an element
//! made slow. Its ways are worked out once per pair of switches and kept,
//! behind a lock: the stand-in ranks ask from their own threads. Pure
//! apart from that cache.

use crate::map::{Element, Fabric};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// The ways between two switches (by index), each as the elements it crosses.
type WaysBetween = HashMap<(usize, usize), Vec<Vec<Element>>>;

/// The map, the elements made slow, and the ways found so far.
pub struct SlowPaths {
    fabric: Fabric,
    slow: BTreeSet<Element>,
    ways: Mutex<WaysBetween>,
    /// Each host's switch, by rank.
    switch_of: Vec<usize>,
    switch_names: Vec<String>,
}

/// An element named to be made slow that the map does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a host, switch or switch-to-switch cable (SWITCH-SWITCH) of the map")]
pub struct NotOnTheMap(pub String);

/// splitmix64's finish: a flow's hash, spread over every bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SlowPaths {
    /// `slow` names elements as the map does (`leaf2`, `leaf2-spine1`,
    /// `node7`); a name the map lacks is refused naming it.
    pub fn new(fabric: Fabric, slow: &[String]) -> Result<SlowPaths, NotOnTheMap> {
        let slow = slow
            .iter()
            .map(|n| fabric.element(n).ok_or_else(|| NotOnTheMap(n.clone())))
            .collect::<Result<BTreeSet<_>, _>>()?;
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut switch_names = Vec::new();
        for s in &fabric.switches {
            index.insert(&s.name, switch_names.len());
            switch_names.push(s.name.clone());
        }
        let switch_of = fabric
            .hosts
            .iter()
            .map(|h| index.get(h.switch.as_str()).copied().unwrap_or(0))
            .collect();
        Ok(SlowPaths {
            fabric,
            slow,
            ways: Mutex::new(HashMap::new()),
            switch_of,
            switch_names,
        })
    }

    /// The hosts ranks run on, in rank order.
    pub fn hosts(&self) -> impl Iterator<Item = &str> {
        self.fabric.hosts.iter().map(|h| h.name.as_str())
    }

    /// Is flow `flow` of ranks `a` and `b` slow? A rank the map has no
    /// host for crosses nothing.
    pub fn slow(&self, a: usize, b: usize, flow: u64) -> bool {
        let (Some(ha), Some(hb)) = (self.fabric.hosts.get(a), self.fabric.hosts.get(b)) else {
            return false;
        };
        if ha.name == hb.name {
            return false;
        }
        if self.slow.contains(&Element::Host(ha.name.clone())) || self.slow.contains(&Element::Host(hb.name.clone())) {
            return true;
        }
        // with forwarding tables, the one way they give
        if let Some(way) = self.fabric.routed(&ha.name, &hb.name) {
            return way.iter().any(|e| self.slow.contains(e));
        }
        let (sa, sb) = (self.switch_of[a], self.switch_of[b]);
        let Ok(mut ways) = self.ways.lock() else {
            return false;
        };
        let paths = ways.entry((sa, sb)).or_insert_with(|| {
            self.fabric
                .switch_ways(&self.switch_names[sa], &self.switch_names[sb])
                .map(|w| w.paths)
                .unwrap_or_default()
        });
        if paths.is_empty() {
            return false;
        }
        let (lo, hi) = (a.min(b) as u64, a.max(b) as u64);
        let h = mix(lo.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (hi << 20) ^ flow.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let path = &paths[(h % paths.len() as u64) as usize];
        path.iter().any(|e| self.slow.contains(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    #[test]
    fn a_slow_spine_slows_the_flows_hashed_through_it_only() {
        let f = generate::fat_tree(4, 2, 2).unwrap();
        let sim = SlowPaths::new(f, &["spine1".into()]).unwrap();
        // node0 and node1 share leaf1: never through a spine
        assert!((0..16).all(|flow| !sim.slow(0, 1, flow)));
        // across leaves, some flows take spine1 and some spine2
        let slow = (0..64).filter(|&flow| sim.slow(0, 2, flow)).count();
        assert!(slow > 10 && slow < 54, "{slow} of 64 flows through spine1");
        assert_eq!(sim.slow(0, 2, 5), sim.slow(2, 0, 5), "either end asks alike");
    }

    #[test]
    fn a_slow_host_slows_all_its_pairs_and_a_wrong_name_is_refused() {
        let f = generate::fat_tree(2, 1, 2).unwrap();
        let sim = SlowPaths::new(f.clone(), &["node3".into()]).unwrap();
        assert!((0..3).all(|r| sim.slow(r, 3, 0)));
        assert!(!sim.slow(0, 1, 0));
        let err = SlowPaths::new(f, &["leaf9".into()])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.starts_with("'leaf9' is not a host, switch"), "{err}");
    }
}
