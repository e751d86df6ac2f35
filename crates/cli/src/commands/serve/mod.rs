//! `fabdiag serve`: a long-lived server for every tool, client after
//! client, like `iperf3 -s`. Each accepted connection is handed to a fresh
//! worker process (`worker.rs`), so a client that dies, stalls or lies, or
//! a provider that crashes, ends only its own test, and nothing the
//! provider leaks survives the test. The worker is started as a spare
//! while no test runs, so its libfabric start-up is done before its client
//! arrives; none is started during a test, whose CPUs it would take. One
//! test runs at a time: a client that arrives meanwhile is told at once
//! that the server is busy, unless the test is over and only its worker's
//! exit is left (freeing a GPU context or much memory takes a moment):
//! that client is served next, so clients run back to back by a script
//! are not turned away. Every connection ends in one log line (text)
//! or one JSON line (`--json`); SIGINT and SIGTERM stop the server
//! cleanly.

pub mod handoff;
pub mod lobby;
pub mod rates;
pub mod worker;

use super::load_libfabric;
use crate::exit;
use crate::output::early_failure;
use crate::signals::Stop;
use crate::streams::print_stdout;
use crate::version::VERSION;
use fabdiag_options::serve::ServeOptions;
use fabdiag_options::Action;
use fabdiag_proto::{write_frame, ErrorClass, Listener, Message, Phase};
use fabdiag_session::GpuUse;
use lobby::{Left, Lobby};
use rates::Rates;
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Read};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant, SystemTime};
use worker::{Line, COMMAND};

/// How often the server looks at its port, its worker and its signals.
const TICK: Duration = Duration::from_millis(20);
/// How long a worker may linger once its measurement is over (closing its
/// endpoint, freeing its buffers and a GPU context, exiting).
const LINGER: Duration = Duration::from_secs(5);
/// How long past --max-test-seconds a test may go on before the server
/// ends it, at most: the limit itself where it is shorter.
const TEST_GRACE: Duration = Duration::from_secs(10);

/// The next test's worker, started before its client: warming up, then
/// waiting for the connection on `channel`.
struct Spare {
    child: Child,
    channel: UnixStream,
    lines: Receiver<Line>,
}

impl Spare {
    fn discard(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Hands `stream` over; the test it becomes. A spare that cannot take
    /// it (it died while it waited) is reaped.
    fn hand(self, stream: &TcpStream, peer: SocketAddr) -> std::io::Result<Running> {
        if let Err(e) = handoff::give(&self.channel, stream) {
            self.discard();
            return Err(e);
        }
        Ok(Running {
            child: self.child,
            peer,
            lines: self.lines,
            tool: None,
            phase: Phase::Hello.to_string(),
            done: None,
            over_at: None,
            started: Instant::now(),
            ended_for: None,
        })
    }
}

/// The test in progress.
struct Running {
    child: Child,
    peer: SocketAddr,
    lines: Receiver<Line>,
    tool: Option<String>,
    phase: String,
    done: Option<(u8, String, Value)>,
    /// When its measurement ended (its worker reached teardown, or
    /// reported the test done): from then a new client waits for the
    /// worker to exit rather than being turned away, and the worker has
    /// LINGER to do so.
    over_at: Option<Instant>,
    /// When its client was handed to it.
    started: Instant,
    /// Why the server ended it (it ran past --max-test-seconds).
    ended_for: Option<String>,
}

impl Running {
    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.take(line);
        }
    }

    fn take(&mut self, line: Line) {
        match line {
            Line::Accepted { tool } => self.tool = Some(tool),
            Line::Phase { phase } => {
                if phase == Phase::Teardown.to_string() {
                    self.over_at.get_or_insert_with(Instant::now);
                }
                self.phase = phase;
            }
            Line::Done {
                code,
                summary,
                document,
            } => {
                self.done = Some((code, summary, document));
                self.over_at.get_or_insert_with(Instant::now);
            }
        }
    }
}

