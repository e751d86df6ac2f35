//! A finished sweep read back from its document (`--report`): taken apart
//! into what its report was made from, so the report can be made again
//! with other rules, thresholds or a baseline, without running a pair
//! test. Also where a sweep's document lies (a file, or an `--output`
//! folder's `sweep.json`), for `--baseline` too. Reads; never writes.

use crate::coordinator::{Coordinated, Node, PairRecord};
use crate::report::{Limits, Metric, SweepDoc, SCHEMA};
use crate::SweepError;
use std::path::{Path, PathBuf};

/// `path` itself, or its `sweep.json` when it is a folder (a sweep's
/// `--output`).
pub fn document_at(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("sweep.json")
    } else {
        path.to_path_buf()
    }
}

/// The `meta.json` of an `--output` folder: the sweep's size, rails, pair
/// test and options, written before its first round. `bad` makes the
/// caller's error from a reason.
pub fn meta(dir: &Path, bad: impl Fn(String) -> SweepError) -> Result<serde_json::Value, SweepError> {
    std::fs::read_to_string(dir.join("meta.json"))
        .map_err(|e| bad(format!("meta.json: {e}")))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| bad(format!("meta.json: {e}"))))
}

/// Every record in an `--output` folder's `pairs.jsonl` of ranks below
/// `size`, in the order written (pairs and re-tests as they arrived), read a
/// line at a time (50 million at 10,000 ranks). A line cut short by a
/// crash is skipped (that pair has no result); no file is no result yet;
/// a file that cannot be read is an error, never "nothing ran".
pub fn records(dir: &Path, size: usize, bad: impl Fn(String) -> SweepError) -> Result<Vec<PairRecord>, SweepError> {
    use std::io::BufRead;
    let file = match std::fs::File::open(dir.join("pairs.jsonl")) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(bad(format!("pairs.jsonl: {e}"))),
    };
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| bad(format!("pairs.jsonl: {e}")))?;
        if let Ok(rec) = serde_json::from_slice::<PairRecord>(&line) {
            if rec.a < size && rec.b < size {
                out.push(rec);
            }
        }
    }
    Ok(out)
}

/// Whether `path` is an `--output` folder whose rank 0 ended before it
/// wrote its report: a meta.json and no sweep.json.
pub fn without_report(path: &Path) -> bool {
    path.is_dir() && !path.join("sweep.json").exists() && path.join("meta.json").exists()
}

/// What a finished sweep's report was made from.
#[derive(Debug)]
pub struct Finished {
    /// The file read.
    pub file: PathBuf,
    pub sweep: Coordinated,
    pub metric: Metric,
    pub limits: Limits,
    pub options: serde_json::Value,
    pub rules: crate::analysis::Rules,
    /// The fabdiag that ran the sweep ("unknown" for a folder from before
    /// meta.json kept it).
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
}

/// The finished sweep whose document is at `path` (see `document_at`);
/// an `--output` folder with no document (rank 0 ended before it wrote its
/// report) is made up from what it recorded as the sweep ran.
pub fn read(path: &Path) -> Result<Finished, SweepError> {
    let file = document_at(path);
    if without_report(path) {
        return recorded(path);
    }
    if path.is_dir() && !file.exists() {
        return Err(SweepError::Report {
            path: path.display().to_string(),
            reason: "no sweep.json or meta.json in it: not a sweep's --output folder".into(),
        });
    }
    let bad = |reason: String| SweepError::Report {
        path: file.display().to_string(),
        reason,
    };
    let open = || {
        std::fs::File::open(&file)
            .map(std::io::BufReader::new)
            .map_err(|e| bad(e.to_string()))
    };
    // straight into the document (a value tree first would take several
    // times the file's size); when that fails, the schema says whether it
    // is another document rather than a broken one
    let doc = match serde_json::from_reader::<_, SweepDoc>(open()?) {
        Ok(doc) => doc,
        Err(e) => {
            #[derive(serde::Deserialize)]
            struct Head {
                schema: Option<String>,
            }
            let head = serde_json::from_reader::<_, Head>(open()?).ok().and_then(|h| h.schema);
            return Err(bad(match head {
                Some(s) if s != SCHEMA => format!("its schema is '{s}'; this fabdiag reads '{SCHEMA}'"),
                Some(_) => format!("not a whole fabdiag sweep's document ({e})"),
                None => format!("not a fabdiag sweep's JSON document ({e})"),
            }));
        }
    };
    if doc.schema != SCHEMA {
        return Err(bad(format!(
            "its schema is '{}'; this fabdiag reads '{SCHEMA}'",
            doc.schema
        )));
    }
    finished(doc, file)
}

