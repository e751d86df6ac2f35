//! `--simulate N`: the coordinator and N stand-in ranks in threads of
//! this process, speaking the real protocol over loopback, with the slow
//! nodes and links asked for; the report as a real sweep's.

use super::conclude::conclude;
use super::files::{prepare_output, read_baseline};
use super::rank0::{lead, room_for, Coordinator};
use super::real::watch_stop;
use super::setup::{fail, Setup, Versions};
use crate::exit;
use fabdiag_options::sweep::SweepOptions;
use fabdiag_sweep::runner::{SimRunner, SlowWays};
use fabdiag_sweep::worker;
use fabdiag_sweep::SweepError;
use fabdiag_sweep_judge::analysis::Better;
use fabdiag_sweep_plan::Schedule;
use fabdiag_topology::sim::SlowPaths;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// N stand-in ranks in threads, speaking the real protocol over loopback.
pub(super) fn simulate(prog: &str, o: &SweepOptions, setup: &Setup, n: usize) -> u8 {
    let (setup, ways, hosts) = match ready(prog, o, setup, n) {
        Ok(x) => x,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    let setup = &setup;
    let stop = watch_stop();
    // both ends of every rank's connection are in this process
    if let Err(m) = room_for(2 * n) {
        return fail(prog, exit::UNAVAILABLE, &m);
    }
    let baseline = match read_baseline(o, setup) {
        Ok(b) => b,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    let earlier = match prepare_output(o, n, setup) {
        Ok(e) => e,
        Err((code, m)) => return fail(prog, code, &m),
    };
    let listener = match fabdiag_proto::listen_on(([127, 0, 0, 1], 0).into()) {
        Ok(l) => l,
        Err(e) => return fail(prog, exit::RUNTIME, &format!("cannot listen: {e}")),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a.to_string(),
        Err(e) => return fail(prog, exit::RUNTIME, &e.to_string()),
    };
    let sim = SimRunner {
        pause: Duration::from_millis(o.sim_pair_ms),
        slow_nodes: o.sim_slow_nodes.clone(),
        slow_links: o.sim_slow_links.clone(),
        slow_ways: ways,
        // a slow pair moves a quarter of the data, or takes four times as long
        slow_factor: if setup.metric.better == Better::Higher {
            0.25
        } else {
            4.0
        },
        size: None,
        victim_lat: false,
    };
    let mut ranks = Vec::new();
    // set once the coordinator has ended: a stand-in not yet joined (the
    // sweep stopped during the join) then stops retrying
    let over = Arc::new(AtomicBool::new(false));
    for rank in 1..n {
        let mut cfg = setup.worker_config(o, rank, n, addr.clone());
        if let Some(h) = hosts.get(rank) {
            cfg.host.clone_from(h);
        }
        let mut runner = sim.clone();
        let over = over.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("sim-rank-{rank}"))
            .stack_size(256 * 1024)
            .spawn(move || {
                let ended = || over.load(Ordering::SeqCst).then(|| "the coordinator ended".to_string());
                match worker::work(&cfg, &mut runner, &ended) {
                    Ok(_) | Err(SweepError::Stopped(_)) => Ok(()),
                    Err(e) => Err(e.to_string()),
                }
            });
        match spawned {
            Ok(h) => ranks.push(h),
            Err(e) => return fail(prog, exit::RUNTIME, &format!("cannot start simulated rank {rank}: {e}")),
        }
    }
    let mut mine = setup.worker_config(o, 0, n, addr);
    if let Some(h) = hosts.first() {
        mine.host.clone_from(h);
    }
    let mut runner = sim;
    let coord = Coordinator::default();
    let outcome = coord
        .start(o, setup.coord_config(o, n, earlier), listener, &stop)
        // (no guard here takes the sweep: stand-in ranks make no provider call)
        .and_then(|()| {
            lead(prog, mine, &mut runner, &coord)
                .unwrap_or_else(|| Err("the coordinator was taken by another thread".into()))
        });
    over.store(true, Ordering::SeqCst);
    for (i, h) in ranks.into_iter().enumerate() {
        if let Ok(Err(e)) = h.join() {
            tell!("{prog}: simulated rank {}: {e}", i + 1);
        }
    }
    match outcome {
        Ok(c) => {
            let code = conclude(prog, o, setup, c, Versions::here(None), baseline.as_ref());
            stop.end(prog, code)
        }
        Err(m) => fail(prog, exit::RUNTIME, &m),
    }
}

/// The setup with its map read, the slow ways and each rank's host, and
/// the schedule checked; or why not, in a line.
fn ready(
    prog: &str,
    o: &SweepOptions,
    setup: &Setup,
    n: usize,
) -> Result<(Setup, Option<SlowWays>, Vec<String>), String> {
    // a simulation of the map's elements has no use without the map
    let mut setup = setup.clone();
    if o.sim_slow_elements.is_empty() {
        setup = setup.with_map(prog, o);
    } else {
        setup.read_map(o)?;
    }
    let (ways, hosts) = map_ways(o, &setup, n)?;
    let sched = Schedule::on_rails(n, o.rails).and_then(|s| o.fits(n).map(|()| s))?;
    // a slow link the schedule never pairs would show nothing
    if let Some((a, b)) = o.sim_slow_links.iter().find(|(a, b)| !sched.has_pair(*a, *b)) {
        return Err(format!(
            "--sim-slow names the pair {a}-{b}, which --rails {} never pairs",
            o.rails
        ));
    }
    Ok((setup, ways, hosts))
}

/// With `--topology`: rank r on the map's host r, and the elements
/// `--sim-slow` names made slow on every way through them. The slow ways
/// (None without elements) and each rank's host (none without a map).
fn map_ways(o: &SweepOptions, setup: &Setup, n: usize) -> Result<(Option<SlowWays>, Vec<String>), String> {
    let Some(plan) = setup.map.as_deref() else {
        return match o.sim_slow_elements.first() {
            Some(e) => Err(format!("--sim-slow {e}: no usable map to find it on")),
            None => Ok((None, Vec::new())),
        };
    };
    if plan.lldp {
        return Err("--topology lldp: simulated ranks read no LLDP (give the map's files)".into());
    }
    let source = plan.source();
    let (fabric, _) = crate::fabric_map::made("--topology", plan, &[])?;
    if fabric.hosts.len() < n {
        return Err(format!(
            "--simulate {n}: {source} has {} hosts, and simulated rank r runs on the map's host r",
            fabric.hosts.len()
        ));
    }
    let paths = SlowPaths::new(fabric, &o.sim_slow_elements).map_err(|e| format!("--sim-slow {e} ({source})"))?;
    let hosts = paths.hosts().take(n).map(str::to_string).collect();
    let ways = (!o.sim_slow_elements.is_empty()).then(|| SlowWays(Arc::new(move |a, b, flow| paths.slow(a, b, flow))));
    Ok((ways, hosts))
}
