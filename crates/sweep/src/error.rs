//! Every way a sweep can fail as a whole (a failed pair is not one: it is
//! recorded and the sweep goes on), each with its one-line message.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("cannot reach the sweep coordinator at {addr} within {} s: {reason}", .waited.as_secs())]
    Unreachable {
        addr: String,
        waited: Duration,
        reason: String,
    },
    #[error("cannot resolve the coordinator address '{addr}': {reason}")]
    Resolve { addr: String, reason: String },
    #[error("the coordinator refused this rank: {0}")]
    Refused(String),
    #[error("lost the coordinator: {0}")]
    Lost(String),
    #[error("cannot listen for the coordinator on port {port}: {reason}")]
    Listen { port: u16, reason: String },
    #[error("{0}")]
    Io(String),
    #[error("cannot resume from {path}: {reason}")]
    Resume { path: String, reason: String },
    /// A finished sweep or a baseline that cannot be read back, or
    /// pictures that cannot be drawn.
    #[error(transparent)]
    Report(#[from] fabdiag_sweep_judge::ReportError),
    #[error("{0}")]
    Config(String),
    /// This rank was told to stop (a signal, named here) and left at its
    /// next order.
    #[error("stopped by {0}")]
    Stopped(String),
}
