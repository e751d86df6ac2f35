//! The fabric's verdict in words: each blamed element (or the elements
//! this map cannot tell apart) with its evidence and its re-tests alone,
//! the text summary's first section when the sweep had a map. Pure.

use crate::phrases::{fraction, Names};
use fabdiag_sweep_judge::doc::SweepDoc;
use fabdiag_sweep_judge::fabric::{Blamed, ElementKind, ElementRetestVerdict, FabricVerdict};
use std::fmt::Write;

/// "leaf2-spine1 or leaf2-spine2 (cables between switches)".
pub(crate) fn suspect_name(b: &Blamed, v: &FabricVerdict) -> String {
    let what = match (b.kind, b.elements.len()) {
        (ElementKind::Host, 1) => "the host: its NIC, or the cable to its switch".to_string(),
        (ElementKind::Host, _) => "hosts: their NICs, or the cables to their switches".to_string(),
        (ElementKind::Switch, 1) => "a switch".to_string(),
        (ElementKind::Switch, _) => "switches this map cannot tell apart".to_string(),
        (ElementKind::Cable, n) => {
            // a cable's ports, where the map gives them
            let ports: Vec<String> = b
                .elements
                .iter()
                .filter_map(|e| v.map.cables.iter().find(|c| format!("{}-{}", c.a, c.b) == *e))
                .flat_map(|c| c.ends.iter().map(|(x, y)| format!("{x} <-> {y}")))
                .collect();
            let kind = if n == 1 {
                "cable between switches"
            } else {
                "cables this map cannot tell apart"
            };
            if ports.is_empty() {
                kind.to_string()
            } else {
                format!("{kind}: {}", ports.join(", "))
            }
        }
    };
    format!("{} ({what})", b.elements.join(" or "))
}

/// The blamed switch or cable that accounts for slow node `rank`, as the
/// verdict names it ("leaf3"; "leaf2-spine1 or leaf2-spine2").
pub(crate) fn accounted_for(doc: &SweepDoc, rank: usize) -> Option<String> {
    doc.fabric
        .as_ref()?
        .blamed
        .iter()
        .find(|b| b.kind != ElementKind::Host && b.slow_nodes.contains(&rank))
        .map(|b| b.elements.join(" or "))
}

/// The evidence of one suspect, in a line.
fn evidence(b: &Blamed, names: &Names, unit: &str, flows: usize) -> String {
    let mut l = format!("{} of {} pairs that may cross it slow", b.slow_through, b.through);
    if flows > 1 {
        let _ = write!(l, " (each by its slowest of {flows} flows)");
    }
    if let Some(m) = b.of_median {
        let _ = write!(l, ", at {} of the median", fraction(m));
    }
    if b.failed > 0 {
        let _ = write!(l, ", {} failed", b.failed);
    }
    if b.lossy > 0 {
        let _ = write!(
            l,
            "; {} of its pairs lost packets on their way (their NIC counters: resent or dropped)",
            b.lossy
        );
    }
    if b.path_sensitive > 0 {
        let _ = write!(
            l,
            "; {} of its pairs path-sensitive (some flows slow, some clean: a path through it, not their hosts)",
            b.path_sensitive
        );
    }
    if !b.slow_nodes.is_empty() {
        let nodes: Vec<String> = b.slow_nodes.iter().map(|&r| names.of(r).into_owned()).collect();
        let _ = write!(l, "; accounts for the slow nodes {}", nodes.join(", "));
    }
    if let Some(r) = &b.retest {
        let fig = |v: Option<f64>| v.map_or_else(|| "failed".to_string(), |v| format!("{v:.2} {unit}"));
        let _ = write!(
            l,
            "; re-tested alone: {} <-> {} through it {}",
            names.of(r.crossing.0),
            names.of(r.crossing.1),
            fig(r.crossing_alone)
        );
        if let Some((a, c)) = r.avoiding {
            let _ = write!(
                l,
                ", {} <-> {} around it {}",
                names.of(a),
                names.of(c),
                fig(r.avoiding_alone)
            );
        }
        let verdict = match r.verdict {
            ElementRetestVerdict::Confirmed => "confirmed",
            ElementRetestVerdict::Cleared => "cleared (slow only under the sweep's load)",
            ElementRetestVerdict::NotTold => "not told apart (around it was slow too)",
            ElementRetestVerdict::NotRun => "not confirmed (a re-test did not run)",
        };
        let _ = write!(l, ": {verdict}");
    }
    l
}

/// With `--flows`: the pairs whose flows split, in a line (and the
/// first of them), whether or not there is a map.
pub(crate) fn path_sensitive_text(o: &mut String, doc: &SweepDoc, names: &Names) {
    let p = &doc.path_sensitive;
    if p.is_empty() {
        return;
    }
    let listed: Vec<String> = p
        .iter()
        .take(5)
        .map(|&(a, b)| format!("{} <-> {}", names.of(a), names.of(b)))
        .collect();
    let more = p.len().saturating_sub(5);
    let _ = writeln!(
        o,
        "path-sensitive pairs (some flows slow, some clean: a slow path, not a slow host): {}: {}{}",
        p.len(),
        listed.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    );
}

