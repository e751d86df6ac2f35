//! fabdiag-fabric: the only crate that touches libfabric.
//!
//! `ffi` declares the C shim (which dlopens libfabric, so binaries start on
//! machines without it); `discovery` lists providers and domains; `endpoint`
//! owns one RDM endpoint with its fabric, domain, CQ, AV and registered
//! memory as RAII handles; `buffer` allocates host memory (optionally huge
//! pages); `cancellation` switches the measuring thread's POSIX
//! cancellation off while it measures. Every `unsafe` block of the project
//! lives in this crate and in the GPU runtime crate. This crate never
//! prints and never exits.

mod buffer;
mod cancellation;
mod contexts;
mod defects;
mod discovery;
mod endpoint;
mod error;
pub mod fd_table;
mod ffi;
mod held_calls;

pub use buffer::{free_hugepages, hugepage_pool, page_size, DeviceMemory, HmemIface, HostAsDevice, HostBuffer, Memory};
pub use cancellation::CancellationOff;
pub use discovery::{discover, provider_names, Capability, InfoList, LinkState, Nic, NicLink, ProviderInfo, Query};
pub use endpoint::{
    atomic_datatype, atomic_op, AtomicKind, AtomicOperands, AtomicSpec, AtomicValue, Completion, Endpoint, OpFlags,
    PeerId, Posted, Prepared, RegionId, RemoteRegion,
};
pub use error::FabricError;
pub use held_calls::{CallWatcher, StuckCall};

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::sync::OnceLock;

/// The shared object fabdiag opens; overridable for tests and odd installs.
pub const DEFAULT_LIBRARY: &str = "libfabric.so.1";

static LOADED: OnceLock<Result<(), String>> = OnceLock::new();

/// Loads libfabric from `DEFAULT_LIBRARY` once per process, unless
/// `load_from` loaded it first. Later calls return the first outcome.
pub fn load() -> Result<(), FabricError> {
    load_from(DEFAULT_LIBRARY, None)
}

/// Removes shared-memory regions that libfabric's shm provider left behind
/// for an earlier process with this process's PID. The provider (1.17,
/// prov/shm/src/smr_ep.c) names a region "<pid>:<uid>:<endpoint index>"
/// under /dev/shm and cannot open an endpoint whose region already exists
/// (EBUSY); a process killed with SIGKILL (or one that left its endpoint
/// open after a failed run) leaves its regions behind, and PIDs come round
/// again. Run once, before this process opens any endpoint, every region
/// named with its PID and its user is stale: no live process in this PID
/// namespace has that PID. Another user's regions are never touched.
fn clear_stale_shm_regions() {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let prefix = format!("{}:{uid}:", std::process::id());
    let Ok(dir) = std::fs::read_dir("/dev/shm") else { return };
    for e in dir.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let ours = name
            .strip_prefix(&prefix)
            .is_some_and(|idx| !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()));
        if ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Loads libfabric from `path` (a soname or a file) if no library is loaded
/// yet; a program that lets its user choose the library calls this first,
/// with `named_by` the setting that chose it (e.g. an environment
/// variable), which a failure names. Later calls return the first outcome,
/// whatever their path.
pub fn load_from(path: &str, named_by: Option<&str>) -> Result<(), FabricError> {
    let outcome = LOADED.get_or_init(|| {
        clear_stale_shm_regions();
        let path = path.to_string();
        let cpath = CString::new(path.clone()).map_err(|_| format!("bad library path {path:?}"))?;
        let mut err = [0 as c_char; 512];
        // SAFETY: cpath is NUL-terminated; err is a writable buffer whose
        // length we pass; fdg_load writes at most errlen bytes including NUL.
        let rc = unsafe { ffi::fdg_load(cpath.as_ptr(), err.as_mut_ptr(), err.len()) };
        if rc == 0 {
            Ok(())
        } else {
            // SAFETY: fdg_load NUL-terminates err on failure (snprintf).
            let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
            Err(msg)
        }
    });
    outcome.clone().map_err(|reason| FabricError::LibraryMissing {
        reason,
        hint: missing_hint(path, named_by),
    })
}

