//! An `--output` folder on disk: the one place a sweep's files are
//! written and read. Written as the sweep runs (`create`, `write_meta`,
//! `append_pairs`, `write_nodes`), when it ends (`write_document`,
//! `write_summary`, `write_pages`, or a pattern run's `write_pattern`) and
//! cleared by `--replace` (`clear`); read back by `--resume`, `--report`
//! and `--baseline` (`meta`, `records`, `read`, `baseline`), a folder
//! whose rank 0 ended before its report made up from what it recorded.
//! The files' names and `meta.json`'s type are fabdiag-sweep-plan's
//! `folder`; when each is written is the binary's to decide, the document
//! made from them is fabdiag-sweep-judge's and the report drawn from that
//! fabdiag-sweep-report's. Prints nothing.

use fabdiag_files::read::{self, ReadError};
use fabdiag_files::write;
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::reread::{self, Finished, RecordedFiles};
use fabdiag_sweep_judge::{ReportError, SweepDoc};
use fabdiag_sweep_plan::folder::{self as names, Meta, DOCUMENT, META, NODES, PAIRS, RESULTS};
use fabdiag_sweep_plan::{Node, PairRecord};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file of the folder that could not be made, written or cleared.
#[derive(Debug, thiserror::Error)]
#[error("cannot {verb} {}: {reason}", .path.display())]
pub struct FolderError {
    /// "create", "write", "clear" or "remove".
    pub verb: &'static str,
    pub path: PathBuf,
    pub reason: String,
}

fn failed(verb: &'static str, path: PathBuf) -> impl FnOnce(std::io::Error) -> FolderError {
    move |e| FolderError {
        verb,
        path,
        reason: e.to_string(),
    }
}

/// The folder made, with any folders above it; something else of that
/// name (a file, a FIFO) is said to be no folder.
pub fn create(dir: &Path) -> Result<(), FolderError> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(FolderError {
            verb: "create",
            path: dir.to_path_buf(),
            reason: "something other than a folder is there".into(),
        });
    }
    std::fs::create_dir_all(dir).map_err(failed("create", dir.to_path_buf()))
}

/// The result files already in `dir` (a link counts: something is there),
/// in the order `RESULTS` lists them.
pub fn results_in(dir: &Path) -> Vec<&'static str> {
    RESULTS
        .iter()
        .copied()
        .filter(|name| std::fs::symlink_metadata(dir.join(name)).is_ok())
        .collect()
}

/// The result files in `dir` removed (a link goes, not what it points
/// to), so nothing of an earlier run is read as the next one's.
pub fn clear(dir: &Path) -> Result<(), FolderError> {
    for name in results_in(dir) {
        std::fs::remove_file(dir.join(name)).map_err(failed("clear", dir.to_path_buf()))?;
    }
    Ok(())
}

/// `value` as compact JSON, the whole of the folder's file `name`.
fn write_json(dir: &Path, name: &str, value: &impl serde::Serialize) -> Result<(), FolderError> {
    let path = dir.join(name);
    let body = serde_json::to_vec(value).map_err(|e| FolderError {
        verb: "write",
        path: path.clone(),
        reason: e.to_string(),
    })?;
    write::whole(&path, &body).map_err(failed("write", path))
}

/// `meta.json` written whole, before the first round.
pub fn write_meta(dir: &Path, meta: &Meta) -> Result<(), FolderError> {
    write_json(dir, META, meta)
}

/// `pairs.jsonl` opened to append one record a line (see
/// `fabdiag_files::write::append_lines`), and its path.
pub fn append_pairs(dir: &Path) -> Result<(std::fs::File, PathBuf), FolderError> {
    let path = dir.join(PAIRS);
    match write::append_lines(&path) {
        Ok(f) => Ok((f, path)),
        Err(e) => Err(failed("write", path)(e)),
    }
}

/// `nodes.json`, written aside and renamed over: a rank 0 killed
/// mid-write leaves the last whole file, never a torn one.
pub fn write_nodes(dir: &Path, nodes: &[Node]) -> Result<(), FolderError> {
    write_json(dir, NODES, &nodes)
}

/// `doc` as pretty JSON and a newline into `w`.
pub fn json_to(mut w: impl std::io::Write, doc: &SweepDoc) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut w, doc)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// `sweep.json`, the finished sweep's document.
pub fn write_document(dir: &Path, doc: &SweepDoc) -> Result<(), FolderError> {
    let path = dir.join(DOCUMENT);
    write::whole_with(&path, |w| json_to(w, doc)).map_err(failed("write", path))
}

