//! Banner lines every tool's renderer shares: a label padded to the
//! originals' width, the test-mode lines, and the Local/Remote pair.

use crate::legacy::LABEL_WIDTH;
use fabdiag_model::{Role, TestMode};

pub(crate) fn line(out: &mut String, label: &str, value: impl std::fmt::Display) {
    out.push_str(&format!("{label:<LABEL_WIDTH$}: {value}\n"));
}

/// `Test Type` and `Iterations` or `Duration`.
pub(crate) fn mode(out: &mut String, mode: TestMode) {
    match mode {
        TestMode::Iterations { iterations } => {
            line(out, "Test Type", "Iteration");
            line(out, "Iterations", iterations);
        }
        TestMode::Duration { duration_s } => {
            line(out, "Test Type", "Duration");
            line(out, "Duration", format!("{duration_s} seconds"));
        }
    }
}

/// `Local (client)` / `Remote (server)`, or the other way on a server.
pub(crate) fn addresses(out: &mut String, role: Role, local: &str, remote: &str) {
    let (me, peer) = match role {
        Role::Client => ("client", "server"),
        Role::Server => ("server", "client"),
    };
    line(out, &format!("Local ({me})"), local);
    line(out, &format!("Remote ({peer})"), remote);
}
