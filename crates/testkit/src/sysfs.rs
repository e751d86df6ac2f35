//! Fixture sysfs trees, laid out as the kernel lays them out: PCI
//! functions under /sys/devices/pciDDDD:BB/<bridges>/<function> with the
//! sysfs-bus-pci attributes, /sys/bus/pci/devices/<function> links into
//! them, NICs' /sys/class/infiniband and /sys/class/net entries (links to
//! the device's own infiniband/ and net/ folders), InfiniBand ports'
//! state, phys_state and rate, and netdevs' operstate, carrier and speed
//! (Documentation/ABI/testing/sysfs-bus-pci, sysfs-class-net,
//! sysfs-class-infiniband). Only for tests: the tools read a fixture root
//! through a test hook, never by default.

use std::path::{Path, PathBuf};

/// One end of a PCIe link: (GT/s now, GT/s max, width now, width max).
#[derive(Clone, Copy, Debug)]
pub struct Link(pub &'static str, pub &'static str, pub u32, pub u32);

/// Gen5 x16, trained as it should.
pub const GEN5_X16: Link = Link("32.0 GT/s PCIe", "32.0 GT/s PCIe", 16, 16);
/// Gen4 x16.
pub const GEN4_X16: Link = Link("16.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16);

pub const NVIDIA: u32 = 0x10de;
pub const MELLANOX: u32 = 0x15b3;
pub const BROADCOM_SWITCH: u32 = 0x1000;
pub const GPU_3D: u32 = 0x030200;
pub const IB_NIC: u32 = 0x020700;
pub const ETH_NIC: u32 = 0x020000;
pub const BRIDGE: u32 = 0x060400;

/// A sysfs tree being built under `root` (root/sys/...).
pub struct SysfsTree {
    pub root: PathBuf,
}

pub(crate) fn write(p: &Path, s: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("a fixture folder");
    }
    std::fs::write(p, s).expect("a fixture file");
}

/// A link at `at` to `target`, relative as the kernel's are.
pub(crate) fn link(target: &Path, at: &Path) {
    if let Some(d) = at.parent() {
        std::fs::create_dir_all(d).expect("a fixture folder");
    }
    let _ = std::fs::remove_file(at);
    // relative, as the kernel's are: the tree can be moved or copied
    let rel = relative(target, at.parent().expect("a parent"));
    std::os::unix::fs::symlink(rel, at).expect("a fixture link");
}

