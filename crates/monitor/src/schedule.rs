//! When each probe may run. Every peer is probed for latency once per
//! interval and for bandwidth once per bandwidth interval, the peers'
//! probes spread evenly over the interval rather than all at once; and
//! all the probes together may take at most the budget's share of the
//! link's time: after a probe that took `t` seconds of link time, the next
//! probe of its kind waits until `t / share` seconds have passed, where
//! the share is the budget, halved between the kinds when both run. Since
//! every probe leaves through the monitor's own link, this bounds the
//! monitor's link and so each peer's. Latency probes may run side by side
//! (`parallel`); a bandwidth probe runs alone. Pure: the binary hands in the time
//! (seconds on any steady clock) and starts what it is told to.

use crate::probe::ProbeKind;

/// What the schedule is made from.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub peers: usize,
    pub interval_s: f64,
    /// None: no bandwidth probes.
    pub bw_interval_s: Option<f64>,
    /// The most of the link's time probing may take (0.01 is 1 %).
    pub budget: f64,
    /// Probes that may run at once.
    pub parallel: usize,
}

impl Plan {
    /// The share of link time one kind of probe may take.
    pub fn share(&self, kind: ProbeKind) -> f64 {
        match (kind, self.bw_interval_s) {
            (ProbeKind::Latency, None) => self.budget,
            (ProbeKind::Bandwidth, None) => 0.0,
            _ => self.budget / 2.0,
        }
    }

    fn period(&self, kind: ProbeKind) -> Option<f64> {
        match kind {
            ProbeKind::Latency => Some(self.interval_s),
            ProbeKind::Bandwidth => self.bw_interval_s,
        }
    }
}

/// What the binary does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Start this peer's probe of this kind now.
    Start(usize, ProbeKind),
    /// Nothing is due for this many seconds (infinite: until a running
    /// probe ends).
    Wait(f64),
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    due: f64,
    /// When it last started: the next comes a whole period later.
    started: f64,
    running: bool,
}

#[derive(Clone, Debug)]
pub struct Schedule {
    plan: Plan,
    /// Per peer, per kind (`ProbeKind::index`).
    slots: Vec<[Slot; 2]>,
    /// Per kind: when the budget lets its next probe start.
    free_at: [f64; 2],
    running: usize,
}

