//! Where a libfabric domain's device keeps its counters, found from the
//! provider and domain names through sysfs: the InfiniBand device (verbs,
//! EFA) and its active port, plus its network interface when the port is
//! Ethernet (RoCE); else the network interface of that name (tcp, udp,
//! psm3 over sockets), with the network namespace's TCP counters for the
//! tcp provider; else the CXI device and its hsn interface; else the
//! device at the PCI address libfabric's fi_nic gives. Looks at paths
//! only; reads no counter.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A kind of counter source; each has its own table of meanings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// /sys/class/net/IF/statistics and the carrier counts.
    Netdev,
    /// The network namespace's TCP counters (/proc/net/snmp, netstat).
    Tcp,
    /// /sys/class/infiniband/DEV/ports/N/counters and hw_counters.
    Infiniband,
    /// The efa device's hw_counters, per port and per device.
    Efa,
    /// /sys/class/cxi/DEV/device/telemetry.
    Cxi,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Netdev => "netdev",
            Family::Tcp => "tcp",
            Family::Infiniband => "infiniband",
            Family::Efa => "efa",
            Family::Cxi => "cxi",
        }
    }
}

/// One place counters are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub family: Family,
    /// As a person names it: "mlx5_0 port 1", "eth0", "cxi0", "tcp".
    pub device: String,
    /// The folders (or, for tcp, the files) read.
    pub(crate) paths: Vec<PathBuf>,
}

/// Why a domain's counters cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("{provider} has no NIC behind it")]
    NoDevice { provider: String },
    #[error("no /sys/class/infiniband, net or cxi entry named {device}")]
    NotFound { device: String },
    #[error("no /sys/class/infiniband, net or cxi entry named {device}, nor a NIC at PCI address {pci}")]
    NotFoundAt { device: String, pci: String },
}

/// The device name in a domain name: verbs and efa add "-rdm", "-dgram"
/// or "-xrc" to the device's.
pub fn device_of(domain: &str) -> &str {
    for suffix in ["-rdm", "-dgram", "-xrc"] {
        if let Some(d) = domain.strip_suffix(suffix) {
            return d;
        }
    }
    domain
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// An InfiniBand device's port a test uses: the first that is ACTIVE,
/// else the first; with its number.
pub fn pick_port(ib_dev: &Path) -> Option<(PathBuf, String)> {
    let ports = entries(&ib_dev.join("ports"));
    let pick = ports
        .iter()
        .find(|p| read(&p.join("state")).is_some_and(|s| s.ends_with("ACTIVE")))
        .or(ports.first())?
        .clone();
    let n = pick.file_name()?.to_string_lossy().into_owned();
    Some((pick, n))
}

fn netdev(root: &Path, ifname: &str) -> Option<Source> {
    let d = root.join("sys/class/net").join(ifname);
    d.exists().then(|| Source {
        family: Family::Netdev,
        device: ifname.into(),
        paths: vec![d],
    })
}

/// The network interfaces of a device's PCI function (its net/ folder).
fn netdevs_of(root: &Path, device_dir: &Path) -> Vec<Source> {
    entries(&device_dir.join("net"))
        .iter()
        .filter_map(|p| p.file_name())
        .filter_map(|n| netdev(root, &n.to_string_lossy()))
        .collect()
}

fn infiniband(root: &Path, dev: &str) -> Option<Vec<Source>> {
    let d = root.join("sys/class/infiniband").join(dev);
    if !d.exists() {
        return None;
    }
    let (port, n) = pick_port(&d)?;
    let driver = std::fs::read_link(d.join("device/driver"))
        .ok()
        .and_then(|l| l.file_name().map(|f| f.to_string_lossy().into_owned()));
    let efa = driver.as_deref() == Some("efa") || dev.starts_with("efa");
    let mut out = vec![if efa {
        Source {
            family: Family::Efa,
            device: format!("{dev} port {n}"),
            paths: vec![port.join("hw_counters"), d.join("hw_counters")],
        }
    } else {
        Source {
            family: Family::Infiniband,
            device: format!("{dev} port {n}"),
            paths: vec![port.join("counters"), port.join("hw_counters")],
        }
    }];
    // RoCE: the port's Ethernet side counts what the HCA's counters do not
    if read(&port.join("link_layer")).as_deref() == Some("Ethernet") {
        out.extend(netdevs_of(root, &d.join("device")));
    }
    Some(out)
}

fn cxi(root: &Path, dev: &str) -> Option<Vec<Source>> {
    let d = root.join("sys/class/cxi").join(dev).join("device");
    if !d.exists() {
        return None;
    }
    let mut out = vec![Source {
        family: Family::Cxi,
        device: dev.into(),
        paths: vec![d.join("telemetry")],
    }];
    out.extend(netdevs_of(root, &d));
    Some(out)
}

/// Is `text` a PCI address as sysfs names a function ("0000:41:00.0")?
/// (fi_nic's comes from a provider: nothing else is joined to a path.)
fn is_pci_address(text: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit());
    let parts: Vec<&str> = text.split([':', '.']).collect();
    matches!(parts[..], [dom, bus, dev, func] if hex(dom, 4) && hex(bus, 2) && hex(dev, 2) && hex(func, 1))
}

/// The device at a PCI address (libfabric's fi_nic bus attributes), as
/// its function's folders name it (Documentation/ABI/testing/
/// sysfs-bus-pci: /sys/bus/pci/devices/ADDR/): its InfiniBand device,
/// else its CXI device, else its network interfaces.
fn by_pci(root: &Path, pci: &str) -> Option<Vec<Source>> {
    if !is_pci_address(pci) {
        return None;
    }
    let d = root.join("sys/bus/pci/devices").join(pci);
    let first = |sub: &str| {
        entries(&d.join(sub))
            .first()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    if let Some(found) = first("infiniband").and_then(|dev| infiniband(root, &dev)) {
        return Some(found);
    }
    if let Some(found) = first("cxi").and_then(|dev| cxi(root, &dev)) {
        return Some(found);
    }
    let nets = netdevs_of(root, &d);
    (!nets.is_empty()).then_some(nets)
}

/// Where the counters of a `domain` of the core provider `core` (`tcp`
/// of `tcp;ofi_rxm`: the caller takes the name apart) are, under `root`:
/// by the domain's name, else by `pci`, the NIC's PCI address where the
/// provider gives one (fi_nic), for a domain named otherwise than its
/// device.
pub fn sources(root: &Path, core: &str, domain: &str, pci: Option<&str>) -> Result<Vec<Source>, Unavailable> {
    let core = core.to_ascii_lowercase();
    if matches!(core.as_str(), "shm" | "sm2") {
        return Err(Unavailable::NoDevice { provider: core });
    }
    let dev = device_of(domain);
    if let Some(found) = infiniband(root, dev) {
        return Ok(found);
    }
    if let Some(net) = netdev(root, dev) {
        let mut out = vec![net];
        if core == "tcp" {
            out.push(Source {
                family: Family::Tcp,
                device: "tcp".into(),
                paths: vec![root.join("proc/net/snmp"), root.join("proc/net/netstat")],
            });
        }
        return Ok(out);
    }
    cxi(root, dev).or_else(|| by_pci(root, pci?)).ok_or_else(|| match pci {
        Some(pci) => Unavailable::NotFoundAt {
            device: dev.into(),
            pci: pci.into(),
        },
        None => Unavailable::NotFound { device: dev.into() },
    })
}
