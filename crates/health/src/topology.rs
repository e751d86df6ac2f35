//! The PCI tree as sysfs shows it: the GPUs and NICs, the bridges between
//! them, and the class `nvidia-smi topo -m` gives each GPU–NIC connection
//! (NVML's topology levels: PIX, PXB, PHB, NODE, SYS); links trained
//! below what both of their ends can do; ACS redirection on the bridges
//! between a GPU and its nearest NIC. It reads files under a root (`/`,
//! or a fixture tree in tests) and never writes, loads a driver or
//! touches a device.
//!
//! Where the layout comes from: the kernel's sysfs-bus-pci ABI
//! (Documentation/ABI/testing/sysfs-bus-pci: `class`, `vendor`,
//! `numa_node`, `current_link_speed`, `max_link_speed`,
//! `current_link_width`, `max_link_width`, `config`), the device links of
//! /sys/bus/pci/devices into /sys/devices/pciDDDD:BB/... (the path is the
//! bridge chain), and /sys/class/infiniband and /sys/class/net for the
//! names NICs go by.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// NVML's topology levels, nearest first, with nvidia-smi's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Connection {
    /// The same device (a NIC function of the GPU's own board).
    #[serde(rename = "X")]
    Same,
    /// At most one PCIe switch between them (NVML_TOPOLOGY_SINGLE).
    #[serde(rename = "PIX")]
    Pix,
    /// Several switches, no host bridge (NVML_TOPOLOGY_MULTIPLE).
    #[serde(rename = "PXB")]
    Pxb,
    /// Through the PCIe host bridge (NVML_TOPOLOGY_HOSTBRIDGE).
    #[serde(rename = "PHB")]
    Phb,
    /// Different host bridges of one NUMA node (NVML_TOPOLOGY_NODE).
    #[serde(rename = "NODE")]
    Node,
    /// Across NUMA nodes: the sockets' interconnect (NVML_TOPOLOGY_SYSTEM).
    #[serde(rename = "SYS")]
    Sys,
}

impl Connection {
    pub fn label(self) -> &'static str {
        match self {
            Connection::Same => "X",
            Connection::Pix => "PIX",
            Connection::Pxb => "PXB",
            Connection::Phb => "PHB",
            Connection::Node => "NODE",
            Connection::Sys => "SYS",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Gpu,
    Nic,
    Bridge,
    Other,
}

/// One end of a PCIe link as the device sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkTraining {
    /// GT/s per lane, as `current_link_speed` says it ("16.0 GT/s PCIe").
    pub speed_gts: Option<f64>,
    pub max_speed_gts: Option<f64>,
    pub width: Option<u32>,
    pub max_width: Option<u32>,
}

/// A PCI function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PciDevice {
    /// "0000:17:00.0".
    pub address: String,
    pub kind: DeviceKind,
    pub vendor: u32,
    pub class: u32,
    /// Its NUMA node (None: the kernel says -1 or nothing).
    pub numa_node: Option<u32>,
    /// The CPUs near it (`local_cpulist`: "0-15").
    pub cpus: Option<String>,
    /// "pci0000:00": the host bridge it hangs under.
    pub host_bridge: String,
    /// The bridges from the root port down to its parent.
    pub bridges: Vec<String>,
    pub link: LinkTraining,
    /// What it goes by: mlx5_0, eth0, ...
    pub names: Vec<String>,
}

/// The GPUs, NICs and bridges of one machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tree {
    pub devices: BTreeMap<String, PciDevice>,
    /// Where it was read (for messages).
    #[serde(skip)]
    pub root: PathBuf,
}

const NVIDIA: u32 = 0x10de;
const AMD: u32 = 0x1002;
const INTEL: u32 = 0x8086;

fn kind_of(vendor: u32, class: u32) -> DeviceKind {
    let (base, sub) = (class >> 16, (class >> 8) & 0xff);
    match (base, sub) {
        // display controllers (VGA, 3D) of the GPU vendors; Intel's are
        // integrated graphics unless 3D (its data-centre GPUs)
        (0x03, 0x00 | 0x02) if vendor == NVIDIA || vendor == AMD => DeviceKind::Gpu,
        (0x03, 0x80) if vendor == AMD => DeviceKind::Gpu,
        (0x03, 0x02) if vendor == INTEL => DeviceKind::Gpu,
        // network (Ethernet, InfiniBand, other) controllers
        (0x02, 0x00 | 0x07 | 0x80) => DeviceKind::Nic,
        (0x06, 0x04) => DeviceKind::Bridge,
        _ => DeviceKind::Other,
    }
}

