//! A shared-memory region left behind by a killed process that had this
//! PID must not stop this process from opening shm (libfabric 1.17 would
//! fail with EBUSY): loading the library clears exactly those regions.
//! Its own test binary, so the library is loaded here first.

use fabdiag_fabric::{discover, Capability, Endpoint, HostBuffer, Memory, Query};

#[test]
fn a_region_left_by_an_earlier_process_with_this_pid_is_cleared() {
    let pid = std::process::id();
    let shm = std::path::Path::new("/dev/shm");
    // what the shm provider names this process's first endpoint, as a dead
    // process with the same PID would have left it; and two names that are
    // not this process's and must survive (another user's among them)
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let stale = shm.join(format!("{pid}:{uid}:0"));
    let keep = [
        shm.join(format!("{pid}x:{uid}:0")),
        shm.join(format!("{pid}:notours")),
        shm.join(format!("{pid}:{}:0", uid + 1)),
    ];
    std::fs::write(&stale, b"stale").unwrap();
    for k in &keep {
        std::fs::write(k, b"keep").unwrap();
    }
    fabdiag_fabric::load().expect("libfabric");
    assert!(!stale.exists(), "the stale region is still there");
    for k in &keep {
        assert!(k.exists(), "{} was removed", k.display());
        let _ = std::fs::remove_file(k);
    }
    let list = discover(&Query {
        provider: Some("shm".into()),
        domain: None,
        capability: Some(Capability::Msg),
    })
    .unwrap();
    let ep = Endpoint::open(&list, 0, vec![Memory::Host(HostBuffer::new(4096, None, 0).unwrap())]);
    assert!(ep.is_ok(), "{:?}", ep.err());
}
