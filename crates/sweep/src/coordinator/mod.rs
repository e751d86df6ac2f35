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
//!
//! `arrivals` hands out connections once they speak, `join` admits the
//! ranks, `rounds` runs a sweep's rounds and re-tests
//! or a pattern's steps, and `step` drives one step: orders out, answers
//! in, each pair settled.

mod arrivals;
mod join;
mod rounds;
mod step;

use arrivals::Arrivals;

use crate::error::SweepError;
use crate::protocol::{self, FlowOrder, PairRole, ReadFail, SideOutcome, ToCoordinator, ToRank, SWEEP_PROTOCOL};
use fabdiag_engine::lat::LatFigure;
use fabdiag_sweep_judge::analysis::{Analysis, Better, Matrix, Rules};
use fabdiag_sweep_plan::{
    first_records, Coordinated, LatFigures, Node, NodeStatus, Pair, PairNoted, PairRecord, Pattern, PatternRun,
    PatternStep, Schedule, StepKind, StepRecord, VictimRecord,
};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant, SystemTime};

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
    /// What the fabric's map is made of (with the ranks' LLDP, once they
    /// have joined): each element the slow pairs share is re-tested
    /// alone, a pair crossing it and a pair avoiding it.
    pub map: Option<std::sync::Arc<fabdiag_topology::Plan>>,
    /// Flows between each pair at once (`--flows`; 1: one).
    pub flows: usize,
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

impl Coordinator<'_> {
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

    fn finish(&mut self) {
        for r in self.ranks.iter_mut() {
            if let Some(c) = r.conn.take() {
                let _ = protocol::send(&c, &ToRank::Finish);
            }
        }
    }
}
