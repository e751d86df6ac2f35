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

/// The evidence of one suspect, in a line.
fn evidence(b: &Blamed, names: &Names, unit: &str) -> String {
    let mut l = format!("{} of {} pairs that may cross it slow", b.slow_through, b.through);
    if let Some(m) = b.of_median {
        let _ = write!(l, ", at {} of the median", fraction(m));
    }
    if b.failed > 0 {
        let _ = write!(l, ", {} failed", b.failed);
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
    for (i, b) in v.blamed.iter().enumerate() {
        let lead = if i == 0 { "blamed" } else { "also" };
        let _ = writeln!(o, "  {lead}: {}", suspect_name(b, v));
        let _ = writeln!(o, "    {}", evidence(b, names, &doc.metric.unit));
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
