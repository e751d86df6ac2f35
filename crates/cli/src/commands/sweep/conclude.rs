//! The end of a sweep: its report built, written to `--output` (the
//! document, the text, then the page and pictures, drawn with a
//! deadline), printed, its metrics written (`--metrics`), and its exit
//! code.

use super::setup::{Setup, Versions};
use crate::exit;
use crate::streams::{print_stdout, write_stdout};
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::folder;
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::SweepDoc;
use fabdiag_sweep_plan::Coordinated;
use fabdiag_sweep_report::picture::{ChangeCells, Pictures};
use fabdiag_sweep_report::{html, picture};
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

/// Slow links or nodes were found (and nothing worse).
pub const OUTLIERS: u8 = 5;

/// What rank 0 led: the sweep, and whether every result reached
/// `--output` (true without one).
pub(super) struct Led {
    pub(super) sweep: Coordinated,
    pub(super) recorded: bool,
}

/// The report: written to --output, printed, and its exit code. The JSON
/// is streamed to the file and to stdout, never held as one string: at
/// 10,000 ranks it is gigabytes.
pub(super) fn conclude(
    prog: &str,
    o: &SweepOptions,
    setup: &Setup,
    led: Led,
    measured_by: Versions,
    baseline: Option<&Baseline>,
) -> u8 {
    let Led { sweep, recorded } = led;
    if sweep.pattern.is_some() {
        return super::pattern::conclude(prog, o, setup, sweep, recorded, measured_by);
    }
    let fabric = the_map(prog, setup, &sweep.nodes);
    let doc = fabdiag_sweep_judge::build(fabdiag_sweep_judge::Inputs {
        sweep,
        metric: setup.metric.clone(),
        rules: setup.rules,
        limits: setup.limits,
        options: setup.options.clone(),
        fabdiag_version: &measured_by.fabdiag,
        libfabric_version: measured_by.libfabric,
        baseline: baseline.map(|b| (b, o.baseline_fraction)),
        fabric: fabric.as_ref().map(|(f, source)| (f, source.as_str())),
    });
    let text = fabdiag_sweep_report::text(&doc);
    let mut code = verdict_code(&doc);
    // results that did not reach --output are a failure of the run, as a
    // failed pair is (it outranks a threshold or an outlier)
    if !recorded {
        code = exit::RUNTIME;
    }
    let dir = o.output.as_deref();
    let mut draw = false;
    if let Some(dir) = dir {
        let written = folder::write_document(dir, &doc).and_then(|()| folder::write_summary(dir, &text));
        match written {
            Ok(()) => draw = true,
            Err(m) => {
                tell!("{prog}: {m}");
                code = exit::RUNTIME;
            }
        }
    }
    if o.json {
        write_stdout(|o| folder::json_to(BufWriter::new(o), &doc));
    } else {
        print_stdout(&text);
    }
    // the verdict as it stands before drawing: a picture that cannot be
    // drawn is no fault of the fabric's
    if let Some(path) = o.metrics.as_deref() {
        let file = crate::metrics_file::name(Path::new(path));
        let written = fabdiag_sweep_report::metrics::sweep(&doc, code == exit::OK, &file)
            .map_err(|e| e.to_string())
            .and_then(|text| crate::metrics_file::write(Path::new(path), &text));
        if let Err(m) = written {
            tell!("{prog}: {m}");
            code = exit::RUNTIME;
        }
    }
    // the pictures come last, so a failure to draw loses no result
    if let Some(dir) = dir.filter(|_| draw) {
        // (the change's cells are gathered here, where the baseline is:
        // a few MB at most, where the baseline itself is gigabytes)
        let change = baseline.map(|b| picture::change_cells(&doc, b));
        // (a report made again in place without --baseline: the earlier
        // comparison's picture is no longer this report's, and goes)
        let drawn = report_pages(doc, change).and_then(|(page, pictures)| {
            folder::write_pages(dir, &page, &pictures.heatmap, pictures.change.as_deref()).map_err(|e| e.to_string())
        });
        if let Err(m) = drawn {
            tell!("{prog}: {m}");
            code = exit::RUNTIME;
        }
    }
    code
}

/// The HTML page and the pictures, drawn in a thread with a deadline: a
/// drawing library that stalls must not keep the sweep from ending. The
/// finished document moves into that thread (it is not needed after).
pub(super) fn report_pages(doc: SweepDoc, change: Option<ChangeCells>) -> Result<(String, Pictures), String> {
    const DRAW_LIMIT: Duration = Duration::from_secs(120);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("fabdiag-report".into())
        .spawn(move || {
            let drawn = picture::draw(&doc, change.as_ref()).map(|p| (html::page(&doc, &p), p));
            let _ = tx.send(drawn.map_err(|e| e.to_string()));
        })
        .map_err(|e| format!("cannot start drawing the report: {e}"))?;
    match rx.recv_timeout(DRAW_LIMIT) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "drawing the report took over {} s; sweep.json and summary.txt hold the results",
            DRAW_LIMIT.as_secs()
        )),
    }
}

pub(super) fn verdict_code(doc: &SweepDoc) -> u8 {
    let v = &doc.verdict;
    if v.failed_pairs > 0 || v.untested_pairs > 0 || !v.lost_nodes.is_empty() {
        exit::RUNTIME
    } else if !v.threshold_pairs.is_empty() || !v.threshold_nodes.is_empty() {
        exit::THRESHOLD
    } else if v.slow_links > 0
        || v.slow_nodes > 0
        || v.regressed_links > 0
        || v.regressed_nodes > 0
        || v.fabric_regressed
    {
        OUTLIERS
    } else {
        exit::OK
    }
}

/// The fabric's map, made now the ranks have joined (with their LLDP
/// under `--topology lldp`), and its sources' names; a map that cannot be
/// made, and ranks that sent no LLDP, said once each.
fn the_map(
    prog: &str,
    setup: &Setup,
    nodes: &[fabdiag_sweep_plan::Node],
) -> Option<(fabdiag_topology::Fabric, String)> {
    let plan = setup.map.as_deref()?;
    if plan.lldp {
        let missing = fabdiag_sweep_judge::fabric::lldp_missing(nodes);
        if let Some((rank, why)) = missing.first() {
            tell!(
                "{prog}: --topology lldp: {} of {} ranks sent no LLDP neighbours (rank {rank}: {why})",
                missing.len(),
                nodes.len()
            );
        }
    }
    let devices = fabdiag_sweep_judge::fabric::lldp_of(nodes);
    match crate::fabric_map::made("--topology", plan, &devices) {
        Ok((f, left_out)) => {
            if let Some(first) = left_out.first() {
                tell!(
                    "{prog}: --topology lldp: {} of {} ranks' LLDP could not be read, their hosts off the map ({first})",
                    left_out.len(),
                    devices.len()
                );
            }
            Some((f, plan.source()))
        }
        Err(m) => {
            tell!("{prog}: {m}; no element of the fabric is judged");
            None
        }
    }
}
