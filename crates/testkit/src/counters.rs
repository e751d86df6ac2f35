//! Fixture counter trees, laid out as the drivers lay them out, for the
//! counter reader's tests: a netdev's statistics/ and carrier_changes
//! (Documentation/ABI/testing/sysfs-class-net-statistics, sysfs-class-net),
//! /proc/net/snmp and /proc/net/netstat's TCP lines, an InfiniBand port's
//! counters/ and hw_counters/ and its link_layer
//! (Documentation/ABI/stable/sysfs-class-infiniband), an EFA device's
//! port and device hw_counters with its driver link (the efa driver), and
//! a CXI device's telemetry files, "VALUE@SECONDS.NANOSECONDS", under
//! its PCI function (HPE's shs-cxi-driver: /sys/class/cxi/cxiN/device/
//! telemetry). Only for tests.

use crate::sysfs::{link, write, SysfsTree, ETH_NIC, GEN4_X16, IB_NIC, MELLANOX};
use std::path::{Path, PathBuf};

/// Sets counters in a folder: one file per counter, as "N\n".
pub fn set(dir: &Path, values: &[(&str, u64)]) {
    for (name, v) in values {
        write(&dir.join(name), &format!("{v}\n"));
    }
}

/// Sets CXI telemetry counters: "N@SECONDS.NANOSECONDS\n".
pub fn set_telemetry(dir: &Path, values: &[(&str, u64)]) {
    for (name, v) in values {
        write(&dir.join(name), &format!("{v}@1764150000.123456789\n"));
    }
}

/// Where each fixture NIC keeps its counters, for tests to change them.
pub struct Nics {
    pub root: PathBuf,
    /// mlx5_0 port 1 (InfiniBand): counters/ and hw_counters/.
    pub ib_counters: PathBuf,
    pub ib_hw: PathBuf,
    /// mlx5_1 port 1 (RoCE) and its netdev enp65s0f1np1.
    pub roce_counters: PathBuf,
    pub roce_net: PathBuf,
    /// efa_0: port 1's hw_counters and the device's.
    pub efa_port_hw: PathBuf,
    pub efa_dev_hw: PathBuf,
    /// cxi0's telemetry folder, and its hsn0 netdev.
    pub cxi_telemetry: PathBuf,
    pub hsn0: PathBuf,
    /// eth0 (a netdev for tcp) and /proc/net.
    pub eth0: PathBuf,
    pub proc_net: PathBuf,
}

/// Writes the TCP lines of /proc/net/snmp and /proc/net/netstat, with
/// the other fields the kernel prints around them.
pub fn set_tcp(proc_net: &Path, retrans_segs: u64, timeouts: u64) {
    write(
        &proc_net.join("snmp"),
        &format!(
            "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
             Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
             Tcp: 1 200 120000 -1 10 5 0 0 3 1000 900 {retrans_segs} 0 2 0\n\
             Udp: InDatagrams NoPorts\nUdp: 1 0\n"
        ),
    );
    write(
        &proc_net.join("netstat"),
        &format!(
            "TcpExt: SyncookiesSent TCPTimeouts TCPLostRetransmit TCPSynRetrans TCPBacklogDrop TCPRcvQDrop\n\
             TcpExt: 0 {timeouts} 0 0 0 0\n\
             IpExt: InNoRoutes InOctets\nIpExt: 0 12345\n"
        ),
    );
}

fn add_ib_port(t: &SysfsTree, dev: &Path, name: &str, link_layer: &str) -> PathBuf {
    t.ib(dev, name, "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)");
    let d = dev.join("infiniband").join(name);
    link(dev, &d.join("device"));
    write(&d.join("ports/1/link_layer"), &format!("{link_layer}\n"));
    d.join("ports/1")
}

