//! Traffic patterns: many flows at once, where the sweep's rounds test
//! one link per rank. Bisection splits the ranks in two halves (by rank,
//! by node, or at random from a seed, repeated as GPCNET and LinkTest do)
//! and pairs the i-th rank of one half with the i-th of the other; every
//! pair of a split streams at once, so together they load the fabric's
//! cut between the halves. Incast sends from every other rank into one
//! receiver at once, after one sender alone to it for reference. All-to-
//! all runs shifted phases, rank i to rank i+k in phase k, as collectives
//! do. `steps` makes a pattern's steps; with a victim pair, `with_victim`
//! runs it alone first and then beside every step, the pattern on the
//! other ranks. What a run leaves is records' `PatternRun`.
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// `splits` splits of the ranks in two halves, chosen `by`; `seed`
    /// draws the random ones (the same seed, the same splits, with the
    /// same fabdiag).
    Bisection { by: SplitBy, splits: usize, seed: u64 },
    /// Every other rank into each receiver at once: the ranks named, or
    /// (empty) every rank in turn.
    Incast {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        receivers: Vec<usize>,
    },
    /// Every rank to every other, one shift per phase.
    #[serde(rename = "alltoall")]
    AllToAll,
}

impl Pattern {
    /// Its name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Pattern::Bisection { .. } => "bisection",
            Pattern::Incast { .. } => "incast",
            Pattern::AllToAll => "alltoall",
        }
    }
}

/// What one step of a pattern is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A bisection's split.
    Split(Split),
    /// One sender alone into `receiver`: the figure its incast is held
    /// against.
    Single { receiver: usize },
    /// Every other rank into `receiver` at once.
    Incast { receiver: usize },
    /// All-to-all: every rank to the rank `shift` places on.
    Phase { shift: usize },
    /// The victim pair alone, before the pattern loads the fabric.
    Quiet,
}

impl Shape {
    /// How the run's progress and its errors name the step.
    pub fn label(&self, index: usize) -> String {
        match self {
            Shape::Split(_) => format!("split {}", index + 1),
            Shape::Single { receiver } => format!("one flow into rank {receiver}"),
            Shape::Incast { receiver } => format!("incast into rank {receiver}"),
            Shape::Phase { shift } => format!("phase {shift}"),
            Shape::Quiet => "the victim alone".into(),
        }
    }
}

/// A pattern's steps over the ranks taking part (`ranks`, in rank order;
/// `hosts[i]` is `ranks[i]`'s node): each step's shape and its flows, all
/// of a step's flows at once. An incast receiver that is not taking part
/// still has its steps, with flows that cannot run.
pub fn steps(pattern: &Pattern, ranks: &[usize], hosts: &[String]) -> Vec<(Shape, Vec<Pair>)> {
    match pattern {
        Pattern::Bisection { by, splits, seed } => bisection(ranks, hosts, *by, *splits, *seed)
            .into_iter()
            .map(|s| {
                let pairs = s.pairs();
                (Shape::Split(s), pairs)
            })
            .collect(),
        Pattern::Incast { receivers } => {
            let into = if receivers.is_empty() {
                ranks
            } else {
                receivers.as_slice()
            };
            into.iter().flat_map(|&r| incast(ranks, r)).collect()
        }
        Pattern::AllToAll => (1..ranks.len())
            .map(|k| (Shape::Phase { shift: k }, shifted(ranks, k)))
            .collect(),
    }
}

/// A pattern's steps with `victim` measured beside them: the victim
/// alone first, then every step of the pattern on the other ranks
/// (`ranks` and `hosts` as for `steps`). The victim is not among a
/// step's pairs: the caller runs it alongside.
pub fn with_victim(pattern: &Pattern, victim: Pair, ranks: &[usize], hosts: &[String]) -> Vec<(Shape, Vec<Pair>)> {
    let (others, their_hosts): (Vec<usize>, Vec<String>) = ranks
        .iter()
        .zip(hosts)
        .filter(|(r, _)| **r != victim.client && **r != victim.server)
        .map(|(r, h)| (*r, h.clone()))
        .unzip();
    std::iter::once((Shape::Quiet, Vec::new()))
        .chain(steps(pattern, &others, &their_hosts))
        .collect()
}

