//! Where a map comes from, told apart by what the text holds: the map
//! file (TOML), Slurm's tree topology (`topology.conf`, or what
//! `scontrol show topology` prints: lines of `SwitchName=... Switches=...
//! Nodes=...`), or InfiniBand's `ibnetdiscover` output (`ib`); LLDP's
//! outputs come a folder at a time (`lldp`). Each is read into its parts (`Parts`), and several
//! sources are made one map (`combine`): a file for the switch layer and
//! another for the hosts. Where two sources disagree on a switch's level
//! or a host's switch, the map is refused naming both. Pure: the caller
//! opens the files.

use crate::hostlist;
use crate::map::{Fabric, Host, MapError, Switch};
pub use crate::parts::Parts;
use std::collections::{BTreeMap, BTreeSet};

/// The most hosts a Slurm source may name, all its lists together.
const MOST_HOSTS: usize = 2_000_000;

/// The most levels of switches a Slurm tree may have.
const MOST_LEVELS: u32 = 64;

/// The kinds of text a map is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Map,
    Slurm,
    /// InfiniBand's `ibnetdiscover` output.
    IbNetDiscover,
    /// Switches' forwarding tables: `ibroute`, `dump_lfts`.
    Routes,
}

impl Format {
    /// The format of `text`: Slurm's when its first line that says
    /// anything starts with `SwitchName=`.
    pub fn of(text: &str) -> Format {
        let first = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .find(|l| !l.is_empty());
        let ib = text
            .lines()
            .any(|l| l.starts_with("switchguid=") || l.starts_with("Switch\t") || l.starts_with("# Topology file"));
        match first {
            Some(l) if l.get(..11).is_some_and(|k| k.eq_ignore_ascii_case("switchname=")) => Format::Slurm,
            _ if text.contains("Unicast lids [") => Format::Routes,
            _ if ib => Format::IbNetDiscover,
            _ => Format::Map,
        }
    }
}

/// What a sweep's map is made of: the sources read from files, and
/// whether each rank's LLDP neighbours, gathered when it joins, are one
/// more (`--topology lldp`). The map is made once the ranks are known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub files: Vec<(String, Parts)>,
    pub lldp: bool,
}

impl Plan {
    /// The sources' names, as reports say them ("a.toml + lldp").
    pub fn source(&self) -> String {
        let mut names: Vec<&str> = self.files.iter().map(|(o, _)| o.as_str()).collect();
        if self.lldp {
            names.push("lldp");
        }
        names.join(" + ")
    }

    /// The map: the files' parts, then the LLDP outputs `devices` (each
    /// a device's name, where it came from, its `lldpctl -f json`) when
    /// the plan takes LLDP; with why each output left out was.
    pub fn fabric(&self, devices: &[(String, String, String)]) -> Result<(Fabric, Vec<MapError>), MapError> {
        let mut all = self.files.clone();
        let mut left_out = Vec::new();
        if self.lldp {
            let (parts, bad) = crate::lldp::from_ranks(devices);
            all.push(("lldp".to_string(), parts));
            left_out = bad;
        }
        Ok((combine(&all)?, left_out))
    }
}

/// One source's parts, read as its text's format.
pub fn read(origin: &str, text: &str) -> Result<Parts, MapError> {
    match Format::of(text) {
        Format::Map => crate::file::parts_of_toml(origin, text),
        Format::Slurm => slurm(origin, text),
        Format::IbNetDiscover => crate::ib::ibnetdiscover(origin, text),
        Format::Routes => Ok(Parts {
            routes: crate::routes::tables(origin, text)?,
            ..Parts::default()
        }),
    }
}

