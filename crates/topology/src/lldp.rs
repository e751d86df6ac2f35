//! The fabric learned from LLDP: a folder of `lldpctl -f json` outputs
//! (lldpd), one per device, each file named for its device (`node0.json`,
//! `leaf1.json`). Each neighbour is a link from the device's interface to
//! the neighbour's system name and port. lldpd's JSON changes shape with
//! counts: one interface is an object, several a list of one-key objects;
//! a neighbour without a system name has its chassis `id` in place of the
//! name. A neighbour that says it is a bridge or router is a switch, as
//! is one named as a Slingshot switch (`x3000c0r15b0`, the xname of its
//! BMC: the switch is `x3000c0r15`, its group from the chassis MAC's
//! fabric address, HPE's layout: group = (nid >> 11) & 0x1ff with nid the
//! MAC's low 20 bits); a device with a file of its own is a host unless
//! something says it is a switch. Layout and sources: tests/fixtures/README.md. Pure.

use crate::links::{parts, End, Link};
use crate::map::MapError;
use crate::parts::Parts;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What the files say, gathered.
#[derive(Default)]
struct Seen {
    links: Vec<Link>,
    switches: BTreeSet<String>,
    groups: BTreeMap<String, String>,
}

/// `x1003c2r7b0` (a Slingshot switch's BMC): the switch, `x1003c2r7`.
fn slingshot_switch(name: &str) -> Option<&str> {
    let b = name.rfind('b')?;
    let (head, tail) = (&name[..b], &name[b + 1..]);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let r = head.rfind('r')?;
    let c = head[..r].rfind('c')?;
    let ok = head.starts_with('x')
        && digits(&head[1..c])
        && digits(&head[c + 1..r])
        && digits(&head[r + 1..])
        && digits(tail);
    ok.then_some(head)
}

/// The Slingshot group in a fabric MAC (`02:fe:00:00:19:d5`).
fn slingshot_group(mac: &str) -> Option<u32> {
    let bytes: Vec<u8> = mac
        .split(':')
        .map(|b| u8::from_str_radix(b, 16).ok())
        .collect::<Option<_>>()?;
    if bytes.len() != 6 || bytes[0] != 0x02 || bytes[1] != 0xfe {
        return None;
    }
    let nid = (u32::from(bytes[3]) << 16 | u32::from(bytes[4]) << 8 | u32::from(bytes[5])) & 0xfffff;
    Some((nid >> 11) & 0x1ff)
}

/// Each interface of `lldp.interface`, whichever shape lldpd chose.
fn interfaces(v: &Value) -> Vec<(&str, &Value)> {
    match v.pointer("/lldp/interface") {
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
            .collect(),
        _ => Vec::new(),
    }
}

