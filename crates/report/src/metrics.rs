//! A pair tool's run as Prometheus metrics (`--metrics FILE`): made from
//! the run's JSON document, so the metrics and `--json` cannot disagree.
//! Whether it passed and how it ended, when it ended, every size's
//! bandwidth and message rate or latency summary, and the NIC counters
//! whose rise is a fault. Pure: the time and the peer's name are handed
//! in, and the binary writes the file.

use crate::json::{BwResultJson, LatResultJson, RowJson, RunDocument};
use fabdiag_exposition::catalogue::{self as m, Op};
use fabdiag_exposition::{Exposition, ExpositionError, SummaryValue};
use fabdiag_model::counters::{Change, Counters};
use fabdiag_model::{RunDesc, Tool};

/// How a run can end, as `fabdiag_run_outcome`'s `outcome` label says it:
/// "ok", or the kind of its error.
pub const OUTCOMES: [&str; 6] = ["ok", "threshold", "runtime", "unavailable", "usage", "interrupted"];

/// What the document does not say: the peer as the user named it (a
/// fabric address changes from run to run, so it would make a new series
/// each time), the provider and domain the options asked for (used when
/// the run ended before it chose them), and when it ended.
pub struct PairContext<'a> {
    /// The metrics file's name (the `file` label).
    pub file: &'a str,
    pub tool: Tool,
    /// "client" or "server", for a document that has no role (a run that
    /// ended before it began).
    pub role: &'a str,
    pub peer: &'a str,
    pub provider: &'a str,
    pub domain: &'a str,
    pub ended_unix_s: f64,
}

/// Which operation's metrics a tool's figures are.
pub fn op(tool: Tool) -> Op {
    match tool {
        Tool::WriteBw | Tool::WriteLat | Tool::GpuLoopbackBw => Op::Write,
        Tool::ReadBw | Tool::ReadLat => Op::Read,
        Tool::SendBw | Tool::SendLat => Op::Send,
        Tool::AtomicBw | Tool::AtomicLat => Op::Atomic,
    }
}

/// The exposition of one pair tool's run.
pub fn pair(doc: &RunDocument, ctx: &PairContext<'_>) -> Result<String, ExpositionError> {
    let (provider, domain) = match &doc.config {
        Some(run) => (run.provider(), device(run)),
        None => (ctx.provider, ctx.domain),
    };
    let role = doc.role.as_deref().unwrap_or(ctx.role);
    let run = [ctx.tool.json_name(), role, provider, domain, ctx.peer];
    let mut e = Exposition::for_file(ctx.file);
    let outcome = doc.error.as_ref().map_or("ok", |err| err.kind.as_str());
    e.gauge(m::RUN_SUCCESS, &run, f64::from(u8::from(outcome == "ok")));
    for o in OUTCOMES {
        let labels = [run[0], run[1], run[2], run[3], run[4], o];
        e.gauge(m::RUN_OUTCOME, &labels, f64::from(u8::from(o == outcome)));
    }
    e.gauge(m::LAST_RUN, &run, ctx.ended_unix_s);
    let op = op(ctx.tool);
    for row in &doc.results {
        match row {
            RowJson::Bw(b) => bandwidth(&mut e, op, &run, b),
            RowJson::AmoBw(a) => bandwidth(&mut e, op, &run, &a.figures),
            RowJson::Lat(l) => latency(&mut e, op, &run, l),
            RowJson::AmoLat(a) => latency(&mut e, op, &run, &a.figures),
        }
    }
    if let Some(c) = &doc.counters {
        fault_counters(&mut e, &run, "local", &c.local);
        if let Some(peer) = &c.peer {
            fault_counters(&mut e, &run, "peer", peer);
        }
    }
    e.encode()
}

fn device(run: &RunDesc) -> &str {
    match run {
        RunDesc::Bw(r) => &r.device,
        RunDesc::Lat(r) => &r.device,
        RunDesc::Amo(r) => &r.device,
    }
}

fn sized<'a>(run: &[&'a str; 5], size: &'a str) -> [&'a str; 6] {
    [run[0], run[1], run[2], run[3], run[4], size]
}

fn bandwidth(e: &mut Exposition, op: Op, run: &[&str; 5], b: &BwResultJson) {
    let size = b.size_bytes.to_string();
    let labels = sized(run, &size);
    // MB is 10^6 bytes in every fabdiag figure
    e.gauge(m::bandwidth(op), &labels, b.bw_mb_per_s * 1e6);
    e.gauge(m::rate(op), &labels, b.pkt_rate_mpkt_per_s * 1e6);
}

fn latency(e: &mut Exposition, op: Op, run: &[&str; 5], l: &LatResultJson) {
    let size = l.size_bytes.to_string();
    let labels = sized(run, &size);
    // divided, not multiplied by 1e-9: 4000 ns is then exactly 0.000004
    let s = |ns: u64| ns as f64 / 1e9;
    let summary = SummaryValue {
        quantiles: vec![
            (0.0, s(l.min_ns)),
            (0.5, s(l.p50_ns)),
            (0.9, s(l.p90_ns)),
            (0.99, s(l.p99_ns)),
            (0.999, s(l.p999_ns)),
            (1.0, s(l.max_ns)),
        ],
        // the mean is what the originals print; the sum is made from it
        sum: l.mean_ns as f64 * l.iterations as f64 / 1e9,
        count: l.iterations,
    };
    e.summary(m::latency(op), &labels, &summary);
    e.gauge(m::latency_stddev(op), &labels, s(l.stddev_ns));
}

