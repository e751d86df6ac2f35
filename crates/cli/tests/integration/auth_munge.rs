//! MUNGE authentication of control connections (`--auth-munge` on a pair
//! tool, `fabdiag serve`, a sweep's ranks), against the munged that
//! scripts/dev/support/slurm-local.sh starts: a client with a credential from the
//! cluster's munge key is served; one without, with a shared key instead,
//! from another cluster's munged, from a user not admitted, replaying a
//! credential or sending one made for another connection is refused in
//! one line, and the server serves the next client. Another cluster's
//! munged and a node without one are made with a mount namespace whose
//! /run/munge is another folder, so the munged of this machine is never
//! touched.

use crate::common::scripted::{
    frame, hello, past_heartbeats, prove_and_forge, rank0_listening, read_frame, stranger_joins, sweep_rank, VERSION,
};
use crate::common::slurm::Slurm;
use crate::common::*;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

/// fabdiag in a mount namespace of its own where /run/munge is `dir`:
/// another munged's socket, or none at all.
fn with_run_munge(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind \"$0\" /run/munge && exec \"$@\"")
        .arg(dir)
        .arg(bin())
        .args(args);
    c
}

/// A second munged with a munge key of its own (another cluster's),
/// its socket in its folder as /run/munge holds the default one.
struct OtherCluster {
    dir: tempfile::TempDir,
}

impl OtherCluster {
    fn start() -> OtherCluster {
        let dir = tempfile::tempdir().expect("a folder");
        let d = dir.path();
        let key: Vec<u8> = (0..128u32).map(|i| (i * 7 + 3) as u8).collect();
        std::fs::write(d.join("munge.key"), key).expect("a key");
        must(&["chmod", "0755", d.to_str().expect("a path")]);
        must(&["chmod", "0400", d.join("munge.key").to_str().expect("a path")]);
        must(&["chown", "-R", "munge:munge", d.to_str().expect("a path")]);
        let at = |f: &str| format!("{}", d.join(f).display());
        must(&[
            "runuser",
            "-u",
            "munge",
            "--",
            "munged",
            &format!("--socket={}", at("munge.socket.2")),
            &format!("--key-file={}", at("munge.key")),
            &format!("--pid-file={}", at("munged.pid")),
            &format!("--log-file={}", at("munged.log")),
            &format!("--seed-file={}", at("munged.seed")),
        ]);
        OtherCluster { dir }
    }
}

