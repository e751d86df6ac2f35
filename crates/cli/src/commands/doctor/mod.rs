//! `fabdiag doctor [--json] [--watch SECONDS]`: what this node has for
//! fabdiag (its NIC counters from `nics`), and which tools can run
//! on it. It exits 4 when nothing fabdiag runs is usable,
//! so it can gate a node in a prolog script.

mod nics;

use super::{load_libfabric, utility_args};
use crate::exit;
use crate::streams::print_stdout;
use crate::version::VERSION;
use fabdiag_fabric::hugepage_pool;
use fabdiag_model::HugePageSize;
use fabdiag_model::{Tool, HOST_TRAFFIC_ORIGINAL};
use fabdiag_options::utility::Utility;
use fabdiag_report::doctor::{
    self, hmem_from_log, Clock, Doctor, GpuDevice, GpuRuntime, HmemLog, HugePool, Libfabric, Limit, Limits, ToolStatus,
};
use std::collections::{BTreeMap, BTreeSet};

/// The hidden subcommand that lets libfabric initialise with its log on.
pub const PROBE: &str = "__hmem-probe";

/// In the probe process: initialise libfabric's providers (their hmem
/// set-up logs each interface it cannot use).
pub fn probe() -> u8 {
    match load_libfabric().and_then(|()| fabdiag_session::providers()) {
        Ok(_) => exit::OK,
        Err(_) => exit::UNAVAILABLE,
    }
}

/// Which GPU interfaces libfabric can use here, and why a built-in one
/// cannot: libfabric has no call that says, but its initialisation logs
/// it (fabdiag_report::doctor::hmem_from_log); a child process runs that
/// initialisation with the log on.
fn hmem_interfaces() -> HmemLog {
    let out = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg(PROBE)
            .env("FI_LOG_LEVEL", "info")
            .stdin(std::process::Stdio::null())
            .output()
    });
    match out {
        Ok(out) => hmem_from_log(&String::from_utf8_lossy(&out.stderr)),
        Err(_) => HmemLog::default(),
    }
}

/// The variables that steer libfabric (and which one fabdiag loads).
fn libfabric_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .filter(|(k, _)| k.starts_with("FI_") || k == "FABDIAG_LIBFABRIC")
        .collect()
}

fn libfabric() -> Libfabric {
    let environment = libfabric_environment();
    match load_libfabric() {
        Ok(()) => {
            let hmem = hmem_interfaces();
            Libfabric {
                found: true,
                path: fabdiag_fabric::library_path(),
                version: fabdiag_fabric::library_version().ok(),
                hmem_interfaces: hmem.usable,
                hmem_unsupported: hmem.unsupported,
                hmem_failed: hmem.failed,
                error: None,
                environment,
            }
        }
        Err(e) => Libfabric {
            found: false,
            path: None,
            version: None,
            hmem_interfaces: None,
            hmem_unsupported: Vec::new(),
            hmem_failed: BTreeMap::new(),
            error: Some(e.to_string()),
            environment,
        },
    }
}

fn gpus() -> Vec<GpuRuntime> {
    let nvidia = match fabdiag_gpu::Cuda::load().and_then(|c| c.devices()) {
        Ok(devs) => GpuRuntime {
            kind: "NVIDIA".into(),
            library: fabdiag_gpu::DEFAULT_LIBRARY.into(),
            found: true,
            devices: devs
                .iter()
                .map(|d| GpuDevice {
                    index: d.ordinal.max(0) as u32,
                    name: d.name.clone(),
                    pci_bus_id: d.pci_bus_id.clone(),
                })
                .collect(),
            error: None,
        },
        Err(e) => GpuRuntime {
            kind: "NVIDIA".into(),
            library: fabdiag_gpu::DEFAULT_LIBRARY.into(),
            found: !matches!(e, fabdiag_gpu::GpuError::NoDriver { .. }),
            devices: Vec::new(),
            error: Some(e.to_string()),
        },
    };
    // fabdiag allocates on NVIDIA GPUs only so far; for the others it says
    // whether the runtime the originals load is here
    let other = |kind: &str, library: &str| {
        let present = fabdiag_gpu::library_present(library);
        GpuRuntime {
            kind: kind.into(),
            library: library.into(),
            found: present.is_ok(),
            devices: Vec::new(),
            error: Some(match present {
                Ok(()) => "runtime present; fabdiag does not list its devices yet".into(),
                Err(e) => format!("not found ({e})"),
            }),
        }
    };
    vec![
        nvidia,
        other("AMD", fabdiag_gpu::HIP_LIBRARY),
        other("INTEL", fabdiag_gpu::LEVEL_ZERO_LIBRARY),
    ]
}

/// The soft and hard limits on locked memory and open files, and the
/// longest accept queue a listener gets.
pub(crate) fn limits() -> Limits {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    let read = |r: Resource| {
        getrlimit(r).ok().map(|(soft, hard)| Limit {
            soft: (soft != RLIM_INFINITY).then_some(soft),
            hard: (hard != RLIM_INFINITY).then_some(hard),
        })
    };
    let open_files = read(Resource::RLIMIT_NOFILE);
    Limits {
        locked_memory_bytes: read(Resource::RLIMIT_MEMLOCK),
        open_files,
        sweep_ranks: open_files
            .and_then(|f| f.hard)
            .map(|h| h.saturating_sub(fabdiag_sweep::SPARE_FILES)),
        // (this network namespace's; fabdiag's listeners ask for 4096)
        accept_queue: std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|v| v.trim().parse().ok()),
    }
}