/// The two steps of an incast into `receiver`: the sender after it
/// alone, then every sender at once (no steps without a sender).
fn incast(ranks: &[usize], receiver: usize) -> Vec<(Shape, Vec<Pair>)> {
    let senders: Vec<usize> = ranks.iter().copied().filter(|&r| r != receiver).collect();
    let Some(&first) = senders.iter().find(|&&r| r > receiver).or(senders.first()) else {
        return Vec::new();
    };
    let into = |client| Pair {
        client,
        server: receiver,
    };
    vec![
        (Shape::Single { receiver }, vec![into(first)]),
        (Shape::Incast { receiver }, senders.into_iter().map(into).collect()),
    ]
}

/// Phase `k` of an all-to-all: the i-th rank to the (i+k)-th, wrapping.
fn shifted(ranks: &[usize], k: usize) -> Vec<Pair> {
    let n = ranks.len();
    (0..n)
        .map(|i| Pair {
            client: ranks[i],
            server: ranks[(i + k) % n],
        })
        .collect()
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

    #[test]
    fn an_incast_takes_one_sender_alone_then_all_and_alltoall_shifts() {
        let ranks: Vec<usize> = (0..4).collect();
        let h = hosts(4, 1);
        let p = |c, s| Pair { client: c, server: s };
        let got = steps(&Pattern::Incast { receivers: vec![2] }, &ranks, &h);
        assert_eq!(
            got,
            vec![
                (Shape::Single { receiver: 2 }, vec![p(3, 2)]),
                (Shape::Incast { receiver: 2 }, vec![p(0, 2), p(1, 2), p(3, 2)]),
            ]
        );
        // every rank in turn; the last one's lone sender wraps to the first
        let every = steps(&Pattern::Incast { receivers: vec![] }, &ranks, &h);
        assert_eq!(every.len(), 8);
        assert_eq!(every[6], (Shape::Single { receiver: 3 }, vec![p(0, 3)]));
        // one rank alone: nothing to send
        assert!(steps(&Pattern::Incast { receivers: vec![] }, &[5], &h[..1]).is_empty());
        let a2a = steps(&Pattern::AllToAll, &ranks, &h);
        assert_eq!(a2a.len(), 3);
        assert_eq!(
            a2a[0],
            (Shape::Phase { shift: 1 }, vec![p(0, 1), p(1, 2), p(2, 3), p(3, 0)])
        );
        assert_eq!(Shape::Incast { receiver: 2 }.label(1), "incast into rank 2");
        // a victim 0 -> 3: alone first, then the pattern on ranks 1 and 2
        let v = with_victim(&Pattern::AllToAll, p(0, 3), &ranks, &h);
        assert_eq!(
            v,
            vec![
                (Shape::Quiet, vec![]),
                (Shape::Phase { shift: 1 }, vec![p(1, 2), p(2, 1)])
            ]
        );
    }

    proptest! {
        #[test]
        fn alltoall_runs_every_ordered_pair_once_each_rank_once_a_side_per_phase(
            ranks in proptest::collection::btree_set(0usize..200, 2..24),
        ) {
            let ranks: Vec<usize> = ranks.into_iter().collect();
            let h = hosts(ranks.len(), 1);
            let mut seen = std::collections::HashSet::new();
            for (shape, pairs) in steps(&Pattern::AllToAll, &ranks, &h) {
                let is_phase = matches!(shape, Shape::Phase { .. });
                prop_assert!(is_phase);
                let mut clients: Vec<usize> = pairs.iter().map(|p| p.client).collect();
                let mut servers: Vec<usize> = pairs.iter().map(|p| p.server).collect();
                clients.sort_unstable();
                servers.sort_unstable();
                prop_assert_eq!(&clients, &ranks);
                prop_assert_eq!(&servers, &ranks);
                for p in pairs {
                    prop_assert!(p.client != p.server);
                    prop_assert!(seen.insert((p.client, p.server)));
                }
            }
            prop_assert_eq!(seen.len(), ranks.len() * (ranks.len() - 1));
        }


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
