//! InfiniBand's fabric as `ibnetdiscover` prints it (rdma-core's
//! infiniband-diags, its default output): blocks of `Switch` and `Ca`
//! records, each switch's ports one line each, `[PORT] "S-GUID"[RPORT]`
//! for a cable to another switch and `[PORT] "H-GUID"[RPORT](PORTGUID)`
//! for a host's HCA, every name in the `# "..."` comment after it (a
//! switch's node description; an HCA's "HOST mlx5_0", whose first word is
//! the host). Layout: tests/fixtures/README.md. Pure.

use crate::links::{parts, End, Link};
use crate::map::MapError;
use crate::parts::Parts;
use std::collections::{BTreeMap, BTreeSet};

/// The quoted text after `# "` up to its closing quote.
fn described(line: &str) -> Option<&str> {
    let rest = &line[line.find("# \"")? + 3..];
    // a description may hold quotes: the name runs to the last quote
    // before " lid " or " enhanced port"/" base port"
    let stop = [" lid ", " enhanced port", " base port"]
        .iter()
        .filter_map(|m| rest.find(&format!("\"{m}")))
        .min()
        .or_else(|| rest.rfind('"'))?;
    Some(&rest[..stop])
}

/// `"S-b8ce..."[4]` at the start of `s`: the kind, the GUID and the port.
fn remote(s: &str) -> Option<(char, &str, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let kind = s.chars().next()?;
    let close = s.find('"')?;
    let guid = s.get(2..close)?;
    let after = &s[close + 1..];
    let port = after.strip_prefix('[')?.split(']').next()?;
    Some((kind, guid, port))
}

/// One port line of a switch record.
struct PortLine {
    switch: String,
    port: String,
    kind: char,
    guid: String,
    rport: String,
    desc: Option<String>,
    line: usize,
}

/// The map's parts in `ibnetdiscover`'s output.
pub fn ibnetdiscover(origin: &str, text: &str) -> Result<Parts, MapError> {
    let at = |line: usize, message: String| MapError::Syntax {
        origin: origin.to_string(),
        line,
        message,
    };
    // each switch's GUID and name; its ports' far ends
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut ports: Vec<PortLine> = Vec::new();
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("Switch") {
            let guid = line
                .split('"')
                .nth(1)
                .and_then(|t| t.strip_prefix("S-"))
                .ok_or_else(|| at(i + 1, "a Switch record without its \"S-GUID\"".into()))?;
            let name = described(line).ok_or_else(|| at(i + 1, "a Switch record without its # \"name\"".into()))?;
            names.insert(guid.to_string(), name.to_string());
            current = Some(guid.to_string());
        } else if line.starts_with("Ca") || line.starts_with("Rt") {
            current = None;
        } else if let (Some(sw), Some(rest)) = (&current, line.strip_prefix('[')) {
            let (port, after) = rest
                .split_once(']')
                .ok_or_else(|| at(i + 1, format!("'{line}' is not a port line")))?;
            let (kind, guid, rport) = remote(after).ok_or_else(|| at(i + 1, format!("'{line}' names no far end")))?;
            ports.push(PortLine {
                switch: sw.clone(),
                port: port.to_string(),
                kind,
                guid: guid.to_string(),
                rport: rport.to_string(),
                desc: described(line).map(str::to_string),
                line: i + 1,
            });
        }
    }
    if names.is_empty() {
        return Err(at(1, "no Switch record: is this ibnetdiscover's output?".into()));
    }
    let mut links = Vec::new();
    let mut hosts = BTreeSet::new();
    for p in ports {
        let far = if p.kind == 'S' {
            names
                .get(&p.guid)
                .cloned()
                .ok_or_else(|| at(p.line, format!("switch GUID {} has no Switch record", p.guid)))?
        } else {
            // an HCA's description: "HOST mlx5_0"; its host is the first word
            let d = p
                .desc
                .ok_or_else(|| at(p.line, "a host port without its # \"HOST HCA\"".into()))?;
            let host = d.split_whitespace().next().unwrap_or(&d).to_string();
            hosts.insert(host.clone());
            host
        };
        links.push(Link {
            a: End {
                name: names[&p.switch].clone(),
                port: Some(p.port),
            },
            b: End {
                name: far,
                port: (p.kind == 'S').then_some(p.rport),
            },
        });
    }
    Ok(parts(&links, &hosts, &BTreeMap::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::combine;

    #[test]
    fn ibnetdiscover_of_a_fat_tree_reads_as_its_map() {
        let text = include_str!("../tests/fixtures/ibnetdiscover.txt");
        let f = combine(&[(
            "ibnetdiscover.txt".into(),
            ibnetdiscover("ibnetdiscover.txt", text).unwrap(),
        )])
        .unwrap();
        assert_eq!((f.switches.len(), f.hosts.len(), f.cables.len()), (6, 8, 8));
        assert_eq!(f.switch("spine1").map(|s| s.level), Some(2));
        let n6 = f.host("node6").unwrap();
        assert_eq!((n6.switch.as_str(), n6.port.as_deref()), ("leaf4", Some("1")));
        let c = f.cables.iter().find(|c| c.a == "leaf4" && c.b == "spine1").unwrap();
        assert_eq!(c.ends, [("leaf4:35".to_string(), "spine1:4".to_string())]);
        assert_eq!(f.ways("node0", "node6").map(|w| w.paths.len()), Some(2));
    }

    #[test]
    fn other_text_is_refused() {
        assert!(ibnetdiscover("x", "hello\n")
            .unwrap_err()
            .to_string()
            .contains("no Switch record"));
    }
}
