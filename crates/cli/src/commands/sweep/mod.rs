//! `fabdiag sweep`: every pair of ranks tests its link once. Resolves the
//! options and who this rank is, then: `--plan` prints the schedule;
//! `--simulate N` runs the coordinator and N stand-in ranks here; else
//! rank 0 runs the coordinator in a thread and every rank (rank 0 too)
//! runs pair tests as ordered. Only rank 0 prints (the report) unless a
//! rank fails on its own; the exit code says what the sweep found.

use super::{load_libfabric, with_hooks};
use crate::output::{print_stdout, write_stdout};
use crate::signals::Stop;
use crate::{exit, VERSION};
use fabdiag_options::sweep::{OutlierReference, SweepOptions};
use fabdiag_options::{Action, Invocation, OptionError, RunMode};
use fabdiag_report::threshold::Threshold;
use fabdiag_report::Tool;
use fabdiag_sweep::analysis::{Better, Reference, Rules};
use fabdiag_sweep::baseline::Baseline;
use fabdiag_sweep::coordinator::{self, CoordConfig, Coordinated, PairRecord};
use fabdiag_sweep::picture::{ChangeCells, Pictures};
use fabdiag_sweep::report::{self, Limits, Metric, SweepDoc};
use fabdiag_sweep::runner::{FabricRunner, SimRunner};
use fabdiag_sweep::schedule::Schedule;
use fabdiag_sweep::worker::{self, PairRunner, WorkerConfig};
use fabdiag_sweep::{html, launch, picture, reread, SweepError};
use std::io::BufWriter;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use watch::Watch;

mod guard;
mod watch;

/// Slow links or nodes were found (and nothing worse).
pub const OUTLIERS: u8 = 5;

/// Test hook: rank 0's own rank joins this many milliseconds late, so a
/// test can stop the sweep before it has (as a loaded node may).
const OWN_JOIN_DELAY_HOOK: &str = "FABDIAG_TEST_OWN_JOIN_DELAY_MS";

fn fail(prog: &str, code: u8, msg: &str) -> u8 {
    tell!("{prog}: {msg}");
    code
}

pub fn run(prog: &str, args: &[String]) -> u8 {
    let opts = match fabdiag_options::sweep::sweep(args) {
        Ok(Action::Run(o)) => o,
        Ok(_) => {
            print_stdout(&fabdiag_options::sweep::sweep_usage(prog));
            return exit::OK;
        }
        Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => return fail(prog, exit::USAGE, &m),
    };
    if let Some(path) = opts.report.as_deref() {
        return remake(prog, &opts, path);
    }
    // (-t/-r lists are checked whole here; each rank takes its own later)
    let inv = match fabdiag_options::parse_for_rank(opts.tool, &opts.tool_args, 0) {
        Ok(Action::Run(inv)) => inv,
        Ok(_) => {
            print_stdout(&fabdiag_options::usage(
                opts.tool,
                &format!("{prog} --tool {}", opts.tool.subcommand()),
            ));
            return exit::OK;
        }
        Err(OptionError::Invalid(m)) => return fail(prog, exit::USAGE, &format!("{}: {m}", opts.tool.subcommand())),
        Err(OptionError::Unavailable(m)) => return fail(prog, exit::UNAVAILABLE, &m),
    };
    // name what was given: `--plan 3` reads as an address otherwise
    let given = match &inv.mode {
        RunMode::Server => None,
        RunMode::Client(addr) => Some(format!("unexpected argument '{addr}'")),
        RunMode::Local => Some("--local".to_string()),
    };
    if let Some(given) = given {
        return fail(
            prog,
            exit::USAGE,
            &format!("{given}: a sweep finds its peers itself (give no address and no --local)"),
        );
    }
    let setup = Setup::new(&opts, &inv);
    if opts.plan {
        return plan(prog, &opts, &setup);
    }
    if let Some(n) = opts.simulate {
        return simulate(prog, &opts, &setup, n);
    }
    real(prog, &opts, inv, &setup)
}

