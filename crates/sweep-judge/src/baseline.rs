//! A sweep against an earlier one (`--baseline`): reads the earlier
//! sweep's JSON document (only its test, its nodes and its pair figures,
//! streamed, so a file of gigabytes is never held whole), matches nodes by
//! what names them (host, NIC, GPU: ranks change from one allocation to
//! the next), and finds the pairs and nodes that have fallen below a
//! fraction of their own earlier figure. A fabric's links differ (one
//! switch hop or three), so a link that is slower than it was can still
//! sit above the sweep's own outlier line; this is what finds it. Reads
//! only the file it is given; never prints.

use crate::analysis::{median, Better, Matrix};
use crate::doc::{AbsentNode, Comparison, ErrorRates, LinkChange, Metric, NodeChange, SCHEMA};
use crate::error::ReportError;
use crate::error_rates::{self, Rates};
use fabdiag_sweep_plan::folder::{RunOptions, COMPARED};
use fabdiag_sweep_plan::{Node, PairNoted, PairRecord};
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// What names a rank across sweeps: its host, NIC and GPU, and which of
/// the ranks so named it is, in rank order (two ranks on one host with no
/// `-d` are that host's first and second).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Ident {
    host: String,
    device: Option<String>,
    gpu: Option<String>,
    nth: usize,
}

/// Each rank's identity, in rank order; none for a rank that never joined
/// (nothing names it).
fn idents<'a>(
    nodes: impl Iterator<Item = (&'a Option<String>, &'a Option<String>, &'a Option<String>)>,
) -> Vec<Option<Ident>> {
    let mut seen: HashMap<(&str, Option<&str>, Option<&str>), usize> = HashMap::new();
    nodes
        .map(|(host, device, gpu)| {
            let host = host.as_deref()?;
            let nth = seen.entry((host, device.as_deref(), gpu.as_deref())).or_default();
            *nth += 1;
            Some(Ident {
                host: host.to_string(),
                device: device.clone(),
                gpu: gpu.clone(),
                nth: *nth - 1,
            })
        })
        .collect()
}

/// "node8 cxi1 GPU 1", as the report names a node without its rank.
fn ident_name(i: &Ident) -> String {
    [Some(i.host.as_str()), i.device.as_deref(), i.gpu.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// An earlier sweep, as far as a comparison needs it.
#[derive(Debug)]
pub struct Baseline {
    /// Where it was read from, as given.
    pub file: String,
    pub started: String,
    pub fabdiag_version: String,
    metric: Metric,
    /// Its options (the pair test's among them).
    options: RunOptions,
    /// Each of its ranks' identity, by its rank.
    idents: Vec<Option<Ident>>,
    /// Its pairs' figures, by its ranks (as its own `matrix` held them).
    figures: Matrix,
    /// Each of its ranks' NIC error rises over its pair tests, and
    /// whether its counters were read, by its rank.
    rates: Vec<Rates>,
    read: Vec<bool>,
}

/// The parts of a sweep document read here; serde skips the rest (the
/// matrix, the analysis) without keeping it.
#[derive(Deserialize)]
struct Doc {
    schema: String,
    #[serde(default)]
    fabdiag_version: String,
    #[serde(default)]
    options: RunOptions,
    metric: Metric,
    #[serde(default)]
    started: String,
    nodes: Vec<DocNode>,
    pairs: Figures,
}

#[derive(Deserialize)]
struct DocNode {
    rank: usize,
    host: Option<String>,
    #[serde(default)]
    device: Option<String>,
    #[serde(default)]
    gpu: Option<String>,
    #[serde(default)]
    counters: Option<String>,
}

#[derive(Deserialize)]
struct DocPair {
    a: usize,
    b: usize,
    round: Option<u32>,
    value: Option<f64>,
    #[serde(default)]
    client: Option<usize>,
    #[serde(default)]
    server: Option<usize>,
    #[serde(default)]
    untested: bool,
    #[serde(default)]
    counters: Option<PairNoted>,
}

/// The sweep's measured figures (a, b, value), read a pair at a time: a
/// 10,000-rank document has 50 million pairs, and a whole record each
/// would take gigabytes. Re-tests (no round) are not the sweep's figure.
/// Beside them, each rank's NIC error rises (re-tests too: they ran), a
/// few counters per rank however many pairs.
struct Figures(Vec<(u32, u32, f32)>, Vec<Rates>);

impl<'de> Deserialize<'de> for Figures {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Figures, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Figures;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of pair records")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Figures, A::Error> {
                let mut out = Vec::new();
                let mut rates: Vec<Rates> = Vec::new();
                while let Some(p) = seq.next_element::<DocPair>()? {
                    let fits = |x: usize| u32::try_from(x).ok();
                    if let (Some(a), Some(b), Some(v), Some(_)) = (fits(p.a), fits(p.b), p.value, p.round) {
                        out.push((a, b, v as f32));
                    }
                    if p.untested {
                        continue;
                    }
                    for (rank, client) in [(p.client, true), (p.server, false)] {
                        // (a rank past any sweep's is no rank: left out)
                        let Some(rank) = rank.filter(|&r| r < fabdiag_sweep_plan::MAX_RANKS) else {
                            continue;
                        };
                        if rates.len() <= rank {
                            rates.resize(rank + 1, Rates::default());
                        }
                        let noted = p.counters.as_ref().map_or(&[][..], |c| match client {
                            true => &c.client[..],
                            false => &c.server[..],
                        });
                        rates[rank].add(noted);
                    }
                }
                Ok(Figures(out, rates))
            }
        }
        d.deserialize_seq(V)
    }
}