/// Every counter of `side` whose rise is a fault, where its rise is
/// known (a counter that went back, vanished or could not be read has
/// none; the JSON says which).
fn fault_counters(e: &mut Exposition, run: &[&str; 5], side: &str, counters: &Counters) {
    let Counters::Read(d) = counters else {
        return;
    };
    for source in &d.sources {
        for c in source.counters.iter().filter(|c| c.fault) {
            let rise = match c.change {
                Change::Unchanged => 0,
                _ => match c.change.rise() {
                    Some(r) => r,
                    None => continue,
                },
            };
            let labels = [
                run[0],
                run[1],
                run[2],
                run[3],
                run[4],
                side,
                &source.device,
                &c.name,
                c.class.as_str(),
            ];
            e.gauge(m::NIC_FAULT_INCREASE, &labels, rise as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Document, ErrorJson, SCHEMA_VERSION};
    use fabdiag_model::counters::{Class, CounterChange, Deltas, Family, SourceDeltas};
    use fabdiag_model::PairCounters;

    fn doc(results: Vec<RowJson>, error: Option<&str>) -> RunDocument {
        Document {
            schema_version: SCHEMA_VERSION,
            fabdiag_version: "0.1.0".into(),
            tool: "cxi_send_lat".into(),
            role: Some("client".into()),
            config: None,
            results,
            threshold: None,
            error: error.map(|kind| ErrorJson {
                kind: kind.into(),
                message: "m".into(),
            }),
            counters: None,
        }
    }

    fn lat(size: u64) -> RowJson {
        RowJson::Lat(LatResultJson {
            size_bytes: size,
            iterations: 1000,
            warmup_iterations: 10,
            peer_ops: 1010,
            min_ns: 1500,
            max_ns: 9000,
            mean_ns: 2000,
            stddev_ns: 250,
            p50_ns: 1900,
            p90_ns: 2300,
            p99_ns: 4000,
            p999_ns: 8000,
            percentiles_exact: true,
            histogram: Vec::new(),
            samples_ns: None,
        })
    }

    fn ctx(tool: Tool) -> PairContext<'static> {
        PairContext {
            file: "send-lat.prom",
            tool,
            role: "client",
            peer: "node2",
            provider: "tcp",
            domain: "eth0",
            ended_unix_s: 1_795_000_000.5,
        }
    }

    fn counter(name: &str, class: Class, fault: bool, change: Change) -> CounterChange {
        CounterChange {
            name: name.into(),
            class,
            fault,
            change,
        }
    }

    #[test]
    fn a_latency_run_with_counters_matches_its_snapshot() {
        let mut d = doc(vec![lat(8), lat(4096)], None);
        let sources = vec![SourceDeltas {
            family: Family::Netdev,
            device: "eth0".into(),
            counters: vec![
                counter("rx_crc_errors", Class::Physical, true, Change::Rose { by: 3 }),
                counter("carrier_changes", Class::Flap, true, Change::Unchanged),
                counter("rx_dropped", Class::Drop, true, Change::Vanished),
                counter("rx_bytes", Class::Traffic, false, Change::Rose { by: 4096 }),
            ],
            unavailable: None,
        }];
        let local = Counters::Read(Deltas {
            sources,
            seconds: 1.0,
            counters_read: 4,
            read_us: 10,
            nic: None,
        });
        d.counters = Some(PairCounters {
            local,
            peer: Some(Counters::NotAvailable { reason: "r".into() }),
        });
        let text = pair(&d, &ctx(Tool::SendLat)).expect("encodes");
        let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/metrics_send_lat.prom");
        if std::env::var_os("FABDIAG_WRITE_REFERENCE").is_some() {
            std::fs::write(golden, &text).expect("writes the snapshot");
        }
        assert_eq!(text, include_str!("../tests/golden/metrics_send_lat.prom"));
    }

    #[test]
    fn a_failed_run_says_its_outcome_and_keeps_what_it_measured() {
        let bw = RowJson::Bw(BwResultJson {
            size_bytes: 65536,
            iterations: 100,
            ops: Some(100),
            elapsed_ns: 1,
            peer_ops: 100,
            peer_elapsed_ns: 1,
            bw_mb_per_s: 1234.5,
            bw_gbit_per_s: 9.876,
            pkt_rate_mpkt_per_s: 0.0188,
        });
        let text = pair(&doc(vec![bw], Some("runtime")), &ctx(Tool::GpuLoopbackBw)).expect("encodes");
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        let run =
            r#"file="send-lat.prom",tool="gpu_loopback_bw",role="client",provider="tcp",domain="eth0",peer="node2""#;
        assert!(
            lines.contains(&format!("fabdiag_run_success{{{run}}} 0").as_str()),
            "{text}"
        );
        assert!(lines.contains(&format!("fabdiag_run_outcome{{{run},outcome=\"runtime\"}} 1").as_str()));
        assert!(lines.contains(&format!("fabdiag_run_outcome{{{run},outcome=\"ok\"}} 0").as_str()));
        assert!(lines.contains(
            &format!("fabdiag_write_bandwidth_bytes_per_second{{{run},size_bytes=\"65536\"}} 1234500000").as_str()
        ));
        assert!(lines
            .contains(&format!("fabdiag_write_operations_per_second{{{run},size_bytes=\"65536\"}} 18800").as_str()));
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("fabdiag_run_outcome")).count(),
            OUTCOMES.len()
        );
    }

    #[test]
    fn every_tool_has_its_operation() {
        assert_eq!(op(Tool::ReadLat), Op::Read);
        assert_eq!(op(Tool::AtomicBw), Op::Atomic);
        assert_eq!(op(Tool::SendBw), Op::Send);
        assert_eq!(op(Tool::GpuLoopbackBw), Op::Write);
    }
}
