//! The chaos sweeps' invariants on what a run left (rank 0's report, the
//! records in --output, the exit code), each breach a line starting with
//! the invariant's number (mod.rs lists them). Runs nothing.

use super::NODES;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// What a report says of one pair.
#[derive(Debug, PartialEq)]
pub(super) enum Said {
    Measured(f64),
    Failed,
    Untested,
}

/// Invariant 3 on a report: each pair of the eight ranks once, in exactly
/// one state, the failed and untested ones with a reason; and the
/// verdict's counts agree.
pub(super) fn accounted(doc: &Value, v: &mut Vec<String>) -> HashMap<(u64, u64), Said> {
    let mut seen = HashMap::new();
    for p in doc["pairs"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let (a, b) = (p["a"].as_u64().unwrap_or(99), p["b"].as_u64().unwrap_or(99));
        let value = p["value"].as_f64();
        let error = p["error"].as_str().unwrap_or_default();
        let untested = p["untested"].as_bool().unwrap_or(false);
        let said = match (value, error.is_empty(), untested) {
            (Some(x), true, false) if x.is_finite() && x > 0.0 => Said::Measured(x),
            (None, false, false) => Said::Failed,
            (None, false, true) => Said::Untested,
            _ => {
                v.push(format!("3: pair {a}-{b} is in no one state: {p}"));
                continue;
            }
        };
        if a >= b || b >= NODES as u64 || seen.insert((a, b), said).is_some() {
            v.push(format!("3: pair {a}-{b} is out of place or twice"));
        }
    }
    if seen.len() != NODES * (NODES - 1) / 2 {
        v.push(format!(
            "3: {} pairs accounted for, not {}",
            seen.len(),
            NODES * (NODES - 1) / 2
        ));
    }
    let count = |s: fn(&Said) -> bool| seen.values().filter(|x| s(x)).count() as u64;
    let failed = count(|s| *s == Said::Failed);
    let untested = count(|s| *s == Said::Untested);
    if doc["verdict"]["failed_pairs"] != failed || doc["verdict"]["untested_pairs"] != untested {
        v.push(format!(
            "5: the verdict counts {} failed and {} untested; the pairs {failed} and {untested}",
            doc["verdict"]["failed_pairs"], doc["verdict"]["untested_pairs"]
        ));
    }
    seen
}

/// The first measured schedule record of each pair in `out`/pairs.jsonl;
/// a line that is not a record is a violation unless it is a last line a
/// kill or a full disk cut short.
pub(super) fn recorded(out: &str, torn_allowed: bool, v: &mut Vec<String>) -> HashMap<(u64, u64), f64> {
    let text = std::fs::read_to_string(format!("{out}/pairs.jsonl")).unwrap_or_default();
    let mut first = HashMap::new();
    let whole = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Ok(r) = serde_json::from_str::<Value>(l) else {
            if !(torn_allowed && i + 1 == lines.len() && !whole) {
                v.push(format!("4: pairs.jsonl line {} is not a record: {l}", i + 1));
            }
            continue;
        };
        if let (Some(a), Some(b), Some(x), false) = (
            r["a"].as_u64(),
            r["b"].as_u64(),
            r["value"].as_f64(),
            r["round"].is_null(),
        ) {
            first.entry((a, b)).or_insert(x);
        }
    }
    first
}

/// Invariant 4: the report's measured pairs and the records agree, both
/// ways (with a full disk, records may only be missing).
pub(super) fn nothing_invented_or_lost(
    said: &HashMap<(u64, u64), Said>,
    rec: &HashMap<(u64, u64), f64>,
    full_disk: bool,
    v: &mut Vec<String>,
) {
    for (k, s) in said {
        if let Said::Measured(x) = s {
            match rec.get(k) {
                Some(r) if r == x => {}
                None if full_disk => {}
                other => v.push(format!(
                    "4: pair {}-{} reported at {x}, recorded as {other:?}",
                    k.0, k.1
                )),
            }
        }
    }
    for (k, r) in rec {
        if said.get(k) != Some(&Said::Measured(*r)) {
            v.push(format!(
                "4: pair {}-{} recorded at {r} is reported as {:?}",
                k.0,
                k.1,
                said.get(k)
            ));
        }
    }
}

