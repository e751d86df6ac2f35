//! The one harness of the integration tests: real fabdiag processes,
//! bounded in time, on loopback or in network namespaces of our own.
//!
//! - Every wait has a deadline, so a hang fails the test instead of
//!   stalling CI.
//! - `cpu()`: tests that start fabric processes (which busy-poll) hold this
//!   lock, so on a 2-core machine no two of them share the CPUs and a test
//!   never measures another test's load.
//! - `free_port()`: control ports come from a range below the kernel's
//!   ephemeral ports (which libfabric's own endpoints use) and are never
//!   handed out twice in one test process.
//! - `pair`, `both_exit`, `expect_failure`, `one_line` and the `scripted` peers are the
//!   shapes every test file uses.
//! - `netns::Netns`: two hosts joined by a veth pair, for what crosses a network;
//!   `cluster::Cluster`: n of them on a bridge, for sweeps.
//! - `skipped()`: the one way a test says it (or part of it) did not run
//!   here, and why, where a CI log shows it.
//! - `traffic_tests` and `traffic_num`: host-traffic's JSON, whose values
//!   are all strings (gpu.rs on a GPU, cpu_cuda.rs on the stand-in).
#![allow(dead_code)]

pub mod cluster;
pub mod netns;
pub mod prometheus;
pub mod slurm;

pub use nix::sys::signal::Signal;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const LIMIT: Duration = Duration::from_secs(60);
pub const SHORT: Duration = Duration::from_secs(10);

/// The fabdiag under test: the one cargo built, or `FABDIAG_TEST_BIN`
/// (test binaries carried to another machine, e.g. the GPU one).
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| std::env::var("FABDIAG_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_fabdiag").into()))
}

/// Says a skip where the log shows it (see fabdiag-testkit). Not every
/// test file skips, as not every one uses each helper (`dead_code` above).
#[allow(unused_imports)]
pub use fabdiag_testkit::skipped;

static CPU: Mutex<()> = Mutex::new(());

/// Held by every test that runs busy-polling fabric processes.
pub fn cpu() -> MutexGuard<'static, ()> {
    // a failed test poisons the lock; the next one may still run
    CPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// A TCP port for a server: free now, below the ephemeral range, and not
/// given to any other test of this process.
pub fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // 20000-31999, below Linux's ephemeral range (32768 on): a port the
    // kernel may hand to any process's outgoing connection or port-0
    // listener (a --local server) between this check and the test's own
    // bind would be taken from under the test
    let offset = (std::process::id() % 60) as u16 * 200;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = 20000 + (offset + n % 12000) % 12000;
        if TcpListener::bind(("0.0.0.0", p)).is_ok() {
            return p;
        }
    }
}

pub struct Output {
    pub code: Option<i32>,
    /// The signal that ended the process, if one did.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Output {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    /// Exactly one line on stderr, and no panic.
    pub fn one_line(&self) -> &str {
        one_line(&self.stderr)
    }
}

/// Both sides of a pair test ended with `code`; `what` names the case.
pub fn both_exit(c: &Output, s: &Output, code: i32, what: &str) {
    assert_eq!(
        (c.code, s.code),
        (Some(code), Some(code)),
        "{what}: {} / {}",
        c.stderr,
        s.stderr
    );
}

pub fn one_line(stderr: &str) -> &str {
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got:\n{stderr}");
    lines[0]
}

