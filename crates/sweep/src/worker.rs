//! One rank's side of the sweep: join the coordinator (retrying until the
//! join deadline, since rank 0 may start last), take the test, then obey
//! orders until `Finish`: run a pair test as client or server through a
//! `PairRunner`, or stay idle, and answer each; a rank told to stop
//! obeys one more order, then answers the next one so and leaves. A rank
//! that cannot start at all says why in its join (`tell_unable`) and
//! leaves. Every wait is bounded: a coordinator that goes silent for
//! longer than the idle limit ends this rank with an error. A `Lifeline`
//! lets another thread answer and leave for the rank when a provider call
//! holds its own thread. Never prints.

use crate::error::SweepError;
use crate::protocol::{self, PairRole, ReadFail, SideOutcome, ToCoordinator, ToRank, SWEEP_PROTOCOL};
use fabdiag_engine::lat::LatFigure;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Runs pair tests for a worker: the real one over libfabric, or a
/// stand-in of fixed duration for the coordination simulation.
pub trait PairRunner {
    /// The port this rank's pair tests listen on.
    fn port(&self) -> u16;
    /// The coordinator's test parameters, the latency figure a pair is
    /// judged by, and a pattern's victim's test; an error refuses them.
    fn configure(
        &mut self,
        test: &serde_json::Value,
        figure: LatFigure,
        victim: Option<&serde_json::Value>,
    ) -> Result<(), String>;
    /// One pair test; must return by `deadline`.
    fn run(&mut self, order: &Order, deadline: Instant) -> SideOutcome;
    /// A pattern step's flows, all at once: one outcome per order, in
    /// order; must return by `deadline`.
    fn run_flows(&mut self, orders: &[Order], deadline: Instant) -> Vec<SideOutcome>;
}

/// A pair test as ordered.
#[derive(Clone, Debug, PartialEq)]
pub struct Order {
    pub step: u64,
    pub role: PairRole,
    pub me: usize,
    pub peer: usize,
    pub peer_addr: String,
    /// When the client starts its timed run, at the soonest (a pattern's
    /// flows start together).
    pub start_at: Option<Instant>,
    /// A pattern's victim flow: it runs the victim's test.
    pub victim: bool,
}

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub rank: usize,
    pub size: usize,
    pub host: String,
    /// The domain (NIC) this rank uses, reported in its join.
    pub device: Option<String>,
    /// Where its buffers are, when on a GPU ("GPU 1"), reported likewise.
    pub gpu: Option<String>,
    pub coordinator: String,
    pub version: String,
    pub join_timeout: Duration,
    /// The longest the coordinator may say nothing (a step's limit and
    /// some): then it is taken as gone.
    pub idle_limit: Duration,
    /// One pair test's limit.
    pub step_timeout: Duration,
    /// Where another thread can end this rank's part (None: nowhere).
    pub lifeline: Option<Lifeline>,
    /// How this rank proves who it is to rank 0 before it joins (`auth`).
    pub auth: Option<fabdiag_proto::auth::Auth>,
    /// With `--topology lldp`: this rank's `lldpctl -f json`, or why not,
    /// sent with its join.
    pub lldp: Option<Result<String, String>>,
}

/// Lets another thread end this rank's part in the sweep while the
/// rank's own thread is held inside a provider call for good (psm3 holds
/// one whose peer is gone; the binary's guard finds it): it answers the
/// pair test in progress with the error and closes the connection to
/// rank 0, so rank 0 hears why at once and goes on without this rank.
/// Clones share one connection and state.
#[derive(Clone, Default)]
pub struct Lifeline(Arc<Mutex<Line>>);

#[derive(Default)]
struct Line {
    conn: Option<TcpStream>,
    /// The pair test in progress: its step and peer.
    pair: Option<(u64, usize)>,
    cut: bool,
}

impl Lifeline {
    fn line(&self) -> MutexGuard<'_, Line> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells rank 0 this rank leaves, for the reason `reason` makes of the
    /// pair test in progress (its step and peer; None: none), which also
    /// answers that test, and closes the connection; returns the reason.
    pub fn cut(&self, reason: impl FnOnce(Option<(u64, usize)>) -> String) -> String {
        let mut line = self.line();
        line.cut = true;
        let pair = line.pair.take();
        let reason = reason(pair);
        if let Some(conn) = line.conn.take() {
            let leave = ToCoordinator::Leave {
                step: pair.map(|(step, _)| step),
                reason: reason.clone(),
            };
            let _ = protocol::send(&conn, &leave);
            let _ = conn.shutdown(Shutdown::Both);
        }
        reason
    }

