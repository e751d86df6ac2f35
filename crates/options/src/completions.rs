//! Shell completions for bash, zsh and fish, from the same option rows
//! that print `-h`. The tables are turned into a `clap::Command` only to
//! hand it to `clap_complete`, which knows each shell's completion
//! machinery (fabdiag's own getopt parser stays the one that parses).
//! Pure: scripts are returned as text.

use crate::layout;
use crate::row::Completion;
use crate::utility::{self, Utility};
use clap::{Arg, ArgAction, Command};
pub use clap_complete::Shell;
use fabdiag_model::{Tool, HOST_TRAFFIC_ORIGINAL};

/// A command of its own name, with its rows' options; its -h and -V (where
/// it has them) are among the rows.
fn own(name: &'static str, about: &'static str, options: Vec<Completion>) -> Command {
    let cmd = Command::new(name)
        .about(about)
        .disable_help_flag(true)
        .disable_version_flag(true);
    with_options(cmd, options)
}

/// `cmd` with every option of a command's rows.
fn with_options(mut cmd: Command, options: Vec<Completion>) -> Command {
    for c in &options {
        cmd = cmd.arg(flag(c));
    }
    cmd
}

/// A command with a tool's options (hidden aliases left out).
fn tool_command(name: &'static str, tool: Tool) -> Command {
    own(name, tool.summary(), layout(tool).completions()).arg(Arg::new("ADDR").help("The server's address (a client)"))
}

fn flag(c: &Completion) -> Arg {
    let arg = Arg::new(c.long).long(c.long).help(c.brief.clone());
    let arg = match c.short {
        Some(letter) => arg.short(letter),
        None => arg,
    };
    if c.takes_arg {
        arg.action(ArgAction::Set).num_args(1)
    } else {
        arg.action(ArgAction::SetTrue)
    }
}

/// The host traffic test's command line.
fn traffic_command(name: &'static str) -> Command {
    own(
        name,
        "Host <-> GPU traffic, as gc-hosttraffictest",
        crate::host_traffic::completions(),
    )
}

/// fabdiag with every subcommand.
fn fabdiag() -> Command {
    let mut cmd = Command::new("fabdiag")
        .about("Fabric diagnostics on libfabric")
        .disable_help_subcommand(true);
    for t in Tool::all() {
        cmd = cmd.subcommand(tool_command(t.subcommand(), t));
    }
    cmd.subcommand(own(
        "serve",
        "One server for every tool, client after client",
        crate::serve::completions(),
    ))
    .subcommand(own(
        "sweep",
        "Test every pair of ranks and name the slow link or node",
        crate::sweep::completions(),
    ))
    .subcommand(own(
        "health",
        "A verdict on this node: OK, WARNING, CRITICAL or UNKNOWN",
        crate::health::completions(),
    ))
    .subcommand(own(
        "monitor",
        "Probe peers on a schedule and serve the figures for Prometheus",
        crate::monitor::completions(),
    ))
    .subcommand(own(
        "topology",
        "What the fabric's map says, drawn, or against the expected wiring",
        crate::topology::completions(),
    ))
    .subcommand(traffic_command("host-traffic"))
    .subcommand(Command::new("providers").about("libfabric providers and domains on this machine"))
    .subcommand(with_options(
        Command::new("atomic-support").about("Which atomics each provider supports"),
        utility::completion_options(Utility::AtomicSupport),
    ))
    .subcommand(with_options(
        Command::new("doctor").about("What this node has, and which tools can run on it"),
        utility::completion_options(Utility::Doctor),
    ))
    .subcommand(
        Command::new("completions")
            .about("Print a shell completion script")
            .arg(Arg::new("SHELL").value_parser(["bash", "zsh", "fish"])),
    )
    .subcommand(
        Command::new("manpages")
            .about("Write the manual pages into a directory")
            .arg(Arg::new("DIR")),
    )
}

/// The completion script of `shell` for `name`: "fabdiag" or an original
/// tool name such as "cxi_write_bw".
pub fn script(shell: Shell, name: &str) -> Option<String> {
    let mut cmd = if name == "fabdiag" {
        fabdiag()
    } else if name == HOST_TRAFFIC_ORIGINAL {
        traffic_command(HOST_TRAFFIC_ORIGINAL)
    } else {
        let tool = Tool::from_original(name)?;
        tool_command(tool.original_name(), tool)
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut out);
    String::from_utf8(out).ok()
}

/// Every name completions are installed for.
pub fn names() -> Vec<&'static str> {
    let mut v = vec!["fabdiag", HOST_TRAFFIC_ORIGINAL];
    v.extend(Tool::all().map(Tool::original_name));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_shell_gets_a_script_with_its_options() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            for name in names() {
                let s = script(shell, name).unwrap_or_else(|| panic!("{shell} {name}"));
                assert!(s.contains(name), "{shell} {name}");
            }
            let f = script(shell, "fabdiag").unwrap();
            for word in [
                "write-bw",
                "atomic-lat",
                "serve",
                "doctor",
                "health",
                "write-expect",
                "bidirectional",
                "sweep",
                "outlier-fraction",
                "monitor",
                "bw-interval",
            ] {
                assert!(f.contains(word), "{shell}: {word}");
            }
            let w = script(shell, "cxi_send_bw").unwrap();
            assert!(w.contains("rdzv") && w.contains("min-bw"), "{shell}");
        }
        assert!(script(Shell::Bash, "cxi_nothing").is_none());
    }

    #[test]
    fn serve_completes_every_option_its_parser_takes() {
        let all = fabdiag();
        let serve = all.find_subcommand("serve").expect("serve");
        let longs: Vec<&str> = serve.get_arguments().filter_map(|a| a.get_long()).collect();
        for c in crate::serve::completions() {
            assert!(longs.contains(&c.long), "serve --{} missing from {longs:?}", c.long);
        }
        assert!(longs.contains(&"tx-gpu") && longs.contains(&"gpu-type"), "{longs:?}");
    }
}
