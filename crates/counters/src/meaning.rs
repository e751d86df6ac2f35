//! What a rise of each counter usually means: its class, whether a rise
//! is a fault or only a sign of load, and how the counter ends (wraps at
//! a width, or stops at its ceiling). Counters not in the tables are
//! "other" and never judged a fault. Tables only; reads nothing.
//!
//! Sources, per family:
//! - netdev: Linux Documentation/ABI/testing/sysfs-class-net-statistics
//!   and sysfs-class-net (carrier_changes, carrier_up_count,
//!   carrier_down_count); the kernel keeps them as 64-bit counts.
//! - tcp: the kernel's SNMP MIB (include/uapi/linux/snmp.h, RFC 4022
//!   names) as /proc/net/snmp and /proc/net/netstat show it.
//! - InfiniBand and RoCE: Documentation/ABI/stable/sysfs-class-infiniband
//!   (ports/N/counters and hw_counters); the widths are the IBA
//!   PortCounters attribute's, whose error counters stop at their
//!   maximum instead of wrapping; hw_counters are the mlx5 driver's
//!   (drivers/infiniband/hw/mlx5/counters.c).
//! - EFA: the efa driver's port and device statistics
//!   (drivers/infiniband/hw/efa/efa_verbs.c), under hw_counters.
//! - CXI: the names the cxi driver gives its telemetry files
//!   (HPE's shs-cxi-driver, cassini counter definitions), 56 bits wide
//!   as HPE's cxi_stat reads them.

use crate::locate::Family;
use serde::{Deserialize, Serialize};

/// What kind of trouble a counter's rise points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The physical layer: the cable, optics, connector or port (symbol
    /// and CRC errors, uncorrected codewords).
    Physical,
    /// The link went down or retrained.
    Flap,
    /// The fabric was busy: waits, pauses, congestion notifications.
    Congestion,
    /// Packets were sent again: loss somewhere on the path.
    Retransmit,
    /// Packets were dropped or discarded.
    Drop,
    /// Bytes and packets moved.
    Traffic,
    /// Anything else the driver counts.
    Other,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Physical => "physical",
            Class::Flap => "flap",
            Class::Congestion => "congestion",
            Class::Retransmit => "retransmit",
            Class::Drop => "drop",
            Class::Traffic => "traffic",
            Class::Other => "other",
        }
    }

    /// What a rise usually means, for a person.
    pub fn suspect(self) -> &'static str {
        match self {
            Class::Physical => "suspect the cable, optics or port",
            Class::Flap => "the link went down or retrained",
            Class::Congestion => "the fabric was busy",
            Class::Retransmit => "packets were lost and sent again",
            Class::Drop => "packets were dropped",
            Class::Traffic => "traffic",
            Class::Other => "other",
        }
    }
}

/// How a counter ends when it runs out of bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "bits")]
pub enum Limit {
    /// Starts again from zero past 2^bits - 1.
    Wraps(u32),
    /// Stops at 2^bits - 1 (the IBA error counters).
    Saturates(u32),
}

impl Limit {
    /// The largest value the counter can hold.
    pub fn max(self) -> u64 {
        let bits = match self {
            Limit::Wraps(b) | Limit::Saturates(b) => b,
        };
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meaning {
    pub class: Class,
    /// A rise is a fault (true) or only a sign of load (false).
    pub fault: bool,
    pub limit: Limit,
}

const fn m(class: Class, fault: bool, limit: Limit) -> Meaning {
    Meaning { class, fault, limit }
}

use Class::*;
const W64: Limit = Limit::Wraps(64);

/// A name, or a prefix when it ends in '*'.
type Table = &'static [(&'static str, Meaning)];

const NETDEV: Table = &[
    ("rx_bytes", m(Traffic, false, W64)),
    ("tx_bytes", m(Traffic, false, W64)),
    ("rx_packets", m(Traffic, false, W64)),
    ("tx_packets", m(Traffic, false, W64)),
    ("multicast", m(Traffic, false, W64)),
    ("rx_compressed", m(Traffic, false, W64)),
    ("tx_compressed", m(Traffic, false, W64)),
    ("rx_crc_errors", m(Physical, true, W64)),
    ("rx_frame_errors", m(Physical, true, W64)),
    ("rx_length_errors", m(Physical, true, W64)),
    ("tx_carrier_errors", m(Physical, true, W64)),
    ("tx_aborted_errors", m(Physical, true, W64)),
    ("tx_heartbeat_errors", m(Physical, true, W64)),
    ("tx_window_errors", m(Physical, true, W64)),
    ("rx_errors", m(Other, true, W64)),
    ("tx_errors", m(Other, true, W64)),
    ("rx_dropped", m(Drop, true, W64)),
    ("tx_dropped", m(Drop, true, W64)),
    ("rx_missed_errors", m(Drop, true, W64)),
    ("rx_over_errors", m(Drop, true, W64)),
    ("rx_fifo_errors", m(Drop, true, W64)),
    ("tx_fifo_errors", m(Drop, true, W64)),
    ("rx_nohandler", m(Drop, false, W64)),
    ("collisions", m(Congestion, false, W64)),
    ("carrier_changes", m(Flap, true, W64)),
    ("carrier_up_count", m(Flap, true, W64)),
    ("carrier_down_count", m(Flap, true, W64)),
];