pub fn no_panic(o: &Output) {
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// A running process whose output is collected as it comes.
pub struct Proc {
    child: Child,
    started: Instant,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn drain(mut r: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut s) = into.lock() {
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }
    })
}

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let (out, err) = (Arc::default(), Arc::default());
        let mut readers = Vec::new();
        if let Some(o) = child.stdout.take() {
            readers.push(drain(o, Arc::clone(&out)));
        }
        if let Some(e) = child.stderr.take() {
            readers.push(drain(e, Arc::clone(&err)));
        }
        Proc {
            child,
            started: Instant::now(),
            out,
            err,
            readers,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout_now(&self) -> String {
        self.out.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn stderr_now(&self) -> String {
        self.err.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until `pred` holds for (stdout, stderr) so far; panics past
    /// `limit` or if the process ends first.
    pub fn wait_for(&mut self, what: &str, limit: Duration, pred: impl Fn(&str, &str) -> bool) {
        let t0 = Instant::now();
        loop {
            if pred(&self.stdout_now(), &self.stderr_now()) {
                return;
            }
            assert!(self.alive(), "ended before {what}; stderr:\n{}", self.stderr_now());
            assert!(
                t0.elapsed() < limit,
                "no {what} within {limit:?}; stderr:\n{}",
                self.stderr_now()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits at most `limit` from now; kills the process and panics past it.
    pub fn wait(mut self, limit: Duration) -> Output {
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                for r in self.readers.drain(..) {
                    let _ = r.join();
                }
                return Output {
                    code: status.code(),
                    signal: std::os::unix::process::ExitStatusExt::signal(&status),
                    stdout: self.stdout_now(),
                    stderr: self.stderr_now(),
                    elapsed: self.started.elapsed(),
                };
            }
            if t0.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "process did not finish within {limit:?}; stderr:\n{}",
                    self.stderr_now()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn signal(&self, sig: Signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a set-up command (`ip`, `tc`, ...) that must succeed.
/// How many of a sweep document's pairs have a figure.
pub fn pairs_measured(doc: &serde_json::Value) -> usize {
    doc["pairs"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|p| p["value"].is_number()).count())
}

pub fn must(args: &[&str]) {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{} must be installed (scripts/install-deps.sh): {e}", args[0]));
    assert!(
        o.status.success(),
        "{}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The namespace tests need root; CI runs as root.
pub fn require_root() {
    assert_eq!(
        nix::unistd::geteuid().as_raw(),
        0,
        "the namespace tests need root (CI runs as root); run the suite as root"
    );
}

/// Four ranks of `fabdiag sweep ARGS` on loopback, rank 0 writing JSON
/// and `--output` to `dir`, returned once its pairs.jsonl holds
/// `recorded` records (the pattern's first step is over): (ranks 1 to 3,
/// rank 0).
pub fn four_ranks_under_way(dir: &tempfile::TempDir, args: &[&str], recorded: usize) -> (Vec<Proc>, Proc) {
    let out = dir.path().to_str().expect("a path");
    let coord = format!("127.0.0.1:{}", free_port());
    let rank = |r: usize, extra: &[&str]| {
        let mut c = fabdiag(&["sweep", "--coordinator", &coord]);
        c.args(args).args(extra);
        c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", "4");
        Proc::spawn(&mut c)
    };
    let others: Vec<Proc> = (1..4).map(|r| rank(r, &[])).collect();
    let zero = rank(0, &["--json", "--output", out]);
    let t0 = Instant::now();
    while std::fs::read_to_string(dir.path().join("pairs.jsonl")).map_or(0, |t| t.lines().count()) < recorded {
        assert!(t0.elapsed() < LIMIT, "the first step never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    (others, zero)
}

/// fabdiag with `args`, with SIGINT at its default action even when this
/// test process was started ignoring it (as a script's background job
/// is): fabdiag keeps an inherited "ignore", as a process should, and the
/// tests that send SIGINT stand in for a user's Ctrl-C. perl resets it,
/// since resetting it here would take unsafe code.
pub fn fabdiag(args: &[&str]) -> Command {
    if signal_ignored_here(Signal::SIGINT) {
        return with_disposition("DEFAULT", args);
    }
    let mut c = Command::new(bin());
    c.args(args);
    c
}

/// fabdiag started by bash after `ulimit ULIMITS` (e.g. "-l 64"), for the
/// limits a batch job or a node's defaults would set.
pub fn limited(ulimits: &str, args: &[&str]) -> Command {
    let mut c = Command::new("bash");
    c.args(["-c", &format!("ulimit {ulimits} && exec \"$0\" \"$@\""), bin()])
        .args(args);
    c
}

/// fabdiag started by perl with SIGINT's disposition set to `what`
/// ("DEFAULT" or "IGNORE") before the exec.
pub fn with_disposition(what: &str, args: &[&str]) -> Command {
    let mut c = Command::new("perl");
    c.arg("-e")
        .arg(format!(
            "$SIG{{INT}} = '{what}'; exec {{ $ARGV[0] }} @ARGV or die \"exec $ARGV[0]: $!\\n\""
        ))
        .arg(bin())
        .args(args);
    c
}

/// Whether this process ignores `sig`.
pub fn signal_ignored_here(sig: Signal) -> bool {
    signal_in_mask("self", "SigIgn", sig)
}

/// Whether `sig` is in the signal mask `field` (SigIgn, SigBlk, ...) of
/// process `pid` ("self" or a number), as /proc shows it.
pub fn signal_in_mask(pid: &str, field: &str, sig: Signal) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            let mask = t.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|m| m & (1 << (sig as u64 - 1)) != 0)
}

/// Whether this machine's loopback answers on IPv6 (::1): a container may
/// run with IPv6 off. Says so loudly when it does not (through `skipped`:
/// libtest would keep a passing test's `eprintln!` to itself).
pub fn ipv6_loopback() -> bool {
    let ok = TcpListener::bind("[::1]:0").is_ok();
    if !ok {
        skipped("this machine has no IPv6 loopback (::1)");
    }
    ok
}

/// What the libfabric under test offers, as `fabdiag doctor --json` says
/// (asked once per test process). Tests name providers from it rather than
/// from Debian 1.17's list, so they also pass against the libfabric built
/// for the GPU machine (2.x: `-P tcp` is the native RDM 'tcp' there, not
/// 'tcp;ofi_rxm', and net, udp;ofi_rxd are gone).
pub fn doctor_json() -> &'static serde_json::Value {
    static DOCTOR: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DOCTOR.get_or_init(|| {
        let o = run(&["doctor", "--json"], LIMIT);
        assert_eq!(o.code, Some(0), "fabdiag doctor: {}", o.stderr);
        o.json()
    })
}

/// The providers this libfabric lists, each as doctor reports it.
pub fn providers_here() -> &'static [serde_json::Value] {
    doctor_json()["providers"].as_array().map_or(&[], Vec::as_slice)
}

/// The core provider of `name`: "tcp" for "tcp;ofi_rxm" and for "tcp"
/// (what `-P tcp` may resolve to, by libfabric version).
pub fn core_provider(name: &str) -> &str {
    name.split(';').next().unwrap_or(name)
}

/// The full name of a provider here that does RMA writes but not on device
/// memory (no FI_HMEM), tcp's first: what the "lacks FI_HMEM" tests pass
/// as `-P`. None, said loudly, where every provider here has FI_HMEM.
pub fn provider_without_hmem() -> Option<&'static str> {
    let mut candidates: Vec<&serde_json::Value> = providers_here()
        .iter()
        .filter(|p| p["rma_write"] == true && p["hmem"] == false)
        .collect();
    candidates.sort_by_key(|p| core_provider(p["provider"].as_str().unwrap_or("")) != "tcp");
    let found = candidates.first().and_then(|p| p["provider"].as_str());
    if found.is_none() {
        skipped("every provider of this libfabric with RMA writes has FI_HMEM");
    }
    found
}

/// Runs to completion within `limit`.
pub fn run(args: &[&str], limit: Duration) -> Output {
    Proc::spawn(&mut fabdiag(args)).wait(limit)
}

/// Starts a server and waits until its port accepts connections.
pub fn server(args: &[&str], port: u16) -> Proc {
    let mut p = Proc::spawn(&mut fabdiag(args));
    wait_listening(&mut p, "127.0.0.1", port);
    p
}

/// Waits until `host:port` accepts connections while `p` still runs (so a
/// server that failed to bind is reported, not mistaken for another).
pub fn wait_listening(p: &mut Proc, host: &str, port: u16) {
    let deadline = Instant::now() + SHORT;
    while Instant::now() < deadline {
        assert!(
            p.alive(),
            "server ended before listening on {port}:\n{}",
            p.stderr_now()
        );
        if TcpStream::connect((host, port)).is_ok() {
            // that probe was a stranger to the server: it is turned away and
            // the server keeps listening
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("server never listened on {host}:{port}");
}

/// A server of `tool` with `server_args` and a client of it with
/// `client_args` (the address and port are added): both outcomes.
pub fn pair(tool: &str, server_args: &[&str], client_args: &[&str]) -> (Output, Output) {
    pair_env(tool, &[], server_args, client_args)
}

/// `pair` with environment variables (test hooks) set on both sides.
pub fn pair_env(tool: &str, env: &[(&str, &str)], server_args: &[&str], client_args: &[&str]) -> (Output, Output) {
    let port = free_port();
    let p = port.to_string();
    let mut sargs = vec![tool, "-p", &p];
    sargs.extend_from_slice(server_args);
    let mut srv = Proc::spawn(fabdiag(&sargs).envs(env.iter().copied()));
    wait_listening(&mut srv, "127.0.0.1", port);
    let mut cargs = vec![tool, "127.0.0.1", "-p", &p];
    cargs.extend_from_slice(client_args);
    let c = Proc::spawn(fabdiag(&cargs).envs(env.iter().copied())).wait(LIMIT);
    let s = srv.wait(LIMIT);
    (c, s)
}

/// Does a failure line name the measured part of a run? A fault injected
/// "mid-run" lands just after the run starts, where the first size's
/// pre-run barrier may still be in progress: both are the run.
pub fn mid_run_phase(line: &str) -> bool {
    line.contains("during run") || line.contains("during pre-run")
}

/// Starts `tool`'s server and a client running for 30 s (`extra` on both
/// sides), waits until the run is under way, sends `sig` to the server
/// (`victim_is_server`) or the client, and returns the survivor's outcome
/// and how long it took to end.
pub fn mid_run(tool: &str, victim_is_server: bool, sig: Signal, extra: &[&str]) -> (Output, Duration) {
    let port = free_port();
    let p = port.to_string();
    let mut sargs = vec![tool, "-p", p.as_str()];
    sargs.extend_from_slice(extra);
    let srv = server(&sargs, port);
    let mut cargs = vec![tool, "127.0.0.1", "-p", p.as_str(), "-D", "30"];
    cargs.extend_from_slice(extra);
    let mut cli = Proc::spawn(&mut fabdiag(&cargs));
    // the client prints its table's header when the run starts
    cli.wait_for("the table header", SHORT, |out, _| {
        out.contains("Size[B]") || out.contains("     Bytes ")
    });
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let (victim, survivor) = if victim_is_server { (srv, cli) } else { (cli, srv) };
    victim.signal(sig);
    let out = survivor.wait(Duration::from_secs(20));
    let took = t0.elapsed();
    drop(victim);
    no_panic(&out);
    (out, took)
}

/// Waits until process `pid`'s main thread sleeps inside the stall test
/// hook (`FABDIAG_TEST_STALL_DATA_CALL`: a data call that never returns,
/// which sleeps in a loop; a running test's main thread polls and never
/// sleeps, though it may before the run); panics past `limit`. The kernel names where a thread waits in
/// /proc/PID/wchan.
pub fn wait_stalled(pid: u32, limit: Duration) {
    let t0 = Instant::now();
    while !stalled(pid) {
        assert!(
            t0.elapsed() < limit,
            "process {pid} not held in the stall hook within {limit:?} (its wchan: '{}')",
            wchan(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Is process `pid`'s main thread asleep (see `wait_stalled`)?
pub fn stalled(pid: u32) -> bool {
    wchan(pid).contains("nanosleep")
}

fn wchan(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default()
}

/// Runs `args` and checks: exit `code`, one line on stderr containing
/// `message`. Returns that line.
pub fn expect_failure(args: &[&str], code: i32, message: &str) -> String {
    failed_with(&run(args, LIMIT), code, message)
}

/// `o` ended with `code` and one line on stderr holding `message`; returns
/// that line.
pub fn failed_with(o: &Output, code: i32, message: &str) -> String {
    assert_eq!(o.code, Some(code), "{}", o.stderr);
    let l = o.one_line().to_string();
    assert!(l.contains(message), "{l}");
    l
}

/// Waits until `srv` (a `serve --json`) has logged `n` connections: the
/// test before has ended, and the next connection is not told it is busy.
pub fn logged(srv: &Proc, n: usize) {
    let t0 = std::time::Instant::now();
    while srv.stdout_now().lines().count() < n {
        assert!(
            t0.elapsed() < LIMIT,
            "only {} lines: {}",
            srv.stdout_now(),
            srv.stderr_now()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Peers that speak fabdiag's control protocol by hand: to show how a
/// client or server copes with one that stops, lies or babbles.
pub mod scripted {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    pub const VERSION: &str = env!("CARGO_PKG_VERSION");

    pub fn frame(stream: &mut TcpStream, payload: &[u8]) {
        let mut v = (payload.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(payload);
        stream.write_all(&v).unwrap();
    }

    pub fn read_frame(stream: &mut TcpStream) -> Option<serde_json::Value> {
        let mut hdr = [0u8; 4];
        stream.read_exact(&mut hdr).ok()?;
        let mut p = vec![0u8; u32::from_be_bytes(hdr) as usize];
        stream.read_exact(&mut p).ok()?;
        serde_json::from_slice(&p).ok()
    }

    pub fn hello(tool: &str, version: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({"type": "hello", "magic": "fabdiag-control", "protocol": 1, "tool": tool, "version": version})).unwrap()
    }

    /// A write_bw client's run parameters, as a client sends them.
    pub fn config_frame() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({"type": "config", "params": {
            "tool": "cxi_write_bw", "provider": "tcp;ofi_rxm", "iterations": 10, "duration_s": null,
            "min_size": 8, "max_size": 8, "list_size": 4, "bidirectional": false, "use_idc": true,
            "use_hrp": true, "unrestricted": false, "rdzv": false, "max_buf": 4096, "buf_align": 64,
            "hugepages": null}}))
        .unwrap()
    }

    /// Connects to a server and passes the hello as `tool`.
    pub fn client(port: u16, tool: &str) -> TcpStream {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        frame(&mut s, &hello(tool, VERSION));
        let reply = read_frame(&mut s).expect("the server answers the hello");
        assert_eq!(reply["type"], "hello", "{reply}");
        s
    }

    /// The next frame from `s` that is not a heartbeat.
    pub fn past_heartbeats(s: &mut TcpStream) -> serde_json::Value {
        loop {
            let m = read_frame(s).expect("an answer");
            if m["type"] != "heartbeat" {
                return m;
            }
        }
    }

    /// Rank `r` of a three-rank sweep with rank 0 at `coord` (tcp, 4 KiB,
    /// 5 iterations), with `auth` (its authentication options).
    pub fn sweep_rank(coord: &str, r: usize, auth: &[&str]) -> super::Proc {
        let mut c = super::fabdiag(&["sweep", "--coordinator", coord, "--join-timeout", "30"]);
        c.args(["-P", "tcp", "-s", "4096", "-n", "5"]).args(auth);
        c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", "3");
        super::Proc::spawn(&mut c)
    }

    /// Waits until a sweep's rank 0 listens at `coord`.
    pub fn rank0_listening(coord: &str) {
        let t0 = std::time::Instant::now();
        while TcpStream::connect(coord).is_err() {
            assert!(t0.elapsed() < super::SHORT, "rank 0 never listened");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A stranger's join to a sweep's rank 0 as rank 1 of 3, with `extra`
    /// fields (a nonce, a method): rank 0's first answer.
    pub fn stranger_joins(coord: &str, extra: serde_json::Value) -> (TcpStream, serde_json::Value) {
        let mut s = TcpStream::connect(coord).expect("rank 0 listens");
        s.set_read_timeout(Some(super::SHORT)).expect("a read limit");
        let mut join = serde_json::json!({
            "type": "join", "protocol": fabdiag_sweep::protocol::SWEEP_PROTOCOL, "version": VERSION, "rank": 1, "size": 3,
            "host": "stranger", "pair_port": 9,
        });
        if let (Some(j), Some(e)) = (join.as_object_mut(), extra.as_object()) {
            j.extend(e.clone());
        }
        frame(&mut s, join.to_string().as_bytes());
        let answer = read_frame(&mut s).expect("an answer");
        (s, answer)
    }

    /// The stranger's proof `mac` and then a forged result: rank 0's answer.
    pub fn prove_and_forge(s: &mut TcpStream, mac: &str) -> serde_json::Value {
        frame(
            s,
            serde_json::json!({"type": "proof", "mac": mac}).to_string().as_bytes(),
        );
        let forged = serde_json::json!({"type": "done", "step": 0,
            "outcome": {"value": 1e9, "elapsed_s": 1.0, "measure_s": 1.0}});
        frame(s, forged.to_string().as_bytes());
        read_frame(s).expect("an answer")
    }

    /// A fake server: accepts one connection and answers with `reply`.
    pub fn server(reply: impl FnOnce(TcpStream) + Send + 'static) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((s, _)) = l.accept() {
                reply(s);
            }
        });
        port
    }
}

/// gpu-loopback-bw GPU to GPU, GPU to host and host to GPU over shm,
/// through `run` (on a real GPU, or with the host-as-GPU test hook): the
/// banner's GPU lines, `Found N GPU(s)`, --verify on by default, counts.
pub fn check_gpu_loopback(run: &dyn Fn(&[&str]) -> Output, gpus_found: u64) {
    for (flags, tx, rx) in [
        (&["-t", "0", "-r", "0"][..], "GPU 0", "GPU 0"),
        (&["-t", "0"], "GPU 0", "System"),
        (&["-r", "0"], "System", "GPU 0"),
    ] {
        let mut a = vec![
            "gpu-loopback-bw",
            "-P",
            "shm",
            "-i",
            "3",
            "-n",
            "32",
            "-s",
            "65536",
            "-g",
            "Nvidia",
        ];
        a.extend_from_slice(flags);
        let o = run(&a);
        assert_eq!(o.code, Some(0), "{flags:?}: {}", o.stderr);
        let want = format!("TX Mem           : {tx}\nRX Mem           : {rx}\nGPU Type         : NVIDIA\n");
        assert!(o.stdout.contains(&want), "{}", o.stdout);
        let found = format!("Hugepages        : Disabled\nFound {gpus_found} GPU(s)\n---");
        assert!(o.stdout.contains(&found), "{}", o.stdout);
        a.push("--json");
        let j = run(&a).json();
        assert_eq!(
            j["config"]["verify"], true,
            "--verify is on by default with a GPU buffer"
        );
        assert_eq!(j["config"]["gpus_found"], gpus_found);
        assert_eq!(j["results"][0]["ops"], 96);
    }
}

/// host-traffic's JSON: repeat `repeat`'s tests, in the order they ran.
pub fn traffic_tests(doc: &serde_json::Value, repeat: usize) -> Vec<(String, serde_json::Value)> {
    doc[format!("repeat_{repeat}")]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// host-traffic's JSON: figure `key` of a test (every value a string).
pub fn traffic_num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{key} in {v}"))
}

/// A unit shipped in contrib/systemd, its ExecStart pointed at the binary
/// under test (systemd checks that the command exists).
pub fn shipped_unit(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib/systemd")
        .join(name);
    let unit = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    unit.replace("/usr/bin/fabdiag", bin())
}

/// systemd's own check of a unit file: every key known, every value
/// valid. An unknown key is only a warning there, so anything said at
/// all fails: what was said, if anything.
pub fn systemd_verify(path: &Path) -> Result<(), String> {
    let o = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(path)
        .output()
        .expect("systemd-analyze (systemd, which Debian installs)");
    let said = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    match o.status.success() && said.trim().is_empty() {
        true => Ok(()),
        false => Err(said),
    }
}

/// The hardening every shipped unit promises: its own user, no new
/// privileges, a read-only system, pinned memory for RDMA, and the
/// fabric's devices still visible.
pub fn assert_hardened(unit: &str) {
    for key in [
        "DynamicUser=yes",
        "NoNewPrivileges=yes",
        "LimitMEMLOCK=infinity",
        "ProtectSystem=strict",
    ] {
        assert!(unit.lines().any(|l| l == key), "{key}");
    }
    assert!(
        !unit.lines().any(|l| l.starts_with("PrivateDevices=")),
        "the fabric's devices must stay visible"
    );
}

/// The options a shipped `/etc/default` file (contrib/systemd/NAME) sets
/// in `VAR="..."`, split as systemd splits `$VAR`.
pub fn shipped_args(name: &str, var: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib/systemd")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{var}=\"")))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{var}=\"...\" in {name}"));
    value.split_whitespace().map(str::to_string).collect()
}

/// A process's resident memory (kB) and open descriptors.
pub fn footprint(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("its descriptors")
        .count();
    (rss, fds)
}

/// Waits (up to `limit`, while `busy` holds or `pid` has more descriptors
/// than `before`) and then checks that `pid`'s descriptors have not grown
/// and its resident memory by less than `slack_kb`: what it holds after
/// some work is what it held before (`what` names the two in the log).
pub fn assert_flat(
    pid: u32,
    before: (u64, usize),
    slack_kb: u64,
    limit: Duration,
    what: &str,
    busy: impl Fn() -> bool,
) {
    let t0 = Instant::now();
    let mut after = footprint(pid);
    while (after.1 > before.1 || busy()) && t0.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
        after = footprint(pid);
    }
    eprintln!("{what}: {before:?} (kB, fds), then {after:?}");
    assert!(after.1 <= before.1, "descriptors grew: {} -> {}", before.1, after.1);
    assert!(
        after.0 < before.0 + slack_kb,
        "resident memory grew by {} kB",
        after.0 - before.0
    );
}

/// Each of `pid`'s threads named as fabdiag's helpers, and whether it
/// shares the main (measuring) thread's descriptor table.
pub fn helpers_sharing(pid: u32) -> Vec<(String, bool)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let name = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let name = name.trim_end().to_string();
        if tid as u32 == pid || !name.starts_with("fabdiag-") {
            continue;
        }
        if let Some(shared) = fabdiag_fabric::fd_table::same_table(pid as i32, tid) {
            out.push((name, shared));
        }
    }
    out
}

/// Whether `pid`'s main (measuring) thread is on a descriptor table none
/// of its helpers share, with at least `helpers` of them there; and what
/// each shares.
pub fn on_a_table_of_its_own(pid: u32, helpers: usize) -> (bool, Vec<(String, bool)>) {
    let h = helpers_sharing(pid);
    (h.len() >= helpers && h.iter().all(|(_, shared)| !shared), h)
}

/// A send-lat client over tcp, 8 B without gaps for 3 s, to `port`: a
/// measuring thread busy in its timed loop.
pub fn busy_send_lat(port: &str) -> Proc {
    let args = [
        "send-lat",
        "127.0.0.1",
        "-p",
        port,
        "-P",
        "tcp",
        "-D",
        "3",
        "-s",
        "8",
        "--latency-gap",
        "0",
    ];
    Proc::spawn(&mut fabdiag(&args))
}

/// Waits up to 3 s for each process `(pid, helpers)` to measure on a table
/// of its own (`on_a_table_of_its_own`); what was last seen of each.
pub fn wait_on_tables_of_their_own(who: &[(u32, usize)]) -> Vec<(bool, Vec<(String, bool)>)> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let seen: Vec<_> = who.iter().map(|&(pid, n)| on_a_table_of_its_own(pid, n)).collect();
        if seen.iter().all(|s| s.0) || Instant::now() >= deadline {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