struct Server {
    prog: String,
    json: bool,
    /// Connections answered: tests, rejections and the busy ones.
    served: u64,
    /// `--max-tests-per-minute`'s count per client.
    rates: Option<Rates>,
    /// `--max-test-seconds`: a test still running this long after it
    /// began (its limit and a grace for its last size to end) is ended.
    max_test: Option<(u64, Duration)>,
    /// This program as it was at start, which runs the workers: read once,
    /// because once the file is replaced (a package upgrade) the running
    /// program's own path reads "... (deleted)", and no worker could start.
    exe: PathBuf,
}

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

impl Server {
    /// One connection's line: stdout for a test that ran, stderr (and the
    /// JSON line, with --json) for anything else.
    fn log(&self, peer: SocketAddr, tool: Option<&str>, outcome: Result<&str, &str>, document: Option<Value>) {
        let t = now();
        let who = format!("{peer} {}", tool.unwrap_or("-"));
        match outcome {
            Ok(summary) if !self.json => print_stdout(&format!("{t} {who}: {summary}\n")),
            Ok(_) => {}
            Err(error) => tell!("{}: {t} {who}: {error}", self.prog),
        }
        if self.json {
            let mut line = Map::new();
            line.insert("time".into(), json!(t));
            line.insert("peer".into(), json!(peer.to_string()));
            let doc = document.unwrap_or_else(|| {
                json!({
                    "schema_version": fabdiag_report::json::SCHEMA_VERSION,
                    "fabdiag_version": VERSION,
                    "tool": tool,
                    "role": "server",
                    "config": null,
                    "results": [],
                    "threshold": null,
                    "error": { "kind": "runtime", "message": outcome.err().unwrap_or_default() },
                    "counters": null,
                })
            });
            if let Value::Object(fields) = doc {
                for (k, v) in fields {
                    line.entry(k).or_insert(v);
                }
            }
            if line.get("tool").is_some_and(|t| t.as_str() == Some("")) {
                line.insert("tool".into(), Value::Null);
            }
            print_stdout(&(Value::Object(line).to_string() + "\n"));
        }
    }

    /// A worker has exited: its test's line. `stopped_by` names the signal
    /// that stopped the server (which ended the worker).
    fn finished(&mut self, mut w: Running, status: ExitStatus, stopped_by: Option<&str>) {
        // the pipe closes with the worker: every line it wrote is here
        while let Ok(line) = w.lines.recv() {
            w.take(line);
        }
        self.served += 1;
        match w.done {
            Some((code, summary, doc)) => {
                let outcome = if code == exit::OK {
                    Ok(summary.as_str())
                } else {
                    Err(summary.as_str())
                };
                self.log(w.peer, w.tool.as_deref(), outcome, Some(doc));
            }
            None => {
                let how = match std::os::unix::process::ExitStatusExt::signal(&status) {
                    Some(sig) => format!("signal {sig}"),
                    None => format!("exit status {}", status.code().unwrap_or(-1)),
                };
                let msg = match (stopped_by, w.ended_for.take()) {
                    (Some(sig), _) => format!("the server was stopped by {sig} during {}", w.phase),
                    (None, Some(why)) => why,
                    (None, None) => format!("the test's worker process crashed ({how}) during {}", w.phase),
                };
                self.log(w.peer, w.tool.as_deref(), Err(&msg), None);
            }
        }
    }

    /// The server stops (by `signal`) while `w` runs: a test in progress
    /// is ended at once; one already measured (its worker tearing down) is
    /// given until LINGER from its end to exit and report, so its line says
    /// how it ran.
    fn stop_running(&mut self, mut w: Running, signal: &str) {
        w.drain();
        if w.over_at.is_none() {
            // a teardown line written just before the signal, not yet
            // passed on by the pipe's reader
            if let Ok(line) = w.lines.recv_timeout(Duration::from_millis(100)) {
                w.take(line);
                w.drain();
            }
        }
        while let Some(over) = w.over_at {
            match w.child.try_wait() {
                Ok(Some(status)) => return self.finished(w, status, None),
                Ok(None) if over.elapsed() <= LINGER => {
                    w.drain();
                    std::thread::sleep(TICK);
                }
                _ => break,
            }
        }
        let _ = w.child.kill();
        if let Ok(status) = w.child.wait() {
            self.finished(w, status, Some(signal));
        }
    }

