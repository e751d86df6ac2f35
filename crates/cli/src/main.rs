//! fabdiag: fabric diagnostics re-creating HPE's CXI tools on libfabric.
//!
//! This file only dispatches: by the name fabdiag was called by (an
//! original tool name such as `cxi_write_bw`) or by its first argument (a
//! subcommand), to a command module. The pair tests themselves run in the
//! `fabdiag-session` library; options are parsed by `fabdiag-options`;
//! text and JSON come from `fabdiag-report`. Only this crate prints, and
//! only `exit` names exit codes.
//!
//! ```text
//! argv ─args─> command ─options─> Invocation { spec, env, mode, ... }
//!   pair tool: session::client | serve_one | local ──events──> output::Console
//!              Report | Failure ──> output::finish: threshold, JSON, exit code
//!   serve:     listener ─> one worker process per test (session::serve_stream)
//! ```

/// `eprintln!` that never panics: with its reader gone (a closed pipe, a
/// dropped ssh session) stderr fails with EPIPE, on which `eprintln!`
/// panics, and a panic there left a command half done, or the thread
/// that takes SIGTERM dead and the process deaf to it.
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::streams::print_stderr(&format!($($arg)*))
    };
}

mod args;
mod auth;
mod commands;
mod counted;
mod exit;
mod fabric_map;
mod metrics_file;
mod output;
mod signals;
mod streams;
mod stuck;
mod version;

use fabdiag_model::{Tool, HOST_TRAFFIC_ORIGINAL};
use std::process::ExitCode;

use version::VERSION;

fn main() -> ExitCode {
    ExitCode::from(run())
}

/// What fabdiag itself prints (its overview, its version) and its exit code.
fn own(text: &str) -> u8 {
    streams::print_stdout(text);
    streams::stdout_verdict("fabdiag", exit::OK)
}

fn run() -> u8 {
    let argv = args::Argv::from_env();
    // installed under an original name (a symlink): behave as that tool
    if let Some(tool) = Tool::from_original(&argv.name) {
        return argv.with(&argv.name, tool.original_name(), 1, |prog, a| {
            commands::pair::run(tool, prog, a)
        });
    }
    if argv.name == HOST_TRAFFIC_ORIGINAL {
        return argv.with(&argv.name, &argv.name, 1, commands::host_traffic::run);
    }
    let Some(cmd) = argv.first() else {
        return own(&fabdiag_report::support::overview(VERSION));
    };
    let sub = |name: &str| format!("fabdiag {name}");
    match cmd.as_str() {
        "-h" | "--help" | "help" => own(&fabdiag_report::support::overview(VERSION)),
        "-V" | "--version" => own(&format!("fabdiag {VERSION}\n")),
        "providers" => argv.with("fabdiag providers", "providers", 2, commands::probe::providers),
        "doctor" => argv.with("fabdiag doctor", "doctor", 2, commands::doctor::run),
        "health" => argv.with("fabdiag health", "health", 2, commands::health::run),
        "monitor" => argv.with("fabdiag monitor", "monitor", 2, commands::monitor::run),
        commands::doctor::PROBE => commands::doctor::probe(),
        "completions" => argv.with("fabdiag completions", "completions", 2, commands::docs::completions),
        "manpages" => argv.with("fabdiag manpages", "manpages", 2, commands::docs::manpages),
        "atomic-support" => argv.with(
            "fabdiag atomic-support",
            "atomic-support",
            2,
            commands::probe::atomic_support,
        ),
        "host-traffic" => argv.with(
            "fabdiag host-traffic",
            HOST_TRAFFIC_ORIGINAL,
            2,
            commands::host_traffic::run,
        ),
        "serve" => argv.with("fabdiag serve", "serve", 2, commands::serve::run),
        "sweep" => argv.with("fabdiag sweep", "sweep", 2, commands::sweep::run),
        "topology" => argv.with("fabdiag topology", "topology", 2, commands::topology::run),
        commands::serve::worker::COMMAND => argv.with("fabdiag serve", "serve", 2, commands::serve::worker::run),
        other => match Tool::from_subcommand(other).or_else(|| Tool::from_original(other)) {
            Some(tool) => argv.with(&sub(tool.subcommand()), tool.original_name(), 2, |prog, a| {
                commands::pair::run(tool, prog, a)
            }),
            None => {
                tell!("fabdiag: unknown command '{other}' (try fabdiag -h)");
                exit::USAGE
            }
        },
    }
}
