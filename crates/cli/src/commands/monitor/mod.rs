//! `fabdiag monitor`: reads the peers, serves `/metrics` over HTTP on a
//! thread of its own, and runs the probes the schedule says as child
//! processes of this same program (`fabdiag send-lat ... --json`), each
//! killed past `--timeout`, recording what each found and logging every
//! change of a peer's state. The schedule, the record and the page are
//! fabdiag-monitor's; this runs processes, keeps time, serves and logs.
//! A probe in a child process is a test exactly as a user would run it,
//! and a provider that crashes or hangs takes the probe with it, never
//! the monitor.

mod http;

use crate::exit;
use crate::signals::{lock, Stop};
use crate::streams::print_stdout;
use fabdiag_monitor::probe::{self, ProbeArgs};
use fabdiag_monitor::{peers, Ended, Next, Outcome, Peer, Plan, ProbeKind, Schedule, Watch};
use fabdiag_options::monitor::{MonitorOptions, PeerSource};
use fabdiag_options::Action;
use fabdiag_timebox::{self as bounded, Finished, Running};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How long `sinfo` may take to list a partition.
const SINFO_LIMIT: Duration = Duration::from_secs(30);
/// How often running probes are looked at.
const POLL: Duration = Duration::from_millis(20);
/// The longest sleep with nothing running, so a stop is seen soon.
const IDLE: Duration = Duration::from_millis(250);

pub fn run(prog: &str, args: &[String]) -> u8 {
    let o = match fabdiag_options::monitor::parse(args) {
        Ok(Action::Run(o)) => o,
        Ok(Action::Help) => {
            print_stdout(&fabdiag_options::monitor::usage(prog));
            return exit::OK;
        }
        Ok(Action::Version) => {
            print_stdout(&format!("{prog} version: {}\n", crate::version::VERSION));
            return exit::OK;
        }
        Err(fabdiag_options::OptionError::Invalid(m) | fabdiag_options::OptionError::Unavailable(m)) => {
            tell!("{prog}: {m}");
            return exit::USAGE;
        }
    };
    match ready(&o) {
        Ok(r) => watch(prog, &o, r),
        Err((code, m)) => {
            tell!("{prog}: {m}");
            code
        }
    }
}

/// What the monitor starts with.
struct Ready {
    peers: Vec<Peer>,
    /// This program, which runs the probes.
    exe: std::path::PathBuf,
    stop: Stop,
    server: tiny_http::Server,
}

/// Everything checked before the first probe: the peers, the key file,
/// this program's path, the signals and the listening socket.
fn ready(o: &MonitorOptions) -> Result<Ready, (u8, String)> {
    let peers = load_peers(o).map_err(|m| (exit::USAGE, m))?;
    crate::auth::from_options(o.auth_key.as_deref().map(std::path::Path::new), o.auth_munge, None)?;
    let exe =
        std::env::current_exe().map_err(|e| (exit::RUNTIME, format!("cannot find this program to run probes: {e}")))?;
    // before any thread starts (tiny_http's), so they all leave the
    // signals to the watcher
    let stop = Stop::watch().map_err(|e| (exit::RUNTIME, format!("cannot wait for signals: {e}")))?;
    let server = tiny_http::Server::http(o.listen)
        .map_err(|e| (exit::RUNTIME, format!("cannot listen on {}: {e}", o.listen)))?;
    Ok(Ready {
        peers,
        exe,
        stop,
        server,
    })
}

