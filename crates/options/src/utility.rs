//! The command lines of fabdiag's utility commands: `providers`,
//! `atomic-support`, `doctor`, `completions` and `manpages`. Each answers
//! `-h` with its usage and refuses anything it does not take, in one line
//! naming it, with the same getopt rules as the tools (so `--` lets a
//! directory named `-h` through). Nothing here prints, probes or writes.

use crate::getopt::{self, Parsed};
use crate::resolve::{Action, OptionError};
use crate::row::{self, Row, Style};
use clap_complete::Shell;
use fabdiag_model::Provider;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UtilityOpt {
    Provider,
    Json,
    Watch,
    Help,
}

const STYLE: Style = Style::Getopt { width: 25 };

const HELP: Row<UtilityOpt> = Row::flag(UtilityOpt::Help, Some('h'), "help", &["Print this help text and exit"]);

const ATOMIC_SUPPORT: &[Row<UtilityOpt>] = &[
    Row::valued(
        UtilityOpt::Provider,
        Some('P'),
        "provider",
        "PROV",
        &["Only this provider"],
    ),
    Row::flag(UtilityOpt::Json, None, "json", &["The cells as JSON instead of tables"]).brief("JSON instead of tables"),
    HELP,
];

const DOCTOR: &[Row<UtilityOpt>] = &[
    Row::flag(UtilityOpt::Json, None, "json", &["JSON instead of text"]),
    Row::valued(
        UtilityOpt::Watch,
        None,
        "watch",
        "SECONDS",
        &[
            "Also read the NIC counters again SECONDS later (1 to",
            "3600) and show each that rose, with its rate",
        ],
    )
    .brief("Read the NIC counters again SECONDS later"),
    HELP,
];

const ONLY_HELP: &[Row<UtilityOpt>] = &[HELP];

/// The longest `doctor --watch`: an hour.
pub const MAX_WATCH_S: u64 = 3600;

/// The utility commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utility {
    Providers,
    AtomicSupport,
    Doctor,
    Completions,
    Manpages,
}

use Utility::*;

fn rows_of(command: Utility) -> &'static [Row<UtilityOpt>] {
    match command {
        AtomicSupport => ATOMIC_SUPPORT,
        Doctor => DOCTOR,
        Providers | Completions | Manpages => ONLY_HELP,
    }
}

/// A utility command's options but `-h`: what its shell completion
/// offers beside the shells' own help.
pub fn completion_options(command: Utility) -> Vec<row::Completion> {
    let rows: Vec<Row<UtilityOpt>> = rows_of(command)
        .iter()
        .filter(|r| r.id != UtilityOpt::Help)
        .copied()
        .collect();
    row::completions(&rows, &row::as_is)
}

/// The usage line of each utility command, as the errors quote it.
fn synopsis(command: Utility) -> &'static str {
    match command {
        Providers => "fabdiag providers",
        AtomicSupport => "fabdiag atomic-support [-P PROV] [--json]",
        Doctor => "fabdiag doctor [--json] [--watch SECONDS]",
        Completions => "fabdiag completions bash|zsh|fish [fabdiag|ORIGINAL_NAME]",
        Manpages => "fabdiag manpages DIR",
    }
}

/// `-h` of a utility command.
pub fn usage(command: Utility) -> String {
    let what = match command {
        Providers => {
            "The libfabric providers and domains on this machine, each with whether it
offers RMA writes, reads and messages (as the pair tools need them).
"
        }
        AtomicSupport => {
            "Which atomic operation, datatype and form each provider supports
(fi_atomicvalid, fi_fetch_atomicvalid, fi_compare_atomicvalid).
"
        }
        Doctor => {
            "What this node has for fabdiag (libfabric, providers, GPUs, huge pages,
clocks, each NIC's counters not at zero) and which tools can run on it;
exits 4 when none can.
"
        }
        Completions => {
            "Prints the completion script of fabdiag, or of an original tool name
(cxi_write_bw, gc-hosttraffictest, ...), for bash, zsh or fish.
"
        }
        Manpages => {
            "Writes every manual page (fabdiag.1, one per subcommand and one per
original tool name) into DIR, creating it if needed.
"
        }
    };
    let mut text = format!("Usage:\n  {}\n\n{what}", synopsis(command));
    if rows_of(command).len() > 1 {
        text.push_str("\nOptions:\n");
        text.push_str(&row::help_block(rows_of(command), STYLE, &row::as_is));
    }
    text
}

