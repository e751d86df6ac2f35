//! The counter reader against fixture trees laid out as each driver lays
//! out its counters (fabdiag-testkit's counters module cites the layouts):
//! every family found from its provider and domain, read, changed and
//! read again; wrapped, reset, saturated, unreadable and vanished
//! counters said as such.

use fabdiag_counters::{sources, Change, Class, Counters, Family, Snapshot, Unavailable};
use fabdiag_testkit::counters::{nics, set, set_tcp, set_telemetry};

fn change_of<'a>(d: &'a fabdiag_counters::Deltas, family: Family, name: &str) -> &'a Change {
    &d.sources
        .iter()
        .filter(|s| s.family == family)
        .flat_map(|s| &s.counters)
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{family:?} {name} in {d:#?}"))
        .change
}

#[test]
fn each_family_is_found_from_its_provider_and_domain() {
    let dir = tempfile::tempdir().unwrap();
    let n = nics(dir.path());
    // (as fi_getinfo names them; sources takes the core provider)
    let found = |p: &str, d: &str| -> Vec<(Family, String)> {
        sources(&n.root, p.split(';').next().unwrap_or(p), d, None)
            .unwrap_or_else(|e| panic!("{p} {d}: {e}"))
            .into_iter()
            .map(|s| (s.family, s.device))
            .collect()
    };
    assert_eq!(
        found("verbs;ofi_rxm", "mlx5_0"),
        [(Family::Infiniband, "mlx5_0 port 1".into())]
    );
    assert_eq!(
        found("verbs", "mlx5_1-rdm"),
        [
            (Family::Infiniband, "mlx5_1 port 1".into()),
            (Family::Netdev, "enp65s0f1np1".into())
        ]
    );
    assert_eq!(found("efa", "efa_0-rdm"), [(Family::Efa, "efa_0 port 1".into())]);
    assert_eq!(
        found("cxi", "cxi0"),
        [(Family::Cxi, "cxi0".into()), (Family::Netdev, "hsn0".into())]
    );
    assert_eq!(
        found("tcp;ofi_rxm", "eth0"),
        [(Family::Netdev, "eth0".into()), (Family::Tcp, "tcp".into())]
    );
    assert_eq!(found("udp;ofi_rxd", "eth0"), [(Family::Netdev, "eth0".into())]);
    assert_eq!(
        sources(&n.root, "shm", "shm", None).unwrap_err(),
        Unavailable::NoDevice { provider: "shm".into() }
    );
    assert_eq!(
        sources(&n.root, "verbs", "mlx5_9", None).unwrap_err().to_string(),
        "no /sys/class/infiniband, net or cxi entry named mlx5_9"
    );
}

/// A domain named otherwise than its device (a provider's own naming) is
/// found by the PCI address fi_nic gives; an address that is not one is
/// never joined to a path.
#[test]
fn a_domain_is_found_by_its_nic_s_pci_address() {
    let dir = tempfile::tempdir().unwrap();
    let n = nics(dir.path());
    let by = |p: &str, d: &str, pci: &str| -> Result<Vec<(Family, String)>, String> {
        sources(&n.root, p, d, Some(pci))
            .map(|v| v.into_iter().map(|s| (s.family, s.device)).collect())
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        by("verbs", "rdmap65s0", "0000:41:00.0"),
        Ok(vec![(Family::Infiniband, "mlx5_0 port 1".into())])
    );
    assert_eq!(
        by("cxi", "cxi_a", "0000:43:00.0"),
        Ok(vec![(Family::Cxi, "cxi0".into()), (Family::Netdev, "hsn0".into())])
    );
    assert_eq!(
        by("udp", "nic7", "0000:44:00.0"),
        Ok(vec![(Family::Netdev, "eth0".into())])
    );
    // the name wins over the address
    assert_eq!(
        by("verbs", "mlx5_1", "0000:41:00.0").unwrap()[0],
        (Family::Infiniband, "mlx5_1 port 1".into())
    );
    for pci in ["0000:99:00.0", "../../../etc", "0000:41:00.0/..", "41:00.0"] {
        assert_eq!(
            by("verbs", "rdmap9", pci),
            Err(format!(
                "no /sys/class/infiniband, net or cxi entry named rdmap9, nor a NIC at PCI address {pci}"
            ))
        );
    }
}

