//! Every metric fabdiag exports, once: its name (with its unit, as
//! Prometheus's naming conventions ask), its help text, its type and the
//! labels its series carry. The renderers name metrics only through these
//! constants, so a name cannot drift between tools, and the guide's table
//! is checked against `ALL`. Names only: nothing here renders or reads.

/// A metric's type, as the exposition's `# TYPE` line says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    /// Only ever rises while the exporting process runs (`_total`).
    Counter,
    /// Quantiles with `_sum` and `_count`.
    Summary,
}

/// One exported metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Def {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// The labels every series of it carries, in order (a summary's
    /// `quantile` is added by the format, and a textfile's `file` label
    /// by `Exposition::for_file`; neither is listed).
    pub labels: &'static [&'static str],
}

const fn counter(name: &'static str, help: &'static str, labels: &'static [&'static str]) -> Def {
    Def {
        name,
        help,
        kind: Kind::Counter,
        labels,
    }
}

/// The label a textfile's every sample carries: the file's name.
pub const FILE_LABEL: &str = "file";

const fn gauge(name: &'static str, help: &'static str, labels: &'static [&'static str]) -> Def {
    Def {
        name,
        help,
        kind: Kind::Gauge,
        labels,
    }
}

/// The labels of a pair tool's run.
const RUN: &[&str] = &["tool", "role", "provider", "domain", "peer"];
/// The same, with the message size.
const SIZED: &[&str] = &["tool", "role", "provider", "domain", "peer", "size_bytes"];

pub const RUN_SUCCESS: Def = gauge(
    "fabdiag_run_success",
    "1 when a pair tool's run finished and met its thresholds, 0 when it did not.",
    RUN,
);
pub const RUN_OUTCOME: Def = gauge(
    "fabdiag_run_outcome",
    "1 for how a pair tool's run ended (ok, threshold, runtime, unavailable, usage, interrupted), 0 for the others.",
    &["tool", "role", "provider", "domain", "peer", "outcome"],
);
pub const LAST_RUN: Def = gauge(
    "fabdiag_last_run_timestamp_seconds",
    "When a pair tool's run ended, in seconds since the Unix epoch.",
    RUN,
);

/// The operations a pair tool measures; each has its own metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Write,
    Read,
    Send,
    Atomic,
}

/// An operation's bandwidth.
pub const fn bandwidth(op: Op) -> Def {
    let name = match op {
        Op::Write => "fabdiag_write_bandwidth_bytes_per_second",
        Op::Read => "fabdiag_read_bandwidth_bytes_per_second",
        Op::Send => "fabdiag_send_bandwidth_bytes_per_second",
        Op::Atomic => "fabdiag_atomic_bandwidth_bytes_per_second",
    };
    gauge(
        name,
        "Bandwidth measured at a message size, both directions summed when bidirectional.",
        SIZED,
    )
}

/// An operation's message rate.
pub const fn rate(op: Op) -> Def {
    let name = match op {
        Op::Write => "fabdiag_write_operations_per_second",
        Op::Read => "fabdiag_read_operations_per_second",
        Op::Send => "fabdiag_send_operations_per_second",
        Op::Atomic => "fabdiag_atomic_operations_per_second",
    };
    gauge(name, "Operations completed per second at a message size.", SIZED)
}

/// An operation's latency: quantiles 0 (the minimum), 0.5, 0.9, 0.99,
/// 0.999 and 1 (the maximum), the sum and the count of the measured
/// iterations.
pub const fn latency(op: Op) -> Def {
    let name = match op {
        Op::Write => "fabdiag_write_latency_seconds",
        Op::Read => "fabdiag_read_latency_seconds",
        Op::Send => "fabdiag_send_latency_seconds",
        Op::Atomic => "fabdiag_atomic_latency_seconds",
    };
    Def {
        name,
        help: "Latency measured at a message size (quantile 0 is the minimum, 1 the maximum).",
        kind: Kind::Summary,
        labels: SIZED,
    }
}

/// An operation's latency's standard deviation.
pub const fn latency_stddev(op: Op) -> Def {
    let name = match op {
        Op::Write => "fabdiag_write_latency_stddev_seconds",
        Op::Read => "fabdiag_read_latency_stddev_seconds",
        Op::Send => "fabdiag_send_latency_stddev_seconds",
        Op::Atomic => "fabdiag_atomic_latency_stddev_seconds",
    };
    gauge(
        name,
        "Population standard deviation of the latency at a message size.",
        SIZED,
    )
}

