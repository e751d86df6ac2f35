//! fabdiag's out-of-band control protocol (one TCP connection per run).
//!
//! Shape, after the originals and iperf3: every message is a 4-byte
//! big-endian length and a JSON payload (`frame`); the run moves through
//! named `Phase`s; each exchange is symmetric, client first (`channel`).
//! Unlike the originals, both sides send heartbeats once the handshake is
//! done, so a peer that dies or stops answering is noticed within
//! `SILENCE_LIMIT` in every phase, even while the other side only waits.
//! A side that fails sends an `Error` message so the peer can say why.
//! With a shared key or MUNGE credentials, both sides prove who they are
//! after the hellos (`auth`, `munge`).
//! This crate never prints, never touches libfabric, and never exits; the
//! only processes it starts are munge(1) and unmunge(1).

pub mod auth;
mod channel;
mod error;
mod frame;
mod link;
mod listen;
mod liveness;
mod message;
pub mod munge;
mod opening;

pub use channel::{connect, Control, Listener, Rejection, Role};
pub use error::ProtoError;
pub use frame::{read_frame, write_frame, MAX_FRAME};
pub use link::{Alone, Link};
pub use listen::{listen_any, listen_on, plain};
pub use liveness::{PeerLoss, PeerWatch};
pub use message::{ErrorClass, Hello, MemoryDesc, Message, Phase, RegionDesc, MAGIC, PROTOCOL};
pub use opening::{broken_before_hello, closed_before_hello, opening, Opening};

use std::time::Duration;

/// How long a peer may say nothing at all before it is declared gone.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(5);
/// Interval between heartbeats; well under `SILENCE_LIMIT`.
pub const HEARTBEAT: Duration = Duration::from_millis(500);
