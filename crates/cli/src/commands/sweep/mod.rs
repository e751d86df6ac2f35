//! `fabdiag sweep`: every pair of ranks tests its link once. Resolves the
//! options and who this rank is, then: `--plan` prints the schedule
//! (`plan`); `--report` makes a finished sweep's report again (`remake`);
//! `--simulate N` runs the coordinator and N stand-in ranks here
//! (`simulate`); else every rank runs pair tests as ordered and rank 0
//! also runs the coordinator in a thread (`real`, `rank0`); `--pattern`
//! runs a traffic pattern on the same machinery instead, and `pattern`
//! reports it. Only rank 0
//! prints (the report, `conclude`) unless a rank fails on its own; the
//! exit code says what the sweep found. This file only dispatches.

mod conclude;
mod files;
mod held;
mod pattern;
mod plan;
mod progress;
mod rank0;
mod real;
mod remake;
mod setup;
mod simulate;

use crate::exit;
use crate::streams::print_stdout;
use fabdiag_options::{Action, OptionError, RunMode};
use setup::{fail, Setup};

pub fn run(prog: &str, args: &[String]) -> u8 {
    let opts = match fabdiag_options::sweep::sweep(args) {
        Ok(Action::Run(o)) => o,
        Ok(_) => {
            print_stdout(&fabdiag_options::sweep::sweep_usage(prog));
            return exit::OK;
        }
        Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => return fail(prog, exit::USAGE, &m),
    };
    if let Some(path) = opts.report.as_deref() {
        return remake::remake(prog, &opts, path);
    }
    // (-t/-r lists are checked whole here; each rank takes its own later)
    let inv = match fabdiag_options::parse_for_rank(opts.tool, &opts.tool_args, 0) {
        Ok(Action::Run(inv)) => inv,
        Ok(_) => {
            print_stdout(&fabdiag_options::usage(
                opts.tool,
                &format!("{prog} --tool {}", opts.tool.subcommand()),
            ));
            return exit::OK;
        }
        Err(OptionError::Invalid(m)) => return fail(prog, exit::USAGE, &format!("{}: {m}", opts.tool.subcommand())),
        Err(OptionError::Unavailable(m)) => return fail(prog, exit::UNAVAILABLE, &m),
    };
    // name what was given: `--plan 3` reads as an address otherwise
    let given = match &inv.mode {
        RunMode::Server => None,
        RunMode::Client(addr) => Some(format!("unexpected argument '{addr}'")),
        RunMode::Local => Some("--local".to_string()),
    };
    if let Some(given) = given {
        return fail(
            prog,
            exit::USAGE,
            &format!("{given}: a sweep finds its peers itself (give no address and no --local)"),
        );
    }
    // a pattern's flows must overlap: each runs for the same time at once
    if let (Some(p), None) = (&opts.pattern, inv.spec.duration_s) {
        return fail(
            prog,
            exit::USAGE,
            &format!(
                "--pattern {} needs the pair tool's -D SECONDS, so every flow runs at once for the same time (e.g. -D 5)",
                p.name()
            ),
        );
    }
    if opts.flows > 1 && inv.threshold.is_some() {
        return fail(
            prog,
            exit::USAGE,
            "--min-bw and --max-lat judge one flow a pair; with --flows each pair's flows share its NICs (leave --flows out to hold pairs to a limit)",
        );
    }
    if opts.pattern.is_some() && inv.threshold.is_some() {
        return fail(
            prog,
            exit::USAGE,
            "--min-bw judges one pair at a time, not a pattern's flows together: give --expect (one node's rate) instead",
        );
    }
    // a victim runs its tool for the pattern's -D, beside every step; a
    // bandwidth victim with the pattern's -l, so that its window ends with
    // the load's (a flow's window ends at an iteration's end past -D: 256
    // writes of 64 KiB at 1.6 MB/s made a 3 s victim run for 10 s, alone
    // for most of it)
    let victim = match (opts.victim, inv.spec.duration_s) {
        (Some(tool), Some(secs)) => match fabdiag_options::parse_for_rank(tool, &victim_args(tool, secs, &inv.spec), 0)
        {
            Ok(Action::Run(v)) => Some(v.spec),
            Ok(_) => None,
            Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => {
                return fail(prog, exit::USAGE, &format!("--victim {}: {m}", tool.subcommand()))
            }
        },
        _ => None,
    };
    let setup = Setup::new(&opts, &inv, victim.as_ref());
    if opts.plan {
        return plan::plan(prog, &opts, &setup);
    }
    if let Some(n) = opts.simulate {
        return simulate::simulate(prog, &opts, &setup, n);
    }
    real::real(prog, &opts, inv, &setup)
}

/// The victim's command line: the pattern's -D, and a bandwidth victim
/// the pattern's -l.
fn victim_args(tool: fabdiag_model::Tool, secs: u64, pattern: &fabdiag_model::TestSpec) -> Vec<String> {
    let mut args = vec!["-D".to_string(), secs.to_string()];
    if matches!(tool.family(), fabdiag_model::Family::Bandwidth(_)) {
        args.extend(["-l".to_string(), pattern.list_size.to_string()]);
    }
    args
}
