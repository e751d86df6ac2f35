//! Who tests whom, and when: every unordered pair of N ranks exactly once,
//! in rounds of disjoint pairs (the circle method, as JSC LinkTest does),
//! so a round loads every endpoint at most once. N even: N−1 rounds of
//! N/2 pairs; N odd: N rounds of (N−1)/2 pairs with one rank idle in each
//! (N(N−1)/2 pairs cannot fill fewer rounds). On K rails (K ranks per
//! node, one per NIC, ranks placed in blocks of K per node) only ranks on
//! the same rail (rank mod K) are paired: each rail is a circle of its
//! own and all rails share the rounds. Rounds are computed one at a time
//! so a 10,000-rank schedule costs no memory. Pure arithmetic: no I/O.

use serde::{Deserialize, Serialize};

/// One pair test: `client` connects to `server` and drives the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pair {
    pub client: usize,
    pub server: usize,
}

impl Pair {
    /// The unordered identity (low rank, high rank).
    pub fn key(self) -> (usize, usize) {
        (self.client.min(self.server), self.client.max(self.server))
    }
}

/// The rails of a record that does not say (one written before rails
/// existed): every pair.
pub fn one_rail() -> usize {
    1
}

/// The most ranks a sweep takes: rank 0 keeps a record of every pair
/// (2.1 billion here, about 330 GB), and `--plan` computes this many
/// rounds in about 7 s.
pub const MAX_RANKS: usize = 65_536;

/// What rank 0 keeps per pair, measured (README, "Cost and scale").
const RECORD_BYTES: f64 = 152.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    n: usize,
    /// Rails (1: every pair); rail g holds ranks g, g+K, g+2K, ...
    rails: usize,
}

impl Schedule {
    /// The schedule of `n` ranks, every pair; fewer than two have no pair
    /// to test.
    pub fn new(n: usize) -> Option<Schedule> {
        (2..=MAX_RANKS).contains(&n).then_some(Schedule { n, rails: 1 })
    }

    /// The schedule of `n` ranks on `rails` rails, or why there is none
    /// (a sentence for the user).
    pub fn on_rails(n: usize, rails: usize) -> Result<Schedule, String> {
        if rails == 0 {
            return Err("--rails must be 1 or more".into());
        }
        if n > MAX_RANKS {
            // (a typo such as --ranks 1000000 would otherwise run rank 0
            // out of memory, or the plan for hours)
            let pairs = n as f64 * (n as f64 - 1.0) / 2.0;
            let gb = pairs * RECORD_BYTES / 1e9;
            let gb = if gb < 1e6 {
                format!("{gb:.0}")
            } else {
                format!("{gb:.1e}")
            };
            return Err(format!(
                "{n} ranks is more than a sweep takes ({MAX_RANKS}): rank 0 would keep a record of each of their {pairs:.3e} pairs, about {gb} GB; sweep a part of the cluster at a time"
            ));
        }
        if !n.is_multiple_of(rails) {
            return Err(format!(
                "--rails {rails} needs every node to run {rails} ranks, but there are {n} ranks, not a multiple of {rails}"
            ));
        }
        if n / rails < 2 {
            return Err(if rails == 1 {
                "a sweep needs at least 2 ranks".into()
            } else {
                format!("--rails {rails} with {n} ranks pairs no one: each rail needs ranks on 2 nodes or more")
            });
        }
        Ok(Schedule { n, rails })
    }

    pub fn ranks(&self) -> usize {
        self.n
    }

    pub fn rails(&self) -> usize {
        self.rails
    }

    /// Ranks on one rail.
    fn members(&self) -> usize {
        self.n / self.rails
    }

    /// The circle's size: a rail's ranks, plus a phantom one when odd.
    fn circle(&self) -> usize {
        self.members() + self.members() % 2
    }

    pub fn rounds(&self) -> usize {
        self.circle() - 1
    }

    pub fn pairs_per_round(&self) -> usize {
        self.rails * (self.members() / 2)
    }