/// One report file of the folder (`summary.txt`, `report.html`, ...).
fn write_file(dir: &Path, name: &str, body: &[u8]) -> Result<(), FolderError> {
    let path = dir.join(name);
    write::whole(&path, body).map_err(failed("write", path))
}

/// `summary.txt`, the report as text.
pub fn write_summary(dir: &Path, text: &str) -> Result<(), FolderError> {
    write_file(dir, names::SUMMARY, text.as_bytes())
}

/// The report's page and pictures: `report.html`, `heatmap.png`, and
/// `change.png` when there is a baseline; without one, an earlier
/// comparison's picture is removed (a report made again in place is no
/// longer compared).
pub fn write_pages(dir: &Path, page: &str, heatmap: &[u8], change: Option<&[u8]>) -> Result<(), FolderError> {
    write_file(dir, names::PAGE, page.as_bytes())?;
    write_file(dir, names::HEATMAP, heatmap)?;
    match change {
        Some(png) => write_file(dir, names::CHANGE, png),
        None => match std::fs::remove_file(dir.join(names::CHANGE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(failed("remove", dir.join(names::CHANGE))(e)),
            _ => Ok(()),
        },
    }
}

/// A pattern run's report: `pattern.json`, `summary.txt` and
/// `report.html`, each tried; the ones that could not be written.
pub fn write_pattern(dir: &Path, json: &str, text: &str, page: &str) -> Vec<FolderError> {
    [(names::PATTERN, json), (names::SUMMARY, text), (names::PAGE, page)]
        .into_iter()
        .filter_map(|(name, body)| write_file(dir, name, body.as_bytes()).err())
        .collect()
}

/// The pattern run's document in `path`'s folder (or `path` itself, named
/// `pattern.json`), when there is one.
pub fn pattern_at(path: &Path) -> Option<PathBuf> {
    let file = if path.is_dir() {
        path.join(names::PATTERN)
    } else {
        path.to_path_buf()
    };
    (file.file_name().is_some_and(|n| n == names::PATTERN) && file.is_file()).then_some(file)
}

/// `path` itself, or its `sweep.json` when it is a folder (a sweep's
/// `--output`).
pub fn document_at(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(DOCUMENT)
    } else {
        path.to_path_buf()
    }
}

/// The `meta.json` of an `--output` folder: the sweep's size, rails, pair
/// test and options, written before its first round. `bad` makes the
/// caller's error from a reason.
pub fn meta<E>(dir: &Path, bad: impl Fn(String) -> E) -> Result<Meta, E> {
    read::text(&dir.join(META), read::CONFIG_CAP)
        .map_err(|e| bad(format!("{META}: {e}")))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| bad(format!("{META}: {e}"))))
}

/// Every record in an `--output` folder's `pairs.jsonl` of ranks below
/// `size`, in the order written (pairs and re-tests as they arrived), read a
/// line at a time (50 million at 10,000 ranks). No file is no result yet;
/// a file that cannot be read or is damaged is an error, never "nothing
/// ran" (see `records_in`).
pub fn records<E>(dir: &Path, size: usize, bad: impl Fn(String) -> E) -> Result<Vec<PairRecord>, E> {
    let file = match read::open(&dir.join(PAIRS)) {
        Ok((f, _)) => f,
        Err(ReadError::Absent(_)) => return Ok(Vec::new()),
        Err(e) => return Err(bad(format!("{PAIRS}: {e}"))),
    };
    records_in(std::io::BufReader::new(file), size).map_err(|e| bad(format!("{PAIRS}: {e}")))
}

/// The records of a `pairs.jsonl` as `r` reads it. Rank 0 appends each
/// record as one line ending in a newline, so only the last line can be
/// cut short by a crash: a last line with no newline that does not decode
/// is skipped (that pair has no result). Any other line that does not
/// decode is damage no crash of fabdiag's makes, and is refused naming the
/// line and its byte offset, rather than read as fewer results.
pub fn records_in(mut r: impl BufRead, size: usize) -> Result<Vec<PairRecord>, String> {
    let mut out = Vec::new();
    let mut line = Vec::new();
    let (mut offset, mut number) = (0u64, 0u64);
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(out);
        }
        number += 1;
        let whole = line.last() == Some(&b'\n');
        match serde_json::from_slice::<PairRecord>(&line) {
            Ok(rec) => {
                if rec.a < size && rec.b < size {
                    out.push(rec);
                }
            }
            Err(_) if !whole => return Ok(out),
            Err(e) => {
                // serde's own "at line 1 column 9" counts within the line
                let why = e.to_string();
                let why = why.split(" at line ").next().unwrap_or_default();
                return Err(format!(
                    "line {number} (byte {offset}) is not a pair record ({why}): the file is damaged"
                ));
            }
        }
        offset += n as u64;
    }
}

