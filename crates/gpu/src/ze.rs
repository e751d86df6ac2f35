//! Intel GPUs through Level Zero (libze_loader.so.1), loaded at run time:
//! the first driver's devices, one context, device allocations, and a
//! synchronous immediate command list for the copies the data checks need
//! (the originals used the same calls, originals §2.12). Device memory for the
//! fabric tools only; nothing here has been run on an Intel GPU (none was
//! available). Never prints.

use crate::buffer::{within, Buffer};
use crate::dl;
use crate::error::GpuError;
use std::ffi::c_void;
use std::sync::Arc;

pub const LEVEL_ZERO_LIBRARY: &str = "libze_loader.so.1";

type Handle = *mut c_void;
type ZeResult = u32;

const ZE_INIT_FLAG_GPU_ONLY: u32 = 1;
const ZE_STRUCTURE_TYPE_CONTEXT_DESC: u32 = 0xd;
const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC: u32 = 0xe;
const ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC: u32 = 0x15;
const ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: u32 = 1;

#[repr(C)]
struct ContextDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
}

#[repr(C)]
struct DeviceMemAllocDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
    ordinal: u32,
}

#[repr(C)]
struct CommandQueueDesc {
    stype: u32,
    p_next: *const c_void,
    ordinal: u32,
    index: u32,
    flags: u32,
    mode: u32,
    priority: u32,
}

struct Api {
    init: unsafe extern "C" fn(u32) -> ZeResult,
    driver_get: unsafe extern "C" fn(*mut u32, *mut Handle) -> ZeResult,
    device_get: unsafe extern "C" fn(Handle, *mut u32, *mut Handle) -> ZeResult,
    context_create: unsafe extern "C" fn(Handle, *const ContextDesc, *mut Handle) -> ZeResult,
    mem_alloc_device:
        unsafe extern "C" fn(Handle, *const DeviceMemAllocDesc, usize, usize, Handle, *mut *mut c_void) -> ZeResult,
    mem_free: unsafe extern "C" fn(Handle, *mut c_void) -> ZeResult,
    list_create_immediate: unsafe extern "C" fn(Handle, Handle, *const CommandQueueDesc, *mut Handle) -> ZeResult,
    list_copy: unsafe extern "C" fn(Handle, *mut c_void, *const c_void, usize, Handle, u32, *mut Handle) -> ZeResult,
    list_destroy: unsafe extern "C" fn(Handle) -> ZeResult,
    context_destroy: unsafe extern "C" fn(Handle) -> ZeResult,
}

/// The loaded runtime with the first driver's devices and one context.
pub struct LevelZero {
    api: Api,
    context: Handle,
    devices: Vec<Handle>,
}

// SAFETY: Level Zero handles may be used from any thread; this value owns
// the context and only ever hands out copies of device handles.
unsafe impl Send for LevelZero {}
// SAFETY: as above; the calls made through shared references are
// thread-safe in Level Zero.
unsafe impl Sync for LevelZero {}

fn check(call: &'static str, rc: ZeResult) -> Result<(), GpuError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(GpuError::Call {
            call,
            code: rc as i32,
            msg: format!("Level Zero error 0x{rc:x}"),
        })
    }
}

impl LevelZero {
    pub fn load() -> Result<Arc<LevelZero>, GpuError> {
        let lib = dl::open(LEVEL_ZERO_LIBRARY)?;
        let api = Api {
            init: dl::sym(lib, "zeInit", LEVEL_ZERO_LIBRARY)?,
            driver_get: dl::sym(lib, "zeDriverGet", LEVEL_ZERO_LIBRARY)?,
            device_get: dl::sym(lib, "zeDeviceGet", LEVEL_ZERO_LIBRARY)?,
            context_create: dl::sym(lib, "zeContextCreate", LEVEL_ZERO_LIBRARY)?,
            mem_alloc_device: dl::sym(lib, "zeMemAllocDevice", LEVEL_ZERO_LIBRARY)?,
            mem_free: dl::sym(lib, "zeMemFree", LEVEL_ZERO_LIBRARY)?,
            list_create_immediate: dl::sym(lib, "zeCommandListCreateImmediate", LEVEL_ZERO_LIBRARY)?,
            list_copy: dl::sym(lib, "zeCommandListAppendMemoryCopy", LEVEL_ZERO_LIBRARY)?,
            list_destroy: dl::sym(lib, "zeCommandListDestroy", LEVEL_ZERO_LIBRARY)?,
            context_destroy: dl::sym(lib, "zeContextDestroy", LEVEL_ZERO_LIBRARY)?,
        };
        // SAFETY: zeInit is the documented first call.
        check("zeInit", unsafe { (api.init)(ZE_INIT_FLAG_GPU_ONLY) })?;
        let mut n = 1u32;
        let mut driver: Handle = std::ptr::null_mut();
        // SAFETY: asks for at most one driver into a local.
        check("zeDriverGet", unsafe { (api.driver_get)(&mut n, &mut driver) })?;
        if n == 0 || driver.is_null() {
            return Err(GpuError::NoDevices);
        }
        let mut count = 0u32;
        // SAFETY: a count query (null array).
        check("zeDeviceGet", unsafe {
            (api.device_get)(driver, &mut count, std::ptr::null_mut())
        })?;
        let mut devices = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: the array holds `count` handles.
        check("zeDeviceGet", unsafe {
            (api.device_get)(driver, &mut count, devices.as_mut_ptr())
        })?;
        devices.truncate(count as usize);
        let desc = ContextDesc {
            stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC,
            p_next: std::ptr::null(),
            flags: 0,
        };
        let mut context: Handle = std::ptr::null_mut();
        // SAFETY: desc and context are valid for the call.
        check("zeContextCreate", unsafe {
            (api.context_create)(driver, &desc, &mut context)
        })?;
        Ok(Arc::new(LevelZero { api, context, devices }))
    }

