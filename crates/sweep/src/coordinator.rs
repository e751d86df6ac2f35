//! Rank 0's coordinator: waits for the ranks to join (bounded), then runs
//! the schedule step by step (one round, one re-test, or one step of a
//! traffic pattern): every live rank gets an order (a pair test, its
//! flows of a pattern's step, or idle) and must answer within
//! the step's limit, or it is declared lost, its connection closed and its
//! remaining pairs recorded as not tested, with the reason. One thread and
//! one connection per rank: orders go out in rank order, answers are read
//! as they arrive (one epoll set), so a rank whose partner reported their
//! pair failed is waited for only a grace period, and a stalled rank costs
//! at most one step limit once, never a hang. Never prints: what happens
//! goes to an `Observer`, and the whole sweep comes back as `Coordinated`.

use crate::error::SweepError;
use crate::protocol::{self, FlowOrder, PairRole, ReadFail, SideOutcome, ToCoordinator, ToRank, SWEEP_PROTOCOL};
use fabdiag_engine::lat::LatFigure;
use fabdiag_sweep_plan::{
    first_records, Coordinated, LatFigures, Node, NodeStatus, Pair, PairNoted, PairRecord, Pattern, PatternRun,
    PatternStep, Schedule, StepKind, StepRecord, VictimRecord,
};
use fabdiag_sweep_report::analysis::{Analysis, Better, Matrix, Rules};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant, SystemTime};

/// Every rank's answer to a step: its outcomes, one per flow (one error
/// for all when it left), or None when it gave none.
type Answers = Vec<Option<Vec<SideOutcome>>>;

/// Rank `rank`'s account of its flow in slot `slot`: that outcome, or
/// the one error it answered for all of them (it left, or was stopped).
fn side(answers: &Answers, rank: usize, slot: usize) -> Option<SideOutcome> {
    let got = answers.get(rank)?.as_ref()?;
    match got.get(slot) {
        Some(o) => Some(o.clone()),
        None => got.first().filter(|o| got.len() == 1 && o.error.is_some()).cloned(),
    }
}

/// A rank's order for a step of `kind`: its one pair test in a round or
/// re-test, all of its flows of a pattern's step, or idle.
fn order(kind: StepKind, step: u64, mut mine: Vec<FlowOrder>) -> ToRank {
    match (kind, mine.len()) {
        (_, 0) => ToRank::Idle { step },
        (StepKind::Round | StepKind::Retest, _) => {
            let f = mine.swap_remove(0);
            ToRank::Pair {
                step,
                role: f.role,
                peer: f.peer,
                peer_addr: f.peer_addr,
            }
        }
        (StepKind::Split | StepKind::Phase, _) => ToRank::Flows {
            step,
            flows: mine,
            start_in_ms: FLOWS_START_MS,
        },
    }
}

/// How long after its order a pattern's flow starts its timed run: time
/// for every pair of the split to connect and set up (the first split
/// also opens every rank's endpoint), so that the flows' measured windows
/// coincide and their figures add up to what the fabric carried at once.
pub const FLOWS_START_MS: u64 = 3000;

#[derive(Clone, Debug)]
pub struct CoordConfig {
    pub size: usize,
    /// Only ranks on one rail (rank mod `rails`) are paired; 1: every pair.
    /// (`Schedule::on_rails` has accepted it.)
    pub rails: usize,
    /// The pair test every pair runs (the runner's parameters).
    pub test: serde_json::Value,
    /// What a latency pair is judged by.
    pub figure: LatFigure,
    pub version: String,
    pub join_timeout: Duration,
    /// How long one step (a round, or a re-test) may take.
    pub step_timeout: Duration,
    pub better: Better,
    pub rules: Rules,
    /// How many suspect pairs to re-test alone.
    pub retest: usize,
    /// Results of an earlier run (--resume): measured pairs are not run
    /// again; failed or untested ones are.
    pub earlier: Vec<PairRecord>,
    /// How every rank must prove who it is before it joins (`auth`).
    pub auth: Option<fabdiag_proto::auth::Auth>,
    /// A traffic pattern to run instead of every pair in rounds.
    pub pattern: Option<Pattern>,
    /// A pair measured alone and then beside every step of the pattern.
    pub victim: Option<Victim>,
}

/// A pattern's victim: the pair and the test it runs.
#[derive(Clone, Debug)]
pub struct Victim {
    pub pair: Pair,
    /// The pair tool's test (`TestSpec::to_wire`).
    pub test: serde_json::Value,
}

