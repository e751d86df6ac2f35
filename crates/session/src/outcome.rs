//! What a session hands back: a `Report` when the test ran to the end, a
//! `Failure` otherwise. A failure says in which phase it happened, which
//! side caused it, and what kind of failure it is, and keeps what was
//! measured before it; the binary maps the kind to an exit code.

use crate::driver::DriveError;
use fabdiag_clock::ClockError;
use fabdiag_fabric::FabricError;
use fabdiag_model::SpecError;
use fabdiag_model::{PairCounters, Row, RunDesc};
use fabdiag_proto::{Phase, ProtoError};

#[derive(Clone, Debug)]
pub struct Report {
    pub run: RunDesc,
    pub rows: Vec<Row>,
    /// Both sides' NIC counters across the measurement.
    pub counters: Option<PairCounters>,
}

/// Every way a session can fail, each with its one-line message.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Fabric(#[from] FabricError),
    #[error(transparent)]
    Proto(#[from] ProtoError),
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    Clock(#[from] ClockError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The two sides disagree (provider, tool, operation counts).
    #[error("{0}")]
    Mismatch(String),
    /// A data check found memory that does not hold what the run wrote.
    #[error("{0}")]
    Verify(String),
    /// The server's limits do not allow the test the client asked for.
    #[error("{0}")]
    Refused(String),
    /// `--local`: the server half failed after the client finished.
    #[error("local server: {0}")]
    LocalServer(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// Which side is to blame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// This side failed (and told the peer).
    Local,
    /// The peer failed, went away or fell silent.
    Peer,
}

/// Unavailable (this machine, provider or peer cannot do it) or runtime
/// (the run went wrong); the same classes the peer is told of.
pub use fabdiag_proto::ErrorClass as FailureKind;

#[derive(Debug)]
pub struct Failure {
    pub phase: Phase,
    pub side: Side,
    pub kind: FailureKind,
    /// Boxed: a failure travels up through every call of a session.
    pub error: Box<SessionError>,
    /// The run's description, if it got that far.
    pub run: Option<Box<RunDesc>>,
    /// Sizes finished before the failure.
    pub rows: Vec<Row>,
    /// This side's NIC counters from before the measurement to the
    /// failure (the peer's too if they were traded), when it got that far.
    /// Boxed, as `error` and `run` are: a failure travels up every call.
    pub counters: Option<Box<PairCounters>>,
}

impl SessionError {
    /// Did the peer cause it (its own error, closing, or silence)?
    pub fn from_peer(&self) -> bool {
        let p = match self {
            SessionError::Proto(p) | SessionError::Drive(DriveError::Proto(p)) => p,
            _ => return false,
        };
        matches!(
            p,
            ProtoError::Peer { .. } | ProtoError::Closed { .. } | ProtoError::Silent { .. }
        )
    }

    pub fn kind(&self) -> FailureKind {
        let unavailable = match self {
            SessionError::Fabric(f) | SessionError::Drive(DriveError::Fabric(f)) => f.is_unavailable(),
            SessionError::Clock(_) | SessionError::Refused(_) => true,
            // the peer could not do it: neither can this pair
            SessionError::Proto(ProtoError::Peer { kind, .. })
            | SessionError::Drive(DriveError::Proto(ProtoError::Peer { kind, .. })) => {
                *kind == FailureKind::Unavailable
            }
            _ => false,
        };
        if unavailable {
            FailureKind::Unavailable
        } else {
            FailureKind::Runtime
        }
    }
}

impl Failure {
    /// A failure in `phase` with nothing measured yet.
    pub fn early(phase: Phase, error: impl Into<SessionError>) -> Failure {
        Failure::new(phase, error.into(), None, Vec::new())
    }

    pub fn new(phase: Phase, error: SessionError, run: Option<RunDesc>, rows: Vec<Row>) -> Failure {
        Failure {
            phase,
            side: if error.from_peer() { Side::Peer } else { Side::Local },
            kind: error.kind(),
            error: Box::new(error),
            run: run.map(Box::new),
            rows,
            counters: None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}
