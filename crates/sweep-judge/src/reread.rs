//! A finished sweep read back (`--report`, and `--baseline` of a folder
//! whose rank 0 ended before its report): its document taken apart into
//! what its report was made from, so the report can be made again with
//! other rules, thresholds or a baseline without running a pair test; or,
//! with no document, the sweep made up from what its `--output` folder
//! recorded. Works on what it is handed (a reader, the folder's files as
//! `RecordedFiles` supplies them); opens no file itself.

use crate::analysis::{Matrix, Rules};
use crate::doc::{Limits, Metric, SweepDoc, SCHEMA};
use crate::error::ReportError;
use fabdiag_model::TestSpec;
use fabdiag_sweep_plan::folder::{self, Meta, RunOptions};
use fabdiag_sweep_plan::{Coordinated, Node, NodeStatus, Pair, PairRecord, Schedule, MAX_RANKS};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a finished sweep's report was made from.
#[derive(Debug)]
pub struct Finished {
    /// The file read.
    pub file: PathBuf,
    pub sweep: Coordinated,
    pub metric: Metric,
    pub limits: Limits,
    pub options: RunOptions,
    pub rules: Rules,
    /// The fabdiag that ran the sweep ("unknown" for a folder from before
    /// meta.json kept it).
    pub fabdiag_version: String,
    pub libfabric_version: Option<String>,
    /// The fabric's map the sweep was judged on, and its sources' names
    /// (a report made again judges on it unless given another).
    pub map: Option<(crate::fabric::MapShape, String)>,
}

