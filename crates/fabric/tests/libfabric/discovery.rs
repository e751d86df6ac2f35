//! The fabric layer against the real libfabric on this machine.

use fabdiag_fabric::{
    discover, Capability, Endpoint, FabricError, HostBuffer, InfoList, Memory, OpFlags, PeerId, Posted, Query, RegionId,
};
use std::time::{Duration, Instant};

#[test]
fn missing_capability_is_named() {
    // tcp cannot do RMA on device memory in libfabric 1.17 (through
    // ofi_rxm) nor 2.6 (natively), while shm can: the same query must fail
    // only for tcp
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

/// shm's entries that can do RMA writes.
fn shm_writers() -> InfoList {
    discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::RmaWrite),
    })
    .unwrap()
}

/// Writes `len` bytes from `from`'s buffer to `to`'s (`peer` in `from`'s
/// address vector) at `at`, progressing
/// both ends until it completes, and returns the completion's context.
/// (shm answers EAGAIN until it has mapped the peer, so it retries.)
fn write_and_wait(from: &mut Endpoint, to: &mut Endpoint, peer: PeerId, len: u64, at: u64, context: u64) -> u64 {
    let target = to.remote_region(RegionId(0)).unwrap();
    let mut comps = vec![Default::default(); 8];
    let deadline = Instant::now() + Duration::from_secs(10);
    while from
        .write(RegionId(0), 0, len, peer, &target, at, OpFlags::default(), context)
        .unwrap()
        == Posted::Busy
    {
        from.poll(&mut comps).unwrap();
        to.poll(&mut comps).unwrap();
        assert!(Instant::now() < deadline, "write never accepted");
    }
    loop {
        let n = from.poll(&mut comps).unwrap();
        to.poll(&mut comps).unwrap();
        if n > 0 {
            return comps[0].context;
        }
        assert!(Instant::now() < deadline, "write never completed");
    }
}

/// Two endpoints in one process over shm: a write lands in the peer's
/// buffer byte for byte, and out-of-range requests are refused, not sent.
#[test]
fn write_lands_and_bounds_are_checked() {
    let list = shm_writers();
    let mut a = Endpoint::open(&list, 0, vec![Memory::Host(HostBuffer::new(4096, None, 0xA5).unwrap())]).unwrap();
    let mut b = Endpoint::open(&list, 0, vec![Memory::Host(HostBuffer::new(4096, None, 0).unwrap())]).unwrap();
    let peer = a.insert_peer(&b.name().unwrap()).unwrap();
    let target = b.remote_region(RegionId(0)).unwrap();
    assert_eq!(write_and_wait(&mut a, &mut b, peer, 100, 8, 7), 7);
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

/// shm names an endpoint `fi_shm://PID:UID:INDEX`, so two real peers can
/// have addresses of different lengths (a 4- and a 5-digit pid: a CI run
/// refused such a pair as "18 bytes, provider shm needs 19"). Here the
/// index grows until the name is one byte longer than the first one's;
/// the short address must be accepted by the long endpoint, and a write
/// between them must land.
#[test]
fn shm_peers_with_addresses_of_different_lengths_connect() {
    let list = shm_writers();
    let open = |fill| Endpoint::open(&list, 0, vec![Memory::Host(HostBuffer::new(4096, None, fill).unwrap())]).unwrap();
    let short = open(0);
    let short_name = short.name().unwrap();
    let mut long = open(0x5A);
    let mut opened = 1;
    while long.name().unwrap().len() <= short_name.len() {
        opened += 1;
        assert!(opened < 1000, "shm never gave a longer name than {short_name:?}");
        long = open(0x5A);
    }
    let mut short = short;
    let peer = long
        .insert_peer(&short_name)
        .expect("a shorter shm address is a valid peer");
    write_and_wait(&mut long, &mut short, peer, 64, 0, 3);
    assert!(short.region(RegionId(0)).unwrap()[..64].iter().all(|&x| x == 0x5A));
    // the long one's address the other way round, as before
    short.insert_peer(&long.name().unwrap()).unwrap();
    // bytes with no terminator are refused before libfabric reads them
    let e = short.insert_peer(b"fi_shm://garbage").unwrap_err();
    assert!(e.to_string().contains("not a terminated string"), "{e}");
    let e = short.insert_peer(&[0u8; 4]).unwrap_err();
    assert!(e.to_string().contains("is empty"), "{e}");
}