fn reference(r: OutlierReference) -> Reference {
    match r {
        OutlierReference::Median => Reference::Median,
        OutlierReference::Best => Reference::Best,
    }
}

/// `--min-bw` or `--max-lat` as the sweep's limits.
fn limits_of(t: Threshold) -> Limits {
    match t {
        Threshold::MinBw(v) => Limits {
            min_bw_mb_s: Some(v),
            max_lat_us: None,
        },
        // (no sweep runs gpu-loopback-bw; the unit is converted anyway)
        Threshold::MinGbit(v) => Limits {
            min_bw_mb_s: Some(v * 1000.0 / 8.0),
            max_lat_us: None,
        },
        Threshold::MaxLat(v) => Limits {
            min_bw_mb_s: None,
            max_lat_us: Some(v),
        },
    }
}

/// `--report`: a finished sweep's report made again from its document,
/// with the outlier rules, thresholds and baseline given now (a rule not
/// given stays as the sweep had it); nothing runs. Written to `--output`
/// when given (the same folder rewrites its report), printed either way.
fn remake(prog: &str, o: &SweepOptions, path: &str) -> u8 {
    let f = match reread::read(Path::new(path)) {
        Ok(f) => f,
        Err(e) => return fail(prog, exit::USAGE, &e.to_string()),
    };
    let tool = f.options["tool"].as_str().and_then(Tool::from_subcommand);
    let Some(tool) = tool else {
        return fail(
            prog,
            exit::USAGE,
            &format!(
                "--report {}: it does not say which pair test its sweep ran",
                f.file.display()
            ),
        );
    };
    // --min-bw/--max-lat as that pair tool reads them
    let threshold = match fabdiag_options::parse_for_rank(tool, &o.tool_args, 0) {
        Ok(Action::Run(inv)) => inv.threshold,
        Ok(_) => None,
        Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => {
            return fail(prog, exit::USAGE, &format!("{}: {m}", tool.subcommand()))
        }
    };
    let given = o.given_rules();
    let rules = Rules {
        fraction: given.fraction.unwrap_or(f.rules.fraction),
        reference: given.reference.map_or(f.rules.reference, reference),
        z: given.score.unwrap_or(f.rules.z),
        node_fraction: given.node_fraction.unwrap_or(f.rules.node_fraction),
    };
    let mut options = f.options;
    // (an object: it named its tool above)
    if let Some(m) = options.as_object_mut() {
        m.insert("report_from".into(), f.file.display().to_string().into());
        m.insert("report_fabdiag_version".into(), VERSION.into());
    }
    let setup = Setup {
        metric: f.metric,
        rules,
        limits: threshold.map(limits_of).unwrap_or(f.limits),
        pair_timeout: Duration::ZERO,
        test: options["test"].clone(),
        options,
    };
    let baseline = match read_baseline(o, &setup) {
        Ok(b) => b,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    if let Some(dir) = o.output.as_deref() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(prog, exit::RUNTIME, &format!("cannot create {dir}: {e}"));
        }
    }
    let led = Led {
        sweep: f.sweep,
        recorded: true,
    };
    // the versions stay those that measured; the maker's is noted beside
    // report_from
    let measured_by = Versions {
        fabdiag: f.fabdiag_version,
        libfabric: f.libfabric_version,
    };
    conclude(prog, o, &setup, led, measured_by, baseline.as_ref())
}

/// The fabdiag and libfabric that measured a sweep.
struct Versions {
    fabdiag: String,
    libfabric: Option<String>,
}

impl Versions {
    /// This fabdiag, and the libfabric it loaded (None: none was used).
    fn here(libfabric: Option<String>) -> Versions {
        Versions {
            fabdiag: VERSION.into(),
            libfabric,
        }
    }
}

/// What every rank derives from the options alike.
#[derive(Clone)]
struct Setup {
    metric: Metric,
    rules: Rules,
    limits: Limits,
    pair_timeout: Duration,
    options: serde_json::Value,
    test: serde_json::Value,
}

