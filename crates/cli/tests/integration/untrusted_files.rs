//! Every option that names a file to read, given what is not a file a
//! command can read whole: a FIFO (whose open would wait for a writer for
//! ever), /dev/zero (which never ends), a file far larger than any real
//! one. Each command says in one line which file and why, with its own
//! exit code, within seconds (health within its budget), memory flat.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A FIFO at `path`.
fn fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A sparse file of `bytes` at `path`: large, costing no disk.
fn huge(path: &Path, bytes: u64) {
    let f = std::fs::File::create(path).expect("created");
    f.set_len(bytes).expect("grown");
}

#[test]
fn a_fifo_a_device_or_a_huge_file_is_refused_in_one_line_naming_it() {
    let dir = tempfile::tempdir().expect("a folder");
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let big = dir.path().join("big");
    huge(&big, 64 << 20);
    let pipe = pipe.to_str().expect("a path").to_string();
    let big = big.to_str().expect("a path").to_string();
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["health", "--budget", "5", "--expect", &pipe],
            3,
            format!("cannot read {pipe}: not a regular file (a FIFO)"),
        ),
        (
            vec!["health", "--budget", "5", "--expect", "/dev/zero"],
            3,
            "cannot read /dev/zero: not a regular file (a character device)".into(),
        ),
        (
            vec!["health", "--budget", "5", "--expect", &big],
            3,
            format!("cannot read {big}: 67108864 bytes, more than the 16777216 this file may hold"),
        ),
        (
            vec!["monitor", "--peers", &pipe],
            1,
            format!("cannot read the peers file {pipe}: not a regular file (a FIFO)"),
        ),
        (
            vec!["monitor", "--peers", "/dev/zero"],
            1,
            "cannot read the peers file /dev/zero: not a regular file (a character device)".into(),
        ),
        (
            vec!["monitor", "--peers", &big],
            1,
            format!("cannot read the peers file {big}: 67108864 bytes, more than the 16777216 this file may hold"),
        ),
        (
            vec!["write-bw", "127.0.0.1", "--auth-key", &pipe],
            1,
            format!("--auth-key {pipe}: not a regular file"),
        ),
        (
            vec!["sweep", "--report", &pipe],
            1,
            format!("--report {pipe}: not a regular file (a FIFO)"),
        ),
        (
            vec!["sweep", "--simulate", "4", "--baseline", &pipe],
            1,
            format!("--baseline {pipe}: not a regular file (a FIFO)"),
        ),
        (
            vec!["sweep", "--report", "/dev/zero"],
            1,
            "--report /dev/zero: not a regular file (a character device)".into(),
        ),
    ];
    for (args, code, msg) in cases {
        let t = Instant::now();
        let o = run(&args, Duration::from_secs(20));
        assert_eq!(o.code, Some(code), "{args:?}: {}", o.stderr);
        assert!(one_line(&o.stderr).contains(&msg), "{args:?}: {}", o.stderr);
        assert!(t.elapsed() < Duration::from_secs(6), "{args:?} took {:?}", t.elapsed());
    }
}

/// The folders a command is given: health's --state-dir holding a FIFO
/// where its counters are kept (said, and the check goes on, within its
/// budget), and a sweep's --output that is a FIFO (refused at once).
#[test]
fn a_state_folder_or_an_output_folder_holding_a_fifo_is_said() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("a folder");
    fifo(&state.join("health-counters.json"));
    let s = state.to_str().expect("a path");
    let t = Instant::now();
    let o = run(
        &["health", "-d", "shm:shm", "--budget", "5", "--state-dir", s],
        Duration::from_secs(20),
    );
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains(&format!(
            "link flaps: earlier counters not read: cannot read {s}/health-counters.json: not a regular file (a FIFO)"
        )),
        "{}",
        o.stdout
    );
    assert!(t.elapsed() < Duration::from_secs(6), "took {:?}", t.elapsed());
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let p = pipe.to_str().expect("a path");
    let o = run(&["sweep", "--simulate", "4", "--output", p], Duration::from_secs(20));
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).contains(&format!("cannot create {p}: something other than a folder is there")),
        "{}",
        o.stderr
    );
}

/// A folder `--resume` continues whose records file is a FIFO: refused in
/// one line, never waited on, nothing run again.
#[test]
fn a_resumed_folder_whose_records_are_a_fifo_is_refused() {
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("out");
    let o = run(
        &["sweep", "--simulate", "4", "--output", out.to_str().expect("a path")],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    std::fs::remove_file(out.join("pairs.jsonl")).expect("removed");
    fifo(&out.join("pairs.jsonl"));
    let t = Instant::now();
    let o = run(
        &[
            "sweep",
            "--simulate",
            "4",
            "--output",
            out.to_str().expect("a path"),
            "--resume",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).contains("pairs.jsonl: not a regular file (a FIFO)"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "it ran: {}", o.stdout);
    assert!(t.elapsed() < Duration::from_secs(6), "took {:?}", t.elapsed());
}
