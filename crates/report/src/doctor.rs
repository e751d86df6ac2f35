//! `fabdiag doctor`: what a node has for fabdiag, as data (its JSON) and
//! as the page a person reads. Pure: the probing is done elsewhere.

use crate::counters_text::class_words;
use fabdiag_model::counters::Class;
use fabdiag_model::probe::ProviderCaps;
use fabdiag_model::units::thousands;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct Doctor {
    pub fabdiag_version: String,
    pub libfabric: Libfabric,
    pub providers: Vec<ProviderCaps>,
    pub gpus: Vec<GpuRuntime>,
    pub hugepages: Vec<HugePool>,
    pub limits: Limits,
    pub clock: Clock,
    pub tools: Vec<ToolStatus>,
    /// At least one tool can run here.
    pub usable: bool,
    /// Each domain's NIC counters now (and, with `--watch`, their rises).
    pub nics: Vec<NicCounters>,
}

/// One domain's NIC counters as doctor shows them.
#[derive(Clone, Debug, Serialize)]
pub struct NicCounters {
    pub domain: String,
    /// The providers that offer it.
    pub providers: Vec<String>,
    /// What was read ("lo + tcp"), or "not available (why)".
    pub read: String,
    /// Every counter not at zero that is not a traffic count.
    pub nonzero: Vec<CounterNow>,
    /// With `--watch`: the seconds between the readings, and each counter
    /// (traffic aside) that rose, with its rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watched_s: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<CounterRate>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CounterNow {
    pub device: String,
    pub name: String,
    pub class: Class,
    pub fault: bool,
    pub value: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CounterRate {
    pub device: String,
    pub name: String,
    pub class: Class,
    pub fault: bool,
    pub rise: u64,
    pub per_second: f64,
}

/// A rate as a person reads it: flaps per hour, the rest per second.
fn rate_words(r: &CounterRate) -> String {
    if r.class == Class::Flap {
        format!("{:.1} per hour", r.per_second * 3600.0)
    } else {
        format!("{:.3} per second", r.per_second)
    }
}

/// The NIC counters section: per domain what was read, the counters not
/// at zero, and with `--watch` each that rose and how fast.
fn nic_lines(nics: &[NicCounters]) -> String {
    let mut o = String::from("\nNIC counters (not at zero, traffic aside)\n");
    if nics.is_empty() {
        o.push_str("  (no domain)\n");
    }
    for n in nics {
        o.push_str(&format!("  {} ({}): {}\n", n.domain, n.providers.join(", "), n.read));
        // one line per counter: "    [when: ]device name what [class]"
        let line = |when: &str, device: &str, name: &str, what: String, class: Class, fault: bool| {
            format!("    {when}{device} {name} {what} [{}]\n", class_words(class, fault))
        };
        for c in &n.nonzero {
            o.push_str(&line("", &c.device, &c.name, thousands(c.value), c.class, c.fault));
        }
        if let Some(s) = n.watched_s {
            let when = format!("in {s:.1} s: ");
            if n.rates.is_empty() {
                o.push_str(&format!("    {when}none rose but traffic\n"));
            }
            for r in &n.rates {
                let what = format!("+{} ({})", thousands(r.rise), rate_words(r));
                o.push_str(&line(&when, &r.device, &r.name, what, r.class, r.fault));
            }
        }
    }
    o
}

#[derive(Clone, Debug, Serialize)]
pub struct Libfabric {
    pub found: bool,
    /// The shared object loaded (from the process's mappings).
    pub path: Option<String>,
    pub version: Option<String>,
    /// Device-memory interfaces (FI_HMEM_CUDA, ...) this libfabric can use
    /// on this node, as its initialisation reports them; None when it could
    /// not be told.
    pub hmem_interfaces: Option<Vec<String>>,
    /// Those it reports unusable here (not built in, or no runtime).
    pub hmem_unsupported: Vec<String>,
    /// Of those, the ones built into this libfabric that did not start
    /// here, with its own reason (FI_HMEM_CUDA: "Failed to dlopen
    /// libcudart.so"): a runtime library it cannot find, no device.
    pub hmem_failed: BTreeMap<String, String>,
    /// Why it could not be loaded.
    pub error: Option<String>,
    /// The variables that steer it, as set for this process: every `FI_*`
    /// (FI_PROVIDER hides providers, FI_HMEM turns interfaces off, ...) and
    /// `FABDIAG_LIBFABRIC` (which library is loaded).
    pub environment: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuRuntime {
    /// "NVIDIA", "AMD" or "INTEL", as `-g` spells them.
    pub kind: String,
    /// The runtime library fabdiag loads for it.
    pub library: String,
    pub found: bool,
    pub devices: Vec<GpuDevice>,
    /// Why the runtime or its devices are not usable.
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuDevice {
    pub index: u32,
    pub name: String,
    pub pci_bus_id: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct HugePool {
    /// "2M" or "1G".
    pub size: String,
    /// Configured pages, or None when the kernel has no such pool.
    pub total: Option<u64>,
    pub free: Option<u64>,
}

/// A per-process limit (getrlimit): None is unlimited.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// The process limits fabdiag runs into; None where they could not be read.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Limits {
    /// Bytes a process may pin: RDMA providers (verbs, cxi, efa) pin every
    /// buffer they register.
    pub locked_memory_bytes: Option<Limit>,
    /// Open files: a sweep's rank 0 holds one per rank.
    pub open_files: Option<Limit>,
    /// The ranks a sweep's rank 0 could hold here within the hard limit on
    /// open files (None: unlimited, or the limit is unknown).
    pub sweep_ranks: Option<u64>,
    /// net.core.somaxconn: the longest accept queue a listener gets, so
    /// the most ranks that can join a sweep's rank 0 at once without a
    /// TCP retry (None: it could not be read).
    pub accept_queue: Option<u64>,
}

/// Below this accept queue, a sweep of more ranks joins in waves.
const ACCEPT_QUEUE_WANTED: u64 = 1024;

/// Below this much lockable memory, the tools' default buffers (16 MiB
/// each) cannot be registered on a provider that pins them.
const LOCKED_MEMORY_WANTED: u64 = 64 << 20;

fn bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The limits section's lines.
fn limit_lines(l: &Limits) -> String {
    let mut o = String::new();
    let show = |v: Option<u64>, unit: &dyn Fn(u64) -> String| v.map_or("unlimited".to_string(), unit);
    match l.locked_memory_bytes {
        None => o.push_str("  locked memory  cannot be read\n"),
        Some(m) => {
            let note = match m.soft {
                Some(s) if s < LOCKED_MEMORY_WANTED => ": too little for RDMA providers (verbs, cxi, efa), which pin every buffer they register (16 MiB each by default): raise it (ulimit -l unlimited, memlock in limits.conf, or the batch system's)",
                _ => "",
            };
            o.push_str(&format!(
                "  locked memory  {} (hard {}){note}\n",
                show(m.soft, &bytes),
                show(m.hard, &bytes)
            ));
        }
    }
    match l.open_files {
        None => o.push_str("  open files     cannot be read\n"),
        Some(f) => {
            let ranks = l.sweep_ranks.map_or("any number of".to_string(), |r| r.to_string());
            o.push_str(&format!(
                "  open files     {} (hard {}): a sweep's rank 0 raises it as needed, for up to {ranks} ranks\n",
                show(f.soft, &|v| v.to_string()),
                show(f.hard, &|v| v.to_string())
            ));
        }
    }
    match l.accept_queue {
        None => o.push_str("  accept queue   cannot be read (net.core.somaxconn)\n"),
        Some(q) => {
            let note = if q < ACCEPT_QUEUE_WANTED {
                ": ranks beyond it joining a sweep's rank 0 at once wait for TCP's retry (1 s, then 3 s, ...); for large sweeps raise it (sysctl net.core.somaxconn=4096)"
            } else {
                ": ranks that can join a sweep's rank 0 at once"
            };
            o.push_str(&format!("  accept queue   {q} (net.core.somaxconn){note}\n"));
        }
    }
    o
}

#[derive(Clone, Debug, Serialize)]
pub struct Clock {
    /// The cycle counter's frequency, calibrated against
    /// CLOCK_MONOTONIC_RAW for 0.2 s (what `--clock cycles` uses).
    pub cycle_counter_mhz: Option<f64>,
    pub calibration_error: Option<String>,
    /// x86 constant_tsc and nonstop_tsc; None where it cannot be told.
    pub invariant_tsc: Option<bool>,
    /// The CPU frequency governors in use (latency runs depend on them).
    pub governors: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ToolStatus {
    /// The original name, e.g. "cxi_write_bw".
    pub tool: String,
    pub command: String,
    pub runnable: bool,
    /// Providers here that can run it.
    pub providers: Vec<String>,
    /// Why it cannot run here.
    pub reason: Option<String>,
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "-"
    }
}

/// The page a person reads.
pub fn text(d: &Doctor) -> String {
    let mut o = format!("fabdiag {} doctor\n\nlibfabric\n", d.fabdiag_version);
    match (&d.libfabric.path, &d.libfabric.version, &d.libfabric.error) {
        (_, _, Some(e)) => o.push_str(&format!("  not usable: {e}\n")),
        (p, v, None) => o.push_str(&format!(
            "  {} (version {})\n",
            p.as_deref().unwrap_or("loaded"),
            v.as_deref().unwrap_or("?")
        )),
    }
    if d.libfabric.found {
        let usable = match &d.libfabric.hmem_interfaces {
            None => "unknown (libfabric did not say)".to_string(),
            Some(v) if v.is_empty() => "none".to_string(),
            Some(v) => v.join(", "),
        };
        o.push_str(&format!("  GPU memory interfaces: {usable}"));
        if !d.libfabric.hmem_unsupported.is_empty() {
            o.push_str(&format!(
                " (not usable here: {})",
                d.libfabric.hmem_unsupported.join(", ")
            ));
        }
        o.push('\n');
        for (iface, why) in &d.libfabric.hmem_failed {
            o.push_str(&format!("  {iface} is built in but did not start here: {why}\n"));
        }
    }
    if d.libfabric.environment.is_empty() {
        o.push_str("  environment: no FI_* variables set\n");
    } else {
        let vars: Vec<String> = d
            .libfabric
            .environment
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        o.push_str(&format!("  environment: {}\n", vars.join(" ")));
    }
    o.push_str("\nproviders        write read msg  atomic hmem  domains\n");
    if d.providers.is_empty() {
        o.push_str("  (none)\n");
    }
    for p in &d.providers {
        o.push_str(&format!(
            "  {:<14} {:<5} {:<4} {:<4} {:<6} {:<5} {}\n",
            p.provider,
            yn(p.rma_write),
            yn(p.rma_read),
            yn(p.msg),
            yn(p.atomic),
            yn(p.hmem),
            p.domains.join(", ")
        ));
    }
    o.push_str("\nGPUs\n");
    for g in &d.gpus {
        match (&g.error, g.devices.is_empty()) {
            (Some(e), _) => o.push_str(&format!("  {:<7} {}: {e}\n", g.kind, g.library)),
            (None, true) => o.push_str(&format!("  {:<7} {}: no devices\n", g.kind, g.library)),
            (None, false) => {
                for dev in &g.devices {
                    o.push_str(&format!(
                        "  {:<7} GPU {}: {} ({})\n",
                        g.kind, dev.index, dev.name, dev.pci_bus_id
                    ));
                }
            }
        }
    }
    o.push_str("\nhuge pages\n");
    for h in &d.hugepages {
        match (h.total, h.free) {
            (Some(t), Some(f)) => o.push_str(&format!("  {:<3} {t} configured, {f} free\n", h.size)),
            _ => o.push_str(&format!("  {:<3} no pool in this kernel\n", h.size)),
        }
    }
    o.push_str("\nlimits\n");
    o.push_str(&limit_lines(&d.limits));
    o.push_str("\nclocks\n");
    match (&d.clock.cycle_counter_mhz, &d.clock.calibration_error) {
        (Some(m), _) => o.push_str(&format!("  cycle counter {m:.1} MHz")),
        (None, Some(e)) => o.push_str(&format!("  cycle counter: {e}")),
        (None, None) => o.push_str("  cycle counter: none"),
    }
    let inv = match d.clock.invariant_tsc {
        Some(true) => "invariant TSC",
        Some(false) => "TSC not invariant",
        None => "invariance unknown",
    };
    o.push_str(&format!(", {inv}\n"));
    let gov = if d.clock.governors.is_empty() {
        "unknown (no cpufreq)".to_string()
    } else {
        d.clock.governors.join(", ")
    };
    o.push_str(&format!("  CPU frequency governor: {gov}\n"));
    o.push_str("\ntools\n");
    for t in &d.tools {
        match &t.reason {
            // host-traffic needs a GPU, not a provider
            None if t.providers.is_empty() => o.push_str(&format!("  {:<20} yes\n", t.tool)),
            None => o.push_str(&format!("  {:<20} yes ({})\n", t.tool, t.providers.join(", "))),
            Some(r) => o.push_str(&format!("  {:<20} no: {r}\n", t.tool)),
        }
    }
    o.push_str(&nic_lines(&d.nics));
    if !d.usable {
        o.push_str("\nnothing fabdiag can run is usable on this node\n");
    }
    o
}

/// The device-memory interfaces libfabric knows (FI_HMEM_SYSTEM aside),
/// with the prefix of its functions that start each one.
pub const HMEM_IFACES: [(&str, &str); 5] = [
    ("FI_HMEM_CUDA", "cuda"),
    ("FI_HMEM_ROCR", "rocr"),
    ("FI_HMEM_ZE", "ze"),
    ("FI_HMEM_NEURON", "neuron"),
    ("FI_HMEM_SYNAPSEAI", "synapseai"),
];

/// What libfabric's initialisation log (at FI_LOG_LEVEL=info) says of
/// the GPU memory interfaces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HmemLog {
    /// Usable here; None when the log does not show the initialisation.
    pub usable: Option<Vec<String>>,
    /// Reported "not supported": not built in, or could not start.
    pub unsupported: Vec<String>,
    /// Unsupported ones whose own start-up code logged (so they are built
    /// in), with the first failure it gave.
    pub failed: BTreeMap<String, String>,
}

/// Reads libfabric's log: "Hmem iface FI_HMEM_CUDA not supported" for each
/// interface it cannot use, and lines from an interface's own start-up
/// (`cuda_hmem_dl_init(): Failed to dlopen libcudart.so`) when it is built
/// in. libfabric has no call that says which it can use.
pub fn hmem_from_log(log: &str) -> HmemLog {
    let unsupported: Vec<String> = log
        .lines()
        .filter_map(|l| l.split("Hmem iface ").nth(1))
        .filter_map(|rest| rest.trim_end().strip_suffix(" not supported"))
        .map(str::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // "libfabric:PID:TIME::core:core:cuda_hmem_dl_init():566<info> Failed ..."
    let mut seen: BTreeMap<String, Option<String>> = BTreeMap::new();
    for line in log.lines() {
        let Some((head, tail)) = line.split_once("():") else {
            continue;
        };
        let func = head.rsplit(':').next().unwrap_or_default();
        let Some((iface, _)) = HMEM_IFACES
            .iter()
            .find(|(_, prefix)| func.starts_with(&format!("{prefix}_")) && func.ends_with("init"))
        else {
            continue;
        };
        let msg = tail.split_once("> ").map_or("", |(_, m)| m.trim());
        let failure = seen.entry(iface.to_string()).or_insert(None);
        if failure.is_none() && msg.to_ascii_lowercase().contains("fail") {
            // the usual one: the runtime is installed where the loader
            // does not look (a toolkit's lib64)
            let hint = if msg.contains("dlopen ") {
                " (not on the loader's path: add its directory to LD_LIBRARY_PATH)"
            } else {
                ""
            };
            *failure = Some(format!("{msg}{hint}"));
        }
    }
    let failed = unsupported
        .iter()
        .filter_map(|i| {
            seen.get(i).map(|why| {
                let why = why
                    .clone()
                    .unwrap_or_else(|| "its start-up found no usable device".into());
                (i.clone(), why)
            })
        })
        .collect();
    let usable = log.contains("ofi_hmem_init").then(|| {
        HMEM_IFACES
            .iter()
            .map(|(i, _)| i.to_string())
            .filter(|i| !unsupported.contains(i))
            .collect()
    });
    HmemLog {
        usable,
        unsupported,
        failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits section says what a low limit stops and what to raise,
    /// and how many ranks a sweep's rank 0 could hold.
    #[test]
    fn limits_say_what_they_allow() {
        let l = |soft, hard| Some(Limit { soft, hard });
        let low = limit_lines(&Limits {
            locked_memory_bytes: l(Some(8 << 20), Some(8 << 20)),
            open_files: l(Some(1024), Some(4096)),
            sweep_ranks: Some(3968),
            accept_queue: Some(128),
        });
        assert!(
            low.starts_with("  locked memory  8 MiB (hard 8 MiB): too little for RDMA providers (verbs, cxi, efa)"),
            "{low}"
        );
        assert!(
            low.contains("(ulimit -l unlimited, memlock in limits.conf, or the batch system's)\n"),
            "{low}"
        );
        assert!(
            low.contains(
                "  open files     1024 (hard 4096): a sweep's rank 0 raises it as needed, for up to 3968 ranks\n"
            ),
            "{low}"
        );
        assert!(
            low.ends_with(
                "  accept queue   128 (net.core.somaxconn): ranks beyond it joining a sweep's rank 0 at once wait for TCP's retry (1 s, then 3 s, ...); for large sweeps raise it (sysctl net.core.somaxconn=4096)\n"
            ),
            "{low}"
        );
        let high = limit_lines(&Limits {
            locked_memory_bytes: l(None, None),
            open_files: l(Some(1024), None),
            sweep_ranks: None,
            accept_queue: Some(4096),
        });
        assert!(
            high.starts_with("  locked memory  unlimited (hard unlimited)\n"),
            "{high}"
        );
        assert!(high.contains("for up to any number of ranks"), "{high}");
        assert!(
            high.ends_with(
                "  accept queue   4096 (net.core.somaxconn): ranks that can join a sweep's rank 0 at once\n"
            ),
            "{high}"
        );
        assert_eq!(bytes(65536), "64 KiB");
    }

    /// Logs as libfabric wrote them here: Debian's 1.17 (no GPU interface
    /// built in) and v2.6.0 built with CUDA on a machine without the
    /// toolkit's runtime on the library path.
    #[test]
    fn built_in_interfaces_that_did_not_start_are_told_apart() {
        let debian = "libfabric:1:2::core:core:ofi_hmem_init():247<info> Hmem iface FI_HMEM_CUDA not supported
libfabric:1:2::core:core:ofi_hmem_init():247<info> Hmem iface FI_HMEM_ROCR not supported
libfabric:1:2::core:core:ofi_hmem_init():247<info> Hmem iface FI_HMEM_ZE not supported
libfabric:1:2::core:core:ofi_hmem_init():247<info> Hmem iface FI_HMEM_NEURON not supported
libfabric:1:2::core:core:ofi_hmem_init():247<info> Hmem iface FI_HMEM_SYNAPSEAI not supported
libfabric:1:2::core:core:fi_param_get_():278<info> variable mr_cuda_cache_monitor_enabled=<not set>
";
        let h = hmem_from_log(debian);
        assert_eq!(h.usable, Some(Vec::new()));
        assert_eq!(h.unsupported.len(), 5);
        assert!(h.failed.is_empty(), "{h:?}");

        let cuda = "libfabric:9:3::core:core:fi_param_get_():372<info> variable hmem=<not set>
libfabric:9:3::core:core:cuda_hmem_dl_init():566<info> Failed to dlopen libcudart.so
libfabric:9:3::core:core:ofi_hmem_init():665<info> Hmem iface FI_HMEM_CUDA not supported
libfabric:9:3::core:core:ofi_hmem_init():665<info> Hmem iface FI_HMEM_ROCR not supported
libfabric:9:3::core:mr:ofi_monitors_init():238<info> Initializing memory monitor cuda
";
        let h = hmem_from_log(cuda);
        assert_eq!(
            h.failed.get("FI_HMEM_CUDA").map(String::as_str),
            Some("Failed to dlopen libcudart.so (not on the loader's path: add its directory to LD_LIBRARY_PATH)")
        );
        assert_eq!(h.failed.len(), 1, "{h:?}");
        assert!(h.usable.as_ref().is_some_and(|u| u.contains(&"FI_HMEM_ZE".to_string())));

        // a usable CUDA: its start-up lines, no "not supported"
        let gpu = "libfabric:9:3::core:core:cuda_hmem_init():675<info> Number of CUDA devices detected: 1
libfabric:9:3::core:core:ofi_hmem_init():665<info> Hmem iface FI_HMEM_ROCR not supported
";
        let h = hmem_from_log(gpu);
        assert!(h.failed.is_empty());
        assert!(h.usable.is_some_and(|u| u.contains(&"FI_HMEM_CUDA".to_string())));
        // no initialisation in the log: nothing can be told
        assert_eq!(hmem_from_log("nothing").usable, None);
    }
}