#[test]
fn rises_are_counted_and_classed_on_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let n = nics(dir.path());
    let all: Vec<_> = [
        ("verbs", "mlx5_0"),
        ("verbs", "mlx5_1"),
        ("efa", "efa_0"),
        ("cxi", "cxi0"),
        ("tcp", "eth0"),
    ]
    .iter()
    .flat_map(|(p, d)| sources(&n.root, p, d, None).unwrap())
    .collect();
    let before = Snapshot::take(&all);
    set(
        &n.ib_counters,
        &[("symbol_error", 1207), ("link_downed", 3), ("port_xmit_wait", 5000)],
    );
    set(&n.ib_hw, &[("out_of_sequence", 9)]);
    set(&n.roce_counters, &[("port_xmit_wait", 7)]);
    set(&n.efa_port_hw, &[("retrans_pkts", 12)]);
    set_telemetry(
        &n.cxi_telemetry,
        &[("hni_pcs_uncorrected_cw", 44), ("hni_pcs_corrected_cw", 150)],
    );
    set(&n.hsn0, &[("carrier_changes", 4)]);
    set(&n.eth0.join("statistics"), &[("rx_crc_errors", 2)]);
    set_tcp(&n.proc_net, 130, 2);
    let d = Snapshot::take(&all).since(&before);
    assert_eq!(
        change_of(&d, Family::Infiniband, "symbol_error"),
        &Change::Rose { by: 1204 }
    );
    assert_eq!(
        change_of(&d, Family::Infiniband, "link_downed"),
        &Change::Rose { by: 2 }
    );
    assert_eq!(
        change_of(&d, Family::Infiniband, "out_of_sequence"),
        &Change::Rose { by: 9 }
    );
    assert_eq!(change_of(&d, Family::Efa, "retrans_pkts"), &Change::Rose { by: 12 });
    assert_eq!(change_of(&d, Family::Efa, "completed_cmds"), &Change::Unchanged);
    assert_eq!(
        change_of(&d, Family::Cxi, "hni_pcs_uncorrected_cw"),
        &Change::Rose { by: 44 }
    );
    assert_eq!(change_of(&d, Family::Tcp, "RetransSegs"), &Change::Rose { by: 30 });
    assert_eq!(change_of(&d, Family::Tcp, "TCPTimeouts"), &Change::Rose { by: 1 });
    // the gauges beside them are not counters
    assert!(d
        .sources
        .iter()
        .flat_map(|s| &s.counters)
        .all(|c| c.name != "CurrEstab" && c.name != "lifespan"));
    let alarming: Vec<String> = d
        .alarming()
        .map(|(s, c)| format!("{} {} {}", s.device, c.name, c.class.as_str()))
        .collect();
    assert_eq!(
        alarming,
        [
            "mlx5_0 port 1 link_downed flap",
            "mlx5_0 port 1 out_of_sequence retransmit",
            "mlx5_0 port 1 symbol_error physical",
            "efa_0 port 1 retrans_pkts retransmit",
            "cxi0 hni_pcs_uncorrected_cw physical",
            "hsn0 carrier_changes flap",
            "eth0 rx_crc_errors physical",
            "tcp RetransSegs retransmit",
            "tcp TCPTimeouts retransmit",
        ]
    );
    // load signs rose, and are not alarming
    assert_eq!(
        change_of(&d, Family::Infiniband, "port_xmit_wait"),
        &Change::Rose { by: 4000 }
    );
    assert!(d
        .sources
        .iter()
        .flat_map(|s| &s.counters)
        .any(|c| c.class == Class::Congestion && !c.alarming()));
    assert!(d.counters_read > 60, "{}", d.counters_read);
}

#[test]
fn went_back_at_ceiling_unreadable_and_vanished_are_said_never_zero() {
    let dir = tempfile::tempdir().unwrap();
    let n = nics(dir.path());
    let src = sources(&n.root, "verbs", "mlx5_0", None).unwrap();
    let before = Snapshot::take(&src);
    // reset (or wrapped), at the IBA ceiling, unreadable, gone
    set(&n.ib_counters, &[("symbol_error", 0), ("port_rcv_errors", 65535)]);
    std::fs::write(n.ib_counters.join("port_xmit_discards"), "N/A\n").unwrap();
    std::fs::remove_file(n.ib_counters.join("link_error_recovery")).unwrap();
    set(&n.ib_counters, &[("link_downed", 255)]);
    let d = Snapshot::take(&src).since(&before);
    assert_eq!(
        change_of(&d, Family::Infiniband, "symbol_error"),
        &Change::WentBack { before: 3, after: 0 }
    );
    assert_eq!(
        change_of(&d, Family::Infiniband, "port_rcv_errors"),
        &Change::AtCeiling { at_least: 65535 }
    );
    assert_eq!(
        change_of(&d, Family::Infiniband, "link_downed"),
        &Change::AtCeiling { at_least: 254 }
    );
    assert!(matches!(
        change_of(&d, Family::Infiniband, "port_xmit_discards"),
        Change::Unreadable { .. }
    ));
    assert_eq!(
        change_of(&d, Family::Infiniband, "link_error_recovery"),
        &Change::Vanished
    );
    // a whole source gone between the readings
    std::fs::remove_dir_all(&n.ib_counters).unwrap();
    std::fs::remove_dir_all(&n.ib_hw).unwrap();
    let d = Snapshot::take(&src).since(&before);
    assert!(d.sources[0].counters.is_empty());
    assert!(
        d.sources[0]
            .unavailable
            .as_deref()
            .is_some_and(|w| w.starts_with("none of ")),
        "{d:?}"
    );
}

#[test]
fn a_side_s_counters_travel_as_json_and_come_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let n = nics(dir.path());
    let src = sources(&n.root, "cxi", "cxi0", None).unwrap();
    let before = Snapshot::take(&src);
    set_telemetry(&n.cxi_telemetry, &[("hni_llr_tx_replay_event", 3)]);
    let c = Counters::Read(Snapshot::take(&src).since(&before));
    let text = serde_json::to_string(&c).unwrap();
    assert!(
        text.starts_with(r#"{"state":"read","sources":[{"family":"cxi","device":"cxi0","counters":["#),
        "{text}"
    );
    assert!(
        text.contains(r#"{"name":"hni_llr_tx_replay_event","class":"retransmit","fault":true,"change":"rose","by":3}"#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<Counters>(&text).unwrap(), c);
    let none = Counters::NotAvailable {
        reason: "shm has no NIC behind it".into(),
    };
    assert_eq!(
        serde_json::to_string(&none).unwrap(),
        r#"{"state":"not_available","reason":"shm has no NIC behind it"}"#
    );
}
