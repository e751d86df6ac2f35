//! Standard output and error that cannot be written. A full disk
//! (`/dev/full`) or an I/O error on stdout loses what a run shows, so the
//! run must not end as a success (one line says so, exit 2; a failure's
//! own code is kept). A reader that went away (`| head`, a dropped ssh
//! session) is the reader's choice: on stdout no line and the run's own
//! code; on stderr the same, and SIGTERM still ends the process.

use crate::common::*;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};

/// `child` waited for (at most LIMIT), its stderr collected; its exit
/// code, or 128 + the signal that ended it.
fn ended(mut child: Child) -> (Option<i32>, String) {
    let err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = err {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("still running after {LIMIT:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stderr = reader.join().expect("stderr reader");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (status.code().or(status.signal().map(|s| 128 + s)), stderr)
}

/// fabdiag `args` started with its stdout on /dev/full (every write:
/// ENOSPC).
fn spawn_to_full_disk(args: &[&str]) -> Child {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full: every Linux has it");
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

/// fabdiag `args` run to its end with its stdout on /dev/full.
fn to_full_disk(args: &[&str]) -> (Option<i32>, String) {
    ended(spawn_to_full_disk(args))
}

/// fabdiag `args` started with its stdout (`stdout`) or its stderr a
/// pipe whose reader has gone; the other is piped (and read by `ended`).
fn spawn_reader_gone(args: &[&str], stdout: bool) -> Child {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if stdout {
        drop(child.stdout.take());
    } else {
        drop(child.stderr.take());
    }
    child
}

/// fabdiag `args` with its stdout a pipe whose reader has gone.
fn to_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    ended(spawn_reader_gone(args, true))
}

/// fabdiag `args` started with its stderr a pipe whose reader has gone.
fn spawn_unheard(args: &[&str]) -> Child {
    spawn_reader_gone(args, false)
}

/// Waits (SHORT at most) until `child` listens on `port`; kills it and
/// fails if it does not.
fn until_listening(child: &mut Child, port: u16) {
    let started = std::time::Instant::now();
    while !listening(port, child.id()) {
        let gone = child.try_wait().expect("wait").is_some();
        if gone || started.elapsed() > SHORT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server never listened on {port} (ended: {gone})");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether process `pid` has a socket listening on TCP `port` (IPv4 or
/// dual-stack IPv6). Its own: another process listening on the port (a
/// `--local` test's server given it by the kernel) must not let the test
/// signal a child that has not yet set up its handling of signals.
fn listening(port: u16, pid: u32) -> bool {
    let local = format!(":{port:04X}");
    // the inodes of the child's sockets, as /proc/PID/fd shows them
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let own: Vec<String> = fds
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?.strip_suffix(']').map(str::to_string)
        })
        .collect();
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 9 && cols[1].ends_with(&local) && cols[3] == "0A" && own.iter().any(|i| i == cols[9])
            })
        })
    })
}

const LOST: &str = "cannot write to standard output (No space left on device";

#[test]
fn a_run_whose_output_cannot_be_written_fails() {
    let _cpu = cpu();
    for json in [false, true] {
        let mut args = vec!["write-bw", "--local", "-P", "tcp", "-n", "20"];
        if json {
            args.push("--json");
        }
        let (code, stderr) = to_full_disk(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        let line = one_line(&stderr);
        assert!(line.starts_with("fabdiag write-bw: ") && line.contains(LOST), "{line}");
    }
    // a missed threshold keeps its own exit code; the lost output is said too
    let (code, stderr) = to_full_disk(&["send-lat", "--local", "-P", "tcp", "-n", "20", "--max-lat", "0.001"]);
    assert_eq!(code, Some(3), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].contains("--max-lat"), "{stderr}");
    assert!(lines[1].contains(LOST), "{stderr}");
}

#[test]
fn every_command_says_when_its_output_is_lost() {
    for args in [
        &["-V"][..],
        &["--help"],
        &["write-bw", "-h"],
        &["completions", "bash"],
        &["doctor"],
        &["doctor", "--json"],
        &["sweep", "--plan", "--ranks", "8"],
        &["sweep", "--simulate", "4", "--sim-pair-ms", "0"],
        &["sweep", "--simulate", "4", "--sim-pair-ms", "0", "--json"],
    ] {
        let (code, stderr) = to_full_disk(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        let line = one_line(&stderr);
        assert!(line.starts_with("fabdiag") && line.contains(LOST), "{args:?}: {line}");
    }
    // a usage error keeps exit 1, and says both
    let (code, stderr) = to_full_disk(&["write-bw", "-s", "0", "--json"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.contains("Invalid size: 0") && stderr.contains(LOST), "{stderr}");
}

#[test]
fn a_reader_that_went_away_is_not_an_error() {
    let _cpu = cpu();
    for args in [
        &["-V"][..],
        &["doctor"],
        &["write-bw", "--local", "-P", "tcp", "-n", "20"],
        &["write-bw", "--local", "-P", "tcp", "-n", "20", "--json"],
    ] {
        let (code, stderr) = to_closed_pipe(args);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{args:?}");
    }
}

#[test]
fn a_stopped_server_says_its_output_was_lost_too() {
    let port = free_port();
    let p = port.to_string();
    let mut child = spawn_to_full_disk(&["write-bw", "-P", "tcp", "-p", &p]);
    // listening (its "Listening" line already lost) is seen in /proc, not
    // by connecting: a probe would be turned away with a line of its own
    until_listening(&mut child, port);
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let (code, stderr) = ended(child);
    assert_eq!(code, Some(128 + Signal::SIGTERM as i32), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].contains("stopped by SIGTERM while waiting for a client"),
        "{stderr}"
    );
    assert!(lines[1].contains(LOST), "{stderr}");
}

/// Nobody reads stderr any more: each command still ends with its own
/// exit code (not a panic's 101, which `eprintln!` gave on EPIPE), and a
/// server waiting for a client still ends by SIGTERM (the thread that
/// takes the signal once died writing its line, leaving the process deaf
/// to SIGINT and SIGTERM until killed).
#[test]
fn a_stderr_nobody_reads_changes_no_outcome() {
    let _cpu = cpu();
    let closed = free_port().to_string();
    for (args, code) in [
        (&["write-bw", "-s", "0"][..], 1),
        (&["write-bw", "127.0.0.1", "-p", &closed, "-P", "tcp"], 2),
        (
            &["write-bw", "--local", "-P", "tcp", "-n", "20", "--min-bw", "999999"],
            3,
        ),
        (&["write-bw", "--local", "-P", "nosuch"], 4),
        (
            &["sweep", "--simulate", "4", "--sim-pair-ms", "0", "--sim-slow", "1"],
            5,
        ),
    ] {
        let (got, _) = ended(spawn_unheard(args));
        assert_eq!(got, Some(code), "{args:?}");
    }
    let port = free_port();
    let mut child = spawn_unheard(&["write-bw", "-P", "tcp", "-p", &port.to_string()]);
    until_listening(&mut child, port);
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let (got, _) = ended(child);
    assert_eq!(got, Some(128 + Signal::SIGTERM as i32));
}
