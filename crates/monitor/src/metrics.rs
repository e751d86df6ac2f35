//! The monitor's records as a `/metrics` page: per peer whether it is up
//! (and why not), its changes and probes as counters, when it was last
//! probed, the last figures (absent while the last probe of their kind
//! failed), the window's least, median and most, and the link time
//! probing took. Every peer has its counters from the start, at zero, so
//! `rate()` and `increase()` see its first probe. Pure.

use crate::probe::{Outcome, ProbeKind};
use crate::watch::{Status, Watch};
use fabdiag_exposition::catalogue as m;
use fabdiag_exposition::{Exposition, ExpositionError, SummaryValue};

/// The exposition of everything `w` holds.
pub fn exposition(w: &Watch) -> Result<String, ExpositionError> {
    let mut e = Exposition::new();
    e.gauge(m::MONITOR_PEERS, &[], w.peers().len() as f64);
    e.gauge(m::MONITOR_BUDGET, &[], w.budget);
    for (p, s) in w.states() {
        let peer = p.name.as_str();
        match &s.status {
            Status::Unknown => {}
            Status::Up => e.gauge(m::MONITOR_UP, &[peer, "ok"], 1.0),
            Status::Down(r, _) => e.gauge(m::MONITOR_UP, &[peer, r.as_str()], 0.0),
        }
        e.counter(m::MONITOR_CHANGES, &[peer], s.changes as f64);
        for k in ProbeKind::ALL {
            for (o, label) in Outcome::LABELS.iter().enumerate() {
                e.counter(
                    m::MONITOR_PROBES,
                    &[peer, k.as_str(), label],
                    s.probes[k.index()][o] as f64,
                );
            }
            if let Some(t) = s.last[k.index()] {
                e.gauge(m::MONITOR_LAST_PROBE, &[peer, k.as_str()], t);
            }
        }
        if let Some(l) = &s.latency {
            let size = l.size_bytes.to_string();
            let v = SummaryValue {
                quantiles: l.quantiles.clone(),
                sum: l.mean_s * l.iterations as f64,
                count: l.iterations,
            };
            e.summary(m::MONITOR_LATENCY, &[peer, ProbeKind::Latency.tool().1, &size], &v);
        }
        if let Some(b) = &s.bandwidth {
            let size = b.size_bytes.to_string();
            e.gauge(
                m::MONITOR_BANDWIDTH,
                &[peer, ProbeKind::Bandwidth.tool().1, &size],
                b.bytes_per_s,
            );
        }
        for (k, def) in [
            (ProbeKind::Latency, m::MONITOR_WINDOW_LATENCY),
            (ProbeKind::Bandwidth, m::MONITOR_WINDOW_BANDWIDTH),
        ] {
            if let Some((lo, mid, hi)) = s.window_stats(k) {
                for (stat, v) in [("min", lo), ("median", mid), ("max", hi)] {
                    e.gauge(def, &[peer, stat], v);
                }
            }
        }
        e.counter(m::MONITOR_LINK_SECONDS, &[peer], s.link_s);
    }
    e.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::Peer;
    use crate::probe::{Figures, Latency, Reason};

    fn lat() -> Outcome {
        Outcome::Up(Figures::Latency(Latency {
            size_bytes: 8,
            iterations: 100,
            quantiles: vec![
                (0.0, 1e-5),
                (0.5, 2e-5),
                (0.9, 3e-5),
                (0.99, 4e-5),
                (0.999, 5e-5),
                (1.0, 6e-5),
            ],
            mean_s: 2.5e-5,
            link_s: 0.25,
        }))
    }

    #[test]
    fn a_page_of_two_peers_one_up_one_down() {
        let p = |n: &str| Peer {
            name: n.into(),
            host: n.into(),
            port: 1,
        };
        let mut w = Watch::new(vec![p("n1"), p("n2"), p("n3")], 5, 0.01);
        w.record(0, ProbeKind::Latency, 1_795_000_000.0, &lat());
        w.record(1, ProbeKind::Latency, 1_795_000_001.0, &lat());
        w.record(
            1,
            ProbeKind::Latency,
            1_795_000_031.0,
            &Outcome::Down(Reason::Refused, "x".into()),
        );
        let text = exposition(&w).expect("encodes");
        let has = |l: &str| assert!(text.lines().any(|x| x == l), "missing {l} in\n{text}");
        has("fabdiag_monitor_peers 3");
        has("fabdiag_monitor_budget_ratio 0.01");
        has("fabdiag_monitor_peer_up{peer=\"n1\",reason=\"ok\"} 1");
        has("fabdiag_monitor_peer_up{peer=\"n2\",reason=\"refused\"} 0");
        has("fabdiag_monitor_peer_state_changes_total{peer=\"n2\"} 1");
        has("fabdiag_monitor_probes_total{peer=\"n2\",probe=\"latency\",outcome=\"down\"} 1");
        has("fabdiag_monitor_probes_total{peer=\"n3\",probe=\"bandwidth\",outcome=\"ok\"} 0");
        has("fabdiag_monitor_last_probe_timestamp_seconds{peer=\"n2\",probe=\"latency\"} 1795000031");
        has("fabdiag_monitor_latency_seconds{peer=\"n1\",tool=\"send_lat\",size_bytes=\"8\",quantile=\"0.5\"} 0.00002");
        has("fabdiag_monitor_latency_seconds_count{peer=\"n1\",tool=\"send_lat\",size_bytes=\"8\"} 100");
        has("fabdiag_monitor_window_latency_seconds{peer=\"n2\",stat=\"median\"} 0.00002");
        has("fabdiag_monitor_probe_link_seconds_total{peer=\"n1\"} 0.25");
        // n2's latency figures went with its failure; n3 was never probed
        let absent = |l: &str| assert!(!text.lines().any(|x| x.starts_with(l)), "{l} in\n{text}");
        absent("fabdiag_monitor_latency_seconds{peer=\"n2\"");
        absent("fabdiag_monitor_peer_up{peer=\"n3\"");
        absent("fabdiag_monitor_bandwidth_bytes_per_second{");
    }
}