fn parse(command: Utility, args: &[String]) -> Result<Vec<Parsed<UtilityOpt>>, OptionError> {
    let tail = format!("(usage: {})", synopsis(command));
    let parsed = getopt::parse(rows_of(command), args).map_err(|m| OptionError::Invalid(format!("{m} {tail}")))?;
    Ok(parsed)
}

fn unexpected(command: Utility, what: &str) -> OptionError {
    OptionError::Invalid(format!("unexpected argument '{what}' (usage: {})", synopsis(command)))
}

/// A command whose only option is `-h`: its operands, or None for `-h`.
fn operands(command: Utility, args: &[String]) -> Result<Option<Vec<String>>, OptionError> {
    let mut out = Vec::new();
    for p in parse(command, args)? {
        match p {
            Parsed::Opt(UtilityOpt::Help, _) => return Ok(None),
            Parsed::Opt(..) => {}
            Parsed::Operand(x) => out.push(x),
        }
    }
    Ok(Some(out))
}

/// `fabdiag providers`: no options but `-h`.
pub fn providers(args: &[String]) -> Result<Action<()>, OptionError> {
    match operands(Providers, args)?.as_deref() {
        None => Ok(Action::Help),
        Some([]) => Ok(Action::Run(())),
        Some([x, ..]) => Err(unexpected(Providers, x)),
    }
}