    /// Starts the next test's worker, its standard input one end of a
    /// Unix socket pair for the hand-over.
    fn spare(&self, args: &[String]) -> std::io::Result<Spare> {
        let (ours, theirs) = UnixStream::pair()?;
        let mut child = Command::new(&self.exe)
            .arg(COMMAND)
            .args(args)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let out = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("worker has no standard output"))?;
        let (tx, lines) = channel();
        std::thread::Builder::new()
            .name("fabdiag-serve-worker-out".into())
            .spawn(move || {
                for l in BufReader::new(out).lines().map_while(Result::ok) {
                    if let Ok(line) = serde_json::from_str::<Line>(&l) {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            })?;
        Ok(Spare {
            child,
            channel: ours,
            lines,
        })
    }

    /// Answers a client that cannot be served with `msg`, and logs it.
    fn turn_away(&mut self, stream: TcpStream, peer: SocketAddr, msg: String) {
        self.served += 1;
        self.log(peer, None, Err(&format!("turned away: {msg}")), None);
        answer_turned_away(stream, msg);
    }

    /// Whether a client may start a test now (--max-tests-per-minute);
    /// the refusal to tell it.
    fn admit(&mut self, peer: SocketAddr) -> Result<(), String> {
        let Some(r) = self.rates.as_mut() else {
            return Ok(());
        };
        r.admit(peer.ip(), Instant::now())
            .map_err(|wait| r.refusal(peer.ip(), wait))
    }

    /// Whether the test `w` runs past --max-test-seconds and its grace.
    fn past_limit(&self, w: &Running) -> bool {
        self.max_test
            .is_some_and(|(_, end)| w.over_at.is_none() && w.started.elapsed() > end)
    }

    /// A connection let go from the lobby unheard: its line.
    fn unheard(&mut self, peer: SocketAddr, why: &str) {
        self.served += 1;
        self.log(peer, None, Err(why), None);
    }

    /// `spare`, or None with a line saying why (the next client then gets
    /// a worker started for it).
    fn next_spare(&self, args: &[String]) -> Option<Spare> {
        self.spare(args)
            .map_err(|e| tell!("{}: cannot start a worker process: {e}", self.prog))
            .ok()
    }

    /// Starts the test of a connection: the spare, or, when there is none
    /// or it has died, a worker started for it.
    fn start(
        &self,
        spare: Option<Spare>,
        stream: &TcpStream,
        peer: SocketAddr,
        args: &[String],
    ) -> std::io::Result<Running> {
        match spare.map(|s| s.hand(stream, peer)) {
            Some(Ok(w)) => Ok(w),
            _ => self.spare(args).and_then(|s| s.hand(stream, peer)),
        }
    }
}

/// Tells a client that arrives during another test that the server is
/// busy (or stopping): an Error in answer to its hello, read off so the
/// close is clean. Logged and counted by `Server::turn_away`.
fn answer_turned_away(mut stream: TcpStream, message: String) {
    let _ = std::thread::Builder::new()
        .name("fabdiag-serve-busy".into())
        .spawn(move || {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
            let msg = Message::Error {
                phase: Phase::Hello,
                message,
                kind: ErrorClass::Runtime,
            };
            if let Ok(bytes) = serde_json::to_vec(&msg) {
                let _ = write_frame(&mut stream, &bytes);
            }
            let _ = stream.shutdown(Shutdown::Write);
            // until the client closes (or 2 s): closing with its hello
            // unread would reset the connection before it reads ours
            let mut sink = [0u8; 512];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
        });
}

pub fn run(prog: &str, args: &[String]) -> u8 {
    let json = args.iter().any(|a| a == "--json");
    let (o, worker_args, listener, stop) = match ready(prog, args, json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            let m = format!("cannot find this program to run its workers: {e}");
            return early_failure("serve", prog, json, exit::RUNTIME, &m);
        }
    };
    let mut server = Server {
        exe,
        prog: prog.into(),
        json: o.json,
        served: 0,
        rates: o.limits.max_tests_per_minute.map(Rates::new),
        max_test: o.limits.max_test_s.map(|s| {
            let limit = Duration::from_secs(s);
            (s, limit + limit.min(TEST_GRACE))
        }),
    };
    serve_clients(&mut server, &listener, &stop, &worker_args)
}

