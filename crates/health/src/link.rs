//! A libfabric domain's link as sysfs shows it: the InfiniBand port
//! (verbs, efa: /sys/class/infiniband/DEV/ports/N/state, phys_state,
//! rate), else the network interface (tcp, udp, psm3 over sockets, and
//! the Ethernet side of a CXI or RoCE NIC: /sys/class/net/IF/operstate,
//! carrier, speed). Domains with no device behind them (shm, sm2) have no
//! link. Also the shape of the provider's own view (fi_nic(3)'s link
//! attributes), which the binary reads through libfabric and the judge
//! sets beside sysfs's. Reads files under a root; never writes.

use fabdiag_counters::{device_of, pick_port, Unavailable};
use fabdiag_model::Provider;
use serde::Serialize;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkFacts {
    /// What was read: "mlx5_0 port 1", "eth0".
    pub device: String,
    pub up: bool,
    /// As the kernel says it: "4: ACTIVE", "up", "down".
    pub state: String,
    /// Gb/s (None: the driver does not say, as veth and lo do not).
    pub rate_gbps: Option<f64>,
    /// Flap counter (carrier_changes or link_downed), for rates.
    pub flaps: Option<u64>,
}

/// A NIC's link as its libfabric provider reports it: fi_nic(3)'s link
/// attributes, which verbs, efa and cxi fill in (libfabric 1.17's tcp, udp
/// and shm do not).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProviderLink {
    /// fi_nic's device name ("mlx5_0"), else the domain's.
    pub device: String,
    /// FI_LINK_UP: Some(true), FI_LINK_DOWN: Some(false), FI_LINK_UNKNOWN: None.
    pub up: Option<bool>,
    /// Gb/s (None: the provider gives 0, "not known").
    pub rate_gbps: Option<f64>,
}

impl ProviderLink {
    /// The state as the line says it.
    pub fn state(&self) -> &'static str {
        match self.up {
            Some(true) => "up",
            Some(false) => "down",
            None => "unknown",
        }
    }
}

/// Why a provider's domain has no link to read at all (shm, sm2), else None.
pub fn no_nic(provider: &str) -> Option<String> {
    Provider::named(provider)
        .is_any(&["shm", "sm2"])
        .then(|| format!("{provider} has no NIC behind it"))
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// "100 Gb/sec (4X EDR)" -> 100.
fn ib_rate(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

fn infiniband(root: &Path, dev: &str) -> Option<LinkFacts> {
    let (pick, port) = pick_port(&root.join("sys/class/infiniband").join(dev))?;
    let state = read(&pick.join("state")).unwrap_or_else(|| "unknown".into());
    Some(LinkFacts {
        device: format!("{dev} port {port}"),
        up: state.ends_with("ACTIVE"),
        state,
        rate_gbps: read(&pick.join("rate")).and_then(|r| ib_rate(&r)),
        flaps: read(&pick.join("counters/link_downed")).and_then(|v| v.parse().ok()),
    })
}

fn netdev(root: &Path, ifname: &str) -> Option<LinkFacts> {
    let d = root.join("sys/class/net").join(ifname);
    let operstate = read(&d.join("operstate"))?;
    let carrier = read(&d.join("carrier")).is_some_and(|c| c == "1");
    // lo and some virtual interfaces say "unknown" while carrying traffic
    let up = operstate == "up" || (operstate == "unknown" && carrier);
    Some(LinkFacts {
        device: ifname.into(),
        up,
        state: operstate,
        rate_gbps: read(&d.join("speed"))
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|&s| s > 0)
            .map(|mbps| mbps as f64 / 1000.0),
        flaps: read(&d.join("carrier_changes")).and_then(|v| v.parse().ok()),
    })
}

/// The first network interface of a CXI device (its Ethernet side, hsnN).
fn cxi(root: &Path, dev: &str) -> Option<LinkFacts> {
    let net = root.join("sys/class/cxi").join(dev).join("device/net");
    let mut names: Vec<String> = std::fs::read_dir(net)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    netdev(root, names.first()?)
}

/// The link behind a domain, or why there is none to read.
pub fn link(root: &Path, provider: &str, domain: &str) -> Result<LinkFacts, String> {
    if let Some(why) = no_nic(provider) {
        return Err(why);
    }
    let dev = device_of(domain);
    infiniband(root, dev)
        .or_else(|| netdev(root, dev))
        .or_else(|| cxi(root, dev))
        .ok_or_else(|| Unavailable::NotFound { device: dev.into() }.to_string())
}