impl Drop for OtherCluster {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("munged.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

fn client(port: u16, extra: &[&str]) -> Output {
    let p = port.to_string();
    let mut args = vec!["send-lat", "127.0.0.1", "-p", &p, "-P", "tcp", "-n", "5"];
    args.extend_from_slice(extra);
    run(&args, LIMIT)
}

fn refused_with(o: &Output, message: &str) {
    assert_ne!(o.code, Some(0), "{}", o.stdout);
    assert_eq!(
        one_line(&o.stderr),
        format!("fabdiag send-lat: peer failed during hello: {message}")
    );
}

#[test]
fn only_clients_with_the_clusters_credential_are_served_and_every_other_is_told_why() {
    let _cpu = cpu();
    let _slurm = Slurm::start();
    let port = free_port();
    let p = port.to_string();
    let _srv = server(&["serve", "-p", &p, "-P", "tcp", "--auth-munge"], port);
    let o = client(port, &["--auth-munge"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    refused_with(
        &client(port, &[]),
        "this server admits only clients with a MUNGE credential: give the client --auth-munge",
    );
    let dir = tempfile::tempdir().expect("a folder");
    let key = dir.path().join("key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef").expect("a key");
    must(&["chmod", "600", key.to_str().expect("a path")]);
    refused_with(
        &client(port, &["--auth-key", key.to_str().expect("a path")]),
        "this server authenticates with MUNGE credentials (--auth-munge), not a shared key: give the client --auth-munge",
    );
    // a client on another cluster: its credential does not decode here
    let other = OtherCluster::start();
    let o = Proc::spawn(&mut with_run_munge(
        other.dir.path(),
        &[
            "send-lat",
            "127.0.0.1",
            "-p",
            &p,
            "-P",
            "tcp",
            "-n",
            "5",
            "--auth-munge",
        ],
    ))
    .wait(LIMIT);
    refused_with(
        &o,
        "authentication failed: the client's MUNGE credential is refused: it does not decode with this node's munge key (another cluster's key, or altered)",
    );
    // and the server goes on serving
    let o = client(port, &["--auth-munge"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);

    // a server admitting other users only refuses root's credential
    let port = free_port();
    let p = port.to_string();
    let _srv = server(
        &[
            "serve",
            "-p",
            &p,
            "-P",
            "tcp",
            "--auth-munge",
            "--munge-users",
            "nobody,4242",
        ],
        port,
    );
    refused_with(
        &client(port, &["--auth-munge"]),
        "authentication failed: the client's MUNGE credential is from user root (0), not one of the users admitted (nobody,4242)",
    );
}

/// `munge -s PAYLOAD`, as a client could make it.
fn credential(payload: &str) -> String {
    let o = Command::new("munge").args(["-s", payload]).output().expect("munge");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `unmunge`'s payload of `cred`, or its error.
fn payload_of(cred: &str) -> Result<String, String> {
    use std::io::Write;
    let mut c = Command::new("unmunge")
        .args(["-m", "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("unmunge");
    c.stdin
        .take()
        .expect("stdin")
        .write_all(cred.as_bytes())
        .expect("written");
    let o = c.wait_with_output().expect("unmunge ends");
    match o.status.success() {
        true => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
    }
}

#[test]
fn a_replayed_credential_or_one_made_for_another_connection_is_refused() {
    let _cpu = cpu();
    let _slurm = Slurm::start();
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["serve", "-p", &p, "-P", "tcp", "--auth-munge", "--json"], port);
    let mut v: serde_json::Value = serde_json::from_slice(&hello("cxi_send_lat", VERSION)).expect("a hello");
    v["auth"] = true.into();
    v["auth_method"] = "munge".into();
    let authed = serde_json::to_vec(&v).expect("JSON");
    // (the harness's probe of the port is the first line)
    let mut served = 1;
    let mut open = || {
        logged(&srv, served);
        served += 1;
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
        frame(&mut s, &authed);
        assert_eq!(read_frame(&mut s).expect("its hello")["type"], "hello");
        let challenge = read_frame(&mut s).expect("a challenge");
        assert_eq!(challenge["type"], "challenge", "{challenge}");
        (s, challenge["nonce"].as_str().expect("a nonce").to_string())
    };
    let prove = |s: &mut TcpStream, ours: &str, cred: &str| {
        let m = serde_json::json!({"type": "proof", "nonce": ours, "mac": cred});
        frame(s, &serde_json::to_vec(&m).expect("JSON"));
        past_heartbeats(s)
    };
    let ours = "cd".repeat(32);
    // an honest exchange, recorded: the server proves itself in turn, with
    // a credential over the same nonces
    let (mut first, n1) = open();
    let recorded = credential(&format!("fabdiag-auth/1 client {n1} {ours}"));
    let answer = prove(&mut first, &ours, &recorded);
    assert_eq!(answer["type"], "proof", "{answer}");
    let theirs = answer["mac"].as_str().expect("a credential");
    assert_eq!(
        payload_of(theirs).as_deref(),
        Ok(format!("fabdiag-auth/1 server {n1} {ours}").as_str())
    );
    drop(first);
    let refusal = |answer: serde_json::Value, why: &str| {
        assert_eq!(answer["type"], "error", "{answer}");
        assert_eq!(
            answer["message"],
            format!("authentication failed: the client's MUNGE credential {why}")
        );
    };
    // the same credential again: munged has decoded it
    let (mut second, _) = open();
    refusal(
        prove(&mut second, &ours, &recorded),
        "is refused: it was replayed: munged decoded it before",
    );
    // a fresh credential for the first connection's nonce, or the
    // server's side: good credentials, for another connection
    let (mut third, _) = open();
    let stale = credential(&format!("fabdiag-auth/1 client {n1} {ours}"));
    refusal(prove(&mut third, &ours, &stale), "was made for another connection");
    let (mut fourth, n4) = open();
    let reflected = credential(&format!("fabdiag-auth/1 server {n4} {ours}"));
    refusal(prove(&mut fourth, &ours, &reflected), "was made for another connection");
    // and a credential that is not one never reaches unmunge
    let (mut fifth, _) = open();
    refusal(
        prove(&mut fifth, &ours, "MUNGE:not a credential:"),
        "is refused: it is not a MUNGE credential",
    );
}

#[test]
fn without_munged_every_side_says_so_before_anything_runs() {
    require_root();
    let empty = tempfile::tempdir().expect("a folder");
    let port = free_port().to_string();
    let peers = empty.path().join("peers");
    std::fs::write(&peers, format!("127.0.0.1:{port}\n")).expect("peers");
    for args in [
        vec!["serve", "-p", &port, "-P", "tcp", "--auth-munge"],
        vec!["send-lat", "127.0.0.1", "-p", &port, "-P", "tcp", "--auth-munge"],
        vec!["write-bw", "-p", &port, "-P", "tcp", "--auth-munge"],
        vec!["monitor", "--peers", peers.to_str().expect("a path"), "--auth-munge"],
    ] {
        let o = Proc::spawn(&mut with_run_munge(empty.path(), &args)).wait(SHORT);
        assert_eq!(o.code, Some(4), "{args:?}: {}", o.stderr);
        assert!(
            one_line(&o.stderr).ends_with(
                "--auth-munge: no MUNGE credential can be made here: munged is not running on this node: Failed to access \"/run/munge/munge.socket.2\": No such file or directory (Did you start munged?)"
            ),
            "{args:?}: {}",
            o.stderr
        );
        assert!(o.stdout.is_empty(), "{}", o.stdout);
    }
}

#[test]
fn a_sweeps_ranks_prove_their_jobs_user_and_no_other_user_joins() {
    let _cpu = cpu();
    let _slurm = Slurm::start();
    let coord = format!("127.0.0.1:{}", free_port());
    let rank = |r: usize| sweep_rank(&coord, r, &["--auth-munge"]);
    let zero = rank(0);
    rank0_listening(&coord);
    // a process of another user on this cluster: its credential is good,
    // but not the job's user's, so it is refused before its result is read
    let ours = "ef".repeat(32);
    let (mut s, a) = stranger_joins(&coord, serde_json::json!({"nonce": ours, "auth_method": "munge"}));
    assert_eq!(a["type"], "challenge", "{a}");
    let theirs = a["nonce"].as_str().expect("rank 0's nonce");
    assert_eq!(
        payload_of(a["mac"].as_str().expect("rank 0's credential")).as_deref(),
        Ok(format!("fabdiag-auth/1 server {theirs} {ours}").as_str())
    );
    let o = Command::new("runuser")
        .args(["-u", "nobody", "--", "munge", "-s"])
        .arg(format!("fabdiag-auth/1 client {theirs} {ours}"))
        .output()
        .expect("runuser");
    let nobodys = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let a = prove_and_forge(&mut s, &nobodys);
    assert_eq!(a["type"], "refused", "{a}");
    assert!(
        a["reason"].as_str().is_some_and(|r| r.ends_with(
            "rank 1 from stranger refused: authentication failed: its MUNGE credential is from user nobody (65534), not one of the users admitted (0)"
        )),
        "{a}"
    );
    // the job's ranks join, and every pair runs, authenticated
    let (one, two) = (rank(1), rank(2));
    let z = zero.wait(LIMIT * 2);
    assert_eq!(z.code, Some(0), "{}", z.stderr);
    assert!(z.stdout.contains("pairs: 3 measured, 0 failed"), "{}", z.stdout);
    for p in [one, two] {
        assert_eq!(p.wait(LIMIT).code, Some(0));
    }
}