/// One map from one source or several, checked whole.
pub fn combine(sources: &[(String, Parts)]) -> Result<Fabric, MapError> {
    let origin = sources.iter().map(|(o, _)| o.as_str()).collect::<Vec<_>>().join(" + ");
    let bad = |message: String| MapError::Invalid {
        origin: origin.clone(),
        message,
    };
    let mut switches: BTreeMap<&str, (&Switch, &str)> = BTreeMap::new();
    let mut order = Vec::new();
    let mut hosts: BTreeMap<&str, (Host, &str)> = BTreeMap::new();
    let mut host_order = Vec::new();
    // the cables between two switches come from the first source that has any
    let mut cabled: BTreeMap<(String, String), &str> = BTreeMap::new();
    let mut ends = Vec::new();
    for (from, parts) in sources {
        for s in &parts.switches {
            match switches.get(s.name.as_str()) {
                Some((seen, said)) if seen.level != s.level && said != from => {
                    return Err(bad(format!(
                        "{said} puts switch '{}' at level {}, {from} at level {}",
                        s.name, seen.level, s.level
                    )))
                }
                // (twice in one source: the check of the whole map says so)
                Some((_, said)) if said == from => order.push(s.clone()),
                Some(_) => {}
                None => {
                    switches.insert(&s.name, (s, from));
                    order.push(s.clone());
                }
            }
        }
        for h in &parts.hosts {
            match hosts.get_mut(h.name.as_str()) {
                Some((seen, said)) if *said != from.as_str() => {
                    if seen.switch != h.switch {
                        return Err(bad(format!(
                            "{said} puts host '{}' under '{}', {from} under '{}'",
                            h.name, seen.switch, h.switch
                        )));
                    }
                    if seen.port.is_none() {
                        seen.port.clone_from(&h.port);
                    }
                }
                // (twice in one source: the check of the whole map says so)
                Some(_) => host_order.push(h.clone()),
                None => {
                    hosts.insert(&h.name, (h.clone(), from));
                    host_order.push(h.clone());
                }
            }
        }
        let mut mine = BTreeSet::new();
        for (a, b) in &parts.ends {
            let key = switch_pair(a, b);
            match cabled.get(&key) {
                Some(first) if *first != from.as_str() => continue,
                _ => {}
            }
            mine.insert(key);
            ends.push((a.clone(), b.clone()));
        }
        for key in mine {
            cabled.entry(key).or_insert(from);
        }
    }
    // a host's port may have come from a later source
    for h in &mut host_order {
        if let Some((merged, _)) = hosts.get(h.name.as_str()) {
            h.port.clone_from(&merged.port);
        }
    }
    let mut fabric = Fabric::build(&origin, order, host_order, &ends)?;
    for (_, p) in sources {
        for (sw, table) in &p.routes {
            fabric
                .routes
                .entry(sw.clone())
                .or_default()
                .extend(table.iter().map(|(h, o)| (h.clone(), o.clone())));
        }
    }
    Ok(fabric)
}

