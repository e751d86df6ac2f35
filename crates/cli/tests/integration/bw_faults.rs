//! Bad input and faults: each must end in one clear line on stderr and a
//! non-zero exit within seconds, never a hang or a panic.

use crate::common::scripted::{config_frame, frame, hello, read_frame, VERSION};
use crate::common::*;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

#[test]
fn invalid_options_exit_1_with_the_originals_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["write-bw", "-s", "0"], "fabdiag write-bw: Invalid size: 0"),
        (
            &["write-bw", "-s", "3:8"],
            "fabdiag write-bw: Invalid size: 3:8 (ranges must be powers of 2)",
        ),
        (
            &["write-bw", "-l", "65537"],
            "fabdiag write-bw: Invalid list size: 65537",
        ),
        (&["write-bw", "-p", "70000"], "fabdiag write-bw: Invalid port: 70000"),
        (&["read-bw", "-n", "-1"], "fabdiag read-bw: Invalid iteration count: -1"),
        (&["send-bw", "-D", "x"], "fabdiag send-bw: Invalid duration: x"),
        (
            &["send-bw", "--use-hp", "3M"],
            "fabdiag send-bw: Invalid hugepage type: 3M. Must be 2M or 1G",
        ),
        (
            &["write-bw", "--buf-sz", "100", "-s", "128"],
            "fabdiag write-bw: Max RDMA buffer size (100) < max write size (128)!",
        ),
        (&["write-bw", "a", "b"], "fabdiag write-bw: Unexpected argument: b"),
        (
            &["write-bw", "--frobnicate"],
            "fabdiag write-bw: unrecognized option '--frobnicate' (see -h)",
        ),
        (
            &["read-bw", "--no-hrp"],
            "fabdiag read-bw: unrecognized option '--no-hrp' (see -h)",
        ),
        (
            &["write-bw", "-s"],
            "fabdiag write-bw: option requires an argument -- 's' (see -h)",
        ),
    ];
    for (args, want) in cases {
        let o = run(args, Duration::from_secs(10));
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert_eq!(one_line(&o.stderr), *want, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn arguments_that_are_not_utf8_are_one_line_errors() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bad = OsStr::from_bytes(b"\xff\xfe");
    for (args, want) in [
        (
            vec![OsStr::new("write-bw"), OsStr::new("127.0.0.1"), OsStr::new("-s"), bad],
            "fabdiag write-bw: invalid argument \"\\xFF\\xFE\": not valid UTF-8",
        ),
        (
            vec![OsStr::new("send-lat"), bad, OsStr::new("--json")],
            "fabdiag send-lat: invalid argument \"\\xFF\\xFE\": not valid UTF-8",
        ),
        (
            vec![bad],
            "fabdiag: unknown command '\u{fffd}\u{fffd}' (try fabdiag -h)",
        ),
        (
            vec![OsStr::new("serve"), OsStr::new("-P"), bad],
            "fabdiag serve: invalid argument \"\\xFF\\xFE\": not valid UTF-8",
        ),
    ] {
        let o = Proc::spawn(std::process::Command::new(bin()).args(&args)).wait(SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert_eq!(o.one_line(), want);
        if args.contains(&OsStr::new("--json")) {
            assert_eq!(o.json()["error"]["kind"], "usage");
        }
    }
}

#[test]
fn gpu_and_emulation_options_are_refused_as_unavailable() {
    let o = run(&["read-bw", "--emu-mode"], Duration::from_secs(10));
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    one_line(&o.stderr);
    if fabdiag_gpu::discover().is_ok() {
        skipped("a GPU runtime loads here; the missing-runtime messages cannot be shown");
        return;
    }
    // each missing piece names itself, before any connection is tried
    for (args, want) in [
        (
            &["write-bw", "h", "-t", "0"][..],
            "-t/-r ask for GPU memory but no GPU runtime loads here (AMD libamdhip64.so: ",
        ),
        (
            &["send-bw", "h", "-r", "1", "-g", "Nvidia"],
            "-g NVIDIA: cannot load its runtime libcuda.so.1 (",
        ),
        (
            &["read-bw", "-t", "0", "-g", "intel"],
            "-g INTEL: cannot load its runtime libze_loader.so.1 (",
        ),
        (
            &["gpu-loopback-bw", "-r", "0", "-g", "amd", "--json"],
            "-g AMD: cannot load its runtime libamdhip64.so (",
        ),
    ] {
        let o = run(args, Duration::from_secs(10));
        assert_eq!(o.code, Some(4), "{args:?}: {}", o.stderr);
        let line = one_line(&o.stderr);
        assert!(line.contains(want), "{args:?}: {line}");
        if args.contains(&"--json") {
            assert_eq!(o.json()["error"]["kind"], "unavailable");
        }
    }
}

/// `-g` alone asks for no GPU buffer: the run uses system memory, as the
/// originals' did (they load a GPU runtime only for -t or -r).
#[test]
fn a_gpu_type_alone_runs_on_system_memory() {
    let o = run(
        &[
            "write-bw", "--local", "-P", "shm", "-n", "2", "-s", "4096", "-g", "Nvidia",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("Client TX Mem    : System\nServer RX Mem    : System\n"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("GPU"), "{}", o.stdout);
}

#[test]
fn json_is_valid_even_for_bad_options() {
    let o = run(&["write-bw", "-s", "0", "--json"], Duration::from_secs(10));
    assert_eq!(o.code, Some(1));
    let j = o.json();
    assert_eq!(j["error"]["kind"], "usage");
    assert_eq!(j["error"]["message"], "Invalid size: 0");
}

#[test]
fn help_and_version() {
    let h = run(&["send-bw", "-h"], Duration::from_secs(10));
    assert_eq!(h.code, Some(0));
    assert!(h.stdout.starts_with("Usage:\n  fabdiag send-bw [-d DEV] [-p PORT]\n"));
    assert!(h.stdout.contains("  -R, --rdzv             Use rendezvous PUTs\n"));
    assert!(h.stdout.contains("  -P, --provider=PROV    "));
    let v = run(&["write-bw", "-V"], Duration::from_secs(10));
    assert_eq!(
        v.stdout,
        format!("fabdiag write-bw version: {}\n", env!("CARGO_PKG_VERSION"))
    );
    let top = run(&[], Duration::from_secs(10));
    assert_eq!(top.code, Some(0));
    assert!(top.stdout.contains("write-bw"));
    let bad = run(&["frobnicate"], Duration::from_secs(10));
    assert_eq!(bad.code, Some(1));
}

#[test]
fn original_names_through_a_symlink() {
    let dir = std::env::temp_dir().join(format!("fabdiag-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("cxi_read_bw");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let o = Proc::spawn(std::process::Command::new(&link).args(["-s", "0"])).wait(Duration::from_secs(10));
    assert_eq!(one_line(&o.stderr), "cxi_read_bw: Invalid size: 0");
    let v = Proc::spawn(std::process::Command::new(&link).arg("-V")).wait(Duration::from_secs(10));
    assert!(v.stdout.starts_with("cxi_read_bw version: "));
    let h = Proc::spawn(std::process::Command::new(&link).arg("-h")).wait(Duration::from_secs(10));
    assert!(h
        .stdout
        .contains("  -s, --size=MIN[:MAX]   Read size or range to use (default: 65536)\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_server_listening() {
    let port = free_port().to_string();
    let o = run(&["write-bw", "127.0.0.1", "-p", &port], Duration::from_secs(10));
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains(&format!("no server listening on 127.0.0.1:{port}")),
        "{}",
        o.stderr
    );
}

#[test]
fn unresolvable_host() {
    let o = run(&["write-bw", "no-such-host.invalid"], Duration::from_secs(30));
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("cannot resolve server address 'no-such-host.invalid'"),
        "{}",
        o.stderr
    );
}

#[test]
fn port_in_use() {
    let l = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let o = run(&["write-bw", "-p", &port], Duration::from_secs(10));
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains(&format!("cannot listen on TCP port {port}: port already in use")),
        "{}",
        o.stderr
    );
}

#[test]
fn unknown_provider_and_domain_are_unavailable() {
    let o = run(&["write-bw", "127.0.0.1", "-P", "nosuchprov"], Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
    let l = one_line(&o.stderr);
    assert!(
        l.contains("no libfabric provider named 'nosuchprov'") && l.contains("tcp"),
        "{l}"
    );
    let o = run(
        &["read-bw", "127.0.0.1", "-P", "tcp", "-d", "mlx5_0"],
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(4));
    assert!(one_line(&o.stderr).contains("has no domain 'mlx5_0'"), "{}", o.stderr);
    // --local checks before starting a server that would wait forever
    let o = run(&["send-bw", "--local", "-P", "nosuchprov"], Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
}

#[test]
fn missing_libfabric_is_explained() {
    let o = Proc::spawn(fabdiag(&["write-bw", "--local"]).env("FABDIAG_LIBFABRIC", "/nonexistent/libfabric.so.1"))
        .wait(Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
    let l = one_line(&o.stderr);
    // the hint names where the path came from, not a package to install
    assert!(
        l.contains("cannot load libfabric")
            && l.contains("FABDIAG_LIBFABRIC=/nonexistent/libfabric.so.1 names it")
            && !l.contains("apt-get"),
        "{l}"
    );
    // set but empty is unset: the system's libfabric (dlopen("") would
    // have opened fabdiag itself and found no fi_getinfo)
    let o =
        Proc::spawn(fabdiag(&["write-bw", "--local", "-n", "2", "-s", "8"]).env("FABDIAG_LIBFABRIC", "")).wait(LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn a_provider_hidden_by_fi_provider_is_said_to_be() {
    let o = Proc::spawn(fabdiag(&["write-bw", "--local", "-P", "shm"]).env("FI_PROVIDER", "tcp"))
        .wait(Duration::from_secs(10));
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    let l = one_line(&o.stderr);
    assert!(
        l.contains("no libfabric provider named 'shm'") && l.contains("with FI_PROVIDER=tcp set"),
        "{l}"
    );
    // without the variable the message says nothing of it
    let o = run(&["write-bw", "--local", "-P", "nosuchprov"], Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
    assert!(!one_line(&o.stderr).contains("FI_PROVIDER"), "{}", o.stderr);
}

#[test]
fn server_rejects_strangers_and_stays_sane() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p], port);
    // HTTP, random bytes, a huge announced length, valid JSON that is not
    // a hello, and a fabdiag of another version: all turned away
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    drop(s);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3]).unwrap();
    drop(s);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    frame(&mut s, br#"{"type":"heartbeat"}"#);
    drop(s);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    frame(&mut s, &hello("cxi_write_bw", "9.9.0"));
    let reply = read_frame(&mut s).expect("the server answers a fabdiag peer");
    assert_eq!(reply["type"], "hello");
    let err = read_frame(&mut s).expect("then says why it refuses");
    assert_eq!(err["type"], "error");
    assert!(
        err["message"].as_str().unwrap().contains("versions do not match"),
        "{err}"
    );
    drop(s);
    // a real client still gets served
    let c = run(&["write-bw", "127.0.0.1", "-p", &p, "-n", "5"], LIMIT);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let s = srv.wait(LIMIT);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    let rejections = s
        .stderr
        .lines()
        .filter(|l| l.contains("rejected connection from 127.0.0.1"))
        .count();
    assert!(rejections >= 5, "{}", s.stderr);
    no_panic(&s);
}

#[test]
fn client_refuses_other_versions_tools_and_strangers() {
    let _cpu = cpu();
    let port = scripted::server(|mut s| {
        let _ = read_frame(&mut s);
        frame(&mut s, &hello("cxi_write_bw", "9.9.0"));
        std::thread::sleep(Duration::from_secs(2));
    });
    let o = run(
        &["write-bw", "127.0.0.1", "-p", &port.to_string()],
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("Client and server program versions do not match!"),
        "{}",
        o.stderr
    );

    let port = scripted::server(|mut s| {
        let _ = read_frame(&mut s);
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
        std::thread::sleep(Duration::from_secs(2));
    });
    let o = run(
        &["write-bw", "127.0.0.1", "-p", &port.to_string()],
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("not a fabdiag control endpoint"),
        "{}",
        o.stderr
    );

    // a port that accepts and then says nothing: refused within seconds
    let port = scripted::server(|_s| std::thread::sleep(Duration::from_secs(15)));
    let o = run(
        &["write-bw", "127.0.0.1", "-p", &port.to_string()],
        Duration::from_secs(12),
    );
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("no fabdiag hello within 5 s"),
        "{}",
        o.stderr
    );
    assert!(o.elapsed < Duration::from_secs(8));

    // the real server, but another tool
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p], port);
    let o = run(&["read-bw", "127.0.0.1", "-p", &p], Duration::from_secs(10));
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("Client and server program names do not match!"),
        "{}",
        o.stderr
    );
    drop(srv);
}

#[test]
fn server_side_failure_reaches_the_client() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    // shm's domain exists, but not for the client's tcp: the server finds
    // out only from the client's config
    let srv = server(&["write-bw", "-p", &p, "-d", "shm"], port);
    let c = run(&["write-bw", "127.0.0.1", "-p", &p, "-P", "tcp"], LIMIT);
    let s = srv.wait(LIMIT);
    // the server lacks what it was asked for: unavailable at both ends
    assert_eq!(c.code, Some(4), "{}", c.stderr);
    let l = one_line(&c.stderr);
    assert!(
        l.contains("peer failed during config") && l.contains("has no domain 'shm'"),
        "{l}"
    );
    assert_eq!(s.code, Some(4), "{}", s.stderr);

    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p, "-P", "shm"], port);
    let c = run(&["write-bw", "127.0.0.1", "-p", &p, "-P", "tcp"], LIMIT);
    let s = srv.wait(LIMIT);
    assert_eq!(c.code, Some(2));
    assert!(one_line(&c.stderr).contains("provider mismatch"), "{}", c.stderr);
    assert_eq!(s.code, Some(2));
}