    fn attach(&self, conn: &TcpStream) -> Result<(), SweepError> {
        let clone = conn.try_clone().map_err(|e| SweepError::Lost(e.to_string()))?;
        self.line().conn = Some(clone);
        Ok(())
    }

    fn begin(&self, step: u64, peer: usize) {
        self.line().pair = Some((step, peer));
    }

    /// This rank's own message to rank 0, never mixed with `cut`'s: sent
    /// under the same lock, and not at all once cut.
    fn send(&self, conn: &TcpStream, msg: &ToCoordinator) -> Result<(), SweepError> {
        let mut line = self.line();
        if line.cut {
            return Err(SweepError::Lost(
                "this rank gave up its part: a provider call held it".into(),
            ));
        }
        line.pair = None;
        protocol::send(conn, msg).map_err(|e| SweepError::Lost(e.to_string()))
    }
}

impl std::fmt::Debug for Lifeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lifeline")
    }
}

/// The addresses of `HOST:PORT`, `[IPV6]:PORT` included. A link-local
/// address names its interface (`[fe80::1%eth0]:47000`), which std's
/// parser takes only as a number; the resolver (getaddrinfo) takes the
/// name once the brackets are off, as the pair tools' `fe80::1%eth0` is.
fn resolve(coordinator: &str) -> std::io::Result<Vec<SocketAddr>> {
    match coordinator.to_socket_addrs() {
        Ok(addrs) => Ok(addrs.collect()),
        Err(e) => {
            let bracketed = coordinator
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.strip_prefix('[')?.strip_suffix(']')?, p.parse::<u16>().ok()?)));
            match bracketed {
                Some(host_port) => Ok(host_port.to_socket_addrs()?.collect()),
                None => Err(e),
            }
        }
    }
}

/// The interface (scope id) of a link-local IPv6 address, as this rank
/// reaches rank 0 through it; None for any other address.
fn link_scope(a: SocketAddr) -> Option<u32> {
    match a {
        SocketAddr::V6(v6) if v6.ip().is_unicast_link_local() && v6.scope_id() != 0 => Some(v6.scope_id()),
        _ => None,
    }
}

/// A peer's address as this rank must dial it. Rank 0 names a link-local
/// peer without an interface, since its own interface numbers mean nothing
/// on another host; a link-local address is reachable only on the link
/// this rank reached rank 0 by, so that interface (`scope`) is the one.
fn scoped(peer_addr: String, scope: Option<u32>) -> String {
    match (peer_addr.parse::<SocketAddr>(), scope) {
        (Ok(SocketAddr::V6(mut v6)), Some(id)) if v6.ip().is_unicast_link_local() && v6.scope_id() == 0 => {
            v6.set_scope_id(id);
            v6.to_string()
        }
        _ => peer_addr,
    }
}

/// What the rank did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerEnd {
    pub tests: u64,
    pub failed: u64,
}

/// The connection to rank 0 (retried up to the join timeout), unbuffered
/// and watched by the kernel like rank 0's end (`protocol::watch_link`).
fn connect(cfg: &WorkerConfig, stopped: &dyn Fn() -> Option<String>) -> Result<TcpStream, SweepError> {
    let addrs = resolve(&cfg.coordinator).map_err(|e| SweepError::Resolve {
        addr: cfg.coordinator.clone(),
        reason: e.to_string(),
    })?;
    let start = Instant::now();
    let mut last = String::from("no address");
    while start.elapsed() < cfg.join_timeout {
        if let Some(why) = stopped() {
            return Err(SweepError::Stopped(why));
        }
        for a in &addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(1)) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    // (without it, a coordinator cut off is still found by
                    // the idle limit)
                    let _ = protocol::watch_link(&s);
                    return Ok(s);
                }
                Err(e) => last = e.to_string(),
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(SweepError::Unreachable {
        addr: cfg.coordinator.clone(),
        waited: cfg.join_timeout,
        reason: last,
    })
}

/// This rank's join: who it is, where its pair tests listen, and, when it
/// cannot take part, why.
fn join(cfg: &WorkerConfig, pair_port: u16, unable: Option<String>, nonce: Option<String>) -> ToCoordinator {
    ToCoordinator::Join {
        protocol: SWEEP_PROTOCOL,
        version: cfg.version.clone(),
        rank: cfg.rank,
        size: cfg.size,
        host: cfg.host.clone(),
        device: cfg.device.clone(),
        gpu: cfg.gpu.clone(),
        pair_port,
        unable,
        auth_method: cfg.auth.as_ref().map(|a| a.method()).unwrap_or_default(),
        nonce,
        lldp: cfg.lldp.clone(),
    }
}

