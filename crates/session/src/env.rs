//! This side's own settings: what the user chose for this process only
//! (provider, domain, service ID) and test hooks. Never sent to the peer,
//! and the only way settings from the command line or the environment
//! reach the library, which reads neither itself.

use fabdiag_fabric::{CallWatcher, HmemIface};
use fabdiag_gpu::GpuKind;
use fabdiag_model::{OwnSettings, PollMode, Provider, ServeLimits, DEFAULT_SVC_ID};
use fabdiag_proto::auth::Auth;
use fabdiag_proto::PeerWatch;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Env {
    /// `-P`: the client's provider (None: the best one); on a server, the
    /// only provider it accepts.
    pub provider: Option<Provider>,
    /// `-d`: the domain (None: the one that reaches the peer).
    pub device: Option<String>,
    /// `-v`: shown in the banner.
    pub svc_id: u32,
    /// `--ignore-cpu-freq-mismatch`, for `--clock cycles`.
    pub ignore_cpu_freq_mismatch: bool,
    /// `--poll`: what the endpoints this side opens do when a poll finds
    /// their completion queue empty.
    pub poll: PollMode,
    /// `-t/-r` with the GPU type: which of this side's buffers are device
    /// memory (None: both in host memory).
    pub gpu: Option<GpuUse>,
    /// Both ends of the test in this process (`--local`, set by
    /// `session::local` itself): a provider defect of two endpoints of one
    /// process applies.
    pub same_process: bool,
    /// The peer's memory is in this process (`--local`, gpu-loopback-bw;
    /// set by `session::local` and `session::loopback`): device memory is
    /// registered without FI_HMEM_DEVICE_ONLY, as a process cannot open
    /// its own GPU IPC handle.
    pub peer_in_process: bool,
    /// The measuring thread takes a descriptor table of its own before the
    /// timed loop (`fabdiag_fabric::fd_table`), so a provider's polls
    /// (tcp's system calls) cost what a single-threaded peer's do. Only for
    /// a process that measures once and ends, and whose other threads
    /// touch no descriptor the measuring thread opens or closes from then
    /// on: a pair tool's client or server, a `serve` worker. Not for
    /// `--local` (both sides' threads share the provider), nor a process
    /// that runs test after test (sweep ranks, monitor, health).
    pub own_fd_table: bool,
    /// Where the endpoints this side opens are watched for a data call
    /// that never returns (the caller polls it; None: not watched).
    pub calls: Option<CallWatcher>,
    /// Where the control connections this side makes or accepts are
    /// watched for a peer that is gone, by a thread that can look while
    /// this one is held inside a provider call (None: not watched).
    pub peer: Option<PeerWatch>,
    /// Where this side's NIC counters are read around the measurement:
    /// sysfs and procfs under this root ("/" on a real machine; None: not
    /// read, said as "not available").
    pub counters_root: Option<PathBuf>,
    /// A server's limits on what one client's test may take.
    pub limits: ServeLimits,
    /// `--auth-key` or `--auth-munge`: how both sides prove who they are
    /// before the test (None: no authentication, as the originals).
    pub auth: Option<Auth>,
    /// A client starts its timed run no sooner than this (after the Ready
    /// barrier): a sweep pattern's flows start together.
    pub start_not_before: Option<std::time::Instant>,
    pub hooks: Hooks,
}

/// This side's buffers on a GPU: the TX (initiator) buffer on GPU `tx`,
/// the RX (target) buffer on GPU `rx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuUse {
    pub kind: GpuKind,
    pub tx: Option<u32>,
    pub rx: Option<u32>,
}

/// Deliberate faults, for tests that must show a check can fail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Atomic tools: pretend this many more iterations hit the target, so
    /// the final-value check must fail.
    pub amo_extra_iterations: u64,
    /// Bandwidth tools with `--verify`: flip byte N of the first checked
    /// operation's data after each size, before the check, so it must fail.
    pub corrupt_offset: Option<u64>,
    /// "GPU" buffers are host memory registered through the device path:
    /// the GPU plumbing, tested without a GPU.
    pub host_as_gpu: Option<HostAsGpu>,
    /// Lend every operation a context of fabdiag's own, as a provider with
    /// FI_CONTEXT requires, this many slots (0: as many as the provider's
    /// queues), whatever the provider: that path, tested without such a
    /// provider.
    pub lend_contexts: Option<usize>,
    /// The endpoint's data call with this number (1: the first) never
    /// returns, as a provider's that waits for a peer that is gone, or
    /// returns only after a while, as a working provider's may.
    pub stall_data_call: Option<StallHook>,
    /// Read the NIC counters as if the run had used this provider and
    /// domain ("verbs", "mlx5_0"): the InfiniBand, EFA and CXI layouts,
    /// on a fixture tree, through the whole of a run, without such a NIC.
    pub counters_as: Option<(String, String)>,
}

/// The host-as-GPU hook: the interface its buffers are registered as
/// (FI_HMEM_SYSTEM, or one claimed to see a libfabric refuse it), and how
/// long waiting for their device's queued work takes (as a GPU still
/// finishing the copies a provider queued: `DeviceMemory::settle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAsGpu {
    pub iface: HmemIface,
    pub settle: Duration,
}

/// Which data call the stall hook holds inside the provider, and for how
/// long (None: for good).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallHook {
    pub nth: u64,
    pub hold: Option<Duration>,
}

impl From<OwnSettings> for Env {
    /// The settings the command line chose; the rest at their defaults.
    fn from(own: OwnSettings) -> Env {
        Env {
            provider: own.provider,
            device: own.device,
            svc_id: own.svc_id,
            ignore_cpu_freq_mismatch: own.ignore_cpu_freq_mismatch,
            poll: own.poll,
            ..Env::default()
        }
    }
}

impl Default for Env {
    fn default() -> Self {
        Env {
            provider: None,
            device: None,
            svc_id: DEFAULT_SVC_ID,
            ignore_cpu_freq_mismatch: false,
            poll: PollMode::Spin,
            gpu: None,
            same_process: false,
            peer_in_process: false,
            own_fd_table: false,
            calls: None,
            peer: None,
            counters_root: None,
            limits: ServeLimits::default(),
            auth: None,
            start_not_before: None,
            hooks: Hooks::default(),
        }
    }
}