/// A server given a provider or domain this machine lacks says so before
/// it listens (the originals open their device before any TCP activity),
/// instead of waiting for a client to fail: the pair tools' servers and
/// `fabdiag serve` alike.
#[test]
fn a_server_checks_its_provider_and_domain_before_listening() {
    for (args, says) in [
        (
            &["write-bw", "-d", "no-such-domain"][..],
            "provider 'any' has no domain 'no-such-domain'",
        ),
        (
            &["send-lat", "-P", "nosuchprov"][..],
            "no libfabric provider named 'nosuchprov'",
        ),
        (
            &["serve", "-P", "tcp", "-d", "shm"][..],
            "provider 'tcp' has no domain 'shm'",
        ),
        (&["serve", "-d", "no-such-domain"][..], "has no domain 'no-such-domain'"),
    ] {
        let port = free_port();
        let p = port.to_string();
        let o = run(&[args, &["-p", &p]].concat(), SHORT);
        assert_eq!(o.code, Some(4), "{args:?}: {}", o.stderr);
        assert!(o.one_line().contains(says), "{args:?}: {}", o.stderr);
        assert!(!o.stdout.contains("Listening"), "{args:?}: {}", o.stdout);
    }
}

#[test]
fn killed_server_is_noticed_by_the_client() {
    let _cpu = cpu();
    for tool in ["write-bw", "send-bw"] {
        let (o, took) = mid_run(tool, true, Signal::SIGKILL, &[]);
        assert_eq!(o.code, Some(2), "{tool}");
        assert!(
            o.stderr.contains("peer closed the control connection during") && mid_run_phase(&o.stderr),
            "{tool}: {}",
            o.stderr
        );
        assert!(took < Duration::from_secs(3), "{tool}: {took:?}");
    }
}

