//! What a sweep leaves behind, record by record: every rank (`Node`),
//! every pair test and re-test (`PairRecord`, with its per-size figures),
//! every step's timing (`StepRecord`), and the whole of it as rank 0's
//! coordinator ran it (`Coordinated`). The run writes these, the report
//! reads them, and `--resume` and `--report` read them back from a
//! folder; here they are plain data with their JSON form, nothing more.

use crate::pattern::{Pattern, Shape};
use crate::schedule::Pair;
use fabdiag_counters::Noted;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

/// One size's figure of a pair test, as the ranks report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowFigure {
    pub size: u64,
    pub value: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Round,
    Retest,
    /// One split of a traffic pattern (bisection), its flows at once.
    Split,
    /// One step of another traffic pattern (incast, all-to-all), its
    /// flows at once.
    Phase,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    Ok,
    /// Never joined.
    Missing,
    /// Joined, then stopped answering or went away.
    Lost,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub rank: usize,
    pub host: Option<String>,
    /// Its domain (NIC), when the rank chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Its GPU ("GPU 1"), when `-t/-r` put its buffers on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Where its pair tests listened.
    pub addr: Option<String>,
    pub status: NodeStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Endpoints it opened in the whole sweep, and the time that took.
    pub endpoint_opens: u64,
    pub endpoint_open_s: f64,
    /// The NIC counters its pair tests read ("mlx5_0 port 1", "vaX +
    /// tcp"), or "not available (why)"; absent from simulated sweeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<String>,
    /// Its LLDP neighbours as it read them when it joined (`lldpctl -f
    /// json`), or why it could not; only while the sweep runs (the map
    /// made of them is kept instead).
    #[serde(skip)]
    pub lldp: Option<Result<String, String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    /// The pair, low rank first.
    pub a: usize,
    pub b: usize,
    pub client: usize,
    pub server: usize,
    /// The schedule round (None: a re-test).
    pub round: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "SmallVec::is_empty")]
    pub rows: SmallVec<[RowFigure; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<str>>,
    /// Not run at all (a rank missing or lost), as opposed to run and failed.
    #[serde(default)]
    pub untested: bool,
    pub elapsed_s: f64,
    pub measure_s: f64,
    /// The NIC counter changes worth a look on each side while it ran;
    /// absent when neither side had one (or nothing was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Box<PairNoted>>,
    /// With `--flows K`: each flow's figure (None: it failed), the flows
    /// run at once on connections of their own; `value` is then the best
    /// of them (what the pair does on a good path), and the pair failed
    /// only when every flow did. Boxed: absent, it costs a pointer a pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Box<[Option<f64>]>>,
}

/// A pair test's NIC counter changes worth a look, side by side.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairNoted {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client: Vec<Noted>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<Noted>,
}

impl PairNoted {
    /// Rank `rank`'s side of pair record `p`'s changes (empty: it is not
    /// one of the pair).
    pub fn of<'a>(&'a self, p: &PairRecord, rank: usize) -> &'a [Noted] {
        if rank == p.client {
            &self.client
        } else if rank == p.server {
            &self.server
        } else {
            &[]
        }
    }
}

/// The first record of each pair `keys` names, in one pass over `pairs`
/// (a 10,000-rank sweep has 50 million; a scan per key would not do).
pub fn first_records(
    pairs: &[PairRecord],
    keys: impl IntoIterator<Item = (usize, usize)>,
) -> HashMap<(usize, usize), &PairRecord> {
    let wanted: HashSet<(usize, usize)> = keys.into_iter().collect();
    let mut found = HashMap::with_capacity(wanted.len());
    for p in pairs.iter().filter(|p| wanted.contains(&(p.a, p.b))) {
        found.entry((p.a, p.b)).or_insert(p);
    }
    found
}

impl Node {
    /// Rank `rank` before it has joined: nothing known of it yet.
    pub fn awaited(rank: usize) -> Node {
        Node {
            rank,
            host: None,
            device: None,
            gpu: None,
            addr: None,
            status: NodeStatus::Missing,
            reason: None,
            endpoint_opens: 0,
            endpoint_open_s: 0.0,
            counters: None,
            lldp: None,
        }
    }
}

impl PairRecord {
    /// `p` as ordered in `round` (None: a re-test), nothing known yet.
    pub fn planned(p: &Pair, round: Option<usize>) -> PairRecord {
        PairRecord {
            a: p.key().0,
            b: p.key().1,
            client: p.client,
            server: p.server,
            // (9,999 rounds at 10,000 ranks; u32 keeps the record small)
            round: round.map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
            value: None,
            rows: SmallVec::new(),
            error: None,
            untested: false,
            elapsed_s: 0.0,
            measure_s: 0.0,
            counters: None,
            flows: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub kind: StepKind,
    pub index: usize,
    pub pairs: usize,
    /// From the first order sent to the last answer read.
    pub wall_s: f64,
    /// The longest measuring part of its pair tests.
    pub measure_s: f64,
    /// Everything else: set-up of each pair test plus coordination.
    pub overhead_s: f64,
    /// The coordinator's own share: sending orders and reading answers,
    /// outside the waiting.
    pub coordinator_busy_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coordinated {
    pub nodes: Vec<Node>,
    /// The rails the schedule paired ranks on (1: every pair).
    #[serde(default = "crate::schedule::one_rail")]
    pub rails: usize,
    /// One record per pair, in schedule order (earlier results first).
    pub pairs: Vec<PairRecord>,
    pub retests: Vec<PairRecord>,
    pub steps: Vec<StepRecord>,
    pub join_s: f64,
    #[serde(with = "humantime_serde_compat")]
    pub started: SystemTime,
    #[serde(with = "humantime_serde_compat")]
    pub ended: SystemTime,
    /// Why the sweep ended before its last round (a signal's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// A traffic pattern's steps, when the run was one (its `pairs` are
    /// then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<PatternRun>,
}

/// One step of a pattern run: what it was and each flow's record, and
/// the victim's, when one was measured alongside.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternStep {
    pub index: usize,
    pub shape: Shape,
    pub flows: Vec<PairRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<VictimRecord>,
}

/// The victim pair's test in one step: its record and, for a latency
/// test, the figures of its largest size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VictimRecord {
    pub record: PairRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<LatFigures>,
}

/// A latency test's figures, in µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatFigures {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// What a pattern run left behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternRun {
    pub pattern: Pattern,
    pub steps: Vec<PatternStep>,
    /// The victim pair, measured alone first and then in every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<Pair>,
}

/// Times as RFC 3339 text in the JSON.
mod humantime_serde_compat {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::SystemTime;

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_rfc3339_millis(*t).to_string())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339(&text).map_err(serde::de::Error::custom)
    }
}

impl Coordinated {
    /// A sweep of `nodes` that recorded `pairs` on every rank pair (one
    /// rail), nothing else: no re-tests, no steps, no time. Callers set
    /// what they know beyond that.
    pub fn of(nodes: Vec<Node>, pairs: Vec<PairRecord>) -> Coordinated {
        Coordinated {
            nodes,
            rails: 1,
            pairs,
            retests: Vec::new(),
            steps: Vec::new(),
            join_s: 0.0,
            started: SystemTime::UNIX_EPOCH,
            ended: SystemTime::UNIX_EPOCH,
            stopped: None,
            pattern: None,
        }
    }
}
