//! `fabdiag providers` and `fabdiag atomic-support`: what this machine's
//! libfabric can do, probed by the session library, printed here.

use super::{load_libfabric, utility_args};
use crate::exit;
use crate::streams::print_stdout;
use fabdiag_options::utility::Utility;
use fabdiag_report::support::{atomic_matrix_text, providers_text};

pub fn providers(prog: &str, args: &[String]) -> u8 {
    if let Err(code) = utility_args(Utility::Providers, prog, fabdiag_options::utility::providers(args)) {
        return code;
    }
    let rows = load_libfabric().and_then(|()| fabdiag_session::providers());
    match rows {
        Ok(rows) => {
            print_stdout(&providers_text(&rows));
            exit::OK
        }
        Err(e) => {
            tell!("{prog}: {e}");
            exit::UNAVAILABLE
        }
    }
}

pub fn atomic_support(prog: &str, args: &[String]) -> u8 {
    let (provider, json) = match utility_args(
        Utility::AtomicSupport,
        prog,
        fabdiag_options::utility::atomic_support(args),
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    if let Err(e) = load_libfabric() {
        tell!("{prog}: {e}");
        return exit::UNAVAILABLE;
    }
    let support = match fabdiag_session::atomic_support(provider.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            tell!("{prog}: {e}");
            return if e.is_unavailable() {
                exit::UNAVAILABLE
            } else {
                exit::RUNTIME
            };
        }
    };
    // a provider that cannot be asked makes the answer incomplete
    for (p, e) in &support.unreachable {
        tell!("{prog}: {p}: {e}");
    }
    let code = if support.unreachable.is_empty() {
        exit::OK
    } else {
        exit::RUNTIME
    };
    if json {
        print_stdout(&(serde_json::to_string_pretty(&support.cells).unwrap_or_else(|_| "[]".into()) + "\n"));
    } else {
        print_stdout(&atomic_matrix_text(&support.cells));
    }
    code
}