/// What the coordinator tells whoever watches (progress, output files).
pub trait Observer {
    fn joined(&mut self, _nodes: &[Node]) {}
    /// A step lost ranks: every rank as it stands now (so what is kept
    /// beside the pairs says who was lost, should rank 0 end before its
    /// report).
    fn statuses(&mut self, _nodes: &[Node]) {}
    /// A step begins: its kind, its place among `of`, and its label (e.g.
    /// "round 3", "split 1", "the victim alone").
    fn step(&mut self, _kind: StepKind, _index: usize, _of: usize, _label: &str) {}
    fn pair(&mut self, _rec: &PairRecord) {}
    /// Asked before each round: Some(why) (e.g. "SIGTERM") ends the sweep
    /// there; the rounds left are recorded as not tested, and the report
    /// covers what was measured.
    fn stopped(&self) -> Option<String> {
        None
    }
}

struct Rank {
    conn: Option<TcpStream>,
    node: Node,
}

struct Coordinator<'a> {
    cfg: &'a CoordConfig,
    obs: &'a mut dyn Observer,
    ranks: Vec<Rank>,
    /// Every live rank's connection, keyed by rank: answers are read as
    /// they arrive, not in rank order.
    ready: Epoll,
    step: u64,
    steps: Vec<StepRecord>,
}

/// How long a rank is waited for once its pair partner has reported their
/// pair failed: a live rank hears of it within the control connection's
/// silence limit (5 s) and answers, so one that stays silent is lost now,
/// not at the end of the step limit.
const PARTNER_GRACE: Duration = Duration::from_secs(15);

/// Runs the whole sweep as rank 0's coordinator on `listener`.
pub fn coordinate(listener: TcpListener, cfg: &CoordConfig, obs: &mut dyn Observer) -> Result<Coordinated, SweepError> {
    let started = SystemTime::now();
    let epoch = Instant::now();
    let ranks = (0..cfg.size)
        .map(|rank| Rank {
            conn: None,
            node: Node::awaited(rank),
        })
        .collect();
    let ready = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
        .map_err(|e| SweepError::Io(format!("coordinator cannot watch the ranks (epoll): {e}")))?;
    let mut c = Coordinator {
        cfg,
        obs,
        ranks,
        ready,
        step: 0,
        steps: Vec::new(),
    };
    c.join(&listener)?;
    drop(listener);
    let join_s = epoch.elapsed().as_secs_f64();
    let nodes = c.nodes();
    c.obs.joined(&nodes);

    let (pairs, retests, stopped, pattern) = match cfg.pattern.clone() {
        Some(p) => {
            let (run, stopped) = c.run_pattern(p);
            (Vec::new(), Vec::new(), stopped, Some(run))
        }
        None => {
            let (pairs, retests, stopped) = c.run_sweep();
            (pairs, retests, stopped, None)
        }
    };
    c.finish();
    Ok(Coordinated {
        nodes: c.ranks.into_iter().map(|r| r.node).collect(),
        rails: cfg.rails,
        pairs,
        retests,
        steps: c.steps,
        join_s,
        started,
        ended: SystemTime::now(),
        stopped,
        pattern,
    })
}

/// Rank 0 cannot start the sweep (its output directory, its own
/// endpoint): every rank that joins within `wait` is refused with
/// `reason`, so none of them waits out its join timeout for a sweep that
/// never comes.
pub fn refuse_all(listener: TcpListener, size: usize, wait: Duration, reason: &str) {
    let deadline = Instant::now() + wait;
    let Ok(mut arrivals) = Arrivals::new(&listener) else {
        return;
    };
    let mut told = 0;
    while told + 1 < size && Instant::now() < deadline {
        let Ok(ready) = arrivals.next(&listener, deadline) else {
            return;
        };
        for s in ready {
            let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
            let _ = protocol::recv::<ToCoordinator>(&s, Some(Instant::now() + Duration::from_secs(5)));
            let _ = protocol::send(&s, &ToRank::Refused { reason: reason.into() });
            told += 1;
        }
    }
}

/// Connections to rank 0's port, handed out once each has something to
/// say, so one that connects and says nothing (a port scanner) holds up no
/// other: the listener and every connection not yet read share one epoll
/// set (the listener's token past any connection's).
struct Arrivals {
    watch: Epoll,
    waiting: HashMap<u64, TcpStream>,
    next: u64,
    events: Vec<EpollEvent>,
}

impl Arrivals {
    const LISTENER: u64 = u64::MAX;

