//! A real sweep, on every rank: who this rank is (the launcher), its own
//! pair-test settings (NIC and GPU from the tool options), then either a
//! worker's part or, on rank 0, the coordinator and the report too.

use super::files::{prepare_output, read_baseline};
use super::held;
use super::rank0::{bind_coordinator, lead, room_for, Coordinator, Reporting};
use super::setup::{fail, Setup};
use crate::commands::{load_libfabric, with_hooks};
use crate::exit;
use crate::signals::Stop;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_options::{Action, Invocation, OptionError};
use fabdiag_sweep::runner::FabricRunner;
use fabdiag_sweep::worker::{self, WorkerConfig};
use fabdiag_sweep::{coordinator, launch, SweepError};
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_plan::{PairRecord, Schedule};
use std::sync::Arc;
use std::time::Duration;

/// SIGINT/SIGTERM for a sweep, watched before any thread is started: the
/// sweep ends after the round in progress (rank 0) or after one more
/// order (the others), and reports.
pub(super) fn watch_stop() -> Stop {
    Stop::watch().unwrap_or_else(|e| {
        tell!("fabdiag sweep: warning: cannot watch for SIGINT/SIGTERM ({e}): a stop loses the report");
        Stop::default()
    })
}

/// This rank's own pair-test settings: libfabric loaded, and its NIC
/// (`-d`) and GPU (`-t/-r`) from the tool options, a list giving local
/// rank i its i-th (`parse_for_rank`; run() parsed the same line for
/// local rank 0, before the launcher said which this is), written into
/// `mine` for its join; or the exit code and why not.
pub(super) fn own_env(
    o: &SweepOptions,
    local_rank: usize,
    mine: &mut WorkerConfig,
) -> Result<fabdiag_session::Env, (u8, String)> {
    load_libfabric().map_err(|e| (exit::UNAVAILABLE, e.to_string()))?;
    let inv = match fabdiag_options::parse_for_rank(o.tool, &o.tool_args, local_rank) {
        Ok(Action::Run(inv)) => inv,
        // (run() has answered -h and refused a bad line already)
        Ok(_) => return Err((exit::USAGE, "-h or -V among a sweep's tool options".into())),
        Err(OptionError::Invalid(m) | OptionError::Unavailable(m)) => return Err((exit::USAGE, m)),
    };
    mine.gpu = gpu_label(&inv.gpu);
    mine.device = inv.own.device.clone();
    let gpu = crate::commands::gpu::resolve(&inv.gpu).map_err(|m| (exit::UNAVAILABLE, m))?;
    Ok(with_hooks(fabdiag_session::Env {
        gpu,
        ..fabdiag_session::Env::from(inv.own)
    }))
}

/// On rails, a rank must sit where the schedule assumes: its local rank
/// picks its NIC (`-d`'s list, in turn), so local rank mod K must be its
/// rail, rank mod K, as it is when ranks are placed in blocks per node. A
/// launcher that spreads them round-robin would have ranks of different
/// NICs paired as one rail; a rank that finds itself misplaced takes no
/// part and says why.
pub(super) fn on_its_rail(sched: &Schedule, l: &launch::Launch) -> Result<(), (u8, String)> {
    let rails = sched.rails();
    match l.local_rank {
        Some(local) if sched.rail_of(local) != sched.rail_of(l.rank) => Err((
            exit::USAGE,
            format!(
                "--rails {rails} puts rank {} on rail {}, but it is local rank {local} on its node (rail {}): place the ranks in blocks of {rails} per node (srun --distribution=block, mpirun --map-by ppr:{rails}:node)",
                l.rank,
                sched.rail_of(l.rank),
                sched.rail_of(local)
            ),
        )),
        _ => Ok(()),
    }
}