/// The keys of a pair test's options that change how long or how a run
/// measures, not what it measures: a baseline may differ in them.
const NOT_THE_TEST: &[&str] = &["iterations", "duration_s", "warmup", "report_all", "verify", "clock"];

impl Baseline {
    /// The sweep an `--output` folder recorded (`reread::recorded`), as a
    /// baseline.
    pub fn of(f: crate::reread::Finished, dir: &Path) -> Baseline {
        let n = f.sweep.nodes.len();
        let mut figures = Matrix::new(n);
        for p in f.sweep.pairs.iter().filter(|p| p.round.is_some()) {
            if let Some(v) = p.value {
                figures.set(p.a, p.b, v);
            }
        }
        Baseline {
            file: dir.display().to_string(),
            started: humantime::format_rfc3339_millis(f.sweep.started).to_string(),
            fabdiag_version: f.fabdiag_version,
            idents: idents(f.sweep.nodes.iter().map(|x| (&x.host, &x.device, &x.gpu))),
            rates: error_rates::of_pairs(&f.sweep.pairs, n),
            read: error_rates::read_of(&f.sweep.nodes),
            metric: f.metric,
            options: f.options,
            figures,
        }
    }

    /// Its pairs' figures, by its ranks.
    pub fn figures(&self) -> &Matrix {
        &self.figures
    }

    /// A sweep document read from `r`; `file` names it in messages.
    pub fn from_reader(file: &str, r: impl std::io::Read) -> Result<Baseline, ReportError> {
        let bad = |reason: String| ReportError::Baseline {
            path: file.to_string(),
            reason,
        };
        let doc: Doc =
            serde_json::from_reader(r).map_err(|e| bad(format!("not a fabdiag sweep's JSON document ({e})")))?;
        if doc.schema != SCHEMA {
            return Err(bad(format!(
                "its schema is '{}'; this fabdiag reads '{SCHEMA}'",
                doc.schema
            )));
        }
        let n = doc.nodes.len();
        if n > fabdiag_sweep_plan::MAX_RANKS {
            return Err(bad(format!(
                "its {n} ranks are more than a sweep takes ({})",
                fabdiag_sweep_plan::MAX_RANKS
            )));
        }
        if let Some(x) = doc.nodes.iter().enumerate().find(|(i, x)| x.rank != *i) {
            return Err(bad(format!("its node {} says it is rank {}", x.0, x.1.rank)));
        }
        let mut rates = doc.pairs.1;
        rates.resize(n, Rates::default());
        let mut figures = Matrix::new(n);
        for &(a, b, v) in &doc.pairs.0 {
            // (a pair of ranks the document does not have is no figure)
            figures.set(a as usize, b as usize, f64::from(v));
        }
        Ok(Baseline {
            file: file.to_string(),
            started: doc.started,
            fabdiag_version: doc.fabdiag_version,
            options: doc.options,
            idents: idents(doc.nodes.iter().map(|x| (&x.host, &x.device, &x.gpu))),
            read: doc
                .nodes
                .iter()
                .map(|x| error_rates::was_read(x.counters.as_deref()))
                .collect(),
            metric: doc.metric,
            figures,
            rates,
        })
    }

