//! What `fabdiag health` measures and reads, each as one library call: the
//! providers and domains libfabric lists, a loopback write-bw and send-lat
//! on a domain (the pair tools' session code, both ends in this process),
//! a host -> GPU copy (host-traffic's code), and process limits. Nothing
//! here judges or prints.

use super::super::{load_libfabric, with_hooks};
use fabdiag_host_traffic::plan::Request;
use fabdiag_host_traffic::run::Session;
use fabdiag_model::Tool;
use fabdiag_options::Action;

/// libfabric's version, or why it does not load.
pub fn libfabric() -> Result<String, String> {
    load_libfabric().map_err(|e| e.to_string())?;
    Ok(fabdiag_fabric::library_version().unwrap_or_else(|_| "version unknown".into()))
}

/// Each provider with its domains.
pub fn providers() -> Result<Vec<(String, Vec<String>)>, String> {
    let caps = fabdiag_session::provider_caps().map_err(|e| e.to_string())?;
    Ok(caps.into_iter().map(|c| (c.provider, c.domains)).collect())
}

/// The provider's own view of a domain's link (fi_nic(3)'s link
/// attributes), or why there is none: most providers other than verbs, efa
/// and cxi leave fi_nic empty ("not reported").
pub fn provider_link(provider: &str, domain: &str) -> Result<fabdiag_health::link::ProviderLink, String> {
    let list = fabdiag_fabric::discover(&fabdiag_fabric::Query {
        provider: Some(provider.to_string()),
        domain: Some(domain.to_string()),
        capability: None,
    })
    .map_err(|e| match e {
        fabdiag_fabric::FabricError::UnknownProvider { .. } => "does not list the provider".to_string(),
        _ => "does not list the domain".to_string(),
    })?;
    let (nic, link) = list
        .entries()
        .filter_map(|e| e.nic.as_ref())
        .find_map(|n| n.link.as_ref().map(|l| (n, l)))
        .ok_or_else(|| "not reported".to_string())?;
    Ok(fabdiag_health::link::ProviderLink {
        device: if nic.device.is_empty() {
            domain.to_string()
        } else {
            nic.device.clone()
        },
        up: match link.state {
            fabdiag_fabric::LinkState::Up => Some(true),
            fabdiag_fabric::LinkState::Down => Some(false),
            fabdiag_fabric::LinkState::Unknown => None,
        },
        // fi_nic(3): bits per second, 0 when not known
        rate_gbps: (link.speed_bps > 0).then(|| link.speed_bps as f64 / 1e9),
    })
}

/// Providers that pin what they register (a locked-memory limit hurts them).
pub const RDMA_PROVIDERS: &[&str] = &["verbs", "efa", "cxi", "psm3", "opx", "ucx"];

/// One pair tool with both ends here, for `seconds`, on one domain.
fn local(tool: Tool, provider: &str, domain: &str, extra: &[&str]) -> Result<fabdiag_session::Report, String> {
    let mut args: Vec<String> = ["--local", "-P", provider, "-d", domain].map(String::from).to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    let inv = match fabdiag_options::parse(tool, &args) {
        Ok(Action::Run(inv)) => inv,
        Ok(_) => return Err("internal error: options did not ask for a run".into()),
        Err(fabdiag_options::OptionError::Invalid(m) | fabdiag_options::OptionError::Unavailable(m)) => return Err(m),
    };
    let env = with_hooks(fabdiag_session::Env::from(inv.own));
    fabdiag_session::local(inv.spec, &env, &mut fabdiag_session::Silent).map_err(|f| f.to_string())
}

/// Loopback write bandwidth in MB/s: 64 KiB writes for one second.
pub fn write_bw(provider: &str, domain: &str) -> Result<f64, String> {
    let r = local(Tool::WriteBw, provider, domain, &["-D", "1"])?;
    r.rows
        .iter()
        .filter_map(|row| row.bw_mb_s())
        .reduce(f64::max)
        .ok_or_else(|| "the run measured nothing".into())
}

/// Loopback send latency in µs (the median): 8-byte sends for one second.
pub fn send_lat(provider: &str, domain: &str) -> Result<f64, String> {
    let r = local(Tool::SendLat, provider, domain, &["-D", "1"])?;
    r.rows
        .iter()
        .filter_map(|row| row.lat_stats())
        .map(|s| s.p50_ns as f64 / 1000.0)
        .reduce(f64::max)
        .ok_or_else(|| "the run measured nothing".into())
}

/// The NVIDIA GPUs the CUDA driver shows.
pub fn gpus() -> Result<Vec<fabdiag_gpu::Device>, String> {
    let cuda = fabdiag_gpu::Cuda::load().map_err(|e| e.to_string())?;
    cuda.devices().map_err(|e| e.to_string())
}

/// Host -> GPU and GPU -> host copy bandwidth in GB/s (10^9 bytes/s):
/// host-traffic's "host -> buffer" and "host <- buffer" tests for a
/// quarter of a second each. The second is not tried once the first
/// failed (a fault poisons the GPU context).
pub fn gpu_copies(dev: &fabdiag_gpu::Device) -> (Result<f64, String>, Result<f64, String>) {
    let req = Request {
        tiles: None,
        payload_blocks: 4,
        iterations: 1,
        // host-traffic's default chunk
        chunk: 16 << 20,
    };
    let mut s = match Session::open(dev.ordinal, &dev.pci_bus_id, &req, false, true) {
        Ok(s) => s,
        Err(e) => return (Err(e.to_string()), Err("not tried: the GPU could not be opened".into())),
    };
    let mut copy = |dir: fabdiag_model::host_traffic::Dir, seed: u32| -> Result<f64, String> {
        let test = fabdiag_model::host_traffic::TrafficTest {
            host: Some(dir),
            tile: None,
        };
        let f = s.run(test, seed, 0.25, &mut |_| {}).map_err(|e| e.to_string())?;
        if f.duration_s <= 0.0 {
            return Err("the copy took no time".into());
        }
        Ok(f.host_bytes as f64 / f.duration_s / 1e9)
    };
    let to_gpu = copy(fabdiag_model::host_traffic::Dir::Write, 0x4ea1);
    let from_gpu = match &to_gpu {
        Ok(_) => copy(fabdiag_model::host_traffic::Dir::Read, 0x4ea2),
        Err(_) => Err("not tried after the host -> GPU copy failed".into()),
    };
    if from_gpu.is_err() {
        // work a failed test left queued may never end
        s.abandon();
    }
    (to_gpu, from_gpu)
}

pub fn free_hugepages_2m() -> Option<u64> {
    fabdiag_fabric::hugepage_pool(fabdiag_model::HugePageSize::TwoMiB.bytes()).1
}
