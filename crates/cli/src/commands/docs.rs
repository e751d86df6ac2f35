//! `fabdiag completions SHELL [NAME]` and `fabdiag manpages DIR`: shell
//! completion scripts and manual pages, generated from the option tables
//! that print `-h` (the package build runs these).

use super::utility_args;
use crate::exit;
use crate::streams::print_stdout;
use crate::version::VERSION;
use fabdiag_options::completions::script;
use fabdiag_options::utility::Utility;

pub fn completions(prog: &str, args: &[String]) -> u8 {
    let (shell, name) = match utility_args(Utility::Completions, prog, fabdiag_options::utility::completions(args)) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let usage = format!("(usage: {prog} bash|zsh|fish [fabdiag|ORIGINAL_NAME])");
    match script(shell, &name) {
        Some(s) => {
            print_stdout(&s);
            exit::OK
        }
        None => {
            tell!("{prog}: no tool named '{name}' {usage}");
            exit::USAGE
        }
    }
}

pub fn manpages(prog: &str, args: &[String]) -> u8 {
    let dir = match utility_args(Utility::Manpages, prog, fabdiag_options::utility::manpages(args)) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let dir = std::path::Path::new(&dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        tell!("{prog}: cannot create {}: {e}", dir.display());
        return exit::RUNTIME;
    }
    for page in fabdiag_options::man::pages(VERSION) {
        let path = dir.join(format!("{}.1", page.name));
        // whole, never through a link planted at the page's name
        if let Err(e) = fabdiag_files::write::whole(&path, page.roff.as_bytes()) {
            tell!("{prog}: cannot write {}: {e}", path.display());
            return exit::RUNTIME;
        }
    }
    exit::OK
}
