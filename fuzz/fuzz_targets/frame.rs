//! The control connection's frame reader (fabdiag-proto), fed any bytes as
//! a peer or a stranger on the port sends them: it never panics, never
//! hands back a payload over MAX_FRAME, and every frame it reads is written
//! back to the same bytes.
#![no_main]
use fabdiag_proto::{read_frame, write_frame, MAX_FRAME};
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
});
