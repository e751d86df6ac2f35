//! The two `PairRunner`s. `FabricRunner` runs the pair tools' own session
//! (`fabdiag_session::Station`, the same choreography as `fabdiag
//! write-bw` and friends) over libfabric, keeping its endpoint between
//! tests; a pattern step's flows run at once, each on a thread with a
//! station of its own. `SimRunner` stands in for a pair test with a fixed
//! pause, for the coordination simulation. Neither prints.

use crate::protocol::{self, PairRole, SideOutcome};
use crate::worker::{Order, PairRunner};
use fabdiag_engine::lat::LatFigure;
use fabdiag_model::Row;
use fabdiag_model::TestSpec;
use fabdiag_proto::Phase;
use fabdiag_session::{Env, Event, Sink, Station, StationStats};
use fabdiag_sweep_plan::{LatFigures, RowFigure};
use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a client says first on a pair connection, so a server takes only
/// the client it was ordered to test (never a late one from a past step).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Intro {
    step: u64,
    rank: usize,
}

pub struct FabricRunner {
    station: Station,
    env: Env,
    listener: TcpListener,
    spec: Option<TestSpec>,
    /// The test a pattern's victim flow runs, when it has one.
    victim: Option<TestSpec>,
    figure: LatFigure,
    /// A pattern step's flows beyond one each run on a lane of their own,
    /// kept between steps as the station's endpoint is.
    lanes: Vec<Lane>,
    /// What the station and each lane's station have opened so far.
    main_stats: StationStats,
    lane_stats: Vec<StationStats>,
}

/// One pair test to run: what, as which side, on which connection.
struct Job {
    spec: TestSpec,
    env: Env,
    role: PairRole,
    stream: TcpStream,
    figure: LatFigure,
    /// When the order came.
    t0: Instant,
}

impl Job {
    /// Runs on `station`: this side's outcome, and the station's counts.
    fn run(self, station: &mut Station) -> (SideOutcome, StationStats) {
        let mut timing = Timing::default();
        let result = match self.role {
            PairRole::Client => station.client(self.spec, &self.env, self.stream, &mut timing),
            PairRole::Server => station.serve(&self.spec, &self.env, self.stream, &mut timing),
        };
        let mut out = SideOutcome {
            elapsed_s: self.t0.elapsed().as_secs_f64(),
            measure_s: match (timing.run, timing.end) {
                (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
                _ => 0.0,
            },
            ..SideOutcome::default()
        };
        let counters = match &result {
            Ok(report) => report.counters.as_ref(),
            Err(f) => f.counters.as_deref(),
        };
        if let Some(c) = counters {
            out.counters_read = Some(c.local.what_was_read());
            out.noted = c.local.noted();
        }
        match result {
            Ok(report) => {
                out.lat = report.rows.last().and_then(|r| r.lat_stats()).map(|s| LatFigures {
                    mean_us: s.mean_ns as f64 / 1000.0,
                    p50_us: s.p50_ns as f64 / 1000.0,
                    p99_us: s.p99_ns as f64 / 1000.0,
                    p999_us: s.p999_ns as f64 / 1000.0,
                    max_us: s.max_ns as f64 / 1000.0,
                });
                out.rows = row_figures(&report.rows, self.figure).collect();
                out.value = out.rows.last().map(|r| r.value);
                if out.value.is_none() {
                    out.error = Some("the test produced no figure".into());
                }
            }
            Err(f) => out.error = Some(f.to_string()),
        }
        (out, station.stats())
    }
}

/// A thread with a station of its own (a station holds libfabric
/// objects, which stay on the thread that opened them), running the jobs
/// it is given one at a time.
struct Lane {
    jobs: mpsc::Sender<Job>,
    done: mpsc::Receiver<(SideOutcome, StationStats)>,
}

impl Lane {
    fn start() -> Lane {
        let (jobs, take) = mpsc::channel::<Job>();
        let (tell, done) = mpsc::channel();
        std::thread::spawn(move || {
            let mut station = Station::new();
            while let Ok(job) = take.recv() {
                if tell.send(job.run(&mut station)).is_err() {
                    break;
                }
            }
        });
        Lane { jobs, done }
    }

