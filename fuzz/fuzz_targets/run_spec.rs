//! The run parameters a server accepts from a client (fabdiag-model's
//! TestSpec, from the Config message's JSON): decoding and validating any
//! JSON never panics, and a spec that is accepted goes back on the wire
//! and decodes to the same spec.
#![no_main]
use fabdiag_model::TestSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(spec) = TestSpec::from_wire(v) {
        let _ = spec.validate();
        let wire = spec.to_wire().expect("an accepted spec encodes");
        assert_eq!(TestSpec::from_wire(wire).expect("what was encoded decodes"), spec);
    }
});
