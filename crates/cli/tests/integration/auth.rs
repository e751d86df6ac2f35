//! Shared-key authentication of control connections (`--auth-key` on a
//! pair tool's client and `fabdiag serve` or a one-shot server): a client
//! with the key is served; one without it, with another key, or replaying
//! a recorded proof is refused in one line, and the server serves the next
//! client; a client that asks a keyless server to prove a key is told it
//! cannot. Key files that anyone else may read are refused before anything
//! runs.

use crate::common::scripted::{
    frame, hello, past_heartbeats, prove_and_forge, rank0_listening, read_frame, stranger_joins, sweep_rank, VERSION,
};
use crate::common::*;
use fabdiag_proto::auth::{proof, Prover};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A key file of `bytes`, readable by its owner only.
fn key_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("the key file");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
    p
}

/// `fabdiag serve --json --auth-key KEY` on a free port, and that port.
fn serve_with(key: &Path) -> (Proc, u16) {
    let port = free_port();
    let p = port.to_string();
    let k = key.to_str().expect("a path");
    let srv = server(&["serve", "-p", &p, "-P", "tcp", "--json", "--auth-key", k], port);
    (srv, port)
}

fn client(port: u16, extra: &[&str]) -> Output {
    let p = port.to_string();
    let mut args = vec!["send-lat", "127.0.0.1", "-p", &p, "-P", "tcp", "-n", "5"];
    args.extend_from_slice(extra);
    run(&args, LIMIT)
}

#[test]
fn only_a_client_with_the_key_is_served_and_every_other_is_told_why() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let key = key_file(dir.path(), "key", b"0123456789abcdef0123456789abcdef");
    let other = key_file(dir.path(), "other", b"fedcba9876543210fedcba9876543210");
    let (srv, port) = serve_with(&key);
    let k = key.to_str().expect("a path");
    let o = client(port, &["--auth-key", k]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // no key: refused, in one line that says what to do
    let o = client(port, &[]);
    assert_ne!(o.code, Some(0));
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag send-lat: peer failed during hello: this server admits only clients that prove its shared key: give the client --auth-key with the server's key file"
    );
    // another key: refused
    let o = client(port, &["--auth-key", other.to_str().expect("a path")]);
    assert_ne!(o.code, Some(0));
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag send-lat: peer failed during hello: authentication failed: the client's proof does not match this server's key"
    );
    // and the server goes on serving
    let o = client(port, &["--auth-key", k]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // its line too (the probe's, three refusals or tests, this one), then stop
    logged(&srv, 5);
    srv.signal(nix::sys::signal::Signal::SIGTERM);
    let out = srv.wait(SHORT);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let refused: Vec<&str> = lines.iter().filter_map(|l| l["error"]["message"].as_str()).collect();
    assert!(
        refused.iter().any(|m| m.contains("admits only clients that prove")),
        "{refused:?}"
    );
    assert!(
        refused.iter().any(|m| m.contains("proof does not match")),
        "{refused:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l["error"].is_null()).count(),
        2,
        "{}",
        out.stdout
    );
}

#[test]
fn a_recorded_proof_is_worthless_on_another_connection() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let secret = b"0123456789abcdef0123456789abcdef";
    let key = key_file(dir.path(), "key", secret);
    let (srv, port) = serve_with(&key);
    // (the harness's probe of the port is the first line)
    logged(&srv, 1);
    let mut authed = hello("cxi_send_lat", VERSION);
    // the hello of a client that will prove the key
    let mut v: serde_json::Value = serde_json::from_slice(&authed).expect("a hello");
    v["auth"] = serde_json::Value::Bool(true);
    authed = serde_json::to_vec(&v).expect("JSON");
    let open = || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
        frame(&mut s, &authed);
        assert_eq!(read_frame(&mut s).expect("its hello")["type"], "hello");
        let challenge = read_frame(&mut s).expect("a challenge");
        assert_eq!(challenge["type"], "challenge", "{challenge}");
        (s, challenge["nonce"].as_str().expect("a nonce").to_string())
    };
    // an honest exchange, recorded: the server proves the key in turn
    let (mut first, n1) = open();
    let ours = "ab".repeat(32);
    let mac = proof(secret, Prover::Client, &n1, &ours);
    let recorded = serde_json::json!({"type": "proof", "nonce": ours, "mac": mac});
    frame(&mut first, &serde_json::to_vec(&recorded).expect("JSON"));
    let answer = read_frame(&mut first).expect("the server's proof");
    assert_eq!(answer["type"], "proof", "{answer}");
    drop(first);
    logged(&srv, 2);
    // the same proof on a new connection: another nonce, so refused
    let (mut second, n2) = open();
    assert_ne!(n1, n2);
    frame(&mut second, &serde_json::to_vec(&recorded).expect("JSON"));
    let refusal = past_heartbeats(&mut second);
    assert_eq!(refusal["type"], "error", "{refusal}");
    assert_eq!(
        refusal["message"],
        "authentication failed: the client's proof does not match this server's key"
    );
    drop(second);
    logged(&srv, 3);
    // nor can the server's own proof be sent back as a client's
    let (mut third, n3) = open();
    let reflected = proof(secret, Prover::Server, &n3, &ours);
    let m = serde_json::json!({"type": "proof", "nonce": ours, "mac": reflected});
    frame(&mut third, &serde_json::to_vec(&m).expect("JSON"));
    let refusal = past_heartbeats(&mut third);
    assert_eq!(refusal["type"], "error", "{refusal}");
}

