//! CUDA devices listed and one resolved (an ordinal, a UUID or a PCI bus
//! id), through a small dlopen wrapper of fabdiag's own: cudarc 0.19 panics
//! when libcuda or one of its symbols is missing, and discovery must
//! answer those cases with an error. Holds `unsafe` (each block with a
//! SAFETY note).

use crate::dl;
use crate::error::GpuError;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint};

/// The CUDA driver fabdiag loads: `FABDIAG_LIBCUDA`, else the system's.
pub fn cuda_library() -> String {
    std::env::var("FABDIAG_LIBCUDA").unwrap_or_else(|_| DEFAULT_LIBRARY.into())
}

pub const DEFAULT_LIBRARY: &str = "libcuda.so.1";

/// CUDA driver API entry points fabdiag uses, resolved by dlsym.
struct Api {
    init: unsafe extern "C" fn(c_uint) -> c_int,
    device_count: unsafe extern "C" fn(*mut c_int) -> c_int,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> c_int,
    device_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
    device_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int,
    pci_bus_id: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
    uuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> c_int,
    error_string: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int,
}

/// A loaded CUDA driver. The library stays loaded for the process.
pub struct Cuda {
    api: Api,
}

/// What fabdiag reports about a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub ordinal: i32,
    pub name: String,
    pub pci_bus_id: String,
    /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
    pub uuid: String,
    pub sm_count: i32,
    /// Copy engines that can overlap with kernels (asyncEngineCount).
    pub copy_engines: i32,
}

const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;

const ATTR_ASYNC_ENGINE_COUNT: c_int = 40;

impl Cuda {
    /// Opens the driver (FABDIAG_LIBCUDA overrides the library path) and
    /// initialises it.
    pub fn load() -> Result<Cuda, GpuError> {
        let library = cuda_library();
        let lib = dl::open(&library)?;
        let api = Api {
            init: dl::sym(lib, "cuInit", &library)?,
            device_count: dl::sym(lib, "cuDeviceGetCount", &library)?,
            device_get: dl::sym(lib, "cuDeviceGet", &library)?,
            device_name: dl::sym(lib, "cuDeviceGetName", &library)?,
            device_attribute: dl::sym(lib, "cuDeviceGetAttribute", &library)?,
            pci_bus_id: dl::sym(lib, "cuDeviceGetPCIBusId", &library)?,
            uuid: dl::sym(lib, "cuDeviceGetUuid", &library)?,
            error_string: dl::sym(lib, "cuGetErrorString", &library)?,
        };
        let cuda = Cuda { api };
        // SAFETY: cuInit(0) is the documented first call of the driver API.
        cuda.check("cuInit", unsafe { (cuda.api.init)(0) })?;
        Ok(cuda)
    }