    fn new(listener: &TcpListener) -> Result<Arrivals, SweepError> {
        let io = |e: &dyn std::fmt::Display| SweepError::Io(format!("coordinator listener: {e}"));
        listener.set_nonblocking(true).map_err(|e| io(&e))?;
        let watch = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(|e| io(&e))?;
        watch
            .add(listener, EpollEvent::new(EpollFlags::EPOLLIN, Self::LISTENER))
            .map_err(|e| io(&e))?;
        Ok(Arrivals {
            watch,
            waiting: HashMap::new(),
            next: 0,
            events: vec![EpollEvent::empty(); 64],
        })
    }

    /// Accepts everything in the backlog, then waits up to 100 ms (not
    /// past `deadline`, so a caller hears a stop in time) and returns the
    /// connections that have spoken, in blocking mode.
    fn next(&mut self, listener: &TcpListener, deadline: Instant) -> Result<Vec<TcpStream>, SweepError> {
        let io = |what: &str, e: &dyn std::fmt::Display| SweepError::Io(format!("coordinator {what}: {e}"));
        loop {
            match listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).map_err(|e| io("connection", &e))?;
                    self.watch
                        .add(&s, EpollEvent::new(EpollFlags::EPOLLIN, self.next))
                        .map_err(|e| io("epoll", &e))?;
                    self.waiting.insert(self.next, s);
                    self.next += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io("cannot accept", &e)),
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Vec::new());
        }
        let ms = left.as_millis().clamp(1, 100) as u16;
        let got = match self.watch.wait(&mut self.events, EpollTimeout::from(ms)) {
            Ok(k) => k,
            Err(nix::errno::Errno::EINTR) => 0,
            Err(e) => return Err(io("epoll", &e)),
        };
        let mut ready = Vec::new();
        for ev in &self.events[..got] {
            // the listener: accepted at the next call
            if let Some(s) = self.waiting.remove(&ev.data()) {
                let _ = self.watch.delete(&s);
                ready.push(s);
            }
        }
        Ok(ready)
    }
}

/// The ranks a step still waits for an answer from.
struct Waiting {
    pending: Vec<bool>,
    left: usize,
}

impl Waiting {
    fn new(pending: Vec<bool>) -> Waiting {
        let left = pending.iter().filter(|&&p| p).count();
        Waiting { pending, left }
    }

    fn is(&self, rank: usize) -> bool {
        self.pending.get(rank).copied().unwrap_or(false)
    }

    /// No longer waited for (answered, or given up on); false if it was
    /// not.
    fn settle(&mut self, rank: usize) -> bool {
        let was = self.is(rank);
        if was {
            self.pending[rank] = false;
            self.left -= 1;
        }
        was
    }

    /// Every rank still waited for.
    fn all(&self) -> Vec<usize> {
        (0..self.pending.len()).filter(|&r| self.pending[r]).collect()
    }
}

