//! The control connection's frame reader (fabdiag-proto), fed any bytes as
//! a peer or a stranger on the port sends them: it never panics, never
//! hands back a payload over MAX_FRAME, and every frame it reads is written
//! back to the same bytes. The lobby's judgment of the same bytes as a
//! connection's opening never panics, and a hello it finds is the first
//! message past the heartbeats that reading the frames gives.
#![no_main]
use fabdiag_proto::{opening, read_frame, write_frame, Message, Opening, MAX_FRAME};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    let mut used = 0;
    while let Ok(Some(p)) = read_frame(&mut r) {
        assert!(p.len() <= MAX_FRAME as usize);
        let mut again = Vec::new();
        write_frame(&mut again, &p).expect("a frame read is a frame written");
        assert_eq!(&again[..], &data[used..used + 4 + p.len()]);
        used += 4 + p.len();
    }
    if let Opening::Hello(h) = opening(data) {
        let mut r = data;
        let first = std::iter::from_fn(|| read_frame(&mut r).ok().flatten())
            .map(|p| serde_json::from_slice::<Message>(&p).expect("a hello's frames decode"))
            .find(|m| *m != Message::Heartbeat);
        assert_eq!(first, Some(Message::Hello(h)));
    }
});
