//! SIGINT and SIGTERM for the commands that must not lose what they hold
//! when stopped: `serve` (ends its test and says so), the pair tools
//! (print what they measured, then die by the signal as usual) and the
//! sweep (ends after the round in progress and reports; a second signal
//! ends it at once). The signals are blocked and taken by one thread with
//! sigwait rather than caught by a handler: the PSM library that libfabric
//! 1.17 loads installs its own handlers for them, which end the process
//! with status 1 (docs/known-defects.md), and a handler would be chained
//! to those. `on_stop` must run before any other thread starts (threads
//! inherit the blocked mask). Child processes inherit it too (the
//! standard library keeps the parent's mask, rust-lang/rust#101077): a
//! child of a command that watches for a stop is not stopped by the
//! signal itself but by its parent, as `serve` ends its workers (which
//! hold the signals themselves as well, `hold_stop`, so as not to rest on
//! that). The thread that takes them, like every helper, uses no
//! descriptor opened after the run began (the measuring thread may by
//! then have a table of its own, `fabdiag_fabric::fd_table`): it reports
//! on standard output and error, and opens anything else by path.

use nix::sys::signal::{SigSet, Signal};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Blocks SIGINT and SIGTERM in this thread (and every thread it starts
/// later) and calls `stopped` from a thread of its own with the first one
/// that arrives.
pub fn on_stop(stopped: impl FnOnce(Signal) + Send + 'static) -> nix::Result<()> {
    let set = stop_set();
    set.thread_block()?;
    let waiter = std::thread::Builder::new()
        .name("fabdiag-signals".into())
        .spawn(move || {
            if let Ok(sig) = set.wait() {
                stopped(sig);
            }
        });
    if waiter.is_err() {
        // nobody would take them: blocked, they would be ignored
        let _ = set.thread_unblock();
        return Err(nix::Error::EAGAIN);
    }
    Ok(())
}

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts
/// later, and takes them nowhere: for `fabdiag serve`'s workers, which
/// their server ends (a Ctrl-C reaches the whole process group, and a
/// worker already tearing down a measured test must live to report it).
/// Before any other thread starts.
pub fn hold_stop() -> nix::Result<()> {
    stop_set().thread_block()
}

/// The lock on what a stop signal reports, even if a thread panicked
/// holding it (the data is plain).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// On the first SIGINT or SIGTERM: `report` what `kept` holds (under its
/// lock, so the command cannot change it midway), say as `who` if stdout
/// lost output, then die by the signal.
/// For a command that keeps its results as it goes (the pair tools,
/// host-traffic); `report` decides whether anything is left to say.
pub fn report_on_stop<T: Send + 'static>(
    who: &str,
    kept: Arc<Mutex<T>>,
    report: impl FnOnce(&T, Signal) + Send + 'static,
) -> nix::Result<()> {
    let who = who.to_string();
    on_stop(move |sig| {
        let k = lock(&kept);
        // a report that fails halfway must not keep the process from the
        // end the signal asked for: this thread is the only one that
        // takes SIGINT and SIGTERM
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report(&k, sig)));
        drop(k);
        crate::streams::tell_stdout_lost(&who);
        die_by(sig)
    })
}

/// The first stop signal, once one came, for a command that acts on it at
/// its own pace (serve between connections, the sweep between rounds); a
/// second one ends the process at once.
#[derive(Clone, Default)]
pub struct Stop(Arc<AtomicI32>);

impl Stop {
    /// Watches for SIGINT and SIGTERM; before any other thread starts.
    pub fn watch() -> nix::Result<Stop> {
        let stop = Stop::default();
        let flag = Arc::clone(&stop.0);
        on_stop(move |sig| {
            flag.store(sig as i32, Ordering::Relaxed);
            if let Some(again) = next() {
                die_by(again)
            }
        })?;
        Ok(stop)
    }

    pub fn signal(&self) -> Option<Signal> {
        Signal::try_from(self.0.load(Ordering::Relaxed)).ok()
    }

    /// The signal's name ("SIGTERM"), once one came.
    pub fn why(&self) -> Option<String> {
        self.signal().map(|s| s.as_str().to_string())
    }

    /// At the end: dies by the signal that stopped the command, if one
    /// did (saying so as `who`), else returns `code`.
    pub fn end(&self, who: &str, code: u8) -> u8 {
        match self.signal() {
            Some(sig) => {
                tell!("{who}: stopped by {sig}");
                crate::streams::tell_stdout_lost(who);
                die_by(sig)
            }
            None => code,
        }
    }
}

/// Waits for the next stop signal (in an `on_stop` callback: a second
/// one); None if waiting fails.
fn next() -> Option<Signal> {
    stop_set().wait().ok()
}

/// SIGINT and SIGTERM, less any this process was started ignoring (a
/// script's background job ignores SIGINT): a blocked
/// signal reaches sigwait even when ignored, so the watcher would
/// otherwise take what its parent meant to keep from it.
fn stop_set() -> SigSet {
    let ignored = ignored_signals();
    let mut set = SigSet::empty();
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        if ignored & (1u64 << (sig as u64 - 1)) == 0 {
            set.add(sig);
        }
    }
    set
}

/// The mask of ignored signals, from /proc/self/status (0 if unreadable:
/// nix asks for unsafe code to read a disposition, and this crate has
/// none).
fn ignored_signals() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

/// Ends the process by `sig` with its default action, so the shell sees
/// a process killed by it (status 130 for SIGINT, 143 for SIGTERM), not
/// an exit code of fabdiag's.
pub fn die_by(sig: Signal) -> ! {
    // The disposition is the default one: nothing here installs a handler,
    // and load_libfabric keeps PSM from installing its own (unless the user
    // asked for them through IPATH_NO_BACKTRACE; then they end us).
    let _ = nix::sys::signal::raise(sig);
    let mut only = SigSet::empty();
    only.add(sig);
    // pending until now: unblocked, it is delivered here and ends us
    let _ = only.thread_unblock();
    // not reached, should the signal somehow not end the process
    std::process::exit(128 + sig as i32)
}
