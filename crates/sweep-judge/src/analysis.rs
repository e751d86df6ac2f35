//! Which pairs and nodes are slow. A pair is an outlier when it is both
//! slower than a fraction of the reference (the median of all pairs, or
//! the best) and far from the median in robust terms (its distance over
//! 1.4826 × the median absolute deviation): the fraction alone would flag
//! noise in a tight matrix of small numbers, the score alone would flag
//! a 2 % dip when every pair is nearly identical. A node is slow when more
//! than a fraction of its tested pairs are outliers, or when its median
//! pair is an outlier judged as a median (a median of k pairs varies √k
//! times less than one pair): its pairs are then reported once, as that
//! node, and not as N−1 slow links. Pure: no I/O;
//! O(pairs) time with one copy of the values (10,000 nodes: 50 M pairs).

use fabdiag_model::Tool;
use fabdiag_sweep_plan::PairRecord;
use serde::{Deserialize, Serialize};

/// Which way is better for the measured figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Bandwidth (MB/s).
    Higher,
    /// Latency (µs).
    Lower,
}

impl Better {
    /// The way that is better for a tool's figure: latency lower,
    /// bandwidth higher.
    pub fn for_tool(tool: Tool) -> Better {
        if tool.is_latency() {
            Better::Lower
        } else {
            Better::Higher
        }
    }

    /// Orders figures worst first (`sort_by`), for slow lists; reversed,
    /// best first.
    pub fn worse_first(self, x: f64, y: f64) -> std::cmp::Ordering {
        match self {
            Better::Higher => x.total_cmp(&y),
            Better::Lower => y.total_cmp(&x),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    Median,
    Best,
}

impl Reference {
    /// As reports name it: "below 0.75 of the median".
    pub fn name(self) -> &'static str {
        match self {
            Reference::Median => "median",
            Reference::Best => "best",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    /// An outlier is worse than this fraction of the reference.
    pub fraction: f64,
    pub reference: Reference,
    /// ... and its robust score (in MADs) is above this.
    pub z: f64,
    /// A node is slow when more than this fraction of its pairs are
    /// outliers, or are low with their median an outlier as a median.
    pub node_fraction: f64,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            fraction: 0.75,
            reference: Reference::Median,
            z: 3.5,
            node_fraction: 0.5,
        }
    }
}

/// Results of every pair, the upper triangle of an N × N matrix; NaN: no
/// result (failed or not run). In JSON it is the whole N × N matrix, null
/// where there is no figure (and on the diagonal), written row by row from
/// the triangle: a copy as nested rows would take four times its memory
/// (800 MB at 10,000 ranks).
#[derive(Clone, Debug)]
pub struct Matrix {
    n: usize,
    vals: Vec<f32>,
}

/// Equal when the same cells hold the same figures (NaN, no figure,
/// equals itself here).
impl PartialEq for Matrix {
    fn eq(&self, other: &Matrix) -> bool {
        self.n == other.n
            && self
                .vals
                .iter()
                .map(|v| v.to_bits())
                .eq(other.vals.iter().map(|v| v.to_bits()))
    }
}

impl Serialize for Matrix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        struct Row<'a>(&'a Matrix, usize);
        impl Serialize for Row<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let Row(m, a) = *self;
                // left of the diagonal: column a of the rows above, stepping
                // down the triangle; right of it: row a's own run of cells
                let (n, vals) = (m.n, &m.vals);
                let mut k = a.wrapping_sub(1);
                let left = (0..a).map(|b| {
                    let v = vals[k];
                    k += n - b - 2;
                    v
                });
                let start = m.index(a, a + 1).unwrap_or(vals.len());
                let right = vals[start..start + (n - a - 1)].iter().copied();
                let figure = |v: f32| v.is_finite().then_some(v);
                s.collect_seq(left.map(figure).chain(std::iter::once(None)).chain(right.map(figure)))
            }
        }
        let mut seq = s.serialize_seq(Some(self.n))?;
        for a in 0..self.n {
            seq.serialize_element(&Row(self, a))?;
        }
        seq.end()
    }
}

