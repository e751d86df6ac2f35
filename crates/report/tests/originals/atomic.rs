//! Golden test: the atomic_bw renderer reproduces the original document's
//! server and client outputs (001_*, cxi_atomic_bw) byte for byte.

use fabdiag_engine::{Measure, SizeResult};
use fabdiag_model::{AmoRun, PollMode, Role, TestMode};
use fabdiag_report::amo_text::{banner, bw_footer, bw_row};
use fabdiag_report::legacy::listening;

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
        clock_reads: None,
        delivery_complete: true,
        poll: PollMode::Spin,
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
fn atomic_bw_matches_the_original() {
    for (role, ops, file) in [
        (Role::Server, 67584000, "original_atomic_server.txt"),
        (Role::Client, 67575808, "original_atomic_client.txt"),
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

/// atomic_lat has no output in the original documents: its layout is the original's latency layout
/// (002_*) with `Ops`/`OpNum` and the banner of originals §3.8, written out here
/// by hand; the statistics row is derived from the samples by the engine.
#[test]
fn atomic_lat_report_all_layout() {
    use fabdiag_engine::lat::Recorder;
    use fabdiag_engine::LatResult;
    use fabdiag_report::lat_text::{client_footer, size_block, table_start};
    let mut r = run(Role::Client);
    r.tool = "atomic_lat".into();
    r.mode = TestMode::Iterations { iterations: 3 };
    r.atomic_op = "FETCHING SUM ".into();
    r.atomic_type = "UINT32".into();
    r.list_size = None;
    r.bidirectional = None;
    r.hrp = None;
    r.warmup_iterations = Some(10);
    r.gap_us = Some(1000);
    r.idc = "Disabled - Not Applicable".into();
    r.matching = "Disabled - Not Applicable".into();
    r.restricted = "Disabled - Not Applicable".into();
    r.ll = Some("Disabled - Not Applicable".into());
    r.report_all = Some(true);
    let mut rec = Recorder::new(true);
    for ns in [612, 741, 640] {
        rec.add(ns);
    }
    let res = LatResult {
        size: 4,
        iterations: 3,
        warmup: 10,
        peer_ops: 13,
        stats: rec.stats(),
        samples: rec.samples().map(<[u64]>::to_vec),
    };
    let t = fabdiag_report::amo_text::table_of(&r);
    let text = banner(&r)
        + &table_start(&t)
        + &size_block(&t, &res, true)
        + &client_footer(&t, std::slice::from_ref(&res), false);
    let sep = "-".repeat(70);
    let want = format!(
        "{sep}
    CXI Atomic Memory Operation Latency Test
Device           : cxi0
Service ID       : 1
Test Type        : Iteration
Iterations       : 3
Warmup Iters     : 10
Inter-Iter Gap   : 1000 microseconds
Atomic Op        : FETCHING SUM 
Atomic Type      : UINT32
IDC              : Disabled - Not Applicable
Matching LEs     : Disabled - Not Applicable
Restricted       : Disabled - Not Applicable
LL Cmd Launch    : Disabled - Not Applicable
Results Reported : All
Local (client)   : NIC 0x13 PID 0 VNI 10
Remote (server)  : NIC 0x12 PID 0
{sep}
     OpNum  Latency[us]
         0        0.612
         1        0.741
         2        0.640
{sep}
     Bytes         Ops     Min[us]     Max[us]    Mean[us]  StdDev[us]
         4           3        0.61        0.74        0.66        0.05
{sep}
"
    );
    assert_eq!(text, want);
}
