//! Maps to start from: a two-level fat tree (`fat-tree:LEAVES,SPINES,
//! HOSTS_PER_LEAF`: every leaf cabled once to every spine) and a dragonfly
//! (`dragonfly:GROUPS,ROUTERS,HOSTS_PER_ROUTER`: every group's routers
//! cabled to each other, and one global bundle between every two groups),
//! and the map file they are written as. Hosts are named `node0`, `node1`,
//! ... in the order ranks are given to them (the first leaf's first), so a
//! generated map and a simulated sweep of as many ranks line up.

use crate::map::{Fabric, Host, MapError, Switch};

/// The most switches, hosts and cables a generated map may have, all
/// together.
pub const MAX_PARTS: usize = 2_000_000;

fn too_big(what: &str, n: usize) -> MapError {
    MapError::Invalid {
        origin: what.to_string(),
        message: format!("{n} switches, hosts and cables: at most {MAX_PARTS}"),
    }
}

fn hosts_under(switches: &[String], per: usize) -> Vec<Host> {
    switches
        .iter()
        .flat_map(|s| std::iter::repeat_n(s, per))
        .enumerate()
        .map(|(rank, s)| Host {
            name: format!("node{rank}"),
            switch: s.clone(),
            port: None,
        })
        .collect()
}

/// A two-level fat tree.
pub fn fat_tree(leaves: usize, spines: usize, per_leaf: usize) -> Result<Fabric, MapError> {
    let origin = format!("fat-tree:{leaves},{spines},{per_leaf}");
    let n = leaves
        .saturating_mul(per_leaf.saturating_add(1).saturating_add(spines))
        .saturating_add(spines);
    if n > MAX_PARTS {
        return Err(too_big(&origin, n));
    }
    let leaf_names: Vec<String> = (1..=leaves).map(|i| format!("leaf{i}")).collect();
    let mut switches: Vec<Switch> = (1..=spines)
        .map(|i| Switch {
            name: format!("spine{i}"),
            level: 2,
            group: None,
        })
        .collect();
    switches.extend(leaf_names.iter().map(|l| Switch {
        name: l.clone(),
        level: 1,
        group: None,
    }));
    let cables: Vec<(String, String)> = leaf_names
        .iter()
        .flat_map(|l| (1..=spines).map(move |s| (l.clone(), format!("spine{s}"))))
        .collect();
    Fabric::build(&origin, switches, hosts_under(&leaf_names, per_leaf), &cables)
}

/// A dragonfly: group g's k-th other group (in order) is reached through
/// its router k mod ROUTERS + 1.
pub fn dragonfly(groups: usize, routers: usize, per_router: usize) -> Result<Fabric, MapError> {
    let origin = format!("dragonfly:{groups},{routers},{per_router}");
    let local = routers.saturating_mul(routers.saturating_sub(1)) / 2;
    let global = groups.saturating_mul(groups.saturating_sub(1)) / 2;
    let n = groups
        .saturating_mul(
            routers
                .saturating_mul(per_router.saturating_add(1))
                .saturating_add(local),
        )
        .saturating_add(global);
    if n > MAX_PARTS {
        return Err(too_big(&origin, n));
    }
    let router = |g: usize, r: usize| format!("g{g}r{r}");
    let mut names = Vec::new();
    let mut switches = Vec::new();
    for g in 1..=groups {
        for r in 1..=routers {
            names.push(router(g, r));
            switches.push(Switch {
                name: router(g, r),
                level: 1,
                group: Some(format!("g{g}")),
            });
        }
    }
    let mut cables = Vec::new();
    for g in 1..=groups {
        for a in 1..=routers {
            for b in a + 1..=routers {
                cables.push((router(g, a), router(g, b)));
            }
        }
    }
    // the router of group g that carries its bundle to group h
    let through = |g: usize, h: usize| {
        let k = if h < g { h - 1 } else { h - 2 };
        router(g, k % routers.max(1) + 1)
    };
    for g in 1..=groups {
        for h in g + 1..=groups {
            cables.push((through(g, h), through(h, g)));
        }
    }
    Fabric::build(&origin, switches, hosts_under(&names, per_router), &cables)
}