/// "0000:17:00.0"
fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn read_hex(p: &Path) -> Option<u32> {
    let s = read_trim(p)?;
    u32::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s": the number; "Unknown" is None.
fn gts(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

/// Which bridges a device sits below, from its path under /sys/devices:
/// the last component named `pciDDDD:BB` is its host bridge, the PCI
/// addresses after it are the bridges down to the device itself. Virtual
/// machines put the host bridge deeper (behind ACPI or VMBus nodes), which
/// this reads the same way.
fn chain(target: &Path) -> Option<(String, Vec<String>)> {
    let parts: Vec<String> = target
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let hb = parts.iter().rposition(|p| p.starts_with("pci") && !is_pci_address(p))?;
    let below: Vec<String> = parts[hb + 1..].iter().filter(|p| is_pci_address(p)).cloned().collect();
    let (_, bridges) = below.split_last()?;
    Some((parts[hb].clone(), bridges.to_vec()))
}

/// The names a NIC goes by: its RDMA devices, then its network
/// interfaces (virtio puts those one level down, under virtioN/net).
fn names(dir: &Path) -> Vec<String> {
    let list = |d: PathBuf| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut out = list(dir.join("infiniband"));
    out.extend(list(dir.join("net")));
    for child in list(dir.to_path_buf()).iter().filter(|c| c.starts_with("virtio")) {
        out.extend(list(dir.join(child).join("net")));
    }
    out
}

impl Tree {
    /// Reads every PCI function under `root`/sys/bus/pci/devices. A
    /// machine without that folder (a container without sysfs) gives an
    /// empty tree, which the caller says as "not visible".
    pub fn read(root: &Path) -> Tree {
        let mut tree = Tree {
            devices: BTreeMap::new(),
            root: root.to_path_buf(),
        };
        let bus = root.join("sys/bus/pci/devices");
        let Ok(rd) = std::fs::read_dir(&bus) else {
            return tree;
        };
        for e in rd.flatten() {
            let address = e.file_name().to_string_lossy().into_owned();
            let dir = e.path();
            let Some((host_bridge, bridges)) = std::fs::read_link(&dir).ok().and_then(|t| chain(&t)) else {
                continue;
            };
            let (Some(vendor), Some(class)) = (read_hex(&dir.join("vendor")), read_hex(&dir.join("class"))) else {
                continue;
            };
            let numa_node = read_trim(&dir.join("numa_node"))
                .and_then(|s| s.parse::<i64>().ok())
                .and_then(|n| u32::try_from(n).ok());
            let num = |f: &str| read_trim(&dir.join(f));
            let link = LinkTraining {
                speed_gts: num("current_link_speed").and_then(|s| gts(&s)),
                max_speed_gts: num("max_link_speed").and_then(|s| gts(&s)),
                width: num("current_link_width").and_then(|s| s.parse().ok()),
                max_width: num("max_link_width").and_then(|s| s.parse().ok()),
            };
            let kind = kind_of(vendor, class);
            let names = if kind == DeviceKind::Nic {
                names(&dir)
            } else {
                Vec::new()
            };
            tree.devices.insert(
                address.clone(),
                PciDevice {
                    address,
                    kind,
                    vendor,
                    class,
                    numa_node,
                    cpus: read_trim(&dir.join("local_cpulist")),
                    host_bridge,
                    bridges,
                    link,
                    names,
                },
            );
        }
        tree
    }

    pub fn of_kind(&self, kind: DeviceKind) -> impl Iterator<Item = &PciDevice> {
        self.devices.values().filter(move |d| d.kind == kind)
    }

    /// NVML's level between two functions, from their places in the tree.
    pub fn connection(&self, a: &PciDevice, b: &PciDevice) -> Connection {
        if a.address == b.address {
            return Connection::Same;
        }
        if a.host_bridge != b.host_bridge {
            // a node the kernel does not know (-1, one-socket machines) is
            // taken as the other's
            return match (a.numa_node, b.numa_node) {
                (Some(x), Some(y)) if x != y => Connection::Sys,
                _ => Connection::Node,
            };
        }
        let common = shared_bridges(a, b);
        if common == 0 {
            return Connection::Phb;
        }
        // below the deepest shared bridge each side passes at most the
        // downstream port of one switch: one switch between them
        if a.bridges.len() - common <= 1 && b.bridges.len() - common <= 1 {
            Connection::Pix
        } else {
            Connection::Pxb
        }
    }

    /// The bridges traffic between two functions passes below the host
    /// bridge (the shared ones once).
    pub fn path_between(&self, a: &PciDevice, b: &PciDevice) -> Vec<String> {
        if a.host_bridge != b.host_bridge {
            return a.bridges.iter().chain(&b.bridges).cloned().collect();
        }
        let common = shared_bridges(a, b);
        let mut out: Vec<String> = a.bridges[common.saturating_sub(1)..].to_vec();
        out.extend(b.bridges[common..].iter().cloned());
        out
    }

    /// The link above `dev` (between it and its parent port) trained
    /// below what both ends can do: (what it runs at, what it could).
    pub fn downtrained(&self, dev: &PciDevice) -> Option<Downtrain> {
        let parent = dev.bridges.last().and_then(|p| self.devices.get(p));
        let cap = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
            (Some(m), Some(t)) => Some(m.min(t)),
            (m, _) => m,
        };
        let l = &dev.link;
        let max_speed = cap(l.max_speed_gts, parent.and_then(|p| p.link.max_speed_gts));
        let max_width = cap(
            l.max_width.map(f64::from),
            parent.and_then(|p| p.link.max_width.map(f64::from)),
        );
        let slow_speed = matches!((l.speed_gts, max_speed), (Some(c), Some(m)) if c + 0.01 < m);
        let narrow = matches!((l.width.map(f64::from), max_width), (Some(c), Some(m)) if c < m);
        (slow_speed || narrow).then(|| Downtrain {
            address: dev.address.clone(),
            speed_gts: l.speed_gts,
            max_speed_gts: max_speed,
            width: l.width,
            max_width: max_width.map(|w| w as u32),
            narrow,
        })
    }
}

/// A link running below its capability.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Downtrain {
    pub address: String,
    pub speed_gts: Option<f64>,
    pub max_speed_gts: Option<f64>,
    pub width: Option<u32>,
    pub max_width: Option<u32>,
    /// Fewer lanes than both ends have: a slot, riser or cable fault,
    /// where a lower speed alone may be a GPU's idle power saving.
    pub narrow: bool,
}

