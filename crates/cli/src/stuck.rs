//! The guard of a run against a provider call that never returns: psm3
//! polls inside fi_writemsg for a peer that is gone, so the
//! session's own time limits, which run between calls, never come. A
//! thread polls the endpoints the session opened and, once one has been
//! inside a data call for `STUCK_AFTER`, has the command report it (a
//! pair tool: with what it measured, as a stop signal's report does; a
//! serve worker: to its server) and ends the process with the runtime
//! exit code. Never touches the fabric itself.

use crate::exit;
use fabdiag_fabric::{CallWatcher, StuckCall};
use std::io::Write;
use std::time::Duration;

/// Twice the session's limit on a run without completions (5 s): no
/// single call of a working provider takes that long (the largest
/// transfer, 4 GiB, is one memory copy: under a second at the 11 GB/s
/// shm's write-bw reaches on this 2-core VM).
pub const STUCK_AFTER: Duration = Duration::from_secs(10);

/// What a command says when the guard cannot start.
pub const UNGUARDED: &str = "warning: cannot start the guard against a provider call that never returns";

/// The line that says so: `where_` is where the run was (" during run
/// (2 sizes measured)", or nothing).
pub fn line(call: &StuckCall, where_: &str) -> String {
    format!("{call}{where_}: it waits inside the call, for a peer or a link that is gone")
}

/// Starts the guard over the endpoints `calls` will be given; `report`
/// says what a stuck call ended, or returns false when the outcome is
/// already being told (then that ends the process). Returns false if the
/// thread could not start (the run goes on unguarded).
pub fn guard(calls: CallWatcher, report: impl Fn(&StuckCall) -> bool + Send + 'static) -> bool {
    std::thread::Builder::new()
        .name("fabdiag-stuck".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            let Some(call) = calls.stuck(STUCK_AFTER) else {
                continue;
            };
            if !report(&call) {
                return;
            }
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            // exit() runs libfabric's destructors while the stuck call is
            // still inside the provider (psm3's ended the process promptly
            // when tried). Should one hang there, this thread's twin ends
            // the process anyway; the cli crate has no unsafe code, so no
            // _exit(), and nix offers none.
            let _ = std::thread::Builder::new().spawn(|| {
                std::thread::sleep(Duration::from_secs(5));
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            });
            std::process::exit(i32::from(exit::RUNTIME))
        })
        .is_ok()
}