#[test]
fn killed_client_is_noticed_by_the_server() {
    let _cpu = cpu();
    for (tool, extra) in [
        ("write-bw", &[][..]),
        ("read-bw", &["-b"][..]),
        ("send-bw", &["-b"][..]),
    ] {
        let (o, took) = mid_run(tool, false, Signal::SIGKILL, extra);
        assert_eq!(o.code, Some(2), "{tool}");
        assert!(mid_run_phase(&o.stderr), "{tool}: {}", o.stderr);
        assert!(took < Duration::from_secs(3), "{tool}: {took:?}");
    }
}

/// How a line about a run that ended early counts what it measured.
fn measured_note(sizes: usize) -> String {
    match sizes {
        1 => "(1 size measured)".to_string(),
        n => format!("({n} sizes measured)"),
    }
}

/// A write-bw server, and its JSON client over tcp (7 sizes, 1 KiB to 64
/// KiB, 50 iterations) whose 50,000th data call the test hook holds inside
/// for good, as psm3 holds one whose peer is gone (a whole run makes more:
/// its 89,600 writes alone).
fn server_and_held_client() -> (Proc, Proc) {
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p], port);
    let mut args = tcp_write_client(&p, "1024:65536", "50");
    args.push("--json");
    let cli = Proc::spawn(fabdiag(&args).env("FABDIAG_TEST_STALL_DATA_CALL", "50000"));
    (srv, cli)
}

