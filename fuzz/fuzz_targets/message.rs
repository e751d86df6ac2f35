//! The control protocol's message decoder (fabdiag-proto's Message, JSON
//! in a frame), fed any payload: it never panics, and a message it accepts
//! is encoded and decoded again to the same message.
#![no_main]
use fabdiag_proto::Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = serde_json::from_slice::<Message>(data) {
        let bytes = serde_json::to_vec(&m).expect("an accepted message encodes");
        let back: Message = serde_json::from_slice(&bytes).expect("what was encoded decodes");
        assert_eq!(back, m);
    }
});
