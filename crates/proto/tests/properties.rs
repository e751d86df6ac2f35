//! Properties of the control protocol's decoders, over generated input
//! (proptest, run on every CI run): frames round-trip; no byte sequence
//! makes the frame reader panic or hand back more than the frame limit;
//! every message round-trips through its JSON; no payload makes the
//! message decoder panic. The coverage-guided search for inputs nobody
//! thought of is the fuzzing campaign's; these hold its properties here.

use fabdiag_proto::{read_frame, write_frame, MAX_FRAME};
use fabdiag_proto::{ErrorClass, Hello, MemoryDesc, Message, Phase, RegionDesc};
use proptest::prelude::*;

fn phase() -> impl Strategy<Value = Phase> {
    prop_oneof![
        Just(Phase::Connect),
        Just(Phase::Hello),
        Just(Phase::Run),
        Just(Phase::Config),
        Just(Phase::Endpoint),
        Just(Phase::Ready),
        Just(Phase::PreRun),
        Just(Phase::PostRun),
        Just(Phase::Results),
        Just(Phase::Teardown),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (".*", any::<u32>(), ".*", ".*", any::<bool>(), any::<bool>()).prop_map(
            |(magic, protocol, tool, version, auth, munge)| {
                Message::Hello(Hello {
                    magic,
                    protocol,
                    tool,
                    version,
                    auth,
                    auth_method: if munge {
                        fabdiag_proto::auth::Method::Munge
                    } else {
                        fabdiag_proto::auth::Method::Key
                    },
                })
            }
        ),
        "[0-9a-f]{0,80}".prop_map(|nonce| Message::Challenge { nonce }),
        (proptest::option::of("[0-9a-f]{0,80}"), ".*").prop_map(|(nonce, mac)| Message::Proof { nonce, mac }),
        (
            ".*",
            ".*",
            proptest::collection::vec(any::<u8>(), 0..64),
            proptest::collection::vec(any::<(u64, u64, u64)>(), 0..4),
            proptest::option::of((
                proptest::option::of(any::<u32>()),
                proptest::option::of(any::<u32>()),
                proptest::option::of(".*")
            )),
        )
            .prop_map(|(provider, domain, address, regions, memory)| Message::Endpoint {
                provider,
                domain,
                address,
                regions: regions
                    .into_iter()
                    .map(|(addr, key, len)| RegionDesc { addr, key, len })
                    .collect(),
                memory: memory.map(|(tx_gpu, rx_gpu, gpu_type)| MemoryDesc {
                    tx_gpu,
                    rx_gpu,
                    gpu_type
                }),
            }),
        (phase(), proptest::option::of(any::<u64>())).prop_map(|(phase, size)| Message::Barrier { phase, size }),
        any::<(u64, u64, u64)>().prop_map(|(size, elapsed_ns, ops)| Message::Results { size, elapsed_ns, ops }),
        Just(Message::Heartbeat),
        (phase(), ".*", any::<bool>()).prop_map(|(phase, message, u)| Message::Error {
            phase,
            message,
            kind: if u {
                ErrorClass::Unavailable
            } else {
                ErrorClass::Runtime
            },
        }),
        any::<i64>().prop_map(|n| Message::Config {
            params: serde_json::json!({ "iterations": n })
        }),
    ]
}

proptest! {
    #[test]
    fn frames_round_trip(payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..2048), 0..8)) {
        let mut wire = Vec::new();
        for p in &payloads {
            write_frame(&mut wire, p).unwrap();
        }
        let mut r = &wire[..];
        for p in &payloads {
            let got = read_frame(&mut r).unwrap();
            prop_assert_eq!(got.as_deref(), Some(&p[..]));
        }
        prop_assert!(read_frame(&mut r).unwrap().is_none());
    }

    #[test]
    fn no_bytes_panic_the_frame_reader_or_pass_the_limit(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let mut r = &bytes[..];
        // read until the input runs out or is refused; each frame within the limit
        for _ in 0..bytes.len() + 1 {
            match read_frame(&mut r) {
                Ok(Some(p)) => prop_assert!(p.len() <= MAX_FRAME as usize),
                Ok(None) | Err(_) => break,
            }
        }
    }

    #[test]
    fn announced_lengths_past_the_limit_are_refused_before_reading(len in (MAX_FRAME + 1)..=u32::MAX) {
        let hdr = len.to_be_bytes();
        let e = read_frame(&mut &hdr[..]).unwrap_err();
        prop_assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    }

    #[test]
    fn messages_round_trip(m in message()) {
        let bytes = serde_json::to_vec(&m).unwrap();
        let back: Message = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn no_payload_panics_the_message_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = serde_json::from_slice::<Message>(&bytes);
    }

    #[test]
    fn no_json_object_panics_the_message_decoder(kind in "[a-z-]{0,12}", field in ".*", n in any::<i64>()) {
        let v = serde_json::json!({ "type": kind, "phase": field, "size": n, "message": field });
        let _ = serde_json::from_value::<Message>(v);
    }
}
