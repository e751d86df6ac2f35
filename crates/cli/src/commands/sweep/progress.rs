//! What rank 0 shows and keeps while its sweep runs (the coordinator's
//! `Observer`): a progress bar on a terminal, a line now and then into a
//! log, and in `--output` the ranks once they joined and every pair's
//! record appended as it arrives.
//! Decides nothing about the sweep and writes no report.

use crate::signals::Stop;
use fabdiag_sweep::coordinator::Observer;
use fabdiag_sweep::folder;
use fabdiag_sweep_plan::{Node, NodeStatus, PairRecord, StepKind};
use indicatif::{HumanDuration, ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a sweep whose stderr is not a terminal says how far it is
/// (`FABDIAG_PROGRESS_SECS` changes it).
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// Progress for a log (stderr not a terminal, e.g. a batch job's): one
/// line at the start of a round or re-test once `every` has passed since
/// the last, so a sweep of hours shows in its log that it is alive.
struct Lines {
    every: Duration,
    /// When the first round began (the join is over).
    started: Instant,
    last: Instant,
}

impl Lines {
    fn new() -> Lines {
        let every = match std::env::var("FABDIAG_PROGRESS_SECS") {
            Err(_) => PROGRESS_EVERY,
            Ok(v) => v.trim().parse::<u64>().map(Duration::from_secs).unwrap_or_else(|_| {
                tell!(
                    "fabdiag sweep: warning: FABDIAG_PROGRESS_SECS={v:?} is not a whole number of seconds; a progress line every {} s",
                    PROGRESS_EVERY.as_secs()
                );
                PROGRESS_EVERY
            }),
        };
        let now = Instant::now();
        Lines {
            every,
            started: now,
            last: now,
        }
    }
}

pub(super) struct Progress {
    stop: Stop,
    pub(super) bar: Option<ProgressBar>,
    /// Without a terminal: a line now and then instead of the bar.
    lines: Option<Lines>,
    /// Pairs of the rounds that failed, for those lines.
    failed: usize,
    /// Pairs of the rounds not run at all (a rank missing or lost, the
    /// sweep stopped): neither done nor failed.
    not_run: usize,
    /// pairs.jsonl, until a write to it fails (then None, and why in
    /// `out_error`).
    out: Option<(std::fs::File, PathBuf)>,
    pub(super) out_error: Option<String>,
    /// "6/8 ranks", once they joined; pairs (a pattern's flows) done of
    /// all of them.
    ranks: String,
    pairs_done: usize,
    pairs: usize,
    /// Whether the records now arriving count toward `pairs`: a round's
    /// pairs and a pattern's flows do, a re-test's pairs do not (they
    /// were counted in their round).
    counting: bool,
    /// "round" and "pairs" in a sweep, "step" and "flows" in a pattern.
    words: (&'static str, &'static str),
}

impl Progress {
    /// `rounds` steps of `pairs` tests (a pattern's steps and flows when
    /// `pattern`), kept in `dir` when given.
    pub(super) fn new(
        dir: Option<&Path>,
        rounds: usize,
        pairs: usize,
        pattern: bool,
        stop: Stop,
    ) -> Result<Progress, String> {
        let words = if pattern { ("step", "flows") } else { ("round", "pairs") };
        let out = match dir {
            Some(d) => Some(folder::append_pairs(d).map_err(|e| e.to_string())?),
            None => None,
        };
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(rounds as u64);
            if let Ok(style) = ProgressStyle::with_template(&format!(
                "{{msg}} [{{bar:30}}] {} {{pos}}/{{len}}, {{elapsed}} elapsed, about {{eta}} left",
                words.0
            )) {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_message("joining");
            b
        });
        let lines = bar.is_none().then(Lines::new);
        Ok(Progress {
            stop,
            bar,
            lines,
            failed: 0,
            not_run: 0,
            out,
            out_error: None,
            ranks: String::new(),
            pairs_done: 0,
            pairs,
            counting: true,
            words,
        })
    }
}

