//! The CUDA driver through cudarc: a GPU's primary context, device memory,
//! pinned (and GPU-mapped) host memory, non-blocking streams, timing
//! events, and the host-traffic kernels loaded from the committed PTX.
//! Each type frees what it holds on drop; every driver call's failure is a
//! `GpuError` naming the call. Host memory is only handed out as slices
//! after the copies that use it have finished (bounded waits), and the
//! words the GPU polls are atomics. Never prints; decides nothing about
//! what is measured.

use crate::buffer::{within, Buffer};
use crate::discovery::{Cuda, DEFAULT_LIBRARY};
use crate::error::GpuError;
use crate::launch::{self, Arg, Kernel, Launch, TileWalk};
use crate::wait::poll_until;
use cudarc::driver::{result, sys, DriverError};
use std::ffi::{c_void, CString};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The kernels' PTX (crates/gpu/kernels/traffic.cu, scripts/dev/gpu/gen-ptx.sh).
pub const TRAFFIC_PTX: &str = include_str!("../kernels/traffic.ptx");

/// A driver error's code and the driver's words for it.
fn described(e: DriverError) -> (i32, String) {
    let msg = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown error".into());
    (e.0 as i32, msg)
}

/// An error that leaves the context unusable: CUDA's documentation says
/// of each that "the process [is left] in an inconsistent state and any
/// further CUDA work will return the same error". Whichever call meets it
/// first (often not the one whose work failed: a fault surfaces at the
/// next call of any kind), it is the GPU's fault, not that call's.
fn context_lost(e: &DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
    )
}

fn call(name: &'static str, e: DriverError) -> GpuError {
    let lost = context_lost(&e);
    let (code, msg) = described(e);
    failed(name, lost, code, msg)
}

/// A failed call's error: the GPU's fault when the context is lost.
fn failed(name: &'static str, context_lost: bool, code: i32, msg: String) -> GpuError {
    if context_lost {
        GpuError::Fault { code, msg }
    } else {
        GpuError::Call { call: name, code, msg }
    }
}

/// An allocation's failure, with its size (an out-of-memory names what
/// was asked for).
fn sized(name: &'static str, bytes: u64) -> impl FnOnce(DriverError) -> GpuError {
    move |e| {
        if context_lost(&e) {
            return call(name, e);
        }
        let (code, msg) = described(e);
        GpuError::Alloc {
            call: name,
            bytes,
            code,
            msg,
        }
    }
}

/// One GPU's primary context, current on whichever thread uses it.
pub struct Context {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    ordinal: i32,
}

// SAFETY: a CUDA context may be used from any thread once made current
// there (`bind` does that before every call that needs it).
unsafe impl Send for Context {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for Context {}

impl Context {
    /// Opens GPU `ordinal`. The driver library is proven loadable first
    /// (`Cuda::load`), because cudarc panics when it is not; a panic from
    /// cudarc all the same (a symbol missing from an old driver) is turned
    /// into an error here.
    pub fn open(ordinal: i32) -> Result<Arc<Context>, GpuError> {
        Cuda::load()?;
        let opened = std::panic::catch_unwind(|| -> Result<Context, GpuError> {
            result::init().map_err(|e| call("cuInit", e))?;
            let dev = result::device::get(ordinal).map_err(|e| call("cuDeviceGet", e))?;
            // SAFETY: dev came from cuDeviceGet.
            let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| call("cuDevicePrimaryCtxRetain", e))?;
            Ok(Context { dev, ctx, ordinal })
        });
        let c = opened.map_err(|p| GpuError::NoDriver {
            library: DEFAULT_LIBRARY.into(),
            reason: p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the CUDA binding failed".into()),
        })??;
        c.bind()?;
        Ok(Arc::new(c))
    }

    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// Makes the context current on this thread.
    pub fn bind(&self) -> Result<(), GpuError> {
        // SAFETY: ctx is the primary context retained in `open` and not
        // yet released (that happens only on drop).
        unsafe { result::ctx::set_current(self.ctx) }.map_err(|e| call("cuCtxSetCurrent", e))
    }

