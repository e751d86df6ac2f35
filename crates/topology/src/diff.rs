//! The map against the expected wiring (cable-map conformance): every
//! switch or host missing or extra, a host under another switch or on
//! another port, a cable missing, extra, or landing on another port or
//! switch, two switches cabled more or fewer times than expected (a leaf
//! wired to one spine twice). Each difference one line. Pure.

use crate::map::{switch_of, Fabric};
use std::collections::BTreeMap;

/// Every difference of `seen` from `expected`, switches first, then
/// hosts, then cables, each in name order.
pub fn differences(expected: &Fabric, seen: &Fabric) -> Vec<String> {
    let mut out = Vec::new();
    switches(expected, seen, &mut out);
    hosts(expected, seen, &mut out);
    cables(expected, seen, &mut out);
    out
}

fn switches(expected: &Fabric, seen: &Fabric, out: &mut Vec<String>) {
    let want: BTreeMap<&str, u32> = expected.switches.iter().map(|s| (s.name.as_str(), s.level)).collect();
    let have: BTreeMap<&str, u32> = seen.switches.iter().map(|s| (s.name.as_str(), s.level)).collect();
    for (name, level) in &want {
        match have.get(name) {
            None => out.push(format!("switch {name}: missing")),
            Some(l) if l != level => out.push(format!("switch {name}: at level {l}, expected {level}")),
            Some(_) => {}
        }
    }
    out.extend(
        have.keys()
            .filter(|n| !want.contains_key(*n))
            .map(|n| format!("switch {n}: not expected")),
    );
}

fn hosts(expected: &Fabric, seen: &Fabric, out: &mut Vec<String>) {
    let want: BTreeMap<&str, _> = expected.hosts.iter().map(|h| (h.name.as_str(), h)).collect();
    let have: BTreeMap<&str, _> = seen.hosts.iter().map(|h| (h.name.as_str(), h)).collect();
    for (name, w) in &want {
        let Some(h) = have.get(name) else {
            out.push(format!("host {name}: missing (expected under {})", w.switch));
            continue;
        };
        if h.switch != w.switch {
            out.push(format!("host {name}: under {}, expected under {}", h.switch, w.switch));
        } else if let (Some(p), Some(q)) = (&h.port, &w.port) {
            if p != q {
                out.push(format!("host {name}: on {} port {p}, expected port {q}", h.switch));
            }
        }
    }
    out.extend(
        have.iter()
            .filter(|(n, _)| !want.contains_key(*n))
            .map(|(n, h)| format!("host {n}: not expected (under {})", h.switch)),
    );
}