/// A machine with one NIC of each family, every counter at a start value.
pub fn nics(root: &Path) -> Nics {
    let t = SysfsTree::new(root);
    let hb = ["pci0000:00", "0000:00:01.0"];
    // InfiniBand HCA
    let ib = t.pci(&hb, "0000:41:00.0", MELLANOX, IB_NIC, 0, GEN4_X16);
    let ib_port = add_ib_port(&t, &ib, "mlx5_0", "InfiniBand");
    set(
        &ib_port.join("counters"),
        &[
            ("symbol_error", 3),
            ("link_downed", 1),
            ("link_error_recovery", 0),
            ("port_rcv_errors", 0),
            ("port_xmit_discards", 0),
            ("port_xmit_wait", 1000),
            ("port_xmit_data", 1 << 30),
            ("port_rcv_data", 1 << 30),
        ],
    );
    set(
        &ib_port.join("hw_counters"),
        &[("out_of_sequence", 0), ("local_ack_timeout_err", 0), ("lifespan", 10)],
    );
    // RoCE NIC with its netdev
    let roce = t.pci(&hb, "0000:41:00.1", MELLANOX, ETH_NIC, 0, GEN4_X16);
    let roce_port = add_ib_port(&t, &roce, "mlx5_1", "Ethernet");
    set(
        &roce_port.join("counters"),
        &[("symbol_error", 0), ("port_xmit_wait", 0)],
    );
    set(
        &roce_port.join("hw_counters"),
        &[("np_cnp_sent", 0), ("rp_cnp_handled", 0), ("out_of_sequence", 0)],
    );
    let roce_net = t.netdev(Some(&roce), "enp65s0f1np1", "up", 1, 400_000);
    netdev_counters(&roce_net, 0);
    // EFA
    let efa = t.pci(&hb, "0000:42:00.0", 0x1d0f, ETH_NIC, 0, GEN4_X16);
    t.ib(&efa, "efa_0", "4: ACTIVE", "5: LinkUp", "100 Gb/sec (4X EDR)");
    let efa_d = efa.join("infiniband/efa_0");
    link(&efa, &efa_d.join("device"));
    std::fs::create_dir_all(root.join("sys/bus/pci/drivers/efa")).expect("a driver folder");
    link(&root.join("sys/bus/pci/drivers/efa"), &efa.join("driver"));
    set(
        &efa_d.join("ports/1/hw_counters"),
        &[("tx_bytes", 0), ("rx_drops", 0), ("retrans_pkts", 0), ("lifespan", 10)],
    );
    set(&efa_d.join("hw_counters"), &[("cmds_err", 0), ("completed_cmds", 7)]);
    // CXI with hsn0
    let cxi = t.pci(&hb, "0000:43:00.0", 0x17db, ETH_NIC, 0, GEN4_X16);
    let cxi_d = cxi.join("cxi/cxi0");
    std::fs::create_dir_all(&cxi_d).expect("a cxi folder");
    link(&cxi, &cxi_d.join("device"));
    link(&cxi_d, &root.join("sys/class/cxi/cxi0"));
    set_telemetry(
        &cxi.join("telemetry"),
        &[
            ("hni_pcs_corrected_cw", 100),
            ("hni_pcs_uncorrected_cw", 0),
            ("hni_llr_tx_replay_event", 0),
            ("hni_sts_tx_ok_octets", 5000),
        ],
    );
    write(&cxi.join("telemetry/ALL-in-binary"), "\u{1}\u{2}binary");
    let hsn0 = t.netdev(Some(&cxi), "hsn0", "up", 1, 200_000);
    netdev_counters(&hsn0, 2);
    // eth0 for tcp, and the namespace's TCP counters
    let eth = t.pci(&hb, "0000:44:00.0", 0x8086, ETH_NIC, 0, GEN4_X16);
    let eth0 = t.netdev(Some(&eth), "eth0", "up", 1, 25_000);
    netdev_counters(&eth0, 4);
    let proc_net = root.join("proc/net");
    set_tcp(&proc_net, 100, 1);
    Nics {
        root: root.to_path_buf(),
        ib_counters: ib_port.join("counters"),
        ib_hw: ib_port.join("hw_counters"),
        roce_counters: roce_port.join("counters"),
        roce_net,
        efa_port_hw: efa_d.join("ports/1/hw_counters"),
        efa_dev_hw: efa_d.join("hw_counters"),
        cxi_telemetry: cxi.join("telemetry"),
        hsn0,
        eth0,
        proc_net,
    }
}

/// A netdev's statistics/ (every counter the kernel lists) and
/// carrier_changes.
pub fn netdev_counters(dir: &Path, carrier_changes: u64) {
    let names = [
        "collisions",
        "multicast",
        "rx_bytes",
        "rx_compressed",
        "rx_crc_errors",
        "rx_dropped",
        "rx_errors",
        "rx_fifo_errors",
        "rx_frame_errors",
        "rx_length_errors",
        "rx_missed_errors",
        "rx_nohandler",
        "rx_over_errors",
        "rx_packets",
        "tx_aborted_errors",
        "tx_bytes",
        "tx_carrier_errors",
        "tx_compressed",
        "tx_dropped",
        "tx_errors",
        "tx_fifo_errors",
        "tx_heartbeat_errors",
        "tx_packets",
        "tx_window_errors",
    ];
    let zeros: Vec<(&str, u64)> = names.iter().map(|n| (*n, 0)).collect();
    set(&dir.join("statistics"), &zeros);
    set(dir, &[("carrier_changes", carrier_changes)]);
}