fn switch_pair(a: &str, b: &str) -> (String, String) {
    let (a, b) = (crate::map::switch_of(a), crate::map::switch_of(b));
    if a < b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// A switch as a Slurm line gives it: its children, its hosts, its level
/// (scontrol's, counted from 0 at the hosts' switches), and its line.
struct SlurmSwitch {
    name: String,
    switches: Vec<String>,
    nodes: Vec<String>,
    level: Option<u32>,
    line: usize,
}

/// Slurm's tree: `topology.conf`, or `scontrol show topology`'s output.
/// Keys are Slurm's (any case); a switch's hosts are those of a switch
/// without child switches (scontrol lists every host under each upper
/// switch too); levels, where not given, count up from the hosts'.
fn slurm(origin: &str, text: &str) -> Result<Parts, MapError> {
    let at = |line: usize, message: String| MapError::Syntax {
        origin: origin.to_string(),
        line,
        message,
    };
    let mut all: Vec<SlurmSwitch> = Vec::new();
    // every list of the file draws on one budget of names
    let mut budget = MOST_HOSTS;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut s = SlurmSwitch {
            name: String::new(),
            switches: Vec::new(),
            nodes: Vec::new(),
            level: None,
            line: i + 1,
        };
        for word in line.split_whitespace() {
            let Some((key, value)) = word.split_once('=') else {
                return Err(at(i + 1, format!("'{word}' is not KEY=VALUE")));
            };
            let mut list = |v: &str| {
                let names = hostlist::expand(v, budget).map_err(|e| at(i + 1, e.to_string()))?;
                budget -= names.len();
                Ok::<_, MapError>(names)
            };
            match key.to_ascii_lowercase().as_str() {
                "switchname" => s.name = value.to_string(),
                "switches" => s.switches = list(value)?,
                "nodes" => s.nodes = list(value)?,
                "level" => {
                    let l = value.parse::<u32>().ok().filter(|&l| l < MOST_LEVELS);
                    s.level = Some(l.ok_or_else(|| {
                        at(
                            i + 1,
                            format!("Level={value} is not a level (0 to {})", MOST_LEVELS - 1),
                        )
                    })?);
                }
                // (the link's speed weighs Slurm's placement; no part of the map)
                "linkspeed" => {}
                _ => return Err(at(i + 1, format!("'{key}' is not a key of Slurm's tree topology"))),
            }
        }
        if s.name.is_empty() {
            return Err(at(i + 1, "a line without SwitchName=".into()));
        }
        all.push(s);
    }
    let levels = slurm_levels(origin, &all)?;
    let mut parts = Parts::default();
    for s in &all {
        parts.switches.push(Switch {
            name: s.name.clone(),
            level: levels.get(&s.name).copied().unwrap_or(1),
            group: None,
        });
        if s.switches.is_empty() {
            parts.hosts.extend(s.nodes.iter().map(|n| Host {
                name: n.clone(),
                switch: s.name.clone(),
                port: None,
            }));
        }
        parts
            .ends
            .extend(s.switches.iter().map(|c| (c.clone(), s.name.clone())));
    }
    Ok(parts)
}

/// Each switch's level: scontrol's plus one where given, else one above
/// its highest child's (1 for a switch with hosts only). A switch under
/// itself, or a child that no line defines, is refused naming it.
fn slurm_levels(origin: &str, all: &[SlurmSwitch]) -> Result<BTreeMap<String, u32>, MapError> {
    let by_name: BTreeMap<&str, &SlurmSwitch> = all.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut levels: BTreeMap<String, u32> = BTreeMap::new();
    for s in all {
        // depth-first, the path kept to name a cycle
        let mut path: Vec<&str> = Vec::new();
        level_of(origin, &by_name, &s.name, &mut path, &mut levels)?;
    }
    for s in all {
        if let Some(l) = s.level {
            levels.insert(s.name.clone(), l + 1);
        }
    }
    Ok(levels)
}

