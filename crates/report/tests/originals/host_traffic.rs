//! Golden tests against gc-hosttraffictest's reference document (004_*):
//! its text lines and JSON values are reproduced from the same inputs.
// The durations are the reference's own 17-digit strings, kept verbatim.
#![allow(clippy::excessive_precision)]

use fabdiag_report::host_traffic::{document, g17, sequence_line, text_line, threshold_failures};

use fabdiag_model::units::gbps;

use fabdiag_model::host_traffic::{Dir, TrafficResult, TrafficTest};

fn r(host: Option<Dir>, tile: Option<Dir>, secs: f64, hb: u64, tb: u64) -> TrafficResult {
    TrafficResult {
        test: TrafficTest { host, tile },
        duration_s: secs,
        host_duration_s: None,
        host_bytes: hb,
        tile_bytes: tb,
        error: None,
    }
}

#[test]
fn json_values_match_the_reference_exactly() {
    // the document's first test: bytes and duration in, speeds out
    let t = r(
        Some(Dir::Read),
        Some(Dir::Write),
        3.4895363750000001,
        10234101760,
        13107200000,
    );
    let doc = document(&[("iterations", "100000".into())], &[vec![t]], None);
    let x = &doc["repeat_0"]["host_from_buffer_from_tile"];
    assert_eq!(x["description"], "host <- buffer <- tile");
    assert_eq!(x["duration_seconds"], "3.4895363750000001");
    assert_eq!(x["host_data_transferred_bytes"], "10234101760");
    assert_eq!(x["tile_data_transferred_bytes"], "13107200000");
    assert_eq!(x["host_transfer_speed_gbps"], "23.462375880807375");
    assert_eq!(x["tile_transfer_speed_gbps"], "30.049149437509445");
    assert_eq!(doc["configuration"]["iterations"], "100000");
    // the other three
    assert_eq!(g17(gbps(28034727936, 3.970404303)), "56.487401879586365");
    assert_eq!(g17(gbps(11576279040, 4.2574377639999996)), "21.752574542156008");
    assert_eq!(g17(gbps(19612565504, 3.8982566639999998)), "40.248895225642841");
    assert_eq!(g17(4.2574377639999996), "4.2574377639999996");
    let keys: Vec<String> = TrafficTest::SIMULTANEOUS.iter().map(|t| t.key()).collect();
    assert_eq!(
        keys,
        [
            "host_from_buffer_from_tile",
            "host_to_buffer_to_tile",
            "host_to_buffer_from_tile",
            "host_from_buffer_to_tile"
        ]
    );
}

#[test]
fn text_lines_match_the_reference() {
    // speeds are what the printed figures need: bytes = Gbps × s × 10^9 / 8
    let b = |gbps: f64, s: f64| (gbps * s * 1e9 / 8.0).round() as u64;
    let mut out = sequence_line(1, 1);
    out += &text_line(&r(
        Some(Dir::Read),
        Some(Dir::Write),
        3.50,
        b(23.46, 3.50),
        b(30.00, 3.50),
    ));
    out += &text_line(&r(
        Some(Dir::Write),
        Some(Dir::Read),
        3.97,
        b(55.78, 3.97),
        b(26.40, 3.97),
    ));
    out += &text_line(&r(
        Some(Dir::Write),
        Some(Dir::Write),
        4.26,
        b(21.75, 4.26),
        b(24.63, 4.26),
    ));
    out += &text_line(&r(
        Some(Dir::Read),
        Some(Dir::Read),
        3.89,
        b(40.38, 3.89),
        b(26.97, 3.89),
    ));
    assert_eq!(
        out,
        "Running test sequence 1/1
host <- buffer <- tile:  23.46 Gbps RDMA host read, 30.00 Gbps tile write, for 3.50 seconds.
host -> buffer -> tile:  55.78 Gbps RDMA host write, 26.40 Gbps tile read, for 3.97 seconds.
host -> buffer <- tile:  21.75 Gbps RDMA host write, 24.63 Gbps tile write, for 4.26 seconds.
host <- buffer -> tile:  40.38 Gbps RDMA host read, 26.97 Gbps tile read, for 3.89 seconds.
"
    );
    let tile = text_line(&r(None, Some(Dir::Write), 2.80, 0, b(37.38, 2.80)))
        + &text_line(&r(None, Some(Dir::Read), 2.02, 0, b(51.92, 2.02)));
    assert_eq!(tile, "buffer <- tile:  37.38 Gbps tile write, for 2.80 seconds.\nbuffer -> tile:  51.92 Gbps tile read, for 2.02 seconds.\n");
    let host = text_line(&r(Some(Dir::Write), None, 5.01, b(90.72, 5.01), 0))
        + &text_line(&r(Some(Dir::Read), None, 5.00, b(74.85, 5.00), 0));
    assert_eq!(host, "host -> buffer:  90.72 Gbps RDMA host write, for 5.01 seconds.\nhost <- buffer:  74.85 Gbps RDMA host read, for 5.00 seconds.\n");
}

