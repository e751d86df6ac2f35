//! AMD GPUs through the HIP runtime (libamdhip64.so), loaded at run time
//! with the seven calls the originals used (originals §2.12): device count and
//! selection, malloc, free, memcpy. Device memory for the fabric tools
//! only; nothing here has been run on an AMD GPU (none was available).
//! Never prints.

use crate::buffer::{within, Buffer};
use crate::dl;
use crate::error::GpuError;
use std::ffi::c_void;
use std::os::raw::c_int;

/// The runtime library the originals load for AMD GPUs.
pub const HIP_LIBRARY: &str = "libamdhip64.so";

const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;

struct Api {
    count: unsafe extern "C" fn(*mut c_int) -> c_int,
    set: unsafe extern "C" fn(c_int) -> c_int,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int,
    free: unsafe extern "C" fn(*mut c_void) -> c_int,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int,
}

/// The loaded runtime (kept loaded for the process).
pub struct Hip {
    api: Api,
}

impl Hip {
    pub fn load() -> Result<Hip, GpuError> {
        let lib = dl::open(HIP_LIBRARY)?;
        Ok(Hip {
            api: Api {
                count: dl::sym(lib, "hipGetDeviceCount", HIP_LIBRARY)?,
                set: dl::sym(lib, "hipSetDevice", HIP_LIBRARY)?,
                malloc: dl::sym(lib, "hipMalloc", HIP_LIBRARY)?,
                free: dl::sym(lib, "hipFree", HIP_LIBRARY)?,
                memcpy: dl::sym(lib, "hipMemcpy", HIP_LIBRARY)?,
            },
        })
    }

    fn check(call: &'static str, rc: c_int) -> Result<(), GpuError> {
        if rc == 0 {
            Ok(())
        } else {
            Err(GpuError::Call {
                call,
                code: rc,
                msg: "HIP error".into(),
            })
        }
    }

    pub fn device_count(&self) -> Result<u32, GpuError> {
        let mut n: c_int = 0;
        // SAFETY: n is a valid out-pointer.
        Self::check("hipGetDeviceCount", unsafe { (self.api.count)(&mut n) })?;
        Ok(n.max(0) as u32)
    }

    /// `len` bytes on GPU `device`.
    pub fn alloc(self: &std::sync::Arc<Self>, device: u32, len: u64) -> Result<HipMem, GpuError> {
        // SAFETY: plain calls; the pointer is freed once, on drop.
        Self::check("hipSetDevice", unsafe { (self.api.set)(device as c_int) })?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: p is a valid out-pointer.
        Self::check("hipMalloc", unsafe { (self.api.malloc)(&mut p, len as usize) })?;
        Ok(HipMem {
            hip: self.clone(),
            ptr: p,
            len,
            device,
        })
    }
}

/// Device memory from hipMalloc.
pub struct HipMem {
    hip: std::sync::Arc<Hip>,
    ptr: *mut c_void,
    len: u64,
    device: u32,
}

// SAFETY: the allocation is owned by this value alone.
unsafe impl Send for HipMem {}

impl Buffer for HipMem {
    fn address(&self) -> u64 {
        self.ptr as u64
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn device(&self) -> i32 {
        self.device as i32
    }

    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), GpuError> {
        within(off, out.len() as u64, self.len, "device")?;
        // SAFETY: the range is inside the allocation; out is host memory of
        // the same length; hipMemcpy is synchronous.
        Hip::check("hipMemcpy", unsafe {
            (self.hip.api.memcpy)(
                out.as_mut_ptr().cast(),
                (self.ptr as *const u8).wrapping_add(off as usize).cast(),
                out.len(),
                HIP_MEMCPY_DEVICE_TO_HOST,
            )
        })
    }

    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), GpuError> {
        within(off, data.len() as u64, self.len, "device")?;
        // SAFETY: as `read`, the other way.
        Hip::check("hipMemcpy", unsafe {
            (self.hip.api.memcpy)(
                (self.ptr as *mut u8).wrapping_add(off as usize).cast(),
                data.as_ptr().cast(),
                data.len(),
                HIP_MEMCPY_HOST_TO_DEVICE,
            )
        })
    }
}

impl Drop for HipMem {
    fn drop(&mut self) {
        // SAFETY: ptr came from hipMalloc and is freed only here.
        let _ = unsafe { (self.hip.api.free)(self.ptr) };
    }
}