/// A write-bw client of the server on `port` over tcp: these sizes, this
/// many iterations.
fn tcp_write_client<'a>(port: &'a str, sizes: &'a str, iterations: &'a str) -> Vec<&'a str> {
    vec![
        "write-bw",
        "127.0.0.1",
        "-p",
        port,
        "-P",
        "tcp",
        "-s",
        sizes,
        "-n",
        iterations,
    ]
}

/// Ctrl-C (or a batch system's SIGTERM) during a long run keeps what was
/// measured: one line saying so, the JSON document with every finished
/// size and `error.kind` "interrupted", the text rows already printed;
/// then the process dies by the signal, as it would without fabdiag's
/// watcher. The server, whose client vanished, says so as for a kill.
#[test]
fn a_stopped_client_keeps_the_sizes_it_measured() {
    let _cpu = cpu();
    for (sig, json) in [(Signal::SIGINT, true), (Signal::SIGTERM, false)] {
        let port = free_port();
        let p = port.to_string();
        let mut srv = server(&["write-bw", "-p", &p], port);
        let mut args = tcp_write_client(&p, "1:1048576", "20");
        if json {
            args.push("--json");
        }
        let cli = Proc::spawn(&mut fabdiag(&args));
        // the server prints a row when the client has finished that size
        let rows = |out: &str| {
            out.lines()
                .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
                .count()
        };
        srv.wait_for("three rows", LIMIT, |out, _| rows(out) >= 3);
        cli.signal(sig);
        let c = cli.wait(LIMIT);
        assert_eq!((c.code, c.signal), (None, Some(sig as i32)), "{sig}: {}", c.stderr);
        let line = c.one_line();
        assert!(line.contains(&format!("stopped by {sig} during run (")), "{line}");
        let measured = if json {
            let doc = c.json();
            assert_eq!(doc["error"]["kind"], "interrupted", "{doc}");
            assert_eq!(doc["config"]["max_size_bytes"], 1048576, "{doc}");
            doc["results"].as_array().unwrap().len()
        } else {
            rows(&c.stdout)
        };
        // the server prints size k's row on the client's results for k, and
        // the client keeps its row for k once it has the server's, so it
        // may be a row behind: it had begun size 3, so finished size 2
        assert!(measured >= 2, "{sig}: {measured} sizes kept");
        assert!(line.ends_with(&measured_note(measured)), "{line}");
        let s = srv.wait(LIMIT);
        assert_eq!(s.code, Some(2), "{}", s.stderr);
        assert!(mid_run_phase(&s.stderr), "{}", s.stderr);
    }
}