impl Setup {
    fn new(o: &SweepOptions, inv: &Invocation) -> Setup {
        let spec = &inv.spec;
        let metric = Metric::of(spec, o.figure);
        let rules = Rules {
            fraction: o.fraction,
            reference: reference(o.reference),
            z: o.score,
            node_fraction: o.node_fraction,
        };
        let limits = inv.threshold.map(limits_of).unwrap_or_default();
        // a round gets the whole of what its pair test may take on a link
        // that is slow but works (a duration run: its duration per size;
        // an iteration run: its data at 100 MB/s, 1 ms an iteration and
        // 10 µs an operation: TestSpec::longest_run),
        // and a minute for set-up and stragglers. A flat minute made every
        // healthy rank of a sweep that moves more than a minute of data
        // "stopped answering".
        let default_timeout = Duration::from_secs(60).saturating_add(spec.longest_run());
        let pair_timeout = o.pair_timeout_s.map_or(default_timeout, Duration::from_secs);
        let test = spec.to_wire().unwrap_or(serde_json::Value::Null);
        let mut options = serde_json::json!({
            "tool": o.tool.subcommand(),
            "tool_options": o.tool_args,
            "retest": o.retest,
            "rails": o.rails,
            "join_timeout_s": o.join_timeout_s,
            "pair_timeout_s": pair_timeout.as_secs(),
            "test": test,
            // the figure depends on these too, and the test above does not
            // hold them (a baseline of another provider or memory is refused)
            "provider": inv.env.provider,
            "tx_memory": if inv.gpu.tx.is_some() { "GPU" } else { "system" },
            "rx_memory": if inv.gpu.rx.is_some() { "GPU" } else { "system" },
        });
        // what a latency pair is judged by (a report made from the folder
        // alone reads it back)
        if spec.tool.is_latency() {
            options["figure"] = o.figure.name().into();
        }
        Setup {
            metric,
            rules,
            limits,
            pair_timeout,
            options,
            test,
        }
    }

    fn coord_config(&self, o: &SweepOptions, size: usize, earlier: Vec<PairRecord>) -> CoordConfig {
        CoordConfig {
            size,
            rails: o.rails,
            test: self.test.clone(),
            figure: o.figure,
            version: VERSION.into(),
            join_timeout: Duration::from_secs(o.join_timeout_s),
            step_timeout: self.pair_timeout,
            better: self.metric.better,
            rules: self.rules,
            retest: o.retest,
            earlier,
        }
    }

    fn worker_config(&self, o: &SweepOptions, rank: usize, size: usize, coordinator: String) -> WorkerConfig {
        WorkerConfig {
            rank,
            size,
            host: hostname(),
            device: None,
            gpu: None,
            coordinator,
            version: VERSION.into(),
            join_timeout: Duration::from_secs(o.join_timeout_s),
            idle_limit: self.pair_timeout + Duration::from_secs(30),
            step_timeout: self.pair_timeout,
            lifeline: None,
        }
    }
}

