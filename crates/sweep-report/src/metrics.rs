//! A finished sweep as Prometheus metrics (`sweep --metrics FILE`): made
//! from its document, so the metrics, the JSON and the summary cannot
//! disagree. Whether it passed and when it ended, its nodes and pairs by
//! state, every node's median and whether it is slow, and the links the
//! analysis named slow. Not every pair: a sweep of 1,000 nodes has half a
//! million, which is a heatmap's job (sweep.json, report.html), not a
//! time series'. Pure: whether it passed (the binary's exit status) is
//! handed in.

use crate::phrases::Names;
use fabdiag_exposition::catalogue as m;
use fabdiag_exposition::{Exposition, ExpositionError};
use fabdiag_sweep_judge::analysis::Better;
use fabdiag_sweep_judge::doc::SweepDoc;

/// The exposition of `doc` for the file named `file`; `passed`: its
/// verdict was a pass and every result was recorded.
pub fn sweep(doc: &SweepDoc, passed: bool, file: &str) -> Result<String, ExpositionError> {
    let base = [doc.metric.test.as_str(), doc.metric.name.as_str()];
    let mut e = Exposition::for_file(file);
    e.gauge(m::SWEEP_SUCCESS, &base, f64::from(u8::from(passed)));
    // the sweep's own end, also when its report is made again later
    if let Ok(t) = humantime::parse_rfc3339(&doc.ended) {
        let s = t.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        e.gauge(m::SWEEP_LAST_RUN, &base, s);
    }
    let v = &doc.verdict;
    let slow_nodes = doc.nodes.iter().filter(|n| n.slow).count();
    for (state, n) in [
        ("all", doc.nodes.len()),
        ("slow", slow_nodes),
        ("lost", v.lost_nodes.len()),
        ("threshold", v.threshold_nodes.len()),
    ] {
        e.gauge(m::SWEEP_NODES, &[base[0], base[1], state], n as f64);
    }
    let measured = doc.pairs.iter().filter(|p| p.value.is_some()).count();
    for (state, n) in [
        ("all", doc.pairs.len()),
        ("measured", measured),
        ("failed", v.failed_pairs),
        ("untested", v.untested_pairs),
        ("slow", v.slow_links),
        ("threshold", v.threshold_pairs.len()),
    ] {
        e.gauge(m::SWEEP_PAIRS, &[base[0], base[1], state], n as f64);
    }
    let (node_figure, link_figure, scale) = match doc.metric.better {
        // MB/s (10^6 bytes) and microseconds, in base units
        Better::Higher => (m::SWEEP_NODE_BANDWIDTH, m::SWEEP_LINK_BANDWIDTH, 1e6),
        Better::Lower => (m::SWEEP_NODE_LATENCY, m::SWEEP_LINK_LATENCY, 1e-6),
    };
    for n in &doc.nodes {
        let rank = n.node.rank.to_string();
        let labels = [
            base[0],
            base[1],
            n.node.host.as_deref().unwrap_or(""),
            &rank,
            n.node.device.as_deref().unwrap_or(""),
        ];
        if let Some(median) = n.median {
            e.gauge(node_figure, &labels, median * scale);
        }
        e.gauge(m::SWEEP_NODE_SLOW, &labels, f64::from(u8::from(n.slow)));
        e.gauge(m::SWEEP_NODE_FAILED_PAIRS, &labels, n.pairs_failed as f64);
    }
    let names = Names::new(doc);
    for link in &doc.analysis.slow_links {
        let (a, b) = (names.of(link.a), names.of(link.b));
        e.gauge(link_figure, &[base[0], base[1], &a, &b], link.value * scale);
    }
    e.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_sweep_judge::fixtures::{ci_run, doc_with};

    fn sample(text: &str, series: &str) -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"));
        line[series.len() + 1..].parse().expect("a number")
    }

    #[test]
    fn the_ci_run_names_its_slow_node_and_link() {
        let doc = doc_with(8, &ci_run(), &[], &[]);
        let text = sweep(&doc, false, "s.prom").expect("encodes");
        let base = format!("file=\"s.prom\",test=\"{}\",figure=\"bandwidth\"", doc.metric.test);
        assert_eq!(sample(&text, &format!("fabdiag_sweep_success{{{base}}}")), 0.0);
        assert_eq!(
            sample(&text, &format!("fabdiag_sweep_nodes{{{base},state=\"all\"}}")),
            8.0
        );
        assert_eq!(
            sample(&text, &format!("fabdiag_sweep_nodes{{{base},state=\"slow\"}}")),
            1.0
        );
        assert_eq!(
            sample(&text, &format!("fabdiag_sweep_pairs{{{base},state=\"measured\"}}")),
            28.0
        );
        let slow: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("fabdiag_sweep_node_slow{") && l.ends_with(" 1"))
            .collect();
        assert_eq!(slow.len(), 1, "{text}");
        assert!(slow[0].contains("rank=\"6\""), "{}", slow[0]);
        // node 6's median (4.6 MB/s) in bytes per second
        let six = text
            .lines()
            .find(|l| {
                l.starts_with("fabdiag_sweep_node_median_bandwidth_bytes_per_second{") && l.contains("rank=\"6\"")
            })
            .expect("node 6's median");
        let v: f64 = six.rsplit_once(' ').expect("a value").1.parse().expect("a number");
        assert!((v - 4.65e6).abs() < 0.1e6, "{six}");
        // link 2-5, not explained by node 6
        let links: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("fabdiag_sweep_slow_link_bandwidth_bytes_per_second{"))
            .collect();
        assert_eq!(links.len(), doc.analysis.slow_links.len(), "{text}");
        // (the matrix keeps figures as f32: 2.3 MB/s is 2299999.95 B/s)
        let two_five = links
            .iter()
            .find(|l| l.contains("a=\"rank 2 ") && l.contains("b=\"rank 5 "))
            .unwrap_or_else(|| panic!("{links:?}"));
        let v: f64 = two_five.rsplit_once(' ').expect("a value").1.parse().expect("a number");
        assert!((v - 2.3e6).abs() < 1.0, "{two_five}");
    }

    #[test]
    fn a_clean_sweep_passes_and_says_when_it_ended() {
        let values: Vec<_> = ci_run().into_iter().map(|(p, _)| (p, 100.0)).collect();
        let doc = doc_with(8, &values, &[], &[]);
        let text = sweep(&doc, true, "s.prom").expect("encodes");
        let base = format!("file=\"s.prom\",test=\"{}\",figure=\"bandwidth\"", doc.metric.test);
        assert_eq!(sample(&text, &format!("fabdiag_sweep_success{{{base}}}")), 1.0);
        let ended = humantime::parse_rfc3339(&doc.ended).expect("an RFC 3339 time");
        let s = ended
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs_f64();
        assert_eq!(
            sample(&text, &format!("fabdiag_sweep_last_run_timestamp_seconds{{{base}}}")),
            s
        );
        assert!(!text.contains("slow_link"), "{text}");
    }
}
