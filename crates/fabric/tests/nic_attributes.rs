//! fi_nic's attributes as discovery reads them, through the real libfabric
//! and a provider that fills them in (the test provider fdgnic: verbs, efa
//! and cxi do the same on their hardware, which this machine lacks). Its
//! own test binary: libfabric reads FI_PROVIDER_PATH once, when it is
//! first asked, so the variable is set before anything here loads it.

use fabdiag_fabric::{discover, Capability, FabricError, LinkState, Query};

#[test]
fn the_nic_behind_each_entry_is_read_where_the_provider_gives_it() {
    let dir = std::env::temp_dir().join(format!("fdgnic-{}", std::process::id()));
    fabdiag_testkit::nic_provider(&dir).unwrap_or_else(|e| panic!("{e}"));
    // one test in this binary, nothing else running: no other thread reads
    // the environment while it changes
    std::env::set_var("FI_PROVIDER_PATH", &dir);
    std::env::set_var(
        "FDGNIC_DOMAINS",
        "mlx5_0=up:400:4096:0000:3b:00.0,mlx5_1=down:0:1024,hsn0=unknown:200:9000,eth9",
    );
    let list = discover(&Query {
        provider: Some("fdgnic".into()),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("libfabric did not load the test provider from {}: {e}", dir.display()));
    let by_domain = |d: &str| {
        list.entries()
            .find(|e| e.domain == d)
            .unwrap_or_else(|| panic!("no domain {d}"))
            .clone()
    };

    let up = by_domain("mlx5_0").nic.expect("mlx5_0 has a NIC");
    assert_eq!(up.device, "mlx5_0");
    assert_eq!(up.driver, "fdgnic");
    assert_eq!(up.pci.as_deref(), Some("0000:3b:00.0"));
    let link = up.link.expect("link attributes");
    assert_eq!(link.state, LinkState::Up);
    assert_eq!(link.speed_bps, 400_000_000_000);
    assert_eq!(link.mtu, 4096);
    assert_eq!(link.network_type, "Ethernet");

    let down = by_domain("mlx5_1").nic.and_then(|n| n.link).expect("mlx5_1's link");
    assert_eq!((down.state, down.speed_bps, down.mtu), (LinkState::Down, 0, 1024));
    let unknown = by_domain("hsn0").nic.expect("hsn0 has a NIC");
    assert_eq!(unknown.pci, None, "no bus attributes given");
    assert_eq!(unknown.link.map(|l| l.state), Some(LinkState::Unknown));
    assert_eq!(by_domain("eth9").nic, None, "a provider that leaves fi_nic NULL");

    // the provider offers messaging only: discovery's own reasons still hold
    let e = discover(&Query {
        provider: Some("fdgnic".into()),
        domain: None,
        capability: Some(Capability::RmaWrite),
    })
    .err()
    .expect("fdgnic has no RMA");
    assert!(matches!(e, FabricError::MissingCapability { .. }), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