/// A provider call that never returns (psm3's fi_writemsg polls inside
/// for a peer that is gone, and the session's own limits run
/// only between calls), made here by the test hook that keeps the
/// client's 50,000th data call inside (a whole run makes more: its 89,600
/// writes alone): the client says which call of which provider, keeps the
/// sizes it finished and exits 2 soon after the guard's 10 s; the server
/// then sees the client go.
#[test]
fn a_provider_call_that_never_returns_ends_the_run_keeping_what_was_measured() {
    let _cpu = cpu();
    let (srv, cli) = server_and_held_client();
    let c = cli.wait(LIMIT);
    // (from the client's start)
    let took = c.elapsed;
    let line = failed_with(&c, 2, "has not returned from fi_");
    assert!(
        line.contains("provider 'tcp") && line.contains(" for 10 s during run ("),
        "{line}"
    );
    assert!(
        line.ends_with(" measured): it waits inside the call, for a peer or a link that is gone"),
        "{line}"
    );
    let doc = c.json();
    assert_eq!(doc["error"]["kind"], "runtime", "{doc}");
    let measured = doc["results"].as_array().unwrap().len();
    assert!(measured < 7, "the whole run finished: {doc}");
    assert!(line.contains(&measured_note(measured)), "{line}");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(25),
        "{took:?}"
    );
    let s = srv.wait(LIMIT);
    assert_eq!(s.code, Some(2), "{}", s.stderr);
}

