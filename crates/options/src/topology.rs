//! The command line of `fabdiag topology`, parsed with the same getopt
//! rules as the tools: the map's sources as operands, or `--generate` to
//! write a map to start from. Nothing here reads a map.

use crate::getopt::{self, Parsed};
use crate::resolve::{Action, OptionError};
use crate::row::{self, Row, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TopologyOpt {
    Generate,
    Expect,
    Draw,
    Json,
    Help,
}

const STYLE: Style = Style::Getopt { width: 25 };

const ROWS: &[Row<TopologyOpt>] = &[
    Row::valued(
        TopologyOpt::Generate,
        None,
        "generate",
        "SHAPE",
        &[
            "Write a map to start from instead: fat-tree:LEAVES,",
            "SPINES,HOSTS_PER_LEAF or dragonfly:GROUPS,ROUTERS,",
            "HOSTS_PER_ROUTER (hosts node0.. in rank order)",
        ],
    )
    .brief("Write a generated map (fat-tree:L,S,H or dragonfly:G,R,H)"),
    Row::valued(
        TopologyOpt::Expect,
        None,
        "expect",
        "FILE",
        &[
            "The expected wiring: list every switch, host and",
            "cable that differs from it; exits 3 when any does",
        ],
    )
    .brief("List what differs from the expected wiring in FILE"),
    Row::flag(
        TopologyOpt::Draw,
        None,
        "draw",
        &["Draw the map: each switch under the ones above it,", "with its hosts"],
    )
    .brief("Draw the map as text"),
    Row::flag(TopologyOpt::Json, None, "json", &["The map (and differences) as JSON"]),
    Row::flag(TopologyOpt::Help, Some('h'), "help", &["Print this help text and exit"]),
];

/// What `fabdiag topology` was asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyOptions {
    /// The map's sources (map files, Slurm's topology.conf or scontrol's
    /// output), made one map in this order.
    pub sources: Vec<String>,
    pub generate: Option<String>,
    pub expect: Option<String>,
    pub draw: bool,
    pub json: bool,
}

const SYNOPSIS: &str = "fabdiag topology SOURCE... [--expect FILE] [--draw] [--json]
  fabdiag topology --generate SHAPE";

/// `-h` of `fabdiag topology`.
pub fn usage() -> String {
    format!(
        "Usage:
  {SYNOPSIS}

What the fabric's map says: its switches by level, the hosts under each
and the cables between them, checked whole. A SOURCE is a map file (TOML),
Slurm's topology.conf or what `scontrol show topology` prints,
ibnetdiscover's output, the switches' forwarding tables (dump_lfts or
ibroute output), or a folder of lldpctl -f json outputs (DEVICE.json);
several are made one map (a file for the switches, another for the hosts).

Options:
{}",
        row::help_block(ROWS, STYLE, &row::as_is)
    )
}

/// Its options but `-h`, for shell completion.
pub fn completions() -> Vec<row::Completion> {
    let rows: Vec<Row<TopologyOpt>> = ROWS.iter().filter(|r| r.id != TopologyOpt::Help).copied().collect();
    row::completions(&rows, &row::as_is)
}

/// `fabdiag topology`'s arguments.
pub fn parse(args: &[String]) -> Result<Action<TopologyOptions>, OptionError> {
    let tail = "(usage: fabdiag topology SOURCE... or --generate SHAPE)";
    let mut o = TopologyOptions::default();
    for p in getopt::parse(ROWS, args).map_err(|m| OptionError::Invalid(format!("{m} {tail}")))? {
        match p {
            Parsed::Opt(TopologyOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(TopologyOpt::Generate, v) => o.generate = v,
            Parsed::Opt(TopologyOpt::Expect, v) => o.expect = v,
            Parsed::Opt(TopologyOpt::Draw, _) => o.draw = true,
            Parsed::Opt(TopologyOpt::Json, _) => o.json = true,
            Parsed::Operand(x) => o.sources.push(x),
        }
    }
    match (&o.generate, o.sources.first()) {
        (Some(_), Some(s)) => Err(OptionError::Invalid(format!(
            "--generate writes a map of its own: give no source ('{s}') {tail}"
        ))),
        (Some(_), None) if o.expect.is_some() || o.draw => Err(OptionError::Invalid(format!(
            "--generate takes no --expect or --draw {tail}"
        ))),
        (None, None) => Err(OptionError::Invalid(format!("which map? {tail}"))),
        _ => Ok(Action::Run(o)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn refusal(a: &[&str]) -> String {
        match parse(&args(a)) {
            Err(OptionError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sources_and_options_are_read_and_nonsense_refused() {
        let Ok(Action::Run(o)) = parse(&args(&["a.toml", "topology.conf", "--expect", "w.toml", "--draw"])) else {
            panic!()
        };
        assert_eq!(o.sources, ["a.toml", "topology.conf"]);
        assert_eq!((o.expect.as_deref(), o.draw, o.json), (Some("w.toml"), true, false));
        assert!(matches!(parse(&args(&["-h"])), Ok(Action::Help)));
        assert!(refusal(&[]).starts_with("which map?"));
        assert!(refusal(&["--generate", "fat-tree:2,1,1", "a.toml"]).contains("give no source ('a.toml')"));
        assert!(refusal(&["--generate", "fat-tree:2,1,1", "--draw"]).contains("no --expect or --draw"));
        assert!(refusal(&["--colour"]).contains("colour"));
        assert!(usage().contains("--generate SHAPE"));
    }
}
