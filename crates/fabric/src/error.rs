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
    /// Registering host memory ran out of memory while the buffers
    /// registered so far exceed what this process may lock: providers that
    /// pin registered memory (verbs, cxi, efa) stop at that limit.
    #[error("{call} failed: {msg} (error {code}): the buffers registered so far take {pinned} bytes and this process may lock only {lockable} (ulimit -l); providers that pin what they register (verbs, cxi, efa) need more: raise the limit (ulimit -l unlimited, memlock in limits.conf, or the batch system's) or use smaller buffers")]
    LockedMemory {
        call: &'static str,
        code: i32,
        msg: String,
        pinned: u64,
        lockable: u64,
    },
}

impl FabricError {
    pub(crate) fn call(call: &'static str, code: i32) -> Self {
        FabricError::Call {
            call,
            code,
            msg: crate::strerror(code),
        }
    }

    /// A failed registration of host memory told as the locked-memory
    /// limit when that explains it: out of memory (`code`), with `pinned`
    /// bytes registered counting this one, more than the `lockable` bytes
    /// this process may lock (None: unlimited). Otherwise the plain call.
    pub(crate) fn registration(call: &'static str, code: i32, pinned: u64, lockable: Option<u64>) -> Self {
        match lockable {
            Some(lockable) if code == -libc::ENOMEM && pinned > lockable => FabricError::LockedMemory {
                call,
                code,
                msg: crate::strerror(code),
                pinned,
                lockable,
            },
            _ => FabricError::call(call, code),
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
                | FabricError::LockedMemory { .. }
                | FabricError::NoGpu(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Out of memory past the locked-memory limit names the limit and what
    /// to raise; anything else stays the plain call's error.
    #[test]
    fn a_registration_past_the_locked_memory_limit_says_so() {
        let e = FabricError::registration("fi_mr_reg", -libc::ENOMEM, 16 << 20, Some(8 << 20));
        let m = e.to_string();
        assert!(
            m.starts_with("fi_mr_reg failed: Cannot allocate memory (error -12): the buffers registered so far take 16777216 bytes and this process may lock only 8388608 (ulimit -l)"),
            "{m}"
        );
        assert!(m.contains("raise the limit (ulimit -l unlimited"), "{m}");
        assert!(e.is_unavailable());
        for (code, pinned, lockable) in [
            (-libc::ENOMEM, 4 << 20, Some(8 << 20)),
            (-libc::ENOMEM, 16 << 20, None),
            (-libc::EINVAL, 16 << 20, Some(8 << 20)),
        ] {
            let e = FabricError::registration("fi_mr_reg", code, pinned, lockable);
            assert!(matches!(e, FabricError::Call { .. }), "{e}");
        }
    }
}
