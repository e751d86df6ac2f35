//! What every rank derives from the sweep's options alike: the metric,
//! the outlier rules, the limits, each round's time limit and the
//! options the report keeps (`Setup`), with the coordinator's and a
//! worker's configuration made from them; and which fabdiag and
//! libfabric measured (`Versions`). Runs nothing.

use crate::version::VERSION;
use fabdiag_model::Threshold;
use fabdiag_options::sweep::{OutlierReference, SweepOptions};
use fabdiag_options::Invocation;
use fabdiag_sweep::coordinator::CoordConfig;
use fabdiag_sweep::worker::WorkerConfig;
use fabdiag_sweep_judge::analysis::{Reference, Rules};
use fabdiag_sweep_judge::{Limits, Metric};
use fabdiag_sweep_plan::folder::RunOptions;
use fabdiag_sweep_plan::PairRecord;
use fabdiag_topology::Plan;
use std::sync::Arc;
use std::time::Duration;

/// The one line a sweep's failure is said in, and its exit code.
pub(super) fn fail(prog: &str, code: u8, msg: &str) -> u8 {
    tell!("{prog}: {msg}");
    code
}

pub(super) fn reference(r: OutlierReference) -> Reference {
    match r {
        OutlierReference::Median => Reference::Median,
        OutlierReference::Best => Reference::Best,
    }
}

/// `--min-bw` or `--max-lat` as the sweep's limits.
pub(super) fn limits_of(t: Threshold) -> Limits {
    match t {
        Threshold::MinBw(v) => Limits {
            min_bw_mb_s: Some(v),
            max_lat_us: None,
        },
        // (no sweep runs gpu-loopback-bw; the unit is converted anyway)
        Threshold::MinGbit(v) => Limits {
            min_bw_mb_s: Some(v * 1000.0 / 8.0),
            max_lat_us: None,
        },
        Threshold::MaxLat(v) => Limits {
            min_bw_mb_s: None,
            max_lat_us: Some(v),
        },
    }
}

/// The fabdiag and libfabric that measured a sweep.
pub(super) struct Versions {
    pub(super) fabdiag: String,
    pub(super) libfabric: Option<String>,
}

impl Versions {
    /// This fabdiag, and the libfabric it loaded (None: none was used).
    pub(super) fn here(libfabric: Option<String>) -> Versions {
        Versions {
            fabdiag: VERSION.into(),
            libfabric,
        }
    }
}

/// What every rank derives from the options alike.
#[derive(Clone)]
pub(super) struct Setup {
    pub(super) metric: Metric,
    pub(super) rules: Rules,
    pub(super) limits: Limits,
    pub(super) pair_timeout: Duration,
    pub(super) options: RunOptions,
    pub(super) test: serde_json::Value,
    /// A pattern's victim's test and what it measures (`--victim`).
    pub(super) victim: Option<(serde_json::Value, Metric)>,
    /// What the fabric's map (`--topology`) is made of, on the rank that
    /// judges (`with_map`); the map itself once the ranks have joined.
    pub(super) map: Option<Arc<Plan>>,
}

