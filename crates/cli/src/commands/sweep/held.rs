//! A rank's guard against a provider call that holds its pair test for
//! good (crate::stuck): the rank's part is given up through its
//! `Lifeline` (rank 0 hears the pair's error at once and goes on without
//! this rank, instead of waiting out the step's limit), one line says so,
//! and the process ends, where before a rank held that way never exited
//! and its launcher never returned. Rank 0's own rank also has the sweep
//! its coordinator goes on to finish concluded (`then`). Never touches
//! the fabric.

use crate::stuck::{self, Ended};
use fabdiag_fabric::CallWatcher;
use fabdiag_proto::PeerWatch;
use fabdiag_session::Env;
use fabdiag_sweep::worker::Lifeline;

/// What a rank's guard watches, and its way out.
#[derive(Clone, Default)]
pub struct Guarded {
    calls: CallWatcher,
    peer: PeerWatch,
    pub lifeline: Lifeline,
}

impl Guarded {
    /// `env`, its pair tests watched by this guard.
    pub fn env(&self, env: Env) -> Env {
        Env {
            calls: Some(self.calls.clone()),
            peer: Some(self.peer.clone()),
            ..env
        }
    }

    /// Starts the guard of rank `who` ("fabdiag sweep: rank 2"); once it
    /// has given the rank's part up, `then` gives the exit code (None:
    /// another thread is ending the process). False if it cannot start.
    pub fn start(self, who: String, then: impl Fn() -> Option<u8> + Send + 'static) -> bool {
        let Guarded { calls, peer, lifeline } = self;
        stuck::guard(who.clone(), calls, peer.clone(), move |ended| {
            let said = lifeline.cut(|pair| said(ended, pair));
            // the pair's partner hears this side go at once (its heartbeats
            // would keep it waiting while rank 0 concludes)
            peer.hang_up();
            tell!("{who}: {said}; this rank leaves the sweep");
            then()
        })
    }
}

/// What the rank says of `ended`, and rank 0 records as its side of the
/// pair test in progress (`pair`: its step and peer).
fn said(ended: Ended, pair: Option<(u64, usize)>) -> String {
    let with = pair.map(|(_, peer)| format!(" in the pair test with rank {peer}"));
    let with = with.unwrap_or_default();
    match ended {
        Ended::Stuck(call) => stuck::line(&call, &with),
        Ended::PeerLost(loss) => format!("{}{with}", stuck::lost(loss, None, None, Vec::new())),
    }
}
