//! The fabric's verdict, when the sweep was given the fabric's map: each
//! rank placed on its host (by its name, or its name's first label), each
//! pair of the rounds slow or not by the analysis's rules (a failed pair
//! is slow), and the elements the slow pairs share blamed (a host's cable,
//! a switch, the cables between two switches: fabdiag-topology's
//! attribution), each with its evidence. Re-tested alone, a pair crossing
//! the element that is still slow and a pair avoiding it that is clean
//! confirm it; `retest_pairs` chooses those pairs, so the sweep's run and
//! its judging choose alike. Pure: the map is read by the caller.

use crate::analysis::Analysis;
use fabdiag_model::counters::{Change, Class};
use fabdiag_sweep_plan::{Node, PairRecord};
use fabdiag_topology::attribute::{attribute, Attribution, Seen, Suspect};
use fabdiag_topology::{Element, Fabric};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// What the sweep says of the fabric's elements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FabricVerdict {
    /// Where the map came from ("fabric.toml + topology.conf").
    pub source: String,
    pub map: MapShape,
    /// Ranks whose host the map does not have: their pairs are judged
    /// without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_map: Vec<usize>,
    /// The suspects, the first the most certain.
    pub blamed: Vec<Blamed>,
    /// Elements clean pairs crossed for sure: not the fault.
    pub cleared: Vec<String>,
    /// Slow pairs no element explains.
    pub unexplained: usize,
    /// Flows a pair (`--flows`), each pair judged by its slowest.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub flows: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// The map as the report draws it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MapShape {
    pub switches: Vec<MapSwitch>,
    pub hosts: Vec<MapHost>,
    pub cables: Vec<MapCable>,
    /// The switches' forwarding tables, where the map had them: each
    /// switch's port for each host.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub routes: fabdiag_topology::map::Tables,
}

/// A switch and a host as the map has them.
pub use fabdiag_topology::{Host as MapHost, Switch as MapSwitch};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapCable {
    pub a: String,
    pub b: String,
    pub count: u32,
    /// Each cable's ends with their ports, where the map gives them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ends: Vec<(String, String)>,
}

/// What an element is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElementKind {
    /// A host: its NIC, or the cable to its switch.
    Host,
    Switch,
    /// The cables between two switches.
    Cable,
}

/// One suspect: the elements it may be (the map cannot tell them apart
/// when several), and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blamed {
    pub elements: Vec<String>,
    pub kind: ElementKind,
    /// Slow pairs it explains, of `through` tested pairs that may cross
    /// it, `slow_through` of them slow (flows, with `--flows`).
    pub explained: usize,
    pub through: usize,
    pub slow_through: usize,
    /// The median figure of the pairs it explains over the sweep's median
    /// (None: every one failed).
    pub of_median: Option<f64>,
    /// Of the pairs it explains, those that failed.
    pub failed: usize,
    /// Of the pairs it explains, those whose NIC counters say they lost
    /// packets on their way (resent or dropped).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lossy: usize,
    /// Of the pairs it explains, those whose flows split into slow and
    /// clean (`--flows`): a path through it, not their hosts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub path_sensitive: usize,
    /// The slow nodes it accounts for (most of their slow pairs are its).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow_nodes: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retest: Option<ElementRetest>,
}

/// A suspect's re-tests alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElementRetest {
    /// A slow pair crossing it, and its figure alone (None: failed or not run).
    pub crossing: (usize, usize),
    pub crossing_alone: Option<f64>,
    /// A clean pair avoiding it, sharing a rank with the crossing pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avoiding: Option<(usize, usize)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avoiding_alone: Option<f64>,
    pub verdict: ElementRetestVerdict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElementRetestVerdict {
    /// Crossing it still slow alone, avoiding it clean.
    Confirmed,
    /// Crossing it clean alone: slow only under the sweep's load.
    Cleared,
    /// Both slow alone: the fault is at their shared end, not here.
    NotTold,
    /// A re-test did not run (the sweep ran none, or a rank was gone).
    NotRun,
}