/// One neighbour's name, whether it says it switches, and its MAC.
fn chassis(iface: &Value) -> Option<(String, bool, Option<String>)> {
    let c = iface.get("chassis")?.as_object()?;
    // a chassis without a system name is its id
    let (name, body) = match c.get("id") {
        Some(id) => (id.get("value")?.as_str()?.to_string(), iface.get("chassis")?),
        None => {
            let (k, v) = c.iter().next()?;
            (k.clone(), v)
        }
    };
    let caps = match body.get("capability") {
        Some(Value::Array(l)) => l.iter().collect(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    let switches = caps.iter().any(|c| {
        matches!(c.get("type").and_then(Value::as_str), Some("Bridge" | "Router"))
            && c.get("enabled").and_then(Value::as_bool) == Some(true)
    });
    let mac = body
        .pointer("/id/value")
        .and_then(Value::as_str)
        .filter(|_| body.pointer("/id/type").and_then(Value::as_str) == Some("mac"))
        .map(str::to_string);
    Some((name, switches, mac))
}

/// The neighbour's port: its name, or its description where the id is a MAC.
fn port(iface: &Value) -> Option<String> {
    let p = iface.get("port")?;
    let value = p.pointer("/id/value").and_then(Value::as_str);
    let descr = p.get("descr").and_then(Value::as_str);
    match p.pointer("/id/type").and_then(Value::as_str) {
        Some("mac") => descr.or(value),
        _ => value.or(descr),
    }
    .map(|s| s.split_whitespace().last().unwrap_or(s).to_string())
}

fn read_one(device: &str, origin: &str, text: &str, seen: &mut Seen) -> Result<(), MapError> {
    let v: Value = serde_json::from_str(text).map_err(|e| MapError::Syntax {
        origin: origin.to_string(),
        line: e.line(),
        message: e.to_string(),
    })?;
    match v.get("lldp") {
        Some(Value::Object(_)) => {}
        // `lldpctl -f json0` lists everything, objects included
        Some(Value::Array(_)) => {
            return Err(MapError::Invalid {
                origin: origin.to_string(),
                message: "lldpctl -f json0's output: give lldpctl -f json's".into(),
            })
        }
        _ => {
            return Err(MapError::Invalid {
                origin: origin.to_string(),
                message: "no \"lldp\" object: is this lldpctl -f json's output?".into(),
            })
        }
    }
    for (ifname, iface) in interfaces(&v) {
        let Some((mut name, mut switches, mac)) = chassis(iface) else {
            continue;
        };
        if let Some(sw) = slingshot_switch(&name) {
            name = sw.to_string();
            switches = true;
            if let Some(g) = mac.as_deref().and_then(slingshot_group) {
                seen.groups.insert(name.clone(), format!("group{g}"));
            }
        }
        if switches {
            seen.switches.insert(name.clone());
        }
        seen.links.push(Link {
            a: End {
                name: device.to_string(),
                port: Some(ifname.to_string()),
            },
            b: End {
                name,
                port: port(iface),
            },
        });
    }
    Ok(())
}

/// The parts the LLDP outputs `files` (each a device's name, where it was
/// read from, and its text) make together; the first that cannot be read
/// refuses them all (files a person gathered).
pub fn from_files(files: &[(String, String, String)]) -> Result<Parts, MapError> {
    let mut seen = Seen::default();
    for (device, origin, text) in files {
        read_one(device, origin, text, &mut seen)?;
    }
    Ok(made(&seen, files))
}

/// As `from_files`, each output that cannot be read left out and said
/// (ranks' own, gathered when they joined: one rank's bad output takes
/// only its host off the map).
pub fn from_ranks(files: &[(String, String, String)]) -> (Parts, Vec<MapError>) {
    let mut seen = Seen::default();
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for f in files {
        let mut one = Seen::default();
        match read_one(&f.0, &f.1, &f.2, &mut one) {
            Ok(()) => {
                seen.links.extend(one.links);
                seen.switches.extend(one.switches);
                seen.groups.extend(one.groups);
                good.push(f.clone());
            }
            Err(e) => bad.push(e),
        }
    }
    (made(&seen, &good), bad)
}

/// The parts of what was read from `files`.
fn made(seen: &Seen, files: &[(String, String, String)]) -> Parts {
    let devices: BTreeSet<&str> = files.iter().map(|(d, _, _)| d.as_str()).collect();
    // a device is a host unless something says it switches; a neighbour
    // with no file and no say is taken for a switch
    let mut hosts = BTreeSet::new();
    for l in &seen.links {
        for e in [&l.a, &l.b] {
            if !seen.switches.contains(&e.name) && devices.contains(e.name.as_str()) {
                hosts.insert(e.name.clone());
            }
        }
    }
    parts(&seen.links, &hosts, &seen.groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::combine;

    fn file(device: &str, text: &str) -> (String, String, String) {
        (device.to_string(), format!("{device}.json"), text.to_string())
    }

    #[test]
    fn hosts_lldp_places_them_under_their_leaf_and_a_switchs_adds_cables() {
        let node0 = include_str!("../tests/fixtures/lldpctl-node0.json");
        let node1 = include_str!("../tests/fixtures/lldpctl-node1.json");
        let p = from_files(&[file("node0", node0), file("node1", node1)]).unwrap();
        let f = combine(&[("lldp".into(), p)]).unwrap();
        let h = f.host("node0").unwrap();
        assert_eq!((h.switch.as_str(), h.port.as_deref()), ("leaf1", Some("swp1")));
        assert_eq!(f.switch("leaf1").map(|s| s.level), Some(1));
        // the leaf's own neighbours: its hosts (stations) and what it is cabled to
        let leaf = include_str!("../tests/fixtures/lldpctl-leaf1.json");
        let p = from_files(&[file("node0", node0), file("leaf1", leaf)]).unwrap();
        assert!(
            p.hosts.iter().any(|h| h.name == "node0" && h.switch == "leaf1"),
            "{p:?}"
        );
        let empty = include_str!("../tests/fixtures/lldpctl-empty.json");
        assert!(from_files(&[file("node9", empty)]).unwrap().hosts.is_empty());
        assert!(from_files(&[file("x", "{}")])
            .unwrap_err()
            .to_string()
            .contains("no \"lldp\""));
        assert!(from_files(&[file("x", "{")])
            .unwrap_err()
            .to_string()
            .starts_with("x.json: line 1"));
        let json0 = include_str!("../tests/fixtures/lldpctl-node0.json0.json");
        assert!(from_files(&[file("node0", json0)])
            .unwrap_err()
            .to_string()
            .contains("json0"));
        // a rank's output that cannot be read takes only its host off the map
        let (p, bad) = from_ranks(&[file("node0", node0), file("node1", "")]);
        assert_eq!((p.hosts.len(), bad.len()), (1, 1));
    }

    #[test]
    fn a_slingshot_neighbour_is_its_switch_in_its_group() {
        let text = include_str!("../tests/fixtures/lldpctl-slingshot.json");
        let p = from_files(&[file("nid000001", text)]).unwrap();
        let names: Vec<(&str, Option<&str>)> = p
            .switches
            .iter()
            .map(|s| (s.name.as_str(), s.group.as_deref()))
            .collect();
        assert_eq!(names, [("x1003c2r7", Some("group3")), ("x6107c0r48", Some("group0"))]);
        assert_eq!(slingshot_switch("x3000c0r15b0"), Some("x3000c0r15"));
        assert_eq!(slingshot_switch("leaf1b0"), None);
    }
}
