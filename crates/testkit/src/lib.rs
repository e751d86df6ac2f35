//! What the tests of every crate share, and nothing the tools use: a
//! dev-dependency only. Today that is `skipped`, the one way a test says
//! it (or part of it) could not run here. Decides nothing about a test's
//! outcome.

use std::io::Write;

/// Says that the running test (or the part named in `why`) could not run
/// here, and why. libtest keeps a passing test's `eprintln!` to itself, so
/// a skip said that way never reached a log and the test read "ok"; this
/// writes to the process's stderr directly, with the test's name (libtest
/// names each test's thread after it).
pub fn skipped(why: impl std::fmt::Display) {
    let t = std::thread::current();
    let _ = writeln!(std::io::stderr(), "SKIPPED {}: {why}", t.name().unwrap_or("a test"));
}