/// The LLDP outputs the ranks sent when they joined, as the map reads
/// them: each host's (the first rank on it) name, whose it is, and its
/// `lldpctl -f json`.
pub fn lldp_of(nodes: &[Node]) -> Vec<(String, String, String)> {
    let mut seen = HashSet::new();
    nodes
        .iter()
        .filter_map(|n| match (&n.host, &n.lldp) {
            (Some(h), Some(Ok(json))) if seen.insert(h.clone()) => {
                Some((h.clone(), format!("rank {}'s lldpctl -f json", n.rank), json.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The ranks that sent no LLDP (with `--topology lldp`), and why.
pub fn lldp_missing(nodes: &[Node]) -> Vec<(usize, String)> {
    nodes
        .iter()
        .filter_map(|n| match &n.lldp {
            Some(Err(why)) => Some((n.rank, why.clone())),
            None if n.host.is_some() => Some((n.rank, "it sent none".to_string())),
            _ => None,
        })
        .collect()
}

/// Each rank's host on the map ("" where the map has none), and the
/// ranks off the map.
pub fn placed(fabric: &Fabric, nodes: &[Node]) -> (Vec<String>, Vec<usize>) {
    let on: HashSet<&str> = fabric.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut off = Vec::new();
    let hosts = nodes
        .iter()
        .map(|n| {
            let name = n.host.as_deref().unwrap_or("");
            let short = name.split('.').next().unwrap_or(name);
            if on.contains(name) {
                name.to_string()
            } else if on.contains(short) {
                short.to_string()
            } else {
                off.push(n.rank);
                String::new()
            }
        })
        .collect();
    (hosts, off)
}

/// The fewest packets a pair's tests must have resent or dropped to be
/// lossy, and how many times the typical pair's.
const LOSSY_AT_LEAST: u64 = 10;
const LOSSY_TIMES_TYPICAL: u64 = 10;

/// What the NIC counters of a pair's two sides say was lost on its way
/// while it ran: the rises of its retransmit and drop counters, summed.
fn lost(p: &PairRecord) -> u64 {
    let Some(c) = p.counters.as_deref() else { return 0 };
    c.client
        .iter()
        .chain(&c.server)
        .filter(|n| matches!(n.class, Class::Retransmit | Class::Drop | Class::Physical))
        .map(|n| match n.change {
            Change::Rose { by } => by,
            _ => 0,
        })
        .sum()
}

/// The least a pair must have lost to be lossy: ten times the typical
/// (median) pair's, and at least ten packets (a shaped link's own queue
/// drops a few; a switch dropping frames, hundreds).
fn lossy_from(pairs: &[PairRecord]) -> u64 {
    let mut all: Vec<u64> = pairs
        .iter()
        .filter(|p| p.round.is_some() && !p.untested)
        .map(lost)
        .collect();
    all.sort_unstable();
    let typical = all.get(all.len() / 2).copied().unwrap_or(0);
    typical.saturating_mul(LOSSY_TIMES_TYPICAL).max(LOSSY_AT_LEAST)
}

/// The rounds' pairs as attribution sees them, one observation a pair:
/// slow when failed, an outlier by the analysis's rules or far below the
/// reference whatever the spread (with `--flows`, its slowest flow), or
/// lossy (its sides' NIC counters say it lost
/// packets on its way; a pair's counters are its flows' all);
/// re-tests and pairs never run left out. With each observation, its
/// pair's index among `pairs`, and whether it was lossy.
fn seen(pairs: &[PairRecord], an: &Analysis) -> (Vec<Seen>, Vec<usize>, Vec<bool>) {
    let mut out = Vec::new();
    let mut index = Vec::new();
    let mut lossy_too = Vec::new();
    let lossy_at = lossy_from(pairs);
    for (i, p) in pairs.iter().enumerate() {
        if p.round.is_none() || p.untested {
            continue;
        }
        let lossy = lost(p) >= lossy_at;
        // (with --flows, its slowest flow: each flow crossed the same
        // elements for sure and may have crossed the same others, so a
        // pair is one observation however many flows it ran)
        out.push(Seen {
            a: p.a,
            b: p.b,
            // (a pair's flows share its NICs unevenly: its slowest flow is
            // judged as an outlier only, not by how far below it is)
            slow: lossy || worst(p, an).is_none_or(|v| an.is_outlier(v) || (p.flows.is_none() && an.is_far_below(v))),
        });
        index.push(i);
        lossy_too.push(lossy);
    }
    (out, index, lossy_too)
}

/// A record's worst figure: its worst flow with `--flows` (None: one
/// failed), else its value.
fn worst(p: &PairRecord, an: &Analysis) -> Option<f64> {
    match p.flows.as_deref() {
        Some(flows) if !flows.is_empty() => flows.iter().try_fold(None::<f64>, |w, f| {
            let v = (*f)?;
            Some(Some(match w {
                Some(w) if an.better.worse_first(w, v).is_le() => w,
                _ => v,
            }))
        })?,
        _ => p.value,
    }
}

/// A pair's slow figures: its slow flows' with `--flows`, else its value.
fn slow_figures(p: &PairRecord, an: &Analysis) -> Vec<f64> {
    match p.flows.as_deref() {
        Some(flows) if !flows.is_empty() => flows.iter().flatten().copied().filter(|&v| an.is_outlier(v)).collect(),
        _ => p.value.into_iter().collect(),
    }
}

/// Is `p` path-sensitive: its flows split into slow (or failed) and clean?
pub fn splits(p: &PairRecord, an: &Analysis) -> bool {
    let Some(flows) = p.flows.as_deref() else { return false };
    let slow = flows.iter().filter(|f| f.is_none_or(|v| an.is_outlier(v))).count();
    slow > 0 && slow < flows.len()
}

/// The pairs of the rounds whose flows split (`--flows`), low rank first.
pub fn path_sensitive(pairs: &[PairRecord], an: &Analysis) -> Vec<(usize, usize)> {
    pairs
        .iter()
        .filter(|p| p.round.is_some() && splits(p, an))
        .map(|p| (p.a, p.b))
        .collect()
}

/// A suspect's kind: a host only when all its elements are hosts, else a
/// switch when any is one (a leaf with one host: the leaf), else cables.
fn kind_of_all(elements: &[Element]) -> ElementKind {
    if elements.iter().all(|e| matches!(e, Element::Host(_))) {
        ElementKind::Host
    } else if elements.iter().any(|e| matches!(e, Element::Switch(_))) {
        ElementKind::Switch
    } else {
        ElementKind::Cable
    }
}

/// The attribution of the sweep's pairs on `fabric`, with each rank's
/// host: what `judge` and `retest_pairs` both start from.
///
/// Loss first: a pair's NIC counters tell a lossy pair from a clean one
/// far more sharply than its figure does (hundreds of packets resent
/// against none or a few), so the elements the lossy pairs share are
/// found before a few pairs slowed by the machine's load can pull the
/// blame elsewhere; then the slow pairs left.
fn attributed(fabric: &Fabric, hosts: &[String], pairs: &[PairRecord], an: &Analysis) -> (Attribution, Vec<usize>) {
    let (mut seen, index, lossy) = seen(pairs, an);
    let slow: Vec<bool> = seen.iter().map(|s| s.slow).collect();
    for (s, &l) in seen.iter_mut().zip(&lossy) {
        s.slow = l;
    }
    let first = attribute(fabric, hosts, &seen);
    for (i, s) in seen.iter_mut().enumerate() {
        s.slow = slow[i];
    }
    for i in first.suspects.iter().flat_map(|s| &s.pairs) {
        if let Some(s) = seen.get_mut(*i as usize) {
            s.slow = false;
        }
    }
    let mut then = attribute(fabric, hosts, &seen);
    let blamed: HashSet<&Element> = first.suspects.iter().flat_map(|s| &s.elements).collect();
    then.cleared.retain(|e| !blamed.contains(e));
    let mut suspects = first.suspects;
    suspects.extend(then.suspects);
    (
        Attribution {
            suspects,
            cleared: then.cleared,
            unexplained: then.unexplained,
            off_map: then.off_map,
        },
        index,
    )
}

/// A pair crossing a suspect, and one avoiding it (None: none found).
pub type RetestPair = ((usize, usize), Option<(usize, usize)>);

/// For each suspect, the pairs to re-test alone: a slow pair that crosses
/// it, and a clean pair that shares a rank with that one and avoids every
/// element of the suspect. At most `limit` suspects; ranks `usable` only.
pub fn retest_pairs(
    fabric: &Fabric,
    hosts: &[String],
    pairs: &[PairRecord],
    an: &Analysis,
    usable: impl Fn(usize) -> bool,
    limit: usize,
) -> Vec<RetestPair> {
    let (att, index) = attributed(fabric, hosts, pairs, an);
    att.suspects
        .iter()
        .take(limit)
        .filter_map(|s| chosen(fabric, hosts, pairs, &index, s, &usable))
        .collect()
}

fn chosen(
    fabric: &Fabric,
    hosts: &[String],
    pairs: &[PairRecord],
    index: &[usize],
    s: &Suspect,
    usable: &impl Fn(usize) -> bool,
) -> Option<RetestPair> {
    let crossing = s
        .pairs
        .iter()
        .filter_map(|&i| index.get(i as usize).and_then(|&k| pairs.get(k)))
        .find(|p| usable(p.a) && usable(p.b))?;
    let avoids = |p: &PairRecord| {
        let (Some(a), Some(b)) = (hosts.get(p.a), hosts.get(p.b)) else {
            return false;
        };
        fabric
            .ways(a, b)
            .is_some_and(|w| !w.possible.is_empty() && s.elements.iter().all(|e| !w.possible.contains(e)))
    };
    // a clean pair of the rounds with one of the crossing pair's ranks,
    // the few first found (each costs a search of the map)
    let avoiding = pairs
        .iter()
        .filter(|p| p.round.is_some() && p.value.is_some())
        .filter(|p| (p.a, p.b) != (crossing.a, crossing.b))
        .filter(|p| [p.a, p.b].iter().any(|r| *r == crossing.a || *r == crossing.b))
        .filter(|p| usable(p.a) && usable(p.b))
        .take(64)
        .find(|p| avoids(p))
        .map(|p| (p.a, p.b));
    Some(((crossing.a, crossing.b), avoiding))
}

/// The fabric's verdict on a finished sweep.
pub fn judge(
    fabric: &Fabric,
    source: &str,
    nodes: &[Node],
    pairs: &[PairRecord],
    retests: &[PairRecord],
    an: &Analysis,
) -> FabricVerdict {
    let (hosts, off_map) = placed(fabric, nodes);
    let (att, index) = attributed(fabric, &hosts, pairs, an);
    let lossy_at = lossy_from(pairs);
    let alone: HashMap<(usize, usize), &PairRecord> = retests.iter().map(|r| ((r.a, r.b), r)).collect();
    let blamed = att
        .suspects
        .iter()
        .map(|s| {
            let ks: Vec<usize> = s.pairs.iter().filter_map(|&i| index.get(i as usize).copied()).collect();
            let explained: Vec<&PairRecord> = ks.iter().filter_map(|&k| pairs.get(k)).collect();
            // each pair's slow figure: with flows, its slow flows'
            let mut figures: Vec<f64> = explained.iter().flat_map(|p| slow_figures(p, an)).collect();
            figures.sort_by(f64::total_cmp);
            let of_median = figures
                .get(figures.len() / 2)
                .filter(|_| an.stats.median > 0.0)
                .map(|m| m / an.stats.median);
            let slow_nodes = an
                .slow_nodes
                .iter()
                .filter(|f| {
                    let mine = explained.iter().filter(|p| p.a == f.node || p.b == f.node).count();
                    mine * 2 > f.outlier_pairs.max(1)
                })
                .map(|f| f.node)
                .collect::<Vec<_>>();
            let mut slow_nodes = slow_nodes;
            slow_nodes.sort_unstable();
            let retest = chosen(fabric, &hosts, pairs, &index, s, &|_| true).and_then(|(c, avoid)| {
                let crossing = *alone.get(&c)?;
                let avoiding = avoid.and_then(|k| alone.get(&k).copied());
                // with flows, the slowest flow: the one on the slow path
                let (crossing_alone, avoiding_alone) = (worst(crossing, an), avoiding.and_then(|r| worst(r, an)));
                // still below the fraction of the reference alone (as a
                // slow node's re-test is judged: alone a pair should beat
                // the contended figures), or still losing packets
                let bad = |r: &PairRecord| worst(r, an).is_none_or(|v| an.is_low(v)) || lost(r) >= lossy_at;
                let verdict = match (bad(crossing), avoiding.map(bad)) {
                    (false, _) => ElementRetestVerdict::Cleared,
                    (true, Some(false)) => ElementRetestVerdict::Confirmed,
                    (true, Some(true)) => ElementRetestVerdict::NotTold,
                    (true, None) => ElementRetestVerdict::NotRun,
                };
                Some(ElementRetest {
                    crossing: c,
                    crossing_alone,
                    avoiding: avoid,
                    avoiding_alone,
                    verdict,
                })
            });
            Blamed {
                elements: s.elements.iter().map(Element::to_string).collect(),
                kind: kind_of_all(&s.elements),
                explained: s.explained,
                through: s.through,
                slow_through: s.slow_through,
                of_median,
                failed: explained.iter().filter(|p| p.value.is_none()).count(),
                path_sensitive: explained.iter().filter(|p| splits(p, an)).count(),
                lossy: explained.iter().filter(|p| lost(p) >= lossy_at).count(),
                slow_nodes,
                retest,
            }
        })
        .collect();
    FabricVerdict {
        source: source.to_string(),
        map: shape(fabric),
        off_map,
        blamed,
        cleared: att.cleared.iter().map(Element::to_string).collect(),
        unexplained: att.unexplained,
        flows: pairs
            .iter()
            .find_map(|p| p.flows.as_ref().map(|f| f.len()))
            .unwrap_or(1),
    }
}

/// What the verdict names to look at, with the fabric judged: each
/// blamed switch or cable, and not the hosts of the slow nodes it
/// accounts for (a slow leaf's hosts are not what to drain).
pub fn to_look_at(f: &FabricVerdict, nodes: &[Node], v: &mut crate::doc::Verdict) {
    let mut spared = HashSet::new();
    // (a suspect cleared by its re-test alone is no fault of the fabric)
    let cleared = |b: &&Blamed| {
        b.retest
            .as_ref()
            .is_some_and(|r| r.verdict == ElementRetestVerdict::Cleared)
    };
    for b in f.blamed.iter().filter(|b| b.kind != ElementKind::Host && !cleared(b)) {
        v.suspect_elements.push(b.elements.join(" or "));
        spared.extend(
            b.slow_nodes
                .iter()
                .filter_map(|&r| nodes.get(r).and_then(|n| n.host.as_deref())),
        );
    }
    v.suspect_hosts.retain(|h| !spared.contains(h.as_str()));
}

/// The most cables a document's map may count between two switches.
const MOST_IN_A_BUNDLE: u32 = 4096;

/// The map a document kept, checked again as a map.
pub fn fabric_of(shape: &MapShape, origin: &str) -> Result<Fabric, fabdiag_topology::MapError> {
    let switches = shape.switches.clone();
    let hosts = shape.hosts.clone();
    let mut ends: Vec<(String, String)> = Vec::new();
    for c in &shape.cables {
        if !c.ends.is_empty() {
            ends.extend(c.ends.iter().cloned());
            continue;
        }
        // (a document is read as untrusted as any file)
        if c.count == 0 || c.count > MOST_IN_A_BUNDLE {
            return Err(fabdiag_topology::MapError::Invalid {
                origin: origin.to_string(),
                message: format!(
                    "{} cables between {} and {}: 1 to {MOST_IN_A_BUNDLE}",
                    c.count, c.a, c.b
                ),
            });
        }
        ends.extend(std::iter::repeat_n((c.a.clone(), c.b.clone()), c.count as usize));
    }
    let mut fabric = Fabric::build(origin, switches, hosts, &ends)?;
    fabric.routes = shape.routes.clone();
    Ok(fabric)
}

/// The map as the document keeps it.
pub fn shape(f: &Fabric) -> MapShape {
    MapShape {
        switches: f.switches.clone(),
        hosts: f.hosts.clone(),
        cables: f
            .cables
            .iter()
            .map(|c| MapCable {
                a: c.a.clone(),
                b: c.b.clone(),
                count: c.count,
                // (ends without ports say nothing the names do not)
                ends: if c.ends.iter().any(|(x, y)| x.contains(':') || y.contains(':')) {
                    c.ends.clone()
                } else {
                    Vec::new()
                },
            })
            .collect(),
        routes: f.routes.clone(),
    }
}
