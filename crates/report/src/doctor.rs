//! `fabdiag doctor`: what a node has for fabdiag, as data (its JSON) and
//! as the page a person reads. Pure: the probing is done elsewhere.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct Doctor {
    pub fabdiag_version: String,
    pub libfabric: Libfabric,
    pub providers: Vec<ProviderCaps>,
    pub gpus: Vec<GpuRuntime>,
    pub hugepages: Vec<HugePool>,
    pub clock: Clock,
    pub tools: Vec<ToolStatus>,
    /// At least one tool can run here.
    pub usable: bool,
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
    /// Why it could not be loaded.
    pub error: Option<String>,
    /// The variables that steer it, as set for this process: every `FI_*`
    /// (FI_PROVIDER hides providers, FI_HMEM turns interfaces off, ...) and
    /// `FABDIAG_LIBFABRIC` (which library is loaded).
    pub environment: BTreeMap<String, String>,
}

/// One provider, with its domains and what it can do here.
#[derive(Clone, Debug, Serialize)]
pub struct ProviderCaps {
    pub provider: String,
    pub domains: Vec<String>,
    pub rma_write: bool,
    pub rma_read: bool,
    pub msg: bool,
    pub atomic: bool,
    /// Device (GPU) memory through FI_HMEM.
    pub hmem: bool,
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
            None => o.push_str(&format!("  {:<20} yes ({})\n", t.tool, t.providers.join(", "))),
            Some(r) => o.push_str(&format!("  {:<20} no: {r}\n", t.tool)),
        }
    }
    if !d.usable {
        o.push_str("\nnothing fabdiag can run is usable on this node\n");
    }
    o
}