impl Coordinator<'_> {
    fn join(&mut self, listener: &TcpListener) -> Result<(), SweepError> {
        let deadline = Instant::now() + self.cfg.join_timeout;
        let mut arrivals = Arrivals::new(listener)?;
        let mut joined = 0;
        let mut stopped = None;
        while joined < self.cfg.size && Instant::now() < deadline {
            // in slices, so a stop is heard while ranks are still awaited
            let ready = arrivals.next(listener, deadline)?;
            stopped = self.obs.stopped();
            if stopped.is_some() {
                break;
            }
            for s in ready {
                if self.admit(s) {
                    joined += 1;
                }
            }
        }
        let reason = match stopped {
            Some(why) => format!("had not joined when the sweep was stopped by {why}"),
            None => format!("never joined within {} s", self.cfg.join_timeout.as_secs()),
        };
        // (one that said why it could not start keeps its reason)
        for r in self
            .ranks
            .iter_mut()
            .filter(|r| r.conn.is_none() && r.node.reason.is_none())
        {
            r.node.reason = Some(reason.clone());
        }
        Ok(())
    }

    /// Reads a newcomer's join and welcomes or refuses it.
    fn admit(&mut self, s: TcpStream) -> bool {
        let _ = s.set_nodelay(true);
        // (without it, a rank cut off is still found by the round's limit)
        let _ = protocol::watch_link(&s);
        let _ = s.set_write_timeout(Some(self.cfg.step_timeout));
        let refuse = |s: &TcpStream, reason: String| {
            let _ = protocol::send(s, &ToRank::Refused { reason });
            false
        };
        let Ok(ToCoordinator::Join {
            protocol,
            version,
            rank,
            size,
            host,
            device,
            gpu,
            pair_port,
            unable,
            nonce,
            auth_method,
        }) = protocol::recv(&s, Some(Instant::now() + Duration::from_secs(5)))
        else {
            return false;
        };
        let major_minor = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
        if protocol != SWEEP_PROTOCOL || major_minor(&version) != major_minor(&self.cfg.version) {
            return refuse(
                &s,
                format!(
                    "rank {rank} runs fabdiag {version} (sweep protocol {protocol}), rank 0 runs {} (protocol {SWEEP_PROTOCOL})",
                    self.cfg.version
                ),
            );
        }
        // before anything it says is taken: a process without the proof
        // neither takes a rank's place nor sends a result
        let deadline = Instant::now() + Duration::from_secs(5);
        if let Err(why) = crate::auth::admit(
            &s,
            self.cfg.auth.as_ref(),
            nonce.as_deref().map(|n| (n, auth_method)),
            deadline,
        ) {
            return refuse(&s, format!("rank {rank} from {host} refused: {why}"));
        }
        if size != self.cfg.size {
            return refuse(
                &s,
                format!(
                    "rank {rank} was started with {size} ranks, rank 0 with {}",
                    self.cfg.size
                ),
            );
        }
        let Some(slot) = self.ranks.get_mut(rank) else {
            return refuse(&s, format!("rank {rank} is out of range for {size} ranks"));
        };
        // (a rank that said it could not start has its slot too)
        if slot.conn.is_some() || slot.node.reason.is_some() {
            let first = slot.node.host.clone().unwrap_or_default();
            return refuse(
                &s,
                format!("rank {rank} joined twice (first from {first}, again from {host})"),
            );
        }
        if let Some(why) = unable {
            // it takes no part: its pairs go untested, with its reason
            let _ = protocol::send(&s, &ToRank::Refused { reason: "noted".into() });
            slot.node.host = Some(host);
            slot.node.device = device;
            slot.node.gpu = gpu;
            slot.node.reason = Some(format!("could not start: {why}"));
            return true;
        }
        let Ok(ip) = s.peer_addr().map(|a| fabdiag_proto::plain(a).ip()) else {
            return false;
        };
        if let Err(e) = self.ready.add(&s, EpollEvent::new(EpollFlags::EPOLLIN, rank as u64)) {
            return refuse(&s, format!("rank 0 cannot watch rank {rank}'s connection: {e}"));
        }
        if protocol::send(
            &s,
            &ToRank::Welcome {
                test: self.cfg.test.clone(),
                figure: self.cfg.figure,
                victim_test: self.cfg.victim.as_ref().map(|v| v.test.clone()),
            },
        )
        .is_err()
        {
            return false;
        }
        slot.node.host = Some(host);
        slot.node.device = device;
        slot.node.gpu = gpu;
        slot.node.addr = Some(std::net::SocketAddr::new(ip, pair_port).to_string());
        slot.node.status = NodeStatus::Ok;
        slot.conn = Some(s);
        true
    }

    /// The sweep proper: every pair in its round, then the suspects
    /// re-tested alone. The pairs, the re-tests, and why it stopped early.
    fn run_sweep(&mut self) -> (Vec<PairRecord>, Vec<PairRecord>, Option<String>) {
        let mut pairs = Vec::new();
        let measured = |p: &PairRecord| p.value.is_some() && p.round.is_some();
        let done: std::collections::HashSet<(usize, usize)> = self
            .cfg
            .earlier
            .iter()
            .filter(|p| measured(p))
            .map(|p| (p.a, p.b))
            .collect();
        pairs.extend(self.cfg.earlier.iter().filter(|p| measured(p)).cloned());
        let mut stopped = None;
        if let Ok(s) = Schedule::on_rails(self.cfg.size, self.cfg.rails) {
            for r in 0..s.rounds() {
                let todo: Vec<Pair> = s.round(r).into_iter().filter(|p| !done.contains(&p.key())).collect();
                if stopped.is_none() {
                    stopped = self.obs.stopped();
                }
                if let Some(why) = &stopped {
                    pairs.extend(todo.iter().map(|p| PairRecord {
                        untested: true,
                        error: Some(format!("not tested: the sweep was stopped by {why}").into()),
                        ..PairRecord::planned(p, Some(r))
                    }));
                    continue;
                }
                let label = format!("round {}", r + 1);
                self.obs.step(StepKind::Round, r, s.rounds(), &label);
                if todo.is_empty() {
                    continue;
                }
                for rec in self.run_step(StepKind::Round, r, &label, &todo).0 {
                    self.obs.pair(&rec);
                    pairs.push(rec);
                }
            }
        }

        // serial re-test of the suspects, with nothing else running
        let mut retests = Vec::new();
        if self.cfg.retest > 0 && stopped.is_none() {
            let m = Matrix::of_pairs(self.cfg.size, &pairs);
            let an = Analysis::of(&m, self.cfg.better, self.cfg.rules);
            let chosen = an.retests(
                &m,
                |x| self.ranks.get(x).is_some_and(|r| r.node.status == NodeStatus::Ok),
                self.cfg.retest,
            );
            // each suspect as first ordered (who was client)
            let first = first_records(&pairs, chosen.iter().copied());
            let suspects: Vec<Pair> = chosen
                .iter()
                .filter_map(|k| first.get(k))
                .map(|p| Pair {
                    client: p.client,
                    server: p.server,
                })
                .collect();
            for (i, p) in suspects.iter().enumerate() {
                let label = format!("re-test {}", i + 1);
                self.obs.step(StepKind::Retest, i, suspects.len(), &label);
                for rec in self.run_step(StepKind::Retest, i, &label, std::slice::from_ref(p)).0 {
                    self.obs.pair(&rec);
                    retests.push(rec);
                }
            }
        }
        (pairs, retests, stopped)
    }

    /// A traffic pattern instead of the rounds: each step's flows at
    /// once, and the victim's beside them when there is one. Its steps,
    /// and why it stopped early.
    fn run_pattern(&mut self, pattern: Pattern) -> (PatternRun, Option<String>) {
        let live: Vec<usize> = (0..self.ranks.len()).filter(|&r| self.live(r)).collect();
        let hosts: Vec<String> = live
            .iter()
            .map(|&r| self.ranks[r].node.host.clone().unwrap_or_default())
            .collect();
        let kind = match pattern {
            Pattern::Bisection { .. } => StepKind::Split,
            _ => StepKind::Phase,
        };
        let victim = self.cfg.victim.as_ref().map(|v| v.pair);
        let planned = match victim {
            Some(v) => fabdiag_sweep_plan::pattern::with_victim(&pattern, v, &live, &hosts),
            None => fabdiag_sweep_plan::pattern::steps(&pattern, &live, &hosts),
        };
        let of = planned.len();
        // A pattern's pair is (sender, receiver) of its data. A read moves
        // data from the server to the client, so with read-bw the receiver
        // reads from the sender: its reads complete as the data lands,
        // which makes an incast's aggregate what reached the receiver.
        let reads = fabdiag_model::TestSpec::from_wire(self.cfg.test.clone())
            .is_ok_and(|s| s.tool == fabdiag_model::Tool::ReadBw);
        let turn = |p: &Pair| Pair {
            client: p.server,
            server: p.client,
        };
        let mut steps = Vec::new();
        let mut stopped = None;
        for (n, (shape, mut pairs)) in planned.into_iter().enumerate() {
            if reads {
                pairs = pairs.iter().map(turn).collect();
            }
            if stopped.is_none() {
                stopped = self.obs.stopped();
            }
            // the pattern's steps count from 0 after the victim's quiet one
            let index = if victim.is_some() { n.saturating_sub(1) } else { n };
            pairs.extend(victim);
            let (mut flows, lat) = match &stopped {
                Some(why) => {
                    let not_run = pairs.iter().map(|p| PairRecord {
                        untested: true,
                        error: Some(format!("not tested: the run was stopped by {why}").into()),
                        ..PairRecord::planned(p, Some(index))
                    });
                    (not_run.collect(), None)
                }
                None => {
                    let label = shape.label(index);
                    self.obs.step(kind, n, of, &label);
                    self.run_step(kind, n, &label, &pairs)
                }
            };
            let victim = victim
                .and_then(|_| flows.pop())
                .map(|record| VictimRecord { lat, record });
            if reads {
                for f in &mut flows {
                    std::mem::swap(&mut f.client, &mut f.server);
                }
            }
            for f in &flows {
                self.obs.pair(f);
            }
            steps.push(PatternStep {
                index,
                shape,
                flows,
                victim,
            });
        }
        let run = PatternRun { pattern, steps, victim };
        (run, stopped)
    }

    fn live(&self, rank: usize) -> bool {
        self.ranks.get(rank).is_some_and(|r| r.conn.is_some())
    }

    fn lose(&mut self, rank: usize, why: String) {
        if let Some(r) = self.ranks.get_mut(rank) {
            if let Some(c) = r.conn.take() {
                let _ = self.ready.delete(&c);
                let _ = c.shutdown(std::net::Shutdown::Both);
            }
            r.node.status = NodeStatus::Lost;
            r.node.reason = Some(why);
        }
    }

    fn why_not(&self, rank: usize) -> String {
        let node = &self.ranks[rank].node;
        let host = node.host.as_deref().map(|h| format!(" ({h})")).unwrap_or_default();
        match &node.reason {
            Some(r) => format!("rank {rank}{host} {r}"),
            None => format!("rank {rank}{host} is not available"),
        }
    }

    /// Every rank as it stands now.
    fn nodes(&self) -> Vec<Node> {
        self.ranks.iter().map(|r| r.node.clone()).collect()
    }

    /// One step (`drive_step`), and the observer told when it lost ranks.
    fn run_step(
        &mut self,
        kind: StepKind,
        index: usize,
        label: &str,
        pairs: &[Pair],
    ) -> (Vec<PairRecord>, Option<LatFigures>) {
        let lost = |c: &Self| c.ranks.iter().filter(|r| r.node.status == NodeStatus::Lost).count();
        let lost_before = lost(self);
        let out = self.drive_step(kind, index, label, pairs);
        if lost(self) != lost_before {
            let nodes = self.nodes();
            self.obs.statuses(&nodes);
        }
        out
    }

    /// One step: orders to every live rank, then every answer, bounded.
    /// Its pairs' records, and a pattern victim's latency figures (a pair
    /// record has no room for them).
    fn drive_step(
        &mut self,
        kind: StepKind,
        index: usize,
        label: &str,
        pairs: &[Pair],
    ) -> (Vec<PairRecord>, Option<LatFigures>) {
        self.step += 1;
        let step = self.step;
        let t0 = Instant::now();
        let mut cpu = Duration::ZERO;
        let round = (kind == StepKind::Round).then_some(index);
        let mut out: Vec<PairRecord> = pairs.iter().map(|p| PairRecord::planned(p, round)).collect();
        // each rank's flows in the order it is given them, and where each
        // pair's two sides are among them
        let mut flows: Vec<Vec<FlowOrder>> = vec![Vec::new(); self.ranks.len()];
        let mut slots: Vec<Option<(usize, usize)>> = vec![None; pairs.len()];
        // (a pattern's victim rides last in its steps)
        let victim = match kind {
            StepKind::Split | StepKind::Phase => self.cfg.victim.as_ref().map(|_| pairs.len() - 1),
            StepKind::Round | StepKind::Retest => None,
        };
        for (i, p) in pairs.iter().enumerate() {
            match (self.live(p.client), self.live(p.server)) {
                (true, true) => {
                    let addr = |r: usize| self.ranks[r].node.addr.clone().unwrap_or_default();
                    slots[i] = Some((flows[p.client].len(), flows[p.server].len()));
                    let (to_server, to_client) = (addr(p.server), addr(p.client));
                    flows[p.client].push(FlowOrder {
                        role: PairRole::Client,
                        peer: p.server,
                        peer_addr: to_server,
                        victim: victim == Some(i),
                    });
                    flows[p.server].push(FlowOrder {
                        role: PairRole::Server,
                        peer: p.client,
                        peer_addr: to_client,
                        victim: victim == Some(i),
                    });
                }
                (c, _) => {
                    let gone = if c { p.server } else { p.client };
                    out[i].untested = true;
                    out[i].error = Some(format!("not tested: {}", self.why_not(gone)).into());
                }
            }
        }
        let partners: Vec<Vec<usize>> = flows.iter().map(|f| f.iter().map(|o| o.peer).collect()).collect();
        let tick = Instant::now();
        for (rank, mine) in flows.into_iter().enumerate() {
            let Some(conn) = self.ranks[rank].conn.as_ref() else {
                continue;
            };
            let msg = order(kind, step, mine);
            if let Err(e) = protocol::send(conn, &msg) {
                self.lose(rank, format!("could not be sent its order for {label} ({e})"));
            }
        }
        cpu += tick.elapsed();
        let (answers, busy) = self.answers(step, label, &partners);
        cpu += busy;
        let mut measure_s: f64 = 0.0;
        let mut victim_lat = None;
        for (i, p) in pairs.iter().enumerate() {
            let Some((cs, ss)) = slots[i] else { continue };
            let rec = &mut out[i];
            let (mut c, mut s) = (side(&answers, p.client, cs), side(&answers, p.server, ss));
            if victim == Some(i) {
                victim_lat = c.as_mut().and_then(|c| c.lat.take());
            }
            self.note_counters(p, rec, c.as_mut(), s.as_mut());
            measure_s = measure_s.max(c.as_ref().map_or(0.0, |c| c.measure_s));
            self.settle_pair(p, rec, c, s);
        }
        let wall_s = t0.elapsed().as_secs_f64();
        self.steps.push(StepRecord {
            kind,
            index,
            pairs: pairs.len(),
            wall_s,
            measure_s,
            overhead_s: (wall_s - measure_s).max(0.0),
            coordinator_busy_s: cpu.as_secs_f64(),
        });
        (out, victim_lat)
    }

    /// Pair `p`'s record from its client's and server's accounts (None:
    /// that side never answered).
    fn settle_pair(&self, p: &Pair, rec: &mut PairRecord, c: Option<SideOutcome>, s: Option<SideOutcome>) {
        match (c, s) {
            (Some(c), s) => {
                // a server that never answered was lost: say so beside
                // what the client saw, which names no rank
                let server_lost = (s.is_none() && !self.live(p.server)).then(|| self.why_not(p.server));
                rec.elapsed_s = c.elapsed_s;
                rec.measure_s = c.measure_s;
                rec.rows = c.rows.into_iter().collect();
                rec.value = c.value;
                rec.error = match (c.error, s.and_then(|s| s.error), server_lost) {
                    (Some(ce), Some(se), _) if ce != se => {
                        Some(format!("{ce} (server rank {}: {se})", p.server).into())
                    }
                    (Some(ce), None, Some(lost)) => Some(format!("{ce} (server {lost})").into()),
                    (Some(ce), _, _) => Some(ce.into()),
                    (None, Some(se), _) if rec.value.is_none() => {
                        Some(format!("server rank {}: {se}", p.server).into())
                    }
                    (None, _, _) => None,
                };
                if rec.error.is_some() {
                    rec.value = None;
                }
            }
            (None, s) => {
                // what the server saw of it, when it said
                let seen = s
                    .and_then(|s| s.error)
                    .map(|se| format!(" (server rank {}: {se})", p.server))
                    .unwrap_or_default();
                rec.error = Some(format!("client {}{seen}", self.why_not(p.client)).into());
            }
        }
    }

    /// Each side's NIC counters: what its rank reads (kept once, with the
    /// node), and the pair's changes worth a look (kept with the pair
    /// only when there is one).
    fn note_counters(
        &mut self,
        p: &Pair,
        rec: &mut PairRecord,
        c: Option<&mut SideOutcome>,
        s: Option<&mut SideOutcome>,
    ) {
        let mut noted = PairNoted::default();
        for (rank, side, into) in [(p.client, c, &mut noted.client), (p.server, s, &mut noted.server)] {
            let Some(o) = side else { continue };
            if let (Some(read), Some(r)) = (o.counters_read.take(), self.ranks.get_mut(rank)) {
                r.node.counters.get_or_insert(read);
            }
            *into = std::mem::take(&mut o.noted);
        }
        if !noted.client.is_empty() || !noted.server.is_empty() {
            rec.counters = Some(Box::new(noted));
        }
    }

    /// Every live rank's answer to `step`, read as answers arrive. A rank
    /// is waited for until the step's limit, or `PARTNER_GRACE` after its
    /// pair partner reported their pair failed if that comes first; one
    /// that says nothing by then, or whose connection fails, is lost.
    /// Returns the answers by rank and the time spent reading them.
    fn answers(&mut self, step: u64, label: &str, partners: &[Vec<usize>]) -> (Answers, Duration) {
        let n = self.ranks.len();
        let deadline = Instant::now() + self.cfg.step_timeout;
        let silent = format!(
            "stopped answering: no answer within {:.0} s in {label}",
            self.cfg.step_timeout.as_secs_f64()
        );
        let mut busy = Duration::ZERO;
        let mut answers: Answers = vec![None; n];
        let mut waiting = Waiting::new(self.ranks.iter().map(|r| r.conn.is_some()).collect());
        // earlier limits than the step's: (when, rank, whose report)
        let mut graces: BinaryHeap<Reverse<(Instant, usize, usize)>> = BinaryHeap::new();
        let mut events = vec![EpollEvent::empty(); n.clamp(1, 1024)];
        while waiting.left > 0 {
            let now = Instant::now();
            // limits that passed: a rank its partner gave up on, then all
            while let Some(&Reverse((when, rank, reporter))) = graces.peek() {
                if when > now {
                    break;
                }
                graces.pop();
                if waiting.settle(rank) {
                    let secs = PARTNER_GRACE.as_secs();
                    self.lose(
                        rank,
                        format!("stopped answering: no answer within {secs} s of rank {reporter}'s report that their pair failed, in {label}"),
                    );
                }
            }
            if now >= deadline {
                for rank in waiting.all() {
                    self.lose(rank, silent.clone());
                }
                break;
            }
            if waiting.left == 0 {
                break;
            }
            let wake = graces.peek().map_or(deadline, |Reverse((w, _, _))| (*w).min(deadline));
            // at least 1 ms: 0 would poll without waiting
            let ms = wake.saturating_duration_since(now).as_millis().clamp(1, 1000) as u16;
            let got = match self.ready.wait(&mut events, EpollTimeout::from(ms)) {
                Ok(k) => k,
                Err(nix::errno::Errno::EINTR) => 0,
                Err(e) => {
                    // (only a bad descriptor or buffer makes epoll_wait fail)
                    for rank in waiting.all() {
                        self.lose(rank, format!("could not be watched in {label} (epoll: {e})"));
                    }
                    break;
                }
            };
            for ev in &events[..got] {
                let rank = ev.data() as usize;
                let Some(conn) = self.ranks.get(rank).and_then(|r| r.conn.as_ref()) else {
                    continue;
                };
                let tick = Instant::now();
                let pending = waiting.is(rank);
                // answered already: a stray message, or its connection
                // closing (read now, or it would wake every wait)
                let until = if pending {
                    deadline
                } else {
                    tick + Duration::from_secs(1)
                };
                // an answer with an error gives the failed flows' partners
                // only the grace left (one error for all: every partner)
                let mut answered = |outcomes: Vec<SideOutcome>, waiting: &mut Waiting| {
                    let mine = partners.get(rank).map_or(&[][..], Vec::as_slice);
                    let all = outcomes.len() == 1;
                    for (k, &p) in mine.iter().enumerate() {
                        let failed = outcomes.get(if all { 0 } else { k }).is_some_and(|o| o.error.is_some());
                        if failed && waiting.is(p) {
                            graces.push(Reverse((Instant::now() + PARTNER_GRACE, p, rank)));
                        }
                    }
                    answers[rank] = Some(outcomes);
                    waiting.settle(rank);
                };
                let lost = match protocol::recv::<ToCoordinator>(conn, Some(until)) {
                    Ok(ToCoordinator::Done { step: s, outcome }) if pending && s == step => {
                        answered(self.opened(rank, vec![outcome]), &mut waiting);
                        None
                    }
                    Ok(ToCoordinator::FlowsDone { step: s, outcomes }) if pending && s == step => {
                        answered(self.opened(rank, outcomes), &mut waiting);
                        None
                    }
                    // (held inside a provider call: its reason answers the
                    // pair test it was in)
                    Ok(ToCoordinator::Leave { step: s, reason }) => {
                        if pending && s == Some(step) {
                            let outcome = SideOutcome {
                                error: Some(reason.clone()),
                                ..SideOutcome::default()
                            };
                            answered(vec![outcome], &mut waiting);
                        }
                        Some(format!("left the sweep: {reason}"))
                    }
                    // a late answer to an earlier step, or a stray join
                    Ok(_) => None,
                    Err(ReadFail::Timeout) if pending => Some(silent.clone()),
                    Err(ReadFail::Timeout) => None,
                    Err(e) => Some(format!("was lost in {label}: {e}")),
                };
                if let Some(why) = lost {
                    waiting.settle(rank);
                    self.lose(rank, why);
                }
                busy += tick.elapsed();
            }
        }
        (answers, busy)
    }

    /// `outcomes`, with the endpoints they say rank `rank` has opened
    /// noted on its node (cumulative on the rank; an idle answer carries
    /// none).
    fn opened(&mut self, rank: usize, outcomes: Vec<SideOutcome>) -> Vec<SideOutcome> {
        if let Some(r) = self.ranks.get_mut(rank) {
            for o in &outcomes {
                r.node.endpoint_opens = r.node.endpoint_opens.max(o.opens);
                r.node.endpoint_open_s = r.node.endpoint_open_s.max(o.open_s);
            }
        }
        outcomes
    }

    fn finish(&mut self) {
        for r in self.ranks.iter_mut() {
            if let Some(c) = r.conn.take() {
                let _ = protocol::send(&c, &ToRank::Finish);
            }
        }
    }
}