const TCP: Table = &[
    ("RetransSegs", m(Retransmit, true, W64)),
    ("TCPTimeouts", m(Retransmit, true, W64)),
    ("TCPLostRetransmit", m(Retransmit, true, W64)),
    ("TCPSynRetrans", m(Retransmit, true, W64)),
    ("InErrs", m(Drop, true, W64)),
    ("TCPBacklogDrop", m(Drop, true, W64)),
    ("TCPRcvQDrop", m(Drop, true, W64)),
    ("InCsumErrors", m(Physical, true, W64)),
    ("InSegs", m(Traffic, false, W64)),
    ("OutSegs", m(Traffic, false, W64)),
];

const fn sat(class: Class, fault: bool, bits: u32) -> Meaning {
    m(class, fault, Limit::Saturates(bits))
}

const INFINIBAND: Table = &[
    ("symbol_error", sat(Physical, true, 16)),
    ("port_rcv_errors", sat(Physical, true, 16)),
    ("port_rcv_remote_physical_errors", sat(Physical, true, 16)),
    ("local_link_integrity_errors", sat(Physical, true, 4)),
    ("excessive_buffer_overrun_errors", sat(Physical, true, 4)),
    ("link_downed", sat(Flap, true, 8)),
    ("link_error_recovery", sat(Flap, true, 8)),
    ("port_xmit_discards", sat(Congestion, true, 16)),
    ("port_xmit_wait", sat(Congestion, false, 32)),
    ("port_rcv_switch_relay_errors", sat(Drop, true, 16)),
    ("port_xmit_constraint_errors", sat(Drop, true, 8)),
    ("port_rcv_constraint_errors", sat(Drop, true, 8)),
    ("VL15_dropped", sat(Drop, true, 16)),
    ("port_xmit_data", m(Traffic, false, W64)),
    ("port_rcv_data", m(Traffic, false, W64)),
    ("port_xmit_packets", m(Traffic, false, W64)),
    ("port_rcv_packets", m(Traffic, false, W64)),
    ("unicast_xmit_packets", m(Traffic, false, W64)),
    ("unicast_rcv_packets", m(Traffic, false, W64)),
    ("multicast_xmit_packets", m(Traffic, false, W64)),
    ("multicast_rcv_packets", m(Traffic, false, W64)),
    // mlx5 hw_counters
    ("out_of_sequence", m(Retransmit, true, W64)),
    ("packet_seq_err", m(Retransmit, true, W64)),
    ("local_ack_timeout_err", m(Retransmit, true, W64)),
    ("duplicate_request", m(Retransmit, true, W64)),
    ("implied_nak_seq_err", m(Retransmit, true, W64)),
    ("rnr_nak_retry_err", m(Retransmit, true, W64)),
    ("roce_adp_retrans", m(Retransmit, true, W64)),
    ("roce_adp_retrans_to", m(Retransmit, true, W64)),
    ("roce_slow_restart", m(Retransmit, true, W64)),
    ("out_of_buffer", m(Drop, true, W64)),
    ("np_cnp_sent", m(Congestion, false, W64)),
    ("rp_cnp_handled", m(Congestion, false, W64)),
    ("rp_cnp_ignored", m(Congestion, false, W64)),
    ("np_ecn_marked_roce_packets", m(Congestion, false, W64)),
    ("rx_icrc_encapsulated", m(Physical, true, W64)),
    ("req_cqe_error", m(Other, true, W64)),
    ("resp_cqe_error", m(Other, true, W64)),
    ("resp_local_length_error", m(Other, true, W64)),
    ("req_remote_invalid_request", m(Other, true, W64)),
    ("req_remote_access_errors", m(Other, true, W64)),
    ("resp_remote_access_errors", m(Other, true, W64)),
    ("rx_write_requests", m(Traffic, false, W64)),
    ("rx_read_requests", m(Traffic, false, W64)),
    ("rx_atomic_requests", m(Traffic, false, W64)),
];