impl Downtrain {
    pub fn describe(&self) -> String {
        let f = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v}"));
        let w = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
        format!(
            "x{} at {} GT/s, capable of x{} at {} GT/s",
            w(self.width),
            f(self.speed_gts),
            w(self.max_width),
            f(self.max_speed_gts)
        )
    }
}

/// ACS (PCIe Access Control Services) on a bridge, from the extended
/// capability in its config space (ID 0x000D; the control register is at
/// +6: bit 2 P2P Request Redirect, bit 3 P2P Completion Redirect).
/// Redirection sends GPU–NIC peer traffic up through the root complex,
/// which slows or breaks GPUDirect RDMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Acs {
    /// The config space past 256 bytes cannot be read (not root).
    NotVisible,
    /// No ACS capability, or one with redirection off.
    NoRedirect,
    /// P2P requests or completions redirected upstream.
    Redirect { request: bool, completion: bool },
}

const ACS_ID: u16 = 0x000d;

/// ACS from a function's config space bytes.
pub fn acs_from_config(config: &[u8]) -> Acs {
    if config.len() < 0x104 {
        return Acs::NotVisible;
    }
    let u32_at = |o: usize| {
        config
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut off = 0x100usize;
    // the list is at most (4096 - 256) / 4 entries long; a loop in a
    // broken or hostile list ends there
    for _ in 0..960 {
        let Some(header) = u32_at(off) else {
            return Acs::NoRedirect;
        };
        if header == 0 || header == u32::MAX {
            return Acs::NoRedirect;
        }
        if (header & 0xffff) as u16 == ACS_ID {
            let ctl = config
                .get(off + 6..off + 8)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
            let (request, completion) = (ctl & 0x4 != 0, ctl & 0x8 != 0);
            return if request || completion {
                Acs::Redirect { request, completion }
            } else {
                Acs::NoRedirect
            };
        }
        let next = (header >> 20) as usize & 0xffc;
        if next < 0x100 {
            return Acs::NoRedirect;
        }
        off = next;
    }
    Acs::NoRedirect
}

impl Tree {
    pub fn acs(&self, address: &str) -> Acs {
        let p = self.root.join("sys/bus/pci/devices").join(address).join("config");
        match std::fs::read(p) {
            Ok(b) => acs_from_config(&b),
            Err(_) => Acs::NotVisible,
        }
    }
}

/// What a GPU has nearest, and how its own link and path look.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuPlace {
    pub gpu: String,
    pub numa_node: Option<u32>,
    pub cpus: Option<String>,
    /// Its class to every NIC, in the tree's NIC order.
    pub to_nics: Vec<Connection>,
    /// The nearest NIC and its class (None: no NIC on the tree).
    pub nearest: Option<(String, Connection)>,
    /// Bridges between it and that NIC that redirect P2P traffic.
    pub acs_redirect: Vec<String>,
    /// Whether ACS could be read on that path at all.
    pub acs_visible: bool,
}