/// The fabric's section of the text summary: nothing without a map.
pub(crate) fn fabric_text(o: &mut String, doc: &SweepDoc, names: &Names) {
    let Some(v) = &doc.fabric else { return };
    let m = &v.map;
    let _ = writeln!(
        o,
        "fabric: map {} ({} switches, {} hosts, {} switch-to-switch links)",
        v.source,
        m.switches.len(),
        m.hosts.len(),
        m.cables.len()
    );
    if v.blamed.is_empty() {
        let _ = writeln!(o, "  no element of the fabric blamed");
    }
    let mut named = 0;
    for b in &v.blamed {
        // a suspect its re-test alone cleared is said as such, not blamed
        let cleared = b
            .retest
            .as_ref()
            .is_some_and(|r| r.verdict == ElementRetestVerdict::Cleared);
        let lead = match (cleared, named) {
            (true, _) => "suspected, cleared alone",
            (false, 0) => "blamed",
            (false, _) => "also",
        };
        named += usize::from(!cleared);
        let _ = writeln!(o, "  {lead}: {}", suspect_name(b, v));
        let _ = writeln!(o, "    {}", evidence(b, names, &doc.metric.unit, v.flows));
    }
    let _ = writeln!(
        o,
        "  cleared: {} elements crossed for sure by clean pairs{}",
        v.cleared.len(),
        if v.unexplained > 0 {
            format!("; {} slow pairs no element explains", v.unexplained)
        } else {
            String::new()
        }
    );
    if !v.off_map.is_empty() {
        let listed: Vec<String> = v.off_map.iter().take(10).map(|&r| names.of(r).into_owned()).collect();
        let more = v.off_map.len().saturating_sub(10);
        let _ = writeln!(
            o,
            "  not on the map: {}{} (their pairs are judged as pairs only)",
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
}

/// The most switches the page draws; a larger fabric is listed only.
const MOST_DRAWN: usize = 400;

/// How an element is coloured: blamed, cleared by clean pairs, or
/// neither (nothing told).
struct Colours<'a> {
    blamed: std::collections::HashSet<&'a str>,
    cleared: std::collections::HashSet<&'a str>,
}

impl<'a> Colours<'a> {
    fn of(v: &'a FabricVerdict) -> Colours<'a> {
        Colours {
            blamed: v
                .blamed
                .iter()
                .flat_map(|b| b.elements.iter().map(String::as_str))
                .collect(),
            cleared: v.cleared.iter().map(String::as_str).collect(),
        }
    }

    fn of_element(&self, name: &str) -> &'static str {
        if self.blamed.contains(name) {
            "#d62728"
        } else if self.cleared.contains(name) {
            "#2ca02c"
        } else {
            "#9e9e9e"
        }
    }
}

/// The fabric drawn (inline SVG): each level of switches a row, the
/// highest on top, a dragonfly's routers by group; each host switch's
/// hosts a row of small boxes under it (how many, past 32); the cables
/// between switches as lines; each coloured by its verdict. None for a
/// fabric too large to draw.
pub(crate) fn fabric_svg(v: &FabricVerdict, escape: &dyn Fn(&str) -> String) -> Option<String> {
    let m = &v.map;
    if m.switches.is_empty() || m.switches.len() > MOST_DRAWN {
        return None;
    }
    let colours = Colours::of(v);
    let mut levels: std::collections::BTreeMap<u32, Vec<&fabdiag_sweep_judge::fabric::MapSwitch>> = Default::default();
    for s in &m.switches {
        levels.entry(s.level).or_default().push(s);
    }
    for row in levels.values_mut() {
        row.sort_by(|a, b| (&a.group, &a.name).cmp(&(&b.group, &b.name)));
    }
    let widest = levels.values().map(Vec::len).max().unwrap_or(1);
    let (cell, row_h, top) = (96.0, 110.0, 20.0);
    let width = (widest as f64 * cell).max(320.0);
    let rows = levels.len() as f64;
    // the last row's hosts end 62 below it; the legend under them
    let legend = top + (rows - 1.0) * row_h + 20.0 + 80.0;
    let height = legend + 12.0;
    let mut at: std::collections::HashMap<&str, (f64, f64)> = Default::default();
    for (i, (_, row)) in levels.iter().rev().enumerate() {
        let step = width / row.len() as f64;
        for (k, s) in row.iter().enumerate() {
            at.insert(&s.name, (step * (k as f64 + 0.5), top + i as f64 * row_h + 20.0));
        }
    }
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\"the fabric, each element coloured by its verdict\">\n"
    );
    for c in &m.cables {
        let (Some(a), Some(b)) = (at.get(c.a.as_str()), at.get(c.b.as_str())) else {
            continue;
        };
        let name = format!("{}-{}", c.a, c.b);
        let w = if colours.of_element(&name) == "#d62728" { 4 } else { 2 };
        let _ = writeln!(
            o,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"{w}\"><title>{}</title></line>",
            a.0, a.1, b.0, b.1, colours.of_element(&name), escape(&name)
        );
    }
    let mut under: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for h in &m.hosts {
        under.entry(&h.switch).or_default().push(&h.name);
    }
    for s in &m.switches {
        let Some(&(x, y)) = at.get(s.name.as_str()) else {
            continue;
        };
        let _ = writeln!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"80\" height=\"22\" rx=\"4\" fill=\"{}\"><title>{}</title></rect><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"white\">{}</text>",
            x - 40.0, y - 11.0, colours.of_element(&s.name), escape(&s.name), y + 4.0, escape(&s.name)
        );
        let Some(hosts) = under.get(s.name.as_str()) else {
            continue;
        };
        if hosts.len() > 32 {
            let bad = hosts.iter().filter(|h| colours.of_element(h) == "#d62728").count();
            let _ = writeln!(
                o,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} hosts{}</text>",
                y + 40.0,
                hosts.len(),
                if bad > 0 {
                    format!(", {bad} blamed")
                } else {
                    String::new()
                }
            );
            continue;
        }
        // up to 8 a row, in rows of small boxes under the switch
        for (k, h) in hosts.iter().enumerate() {
            let (hx, hy) = (x - 40.0 + (k % 8) as f64 * 10.0, y + 22.0 + (k / 8) as f64 * 10.0);
            let _ = writeln!(
                o,
                "<rect x=\"{hx:.1}\" y=\"{hy:.1}\" width=\"8\" height=\"8\" fill=\"{}\"><title>{}</title></rect>",
                colours.of_element(h),
                escape(h)
            );
        }
    }
    let _ = writeln!(
        o,
        "<text x=\"10\" y=\"{legend:.0}\"><tspan fill=\"#d62728\">■ blamed</tspan>  <tspan fill=\"#2ca02c\">■ cleared (clean pairs crossed it for sure)</tspan>  <tspan fill=\"#9e9e9e\">■ not told</tspan></text>\n</svg>"
    );
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_sweep_judge::fixtures::{inputs, sweep_with};

    /// A sweep of a fat tree of 4 leaves of 2 hosts under one spine, every
    /// pair through leaf2 (node2, node3; each other too) at a quarter of
    /// the others. (Were node2 and node3 clean between themselves, the
    /// leaf's uplink would be blamed instead: its one cable to the spine.)
    fn slow_leaf_doc() -> SweepDoc {
        let f = fabdiag_topology::generate::fat_tree(4, 1, 2).unwrap();
        let slow: Vec<((usize, usize), f64)> = (0..8)
            .flat_map(|a| (a + 1..8).map(move |b| (a, b)))
            .filter(|&(a, b)| a / 2 == 1 || b / 2 == 1)
            .map(|k| (k, 25.0))
            .collect();
        let mut s = sweep_with(8, &slow, &[], &[]);
        for x in &mut s.nodes {
            x.host = Some(format!("node{}", x.rank));
        }
        fabdiag_sweep_judge::build(fabdiag_sweep_judge::Inputs {
            fabric: Some((&f, "fat-tree.toml")),
            ..inputs(s, None)
        })
    }

    #[test]
    fn a_slow_leaf_is_said_first_and_drawn_red() {
        let doc = slow_leaf_doc();
        let text = crate::text(&doc);
        let fabric = text
            .find("fabric: map fat-tree.toml (5 switches, 8 hosts, 4 switch-to-switch links)")
            .unwrap();
        assert!(fabric < text.find("slow nodes").unwrap(), "{text}");
        assert!(text.contains("  blamed: leaf2 (a switch)\n"), "{text}");
        assert!(
            text.contains("accounts for the slow nodes rank 2 (node2), rank 3 (node3)"),
            "{text}"
        );
        assert!(
            text.contains("hosts to look at: none; fabric to look at: leaf2\n"),
            "{text}"
        );
        let svg = fabric_svg(doc.fabric.as_ref().unwrap(), &crate::html::escape).unwrap();
        assert!(svg.contains("fill=\"#d62728\"><title>leaf2</title>"), "{svg}");
        assert!(svg.contains("fill=\"#2ca02c\"><title>leaf1</title>"), "{svg}");
        let page = crate::html::page(&doc, &crate::picture::Pictures::default());
        assert!(
            page.contains("<h2>Fabric</h2>") && page.contains("<svg"),
            "the page draws the fabric"
        );
    }

    #[test]
    fn without_a_map_nothing_is_said_of_the_fabric() {
        let doc = fabdiag_sweep_judge::fixtures::doc_with(4, &[((0, 1), 10.0)], &[], &[]);
        assert!(!crate::text(&doc).contains("fabric: map"));
        assert!(!crate::html::page(&doc, &crate::picture::Pictures::default()).contains("<h2>Fabric</h2>"));
    }
}