    pub fn device_count(&self) -> u32 {
        self.devices.len() as u32
    }

    /// `len` bytes on device `index`, with a synchronous command list for
    /// its copies.
    pub fn alloc(self: &Arc<Self>, index: u32, len: u64) -> Result<ZeMem, GpuError> {
        let dev = *self
            .devices
            .get(index as usize)
            .ok_or_else(|| GpuError::Bounds(format!("Level Zero device {index}")))?;
        let desc = DeviceMemAllocDesc {
            stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
            p_next: std::ptr::null(),
            flags: 0,
            ordinal: 0,
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: context and device are live; p receives the allocation,
        // freed once on drop. Alignment 16, as the originals used.
        check("zeMemAllocDevice", unsafe {
            (self.api.mem_alloc_device)(self.context, &desc, len as usize, 16, dev, &mut p)
        })?;
        let q = CommandQueueDesc {
            stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            p_next: std::ptr::null(),
            ordinal: 0,
            index: 0,
            flags: 0,
            mode: ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
            priority: 0,
        };
        let mut list: Handle = std::ptr::null_mut();
        // SAFETY: context, device and q are valid for the call.
        let rc = unsafe { (self.api.list_create_immediate)(self.context, dev, &q, &mut list) };
        if rc != 0 {
            // SAFETY: p was just allocated in this context.
            unsafe { (self.api.mem_free)(self.context, p) };
            check("zeCommandListCreateImmediate", rc)?;
        }
        Ok(ZeMem {
            ze: self.clone(),
            ptr: p,
            len,
            index,
            list,
        })
    }
}

/// Device memory from zeMemAllocDevice.
pub struct ZeMem {
    ze: Arc<LevelZero>,
    ptr: *mut c_void,
    len: u64,
    index: u32,
    list: Handle,
}

// SAFETY: the allocation and its command list are owned by this value.
unsafe impl Send for ZeMem {}

impl ZeMem {
    fn copy(&self, dst: *mut c_void, src: *const c_void, n: usize) -> Result<(), GpuError> {
        // SAFETY: callers pass ranges inside this allocation and host
        // slices of n bytes; the list is synchronous, so the copy is done
        // when the call returns.
        check("zeCommandListAppendMemoryCopy", unsafe {
            (self.ze.api.list_copy)(self.list, dst, src, n, std::ptr::null_mut(), 0, std::ptr::null_mut())
        })
    }

    fn range(&self, off: u64, n: usize) -> Result<*mut u8, GpuError> {
        let off = within(off, n as u64, self.len, "device")?;
        Ok((self.ptr as *mut u8).wrapping_add(off as usize))
    }
}

impl Buffer for ZeMem {
    fn address(&self) -> u64 {
        self.ptr as u64
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn device(&self) -> i32 {
        self.index as i32
    }

    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), GpuError> {
        let src = self.range(off, out.len())?;
        self.copy(out.as_mut_ptr().cast(), src as *const c_void, out.len())
    }

    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), GpuError> {
        let dst = self.range(off, data.len())?;
        self.copy(dst.cast(), data.as_ptr().cast(), data.len())
    }
}

impl Drop for ZeMem {
    fn drop(&mut self) {
        // SAFETY: list and ptr were created for this value in this context
        // and are released only here (the synchronous list has nothing in
        // flight).
        unsafe {
            (self.ze.api.list_destroy)(self.list);
            (self.ze.api.mem_free)(self.ze.context, self.ptr);
        }
    }
}

impl Drop for LevelZero {
    fn drop(&mut self) {
        // SAFETY: the context was created in `load`; every allocation in it
        // holds an Arc to this value, so none is left.
        unsafe { (self.api.context_destroy)(self.context) };
    }
}
