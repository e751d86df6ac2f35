//! The end of a traffic pattern's run (`--pattern`): its
//! document and page made (fabdiag-sweep-report's `pattern`), written to
//! `--output` (pattern.json, summary.txt, report.html), printed, and its
//! exit code.
//! The pattern's flows themselves ran on the sweep's machinery.

use super::setup::{Setup, Versions};
use crate::exit;
use crate::streams::print_stdout;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::folder;
use fabdiag_sweep_plan::folder::VictimPair;
use fabdiag_sweep_report::pattern::{self, PatternInputs};

/// `sweep` (whose results all reached --output when `recorded`) reported.
pub(super) fn conclude(
    prog: &str,
    o: &SweepOptions,
    setup: &Setup,
    sweep: fabdiag_sweep_plan::Coordinated,
    recorded: bool,
    measured_by: Versions,
) -> u8 {
    let mut options = setup.options.clone();
    options.pattern = o.pattern.clone();
    if o.victim.is_some() {
        let (client, server) = o.victim_pair(sweep.nodes.len());
        options.victim = Some(VictimPair { client, server });
    }
    let Some(doc) = pattern::document(PatternInputs {
        sweep,
        metric: setup.metric.clone(),
        fraction: setup.rules.fraction,
        expect: o.expect,
        bidirectional: setup.test["bidirectional"].as_bool().unwrap_or(false),
        victim: setup.victim.as_ref().map(|(_, m)| m.clone()),
        options,
        fabdiag_version: &measured_by.fabdiag,
        libfabric_version: measured_by.libfabric,
    }) else {
        tell!("{prog}: the pattern run left no record");
        return exit::RUNTIME;
    };
    let text = pattern::text(&doc);
    let page = fabdiag_sweep_report::pattern_html::page(&doc);
    let json = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    let v = &doc.verdict;
    let mut code = match v.failed_flows + v.untested_flows + v.lost_nodes.len() {
        0 if v.measured_flows > 0 => exit::OK,
        _ => exit::RUNTIME,
    };
    if !recorded {
        code = exit::RUNTIME;
    }
    if let Some(dir) = o.output.as_deref() {
        for e in folder::write_pattern(dir, &json, &text, &page) {
            tell!("{prog}: {e}");
            code = exit::RUNTIME;
        }
    }
    print_stdout(if o.json { &json } else { &text });
    code
}
