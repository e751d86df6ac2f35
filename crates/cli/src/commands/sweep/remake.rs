//! `--report DIR`: a finished sweep's report made again from its
//! document (or its folder), with the rules, thresholds and baseline
//! given now; nothing runs.

use super::conclude::{conclude, Led};
use super::files::{prepare_report_output, read_baseline};
use super::setup::{fail, limits_of, reference, Setup, Versions};
use crate::exit;
use crate::version::VERSION;
use fabdiag_model::Tool;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_options::{Action, OptionError};
use fabdiag_sweep::folder;
use fabdiag_sweep_judge::analysis::Rules;
use std::path::Path;
use std::time::Duration;

/// `--report`: a finished sweep's report made again from its document,
/// with the outlier rules, thresholds and baseline given now (a rule not
/// given stays as the sweep had it); nothing runs. Written to `--output`
/// when given (the same folder rewrites its report), printed either way.
pub(super) fn remake(prog: &str, o: &SweepOptions, path: &str) -> u8 {
    // a pattern run's flows are no sweep's pairs: its report is its own
    if folder::pattern_at(Path::new(path)).is_some() {
        return fail(
            prog,
            exit::USAGE,
            &format!(
                "--report {path}: it holds a traffic pattern's run (pattern.json), whose report is its summary.txt and report.html"
            ),
        );
    }
    let f = match folder::read(Path::new(path)) {
        Ok(f) => f,
        Err(e) => return fail(prog, exit::USAGE, &e.to_string()),
    };
    let tool = f.options.tool.as_deref().and_then(Tool::from_subcommand);
    let Some(tool) = tool else {
        return fail(
            prog,
            exit::USAGE,
            &format!(
                "--report {}: it does not say which pair test its sweep ran",
                f.file.display()
            ),
        );
    };
    // --min-bw/--max-lat as that pair tool reads them
    let threshold = match fabdiag_options::parse_for_rank(tool, &o.tool_args, 0) {
        Ok(Action::Run(inv)) => inv.threshold,
        Ok(_) => None,
        Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => {
            return fail(prog, exit::USAGE, &format!("{}: {m}", tool.subcommand()))
        }
    };
    let given = o.given_rules();
    let rules = Rules {
        fraction: given.fraction.unwrap_or(f.rules.fraction),
        reference: given.reference.map_or(f.rules.reference, reference),
        z: given.score.unwrap_or(f.rules.z),
        node_fraction: given.node_fraction.unwrap_or(f.rules.node_fraction),
    };
    let mut options = f.options;
    options.report_from = Some(f.file.display().to_string());
    options.report_fabdiag_version = Some(VERSION.into());
    let mut setup = Setup {
        metric: f.metric,
        rules,
        limits: threshold.map(limits_of).unwrap_or(f.limits),
        pair_timeout: Duration::ZERO,
        test: options.test.clone().unwrap_or_default(),
        options,
        victim: None,
        map: None,
    }
    .with_map(prog, o);
    // the map the sweep was judged on, unless another is given
    if let (None, Some((shape, source))) = (&setup.map, &f.map) {
        match fabdiag_sweep_judge::fabric::fabric_of(shape, source) {
            Ok(fabric) => {
                let files = vec![(source.clone(), fabdiag_topology::Parts::of(&fabric))];
                setup.map = Some(std::sync::Arc::new(fabdiag_topology::Plan { files, lldp: false }));
            }
            Err(e) => tell!(
                "{prog}: the map kept in {}: {e}; no element of the fabric is judged",
                f.file.display()
            ),
        }
    }
    let baseline = match read_baseline(o, &setup) {
        Ok(b) => b,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    if let Err((code, m)) = prepare_report_output(o, Path::new(path)) {
        return fail(prog, code, &m);
    }
    let led = Led {
        sweep: f.sweep,
        recorded: true,
    };
    // the versions stay those that measured; the maker's is noted beside
    // report_from
    let measured_by = Versions {
        fabdiag: f.fabdiag_version,
        libfabric: f.libfabric_version,
    };
    conclude(prog, o, &setup, led, measured_by, baseline.as_ref())
}
