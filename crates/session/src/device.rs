//! Device memory for the fabric tools: one buffer on a GPU of the type
//! `-g` (or discovery) chose, as a fabric `DeviceMemory` that libfabric
//! registers through FI_HMEM and whose bytes the session reaches through
//! the GPU runtime (patterns and checks, never in a timed loop). NVIDIA
//! through fabdiag-gpu's cudarc layer, AMD through HIP, Intel through
//! Level Zero. A test hook puts host memory through the same path
//! (FI_HMEM_SYSTEM). Never prints.

use crate::env::HostAsGpu;
use fabdiag_fabric::{DeviceMemory, FabricError, HmemIface, HostAsDevice, HostBuffer};
use fabdiag_gpu::cuda::{Context, DeviceMem};
use fabdiag_gpu::hip::Hip;
use fabdiag_gpu::ze::LevelZero;
use fabdiag_gpu::{Buffer, GpuError, GpuKind};
use std::sync::Arc;

/// A GPU runtime's buffer as libfabric's device memory.
struct OnGpu<B: Buffer> {
    buf: B,
    iface: HmemIface,
    /// FI_HMEM_DEVICE_ONLY (see DeviceMemory::device_only).
    device_only: bool,
}

impl<B: Buffer> DeviceMemory for OnGpu<B> {
    fn address(&self) -> u64 {
        self.buf.address()
    }
    fn len(&self) -> u64 {
        self.buf.len()
    }
    fn iface(&self) -> HmemIface {
        self.iface
    }
    fn device(&self) -> i32 {
        self.buf.device()
    }
    fn device_only(&self) -> bool {
        self.device_only
    }
    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), String> {
        self.buf.read(off, out).map_err(|e| e.to_string())
    }
    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), String> {
        self.buf.write(off, data).map_err(|e| e.to_string())
    }
    fn settle(&self) -> Result<(), String> {
        self.buf.settle().map_err(|e| e.to_string())
    }
}

/// The test hook's allocation: one "GPU" (index 0) of host memory,
/// registered as FI_HMEM_SYSTEM, or claiming the hook's interface.
pub fn host_as_gpu(index: u32, len: u64, hook: HostAsGpu) -> Result<(Box<dyn DeviceMemory>, u32), FabricError> {
    if index > 0 {
        return Err(range(index, 1));
    }
    Ok((
        Box::new(HostAsDevice {
            buf: HostBuffer::new(len, None, 0)?,
            iface: hook.iface,
            settle: hook.settle,
        }),
        1,
    ))
}

fn no_gpu(e: GpuError) -> FabricError {
    FabricError::NoGpu(e.to_string())
}

/// The originals' message for a GPU index past the last one.
fn range(index: u32, count: u32) -> FabricError {
    if count == 0 {
        FabricError::NoGpu("No GPUs found".into())
    } else {
        FabricError::NoGpu(format!(
            "GPU {index} does not exist: GPU must be in the range: 0 to {}.",
            count - 1
        ))
    }
}

/// `len` bytes on GPU `index` of type `kind`, and how many GPUs of that
/// type this machine has (the banner's `Found N GPU(s)`). `peer_elsewhere`:
/// the peer is another process (registration with FI_HMEM_DEVICE_ONLY).
pub fn allocate(
    kind: GpuKind,
    index: u32,
    len: u64,
    peer_elsewhere: bool,
) -> Result<(Box<dyn DeviceMemory>, u32), FabricError> {
    let count = fabdiag_gpu::device_count(kind).map_err(no_gpu)?;
    if index >= count {
        return Err(range(index, count));
    }
    let alloc = |e: GpuError| FabricError::Alloc {
        bytes: len,
        kind: format!("{} GPU {index}", kind.name()),
        reason: e.to_string(),
    };
    let mem: Box<dyn DeviceMemory> = match kind {
        GpuKind::Nvidia => {
            let ctx: Arc<Context> = Context::open(index as i32).map_err(no_gpu)?;
            Box::new(OnGpu {
                buf: DeviceMem::new(&ctx, len).map_err(alloc)?,
                iface: HmemIface::Cuda,
                device_only: peer_elsewhere,
            })
        }
        GpuKind::Amd => Box::new(OnGpu {
            buf: Arc::new(Hip::load().map_err(no_gpu)?)
                .alloc(index, len)
                .map_err(alloc)?,
            iface: HmemIface::Rocr,
            device_only: peer_elsewhere,
        }),
        GpuKind::Intel => Box::new(OnGpu {
            buf: LevelZero::load().map_err(no_gpu)?.alloc(index, len).map_err(alloc)?,
            iface: HmemIface::Ze,
            device_only: peer_elsewhere,
        }),
    };
    Ok((mem, count))
}
