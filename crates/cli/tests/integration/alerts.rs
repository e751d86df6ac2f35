//! The Prometheus rules fabdiag ships and the queries its guide shows, as
//! Debian's Prometheus reads them: the alerting rules load and pass their
//! own unit tests (each alert fires on the series that should raise it and
//! not on the others), and every PromQL block of docs/ parses.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// promtool run with `args`; its output when it refuses.
fn promtool(args: &[&str], dir: &Path) -> Result<(), String> {
    let o = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool (scripts/install-deps.sh installs Debian's prometheus)");
    match o.status.success() {
        true => Ok(()),
        false => Err(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
    }
}

#[test]
fn the_shipped_alerting_rules_load_and_pass_their_unit_tests() {
    let dir = repo().join("contrib/prometheus");
    promtool(&["check", "rules", "fabdiag-alerts.yml"], &dir).unwrap_or_else(|e| panic!("{e}"));
    promtool(&["test", "rules", "fabdiag-alerts.test.yml"], &dir).unwrap_or_else(|e| panic!("{e}"));
}

/// The expressions of a ```promql block: a line at the left margin starts
/// one, an indented line continues it, `#` lines are comments.
fn expressions(block: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in block.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match out.last_mut() {
            Some(e) if line.starts_with(char::is_whitespace) => {
                e.push(' ');
                e.push_str(t);
            }
            _ => out.push(t.to_string()),
        }
    }
    out
}

/// Every ```promql block of the guide, (page, expression).
fn guide_queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let docs = repo().join("docs");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&docs)
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).expect("a page");
        let name = page
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for block in text.split("```promql\n").skip(1) {
            let body = block.split("```").next().unwrap_or_default();
            out.extend(expressions(body).into_iter().map(|e| (name.clone(), e)));
        }
    }
    out
}

#[test]
fn every_promql_query_in_the_guide_parses_in_prometheus() {
    let queries = guide_queries();
    assert!(queries.len() >= 10, "{queries:?}");
    let mut rules = String::from("groups:\n  - name: guide\n    rules:\n");
    for (i, (_, q)) in queries.iter().enumerate() {
        rules.push_str(&format!(
            "      - record: guide:query_{i}\n        expr: |-\n          {q}\n"
        ));
    }
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::write(dir.path().join("guide.yml"), &rules).expect("written");
    if let Err(e) = promtool(&["check", "rules", "guide.yml"], dir.path()) {
        // name the page and the query behind each refused rule
        let named: Vec<String> = queries
            .iter()
            .enumerate()
            .filter(|(i, _)| e.contains(&format!("\"guide:query_{i}\"")))
            .map(|(_, (page, q))| format!("{page}: {q}"))
            .collect();
        panic!("promtool refused the guide's queries:\n{e}\n{}", named.join("\n"));
    }
}

#[test]
fn a_block_is_split_into_its_expressions() {
    let b = "# a\nx > 1\n\n# b\ny\n  > on(peer) 2 * z\n";
    assert_eq!(expressions(b), vec!["x > 1", "y > on(peer) 2 * z"]);
}
