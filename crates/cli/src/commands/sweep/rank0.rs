//! Rank 0's part beyond its own pair tests: room for a connection per
//! rank, the coordinator's listener and thread, leading its own rank until
//! the coordinator says Finish, and reporting the sweep it led (from its
//! own thread, or its guard's when a provider call holds that thread).

use super::conclude::{conclude, Led};
use super::progress::Progress;
use super::setup::{fail, Setup, Versions};
use crate::exit;
use crate::signals::Stop;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::coordinator::{self, CoordConfig};
use fabdiag_sweep::worker::{self, PairRunner, WorkerConfig};
use fabdiag_sweep::SweepError;
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_plan::{Coordinated, Schedule};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// The steps (rounds, splits or phases) and the pairs the progress counts
/// to. A pattern's steps are known once the ranks have joined: these
/// count every rank in. With a victim, its quiet step comes first and
/// the pattern runs on the other ranks; the victim's own pair is not
/// among the pairs counted (the coordinator reports it apart).
fn planned(
    size: usize,
    rails: usize,
    pattern: Option<&fabdiag_sweep_plan::Pattern>,
    victim: Option<fabdiag_sweep_plan::Pair>,
) -> (usize, usize) {
    use fabdiag_sweep_plan::pattern::{steps, with_victim};
    use fabdiag_sweep_plan::Pattern;
    match pattern {
        // (split by node needs the hosts, unknown yet; the count is the same)
        Some(Pattern::Bisection { splits, .. }) => {
            let others = size.saturating_sub(2 * usize::from(victim.is_some()));
            (splits + usize::from(victim.is_some()), splits * (others / 2))
        }
        Some(p) => {
            let ranks: Vec<usize> = (0..size).collect();
            let hosts = vec![String::new(); size];
            let planned = match victim {
                Some(v) => with_victim(p, v, &ranks, &hosts),
                None => steps(p, &ranks, &hosts),
            };
            (planned.len(), planned.iter().map(|(_, f)| f.len()).sum())
        }
        None => Schedule::on_rails(size, rails).map_or((0, 0), |s| (s.rounds(), s.total_pairs())),
    }
}

/// Makes room for `connections` open sockets: rank 0 holds one per rank
/// (a simulation also every stand-in rank's end). A batch job often starts
/// with a soft limit of 1,024 open files, which a sweep of a thousand
/// nodes would exceed mid-join; the soft limit is raised as far as needed
/// within the hard one, or the sweep is refused before it starts.
pub(super) fn room_for(connections: usize) -> Result<(), String> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let need = connections as u64 + fabdiag_sweep::SPARE_FILES;
    let (soft, hard) =
        getrlimit(Resource::RLIMIT_NOFILE).map_err(|e| format!("cannot read the open-file limit: {e}"))?;
    if soft >= need {
        return Ok(());
    }
    if hard < need {
        return Err(format!(
            "rank 0 needs about {need} open files for {connections} connections and may open only {hard} here (ulimit -Hn): raise the hard limit (limits.conf, or the batch system's) or run fewer ranks"
        ));
    }
    setrlimit(Resource::RLIMIT_NOFILE, need, hard)
        .map_err(|e| format!("cannot raise the open-file limit from {soft} to {need}: {e}"))
}

pub(super) fn bind_coordinator(addr: &str) -> Result<TcpListener, String> {
    let port = addr
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or_else(|| format!("invalid coordinator '{addr}'"))?;
    fabdiag_proto::listen_any(port).map_err(|e| {
        SweepError::Listen {
            port,
            reason: e.to_string(),
        }
        .to_string()
    })
}

/// Rank 0's coordinator thread, taken by whichever thread collects its
/// sweep: rank 0's own, once its pair tests end, or its guard's, when a
/// provider call holds rank 0's own thread for good.
#[derive(Clone, Default)]
pub(super) struct Coordinator(pub(super) Arc<Mutex<Option<CoordThread>>>);

pub(super) type CoordThread = JoinHandle<(Result<Coordinated, SweepError>, Option<String>)>;

impl Coordinator {
    /// The sweep it led, once it has; None when another thread took it.
    pub(super) fn collect(&self, prog: &str) -> Option<Result<Led, String>> {
        let thread = self.0.lock().unwrap_or_else(PoisonError::into_inner).take()?;
        Some(match thread.join() {
            Ok((Ok(sweep), out_error)) => {
                if let Some(e) = &out_error {
                    tell!("{prog}: {e}");
                }
                Ok(Led {
                    sweep,
                    recorded: out_error.is_none(),
                })
            }
            Ok((Err(e), _)) => Err(e.to_string()),
            Err(_) => Err("the coordinator thread panicked".into()),
        })
    }