/// A map from its spelling on the command line: `fat-tree:L,S,H` or
/// `dragonfly:G,R,H`.
pub fn named(spec: &str) -> Result<Fabric, MapError> {
    let bad = |message: String| MapError::Invalid {
        origin: spec.to_string(),
        message,
    };
    let (kind, numbers) = spec.split_once(':').ok_or_else(|| {
        bad("fat-tree:LEAVES,SPINES,HOSTS_PER_LEAF or dragonfly:GROUPS,ROUTERS,HOSTS_PER_ROUTER".into())
    })?;
    let n: Vec<usize> = numbers
        .split(',')
        .map(|x| x.trim().parse::<usize>().ok().filter(|&v| v > 0))
        .collect::<Option<Vec<_>>>()
        .filter(|v| v.len() == 3)
        .ok_or_else(|| bad(format!("'{numbers}': three whole numbers above 0")))?;
    match kind {
        "fat-tree" => fat_tree(n[0], n[1], n[2]),
        "dragonfly" => dragonfly(n[0], n[1], n[2]),
        other => Err(bad(format!("'{other}': fat-tree or dragonfly"))),
    }
}

/// The map file of `f` (TOML), which `Fabric::parse` reads back the same.
pub fn to_toml(f: &Fabric) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = String::new();
    for s in &f.switches {
        out.push_str(&format!("[[switch]]\nname = {}\nlevel = {}\n", quote(&s.name), s.level));
        if let Some(g) = &s.group {
            out.push_str(&format!("group = {}\n", quote(g)));
        }
        out.push('\n');
    }
    for h in &f.hosts {
        out.push_str(&format!(
            "[[host]]\nname = {}\nswitch = {}\n",
            quote(&h.name),
            quote(&h.switch)
        ));
        if let Some(p) = &h.port {
            out.push_str(&format!("port = {}\n", quote(p)));
        }
        out.push('\n');
    }
    for (a, b) in f.cables.iter().flat_map(|c| &c.ends) {
        out.push_str(&format!("[[cable]]\na = {}\nb = {}\n\n", quote(a), quote(b)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_map_reads_back_the_same() {
        for f in [fat_tree(4, 2, 3).unwrap(), dragonfly(4, 3, 2).unwrap()] {
            let back = Fabric::parse("generated", &to_toml(&f)).unwrap();
            assert_eq!(back, f);
        }
    }

    #[test]
    fn shapes_have_the_cables_they_should() {
        let f = fat_tree(4, 2, 3).unwrap();
        assert_eq!((f.switches.len(), f.hosts.len(), f.cables.len()), (6, 12, 8));
        assert_eq!(f.hosts[3].switch, "leaf2");
        let d = dragonfly(4, 3, 2).unwrap();
        // 3 local cables a group, one bundle between each two of 4 groups
        assert_eq!((d.switches.len(), d.hosts.len(), d.cables.len()), (12, 24, 4 * 3 + 6));
    }

    #[test]
    fn a_spelling_is_read_or_refused_in_one_line() {
        assert_eq!(named("fat-tree:2,2,2").unwrap().hosts.len(), 4);
        assert_eq!(
            named("fat-tree:2,0,2").unwrap_err().to_string(),
            "fat-tree:2,0,2: '2,0,2': three whole numbers above 0"
        );
        assert!(named("torus:2,2,2")
            .unwrap_err()
            .to_string()
            .ends_with("'torus': fat-tree or dragonfly"));
        // cables count too: 300,000 leaves each cabled to 300,000 spines
        assert!(named("fat-tree:300000,300000,1")
            .unwrap_err()
            .to_string()
            .contains("at most 2000000"));
        assert!(named("dragonfly:3000,2,1")
            .unwrap_err()
            .to_string()
            .contains("at most 2000000"));
    }
}
