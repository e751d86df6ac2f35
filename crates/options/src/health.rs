//! The command line of `fabdiag health`, parsed with the same getopt rules
//! as the tools. Nothing here reads the expectations file or the machine.

use crate::getopt::{self, Parsed};
use crate::resolve::{Action, OptionError};
use crate::row::{self, Row, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HealthOpt {
    Budget,
    Expect,
    Domain,
    WriteExpect,
    StateDir,
    Topology,
    Json,
    Metrics,
    Slurm,
    DryRun,
    Node,
    Help,
}

const STYLE: Style = Style::Getopt { width: 25 };

const ROWS: &[Row<HealthOpt>] = &[
    Row::valued(
        HealthOpt::Expect,
        None,
        "expect",
        "FILE",
        &[
            "What this node must have and reach (TOML; default:",
            "{DEFAULT_EXPECT} if it exists; without one, only",
            "what is absent or broken fails)",
        ],
    )
    .brief("The expectations file (TOML)"),
    Row::valued(
        HealthOpt::Domain,
        Some('d'),
        "domain",
        "PROV:DOMAIN",
        &[
            "Also measure this NIC (libfabric provider and domain,",
            "e.g. verbs:mlx5_0, tcp:eth0); repeatable",
        ],
    )
    .brief("Also measure this NIC (PROV:DOMAIN)"),
    Row::valued(
        HealthOpt::Budget,
        None,
        "budget",
        "SEC",
        &["End with UNKNOWN after this many seconds (default: {DEFAULT_BUDGET_S})"],
    )
    .brief("End with UNKNOWN after this many seconds"),
    Row::valued(
        HealthOpt::WriteExpect,
        None,
        "write-expect",
        "FILE",
        &[
            "Write an expectations file from what this node",
            "measures now, with a 20 % margin (- for stdout)",
        ],
    )
    .brief("Write an expectations file from this node"),
    Row::valued(
        HealthOpt::StateDir,
        None,
        "state-dir",
        "DIR",
        &[
            "Where link counters are kept between runs, for rates",
            "(default: {DEFAULT_STATE_DIR})",
        ],
    )
    .brief("Where link counters are kept between runs"),
    Row::flag(
        HealthOpt::Topology,
        None,
        "topology",
        &[
            "Print each GPU's class to each NIC on the PCI tree",
            "(as nvidia-smi topo -m names them) and exit",
        ],
    )
    .brief("Print each GPU's class to each NIC and exit"),
    Row::flag(
        HealthOpt::Json,
        None,
        "json",
        &["One JSON document (schema fabdiag-health/1)"],
    )
    .brief("One JSON document"),
    Row::valued(
        HealthOpt::Metrics,
        None,
        "metrics",
        "FILE",
        &[
            "Also write the verdict and every check's to FILE in",
            "Prometheus's text format (for node_exporter's",
            "textfile collector)",
        ],
    )
    .brief("Also write the verdict to FILE for Prometheus"),
    Row::flag(
        HealthOpt::Slurm,
        None,
        "slurm",
        &[
            "Drain this node on CRITICAL (reason \"fabdiag: ...\"),",
            "resume it on OK if fabdiag drained it",
        ],
    )
    .brief("Drain on CRITICAL, resume on OK"),
    Row::flag(
        HealthOpt::DryRun,
        None,
        "dry-run",
        &["With --slurm: print the scontrol command, run nothing"],
    )
    .brief("With --slurm: print the scontrol command"),
    Row::valued(
        HealthOpt::Node,
        None,
        "node",
        "NAME",
        &[
            "The Slurm node name (default: $SLURMD_NODENAME, else",
            "the short host name)",
        ],
    )
    .brief("The Slurm node name"),
    Row::flag(HealthOpt::Help, Some('h'), "help", &["Print this help text and exit"]),
];

/// The default expectations file, read when it exists.
pub const DEFAULT_EXPECT: &str = "/etc/fabdiag/health.toml";
/// Where the counters read last time are kept.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/fabdiag";
/// Seconds a run may take before it ends itself with UNKNOWN (Slurm kills
/// a HealthCheckProgram after 60 s).
pub const DEFAULT_BUDGET_S: f64 = 10.0;

/// Every option of `fabdiag health`: what its shell completion offers.
pub fn completions() -> Vec<row::Completion> {
    row::completions(ROWS, &fill)
}

fn fill(line: &str) -> String {
    let pairs = [
        ("DEFAULT_EXPECT", DEFAULT_EXPECT.to_string()),
        ("DEFAULT_BUDGET_S", DEFAULT_BUDGET_S.to_string()),
        ("DEFAULT_STATE_DIR", DEFAULT_STATE_DIR.to_string()),
    ];
    row::fill_in(line, &pairs)
}

#[derive(Clone, Debug, PartialEq)]
pub struct HealthOptions {
    pub budget_s: f64,
    /// `--expect`: a file that must exist (None: the default, if there).
    pub expect: Option<String>,
    /// `-d PROV:DOMAIN`: NICs to measure beside the file's.
    pub domains: Vec<(String, String)>,
    pub write_expect: Option<String>,
    pub state_dir: String,
    pub topology: bool,
    pub json: bool,
    /// `--metrics FILE`: the verdict for Prometheus too.
    pub metrics: Option<String>,
    pub slurm: bool,
    pub dry_run: bool,
    pub node: Option<String>,
}

pub fn usage(prog: &str) -> String {
    format!(
        "Usage:
  {prog} [--expect FILE] [-d PROV:DOMAIN]... [--budget SEC] [--json]
         [--metrics FILE] [--slurm [--dry-run] [--node NAME]] [--state-dir DIR]
  {prog} --write-expect FILE [-d PROV:DOMAIN]...
  {prog} --topology
                         A verdict on this node: OK, WARNING, CRITICAL or UNKNOWN

Options:
{}
The first line is the verdict; one line per check follows. Exit codes are
Nagios's: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (a bad option or file too).
",
        row::help_block(ROWS, STYLE, &fill)
    )
}

fn positive_seconds(v: &str) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 1.0 && *s <= 3600.0)
}

