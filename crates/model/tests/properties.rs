//! Properties of the run spec a server accepts from a client, over
//! generated input (proptest, every CI run): whatever JSON arrives,
//! decoding and validating it never panics, and a spec decoded from a
//! client's encoding is the spec the client sent.

use fabdiag_model::{TestSpec, Tool};
use proptest::prelude::*;

fn tool() -> impl Strategy<Value = Tool> {
    let all: Vec<Tool> = Tool::all().collect();
    (0..all.len()).prop_map(move |i| all[i])
}

proptest! {
    #[test]
    fn a_clients_spec_decodes_as_sent(t in tool(), iterations in any::<u64>(), min in any::<u64>(), max in any::<u64>(), list in any::<u64>(), warmup in any::<u64>()) {
        let mut spec = TestSpec::new(t);
        spec.iterations = iterations;
        spec.min_size = min;
        spec.max_size = max;
        spec.list_size = list;
        spec.warmup = warmup;
        let back = TestSpec::from_wire(spec.to_wire().unwrap()).unwrap();
        prop_assert_eq!(&back, &spec);
        // validation says yes or no, and never panics
        let _ = back.validate();
    }

    #[test]
    fn no_json_panics_the_spec_decoder(key in "[a-z_]{1,16}", n in any::<i64>(), s in ".*", b in any::<bool>()) {
        for v in [serde_json::json!(n), serde_json::json!(s), serde_json::json!(b), serde_json::json!(null), serde_json::json!([n])] {
            let mut spec = TestSpec::new(Tool::WriteBw).to_wire().unwrap();
            spec[key.as_str()] = v;
            if let Ok(t) = TestSpec::from_wire(spec) {
                let _ = t.validate();
            }
        }
    }
}