/// `fabdiag atomic-support [-P PROV] [--json]`: the provider and JSON flag.
pub fn atomic_support(args: &[String]) -> Result<Action<(Option<Provider>, bool)>, OptionError> {
    let (mut provider, mut json) = (None, false);
    for p in parse(AtomicSupport, args)? {
        match p {
            Parsed::Opt(UtilityOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(UtilityOpt::Provider, v) => {
                provider = v
                    .as_deref()
                    .map(Provider::parse)
                    .transpose()
                    .map_err(|e| OptionError::Invalid(e.to_string()))?
            }
            Parsed::Opt(UtilityOpt::Json, _) => json = true,
            // (not among atomic-support's options: getopt never gives it)
            Parsed::Opt(UtilityOpt::Watch, _) => {}
            Parsed::Operand(x) => return Err(unexpected(AtomicSupport, &x)),
        }
    }
    Ok(Action::Run((provider, json)))
}

/// `fabdiag doctor [--json] [--watch SECONDS]`: whether JSON was asked
/// for, and how long to watch the NIC counters (None: one reading).
pub fn doctor(args: &[String]) -> Result<Action<(bool, Option<u64>)>, OptionError> {
    let (mut json, mut watch) = (false, None);
    for p in parse(Doctor, args)? {
        match p {
            Parsed::Opt(UtilityOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(UtilityOpt::Json, _) => json = true,
            Parsed::Opt(UtilityOpt::Watch, v) => {
                let v = v.unwrap_or_default();
                let s = v.parse::<u64>().ok().filter(|s| (1..=MAX_WATCH_S).contains(s));
                watch = Some(s.ok_or_else(|| {
                    OptionError::Invalid(format!("Invalid --watch: '{v}' (seconds, 1 to {MAX_WATCH_S})"))
                })?);
            }
            Parsed::Opt(..) => {}
            Parsed::Operand(x) => return Err(unexpected(Doctor, &x)),
        }
    }
    Ok(Action::Run((json, watch)))
}

/// `fabdiag completions SHELL [NAME]`: the shell and the name (default
/// `fabdiag`), as given; which names have a script is the caller's lookup.
pub fn completions(args: &[String]) -> Result<Action<(Shell, String)>, OptionError> {
    let Some(operands) = operands(Completions, args)? else {
        return Ok(Action::Help);
    };
    let tail = format!("(usage: {})", synopsis(Completions));
    let (shell, name) = match operands.as_slice() {
        [] => return Err(OptionError::Invalid(format!("which shell? {tail}"))),
        [shell] => (shell, "fabdiag"),
        [shell, name] => (shell, name.as_str()),
        [_, _, extra, ..] => return Err(unexpected(Completions, extra)),
    };
    let shell = match shell.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        other => {
            return Err(OptionError::Invalid(format!(
                "no completions for shell '{other}' {tail}"
            )))
        }
    };
    Ok(Action::Run((shell, name.to_string())))
}

/// `fabdiag manpages DIR`: the directory.
pub fn manpages(args: &[String]) -> Result<Action<String>, OptionError> {
    let Some(operands) = operands(Manpages, args)? else {
        return Ok(Action::Help);
    };
    match operands.as_slice() {
        [] => Err(OptionError::Invalid(format!("where? (usage: {})", synopsis(Manpages)))),
        [dir] if dir.is_empty() => Err(OptionError::Invalid("Invalid directory: ''".into())),
        [dir] => Ok(Action::Run(dir.clone())),
        [_, extra, ..] => Err(unexpected(Manpages, extra)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn refusal<T: std::fmt::Debug>(r: Result<Action<T>, OptionError>) -> String {
        match r {
            Err(OptionError::Invalid(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn every_utility_command_answers_help() {
        assert_eq!(providers(&args(&["-h"])), Ok(Action::Help));
        assert_eq!(atomic_support(&args(&["--help"])), Ok(Action::Help));
        assert_eq!(doctor(&args(&["-h"])), Ok(Action::Help));
        assert_eq!(completions(&args(&["-h"])), Ok(Action::Help));
        assert_eq!(manpages(&args(&["-h"])), Ok(Action::Help));
        for (c, name) in [
            (Providers, "providers"),
            (AtomicSupport, "atomic-support"),
            (Doctor, "doctor"),
            (Completions, "completions"),
            (Manpages, "manpages"),
        ] {
            let u = usage(c);
            assert!(u.starts_with(&format!("Usage:\n  fabdiag {name}")), "{u}");
        }
    }

    #[test]
    fn providers_takes_nothing_else() {
        assert_eq!(providers(&[]), Ok(Action::Run(())));
        assert_eq!(
            refusal(providers(&args(&["-x"]))),
            "invalid option -- 'x' (usage: fabdiag providers)"
        );
        assert_eq!(
            refusal(providers(&args(&["tcp"]))),
            "unexpected argument 'tcp' (usage: fabdiag providers)"
        );
    }

    #[test]
    fn atomic_support_options() {
        assert_eq!(
            atomic_support(&args(&["-P", "shm", "--json"])),
            Ok(Action::Run((Some(Provider::named("shm")), true)))
        );
        assert_eq!(atomic_support(&[]), Ok(Action::Run((None, false))));
        assert_eq!(
            refusal(atomic_support(&args(&["x"]))),
            "unexpected argument 'x' (usage: fabdiag atomic-support [-P PROV] [--json])"
        );
        assert_eq!(refusal(atomic_support(&args(&["-P", ""]))), "Invalid provider: ''");
    }

    #[test]
    fn doctor_options() {
        assert_eq!(doctor(&args(&["--json"])), Ok(Action::Run((true, None))));
        assert_eq!(doctor(&[]), Ok(Action::Run((false, None))));
        assert_eq!(doctor(&args(&["--watch", "10"])), Ok(Action::Run((false, Some(10)))));
        for bad in ["0", "3601", "ten", "-1", ""] {
            assert_eq!(
                refusal(doctor(&args(&["--watch", bad]))),
                format!("Invalid --watch: '{bad}' (seconds, 1 to 3600)")
            );
        }
        assert_eq!(
            refusal(doctor(&args(&["--bogus"]))),
            "unrecognized option '--bogus' (usage: fabdiag doctor [--json] [--watch SECONDS])"
        );
    }

    #[test]
    fn completions_operands() {
        assert_eq!(
            completions(&args(&["zsh"])),
            Ok(Action::Run((Shell::Zsh, "fabdiag".into())))
        );
        assert_eq!(
            completions(&args(&["bash", "cxi_write_bw"])),
            Ok(Action::Run((Shell::Bash, "cxi_write_bw".into())))
        );
        assert!(refusal(completions(&[])).starts_with("which shell? (usage: "));
        assert!(refusal(completions(&args(&["bash", "fabdiag", "x"]))).starts_with("unexpected argument 'x'"));
    }

    #[test]
    fn manpages_directory() {
        assert_eq!(manpages(&args(&["out"])), Ok(Action::Run("out".into())));
        // a directory that looks like an option is written after `--`
        assert_eq!(manpages(&args(&["--", "-h"])), Ok(Action::Run("-h".into())));
        assert_eq!(
            refusal(manpages(&args(&["-x"]))),
            "invalid option -- 'x' (usage: fabdiag manpages DIR)"
        );
        assert!(refusal(manpages(&[])).starts_with("where? "));
        assert!(refusal(manpages(&args(&["a", "b"]))).starts_with("unexpected argument 'b'"));
    }
}
