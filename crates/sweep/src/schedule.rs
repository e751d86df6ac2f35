//! Who tests whom, and when: every unordered pair of N ranks exactly once,
//! in rounds of disjoint pairs (the circle method, as JSC LinkTest does),
//! so a round loads every endpoint at most once. N even: N−1 rounds of
//! N/2 pairs; N odd: N rounds of (N−1)/2 pairs with one rank idle in each
//! (N(N−1)/2 pairs cannot fill fewer rounds). Rounds are computed one at a
//! time so a 10,000-rank schedule costs no memory. Pure arithmetic: no I/O.

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    n: usize,
}

impl Schedule {
    /// The schedule of `n` ranks; fewer than two have no pair to test.
    pub fn new(n: usize) -> Option<Schedule> {
        (n >= 2).then_some(Schedule { n })
    }

    pub fn ranks(&self) -> usize {
        self.n
    }

    /// The circle's size: N, or N+1 with a phantom rank when N is odd.
    fn circle(&self) -> usize {
        self.n + self.n % 2
    }

    pub fn rounds(&self) -> usize {
        self.circle() - 1
    }

    pub fn pairs_per_round(&self) -> usize {
        self.n / 2
    }

    pub fn total_pairs(&self) -> usize {
        self.n * (self.n - 1) / 2
    }

    /// Round `r` (0-based): rank `m−1` stays, the others rotate. Which side
    /// is the client alternates with the distance on the circle (and, for
    /// the fixed rank, with the round), so every rank drives half its tests
    /// (±1).
    pub fn round(&self, r: usize) -> Vec<Pair> {
        let m = self.circle();
        let spin = m - 1;
        let mut out = Vec::with_capacity(m / 2);
        let mut push = |a: usize, b: usize, flip: bool| {
            if a < self.n && b < self.n {
                let (client, server) = if flip { (b, a) } else { (a, b) };
                out.push(Pair { client, server });
            }
        };
        push(r % spin, m - 1, r % 2 == 1);
        for k in 1..m / 2 {
            push((r + k) % spin, (r + spin - k) % spin, k % 2 == 0);
        }
        out
    }

    /// The rank with no partner in round `r`, when N is odd.
    pub fn idle(&self, r: usize) -> Option<usize> {
        (self.n % 2 == 1).then_some(r % self.rounds())
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
            if let Some(i) = s.idle(r) {
                assert!(!busy.contains(&i), "n={n} round {r}: the idle rank {i} is busy");
                assert_eq!(busy.len(), n - 1);
            } else {
                assert_eq!(busy.len(), n);
            }
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