    /// Refuses a baseline that measured something else than `metric` with
    /// `options` (the sweep's options, as its document keeps them): another
    /// tool or size, provider, memory, or pair-tool setting that changes the
    /// figure. How long it ran (iterations, duration, warm-up) may differ.
    pub fn check(&self, metric: &Metric, options: &RunOptions) -> Result<(), ReportError> {
        let bad = |reason: String| ReportError::Baseline {
            path: self.file.clone(),
            reason,
        };
        if self.metric.test != metric.test || self.metric.name != metric.name {
            return Err(bad(format!(
                "it measured {} ({}), this sweep measures {} ({}): compare sweeps of the same test",
                self.metric.test, self.metric.name, metric.test, metric.name
            )));
        }
        let differs = |k: &str, t: Option<&serde_json::Value>, o: Option<&serde_json::Value>| {
            let say = |v: Option<&serde_json::Value>| match v {
                None | Some(serde_json::Value::Null) => "(not given)".to_string(),
                Some(v) => v.to_string(),
            };
            bad(format!(
                "its pairs ran with {k} {}, this sweep's with {}: compare sweeps of the same test",
                say(t),
                say(o)
            ))
        };
        // (a document from before these were kept says nothing of them)
        for k in COMPARED {
            let (t, o) = (self.options.compared(k), options.compared(k));
            if t.is_some() && t != o {
                return Err(differs(k, t.as_ref(), o.as_ref()));
            }
        }
        let (Some(theirs), Some(ours)) = (
            self.options.test.as_ref().and_then(|t| t.as_object()),
            options.test.as_ref().and_then(|t| t.as_object()),
        ) else {
            return Ok(());
        };
        let keys = theirs.keys().chain(ours.keys().filter(|k| !theirs.contains_key(*k)));
        for k in keys.filter(|k| !NOT_THE_TEST.contains(&k.as_str())) {
            let (t, o) = (theirs.get(k), ours.get(k));
            if t != o {
                return Err(differs(k, t, o));
            }
        }
        Ok(())
    }
}

/// This sweep's ranks matched to the baseline's by what names them, and
/// the pairs measured in both (`compare`, and the change picture).
pub struct Matched<'a> {
    base: &'a Baseline,
    /// This sweep's identities, by its ranks.
    ours: Vec<Option<Ident>>,
    /// This sweep's rank -> the baseline's.
    there: Vec<Option<usize>>,
    better: Better,
}

impl<'a> Matched<'a> {
    /// This sweep's nodes (their names, in rank order) matched to `base`'s.
    pub fn new<'n>(
        base: &'a Baseline,
        nodes: impl Iterator<Item = (&'n Option<String>, &'n Option<String>, &'n Option<String>)>,
        better: Better,
    ) -> Matched<'a> {
        let ours = idents(nodes);
        let at: HashMap<&Ident, usize> = base
            .idents
            .iter()
            .enumerate()
            .filter_map(|(r, i)| i.as_ref().map(|i| (i, r)))
            .collect();
        let there = ours
            .iter()
            .map(|i| i.as_ref().and_then(|i| at.get(i).copied()))
            .collect();
        Matched {
            base,
            ours,
            there,
            better,
        }
    }

    /// Each pair measured in both sweeps as (a, b, figure, baseline
    /// figure, fraction of it; below 1 worse, latency too), walked again
    /// for each use rather than kept (N²/2 of them: 2 GB at 10,000 ranks).
    fn compared<'m>(&'m self, now: &'m Matrix) -> impl Iterator<Item = (usize, usize, f64, f64, f64)> + 'm {
        now.measured().filter_map(move |(a, b, v)| {
            let there = |r: usize| self.there.get(r).copied().flatten();
            let then = self.base.figures.get(there(a)?, there(b)?)?;
            let f = match self.better {
                Better::Higher => v / then,
                Better::Lower => then / v,
            };
            (f.is_finite() && then > 0.0).then_some((a, b, v, then, f))
        })
    }

    /// (a, b, fraction of the baseline figure) for each pair of `now`
    /// measured in both sweeps, walked, not kept.
    pub fn fractions<'m>(&'m self, now: &'m Matrix) -> impl Iterator<Item = (usize, usize, f64)> + 'm {
        self.compared(now).map(|(a, b, _, _, f)| (a, b, f))
    }
}

