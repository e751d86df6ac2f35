//! The fabric layer against the real libfabric on this machine.

use fabdiag_fabric::{discover, Capability, Endpoint, FabricError, HostBuffer, OpFlags, Posted, Query, RegionId};
use std::time::{Duration, Instant};

#[test]
fn missing_capability_is_named() {
    // tcp (through ofi_rxm) cannot do RMA on device memory in libfabric
    // 1.17, while shm can: the same query must fail only for tcp
    let q = |p: &str| Query {
        provider: Some(p.into()),
        domain: None,
        capability: Some(Capability::RmaWriteHmem),
    };
    let e = discover(&q("tcp")).err().expect("tcp must not offer FI_HMEM here");
    assert!(matches!(e, FabricError::MissingCapability { .. }), "{e}");
    assert!(e.is_unavailable());
    assert_eq!(
        e.to_string(),
        "provider 'tcp' cannot run this test: it lacks RMA write with device memory (FI_HMEM)"
    );
    assert!(discover(&q("shm")).is_ok());
}

#[test]
fn unknown_provider_lists_the_real_ones() {
    let e = discover(&Query {
        provider: Some("nope".into()),
        ..Default::default()
    })
    .err()
    .unwrap();
    let s = e.to_string();
    assert!(
        s.starts_with("no libfabric provider named 'nope'") && s.contains("shm"),
        "{s}"
    );
}

/// Two endpoints in one process over shm: a write lands in the peer's
/// buffer byte for byte, and out-of-range requests are refused, not sent.
#[test]
fn write_lands_and_bounds_are_checked() {
    let list = discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::RmaWrite),
    })
    .unwrap();
    let mut a = Endpoint::open(&list, 0, vec![HostBuffer::new(4096, None, 0xA5).unwrap()]).unwrap();
    let mut b = Endpoint::open(&list, 0, vec![HostBuffer::new(4096, None, 0).unwrap()]).unwrap();
    let peer = a.insert_peer(&b.name().unwrap()).unwrap();
    let target = b.remote_region(RegionId(0)).unwrap();
    let mut comps = vec![Default::default(); 8];
    let deadline = Instant::now() + Duration::from_secs(10);
    // shm answers EAGAIN until it has mapped the peer; progress and retry
    while a
        .write(RegionId(0), 0, 100, peer, &target, 8, OpFlags::default(), 7)
        .unwrap()
        == Posted::Busy
    {
        a.poll(&mut comps).unwrap();
        b.poll(&mut comps).unwrap();
        assert!(Instant::now() < deadline, "write never accepted");
    }
    loop {
        let n = a.poll(&mut comps).unwrap();
        b.poll(&mut comps[..]).unwrap();
        if n > 0 {
            assert_eq!(comps[0].context, 7);
            break;
        }
        assert!(Instant::now() < deadline, "write never completed");
    }
    let got = b.region(RegionId(0)).unwrap();
    assert!(got[..8].iter().all(|&x| x == 0));
    assert!(got[8..108].iter().all(|&x| x == 0xA5));
    assert!(got[108..].iter().all(|&x| x == 0));
    // beyond the peer's advertised region, or our own: an error, no I/O
    assert!(matches!(
        a.write(RegionId(0), 0, 100, peer, &target, 4000, OpFlags::default(), 0),
        Err(FabricError::Bounds(_))
    ));
    assert!(matches!(
        a.write(RegionId(0), 4090, 100, peer, &target, 0, OpFlags::default(), 0),
        Err(FabricError::Bounds(_))
    ));
    assert!(matches!(
        a.write(RegionId(3), 0, 1, peer, &target, 0, OpFlags::default(), 0),
        Err(FabricError::Bounds(_))
    ));
    // a peer address that is too short is refused before libfabric sees it
    assert!(a.insert_peer(&[1, 2]).is_err());
}