/// The GPU × NIC view `nvidia-smi topo -m` prints, and what to flag.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Placement {
    pub nics: Vec<(String, String)>,
    pub gpus: Vec<GpuPlace>,
    /// Links of GPUs, NICs and the bridges above them trained below capability.
    pub downtrained: Vec<Downtrain>,
}

/// How many bridges from the root port down two functions share.
fn shared_bridges(a: &PciDevice, b: &PciDevice) -> usize {
    a.bridges.iter().zip(&b.bridges).take_while(|(x, y)| x == y).count()
}

/// A NIC's label: its first name, else its address.
fn nic_label(d: &PciDevice) -> String {
    d.names.first().cloned().unwrap_or_else(|| d.address.clone())
}

pub fn placement(tree: &Tree) -> Placement {
    let nics: Vec<&PciDevice> = tree.of_kind(DeviceKind::Nic).collect();
    let mut out = Placement {
        nics: nics.iter().map(|n| (n.address.clone(), nic_label(n))).collect(),
        ..Placement::default()
    };
    for g in tree.of_kind(DeviceKind::Gpu) {
        let to_nics: Vec<Connection> = nics.iter().map(|n| tree.connection(g, n)).collect();
        let best = to_nics
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| **c)
            .map(|(i, c)| (nics[i], *c));
        let (mut acs_redirect, mut acs_visible) = (Vec::new(), false);
        if let Some((n, _)) = best {
            for b in tree.path_between(g, n) {
                match tree.acs(&b) {
                    Acs::NotVisible => {}
                    Acs::NoRedirect => acs_visible = true,
                    Acs::Redirect { .. } => {
                        acs_visible = true;
                        acs_redirect.push(b);
                    }
                }
            }
        }
        out.gpus.push(GpuPlace {
            gpu: g.address.clone(),
            numa_node: g.numa_node,
            cpus: g.cpus.clone(),
            to_nics,
            nearest: best.map(|(n, c)| (nic_label(n), c)),
            acs_redirect,
            acs_visible,
        });
    }
    // every GPU's and NIC's own link, and the bridges above them
    let mut seen = std::collections::BTreeSet::new();
    for d in tree
        .devices
        .values()
        .filter(|d| matches!(d.kind, DeviceKind::Gpu | DeviceKind::Nic))
    {
        for a in d.bridges.iter().chain(std::iter::once(&d.address)) {
            if !seen.insert(a.clone()) {
                continue;
            }
            if let Some(t) = tree.devices.get(a).and_then(|x| tree.downtrained(x)) {
                out.downtrained.push(t);
            }
        }
    }
    out
}

/// The matrix as `nvidia-smi topo -m` lays it out: GPUn rows, NICn
/// columns, the GPU's CPU and NUMA affinity, then the legends. Unlike
/// nvidia-smi, every NIC on the tree is a column (nvidia-smi shows RDMA
/// devices only), and a NUMA node the kernel does not know (-1) is N/A
/// (nvidia-smi says 0).
pub fn matrix_text(p: &Placement) -> String {
    let mut o = String::from("      ");
    for i in 0..p.nics.len() {
        o.push_str(&format!("{:>7}", format!("NIC{i}")));
    }
    o.push_str("  CPU Affinity  NUMA Affinity  Nearest NIC\n");
    for (i, g) in p.gpus.iter().enumerate() {
        o.push_str(&format!("{:<6}", format!("GPU{i}")));
        for c in &g.to_nics {
            o.push_str(&format!("{:>7}", c.label()));
        }
        let numa = g.numa_node.map_or("N/A".to_string(), |n| n.to_string());
        let near = g
            .nearest
            .as_ref()
            .map_or("none".to_string(), |(n, c)| format!("{n} ({})", c.label()));
        let cpus = g.cpus.as_deref().unwrap_or("N/A");
        o.push_str(&format!("  {cpus:<12}  {numa:<13}  {near}\n"));
    }
    o.push_str("\nGPU Legend:\n");
    for (i, g) in p.gpus.iter().enumerate() {
        o.push_str(&format!("  GPU{i}: {}\n", g.gpu));
    }
    if !p.nics.is_empty() {
        o.push_str("\nNIC Legend:\n");
        for (i, (addr, name)) in p.nics.iter().enumerate() {
            o.push_str(&format!("  NIC{i}: {name} ({addr})\n"));
        }
    }
    o
}