/// This sweep (its `nodes` and measured figures `now`, by its ranks)
/// against `base`: a pair has regressed below `fraction` of its baseline
/// figure (scaled by the fabric's own change, see `Comparison::limit`),
/// a node when more than `node_fraction` of its compared pairs have.
pub fn compare(
    base: &Baseline,
    nodes: &[Node],
    pairs: &[PairRecord],
    now: &Matrix,
    better: Better,
    fraction: f64,
    node_fraction: f64,
) -> Comparison {
    let matched = Matched::new(base, nodes.iter().map(|x| (&x.host, &x.device, &x.gpu)), better);
    let (ours, there) = (&matched.ours, &matched.there);
    let compared = || matched.compared(now);
    let mut fractions: Vec<f64> = compared().map(|c| c.4).collect();
    let compared_pairs = fractions.len();
    let med = (!fractions.is_empty()).then(|| median(&mut fractions));
    drop(fractions);
    let limit = fraction * med.map_or(1.0, |m| m.min(1.0));
    let n = nodes.len();
    // each rank's (regressed, compared) pairs
    let mut per_node = vec![(0usize, 0usize); n];
    let mut regressed_pairs = 0;
    for (a, b, _, _, f) in compared() {
        regressed_pairs += usize::from(f < limit);
        for r in [a, b] {
            if let Some(c) = per_node.get_mut(r) {
                c.1 += 1;
                c.0 += usize::from(f < limit);
            }
        }
    }
    let regressed_node = |r: usize| {
        let (bad, all) = per_node.get(r).copied().unwrap_or_default();
        all > 0 && bad as f64 > node_fraction * all as f64
    };
    // the regressed nodes' fractions, for their medians, and the regressed
    // links between nodes that are not (a regressed node's pairs are said
    // once, as that node)
    let mut node_fractions: HashMap<usize, Vec<f64>> =
        (0..n).filter(|&r| regressed_node(r)).map(|r| (r, Vec::new())).collect();
    let mut links = Vec::new();
    for (a, b, value, baseline, of_baseline) in compared() {
        for r in [a, b] {
            if let Some(v) = node_fractions.get_mut(&r) {
                v.push(of_baseline);
            }
        }
        if of_baseline < limit && !regressed_node(a) && !regressed_node(b) {
            links.push(LinkChange {
                a,
                b,
                value,
                baseline,
                of_baseline,
            });
        }
    }
    links.sort_by(|x, y| {
        x.of_baseline
            .total_cmp(&y.of_baseline)
            .then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    let mut changed_nodes: Vec<NodeChange> = node_fractions
        .into_iter()
        .map(|(rank, mut fs)| NodeChange {
            rank,
            baseline_rank: there.get(rank).copied().flatten().unwrap_or_default(),
            of_baseline: median(&mut fs),
            regressed_pairs: per_node.get(rank).map_or(0, |c| c.0),
            compared_pairs: per_node.get(rank).map_or(0, |c| c.1),
        })
        .collect();
    changed_nodes.sort_by_key(|x| x.rank);
    let present: std::collections::HashSet<&Ident> = ours.iter().flatten().collect();
    Comparison {
        file: base.file.clone(),
        started: base.started.clone(),
        fabdiag_version: base.fabdiag_version.clone(),
        fraction,
        node_fraction,
        compared_pairs,
        median: med,
        limit,
        regressed_pairs,
        fabric_regressed: med.is_some_and(|m| m < fraction),
        nodes: changed_nodes,
        links,
        new_nodes: (0..n).filter(|&r| ours[r].is_some() && there[r].is_none()).collect(),
        absent_nodes: base
            .idents
            .iter()
            .enumerate()
            .filter_map(|(r, i)| i.as_ref().filter(|i| !present.contains(i)).map(|i| (r, i)))
            .map(|(baseline_rank, i)| AbsentNode {
                baseline_rank,
                name: ident_name(i),
            })
            .collect(),
        error_rates: error_rates_against(base, nodes, pairs, there),
    }
}

/// This sweep's NIC error rates against `base`'s, node for node.
fn error_rates_against(base: &Baseline, nodes: &[Node], pairs: &[PairRecord], there: &[Option<usize>]) -> ErrorRates {
    let rates = error_rates::of_pairs(pairs, nodes.len());
    let read = error_rates::read_of(nodes);
    error_rates::compare(
        error_rates::Side {
            rates: &rates,
            read: &read,
        },
        error_rates::Side {
            rates: &base.rates,
            read: &base.read,
        },
        there,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::doc::SweepDoc;
    use crate::fixtures::{baseline_of, build_with, doc_with, flapping_on, sweep_on, sweep_with};

    fn against(base: &Baseline, doc: &SweepDoc, better: Better) -> Comparison {
        let nodes: Vec<Node> = doc.nodes.iter().map(|x| x.node.clone()).collect();
        compare(base, &nodes, &doc.pairs, &doc.matrix, better, 0.8, 0.5)
    }

    #[test]
    fn a_link_below_its_own_earlier_figure_is_named_though_no_outlier() {
        let base = baseline_of(&doc_with(8, &[((2, 5), 200.0)], &[], &[]));
        let now = doc_with(8, &[], &[], &[]);
        assert!(now.analysis.slow_links.is_empty(), "every pair is at 100: no outlier");
        let c = against(&base, &now, Better::Higher);
        assert_eq!(c.compared_pairs, 28);
        assert_eq!(c.median, Some(1.0));
        assert!(!c.fabric_regressed);
        assert!(c.nodes.is_empty(), "{:?}", c.nodes);
        assert_eq!(
            c.links,
            vec![LinkChange {
                a: 2,
                b: 5,
                value: 100.0,
                baseline: 200.0,
                of_baseline: 0.5
            }]
        );
        assert_eq!(c.regressed_pairs, 1);
        // a link at 0.85 of its figure is within the default 0.8
        let base = baseline_of(&doc_with(8, &[((2, 5), 117.0)], &[], &[]));
        assert!(against(&base, &now, Better::Higher).links.is_empty());
    }

    /// The baseline's node1 (its rank 0) flapped; now node2 (rank 2) does
    /// and node1 (rank 1) no longer: both said, node by node, through the
    /// document streamed back, in the text and on the page.
    #[test]
    fn nic_error_rates_are_compared_node_for_node() {
        let base = baseline_of(&flapping_on(1, 0));
        let now = flapping_on(0, 2);
        let e = against(&base, &now, Better::Higher).error_rates;
        assert_eq!((e.compared_nodes, e.not_compared.as_deref()), (4, None));
        let said = |l: &[crate::doc::ErrorRateChange]| -> Vec<(usize, usize, f64, f64)> {
            l.iter()
                .map(|x| (x.rank, x.baseline_rank, x.per_test, x.baseline_per_test))
                .collect()
        };
        assert_eq!(said(&e.risen), [(2, 1, 2.0, 0.0)]);
        assert_eq!(said(&e.fallen), [(1, 0, 0.0, 2.0)]);
        // a baseline whose nodes read no counters says so, once
        let mut unread = flapping_on(1, 0);
        unread.nodes.iter_mut().for_each(|x| x.node.counters = None);
        let e = against(&baseline_of(&unread), &now, Better::Higher).error_rates;
        assert_eq!(e.not_compared.as_deref(), Some("the baseline read no NIC counters"));
        assert!(e.risen.is_empty() && e.fallen.is_empty());
    }

    #[test]
    fn nodes_are_matched_by_name_not_by_rank() {
        // the baseline's rank r was on host (r + 3) mod 8: host 2 was its
        // rank 7 and host 5 its rank 2, host 3 its rank 0
        let host = |r: usize| format!("node{r}");
        let base = baseline_of(&sweep_on(8, &[((2, 7), 200.0)], |r| host((r + 3) % 8)));
        let slow3: Vec<((usize, usize), f64)> = (0..8)
            .filter(|&r| r != 3)
            .map(|r| ((r.min(3), r.max(3)), 25.0))
            .collect();
        let c = against(&base, &sweep_on(8, &slow3, host), Better::Higher);
        assert_eq!(c.compared_pairs, 28);
        assert_eq!(
            c.links.iter().map(|x| (x.a, x.b, x.baseline)).collect::<Vec<_>>(),
            vec![(2, 5, 200.0)]
        );
        assert_eq!(
            c.nodes,
            vec![NodeChange {
                rank: 3,
                baseline_rank: 0,
                of_baseline: 0.25,
                regressed_pairs: 7,
                compared_pairs: 7
            }]
        );
        assert!(c.new_nodes.is_empty() && c.absent_nodes.is_empty());
        // matched by rank instead, host 2 and host 5 would be the baseline's
        // pair 2-5 at 100, and nothing would be named
    }

    #[test]
    fn a_fabric_slower_as_a_whole_is_said_once_and_the_pairs_worse_than_that_named() {
        let base = baseline_of(&doc_with(8, &[], &[], &[]));
        let mut values: Vec<((usize, usize), f64)> = Vec::new();
        for a in 0..8 {
            for b in a + 1..8 {
                values.push(((a, b), if (a, b) == (1, 4) { 20.0 } else { 50.0 }));
            }
        }
        let c = against(&base, &doc_with(8, &values, &[], &[]), Better::Higher);
        assert!(c.fabric_regressed);
        assert_eq!(c.median, Some(0.5));
        assert!((c.limit - 0.4).abs() < 1e-12, "{}", c.limit);
        assert_eq!(c.links.iter().map(|x| (x.a, x.b)).collect::<Vec<_>>(), vec![(1, 4)]);
        assert!(c.nodes.is_empty());
    }

    #[test]
    fn a_latency_regresses_when_it_grows() {
        let base = baseline_of(&doc_with(6, &[], &[], &[]));
        let c = against(
            &base,
            &doc_with(6, &[((0, 1), 300.0), ((2, 3), 50.0)], &[], &[]),
            Better::Lower,
        );
        assert_eq!(c.links.len(), 1, "{:?}", c.links);
        assert_eq!((c.links[0].a, c.links[0].b), (0, 1));
        assert!((c.links[0].of_baseline - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn nodes_new_and_gone_are_listed_and_their_pairs_not_compared() {
        let base = baseline_of(&sweep_on(4, &[], |r| format!("node{r}")));
        let now = sweep_on(4, &[], |r| if r == 3 { "spare1".into() } else { format!("node{r}") });
        let c = against(&base, &now, Better::Higher);
        assert_eq!(c.compared_pairs, 3);
        assert_eq!(c.new_nodes, vec![3]);
        assert_eq!(
            c.absent_nodes,
            vec![AbsentNode {
                baseline_rank: 3,
                name: "node3".into()
            }]
        );
        // a rank that never joined the baseline names nothing
        let mut s = sweep_with(4, &[], &[], &[2]);
        s.nodes[2].host = None;
        let base = baseline_of(&build_with(s, None));
        let c = against(&base, &doc_with(4, &[], &[], &[]), Better::Higher);
        assert_eq!((c.compared_pairs, c.new_nodes.clone()), (3, vec![2]));
        assert!(c.absent_nodes.is_empty());
    }

    #[test]
    fn ranks_of_one_host_are_told_apart_by_nic_and_gpu_then_by_order() {
        let mut s = sweep_with(4, &[((0, 2), 200.0)], &[], &[]);
        for x in &mut s.nodes {
            x.host = Some("node0".into());
            x.device = Some(format!("cxi{}", x.rank % 2));
        }
        let base = baseline_of(&build_with(s.clone(), None));
        // the same line-up: ranks 0 and 2 are node0's first and second on cxi0
        let now = build_with(sweep_with(4, &[], &[], &[]), None);
        let mut same = s;
        for p in &mut same.pairs {
            p.value = p.value.map(|_| 100.0);
        }
        let c = against(&base, &build_with(same, None), Better::Higher);
        assert_eq!(c.links.iter().map(|x| (x.a, x.b)).collect::<Vec<_>>(), vec![(0, 2)]);
        // hosts that differ share nothing
        assert_eq!(against(&base, &now, Better::Higher).compared_pairs, 0);
    }

    #[test]
    fn a_re_test_is_not_the_baseline_figure() {
        let mut s = sweep_with(4, &[], &[], &[]);
        let mut again = s.pairs[0].clone();
        again.round = None;
        again.value = Some(1000.0);
        s.pairs.push(again);
        let base = baseline_of(&build_with(s, None));
        let c = against(&base, &doc_with(4, &[], &[], &[]), Better::Higher);
        assert_eq!((c.compared_pairs, c.median), (6, Some(1.0)));
    }

    #[test]
    fn what_cannot_be_a_baseline_is_said_in_one_line() {
        let err = |text: &str| {
            Baseline::from_reader("b.json", text.as_bytes())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err("root:x:0:0").starts_with("--baseline b.json: not a fabdiag sweep's JSON document"));
        assert!(err("{\"schema\": \"x\"}").contains("not a fabdiag sweep's JSON document (missing field"));
        let mut doc = serde_json::to_value(doc_with(2, &[], &[], &[])).expect("serializes");
        doc["schema"] = "fabdiag-sweep/9".into();
        assert_eq!(
            err(&doc.to_string()),
            "--baseline b.json: its schema is 'fabdiag-sweep/9'; this fabdiag reads 'fabdiag-sweep/1'"
        );
        for e in ["root:x:0:0", "{\"schema\": \"x\"}", &doc.to_string()] {
            assert!(!err(e).contains('\n'), "{}", err(e));
        }
    }

    #[test]
    fn a_baseline_of_another_test_is_refused_and_one_of_another_length_is_not() {
        let metric = |test: &str| Metric {
            name: "bandwidth".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
            test: test.into(),
        };
        let options = |provider: Option<&str>, iterations: u64, list: u64| {
            serde_json::json!({
                "tool": "write-bw",
                "provider": provider,
                "tx_memory": "system",
                "rx_memory": "system",
                "test": { "tool": "cxi_write_bw", "iterations": iterations, "list_size": list, "max_size": 65536 },
            })
        };
        let mut doc = serde_json::to_value(doc_with(2, &[], &[], &[])).expect("serializes");
        doc["options"] = options(None, 1000, 256);
        let base = Baseline::from_reader("b.json", doc.to_string().as_bytes()).expect("reads");
        let check = |m: &Metric, o: &serde_json::Value| {
            let o: RunOptions = serde_json::from_value(o.clone()).expect("options");
            base.check(m, &o).err().map(|e| e.to_string())
        };
        let same = metric("write-bw 65536 B");
        assert_eq!(check(&same, &options(None, 10, 256)), None);
        assert_eq!(
            check(&metric("write-bw 4096 B"), &options(None, 1000, 256)).as_deref(),
            Some("--baseline b.json: it measured write-bw 65536 B (bandwidth), this sweep measures write-bw 4096 B (bandwidth): compare sweeps of the same test")
        );
        assert_eq!(
            check(&same, &options(Some("verbs"), 1000, 256)).as_deref(),
            Some("--baseline b.json: its pairs ran with provider (not given), this sweep's with \"verbs\": compare sweeps of the same test")
        );
        assert_eq!(
            check(&same, &options(None, 1000, 64)).as_deref(),
            Some("--baseline b.json: its pairs ran with list_size 256, this sweep's with 64: compare sweeps of the same test")
        );
        // a document that kept no provider is not refused for it
        doc["options"].as_object_mut().map(|o| o.remove("provider"));
        let old = Baseline::from_reader("b.json", doc.to_string().as_bytes()).expect("reads");
        let verbs: RunOptions = serde_json::from_value(options(Some("verbs"), 1000, 256)).expect("options");
        assert!(old.check(&same, &verbs).is_ok());
    }
}
