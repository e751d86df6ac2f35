//! The sweep's wire between the ranks and rank 0 (fabdiag-sweep's
//! protocol: frames of JSON), fed any bytes as either end might receive
//! them: neither decoder panics, and a message accepted round-trips.
#![no_main]
use fabdiag_sweep::protocol::{ToCoordinator, ToRank};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    while let Ok(Some(p)) = fabdiag_proto::read_frame(&mut r) {
        if let Ok(m) = serde_json::from_slice::<ToCoordinator>(&p) {
            let b = serde_json::to_vec(&m).expect("encodes");
            assert_eq!(serde_json::from_slice::<ToCoordinator>(&b).expect("decodes"), m);
        }
        if let Ok(m) = serde_json::from_slice::<ToRank>(&p) {
            let b = serde_json::to_vec(&m).expect("encodes");
            assert_eq!(serde_json::from_slice::<ToRank>(&b).expect("decodes"), m);
        }
    }
});
