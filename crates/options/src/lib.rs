//! fabdiag's command lines: argv in, typed settings out. `table` defines
//! every option of the client/server tools once (parser and `-h` text
//! come from it); `resolve` holds the checks they share; `bw`, `lat` and
//! `amo` resolve each family's options into an `Invocation` (a run spec for
//! the session library plus what the binary does with the outcome);
//! `serve`, `sweep`, `traffic` and `utility` are the other commands' lines; `man` and
//! `completions` turn the same tables into manual pages and shell
//! completion scripts. Option values keep
//! the originals' defaults, ranges and messages. Nothing here prints,
//! exits or touches the network.

pub mod amo;
pub mod bw;
pub mod completions;
mod getopt;
pub mod lat;
pub mod loopback;
pub mod man;
mod numbers;
pub mod resolve;
pub mod serve;
pub mod sweep;
pub mod table;
pub mod traffic;
pub mod utility;

pub use resolve::{Action, Invocation, OptionError, RunMode};
pub use table::Layout;

use fabdiag_report::{BwTool, Family, Tool};

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
    let raw = layout(tool)
        .parse(args)
        .map_err(|m| OptionError::Invalid(format!("{m} (see -h)")))?;
    match tool.family() {
        Family::Bandwidth(BwTool::GpuLoopbackBw) => loopback::resolve(&raw),
        Family::Bandwidth(t) => bw::resolve(t, &raw),
        Family::Latency(t) => lat::resolve(t, &raw),
        Family::Atomic { latency } => amo::resolve(latency, &raw),
    }
}

/// The option tests' one way in: the same parse as the binary.
#[cfg(test)]
pub(crate) mod testing {
    use super::{parse, Action, Invocation, OptionError};
    use fabdiag_report::Tool;

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