    /// Hands it `job` with rank `peer`, or says its thread is gone.
    fn give(&self, job: Job, peer: usize) -> Result<(), String> {
        self.jobs.send(job).map_err(|_| thread_failed(peer))
    }

    /// Its job's outcome by `deadline`, or why none came: the job still
    /// running at the limit, or the thread gone (a panic, whose message
    /// the default hook has written to this rank's standard error).
    fn wait(&self, deadline: Instant, peer: usize) -> Result<(SideOutcome, StationStats), String> {
        self.done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => {
                    format!("the flow with rank {peer} did not end within the step's limit")
                }
                mpsc::RecvTimeoutError::Disconnected => thread_failed(peer),
            })
    }
}

/// A lane's thread gone (a panic, whose message the default hook has
/// written to this rank's standard error): its flow with `peer` ends
/// without a result, whether it was being given or awaited.
fn thread_failed(peer: usize) -> String {
    format!(
        "the flow with rank {peer} ended without a result: its thread failed \
         (an internal error; this rank's standard error says where)"
    )
}

/// A pair test that never started, and why.
fn failed_before(error: String, t0: Instant) -> SideOutcome {
    SideOutcome {
        error: Some(error),
        elapsed_s: t0.elapsed().as_secs_f64(),
        ..SideOutcome::default()
    }
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
            victim: None,
            figure: LatFigure::Mean,
            lanes: Vec::new(),
            main_stats: StationStats::default(),
            lane_stats: Vec::new(),
        })
    }

    /// `out` with the endpoints this rank has opened so far, all of its
    /// stations together.
    fn with_opens(&self, mut out: SideOutcome) -> SideOutcome {
        let all = std::iter::once(&self.main_stats).chain(&self.lane_stats);
        out.opens = all.clone().map(|s| s.opens).sum();
        out.open_s = all.map(|s| s.open_time.as_secs_f64()).sum();
        out
    }

    fn accept(&self, order: &Order, deadline: Instant) -> Result<TcpStream, String> {
        self.accept_each(order.step, &[order.peer], deadline)
            .pop()
            .unwrap_or_else(|| Err("no connection was awaited".into()))
    }

    /// The connection of each of `peers` for `step` (in their order),
    /// taken as they come; the others' are turned away.
    fn accept_each(&self, step: u64, peers: &[usize], deadline: Instant) -> Vec<Result<TcpStream, String>> {
        // A client connects as soon as it has its order (sent with this
        // one) and gives up after the silence limit; waiting longer would
        // only keep this rank silent after its partner has reported the
        // failure, and rank 0 would take it for the hung one.
        let t0 = Instant::now();
        let deadline = deadline.min(t0 + ACCEPT_LIMIT);
        let mut got: Vec<Option<TcpStream>> = peers.iter().map(|_| None).collect();
        let mut left = peers.len();
        let mut broken = None;
        while left > 0 {
            let s = match protocol::accept_by(&self.listener, deadline) {
                Ok(Some(s)) => s,
                Ok(None) => break,
                Err(e) => {
                    broken = Some(format!("cannot accept the pair connection: {e}"));
                    break;
                }
            };
            let intro = protocol::recv::<Intro>(&s, Some(Instant::now() + Duration::from_secs(5)));
            let Ok(Intro { step: st, rank }) = intro else { continue };
            let slot = (0..peers.len()).find(|&k| peers[k] == rank && got[k].is_none());
            if let (true, Some(k)) = (st == step, slot) {
                got[k] = Some(s);
                left -= 1;
            }
        }
        let waited = t0.elapsed().as_secs_f64();
        got.into_iter()
            .zip(peers)
            .map(|(s, peer)| {
                s.ok_or_else(|| match &broken {
                    Some(e) => e.clone(),
                    None => format!("rank {peer} never connected for the pair test (waited {waited:.0} s)"),
                })
            })
            .collect()
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

    fn configure(
        &mut self,
        test: &serde_json::Value,
        figure: LatFigure,
        victim: Option<&serde_json::Value>,
    ) -> Result<(), String> {
        let read = |what: &str, t: &serde_json::Value| {
            let spec = TestSpec::from_wire(t.clone()).map_err(|e| format!("rank 0's {what}: {e}"))?;
            spec.validate().map_err(|e| format!("rank 0's {what}: {e}"))?;
            Ok::<_, String>(spec)
        };
        self.spec = Some(read("test", test)?);
        self.victim = victim.map(|v| read("victim test", v)).transpose()?;
        self.figure = figure;
        Ok(())
    }

    fn run(&mut self, order: &Order, deadline: Instant) -> SideOutcome {
        let t0 = Instant::now();
        let Some(spec) = self.spec.clone() else {
            return failed_before("no test configured".into(), t0);
        };
        let stream = match order.role {
            PairRole::Client => self.connect(order, deadline),
            PairRole::Server => self.accept(order, deadline),
        };
        let out = match stream {
            Err(e) => failed_before(e, t0),
            Ok(stream) => {
                let job = Job {
                    spec,
                    env: self.env.clone(),
                    role: order.role,
                    stream,
                    figure: self.figure,
                    t0,
                };
                let (out, stats) = job.run(&mut self.station);
                self.main_stats = stats;
                out
            }
        };
        self.with_opens(out)
    }

    fn run_flows(&mut self, orders: &[Order], deadline: Instant) -> Vec<SideOutcome> {
        let t0 = Instant::now();
        let Some(spec) = self.spec.clone() else {
            return orders
                .iter()
                .map(|_| failed_before("no test configured".into(), t0))
                .collect();
        };
        // every connection first: clients dial (their peers' kernels
        // accept at once), then this rank's servers take theirs, so no
        // rank waits on another's order of work
        let mut streams: Vec<Result<TcpStream, String>> = orders
            .iter()
            .map(|o| match o.role {
                PairRole::Client => self.connect(o, deadline),
                PairRole::Server => Err(String::new()),
            })
            .collect();
        let serving: Vec<usize> = (0..orders.len())
            .filter(|&i| orders[i].role == PairRole::Server)
            .collect();
        let peers: Vec<usize> = serving.iter().map(|&i| orders[i].peer).collect();
        let step = orders.first().map_or(0, |o| o.step);
        for (k, s) in self.accept_each(step, &peers, deadline).into_iter().enumerate() {
            streams[serving[k]] = s;
        }
        while self.lanes.len() < orders.len() {
            self.lanes.push(Lane::start());
        }
        let mut started = Vec::with_capacity(orders.len());
        for ((o, s), lane) in orders.iter().zip(streams).zip(&self.lanes) {
            let spec = match (o.victim, &self.victim) {
                (false, _) => Ok(spec.clone()),
                (true, Some(v)) => Ok(v.clone()),
                (true, None) => Err("rank 0 gave no victim test".to_string()),
            };
            started.push(
                spec.and_then(|spec| s.map(|stream| (spec, stream)))
                    .and_then(|(spec, stream)| {
                        lane.give(
                            Job {
                                spec,
                                env: Env {
                                    start_not_before: o.start_at.filter(|_| o.role == PairRole::Client),
                                    ..self.env.clone()
                                },
                                role: o.role,
                                stream,
                                figure: self.figure,
                                t0,
                            },
                            o.peer,
                        )
                    }),
            );
        }
        let mut out = Vec::with_capacity(orders.len());
        let mut broken = Vec::new();
        for (i, s) in started.into_iter().enumerate() {
            out.push(match s {
                Err(e) => failed_before(e, t0),
                Ok(()) => match self.lanes[i].wait(deadline, orders[i].peer) {
                    Ok((o, stats)) => {
                        self.lane_stats.resize(self.lanes.len(), StationStats::default());
                        self.lane_stats[i] = stats;
                        o
                    }
                    Err(why) => {
                        broken.push(i);
                        failed_before(why, t0)
                    }
                },
            });
        }
        // a lane held past the limit is left to end on its own
        for i in broken.into_iter().rev() {
            self.lanes.remove(i);
            if i < self.lane_stats.len() {
                self.lane_stats.remove(i);
            }
        }
        out.into_iter().map(|o| self.with_opens(o)).collect()
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
    /// Pairs slow because the way their flow takes through the fabric's
    /// map crosses a slow element (`--sim-slow` with `--topology`).
    pub slow_ways: Option<SlowWays>,
    pub slow_factor: f64,
    /// The test's largest size, once configured: each outcome carries a
    /// row for it, as a real pair test's does (and takes the memory it
    /// takes on rank 0).
    pub size: Option<u64>,
    /// The victim's test measures latency (else bandwidth, as the pairs).
    pub victim_lat: bool,
}

/// Whether flow `flow` of ranks a and b crosses a slow element.
#[derive(Clone)]
pub struct SlowWays(pub std::sync::Arc<dyn Fn(usize, usize, u64) -> bool + Send + Sync>);

impl std::fmt::Debug for SlowWays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SlowWays")
    }
}

