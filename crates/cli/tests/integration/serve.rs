//! `fabdiag serve` with real clients and hostile peers: every tool from
//! successive clients (subcommands and original names), a client lost in
//! each phase, garbage and strangers, a provider crash inside one test, a
//! busy server, 200 connections with the server's memory and descriptors
//! checked, a clean stop on SIGINT and SIGTERM, and a worker measuring on
//! a descriptor table of its own. Every connection must
//! end in exactly one JSON line, and the server must serve the next one.

use crate::common::scripted::{self, config_frame, frame, hello, read_frame, VERSION};
use crate::common::*;
use serde_json::Value;
use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// A running `fabdiag serve --json` on a free port.
struct Serve {
    proc: Proc,
    port: u16,
}

impl Serve {
    fn start(env: &[(&str, &str)]) -> Serve {
        Serve::start_with(&[], env)
    }

    /// With more of serve's options.
    fn start_with(args: &[&str], env: &[(&str, &str)]) -> Serve {
        Serve::start_cmd(args, env, false)
    }

    /// The leader of a process group of its own, as a shell starts a
    /// command: a signal to the group (a Ctrl-C) reaches its workers too.
    fn start_leading(env: &[(&str, &str)]) -> Serve {
        Serve::start_cmd(&[], env, true)
    }

    fn start_cmd(args: &[&str], env: &[(&str, &str)], own_group: bool) -> Serve {
        let port = free_port();
        let p = port.to_string();
        let mut a = vec!["serve", "-p", &p, "--json"];
        a.extend_from_slice(args);
        let mut cmd = fabdiag(&a);
        cmd.envs(env.iter().copied());
        if own_group {
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        }
        let mut proc = Proc::spawn(&mut cmd);
        wait_listening(&mut proc, "127.0.0.1", port);
        let s = Serve { proc, port };
        // the harness's probe was one connection; wait for its line
        s.wait_lines(1);
        s
    }

