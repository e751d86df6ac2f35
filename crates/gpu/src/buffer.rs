//! Device memory of any runtime as the fabric tools use it (`Buffer`), and
//! the one bounds check before every copy, kernel launch and pointer of
//! every runtime (`within`). No runtime is loaded here.

use crate::error::GpuError;

/// Device memory of any runtime (CUDA, HIP, Level Zero) as the fabric
/// tools use it: where it is, and synchronous copies for patterns and
/// checks (never in a timed loop).
pub trait Buffer: Send {
    /// The device address, as libfabric registers it.
    fn address(&self) -> u64;
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The device's index in its runtime.
    fn device(&self) -> i32;
    /// Copies bytes `off..off + out.len()` to the host.
    fn read(&self, off: u64, out: &mut [u8]) -> Result<(), GpuError>;
    /// Copies `data` to `off`.
    fn write(&mut self, off: u64, data: &[u8]) -> Result<(), GpuError>;
    /// Waits until the work this process has queued on the buffer's device
    /// is done. A provider's copies through the runtime may return before
    /// they finish (CUDA's device-to-device cudaMemcpy does, and libfabric
    /// relies on stream order), so a completion does not yet mean the bytes
    /// have landed. Nothing to wait for where the runtime's copies are
    /// synchronous.
    fn settle(&self) -> Result<(), GpuError> {
        Ok(())
    }
}

/// Checks that `len` bytes at `off` lie inside a `size`-byte buffer of
/// `kind` ("device", "host") and gives back `off`: the one bounds check
/// before every copy, kernel launch and pointer of every runtime.
pub(crate) fn within(off: u64, len: u64, size: u64, kind: &str) -> Result<u64, GpuError> {
    match off.checked_add(len) {
        Some(end) if end <= size => Ok(off),
        _ => Err(GpuError::Bounds(format!(
            "{len} bytes at offset {off} of a {size}-byte {kind} buffer"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_a_buffer_or_wrapping_are_refused() {
        assert_eq!(within(16, 16, 32, "device"), Ok(16));
        assert_eq!(
            within(17, 16, 32, "host"),
            Err(GpuError::Bounds(
                "16 bytes at offset 17 of a 32-byte host buffer".into()
            ))
        );
        assert!(within(u64::MAX, 2, 32, "device").is_err());
    }
}