/// The options, and everything checked before listening: libfabric, the
/// provider and domain (`-P`/`-d` this machine lacks is said once, not to
/// each client), the GPU buffers, the port, the stop signals; with the
/// workers' own options. Or the exit code, its failure said.
fn ready(prog: &str, args: &[String], json: bool) -> Result<(ServeOptions, Vec<String>, Listener, Stop), u8> {
    let fail = |code: u8, m: &str| early_failure("serve", prog, json, code, m);
    let o = match fabdiag_options::serve::serve(args) {
        Ok(Action::Run(o)) => o,
        Ok(Action::Help) => {
            print_stdout(&fabdiag_options::serve::serve_usage(prog));
            return Err(exit::OK);
        }
        Ok(Action::Version) => {
            print_stdout(&format!("{prog} version: {VERSION}\n"));
            return Err(exit::OK);
        }
        Err(fabdiag_options::OptionError::Invalid(m) | fabdiag_options::OptionError::Unavailable(m)) => {
            return Err(fail(exit::USAGE, &m))
        }
    };
    // a key file that cannot be used, or no munged, is said before listening
    crate::auth::from_options(
        o.auth_key.as_deref().map(std::path::Path::new),
        o.auth_munge,
        o.munge_users.clone(),
    )
    .map_err(|(code, m)| fail(code, &m))?;
    load_libfabric().map_err(|e| fail(exit::UNAVAILABLE, &e.to_string()))?;
    let limits = fabdiag_session::Env {
        provider: o.provider.clone(),
        device: o.device.clone(),
        ..fabdiag_session::Env::default()
    };
    fabdiag_session::check_server(&limits).map_err(|f| fail(exit::of(f.kind), &f.to_string()))?;
    // -t/-r: checked here, before listening, as a tool's server does; the
    // workers are told the type found, so none has to look again
    let gpu = super::gpu::resolve(&o.gpu).map_err(|m| fail(exit::UNAVAILABLE, &m))?;
    let listener = Listener::bind(o.port)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| fail(exit::RUNTIME, &e.to_string()))?;
    let stop = Stop::watch().map_err(|e| fail(exit::RUNTIME, &format!("cannot wait for signals: {e}")))?;
    let worker_args = worker_args(&o, gpu);
    Ok((o, worker_args, listener, stop))
}

/// The worker's own options: the same provider and domain limits, and the
/// GPU buffers with the type found.
fn worker_args(o: &ServeOptions, gpu: Option<GpuUse>) -> Vec<String> {
    let mut worker_args = Vec::new();
    if let Some(p) = &o.provider {
        worker_args.extend(["-P".to_string(), p.name().to_string()]);
    }
    if let Some(d) = &o.device {
        worker_args.extend(["-d".to_string(), d.clone()]);
    }
    // the limits a test itself judges (the rate is the server's own)
    if let Some(m) = o.limits.max_memory_bytes {
        worker_args.extend(["--max-memory".to_string(), m.to_string()]);
    }
    if let Some(s) = o.limits.max_test_s {
        worker_args.extend(["--max-test-seconds".to_string(), s.to_string()]);
    }
    // (the file's name, not the key: it never is on a command line)
    if let Some(k) = &o.auth_key {
        worker_args.extend(["--auth-key".to_string(), k.clone()]);
    }
    if o.auth_munge {
        worker_args.push("--auth-munge".to_string());
    }
    if let Some(users) = &o.munge_users {
        worker_args.extend(["--munge-users".to_string(), users.join(",")]);
    }
    worker_args.extend(["--poll".to_string(), o.poll.name().to_string()]);
    if let Some(g) = gpu {
        for (flag, index) in [("-t", g.tx), ("-r", g.rx)] {
            if let Some(i) = index {
                worker_args.extend([flag.to_string(), i.to_string()]);
            }
        }
        worker_args.extend(["-g".to_string(), g.kind.name().to_string()]);
    }
    worker_args
}

