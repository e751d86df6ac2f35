//! The schedule run step by step: a sweep's rounds and re-tests, or a
//! traffic pattern's steps, each step's records kept. Never prints.

use super::*;

impl super::Coordinator<'_> {
    /// The sweep proper: every pair in its round, then the suspects
    /// re-tested alone. The pairs, the re-tests, and why it stopped early.
    pub(super) fn run_sweep(&mut self) -> (Vec<PairRecord>, Vec<PairRecord>, Option<String>) {
        let mut pairs = Vec::new();
        let measured = |p: &PairRecord| p.value.is_some() && p.round.is_some();
        let done: std::collections::HashSet<(usize, usize)> = self
            .cfg
            .earlier
            .iter()
            .filter(|p| measured(p))
            .map(|p| (p.a, p.b))
            .collect();
        pairs.extend(self.cfg.earlier.iter().filter(|p| measured(p)).cloned());
        let mut stopped = None;
        if let Ok(s) = Schedule::on_rails(self.cfg.size, self.cfg.rails) {
            for r in 0..s.rounds() {
                let todo: Vec<Pair> = s.round(r).into_iter().filter(|p| !done.contains(&p.key())).collect();
                if stopped.is_none() {
                    stopped = self.obs.stopped();
                }
                if let Some(why) = &stopped {
                    pairs.extend(todo.iter().map(|p| PairRecord {
                        untested: true,
                        error: Some(format!("not tested: the sweep was stopped by {why}").into()),
                        ..PairRecord::planned(p, Some(r))
                    }));
                    continue;
                }
                let label = format!("round {}", r + 1);
                self.obs.step(StepKind::Round, r, s.rounds(), &label);
                if todo.is_empty() {
                    continue;
                }
                for rec in self.run_flows_of(StepKind::Round, r, &label, &todo) {
                    self.obs.pair(&rec);
                    pairs.push(rec);
                }
            }
        }

        // serial re-test of the suspects, with nothing else running
        let mut retests = Vec::new();
        if self.cfg.retest > 0 && stopped.is_none() {
            let m = Matrix::of_pairs(self.cfg.size, &pairs);
            let an = Analysis::of(&m, self.cfg.better, self.cfg.rules);
            let chosen = an.retests(
                &m,
                |x| self.ranks.get(x).is_some_and(|r| r.node.status == NodeStatus::Ok),
                self.cfg.retest,
            );
            let usable = |x: usize| self.ranks.get(x).is_some_and(|r| r.node.status == NodeStatus::Ok);
            let mut chosen = chosen;
            // each element of the fabric the slow pairs share: a pair
            // through it and one around it, after the pairs' own suspects
            let nodes = self.nodes();
            let fabric = self.cfg.map.as_deref().and_then(|plan| {
                // (a map that cannot be made is said once, by the report)
                plan.fabric(&fabdiag_sweep_judge::fabric::lldp_of(&nodes))
                    .ok()
                    .map(|(f, _)| f)
            });
            if let Some(fabric) = fabric.as_ref() {
                let (hosts, _) = fabdiag_sweep_judge::fabric::placed(fabric, &nodes);
                let more =
                    fabdiag_sweep_judge::fabric::retest_pairs(fabric, &hosts, &pairs, &an, usable, self.cfg.retest);
                for (crossing, avoiding) in more {
                    for k in std::iter::once(crossing).chain(avoiding) {
                        if !chosen.contains(&k) {
                            chosen.push(k);
                        }
                    }
                }
            }
            // each suspect as first ordered (who was client)
            let first = first_records(&pairs, chosen.iter().copied());
            let suspects: Vec<Pair> = chosen
                .iter()
                .filter_map(|k| first.get(k))
                .map(|p| Pair {
                    client: p.client,
                    server: p.server,
                })
                .collect();
            for (i, p) in suspects.iter().enumerate() {
                let label = format!("re-test {}", i + 1);
                self.obs.step(StepKind::Retest, i, suspects.len(), &label);
                for rec in self.run_flows_of(StepKind::Retest, i, &label, std::slice::from_ref(p)) {
                    self.obs.pair(&rec);
                    retests.push(rec);
                }
            }
        }
        (pairs, retests, stopped)
    }

    /// A step of `pairs`, each with `--flows` flows at once: one record a
    /// pair, its flows' figures kept and its value the best of them.
    fn run_flows_of(&mut self, kind: StepKind, index: usize, label: &str, pairs: &[Pair]) -> Vec<PairRecord> {
        let k = self.cfg.flows.max(1);
        if k == 1 {
            return self.run_step(kind, index, label, pairs).0;
        }
        let each: Vec<Pair> = pairs.iter().flat_map(|p| std::iter::repeat_n(*p, k)).collect();
        let records = self.run_step(kind, index, label, &each).0;
        records
            .chunks(k)
            .filter_map(|flows| merge_flows(flows, self.cfg.better))
            .collect()
    }

    /// A traffic pattern instead of the rounds: each step's flows at
    /// once, and the victim's beside them when there is one. Its steps,
    /// and why it stopped early.
    pub(super) fn run_pattern(&mut self, pattern: Pattern) -> (PatternRun, Option<String>) {
        let live: Vec<usize> = (0..self.ranks.len()).filter(|&r| self.live(r)).collect();
        let hosts: Vec<String> = live
            .iter()
            .map(|&r| self.ranks[r].node.host.clone().unwrap_or_default())
            .collect();
        let kind = match pattern {
            Pattern::Bisection { .. } => StepKind::Split,
            _ => StepKind::Phase,
        };
        let victim = self.cfg.victim.as_ref().map(|v| v.pair);
        let planned = match victim {
            Some(v) => fabdiag_sweep_plan::pattern::with_victim(&pattern, v, &live, &hosts),
            None => fabdiag_sweep_plan::pattern::steps(&pattern, &live, &hosts),
        };
        let of = planned.len();
        // A pattern's pair is (sender, receiver) of its data. A read moves
        // data from the server to the client, so with read-bw the receiver
        // reads from the sender: its reads complete as the data lands,
        // which makes an incast's aggregate what reached the receiver.
        let reads = fabdiag_model::TestSpec::from_wire(self.cfg.test.clone())
            .is_ok_and(|s| s.tool == fabdiag_model::Tool::ReadBw);
        let turn = |p: &Pair| Pair {
            client: p.server,
            server: p.client,
        };
        let mut steps = Vec::new();
        let mut stopped = None;
        for (n, (shape, mut pairs)) in planned.into_iter().enumerate() {
            if reads {
                pairs = pairs.iter().map(turn).collect();
            }
            if stopped.is_none() {
                stopped = self.obs.stopped();
            }
            // the pattern's steps count from 0 after the victim's quiet one
            let index = if victim.is_some() { n.saturating_sub(1) } else { n };
            pairs.extend(victim);
            let (mut flows, lat) = match &stopped {
                Some(why) => {
                    let not_run = pairs.iter().map(|p| PairRecord {
                        untested: true,
                        error: Some(format!("not tested: the run was stopped by {why}").into()),
                        ..PairRecord::planned(p, Some(index))
                    });
                    (not_run.collect(), None)
                }
                None => {
                    let label = shape.label(index);
                    self.obs.step(kind, n, of, &label);
                    self.run_step(kind, n, &label, &pairs)
                }
            };
            let victim = victim
                .and_then(|_| flows.pop())
                .map(|record| VictimRecord { lat, record });
            if reads {
                for f in &mut flows {
                    std::mem::swap(&mut f.client, &mut f.server);
                }
            }
            for f in &flows {
                self.obs.pair(f);
            }
            steps.push(PatternStep {
                index,
                shape,
                flows,
                victim,
            });
        }
        let run = PatternRun { pattern, steps, victim };
        (run, stopped)
    }
}

/// One pair's flows as one record: each flow's figure, the best as its
/// value (what the pair does on a good path: a slow host slows every
/// flow, a slow path some), failed only when every flow failed (its
/// error kept); the longest time.
fn merge_flows(flows: &[PairRecord], better: Better) -> Option<PairRecord> {
    let figures: Box<[Option<f64>]> = flows.iter().map(|f| f.value).collect();
    let best = flows.iter().filter(|f| f.value.is_some()).max_by(|x, y| {
        let (a, b) = (x.value.unwrap_or_default(), y.value.unwrap_or_default());
        better.worse_first(a, b)
    });
    let mut rec = best.or(flows.first())?.clone();
    rec.elapsed_s = flows.iter().map(|f| f.elapsed_s).fold(0.0, f64::max);
    rec.measure_s = flows.iter().map(|f| f.measure_s).fold(0.0, f64::max);
    if rec.counters.is_none() {
        rec.counters = flows.iter().find_map(|f| f.counters.clone());
    }
    rec.flows = Some(figures);
    Some(rec)
}
