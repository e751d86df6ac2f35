//! NIC error rates against a baseline (`--baseline`): each rank's fault
//! counter rises per pair test, in this sweep and in an earlier one, and
//! the counters whose rate has risen or fallen past the rule, node for
//! node. A rate, not a sum: the two sweeps may have run their pairs for
//! different times or counts. The port's own counters (physical, flap,
//! drop) are said when they at least double, or appear; the path's
//! (retransmissions, congestion, every TCP counter, which a rank sees
//! rise for its partners' trouble too) only when they change fourfold and
//! reach the blame's floor per test. Pure: never reads or prints.

use crate::blame::{add_rises, CounterRise, PATH_FACTOR, PATH_FLOOR};
use crate::doc::{ErrorRateChange, ErrorRates};
use fabdiag_model::counters::{severity, Noted};
use fabdiag_sweep_plan::{Node, PairRecord};
use std::collections::{BTreeMap, BTreeSet};

/// How many times its other rate a port's own counter's must be to be
/// said risen (or, the other way round, fallen).
const PORT_FACTOR: f64 = 2.0;

/// One rank's fault counter rises over its pair tests.
#[derive(Clone, Debug, Default)]
pub struct Rates {
    /// Its pair tests that ran (failed ones too).
    pub tests: u64,
    pub rises: BTreeMap<(String, String), CounterRise>,
}

impl Rates {
    /// One more pair test, in which `noted` were this rank's changes.
    pub fn add(&mut self, noted: &[Noted]) {
        self.tests += 1;
        let alarming: Vec<&Noted> = noted.iter().filter(|x| x.alarming()).collect();
        add_rises(&mut self.rises, &alarming);
    }

    fn untrusted(&self, key: &(String, String)) -> bool {
        self.rises.get(key).is_some_and(|r| r.untrusted)
    }

    fn per_test(&self, key: &(String, String)) -> f64 {
        let rise = self.rises.get(key).map_or(0, |r| r.rise);
        if self.tests == 0 {
            0.0
        } else {
            rise as f64 / self.tests as f64
        }
    }
}

/// Each of `n` ranks' rates over the pair tests in `pairs` that ran.
pub fn of_pairs(pairs: &[PairRecord], n: usize) -> Vec<Rates> {
    let mut out = vec![Rates::default(); n];
    for p in pairs.iter().filter(|p| !p.untested) {
        for rank in [p.client, p.server] {
            if let Some(r) = out.get_mut(rank) {
                r.add(p.counters.as_deref().map_or(&[][..], |c| c.of(p, rank)));
            }
        }
    }
    out
}

/// Whether a sweep's node record says its counters were read (not "not
/// available (why)", not a simulated sweep's absent field).
pub fn was_read(counters: Option<&str>) -> bool {
    counters.is_some_and(|c| !c.starts_with("not available"))
}

/// Each node's counters were read, by rank.
pub fn read_of(nodes: &[Node]) -> Vec<bool> {
    nodes.iter().map(|x| was_read(x.counters.as_deref())).collect()
}

/// One sweep's side of the comparison: each rank's rates, and whether its
/// counters were read at all.
pub struct Side<'a> {
    pub rates: &'a [Rates],
    pub read: &'a [bool],
}

/// `now`'s nodes against `then`'s, `there` mapping each of this sweep's
/// ranks to the baseline's.
pub fn compare(now: Side<'_>, then: Side<'_>, there: &[Option<usize>]) -> ErrorRates {
    let mut out = ErrorRates::default();
    let read = |s: &Side<'_>, r: usize| s.read.get(r).copied().unwrap_or(false);
    for (rank, b) in there.iter().enumerate().filter_map(|(r, b)| Some((r, (*b)?))) {
        let (Some(ours), Some(theirs)) = (now.rates.get(rank), then.rates.get(b)) else {
            continue;
        };
        if !read(&now, rank) || !read(&then, b) || ours.tests == 0 || theirs.tests == 0 {
            continue;
        }
        out.compared_nodes += 1;
        let keys: BTreeSet<&(String, String)> = ours.rises.keys().chain(theirs.rises.keys()).collect();
        for key in keys {
            let Some(r) = ours.rises.get(key).or_else(|| theirs.rises.get(key)) else {
                continue;
            };
            let (a, z) = (theirs.per_test(key), ours.per_test(key));
            // a counter that went back or sat at its ceiling has no known
            // rise: that it did so is the change
            let (ua, uz) = (theirs.untrusted(key), ours.untrusted(key));
            let change = || ErrorRateChange {
                rank,
                baseline_rank: b,
                family: r.family,
                device: r.device.clone(),
                name: r.name.clone(),
                class: r.class,
                per_test: z,
                baseline_per_test: a,
                untrusted: ua || uz,
            };
            if past(r, a, z) || (uz && !ua) {
                out.risen.push(change());
            } else if past(r, z, a) || (ua && !uz && z == 0.0) {
                out.fallen.push(change());
            }
        }
    }
    if out.compared_nodes == 0 {
        out.not_compared = Some(if then.read.iter().any(|&x| x) {
            "no node had its NIC counters read in both sweeps".into()
        } else {
            "the baseline read no NIC counters".into()
        });
    }
    for list in [&mut out.risen, &mut out.fallen] {
        list.sort_by(|x, y| {
            severity(x.family, x.class)
                .cmp(&severity(y.family, y.class))
                .then(
                    y.per_test
                        .max(y.baseline_per_test)
                        .total_cmp(&x.per_test.max(x.baseline_per_test)),
                )
                .then(x.rank.cmp(&y.rank))
        });
    }
    out
}