impl Setup {
    pub(super) fn new(o: &SweepOptions, inv: &Invocation, victim: Option<&fabdiag_model::TestSpec>) -> Setup {
        let spec = &inv.spec;
        let metric = Metric::of(spec, o.figure);
        let rules = Rules {
            fraction: o.fraction,
            reference: reference(o.reference),
            z: o.score,
            node_fraction: o.node_fraction,
        };
        let limits = inv.threshold.map(limits_of).unwrap_or_default();
        // a round gets the whole of what its pair test may take on a link
        // that is slow but works (a duration run: its duration per size;
        // an iteration run: its data at 100 MB/s, 1 ms an iteration and
        // 10 µs an operation: TestSpec::longest_run),
        // and a minute for set-up and stragglers. A flat minute made every
        // healthy rank of a sweep that moves more than a minute of data
        // "stopped answering".
        let default_timeout = Duration::from_secs(60).saturating_add(spec.longest_run());
        let pair_timeout = o.pair_timeout_s.map_or(default_timeout, Duration::from_secs);
        let test = spec.to_wire().unwrap_or(serde_json::Value::Null);
        let memory = |gpu: bool| Some(if gpu { "GPU" } else { "system" }.to_string());
        let mut options = RunOptions {
            tool: Some(o.tool.subcommand().into()),
            tool_options: Some(o.tool_args.clone()),
            retest: Some(o.retest as u64),
            rails: Some(o.rails as u64),
            join_timeout_s: Some(o.join_timeout_s),
            pair_timeout_s: Some(pair_timeout.as_secs()),
            test: Some(test.clone()),
            // the figure depends on these too, and the test above does not
            // hold them (a baseline of another provider or memory is refused)
            provider: Some(serde_json::json!(inv.own.provider)),
            tx_memory: memory(inv.gpu.tx.is_some()),
            rx_memory: memory(inv.gpu.rx.is_some()),
            // what a latency pair is judged by (a report made from the
            // folder alone reads it back)
            figure: spec.tool.is_latency().then(|| o.figure.name().into()),
            ..Default::default()
        };
        // (judged by its percentiles, not by --figure, which is the pairs')
        let victim = victim.map(|v| {
            (
                v.to_wire().unwrap_or(serde_json::Value::Null),
                Metric::of(v, Default::default()),
            )
        });
        options.victim_test = victim.as_ref().map(|(t, _)| t.clone());
        Setup {
            metric,
            rules,
            limits,
            pair_timeout,
            options,
            test,
            victim,
            map: None,
        }
    }

    /// This setup with `--topology`'s map read; a map that cannot be
    /// used is said once, and the sweep goes on judging pairs and nodes
    /// only (nothing it measures depends on the map).
    pub(super) fn with_map(mut self, prog: &str, o: &SweepOptions) -> Setup {
        if let Err(m) = self.read_map(o) {
            tell!("{prog}: {m}; the sweep goes on without the map (no element of the fabric is judged)");
        }
        self
    }

    /// `--topology`'s map read into this setup, or why it could not be.
    pub(super) fn read_map(&mut self, o: &SweepOptions) -> Result<(), String> {
        if o.topology.is_empty() {
            return Ok(());
        }
        self.map = Some(Arc::new(crate::fabric_map::plan("--topology", &o.topology, true)?));
        Ok(())
    }

    pub(super) fn coord_config(&self, o: &SweepOptions, size: usize, earlier: Vec<PairRecord>) -> CoordConfig {
        CoordConfig {
            size,
            rails: o.rails,
            test: self.test.clone(),
            figure: o.figure,
            version: VERSION.into(),
            join_timeout: Duration::from_secs(o.join_timeout_s),
            step_timeout: self.pair_timeout,
            better: self.metric.better,
            rules: self.rules,
            retest: o.retest,
            earlier,
            auth: None,
            pattern: o.pattern.clone(),
            victim: self.victim.as_ref().map(|(test, _)| {
                let (client, server) = o.victim_pair(size);
                fabdiag_sweep::coordinator::Victim {
                    pair: fabdiag_sweep_plan::Pair { client, server },
                    test: test.clone(),
                }
            }),
            map: self.map.clone(),
            flows: o.flows,
        }
    }

    pub(super) fn worker_config(
        &self,
        o: &SweepOptions,
        rank: usize,
        size: usize,
        coordinator: String,
    ) -> WorkerConfig {
        WorkerConfig {
            rank,
            size,
            host: hostname(),
            device: None,
            gpu: None,
            coordinator,
            version: VERSION.into(),
            join_timeout: Duration::from_secs(o.join_timeout_s),
            idle_limit: self.pair_timeout + Duration::from_secs(30),
            step_timeout: self.pair_timeout,
            lifeline: None,
            auth: None,
            // (read by the rank itself before it joins, `--topology lldp`)
            lldp: None,
        }
    }
}

pub(super) fn hostname() -> String {
    std::env::var("FABDIAG_NODE_NAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