fn level_of<'a>(
    origin: &str,
    by_name: &BTreeMap<&'a str, &'a SlurmSwitch>,
    name: &'a str,
    path: &mut Vec<&'a str>,
    levels: &mut BTreeMap<String, u32>,
) -> Result<u32, MapError> {
    if let Some(&l) = levels.get(name) {
        return Ok(l);
    }
    if path.len() >= MOST_LEVELS as usize {
        return Err(MapError::Invalid {
            origin: origin.to_string(),
            message: format!("switch '{name}' is more than {MOST_LEVELS} levels under another"),
        });
    }
    if path.contains(&name) {
        path.push(name);
        return Err(MapError::Invalid {
            origin: origin.to_string(),
            message: format!("switch '{name}' is under itself ({})", path.join(" > ")),
        });
    }
    let Some(s) = by_name.get(name) else {
        let parent = path.last().copied().unwrap_or("?");
        let line = by_name.get(parent).map_or(0, |p| p.line);
        return Err(MapError::Syntax {
            origin: origin.to_string(),
            line,
            message: format!("switch '{parent}' lists '{name}', which no line defines"),
        });
    };
    path.push(name);
    let mut level = 1;
    for c in &s.switches {
        level = level.max(level_of(origin, by_name, c, path, levels)? + 1);
    }
    path.pop();
    levels.insert(name.to_string(), level);
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "# a fat tree as Slurm's topology.conf
SwitchName=leaf1 Nodes=node[0-1] LinkSpeed=100
SwitchName=leaf2 Nodes=node[2-3]
SwitchName=spine1 Switches=leaf[1-2]
SwitchName=spine2 Switches=leaf[1-2]
";

    #[test]
    fn slurms_tree_reads_as_a_map() {
        assert_eq!(Format::of(CONF), Format::Slurm);
        let f = combine(&[("topology.conf".into(), read("topology.conf", CONF).unwrap())]).unwrap();
        assert_eq!(f.switch("spine2").map(|s| s.level), Some(2));
        assert_eq!(f.host("node3").map(|h| h.switch.as_str()), Some("leaf2"));
        assert_eq!(f.cables.len(), 4);
        assert_eq!(f.ways("node0", "node2").map(|w| w.paths.len()), Some(2));
    }

    #[test]
    fn scontrols_output_reads_with_its_levels_and_upper_node_lists() {
        let text = "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[0-1]\n\
                    SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node[2-3]\n\
                    SwitchName=top Level=1 LinkSpeed=1 Nodes=node[0-3] Switches=leaf[1-2]\n";
        let f = combine(&[("scontrol".into(), read("scontrol", text).unwrap())]).unwrap();
        assert_eq!(f.hosts.len(), 4, "the upper switch's node list adds no host");
        assert_eq!(f.switch("top").map(|s| s.level), Some(2));
    }

    #[test]
    fn a_bad_slurm_tree_is_refused_in_one_line() {
        let err = |t: &str| read("t.conf", t).unwrap_err().to_string();
        assert_eq!(
            err("SwitchName=a Switches=b\nSwitchName=b Switches=a\n"),
            "t.conf: switch 'a' is under itself (a > b > a)"
        );
        assert_eq!(
            err("SwitchName=a Switches=b\n"),
            "t.conf: line 1: switch 'a' lists 'b', which no line defines"
        );
        assert_eq!(
            err("SwitchName=a Nodes=n1\nSwitchName=b Colour=red\n"),
            "t.conf: line 2: 'Colour' is not a key of Slurm's tree topology"
        );
        assert!(err("SwitchName=a Nodes=n[1-\n").starts_with("t.conf: line 1: "));
    }

    #[test]
    fn two_sources_make_one_map_and_a_contradiction_names_both() {
        let switches = read(
            "fabric.toml",
            "[[switch]]\nname = \"leaf1\"\nlevel = 1\n[[switch]]\nname = \"leaf2\"\nlevel = 1\n\
             [[switch]]\nname = \"spine1\"\nlevel = 2\n[[cable]]\na = \"leaf1:9\"\nb = \"spine1:1\"\n\
             [[cable]]\na = \"leaf2:9\"\nb = \"spine1:2\"\n",
        )
        .unwrap();
        let hosts = read(
            "topology.conf",
            "SwitchName=leaf1 Nodes=n1\nSwitchName=leaf2 Nodes=n2\n",
        )
        .unwrap();
        let f = combine(&[
            ("fabric.toml".into(), switches.clone()),
            ("topology.conf".into(), hosts),
        ])
        .unwrap();
        assert_eq!(f.hosts.len(), 2);
        assert_eq!(f.ways("n1", "n2").map(|w| w.paths.len()), Some(1));
        let wrong = read("lldp", "SwitchName=leaf2 Nodes=n1\n").unwrap();
        let with = [
            ("fabric.toml".to_string(), switches),
            (
                "topology.conf".to_string(),
                read("topology.conf", "SwitchName=leaf1 Nodes=n1\n").unwrap(),
            ),
            ("lldp".to_string(), wrong),
        ];
        assert_eq!(
            combine(&with).unwrap_err().to_string(),
            "fabric.toml + topology.conf + lldp: topology.conf puts host 'n1' under 'leaf1', lldp under 'leaf2'"
        );
    }
}
