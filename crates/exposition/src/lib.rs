//! fabdiag's Prometheus metrics: `catalogue` names every metric once, and
//! `Exposition` gathers samples of them and encodes them in Prometheus's
//! text exposition format (0.0.4), as node_exporter's textfile collector
//! and a `/metrics` scrape read it. Pure: it takes figures and gives text;
//! it measures nothing, reads no clock and writes no file (the binary
//! writes, atomically).

pub mod catalogue;

pub use catalogue::{Def, Kind, Op, FILE_LABEL};
use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily, MetricType, Quantile, Summary};

/// A sample that does not fit its metric's definition: a renderer's
/// mistake, caught by the renderers' tests, never a user's.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExpositionError {
    #[error("metric {metric}: labels {given:?} where its definition has {wanted:?}")]
    Labels {
        metric: &'static str,
        given: Vec<String>,
        wanted: &'static [&'static str],
    },
    #[error("metric {0}: a {1} sample of a metric of another type")]
    Kind(&'static str, &'static str),
    #[error("cannot encode the metrics: {0}")]
    Encode(String),
}

/// A summary's figures: (quantile, value) pairs, the sum and the count.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryValue {
    pub quantiles: Vec<(f64, f64)>,
    pub sum: f64,
    pub count: u64,
}

/// Samples gathered for one exposition, each metric's in the order they
/// came, the metrics in the order of their first sample.
#[derive(Debug, Default)]
pub struct Exposition {
    /// Labels every sample carries first, e.g. the file's name.
    common: Vec<(&'static str, String)>,
    families: Vec<(Def, Vec<Metric>)>,
    /// The first sample that did not fit; reported by `encode`.
    mistake: Option<ExpositionError>,
}

impl Exposition {
    pub fn new() -> Exposition {
        Exposition::default()
    }