/// From the JSON's N × N rows (the upper triangle is read).
impl<'de> Deserialize<'de> for Matrix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Matrix, D::Error> {
        let rows = Vec::<Vec<Option<f32>>>::deserialize(d)?;
        let n = rows.len();
        let mut m = Matrix::new(n);
        for (a, row) in rows.iter().enumerate() {
            if row.len() != n {
                return Err(serde::de::Error::custom(format!(
                    "matrix row {a} has {} cells, not {n}",
                    row.len()
                )));
            }
            for (b, v) in row.iter().enumerate().skip(a + 1) {
                if let Some(v) = v {
                    m.set(a, b, f64::from(*v));
                }
            }
        }
        Ok(m)
    }
}

impl Matrix {
    /// The measured figures of `pairs` among `n` ranks.
    pub fn of_pairs(n: usize, pairs: &[PairRecord]) -> Matrix {
        let mut m = Matrix::new(n);
        for p in pairs {
            if let Some(v) = p.value {
                m.set(p.a, p.b, v);
            }
        }
        m
    }

    pub fn new(n: usize) -> Matrix {
        Matrix {
            n,
            vals: vec![f32::NAN; n * n.saturating_sub(1) / 2],
        }
    }

    pub fn n(&self) -> usize {
        self.n
    }

    fn index(&self, a: usize, b: usize) -> Option<usize> {
        let (i, j) = (a.min(b), a.max(b));
        // row i holds pairs (i, i+1..n): offset = i·n − i(i+1)/2
        (i != j && j < self.n).then(|| i * self.n - i * (i + 1) / 2 + (j - i - 1))
    }

    pub fn set(&mut self, a: usize, b: usize, v: f64) {
        if let Some(k) = self.index(a, b) {
            self.vals[k] = v as f32;
        }
    }

    pub fn get(&self, a: usize, b: usize) -> Option<f64> {
        self.index(a, b)
            .and_then(|k| self.vals.get(k))
            .filter(|v| v.is_finite())
            .map(|&v| v as f64)
    }

