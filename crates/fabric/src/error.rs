//! Typed errors of the fabric layer. Messages are one line and name the
//! provider, domain or call involved so an operator can act on them.

#[derive(Debug, thiserror::Error)]
pub enum FabricError {
    /// `hint` says what to do: install the system's libfabric, or check the
    /// path the program was told to load instead.
    #[error("cannot load libfabric: {reason} ({hint})")]
    LibraryMissing { reason: String, hint: String },
    #[error("no libfabric provider named '{name}' on this machine (available: {available})")]
    UnknownProvider { name: String, available: String },
    #[error("provider '{provider}' cannot run this test: it lacks {needed}")]
    MissingCapability { provider: String, needed: String },
    #[error("no provider on this machine offers {needed} over reliable datagram endpoints (available: {available})")]
    NoCapableProvider { needed: String, available: String },
    #[error("provider '{provider}' has no domain '{domain}' (its domains: {available})")]
    UnknownDomain {
        provider: String,
        domain: String,
        available: String,
    },
    #[error("{call} failed: {msg} (error {code})")]
    Call { call: &'static str, code: i32, msg: String },
    #[error("{op} completed with an error: {msg} (libfabric error {code}, provider error {prov_errno})")]
    Completion {
        op: String,
        code: i32,
        prov_errno: i32,
        msg: String,
    },
    #[error("provider '{provider}' needs {what}, which fabdiag does not support")]
    Unsupported { provider: String, what: String },
    #[error("provider '{provider}' does not support {what}")]
    ProviderLacks { provider: String, what: String },
    #[error("provider '{provider}' cannot run {what} safely: {why}")]
    KnownDefect {
        provider: String,
        what: String,
        why: String,
    },
    #[error("cannot allocate {bytes} bytes of {kind} memory: {reason}")]
    Alloc { bytes: u64, kind: String, reason: String },
    #[error("Insufficient {size} huge pages. Need {needed} to run")]
    InsufficientHugePages { size: String, needed: u64 },
    #[error("cannot read huge page counts from {path}: {reason}")]
    HugePageInfo { path: String, reason: String },
    #[error("{0}")]
    Bounds(String),
    /// GPU memory was asked for and this machine cannot give it (no
    /// runtime, no such GPU, an interface fabdiag cannot allocate).
    #[error("{0}")]
    NoGpu(String),
    /// A GPU layer's copy to or from device memory failed.
    #[error("device memory: {0}")]
    Device(String),
}

impl FabricError {
    pub(crate) fn call(call: &'static str, code: i32) -> Self {
        FabricError::Call {
            call,
            code,
            msg: crate::strerror(code),
        }
    }

    /// An endpoint has no registered buffer of index `id`.
    pub fn no_region(id: usize) -> Self {
        FabricError::Bounds(format!("no local region {id}"))
    }

    /// True when the error means "this machine cannot do it" rather than
    /// "something broke": the CLI maps these to the unavailable exit code.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            FabricError::LibraryMissing { .. }
                | FabricError::UnknownProvider { .. }
                | FabricError::MissingCapability { .. }
                | FabricError::NoCapableProvider { .. }
                | FabricError::UnknownDomain { .. }
                | FabricError::Unsupported { .. }
                | FabricError::ProviderLacks { .. }
                | FabricError::KnownDefect { .. }
                | FabricError::InsufficientHugePages { .. }
                | FabricError::NoGpu(_)
        )
    }
}