    pub fn total_pairs(&self) -> usize {
        self.rails * (self.members() * (self.members() - 1) / 2)
    }

    /// The rail of `rank` (of a local rank too: ranks sit in blocks of K).
    pub fn rail_of(&self, rank: usize) -> usize {
        rank % self.rails
    }

    /// Rail `g`'s ranks, lowest first: g, g+K, g+2K, ...
    pub fn rail(&self, g: usize) -> impl Iterator<Item = usize> {
        (g..self.n).step_by(self.rails)
    }

    /// Round `r` (0-based), rail after rail: on each, member `m−1` stays
    /// and the others rotate. Which side is the client alternates with the
    /// distance on the circle (and, for the fixed member, with the round),
    /// so every rank drives half its tests (±1).
    pub fn round(&self, r: usize) -> Vec<Pair> {
        let (members, m) = (self.members(), self.circle());
        let spin = m - 1;
        let mut out = Vec::with_capacity(self.pairs_per_round());
        for g in 0..self.rails {
            // member i of the rail's circle
            let rank = |i: usize| g + self.rails * i;
            let mut push = |a: usize, b: usize, flip: bool| {
                if a < members && b < members {
                    let (client, server) = if flip { (b, a) } else { (a, b) };
                    out.push(Pair {
                        client: rank(client),
                        server: rank(server),
                    });
                }
            };
            push(r % spin, m - 1, r % 2 == 1);
            for k in 1..m / 2 {
                push((r + k) % spin, (r + spin - k) % spin, k % 2 == 0);
            }
        }
        out
    }

    /// The ranks with no partner in round `r` (one per rail when a rail
    /// has an odd number of ranks).
    pub fn idle(&self, r: usize) -> Vec<usize> {
        if self.members().is_multiple_of(2) {
            return Vec::new();
        }
        (0..self.rails).map(|g| g + self.rails * (r % self.rounds())).collect()
    }

