//! The two `PairRunner`s. `FabricRunner` runs the pair tools' own session
//! (`fabdiag_session::Station`, the same choreography as `fabdiag
//! write-bw` and friends) over libfabric, keeping its endpoint between
//! tests. `SimRunner` stands in for a pair test with a fixed pause, for
//! the coordination simulation. Neither prints.

use crate::protocol::{self, PairRole, SideOutcome};
use crate::worker::{Order, PairRunner};
use fabdiag_engine::lat::LatFigure;
use fabdiag_model::Row;
use fabdiag_model::TestSpec;
use fabdiag_proto::Phase;
use fabdiag_session::{Env, Event, Sink, Station};
use fabdiag_sweep_plan::RowFigure;
use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// What a client says first on a pair connection, so a server takes only
/// the client it was ordered to test (never a late one from a past step).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Intro {
    step: u64,
    rank: usize,
}

/// How a pair test did not come back with a report: before it started
/// (no connection, no test configured), or in it (with what it measured
/// and read so far).
enum Fail {
    Before(String),
    Test(fabdiag_session::Failure),
}

pub struct FabricRunner {
    station: Station,
    env: Env,
    listener: TcpListener,
    spec: Option<TestSpec>,
    figure: LatFigure,
}

/// How long a pair's server waits for its client to connect: twice the
/// client's own connect limit (the control connection's silence limit).
const ACCEPT_LIMIT: Duration = Duration::from_secs(2 * fabdiag_proto::SILENCE_LIMIT.as_secs());

impl FabricRunner {
    /// Listens for pair tests on every address, on `port` (0: any).
    pub fn new(env: Env, port: u16) -> std::io::Result<FabricRunner> {
        let listener = fabdiag_proto::listen_any(port)?;
        listener.set_nonblocking(true)?;
        Ok(FabricRunner {
            station: Station::new(),
            env,
            listener,
            spec: None,
            figure: LatFigure::Mean,
        })
    }

    fn accept(&self, order: &Order, deadline: Instant) -> Result<TcpStream, String> {
        // The client connects as soon as it has its order (sent with this
        // one) and gives up after the silence limit; waiting longer would
        // only keep this rank silent after its partner has reported the
        // failure, and rank 0 would take it for the hung one.
        let t0 = Instant::now();
        let deadline = deadline.min(t0 + ACCEPT_LIMIT);
        while let Some(s) = protocol::accept_by(&self.listener, deadline)
            .map_err(|e| format!("cannot accept the pair connection: {e}"))?
        {
            let intro = protocol::recv::<Intro>(&s, Some(Instant::now() + Duration::from_secs(5)));
            if matches!(intro, Ok(i) if i.step == order.step && i.rank == order.peer) {
                return Ok(s);
            }
        }
        Err(format!(
            "rank {} never connected for the pair test (waited {:.0} s)",
            order.peer,
            t0.elapsed().as_secs_f64()
        ))
    }

    fn connect(&self, order: &Order, deadline: Instant) -> Result<TcpStream, String> {
        let addr: SocketAddr = order
            .peer_addr
            .parse()
            .map_err(|_| format!("bad peer address '{}'", order.peer_addr))?;
        let left = deadline.saturating_duration_since(Instant::now());
        let s = TcpStream::connect_timeout(&addr, left.min(fabdiag_proto::SILENCE_LIMIT))
            .map_err(|e| format!("cannot connect to rank {} at {addr}: {e}", order.peer))?;
        protocol::send(
            &s,
            &Intro {
                step: order.step,
                rank: order.me,
            },
        )
        .map_err(|e| format!("cannot introduce itself to rank {}: {e}", order.peer))?;
        Ok(s)
    }
}

/// Times the measuring part of a session: from its run phase to its end.
#[derive(Default)]
struct Timing {
    run: Option<Instant>,
    end: Option<Instant>,
}

impl Sink for Timing {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Phase(Phase::Run) => self.run = Some(Instant::now()),
            Event::End { .. } => self.end = Some(Instant::now()),
            _ => {}
        }
    }
}

impl PairRunner for FabricRunner {
    fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    fn configure(&mut self, test: &serde_json::Value, figure: LatFigure) -> Result<(), String> {
        let spec = TestSpec::from_wire(test.clone()).map_err(|e| format!("rank 0's test: {e}"))?;
        spec.validate().map_err(|e| format!("rank 0's test: {e}"))?;
        self.spec = Some(spec);
        self.figure = figure;
        Ok(())
    }