pub fn parse(args: &[String]) -> Result<Action<HealthOptions>, OptionError> {
    let mut o = HealthOptions {
        budget_s: DEFAULT_BUDGET_S,
        expect: None,
        domains: Vec::new(),
        write_expect: None,
        state_dir: DEFAULT_STATE_DIR.into(),
        topology: false,
        json: false,
        metrics: None,
        slurm: false,
        dry_run: false,
        node: None,
    };
    let bad = |m: String| OptionError::Invalid(m);
    for p in getopt::parse(ROWS, args).map_err(|m| bad(format!("{m} (see -h)")))? {
        match p {
            Parsed::Opt(HealthOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(id, v) => apply(&mut o, id, v.unwrap_or_default())?,
            Parsed::Operand(x) => return Err(bad(format!("Unexpected argument: {x} (see -h)"))),
        }
    }
    if o.dry_run && !o.slurm {
        return Err(bad("--dry-run goes with --slurm".into()));
    }
    if o.write_expect.is_some() && o.slurm {
        return Err(bad(
            "--write-expect measures a known-good node; it does not go with --slurm".into(),
        ));
    }
    Ok(Action::Run(o))
}

/// One option `id` with its value `v` into `o`.
fn apply(o: &mut HealthOptions, id: HealthOpt, v: String) -> Result<(), OptionError> {
    let bad = |m: String| OptionError::Invalid(m);
    let nonempty = |what: &str| match v.is_empty() {
        true => Err(bad(format!("Invalid {what}: ''"))),
        false => Ok(v.clone()),
    };
    match id {
        HealthOpt::Help => {}
        HealthOpt::Budget => {
            o.budget_s =
                positive_seconds(&v).ok_or_else(|| bad(format!("Invalid budget: {v} (seconds, 1 to 3600)")))?;
        }
        HealthOpt::Expect => o.expect = Some(nonempty("expectations file")?),
        HealthOpt::WriteExpect => o.write_expect = Some(nonempty("file to write")?),
        HealthOpt::StateDir => o.state_dir = nonempty("state directory")?,
        HealthOpt::Node => o.node = Some(nonempty("node name")?),
        HealthOpt::Metrics => o.metrics = Some(nonempty("metrics file")?),
        HealthOpt::Domain => match v.split_once(':') {
            Some((p, d)) if !p.is_empty() && !d.is_empty() => o.domains.push((p.into(), d.into())),
            _ => {
                return Err(bad(format!(
                    "Invalid domain: '{v}' (PROVIDER:DOMAIN, e.g. verbs:mlx5_0)"
                )))
            }
        },
        HealthOpt::Topology => o.topology = true,
        HealthOpt::Json => o.json = true,
        HealthOpt::Slurm => o.slurm = true,
        HealthOpt::DryRun => o.dry_run = true,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn run(a: &[&str]) -> HealthOptions {
        match parse(&args(a)) {
            Ok(Action::Run(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn health_options() {
        let o = run(&[
            "-d",
            "tcp:lo",
            "--domain=verbs:mlx5_0",
            "--budget",
            "20",
            "--slurm",
            "--dry-run",
        ]);
        assert_eq!(
            o.domains,
            vec![("tcp".into(), "lo".into()), ("verbs".into(), "mlx5_0".into())]
        );
        assert_eq!((o.budget_s, o.slurm, o.dry_run), (20.0, true, true));
        let d = run(&[]);
        assert_eq!(
            (d.budget_s, d.expect, d.state_dir.as_str()),
            (10.0, None, DEFAULT_STATE_DIR)
        );
        for (a, msg) in [
            (
                &["-d", "lo"][..],
                "Invalid domain: 'lo' (PROVIDER:DOMAIN, e.g. verbs:mlx5_0)",
            ),
            (&["--budget", "0.5"], "Invalid budget: 0.5 (seconds, 1 to 3600)"),
            (&["--budget", "nan"], "Invalid budget: nan (seconds, 1 to 3600)"),
            (&["--dry-run"], "--dry-run goes with --slurm"),
            (&["--expect="], "Invalid expectations file: ''"),
            (&["x"], "Unexpected argument: x (see -h)"),
        ] {
            assert_eq!(parse(&args(a)), Err(OptionError::Invalid(msg.into())), "{a:?}");
        }
        assert_eq!(parse(&args(&["-h"])), Ok(Action::Help));
        for c in completions() {
            let (long, help) = (c.long, c.brief);
            assert!(!help.is_empty(), "--{long} has no help line");
            assert!(
                usage("fabdiag health").contains(&format!("--{long}")),
                "--{long} not in the usage"
            );
        }
    }
}