/// Whether `path` is an `--output` folder whose rank 0 ended before it
/// wrote its report: a meta.json and no sweep.json.
pub fn without_report(path: &Path) -> bool {
    path.is_dir() && !path.join(DOCUMENT).exists() && path.join(META).exists()
}

/// The finished sweep whose document is at `path` (see `document_at`);
/// an `--output` folder with no document (rank 0 ended before it wrote its
/// report) is made up from what it recorded as the sweep ran.
pub fn read(path: &Path) -> Result<Finished, ReportError> {
    let file = document_at(path);
    if without_report(path) {
        return reread::recorded(path, &Disk(path));
    }
    if path.is_dir() && !file.exists() {
        return Err(ReportError::Report {
            path: path.display().to_string(),
            reason: "no sweep.json or meta.json in it: not a sweep's --output folder".into(),
        });
    }
    // (a FIFO or a device in the document's place is refused, not read)
    reread::document(&file, || {
        read::open(&file)
            .map(|(f, _)| std::io::BufReader::new(f))
            .map_err(|e| e.to_string())
    })
}

/// The sweep document at `path`, or in it when it is a folder (a sweep's
/// `--output`: its `sweep.json`), as a baseline.
pub fn baseline(path: &Path) -> Result<Baseline, ReportError> {
    let file = document_at(path);
    let bad = |reason: String| ReportError::Baseline {
        path: file.display().to_string(),
        reason,
    };
    // a folder whose rank 0 ended without its report: what it recorded
    if without_report(path) {
        return read(path)
            .map(|f| Baseline::of(f, path))
            .map_err(|e| ReportError::Baseline {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
    }
    let (f, _) = read::open(&file).map_err(|e| bad(e.to_string()))?;
    Baseline::from_reader(&file.display().to_string(), std::io::BufReader::new(f))
}

/// The most a `nodes.json` may hold: a few hundred bytes a rank, at far
/// more ranks than any sweep has.
const NODES_CAP: u64 = 1 << 30;

/// An `--output` folder's files, read from disk.
struct Disk<'a>(&'a Path);

impl RecordedFiles for Disk<'_> {
    fn meta(&self) -> Result<Meta, String> {
        meta(self.0, |reason| reason)
    }

    fn nodes(&self) -> Result<Option<Vec<u8>>, String> {
        match read::bytes(&self.0.join(NODES), NODES_CAP) {
            Ok(body) => Ok(Some(body)),
            // (rank 0 ended during the join, or a folder from before the
            // ranks were kept there)
            Err(ReadError::Absent(_)) => Ok(None),
            Err(e) => Err(format!("{NODES}: {e}")),
        }
    }

    fn records(&self, size: usize) -> Result<Vec<PairRecord>, String> {
        records(self.0, size, |reason| reason)
    }

    fn modified(&self, name: &str) -> SystemTime {
        std::fs::metadata(self.0.join(name))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_sweep_judge::fixtures::{build_with, doc_with, sweep_with};
    use fabdiag_sweep_judge::reread::NOT_RECORDED;
    use fabdiag_sweep_plan::{NodeStatus, Pair, PairRecord};

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
        fabdiag_model::TestSpec::from_wire(test.clone()).expect("a pair test as meta.json holds it");
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
        let mut rec = PairRecord::planned(&Pair { client: a, server: b }, None);
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
        assert_eq!(f.options.tool.as_deref(), Some("write-bw"));
        // a report of it, as --report prints
        let doc = build_with(f.sweep, None);
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

    /// A file that is not there is said with the path given, in one line.
    #[test]
    fn a_missing_document_or_baseline_names_the_path_given() {
        let missing = read(Path::new("/nonexistent/fabdiag")).err().map(|e| e.to_string());
        assert_eq!(
            missing.as_deref(),
            Some("--report /nonexistent/fabdiag: No such file or directory (os error 2)")
        );
        let missing = baseline(Path::new("/nonexistent/fabdiag-baseline"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            missing.as_deref(),
            Some("--baseline /nonexistent/fabdiag-baseline: No such file or directory (os error 2)")
        );
    }

    #[test]
    fn a_folder_is_read_as_its_sweep_json() {
        let dir = std::env::temp_dir().join(format!("fabdiag-baseline-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let json = serde_json::to_vec(&doc_with(3, &[], &[], &[])).expect("serializes");
        std::fs::write(dir.join("sweep.json"), json).expect("written");
        let b = baseline(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let b = b.expect("the folder's sweep.json");
        assert_eq!(b.file, dir.join("sweep.json").display().to_string());
        assert_eq!(b.figures().measured().count(), 3);
    }
}