fn hostname() -> String {
    std::env::var("FABDIAG_NODE_NAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn plan(prog: &str, o: &SweepOptions, setup: &Setup) -> u8 {
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
        "each round lasts one pair test ({}) plus the per-round overhead (measured: under 0.1 s with 8 ranks here, see the README)",
        setup.metric.test
    );
    print_stdout(&format!(
        "{text}{n} ranks{}: {} rounds of {} pairs ({} pairs in all, client>server); schedule computed in {:.3} s\n{per_pair}\nsuspects re-tested alone afterwards: up to {}\n",
        if o.rails > 1 {
            format!("{}, {} on each", report::rails_note(o.rails), n / o.rails)
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

/// SIGINT/SIGTERM for a sweep, watched before any thread is started: the
/// sweep ends after the round in progress (rank 0) or after one more
/// order (the others), and reports.
fn watch_stop() -> Stop {
    Stop::watch().unwrap_or_else(|e| {
        tell!("fabdiag sweep: warning: cannot watch for SIGINT/SIGTERM ({e}): a stop loses the report");
        Stop::default()
    })
}

/// The earlier results in DIR (for --resume), checked against this sweep.
fn earlier(dir: &Path, size: usize, o: &SweepOptions, test: &serde_json::Value) -> Result<Vec<PairRecord>, SweepError> {
    let bad = |reason: String| SweepError::Resume {
        path: dir.display().to_string(),
        reason,
    };
    let meta = reread::meta(dir, bad)?;
    if meta["size"] != serde_json::json!(size) || meta["test"] != *test {
        return Err(bad(format!(
            "it holds a sweep of {} ranks with other test options; this one has {size} ranks",
            meta["size"]
        )));
    }
    // (a folder from before --rails existed paired every rank)
    let theirs = meta["rails"].as_u64().unwrap_or(1);
    if theirs != o.rails as u64 {
        return Err(bad(format!(
            "it holds a sweep on {theirs} rail(s); this one is on {} (--rails)",
            o.rails
        )));
    }
    // the same pairs judged by two figures would be one report of both
    let theirs = Metric::figure_in(&meta["options"]);
    if o.tool.is_latency() && theirs != o.figure {
        return Err(bad(format!(
            "its pairs were judged by their {}; this sweep's by their {} (--figure)",
            theirs.name(),
            o.figure.name()
        )));
    }
    reread::records(dir, size, bad)
}

fn prepare_output(o: &SweepOptions, size: usize, setup: &Setup) -> Result<Vec<PairRecord>, String> {
    let Some(dir) = o.output.as_deref().map(PathBuf::from) else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if o.resume {
        return earlier(&dir, size, o, &setup.test).map_err(|e| e.to_string());
    }
    if dir.join("pairs.jsonl").exists() {
        std::fs::remove_file(dir.join("pairs.jsonl")).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    // (the options too: a report can be made from this folder alone if
    // rank 0 ends before it writes one)
    let meta = serde_json::json!({
        "size": size,
        "rails": o.rails,
        "test": setup.test,
        "options": setup.options,
        "fabdiag_version": VERSION,
    });
    std::fs::write(dir.join("meta.json"), meta.to_string())
        .map_err(|e| format!("cannot write {}: {e}", dir.join("meta.json").display()))?;
    Ok(Vec::new())
}

/// `--baseline`'s sweep, read and checked against this sweep's test before
/// anything runs (rank 0 only: the file need not be on every node).
fn read_baseline(o: &SweepOptions, setup: &Setup) -> Result<Option<Baseline>, String> {
    let Some(path) = o.baseline.as_deref() else {
        return Ok(None);
    };
    let b = Baseline::read(Path::new(path)).map_err(|e| e.to_string())?;
    b.check(&setup.metric, &setup.options).map_err(|e| e.to_string())?;
    Ok(Some(b))
}

/// The report: written to --output, printed, and its exit code. The JSON
/// is streamed to the file and to stdout, never held as one string: at
/// 10,000 ranks it is gigabytes.
fn conclude(
    prog: &str,
    o: &SweepOptions,
    setup: &Setup,
    led: Led,
    measured_by: Versions,
    baseline: Option<&Baseline>,
) -> u8 {
    let Led { sweep, recorded } = led;
    let doc = report::build(report::Inputs {
        sweep,
        metric: setup.metric.clone(),
        rules: setup.rules,
        limits: setup.limits,
        options: setup.options.clone(),
        fabdiag_version: &measured_by.fabdiag,
        libfabric_version: measured_by.libfabric,
        baseline: baseline.map(|b| (b, o.baseline_fraction)),
    });
    let text = report::text(&doc);
    let mut code = verdict_code(&doc);
    // results that did not reach --output are a failure of the run, as a
    // failed pair is (it outranks a threshold or an outlier)
    if !recorded {
        code = exit::RUNTIME;
    }
    let dir = o.output.as_deref().map(Path::new);
    let write = |dir: &Path, name: &str, body: &[u8]| {
        std::fs::write(dir.join(name), body).map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    let mut draw = false;
    if let Some(dir) = dir {
        let path = dir.join("sweep.json");
        let written = std::fs::File::create(&path)
            .and_then(|f| json_to(BufWriter::new(f), &doc))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
            .and_then(|()| write(dir, "summary.txt", text.as_bytes()));
        match written {
            Ok(()) => draw = true,
            Err(m) => {
                tell!("{prog}: {m}");
                code = exit::RUNTIME;
            }
        }
    }
    if o.json {
        write_stdout(|o| json_to(BufWriter::new(o), &doc));
    } else {
        print_stdout(&text);
    }
    // the pictures come last, so a failure to draw loses no result
    if let Some(dir) = dir.filter(|_| draw) {
        // (the change's cells are gathered here, where the baseline is:
        // a few MB at most, where the baseline itself is gigabytes)
        let change = baseline.map(|b| picture::change_cells(&doc, b));
        let drawn = report_pages(doc, change).and_then(|(page, pictures)| {
            write(dir, "report.html", page.as_bytes())?;
            write(dir, "heatmap.png", &pictures.heatmap)?;
            match &pictures.change {
                Some(png) => write(dir, "change.png", png),
                // a report made again in place without --baseline: the
                // earlier comparison's picture is no longer this report's
                None => match std::fs::remove_file(dir.join("change.png")) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        Err(format!("cannot remove {}: {e}", dir.join("change.png").display()))
                    }
                    _ => Ok(()),
                },
            }
        });
        if let Err(m) = drawn {
            tell!("{prog}: {m}");
            code = exit::RUNTIME;
        }
    }
    code
}

/// `doc` as pretty JSON and a newline into `w`.
fn json_to(mut w: impl std::io::Write, doc: &SweepDoc) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut w, doc)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The HTML page and the pictures, drawn in a thread with a deadline: a
/// drawing library that stalls must not keep the sweep from ending. The
/// finished document moves into that thread (it is not needed after).
fn report_pages(doc: SweepDoc, change: Option<ChangeCells>) -> Result<(String, Pictures), String> {
    const DRAW_LIMIT: Duration = Duration::from_secs(120);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("fabdiag-report".into())
        .spawn(move || {
            let drawn = picture::draw(&doc, change.as_ref()).map(|p| (html::page(&doc, &p), p));
            let _ = tx.send(drawn.map_err(|e| e.to_string()));
        })
        .map_err(|e| format!("cannot start drawing the report: {e}"))?;
    match rx.recv_timeout(DRAW_LIMIT) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "drawing the report took over {} s; sweep.json and summary.txt hold the results",
            DRAW_LIMIT.as_secs()
        )),
    }
}