#[test]
fn a_keyless_server_says_it_cannot_prove_a_key_and_local_runs_take_one() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let key = key_file(dir.path(), "key", b"0123456789abcdef0123456789abcdef");
    let k = key.to_str().expect("a path");
    let port = free_port();
    let p = port.to_string();
    let _srv = server(&["serve", "-p", &p, "-P", "tcp"], port);
    let o = client(port, &["--auth-key", k]);
    assert_ne!(o.code, Some(0));
    assert!(
        one_line(&o.stderr).ends_with("this server has no shared key and cannot prove one; the client asked for it (--auth-key): give the server the same --auth-key"),
        "{}",
        o.stderr
    );
    // both sides in one process, both with the key
    let o = run(
        &["write-lat", "--local", "-P", "tcp", "-n", "5", "--auth-key", k],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn a_key_file_others_may_read_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("a folder");
    let key = key_file(dir.path(), "key", b"0123456789abcdef0123456789abcdef");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let k = key.to_str().expect("a path");
    for args in [
        vec!["serve", "-P", "tcp", "--auth-key", k],
        vec!["write-bw", "-P", "tcp", "--auth-key", k],
        vec!["write-bw", "127.0.0.1", "-P", "tcp", "--auth-key", k],
    ] {
        let o = run(&args, SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(
            one_line(&o.stderr).ends_with(&format!("others than its owner may read or write it (chmod 600 {k})")),
            "{}",
            o.stderr
        );
        assert!(o.stdout.is_empty(), "{}", o.stdout);
    }
}

/// A key file another user owns is refused, though only its owner may
/// read it: that user could rewrite the key this node trusts.
#[test]
fn a_key_file_another_user_owns_is_refused_before_anything_runs() {
    require_root();
    let dir = tempfile::tempdir().expect("a folder");
    let key = key_file(dir.path(), "key", b"0123456789abcdef0123456789abcdef");
    // (nobody, as Debian numbers it)
    std::os::unix::fs::chown(&key, Some(65534), Some(65534)).expect("chown");
    let k = key.to_str().expect("a path");
    for args in [
        vec!["serve", "-P", "tcp", "--auth-key", k],
        vec!["write-bw", "127.0.0.1", "-P", "tcp", "--auth-key", k],
    ] {
        let o = run(&args, SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(
            one_line(&o.stderr).ends_with(&format!(
                "--auth-key {k}: owned by uid 65534, not by this user (uid 0) or root: its owner could change the key (chown 0 {k})"
            )),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_sweep_admits_only_ranks_holding_its_key_and_no_stranger_sends_a_result() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let key = key_file(dir.path(), "key", b"sweep key, 32 bytes or so......");
    let other = key_file(dir.path(), "other", b"another key entirely, not it...");
    let coord = format!("127.0.0.1:{}", free_port());
    let rank = |r: usize, key: &Path| sweep_rank(&coord, r, &["--auth-key", key.to_str().expect("a path")]);
    let zero = rank(0, &key);
    rank0_listening(&coord);
    // without a key: refused before anything it says is taken
    let (_s, a) = stranger_joins(&coord, serde_json::json!({}));
    assert_eq!(a["type"], "refused", "{a}");
    assert!(
        a["reason"]
            .as_str()
            .is_some_and(|r| r.contains("rank 1 from stranger refused: it has no key")),
        "{a}"
    );
    // with a nonce, rank 0 proves its key; a made-up proof and then a
    // forged result are refused
    let ours = "ab".repeat(32);
    let (mut s, a) = stranger_joins(&coord, serde_json::json!({ "nonce": ours }));
    assert_eq!(a["type"], "challenge", "{a}");
    let theirs = a["nonce"].as_str().expect("rank 0's nonce");
    let wrong = proof(b"not the key at all, not at all..", Prover::Client, theirs, &ours);
    let a = prove_and_forge(&mut s, &wrong);
    assert_eq!(a["type"], "refused", "{a}");
    assert!(
        a["reason"]
            .as_str()
            .is_some_and(|r| r.contains("does not hold rank 0's key")),
        "{a}"
    );
    // a rank with another key finds rank 0's proof wrong and says so
    let o = rank(2, &other).wait(LIMIT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("rank 0 does not hold this rank's key"),
        "{}",
        o.stderr
    );
    // the ranks holding the key join, and every pair runs, authenticated
    let (one, two) = (rank(1, &key), rank(2, &key));
    let z = zero.wait(LIMIT * 2);
    assert_eq!(z.code, Some(0), "{}", z.stderr);
    assert!(z.stdout.contains("pairs: 3 measured, 0 failed"), "{}", z.stdout);
    for p in [one, two] {
        assert_eq!(p.wait(LIMIT).code, Some(0));
    }
}
