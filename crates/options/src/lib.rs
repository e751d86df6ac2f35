//! fabdiag's command lines: argv in, typed settings out. `row` is the one
//! shape of an option of any command (parser, `-h`, completions and pages
//! read it); `table` holds the client/server tools' rows; `resolve` holds the checks they share; `bw`, `lat` and
//! `amo` resolve each family's options into an `Invocation` (a run spec for
//! the session library plus what the binary does with the outcome);
//! `serve`, `sweep`, `host_traffic` and `utility` are the other commands' lines;
//! `pages` says what every manual page holds, from the same tables (and the
//! guide's differences), `man` renders it as roff and `markdown` as the
//! guide's reference, and `completions` makes shell completion scripts. Option values keep
//! the originals' defaults, ranges and messages. Nothing here prints,
//! exits or touches the network.

pub mod amo;
pub mod bw;
pub mod completions;
mod getopt;
pub mod health;
pub mod host_traffic;
pub mod lat;
pub mod loopback;
pub mod man;
pub mod markdown;
pub mod monitor;
mod numbers;
pub mod pages;
pub mod resolve;
pub mod row;
pub mod serve;
pub mod sweep;
pub mod table;
pub mod topology;
pub mod utility;

pub use resolve::{Action, Invocation, OptionError, RunMode};
pub use table::Layout;

use fabdiag_model::{BwTool, Family, Tool};

/// The command line of `tool`.
pub fn layout(tool: Tool) -> Layout {
    match tool.family() {
        Family::Bandwidth(BwTool::GpuLoopbackBw) => loopback::layout(),
        Family::Bandwidth(t) => bw::layout(t),
        Family::Latency(t) => lat::layout(t),
        Family::Atomic { latency } => amo::layout(latency),
    }
}

/// `-h` of `tool`, under the name it was called by.
pub fn usage(tool: Tool, prog: &str) -> String {
    layout(tool).usage(prog)
}

/// Parses and validates a client/server tool's arguments.
pub fn parse(tool: Tool, args: &[String]) -> Result<Action<Invocation>, OptionError> {
    resolve_raw(tool, &raw_of(tool, args)?)
}

/// A sweep's tool options, as `parse`, except that `-d`, `-t` and `-r`
/// may each be a comma-separated list, from which the rank with local
/// rank `local_rank` takes its own (the `local_rank % n`-th): one NIC and
/// one GPU per rank of a node. Every index of a GPU list is checked, so
/// all ranks accept or refuse the same line; empty names in a `-d` list
/// are skipped.
pub fn parse_for_rank(tool: Tool, args: &[String], local_rank: usize) -> Result<Action<Invocation>, OptionError> {
    let mut raw = raw_of(tool, args)?;
    for (opt, what) in [
        (table::Opt::Device, None),
        (table::Opt::TxGpu, Some("Invalid src gpu device")),
        (table::Opt::RxGpu, Some("Invalid dest gpu device")),
    ] {
        // the last one counts, as for a tool (`Raw::last`)
        let Some(v) = raw.values.iter_mut().rev().find(|(o, _)| *o == opt).map(|(_, v)| v) else {
            continue;
        };
        let Some(list) = v.clone().filter(|l| l.contains(',')) else {
            continue;
        };
        let items: Vec<&str> = match what {
            None => list.split(',').filter(|s| !s.is_empty()).collect(),
            Some(what) => {
                let items: Vec<&str> = list.split(',').collect();
                for i in &items {
                    resolve::GpuRequest::parse(Some(i), None, None)
                        .map_err(|_| OptionError::Invalid(format!("{what}: {list} ('{i}' is not a GPU index)")))?;
                }
                items
            }
        };
        *v = items.get(local_rank % items.len().max(1)).map(|s| s.to_string());
    }
    resolve_raw(tool, &raw)
}

/// Flags as typed, or getopt's refusal.
fn raw_of(tool: Tool, args: &[String]) -> Result<table::Raw, OptionError> {
    layout(tool)
        .parse(args)
        .map_err(|m| OptionError::Invalid(format!("{m} (see -h)")))
}

fn resolve_raw(tool: Tool, raw: &table::Raw) -> Result<Action<Invocation>, OptionError> {
    match tool.family() {
        Family::Bandwidth(BwTool::GpuLoopbackBw) => loopback::resolve(raw),
        Family::Bandwidth(t) => bw::resolve(t, raw),
        Family::Latency(t) => lat::resolve(t, raw),
        Family::Atomic { latency } => amo::resolve(latency, raw),
    }
}

/// The option tests' one way in: the same parse as the binary.
#[cfg(test)]
pub(crate) mod testing {
    use super::{parse, Action, Invocation, OptionError};
    use fabdiag_model::Tool;

