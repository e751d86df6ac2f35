//! The fabric's map: its switches (each at a level, and in a group where
//! the fabric has groups), the hosts under them and the cables between
//! switches, read from the map file (TOML) and checked whole: a name used
//! twice, a host under a switch the map does not have, a cable to nowhere
//! or from a switch to itself, a fat tree's cable between two switches of
//! one level: each refused in one line naming what and where. Nothing here
//! opens a file; the caller hands over the text.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use thiserror::Error;

/// Why a map cannot be used: one line naming the problem and where.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum MapError {
    #[error("{origin}: line {line}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        message: String,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// A switch: its level (1 for the switches hosts hang from) and group;
/// as the map file and a sweep's document write it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub name: String,
    pub level: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// A host (a NIC's node) under a level-1 switch; as the map file and a
/// sweep's document write it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: String,
    pub switch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
}

/// One cable (or a bundle of them) between two switches, its ends in
/// name order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cable {
    pub a: String,
    pub b: String,
    /// How many cables the map lists between the two.
    pub count: u32,
    /// Each cable's ends as the map gives them, `a`'s first
    /// (`leaf2:33`, `spine1:7`; a bare switch name where it gives no port).
    pub ends: Vec<(String, String)>,
}

/// Something a pair's traffic crosses, named as the map names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Element {
    /// The cable between a host and its switch, named by the host.
    Host(String),
    Switch(String),
    /// The cables between two switches, in name order (`a-b`).
    Cable(String, String),
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Element::Host(h) => write!(f, "{h}"),
            Element::Switch(s) => write!(f, "{s}"),
            Element::Cable(a, b) => write!(f, "{a}-{b}"),
        }
    }
}

/// The whole map, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fabric {
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    pub cables: Vec<Cable>,
    /// The switches' forwarding tables, where a source gave them
    /// (`routes`): each pair's one way instead of its equal-cost ways.
    pub routes: Tables,
    /// Each host's index among `hosts`, by name.
    host_at: std::collections::HashMap<String, usize>,
    /// Each cable end with a port (`leaf1:35`, ports without leading
    /// zeros): its cable's index and the far end.
    port_at: std::collections::HashMap<String, (usize, String)>,
}

/// Each switch's forwarding table, where a source gave them: the port
/// out of which it sends each host's traffic (ports without leading
/// zeros, as the map writes them).
pub type Tables = BTreeMap<String, BTreeMap<String, String>>;

/// `007` as the map writes a port: `7`.
pub(crate) fn port(p: &str) -> String {
    let t = p.trim_start_matches('0');
    if t.is_empty() {
        "0".to_string()
    } else {
        t.to_string()
    }
}

/// `leaf1:035` as the key of a cable end: `leaf1:35`; None without a port.
pub(crate) fn end_key(end: &str) -> Option<String> {
    let (s, p) = end.split_once(':')?;
    Some(format!("{s}:{}", port(p)))
}

/// The switch a cable end names: `SWITCH` or `SWITCH:PORT`.
pub(crate) fn switch_of(end: &str) -> &str {
    end.split_once(':').map_or(end, |(s, _)| s)
}

