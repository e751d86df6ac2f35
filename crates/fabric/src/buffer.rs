//! Memory for registration: page-aligned host memory from anonymous mmap,
//! with optional huge pages (MAP_HUGETLB), or device memory a GPU layer
//! allocated (`DeviceMemory`), registered through FI_HMEM. Owns what it
//! holds; never prints.

use crate::FabricError;
use std::ptr::NonNull;

/// The kernel's directory for huge pages of `page_bytes` (2 MiB, 1 GiB):
/// the caller's vocabulary names the sizes (fabdiag-model's
/// `HugePageSize`); the kernel's interfaces, and this crate's, take bytes.
fn hugepage_dir(page_bytes: u64) -> String {
    format!("/sys/kernel/mm/hugepages/hugepages-{}kB", page_bytes / 1024)
}

/// Configured and free huge pages of `page_bytes`; None where the kernel
/// has no such pool.
pub fn hugepage_pool(page_bytes: u64) -> (Option<u64>, Option<u64>) {
    let read = |file: &str| -> Option<u64> {
        std::fs::read_to_string(format!("{}/{file}", hugepage_dir(page_bytes)))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    (read("nr_hugepages"), read("free_hugepages"))
}

/// Free huge pages of `page_bytes`, from sysfs.
pub fn free_hugepages(page_bytes: u64) -> Result<u64, FabricError> {
    let path = format!("{}/free_hugepages", hugepage_dir(page_bytes));
    let text = std::fs::read_to_string(&path).map_err(|e| FabricError::HugePageInfo {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    text.trim().parse().map_err(|_| FabricError::HugePageInfo {
        path,
        reason: format!("unexpected content {:?}", text.trim()),
    })
}

/// The GPU memory interfaces libfabric registers (fi_mr(3) FI_HMEM_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HmemIface {
    /// Host memory through the same registration call (FI_HMEM_SYSTEM):
    /// how the tests exercise the device path on machines without a GPU.
    System,
    Cuda,
    Rocr,
    Ze,
}

impl HmemIface {
    /// The shim's code for fdg_mr_reg_hmem.
    pub(crate) fn code(self) -> i32 {
        match self {
            HmemIface::System => 0,
            HmemIface::Cuda => 1,
            HmemIface::Rocr => 2,
            HmemIface::Ze => 3,
        }
    }

    /// libfabric's name, e.g. "FI_HMEM_CUDA".
    pub fn name(self) -> &'static str {
        match self {
            HmemIface::System => "FI_HMEM_SYSTEM",
            HmemIface::Cuda => "FI_HMEM_CUDA",
            HmemIface::Rocr => "FI_HMEM_ROCR",
            HmemIface::Ze => "FI_HMEM_ZE",
        }
    }
}

/// Device memory a GPU layer allocated: what libfabric needs to register
/// it, and the host's way to its bytes (for patterns and data checks,
/// never inside a timed loop). The allocation lives as long as the value.
pub trait DeviceMemory: Send {
    /// The device address (a CUDA/HIP device pointer, a Level Zero one).
    fn address(&self) -> u64;
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn iface(&self) -> HmemIface;
    /// The device the memory belongs to (CUDA ordinal, Level Zero index).
    fn device(&self) -> i32;
    /// Registered with FI_HMEM_DEVICE_ONLY: memory from the runtime's
    /// device allocation whose peer is another process. shm then moves it
    /// device to device through the runtime's IPC; without the flag it
    /// copies through host memory in small pieces. A process cannot open
    /// its own IPC handle (CUDA answers "invalid device context"), so a
    /// peer in the same process must leave it off.
    fn device_only(&self) -> bool {
        false
    }
    /// Copies bytes `off..off + out.len()` to the host.
    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), String>;
    /// Copies `data` into the memory at `off`.
    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), String>;
    /// Waits for the work this process queued on the device, such as a
    /// provider's copies that return before they finish
    /// (fabdiag_gpu::Buffer::settle).
    fn settle(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Host memory registered through the device path and reached only
/// through copies, as a GPU's is: how machines without a GPU exercise that
/// path (the fabric tests, and fabdiag's test hook
/// `FABDIAG_TEST_HOST_AS_GPU`). It names FI_HMEM_SYSTEM, or claims another
/// interface to show what a libfabric without that interface says.
pub struct HostAsDevice {
    pub buf: HostBuffer,
    pub iface: HmemIface,
    /// How long `settle` takes: a device still finishing queued copies.
    pub settle: std::time::Duration,
}

impl DeviceMemory for HostAsDevice {
    fn address(&self) -> u64 {
        self.buf.as_ptr() as u64
    }
    fn len(&self) -> u64 {
        self.buf.len() as u64
    }
    fn iface(&self) -> HmemIface {
        self.iface
    }
    fn device(&self) -> i32 {
        0
    }
    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), String> {
        out.copy_from_slice(&self.buf.as_slice()[span(off, out.len(), self.buf.len())?]);
        Ok(())
    }
    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), String> {
        let r = span(off, data.len(), self.buf.len())?;
        self.buf.as_mut_slice()[r].copy_from_slice(data);
        Ok(())
    }
    fn settle(&self) -> Result<(), String> {
        std::thread::sleep(self.settle);
        Ok(())
    }
}

/// `n` bytes at `off` of a `size`-byte buffer, if they lie inside it.
fn span(off: u64, n: usize, size: usize) -> Result<std::ops::Range<usize>, String> {
    usize::try_from(off)
        .ok()
        .and_then(|a| Some(a..a.checked_add(n)?))
        .filter(|r| r.end <= size)
        .ok_or_else(|| format!("{n} bytes at offset {off} of a {size}-byte buffer"))
}

