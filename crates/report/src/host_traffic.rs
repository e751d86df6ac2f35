//! gc-hosttraffictest's results and their rendering: the text lines and
//! the JSON of the original (every value a string, a `configuration`
//! object and one `repeat_N` object per repeat, an `error` field on a
//! failed test), plus fabdiag's statistics across repeats. Pure functions.

use fabdiag_model::host_traffic::{Dir, TrafficResult};
use serde_json::{Map, Value};

/// "Running test sequence i/n".
pub fn sequence_line(i: usize, n: usize) -> String {
    format!("Running test sequence {i}/{n}\n")
}

/// One text line, e.g.
/// `host <- buffer <- tile:  23.46 Gbps RDMA host read, 30.00 Gbps tile write, for 3.50 seconds.`
pub fn text_line(r: &TrafficResult) -> String {
    if let Some(e) = &r.error {
        return format!("{}:  failed: {e}\n", r.test.description());
    }
    let mut parts = Vec::new();
    if let Some(h) = r.test.host {
        let what = if h == Dir::Read { "read" } else { "write" };
        parts.push(format!("{:.2} Gbps RDMA host {what}", r.host_gbps()));
    }
    if let Some(t) = r.test.tile {
        let what = if t == Dir::Read { "read" } else { "write" };
        parts.push(format!("{:.2} Gbps tile {what}", r.tile_gbps()));
    }
    format!(
        "{}:  {}, for {:.2} seconds.\n",
        r.test.description(),
        parts.join(", "),
        r.duration_s
    )
}

/// A double as the original's JSON strings show it: 17 significant
/// digits, trailing zeros dropped ("3.4895363750000001").
pub fn g17(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    let prec = (16 - e).max(0) as usize;
    let s = format!("{x:.prec$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The `--min-tile-bandwidth` / `--min-host-bandwidth` verdict: one line
/// per figure that fell short, naming the test and the figure (0 = off).
pub fn threshold_failures(results: &[TrafficResult], min_tile_gbps: f64, min_host_gbps: f64) -> Vec<String> {
    let mut out = Vec::new();
    for r in results.iter().filter(|r| r.error.is_none()) {
        if r.test.tile.is_some() && min_tile_gbps > 0.0 && r.tile_gbps() < min_tile_gbps {
            out.push(format!(
                "{}: tile {:.2} Gbps is below --min-tile-bandwidth {min_tile_gbps}",
                r.test.description(),
                r.tile_gbps()
            ));
        }
        if r.test.host.is_some() && min_host_gbps > 0.0 && r.host_gbps() < min_host_gbps {
            out.push(format!(
                "{}: host {:.2} Gbps is below --min-host-bandwidth {min_host_gbps}",
                r.test.description(),
                r.host_gbps()
            ));
        }
    }
    out
}

/// One test's JSON object, every value a string.
pub fn test_json(r: &TrafficResult) -> Value {
    let mut m = Map::new();
    let s = |v: String| Value::String(v);
    m.insert("description".into(), s(r.test.description()));
    m.insert("duration_seconds".into(), s(g17(r.duration_s)));
    if r.test.host.is_some() {
        m.insert("host_data_transferred_bytes".into(), s(r.host_bytes.to_string()));
    }
    if r.test.tile.is_some() {
        m.insert("tile_data_transferred_bytes".into(), s(r.tile_bytes.to_string()));
    }
    if r.test.host.is_some() {
        m.insert("host_transfer_speed_gbps".into(), s(g17(r.host_gbps())));
    }
    // fabdiag's addition: the span the host figure is over, when its own
    if let (Some(_), Some(h)) = (r.test.host, r.host_duration_s) {
        m.insert("host_duration_seconds".into(), s(g17(h)));
    }
    if r.test.tile.is_some() {
        m.insert("tile_transfer_speed_gbps".into(), s(g17(r.tile_gbps())));
    }
    if let Some(e) = &r.error {
        m.insert("error".into(), s(e.clone()));
    }
    Value::Object(m)
}

/// Median, min, max and coefficient of variation of one figure.
pub fn spread(values: &[f64]) -> Option<[f64; 4]> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64).sqrt();
    let cv = if mean > 0.0 { sd / mean } else { 0.0 };
    Some([median, v[0], v[n - 1], cv])
}

/// The whole document: `configuration` (strings), `repeat_N` objects, and
/// fabdiag's `statistics` across repeats (strings too, for consistency).
pub fn document(configuration: &[(&str, String)], repeats: &[Vec<TrafficResult>], error: Option<&str>) -> Value {
    let mut doc = Map::new();
    let cfg: Map<String, Value> = configuration
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
        .collect();
    doc.insert("configuration".into(), Value::Object(cfg));
    for (i, rep) in repeats.iter().enumerate() {
        let tests: Map<String, Value> = rep.iter().map(|r| (r.test.key(), test_json(r))).collect();
        doc.insert(format!("repeat_{i}"), Value::Object(tests));
    }
    if repeats.len() > 1 {
        let mut stats = Map::new();
        for t in repeats[0].iter().map(|r| r.test) {
            let mine: Vec<&TrafficResult> = repeats
                .iter()
                .flatten()
                .filter(|r| r.test == t && r.error.is_none())
                .collect();
            let mut m = Map::new();
            for (name, vals) in [
                (
                    "host_transfer_speed_gbps",
                    mine.iter().map(|r| r.host_gbps()).collect::<Vec<_>>(),
                ),
                ("tile_transfer_speed_gbps", mine.iter().map(|r| r.tile_gbps()).collect()),
            ] {
                if (name.starts_with("host") && t.host.is_none()) || (name.starts_with("tile") && t.tile.is_none()) {
                    continue;
                }
                if let Some([med, lo, hi, cv]) = spread(&vals) {
                    let o: Map<String, Value> = [
                        ("median", med),
                        ("min", lo),
                        ("max", hi),
                        ("coefficient_of_variation", cv),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), Value::String(g17(v))))
                    .collect();
                    m.insert(name.into(), Value::Object(o));
                }
            }
            stats.insert(t.key(), Value::Object(m));
        }
        doc.insert("statistics".into(), Value::Object(stats));
    }
    if let Some(e) = error {
        doc.insert("error".into(), Value::String(e.into()));
    }
    Value::Object(doc)
}
