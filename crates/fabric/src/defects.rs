//! The provider defects fabdiag works around, in one table: operations a
//! provider says it supports but that crash the process, each with the
//! libfabric versions it was seen in and the one line a user is told
//! instead. Policy, not a handle: it looks only at the provider's name and
//! the loaded library's version, and each entry was seen here
//! (docs/known-defects.md).

/// A provider defect that would crash the process on an atomic through
/// `provider` (`returns_value`: a fetching or compare atomic), although the
/// provider says it supports it. Checked before any such operation is
/// posted.
pub fn atomic(provider: &str, returns_value: bool) -> Option<&'static str> {
    let rxd = crate::discovery::has_part(provider, "ofi_rxd");
    let v117 = crate::library_version_parts().is_ok_and(|v| v == (1, 17));
    if rxd && v117 && returns_value {
        return Some("fetching and compare atomics crash libfabric 1.17's ofi_rxd (SIGSEGV inside the provider)");
    }
    None
}

/// A provider defect that crashes a process holding both ends of a test
/// (`--local`) once both ends send to each other more than the bytes
/// returned, with the reason. libfabric 2.5's rewritten shm (2.5.0, 2.6.0
/// and its main branch of 2026-11; 2.4.0 and before do not) dereferences a
/// bad command pointer in `smr_progress_cmd`: two shm endpoints of one
/// process, each sending 8 KiB to the other once, are enough in a plain C
/// program (docs/known-defects.md). Between two processes the same traffic
/// runs.
pub fn same_process(provider: &str) -> Option<(u64, &'static str)> {
    let shm = crate::discovery::has_part(provider, "shm");
    let from_2_5 = crate::library_version_parts().is_ok_and(|v| v >= (2, 5));
    (shm && from_2_5).then_some((
        4096,
        "libfabric 2.5 and later's shm crashes (SIGSEGV inside the provider) when two endpoints of one \
         process both send over 4096 B to each other; run the server and the client as two processes \
         (the same command without --local, once as the server and once with 127.0.0.1), or keep -s at \
         4096 or below",
    ))
}
