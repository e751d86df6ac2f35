//! Which GPU runtimes load here: the GPU types (`GpuKind`, `-g`), the
//! library each loads, the first that loads in the originals' order
//! (`discover`), and how many GPUs one reports.

use crate::discovery::{cuda_library, Cuda};
use crate::dl;
use crate::error::GpuError;
use crate::hip::{self, HIP_LIBRARY};
use crate::ze::{self, LEVEL_ZERO_LIBRARY};

/// Can `library` be loaded here? (For reporting which GPU runtimes a node
/// has; the library is unloaded again.)
pub fn library_present(library: &str) -> Result<(), String> {
    dl::present(library)
}

/// The GPU types the CXI diagnostics know, as runtimes to load
/// (fabdiag-model's `GpuKind` is `-g`'s, mapped to this by the binary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKind {
    Amd,
    Nvidia,
    Intel,
}

impl GpuKind {
    /// The originals' preference when `-g` is not given (originals §2.12): AMD,
    /// then NVIDIA, then INTEL. They decided at build time; fabdiag asks
    /// which runtime loads here.
    pub const DISCOVERY_ORDER: [GpuKind; 3] = [GpuKind::Amd, GpuKind::Nvidia, GpuKind::Intel];

    /// As the banners print it.
    pub fn name(self) -> &'static str {
        match self {
            GpuKind::Amd => "AMD",
            GpuKind::Nvidia => "NVIDIA",
            GpuKind::Intel => "INTEL",
        }
    }

    /// The runtime library fabdiag loads for this type.
    pub fn library(self) -> String {
        match self {
            GpuKind::Amd => HIP_LIBRARY.into(),
            GpuKind::Nvidia => cuda_library(),
            GpuKind::Intel => LEVEL_ZERO_LIBRARY.into(),
        }
    }
}

/// The first GPU type whose runtime loads here, in the originals' order;
/// otherwise every library tried and why it did not load.
pub fn discover() -> Result<GpuKind, String> {
    let mut tried = Vec::new();
    for kind in GpuKind::DISCOVERY_ORDER {
        let lib = kind.library();
        match library_present(&lib) {
            Ok(()) => return Ok(kind),
            Err(why) => tried.push(format!("{} {lib}: {why}", kind.name())),
        }
    }
    Err(tried.join("; "))
}

/// How many GPUs of `kind` its runtime reports here.
pub fn device_count(kind: GpuKind) -> Result<u32, GpuError> {
    Ok(match kind {
        GpuKind::Nvidia => Cuda::load()?.devices()?.len() as u32,
        GpuKind::Amd => hip::Hip::load()?.device_count()?,
        GpuKind::Intel => ze::LevelZero::load()?.device_count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_testkit::skipped;

    #[test]
    fn discovery_names_every_runtime_it_tried() {
        match discover() {
            // a GPU machine: some runtime loads
            Ok(k) => skipped(format!("a GPU runtime is present here ({})", k.name())),
            Err(e) => {
                for lib in [
                    "AMD libamdhip64.so:",
                    "NVIDIA libcuda.so.1:",
                    "INTEL libze_loader.so.1:",
                ] {
                    assert!(e.contains(lib), "{e}");
                }
            }
        }
    }
}