/// A working provider may hold one call for as long as its batch takes to
/// move (shm 1.17 posts under its peer's lock, which the peer's progress
/// holds while it copies every queued write in full: with 256 writes of
/// 1 GiB, over 10 s). So a call is stuck only after twice the session's
/// limit for its batch: the same 12 s hold (the test hook keeps the
/// client's 200th data call inside, then lets it return) ends a run of
/// 64 KiB writes as a stuck call at 10 s, and lets a run of 16 MiB writes
/// in windows of 64 (1 GiB in flight: 31 s allowed) finish.
#[test]
fn a_call_held_while_a_large_batch_moves_is_not_stuck() {
    let _cpu = cpu();
    for (size, stuck) in [("65536", true), ("16777216", false)] {
        let port = free_port();
        let p = port.to_string();
        let srv = server(&["write-bw", "-p", &p], port);
        let mut args = tcp_write_client(&p, size, "4");
        args.extend(["-l", "64", "--buf-sz", size]);
        let c = Proc::spawn(fabdiag(&args).env("FABDIAG_TEST_STALL_DATA_CALL", "200:12")).wait(LIMIT);
        let s = srv.wait(LIMIT);
        if stuck {
            let line = failed_with(&c, 2, "has not returned from fi_");
            assert!(line.contains(" for 10 s during run"), "{line}");
            assert!(c.elapsed < Duration::from_secs(12), "{:?}", c.elapsed);
            assert_eq!(s.code, Some(2), "{}", s.stderr);
        } else {
            assert_eq!((c.code, c.stderr.as_str()), (Some(0), ""), "-s {size}");
            assert_eq!(s.code, Some(0), "{}", s.stderr);
            // the hold happened, and the run went on after it
            assert!(c.elapsed >= Duration::from_secs(12), "{:?}", c.elapsed);
            assert!(c.stdout.contains(&format!("{size:>12}         256 ")), "{}", c.stdout);
        }
    }
}

/// A peer lost while a provider call holds the run (psm3 holds
/// fi_writemsg once its peer is gone; here the test hook holds the
/// client's 50,000th data call) is told as the session tells a lost peer:
/// a killed one at once, a stopped one after the silence limit (5 s), not
/// as a stuck call after the guard's 10 s. The JSON document keeps the
/// sizes finished before the hold.
#[test]
fn a_peer_lost_while_a_provider_call_holds_the_run_is_told_as_lost() {
    let _cpu = cpu();
    for (sig, says, within) in [
        (
            Signal::SIGKILL,
            "peer closed the control connection during run",
            Duration::from_secs(3),
        ),
        (
            Signal::SIGSTOP,
            "peer stopped answering during run (nothing heard for 5 s)",
            Duration::from_secs(9),
        ),
    ] {
        let (mut srv, cli) = server_and_held_client();
        // (the client's main thread may sleep before the run: not the hook)
        srv.wait_for("the table header", LIMIT, |out, _| out.contains("Size[B]"));
        wait_stalled(cli.pid(), LIMIT);
        let t0 = std::time::Instant::now();
        srv.signal(sig);
        let c = cli.wait(LIMIT);
        let took = t0.elapsed();
        let line = failed_with(&c, 2, says);
        assert!(!line.contains("has not returned"), "{line}");
        assert!(took < within, "{sig}: {took:?}");
        let doc = c.json();
        assert_eq!(doc["error"]["kind"], "runtime", "{doc}");
        assert_eq!(doc["error"]["message"], says, "{doc}");
        assert_eq!(doc["config"]["max_size_bytes"], 65536, "{doc}");
        assert!(
            doc["results"].as_array().unwrap().len() < 7,
            "the whole run finished: {doc}"
        );
        // (a stopped server is killed as the test's processes are dropped)
    }
}

