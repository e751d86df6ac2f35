//! A finished sweep read back from its document (`--report`): taken apart
//! into what its report was made from, so the report can be made again
//! with other rules, thresholds or a baseline, without running a pair
//! test. Also where a sweep's document lies (a file, or an `--output`
//! folder's `sweep.json`), for `--baseline` too. Reads; never writes.

use crate::coordinator::{Coordinated, PairRecord};
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
    pub libfabric_version: Option<String>,
}

/// The finished sweep whose document is at `path` (see `document_at`).
pub fn read(path: &Path) -> Result<Finished, SweepError> {
    let file = document_at(path);
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
    if let Some(p) = doc.pairs.iter().find(|p| p.a >= n || p.b >= n) {
        return Err(bad(format!("its pair {}-{} names a rank it does not have", p.a, p.b)));
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
        let missing = read(Path::new("/nonexistent/fabdiag")).err().map(|e| e.to_string());
        assert_eq!(
            missing.as_deref(),
            Some("--report /nonexistent/fabdiag: No such file or directory (os error 2)")
        );
    }
}
