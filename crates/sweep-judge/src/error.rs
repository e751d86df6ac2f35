//! How a report cannot be made, each with its one-line message: a
//! finished sweep or a baseline that cannot be read back, or pictures
//! that cannot be drawn.

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("--report {path}: {reason}")]
    Report { path: String, reason: String },
    #[error("--baseline {path}: {reason}")]
    Baseline { path: String, reason: String },
    #[error("cannot draw the sweep's pictures: {0}")]
    Picture(String),
}