/// A server started with SIGINT ignored (a script's background job) keeps
/// ignoring it, as it did before fabdiag watched for stop signals; SIGTERM
/// still ends it, by that signal.
#[test]
fn an_inherited_ignore_of_sigint_is_kept() {
    let port = free_port();
    let p = port.to_string();
    let mut srv = Proc::spawn(&mut with_disposition("IGNORE", &["write-bw", "-p", &p]));
    wait_listening(&mut srv, "127.0.0.1", port);
    srv.signal(Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(srv.alive(), "SIGINT ended it: {}", srv.stderr_now());
    srv.signal(Signal::SIGTERM);
    let s = srv.wait(SHORT);
    assert_eq!((s.code, s.signal), (None, Some(Signal::SIGTERM as i32)), "{}", s.stderr);
    // (after the line for the port probe that found it listening)
    assert!(
        s.stderr
            .ends_with("\nfabdiag write-bw: stopped by SIGTERM while waiting for a client\n"),
        "{}",
        s.stderr
    );
}

#[test]
fn silent_peer_is_noticed_within_seconds() {
    let _cpu = cpu();
    let (o, took) = mid_run("write-bw", true, Signal::SIGSTOP, &[]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        (o.stderr.contains("stopped answering during") && mid_run_phase(&o.stderr))
            || o.stderr.contains("no fabric completion"),
        "{}",
        o.stderr
    );
    assert!(took < Duration::from_secs(9), "{took:?}");
    let (o, took) = mid_run("send-bw", false, Signal::SIGSTOP, &[]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr.contains("stopped answering during") && mid_run_phase(&o.stderr),
        "{}",
        o.stderr
    );
    assert!(took < Duration::from_secs(9), "{took:?}");
}

#[test]
fn json_reports_a_failed_run() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    let mut srv = server(&["write-bw", "-p", &p], port);
    // (-P tcp: the document's provider is the one asked for, whatever
    // this libfabric's best)
    let cli = Proc::spawn(&mut fabdiag(&[
        "write-bw",
        "127.0.0.1",
        "-p",
        &p,
        "-P",
        "tcp",
        "-D",
        "2",
        "-s",
        "4096:8192",
        "--json",
    ]));
    // the server prints each size's row once both sides have its results
    srv.wait_for("the 4096 row", LIMIT, |out, _| out.contains("\n        4096  "));
    srv.signal(Signal::SIGKILL);
    let o = cli.wait(Duration::from_secs(20));
    assert_eq!(o.code, Some(2));
    let j = o.json();
    assert_eq!(j["error"]["kind"], "runtime");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.starts_with("peer closed the control connection during"), "{msg}");
    // the size finished before the failure is kept, and only that one
    assert_eq!(j["results"][0]["size_bytes"], 4096);
    assert_eq!(j["results"].as_array().unwrap().len(), 1);
    assert_eq!(core_provider(j["config"]["provider"].as_str().unwrap()), "tcp");
}