/// What to do about a libfabric at `path` that would not load: install the
/// system's, or look at the setting that named another.
fn missing_hint(path: &str, named_by: Option<&str>) -> String {
    match named_by {
        None => "install it: apt-get install libfabric1".into(),
        Some(setting) => format!("{setting}={path} names it; unset it to load the system's {DEFAULT_LIBRARY}"),
    }
}

/// The file libfabric was loaded from, as this process maps it.
pub fn library_path() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            std::path::Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libfabric.so"))
        })
        .map(str::to_string)
}

/// libfabric's runtime version as "MAJOR.MINOR".
pub fn library_version() -> Result<String, FabricError> {
    let (major, minor) = library_version_parts()?;
    Ok(format!("{major}.{minor}"))
}

/// libfabric's runtime version as (MAJOR, MINOR), for comparisons.
pub(crate) fn library_version_parts() -> Result<(u32, u32), FabricError> {
    load()?;
    // SAFETY: load() succeeded, so the version entry point is resolved.
    let v = unsafe { ffi::fdg_lib_version() };
    Ok((v >> 16, v & 0xffff))
}

/// The bytes this process may lock (RLIMIT_MEMLOCK's soft limit); None
/// when unlimited or unreadable.
pub(crate) fn lockable_bytes() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid, writable rlimit for the call to fill.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// libfabric's text for a (positive or negative) error code.
pub(crate) fn strerror(code: i32) -> String {
    if load().is_err() {
        return format!("error {code}");
    }
    // SAFETY: the library is loaded; fi_strerror returns a static string.
    let p = unsafe { ffi::fdg_strerror(code.abs()) };
    if p.is_null() {
        return format!("error {code}");
    }
    // SAFETY: non-null, NUL-terminated static string owned by libfabric.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

pub(crate) fn constant(which: i32) -> u64 {
    // SAFETY: fdg_const is a pure switch over header constants.
    unsafe { ffi::fdg_const(which) }
}

/// Header constants, read through the shim so they never drift.
pub(crate) mod consts {
    use super::constant;
    pub fn msg() -> u64 {
        constant(0)
    }
    pub fn rma() -> u64 {
        constant(1)
    }
    pub fn read() -> u64 {
        constant(2)
    }
    pub fn write() -> u64 {
        constant(3)
    }
    pub fn send() -> u64 {
        constant(4)
    }
    pub fn recv() -> u64 {
        constant(5)
    }
    pub fn remote_read() -> u64 {
        constant(6)
    }
    pub fn remote_write() -> u64 {
        constant(7)
    }
    pub fn inject() -> u64 {
        constant(8)
    }
    pub fn completion() -> u64 {
        constant(9)
    }
    pub fn delivery_complete() -> u64 {
        constant(10)
    }
    pub fn mr_virt_addr() -> u64 {
        constant(12)
    }
    pub fn mr_endpoint() -> u64 {
        constant(13)
    }
    pub fn atomic() -> u64 {
        constant(23)
    }
    pub fn hmem() -> u64 {
        constant(24)
    }
    pub fn addr_str() -> u64 {
        constant(25)
    }
    pub fn enodata() -> i32 {
        constant(16) as i32
    }
    pub fn eagain() -> i32 {
        constant(17) as i32
    }
    pub fn eavail() -> i32 {
        constant(18) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_says_what_to_do_about_it() {
        assert_eq!(
            missing_hint(DEFAULT_LIBRARY, None),
            "install it: apt-get install libfabric1"
        );
        let other = missing_hint("/opt/ofi/lib/libfabric.so", Some("FABDIAG_LIBFABRIC"));
        assert!(
            other.starts_with("FABDIAG_LIBFABRIC=/opt/ofi/lib/libfabric.so names it") && !other.contains("apt-get"),
            "{other}"
        );
    }
}