/// One buffer to register: host memory, or a GPU's.
pub enum Memory {
    Host(HostBuffer),
    Device(Box<dyn DeviceMemory>),
}

impl Memory {
    pub fn len(&self) -> u64 {
        match self {
            Memory::Host(h) => h.len() as u64,
            Memory::Device(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The address operations name (host pointer or device pointer).
    pub(crate) fn address(&self) -> u64 {
        match self {
            Memory::Host(h) => h.as_ptr() as u64,
            Memory::Device(d) => d.address(),
        }
    }

    /// The bytes, for host memory.
    pub fn host(&self) -> Option<&[u8]> {
        match self {
            Memory::Host(h) => Some(h.as_slice()),
            Memory::Device(_) => None,
        }
    }

    pub fn host_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Memory::Host(h) => Some(h.as_mut_slice()),
            Memory::Device(_) => None,
        }
    }

    /// Copies bytes `off..off + out.len()` out, from either kind.
    pub fn read(&self, off: u64, out: &mut [u8]) -> Result<(), FabricError> {
        let end = off.checked_add(out.len() as u64).filter(|&e| e <= self.len());
        if end.is_none() {
            return Err(FabricError::Bounds(format!(
                "{} bytes at offset {off} of a {}-byte buffer",
                out.len(),
                self.len()
            )));
        }
        match self {
            Memory::Host(h) => {
                out.copy_from_slice(&h.as_slice()[off as usize..off as usize + out.len()]);
                Ok(())
            }
            Memory::Device(d) => d.read(off, out).map_err(FabricError::Device),
        }
    }

    /// Device memory: waits for the work this process queued on its
    /// device (fabdiag_gpu::Buffer::settle). Host memory: nothing.
    pub fn settle(&self) -> Result<(), FabricError> {
        match self {
            Memory::Host(_) => Ok(()),
            Memory::Device(d) => d.settle().map_err(FabricError::Device),
        }
    }

    /// Copies `data` in at `off`, into either kind.
    pub fn write(&mut self, off: u64, data: &[u8]) -> Result<(), FabricError> {
        let len = self.len();
        if off.checked_add(data.len() as u64).is_none_or(|e| e > len) {
            return Err(FabricError::Bounds(format!(
                "{} bytes at offset {off} of a {len}-byte buffer",
                data.len()
            )));
        }
        match self {
            Memory::Host(h) => {
                h.as_mut_slice()[off as usize..off as usize + data.len()].copy_from_slice(data);
                Ok(())
            }
            Memory::Device(d) => d.write(off, data).map_err(FabricError::Device),
        }
    }
}

/// An anonymous private mapping, unmapped on drop.
pub struct HostBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory exclusively owned by this value.
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// Maps `len` bytes (rounded up to the page size, or to huge pages of
    /// `hugepages` bytes, a power of two) filled with `fill`.
    pub fn new(len: u64, hugepages: Option<u64>, fill: u8) -> Result<Self, FabricError> {
        let page = hugepages.unwrap_or_else(page_size);
        if !page.is_power_of_two() {
            return Err(FabricError::Alloc {
                bytes: len,
                kind: format!("{page}-byte page"),
                reason: "a page size is a power of two".into(),
            });
        }
        let rounded = len.max(1).div_ceil(page) * page;
        let bytes = usize::try_from(rounded).map_err(|_| FabricError::Alloc {
            bytes: rounded,
            kind: "host".into(),
            reason: "larger than the address space".into(),
        })?;
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        if let Some(h) = hugepages {
            // mmap(2): the size's log2 in the bits above MAP_HUGE_SHIFT
            // (MAP_HUGE_2MB is 21 there, MAP_HUGE_1GB 30)
            flags |= libc::MAP_HUGETLB | ((h.trailing_zeros() as i32) << libc::MAP_HUGE_SHIFT);
        }
        // SAFETY: anonymous mapping request with no address hint; the result
        // is checked against MAP_FAILED (the original tested NULL, §6.10).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            let kind = match hugepages {
                Some(h) => format!("{} kB huge page", h / 1024),
                None => "host".into(),
            };
            return Err(FabricError::Alloc {
                bytes: rounded,
                kind,
                reason: std::io::Error::last_os_error().to_string(),
            });
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| FabricError::Alloc {
            bytes: rounded,
            kind: "host".into(),
            reason: "mmap returned null".into(),
        })?;
        let mut buf = HostBuffer { ptr, len: bytes };
        if fill != 0 {
            buf.as_mut_slice().fill(fill);
        }
        Ok(buf)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live mapping owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping created in new().
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

pub fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_pages_and_fills() {
        let b = HostBuffer::new(10, None, 0xA5).unwrap();
        assert_eq!(b.len() as u64, page_size());
        assert!(b.as_slice().iter().all(|&x| x == 0xA5));
        let z = HostBuffer::new(page_size() + 1, None, 0).unwrap();
        assert_eq!(z.len() as u64, 2 * page_size());
        assert!(z.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn host_as_device_copies_stay_inside_the_buffer() {
        let mut d = HostAsDevice {
            buf: HostBuffer::new(64, None, 0).unwrap(),
            iface: HmemIface::System,
            settle: std::time::Duration::ZERO,
        };
        let len = d.len() as usize;
        d.write(8, &[1, 2, 3]).unwrap();
        let mut out = [0u8; 4];
        d.read(7, &mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 3]);
        assert!(d.read(len as u64 - 3, &mut out).is_err());
        assert!(d.write(u64::MAX, &[1]).is_err());
    }
}