    /// Every measured pair (a < b) with its value.
    pub fn measured(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        (0..self.n).flat_map(move |a| (a + 1..self.n).filter_map(move |b| self.get(a, b).map(|v| (a, b, v))))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairFlag {
    pub a: usize,
    pub b: usize,
    pub value: f64,
    /// value relative to the median and the best (1.0: as good).
    pub of_median: f64,
    pub of_best: f64,
    /// Robust score: how many scaled MADs worse than the median; infinite
    /// when every other pair measured the same (no spread), which JSON
    /// writes as null.
    #[serde(deserialize_with = "null_is_infinite")]
    pub score: f64,
}

/// Which rule named a slow node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRule {
    /// More than the node fraction of its pairs are outliers.
    #[default]
    Pairs,
    /// More than the node fraction of its pairs are below the fraction of
    /// the reference, and their median is an outlier as a median.
    Median,
}

/// A median of this many pairs or more may name a node by itself. Fewer
/// (sweeps of under 8 nodes) are too coarse a median: in simulations
/// while choosing, at 6 nodes the rule named about as many more healthy
/// nodes as it found more slow ones.
pub const MEDIAN_RULE_MIN_PAIRS: usize = 7;

/// A node's median must score this many times the outlier score. The
/// √k / 1.2533 scaling (the standard error of a median of k) assumes the
/// node's pairs independent and the spread known; neither holds exactly
/// (the spread is taken from a few dozen pairs), and at 1.0 × the rule
/// named several times more healthy nodes than the pair rule. At 1.5 ×,
/// `cargo run --release -p fabdiag-sweep-judge --example node_rules` (seeded):
/// healthy nodes named per 8-node sweep 0.001-0.013 against 0.001-0.004
/// for the pair rule alone, none more at 16 nodes; a node at a tenth of
/// the median found alone in 93 % of 8-node sweeps at σ 0.6 instead of
/// 70 %, and in every 16-node sweep at σ 0.8 instead of 12 %.
const MEDIAN_SCORE_MULTIPLE: f64 = 1.5;

impl Rules {
    /// The score a node's median must pass, as a median, to name the node.
    pub fn median_z(&self) -> f64 {
        MEDIAN_SCORE_MULTIPLE * self.z
    }
}

/// A score read back: JSON has no infinity, and serde_json writes one as
/// null (a score with no spread to divide by).
fn null_is_infinite<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeFlag {
    pub node: usize,
    /// The node's median over its measured pairs.
    pub median: f64,
    pub outlier_pairs: usize,
    pub measured_pairs: usize,
    /// Pairs below the fraction of the reference, outliers or not.
    #[serde(default)]
    pub low_pairs: usize,
    /// The median's robust score as a median of `measured_pairs` values
    /// (its score as one pair × √k / 1.2533).
    #[serde(default, deserialize_with = "null_is_infinite")]
    pub median_score: f64,
    #[serde(default)]
    pub rule: NodeRule,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub pairs: usize,
    pub median: f64,
    /// The median absolute deviation of the figures ...
    pub mad: f64,
    /// ... and of their natural logarithms (the score's scale).
    pub log_mad: f64,
    pub best: f64,
    pub worst: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub better: Better,
    pub rules: Rules,
    pub stats: Stats,
    /// Outlier pairs not explained by a slow node, worst first.
    pub slow_links: Vec<PairFlag>,
    /// Slow nodes, worst first.
    pub slow_nodes: Vec<NodeFlag>,
    /// Every node's median (None: no measured pair).
    pub node_medians: Vec<Option<f64>>,
}

/// One node's pairs: outliers, below the reference's fraction, measured.
#[derive(Clone, Copy, Default)]
struct Tally {
    outliers: usize,
    low: usize,
    measured: usize,
}

/// The best and worst of `vals`, and how many there were.
fn extremes(better: Better, vals: impl Iterator<Item = f64>) -> (f64, f64, usize) {
    let (lo, hi, count) = vals.fold((f64::INFINITY, f64::NEG_INFINITY, 0), |(lo, hi, n), v| {
        (lo.min(v), hi.max(v), n + 1)
    });
    match better {
        Better::Higher => (hi, lo, count),
        Better::Lower => (lo, hi, count),
    }
}

/// The median of `v` (reordered); 0 when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let m = *m;
    if v.len() % 2 == 1 {
        return m;
    }
    let lower = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lower + m) / 2.0
}

impl Analysis {
    /// "Goodness" relative to `reference`: 1.0 as good, 0.5 half as good.
    pub fn relative(better: Better, v: f64, reference: f64) -> f64 {
        match better {
            Better::Higher if reference > 0.0 => v / reference,
            Better::Lower if v > 0.0 => reference / v,
            _ => 1.0,
        }
    }

    fn score(better: Better, v: f64, stats: &Stats) -> f64 {
        if v <= 0.0 || stats.median <= 0.0 {
            return if better == Better::Higher && v < stats.median {
                f64::INFINITY
            } else {
                0.0
            };
        }
        let ratio = (stats.median / v).ln();
        let worse_by = match better {
            Better::Higher => ratio,
            Better::Lower => -ratio,
        };
        let scale = 1.4826 * stats.log_mad;
        if scale > 0.0 {
            worse_by / scale
        } else if worse_by > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }

    /// Median, spread, best and worst of `vals` (reordered).
    fn stats(better: Better, vals: &mut [f64]) -> Stats {
        let mut stats = Stats {
            pairs: vals.len(),
            ..Stats::default()
        };
        if vals.is_empty() {
            return stats;
        }
        (stats.best, stats.worst, _) = extremes(better, vals.iter().copied());
        stats.median = median(vals);
        let mut logs: Vec<f64> = vals.iter().map(|v| v.max(f64::MIN_POSITIVE).ln()).collect();
        let log_median = median(&mut logs);
        for l in logs.iter_mut() {
            *l = (*l - log_median).abs();
        }
        stats.log_mad = median(&mut logs);
        for v in vals.iter_mut() {
            *v = (*v - stats.median).abs();
        }
        stats.mad = median(vals);
        stats
    }

    /// Is `v` below the fraction of the reference?
    fn low(better: Better, rules: &Rules, stats: &Stats, v: f64) -> bool {
        let reference = match rules.reference {
            Reference::Median => stats.median,
            Reference::Best => stats.best,
        };
        Self::relative(better, v, reference) < rules.fraction
    }

    fn outlier(better: Better, rules: &Rules, stats: &Stats, v: f64) -> bool {
        Self::low(better, rules, stats, v) && Self::score(better, v, stats) > rules.z
    }

    /// Two passes. A slow node drags N−1 pairs down, which in a small
    /// sweep is a quarter of them or more: enough to inflate the spread
    /// that pairs are judged against. So nodes whose median pair is an
    /// outlier among the nodes' medians are found first and their pairs
    /// left out of the figures every pair is then judged against.
    pub fn of(m: &Matrix, better: Better, rules: Rules) -> Analysis {
        let n = m.n();
        let node_medians: Vec<Option<f64>> = (0..n)
            .map(|x| {
                let mut mine: Vec<f64> = (0..n).filter_map(|y| m.get(x, y)).collect();
                (!mine.is_empty()).then(|| median(&mut mine))
            })
            .collect();
        let mut medians: Vec<f64> = node_medians.iter().flatten().copied().collect();
        let node_stats = Self::stats(better, &mut medians);
        let suspect: Vec<bool> = node_medians
            .iter()
            .map(|x| x.is_some_and(|v| Self::outlier(better, &rules, &node_stats, v)))
            .collect();
        let mut vals: Vec<f64> = m
            .measured()
            .filter(|&(a, b, _)| !suspect[a] && !suspect[b])
            .map(|(_, _, v)| v)
            .collect();
        if vals.len() < 3 {
            vals = m.measured().map(|(_, _, v)| v).collect();
        }
        let mut stats = Self::stats(better, &mut vals);
        drop(vals);
        // best and worst of all pairs, slow nodes' too, for the report
        let (best, worst, count) = extremes(better, m.measured().map(|(_, _, v)| v));
        if count > 0 {
            (stats.best, stats.worst, stats.pairs) = (best, worst, count);
        }
        let mut outliers = Vec::new();
        let mut per_node = vec![Tally::default(); n];
        for (a, b, v) in m.measured() {
            let low = Self::low(better, &rules, &stats, v);
            for x in [a, b] {
                per_node[x].low += usize::from(low);
                per_node[x].measured += 1;
            }
            if let Some(score) = low.then(|| Self::score(better, v, &stats)).filter(|&s| s > rules.z) {
                per_node[a].outliers += 1;
                per_node[b].outliers += 1;
                outliers.push(PairFlag {
                    a,
                    b,
                    value: v,
                    of_median: Self::relative(better, v, stats.median),
                    of_best: Self::relative(better, v, stats.best),
                    score,
                });
            }
        }
        let more_than = |part: usize, all: usize| part as f64 > rules.node_fraction * all as f64;
        let mut slow_nodes: Vec<NodeFlag> = (0..n)
            .filter_map(|x| {
                let t = per_node[x];
                let median = node_medians[x]?;
                let median_score = Self::score(better, median, &stats) * (t.measured as f64).sqrt() / 1.2533;
                let rule = if t.measured >= 2 && more_than(t.outliers, t.measured) {
                    NodeRule::Pairs
                } else if t.measured >= MEDIAN_RULE_MIN_PAIRS
                    && more_than(t.low, t.measured)
                    && Self::low(better, &rules, &stats, median)
                    && median_score > rules.median_z()
                {
                    NodeRule::Median
                } else {
                    return None;
                };
                Some(NodeFlag {
                    node: x,
                    median,
                    outlier_pairs: t.outliers,
                    measured_pairs: t.measured,
                    low_pairs: t.low,
                    median_score,
                    rule,
                })
            })
            .collect();
        let mut slow = vec![false; n];
        for f in &slow_nodes {
            slow[f.node] = true;
        }
        slow_nodes.sort_by(|p, q| better.worse_first(p.median, q.median));
        let mut slow_links: Vec<PairFlag> = outliers.into_iter().filter(|p| !slow[p.a] && !slow[p.b]).collect();
        slow_links.sort_by(|p, q| better.worse_first(p.value, q.value));
        Analysis {
            better,
            rules,
            stats,
            slow_links,
            slow_nodes,
            node_medians,
        }
    }