/// A peer that passes the hello and then dies or goes silent, in the
/// config and endpoint phases, on either side: one line naming the phase,
/// within seconds.
#[test]
fn peer_lost_after_the_handshake_in_every_phase() {
    let _cpu = cpu();
    // client side: the server closes right after hello
    let port = scripted::server(|mut s| {
        let _ = read_frame(&mut s);
        frame(&mut s, &hello("cxi_write_bw", VERSION));
    });
    let o = run(
        &["write-bw", "127.0.0.1", "-p", &port.to_string()],
        Duration::from_secs(15),
    );
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("peer closed the control connection during"),
        "{}",
        o.stderr
    );
    // client side: the server answers hello, then says nothing at all
    let port = scripted::server(|mut s| {
        let _ = read_frame(&mut s);
        frame(&mut s, &hello("cxi_write_bw", VERSION));
        std::thread::sleep(Duration::from_secs(15));
    });
    let o = run(
        &["write-bw", "127.0.0.1", "-p", &port.to_string()],
        Duration::from_secs(15),
    );
    assert_eq!(o.code, Some(2));
    assert!(
        one_line(&o.stderr).contains("peer stopped answering during endpoint exchange"),
        "{}",
        o.stderr
    );
    assert!(o.elapsed < Duration::from_secs(9), "{:?}", o.elapsed);

    // server side, against a scripted client
    type Script = fn(&mut TcpStream);
    let scripts: [(Script, &str); 3] = [
        (|_s| {}, "peer closed the control connection during config"),
        (
            |s| frame(s, &config_frame()),
            "peer closed the control connection during endpoint exchange",
        ),
        (
            |s| {
                frame(s, &config_frame());
                std::thread::sleep(Duration::from_secs(12));
            },
            "peer stopped answering during endpoint exchange",
        ),
    ];
    for (script, want) in scripts {
        let port = free_port();
        let p = port.to_string();
        let srv = server(&["write-bw", "-p", &p], port);
        let t0 = std::time::Instant::now();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        frame(&mut s, &hello("cxi_write_bw", VERSION));
        assert_eq!(read_frame(&mut s).unwrap()["type"], "hello");
        let h = std::thread::spawn(move || {
            script(&mut s);
        });
        let o = srv.wait(Duration::from_secs(20));
        assert_eq!(o.code, Some(2), "{want}: {}", o.stderr);
        assert!(
            o.stderr.lines().last().unwrap_or("").contains(want),
            "{want}: {}",
            o.stderr
        );
        assert!(t0.elapsed() < Duration::from_secs(9), "{want}: {:?}", t0.elapsed());
        let _ = h.join();
    }
}

/// A client whose libfabric opened another provider for the same `-P`
/// (1.17's 'tcp;ofi_rxm' and 2.x's native 'tcp' for `-P tcp`): the server
/// says so in one line, with what to do, rather than failing inside the
/// provider or hanging.
#[test]
fn a_peer_on_another_provider_is_told_what_to_give() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p, "-P", "tcp"], port);
    let mut s = scripted::client(port, "cxi_write_bw");
    frame(&mut s, &config_frame());
    let endpoint = serde_json::json!({"type": "endpoint", "provider": "tcp", "domain": "lo",
        "address": [2, 0, 0, 0, 127, 0, 0, 1], "regions": [
            {"addr": 0, "key": 0, "len": 4096}, {"addr": 0, "key": 0, "len": 4096}]});
    frame(&mut s, &serde_json::to_vec(&endpoint).unwrap());
    let o = srv.wait(Duration::from_secs(20));
    drop(s);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert_eq!(
        o.stderr.lines().last().unwrap_or(""),
        "fabdiag write-bw: peer opened provider 'tcp' but this side uses 'tcp;ofi_rxm': the two sides' \
         libfabric resolve the provider differently (other versions?); give the client -P with the full \
         name of one both have (`fabdiag providers` on each side lists them)",
        "{}",
        o.stderr
    );
}

#[test]
fn latency_and_atomic_tools_refuse_other_versions() {
    for (tool, name) in [("send-lat", "cxi_send_lat"), ("atomic-lat", "cxi_atomic_lat")] {
        let port = scripted::server(move |mut s| {
            let _ = read_frame(&mut s);
            frame(&mut s, &hello(name, "9.9.0"));
            std::thread::sleep(Duration::from_secs(2));
        });
        let o = run(&[tool, "127.0.0.1", "-p", &port.to_string()], Duration::from_secs(10));
        assert_eq!(o.code, Some(2), "{tool}");
        assert!(
            one_line(&o.stderr).contains("Client and server program versions do not match!"),
            "{tool}: {}",
            o.stderr
        );
    }
}