const EFA: Table = &[
    ("tx_bytes", m(Traffic, false, W64)),
    ("tx_pkts", m(Traffic, false, W64)),
    ("rx_bytes", m(Traffic, false, W64)),
    ("rx_pkts", m(Traffic, false, W64)),
    ("send_bytes", m(Traffic, false, W64)),
    ("send_wrs", m(Traffic, false, W64)),
    ("recv_bytes", m(Traffic, false, W64)),
    ("recv_wrs", m(Traffic, false, W64)),
    ("rdma_read_wrs", m(Traffic, false, W64)),
    ("rdma_read_bytes", m(Traffic, false, W64)),
    ("rdma_read_resp_bytes", m(Traffic, false, W64)),
    ("rdma_write_wrs", m(Traffic, false, W64)),
    ("rdma_write_bytes", m(Traffic, false, W64)),
    ("rdma_write_recv_bytes", m(Traffic, false, W64)),
    ("submitted_cmds", m(Traffic, false, W64)),
    ("completed_cmds", m(Traffic, false, W64)),
    ("keep_alive_rcvd", m(Traffic, false, W64)),
    ("rx_drops", m(Drop, true, W64)),
    ("retrans_bytes", m(Retransmit, true, W64)),
    ("retrans_pkts", m(Retransmit, true, W64)),
    ("retrans_timeout_events", m(Retransmit, true, W64)),
    ("unresponsive_remote_events", m(Retransmit, true, W64)),
    ("impaired_remote_conn_events", m(Retransmit, true, W64)),
    ("rdma_read_wr_err", m(Other, true, W64)),
    ("rdma_write_wr_err", m(Other, true, W64)),
    ("cmds_err", m(Other, true, W64)),
    ("no_completion_cmds", m(Other, true, W64)),
];

const W56: Limit = Limit::Wraps(56);

const CXI: Table = &[
    ("hni_pcs_uncorrected_cw", m(Physical, true, W56)),
    ("hni_pcs_corrected_cw", m(Physical, false, W56)),
    ("hni_pcs_fecl_errors_*", m(Physical, false, W56)),
    ("hni_pcs_good_cw", m(Traffic, false, W56)),
    ("hni_llr_tx_replay_event", m(Retransmit, true, W56)),
    ("hni_llr_rx_replay_event", m(Retransmit, true, W56)),
    ("pct_spt_timeouts", m(Retransmit, true, W56)),
    ("pct_sct_timeouts", m(Retransmit, true, W56)),
    ("pct_retry_srb_requests", m(Retransmit, true, W56)),
    ("pct_no_tct_nacks", m(Congestion, false, W56)),
    ("pct_no_trs_nacks", m(Congestion, false, W56)),
    ("pct_no_mst_nacks", m(Congestion, false, W56)),
    ("pct_trs_rsp_nack_drops", m(Drop, true, W56)),
    ("hni_discard_cntr*", m(Drop, true, W56)),
    ("hni_pfc_fifo_oflw_cntr*", m(Drop, true, W56)),
    ("hni_pause_*", m(Congestion, false, W56)),
    ("hni_rx_paused*", m(Congestion, false, W56)),
    ("hni_sts_*", m(Traffic, false, W56)),
    ("hni_tx_ok_*", m(Traffic, false, W56)),
    ("hni_rx_ok_*", m(Traffic, false, W56)),
    ("hni_pkts_*", m(Traffic, false, W56)),
];

fn table(family: Family) -> Table {
    match family {
        Family::Netdev => NETDEV,
        Family::Tcp => TCP,
        Family::Infiniband => INFINIBAND,
        Family::Efa => EFA,
        Family::Cxi => CXI,
    }
}

/// What a rise of counter `name` of `family` means.
pub fn meaning(family: Family, name: &str) -> Meaning {
    let unknown = m(Other, false, if family == Family::Cxi { W56 } else { W64 });
    table(family)
        .iter()
        .find(|(pat, _)| match pat.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *pat,
        })
        .map_or(unknown, |(_, m)| *m)
}

/// Every name a family's table holds (prefixes with their '*').
pub fn known(family: Family) -> impl Iterator<Item = &'static str> {
    table(family).iter().map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_hold_each_name_once_and_class_what_the_issue_names() {
        for f in [
            Family::Netdev,
            Family::Tcp,
            Family::Infiniband,
            Family::Efa,
            Family::Cxi,
        ] {
            let mut names: Vec<_> = known(f).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), n, "{f:?} has a name twice");
        }
        assert_eq!(meaning(Family::Infiniband, "symbol_error").class, Physical);
        assert_eq!(meaning(Family::Infiniband, "link_downed").class, Flap);
        assert!(!meaning(Family::Infiniband, "port_xmit_wait").fault);
        assert_eq!(
            meaning(Family::Infiniband, "port_xmit_wait").limit.max(),
            u32::MAX as u64
        );
        assert_eq!(meaning(Family::Netdev, "carrier_changes").class, Flap);
        assert_eq!(meaning(Family::Tcp, "RetransSegs").class, Retransmit);
        assert_eq!(meaning(Family::Cxi, "hni_pcs_fecl_errors_3").class, Physical);
        assert_eq!(
            meaning(Family::Cxi, "hni_pcs_uncorrected_cw").limit.max(),
            (1u64 << 56) - 1
        );
        let other = meaning(Family::Efa, "something_new");
        assert_eq!((other.class, other.fault), (Other, false));
    }
}
