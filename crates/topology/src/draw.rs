//! The map drawn as text, for a terminal: each level's switches from the
//! top down (by group where the fabric has groups), each host switch with
//! its hosts (the first few, then how many more) and the switches it is
//! cabled to. Pure: returns the text.

use crate::map::Fabric;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How many hosts a switch's line lists before "and N more".
const LISTED: usize = 8;

/// "1 switch", "2 switches".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The drawing of `f`.
pub fn draw(f: &Fabric) -> String {
    let mut o = String::new();
    let mut levels: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for s in &f.switches {
        levels.entry(s.level).or_default().push(&s.name);
    }
    let mut under: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for h in &f.hosts {
        under.entry(h.switch.as_str()).or_default().push(&h.name);
    }
    let mut cabled: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for c in &f.cables {
        let times = |n: u32| if n > 1 { format!(" x{n}") } else { String::new() };
        cabled
            .entry(&c.a)
            .or_default()
            .push(format!("{}{}", c.b, times(c.count)));
        cabled
            .entry(&c.b)
            .or_default()
            .push(format!("{}{}", c.a, times(c.count)));
    }
    let group_of: BTreeMap<&str, &str> = f
        .switches
        .iter()
        .filter_map(|s| s.group.as_deref().map(|g| (s.name.as_str(), g)))
        .collect();
    for (level, names) in levels.iter().rev() {
        let _ = writeln!(o, "level {level} ({})", count(names.len(), "switch", "switches"));
        for name in names {
            let group = group_of.get(name).map(|g| format!(" [group {g}]")).unwrap_or_default();
            let links = cabled
                .get(name)
                .map(|l| format!(" -- {}", l.join(" ")))
                .unwrap_or_default();
            let _ = writeln!(o, "  {name}{group}{links}");
            if let Some(hosts) = under.get(name) {
                let shown: Vec<&str> = hosts.iter().take(LISTED).copied().collect();
                let more = hosts.len().saturating_sub(LISTED);
                let tail = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                let _ = writeln!(o, "    hosts ({}): {}{tail}", hosts.len(), shown.join(" "));
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    #[test]
    fn a_fat_tree_draws_top_down_with_its_hosts() {
        let d = draw(&generate::fat_tree(2, 2, 10).unwrap());
        assert!(d.starts_with("level 2 (2 switches)\n  spine1 -- leaf1 leaf2\n"), "{d}");
        assert!(
            d.contains("  leaf2 -- spine1 spine2\n    hosts (10): node10 node11"),
            "{d}"
        );
        assert!(d.contains("node17 and 2 more\n"), "{d}");
    }
}
