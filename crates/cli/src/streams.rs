//! The process's standard streams, written so that nothing written there
//! can panic or be lost unsaid: one line on stderr (`tell!`), stdout
//! written and flushed with its first failure kept, and the exit code
//! that failure turns a success into. A leaf: it knows exit codes and
//! nothing else of fabdiag.

use crate::exit;
use std::io::Write;
use std::sync::OnceLock;

/// Why standard output lost something: its first failed write, other
/// than a reader that went away. Kept here, once per process, because
/// stdout is one per process and is written from the main thread, a stop
/// signal's thread and the stuck-call guard alike, whichever of them then
/// decides the exit code.
static STDOUT_LOST: OnceLock<String> = OnceLock::new();

/// One line on stderr (`tell!`); a stderr that cannot be written is let
/// be: there is nobody left to tell.
pub fn print_stderr(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{line}");
}

pub fn print_stdout(s: &str) {
    write_stdout(|o| o.write_all(s.as_bytes()));
}

/// Writes to stdout with `f`, then flushes. A closed pipe (`| head`) is
/// the reader's choice and is not an error; any other failure (a full
/// disk, an I/O error) is kept for `stdout_verdict`: the output is
/// incomplete, so the run must not look like a success.
pub fn write_stdout(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut o = std::io::stdout().lock();
    let written = f(&mut o).and_then(|()| o.flush());
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = STDOUT_LOST.set(e.to_string());
        }
    }
}

/// The line that says stdout lost output, if it did.
pub fn stdout_lost() -> Option<String> {
    STDOUT_LOST
        .get()
        .map(|e| format!("cannot write to standard output ({e}): the output is incomplete"))
}

/// Says as `prog` that stdout lost output, if it did (before an exit
/// that is not a success anyway: a stop signal's, the stuck-call guard's).
pub fn tell_stdout_lost(prog: &str) {
    if let Some(l) = stdout_lost() {
        tell!("{prog}: {l}");
    }
}

/// A command's exit code, once its output is written: if stdout lost
/// any, one line says so and a success becomes a runtime failure (any
/// other code already says the run did not succeed, and is kept).
pub fn stdout_verdict(prog: &str, code: u8) -> u8 {
    tell_stdout_lost(prog);
    match STDOUT_LOST.get() {
        Some(_) if code == exit::OK => exit::RUNTIME,
        _ => code,
    }
}