fn relative(target: &Path, from: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let f: Vec<_> = from.components().collect();
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

impl SysfsTree {
    pub fn new(root: &Path) -> SysfsTree {
        std::fs::create_dir_all(root.join("sys/bus/pci/devices")).expect("a fixture root");
        SysfsTree {
            root: root.to_path_buf(),
        }
    }

    /// A PCI function at the end of `path` (the host bridge, then the
    /// bridges from the root port down); gives its folder.
    pub fn pci(&self, path: &[&str], address: &str, vendor: u32, class: u32, numa: i32, l: Link) -> PathBuf {
        let mut dir = self.root.join("sys/devices");
        for p in path {
            dir.push(p);
        }
        dir.push(address);
        write(&dir.join("vendor"), &format!("0x{vendor:04x}\n"));
        write(&dir.join("class"), &format!("0x{class:06x}\n"));
        write(&dir.join("numa_node"), &format!("{numa}\n"));
        // a two-socket machine of 56-core CPUs with SMT, or a 16-CPU VM
        let cpus = match numa {
            0 => "0-55,112-167",
            1 => "56-111,168-223",
            _ => "0-15",
        };
        write(&dir.join("local_cpulist"), &format!("{cpus}\n"));
        write(&dir.join("current_link_speed"), &format!("{}\n", l.0));
        write(&dir.join("max_link_speed"), &format!("{}\n", l.1));
        write(&dir.join("current_link_width"), &format!("{}\n", l.2));
        write(&dir.join("max_link_width"), &format!("{}\n", l.3));
        link(&dir, &self.root.join("sys/bus/pci/devices").join(address));
        dir
    }

    /// An InfiniBand device of a NIC function, with one port.
    pub fn ib(&self, dev_dir: &Path, name: &str, state: &str, phys: &str, rate: &str) {
        let d = dev_dir.join("infiniband").join(name);
        write(&d.join("ports/1/state"), &format!("{state}\n"));
        write(&d.join("ports/1/phys_state"), &format!("{phys}\n"));
        write(&d.join("ports/1/rate"), &format!("{rate}\n"));
        link(&d, &self.root.join("sys/class/infiniband").join(name));
    }

    /// A network interface of a NIC function (or of none: `dev_dir` None
    /// puts it under /sys/devices/virtual/net, as veth and lo are).
    pub fn netdev(&self, dev_dir: Option<&Path>, name: &str, operstate: &str, carrier: u8, speed_mbps: i64) -> PathBuf {
        let base = dev_dir.map_or_else(|| self.root.join("sys/devices/virtual"), Path::to_path_buf);
        let d = base.join("net").join(name);
        write(&d.join("operstate"), &format!("{operstate}\n"));
        write(&d.join("carrier"), &format!("{carrier}\n"));
        write(&d.join("speed"), &format!("{speed_mbps}\n"));
        link(&d, &self.root.join("sys/class/net").join(name));
        d
    }

    /// A config space of 4096 bytes with an ACS capability at 0x100
    /// (after an AER one, so the list is walked), its redirection bits set
    /// as asked.
    pub fn acs(&self, address: &str, request: bool, completion: bool) {
        let mut c = vec![0u8; 4096];
        // AER (0x0001), version 2, next 0x148
        c[0x100..0x104].copy_from_slice(&(0x0001u32 | (2 << 16) | (0x148 << 20)).to_le_bytes());
        // ACS (0x000d), version 1, last
        c[0x148..0x14c].copy_from_slice(&(0x000du32 | (1 << 16)).to_le_bytes());
        let ctl: u16 = 0x1 | if request { 0x4 } else { 0 } | if completion { 0x8 } else { 0 };
        c[0x14e..0x150].copy_from_slice(&ctl.to_le_bytes());
        let dev = self.root.join("sys/bus/pci/devices").join(address);
        std::fs::write(dev.join("config"), c).expect("a fixture config");
    }
}

/// The expected `nvidia-smi topo -m` class of each GPU (rows) to each NIC
/// (columns) for a fixture, as NVML's levels define them.
pub type Expected = Vec<Vec<&'static str>>;

/// A DGX-H100-like machine: two sockets (NUMA 0 and 1), eight PCIe host
/// bridges, under each a root port, a PCIe switch and, on two of its
/// downstream ports, one H100 and one ConnectX-7 (mlx5_N, ibpNs0): each GPU
/// shares its switch with its own NIC (PIX), reaches the other NICs of
/// its socket through other host bridges (NODE) and the other socket's
/// across the sockets' link (SYS).
pub fn dgx_h100(root: &Path) -> Expected {
    let t = SysfsTree::new(root);
    let bases = [0x15u32, 0x37, 0x48, 0x59, 0x97, 0xa8, 0xb9, 0xca];
    for (i, b) in bases.iter().enumerate() {
        let numa = if i < 4 { 0 } else { 1 };
        let hb = format!("pci0000:{b:02x}");
        let rp = format!("0000:{b:02x}:01.0");
        let usp = format!("0000:{:02x}:00.0", b + 1);
        let (dg, dn) = (format!("0000:{:02x}:00.0", b + 2), format!("0000:{:02x}:01.0", b + 2));
        let (gpu, nic) = (format!("0000:{:02x}:00.0", b + 3), format!("0000:{:02x}:00.0", b + 4));
        t.pci(&[&hb], &rp, 0x8086, BRIDGE, numa, GEN5_X16);
        t.pci(&[&hb, &rp], &usp, BROADCOM_SWITCH, BRIDGE, numa, GEN5_X16);
        t.pci(&[&hb, &rp, &usp], &dg, BROADCOM_SWITCH, BRIDGE, numa, GEN5_X16);
        t.pci(&[&hb, &rp, &usp], &dn, BROADCOM_SWITCH, BRIDGE, numa, GEN5_X16);
        t.pci(&[&hb, &rp, &usp, &dg], &gpu, NVIDIA, GPU_3D, numa, GEN5_X16);
        let d = t.pci(&[&hb, &rp, &usp, &dn], &nic, MELLANOX, IB_NIC, numa, GEN5_X16);
        t.ib(
            &d,
            &format!("mlx5_{i}"),
            "4: ACTIVE",
            "5: LinkUp",
            "400 Gb/sec (4X NDR)",
        );
        t.netdev(Some(&d), &format!("ibp{b:x}s0"), "up", 1, 400000);
    }
    (0..8)
        .map(|g| {
            (0..8)
                .map(|n| match (g == n, g / 4 == n / 4) {
                    (true, _) => "PIX",
                    (false, true) => "NODE",
                    (false, false) => "SYS",
                })
                .collect()
        })
        .collect()
}

/// A two-socket server with its one GPU on socket 1 and its one NIC on
/// socket 0: the GPU's nearest NIC is across the sockets (SYS).
pub fn two_socket(root: &Path) -> Expected {
    let t = SysfsTree::new(root);
    t.pci(&["pci0000:00"], "0000:00:01.0", 0x1022, BRIDGE, 0, GEN4_X16);
    let d = t.pci(
        &["pci0000:00", "0000:00:01.0"],
        "0000:01:00.0",
        MELLANOX,
        ETH_NIC,
        0,
        GEN4_X16,
    );
    t.ib(&d, "mlx5_0", "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)");
    t.netdev(Some(&d), "enp1s0f0np0", "up", 1, 200000);
    t.pci(&["pci0000:80"], "0000:80:01.0", 0x1022, BRIDGE, 1, GEN4_X16);
    t.pci(
        &["pci0000:80", "0000:80:01.0"],
        "0000:81:00.0",
        NVIDIA,
        GPU_3D,
        1,
        GEN4_X16,
    );
    vec![vec!["SYS"]]
}

/// One host bridge: a GPU two switches down one root port (a switch
/// below a switch), a NIC on the first switch (PXB from the GPU), another
/// NIC on a second root port (PHB); the GPU's link trained at x8 of x16,
/// the first NIC's at 8 of 16 GT/s; ACS P2P request redirection on the
/// first switch's downstream port towards the GPU.
pub fn switches_downtrained(root: &Path) -> Expected {
    let t = SysfsTree::new(root);
    let hb = "pci0000:00";
    t.pci(&[hb], "0000:00:02.0", 0x8086, BRIDGE, 0, GEN4_X16);
    t.pci(
        &[hb, "0000:00:02.0"],
        "0000:01:00.0",
        BROADCOM_SWITCH,
        BRIDGE,
        0,
        GEN4_X16,
    );
    let s1 = [hb, "0000:00:02.0", "0000:01:00.0"];
    t.pci(&s1, "0000:02:00.0", BROADCOM_SWITCH, BRIDGE, 0, GEN4_X16);
    t.pci(&s1, "0000:02:01.0", BROADCOM_SWITCH, BRIDGE, 0, GEN4_X16);
    let s2 = [hb, "0000:00:02.0", "0000:01:00.0", "0000:02:00.0"];
    t.pci(&s2, "0000:03:00.0", BROADCOM_SWITCH, BRIDGE, 0, GEN4_X16);
    let s2d = [hb, "0000:00:02.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"];
    t.pci(&s2d, "0000:04:00.0", BROADCOM_SWITCH, BRIDGE, 0, GEN4_X16);
    let gpu_path = [
        hb,
        "0000:00:02.0",
        "0000:01:00.0",
        "0000:02:00.0",
        "0000:03:00.0",
        "0000:04:00.0",
    ];
    t.pci(
        &gpu_path,
        "0000:05:00.0",
        NVIDIA,
        GPU_3D,
        0,
        Link("16.0 GT/s PCIe", "16.0 GT/s PCIe", 8, 16),
    );
    let n0 = t.pci(
        &[hb, "0000:00:02.0", "0000:01:00.0", "0000:02:01.0"],
        "0000:06:00.0",
        MELLANOX,
        ETH_NIC,
        0,
        Link("8.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16),
    );
    t.netdev(Some(&n0), "ens6f0np0", "up", 1, 100000);
    t.ib(&n0, "mlx5_0", "4: ACTIVE", "5: LinkUp", "100 Gb/sec (4X EDR)");
    t.pci(&[hb], "0000:00:03.0", 0x8086, BRIDGE, 0, GEN4_X16);
    let n1 = t.pci(&[hb, "0000:00:03.0"], "0000:07:00.0", MELLANOX, ETH_NIC, 0, GEN4_X16);
    t.netdev(Some(&n1), "ens7f0np0", "down", 0, -1);
    t.ib(&n1, "mlx5_1", "1: DOWN", "3: Disabled", "100 Gb/sec (4X EDR)");
    t.acs("0000:02:00.0", true, false);
    vec![vec!["PXB", "PHB"]]
}

/// The PCI tree of the H100 machine this project's GPU checks ran on, as
/// read there (docs/results/health-gpu-h100.md has the capture): a KVM
/// guest with every function on the root bus of one host bridge, no NUMA
/// node known (-1), the H100 (10de:2330) at 0000:00:06.0 trained Gen5 x16,
/// and one virtio-net NIC (1af4:1041, eth0 one level down under virtio2/).
/// nvidia-smi topo -m there showed GPU0 alone (it lists RDMA NICs only),
/// CPU affinity 0-15.
pub fn h100_vm(root: &Path) -> Expected {
    let t = SysfsTree::new(root);
    let hb = ["pci0000:00"];
    let none = Link("", "", 0, 0);
    for (a, vendor, class) in [
        ("0000:00:00.0", 0x8086, 0x060000),
        ("0000:00:01.0", 0x1af4, 0x018000),
        ("0000:00:02.0", 0x1af4, 0x018000),
        ("0000:00:04.0", 0x1af4, 0xffff00),
        ("0000:00:05.0", 0x1af4, 0xffff00),
    ] {
        let d = t.pci(&hb, a, vendor, class, -1, none);
        for f in [
            "current_link_speed",
            "max_link_speed",
            "current_link_width",
            "max_link_width",
        ] {
            std::fs::remove_file(d.join(f)).expect("a fixture file");
        }
    }
    let nic = t.pci(&hb, "0000:00:03.0", 0x1af4, ETH_NIC, -1, none);
    for f in [
        "current_link_speed",
        "max_link_speed",
        "current_link_width",
        "max_link_width",
    ] {
        std::fs::remove_file(nic.join(f)).expect("a fixture file");
    }
    t.netdev(Some(&nic.join("virtio2")), "eth0", "up", 1, -1);
    t.pci(&hb, "0000:00:06.0", NVIDIA, GPU_3D, -1, GEN5_X16);
    vec![vec!["PHB"]]
}