/// Sends this rank's join and, authenticating, proves itself to rank 0: rank 0's
/// first answer when it came before any challenge (a refusal), else None.
fn send_join(
    cfg: &WorkerConfig,
    s: &TcpStream,
    send: impl FnOnce(&ToCoordinator) -> Result<(), SweepError>,
    pair_port: u16,
    unable: Option<String>,
    deadline: Instant,
) -> Result<Option<ToRank>, SweepError> {
    let nonce = crate::auth::join_nonce(cfg.auth.as_ref()).map_err(SweepError::Config)?;
    send(&join(cfg, pair_port, unable, nonce.clone()))?;
    match (&cfg.auth, nonce) {
        (Some(with), Some(ours)) => crate::auth::prove(s, with, &ours, deadline).map_err(SweepError::Refused),
        _ => Ok(None),
    }
}

/// Tells rank 0 that this rank cannot take part, and why (`reason`), so
/// the report names the reason as soon as rank 0 hears it instead of
/// "never joined" after the whole join timeout. Waits for rank 0 as a join
/// does (up to the join timeout), then for its answer up to 5 s, so the
/// message is read before the connection closes.
pub fn tell_unable(cfg: &WorkerConfig, reason: &str, stopped: &dyn Fn() -> Option<String>) -> Result<(), SweepError> {
    let s = connect(cfg, stopped)?;
    let io = |e: std::io::Error| SweepError::Lost(e.to_string());
    s.set_write_timeout(Some(Duration::from_secs(5))).map_err(io)?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let sent = |m: &ToCoordinator| protocol::send(&s, m).map_err(io);
    if send_join(cfg, &s, sent, 0, Some(reason.to_string()), deadline)?.is_none() {
        let _ = protocol::recv::<ToRank>(&s, Some(deadline));
    }
    Ok(())
}

/// Runs this rank until the coordinator's `Finish`. `stopped` is asked at
/// each order: once it says Some(why) (a signal's name), the next order is
/// still obeyed and the one after that is answered with the reason, and
/// the rank leaves, so a rank stopped on its own is named in the report.
/// When every rank is stopped together, rank 0 ends the sweep after the
/// round in progress and the others get their `Finish` first.
pub fn work(
    cfg: &WorkerConfig,
    runner: &mut dyn PairRunner,
    stopped: &dyn Fn() -> Option<String>,
) -> Result<WorkerEnd, SweepError> {
    let s = connect(cfg, stopped)?;
    let scope = s.local_addr().ok().and_then(link_scope);
    let io = |e: std::io::Error| SweepError::Lost(e.to_string());
    s.set_write_timeout(Some(cfg.idle_limit)).map_err(io)?;
    let line = cfg.lifeline.clone().unwrap_or_default();
    // (a second descriptor for the connection: only where a guard may
    // need it, not for every stand-in rank of a simulation)
    if cfg.lifeline.is_some() {
        line.attach(&s)?;
    }
    let deadline = Instant::now() + cfg.join_timeout + cfg.idle_limit;
    let early = send_join(cfg, &s, |m| line.send(&s, m), runner.port(), None, deadline)?;
    let lost = |e: ReadFail| SweepError::Lost(e.to_string());
    let first = match early {
        Some(m) => m,
        None => protocol::recv::<ToRank>(&s, Some(deadline)).map_err(lost)?,
    };
    match first {
        ToRank::Welcome {
            test,
            figure,
            victim_test,
        } => runner
            .configure(&test, figure, victim_test.as_ref())
            .map_err(SweepError::Config)?,
        ToRank::Refused { reason } => return Err(SweepError::Refused(reason)),
        other => return Err(SweepError::Lost(format!("unexpected first message {other:?}"))),
    }
    let mut end = WorkerEnd::default();
    let mut obeyed_after_stop = false;
    // the coordinator waits for every join (up to its join limit) before
    // the first order
    let mut limit = cfg.join_timeout + cfg.idle_limit;
    loop {
        let msg = protocol::recv::<ToRank>(&s, Some(Instant::now() + limit)).map_err(|e| match e {
            ReadFail::Timeout => SweepError::Lost(format!("the coordinator said nothing for {} s", limit.as_secs())),
            other => lost(other),
        })?;
        limit = cfg.idle_limit;
        // one order after the stop is still obeyed: rank 0, stopped by
        // the same signal (a launcher signals every rank), may have sent
        // this round's orders just before it saw its own; it ends the
        // sweep after this round. A rank stopped alone leaves at the next.
        let leave = match stopped() {
            Some(why) if obeyed_after_stop => Some(why),
            Some(_) => {
                obeyed_after_stop = true;
                None
            }
            None => None,
        };
        if let (Some(why), ToRank::Idle { step } | ToRank::Pair { step, .. } | ToRank::Flows { step, .. }) =
            (leave, &msg)
        {
            let outcome = SideOutcome {
                error: Some(format!("rank {} was stopped by {why}", cfg.rank)),
                ..SideOutcome::default()
            };
            let _ = line.send(&s, &ToCoordinator::Done { step: *step, outcome });
            return Err(SweepError::Stopped(why));
        }
        let answer = match msg {
            ToRank::Finish => return Ok(end),
            ToRank::Welcome { .. } | ToRank::Refused { .. } | ToRank::Challenge { .. } => continue,
            order => obey(cfg, runner, &line, order, scope, &mut end),
        };
        line.send(&s, &answer)?;
    }
}