/// Where a rank's buffers are, for the report: "GPU 1" when both are on
/// it, else each side's ("TX GPU 0 RX GPU 1", "RX GPU 2"); None in system
/// memory.
pub(super) fn gpu_label(g: &fabdiag_options::resolve::GpuRequest) -> Option<String> {
    match (g.tx, g.rx) {
        (None, None) => None,
        (Some(t), Some(r)) if t == r => Some(format!("GPU {t}")),
        (t, r) => Some(
            [("TX", t), ("RX", r)]
                .iter()
                .filter_map(|(side, i)| i.map(|i| format!("{side} GPU {i}")))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

pub(super) fn real(prog: &str, o: &SweepOptions, inv: Invocation, setup: &Setup) -> u8 {
    let l = match launch::resolve(&|k| std::env::var(k).ok(), o.coordinator.as_deref()) {
        Ok(l) => l,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    let who = format!("{prog}: rank {}", l.rank);
    // before anything starts a thread (libfabric's providers, a GPU runtime)
    let stop = watch_stop();
    let mut setup = setup.clone();
    setup.options.launcher = Some(serde_json::json!(l.launcher));
    // (rank 0 judges: only it reads the map, and says once if it cannot)
    if l.rank == 0 {
        setup = setup.with_map(prog, o);
    }
    let setup = &setup;
    let Some(coordinator) = l.coordinator.clone() else {
        return fail(
            &who,
            exit::USAGE,
            "no coordinator: pass --coordinator HOST:PORT (rank 0's host) or set FABDIAG_COORDINATOR",
        );
    };
    let sched = match Schedule::on_rails(l.size, o.rails).and_then(|s| o.fits(l.size).map(|()| s)) {
        Ok(s) => s,
        Err(m) => return fail(&who, exit::USAGE, &m),
    };
    let mut mine = setup.worker_config(o, l.rank, l.size, coordinator.clone());
    // every rank reads its own LLDP neighbours for the map, before it joins
    if o.topology.iter().any(|t| t == crate::fabric_map::LLDP) {
        mine.lldp = Some(crate::fabric_map::lldp_here());
    }
    // the tool's --auth-key or --auth-munge: every rank proves it to rank 0
    // before it joins, and every pair test between ranks proves it too;
    // with MUNGE, only credentials of this job's own user are admitted
    let auth = match sweep_auth(&inv) {
        Ok(a) => a,
        Err((code, m)) => return fail(&who, code, &m),
    };
    mine.auth = auth.clone();
    // a provider call that holds this rank's pair test for good
    let guarded = held::Guarded::default();
    mine.lifeline = Some(guarded.lifeline.clone());
    let prepared = on_its_rail(&sched, &l)
        .and_then(|()| own_env(o, l.local_rank.unwrap_or(0), &mut mine))
        .map(|env| {
            guarded.env(fabdiag_session::Env {
                auth: auth.clone(),
                ..env
            })
        });
    if l.rank != 0 {
        return follow(&who, &mine, prepared, guarded, &stop);
    }
    let listener = match bind_coordinator(&coordinator) {
        Ok(x) => x,
        Err(m) => return fail(&who, exit::RUNTIME, &m),
    };
    let (mut runner, earlier, baseline) = match rank0_ready(o, &inv, setup, l.size, prepared) {
        Ok(x) => x,
        Err((code, m)) => {
            let code = fail(&who, code, &m);
            let wait = Duration::from_secs(o.join_timeout_s);
            coordinator::refuse_all(listener, l.size, wait, &format!("rank 0 stopped: {m}"));
            return code;
        }
    };
    let mut cfg = setup.coord_config(o, l.size, earlier);
    cfg.auth = auth;
    let coord = Coordinator::default();
    let reporting = Arc::new(Reporting {
        prog: prog.to_string(),
        who: who.clone(),
        o: o.clone(),
        setup: setup.clone(),
        baseline,
    });
    // held for good, rank 0's own rank gives its part up and the sweep
    // goes on without it; the guard then reports what the coordinator
    // finishes
    let (c, r) = (coord.clone(), Arc::clone(&reporting));
    if !guarded.start(who.clone(), move || c.collect(&r.prog).map(|led| r.report(led))) {
        tell!("{who}: {}", crate::stuck::UNGUARDED);
    }
    let led = match coord.start(o, cfg, listener, &stop) {
        Ok(()) => lead(prog, mine, &mut runner, &coord),
        Err(m) => Some(Err(m)),
    };
    match led {
        Some(led) => stop.end(prog, reporting.report(led)),
        // the guard took the sweep: it reports it and ends the process
        None => loop {
            std::thread::park();
        },
    }
}

/// A rank other than 0: its pair tests, as rank 0 orders them, until it
/// says Finish; a rank that cannot start tells rank 0 why.
fn follow(
    who: &str,
    mine: &WorkerConfig,
    prepared: Result<fabdiag_session::Env, (u8, String)>,
    guarded: held::Guarded,
    stop: &Stop,
) -> u8 {
    let ready = prepared.and_then(|env| {
        FabricRunner::new(env, 0).map_err(|e| (exit::RUNTIME, format!("cannot listen for pair tests: {e}")))
    });
    let mut runner = match ready {
        Ok(r) => r,
        Err((code, m)) => {
            let code = fail(who, code, &m);
            // rank 0 names why in its report as soon as it hears,
            // instead of "never joined" after the join timeout
            if let Err(e) = worker::tell_unable(mine, &m, &|| stop.why()) {
                tell!("{who}: could not tell rank 0: {e}");
            }
            return code;
        }
    };
    if !guarded.start(who.to_string(), || Some(exit::RUNTIME)) {
        tell!("{who}: {}", crate::stuck::UNGUARDED);
    }
    match worker::work(mine, &mut runner, &|| stop.why()) {
        Ok(_) => stop.end(who, exit::OK),
        Err(SweepError::Stopped(_)) => stop.end(who, exit::RUNTIME),
        Err(e @ SweepError::Refused(_)) => fail(who, exit::USAGE, &e.to_string()),
        Err(e) => fail(who, exit::RUNTIME, &e.to_string()),
    }
}

/// Rank 0 ready to lead: its pair runner, the earlier results it resumes
/// from, and the baseline it compares with.
type Ready = (FabricRunner, Vec<PairRecord>, Option<Baseline>);

/// What can stop rank 0 before the sweep starts, checked in turn, each
/// told to every rank by the caller: its own setup (libfabric, its GPU,
/// room for a connection per rank), whether it can run the test at all (a
/// provider or GPU setting no rank can use would otherwise fail every
/// pair, round after round), its pair-test listener, the baseline and the
/// output folder.
fn rank0_ready(
    o: &SweepOptions,
    inv: &Invocation,
    setup: &Setup,
    size: usize,
    prepared: Result<fabdiag_session::Env, (u8, String)>,
) -> Result<Ready, (u8, String)> {
    prepared
        .and_then(|env| room_for(size).map(|()| env).map_err(|m| (exit::UNAVAILABLE, m)))
        .and_then(|env| {
            fabdiag_session::check(&inv.spec, &env)
                .map(|()| env)
                .map_err(|f| (exit::of(f.kind), f.to_string()))
        })
        .and_then(|env| {
            FabricRunner::new(env, 0).map_err(|e| (exit::RUNTIME, format!("cannot listen for pair tests: {e}")))
        })
        // (the baseline before the output folder: a baseline refused
        // leaves that folder as it was)
        .and_then(|r| Ok((r, read_baseline(o, setup).map_err(|m| (exit::USAGE, m))?)))
        .and_then(|(r, baseline)| Ok((r, prepare_output(o, size, setup)?, baseline)))
}

/// How a sweep's ranks authenticate: the tool's `--auth-key`, or its
/// `--auth-munge` admitting only this job's own user.
fn sweep_auth(inv: &fabdiag_options::Invocation) -> Result<Option<fabdiag_proto::auth::Auth>, (u8, String)> {
    let users = match inv.auth_munge {
        true => Some(vec![crate::auth::own_uid()?.to_string()]),
        false => None,
    };
    crate::auth::from_options(inv.auth_key.as_deref(), inv.auth_munge, users)
}
