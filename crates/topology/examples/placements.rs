//! How often attribution names a planted fault, on simulated sweeps of
//! 1,024 ranks: a fat tree of 32 leaves of 32 hosts under 8 spines, and a
//! dragonfly of 16 groups of 8 routers of 8 hosts. Each placement puts one
//! slow element at random (seeded); every pair of ranks is tested once,
//! its one flow hashed onto one of its equal-cost ways, and is slow when
//! that way crosses the planted element. A run counts as named when the
//! first suspect holds the planted element, alone when it holds nothing
//! else; a clean element blamed is any other suspect.
//!
//! cargo run --release -p fabdiag-topology --example placements -- [PLACEMENTS] [SEED]

use fabdiag_topology::attribute::{attribute, Seen};
use fabdiag_topology::{generate, Element, Fabric};
use std::time::Instant;

/// A small, seeded generator (splitmix64): the same seed, the same runs.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn sweep(f: &Fabric, bad: &Element, draw: &mut Draw) -> (Vec<String>, Vec<Seen>) {
    let hosts: Vec<String> = f.hosts.iter().map(|h| h.name.clone()).collect();
    let mut ways = std::collections::HashMap::new();
    let mut pairs = Vec::with_capacity(hosts.len() * hosts.len() / 2);
    for a in 0..f.hosts.len() {
        for b in a + 1..f.hosts.len() {
            let (ha, hb) = (&f.hosts[a], &f.hosts[b]);
            let w = ways
                .entry((ha.switch.clone(), hb.switch.clone()))
                .or_insert_with(|| f.switch_ways(&ha.switch, &hb.switch).expect("a connected map"));
            let path = &w.paths[draw.below(w.paths.len())];
            let on_host = matches!(bad, Element::Host(h) if *h == ha.name || *h == hb.name);
            pairs.push(Seen {
                a,
                b,
                slow: on_host || path.contains(bad),
            });
        }
    }
    (hosts, pairs)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let placements: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let seed: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let fat = generate::fat_tree(32, 8, 32).expect("a fat tree");
    let fly = generate::dragonfly(16, 8, 8).expect("a dragonfly");
    let cables = |f: &Fabric, global: bool| -> Vec<Element> {
        f.cables
            .iter()
            .filter(|c| global == (f.switch(&c.a).map(|s| &s.group) != f.switch(&c.b).map(|s| &s.group)))
            .map(|c| Element::Cable(c.a.clone(), c.b.clone()))
            .collect()
    };
    let of_level = |f: &Fabric, level: u32| -> Vec<Element> {
        f.switches
            .iter()
            .filter(|s| s.level == level)
            .map(|s| Element::Switch(s.name.clone()))
            .collect()
    };
    let hosts = |f: &Fabric| -> Vec<Element> { f.hosts.iter().map(|h| Element::Host(h.name.clone())).collect() };
    let kinds: Vec<(&str, &Fabric, Vec<Element>)> = vec![
        ("fat tree: a host cable", &fat, hosts(&fat)),
        ("fat tree: a leaf", &fat, of_level(&fat, 1)),
        ("fat tree: a leaf uplink", &fat, cables(&fat, false)),
        ("fat tree: a spine", &fat, of_level(&fat, 2)),
        ("dragonfly: a host cable", &fly, hosts(&fly)),
        ("dragonfly: a router", &fly, of_level(&fly, 1)),
        ("dragonfly: a global bundle", &fly, cables(&fly, true)),
    ];
    println!("{placements} placements a kind, seed {seed}, 1,024 ranks, one flow a pair");
    println!("| fault | named first | alone | in a group of (median) | clean blamed | s a run |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut draw = Draw(seed);
    for (kind, f, elements) in kinds {
        let (mut named, mut alone, mut others, mut sizes) = (0, 0, 0, Vec::new());
        let t0 = Instant::now();
        for _ in 0..placements {
            let bad = &elements[draw.below(elements.len())];
            let (hosts, pairs) = sweep(f, bad, &mut draw);
            let found = attribute(f, &hosts, &pairs);
            let first = found.suspects.first().map(|s| s.elements.clone()).unwrap_or_default();
            if first.contains(bad) {
                named += 1;
                alone += usize::from(first.len() == 1);
                sizes.push(first.len());
            }
            others += found.suspects.len().saturating_sub(1);
        }
        sizes.sort_unstable();
        let median = sizes.get(sizes.len() / 2).copied().unwrap_or(0);
        let each = t0.elapsed().as_secs_f64() / placements.max(1) as f64;
        println!("| {kind} | {named}/{placements} | {alone} | {median} | {others} | {each:.1} |");
    }
}