    pub fn run(tool: impl Into<Tool>, args: &[&str]) -> Result<Action<Invocation>, OptionError> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(tool.into(), &a)
    }

    /// The message of an expected refusal (getopt's own without " (see -h)").
    pub fn err(tool: impl Into<Tool>, args: &[&str]) -> String {
        match run(tool, args) {
            Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => {
                m.trim_end_matches(" (see -h)").to_string()
            }
            other => panic!("expected an error for {args:?}, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod rank_tests {
    use super::{parse, parse_for_rank, Action, OptionError};
    use fabdiag_model::Tool;

    fn gpu(tool: Tool, args: &[&str], local_rank: usize) -> Result<(Option<u32>, Option<u32>), OptionError> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse_for_rank(tool, &a, local_rank)? {
            Action::Run(inv) => Ok((inv.gpu.tx, inv.gpu.rx)),
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn a_gpu_list_gives_each_local_rank_its_own() {
        let args = ["-t", "0,1,2,3", "--rx-gpu=3,2,1,0", "-s", "4096"];
        for (local, want) in [(0, (0, 3)), (1, (1, 2)), (3, (3, 0)), (4, (0, 3)), (6, (2, 1))] {
            assert_eq!(
                gpu(Tool::WriteBw, &args, local),
                Ok((Some(want.0), Some(want.1))),
                "{local}"
            );
        }
        // one index: every local rank alike; none: no GPU
        assert_eq!(gpu(Tool::SendLat, &["-t5", "-r", "0,1"], 7), Ok((Some(5), Some(1))));
        assert_eq!(gpu(Tool::ReadBw, &["-s", "8"], 2), Ok((None, None)));
        // the last -t wins, as for the tools
        assert_eq!(gpu(Tool::WriteBw, &["-t", "0,1", "-t", "4"], 1), Ok((Some(4), None)));
        assert_eq!(gpu(Tool::WriteBw, &["-t", "0,x", "-t", "2,3"], 1), Ok((Some(3), None)));
    }

    #[test]
    fn every_index_of_a_list_is_checked_on_every_rank() {
        for local in 0..3 {
            for (args, msg) in [
                (["-t", "0,x"], "Invalid src gpu device: 0,x ('x' is not a GPU index)"),
                (
                    ["-r", "1,256"],
                    "Invalid dest gpu device: 1,256 ('256' is not a GPU index)",
                ),
                (["-t", "0,"], "Invalid src gpu device: 0, ('' is not a GPU index)"),
            ] {
                assert_eq!(
                    gpu(Tool::WriteBw, &args, local),
                    Err(OptionError::Invalid(msg.into())),
                    "{args:?} on local rank {local}"
                );
            }
        }
    }

    /// `-d` lists, picked by the same mechanism (moved here from the
    /// binary): empty names skipped, none left means no domain.
    #[test]
    fn a_nic_list_gives_each_local_rank_its_own() {
        let device = |args: &[&str], local: usize| {
            let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            match parse_for_rank(Tool::WriteBw, &a, local) {
                Ok(Action::Run(inv)) => inv.own.device,
                other => panic!("{args:?}: {other:?}"),
            }
        };
        assert_eq!(device(&["-d", "cxi0,cxi1"], 3).as_deref(), Some("cxi1"));
        assert_eq!(device(&["-d", "cxi0,,cxi1,"], 2).as_deref(), Some("cxi0"));
        assert_eq!(device(&["-d", ","], 0), None);
        assert_eq!(device(&["-d", "lo"], 5).as_deref(), Some("lo"));
    }

    #[test]
    fn a_tool_alone_takes_no_list() {
        let a: Vec<String> = ["-t", "0,1"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            parse(Tool::WriteBw, &a),
            Err(OptionError::Invalid("Invalid src gpu device: 0,1".into()))
        );
    }
}

#[cfg(test)]
mod poll_tests {
    use crate::testing::{err, run};
    use crate::Action;
    use fabdiag_model::{PollMode, Tool};

    fn poll_of(tool: Tool, args: &[&str]) -> PollMode {
        match run(tool, args) {
            Ok(Action::Run(inv)) => inv.own.poll,
            other => panic!("{tool:?} {args:?}: {other:?}"),
        }
    }

    #[test]
    fn every_pair_tool_polls_as_asked_and_spins_unless_asked() {
        for tool in Tool::all().filter(|t| *t != Tool::GpuLoopbackBw) {
            assert_eq!(poll_of(tool, &[]), PollMode::Spin, "{tool:?}");
            assert_eq!(poll_of(tool, &["--poll", "yield"]), PollMode::Yield, "{tool:?}");
            assert_eq!(poll_of(tool, &["--poll=spin"]), PollMode::Spin, "{tool:?}");
            assert_eq!(
                err(tool, &["--poll", "sleep"]),
                "Invalid poll mode: sleep. Must be spin or yield",
                "{tool:?}"
            );
        }
        // one process copying between its own buffers: nothing to share a core with
        assert_eq!(
            err(Tool::GpuLoopbackBw, &["--poll", "yield"]),
            "unrecognized option '--poll'"
        );
    }
}

/// Each command's usage line names only options its rows hold, and every
/// row is in its `-h`: the rows are the one list.
#[cfg(test)]
mod usage_tests {
    use crate::row::Completion;
    use crate::utility::{self, Utility};

    fn long_words(text: &str) -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter_map(|w| w.strip_prefix("--"))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }

    fn check(name: &str, usage: &str, options: &[Completion], also: &[&str]) {
        for word in long_words(usage) {
            assert!(
                options.iter().any(|c| c.long == word) || also.contains(&word.as_str()),
                "{name}: --{word} is in -h but not in its rows"
            );
        }
        for c in options {
            assert!(
                usage.contains(&format!("--{}", c.long)),
                "{name}: --{} not in -h",
                c.long
            );
        }
    }

    #[test]
    fn every_usage_names_only_its_own_rows() {
        check(
            "serve",
            &crate::serve::serve_usage("s"),
            &crate::serve::completions(),
            &[],
        );
        check("health", &crate::health::usage("h"), &crate::health::completions(), &[]);
        check(
            "monitor",
            &crate::monitor::usage("m"),
            &crate::monitor::completions(),
            &[],
        );
        check(
            "host-traffic",
            &crate::host_traffic::usage("t"),
            &crate::host_traffic::completions(),
            &[],
        );
        // a sweep's text also names the pair tool's options it passes on
        check(
            "sweep",
            &crate::sweep::sweep_usage("s"),
            &crate::sweep::completions(),
            &["poll", "min-bw", "max-lat"],
        );
        for c in [Utility::AtomicSupport, Utility::Doctor] {
            check(
                &format!("{c:?}"),
                &utility::usage(c),
                &utility::completion_options(c),
                &["help"],
            );
        }
    }
}
