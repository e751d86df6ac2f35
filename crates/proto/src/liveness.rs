//! Whether a control connection's peer is still there, as another thread
//! can tell while the thread that owns the connection cannot look: psm3
//! holds a data call once its peer is gone, so the session never gets
//! back to its control connection to find out. The connection's reader
//! thread records how the peer left (it closed, the socket broke, it
//! sent its error) and when it was last heard; a `PeerWatch` reads that
//! for the connections a session gave it.
//!
//! Only records and reads: deciding what to say and ending the run are
//! the caller's. A connection this side closed itself is not a lost peer.

use crate::message::{ErrorClass, Phase};
use crate::{ProtoError, SILENCE_LIMIT};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How a peer was lost: what `ProtoError` the session itself would have
/// made of it, less the phase, which only the session knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerLoss {
    /// It closed the connection (or its process ended).
    Closed,
    /// Nothing heard from it for `secs` (its heartbeats stopped).
    Silent { secs: u64 },
    /// The connection broke.
    Broken(String),
    /// It told us why it gave up.
    Failed {
        phase: Phase,
        message: String,
        kind: ErrorClass,
    },
}

impl PeerLoss {
    /// The error the session would have said, had it been in `phase` to
    /// hear it (the peer's own error keeps the phase it came with).
    pub fn during(self, phase: Phase) -> ProtoError {
        match self {
            PeerLoss::Closed => ProtoError::Closed { phase },
            PeerLoss::Silent { secs } => ProtoError::Silent { phase, secs },
            PeerLoss::Broken(reason) => ProtoError::Io { phase, reason },
            PeerLoss::Failed { phase, message, kind } => ProtoError::Peer { phase, message, kind },
        }
    }
}

/// What one connection's threads share: when the peer was last heard,
/// how it left, and whether this side is done with the connection.
pub(crate) struct Shared {
    epoch: Instant,
    last_heard_ms: AtomicU64,
    pub(crate) heartbeat_on: AtomicBool,
    pub(crate) stop: AtomicBool,
    lost: Mutex<Option<PeerLoss>>,
    /// The connection, for `PeerWatch::hang_up`.
    conn: TcpStream,
}

impl Shared {
    pub(crate) fn new(conn: TcpStream) -> Shared {
        Shared {
            epoch: Instant::now(),
            last_heard_ms: AtomicU64::new(0),
            heartbeat_on: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            lost: Mutex::new(None),
            conn,
        }
    }

    pub(crate) fn heard(&self) {
        self.last_heard_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    pub(crate) fn silence(&self) -> Duration {
        let now = self.epoch.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last_heard_ms.load(Ordering::Relaxed)))
    }

    /// The reader saw the peer leave; the first way it left is kept (its
    /// error, then its closing).
    pub(crate) fn lose(&self, how: PeerLoss) {
        let mut lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        lost.get_or_insert(how);
    }

    fn loss(&self) -> Option<PeerLoss> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner).clone();
        lost.or_else(|| {
            // silence counts once heartbeats are due (after the hello)
            let due = self.heartbeat_on.load(Ordering::Relaxed);
            (due && self.silence() > SILENCE_LIMIT).then_some(PeerLoss::Silent {
                secs: SILENCE_LIMIT.as_secs(),
            })
        })
    }
}

/// Watches the control connections added to it. Clones share what they
/// watch: the session adds each connection once it has one, and a thread
/// of the caller's asks `loss`.
#[derive(Clone, Default)]
pub struct PeerWatch(Arc<Mutex<Vec<Arc<Shared>>>>);

impl PeerWatch {
    pub(crate) fn add(&self, shared: &Arc<Shared>) {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // connections this side has closed no longer count
        w.retain(|s| !s.stop.load(Ordering::Relaxed));
        w.push(Arc::clone(shared));
    }

    /// How the peer of a connection still open on this side was lost, if
    /// one was.
    pub fn loss(&self) -> Option<PeerLoss> {
        let w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        w.iter().find_map(|s| s.loss())
    }

    /// Closes every connection still open on this side, for a thread that
    /// cannot: its peer hears it at once (heartbeats alone would keep it
    /// waiting) and the thread's own next use fails.
    pub fn hang_up(&self) {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for s in w.drain(..) {
            s.stop.store(true, Ordering::Relaxed);
            let _ = s.conn.shutdown(Shutdown::Both);
        }
    }
}

/// Clones watch the same connections: equal.
impl PartialEq for PeerWatch {
    fn eq(&self, other: &PeerWatch) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PeerWatch {}

impl std::fmt::Debug for PeerWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerWatch")
    }
}
