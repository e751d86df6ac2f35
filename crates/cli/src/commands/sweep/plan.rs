//! `--plan`: the schedule printed, round by round for a small sweep,
//! with what it will cost; nothing runs.

use super::setup::{fail, Setup};
use crate::exit;
use crate::streams::print_stdout;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::launch;
use fabdiag_sweep_plan::Schedule;
use std::time::Instant;

pub(super) fn plan(prog: &str, o: &SweepOptions, setup: &Setup) -> u8 {
    let n = match o.ranks {
        Some(n) => n,
        None => match launch::resolve(&|k| std::env::var(k).ok(), o.coordinator.as_deref()) {
            Ok(l) => l.size,
            Err(_) => return fail(prog, exit::USAGE, "--plan needs --ranks N (or a launcher's rank count)"),
        },
    };
    let s = match Schedule::on_rails(n, o.rails) {
        Ok(s) => s,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    let t0 = Instant::now();
    let mut count = 0usize;
    let mut text = String::new();
    for r in 0..s.rounds() {
        let pairs = s.round(r);
        count += pairs.len();
        if n <= 32 {
            let list: Vec<String> = pairs.iter().map(|p| format!("{}>{}", p.client, p.server)).collect();
            let idle = s.idle(r);
            let idle = if idle.is_empty() {
                String::new()
            } else {
                let idle: Vec<String> = idle.iter().map(|i| i.to_string()).collect();
                format!("  (idle: {})", idle.join(" "))
            };
            text.push_str(&format!("round {:>3}: {}{idle}\n", r + 1, list.join(" ")));
        }
    }
    let cpu = t0.elapsed();
    let per_pair = format!(
        "each round lasts one pair test ({}) plus the per-round overhead (under 0.1 s with 8 ranks on a 2-core machine; docs/results/sweep-cost.md)",
        setup.metric.test
    );
    print_stdout(&format!(
        "{text}{n} ranks{}: {} rounds of {} pairs ({} pairs in all, client>server); schedule computed in {:.3} s\n{per_pair}\nsuspects re-tested alone afterwards: up to {}\n",
        if o.rails > 1 {
            format!("{}, {} on each", fabdiag_sweep_report::rails_note(o.rails), n / o.rails)
        } else {
            String::new()
        },
        s.rounds(),
        s.pairs_per_round(),
        count,
        cpu.as_secs_f64(),
        o.retest
    ));
    exit::OK
}
