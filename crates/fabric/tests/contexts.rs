//! Contexts lent per operation, as providers with FI_CONTEXT (psm2, psm3,
//! opx) require, on the providers this machine has (which do not ask for
//! them): each completion must give back the tag its operation was posted
//! with, and the slots must bound what is in flight.

use fabdiag_fabric::{
    discover, Capability, Completion, Endpoint, HostBuffer, Memory, OpFlags, Posted, Query, RegionId,
};
use std::time::{Duration, Instant};

fn buffers(fill: u8) -> Vec<Memory> {
    vec![Memory::Host(HostBuffer::new(4096, None, fill).unwrap())]
}

/// Polls `a` (and `b`, for providers whose progress needs both ends) until
/// `a` reads one completion.
fn next_completion(a: &mut Endpoint, b: &mut Endpoint) -> Completion {
    let mut got = vec![Completion::default(); 1];
    let mut other = vec![Completion::default(); 8];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if a.poll(&mut got).unwrap() == 1 {
            return got[0];
        }
        b.poll(&mut other).unwrap();
        assert!(Instant::now() < deadline, "no completion in 10 s");
    }
}

/// Drives both ends once, while an operation waits to be accepted (no
/// completion is due yet, so none is lost).
fn progress(a: &mut Endpoint, b: &mut Endpoint) {
    let mut c = [Completion::default(); 8];
    a.poll(&mut c).unwrap();
    b.poll(&mut c).unwrap();
}

#[test]
fn one_transmit_slot_holds_back_the_next_write_until_the_first_completes() {
    for prov in ["shm", "tcp"] {
        let list = discover(&Query {
            provider: Some(prov.into()),
            domain: None,
            capability: Some(Capability::RmaWrite),
        })
        .unwrap();
        let mut a = Endpoint::open_lending_contexts(&list, 0, buffers(0xA5), 1).unwrap();
        let mut b = Endpoint::open(&list, 0, buffers(0)).unwrap();
        let peer = a.insert_peer(&b.name().unwrap()).unwrap();
        let target = b.remote_region(RegionId(0)).unwrap();
        let write = |a: &mut Endpoint, tag| a.write(RegionId(0), 0, 64, peer, &target, 0, OpFlags::default(), tag);
        // the provider may answer EAGAIN while it connects (shm maps the
        // peer): that gives the slot back, so retrying must succeed
        let deadline = Instant::now() + Duration::from_secs(10);
        while write(&mut a, 41).unwrap() == Posted::Busy {
            progress(&mut a, &mut b);
            assert!(Instant::now() < deadline, "{prov}: the first write was never accepted");
        }
        // its completion is not read yet, so its slot is still lent
        assert_eq!(write(&mut a, 42).unwrap(), Posted::Busy, "{prov}");
        assert_eq!(next_completion(&mut a, &mut b).context, 41, "{prov}");
        assert_eq!(write(&mut a, 42).unwrap(), Posted::Queued, "{prov}");
        assert_eq!(next_completion(&mut a, &mut b).context, 42, "{prov}");
        assert!(
            b.region(RegionId(0)).unwrap()[..64].iter().all(|&x| x == 0xA5),
            "{prov}"
        );
    }
}

#[test]
fn a_send_and_its_receive_each_complete_with_their_own_tag() {
    for prov in ["shm", "tcp"] {
        let list = discover(&Query {
            provider: Some(prov.into()),
            domain: None,
            capability: Some(Capability::Msg),
        })
        .unwrap();
        let mut a = Endpoint::open_lending_contexts(&list, 0, buffers(0x5A), 2).unwrap();
        let mut b = Endpoint::open_lending_contexts(&list, 0, buffers(0), 2).unwrap();
        let peer = a.insert_peer(&b.name().unwrap()).unwrap();
        for (i, tag) in [(0u64, 7u64), (1, 8)] {
            assert_eq!(
                b.recv(RegionId(0), i * 128, 128, tag).unwrap(),
                Posted::Queued,
                "{prov}"
            );
        }
        // both receive slots are lent: a third receive waits
        assert_eq!(b.recv(RegionId(0), 256, 128, 9).unwrap(), Posted::Busy, "{prov}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while a.send(RegionId(0), 0, 100, peer, OpFlags::default(), 1234).unwrap() == Posted::Busy {
            progress(&mut a, &mut b);
            assert!(Instant::now() < deadline, "{prov}: the send was never accepted");
        }
        let sent = next_completion(&mut a, &mut b);
        assert_eq!((sent.context, sent.is_recv), (1234, false), "{prov}");
        let got = next_completion(&mut b, &mut a);
        assert_eq!((got.context, got.is_recv, got.len), (7, true, 100), "{prov}");
        assert!(
            b.region(RegionId(0)).unwrap()[..100].iter().all(|&x| x == 0x5A),
            "{prov}"
        );
        // its slot is free again
        assert_eq!(b.recv(RegionId(0), 256, 128, 9).unwrap(), Posted::Queued, "{prov}");
    }
}
