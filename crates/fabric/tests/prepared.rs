//! An operation checked once (`Endpoint::prepare`) is posted only by the
//! endpoint it was checked on: it points into that endpoint's buffers.

use fabdiag_fabric::{discover, Capability, Endpoint, FabricError, HostBuffer, Memory, OpFlags, Query, RegionId};

fn shm_endpoint() -> Endpoint {
    let list = discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::Msg),
    })
    .expect("shm");
    Endpoint::open(&list, 0, vec![Memory::Host(HostBuffer::new(4096, None, 0).unwrap())]).expect("open")
}

#[test]
fn a_range_is_checked_once_and_only_its_endpoint_posts_it() {
    let mut a = shm_endpoint();
    let mut b = shm_endpoint();
    let beyond = a.prepare(RegionId(0), 4000, 200, OpFlags::default());
    assert!(matches!(beyond, Err(FabricError::Bounds(_))), "{beyond:?}");
    let none = a.prepare(RegionId(1), 0, 8, OpFlags::default());
    assert!(matches!(none, Err(FabricError::Bounds(_))), "{none:?}");
    let p = a.prepare(RegionId(0), 0, 4096, OpFlags::default()).expect("in range");
    let foreign = b.recv_prepared(&p, 0);
    assert!(
        matches!(&foreign, Err(FabricError::Bounds(m)) if m.contains("another endpoint")),
        "{foreign:?}"
    );
    assert!(a.recv_prepared(&p, 0).is_ok(), "its own endpoint posts it");
}