pub const NIC_FAULT_INCREASE: Def = gauge(
    "fabdiag_nic_fault_increase",
    "How much a NIC counter whose rise is a fault rose during the test (at least this much where it reached its ceiling).",
    &["tool", "role", "provider", "domain", "peer", "side", "device", "counter", "class"],
);

/// The labels of a sweep: what every pair ran ("write-bw 65536 B") and
/// the figure it was judged by ("bandwidth", "latency", "p99 latency").
const SWEEP: &[&str] = &["test", "figure"];
/// The same, with one node: its host, rank and NIC.
const SWEEP_NODE: &[&str] = &["test", "figure", "node", "rank", "nic"];
/// The same, with a link between two nodes (each "host rank").
const SWEEP_LINK: &[&str] = &["test", "figure", "a", "b"];

pub const SWEEP_SUCCESS: Def = gauge(
    "fabdiag_sweep_success",
    "1 when the sweep found no failed, lost, slow, regressed or over-threshold pair or node and recorded every result, 0 when not.",
    SWEEP,
);
pub const SWEEP_LAST_RUN: Def = gauge(
    "fabdiag_sweep_last_run_timestamp_seconds",
    "When the sweep ended, in seconds since the Unix epoch.",
    SWEEP,
);
pub const SWEEP_NODES: Def = gauge(
    "fabdiag_sweep_nodes",
    "Nodes of the sweep by state (all, slow, lost, threshold).",
    &["test", "figure", "state"],
);
pub const SWEEP_PAIRS: Def = gauge(
    "fabdiag_sweep_pairs",
    "Pairs of the sweep by state (all, measured, failed, untested, slow, threshold).",
    &["test", "figure", "state"],
);
pub const SWEEP_NODE_BANDWIDTH: Def = gauge(
    "fabdiag_sweep_node_median_bandwidth_bytes_per_second",
    "A node's median bandwidth over its measured pairs.",
    SWEEP_NODE,
);
pub const SWEEP_NODE_LATENCY: Def = gauge(
    "fabdiag_sweep_node_median_latency_seconds",
    "A node's median latency figure over its measured pairs.",
    SWEEP_NODE,
);
pub const SWEEP_NODE_SLOW: Def = gauge(
    "fabdiag_sweep_node_slow",
    "1 when the sweep judged the node slow, 0 when not.",
    SWEEP_NODE,
);
pub const SWEEP_NODE_FAILED_PAIRS: Def = gauge(
    "fabdiag_sweep_node_failed_pairs",
    "The node's pair tests that failed.",
    SWEEP_NODE,
);
pub const SWEEP_LINK_BANDWIDTH: Def = gauge(
    "fabdiag_sweep_slow_link_bandwidth_bytes_per_second",
    "Bandwidth of a link the sweep judged slow (not explained by a slow node).",
    SWEEP_LINK,
);
pub const SWEEP_LINK_LATENCY: Def = gauge(
    "fabdiag_sweep_slow_link_latency_seconds",
    "Latency figure of a link the sweep judged slow (not explained by a slow node).",
    SWEEP_LINK,
);

pub const HEALTH_STATUS: Def = gauge(
    "fabdiag_health_status",
    "The node's health verdict as Nagios codes it: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    &["node"],
);
pub const HEALTH_CHECK_STATUS: Def = gauge(
    "fabdiag_health_check_status",
    "One check's verdict as Nagios codes it: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    &["node", "check", "subject"],
);
pub const HEALTH_LAST_RUN: Def = gauge(
    "fabdiag_health_last_run_timestamp_seconds",
    "When the health check ended, in seconds since the Unix epoch.",
    &["node"],
);
pub const HEALTH_DURATION: Def = gauge(
    "fabdiag_health_duration_seconds",
    "How long the health check took.",
    &["node"],
);