fn hugepages() -> Vec<HugePool> {
    [HugePageSize::TwoMiB, HugePageSize::OneGiB]
        .into_iter()
        .map(|h| {
            let (total, free) = hugepage_pool(h.bytes());
            HugePool {
                size: h.label().into(),
                total,
                free,
            }
        })
        .collect()
}

fn clock() -> Clock {
    let (cycle_counter_mhz, calibration_error) = match fabdiag_clock::calibrate(true) {
        Ok(c) => (Some(c.mhz), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let invariant_tsc = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|flags| flags.contains(" constant_tsc") && flags.contains(" nonstop_tsc"));
    let mut governors = BTreeSet::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in dir.flatten() {
            if let Ok(g) = std::fs::read_to_string(e.path().join("cpufreq/scaling_governor")) {
                governors.insert(g.trim().to_string());
            }
        }
    }
    Clock {
        cycle_counter_mhz,
        calibration_error,
        invariant_tsc,
        governors: governors.into_iter().collect(),
    }
}

/// Providers that run the atomic tools' default (SUM on UINT64): a
/// provider may claim FI_ATOMIC and support no operation at all.
fn atomic_defaults() -> BTreeSet<String> {
    fabdiag_session::atomic_support(None)
        .map(|s| {
            s.cells
                .iter()
                .filter(|c| c.op == "SUM" && c.atomic_type == "UINT64" && !c.fetching && c.usable())
                .map(|c| c.provider.clone())
                .collect()
        })
        .unwrap_or_default()
}

fn tools(lib: &Libfabric, providers: &[fabdiag_model::probe::ProviderCaps], gpus: &[GpuRuntime]) -> Vec<ToolStatus> {
    let atomic_ok = if lib.found { atomic_defaults() } else { BTreeSet::new() };
    let mut out: Vec<ToolStatus> = Tool::all()
        .map(|t| {
            let cap = fabdiag_session::capability(t);
            let able: Vec<String> = providers
                .iter()
                .filter(|p| match cap {
                    fabdiag_fabric::Capability::RmaWrite => p.rma_write,
                    fabdiag_fabric::Capability::RmaRead => p.rma_read,
                    fabdiag_fabric::Capability::Msg => p.msg,
                    fabdiag_fabric::Capability::Atomic => p.atomic && atomic_ok.contains(&p.provider),
                    fabdiag_fabric::Capability::RmaWriteHmem
                    | fabdiag_fabric::Capability::RmaReadHmem
                    | fabdiag_fabric::Capability::MsgHmem => p.hmem,
                })
                .map(|p| p.provider.clone())
                .collect();
            let reason = match (&lib.error, able.is_empty()) {
                (Some(e), _) => Some(e.clone()),
                (None, true) => Some(format!("no provider here offers {}", cap.describe())),
                (None, false) => None,
            };
            ToolStatus {
                tool: t.original_name().into(),
                command: format!("fabdiag {}", t.subcommand()),
                runnable: reason.is_none(),
                providers: able,
                reason,
            }
        })
        .collect();
    // host-traffic needs an NVIDIA GPU, not libfabric
    let reason = match gpus.iter().find(|g| g.kind == "NVIDIA") {
        Some(GpuRuntime { error: Some(e), .. }) => Some(e.clone()),
        Some(g) if g.devices.is_empty() => Some(fabdiag_gpu::GpuError::NoDevices.to_string()),
        Some(_) => None,
        None => Some("no NVIDIA runtime was looked for".into()),
    };
    out.push(ToolStatus {
        tool: HOST_TRAFFIC_ORIGINAL.into(),
        command: "fabdiag host-traffic".into(),
        runnable: reason.is_none(),
        providers: Vec::new(),
        reason,
    });
    out
}

pub fn run(prog: &str, args: &[String]) -> u8 {
    let (json, watch) = match utility_args(Utility::Doctor, prog, fabdiag_options::utility::doctor(args)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let lib = libfabric();
    let providers = if lib.found {
        fabdiag_session::provider_caps().unwrap_or_default()
    } else {
        Vec::new()
    };
    let gpus = gpus();
    let tools = tools(&lib, &providers, &gpus);
    let usable = tools.iter().any(|t| t.runnable);
    let nics = nics::nics(&providers, watch.map(std::time::Duration::from_secs));
    let d = Doctor {
        fabdiag_version: VERSION.into(),
        libfabric: lib,
        providers,
        gpus,
        hugepages: hugepages(),
        limits: limits(),
        clock: clock(),
        tools,
        usable,
        nics,
    };
    if json {
        print_stdout(&(serde_json::to_string_pretty(&d).unwrap_or_else(|_| "{}".into()) + "\n"));
    } else {
        print_stdout(&doctor::text(&d));
    }
    if usable {
        exit::OK
    } else {
        exit::UNAVAILABLE
    }
}