/// A cable's ends, the end on the switch of the lower name first.
fn ordered(a: &str, b: &str) -> (String, String) {
    if switch_of(a) <= switch_of(b) {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// Do two ends name one place? Exactly, or by switch where either has no port.
fn same_end(x: &str, y: &str) -> bool {
    x == y || ((!x.contains(':') || !y.contains(':')) && switch_of(x) == switch_of(y))
}

/// "once", "twice", "3 times".
fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

fn cables(expected: &Fabric, seen: &Fabric, out: &mut Vec<String>) {
    let all = |f: &Fabric| -> Vec<(String, String)> {
        f.cables
            .iter()
            .flat_map(|c| c.ends.iter().map(|(a, b)| ordered(a, b)))
            .collect()
    };
    let mut missing = all(expected);
    let mut extra = all(seen);
    // the same cable in both: exactly first, then by switch where a side
    // gives no port
    for loose in [false, true] {
        missing.retain(|(a, b)| {
            let at = extra.iter().position(|(x, y)| {
                if loose {
                    same_end(a, x) && same_end(b, y)
                } else {
                    a == x && b == y
                }
            });
            at.map(|i| extra.remove(i)).is_none()
        });
    }
    // an expected cable whose one end is there, cabled elsewhere
    let mut moved = Vec::new();
    missing.retain(|(a, b)| {
        let at = extra
            .iter()
            .position(|(x, y)| a.contains(':') && (a == x || a == y) || b.contains(':') && (b == x || b == y));
        match at {
            Some(i) => {
                let (x, y) = extra.remove(i);
                moved.push(format!("cable {a} <-> {b}: cabled {x} <-> {y} instead"));
                false
            }
            None => true,
        }
    });
    let count = |list: &[(String, String)], a: &str, b: &str| {
        list.iter()
            .filter(|(x, y)| switch_of(x) == a && switch_of(y) == b)
            .count()
    };
    let (want, have) = (all(expected), all(seen));
    for (x, y) in &missing {
        let (a, b) = (switch_of(x), switch_of(y));
        let (w, h) = (count(&want, a, b), count(&have, a, b));
        if h > 0 && h < w {
            out.push(format!(
                "cable {x} <-> {y}: missing ({a} is cabled to {b} {}, expected {})",
                times(h),
                times(w)
            ));
        } else {
            out.push(format!("cable {x} <-> {y}: missing"));
        }
    }
    out.extend(moved);
    for (x, y) in &extra {
        let (a, b) = (switch_of(x), switch_of(y));
        let (w, h) = (count(&want, a, b), count(&have, a, b));
        if w > 0 && h > w {
            out.push(format!(
                "cable {x} <-> {y}: not expected ({a} is cabled to {b} {}, expected {})",
                times(h),
                times(w)
            ));
        } else {
            out.push(format!("cable {x} <-> {y}: not expected"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(extra: &str) -> Fabric {
        let base = "[[switch]]\nname = \"spine1\"\nlevel = 2\n[[switch]]\nname = \"spine2\"\nlevel = 2\n\
                    [[switch]]\nname = \"leaf1\"\nlevel = 1\n[[switch]]\nname = \"leaf2\"\nlevel = 1\n";
        Fabric::parse("m.toml", &format!("{base}{extra}")).unwrap()
    }

    const HOSTS: &str = "[[host]]\nname = \"n1\"\nswitch = \"leaf1\"\nport = \"1\"\n\
                         [[host]]\nname = \"n2\"\nswitch = \"leaf2\"\nport = \"1\"\n";
    const CABLES: &str = "[[cable]]\na = \"leaf1:9\"\nb = \"spine1:1\"\n[[cable]]\na = \"leaf1:10\"\nb = \"spine2:1\"\n\
                          [[cable]]\na = \"leaf2:9\"\nb = \"spine1:2\"\n[[cable]]\na = \"leaf2:10\"\nb = \"spine2:2\"\n";

    #[test]
    fn the_same_wiring_differs_in_nothing() {
        let m = map(&format!("{HOSTS}{CABLES}"));
        assert!(differences(&m, &m).is_empty());
        // a source without ports matches on switches
        let bare = map(&format!(
            "{HOSTS}[[cable]]\na = \"leaf1\"\nb = \"spine1\"\n[[cable]]\na = \"spine2\"\nb = \"leaf1\"\n\
             [[cable]]\na = \"leaf2\"\nb = \"spine1\"\n[[cable]]\na = \"leaf2\"\nb = \"spine2\"\n"
        ));
        assert_eq!(differences(&m, &bare), Vec::<String>::new());
    }

    #[test]
    fn each_kind_of_miswiring_is_one_line() {
        let want = map(&format!("{HOSTS}{CABLES}"));
        // leaf2's second uplink went to spine1 instead of spine2; n2 moved
        // to leaf1; a cable from leaf1 to spine1 doubled; n1 on port 4
        let seen = map("[[host]]\nname = \"n1\"\nswitch = \"leaf1\"\nport = \"4\"\n\
             [[host]]\nname = \"n2\"\nswitch = \"leaf1\"\nport = \"2\"\n\
             [[cable]]\na = \"leaf1:9\"\nb = \"spine1:1\"\n[[cable]]\na = \"leaf1:10\"\nb = \"spine2:1\"\n\
             [[cable]]\na = \"leaf2:9\"\nb = \"spine1:2\"\n[[cable]]\na = \"leaf2:10\"\nb = \"spine1:3\"\n\
             [[cable]]\na = \"leaf1:11\"\nb = \"spine1:4\"\n");
        assert_eq!(
            differences(&want, &seen),
            [
                "host n1: on leaf1 port 4, expected port 1",
                "host n2: under leaf1, expected under leaf2",
                "cable leaf2:10 <-> spine2:2: cabled leaf2:10 <-> spine1:3 instead",
                "cable leaf1:11 <-> spine1:4: not expected (leaf1 is cabled to spine1 twice, expected once)",
            ]
        );
        let fewer = Fabric::parse(
            "f.toml",
            "[[switch]]\nname = \"spine1\"\nlevel = 2\n[[switch]]\nname = \"leaf1\"\nlevel = 1\n\
             [[switch]]\nname = \"leaf2\"\nlevel = 1\n[[switch]]\nname = \"core\"\nlevel = 3\n\
             [[cable]]\na = \"leaf1:9\"\nb = \"spine1:1\"\n",
        )
        .unwrap();
        assert_eq!(
            differences(&want, &fewer),
            [
                "switch spine2: missing",
                "switch core: not expected",
                "host n1: missing (expected under leaf1)",
                "host n2: missing (expected under leaf2)",
                "cable leaf1:10 <-> spine2:1: missing",
                "cable leaf2:9 <-> spine1:2: missing",
                "cable leaf2:10 <-> spine2:2: missing",
            ]
        );
    }
}