/// `doc` taken apart again: the coordinator's record of the sweep (its
/// nodes, pairs, re-tests and steps) and what the report added.
fn finished(doc: SweepDoc, file: PathBuf) -> Result<Finished, SweepError> {
    let bad = |reason: String| SweepError::Report {
        path: file.display().to_string(),
        reason,
    };
    let time =
        |what: &str, t: &str| humantime::parse_rfc3339(t).map_err(|e| bad(format!("its {what} time '{t}': {e}")));
    let (started, ended) = (time("start", &doc.started)?, time("end", &doc.ended)?);
    if let Some((i, x)) = doc.nodes.iter().enumerate().find(|(i, x)| x.node.rank != *i) {
        return Err(bad(format!("its node {i} says it is rank {}", x.node.rank)));
    }
    let n = doc.nodes.len();
    if n > crate::schedule::MAX_RANKS {
        return Err(bad(format!(
            "its {n} ranks are more than a sweep takes ({})",
            crate::schedule::MAX_RANKS
        )));
    }
    let pairs = doc.pairs.iter().map(|p| (p.a, p.b));
    if let Some((a, b)) = pairs
        .chain(doc.retests.iter().map(|r| (r.a, r.b)))
        .find(|&(a, b)| a >= n || b >= n)
    {
        return Err(bad(format!("its pair {a}-{b} names a rank it does not have")));
    }
    // a re-test as the coordinator recorded it: the pair, its figure alone
    // or its error (who drove it is not in the document, nor needed)
    let retests = doc
        .retests
        .iter()
        .map(|r| PairRecord {
            value: r.alone,
            error: r.error.as_deref().map(Into::into),
            ..PairRecord::planned(
                &crate::schedule::Pair {
                    client: r.a,
                    server: r.b,
                },
                None,
            )
        })
        .collect();
    Ok(Finished {
        sweep: Coordinated {
            nodes: doc.nodes.into_iter().map(|x| x.node).collect(),
            rails: doc.schedule.rails,
            pairs: doc.pairs,
            retests,
            steps: doc.overhead.steps,
            join_s: doc.overhead.join_s,
            started,
            ended,
            stopped: doc.stopped,
        },
        metric: doc.metric,
        limits: doc.limits,
        options: doc.options,
        rules: doc.analysis.rules,
        fabdiag_version: doc.fabdiag_version,
        libfabric_version: doc.libfabric_version,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{build_with, ci_with_retests, sweep_with};

    fn file(tag: &str, body: &[u8]) -> PathBuf {
        let p = std::env::temp_dir().join(format!("fabdiag-reread-{tag}-{}.json", std::process::id()));
        std::fs::write(&p, body).expect("a temporary file");
        p
    }

    /// A document read back and made again with the same rules is the
    /// same document, to the last digit: nodes lost and missing, pairs
    /// failed and untested, re-tests, steps and times.
    #[test]
    fn a_document_made_again_with_its_own_rules_is_the_same() {
        let mut s = sweep_with(6, &[((1, 4), 20.0), ((0, 2), 100.000_000_000_000_1)], &[(2, 3)], &[5]);
        s.steps.push(crate::coordinator::StepRecord {
            kind: crate::coordinator::StepKind::Round,
            index: 0,
            pairs: 3,
            wall_s: 0.1 + 0.2,
            measure_s: 1.0 / 3.0,
            overhead_s: 0.000_161_422_000_000_000_04,
            coordinator_busy_s: 2e-7,
        });
        s.stopped = Some("SIGTERM".into());
        let nothing_measured = sweep_with(3, &[], &[(0, 1), (0, 2), (1, 2)], &[]);
        let docs = [
            build_with(s, None),
            ci_with_retests(&[((0, 6), Some(45.0)), ((1, 4), None)]),
            build_with(nothing_measured, None),
            build_with(sweep_with(4, &[], &[], &[1, 2, 3]), None),
        ];
        for doc in docs {
            let p = file("same", &serde_json::to_vec(&doc).expect("serializes"));
            let f = read(&p);
            let _ = std::fs::remove_file(&p);
            let f = f.unwrap_or_else(|e| panic!("{e}: {}", serde_json::to_string(&doc).unwrap_or_default()));
            assert_eq!(
                (f.metric.clone(), f.limits, f.rules),
                (doc.metric.clone(), doc.limits, doc.analysis.rules)
            );
            assert_eq!(build_with(f.sweep, None), doc);
        }
    }

    #[test]
    fn what_is_not_a_finished_sweep_is_said_in_one_line() {
        let say = |tag: &str, body: &str| {
            let p = file(tag, body.as_bytes());
            let e = read(&p).err().map(|e| e.to_string()).unwrap_or_default();
            let _ = std::fs::remove_file(&p);
            assert!(!e.contains('\n'), "{e}");
            e.replace(&p.display().to_string(), "F")
        };
        assert!(say("text", "hello").starts_with("--report F: not a fabdiag sweep's JSON document ("));
        assert_eq!(
            say("other", "{\"schema\": \"fabdiag-traffic/1\", \"x\": 1}"),
            "--report F: its schema is 'fabdiag-traffic/1'; this fabdiag reads 'fabdiag-sweep/1'"
        );
        assert!(say("part", "{\"schema\": \"fabdiag-sweep/1\"}")
            .starts_with("--report F: not a whole fabdiag sweep's document (missing field"));
        let mut doc = serde_json::to_value(crate::report::tests::doc_with(3, &[], &[], &[])).expect("serializes");
        doc["pairs"][0]["b"] = 7.into();
        assert_eq!(
            say("rank", &doc.to_string()),
            "--report F: its pair 0-7 names a rank it does not have"
        );
        let mut doc = serde_json::to_value(ci_with_retests(&[((0, 6), Some(45.0))])).expect("serializes");
        doc["retests"][0]["b"] = 99.into();
        assert_eq!(
            say("retest", &doc.to_string()),
            "--report F: its pair 0-99 names a rank it does not have"
        );
        let missing = read(Path::new("/nonexistent/fabdiag")).err().map(|e| e.to_string());
        assert_eq!(
            missing.as_deref(),
            Some("--report /nonexistent/fabdiag: No such file or directory (os error 2)")
        );
    }
}

/// Why a pair the schedule has has no record in a folder's pairs.jsonl.
pub const NOT_RECORDED: &str = "rank 0 ending before its report (this report is made from pairs.jsonl)";

/// The sweep an `--output` folder recorded as it ran, for a report when
/// rank 0 ended without one (killed, crashed, its node lost): `meta.json`
/// (the test and options), `nodes.json` (who joined) and `pairs.jsonl`
/// (every pair and re-test as it arrived). A pair with no record there is
/// not tested, and the sweep is marked stopped.
fn recorded(dir: &Path) -> Result<Finished, SweepError> {
    let bad = |reason: String| SweepError::Report {
        path: dir.display().to_string(),
        reason: format!("no sweep.json, and {reason}"),
    };
    let meta = meta(dir, bad)?;
    let size = meta["size"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("meta.json gives no number of ranks".into()))?;
    let rails = meta["rails"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(1);
    let spec = fabdiag_session::TestSpec::from_wire(meta["test"].clone())
        .map_err(|e| bad(format!("meta.json's test: {e}")))?;
    let schedule = crate::schedule::Schedule::on_rails(size, rails).map_err(|e| bad(format!("meta.json: {e}")))?;
    let options = match meta.get("options") {
        Some(o) if o.is_object() => o.clone(),
        // (a folder from before the options were kept there)
        _ => serde_json::json!({ "tool": spec.tool.subcommand(), "rails": rails, "test": meta["test"] }),
    };
    let nodes = match std::fs::read(dir.join("nodes.json")) {
        Ok(body) => {
            let nodes: Vec<Node> = serde_json::from_slice(&body).map_err(|e| bad(format!("nodes.json: {e}")))?;
            if nodes.len() != size || nodes.iter().enumerate().any(|(i, x)| x.rank != i) {
                return Err(bad(format!("nodes.json does not hold ranks 0 to {}", size - 1)));
            }
            nodes
        }
        // (rank 0 ended during the join, or a folder from before the
        // ranks were kept there): ranks by number only
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0..size)
            .map(|rank| Node {
                status: crate::coordinator::NodeStatus::Ok,
                ..Node::awaited(rank)
            })
            .collect(),
        Err(e) => return Err(bad(format!("nodes.json: {e}"))),
    };
    let (mut retests, mut rounds) = (Vec::new(), Vec::new());
    for rec in records(dir, size, bad)? {
        if rec.round.is_some() {
            rounds.push(rec);
        } else {
            retests.push(rec);
        }
    }
    // each planned pair once: its measured record (a resumed folder holds
    // the earlier run's too), else its last failed one, else none
    // (which pairs were measured, as a triangle of flags: 4 bytes a pair,
    // where a set of keys would take ten times that at 50 million pairs)
    let mut measured = crate::analysis::Matrix::new(size);
    let mut failed: std::collections::HashMap<(usize, usize), PairRecord> = std::collections::HashMap::new();
    let mut pairs = Vec::with_capacity(schedule.total_pairs());
    for rec in rounds {
        if rec.value.is_some() {
            if measured.get(rec.a, rec.b).is_none() {
                measured.set(rec.a, rec.b, 1.0);
                pairs.push(rec);
            }
        } else {
            failed.insert((rec.a, rec.b), rec);
        }
    }
    let mut missing = 0usize;
    for r in 0..schedule.rounds() {
        for p in schedule.round(r) {
            let (a, b) = p.key();
            if measured.get(a, b).is_some() {
                continue;
            }
            match failed.remove(&p.key()) {
                Some(rec) => pairs.push(rec),
                None => {
                    missing += 1;
                    pairs.push(PairRecord {
                        untested: true,
                        error: Some(format!("not tested: {NOT_RECORDED}").into()),
                        ..PairRecord::planned(&p, Some(r))
                    });
                }
            }
        }
    }
    let modified = |name: &str| {
        std::fs::metadata(dir.join(name))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
    };
    Ok(Finished {
        file: dir.join("pairs.jsonl"),
        // (no steps or join time: pairs.jsonl keeps no timing but each pair's)
        sweep: Coordinated {
            rails,
            retests,
            started: modified("meta.json"),
            ended: modified("pairs.jsonl"),
            stopped: (missing > 0).then(|| NOT_RECORDED.to_string()),
            ..Coordinated::of(nodes, pairs)
        },
        metric: Metric::of(&spec, Metric::figure_in(&options)),
        limits: Limits::default(),
        options,
        rules: crate::analysis::Rules::default(),
        fabdiag_version: meta["fabdiag_version"].as_str().unwrap_or("unknown").to_string(),
        libfabric_version: None,
    })
}

#[cfg(test)]
mod folder_tests {
    use super::*;
    use crate::coordinator::NodeStatus;
    use crate::report::tests::sweep_with;

    /// A folder as `--output` leaves it when rank 0 is killed: meta.json,
    /// nodes.json (unless `named` is false) and the pairs.jsonl lines given.
    fn folder(tag: &str, n: usize, named: bool, lines: &[String]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fabdiag-folder-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        // (as a default write-bw sweep writes it)
        let test = serde_json::json!({
            "tool": "cxi_write_bw", "provider": "", "iterations": 1000, "duration_s": null,
            "min_size": 65536, "max_size": 65536, "list_size": 256, "bidirectional": false,
            "use_idc": true, "use_hrp": true, "unrestricted": false, "rdzv": false,
            "max_buf": 4294967296u64, "buf_align": 64, "hugepages": null, "warmup": 0, "gap_us": 0,
            "report_all": false, "clock": "clock_gettime", "op": "SUM", "cswap": "EQ", "ty": "UINT64",
            "fetching": false, "matching": false, "verify": false
        });
        fabdiag_session::TestSpec::from_wire(test.clone()).expect("a pair test as meta.json holds it");
        let options = serde_json::json!({ "tool": "write-bw", "rails": 1, "test": test, "provider": null });
        let meta = serde_json::json!({ "size": n, "rails": 1, "test": test, "options": options });
        std::fs::write(dir.join("meta.json"), meta.to_string()).expect("written");
        if named {
            let nodes = sweep_with(n, &[], &[], &[n - 1]).nodes;
            std::fs::write(dir.join("nodes.json"), serde_json::to_vec(&nodes).expect("nodes")).expect("written");
        }
        std::fs::write(dir.join("pairs.jsonl"), lines.join("\n")).expect("written");
        dir
    }

    fn line(a: usize, b: usize, value: Option<f64>, round: Option<u32>) -> String {
        let mut rec = PairRecord::planned(&crate::schedule::Pair { client: a, server: b }, None);
        rec.round = round;
        rec.value = value;
        rec.error = value.is_none().then(|| "provider error".into());
        serde_json::to_string(&rec).expect("a record")
    }

    #[test]
    fn a_folder_without_its_report_is_read_from_what_it_recorded() {
        let mut torn = line(1, 2, Some(100.0), Some(1));
        torn.truncate(20);
        let lines = [
            line(0, 1, Some(100.0), Some(0)),
            // failed in a first run, measured when resumed
            line(2, 3, None, Some(0)),
            line(2, 3, Some(90.0), Some(0)),
            // failed and never measured
            line(0, 2, None, Some(1)),
            // a re-test
            line(0, 1, Some(99.0), None),
            torn,
        ];
        let dir = folder("killed", 4, true, &lines);
        let f = read(&dir);
        let f = f.expect("made up from the folder");
        let _ = std::fs::remove_dir_all(&dir);
        let by = |a: usize, b: usize| f.sweep.pairs.iter().filter(move |p| (p.a, p.b) == (a, b));
        assert_eq!(f.sweep.pairs.len(), 6, "each pair of the schedule once");
        assert_eq!(by(2, 3).map(|p| p.value).collect::<Vec<_>>(), vec![Some(90.0)]);
        assert_eq!(
            by(0, 2).map(|p| p.error.is_some() && !p.untested).collect::<Vec<_>>(),
            vec![true]
        );
        // 1-2 (torn), 0-3 and 1-3 never recorded
        let untested: Vec<(usize, usize)> = f
            .sweep
            .pairs
            .iter()
            .filter(|p| p.untested)
            .map(|p| (p.a, p.b))
            .collect();
        assert_eq!(untested.len(), 3, "{untested:?}");
        assert!(untested.contains(&(1, 2)));
        assert_eq!(f.sweep.retests.len(), 1);
        assert_eq!(f.sweep.stopped.as_deref(), Some(NOT_RECORDED));
        assert_eq!(f.metric.test, "write-bw 65536 B");
        assert_eq!(f.sweep.nodes[0].host.as_deref(), Some("host<0>"));
        assert_eq!(f.sweep.nodes[3].status, NodeStatus::Missing);
        assert_eq!(f.options["tool"], "write-bw");
        // a report of it, as --report prints
        let doc = crate::report::tests::build_with(f.sweep, None);
        assert_eq!((doc.verdict.untested_pairs, doc.verdict.failed_pairs), (3, 1));
    }

    #[test]
    fn a_folder_without_its_ranks_names_them_by_number_and_one_without_meta_is_refused() {
        let dir = folder("unnamed", 3, false, &[line(0, 1, Some(100.0), Some(0))]);
        let f = read(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let f = f.expect("made up from the folder");
        assert!(f
            .sweep
            .nodes
            .iter()
            .all(|x| x.host.is_none() && x.status == NodeStatus::Ok));
        let dir = folder("nometa", 3, true, &[]);
        std::fs::remove_file(dir.join("meta.json")).expect("removed");
        let e = read(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            e.ends_with(": no sweep.json or meta.json in it: not a sweep's --output folder"),
            "{e}"
        );
        let dir = folder("nosize", 3, true, &[]);
        std::fs::write(dir.join("meta.json"), "{}").expect("written");
        let e = read(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            e.ends_with(": no sweep.json, and meta.json gives no number of ranks"),
            "{e}"
        );
    }
}