impl Fabric {
    /// A map from its parts, checked; cables given as their two ends.
    pub fn build(
        origin: &str,
        switches: Vec<Switch>,
        hosts: Vec<Host>,
        ends: &[(String, String)],
    ) -> Result<Fabric, MapError> {
        let bad = |message: String| MapError::Invalid {
            origin: origin.to_string(),
            message,
        };
        let mut names = BTreeSet::new();
        for name in switches.iter().map(|s| &s.name).chain(hosts.iter().map(|h| &h.name)) {
            if name.is_empty() {
                return Err(bad("a switch or host without a name".into()));
            }
            if !names.insert(name.as_str()) {
                return Err(bad(format!("'{name}' is named twice")));
            }
        }
        let level: BTreeMap<&str, &Switch> = switches.iter().map(|s| (s.name.as_str(), s)).collect();
        for s in &switches {
            if s.level == 0 {
                return Err(bad(format!(
                    "switch '{}': level 0 (levels start at 1, the hosts' switches)",
                    s.name
                )));
            }
        }
        for h in &hosts {
            match level.get(h.switch.as_str()) {
                None => {
                    return Err(bad(format!(
                        "host '{}' is under '{}', which is not a switch of the map",
                        h.name, h.switch
                    )))
                }
                Some(s) if s.level != 1 => {
                    return Err(bad(format!(
                        "host '{}' is under '{}', a level-{} switch: hosts hang from level 1",
                        h.name, h.switch, s.level
                    )))
                }
                Some(_) => {}
            }
        }
        let grouped = switches.iter().any(|s| s.group.is_some());
        let mut counted: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
        for (a_end, b_end) in ends {
            let (a, b) = (switch_of(a_end), switch_of(b_end));
            let (Some(sa), Some(sb)) = (level.get(a), level.get(b)) else {
                let missing = if level.contains_key(a) { b } else { a };
                return Err(bad(format!(
                    "cable {a_end} - {b_end}: '{missing}' is not a switch of the map"
                )));
            };
            if a == b {
                return Err(bad(format!("cable {a_end} - {b_end} joins '{a}' to itself")));
            }
            if !grouped && sa.level == sb.level {
                return Err(bad(format!(
                    "cable {a_end} - {b_end} joins two level-{} switches: a fat tree's cables go between levels (give the switches groups for a dragonfly)",
                    sa.level
                )));
            }
            let (key, end) = if a < b {
                ((a.to_string(), b.to_string()), (a_end.clone(), b_end.clone()))
            } else {
                ((b.to_string(), a.to_string()), (b_end.clone(), a_end.clone()))
            };
            counted.entry(key).or_default().push(end);
        }
        let cables: Vec<Cable> = counted
            .into_iter()
            .map(|((a, b), ends)| Cable {
                a,
                b,
                count: u32::try_from(ends.len()).unwrap_or(u32::MAX),
                ends,
            })
            .collect();
        let host_at = hosts.iter().enumerate().map(|(i, h)| (h.name.clone(), i)).collect();
        let mut port_at = std::collections::HashMap::new();
        for (i, c) in cables.iter().enumerate() {
            for (x, y) in &c.ends {
                for (here, far) in [(x, y), (y, x)] {
                    if let Some(key) = end_key(here) {
                        port_at.insert(key, (i, far.to_string()));
                    }
                }
            }
        }
        Ok(Fabric {
            switches,
            hosts,
            cables,
            routes: Default::default(),
            host_at,
            port_at,
        })
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.host_at.get(name).and_then(|&i| self.hosts.get(i))
    }

    /// The cable whose end is `SWITCH:PORT` (ports without leading
    /// zeros), and its far end.
    pub(crate) fn cable_at(&self, end: &str) -> Option<(&Cable, &str)> {
        let (i, far) = self.port_at.get(end)?;
        Some((self.cables.get(*i)?, far.as_str()))
    }

    pub fn switch(&self, name: &str) -> Option<&Switch> {
        self.switches.iter().find(|s| s.name == name)
    }

