//! InfiniBand's forwarding tables, as `ibroute` prints one switch's and
//! `dump_lfts` (or `dump_fts`) every switch's: for each switch, the port
//! it sends each host's traffic out of. With them a pair's way is known
//! exactly instead of being one of its equal-cost ways: from the first
//! host's switch, out of the port its table gives for the other host, to
//! whatever the map has on that port, until the other host. Each block
//! starts `Unicast lids [0x0-0xN] of switch Lid L guid 0xG (NAME):` (the
//! name may hold parentheses: it runs to the final `):`), then a row a
//! destination, `0x0007 001 : (Channel Adapter portguid 0x...: 'node0
//! mlx5_0')`; a host is its HCA description's first word. Pure.

use crate::map::{port, Element, Fabric, MapError};
use std::collections::BTreeSet;

pub use crate::map::Tables;

/// The most switches a way may cross before it is taken for a loop.
const MOST_HOPS: usize = 32;

/// The tables in `ibroute` or `dump_lfts` output.
pub fn tables(origin: &str, text: &str) -> Result<Tables, MapError> {
    let at = |line: usize, message: String| MapError::Syntax {
        origin: origin.to_string(),
        line,
        message,
    };
    let mut out = Tables::new();
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("Unicast lids [") {
            let name = line
                .find(" guid 0x")
                .and_then(|g| line[g..].find(" (").map(|o| g + o + 2))
                .and_then(|start| {
                    line.rfind("):")
                        .filter(|&end| end >= start)
                        .map(|end| &line[start..end])
                })
                .ok_or_else(|| at(i + 1, "a table's header without its switch's (name)".into()))?;
            out.entry(name.to_string()).or_default();
            current = Some(name.to_string());
        } else if let (Some(sw), Some(rest)) = (&current, line.strip_prefix("0x")) {
            let mut words = rest.split_whitespace();
            let (_lid, out_port) = (words.next(), words.next());
            let Some(out_port) = out_port.filter(|p| p.bytes().all(|c| c.is_ascii_digit())) else {
                return Err(at(i + 1, format!("'{line}' is not LID PORT : (DESTINATION)")));
            };
            // only hosts matter: a way ends at one
            if !line.contains("(Channel Adapter ") {
                continue;
            }
            let desc = line
                .rsplit_once(": '")
                .map(|(_, d)| d.trim_end_matches(')').trim_end_matches('\''));
            let Some(host) = desc.and_then(|d| d.split_whitespace().next()) else {
                return Err(at(i + 1, format!("'{line}' names no host")));
            };
            if let Some(t) = out.get_mut(sw) {
                t.entry(host.to_string()).or_insert_with(|| port(out_port));
            }
        }
    }
    if out.is_empty() {
        return Err(at(
            1,
            "no 'Unicast lids' table: is this ibroute or dump_lfts output?".into(),
        ));
    }
    Ok(out)
}

/// What a routed pair crosses: its way there, what both directions cross
/// (for sure), and what either does (may).
pub type Routed = (Vec<Element>, BTreeSet<Element>, BTreeSet<Element>);

impl Fabric {
    /// Both directions of the pair `a`, `b` as their tables give them
    /// (a bandwidth test's data goes one way, its acknowledgements the
    /// other); None unless the tables give both.
    pub fn routed_pair(&self, a: &str, b: &str) -> Option<Routed> {
        let (there, back) = (self.routed(a, b)?, self.routed(b, a)?);
        let back: BTreeSet<Element> = back.into_iter().collect();
        let certain = there.iter().filter(|e| back.contains(e)).cloned().collect();
        let mut possible: BTreeSet<Element> = there.iter().cloned().collect();
        possible.extend(back);
        Some((there, certain, possible))
    }