    fn run(&mut self, order: &Order, deadline: Instant) -> SideOutcome {
        let t0 = Instant::now();
        let mut timing = Timing::default();
        // (a pattern's flow: its timed run starts with the others'; a
        // sweep's pair test takes the rank's environment as it is)
        let timed;
        let env = match order.start_at {
            Some(at) => {
                timed = Env {
                    start_not_before: Some(at),
                    ..self.env.clone()
                };
                &timed
            }
            None => &self.env,
        };
        let result = match self.spec.clone() {
            None => Err(Fail::Before("no test configured".to_string())),
            Some(spec) => match order.role {
                PairRole::Client => self
                    .connect(order, deadline)
                    .map_err(Fail::Before)
                    .and_then(|s| self.station.client(spec, env, s, &mut timing).map_err(Fail::Test)),
                PairRole::Server => self
                    .accept(order, deadline)
                    .map_err(Fail::Before)
                    .and_then(|s| self.station.serve(&spec, &self.env, s, &mut timing).map_err(Fail::Test)),
            },
        };
        let stats = self.station.stats();
        let mut out = SideOutcome {
            elapsed_s: t0.elapsed().as_secs_f64(),
            measure_s: match (timing.run, timing.end) {
                (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
                _ => 0.0,
            },
            opens: stats.opens,
            open_s: stats.open_time.as_secs_f64(),
            ..SideOutcome::default()
        };
        let counters = match &result {
            Ok(report) => report.counters.as_ref(),
            Err(Fail::Test(f)) => f.counters.as_deref(),
            Err(Fail::Before(_)) => None,
        };
        if let Some(c) = counters {
            out.counters_read = Some(c.local.what_was_read());
            out.noted = c.local.noted();
        }
        match result {
            Ok(report) => {
                out.rows = row_figures(&report.rows, self.figure).collect();
                out.value = out.rows.last().map(|r| r.value);
                if out.value.is_none() {
                    out.error = Some("the test produced no figure".into());
                }
            }
            Err(Fail::Before(e)) => out.error = Some(e),
            Err(Fail::Test(f)) => out.error = Some(f.to_string()),
        }
        out
    }
}

/// Each row's figure: its bandwidth in MB/s, or its latency figure
/// (`figure`: the mean unless `--figure`) in µs.
fn row_figures(rows: &[Row], figure: LatFigure) -> impl Iterator<Item = RowFigure> + '_ {
    rows.iter().filter_map(move |r| {
        let value = match r.lat_stats() {
            Some(s) => Some(s.figure_ns(figure) as f64 / 1000.0),
            None => r.bw_mb_s(),
        };
        value.map(|value| RowFigure { size: r.size(), value })
    })
}

/// A pair test replaced by a pause of fixed length: for showing the
/// coordination scales, and what a report looks like, without a fabric.
#[derive(Clone, Debug, Default)]
pub struct SimRunner {
    pub pause: Duration,
    /// Ranks, and pairs (low rank first), whose figures are multiplied by
    /// `slow_factor`: a simulated slow node or link.
    pub slow_nodes: Vec<usize>,
    pub slow_links: Vec<(usize, usize)>,
    pub slow_factor: f64,
    /// The test's largest size, once configured: each outcome carries a
    /// row for it, as a real pair test's does (and takes the memory it
    /// takes on rank 0).
    pub size: Option<u64>,
}

impl PairRunner for SimRunner {
    fn port(&self) -> u16 {
        1
    }
    fn configure(&mut self, test: &serde_json::Value, _: LatFigure) -> Result<(), String> {
        self.size = TestSpec::from_wire(test.clone()).ok().map(|s| s.max_size);
        Ok(())
    }
    fn run(&mut self, order: &Order, _: Instant) -> SideOutcome {
        let t0 = Instant::now();
        std::thread::sleep(self.pause);
        // a steady figure with a little deterministic spread
        let (a, b) = (order.me.min(order.peer), order.me.max(order.peer));
        let spread = ((a * 7919 + b * 104_729) % 100) as f64;
        let slow = self.slow_nodes.contains(&a) || self.slow_nodes.contains(&b) || self.slow_links.contains(&(a, b));
        let factor = if slow { self.slow_factor } else { 1.0 };
        let value = (10_000.0 + spread) * factor;
        SideOutcome {
            value: Some(value),
            rows: self.size.map(|size| RowFigure { size, value }).into_iter().collect(),
            elapsed_s: t0.elapsed().as_secs_f64(),
            measure_s: t0.elapsed().as_secs_f64(),
            ..SideOutcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_engine::bw::{Measure, SizeResult};
    use fabdiag_engine::lat::{LatResult, Recorder};

    fn lat_row(size: u64, samples: impl IntoIterator<Item = u64>) -> Row {
        let mut r = Recorder::new(false);
        samples.into_iter().for_each(|ns| r.add(ns));
        Row::Lat(LatResult {
            size,
            iterations: r.count(),
            warmup: 0,
            peer_ops: 0,
            stats: r.stats(),
            samples: None,
        })
    }

    #[test]
    fn a_latency_pair_is_judged_by_the_figure_asked_for_and_a_bandwidth_pair_by_its_bandwidth() {
        // 1..=999 ns and one 100 µs outlier: mean 0.599 µs, p50 0.5, p99 0.99, max 100
        let rows = [lat_row(8, (1..=999).chain([100_000])), lat_row(16, [2_000, 4_000])];
        let got = |f| row_figures(&rows, f).map(|r| (r.size, r.value)).collect::<Vec<_>>();
        assert_eq!(got(LatFigure::Mean), [(8, 0.599), (16, 3.0)]);
        assert_eq!(got(LatFigure::P50), [(8, 0.5), (16, 2.0)]);
        assert_eq!(got(LatFigure::P99), [(8, 0.99), (16, 4.0)]);
        assert_eq!(got(LatFigure::Max), [(8, 100.0), (16, 4.0)]);
        let bw = [Row::Bw(SizeResult {
            size: 65536,
            iterations: 10,
            own: Measure::default(),
            peer: Measure::default(),
            initiated: true,
            bw_mb_s: 1234.5,
            pkt_rate_mpkt_s: 0.0,
        })];
        // (the figure is a latency's: bandwidth pairs are judged by MB/s)
        let got: Vec<_> = row_figures(&bw, LatFigure::P99).map(|r| (r.size, r.value)).collect();
        assert_eq!(got, [(65536, 1234.5)]);
    }
}
