//! Standard output that cannot be written: a full disk (`/dev/full`) or an
//! I/O error loses what a run shows, so the run must not end as a success
//! (one line says so, exit 2; a failure's own code is kept). A reader that
//! went away (`| head`) is the reader's choice: no line, the run's own code.

mod common;
use common::*;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};

/// `child` waited for (at most LIMIT), its stderr collected; its exit
/// code, or 128 + the signal that ended it.
fn ended(mut child: Child) -> (Option<i32>, String) {
    let mut err = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
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

/// fabdiag `args` with its stdout a pipe whose reader has gone.
fn to_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    ended(child)
}

/// Whether a socket listens on TCP `port` (IPv4 or dual-stack IPv6).
fn listening(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
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
    let started = std::time::Instant::now();
    while !listening(port) {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the server ended before listening"
        );
        assert!(started.elapsed() < SHORT, "the server never listened on {port}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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