pub const MONITOR_PEERS: Def = gauge("fabdiag_monitor_peers", "Peers the monitor watches.", &[]);
pub const MONITOR_BUDGET: Def = gauge(
    "fabdiag_monitor_budget_ratio",
    "The most of each link's time the monitor's probes may take (0.01 is 1 %).",
    &[],
);
pub const MONITOR_UP: Def = gauge(
    "fabdiag_monitor_peer_up",
    "1 when the peer's last probe was answered, 0 when not, with the reason (ok when up); absent before its first probe.",
    &["peer", "reason"],
);
pub const MONITOR_CHANGES: Def = counter(
    "fabdiag_monitor_peer_state_changes_total",
    "Times the peer went from up to down or back, or from one reason for being down to another.",
    &["peer"],
);
pub const MONITOR_PROBES: Def = counter(
    "fabdiag_monitor_probes_total",
    "Probes of a peer by kind (latency, bandwidth) and outcome (ok, down, busy, rate_limited).",
    &["peer", "probe", "outcome"],
);
pub const MONITOR_LAST_PROBE: Def = gauge(
    "fabdiag_monitor_last_probe_timestamp_seconds",
    "When the peer's last probe of this kind ended, in seconds since the Unix epoch.",
    &["peer", "probe"],
);
pub const MONITOR_LATENCY: Def = Def {
    name: "fabdiag_monitor_latency_seconds",
    help: "The latency the peer's last latency probe measured (quantile 0 is the minimum, 1 the maximum); absent while its last one failed.",
    kind: Kind::Summary,
    labels: &["peer", "tool", "size_bytes"],
};
pub const MONITOR_BANDWIDTH: Def = gauge(
    "fabdiag_monitor_bandwidth_bytes_per_second",
    "The bandwidth the peer's last bandwidth probe measured; absent while its last one failed.",
    &["peer", "tool", "size_bytes"],
);
pub const MONITOR_WINDOW_LATENCY: Def = gauge(
    "fabdiag_monitor_window_latency_seconds",
    "The least, median and most (stat) of the median latencies of the peer's recent latency probes.",
    &["peer", "stat"],
);
pub const MONITOR_WINDOW_BANDWIDTH: Def = gauge(
    "fabdiag_monitor_window_bandwidth_bytes_per_second",
    "The least, median and most (stat) of the bandwidths of the peer's recent bandwidth probes.",
    &["peer", "stat"],
);
pub const MONITOR_LINK_SECONDS: Def = counter(
    "fabdiag_monitor_probe_link_seconds_total",
    "Link time the peer's probes have taken (a latency probe: the sum of its latencies, warm-up included; a bandwidth probe: its transfer time); its rate is the share of the link probing uses.",
    &["peer"],
);

const OPS: [Op; 4] = [Op::Write, Op::Read, Op::Send, Op::Atomic];

/// Every metric fabdiag exports.
pub fn all() -> Vec<Def> {
    let mut v = vec![RUN_SUCCESS, RUN_OUTCOME, LAST_RUN];
    for op in OPS {
        v.extend([bandwidth(op), rate(op), latency(op), latency_stddev(op)]);
    }
    v.extend([
        NIC_FAULT_INCREASE,
        SWEEP_SUCCESS,
        SWEEP_LAST_RUN,
        SWEEP_NODES,
        SWEEP_PAIRS,
        SWEEP_NODE_BANDWIDTH,
        SWEEP_NODE_LATENCY,
        SWEEP_NODE_SLOW,
        SWEEP_NODE_FAILED_PAIRS,
        SWEEP_LINK_BANDWIDTH,
        SWEEP_LINK_LATENCY,
        HEALTH_STATUS,
        HEALTH_CHECK_STATUS,
        HEALTH_LAST_RUN,
        HEALTH_DURATION,
        MONITOR_PEERS,
        MONITOR_BUDGET,
        MONITOR_UP,
        MONITOR_CHANGES,
        MONITOR_PROBES,
        MONITOR_LAST_PROBE,
        MONITOR_LATENCY,
        MONITOR_BANDWIDTH,
        MONITOR_WINDOW_LATENCY,
        MONITOR_WINDOW_BANDWIDTH,
        MONITOR_LINK_SECONDS,
    ]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snake(s: &str) -> bool {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    }

    #[test]
    fn names_follow_prometheus_conventions() {
        let all = all();
        for d in &all {
            assert!(d.name.starts_with("fabdiag_") && snake(d.name), "{}", d.name);
            // one base unit, spelled out, at the end: no ms, us, MB
            for bad in ["_ms", "_us", "_mb", "_kb", "_milli", "_micro"] {
                assert!(!d.name.contains(bad), "{} has {bad}", d.name);
            }
            // `_total` is a counter's, and only a counter's
            assert_eq!(d.name.ends_with("_total"), d.kind == Kind::Counter, "{}", d.name);
            assert!(!d.name.trim_end_matches("_total").contains("_total"), "{}", d.name);
            assert!(d.help.ends_with('.'), "{}", d.name);
            for l in d.labels {
                assert!(
                    snake(l) && !l.starts_with("__") && *l != "quantile" && *l != "le" && *l != FILE_LABEL,
                    "{l}"
                );
            }
        }
        let mut names: Vec<_> = all.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "a name is used twice");
    }
}
