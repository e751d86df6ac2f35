//! Golden tests: the latency renderer, fed the parameters and statistics of
//! the original document 002_* (cxi_send_lat), reproduces its four outputs byte
//! for byte; the statistics of the report-all example are recomputed from
//! its samples by the engine, so the row is not copied but derived.

use fabdiag_engine::lat::Recorder;
use fabdiag_engine::{LatResult, LatStats};
use fabdiag_model::{Hugepages, LatRun, LatTool, PollMode, Role, SideMem, TestMode};
use fabdiag_report::lat_text::{banner, client_footer, server_tail, size_block, table_of, table_start};
use fabdiag_report::legacy::listening;

fn run(role: Role, iters: u64, min: u64, max: u64, report_all: bool) -> LatRun {
    let (local, remote) = match role {
        Role::Server => ("NIC 0x12 PID 0 VNI 10", "NIC 0x13 PID 0"),
        Role::Client => ("NIC 0x13 PID 0 VNI 10", "NIC 0x12 PID 0"),
    };
    LatRun {
        tool: LatTool::SendLat,
        role,
        provider: "cxi".into(),
        device: "cxi0".into(),
        service_id: 1,
        mode: TestMode::Iterations { iterations: iters },
        warmup_iterations: 10,
        gap_us: 1000,
        min_size_bytes: min,
        max_size_bytes: max,
        idc: Some("Enabled".into()),
        ll: "Enabled".into(),
        report_all,
        hugepages: Hugepages::Disabled,
        local_address: local.into(),
        remote_address: remote.into(),
        clock: "clock_gettime".into(),
        cycles_mhz: None,
        clock_reads: "clock_gettime".into(),
        delivery_complete: true,
        poll: PollMode::Spin,
        client_mem: SideMem::system(),
        server_mem: SideMem::system(),
        gpus_found: None,
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn result(size: u64, count: u64, min: u64, max: u64, mean: u64, sd: u64) -> LatResult {
    LatResult {
        size,
        iterations: count,
        warmup: 10,
        peer_ops: count + 10,
        stats: LatStats {
            count,
            min_ns: min,
            max_ns: max,
            mean_ns: mean,
            stddev_ns: sd,
            p50_ns: 0,
            p90_ns: 0,
            p99_ns: 0,
            p999_ns: 0,
            percentiles_exact: true,
            histogram: vec![],
        },
        samples: None,
    }
}

fn client(run: &LatRun, results: &[LatResult]) -> String {
    let t = table_of(run);
    let mut o = banner(run);
    o.push_str(&table_start(&t));
    for (i, r) in results.iter().enumerate() {
        o.push_str(&size_block(&t, r, i == 0));
    }
    o.push_str(&client_footer(&t, results, false));
    o
}

fn server(run: &LatRun) -> String {
    format!("{}\n{}{}", listening(49194), banner(run), server_tail(&table_of(run)))
}

#[test]
fn range_summary_matches_the_original() {
    // the original's rows, in ns (the renderer truncates to 2 decimals)
    let rows = [
        (1, 1600, 4320, 1650, 270),
        (2, 1600, 1760, 1620, 50),
        (4, 1600, 1750, 1620, 50),
        (8, 1600, 2650, 1640, 130),
        (16, 1600, 1760, 1620, 50),
        (32, 1610, 1800, 1620, 50),
        (64, 1610, 1760, 1630, 40),
        (128, 2200, 2360, 2220, 60),
        (256, 2260, 2430, 2280, 60),
        (512, 2310, 4000, 2350, 170),
        (1024, 2410, 2580, 2430, 40),
    ];
    let results: Vec<LatResult> = rows.iter().map(|&(s, a, b, c, d)| result(s, 100, a, b, c, d)).collect();
    assert_eq!(
        client(&run(Role::Client, 100, 1, 1024, false), &results),
        golden("original_sendlat_range_client.txt")
    );
    // one "See client for results." even for a range (the original; the newer
    // upstream code printed one per size)
    assert_eq!(
        server(&run(Role::Server, 100, 1, 1024, false)),
        golden("original_sendlat_range_server.txt")
    );
}

#[test]
fn report_all_matches_the_original_with_derived_statistics() {
    let mut rec = Recorder::new(true);
    for ns in [1688, 1898, 1688, 1693, 1683] {
        rec.add(ns);
    }
    let r = LatResult {
        size: 8,
        iterations: 5,
        warmup: 10,
        peer_ops: 15,
        stats: rec.stats(),
        samples: rec.samples().map(<[u64]>::to_vec),
    };
    assert_eq!(
        client(&run(Role::Client, 5, 8, 8, true), &[r]),
        golden("original_sendlat_all_client.txt")
    );
    assert_eq!(
        server(&run(Role::Server, 5, 8, 8, true)),
        golden("original_sendlat_all_server.txt")
    );
}

#[test]
fn report_all_over_a_range_and_percentiles() {
    let mut r1 = result(1, 2, 1000, 2000, 1500, 500);
    r1.samples = Some(vec![1000, 2000]);
    r1.stats.p50_ns = 1000;
    let mut r2 = result(2, 1, 12345678, 12345678, 12345678, 0);
    r2.samples = Some(vec![12345678]);
    let mut run = run(Role::Client, 2, 1, 2, true);
    run.tool = LatTool::WriteLat;
    let mut text = client(&run, &[r1.clone(), r2.clone()]);
    text = text[text.find("Remote (server)").unwrap()..].to_string();
    let sep = "-".repeat(70);
    let want = format!(
        "Remote (server)  : NIC 0x12 PID 0\n{sep}\n  WriteNum  Latency[us]\n         0        1.000\n         1        2.000\n{sep}\n     Bytes      Writes     Min[us]     Max[us]    Mean[us]  StdDev[us]\n         1           2        1.00        2.00        1.50        0.50\n{sep}\n  WriteNum  Latency[us]\n         0    12345.678\n{sep}\n     Bytes      Writes     Min[us]     Max[us]    Mean[us]  StdDev[us]\n         2           1    12345.67    12345.67    12345.67        0.00\n{sep}\n"
    );
    assert_eq!(text, want);
    let p = client_footer(&table_of(&run), &[r1], true);
    assert_eq!(p, format!("{sep}\n     Bytes     p50[us]     p90[us]     p99[us]   p99.9[us]\n         1        1.00        0.00        0.00        0.00\n{sep}\n"));
}