/// This rank's answer to one order of a step: its pair test's outcome,
/// its flows' outcomes, or (idle) nothing.
fn obey(
    cfg: &WorkerConfig,
    runner: &mut dyn PairRunner,
    line: &Lifeline,
    order: ToRank,
    scope: Option<u32>,
    end: &mut WorkerEnd,
) -> ToCoordinator {
    match order {
        ToRank::Pair {
            step,
            role,
            peer,
            peer_addr,
        } => {
            let order = Order {
                step,
                role,
                me: cfg.rank,
                peer,
                peer_addr: scoped(peer_addr, scope),
                start_at: None,
                victim: false,
            };
            line.begin(step, peer);
            let outcome = runner.run(&order, Instant::now() + cfg.step_timeout);
            end.count(std::slice::from_ref(&outcome));
            ToCoordinator::Done { step, outcome }
        }
        ToRank::Flows {
            step,
            flows,
            start_in_ms,
        } => {
            let start_at = Some(Instant::now() + Duration::from_millis(start_in_ms));
            let orders: Vec<Order> = flows
                .into_iter()
                .map(|f| Order {
                    step,
                    role: f.role,
                    me: cfg.rank,
                    peer: f.peer,
                    peer_addr: scoped(f.peer_addr, scope),
                    start_at,
                    victim: f.victim,
                })
                .collect();
            if let Some(first) = orders.first() {
                line.begin(step, first.peer);
            }
            let outcomes = runner.run_flows(&orders, Instant::now() + cfg.step_timeout);
            end.count(&outcomes);
            ToCoordinator::FlowsDone { step, outcomes }
        }
        // (idle, or a message that is no order: answered as idle)
        other => ToCoordinator::Done {
            step: match other {
                ToRank::Idle { step } => step,
                _ => 0,
            },
            outcome: SideOutcome::default(),
        },
    }
}

impl WorkerEnd {
    fn count(&mut self, outcomes: &[SideOutcome]) {
        self.tests += outcomes.len() as u64;
        self.failed += outcomes.iter().filter(|o| o.error.is_some()).count() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use std::net::SocketAddr;

    #[test]
    fn a_coordinator_resolves_by_name_number_and_link_local_interface() {
        let one = |a: &str| -> Vec<SocketAddr> { resolve(a).unwrap_or_else(|e| panic!("{a}: {e}")) };
        assert_eq!(one("127.0.0.1:47000"), ["127.0.0.1:47000".parse().unwrap()]);
        assert!(one("localhost:47000").iter().all(|a| a.ip().is_loopback()));
        // a link-local address with its interface by name: the loopback
        // interface is index 1 on Linux; std's own parser takes the number
        let named = one("[fe80::1%lo]:47000");
        assert_eq!(named, one("[fe80::1%1]:47000"));
        let SocketAddr::V6(v6) = named[0] else {
            panic!("{named:?}")
        };
        assert_eq!((v6.scope_id(), v6.port()), (1, 47000));
        // what cannot resolve still fails, with the resolver's reason
        for bad in ["[fe80::1%nosuchif0]:47000", "no-such-host.invalid:47000", "[::1]:port"] {
            assert!(resolve(bad).is_err(), "{bad}");
        }
    }
}