impl Observer for Progress {
    /// Who is who, kept beside the pairs, at the join and again whenever a
    /// rank is lost: if rank 0 ends before its report, `--report` names
    /// the nodes, and those lost, from this.
    fn statuses(&mut self, nodes: &[Node]) {
        if let Some(dir) = self.out.as_ref().and_then(|(_, p)| p.parent()) {
            if let Err(e) = folder::write_nodes(dir, nodes) {
                self.out_error.get_or_insert(format!(
                    "cannot record the ranks in {}: {}; they are in the report",
                    e.path.display(),
                    e.reason
                ));
            }
        }
    }

    fn stopped(&self) -> Option<String> {
        self.stop.why()
    }

    fn joined(&mut self, nodes: &[Node]) {
        self.statuses(nodes);
        let ok = nodes.iter().filter(|n| n.status == NodeStatus::Ok).count();
        self.ranks = format!("{ok}/{} ranks", nodes.len());
        if let Some(b) = &self.bar {
            b.set_message(format!("{}, 0/{} {}", self.ranks, self.pairs, self.words.1));
        }
        if let Some(l) = self.lines.as_mut() {
            l.started = Instant::now();
        }
    }
    fn step(&mut self, kind: StepKind, index: usize, of: usize, label: &str) {
        self.counting = kind != StepKind::Retest;
        if let Some(b) = &self.bar {
            match kind {
                StepKind::Round | StepKind::Split | StepKind::Phase => b.set_position(index as u64),
                StepKind::Retest => b.set_message(format!("re-test {}/{of}", index + 1)),
            }
        }
        if let Some(l) = self.lines.as_mut().filter(|l| l.last.elapsed() >= l.every) {
            l.last = Instant::now();
            let elapsed = l.started.elapsed();
            let (what, shape, left) = match kind {
                // the rounds so far foretell the rest
                StepKind::Round if index > 0 => (
                    "round",
                    String::new(),
                    format!(
                        ", about {} left",
                        HumanDuration(elapsed.mul_f64((of - index) as f64 / index as f64))
                    ),
                ),
                StepKind::Round => ("round", String::new(), String::new()),
                StepKind::Retest => ("re-test", String::new(), String::new()),
                // a pattern's steps are of several shapes (the victim's
                // quiet one first, then the splits): each named by its label
                StepKind::Split | StepKind::Phase => ("step", format!(" ({label})"), String::new()),
            };
            tell!(
                "fabdiag sweep: {what} {} of {of}{shape}; {}, {}, {} failed; {} elapsed{left}",
                index + 1,
                self.ranks,
                tally(self.pairs_done, self.not_run, self.pairs, self.words.1),
                self.failed,
                HumanDuration(elapsed)
            );
        }
    }
    fn pair(&mut self, rec: &PairRecord) {
        if self.counting {
            if rec.untested {
                self.not_run += 1;
            } else {
                self.pairs_done += 1;
                self.failed += usize::from(rec.error.is_some());
            }
            if let Some(b) = &self.bar {
                b.set_message(format!(
                    "{}, {}",
                    self.ranks,
                    tally(self.pairs_done, self.not_run, self.pairs, self.words.1)
                ));
            }
        }
        if let Some((f, path)) = self.out.as_mut() {
            let line = serde_json::to_string(rec).unwrap_or_default();
            if let Err(e) = writeln!(f, "{line}").and_then(|_| f.flush()) {
                // nothing more is written after a failed line: --resume
                // re-runs a torn last line, but refuses a file with an
                // unreadable one in the middle
                self.out_error = Some(format!(
                    "cannot record results in {} from pair {}-{} on: {e}; they are in the report, and --resume runs them again",
                    path.display(),
                    rec.a,
                    rec.b
                ));
                self.out = None;
            }
        }
    }
}

/// "5/8 flows done", and how many were not run when some were: a pair
/// never run (its rank lost, the sweep stopped) is not done.
fn tally(done: usize, not_run: usize, of: usize, what: &str) -> String {
    if not_run == 0 {
        format!("{done}/{of} {what} done")
    } else {
        format!("{done}/{of} {what} done, {not_run} not run")
    }
}

#[cfg(test)]
mod tests {
    use super::tally;

    #[test]
    fn pairs_not_run_are_not_counted_as_done() {
        assert_eq!(tally(3, 0, 8, "pairs"), "3/8 pairs done");
        assert_eq!(tally(3, 5, 8, "flows"), "3/8 flows done, 5 not run");
    }
}
