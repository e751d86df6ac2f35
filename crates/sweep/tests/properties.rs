//! Properties of the sweep's wire between ranks and rank 0, over
//! generated input (proptest, every CI run): each message round-trips
//! through its JSON, and no payload makes the decoder panic (a stranger
//! or a broken rank on the coordinator's port is an error, never a crash).

use fabdiag_model::counters::{Change, Class, Family, Noted};
use fabdiag_sweep::protocol::{FlowOrder, PairRole, SideOutcome, ToCoordinator, ToRank};
use proptest::prelude::*;

fn finite() -> impl Strategy<Value = f64> {
    // JSON has no NaN or infinity; the ranks never send them
    -1e12f64..1e12
}

fn to_coordinator() -> impl Strategy<Value = ToCoordinator> {
    prop_oneof![
        (
            any::<u32>(),
            ".*",
            any::<usize>(),
            any::<usize>(),
            ".*",
            proptest::option::of(".*"),
            proptest::option::of(".*"),
            any::<u16>(),
            proptest::option::of(".*"),
            proptest::option::of("[0-9a-f]{64}"),
            any::<bool>(),
            proptest::option::of((".*", any::<bool>()))
        )
            .prop_map(
                |(protocol, version, rank, size, host, device, gpu, pair_port, unable, nonce, munge, lldp)| {
                    ToCoordinator::Join {
                        protocol,
                        version,
                        rank,
                        size,
                        host,
                        device,
                        gpu,
                        pair_port,
                        unable,
                        nonce,
                        auth_method: if munge {
                            fabdiag_proto::auth::Method::Munge
                        } else {
                            fabdiag_proto::auth::Method::Key
                        },
                        lldp: lldp.map(|(text, ok)| if ok { Ok(text) } else { Err(text) }),
                    }
                }
            ),
        (
            any::<u64>(),
            proptest::option::of(finite()),
            proptest::option::of(".*"),
            finite(),
            finite(),
            any::<u64>(),
            finite(),
            proptest::option::of(".*"),
            proptest::collection::vec((".*", ".*", any::<u64>()), 0..3)
        )
            .prop_map(
                |(step, value, error, elapsed_s, measure_s, opens, open_s, counters_read, noted)| ToCoordinator::Done {
                    step,
                    outcome: SideOutcome {
                        value,
                        rows: Vec::new(),
                        error,
                        elapsed_s,
                        measure_s,
                        opens,
                        open_s,
                        counters_read,
                        noted: noted
                            .into_iter()
                            .map(|(device, name, by)| Noted {
                                family: Family::Netdev,
                                device,
                                name,
                                class: Class::Retransmit,
                                fault: true,
                                change: Change::Rose { by },
                            })
                            .collect(),
                        lat: None,
                    },
                }
            ),
        (
            any::<u64>(),
            proptest::collection::vec((proptest::option::of(finite()), proptest::option::of(".*")), 0..4)
        )
            .prop_map(|(step, outcomes)| ToCoordinator::FlowsDone {
                step,
                outcomes: outcomes
                    .into_iter()
                    .map(|(value, error)| SideOutcome {
                        value,
                        error,
                        ..SideOutcome::default()
                    })
                    .collect(),
            }),
        (proptest::option::of(any::<u64>()), ".*").prop_map(|(step, reason)| ToCoordinator::Leave { step, reason }),
        ".*".prop_map(|mac| ToCoordinator::Proof { mac }),
    ]
}

fn to_rank() -> impl Strategy<Value = ToRank> {
    prop_oneof![
        ".*".prop_map(|reason| ToRank::Refused { reason }),
        (".*", ".*").prop_map(|(nonce, mac)| ToRank::Challenge { nonce, mac }),
        (any::<u64>(), any::<bool>(), any::<usize>(), ".*").prop_map(|(step, client, peer, peer_addr)| ToRank::Pair {
            step,
            role: if client { PairRole::Client } else { PairRole::Server },
            peer,
            peer_addr,
        }),
        (
            any::<u64>(),
            proptest::collection::vec((any::<bool>(), any::<usize>(), ".*", any::<bool>()), 0..4),
            any::<u64>()
        )
            .prop_map(|(step, flows, start_in_ms)| ToRank::Flows {
                step,
                flows: flows
                    .into_iter()
                    .map(|(client, peer, peer_addr, victim)| FlowOrder {
                        role: if client { PairRole::Client } else { PairRole::Server },
                        peer,
                        peer_addr,
                        victim,
                    })
                    .collect(),
                start_in_ms,
            }),
        any::<u64>().prop_map(|step| ToRank::Idle { step }),
        Just(ToRank::Finish),
    ]
}

proptest! {
    #[test]
    fn rank_messages_round_trip(m in to_coordinator()) {
        let back: ToCoordinator = serde_json::from_slice(&serde_json::to_vec(&m).unwrap()).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn coordinator_messages_round_trip(m in to_rank()) {
        let back: ToRank = serde_json::from_slice(&serde_json::to_vec(&m).unwrap()).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn no_payload_panics_either_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = serde_json::from_slice::<ToCoordinator>(&bytes);
        let _ = serde_json::from_slice::<ToRank>(&bytes);
    }
}