    fn lines(&self) -> Vec<Value> {
        self.proc
            .stdout_now()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// Waits until the server has logged `n` connections.
    fn wait_lines(&self, n: usize) -> Vec<Value> {
        let t0 = Instant::now();
        loop {
            let lines = self.lines();
            if lines.len() >= n {
                return lines;
            }
            assert!(
                t0.elapsed() < LIMIT,
                "only {} of {n} lines; stderr:\n{}",
                lines.len(),
                self.proc.stderr_now()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn client(&self, args: &[&str]) -> Output {
        let p = self.port.to_string();
        let mut a = vec![args[0], "127.0.0.1", "-p", &p];
        a.extend_from_slice(&args[1..]);
        run(&a, LIMIT)
    }

    fn stop(self, sig: Signal) -> Output {
        self.proc.signal(sig);
        self.proc.wait(SHORT)
    }
}

/// A symlink to fabdiag under an original name, in the build's own folder
/// for tests (under target/), not left behind in /tmp.
fn original(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-names");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    link
}

#[test]
fn answers_every_tool_client_after_client() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let runs: &[&[&str]] = &[
        &["write-bw", "-n", "20", "-s", "8:64"],
        &["read-bw", "-n", "20", "-P", "shm"],
        &["send-bw", "-n", "20", "-b"],
        &["send-lat", "-n", "20", "-s", "8:16"],
        &["write-lat", "-n", "20"],
        &["read-lat", "-n", "20", "--json"],
        &["atomic-bw", "-n", "10", "-l", "4", "-A", "bxor"],
        &["atomic-lat", "-n", "10", "--fetching", "-A", "max"],
    ];
    let mut want = Vec::new();
    for args in runs {
        let o = s.client(args);
        assert_eq!(o.code, Some(0), "{args:?}: {}", o.stderr);
        want.push(format!("cxi_{}", args[0].replace('-', "_")));
    }
    // the originals' names, as site scripts call them
    let p = s.port.to_string();
    for (name, extra) in [("cxi_write_bw", &["-n", "10"][..]), ("cxi_send_lat", &["-n", "10"][..])] {
        let mut cmd = std::process::Command::new(original(name));
        cmd.args(["127.0.0.1", "-p", &p]).args(extra);
        let o = Proc::spawn(&mut cmd).wait(LIMIT);
        assert_eq!(o.code, Some(0), "{name}: {}", o.stderr);
        assert!(o.stdout.contains("    CXI RDMA "), "{name}: {}", o.stdout);
        want.push(name.to_string());
    }
    let lines = s.wait_lines(1 + want.len());
    let tests: Vec<&Value> = lines.iter().skip(1).collect();
    for (line, tool) in tests.iter().zip(&want) {
        assert_eq!(line["tool"], tool.as_str(), "{line}");
        assert_eq!(line["role"], "server");
        assert!(line["error"].is_null(), "{line}");
        assert!(!line["results"].as_array().unwrap().is_empty(), "{line}");
        assert!(line["peer"].as_str().unwrap().starts_with("127.0.0.1:"));
        assert!(line["time"].as_str().unwrap().ends_with('Z'));
        assert_eq!(line["schema_version"], 2);
        // both sides' NIC counters, the client's sent over at the end
        for side in ["local", "peer"] {
            let state = &line["counters"][side]["state"];
            assert!(state == "read" || state == "not_available", "{line}");
        }
    }
    assert_eq!(tests[1]["config"]["provider"], "shm");
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.ends_with("stopped by SIGTERM after 11 connections\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_client_lost_in_each_phase_ends_only_its_own_test() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let mut n = 1;
    let mut next = |what: &str, want: &dyn Fn(&str) -> bool| {
        n += 1;
        let lines = s.wait_lines(n);
        let e = lines[n - 1]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(want(&e), "{what}: {}", lines[n - 1]);
        // and the next client is served
        let o = s.client(&["write-bw", "-n", "5", "-s", "8"]);
        assert_eq!(o.code, Some(0), "after {what}: {}", o.stderr);
        n += 1;
        assert!(s.wait_lines(n)[n - 1]["error"].is_null());
    };
    // gone before its hello
    drop(TcpStream::connect(("127.0.0.1", s.port)).unwrap());
    next("no hello", &|e| e == "peer closed the control connection during hello");
    // gone after the hello
    drop(scripted::client(s.port, "cxi_write_bw"));
    next("after hello", &|e| {
        e == "peer closed the control connection during config"
    });
    // gone after its run parameters
    let mut c = scripted::client(s.port, "cxi_write_bw");
    frame(&mut c, &config_frame());
    std::thread::sleep(Duration::from_millis(200));
    drop(c);
    next("after config", &|e| {
        e == "peer closed the control connection during endpoint exchange"
    });
    // killed mid-run
    let p = s.port.to_string();
    let mut cli = Proc::spawn(&mut fabdiag(&["write-bw", "127.0.0.1", "-p", &p, "-D", "30"]));
    cli.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
    std::thread::sleep(Duration::from_millis(200));
    cli.signal(Signal::SIGKILL);
    drop(cli);
    next("killed mid-run", &|e| {
        e.starts_with("peer closed the control connection") && mid_run_phase(e)
    });
    // stopped mid-run: silent, then noticed
    let mut cli = Proc::spawn(&mut fabdiag(&["send-lat", "127.0.0.1", "-p", &p, "-D", "30"]));
    cli.wait_for("the table header", LIMIT, |out, _| out.contains("     Bytes "));
    std::thread::sleep(Duration::from_millis(200));
    cli.signal(Signal::SIGSTOP);
    next("stopped mid-run", &|e| {
        e.starts_with("peer stopped answering") && mid_run_phase(e)
    });
    drop(cli);
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0));
}

#[test]
fn garbage_and_strangers_are_turned_away() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let connect = || TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let mut n = 1;
    let mut expect = |what: &str, want: &str| {
        n += 1;
        let line = &s.wait_lines(n)[n - 1];
        let e = line["error"]["message"].as_str().unwrap_or_default();
        assert!(e.contains(want), "{what}: {line}");
        let accepted = what == "lying client";
        assert_eq!(line["tool"].is_null(), !accepted, "{what}: {line}");
    };
    connect().write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    expect("HTTP", "not a fabdiag control endpoint");
    connect().write_all(&[0, 0, 0, 3, 0xde, 0xad, 0xbe]).unwrap();
    expect("bytes", "not a fabdiag control endpoint");
    let mut c = connect();
    frame(&mut c, br#"{"type":"heartbeat"}"#);
    frame(&mut c, br#"{"type":"barrier","phase":"ready","size":null}"#);
    expect("not a hello", "first message was 'barrier', not a fabdiag hello");
    let mut c = connect();
    frame(&mut c, &hello("cxi_write_bw", "9.9.0"));
    assert_eq!(read_frame(&mut c).unwrap()["type"], "hello");
    let err = read_frame(&mut c).unwrap();
    assert!(
        err["message"].as_str().unwrap().contains("versions do not match"),
        "{err}"
    );
    expect("other version", "versions do not match");
    let mut c = connect();
    frame(&mut c, &hello("cxi_frob_bw", VERSION));
    assert_eq!(read_frame(&mut c).unwrap()["type"], "hello");
    assert_eq!(read_frame(&mut c).unwrap()["type"], "error");
    expect("unknown tool", "this server runs no tool named 'cxi_frob_bw'");
    // a client whose parameters lie: a list size past the limit
    let mut c = scripted::client(s.port, "cxi_write_bw");
    let mut cfg: Value = serde_json::from_slice(&config_frame()).unwrap();
    cfg["params"]["list_size"] = 1_000_000.into();
    frame(&mut c, &serde_json::to_vec(&cfg).unwrap());
    let err = read_frame(&mut c).unwrap();
    assert_eq!(err["type"], "error", "{err}");
    expect("lying client", "client sent invalid run parameters");
    // silent: no hello at all
    let t0 = Instant::now();
    let silent = connect();
    expect("silent", "no fabdiag hello within 5 s");
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    drop(silent);
    let o = s.client(&["send-bw", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let out = s.stop(Signal::SIGINT);
    assert_eq!(out.code, Some(0));
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// A server whose workers run with `hook`, after a read-bw client its
/// worker failed (exit 2 on the client): the server, the client's
/// outcome, and the error the server logged for that test.
fn a_read_bw_worker_ended_by(hook: (&str, &str)) -> (Serve, Output, String) {
    let s = Serve::start(&[hook]);
    let o = s.client(&["read-bw", "-n", "1000", "-s", "8"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    let line = s.wait_lines(2)[1].clone();
    assert_eq!(line["tool"], "cxi_read_bw", "{line}");
    let e = line["error"]["message"].as_str().unwrap().to_string();
    (s, o, e)
}

#[test]
fn a_provider_crash_ends_only_its_test() {
    let _cpu = cpu();
    // the test hook aborts read_bw's worker as it starts running, as a
    // crash inside libfabric would
    let (s, o, e) = a_read_bw_worker_ended_by(("FABDIAG_TEST_CRASH_IN_PHASE", "run:cxi_read_bw"));
    assert!(
        o.one_line().contains("peer closed the control connection during"),
        "{}",
        o.stderr
    );
    assert_eq!(e, "the test's worker process crashed (signal 6) during run");
    let o = s.client(&["write-bw", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(s.wait_lines(3)[2]["error"].is_null());
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0));
    assert!(out.stderr.contains("crashed (signal 6) during run"), "{}", out.stderr);
}

/// A worker whose provider call never returns (the test hook keeps its
/// 2,000th data call inside, as psm3 does for a peer that is gone) tells
/// its server so after the guard's 10 s, as its test's outcome, and ends:
/// the server logs it and goes on.
#[test]
fn a_worker_stuck_in_a_provider_call_reports_it_and_ends() {
    let _cpu = cpu();
    let (s, _, e) = a_read_bw_worker_ended_by(("FABDIAG_TEST_STALL_DATA_CALL", "2000"));
    assert!(
        e.starts_with("provider '") && e.contains("' has not returned from fi_") && e.contains(" for 10 s during "),
        "{e}"
    );
    assert!(
        e.ends_with(": it waits inside the call, for a peer or a link that is gone"),
        "{e}"
    );
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("has not returned from fi_"), "{}", out.stderr);
}

/// A worker held inside a provider call when its client is killed (the
/// test hook holds its 2,000th data call, as psm3 holds one whose peer is
/// gone) tells its server the client is gone at once, not a stuck call
/// after the guard's 10 s.
#[test]
fn a_worker_held_in_a_provider_call_tells_of_its_lost_client_at_once() {
    let _cpu = cpu();
    let s = Serve::start(&[("FABDIAG_TEST_STALL_DATA_CALL", "2000")]);
    let p = s.port.to_string();
    let mut cli = Proc::spawn(&mut fabdiag(&[
        "read-bw",
        "127.0.0.1",
        "-p",
        &p,
        "-n",
        "1000",
        "-s",
        "8",
    ]));
    cli.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
    // the worker serving it (the spare beside it waits for a connection)
    let t0 = Instant::now();
    while !workers(s.proc.pid()).into_iter().any(stalled) {
        assert!(t0.elapsed() < LIMIT, "no worker held in the stall hook");
        std::thread::sleep(Duration::from_millis(20));
    }
    let t0 = Instant::now();
    cli.signal(Signal::SIGKILL);
    let line = s.wait_lines(2)[1].clone();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(line["tool"], "cxi_read_bw", "{line}");
    assert_eq!(
        line["error"]["message"], "peer closed the control connection during run",
        "{line}"
    );
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn a_busy_server_says_so_at_once() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let p = s.port.to_string();
    let mut first = Proc::spawn(&mut fabdiag(&["write-bw", "127.0.0.1", "-p", &p, "-D", "3", "-s", "8"]));
    first.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
    let o = s.client(&["send-lat", "-n", "5"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(2), "{:?}", o.elapsed);
    assert_eq!(
        o.one_line(),
        format!(
            "fabdiag send-lat: peer failed during hello: fabdiag serve on port {p} is busy with a cxi_write_bw test from 127.0.0.1; try again when it ends"
        )
    );
    let f = first.wait(LIMIT);
    assert_eq!(f.code, Some(0), "the running test is not disturbed: {}", f.stderr);
    let lines = s.wait_lines(3);
    assert!(lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("turned away: "));
    assert!(lines[2]["error"].is_null() && lines[2]["tool"] == "cxi_write_bw");
    s.stop(Signal::SIGTERM);
}

/// A client that comes as the last test ends, while its worker is still
/// tearing down and exiting (one that frees a GPU context takes a moment;
/// the hook makes it 2 s), is served next rather than turned away:
/// scripts run clients back to back. One that comes mid-test is still
/// turned away at once (above).
#[test]
fn a_client_right_after_a_test_is_served_while_its_worker_exits() {
    let _cpu = cpu();
    let s = Serve::start(&[("FABDIAG_TEST_WORKER_TEARDOWN_MS", "2000")]);
    for _ in 0..2 {
        let o = s.client(&["write-lat", "-n", "20"]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    let lines = s.wait_lines(3);
    for l in &lines[1..3] {
        assert!(l["error"].is_null() && l["tool"] == "cxi_write_lat", "{l}");
    }
    s.stop(Signal::SIGTERM);
}

/// A Ctrl-C reaches the server's whole process group, its worker too. A
/// test already measured, its worker still tearing down (the hook makes
/// that 2 s), keeps the line it ran to; the server then stops.
#[test]
fn a_ctrl_c_while_a_measured_test_tears_down_keeps_its_line() {
    let _cpu = cpu();
    let s = Serve::start_leading(&[("FABDIAG_TEST_WORKER_TEARDOWN_MS", "2000")]);
    let o = s.client(&["write-lat", "-n", "20"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let group = nix::unistd::Pid::from_raw(s.proc.pid() as i32);
    nix::sys::signal::killpg(group, Signal::SIGINT).unwrap();
    let out = s.proc.wait(SHORT);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("stopped by SIGINT after 2 connections"),
        "{}",
        out.stderr
    );
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert!(last["error"].is_null() && last["tool"] == "cxi_write_lat", "{last}");
}

/// `--poll yield`: the server's side of every test yields when its
/// completion queue is empty, and its line says so (the client's side
/// spins, as its own option says).
#[test]
fn the_server_polls_as_told_and_says_so() {
    let _cpu = cpu();
    let s = Serve::start_with(&["--poll", "yield"], &[]);
    let o = s.client(&["send-lat", "-n", "20", "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["config"]["poll"], "spin");
    let line = s.wait_lines(2)[1].clone();
    assert_eq!(line["config"]["poll"], "yield", "{line}");
    s.stop(Signal::SIGTERM);
}

/// The server's worker processes (its children running `__serve-worker`).
fn workers(server: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // a process may end between the listing and these reads
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(server) && String::from_utf8_lossy(&cmdline).contains("__serve-worker") {
            found.push(pid);
        }
    }
    found
}

/// Waits for exactly one worker, with libfabric loaded, and returns it.
fn warm_spare(server: u32) -> u32 {
    let t0 = Instant::now();
    loop {
        if let [pid] = workers(server)[..] {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            if maps.contains("libfabric") {
                return pid;
            }
        }
        assert!(t0.elapsed() < LIMIT, "no warm spare worker: {:?}", workers(server));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_warm_spare_takes_each_client_and_a_dead_one_is_replaced() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let server = s.proc.pid();
    // with no client: one worker, libfabric already loaded
    let spare = warm_spare(server);
    let p = s.port.to_string();
    let mut client = Proc::spawn(&mut fabdiag(&["write-bw", "127.0.0.1", "-p", &p, "-D", "2", "-s", "8"]));
    client.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
    // the spare runs the test, and no other worker is started during it
    assert_eq!(workers(server), vec![spare]);
    let c = client.wait(LIMIT);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let lines = s.wait_lines(2);
    assert!(lines[1]["error"].is_null() && lines[1]["tool"] == "cxi_write_bw");
    // the next client's spare is there once the line is; the used one is gone
    let next = warm_spare(server);
    assert_ne!(next, spare);
    // a spare that dies while it waits is replaced by a worker started for
    // the client, which is served as usual
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(next as i32), Signal::SIGKILL).unwrap();
    let o = s.client(&["send-lat", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = s.wait_lines(3);
    assert!(
        lines[2]["error"].is_null() && lines[2]["tool"] == "cxi_send_lat",
        "{}",
        lines[2]
    );
    assert!(!workers(server).contains(&next));
    let last = warm_spare(server);
    // a stopped server takes its spare with it
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0));
    assert!(
        !std::path::Path::new(&format!("/proc/{last}")).exists(),
        "spare {last} outlived the server"
    );
}

/// Runs `one(k)` for k in 0..total, and checks that the server `pid`'s
/// memory and descriptors after all of them are as after the first 10
/// (`what` names them in the log line).
fn leaves_no_trace(pid: u32, what: &str, total: u64, mut one: impl FnMut(u64)) {
    for k in 0..10 {
        one(k);
    }
    let before = footprint(pid);
    for k in 10..total {
        one(k);
    }
    // a refusal's answer is written by a thread of its own, which lets go
    // of the connection once the client has read it (2 s at most); such a
    // thread may also still hold one when `before` is read, so a leak is
    // growth, not any difference
    let what = format!("server after 10 {what}, and after {total}");
    assert_flat(pid, before, 2048, Duration::from_secs(3), &what, || false);
}

#[test]
fn two_hundred_clients_leave_no_trace() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let mut n = 1;
    let serve_one = |k: u64| {
        // one real test in ten (each costs a second of two processes'
        // libfabric start-up); the rest end early in every other way
        match k % 10 {
            0 => {
                let args: &[&str] = if k.is_multiple_of(20) {
                    &["write-bw", "-n", "2", "-s", "8"]
                } else {
                    &["send-lat", "-n", "3", "--warmup", "0", "--latency-gap", "0"]
                };
                let o = s.client(args);
                assert_eq!(o.code, Some(0), "client {k}: {}", o.stderr);
            }
            1 | 5 => drop(TcpStream::connect(("127.0.0.1", s.port)).unwrap()),
            2 | 6 => drop(scripted::client(s.port, "cxi_atomic_bw")),
            3 | 7 => {
                let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
                let _ = c.write_all(b"\xff\xff\xff\xffgarbage");
            }
            _ => {
                let mut c = scripted::client(s.port, "cxi_write_bw");
                frame(&mut c, &config_frame());
                // its endpoint exists on the server when it goes
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        n += 1;
        s.wait_lines(n);
    };
    leaves_no_trace(s.proc.pid(), "connections", 200, serve_one);
    let lines = s.lines();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines.iter().filter(|l| l["error"].is_null()).count(), 20);
    let out = s.stop(Signal::SIGTERM);
    assert_eq!(out.code, Some(0));
}

#[test]
fn stops_cleanly_on_sigint_and_sigterm_even_mid_test() {
    let _cpu = cpu();
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let s = Serve::start(&[]);
        let p = s.port.to_string();
        let mut cli = Proc::spawn(&mut fabdiag(&["write-bw", "127.0.0.1", "-p", &p, "-D", "30"]));
        cli.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        let out = s.stop(sig);
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert_eq!(out.code, Some(0), "{sig}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!("stopped by {sig} after 2 connections")),
            "{}",
            out.stderr
        );
        // the interrupted test still has its line
        let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
        assert_eq!(last["tool"], "cxi_write_bw");
        let e = last["error"]["message"].as_str().unwrap();
        let stopped = format!("the server was stopped by {sig} during ");
        assert!(e.starts_with(&stopped) && mid_run_phase(e), "{last}");
        let c = cli.wait(SHORT);
        assert_eq!(c.code, Some(2));
        assert!(
            c.one_line().contains("peer closed the control connection during") && mid_run_phase(&c.stderr),
            "{}",
            c.stderr
        );
    }
}

#[test]
fn bad_serve_options_and_busy_port() {
    expect_failure(&["serve", "-p", "70000"], 1, "fabdiag serve: Invalid port: 70000");
    expect_failure(&["serve", "host"], 1, "fabdiag serve: Unexpected argument: host");
    expect_failure(
        &["serve", "--poll", "nap"],
        1,
        "fabdiag serve: Invalid poll mode: nap. Must be spin or yield",
    );
    let h = run(&["serve", "-h"], SHORT);
    assert_eq!(h.code, Some(0));
    assert!(
        h.stdout.starts_with("Usage:\n  fabdiag serve [-p PORT]"),
        "{}",
        h.stdout
    );
    let l = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    expect_failure(&["serve", "-p", &port], 2, "port already in use");
}

#[test]
fn provider_and_domain_limits_apply_to_every_test() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    let mut proc = Proc::spawn(&mut fabdiag(&["serve", "-p", &p, "-P", "shm", "--json"]));
    wait_listening(&mut proc, "127.0.0.1", port);
    let s = Serve { proc, port };
    s.wait_lines(1);
    // (a full name, as `-P tcp` is 'tcp;ofi_rxm' in 1.17 and 'tcp' in 2.x)
    let tcp = providers_here()
        .iter()
        .filter_map(|p| p["provider"].as_str())
        .find(|p| core_provider(p) == "tcp")
        .expect("a tcp provider");
    let o = s.client(&["write-bw", "-n", "5", "-P", tcp]);
    failed_with(
        &o,
        2,
        &format!("peer failed during config: provider mismatch: the client uses '{tcp}', this server was given -P shm"),
    );
    let o = s.client(&["send-lat", "-n", "5", "-P", "shm"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = s.wait_lines(3);
    assert_eq!(lines[2]["config"]["provider"], "shm");
    s.stop(Signal::SIGTERM);
}

/// `serve -r 0` puts its RX buffer on the GPU for every test that can use
/// one (the GPU plumbing's hook: host memory through the device path), the
/// client's banner says so, the atomic tests (no GPU options) still run
/// from system memory, and a provider without FI_HMEM is "unavailable" at
/// the client with the server's reason.
#[test]
fn gpu_buffers_on_the_server_side() {
    let _cpu = cpu();
    let s = Serve::start_with(&["-r", "0"], &[("FABDIAG_TEST_HOST_AS_GPU", "1")]);
    for tool in ["write-bw", "send-lat"] {
        let o = s.client(&[tool, "-P", "shm", "-n", "5", "-s", "4096"]);
        assert_eq!(o.code, Some(0), "{tool}: {}", o.stderr);
        assert!(
            o.stdout
                .contains("Client TX Mem    : System\nServer RX Mem    : GPU 0\nServer GPU Type  : NVIDIA\n"),
            "{tool}:\n{}",
            o.stdout
        );
    }
    let o = s.client(&["atomic-bw", "-P", "shm", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    if let Some(p) = provider_without_hmem() {
        let o = s.client(&["write-bw", "-P", p, "-n", "5"]);
        failed_with(
            &o,
            4,
            &format!("peer failed during config: provider '{p}' cannot run this test: it lacks RMA write with device memory (FI_HMEM)"),
        );
        let lines = s.wait_lines(5);
        assert_eq!(lines[4]["error"]["kind"], "unavailable", "{}", lines[4]);
    }
    let o = s.stop(Signal::SIGTERM);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// Without a GPU runtime, `serve -t` stops before listening, as a tool's
/// server does: one line, exit 4.
#[test]
fn serve_without_a_gpu_runtime_is_unavailable() {
    if fabdiag_gpu::discover().is_ok() {
        skipped("a GPU runtime loads here; the missing-runtime path needs a machine without one");
        return;
    }
    let o = run(&["serve", "-p", "0", "-t", "0"], SHORT);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(
        o.one_line()
            .starts_with("fabdiag serve: -t/-r ask for GPU memory but no GPU runtime loads here ("),
        "{}",
        o.stderr
    );
    let o = run(&["serve", "-p", "0", "-g", "amd", "-r", "300"], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(o.one_line(), "fabdiag serve: Invalid dest gpu device: 300");
}

/// A hostile crowd in front of an honest client: 200 connections opened
/// and held silent, 40 sending half a frame header, 20 a frame that never
/// completes, 20 random bytes, and 100 whole frames that are no hello
/// (a payload that is not JSON, a barrier, a hello with another magic).
/// The honest client that arrives while all of them are still held is
/// served: before, the first silent connection took the one test slot and
/// everyone after it was told the server was busy, and later each whole
/// frame took the slot in turn (a worker started to refuse it) while the
/// client was told the same. Every crowd connection ends in its own line,
/// the strangers' at once and the silent ones once the hello limit
/// passes, and the server's descriptors and memory come back.
#[test]
fn an_honest_client_is_served_through_a_hostile_crowd() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let pid = s.proc.pid();
    let (rss0, fds0) = footprint(pid);
    let mut crowd = Vec::new();
    let mut seed = 0x9e37_79b9u32;
    let mut random = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                seed as u8
            })
            .collect()
    };
    let mut other_magic: Value = serde_json::from_slice(&hello("cxi_write_bw", VERSION)).unwrap();
    other_magic["magic"] = "fabdiag-contro1".into();
    let other_magic = serde_json::to_vec(&other_magic).unwrap();
    for k in 0..380 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        match k {
            0..200 => {}
            200..240 => c.write_all(b"\x00\x00").unwrap(),
            240..260 => c.write_all(b"\x00\x00\x01\x00{\"type\":\"hel").unwrap(),
            260..280 => {
                let _ = c.write_all(&random(64));
            }
            280..330 => frame(&mut c, &[b"\xff".as_slice(), &random(7)].concat()),
            330..355 => frame(&mut c, br#"{"type":"barrier","phase":"ready","size":null}"#),
            _ => frame(&mut c, &other_magic),
        }
        crowd.push(c);
    }
    // it arrives while the crowd holds its connections, well inside their
    // hello limit: before, it was told the server was busy
    let o = s.client(&["send-lat", "-n", "3", "--warmup", "0", "--latency-gap", "0"]);
    assert_eq!(o.code, Some(0), "the honest client: {}", o.stderr);
    let (rss1, fds1) = footprint(pid);
    assert!(fds1 >= fds0 + 200, "the crowd is held: {fds0} -> {fds1} descriptors");
    // each crowd connection ends in one line, as do the probe and the
    // client; each stranger's says what it sent
    let lines = s.wait_lines(1 + 380 + 1);
    let said = |what: &str| {
        lines
            .iter()
            .filter(|l| l["error"]["message"].as_str().is_some_and(|m| m.contains(what)))
            .count()
    };
    assert_eq!(said("undecodable control message"), 50);
    assert_eq!(said("first message was 'barrier', not a fabdiag hello"), 25);
    assert_eq!(said("first message was 'hello', not a fabdiag hello"), 25);
    let unheard = lines
        .iter()
        .filter(|l| {
            l["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no fabdiag hello within 5 s"))
        })
        .count();
    assert!(unheard >= 260, "{unheard} connections let go unheard");
    drop(crowd);
    let t1 = Instant::now();
    loop {
        let (_, fds) = footprint(pid);
        if fds <= fds0 + 2 {
            break;
        }
        assert!(t1.elapsed() < SHORT, "descriptors still held: {fds0} -> {fds}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        rss1 < rss0 + 64 * 1024,
        "memory grew from {rss0} kB to {rss1} kB with the crowd"
    );
    let out = s.stop(Signal::SIGINT);
    assert_eq!(out.code, Some(0));
}

/// A config frame of write-bw asking for `max_size` bytes of buffer and,
/// with `duration_s`, that many seconds per size.
fn config_asking(max_size: u64, duration_s: Option<u64>) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"type": "config", "params": {
        "tool": "cxi_write_bw", "provider": "tcp;ofi_rxm", "iterations": 10, "duration_s": duration_s,
        "min_size": max_size, "max_size": max_size, "list_size": 1, "bidirectional": false, "use_idc": true,
        "use_hrp": true, "unrestricted": false, "rdzv": false, "max_buf": max_size, "buf_align": 64,
        "hugepages": null}}))
    .unwrap()
}

#[test]
fn limits_refuse_what_a_client_asks_beyond_them_in_one_line() {
    let _cpu = cpu();
    let s = Serve::start_with(&["--max-memory", "1M", "--max-test-seconds", "2"], &[]);
    // more buffer than allowed: the client's one line names the figure,
    // the limit and the option, and it exits as for a peer that cannot
    let o = s.client(&["write-bw", "-P", "tcp", "-s", "4194304", "-n", "2"]);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag write-bw: peer failed during config: this server allows a test at most 1 MiB of buffers (fabdiag serve --max-memory); this one needs 1 GiB"
    );
    // a duration run longer than allowed (2 sizes of 2 s)
    let o = s.client(&["send-lat", "-P", "tcp", "-D", "2", "-s", "8:16"]);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(
        one_line(&o.stderr)
            .ends_with("this server runs a test at most 2 s (fabdiag serve --max-test-seconds); this one asks for 4 s"),
        "{}",
        o.stderr
    );
    // within the limits: served
    let o = s.client(&["write-lat", "-P", "tcp", "-n", "20"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = s.wait_lines(4);
    assert!(
        lines[1]["error"]["message"].as_str().unwrap().contains("--max-memory"),
        "{}",
        lines[1]
    );
    assert!(lines[2]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--max-test-seconds"));
    assert!(lines[3]["error"].is_null(), "{}", lines[3]);
    // an iteration run has no length to judge in advance: it is ended at
    // twice the limit, the server's line says why, and the next is served
    let t0 = Instant::now();
    let o = s.client(&["write-lat", "-P", "tcp", "-n", "1000000"]);
    let took = t0.elapsed();
    assert_ne!(o.code, Some(0), "{}", o.stdout);
    assert!(took < Duration::from_secs(10), "ended after {took:?}");
    let lines = s.wait_lines(5);
    let ended = lines[4]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        ended.starts_with("ended by the server during ")
            && ended.ends_with("limit of 2 s (fabdiag serve --max-test-seconds)"),
        "{}",
        lines[4]
    );
    let o = s.client(&["send-lat", "-P", "tcp", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(s.stop(Signal::SIGTERM).code, Some(0));
}

/// Clients refused by the limits in a row: 100 here (each costs a worker's
/// libfabric start-up, 0.37 s); scripts/dev/demos/serve-limits.sh runs more
/// with FABDIAG_TEST_REFUSED_CLIENTS (docs/results/serve.md).
fn refused_clients() -> u64 {
    std::env::var("FABDIAG_TEST_REFUSED_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 10)
        .unwrap_or(100)
}

#[test]
fn clients_beyond_the_limits_leave_the_server_as_it_was() {
    let _cpu = cpu();
    let total = refused_clients();
    let s = Serve::start_with(&["--max-memory", "64K", "--max-test-seconds", "5"], &[]);
    let mut n = 1;
    let refuse = |k: u64| {
        let mut c = scripted::client(s.port, "cxi_write_bw");
        // alternately: a GiB of buffer, and an hour of duration
        let ask = if k.is_multiple_of(2) {
            config_asking(1 << 30, None)
        } else {
            config_asking(8, Some(3600))
        };
        frame(&mut c, &ask);
        let reply = read_frame(&mut c).expect("the refusal");
        assert_eq!(reply["type"], "error", "{reply}");
        assert_eq!(reply["kind"], "unavailable", "{reply}");
        n += 1;
        s.wait_lines(n);
    };
    leaves_no_trace(s.proc.pid(), "refusals", total, refuse);
    let lines = s.lines();
    assert_eq!(lines.len() as u64, total + 1);
    assert!(lines[1..].iter().all(|l| l["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("this server")));
    // nothing of them is left: one warm spare, and an honest client served
    let _ = warm_spare(s.proc.pid());
    let o = s.client(&["send-lat", "-P", "tcp", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(s.stop(Signal::SIGTERM).code, Some(0));
}

#[test]
fn a_client_starting_too_many_tests_a_minute_is_turned_away_and_others_are_not() {
    let _cpu = cpu();
    let s = Serve::start_with(&["--max-tests-per-minute", "2"], &[]);
    for _ in 0..2 {
        let o = s.client(&["send-lat", "-P", "tcp", "-n", "5"]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    let o = s.client(&["send-lat", "-P", "tcp", "-n", "5"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    let line = one_line(&o.stderr);
    assert!(
        line.starts_with("fabdiag send-lat: peer failed during hello: 127.0.0.1 started 2 tests in the last minute")
            && line.contains("--max-tests-per-minute"),
        "{line}"
    );
    // another address (loopback's 127.0.0.2) has its own count: its
    // hello is answered, and its test taken
    let other = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    other
        .bind(&"127.0.0.2:0".parse::<std::net::SocketAddr>().unwrap().into())
        .unwrap();
    other
        .connect(&std::net::SocketAddr::from(([127, 0, 0, 1], s.port)).into())
        .unwrap();
    let mut other = TcpStream::from(other);
    frame(&mut other, &hello("cxi_send_lat", VERSION));
    let reply = read_frame(&mut other).expect("the hello's answer");
    assert_eq!(reply["type"], "hello", "{reply}");
    drop(other);
    let lines = s.wait_lines(5);
    assert!(
        lines[4]["peer"].as_str().unwrap().starts_with("127.0.0.2:"),
        "{}",
        lines[4]
    );
    // a crowd of refusals costs the server nothing that stays
    leaves_no_trace(s.proc.pid(), "refused hellos", 200, |_| {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        frame(&mut c, &hello("cxi_send_lat", VERSION));
        let reply = read_frame(&mut c).expect("the refusal");
        assert!(
            reply["message"]
                .as_str()
                .unwrap_or_default()
                .contains("--max-tests-per-minute"),
            "{reply}"
        );
    });
    s.wait_lines(205);
    assert!(s.lines()[5..].iter().all(|l| l["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("turned away")));
    assert_eq!(s.stop(Signal::SIGTERM).code, Some(0));
}

#[test]
fn an_upgraded_program_file_still_serves_and_a_missing_one_is_said() {
    let _cpu = cpu();
    // a copy of fabdiag served from a folder of its own, as /usr/bin's
    let dir = tempfile::tempdir().expect("a folder");
    let exe = dir.path().join("fabdiag");
    std::fs::copy(bin(), &exe).expect("a copy of fabdiag");
    let port = free_port();
    let mut p = Proc::spawn(Command::new(&exe).args(["serve", "-p", &port.to_string()]));
    wait_listening(&mut p, "127.0.0.1", port);
    let client = || {
        run(
            &["write-bw", "127.0.0.1", "-p", &port.to_string(), "-P", "tcp", "-n", "5"],
            LIMIT,
        )
    };
    assert_eq!(client().code, Some(0));
    // replaced as dpkg replaces a file: a new one renamed over it
    let new = dir.path().join("fabdiag.dpkg-new");
    std::fs::copy(bin(), &new).expect("another copy");
    std::fs::rename(&new, &exe).expect("renamed over");
    for _ in 0..2 {
        let o = client();
        assert_eq!(o.code, Some(0), "after the upgrade: {}", o.stderr);
    }
    // gone: a spare already started may serve one more client (whether
    // it had started when the file went is the machine's timing); the
    // next is told why in one line, and the server keeps listening
    std::fs::remove_file(&exe).expect("removed");
    let mut o = client();
    if o.code == Some(0) {
        o = client();
    }
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).contains("this server cannot start a worker process for the test: No such file"),
        "{}",
        o.stderr
    );
    assert!(p.alive(), "{}", p.stderr_now());
    p.signal(Signal::SIGTERM);
    assert_eq!(p.wait(SHORT).code, Some(0));
}

/// The shipped unit, its ExecStart pointed at the binary under test.
fn unit_for() -> String {
    let unit = shipped_unit("fabdiag-serve.service");
    assert!(unit.contains(" serve $FABDIAG_SERVE_ARGS"), "{unit}");
    unit
}

#[test]
fn the_service_unit_verifies_and_its_default_options_serve() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fabdiag-serve.service");
    std::fs::write(&path, unit_for()).unwrap();
    systemd_verify(&path).unwrap_or_else(|said| panic!("{said}"));
    // the guide's drop-in for a shared key, as one unit, checked the same way
    let keyed = dir.path().join("fabdiag-serve-keyed.service");
    let with_key = unit_for().replace(
        "ExecStart=",
        "LoadCredential=auth-key:/etc/fabdiag/auth.key\nEnvironment=FABDIAG_SERVE_KEY=--auth-key=%d/auth-key\nExecStart=",
    );
    std::fs::write(
        &keyed,
        with_key.replace("$FABDIAG_SERVE_ARGS", "$FABDIAG_SERVE_ARGS $FABDIAG_SERVE_KEY"),
    )
    .unwrap();
    systemd_verify(&keyed).unwrap_or_else(|said| panic!("{said}"));
    // a key it does not know is caught that way
    let bad = dir.path().join("bad.service");
    std::fs::write(&bad, unit_for().replace("NoNewPrivileges=", "NoNewPrivilegez=")).unwrap();
    assert!(systemd_verify(&bad).is_err_and(|said| said.contains("Unknown key")));
    assert_hardened(&unit_for());
    // the options file's limits are options serve takes, and serve with them
    let args = shipped_args("fabdiag-serve.default", "FABDIAG_SERVE_ARGS");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(
        args.contains(&"--max-memory") && args.contains(&"--max-tests-per-minute"),
        "{args:?}"
    );
    let _cpu = cpu();
    let s = Serve::start_with(&args, &[]);
    let o = s.client(&["write-bw", "-P", "tcp", "-n", "5"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(s.stop(Signal::SIGTERM).code, Some(0));
}

/// A worker, which serves one test and ends, measures on a descriptor
/// table its helper threads do not share (as a pair tool's server does,
/// `lat::both_sides_measure_on_a_descriptor_table_of_their_own`).
#[test]
fn a_worker_measures_on_a_descriptor_table_of_its_own() {
    let _cpu = cpu();
    let s = Serve::start(&[]);
    let spare = warm_spare(s.proc.pid());
    // waiting: its helpers (the stuck-call guard) share its table
    let (own, h) = on_a_table_of_its_own(spare, 1);
    assert!(!own && !h.is_empty(), "a waiting worker's helpers: {h:?}");
    let p = s.port.to_string();
    let client = busy_send_lat(&p);
    // (the stuck-call guard, control reader and heartbeat)
    let seen = wait_on_tables_of_their_own(&[(spare, 3)]).remove(0);
    let c = client.wait(LIMIT);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert!(
        seen.0,
        "the worker's helpers, sharing its measuring thread's table: {:?}",
        seen.1
    );
    let lines = s.wait_lines(2);
    assert!(lines[1]["error"].is_null(), "{}", lines[1]);
    s.stop(Signal::SIGTERM);
}
