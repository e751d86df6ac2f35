//! The sweep's `--output` folder as this command uses it: the earlier
//! results `--resume` continues from, the folder prepared before the
//! first round (`meta.json`), and the `--baseline` read and checked. The
//! folder's files are read and written by fabdiag-sweep's `folder`; this
//! decides only when.

use super::setup::Setup;
use crate::exit;
use crate::version::VERSION;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::{folder, SweepError};
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::Metric;
use fabdiag_sweep_plan::folder::Meta;
use fabdiag_sweep_plan::PairRecord;
use std::path::Path;

/// The earlier results in DIR (for --resume), checked against this sweep.
pub(super) fn earlier(
    dir: &Path,
    size: usize,
    o: &SweepOptions,
    test: &serde_json::Value,
) -> Result<Vec<PairRecord>, SweepError> {
    let bad = |reason: String| SweepError::Resume {
        path: dir.display().to_string(),
        reason,
    };
    let meta = folder::meta(dir, bad)?;
    if meta.size != size as u64 || meta.test != *test {
        return Err(bad(format!(
            "it holds a sweep of {} ranks with other test options; this one has {size} ranks",
            meta.size
        )));
    }
    // (a folder from before --rails existed paired every rank)
    let theirs = meta.rails;
    if theirs != o.rails as u64 {
        return Err(bad(format!(
            "it holds a sweep on {theirs} rail(s); this one is on {} (--rails)",
            o.rails
        )));
    }
    // the same pairs judged by two figures would be one report of both
    let theirs = Metric::figure_in(&meta.options.unwrap_or_default());
    if o.tool.is_latency() && theirs != o.figure {
        return Err(bad(format!(
            "its pairs were judged by their {}; this sweep's by their {} (--figure)",
            theirs.name(),
            o.figure.name()
        )));
    }
    folder::records(dir, size, bad)
}

/// `--report`'s --output folder made ready: the folder of the sweep read
/// (its report made again in place), a new or empty one, or, with
/// --replace, one whose earlier results are cleared first. Another
/// sweep's results there are never mixed with this one's report: refused,
/// naming them.
pub(super) fn prepare_report_output(o: &SweepOptions, read: &Path) -> Result<(), (u8, String)> {
    check_metrics(o)?;
    let Some(dir) = o.output.as_deref() else {
        return Ok(());
    };
    folder::create(dir).map_err(|e| (exit::RUNTIME, e.to_string()))?;
    // the folder the sweep was read from ("sweep.json" alone: this one)
    let source = match read.parent() {
        _ if read.is_dir() => read,
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if matches!((dir.canonicalize(), source.canonicalize()), (Ok(a), Ok(b)) if a == b) {
        return Ok(());
    }
    clear_unless_kept(dir, o.replace, |d, there| {
        format!(
            "{d} already holds another sweep's results ({there}): --replace discards them, or give another --output"
        )
    })
    .map_err(|(refused, m)| (if refused { exit::USAGE } else { exit::RUNTIME }, m))
}

/// The results already in `dir` are refused, `refusal` saying so with the
/// folder and what is there, unless `replace`; then they go (a link goes,
/// not what it points to), so nothing of them is read as the new run's.
/// An error says whether it is a refusal.
fn clear_unless_kept(
    dir: &Path,
    replace: bool,
    refusal: impl FnOnce(std::path::Display, String) -> String,
) -> Result<(), (bool, String)> {
    let there = folder::results_in(dir);
    if !there.is_empty() && !replace {
        return Err((true, refusal(dir.display(), there.join(", "))));
    }
    folder::clear(dir).map_err(|e| (false, e.to_string()))
}

/// `--metrics FILE` can be written (before anything runs); a refusal.
fn check_metrics(o: &SweepOptions) -> Result<(), (u8, String)> {
    match o.metrics.as_deref() {
        Some(path) => crate::metrics_file::check(Path::new(path)).map_err(|m| (exit::USAGE, m)),
        None => Ok(()),
    }
}

/// The --output folder made ready, with the earlier results --resume
/// continues from; an error is its exit code (a folder holding results
/// without --resume or --replace is a refused command line) and its line.
pub(super) fn prepare_output(o: &SweepOptions, size: usize, setup: &Setup) -> Result<Vec<PairRecord>, (u8, String)> {
    prepare(o, size, setup).map_err(|(refused, m)| (if refused { exit::USAGE } else { exit::RUNTIME }, m))
}

/// prepare_output's work; an error says whether it is a refusal.
fn prepare(o: &SweepOptions, size: usize, setup: &Setup) -> Result<Vec<PairRecord>, (bool, String)> {
    check_metrics(o).map_err(|(_, m)| (true, m))?;
    let io = |m: String| (false, m);
    let Some(dir) = o.output.as_deref() else {
        return Ok(Vec::new());
    };
    folder::create(dir).map_err(|e| io(e.to_string()))?;
    if o.resume {
        return earlier(dir, size, o, &setup.test).map_err(|e| io(e.to_string()));
    }
    clear_unless_kept(dir, o.replace, |d, there| {
        format!("{d} already holds a sweep's results ({there}): --resume continues it, --replace discards it, or give another --output")
    })?;
    // (the options too: a report can be made from this folder alone if
    // rank 0 ends before it writes one)
    let meta = Meta {
        size: size as u64,
        rails: o.rails as u64,
        test: setup.test.clone(),
        options: Some(setup.options.clone()),
        fabdiag_version: Some(VERSION.into()),
    };
    folder::write_meta(dir, &meta).map_err(|e| io(e.to_string()))?;
    Ok(Vec::new())
}

/// `--baseline`'s sweep, read and checked against this sweep's test before
/// anything runs (rank 0 only: the file need not be on every node).
pub(super) fn read_baseline(o: &SweepOptions, setup: &Setup) -> Result<Option<Baseline>, String> {
    let Some(path) = o.baseline.as_deref() else {
        return Ok(None);
    };
    let b = folder::baseline(Path::new(path)).map_err(|e| e.to_string())?;
    b.check(&setup.metric, &setup.options).map_err(|e| e.to_string())?;
    Ok(Some(b))
}