#[test]
fn errors_and_statistics() {
    let mut bad = r(Some(Dir::Read), Some(Dir::Write), 0.0, 0, 0);
    bad.error = Some("data check failed".into());
    let doc = document(
        &[],
        &[vec![bad.clone()]],
        Some("host <- buffer <- tile: data check failed"),
    );
    assert_eq!(
        doc["repeat_0"]["host_from_buffer_from_tile"]["error"],
        "data check failed"
    );
    assert_eq!(doc["error"], "host <- buffer <- tile: data check failed");
    assert!(text_line(&bad).contains("failed: data check failed"));
    let reps: Vec<Vec<TrafficResult>> = [10.0, 20.0, 30.0]
        .iter()
        .map(|s| vec![r(Some(Dir::Write), None, 1.0, (*s * 1e9 / 8.0) as u64, 0)])
        .collect();
    let doc = document(&[], &reps, None);
    let st = &doc["statistics"]["host_to_buffer"]["host_transfer_speed_gbps"];
    assert_eq!(
        (st["median"].as_str(), st["min"].as_str(), st["max"].as_str()),
        (Some("20"), Some("10"), Some("30"))
    );
    assert!(st["coefficient_of_variation"]
        .as_str()
        .unwrap()
        .starts_with("0.408248290463863"));
    assert!(doc["repeat_2"].is_object());
}

#[test]
fn thresholds_name_the_test_and_figure() {
    let rs = [
        r(Some(Dir::Read), Some(Dir::Write), 1.0, 5_000_000_000, 1_000_000_000),
        r(Some(Dir::Write), None, 1.0, 10_000_000_000, 0),
    ];
    assert!(threshold_failures(&rs, 0.0, 0.0).is_empty(), "0 means no threshold");
    assert_eq!(
        threshold_failures(&rs, 10.0, 50.0),
        vec![
            "host <- buffer <- tile: tile 8.00 Gbps is below --min-tile-bandwidth 10",
            "host <- buffer <- tile: host 40.00 Gbps is below --min-host-bandwidth 50",
        ]
    );
    assert_eq!(threshold_failures(&rs, 8.0, 40.0), Vec::<String>::new(), "equal passes");
}

/// A simultaneous test's host figure is over the host's own span when the
/// run knows it; the JSON then says which span (fabdiag's addition), and
/// the original's keys keep their meaning.
#[test]
fn the_host_figure_uses_its_own_span() {
    let mut t = r(Some(Dir::Read), Some(Dir::Write), 4.0, 10_000_000_000, 20_000_000_000);
    assert_eq!(t.host_gbps(), 20.0);
    t.host_duration_s = Some(2.0);
    assert_eq!((t.host_gbps(), t.tile_gbps()), (40.0, 40.0));
    let j = fabdiag_report::host_traffic::test_json(&t);
    assert_eq!(j["host_duration_seconds"], "2");
    assert_eq!(j["duration_seconds"], "4");
    assert_eq!(j["host_transfer_speed_gbps"], "40");
    // tile-only tests have no host span to report
    let t = r(None, Some(Dir::Read), 1.0, 0, 8);
    assert!(fabdiag_report::host_traffic::test_json(&t)
        .get("host_duration_seconds")
        .is_none());
}