impl Schedule {
    /// A schedule starting at `start`: peer `i`'s first latency probe at
    /// `i / peers` of the interval, its first bandwidth probe half a step
    /// later, so the first figures come within one interval.
    pub fn new(plan: Plan, start: f64) -> Schedule {
        let n = plan.peers.max(1) as f64;
        let slots = (0..plan.peers)
            .map(|i| {
                let step = plan.interval_s * i as f64 / n;
                [
                    Slot {
                        due: start + step,
                        started: f64::NEG_INFINITY,
                        running: false,
                    },
                    Slot {
                        due: if plan.bw_interval_s.is_some() {
                            start + step + plan.interval_s / (2.0 * n)
                        } else {
                            f64::INFINITY
                        },
                        started: f64::NEG_INFINITY,
                        running: false,
                    },
                ]
            })
            .collect();
        Schedule {
            plan,
            slots,
            free_at: [start; 2],
            running: 0,
        }
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    fn bandwidth_running(&self) -> bool {
        self.slots.iter().any(|s| s[ProbeKind::Bandwidth.index()].running)
    }

    /// The next thing to do at `now`; a `Start` marks the probe running.
    pub fn next(&mut self, now: f64) -> Next {
        if self.running >= self.plan.parallel || self.bandwidth_running() {
            return Next::Wait(f64::INFINITY);
        }
        // the probe due longest ago among those ready (not merely the
        // first found: when probes fall behind, every one is ready at
        // once, and the first peer would be probed for ever); else the
        // soonest ready
        let mut ready: Option<(f64, usize, ProbeKind)> = None;
        let mut soonest: Option<(f64, usize, ProbeKind)> = None;
        for (i, s) in self.slots.iter().enumerate() {
            for k in ProbeKind::ALL {
                let slot = s[k.index()];
                if slot.running {
                    continue;
                }
                let at = slot.due.max(self.free_at[k.index()]);
                if at <= now && ready.is_none_or(|(d, _, _)| slot.due < d) {
                    ready = Some((slot.due, i, k));
                }
                if soonest.is_none_or(|(b, _, _)| at < b) {
                    soonest = Some((at, i, k));
                }
            }
        }
        match (ready, soonest) {
            // a bandwidth probe runs alone: beside another probe, each
            // would measure the other's traffic on the monitor's link
            (Some((_, _, ProbeKind::Bandwidth)), _) if self.running > 0 => Next::Wait(f64::INFINITY),
            (Some((_, i, k)), _) => {
                let slot = &mut self.slots[i][k.index()];
                slot.running = true;
                slot.started = now;
                self.running += 1;
                Next::Start(i, k)
            }
            (None, Some((at, _, _))) => Next::Wait(at - now),
            (None, None) => Next::Wait(f64::INFINITY),
        }
    }

    /// The probe started by `next` ended at `now`, having taken `link_s`
    /// of link time. `retry`: it was turned away (busy, rate limit) and is
    /// tried again after so many seconds instead of at its next period.
    /// A probe the schedule did not start changes nothing.
    pub fn finished(&mut self, peer: usize, kind: ProbeKind, now: f64, link_s: f64, retry: Option<f64>) {
        let Some(slot) = self.slots.get_mut(peer).map(|s| &mut s[kind.index()]) else {
            return;
        };
        if !slot.running {
            return;
        }
        slot.running = false;
        self.running -= 1;
        let period = self.plan.period(kind).unwrap_or(f64::INFINITY);
        slot.due = match retry {
            Some(r) => now + r,
            // from when it started, not when it was due: a probe held back
            // (by the budget, or others running) is not made up for by a
            // second one sooner than a period after it
            None => slot.started + period,
        };
        let share = self.plan.share(kind);
        if share > 0.0 && link_s.is_finite() && link_s > 0.0 {
            let f = &mut self.free_at[kind.index()];
            *f = f.max(now) + link_s / share;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan(peers: usize, parallel: usize) -> Plan {
        Plan {
            peers,
            interval_s: 30.0,
            bw_interval_s: Some(300.0),
            budget: 0.01,
            parallel,
        }
    }

    /// Runs the schedule for `until` seconds, probes taking `wall` seconds
    /// and `link(kind, n)` of link time; returns (start, end, peer, kind,
    /// link) of every probe.
    fn simulate(
        s: &mut Schedule,
        until: f64,
        wall: f64,
        link: impl Fn(ProbeKind, usize) -> f64,
    ) -> Vec<(f64, f64, usize, ProbeKind, f64)> {
        let mut now = 0.0;
        let mut running: Vec<(f64, f64, usize, ProbeKind)> = Vec::new();
        let mut done = Vec::new();
        while now < until {
            match s.next(now) {
                Next::Start(p, k) => running.push((now, now + wall, p, k)),
                Next::Wait(w) => {
                    let end = running.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
                    let t = (now + w).min(end);
                    assert!(t.is_finite(), "nothing due and nothing running");
                    now = t;
                    while let Some(i) = running.iter().position(|r| r.1 <= now) {
                        let (a, b, p, k) = running.remove(i);
                        let l = link(k, done.len());
                        s.finished(p, k, now, l, None);
                        done.push((a, b, p, k, l));
                    }
                }
            }
        }
        done
    }

    #[test]
    fn peers_are_spread_over_the_interval() {
        let mut s = Schedule::new(plan(4, 1), 100.0);
        let mut starts = Vec::new();
        let mut now = 100.0;
        while starts.len() < 8 {
            match s.next(now) {
                Next::Start(p, k) => {
                    starts.push((now - 100.0, p, k));
                    s.finished(p, k, now, 0.0, None);
                }
                Next::Wait(w) => now += w,
            }
        }
        use ProbeKind::{Bandwidth as B, Latency as L};
        let want = [
            (0.0, 0, L),
            (3.75, 0, B),
            (7.5, 1, L),
            (11.25, 1, B),
            (15.0, 2, L),
            (18.75, 2, B),
            (22.5, 3, L),
            (26.25, 3, B),
        ];
        assert_eq!(starts, want);
    }

    #[test]
    fn a_turned_away_probe_is_retried_then_keeps_its_period() {
        let mut s = Schedule::new(plan(1, 1), 0.0);
        assert_eq!(s.next(0.0), Next::Start(0, ProbeKind::Latency));
        s.finished(0, ProbeKind::Latency, 0.5, 0.0, Some(2.0));
        // the bandwidth probe (due 15) waits; the retry comes first
        assert_eq!(s.next(1.0), Next::Wait(1.5));
        assert_eq!(s.next(2.5), Next::Start(0, ProbeKind::Latency));
        s.finished(0, ProbeKind::Latency, 3.0, 0.001, None);
        assert_eq!(s.next(3.0), Next::Wait(12.0));
        assert_eq!(s.next(15.0), Next::Start(0, ProbeKind::Bandwidth));
        s.finished(0, ProbeKind::Bandwidth, 15.2, 0.1, None);
        // latency was due at 2.5 + 30; the budget (0.001 / 0.005 s) is long past
        assert_eq!(s.next(20.0), Next::Wait(12.5));
        // an end the schedule did not start is ignored
        s.finished(0, ProbeKind::Latency, 21.0, 99.0, None);
        s.finished(7, ProbeKind::Latency, 21.0, 99.0, None);
        assert_eq!(s.next(21.0), Next::Wait(11.5));
    }

    #[test]
    fn probes_that_fall_behind_still_take_every_peer_in_turn() {
        let p = Plan {
            bw_interval_s: None,
            interval_s: 1.0,
            budget: 1.0,
            ..plan(3, 1)
        };
        let mut s = Schedule::new(p, 0.0);
        // each probe takes 2 s: every peer is always overdue
        let done = simulate(&mut s, 60.0, 2.0, |_, _| 0.01);
        let order: Vec<usize> = done.iter().map(|d| d.2).collect();
        assert_eq!(&order[..9], [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn without_bandwidth_probes_latency_has_the_whole_budget() {
        let p = Plan {
            bw_interval_s: None,
            ..plan(2, 1)
        };
        assert_eq!(p.share(ProbeKind::Latency), 0.01);
        let mut s = Schedule::new(p, 0.0);
        let done = simulate(&mut s, 600.0, 0.3, |_, _| 0.002);
        assert!(done.iter().all(|d| d.3 == ProbeKind::Latency));
        assert_eq!(done.len(), 40);
    }

    proptest! {
        /// However long probes take, they never take more than the
        /// budget's share of the time (a probe's worth of slack for each
        /// that may run at once), no more run at once than allowed, a
        /// bandwidth probe runs alone, and no peer's probe of a kind comes
        /// sooner than its period.
        #[test]
        fn the_budget_the_parallelism_and_the_periods_hold(
            peers in 1usize..12,
            parallel in 1usize..4,
            wall in 0.05f64..3.0,
            links in proptest::collection::vec(0.0f64..2.0, 1..50),
        ) {
            let p = plan(peers, parallel);
            let mut s = Schedule::new(p.clone(), 0.0);
            let until = 3000.0;
            let done = simulate(&mut s, until, wall, |k, n| match k {
                ProbeKind::Latency => links[n % links.len()] / 100.0,
                ProbeKind::Bandwidth => links[n % links.len()],
            });
            for k in ProbeKind::ALL {
                let mine: Vec<_> = done.iter().filter(|d| d.3 == k).collect();
                let total: f64 = mine.iter().map(|d| d.4).sum();
                let most = mine.iter().map(|d| d.4).fold(0.0, f64::max);
                // latency probes may overlap: each of `parallel` may have
                // started before another's cost was known
                let slack = if k == ProbeKind::Latency { parallel as f64 * most } else { most };
                prop_assert!(total <= p.share(k) * until + slack + 1e-9,
                    "{:?}: {} s of link in {} s", k, total, until);
                for peer in 0..peers {
                    let starts: Vec<f64> = mine.iter().filter(|d| d.2 == peer).map(|d| d.0).collect();
                    let period = if k == ProbeKind::Latency { 30.0 } else { 300.0 };
                    for w in starts.windows(2) {
                        prop_assert!(w[1] - w[0] >= period - 1e-9, "{:?} peer {}: {:?}", k, peer, w);
                    }
                }
            }
            for d in &done {
                let beside: Vec<_> = done.iter().filter(|e| e.0 <= d.0 && d.0 < e.1).collect();
                prop_assert!(beside.len() <= parallel);
                if beside.len() > 1 {
                    prop_assert!(beside.iter().all(|e| e.3 == ProbeKind::Latency), "{:?}", beside);
                }
            }
        }
    }
}
