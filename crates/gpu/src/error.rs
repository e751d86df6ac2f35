//! Every way a GPU runtime call can fail, each with its one-line message.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GpuError {
    #[error(
        "no NVIDIA driver: cannot load {library} ({reason}); install the NVIDIA driver or run on a machine with a GPU"
    )]
    NoDriver { library: String, reason: String },
    #[error("{call} failed: {msg} (CUDA error {code})")]
    Call { call: &'static str, code: i32, msg: String },
    #[error("no CUDA GPU found (the driver reports 0 devices)")]
    NoDevices,
    #[error("no GPU '{wanted}'; GPUs present: {present}")]
    UnknownDevice { wanted: String, present: String },
    /// Work queued on the GPU failed (a kernel's illegal access, an ECC
    /// error, a lost device): the driver reports it at the next point the
    /// host looks, and the context is unusable from then on.
    #[error("the GPU failed while running queued work: {msg} (CUDA error {code}); nothing more can run on it in this process")]
    Fault { code: i32, msg: String },
    #[error("{call} of {bytes} bytes failed: {msg} (CUDA error {code})")]
    Alloc {
        call: &'static str,
        bytes: u64,
        code: i32,
        msg: String,
    },
    #[error("out of bounds: {0}")]
    Bounds(String),
    #[error("{what} did not finish within {secs} s (a hung kernel or a lost GPU); --no-timeout waits forever")]
    TimedOut { what: String, secs: u64 },
}
