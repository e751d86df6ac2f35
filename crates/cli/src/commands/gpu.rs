//! `-t/-r/-g` on this machine, before any connection: the GPU type (given,
//! or the first runtime that loads, in the originals' order), its runtime,
//! and the GPUs asked for. Each missing piece is its own one-line
//! "unavailable" message; nothing falls back to host memory. What passes
//! becomes the session's `GpuUse` (the provider's FI_HMEM support is
//! checked when the endpoint is opened).

use fabdiag_gpu::GpuKind;
use fabdiag_options::resolve::GpuRequest;
use fabdiag_session::GpuUse;

/// The GPU buffers `req` asks for on this machine, or why it cannot have
/// them.
pub fn resolve(req: &GpuRequest) -> Result<Option<GpuUse>, String> {
    if !req.any() {
        return Ok(None);
    }
    if super::host_as_gpu().is_some() {
        // the test hook: host memory through the device path, no runtime
        return Ok(Some(on(req, req.kind.map_or(GpuKind::Nvidia, runtime))));
    }
    let kind = match req.kind {
        Some(k) => runtime(k),
        None => fabdiag_gpu::discover().map_err(|tried| {
            format!("-t/-r ask for GPU memory but no GPU runtime loads here ({tried}); install the GPU driver, or run without -t/-r")
        })?,
    };
    let lib = kind.library();
    fabdiag_gpu::library_present(&lib).map_err(|why| {
        format!(
            "-g {}: cannot load its runtime {lib} ({why}); install the {} GPU driver, or run without -t/-r",
            kind.name(),
            kind.name()
        )
    })?;
    let count = fabdiag_gpu::device_count(kind).map_err(|e| e.to_string())?;
    if count == 0 {
        return Err(format!("No GPUs found ({} runtime {lib} reports none)", kind.name()));
    }
    for (flag, index) in [("-t", req.tx), ("-r", req.rx)] {
        if let Some(i) = index.filter(|&i| i >= count) {
            return Err(format!(
                "{flag} {i}: no such GPU; GPU must be in the range: 0 to {} ({count} {} GPU(s) found)",
                count - 1,
                kind.name()
            ));
        }
    }
    Ok(Some(on(req, kind)))
}

/// The runtime fabdiag-gpu loads for the GPU type `-g` named.
pub fn runtime(kind: fabdiag_model::GpuKind) -> GpuKind {
    match kind {
        fabdiag_model::GpuKind::Amd => GpuKind::Amd,
        fabdiag_model::GpuKind::Nvidia => GpuKind::Nvidia,
        fabdiag_model::GpuKind::Intel => GpuKind::Intel,
    }
}

/// `req`'s buffers on GPUs of `kind` (already checked).
pub fn on(req: &GpuRequest, kind: GpuKind) -> GpuUse {
    GpuUse {
        kind,
        tx: req.tx,
        rx: req.rx,
    }
}