    /// An exposition whose every sample carries `labels` first.
    pub fn with_common(labels: &[(&'static str, &str)]) -> Exposition {
        Exposition {
            common: labels.iter().map(|&(k, v)| (k, v.to_string())).collect(),
            ..Exposition::default()
        }
    }

    /// An exposition for a textfile collector's file named `file`: every
    /// sample carries `file="NAME"` (its name without the folder), so the
    /// same metrics from two files of one folder (two runs of a tool
    /// against one peer, say) are two series and not one series twice,
    /// which node_exporter refuses.
    pub fn for_file(file: &str) -> Exposition {
        Exposition::with_common(&[(FILE_LABEL, file)])
    }

    /// A gauge's sample: `labels` are the values of `def.labels`, in order.
    pub fn gauge(&mut self, def: Def, labels: &[&str], value: f64) {
        if def.kind != Kind::Gauge {
            self.note(ExpositionError::Kind(def.name, "gauge"));
            return;
        }
        let mut g = Gauge::default();
        g.set_value(value);
        let mut m = Metric::from_gauge(g);
        self.add(def, labels, &mut m);
    }

    /// A counter's sample: its total so far.
    pub fn counter(&mut self, def: Def, labels: &[&str], total: f64) {
        if def.kind != Kind::Counter {
            self.note(ExpositionError::Kind(def.name, "counter"));
            return;
        }
        let mut c = Counter::default();
        c.set_value(total);
        let mut m = Metric::default();
        m.set_counter(c);
        self.add(def, labels, &mut m);
    }

    /// A summary's sample.
    pub fn summary(&mut self, def: Def, labels: &[&str], value: &SummaryValue) {
        if def.kind != Kind::Summary {
            self.note(ExpositionError::Kind(def.name, "summary"));
            return;
        }
        let mut s = Summary::default();
        s.set_sample_sum(value.sum);
        s.set_sample_count(value.count);
        s.set_quantile(
            value
                .quantiles
                .iter()
                .map(|&(q, v)| {
                    let mut quantile = Quantile::default();
                    quantile.set_quantile(q);
                    quantile.set_value(v);
                    quantile
                })
                .collect(),
        );
        let mut m = Metric::default();
        m.set_summary(s);
        self.add(def, labels, &mut m);
    }

    /// Whether no sample was gathered.
    pub fn is_empty(&self) -> bool {
        self.families.is_empty()
    }

    fn note(&mut self, e: ExpositionError) {
        self.mistake.get_or_insert(e);
    }

    fn add(&mut self, def: Def, labels: &[&str], m: &mut Metric) {
        if labels.len() != def.labels.len() {
            self.note(ExpositionError::Labels {
                metric: def.name,
                given: labels.iter().map(|l| l.to_string()).collect(),
                wanted: def.labels,
            });
            return;
        }
        let common = self.common.iter().map(|(k, v)| (*k, v.as_str()));
        m.set_label(
            common
                .chain(def.labels.iter().copied().zip(labels.iter().copied()))
                .map(|(name, value)| {
                    let mut pair = LabelPair::default();
                    pair.set_name(name.to_string());
                    pair.set_value(value.to_string());
                    pair
                })
                .collect(),
        );
        let metric = std::mem::take(m);
        match self.families.iter_mut().find(|(d, _)| d.name == def.name) {
            Some((_, metrics)) => metrics.push(metric),
            None => self.families.push((def, vec![metric])),
        }
    }

    /// The text exposition of every sample gathered.
    pub fn encode(&self) -> Result<String, ExpositionError> {
        if let Some(e) = &self.mistake {
            return Err(e.clone());
        }
        let families: Vec<MetricFamily> = self
            .families
            .iter()
            .map(|(def, metrics)| {
                let mut f = MetricFamily::default();
                f.set_name(def.name.to_string());
                f.set_help(def.help.to_string());
                f.set_field_type(match def.kind {
                    Kind::Gauge => MetricType::GAUGE,
                    Kind::Counter => MetricType::COUNTER,
                    Kind::Summary => MetricType::SUMMARY,
                });
                f.set_metric(metrics.clone());
                f
            })
            .collect();
        prometheus::TextEncoder::new()
            .encode_to_string(&families)
            .map_err(|e| ExpositionError::Encode(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::catalogue::{latency, Op, HEALTH_STATUS, MONITOR_CHANGES};
    use super::*;

    #[test]
    fn gauges_and_summaries_encode_with_escaped_labels() {
        let mut e = Exposition::new();
        e.gauge(HEALTH_STATUS, &["node\"1\\\n"], 2.0);
        e.gauge(HEALTH_STATUS, &["node2"], 0.0);
        let v = SummaryValue {
            quantiles: vec![(0.5, 1.5e-6), (1.0, 2e-6)],
            sum: 3e-6,
            count: 2,
        };
        e.summary(latency(Op::Send), &["send_lat", "client", "tcp", "lo", "h", "8"], &v);
        let text = e.encode().expect("encodes");
        assert_eq!(
            text,
            concat!(
                "# HELP fabdiag_health_status The node's health verdict as Nagios codes it: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n",
                "# TYPE fabdiag_health_status gauge\n",
                "fabdiag_health_status{node=\"node\\\"1\\\\\\n\"} 2\n",
                "fabdiag_health_status{node=\"node2\"} 0\n",
                "# HELP fabdiag_send_latency_seconds Latency measured at a message size (quantile 0 is the minimum, 1 the maximum).\n",
                "# TYPE fabdiag_send_latency_seconds summary\n",
                "fabdiag_send_latency_seconds{tool=\"send_lat\",role=\"client\",provider=\"tcp\",domain=\"lo\",peer=\"h\",size_bytes=\"8\",quantile=\"0.5\"} 0.0000015\n",
                "fabdiag_send_latency_seconds{tool=\"send_lat\",role=\"client\",provider=\"tcp\",domain=\"lo\",peer=\"h\",size_bytes=\"8\",quantile=\"1\"} 0.000002\n",
                "fabdiag_send_latency_seconds_sum{tool=\"send_lat\",role=\"client\",provider=\"tcp\",domain=\"lo\",peer=\"h\",size_bytes=\"8\"} 0.000003\n",
                "fabdiag_send_latency_seconds_count{tool=\"send_lat\",role=\"client\",provider=\"tcp\",domain=\"lo\",peer=\"h\",size_bytes=\"8\"} 2\n",
            )
        );
    }

    #[test]
    fn counters_encode_as_counters() {
        let mut e = Exposition::new();
        e.counter(MONITOR_CHANGES, &["h1"], 3.0);
        e.gauge(MONITOR_CHANGES, &["h1"], 3.0);
        assert_eq!(
            e.encode(),
            Err(ExpositionError::Kind(
                "fabdiag_monitor_peer_state_changes_total",
                "gauge"
            ))
        );
        let mut e = Exposition::new();
        e.counter(MONITOR_CHANGES, &["h1"], 3.0);
        let text = e.encode().expect("encodes");
        assert!(
            text.contains("# TYPE fabdiag_monitor_peer_state_changes_total counter\nfabdiag_monitor_peer_state_changes_total{peer=\"h1\"} 3\n"),
            "{text}"
        );
    }

    #[test]
    fn a_files_samples_carry_its_name_first() {
        let mut e = Exposition::for_file("a.prom");
        e.gauge(HEALTH_STATUS, &["n1"], 0.0);
        let text = e.encode().expect("encodes");
        assert!(
            text.ends_with("fabdiag_health_status{file=\"a.prom\",node=\"n1\"} 0\n"),
            "{text}"
        );
    }

    #[test]
    fn a_sample_that_does_not_fit_its_definition_is_an_error() {
        let mut e = Exposition::new();
        e.gauge(HEALTH_STATUS, &["a", "b"], 1.0);
        assert!(matches!(e.encode(), Err(ExpositionError::Labels { .. })));
        let mut e = Exposition::new();
        e.gauge(latency(Op::Read), &["a"; 6], 1.0);
        assert_eq!(
            e.encode(),
            Err(ExpositionError::Kind("fabdiag_read_latency_seconds", "gauge"))
        );
    }
}