/// Client after client, one test at a time, until a stop signal.
fn serve_clients(server: &mut Server, listener: &Listener, stop: &Stop, worker_args: &[String]) -> u8 {
    let prog = server.prog.clone();
    let mut spare = server.next_spare(worker_args);
    tell!(
        "{prog}: listening on port {} for clients of every tool, one test at a time",
        listener.port()
    );
    let mut running: Option<Running> = None;
    // a client that came as the running test ended: served once its
    // worker is gone
    let mut next: Option<(TcpStream, SocketAddr)> = None;
    // connections until their hello is here: only one that speaks is
    // served or told the server is busy
    let mut lobby = Lobby::default();
    loop {
        if let Some(sig) = stop.signal() {
            let name = sig.as_str();
            if let Some(w) = running.take() {
                server.stop_running(w, name);
            }
            if let Some((stream, peer)) = next.take() {
                server.turn_away(
                    stream,
                    peer,
                    format!("fabdiag serve on port {} was stopped by {name}", listener.port()),
                );
            }
            if let Some(s) = spare.take() {
                s.discard();
            }
            let served = crate::counted::counted(server.served, "connection", "connections");
            tell!("{prog}: stopped by {name} after {served}");
            return exit::OK;
        }
        if let Some(w) = running.as_mut() {
            w.drain();
            match w.child.try_wait() {
                Ok(Some(status)) => {
                    if let Some(w) = running.take() {
                        // the next worker first: it warms up while this
                        // test is logged, and is there when the line is
                        spare = server.next_spare(worker_args);
                        server.finished(w, status, None);
                    }
                }
                // done, but not gone: whatever holds it, the test is over
                Ok(None) if w.over_at.is_some_and(|t| t.elapsed() > LINGER) => {
                    let _ = w.child.kill();
                }
                Ok(None) if w.ended_for.is_none() && server.past_limit(w) => {
                    let limit = server.max_test.map_or(0, |(s, _)| s);
                    w.ended_for = Some(format!(
                        "ended by the server during {}: the test ran past this server's limit of {limit} s (fabdiag serve --max-test-seconds)",
                        w.phase
                    ));
                    let _ = w.child.kill();
                }
                Ok(None) => {}
                Err(e) => tell!("{prog}: cannot watch the test's worker: {e}"),
            }
        }
        let accepted = match listener.try_accept_stream() {
            Ok(Some((stream, peer))) => {
                if let Some((peer, why)) = lobby.admit(stream, peer) {
                    server.unheard(peer, &why);
                }
                true
            }
            Ok(None) => false,
            Err(e) => {
                tell!("{prog}: {e}");
                false
            }
        };
        // who comes forward: during a test, everyone who spoke (to be told
        // it is busy); with the slot free (none running, or the test over
        // and its worker only exiting, bounded by LINGER), one client
        let busy = running.as_ref().is_some_and(|w| w.over_at.is_none());
        let take = match (busy, next.is_none()) {
            (true, _) => usize::MAX,
            (false, true) => 1,
            (false, false) => 0,
        };
        for left in lobby.sort(take) {
            match (left, &running) {
                (Left::Ready(stream, peer), Some(w)) if busy => {
                    let what = w.tool.as_deref().map_or("a".to_string(), |t| format!("a {t}"));
                    let msg = format!(
                        "fabdiag serve on port {} is busy with {what} test from {}; try again when it ends",
                        listener.port(),
                        w.peer.ip()
                    );
                    server.turn_away(stream, peer, msg);
                }
                (Left::Ready(stream, peer), _) => match server.admit(peer) {
                    Ok(()) => next = Some((stream, peer)),
                    Err(msg) => server.turn_away(stream, peer, msg),
                },
                (Left::Dropped(peer, why), _) => server.unheard(peer, &why),
            }
        }
        if !accepted {
            std::thread::sleep(TICK);
        }
        if running.is_none() {
            if let Some((stream, peer)) = next.take() {
                match server.start(spare.take(), &stream, peer, worker_args) {
                    Ok(w) => running = Some(w),
                    // the client is told, not left with a closed connection
                    Err(e) => {
                        let why = format!("this server cannot start a worker process for the test: {e}");
                        server.turn_away(stream, peer, why);
                    }
                }
            }
        }
    }
}
