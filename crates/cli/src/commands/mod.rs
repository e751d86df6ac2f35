//! One module per command: the pair tools (`pair`), `serve` (its per-test
//! worker, the lobby where a connection waits for its hello, the handoff of
//! a connection between them, the per-client test rates), the cluster
//! `sweep`, the fabric `monitor` (and its /metrics server), the node
//! `health` gate, the fabric's map (`topology`), the provider probes (`probe`), `doctor` (and its NIC
//! counters), `host_traffic`, and the generated `docs` (completions, man
//! pages).

pub mod docs;
pub mod doctor;
pub mod gpu;
pub mod health;
pub mod host_traffic;
pub mod monitor;
pub mod pair;
pub mod probe;
pub mod serve;
pub mod sweep;
pub mod topology;

use fabdiag_options::{Action, OptionError};
use fabdiag_session::{Env, Hooks};

/// The libfabric to load: `FABDIAG_LIBFABRIC`, else the system's. A
/// library that cannot be loaded is named with where its path came from.
pub fn load_libfabric() -> Result<(), fabdiag_fabric::FabricError> {
    // libfabric 1.17 links the PSM (infinipath) library, whose constructor
    // installs handlers for SIGINT, SIGTERM and crash signals that exit
    // with status 1 and write `<prog>.*.btr` files into the working
    // directory (docs/known-defects.md). Its own switch turns that off,
    // unless the user set it; this runs before any thread is started.
    if std::env::var_os("IPATH_NO_BACKTRACE").is_none() {
        std::env::set_var("IPATH_NO_BACKTRACE", "1");
    }
    // set but empty counts as unset (dlopen("") would open fabdiag itself)
    match std::env::var("FABDIAG_LIBFABRIC").ok().filter(|p| !p.is_empty()) {
        Some(path) => fabdiag_fabric::load_from(&path, Some("FABDIAG_LIBFABRIC")),
        None => fabdiag_fabric::load(),
    }
}

/// The utility command's arguments, or the exit code when it is done
/// already (its `-h` printed, or a refusal said).
pub fn utility_args<T>(
    command: fabdiag_options::utility::Utility,
    prog: &str,
    r: Result<Action<T>, OptionError>,
) -> Result<T, u8> {
    match r {
        Ok(Action::Run(t)) => Ok(t),
        Ok(_) => {
            crate::streams::print_stdout(&fabdiag_options::utility::usage(command));
            Err(crate::exit::OK)
        }
        Err(OptionError::Invalid(m) | OptionError::Unavailable(m)) => {
            tell!("{prog}: {m}");
            Err(crate::exit::USAGE)
        }
    }
}

/// Test hooks from the environment (they exist to prove checks can fail,
/// or to run a path no provider here asks for).
pub fn with_hooks(env: Env) -> Env {
    let amo_extra_iterations = std::env::var("FABDIAG_TEST_AMO_EXTRA_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let corrupt_offset = std::env::var("FABDIAG_TEST_CORRUPT_OFFSET")
        .ok()
        .and_then(|v| v.parse().ok());
    let lend_contexts = std::env::var("FABDIAG_TEST_OP_CONTEXTS")
        .ok()
        .and_then(|v| v.parse().ok());
    // N (held for good) or N:SECONDS (held that long, then it returns)
    let stall_data_call = std::env::var("FABDIAG_TEST_STALL_DATA_CALL").ok().and_then(|v| {
        let (nth, hold) = match v.split_once(':') {
            Some((n, s)) => (n, Some(seconds(s)?)),
            None => (v.as_str(), None),
        };
        Some(fabdiag_session::StallHook {
            nth: nth.parse().ok()?,
            hold,
        })
    });
    // PROVIDER:DOMAIN
    let counters_as = std::env::var("FABDIAG_TEST_COUNTERS_AS")
        .ok()
        .and_then(|v| v.split_once(':').map(|(p, d)| (p.to_string(), d.to_string())));
    Env {
        counters_root: Some(sysfs_root()),
        hooks: Hooks {
            amo_extra_iterations,
            corrupt_offset,
            host_as_gpu: host_as_gpu(),
            lend_contexts,
            stall_data_call,
            counters_as,
        },
        ..env
    }
}

/// Where sysfs and procfs are read: "/", or the fixture tree named by
/// FABDIAG_TEST_SYSFS_ROOT (a test hook).
pub fn sysfs_root() -> std::path::PathBuf {
    std::env::var_os("FABDIAG_TEST_SYSFS_ROOT").map_or_else(|| "/".into(), std::path::PathBuf::from)
}

/// A test hook's duration in seconds ("0.5"); None if it is not one.
fn seconds(s: &str) -> Option<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(s.parse().ok()?).ok()
}

/// `FABDIAG_TEST_HOST_AS_GPU=1`: "GPU" buffers are host memory registered
/// through the device path (FI_HMEM_SYSTEM), so machines without a GPU
/// test everything around the GPU runtime; `=cuda` claims FI_HMEM_CUDA
/// instead, to see a libfabric without CUDA refuse it.
/// `FABDIAG_TEST_SETTLE_SECONDS=S` with it: waiting for such a buffer's
/// queued device work takes S seconds, as a GPU's still finishing the
/// copies a provider queued.
pub fn host_as_gpu() -> Option<fabdiag_session::HostAsGpu> {
    let iface = match std::env::var("FABDIAG_TEST_HOST_AS_GPU").ok()?.as_str() {
        "1" => fabdiag_fabric::HmemIface::System,
        "cuda" => fabdiag_fabric::HmemIface::Cuda,
        _ => return None,
    };
    let settle = std::env::var("FABDIAG_TEST_SETTLE_SECONDS")
        .ok()
        .and_then(|s| seconds(&s))
        .unwrap_or_default();
    Some(fabdiag_session::HostAsGpu { iface, settle })
}
