//! Traffic patterns: many flows at once, where the sweep's rounds test
//! one link per rank. Bisection splits the ranks in two halves (by rank,
//! by node, or at random from a seed, repeated as GPCNET and LinkTest do)
//! and pairs the i-th rank of one half with the i-th of the other; every
//! pair of a split streams at once, so together they load the fabric's
//! cut between the halves. What a pattern run leaves is records'
//! `PatternRun`.
//! Pure arithmetic and plain data: no I/O, no clock.

use crate::schedule::Pair;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// How a bisection's halves are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitBy {
    /// The lower ranks and the upper ranks.
    Rank,
    /// The first half of the nodes (by name) and the second, every
    /// node's ranks together.
    Node,
    /// A random half, drawn again for every split from the seed.
    Random,
}

impl SplitBy {
    pub fn name(self) -> &'static str {
        match self {
            SplitBy::Rank => "rank",
            SplitBy::Node => "node",
            SplitBy::Random => "random",
        }
    }
}

/// A pattern as asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// `splits` splits of the ranks in two halves, chosen `by`; `seed`
    /// draws the random ones (the same seed, the same splits, with the
    /// same fabdiag).
    Bisection { by: SplitBy, splits: usize, seed: u64 },
}

/// One split of the ranks: two halves of equal size, paired in order,
/// and the ranks left over (an odd count, or unequal nodes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub halves: [Vec<usize>; 2],
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<usize>,
}

impl Split {
    /// Each rank of the first half streams to its partner in the second.
    pub fn pairs(&self) -> Vec<Pair> {
        self.halves[0]
            .iter()
            .zip(&self.halves[1])
            .map(|(&client, &server)| Pair { client, server })
            .collect()
    }

    /// The halves cut to the same length, the rest idle.
    fn even(mut a: Vec<usize>, mut b: Vec<usize>, mut idle: Vec<usize>) -> Split {
        let n = a.len().min(b.len());
        idle.extend(a.drain(n..));
        idle.extend(b.drain(n..));
        idle.sort_unstable();
        Split { halves: [a, b], idle }
    }
}

/// The splits of `ranks` (those taking part, in rank order) for a
/// bisection: `hosts[i]` is `ranks[i]`'s node, for splits by node.
pub fn bisection(ranks: &[usize], hosts: &[String], by: SplitBy, splits: usize, seed: u64) -> Vec<Split> {
    (0..splits)
        .map(|i| match by {
            SplitBy::Rank => by_rank(ranks),
            SplitBy::Node => by_node(ranks, hosts),
            SplitBy::Random => at_random(ranks, seed.wrapping_add(i as u64)),
        })
        .collect()
}

fn by_rank(ranks: &[usize]) -> Split {
    let half = ranks.len() / 2;
    Split::even(ranks[..half].to_vec(), ranks[half..].to_vec(), Vec::new())
}

/// The nodes in name order, the first half of them against the second;
/// a node's ranks stay on one side, so every flow leaves its node.
fn by_node(ranks: &[usize], hosts: &[String]) -> Split {
    let mut names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    let first: std::collections::HashSet<&str> = names[..names.len() / 2].iter().copied().collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (&r, h) in ranks.iter().zip(hosts) {
        match first.contains(h.as_str()) {
            true => a.push(r),
            false => b.push(r),
        }
    }
    Split::even(a, b, Vec::new())
}

fn at_random(ranks: &[usize], seed: u64) -> Split {
    let mut shuffled = ranks.to_vec();
    shuffled.shuffle(&mut StdRng::seed_from_u64(seed));
    let half = shuffled.len() / 2;
    let idle = shuffled.split_off(2 * half);
    let second = shuffled.split_off(half);
    Split::even(shuffled, second, idle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hosts(n: usize, per_node: usize) -> Vec<String> {
        (0..n).map(|r| format!("node{:02}", r / per_node)).collect()
    }

    #[test]
    fn halves_by_rank_and_by_node() {
        let ranks: Vec<usize> = (0..8).collect();
        let s = &bisection(&ranks, &hosts(8, 1), SplitBy::Rank, 1, 0)[0];
        assert_eq!(s.halves, [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(s.pairs()[1], Pair { client: 1, server: 5 });
        // two ranks per node, nodes named out of rank order
        let h: Vec<String> = ["c", "c", "a", "a", "d", "d", "b", "b"].map(String::from).to_vec();
        let s = &bisection(&ranks, &h, SplitBy::Node, 1, 0)[0];
        assert_eq!(s.halves, [vec![2, 3, 6, 7], vec![0, 1, 4, 5]]);
        // an odd count leaves one rank idle
        let s = &bisection(&ranks[..7], &hosts(7, 1), SplitBy::Rank, 1, 0)[0];
        assert_eq!((s.halves[0].len(), s.idle.clone()), (3, vec![6]));
    }

    #[test]
    fn random_splits_come_again_from_their_seed_and_differ_between_splits() {
        let ranks: Vec<usize> = (0..16).collect();
        let a = bisection(&ranks, &hosts(16, 1), SplitBy::Random, 3, 42);
        assert_eq!(a, bisection(&ranks, &hosts(16, 1), SplitBy::Random, 3, 42));
        assert_ne!(a[0], a[1]);
        assert_ne!(a, bisection(&ranks, &hosts(16, 1), SplitBy::Random, 3, 43));
    }

    proptest! {
        #[test]
        fn every_split_pairs_across_its_halves_and_leaves_no_rank_out(
            n in 2usize..64, per_node in 1usize..5, splits in 1usize..4, seed: u64, by in 0usize..3,
        ) {
            let ranks: Vec<usize> = (0..n).map(|r| r * 3).collect();
            let h = hosts(n, per_node);
            let by = [SplitBy::Rank, SplitBy::Node, SplitBy::Random][by];
            let all = bisection(&ranks, &h, by, splits, seed);
            prop_assert_eq!(all.len(), splits);
            for s in &all {
                prop_assert_eq!(s.halves[0].len(), s.halves[1].len());
                let mut seen: Vec<usize> = s.halves.concat();
                seen.extend(&s.idle);
                seen.sort_unstable();
                prop_assert_eq!(&seen, &ranks);
                // no rank streams twice, and (by node) no flow stays on its node
                for p in s.pairs() {
                    prop_assert!(p.client != p.server);
                    if by == SplitBy::Node {
                        let host = |r: usize| &h[ranks.iter().position(|&x| x == r).unwrap_or(0)];
                        prop_assert_ne!(host(p.client), host(p.server));
                    }
                }
                if by != SplitBy::Node {
                    prop_assert!(s.idle.len() == n % 2);
                }
            }
        }
    }
}