    fn attribute(&self, a: sys::CUdevice_attribute) -> Result<i32, GpuError> {
        // SAFETY: dev came from cuDeviceGet.
        unsafe { result::device::get_attribute(self.dev, a) }.map_err(|e| call("cuDeviceGetAttribute", e))
    }

    pub fn sm_count(&self) -> Result<u32, GpuError> {
        Ok(self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32)
    }

    pub fn l2_bytes(&self) -> Result<u64, GpuError> {
        Ok(self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64)
    }

    pub fn copy_engines(&self) -> Result<u32, GpuError> {
        Ok(self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)? as u32)
    }

    /// Free and total device memory.
    pub fn memory(&self) -> Result<(u64, u64), GpuError> {
        self.bind()?;
        let (free, total) = result::mem_get_info().map_err(|e| call("cuMemGetInfo", e))?;
        Ok((free as u64, total as u64))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: dev's primary context was retained once in `open`.
        let _ = unsafe { result::primary_ctx::release(self.dev) };
    }
}

/// Device memory.
pub struct DeviceMem {
    ctx: Arc<Context>,
    ptr: sys::CUdeviceptr,
    len: u64,
}

impl DeviceMem {
    pub fn new(ctx: &Arc<Context>, len: u64) -> Result<DeviceMem, GpuError> {
        ctx.bind()?;
        // SAFETY: a plain allocation; the pointer is freed once, on drop.
        let ptr = unsafe { result::malloc_sync(len as usize) }.map_err(sized("cuMemAlloc", len))?;
        Ok(DeviceMem {
            ctx: ctx.clone(),
            ptr,
            len,
        })
    }

    fn at(&self, off: u64, len: u64) -> Result<sys::CUdeviceptr, GpuError> {
        Ok(self.ptr + within(off, len, self.len, "device")?)
    }
}

impl Buffer for DeviceMem {
    fn len(&self) -> u64 {
        self.len
    }

    /// The device address (for libfabric's FI_HMEM registration).
    fn address(&self) -> u64 {
        self.ptr
    }