fn load_peers(o: &MonitorOptions) -> Result<Vec<Peer>, String> {
    match &o.peers {
        PeerSource::File(f) => {
            let text = fabdiag_files::read::text(std::path::Path::new(f), fabdiag_files::read::CONFIG_CAP)
                .map_err(|e| format!("cannot read the peers file {f}: {e}"))?;
            peers::parse_file(&text, o.port, f).map_err(|e| format!("{f}: {e}"))
        }
        PeerSource::Partition(p) => {
            let args: Vec<String> = ["-h", "-N", "-p", p, "-o", "%N %o"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let text = bounded::output("sinfo", &args, SINFO_LIMIT)?;
            let own = super::health::node_name(None);
            peers::from_sinfo(&text, &own, o.port, p).map_err(|e| format!("sinfo: {e}"))
        }
    }
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The line said at start: what will be probed, how often, within what.
fn plan_line(o: &MonitorOptions, peers: usize) -> String {
    let from = match &o.peers {
        PeerSource::File(f) => format!("from {f}"),
        PeerSource::Partition(p) => format!("of partition {p}"),
    };
    let bw = match o.bw_interval_s {
        Some(s) => format!("bandwidth ({} B) every {s} s", o.bw_size),
        None => "no bandwidth probes".into(),
    };
    format!(
        "watching {} {from}: latency ({} B) every {} s and {bw} per peer, all within {} % of link time; metrics at http://{}/metrics",
        crate::counted::counted(peers as u64, "peer", "peers"),
        o.lat_size,
        o.interval_s,
        o.budget * 100.0,
        o.listen
    )
}

/// A probe running.
struct Probe {
    peer: usize,
    kind: ProbeKind,
    child: Running,
}

/// Probes until a stop signal, serving the record meanwhile.
fn watch(prog: &str, o: &MonitorOptions, r: Ready) -> u8 {
    let Ready {
        peers,
        exe,
        stop,
        server,
    } = r;
    let stop = &stop;
    tell!("{prog}: {}", plan_line(o, peers.len()));
    let plan = Plan {
        peers: peers.len(),
        interval_s: o.interval_s,
        bw_interval_s: o.bw_interval_s,
        budget: o.budget,
        parallel: o.parallel,
    };
    let probe_args = ProbeArgs {
        lat_size: o.lat_size,
        bw_size: o.bw_size,
        provider: o.provider.clone(),
        auth_key: o.auth_key.clone(),
        auth_munge: o.auth_munge,
    };
    let record = Arc::new(Mutex::new(Watch::new(peers, o.window, o.budget)));
    let http = {
        let (record, stop, prog) = (Arc::clone(&record), stop.clone(), prog.to_string());
        std::thread::Builder::new()
            .name("fabdiag-monitor-http".into())
            .spawn(move || http::serve(&prog, &server, &record, &stop))
    };
    if let Err(e) = http {
        tell!("{prog}: cannot start serving /metrics: {e}");
        return exit::RUNTIME;
    }
    let t0 = Instant::now();
    let clock = || t0.elapsed().as_secs_f64();
    let mut schedule = Schedule::new(plan, clock());
    let mut running: Vec<Probe> = Vec::new();
    let limit = Duration::from_secs(o.timeout_s);
    while stop.signal().is_none() {
        let mut i = 0;
        while i < running.len() {
            match running[i].child.poll(limit) {
                Some(done) => {
                    let p = running.swap_remove(i);
                    let ended = ended(done, o.timeout_s);
                    settle(
                        prog,
                        &record,
                        &mut schedule,
                        p.peer,
                        p.kind,
                        clock(),
                        &probe::outcome(p.kind, &ended),
                    );
                }
                None => i += 1,
            }
        }
        let wait = loop {
            match schedule.next(clock()) {
                Next::Start(peer, kind) => {
                    let target = lock(&record).peers()[peer].clone();
                    let args = probe::command(kind, &target, &probe_args);
                    match Running::spawn(Command::new(&exe).args(&args)) {
                        Ok(child) => running.push(Probe { peer, kind, child }),
                        Err(e) => {
                            let o = Outcome::Down(probe::Reason::Error, format!("cannot start the probe: {e}"));
                            settle(prog, &record, &mut schedule, peer, kind, clock(), &o);
                        }
                    }
                }
                Next::Wait(w) => break w,
            }
        };
        let idle = if running.is_empty() { IDLE } else { POLL };
        std::thread::sleep(Duration::from_secs_f64(wait.clamp(0.0, idle.as_secs_f64())));
    }
    for p in &mut running {
        p.child.stop();
    }
    let why = stop.why().unwrap_or_default();
    let (up, down, unknown) = lock(&record).tally();
    let up = crate::counted::counted(up as u64, "peer", "peers");
    tell!("{prog}: stopped by {why}: {up} up, {down} down, {unknown} not yet probed");
    exit::OK
}

/// How a probe's process ended, for `probe::outcome`.
fn ended(done: Finished, timeout_s: u64) -> Ended {
    Ended {
        exit_code: done.status.and_then(|s| s.code()),
        signal: done.status.and_then(|s| s.signal()),
        timed_out_after_s: done.status.is_none().then_some(timeout_s),
        stdout: done.stdout,
        stderr: done.stderr,
    }
}

/// Records a probe's outcome, tells the schedule, and logs a change.
fn settle(
    prog: &str,
    record: &Mutex<Watch>,
    schedule: &mut Schedule,
    peer: usize,
    kind: ProbeKind,
    now: f64,
    outcome: &Outcome,
) {
    let (link_s, retry) = match outcome {
        Outcome::Up(f) => (f.link_s(), None),
        Outcome::Down(..) => (0.0, None),
        Outcome::Busy(_) => (0.0, Some(probe::BUSY_RETRY_S)),
        Outcome::RateLimited(_, after) => (0.0, Some(*after)),
    };
    schedule.finished(peer, kind, now, link_s, retry);
    if let Some(change) = lock(record).record(peer, kind, now_unix(), outcome) {
        let at = humantime::format_rfc3339_seconds(SystemTime::now());
        tell!("{at} {prog}: {change}");
    }
}
