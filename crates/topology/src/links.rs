//! A fabric learned link by link (from InfiniBand's `ibnetdiscover`, or
//! the LLDP neighbours of each host and switch) made into a map's parts:
//! each link joins two ends, and an end is a host when its source says so.
//! Switches get their levels from where the hosts are: 1 for a switch
//! with hosts, and one more for each hop further (a spine 2, a core 3).
//! A cable seen from both of its ends is one cable; a host cabled to two
//! switches (two rails) is placed under the first. Pure.

use crate::map::{Host, Switch};
use crate::parts::Parts;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One end of a link: a device's name and its port there, if known.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct End {
    pub name: String,
    pub port: Option<String>,
}

/// A link as a source saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub a: End,
    pub b: End,
}

fn end_text(e: &End) -> String {
    match &e.port {
        Some(p) => format!("{}:{p}", e.name),
        None => e.name.clone(),
    }
}

/// The parts `links` make, `hosts` naming the ends that are hosts and
/// `groups` each switch's group where the source knows it.
pub fn parts(links: &[Link], hosts: &BTreeSet<String>, groups: &BTreeMap<String, String>) -> Parts {
    let mut adjacent: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut host_of: BTreeMap<&str, (&str, Option<&String>)> = BTreeMap::new();
    let mut cables: BTreeSet<(String, String)> = BTreeSet::new();
    // every switch a host is cabled to (a host on two rails has two)
    let mut with_hosts: BTreeSet<&str> = BTreeSet::new();
    for l in links {
        let (a_host, b_host) = (hosts.contains(&l.a.name), hosts.contains(&l.b.name));
        match (a_host, b_host) {
            (true, true) => {}
            (true, false) => {
                host_of.entry(&l.a.name).or_insert((&l.b.name, l.b.port.as_ref()));
                with_hosts.insert(&l.b.name);
            }
            (false, true) => {
                host_of.entry(&l.b.name).or_insert((&l.a.name, l.a.port.as_ref()));
                with_hosts.insert(&l.a.name);
            }
            (false, false) => {
                adjacent.entry(&l.a.name).or_default().insert(&l.b.name);
                adjacent.entry(&l.b.name).or_default().insert(&l.a.name);
                let (x, y) = (end_text(&l.a), end_text(&l.b));
                cables.insert(if x <= y { (x, y) } else { (y, x) });
            }
        }
    }
    // levels: breadth first from the switches hosts hang from
    let mut level: BTreeMap<&str, u32> = BTreeMap::new();
    let mut queue = VecDeque::new();
    for &s in &with_hosts {
        level.insert(s, 1);
        queue.push_back(s);
    }
    while let Some(s) = queue.pop_front() {
        let next = level[s] + 1;
        for &n in adjacent.get(s).into_iter().flatten() {
            if !level.contains_key(n) {
                level.insert(n, next);
                queue.push_back(n);
            }
        }
    }
    // switches no host reaches still count, at level 1
    for s in adjacent.keys() {
        level.entry(s).or_insert(1);
    }
    Parts {
        switches: level
            .iter()
            .map(|(name, l)| Switch {
                name: name.to_string(),
                level: *l,
                group: groups.get(*name).cloned(),
            })
            .collect(),
        hosts: host_of
            .iter()
            .map(|(h, (s, port))| Host {
                name: h.to_string(),
                switch: s.to_string(),
                port: port.cloned(),
            })
            .collect(),
        ends: cables.into_iter().collect(),
        routes: Default::default(),
    }
}