impl PairRunner for SimRunner {
    fn port(&self) -> u16 {
        1
    }
    fn configure(
        &mut self,
        test: &serde_json::Value,
        _: LatFigure,
        victim: Option<&serde_json::Value>,
    ) -> Result<(), String> {
        self.size = TestSpec::from_wire(test.clone()).ok().map(|s| s.max_size);
        self.victim_lat = victim
            .and_then(|v| TestSpec::from_wire(v.clone()).ok())
            .is_some_and(|s| s.tool.is_latency());
        Ok(())
    }
    fn run(&mut self, order: &Order, _: Instant) -> SideOutcome {
        let t0 = Instant::now();
        std::thread::sleep(self.pause);
        self.figure(order, 0, t0)
    }
    fn run_flows(&mut self, orders: &[Order], _: Instant) -> Vec<SideOutcome> {
        let t0 = Instant::now();
        std::thread::sleep(self.pause);
        // the k-th flow with a peer takes its own way (`--flows`)
        let mut nth: std::collections::HashMap<usize, u64> = std::collections::HashMap::new();
        orders
            .iter()
            .map(|o| {
                let k = nth.entry(o.peer).or_default();
                *k += 1;
                self.figure(o, *k - 1, t0)
            })
            .collect()
    }
}

impl SimRunner {
    /// A steady figure for flow `flow` of `order`'s pair with a little
    /// deterministic spread, slowed when the pair or one of its ranks is
    /// made slow, or the way that flow takes crosses a slow element.
    fn figure(&self, order: &Order, flow: u64, t0: Instant) -> SideOutcome {
        let (a, b) = (order.me.min(order.peer), order.me.max(order.peer));
        let spread = ((a * 7919 + b * 104_729) % 100) as f64;
        // (a re-test alone takes the way its round's flow did)
        let slow = self.slow_nodes.contains(&a)
            || self.slow_nodes.contains(&b)
            || self.slow_links.contains(&(a, b))
            || self.slow_ways.as_ref().is_some_and(|w| (w.0)(a, b, flow));
        let factor = if slow { self.slow_factor } else { 1.0 };
        let value = (10_000.0 + spread) * factor;
        // a latency victim: a steady latency (µs), whatever load is beside it
        if order.victim && self.victim_lat {
            let us = 2.0 / factor;
            return SideOutcome {
                value: Some(us),
                lat: Some(LatFigures {
                    mean_us: us,
                    p50_us: us,
                    p99_us: 1.5 * us,
                    p999_us: 2.0 * us,
                    max_us: 3.0 * us,
                }),
                elapsed_s: t0.elapsed().as_secs_f64(),
                ..SideOutcome::default()
            };
        }
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
    fn a_lane_whose_thread_is_gone_is_told_from_one_still_running_at_the_limit() {
        let (jobs, _take) = mpsc::channel::<Job>();
        let (tell, done) = mpsc::channel();
        let lane = Lane { jobs, done };
        let soon = Instant::now() + Duration::from_millis(20);
        let running = lane.wait(soon, 3).err().unwrap_or_default();
        assert_eq!(running, "the flow with rank 3 did not end within the step's limit");
        // (a lane's thread that panics drops its sender the same way)
        drop(tell);
        let gone = lane
            .wait(Instant::now() + Duration::from_secs(60), 3)
            .err()
            .unwrap_or_default();
        assert!(
            gone.starts_with("the flow with rank 3 ended without a result"),
            "{gone}"
        );
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
