//! What the sweep targets share: a finished sweep, as read back, made into
//! its report and the report's text, as `--report` does.

use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::reread::Finished;
use fabdiag_sweep_judge::{build, Inputs, SweepDoc};
use fabdiag_sweep_report::text;

pub fn report(f: Finished, baseline: Option<&Baseline>) -> SweepDoc {
    let doc = build(Inputs {
        sweep: f.sweep,
        metric: f.metric,
        rules: f.rules,
        limits: f.limits,
        options: f.options,
        fabdiag_version: "fuzz",
        libfabric_version: f.libfabric_version,
        baseline: baseline.map(|b| (b, 0.9)),
    });
    let _ = text(&doc);
    doc
}
