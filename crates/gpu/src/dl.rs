//! Opening a GPU runtime library and its entry points with dlopen/dlsym,
//! for the three runtimes (CUDA discovery, HIP, Level Zero): a missing
//! library or symbol is a `NoDriver` error naming it. Libraries stay
//! loaded for the process. Never prints.

use crate::error::GpuError;
use std::ffi::{c_void, CStr, CString};

/// The last dlopen/dlsym error of this thread.
fn dl_error() -> String {
    // SAFETY: dlerror returns a thread-local string or null.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null dlerror results are NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Loads `library` with its symbols resolved now.
pub(crate) fn open(library: &str) -> Result<*mut c_void, GpuError> {
    let no = |reason: String| GpuError::NoDriver {
        library: library.into(),
        reason,
    };
    let c = CString::new(library).map_err(|_| no("bad library name".into()))?;
    // SAFETY: c is NUL-terminated; dlopen has no other preconditions.
    let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(no(dl_error()));
    }
    Ok(lib)
}

/// Can `library` be loaded here? (Unloaded again; nothing resolved.)
pub(crate) fn present(library: &str) -> Result<(), String> {
    let c = CString::new(library).map_err(|_| "bad library name".to_string())?;
    // SAFETY: c is NUL-terminated; RTLD_LAZY resolves no symbol yet.
    let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(dl_error());
    }
    // SAFETY: lib is the handle dlopen just returned, closed once.
    unsafe { libc::dlclose(lib) };
    Ok(())
}

/// Entry point `name` of `lib` (opened from `library`) as `T`.
///
/// `T` must be the function-pointer type of that entry point as the
/// runtime's header declares it; every caller names it next to the
/// symbol.
pub(crate) fn sym<T: Copy>(lib: *mut c_void, name: &str, library: &str) -> Result<T, GpuError> {
    let no = |reason: String| GpuError::NoDriver {
        library: library.into(),
        reason,
    };
    let c = CString::new(name).map_err(|_| no("bad symbol name".into()))?;
    // SAFETY: lib is a live dlopen handle; c is NUL-terminated.
    let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
    if p.is_null() {
        return Err(no(format!("it has no symbol {name}")));
    }
    // SAFETY: per this function's contract T is the entry point's
    // function-pointer type; a data pointer from dlsym has the size and
    // representation of a function pointer on Linux.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}
