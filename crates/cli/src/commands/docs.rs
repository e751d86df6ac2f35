//! `fabdiag completions SHELL [NAME]` and `fabdiag manpages DIR`: shell
//! completion scripts and manual pages, generated from the option tables
//! that print `-h` (the package build runs these).

use crate::output::print_stdout;
use crate::{exit, VERSION};
use fabdiag_options::completions::{script, Shell};

pub fn completions(prog: &str, args: &[String]) -> u8 {
    let usage = format!("(usage: {prog} bash|zsh|fish [fabdiag|ORIGINAL_NAME])");
    let shell = match args.first().map(String::as_str) {
        Some("bash") => Shell::Bash,
        Some("zsh") => Shell::Zsh,
        Some("fish") => Shell::Fish,
        Some(other) => {
            eprintln!("{prog}: no completions for shell '{other}' {usage}");
            return exit::USAGE;
        }
        None => {
            eprintln!("{prog}: which shell? {usage}");
            return exit::USAGE;
        }
    };
    let name = args.get(1).map_or("fabdiag", String::as_str);
    if args.len() > 2 {
        eprintln!("{prog}: unexpected argument '{}' {usage}", args[2]);
        return exit::USAGE;
    }
    match script(shell, name) {
        Some(s) => {
            print_stdout(&s);
            exit::OK
        }
        None => {
            eprintln!("{prog}: no tool named '{name}' {usage}");
            exit::USAGE
        }
    }
}

pub fn manpages(prog: &str, args: &[String]) -> u8 {
    let [dir] = args else {
        eprintln!("{prog}: where? (usage: {prog} DIR)");
        return exit::USAGE;
    };
    let dir = std::path::Path::new(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("{prog}: cannot create {}: {e}", dir.display());
        return exit::RUNTIME;
    }
    for page in fabdiag_options::man::pages(VERSION) {
        let path = dir.join(format!("{}.1", page.name));
        if let Err(e) = std::fs::write(&path, page.roff) {
            eprintln!("{prog}: cannot write {}: {e}", path.display());
            return exit::RUNTIME;
        }
    }
    exit::OK
}