    /// Copies bytes `off..off + out.len()` to the host, synchronously.
    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), GpuError> {
        let p = self.at(off, out.len() as u64)?;
        self.ctx.bind()?;
        // SAFETY: the range was bounds-checked against this allocation;
        // out is a writable host slice of the same length.
        unsafe { result::memcpy_dtoh_sync(out, p) }.map_err(|e| call("cuMemcpyDtoH", e))
    }

    /// Copies `data` to `off`, synchronously.
    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), GpuError> {
        let p = self.at(off, data.len() as u64)?;
        self.ctx.bind()?;
        // SAFETY: as `read`, the other way.
        unsafe { result::memcpy_htod_sync(p, data) }.map_err(|e| call("cuMemcpyHtoD", e))
    }

    fn device(&self) -> i32 {
        self.ctx.ordinal()
    }

    /// The primary context's queued work, libfabric's copies included:
    /// its CUDA runtime works in the same primary context.
    fn settle(&self) -> Result<(), GpuError> {
        self.ctx.bind()?;
        result::ctx::synchronize().map_err(|e| call("cuCtxSynchronize", e))
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: ptr came from cuMemAlloc and is freed only here.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Page-locked host memory, optionally mapped into the GPU's address
/// space. Its bytes are handed out only when the copies queued on it have
/// finished (`bytes`).
pub struct HostMem {
    ctx: Arc<Context>,
    ptr: *mut u8,
    len: u64,
    device: Option<sys::CUdeviceptr>,
    /// Recorded after the last copy queued on this memory.
    last_use: Option<Arc<Event>>,
}

// SAFETY: the memory is owned by this value and reached only through it
// (and by the GPU, under the event discipline above).
unsafe impl Send for HostMem {}

impl HostMem {
    /// `len` bytes, zeroed, on the NUMA node `node` when given (the GPU's
    /// node: copies then cross no socket link), mapped into the GPU when
    /// `mapped`. Not write-combined: the CPU reads it back.
    pub fn new(ctx: &Arc<Context>, len: u64, mapped: bool, node: Option<u32>) -> Result<HostMem, GpuError> {
        ctx.bind()?;
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | if mapped { sys::CU_MEMHOSTALLOC_DEVICEMAP } else { 0 };
        let _policy = node.map(crate::numa::Preferred::set).transpose()?;
        // SAFETY: a plain allocation, freed once on drop.
        let raw = unsafe { result::malloc_host(len as usize, flags) }.map_err(sized("cuMemHostAlloc", len))?;
        let ptr = raw as *mut u8;
        // SAFETY: the allocation is len bytes and ours alone; zeroing it
        // also places its pages (on the preferred node).
        unsafe { std::ptr::write_bytes(ptr, 0, len as usize) };
        let device = if mapped {
            let mut d: sys::CUdeviceptr = 0;
            // SAFETY: raw was allocated with DEVICEMAP in this context.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut d, raw, 0) }
                .result()
                .map_err(|e| call("cuMemHostGetDevicePointer", e))?;
            Some(d)
        } else {
            None
        };
        Ok(HostMem {
            ctx: ctx.clone(),
            ptr,
            len,
            device,
            last_use: None,
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, once every copy queued on them has finished (waiting at
    /// most `limit`; None waits as long as it takes).
    pub fn bytes(&mut self, limit: Option<Duration>) -> Result<&mut [u8], GpuError> {
        if let Some(e) = &self.last_use {
            e.wait(limit, "a copy to or from host memory")?;
        }
        self.last_use = None;
        // SAFETY: no copy is in flight (waited above) and &mut self
        // excludes any other use; the allocation is len bytes.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len as usize) })
    }

    fn at(&self, off: u64, len: u64) -> Result<*mut u8, GpuError> {
        Ok(self.ptr.wrapping_add(within(off, len, self.len, "host")? as usize))
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // memory still being copied must not be freed under the GPU
        if let Some(e) = &self.last_use {
            let _ = e.wait(Some(Duration::from_secs(10)), "a copy before freeing");
        }
        let _ = self.ctx.bind();
        // SAFETY: ptr came from cuMemHostAlloc and is freed only here.
        let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
    }
}

/// A few 64-bit words of GPU-mapped host memory that kernels and the host
/// both use while work runs: the start gate, counters, progress.
pub struct Words {
    mem: HostMem,
    n: usize,
}

impl Words {
    pub fn new(ctx: &Arc<Context>, n: usize) -> Result<Words, GpuError> {
        Ok(Words {
            mem: HostMem::new(ctx, (n.max(1) * 8) as u64, true, None)?,
            n,
        })
    }

    /// Word `i` as the host sees it.
    pub fn get(&self, i: usize) -> Option<&AtomicU64> {
        // SAFETY: the memory is 8-byte aligned (page-aligned allocation),
        // word i is inside it, and the GPU only reaches it through device
        // atomics and volatile accesses, so an atomic view is sound.
        (i < self.n).then(|| unsafe { &*(self.mem.ptr.add(i * 8) as *const AtomicU64) })
    }

    /// Word `i`'s address on the GPU.
    pub fn device(&self, i: usize) -> Result<u64, GpuError> {
        match self.mem.device {
            Some(d) if i < self.n => Ok(d + (i * 8) as u64),
            _ => Err(GpuError::Bounds(format!("mapped word {i} of {}", self.n))),
        }
    }
}

/// A non-blocking stream (no implicit order with the default stream).
pub struct Stream {
    ctx: Arc<Context>,
    raw: sys::CUstream,
}

impl Stream {
    pub fn new(ctx: &Arc<Context>) -> Result<Stream, GpuError> {
        ctx.bind()?;
        let raw =
            result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| call("cuStreamCreate", e))?;
        Ok(Stream { ctx: ctx.clone(), raw })
    }

    /// Queues a copy of `len` bytes from host memory to device memory, and
    /// returns the timing event recorded after it (the host memory keeps
    /// it too, to wait for the copy before its bytes are used or freed).
    pub fn copy_to_device(
        &self,
        dst: &DeviceMem,
        dst_off: u64,
        src: &mut HostMem,
        src_off: u64,
        len: u64,
    ) -> Result<Arc<Event>, GpuError> {
        let d = dst.at(dst_off, len)?;
        let s = src.at(src_off, len)?;
        // SAFETY: both ranges were bounds-checked; src stays allocated
        // until the event recorded below completes (HostMem waits on it
        // before handing out its bytes or freeing them).
        unsafe { sys::cuMemcpyHtoDAsync_v2(d, s as *const c_void, len as usize, self.raw) }
            .result()
            .map_err(|e| call("cuMemcpyHtoDAsync", e))?;
        self.after(src)
    }

    /// Queues a copy of `len` bytes from device memory to host memory; the
    /// event as for `copy_to_device`.
    pub fn copy_to_host(
        &self,
        dst: &mut HostMem,
        dst_off: u64,
        src: &DeviceMem,
        src_off: u64,
        len: u64,
    ) -> Result<Arc<Event>, GpuError> {
        let d = dst.at(dst_off, len)?;
        let s = src.at(src_off, len)?;
        // SAFETY: as `copy_to_device`, the other way round.
        unsafe { sys::cuMemcpyDtoHAsync_v2(d as *mut c_void, s, len as usize, self.raw) }
            .result()
            .map_err(|e| call("cuMemcpyDtoHAsync", e))?;
        self.after(dst)
    }

    /// A timing event recorded after a copy that used `host`.
    fn after(&self, host: &mut HostMem) -> Result<Arc<Event>, GpuError> {
        let e = Arc::new(Event::new(&self.ctx, true)?);
        self.record(&e)?;
        host.last_use = Some(e.clone());
        Ok(e)
    }

    /// Queues setting `len` bytes of device memory to `byte`.
    pub fn memset(&self, dst: &DeviceMem, off: u64, len: u64, byte: u8) -> Result<(), GpuError> {
        let d = dst.at(off, len)?;
        // SAFETY: the range was bounds-checked.
        unsafe { result::memset_d8_async(d, byte, len as usize, self.raw) }.map_err(|e| call("cuMemsetD8Async", e))
    }

    /// An event (without timing) recorded now.
    fn mark(&self) -> Result<Event, GpuError> {
        let e = Event::new(&self.ctx, false)?;
        self.record(&e)?;
        Ok(e)
    }

    pub fn record(&self, e: &Event) -> Result<(), GpuError> {
        // SAFETY: both handles are live and belong to this context.
        unsafe { result::event::record(e.raw, self.raw) }.map_err(|e| call("cuEventRecord", e))
    }

    /// Waits for everything queued so far, at most `limit`.
    pub fn finish(&self, limit: Option<Duration>, what: &str) -> Result<(), GpuError> {
        self.mark()?.wait(limit, what)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: raw came from cuStreamCreate and is destroyed only here
        // (the driver lets queued work finish first).
        let _ = unsafe { result::stream::destroy(self.raw) };
    }
}

/// A point in a stream; with timing, two of them give the time between.
pub struct Event {
    ctx: Arc<Context>,
    raw: sys::CUevent,
}

// SAFETY: an event handle may be used from any thread (the driver API is
// thread-safe), and its context lives as long as it (the Arc above).
unsafe impl Send for Event {}
// SAFETY: as above; its methods only query, record into or destroy it.
unsafe impl Sync for Event {}

impl Event {
    pub fn new(ctx: &Arc<Context>, timing: bool) -> Result<Event, GpuError> {
        ctx.bind()?;
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let raw = result::event::create(flags).map_err(|e| call("cuEventCreate", e))?;
        Ok(Event { ctx: ctx.clone(), raw })
    }

    /// Has the GPU passed this point? (A fault of the work before it is
    /// reported here, as the driver's error.)
    pub fn done(&self) -> Result<bool, GpuError> {
        // SAFETY: raw is a live event of this context.
        match unsafe { result::event::query(self.raw) } {
            Ok(()) => Ok(true),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => {
                let (code, msg) = described(e);
                Err(GpuError::Fault { code, msg })
            }
        }
    }

    /// Polls until done, at most `limit` (None: no limit).
    pub fn wait(&self, limit: Option<Duration>, what: &str) -> Result<(), GpuError> {
        poll_until(what, Instant::now(), limit, Duration::from_micros(200), || self.done()).map(|_| ())
    }

    /// Milliseconds from `self` to `later` (both timing events, both done).
    pub fn ms_until(&self, later: &Event) -> Result<f64, GpuError> {
        // SAFETY: both are live timing events of this context.
        unsafe { result::event::elapsed(self.raw, later.raw) }
            .map(f64::from)
            .map_err(|e| call("cuEventElapsedTime", e))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: raw came from cuEventCreate and is destroyed only here.
        let _ = unsafe { result::event::destroy(self.raw) };
    }
}

/// The host-traffic kernels, loaded from the committed PTX.
pub struct Kernels {
    ctx: Arc<Context>,
    module: sys::CUmodule,
    /// In the order of `Kernel::ALL` (its declaration order): `kernel as
    /// usize` finds one.
    functions: Vec<sys::CUfunction>,
}

impl Kernels {
    pub fn load(ctx: &Arc<Context>) -> Result<Kernels, GpuError> {
        ctx.bind()?;
        let src = CString::new(TRAFFIC_PTX).map_err(|_| GpuError::Bounds("PTX holds a NUL byte".into()))?;
        // SAFETY: src is NUL-terminated PTX text, as cuModuleLoadData takes.
        let module = unsafe { result::module::load_data(src.as_ptr() as *const c_void) }
            .map_err(|e| call("cuModuleLoadData", e))?;
        let functions = Kernel::ALL
            .iter()
            .map(|k| {
                let n = CString::new(k.name()).map_err(|_| GpuError::Bounds("kernel name".into()))?;
                // SAFETY: module was just loaded and is unloaded only on drop.
                unsafe { result::module::get_function(module, n) }.map_err(|e| call("cuModuleGetFunction", e))
            })
            .collect::<Result<_, _>>();
        let functions = match functions {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: loaded above, and not kept anywhere.
                let _ = unsafe { result::module::unload(module) };
                return Err(e);
            }
        };
        Ok(Kernels {
            ctx: ctx.clone(),
            module,
            functions,
        })
    }

    /// Launches `l` on `s`.
    fn launch(&self, l: Launch, s: &Stream) -> Result<(), GpuError> {
        let f = self
            .functions
            .get(l.kernel as usize)
            .copied()
            .ok_or_else(|| GpuError::Bounds(format!("kernel {} not loaded", l.kernel.name())))?;
        self.ctx.bind()?;
        let mut values = l.args;
        let mut ptrs: Vec<*mut c_void> = values
            .iter_mut()
            .map(|a| match a {
                Arg::Ptr(x) | Arg::U64(x) => x as *mut u64 as *mut c_void,
                Arg::U32(x) => x as *mut u32 as *mut c_void,
            })
            .collect();
        // SAFETY: f is a kernel of this module; every parameter is passed
        // by value with the width the kernel declares (launch.rs's test
        // checks each launch against the PTX), and the driver copies them
        // before cuLaunchKernel returns. Device addresses in the launch
        // were bounds-checked by the callers below against live
        // allocations that outlive the stream's work (callers wait on the
        // stream).
        unsafe { result::launch_kernel(f, (l.grid, 1, 1), (l.block, 1, 1), 0, s.raw, &mut ptrs) }
            .map_err(|e| call("cuLaunchKernel", e))
    }

    /// Holds `s` until `gate` word `flag` is set or `max_ns` passes
    /// (then `timed_out` is set).
    pub fn gate(&self, s: &Stream, words: &Words, flag: usize, timed_out: usize, max_ns: u64) -> Result<(), GpuError> {
        self.launch(launch::gate(words.device(flag)?, max_ns, words.device(timed_out)?), s)
    }

    /// The tile work over `walk` (its region from offset 0 of `mem`);
    /// reads count mismatches into `words[counter]`; `progress` words (one
    /// per block, from index `progress`) may be None.
    #[allow(clippy::too_many_arguments)]
    pub fn tile(
        &self,
        s: &Stream,
        write: bool,
        mem: &DeviceMem,
        walk: TileWalk,
        words: &Words,
        counter: usize,
        progress: Option<usize>,
    ) -> Result<(), GpuError> {
        let walk = placed(mem, walk)?;
        let prog = match progress {
            Some(p) => {
                // every block's word must be there
                words.device(p + walk.blocks as usize - 1)?;
                words.device(p)?
            }
            None => 0,
        };
        let mismatches = if write { 0 } else { words.device(counter)? };
        self.launch(launch::tile(&walk, write, mismatches, prog), s)
    }

    /// Vectors of `mem` from byte `off`, `len` bytes, get the pattern of
    /// vector index `first_vec` onwards.
    pub fn fill(
        &self,
        s: &Stream,
        mem: &DeviceMem,
        off: u64,
        len: u64,
        first_vec: u64,
        seed: u32,
    ) -> Result<(), GpuError> {
        self.launch(launch::fill(mem.at(off, len)?, len, first_vec, seed), s)
    }

    /// Counts vectors of `mem[off..off+len]` off the pattern into
    /// `words[count]` and the lowest bad vector into `words[first]` (set
    /// it to u64::MAX first).
    #[allow(clippy::too_many_arguments)]
    pub fn verify(
        &self,
        s: &Stream,
        mem: &DeviceMem,
        off: u64,
        len: u64,
        first_vec: u64,
        seed: u32,
        words: &Words,
        count: usize,
        first: usize,
    ) -> Result<(), GpuError> {
        let l = launch::verify(
            mem.at(off, len)?,
            len,
            first_vec,
            seed,
            words.device(count)?,
            words.device(first)?,
        );
        self.launch(l, s)
    }

    /// After tile writes: the first `pieces` pieces of every block's walk.
    #[allow(clippy::too_many_arguments)]
    pub fn verify_tiles(
        &self,
        s: &Stream,
        mem: &DeviceMem,
        walk: TileWalk,
        pieces: u64,
        words: &Words,
        count: usize,
        first: usize,
    ) -> Result<(), GpuError> {
        let walk = placed(mem, walk)?;
        self.launch(
            launch::verify_tiles(&walk, pieces, words.device(count)?, words.device(first)?),
            s,
        )
    }
}

/// `walk` over the tile region at offset 0 of `mem` (bounds-checked).
fn placed(mem: &DeviceMem, walk: TileWalk) -> Result<TileWalk, GpuError> {
    Ok(TileWalk {
        region: mem.at(0, u64::from(walk.blocks) * walk.block_region)?,
        ..walk
    })
}

impl Drop for Kernels {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: module came from cuModuleLoadData and is unloaded once.
        let _ = unsafe { result::module::unload(self.module) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lost context is the GPU's fault whichever call meets it; any
    /// other error stays that call's. (`described` needs the driver
    /// loaded, so the pure halves are tested.)
    #[test]
    fn errors_that_lose_the_context_are_faults_from_any_call() {
        use sys::CUresult::*;
        for lost in [
            CUDA_ERROR_ECC_UNCORRECTABLE,
            CUDA_ERROR_ILLEGAL_ADDRESS,
            CUDA_ERROR_LAUNCH_FAILED,
        ] {
            assert!(context_lost(&DriverError(lost)), "{lost:?}");
        }
        for kept in [CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_READY] {
            assert!(!context_lost(&DriverError(kept)), "{kept:?}");
        }
        let ecc = failed("cuEventCreate", true, 214, "uncorrectable ECC error encountered".into());
        assert_eq!(
            ecc.to_string(),
            "the GPU failed while running queued work: uncorrectable ECC error encountered (CUDA error 214); nothing more can run on it in this process"
        );
        let invalid = failed("cuMemcpy", false, 1, "invalid argument".into());
        assert!(matches!(invalid, GpuError::Call { call: "cuMemcpy", .. }));
    }
}