    /// Starts rank 0's coordinator in a thread, its progress watched as
    /// `o` asks.
    pub(super) fn start(
        &self,
        o: &SweepOptions,
        cfg: CoordConfig,
        listener: TcpListener,
        stop: &Stop,
    ) -> Result<(), String> {
        let (rounds, pairs) = planned(
            cfg.size,
            cfg.rails,
            cfg.pattern.as_ref(),
            cfg.victim.as_ref().map(|v| v.pair),
        );
        let mut watch = Progress::new(
            o.output.as_deref().map(Path::new),
            rounds,
            pairs,
            cfg.pattern.is_some(),
            stop.clone(),
        )?;
        let thread = std::thread::Builder::new()
            .name("fabdiag-coordinator".into())
            .spawn(move || {
                let r = coordinator::coordinate(listener, &cfg, &mut watch);
                if let Some(b) = &watch.bar {
                    b.finish_and_clear();
                }
                (r, watch.out_error)
            })
            .map_err(|e| format!("cannot start the coordinator: {e}"))?;
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
        Ok(())
    }
}

/// Rank 0, its coordinator started: its own rank here until the
/// coordinator says Finish; then the sweep, unless another thread took it
/// (None).
/// Test hook: rank 0's own rank joins this many milliseconds late, so a
/// test can stop the sweep before it has (as a loaded node may).
const OWN_JOIN_DELAY_HOOK: &str = "FABDIAG_TEST_OWN_JOIN_DELAY_MS";

pub(super) fn lead(
    prog: &str,
    mine: WorkerConfig,
    runner: &mut dyn PairRunner,
    coord: &Coordinator,
) -> Option<Result<Led, String>> {
    // rank 0's own pair tests run on until its coordinator says Finish;
    // a coordinator that ended before this rank joined (stopped during
    // the join) is not waited for: the join would retry for its timeout
    if let Ok(ms) = std::env::var(OWN_JOIN_DELAY_HOOK).unwrap_or_default().parse::<u64>() {
        std::thread::sleep(Duration::from_millis(ms));
    }
    let ended = || {
        let slot = coord.0.lock().unwrap_or_else(PoisonError::into_inner);
        // (taken: the guard gave this rank's part up, and concludes)
        let done = slot.as_ref().is_none_or(JoinHandle::is_finished);
        done.then(|| "its coordinator ended".to_string())
    };
    match worker::work(&mine, runner, &ended) {
        Ok(_) | Err(SweepError::Stopped(_)) => {}
        Err(e) => tell!("{prog}: rank 0: {e}"),
    }
    coord.collect(prog)
}

/// What rank 0 reports the sweep it led with: its own thread, or its
/// guard's when a provider call holds that thread.
pub(super) struct Reporting {
    pub(super) prog: String,
    pub(super) who: String,
    pub(super) o: SweepOptions,
    pub(super) setup: Setup,
    pub(super) baseline: Option<Baseline>,
}

impl Reporting {
    /// The report of `led`, or why there is none; the exit code.
    pub(super) fn report(&self, led: Result<Led, String>) -> u8 {
        match led {
            Ok(c) => conclude(
                &self.prog,
                &self.o,
                &self.setup,
                c,
                Versions::here(fabdiag_fabric::library_version().ok()),
                self.baseline.as_ref(),
            ),
            Err(m) => fail(&self.who, exit::RUNTIME, &m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::planned;
    use fabdiag_sweep_plan::{Pair, Pattern};

    #[test]
    fn the_progress_counts_a_victims_quiet_step_and_the_pattern_on_the_other_ranks() {
        let v = Some(Pair { client: 0, server: 3 });
        let alltoall = Some(&Pattern::AllToAll);
        // 6 ranks: 5 phases of 6 flows; beside a victim, the quiet step
        // and 3 phases of 4 flows
        assert_eq!(planned(6, 1, alltoall, None), (5, 30));
        assert_eq!(planned(6, 1, alltoall, v), (4, 12));
        let incast = Pattern::Incast { receivers: vec![] };
        // into each of 4 others: a lone sender, then 3 at once
        assert_eq!(planned(6, 1, Some(&incast), v), (1 + 8, 4 * 4));
        let bisection = Pattern::Bisection {
            by: fabdiag_sweep_plan::pattern::SplitBy::Rank,
            splits: 2,
            seed: 1,
        };
        assert_eq!(planned(6, 1, Some(&bisection), None), (2, 6));
        assert_eq!(planned(6, 1, Some(&bisection), v), (3, 4));
    }
}