fn verdict_code(doc: &SweepDoc) -> u8 {
    let v = &doc.verdict;
    if v.failed_pairs > 0 || v.untested_pairs > 0 || !v.lost_nodes.is_empty() {
        exit::RUNTIME
    } else if !v.threshold_pairs.is_empty() || !v.threshold_nodes.is_empty() {
        exit::THRESHOLD
    } else if v.slow_links > 0
        || v.slow_nodes > 0
        || v.regressed_links > 0
        || v.regressed_nodes > 0
        || v.fabric_regressed
    {
        OUTLIERS
    } else {
        exit::OK
    }
}

/// Makes room for `connections` open sockets: rank 0 holds one per rank
/// (a simulation also every stand-in rank's end). A batch job often starts
/// with a soft limit of 1,024 open files, which a sweep of a thousand
/// nodes would exceed mid-join; the soft limit is raised as far as needed
/// within the hard one, or the sweep is refused before it starts.
fn room_for(connections: usize) -> Result<(), String> {
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

fn bind_coordinator(addr: &str) -> Result<TcpListener, String> {
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

/// What rank 0 led: the sweep, and whether every result reached
/// `--output` (true without one).
struct Led {
    sweep: Coordinated,
    recorded: bool,
}

/// Rank 0's coordinator thread, taken by whichever thread collects its
/// sweep: rank 0's own, once its pair tests end, or its guard's, when a
/// provider call holds rank 0's own thread for good.
#[derive(Clone, Default)]
struct Coordinator(Arc<Mutex<Option<CoordThread>>>);

type CoordThread = JoinHandle<(Result<Coordinated, SweepError>, Option<String>)>;

impl Coordinator {
    /// The sweep it led, once it has; None when another thread took it.
    fn collect(&self, prog: &str) -> Option<Result<Led, String>> {
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
    fn start(&self, o: &SweepOptions, cfg: CoordConfig, listener: TcpListener, stop: &Stop) -> Result<(), String> {
        let sched = Schedule::on_rails(cfg.size, cfg.rails).ok();
        let (rounds, pairs) = sched.map_or((0, 0), |s| (s.rounds(), s.total_pairs()));
        let mut watch = Watch::new(o.output.as_deref().map(Path::new), rounds, pairs, stop.clone())?;
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
fn lead(
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

/// This rank's own pair-test settings: libfabric loaded, and its NIC
/// (`-d`) and GPU (`-t/-r`) from the tool options, a list giving local
/// rank i its i-th (`parse_for_rank`; run() parsed the same line for
/// local rank 0, before the launcher said which this is), written into
/// `mine` for its join; or the exit code and why not.
fn own_env(o: &SweepOptions, local_rank: usize, mine: &mut WorkerConfig) -> Result<fabdiag_session::Env, (u8, String)> {
    load_libfabric().map_err(|e| (exit::UNAVAILABLE, e.to_string()))?;
    let inv = match fabdiag_options::parse_for_rank(o.tool, &o.tool_args, local_rank) {
        Ok(Action::Run(inv)) => inv,
        // (run() has answered -h and refused a bad line already)
        Ok(_) => return Err((exit::USAGE, "-h or -V among a sweep's tool options".into())),
        Err(OptionError::Invalid(m) | OptionError::Unavailable(m)) => return Err((exit::USAGE, m)),
    };
    mine.gpu = gpu_label(&inv.gpu);
    mine.device = inv.env.device.clone();
    let gpu = super::gpu::resolve(&inv.gpu).map_err(|m| (exit::UNAVAILABLE, m))?;
    Ok(with_hooks(fabdiag_session::Env { gpu, ..inv.env }))
}

/// On rails, a rank must sit where the schedule assumes: its local rank
/// picks its NIC (`-d`'s list, in turn), so local rank mod K must be its
/// rail, rank mod K, as it is when ranks are placed in blocks per node. A
/// launcher that spreads them round-robin would have ranks of different
/// NICs paired as one rail; a rank that finds itself misplaced takes no
/// part and says why.
fn on_its_rail(sched: &Schedule, l: &launch::Launch) -> Result<(), (u8, String)> {
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
fn gpu_label(g: &fabdiag_options::resolve::GpuRequest) -> Option<String> {
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

fn real(prog: &str, o: &SweepOptions, inv: Invocation, setup: &Setup) -> u8 {
    let l = match launch::resolve(&|k| std::env::var(k).ok(), o.coordinator.as_deref()) {
        Ok(l) => l,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    let who = format!("{prog}: rank {}", l.rank);
    // before anything starts a thread (libfabric's providers, a GPU runtime)
    let stop = watch_stop();
    let mut setup = setup.clone();
    setup.options["launcher"] = serde_json::json!(l.launcher);
    let setup = &setup;
    let Some(coordinator) = l.coordinator.clone() else {
        return fail(
            &who,
            exit::USAGE,
            "no coordinator: pass --coordinator HOST:PORT (rank 0's host) or set FABDIAG_COORDINATOR",
        );
    };
    let sched = match Schedule::on_rails(l.size, o.rails) {
        Ok(s) => s,
        Err(m) => return fail(&who, exit::USAGE, &m),
    };
    let mut mine = setup.worker_config(o, l.rank, l.size, coordinator.clone());
    // a provider call that holds this rank's pair test for good
    let guarded = guard::Guarded::default();
    mine.lifeline = Some(guarded.lifeline.clone());
    let prepared = on_its_rail(&sched, &l)
        .and_then(|()| own_env(o, l.local_rank.unwrap_or(0), &mut mine))
        .map(|env| guarded.env(env));
    if l.rank != 0 {
        let ready = prepared.and_then(|env| {
            FabricRunner::new(env, 0).map_err(|e| (exit::RUNTIME, format!("cannot listen for pair tests: {e}")))
        });
        let mut runner = match ready {
            Ok(r) => r,
            Err((code, m)) => {
                let code = fail(&who, code, &m);
                // rank 0 names why in its report as soon as it hears,
                // instead of "never joined" after the join timeout
                if let Err(e) = worker::tell_unable(&mine, &m, &|| stop.why()) {
                    tell!("{who}: could not tell rank 0: {e}");
                }
                return code;
            }
        };
        if !guarded.start(who.clone(), || Some(exit::RUNTIME)) {
            tell!("{who}: {}", crate::stuck::UNGUARDED);
        }
        return match worker::work(&mine, &mut runner, &|| stop.why()) {
            Ok(_) => stop.end(&who, exit::OK),
            Err(SweepError::Stopped(_)) => stop.end(&who, exit::RUNTIME),
            Err(e @ SweepError::Refused(_)) => fail(&who, exit::USAGE, &e.to_string()),
            Err(e) => fail(&who, exit::RUNTIME, &e.to_string()),
        };
    }
    let listener = match bind_coordinator(&coordinator) {
        Ok(x) => x,
        Err(m) => return fail(&who, exit::RUNTIME, &m),
    };
    // what can stop rank 0 before the sweep starts is told to every rank:
    // its own setup (libfabric, its GPU, room for a connection per rank),
    // whether it can run the test at all (a provider or GPU setting no
    // rank can use would otherwise fail every pair, round after round),
    // its listener and the output folder
    let ready = prepared
        .and_then(|env| room_for(l.size).map(|()| env).map_err(|m| (exit::UNAVAILABLE, m)))
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
        .and_then(|(r, baseline)| {
            Ok((
                r,
                prepare_output(o, l.size, setup).map_err(|m| (exit::RUNTIME, m))?,
                baseline,
            ))
        });
    let (mut runner, earlier, baseline) = match ready {
        Ok(x) => x,
        Err((code, m)) => {
            let code = fail(&who, code, &m);
            let wait = Duration::from_secs(o.join_timeout_s);
            coordinator::refuse_all(listener, l.size, wait, &format!("rank 0 stopped: {m}"));
            return code;
        }
    };
    let cfg = setup.coord_config(o, l.size, earlier);
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

/// What rank 0 reports the sweep it led with: its own thread, or its
/// guard's when a provider call holds that thread.
struct Reporting {
    prog: String,
    who: String,
    o: SweepOptions,
    setup: Setup,
    baseline: Option<Baseline>,
}

impl Reporting {
    /// The report of `led`, or why there is none; the exit code.
    fn report(&self, led: Result<Led, String>) -> u8 {
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

/// N stand-in ranks in threads, speaking the real protocol over loopback.
fn simulate(prog: &str, o: &SweepOptions, setup: &Setup, n: usize) -> u8 {
    let sched = match Schedule::on_rails(n, o.rails) {
        Ok(s) => s,
        Err(m) => return fail(prog, exit::USAGE, &m),
    };
    // a slow link the schedule never pairs would show nothing
    if let Some((a, b)) = o.sim_slow_links.iter().find(|(a, b)| !sched.has_pair(*a, *b)) {
        return fail(
            prog,
            exit::USAGE,
            &format!(
                "--sim-slow names the pair {a}-{b}, which --rails {} never pairs",
                o.rails
            ),
        );
    }
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
        Err(m) => return fail(prog, exit::RUNTIME, &m),
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
        // a slow pair moves a quarter of the data, or takes four times as long
        slow_factor: if setup.metric.better == Better::Higher {
            0.25
        } else {
            4.0
        },
        size: None,
    };
    let mut ranks = Vec::new();
    // set once the coordinator has ended: a stand-in not yet joined (the
    // sweep stopped during the join) then stops retrying
    let over = Arc::new(AtomicBool::new(false));
    for rank in 1..n {
        let cfg = setup.worker_config(o, rank, n, addr.clone());
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
    let mine = setup.worker_config(o, 0, n, addr);
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
