//! The process's arguments as the OS gives them. Nothing is assumed to be
//! UTF-8: a command's arguments that are not end in one line naming the
//! argument (and a JSON document when `--json` was asked for), never in a
//! panic.

use crate::{exit, output, streams};
use std::ffi::OsString;
use std::path::Path;

pub struct Argv {
    /// The name fabdiag was called by (basename of argv[0]).
    pub name: String,
    args: Vec<OsString>,
}

impl Argv {
    pub fn from_env() -> Argv {
        let mut it = std::env::args_os();
        let name = it
            .next()
            .and_then(|a| Path::new(&a).file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "fabdiag".into());
        Argv {
            name,
            args: it.collect(),
        }
    }

    /// The first argument (a subcommand), with anything that is not UTF-8
    /// replaced, so it can still be named in an error.
    pub fn first(&self) -> Option<String> {
        self.args.first().map(|a| a.to_string_lossy().into_owned())
    }

    /// Runs `f` as program `prog` on the arguments from number `from` (1 is
    /// the first after the program name), once all of them are text.
    /// `tool` names the program in a JSON error document.
    pub fn with(&self, prog: &str, tool: &str, from: usize, f: impl FnOnce(&str, &[String]) -> u8) -> u8 {
        let rest = self.args.get(from - 1..).unwrap_or(&[]);
        let text: Vec<String> = rest.iter().filter_map(|a| a.to_str().map(str::to_string)).collect();
        if let Some(bad) = rest.iter().find(|a| a.to_str().is_none()) {
            let msg = format!("invalid argument {bad:?}: not valid UTF-8");
            let json = text.iter().any(|a| a == "--json");
            return output::early_failure(tool, prog, json, exit::USAGE, &msg);
        }
        streams::stdout_verdict(prog, f(prog, &text))
    }
}
