//! Golden test: the atomic_bw renderer reproduces the seed document's
//! server and client outputs (001_*, cxi_atomic_bw) byte for byte.

use fabdiag_engine::{Measure, SizeResult};
use fabdiag_report::amo_text::{banner, bw_footer, bw_row};
use fabdiag_report::legacy::listening;
use fabdiag_report::{AmoRun, Role, TestMode};

fn run(role: Role) -> AmoRun {
    let (local, remote) = match role {
        Role::Server => ("NIC 0x12 PID 0 VNI 10", "NIC 0x13 PID 0"),
        Role::Client => ("NIC 0x13 PID 0 VNI 10", "NIC 0x12 PID 0"),
    };
    AmoRun {
        tool: "atomic_bw".into(),
        role,
        provider: "cxi".into(),
        device: "cxi0".into(),
        service_id: 1,
        mode: TestMode::Duration { duration_s: 2 },
        atomic_op: "NON-FETCHING CSWAP EQ".into(),
        op: "CSWAP".into(),
        cswap_op: Some("EQ".into()),
        atomic_type: "UINT128".into(),
        size_bytes: 16,
        fetching: false,
        libfabric_op: "FI_CSWAP".into(),
        libfabric_call: "fi_compare_atomic".into(),
        list_size: Some(4096),
        bidirectional: Some(true),
        warmup_iterations: None,
        gap_us: None,
        hrp: Some("Enabled".into()),
        idc: "Enabled".into(),
        matching: "Disabled".into(),
        restricted: "Enabled".into(),
        ll: None,
        report_all: None,
        local_address: local.into(),
        remote_address: remote.into(),
        clock: None,
        cycles_mhz: None,
        delivery_complete: true,
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn row(ops: u64) -> SizeResult {
    SizeResult {
        size: 16,
        iterations: ops / 4096,
        own: Measure {
            elapsed_ns: 2_000_000_000,
            ops,
        },
        peer: Measure::default(),
        initiated: true,
        bw_mb_s: 1081.16,
        pkt_rate_mpkt_s: 67.572741,
    }
}

#[test]
fn atomic_bw_matches_seed() {
    for (role, ops, file) in [
        (Role::Server, 67584000, "seed_atomic_server.txt"),
        (Role::Client, 67575808, "seed_atomic_client.txt"),
    ] {
        let r = run(role);
        let mut text = String::new();
        if role == Role::Server {
            text = format!("{}\n", listening(42000));
        }
        text.push_str(&banner(&r));
        text.push_str(&bw_row(&row(ops)));
        text.push_str(&bw_footer(&r));
        assert_eq!(text, golden(file), "{file}");
    }
}
