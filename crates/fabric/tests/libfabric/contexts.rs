//! Contexts lent per operation, as providers with FI_CONTEXT (psm2, psm3,
//! opx) require, on the providers this machine has (which do not ask for
//! them): each completion must give back the tag its operation was posted
//! with, and the slots must bound what is in flight.

use fabdiag_fabric::{
    discover, Capability, Completion, Endpoint, HostBuffer, InfoList, Memory, OpFlags, Posted, Query, RegionId,
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

/// `prov`'s entries that can do `cap`.
fn entries(prov: &str, cap: Capability) -> InfoList {
    discover(&Query {
        provider: Some(prov.into()),
        domain: None,
        capability: Some(cap),
    })
    .unwrap()
}

/// Posts with `post` until the provider accepts, driving both ends
/// between tries: it may answer EAGAIN while it connects (shm maps the
/// peer), which gives a lent slot back. No completion is due meanwhile,
/// so none is lost.
fn until_accepted(a: &mut Endpoint, b: &mut Endpoint, what: &str, mut post: impl FnMut(&mut Endpoint) -> Posted) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while post(a) == Posted::Busy {
        let mut c = [Completion::default(); 8];
        a.poll(&mut c).unwrap();
        b.poll(&mut c).unwrap();
        assert!(Instant::now() < deadline, "{what} was never accepted");
    }
}

#[test]
fn one_transmit_slot_holds_back_the_next_write_until_the_first_completes() {
    for prov in ["shm", "tcp"] {
        let list = entries(prov, Capability::RmaWrite);
        let mut a = Endpoint::open_lending_contexts(&list, 0, buffers(0xA5), 1).unwrap();
        let mut b = Endpoint::open(&list, 0, buffers(0)).unwrap();
        let peer = a.insert_peer(&b.name().unwrap()).unwrap();
        let target = b.remote_region(RegionId(0)).unwrap();
        let write = |a: &mut Endpoint, tag| a.write(RegionId(0), 0, 64, peer, &target, 0, OpFlags::default(), tag);
        until_accepted(&mut a, &mut b, &format!("{prov}: the first write"), |a| {
            write(a, 41).unwrap()
        });
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
        let list = entries(prov, Capability::Msg);
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
        until_accepted(&mut a, &mut b, &format!("{prov}: the send"), |a| {
            a.send(RegionId(0), 0, 100, peer, OpFlags::default(), 1234).unwrap()
        });
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