    /// Is `v` an outlier by these rules against this sweep's figures?
    pub fn is_outlier(&self, v: f64) -> bool {
        Self::outlier(self.better, &self.rules, &self.stats, v)
    }

    /// Is `v` below half the fraction of the reference (a pair at well
    /// under half the median, say)? Slow however wide the spread: when a
    /// slow spine of two slows nearly half the pairs, the spread is as wide
    /// as the gap and no pair scores as an outlier.
    pub fn is_far_below(&self, v: f64) -> bool {
        let halved = Rules {
            fraction: self.rules.fraction / 2.0,
            ..self.rules
        };
        Self::low(self.better, &halved, &self.stats, v)
    }

    /// Is `v` below the fraction of the reference? A slow node's pair
    /// re-tested alone is judged by this: alone it should beat the
    /// contended figures, so a node still below them is slow even where
    /// the spread keeps one pair from scoring as an outlier.
    pub fn is_low(&self, v: f64) -> bool {
        Self::low(self.better, &self.rules, &self.stats, v)
    }

    /// The pairs to re-test alone, at most `limit`, among the nodes that
    /// are `usable` (still there): first each slow node (worst first) with
    /// its best partner (the node with the best median that is neither
    /// slow nor on a slow link, and has a figure with it), then the slow
    /// links (worst first).
    pub fn retests(&self, m: &Matrix, usable: impl Fn(usize) -> bool, limit: usize) -> Vec<(usize, usize)> {
        // marked once: scanning the slow lists per node would be
        // O(nodes × links), past the module's O(pairs) on a broken fabric
        let mut suspect = vec![false; self.node_medians.len()];
        for x in self.slow_nodes.iter().map(|f| f.node) {
            suspect[x] = true;
        }
        for f in &self.slow_links {
            (suspect[f.a], suspect[f.b]) = (true, true);
        }
        let mut partners: Vec<(usize, f64)> = self
            .node_medians
            .iter()
            .enumerate()
            .filter_map(|(x, v)| v.map(|v| (x, v)))
            .filter(|&(x, _)| usable(x) && !suspect[x])
            .collect();
        partners.sort_by(|p, q| self.better.worse_first(q.1, p.1));
        let nodes = self.slow_nodes.iter().filter(|f| usable(f.node)).filter_map(|f| {
            let (p, _) = partners.iter().find(|&&(p, _)| m.get(f.node, p).is_some())?;
            Some((f.node.min(*p), f.node.max(*p)))
        });
        let links = self.slow_links.iter().filter(|f| usable(f.a) && usable(f.b));
        nodes.chain(links.map(|f| (f.a, f.b))).take(limit).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{figures, CI_RUN};

    /// `m` as latencies (µs = 1000 / MB/s): the same ratios, lower better.
    fn as_latency(m: &Matrix) -> Matrix {
        let mut lat = Matrix::new(m.n());
        for (a, b, v) in m.measured() {
            lat.set(a, b, 1000.0 / v);
        }
        lat
    }

    /// Another run of that test, on a machine starved at that moment:
    /// healthy pairs 2.0-9.4; node 2 has the slowed link (2.1), its pair
    /// with the slowed node 6 (2.9) and two more low by noise.
    const STARVED_RUN: &str = "0-7:9.2 1-6:4.4 2-5:2.1 3-4:8.7 1-7:8.9 0-2:8.4 3-6:4.4 4-5:9.4 2-7:8.8 \
        1-3:8.4 0-4:8.5 5-6:4.5 3-7:8.1 2-4:4.3 1-5:6.8 0-6:3.4 4-7:6.5 3-5:6.1 2-6:2.9 0-1:6.4 5-7:2.3 \
        4-6:2.1 0-3:2.0 1-2:3.0 6-7:3.9 0-5:5.8 1-4:3.4 2-3:5.7";

    /// A deterministic "noisy" value around `base` (±5 %).
    fn noisy(base: f64, a: usize, b: usize) -> f64 {
        let h = (a * 7919 + b * 104_729) % 1000;
        base * (0.95 + 0.1 * h as f64 / 1000.0)
    }

    fn matrix(n: usize, f: impl Fn(usize, usize) -> f64) -> Matrix {
        let mut m = Matrix::new(n);
        for a in 0..n {
            for b in a + 1..n {
                m.set(a, b, f(a, b));
            }
        }
        m
    }

    #[test]
    fn triangle_indexing_covers_every_pair_once() {
        let n = 9;
        let mut m = Matrix::new(n);
        let mut k = 0.0;
        for a in 0..n {
            for b in a + 1..n {
                k += 1.0;
                m.set(b, a, k);
            }
        }
        assert_eq!(m.measured().count(), 36);
        assert_eq!(m.get(0, 1), Some(1.0));
        assert_eq!(m.get(8, 7), Some(36.0));
        assert_eq!(m.get(3, 3), None);
        assert_eq!(m.get(3, 9), None);
    }

    #[test]
    fn a_planted_slow_link_is_named() {
        let m = matrix(16, |a, b| {
            if (a, b) == (3, 11) {
                2000.0
            } else {
                noisy(10_000.0, a, b)
            }
        });
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.slow_nodes, vec![]);
        assert_eq!(an.slow_links.len(), 1, "{:?}", an.slow_links);
        assert_eq!((an.slow_links[0].a, an.slow_links[0].b), (3, 11));
        assert!((an.slow_links[0].of_median - 0.2).abs() < 0.02);
    }