    fn check(&self, call: &'static str, code: c_int) -> Result<(), GpuError> {
        if code == 0 {
            return Ok(());
        }
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: s receives a pointer to a static string or stays null.
        unsafe { (self.api.error_string)(code, &mut s) };
        let msg = if s.is_null() {
            "unknown error".into()
        } else {
            // SAFETY: the driver returns a static NUL-terminated string.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(GpuError::Call { call, code, msg })
    }

    pub fn devices(&self) -> Result<Vec<Device>, GpuError> {
        let mut n: c_int = 0;
        // SAFETY: n is a valid out-pointer.
        self.check("cuDeviceGetCount", unsafe { (self.api.device_count)(&mut n) })?;
        let mut out = Vec::new();
        for ordinal in 0..n {
            let mut dev: c_int = 0;
            // SAFETY: dev is a valid out-pointer; ordinal < count.
            self.check("cuDeviceGet", unsafe { (self.api.device_get)(&mut dev, ordinal) })?;
            let mut name = [0 as c_char; 256];
            // SAFETY: name has the length we pass; the driver NUL-terminates.
            self.check("cuDeviceGetName", unsafe {
                (self.api.device_name)(name.as_mut_ptr(), 256, dev)
            })?;
            let mut bus = [0 as c_char; 64];
            // SAFETY: as above.
            self.check("cuDeviceGetPCIBusId", unsafe {
                (self.api.pci_bus_id)(bus.as_mut_ptr(), 64, dev)
            })?;
            let mut uuid = [0u8; 16];
            // SAFETY: CUuuid is 16 bytes.
            self.check("cuDeviceGetUuid", unsafe { (self.api.uuid)(&mut uuid, dev) })?;
            let (mut sms, mut ces) = (0, 0);
            // SAFETY: out-pointers to locals; attribute ids from cuda.h.
            self.check("cuDeviceGetAttribute", unsafe {
                (self.api.device_attribute)(&mut sms, ATTR_MULTIPROCESSOR_COUNT, dev)
            })?;
            // SAFETY: as above.
            self.check("cuDeviceGetAttribute", unsafe {
                (self.api.device_attribute)(&mut ces, ATTR_ASYNC_ENGINE_COUNT, dev)
            })?;
            out.push(Device {
                ordinal,
                // SAFETY: both buffers were NUL-terminated by the driver.
                name: unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned(),
                // SAFETY: as above.
                pci_bus_id: unsafe { CStr::from_ptr(bus.as_ptr()) }.to_string_lossy().into_owned(),
                uuid: format_uuid(&uuid),
                sm_count: sms,
                copy_engines: ces,
            });
        }
        Ok(out)
    }
}

/// "GPU-" and the 16 bytes as 8-4-4-4-12 hex, as nvidia-smi shows them.
pub fn format_uuid(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Finds `wanted` among `devices`: an ordinal ("0"), a UUID (with or
/// without "GPU-", any prefix that is unique) or a PCI bus id (domain
/// optional, case-insensitive, "0000:3b:00.0" or "3b:00.0").
pub fn resolve<'a>(devices: &'a [Device], wanted: &str) -> Result<&'a Device, GpuError> {
    let w = wanted.trim();
    let present = || {
        if devices.is_empty() {
            "none".to_string()
        } else {
            devices
                .iter()
                .map(|d| format!("{} {} ({}, {})", d.ordinal, d.name, d.uuid, d.pci_bus_id))
                .collect::<Vec<_>>()
                .join("; ")
        }
    };
    let unknown = || GpuError::UnknownDevice {
        wanted: w.into(),
        present: present(),
    };
    if let Ok(n) = w.parse::<i32>() {
        return devices.iter().find(|d| d.ordinal == n).ok_or_else(unknown);
    }
    let lw = w.to_ascii_lowercase();
    let uuid_key = lw.strip_prefix("gpu-").unwrap_or(&lw).to_string();
    let by_uuid: Vec<&Device> = devices
        .iter()
        .filter(|d| {
            d.uuid
                .to_ascii_lowercase()
                .trim_start_matches("gpu-")
                .starts_with(&uuid_key)
        })
        .collect();
    if by_uuid.len() == 1 && uuid_key.len() >= 4 {
        return Ok(by_uuid[0]);
    }
    let key = bus_key(&lw);
    devices
        .iter()
        .find(|d| key.is_some() && bus_key(&d.pci_bus_id.to_ascii_lowercase()) == key)
        .ok_or_else(unknown)
}

/// A PCI address as (bus, device.function), the domain dropped.
fn bus_key(s: &str) -> Option<(u32, String)> {
    let parts: Vec<&str> = s.split(':').collect();
    let (bus, devfn) = match parts.as_slice() {
        [_, bus, devfn] | [bus, devfn] => (bus, devfn),
        _ => return None,
    };
    Some((u32::from_str_radix(bus, 16).ok()?, devfn.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_testkit::skipped;

    fn devs() -> Vec<Device> {
        vec![
            Device {
                ordinal: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                pci_bus_id: "00000000:19:00.0".into(),
                uuid: "GPU-4c9a1b2e-0000-1111-2222-333344445555".into(),
                sm_count: 132,
                copy_engines: 3,
            },
            Device {
                ordinal: 1,
                name: "NVIDIA H100 80GB HBM3".into(),
                pci_bus_id: "00000000:3B:00.0".into(),
                uuid: "GPU-9f00aa11-0000-1111-2222-333344445555".into(),
                sm_count: 132,
                copy_engines: 3,
            },
        ]
    }

    #[test]
    fn resolves_ordinals_uuids_and_bus_ids() {
        let d = devs();
        assert_eq!(resolve(&d, "1").unwrap().ordinal, 1);
        assert_eq!(
            resolve(&d, "GPU-9f00aa11-0000-1111-2222-333344445555").unwrap().ordinal,
            1
        );
        assert_eq!(resolve(&d, "4c9a1b2e").unwrap().ordinal, 0);
        assert_eq!(resolve(&d, "0000:3b:00.0").unwrap().ordinal, 1);
        assert_eq!(resolve(&d, "3B:00.0").unwrap().ordinal, 1);
        assert_eq!(resolve(&d, "19:00.0").unwrap().ordinal, 0);
        let e = resolve(&d, "7").unwrap_err().to_string();
        assert!(
            e.starts_with("no GPU '7'; GPUs present: 0 NVIDIA H100 80GB HBM3 (GPU-4c9a1b2e"),
            "{e}"
        );
        assert!(resolve(&d, "abc").is_err());
        assert_eq!(
            resolve(&[], "0").unwrap_err().to_string(),
            "no GPU '0'; GPUs present: none"
        );
    }

    #[test]
    fn uuid_format() {
        let b = [
            0x4c, 0x9a, 0x1b, 0x2e, 0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55,
        ];
        assert_eq!(format_uuid(&b), "GPU-4c9a1b2e-0000-1111-2222-333344445555");
    }

    #[test]
    fn no_driver_is_a_clear_error_here() {
        // this machine has no NVIDIA driver; a GPU machine has one
        if std::path::Path::new("/proc/driver/nvidia").exists() {
            skipped("an NVIDIA driver is present, the no-driver path cannot be shown here");
            return;
        }
        let e = Cuda::load().err().expect("no driver on this machine");
        assert!(matches!(e, GpuError::NoDriver { .. }), "{e}");
        assert!(
            e.to_string().starts_with("no NVIDIA driver: cannot load libcuda.so.1"),
            "{e}"
        );
    }
}
