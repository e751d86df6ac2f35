//! Control-protocol errors; each names the phase it happened in.

use crate::{ErrorClass, Phase};

#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("cannot resolve server address '{host}': {reason}")]
    Resolve { host: String, reason: String },
    #[error("no server listening on {addr} (connection refused)")]
    Refused { addr: String },
    #[error("cannot connect to {addr}: {reason}")]
    Connect { addr: String, reason: String },
    #[error("cannot listen on TCP port {port}: port already in use")]
    PortInUse { port: u16 },
    #[error("cannot listen on TCP port {port}: {reason}")]
    Listen { port: u16, reason: String },
    #[error("peer closed the control connection during {phase}")]
    Closed { phase: Phase },
    #[error("peer stopped answering during {phase} (nothing heard for {secs} s)")]
    Silent { phase: Phase, secs: u64 },
    #[error("control connection failed during {phase}: {reason}")]
    Io { phase: Phase, reason: String },
    #[error("peer is not a fabdiag control endpoint: {reason}")]
    NotFabdiag { reason: String },
    /// The server's port took the connection and said nothing: far more
    /// often a node or `fabdiag serve` that is hung (stopped, stuck in the
    /// kernel) than a stranger, so it is not said to be one.
    #[error("peer accepted the connection and sent no fabdiag hello within {secs} s: a hung node or fabdiag serve, or a service that waits for its client to speak first")]
    Unanswered { secs: u64 },
    #[error("{message} (ours: {ours}, peer's: {theirs})")]
    Mismatch {
        message: &'static str,
        ours: String,
        theirs: String,
    },
    #[error("peer failed during {phase}: {message}")]
    Peer {
        phase: Phase,
        message: String,
        kind: ErrorClass,
    },
    #[error("unexpected {got} message during {phase}")]
    Unexpected { phase: Phase, got: String },
    #[error("client and server out of step in {phase}: peer is at {theirs}")]
    Desync { phase: Phase, theirs: String },
    /// The shared-key exchange failed: a wrong key, a replayed or
    /// malformed proof, or one side without a key.
    #[error("authentication failed: {reason}")]
    Auth { reason: String },
}