/// The finished sweep whose document `open` reads, `file` naming it in
/// messages. The document is decoded straight from the reader (a value
/// tree first would take several times the file's size); when that fails,
/// `open` is called again to read only its schema, which says whether it
/// is another document rather than a broken one. `open`'s error is the
/// reason the file cannot be read.
pub fn document<R: std::io::Read>(file: &Path, open: impl Fn() -> Result<R, String>) -> Result<Finished, ReportError> {
    let bad = |reason: String| ReportError::Report {
        path: file.display().to_string(),
        reason,
    };
    let doc = match serde_json::from_reader::<_, SweepDoc>(open().map_err(bad)?) {
        Ok(doc) => doc,
        Err(e) => {
            #[derive(serde::Deserialize)]
            struct Head {
                schema: Option<String>,
            }
            let head = serde_json::from_reader::<_, Head>(open().map_err(bad)?)
                .ok()
                .and_then(|h| h.schema);
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
    finished(doc, file.to_path_buf())
}

/// `doc` taken apart again: the coordinator's record of the sweep (its
/// nodes, pairs, re-tests and steps) and what the report added.
pub fn finished(doc: SweepDoc, file: PathBuf) -> Result<Finished, ReportError> {
    let bad = |reason: String| ReportError::Report {
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
    if n > MAX_RANKS {
        return Err(bad(format!(
            "its {n} ranks are more than a sweep takes ({})",
            MAX_RANKS
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
                &Pair {
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
            pattern: None,
        },
        metric: doc.metric,
        limits: doc.limits,
        options: doc.options,
        rules: doc.analysis.rules,
        fabdiag_version: doc.fabdiag_version,
        libfabric_version: doc.libfabric_version,
        map: doc.fabric.map(|f| (f.map, f.source)),
        file,
    })
}

/// Why a pair the schedule has has no record in a folder's pairs.jsonl.
pub const NOT_RECORDED: &str = "rank 0 ending before its report (this report is made from pairs.jsonl)";

/// An `--output` folder's files as a report made from them needs them:
/// the binary's side reads them from disk. Each error is the reason, as
/// the report's one line says it ("meta.json: ...").
pub trait RecordedFiles {
    /// `meta.json`: the sweep's size, rails, pair test and options.
    fn meta(&self) -> Result<Meta, String>;
    /// `nodes.json`'s bytes; None when there is none.
    fn nodes(&self) -> Result<Option<Vec<u8>>, String>;
    /// Every whole record in `pairs.jsonl` of ranks below `size`, in the
    /// order written; none when there is no such file.
    fn records(&self, size: usize) -> Result<Vec<PairRecord>, String>;
    /// When the file `name` was last written (the epoch when unknown).
    fn modified(&self, name: &str) -> SystemTime;
}

/// The sweep an `--output` folder recorded as it ran, for a report when
/// rank 0 ended without one (killed, crashed, its node lost): `meta.json`
/// (the test and options), `nodes.json` (who joined) and `pairs.jsonl`
/// (every pair and re-test as it arrived), as `files` supplies them from
/// the folder `dir`. A pair with no record there is not tested, and the
/// sweep is marked stopped.
pub fn recorded(dir: &Path, files: &dyn RecordedFiles) -> Result<Finished, ReportError> {
    let bad = |reason: String| ReportError::Report {
        path: dir.display().to_string(),
        reason: format!("no sweep.json, and {reason}"),
    };
    let meta = files.meta().map_err(bad)?;
    let size = usize::try_from(meta.size)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(format!("{} gives no number of ranks", folder::META)))?;
    let rails = usize::try_from(meta.rails).unwrap_or(1);
    let spec = TestSpec::from_wire(meta.test.clone()).map_err(|e| bad(format!("{}'s test: {e}", folder::META)))?;
    let schedule = Schedule::on_rails(size, rails).map_err(|e| bad(format!("{}: {e}", folder::META)))?;
    let options = match meta.options {
        Some(o) => o,
        // (a folder from before the options were kept there)
        None => RunOptions {
            tool: Some(spec.tool.subcommand().into()),
            rails: Some(meta.rails),
            test: Some(meta.test.clone()),
            ..Default::default()
        },
    };
    let nodes = match files.nodes().map_err(bad)? {
        Some(body) => {
            let nodes: Vec<Node> = serde_json::from_slice(&body).map_err(|e| bad(format!("{}: {e}", folder::NODES)))?;
            if nodes.len() != size || nodes.iter().enumerate().any(|(i, x)| x.rank != i) {
                return Err(bad(format!("{} does not hold ranks 0 to {}", folder::NODES, size - 1)));
            }
            nodes
        }
        // (rank 0 ended during the join, or a folder from before the
        // ranks were kept there): ranks by number only
        None => (0..size)
            .map(|rank| Node {
                status: NodeStatus::Ok,
                ..Node::awaited(rank)
            })
            .collect(),
    };
    let (mut retests, mut rounds) = (Vec::new(), Vec::new());
    for rec in files.records(size).map_err(bad)? {
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
    let mut measured = Matrix::new(size);
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
    Ok(Finished {
        file: dir.join(folder::PAIRS),
        // (no steps or join time: pairs.jsonl keeps no timing but each pair's)
        sweep: Coordinated {
            rails,
            retests,
            started: files.modified(folder::META),
            ended: files.modified(folder::PAIRS),
            stopped: (missing > 0).then(|| NOT_RECORDED.to_string()),
            ..Coordinated::of(nodes, pairs)
        },
        metric: Metric::of(&spec, Metric::figure_in(&options)),
        limits: Limits::default(),
        options,
        rules: Rules::default(),
        fabdiag_version: meta.fabdiag_version.unwrap_or_else(|| "unknown".into()),
        libfabric_version: None,
        map: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{build_with, ci_with_retests, sweep_with};

    /// `body` as the file the test names for `tag` holds it.
    fn file(tag: &str, body: &[u8]) -> (PathBuf, Vec<u8>) {
        (PathBuf::from(format!("fabdiag-reread-{tag}.json")), body.to_vec())
    }

    fn read((path, body): &(PathBuf, Vec<u8>)) -> Result<Finished, ReportError> {
        document(path, || Ok(body.as_slice()))
    }

    /// A document read back and made again with the same rules is the
    /// same document, to the last digit: nodes lost and missing, pairs
    /// failed and untested, re-tests, steps and times.
    #[test]
    fn a_document_made_again_with_its_own_rules_is_the_same() {
        let mut s = sweep_with(6, &[((1, 4), 20.0), ((0, 2), 100.000_000_000_000_1)], &[(2, 3)], &[5]);
        s.steps.push(fabdiag_sweep_plan::StepRecord {
            kind: fabdiag_sweep_plan::StepKind::Round,
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
            assert!(!e.contains('\n'), "{e}");
            e.replace(&p.0.display().to_string(), "F")
        };
        assert!(say("text", "hello").starts_with("--report F: not a fabdiag sweep's JSON document ("));
        assert_eq!(
            say("other", "{\"schema\": \"fabdiag-traffic/1\", \"x\": 1}"),
            "--report F: its schema is 'fabdiag-traffic/1'; this fabdiag reads 'fabdiag-sweep/1'"
        );
        assert!(say("part", "{\"schema\": \"fabdiag-sweep/1\"}")
            .starts_with("--report F: not a whole fabdiag sweep's document (missing field"));
        let mut doc = serde_json::to_value(crate::fixtures::doc_with(3, &[], &[], &[])).expect("serializes");
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
    }
}
