//! The guard of a run against a provider call that never returns: psm3
//! polls inside fi_writemsg for a peer that is gone, so the session's own
//! time limits, which run between calls, never come. A thread polls the
//! endpoints the session opened and its control connections. A call
//! inside for `ASK_PEER_AFTER` while the peer has closed the connection
//! or fallen silent is the peer's loss, said as the session would have
//! said it (a killed peer: at once, not after `stuck_after`); a call
//! inside for `stuck_after` its batch is a stuck call. Either way the command
//! reports it (a pair tool: with what it measured, as a stop signal's
//! report does; a serve worker: to its server; a sweep rank: to rank 0)
//! and the process ends with the exit code the report gives. Never
//! touches the fabric itself, nor a descriptor opened after the run began:
//! the measuring thread may by then have a table of its own
//! (`fabdiag_fabric::fd_table`), and what this thread reaches is the
//! control connections, standard output and error, and paths.

use fabdiag_fabric::{CallWatcher, StuckCall};
use fabdiag_model::{Row, RunDesc};
use fabdiag_proto::{PeerLoss, PeerWatch, Phase};
use fabdiag_session::{Failure, SessionError};
use std::io::Write;
use std::time::Duration;

/// How long a call may stay inside the provider before it is stuck, when
/// its endpoint's batch may have `work_bytes` in flight: twice the
/// session's limit on a run without completions for that batch (5 s plus
/// the batch at 100 MB/s), so 10 s for small batches. A working provider
/// can hold one call for as long as the whole batch takes to move: shm
/// (1.17) posts under its peer's lock, and the peer's progress holds that
/// lock while it copies every queued operation in full. With `-s 1G` and
/// 256 writes queued (`write-bw --local -P shm`), calls were held over
/// 10 s in 3 runs of 10 on this 2-core VM, and a flat 10 s told those
/// healthy runs as stuck.
pub fn stuck_after(work_bytes: u64) -> Duration {
    2 * fabdiag_session::stall_limit(work_bytes)
}

/// A call inside this long while the control connection says the peer
/// closed it or fell silent is held by that loss: a working call returns
/// in microseconds, and the session, once back from it, would say the
/// same.
pub const ASK_PEER_AFTER: Duration = Duration::from_secs(1);

/// Why the guard ends a run.
pub enum Ended {
    /// The peer was lost while a call was held inside the provider; said
    /// as the session says a lost peer, since that is the fault to mend.
    PeerLost(PeerLoss),
    /// A call has been inside for `stuck_after` its batch, with the peer
    /// there.
    Stuck(StuckCall),
}

/// What a command says when the guard cannot start.
pub const UNGUARDED: &str = "warning: cannot start the guard against a provider call that never returns";

/// The line that says so: `where_` is where the run was (" during run
/// (2 sizes measured)", or nothing).
pub fn line(call: &StuckCall, where_: &str) -> String {
    format!("{call}{where_}: it waits inside the call, for a peer or a link that is gone")
}

/// The failure a lost peer is, as the session would have made it in
/// `phase` (None: before any, which a data call never is: the run), with
/// what was measured.
pub fn lost(loss: PeerLoss, phase: Option<Phase>, run: Option<RunDesc>, rows: Vec<Row>) -> Failure {
    let phase = phase.unwrap_or(Phase::Run);
    Failure::new(phase, SessionError::Proto(loss.during(phase)), run, rows)
}

/// Starts the guard over the endpoints `calls` and the control
/// connections `peer` will be given; `report` says why the run ended and
/// returns the exit code to end with, or None when the outcome is already
/// being told (then that ends the process); the guard then says as `who`
/// if stdout lost output. Returns false if the thread could not start
/// (the run goes on unguarded).
pub fn guard(
    who: String,
    calls: CallWatcher,
    peer: PeerWatch,
    report: impl Fn(Ended) -> Option<u8> + Send + 'static,
) -> bool {
    std::thread::Builder::new()
        .name("fabdiag-stuck".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            let Some(call) = calls.stuck(ASK_PEER_AFTER) else {
                continue;
            };
            let ended = match peer.loss() {
                // a peer that told its own failure may have given up on
                // this side's held call (no completions for its 5 s): the
                // held call is the fault to tell
                Some(PeerLoss::Failed { .. }) | None if call.for_at_least < stuck_after(call.work_bytes) => continue,
                Some(PeerLoss::Failed { .. }) | None => Ended::Stuck(call),
                Some(loss) => Ended::PeerLost(loss),
            };
            let Some(code) = report(ended) else {
                return;
            };
            crate::streams::tell_stdout_lost(&who);
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
            std::process::exit(i32::from(code))
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_may_be_held_as_long_as_its_batch_takes_at_the_floor() {
        // small batches: twice the session's 5 s
        assert_eq!(stuck_after(0), Duration::from_secs(10));
        assert_eq!(stuck_after(64 * 65536), Duration::from_micros(10_083_886));
        // 256 writes of 1 GiB: 2 × (5 s + 274.9 GB at 100 MB/s)
        let big = stuck_after(256 << 30);
        assert!(
            big > Duration::from_secs(5_000) && big < Duration::from_secs(6_000),
            "{big:?}"
        );
        // and never less than the session's own limit for the batch
        for b in [0, 1 << 20, 1 << 30, 1 << 40] {
            assert!(stuck_after(b) >= fabdiag_session::stall_limit(b) + Duration::from_secs(5));
        }
    }
}
