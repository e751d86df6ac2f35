//! The crate map, held: every fabdiag crate sits in one tier and depends
//! only on crates of lower tiers (docs/development.md draws the map). A
//! crate added without a tier, or a dependency that reaches up or across,
//! fails here with the crate and the dependency named.

use std::collections::BTreeMap;
use std::path::Path;

/// Lower tiers first. A crate may depend on any crate of a lower tier.
const TIERS: &[(&str, &[&str])] = &[
    (
        "system leaves",
        &["fabric", "clock", "gpu", "counters", "timebox", "files"],
    ),
    (
        "pure parts",
        &["engine", "proto", "sweep-plan", "exposition", "topology"],
    ),
    ("vocabulary", &["model"]),
    ("judging", &["sweep-judge"]),
    ("renderers", &["report", "sweep-report", "health", "monitor"]),
    ("runtime", &["session", "host-traffic"]),
    ("front", &["options", "sweep"]),
    ("binary", &["cli"]),
];

/// Crates outside the map: test support, a dev-dependency only.
const OUTSIDE: &[&str] = &["testkit"];

fn tier_of(name: &str) -> Option<usize> {
    TIERS.iter().position(|(_, crates)| crates.contains(&name))
}

/// Each workspace crate's fabdiag dependencies (not dev-dependencies),
/// read from its Cargo.toml.
fn crate_deps(crates: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(crates).expect("the crates folder") {
        let dir = entry.expect("an entry").path();
        let Ok(toml) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = dir.file_name().expect("a name").to_string_lossy().into_owned();
        let mut section = String::new();
        let mut deps = Vec::new();
        for line in toml.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section == "[dependencies]" {
                if let Some(dep) = line.strip_prefix("fabdiag-") {
                    let dep = dep.split([' ', '=', '.']).next().unwrap_or_default();
                    deps.push(dep.to_string());
                }
            }
        }
        out.insert(name, deps);
    }
    out
}

#[test]
fn every_crate_depends_only_on_lower_tiers() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let deps = crate_deps(&crates);
    assert!(
        deps.len() >= TIERS.iter().map(|(_, c)| c.len()).sum::<usize>(),
        "{deps:?}"
    );
    let mut wrong = Vec::new();
    for (name, uses) in &deps {
        if OUTSIDE.contains(&name.as_str()) {
            continue;
        }
        let Some(tier) = tier_of(name) else {
            wrong.push(format!(
                "{name} is in no tier (add it to TIERS and to docs/development.md)"
            ));
            continue;
        };
        for dep in uses {
            match tier_of(dep) {
                Some(t) if t < tier => {}
                Some(t) => wrong.push(format!(
                    "{name} ({}) depends on {dep} ({}): only lower tiers may be used",
                    TIERS[tier].0, TIERS[t].0
                )),
                None => wrong.push(format!("{name} depends on {dep}, which is in no tier")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