/// Has the rate gone from `from` to `to` past the rule for counter `r`?
fn past(r: &CounterRise, from: f64, to: f64) -> bool {
    if r.of_the_path() {
        to >= PATH_FLOOR as f64 && to >= PATH_FACTOR as f64 * from
    } else {
        to > 0.0 && to >= PORT_FACTOR * from
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::noted;
    use fabdiag_model::counters::{Change, Class};

    /// One node in both sweeps: (its rates, whether read) now and then.
    fn one_node(now: (Rates, bool), then: (Rates, bool)) -> ErrorRates {
        compare(
            Side {
                rates: &[now.0],
                read: &[now.1],
            },
            Side {
                rates: &[then.0],
                read: &[then.1],
            },
            &[Some(0)],
        )
    }

    fn rates(tests: u64, each: &[Noted]) -> Rates {
        let mut r = Rates::default();
        for _ in 0..tests {
            r.add(each);
        }
        r
    }

    /// Rank 0 of this sweep is rank 1 of the baseline and the reverse;
    /// rank 2 is in both; rank 3 only here.
    #[test]
    fn rates_per_test_are_compared_node_for_node() {
        let flap = |by| noted("eth0", "carrier_changes", Class::Flap, Change::Rose { by });
        let resent = |by| noted("tcp", "RetransSegs", Class::Retransmit, Change::Rose { by });
        let then = [
            rates(10, &[flap(1)]),            // our rank 1's: 1 per test
            rates(4, &[resent(3)]),           // our rank 0's: 3 per test
            rates(7, &[flap(5), resent(40)]), // rank 2's
        ];
        // rank 1 flapped in half its tests now: 0.5 per test, half of 1
        let mut halved = rates(10, &[flap(1)]);
        (0..10).for_each(|_| halved.add(&[]));
        let now = [
            rates(7, &[resent(20)]),           // 3 -> 20: fourfold and past 8
            halved,                            // 1 -> 0.5: fallen
            rates(7, &[flap(20), resent(60)]), // 5 -> 20 risen; 40 -> 60 not fourfold
            rates(7, &[flap(9)]),              // not in the baseline: not compared
        ];
        let there = [Some(1), Some(0), Some(2), None];
        let c = compare(
            Side {
                rates: &now,
                read: &[true; 4],
            },
            Side {
                rates: &then,
                read: &[true; 3],
            },
            &there,
        );
        assert_eq!(c.compared_nodes, 3);
        assert_eq!(c.not_compared, None);
        let said = |l: &[ErrorRateChange]| -> Vec<(usize, String, f64, f64)> {
            l.iter()
                .map(|x| (x.rank, x.name.clone(), x.per_test, x.baseline_per_test))
                .collect()
        };
        // the port's own counters first
        assert_eq!(
            said(&c.risen),
            [
                (2, "carrier_changes".to_string(), 20.0, 5.0),
                (0, "RetransSegs".to_string(), 20.0, 3.0)
            ]
        );
        assert_eq!(said(&c.fallen), [(1, "carrier_changes".to_string(), 0.5, 1.0)]);
    }

    #[test]
    fn a_new_port_error_is_risen_a_few_path_ones_are_not() {
        let drop1 = noted("eth0", "rx_dropped", Class::Drop, Change::Rose { by: 1 });
        let resent = noted("tcp", "RetransSegs", Class::Retransmit, Change::Rose { by: 7 });
        let wrapped = noted(
            "eth0",
            "rx_crc_errors",
            Class::Physical,
            Change::WentBack { before: 9, after: 2 },
        );
        let c = one_node((rates(5, &[drop1, resent, wrapped]), true), (rates(5, &[]), true));
        let names: Vec<&str> = c.risen.iter().map(|x| x.name.as_str()).collect();
        // a counter that went back is said (its rate a floor: untrusted),
        // never summed as a zero
        assert_eq!(names, ["rx_crc_errors", "rx_dropped"], "{c:?}");
        assert!(c.risen[0].untrusted && !c.risen[1].untrusted);
        assert!(c.fallen.is_empty());
    }

    #[test]
    fn unread_counters_are_not_compared_and_say_why() {
        let c = one_node((rates(5, &[]), true), (rates(5, &[]), false));
        assert_eq!(c.compared_nodes, 0);
        assert_eq!(c.not_compared.as_deref(), Some("the baseline read no NIC counters"));
        let c = one_node((rates(5, &[]), false), (rates(5, &[]), true));
        assert_eq!(
            c.not_compared.as_deref(),
            Some("no node had its NIC counters read in both sweeps")
        );
        assert!(was_read(Some("eth0 + tcp")) && !was_read(Some("not available (shm has no NIC)")) && !was_read(None));
    }
}