    #[test]
    fn a_planted_slow_node_is_one_node_not_many_links() {
        let m = matrix(12, |a, b| {
            if a == 5 || b == 5 {
                noisy(3000.0, a, b)
            } else {
                noisy(10_000.0, a, b)
            }
        });
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.slow_nodes.len(), 1, "{:?}", an.slow_nodes);
        assert_eq!(an.slow_nodes[0].node, 5);
        assert_eq!(an.slow_nodes[0].outlier_pairs, 11);
        assert_eq!(an.slow_links, vec![]);
    }

    #[test]
    fn a_uniformly_noisy_matrix_has_no_outliers() {
        let m = matrix(32, |a, b| noisy(10_000.0, a, b));
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!((an.slow_links.len(), an.slow_nodes.len()), (0, 0));
        // identical values: MAD 0, and nothing is worse than the median
        let flat = Analysis::of(&matrix(8, |_, _| 5.0), Better::Lower, Rules::default());
        assert_eq!((flat.slow_links.len(), flat.slow_nodes.len()), (0, 0));
    }

    #[test]
    fn a_tenth_of_the_median_is_an_outlier_even_in_a_noisy_matrix() {
        // ±40 % noise, as on a loaded 2-core machine: a linear score could
        // not flag even a zero here; the log score flags the slow node
        let wide = |a: usize, b: usize| {
            let h = (a * 7919 + b * 104_729) % 1000;
            40.0 * (0.6 + 0.8 * h as f64 / 1000.0)
        };
        let m = matrix(8, |a, b| if a == 6 || b == 6 { 4.5 } else { wide(a, b) });
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(), [6]);
        assert_eq!(an.slow_links, vec![]);
        assert!(Analysis::of(&matrix(8, wide), Better::Higher, Rules::default())
            .slow_links
            .is_empty());
    }

    #[test]
    fn a_slow_node_and_a_slow_link_in_a_small_noisy_sweep() {
        // 8 nodes: node 6's seven pairs are a quarter of all, and would
        // inflate the spread every pair is judged against
        let wide = |a: usize, b: usize| {
            let h = (a * 7919 + b * 104_729) % 1000;
            50.0 * (0.55 + 1.5 * h as f64 / 1000.0)
        };
        let m = matrix(8, |a, b| match (a, b) {
            (_, 6) | (6, _) => 4.6,
            (2, 5) => 4.5,
            _ => wide(a, b),
        });
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(), [6]);
        assert_eq!(an.slow_links.iter().map(|f| (f.a, f.b)).collect::<Vec<_>>(), [(2, 5)]);
    }

    #[test]
    fn a_node_low_on_every_pair_is_named_by_its_median_when_its_pairs_spread_too_wide_to_judge_alone() {
        // node 6's pairs scored 3.4-3.6 MADs against a limit of 3.5: three
        // outliers of seven, too few for the pair rule; as a median of 7
        // they are far out
        let m = figures(8, CI_RUN);
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(), [6]);
        let six = &an.slow_nodes[0];
        assert_eq!(six.rule, NodeRule::Median);
        assert_eq!((six.outlier_pairs, six.low_pairs, six.measured_pairs), (3, 7, 7));
        assert!(six.median_score > MEDIAN_SCORE_MULTIPLE * 3.5, "{six:?}");
        assert_eq!(an.slow_links.iter().map(|f| (f.a, f.b)).collect::<Vec<_>>(), [(2, 5)]);
        // the node fraction still rules: over 0.99 of its pairs must be low
        let all = Rules {
            node_fraction: 0.99,
            ..Rules::default()
        };
        assert_eq!(Analysis::of(&m, Better::Higher, all).slow_nodes.len(), 1);
        let mut one_fine = m.clone();
        one_fine.set(0, 6, 50.0);
        assert!(Analysis::of(&one_fine, Better::Higher, all).slow_nodes.is_empty());
        // and so does the score: a limit no median reaches names nothing
        let lax = Rules {
            z: 1e9,
            ..Rules::default()
        };
        assert!(Analysis::of(&m, Better::Higher, lax).slow_nodes.is_empty());
    }

    #[test]
    fn a_node_high_on_every_latency_pair_is_named_by_its_median_too() {
        let m = as_latency(&figures(8, CI_RUN));
        let an = Analysis::of(&m, Better::Lower, Rules::default());
        assert_eq!(
            an.slow_nodes.iter().map(|f| (f.node, f.rule)).collect::<Vec<_>>(),
            [(6, NodeRule::Median)]
        );
        assert_eq!(an.slow_links.iter().map(|f| (f.a, f.b)).collect::<Vec<_>>(), [(2, 5)]);
    }

    #[test]
    fn a_node_with_a_slow_link_and_a_slow_neighbour_is_not_a_slow_node() {
        // node 2: 4 of 7 pairs low, two of them explained by others
        let an = Analysis::of(&figures(8, STARVED_RUN), Better::Higher, Rules::default());
        assert!(an.slow_nodes.iter().all(|f| f.node != 2), "{:?}", an.slow_nodes);
    }

    #[test]
    fn a_median_of_fewer_than_seven_pairs_names_no_node() {
        // node 6's pairs at 7 MB/s (about 3 MADs each, no outlier): named
        // by its median among 8 nodes, not among 7 (6 pairs)
        let at_seven = |n: usize| {
            let mut m = Matrix::new(n);
            for (a, b, v) in figures(8, CI_RUN).measured().filter(|&(a, b, _)| a.max(b) < n) {
                m.set(a, b, if b == 6 || a == 6 { 7.0 } else { v });
            }
            Analysis::of(&m, Better::Higher, Rules::default()).slow_nodes
        };
        let eight = at_seven(8);
        assert_eq!(
            eight.iter().map(|f| (f.node, f.rule)).collect::<Vec<_>>(),
            [(6, NodeRule::Median)]
        );
        assert_eq!(eight[0].outlier_pairs, 0);
        assert_eq!(at_seven(7), vec![]);
    }

    #[test]
    fn slow_nodes_are_re_tested_first_with_their_best_healthy_partner() {
        let m = figures(8, CI_RUN);
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        let all = |_| true;
        // node 3 has the best median (80.6) and is on no slow link
        assert_eq!(an.retests(&m, all, 8), [(3, 6), (2, 5)]);
        assert_eq!(an.retests(&m, all, 1), [(3, 6)]);
        assert_eq!(an.retests(&m, all, 0), []);
        // no figure with the best partner: the next best
        let mut gap = m.clone();
        gap.set(3, 6, f64::NAN);
        assert_eq!(an.retests(&gap, all, 8), [(4, 6), (2, 5)]);
        // a lost partner is passed over, and what a lost node is in is not re-tested
        assert_eq!(an.retests(&m, |x| x != 3, 8), [(4, 6), (2, 5)]);
        assert_eq!(an.retests(&m, |x| x != 5, 8), [(3, 6)]);
        assert_eq!(an.retests(&m, |x| x != 6, 8), [(2, 5)]);
        // latency: the lowest median is the best partner
        let lat = as_latency(&m);
        let an = Analysis::of(&lat, Better::Lower, Rules::default());
        assert_eq!(an.retests(&lat, all, 8), [(3, 6), (2, 5)]);
    }

    #[test]
    fn latency_outliers_are_the_high_ones() {
        let m = matrix(10, |a, b| if (a, b) == (2, 7) { 40.0 } else { noisy(2.0, a, b) });
        let an = Analysis::of(&m, Better::Lower, Rules::default());
        assert_eq!(an.slow_links.len(), 1);
        assert_eq!((an.slow_links[0].a, an.slow_links[0].b), (2, 7));
        assert!(an.is_outlier(40.0) && !an.is_outlier(2.0));
        assert_eq!(an.stats.best, m.measured().map(|x| x.2).fold(f64::INFINITY, f64::min));
    }

    #[test]
    fn the_rules_are_configurable() {
        // a link at 0.8 of the median: not an outlier by default (0.75) ...
        let m = matrix(16, |a, b| {
            if (a, b) == (0, 1) {
                8000.0
            } else {
                noisy(10_000.0, a, b)
            }
        });
        assert!(Analysis::of(&m, Better::Higher, Rules::default()).slow_links.is_empty());
        // ... but it is with a fraction of 0.9
        let strict = Rules {
            fraction: 0.9,
            ..Rules::default()
        };
        assert_eq!(Analysis::of(&m, Better::Higher, strict).slow_links.len(), 1);
        // and never with a score limit no value reaches
        let lax = Rules { z: 1e9, ..strict };
        assert!(Analysis::of(&m, Better::Higher, lax).slow_links.is_empty());
    }

    #[test]
    fn missing_pairs_are_left_out() {
        let mut m = matrix(6, |a, b| noisy(100.0, a, b));
        m.set(0, 1, f64::NAN);
        let an = Analysis::of(&m, Better::Higher, Rules::default());
        assert_eq!(an.stats.pairs, 14);
        assert!(Analysis::of(&Matrix::new(4), Better::Higher, Rules::default())
            .slow_links
            .is_empty());
    }
}
