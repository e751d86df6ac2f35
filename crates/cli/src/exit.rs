//! Exit codes, decided only here. 1 keeps the originals' meaning (bad
//! options); the others let scripts tell a broken fabric from a slow one.

use fabdiag_session::FailureKind;

pub const OK: u8 = 0;
/// Invalid option or argument (the originals exited 1 for these).
pub const USAGE: u8 = 1;
/// The run failed: peer, fabric or control connection.
pub const RUNTIME: u8 = 2;
/// The run completed but a threshold (--min-bw) was missed.
pub const THRESHOLD: u8 = 3;
/// This machine cannot do it: libfabric missing, provider or domain
/// absent, capability missing (FI_HMEM included), no GPU or GPU runtime;
/// for a client, also its server lacking any of these.
pub const UNAVAILABLE: u8 = 4;

pub fn of(kind: FailureKind) -> u8 {
    match kind {
        FailureKind::Unavailable => UNAVAILABLE,
        FailureKind::Runtime => RUNTIME,
    }
}

/// The JSON `error.kind` for an exit code.
pub fn kind_name(code: u8) -> &'static str {
    match code {
        USAGE => "usage",
        UNAVAILABLE => "unavailable",
        THRESHOLD => "threshold",
        _ => "runtime",
    }
}