/// Invariant 5: rank 0's exit code against its report.
pub(super) fn exit_agrees(o: &Output, doc: &Value, said: &HashMap<(u64, u64), Said>, wrote: bool, v: &mut Vec<String>) {
    let lost = doc["verdict"]["lost_nodes"].as_array().is_some_and(|l| !l.is_empty());
    let bad = lost || said.values().any(|s| !matches!(s, Said::Measured(_)));
    let slow =
        doc["verdict"]["slow_links"].as_u64().unwrap_or(0) + doc["verdict"]["slow_nodes"].as_u64().unwrap_or(0) > 0;
    let want: &[i32] = match (bad || !wrote, slow) {
        (true, _) => &[2],
        (false, true) => &[5],
        (false, false) => &[0],
    };
    if !o.code.is_some_and(|c| want.contains(&c)) {
        v.push(format!(
            "5: rank 0 exited {:?}, its report says {want:?}: {}",
            o.code,
            o.stderr.trim()
        ));
    }
}

/// "exit 2: 20 measured, 0 failed, 8 untested", for the campaign's lines.
pub(super) fn tally(o: &Output, said: &HashMap<(u64, u64), Said>) -> String {
    let n = |f: fn(&Said) -> bool| said.values().filter(|s| f(s)).count();
    format!(
        "exit {}: {} measured, {} failed, {} untested",
        o.code.map_or("by signal".to_string(), |c| c.to_string()),
        n(|s| matches!(s, Said::Measured(_))),
        n(|s| *s == Said::Failed),
        n(|s| *s == Said::Untested)
    )
}

/// The checks themselves, on made-up reports: each breach they exist for
/// is named, and a sound report passes.
#[test]
fn the_checks_catch_what_they_name() {
    let pair =
        |a: u64, b: u64| serde_json::json!({"a": a, "b": b, "value": 100.0 + (a * 8 + b) as f64, "untested": false});
    let all: Vec<Value> = (0..NODES as u64)
        .flat_map(|a| (a + 1..NODES as u64).map(move |b| (a, b)))
        .map(|(a, b)| pair(a, b))
        .collect();
    let doc = |pairs: Vec<Value>, failed: u64, untested: u64| serde_json::json!({"pairs": pairs, "verdict": {"failed_pairs": failed, "untested_pairs": untested, "lost_nodes": [], "slow_links": 0, "slow_nodes": 0}});
    let records: HashMap<(u64, u64), f64> = all
        .iter()
        .map(|p| {
            (
                (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap()),
                p["value"].as_f64().unwrap(),
            )
        })
        .collect();
    let out = |code: i32| Output {
        code: Some(code),
        signal: None,
        stdout: String::new(),
        stderr: String::new(),
        elapsed: Duration::ZERO,
    };
    let check = |d: &Value, rec: &HashMap<(u64, u64), f64>, code: i32| {
        let mut v = Vec::new();
        let said = accounted(d, &mut v);
        nothing_invented_or_lost(&said, rec, false, &mut v);
        exit_agrees(&out(code), d, &said, true, &mut v);
        v
    };
    assert_eq!(check(&doc(all.clone(), 0, 0), &records, 0), Vec::<String>::new());
    let breach = |v: Vec<String>, what: &str| assert!(v.iter().any(|x| x.starts_with(what)), "{what} not named: {v:?}");
    // a pair twice, a pair missing
    let mut twice = all.clone();
    twice[1] = all[0].clone();
    breach(check(&doc(twice, 0, 0), &records, 0), "3:");
    // a pair in two states at once
    let mut both = all.clone();
    both[3]["error"] = "lost".into();
    breach(check(&doc(both, 0, 0), &records, 0), "3:");
    // a measured figure that was never recorded, and one recorded but lost
    let mut fewer = records.clone();
    fewer.remove(&(0, 1));
    breach(check(&doc(all.clone(), 0, 0), &fewer, 0), "4:");
    let mut lost = all.clone();
    lost[0] = serde_json::json!({"a": 0, "b": 1, "untested": true, "error": "rank 1 lost"});
    let v = check(&doc(lost.clone(), 0, 1), &records, 2);
    breach(v, "4:");
    // counts that disagree with the pairs, and an exit code that does
    breach(check(&doc(lost, 0, 0), &fewer, 2), "5:");
    breach(check(&doc(all, 0, 0), &records, 2), "5:");
    // a torn line in the middle of the records is damage, at the end it is a kill's
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    std::fs::write(
        format!("{d}/pairs.jsonl"),
        "{\"a\":0,\"b\":1,\"round\":0,\"value\":1.0}\n{\"a\":0,\n{\"a\":0,\"b\":2,\"round\":0,\"value\":2.0}\n{\"a\"",
    )
    .unwrap();
    let mut v = Vec::new();
    let rec = recorded(d, true, &mut v);
    assert_eq!(rec.len(), 2);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].starts_with("4: pairs.jsonl line 2"), "{v:?}");
}
