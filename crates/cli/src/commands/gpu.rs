//! `-t/-r/-g` on this machine: is there a runtime for the GPU type (given,
//! or found as the originals' order finds it), and the GPU asked for? Each
//! missing piece is its own one-line "unavailable" message. fabdiag cannot
//! yet put a fabric tool's buffer in device memory, so a request that
//! passes every check still ends here, saying so; nothing falls back to
//! host memory.

use fabdiag_gpu::GpuKind;
use fabdiag_options::resolve::GpuRequest;

/// Why this machine cannot give `req` its GPU buffers.
pub fn unavailable(req: &GpuRequest) -> Option<String> {
    if !req.any() {
        return None;
    }
    let kind = match req.kind {
        Some(k) => k,
        None => match fabdiag_gpu::discover() {
            Ok(k) => k,
            Err(tried) => {
                return Some(format!(
                    "-t/-r ask for GPU memory but no GPU runtime loads here ({tried}); install the GPU driver, or run without -t/-r"
                ))
            }
        },
    };
    let lib = kind.library();
    if let Err(why) = fabdiag_gpu::library_present(&lib) {
        return Some(format!(
            "-g {}: cannot load its runtime {lib} ({why}); install the {} GPU driver, or run without -t/-r",
            kind.name(),
            kind.name()
        ));
    }
    if kind == GpuKind::Nvidia {
        let devices = match fabdiag_gpu::Cuda::load().and_then(|c| c.devices()) {
            Ok(d) => d,
            Err(e) => return Some(e.to_string()),
        };
        if devices.is_empty() {
            return Some(fabdiag_gpu::GpuError::NoDevices.to_string());
        }
        for (flag, index) in [("-t", req.tx), ("-r", req.rx)] {
            let Some(i) = index else { continue };
            if !devices.iter().any(|d| d.ordinal as i64 == i64::from(i)) {
                return Some(format!(
                    "{flag} {i}: no such GPU; GPU must be in the range: 0 to {} ({} NVIDIA GPU(s) found)",
                    devices.len() as i64 - 1,
                    devices.len()
                ));
            }
        }
    }
    Some(format!(
        "GPU memory (-t/-r on {}) is not supported by this fabdiag build yet: the fabric tools register system memory only",
        kind.name()
    ))
}