    /// The element `name` names: a host (its cable), a switch, or
    /// `SWITCH-SWITCH` for the cables between two switches.
    pub fn element(&self, name: &str) -> Option<Element> {
        if self.host(name).is_some() {
            return Some(Element::Host(name.to_string()));
        }
        if self.switch(name).is_some() {
            return Some(Element::Switch(name.to_string()));
        }
        // a switch's own name may hold a '-': try every split
        name.match_indices('-').find_map(|(i, _)| {
            let (a, b) = (&name[..i], &name[i + 1..]);
            self.cables
                .iter()
                .find(|c| (c.a == a && c.b == b) || (c.a == b && c.b == a))
                .map(|c| Element::Cable(c.a.clone(), c.b.clone()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
[[switch]]
name = "spine1"
level = 2

[[switch]]
name = "leaf1"
level = 1

[[switch]]
name = "leaf-2"
level = 1

[[host]]
name = "node1"
switch = "leaf1"
port = "7"

[[host]]
name = "node2"
switch = "leaf-2"

[[cable]]
a = "leaf1:33"
b = "spine1:1"

[[cable]]
a = "leaf1:34"
b = "spine1:2"

[[cable]]
a = "leaf-2"
b = "spine1"
"#;

    #[test]
    fn a_map_reads_and_names_its_elements() {
        let f = Fabric::parse("map.toml", SMALL).unwrap();
        assert_eq!((f.switches.len(), f.hosts.len(), f.cables.len()), (3, 2, 2));
        // two cables between leaf1 and spine1 are one bundle of two
        assert!(f.cables.contains(&Cable {
            a: "leaf1".into(),
            b: "spine1".into(),
            count: 2,
            ends: vec![
                ("leaf1:33".into(), "spine1:1".into()),
                ("leaf1:34".into(), "spine1:2".into())
            ],
        }));
        assert_eq!(f.element("node1"), Some(Element::Host("node1".into())));
        assert_eq!(f.element("spine1"), Some(Element::Switch("spine1".into())));
        assert_eq!(
            f.element("spine1-leaf1"),
            Some(Element::Cable("leaf1".into(), "spine1".into()))
        );
        assert_eq!(
            f.element("leaf-2-spine1"),
            Some(Element::Cable("leaf-2".into(), "spine1".into()))
        );
        assert_eq!(f.element("leaf1-leaf-2"), None);
        assert_eq!(
            Element::Cable("leaf1".into(), "spine1".into()).to_string(),
            "leaf1-spine1"
        );
    }

    #[test]
    fn bad_maps_are_refused_in_one_line_naming_what() {
        let refused = |text: &str| Fabric::parse("m.toml", text).unwrap_err().to_string();
        let sw = "[[switch]]\nname = \"leaf1\"\nlevel = 1\n[[switch]]\nname = \"spine1\"\nlevel = 2\n";
        assert_eq!(
            refused(&format!("{sw}[[switch]]\nname = \"leaf1\"\nlevel = 1\n")),
            "m.toml: 'leaf1' is named twice"
        );
        assert_eq!(
            refused(&format!("{sw}[[host]]\nname = \"n1\"\nswitch = \"leaf9\"\n")),
            "m.toml: host 'n1' is under 'leaf9', which is not a switch of the map"
        );
        assert_eq!(
            refused(&format!("{sw}[[host]]\nname = \"n1\"\nswitch = \"spine1\"\n")),
            "m.toml: host 'n1' is under 'spine1', a level-2 switch: hosts hang from level 1"
        );
        assert_eq!(
            refused(&format!("{sw}[[cable]]\na = \"leaf1:1\"\nb = \"leaf1:2\"\n")),
            "m.toml: cable leaf1:1 - leaf1:2 joins 'leaf1' to itself"
        );
        assert_eq!(
            refused(&format!("{sw}[[cable]]\na = \"leaf1\"\nb = \"core\"\n")),
            "m.toml: cable leaf1 - core: 'core' is not a switch of the map"
        );
        assert!(refused(&format!(
            "{sw}[[switch]]\nname = \"leaf2\"\nlevel = 1\n[[cable]]\na = \"leaf1\"\nb = \"leaf2\"\n"
        ))
        .contains("joins two level-1 switches"));
        let garbage = refused("[[switch]]\nname = \"a\"\nlevel = 1\n\nthis is not toml\n");
        assert!(garbage.starts_with("m.toml: line 5: "), "{garbage}");
        let typo = refused("[[switch]]\nname = \"a\"\nlevle = 1\n");
        assert!(typo.starts_with("m.toml: line 3: ") && typo.contains("levle"), "{typo}");
    }
}