    /// The way from host `a` to host `b` its switches' tables give, as the
    /// elements it crosses; None without tables for it, or where a table
    /// or the map's ports run out (the equal-cost ways stand in then).
    pub fn routed(&self, a: &str, b: &str) -> Option<Vec<Element>> {
        if self.routes.is_empty() {
            return None;
        }
        let (ha, hb) = (self.host(a)?, self.host(b)?);
        let mut way = vec![Element::Host(a.to_string()), Element::Switch(ha.switch.clone())];
        let mut sw = ha.switch.clone();
        for _ in 0..MOST_HOPS {
            let out = self.routes.get(&sw)?.get(b)?;
            if sw == hb.switch && hb.port.as_deref().map(port).as_deref() == Some(out.as_str()) {
                way.push(Element::Host(b.to_string()));
                return Some(way);
            }
            let (cable, far) = self.cable_at(&format!("{sw}:{out}"))?;
            let far_switch = crate::map::switch_of(far).to_string();
            way.push(Element::Cable(cable.a.clone(), cable.b.clone()));
            way.push(Element::Switch(far_switch.clone()));
            sw = far_switch;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{combine, read};

    fn fabric_with_routes() -> Fabric {
        let ib = include_str!("../tests/fixtures/ibnetdiscover.txt");
        let lfts = include_str!("../tests/fixtures/dump_lfts.txt");
        combine(&[
            ("ibnetdiscover.txt".into(), read("ibnetdiscover.txt", ib).unwrap()),
            ("dump_lfts.txt".into(), read("dump_lfts.txt", lfts).unwrap()),
        ])
        .unwrap()
    }

    #[test]
    fn each_pair_takes_the_one_way_its_tables_give() {
        let f = fabric_with_routes();
        let names = |w: Vec<Element>| w.iter().map(Element::to_string).collect::<Vec<_>>();
        // leaf1 sends node6's traffic out of port 35, to spine1, which sends
        // it out of its port 4 to leaf4, which has node6 on its port 1
        assert_eq!(
            names(f.routed("node0", "node6").unwrap()),
            [
                "node0",
                "leaf1",
                "leaf1-spine1",
                "spine1",
                "leaf4-spine1",
                "leaf4",
                "node6"
            ]
        );
        // node7's traffic leaves leaf1 by its port 36, to spine2
        assert_eq!(names(f.routed("node0", "node7").unwrap())[3], "spine2");
        assert_eq!(names(f.routed("node0", "node1").unwrap()), ["node0", "leaf1", "node1"]);
        // with tables, a pair's way is one
        let w = f.ways("node0", "node6").unwrap();
        assert_eq!((w.paths.len(), w.certain.len()), (1, w.possible.len()));
    }

    /// With the tables, a slow uplink is named alone (without them it is
    /// one of its leaf's uplinks).
    #[test]
    fn the_tables_name_the_uplink_itself() {
        let f = fabric_with_routes();
        let bad = f.element("leaf2-spine2").unwrap();
        let sim = crate::sim::SlowPaths::new(f.clone(), &["leaf2-spine2".to_string()]).unwrap();
        let hosts: Vec<String> = f.hosts.iter().map(|h| h.name.clone()).collect();
        let mut pairs = Vec::new();
        for a in 0..hosts.len() {
            for b in a + 1..hosts.len() {
                // a bandwidth test's data goes one way: client a to server b
                pairs.push(crate::attribute::Seen {
                    a,
                    b,
                    slow: sim.slow(a, b, 0) || sim.slow(b, a, 0),
                });
            }
        }
        let found = crate::attribute::attribute(&f, &hosts, &pairs);
        assert_eq!(found.suspects[0].elements, [bad], "{found:?}");
    }

    #[test]
    fn ibroute_for_one_switch_and_garbage() {
        let one = tables("r.txt", include_str!("../tests/fixtures/ibroute-leaf1.txt")).unwrap();
        assert_eq!(one["leaf1"]["node6"], "35");
        assert_eq!(one["leaf1"]["node1"], "2");
        assert!(tables("x", "hello\n")
            .unwrap_err()
            .to_string()
            .contains("no 'Unicast lids' table"));
    }
}