    /// Is the pair on one rail (is it in this schedule)?
    pub fn has_pair(&self, a: usize, b: usize) -> bool {
        a != b && a < self.n && b < self.n && self.rail_of(a) == self.rail_of(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn check(n: usize) {
        let s = Schedule::new(n).unwrap();
        let mut seen = HashSet::new();
        for r in 0..s.rounds() {
            let pairs = s.round(r);
            assert_eq!(pairs.len(), n / 2, "n={n} round {r}");
            let mut busy = HashSet::new();
            for p in &pairs {
                assert_ne!(p.client, p.server);
                assert!(
                    busy.insert(p.client) && busy.insert(p.server),
                    "n={n} round {r}: a rank twice"
                );
                assert!(seen.insert(p.key()), "n={n}: pair {:?} twice", p.key());
            }
            let idle = s.idle(r);
            for i in &idle {
                assert!(!busy.contains(i), "n={n} round {r}: the idle rank {i} is busy");
            }
            assert_eq!(busy.len() + idle.len(), n);
        }
        assert_eq!(seen.len(), n * (n - 1) / 2, "n={n}: every pair once");
        assert_eq!(s.total_pairs(), seen.len());
    }

    #[test]
    fn every_pair_exactly_once_in_disjoint_rounds() {
        for n in 2..=41 {
            check(n);
        }
        check(128);
        check(257);
    }

    /// On K rails: every pair of one rail exactly once, no pair across
    /// rails, rounds disjoint, every rank busy but one idle per odd rail.
    fn check_rails(n: usize, k: usize) {
        let s = Schedule::on_rails(n, k).unwrap();
        let members = n / k;
        let mut seen = HashSet::new();
        for r in 0..s.rounds() {
            let pairs = s.round(r);
            assert_eq!(pairs.len(), k * (members / 2), "n={n} k={k} round {r}");
            let mut busy = HashSet::new();
            for p in &pairs {
                assert_eq!(p.client % k, p.server % k, "n={n} k={k}: {p:?} crosses rails");
                assert!(s.has_pair(p.client, p.server));
                assert!(
                    busy.insert(p.client) && busy.insert(p.server),
                    "n={n} k={k} round {r}: a rank twice"
                );
                assert!(seen.insert(p.key()), "n={n} k={k}: pair {:?} twice", p.key());
            }
            let idle = s.idle(r);
            assert_eq!(idle.len(), if members % 2 == 1 { k } else { 0 });
            assert!(idle.iter().all(|i| !busy.contains(i)));
            assert_eq!(busy.len() + idle.len(), n);
        }
        assert_eq!(
            seen.len(),
            k * members * (members - 1) / 2,
            "n={n} k={k}: every same-rail pair once"
        );
        assert_eq!(s.total_pairs(), seen.len());
        assert_eq!(s.rounds(), members - 1 + members % 2);
    }

    #[test]
    fn on_rails_only_ranks_of_one_rail_are_paired() {
        for k in 1..=5 {
            for members in 2..=9 {
                check_rails(k * members, k);
            }
        }
        check_rails(8 * 16, 8);
        assert_eq!(Schedule::on_rails(12, 1), Ok(Schedule::new(12).unwrap()));
        assert!(!Schedule::on_rails(12, 4).unwrap().has_pair(0, 1));
        assert!(Schedule::on_rails(12, 4).unwrap().has_pair(1, 9));
    }

    #[test]
    fn rails_that_do_not_fit_the_ranks_are_refused() {
        let e = Schedule::on_rails(60, 8).unwrap_err();
        assert!(
            e.contains("--rails 8") && e.contains("60 ranks, not a multiple of 8"),
            "{e}"
        );
        let e = Schedule::on_rails(8, 8).unwrap_err();
        assert!(e.contains("pairs no one"), "{e}");
        assert!(Schedule::on_rails(8, 0).is_err());
        assert_eq!(Schedule::on_rails(1, 1).unwrap_err(), "a sweep needs at least 2 ranks");
    }

    #[test]
    fn round_counts() {
        assert_eq!(Schedule::new(8).unwrap().rounds(), 7);
        assert_eq!(Schedule::new(7).unwrap().rounds(), 7);
        assert_eq!(Schedule::new(2).unwrap().rounds(), 1);
        assert_eq!(Schedule::new(2).unwrap().round(0).len(), 1);
        assert_eq!(Schedule::new(3).unwrap().rounds(), 3);
    }

    #[test]
    fn fewer_than_two_ranks_have_no_schedule() {
        assert_eq!(Schedule::new(1), None);
        assert_eq!(Schedule::new(MAX_RANKS + 1), None);
        let e = Schedule::on_rails(100_000, 1).err().unwrap_or_default();
        assert_eq!(
            e,
            "100000 ranks is more than a sweep takes (65536): rank 0 would keep a record of each of their 5.000e9 pairs, about 760 GB; sweep a part of the cluster at a time"
        );
        assert!(Schedule::on_rails(usize::MAX, 1)
            .err()
            .unwrap_or_default()
            .contains("their 1.701e38 pairs, about 2.6e31 GB"));
        assert!(Schedule::on_rails(MAX_RANKS, 8).is_ok());
        assert_eq!(Schedule::new(0), None);
    }

    #[test]
    fn clients_are_balanced() {
        let s = Schedule::new(16).unwrap();
        let mut drives = [0usize; 16];
        for r in 0..s.rounds() {
            for p in s.round(r) {
                drives[p.client] += 1;
            }
        }
        for (rank, d) in drives.iter().enumerate() {
            assert!((7..=8).contains(d), "rank {rank} drives {d} of 15 tests");
        }
    }

    #[test]
    fn ten_thousand_ranks() {
        let s = Schedule::new(10_000).unwrap();
        let mut count = 0usize;
        for r in 0..s.rounds() {
            count += s.round(r).len();
        }
        assert_eq!(count, s.total_pairs());
        assert_eq!(s.rounds(), 9_999);
    }
}
