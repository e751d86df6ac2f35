//! The device-memory registration path (Memory::Device, fi_mr_regattr
//! with an FI_HMEM interface) against the real libfabric here, without a
//! GPU: a `DeviceMemory` backed by host memory registered as
//! FI_HMEM_SYSTEM on shm endpoints opened with FI_HMEM, a write between
//! two of them landing, and its bytes reached only through read/write.

use fabdiag_fabric::{
    discover, Capability, Endpoint, FabricError, HmemIface, HostAsDevice, HostBuffer, Memory, OpFlags, Posted, Query,
    RegionId,
};
use std::time::{Duration, Instant};

fn device(fill: u8) -> Memory {
    Memory::Device(Box::new(HostAsDevice {
        buf: HostBuffer::new(4096, None, fill).unwrap(),
        iface: HmemIface::System,
        settle: Duration::ZERO,
    }))
}

#[test]
fn a_write_between_device_registered_buffers_lands() {
    fabdiag_fabric::load().expect("libfabric must be installed (scripts/install-deps.sh)");
    let list = discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::RmaWriteHmem),
    })
    .expect("shm offers FI_HMEM in libfabric 1.17");
    let mut a = Endpoint::open(&list, 0, vec![device(0xA5)]).unwrap();
    let mut b = Endpoint::open(&list, 0, vec![device(0)]).unwrap();
    // no host slice for device memory: only copies reach it
    assert!(b.region(RegionId(0)).is_none() && b.region_mut(RegionId(0)).is_none());
    let peer = a.insert_peer(&b.name().unwrap()).unwrap();
    let target = b.remote_region(RegionId(0)).unwrap();
    assert_eq!(target.len, 4096);
    let mut comps = vec![Default::default(); 8];
    let deadline = Instant::now() + Duration::from_secs(10);
    while a
        .write(RegionId(0), 0, 100, peer, &target, 8, OpFlags::default(), 9)
        .unwrap()
        == Posted::Busy
    {
        a.poll(&mut comps).unwrap();
        b.poll(&mut comps).unwrap();
        assert!(Instant::now() < deadline, "write never accepted");
    }
    loop {
        let n = a.poll(&mut comps).unwrap();
        b.poll(&mut comps).unwrap();
        if n > 0 {
            assert_eq!(comps[0].context, 9);
            break;
        }
        assert!(Instant::now() < deadline, "write never completed");
    }
    let mut got = vec![0u8; 4096];
    b.memory(RegionId(0)).unwrap().read(0, &mut got).unwrap();
    assert!(got[..8].iter().all(|&x| x == 0));
    assert!(got[8..108].iter().all(|&x| x == 0xA5));
    assert!(got[108..].iter().all(|&x| x == 0));
    // copies are bounds-checked before the GPU layer sees them
    let m = b.memory_mut(RegionId(0)).unwrap();
    assert!(matches!(m.write(4090, &[1; 10]), Err(FabricError::Bounds(_))));
    assert!(matches!(m.read(4096, &mut [0; 1]), Err(FabricError::Bounds(_))));
    m.write(0, &[7; 8]).unwrap();
    let mut head = [0u8; 8];
    m.read(0, &mut head).unwrap();
    assert_eq!(head, [7; 8]);
}

/// Debian's libfabric is built without CUDA: registering memory as
/// FI_HMEM_CUDA is refused (FI_ENOSYS), and the error says which interface
/// this libfabric lacks and how to get one that has it.
#[test]
fn a_libfabric_without_the_gpu_interface_is_named() {
    fabdiag_fabric::load().expect("libfabric must be installed (scripts/install-deps.sh)");
    let list = discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::RmaWriteHmem),
    })
    .unwrap();
    let claim = Memory::Device(Box::new(HostAsDevice {
        buf: HostBuffer::new(4096, None, 0).unwrap(),
        iface: HmemIface::Cuda,
        settle: Duration::ZERO,
    }));
    match Endpoint::open(&list, 0, vec![claim]) {
        Ok(_) => fabdiag_testkit::skipped("this libfabric registers FI_HMEM_CUDA memory"),
        Err(e) => {
            assert!(matches!(e, FabricError::NoGpu(_)), "{e:?}");
            assert!(e.is_unavailable());
            let m = e.to_string();
            assert!(
                m.contains("cannot register FI_HMEM_CUDA memory") && m.contains("FABDIAG_LIBFABRIC"),
                "{m}"
            );
        }
    }
}
