//! `fabdiag sweep` with real processes: ranks started with FABDIAG_RANK /
//! FABDIAG_SIZE and an explicit coordinator, on loopback and across eight
//! network namespaces on a bridge (198.18.0.0/15) with faults planted by
//! `tc`: a slowed link, a slowed node, a rank that never joins, a rank
//! killed mid-sweep. What is asserted is what the sweep guarantees (every
//! pair once, the report's shape, who is named, exit codes), never a
//! figure that depends on load. Needs root and iproute2 (CI has both);
//! without them the namespace test fails loudly instead of skipping.

use crate::common::cluster::Cluster;
use crate::common::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// A small test for every pair: 10 iterations of 16 writes of 64 KiB.
const SMALL: &[&str] = &["-P", "tcp", "-s", "65536", "-n", "10", "-l", "16"];

fn rank(r: usize, n: usize, coord: &str, extra: &[&str]) -> Command {
    let mut c = fabdiag(&["sweep", "--coordinator", coord]);
    c.args(SMALL).args(extra);
    c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", n.to_string());
    c
}

/// Starts ranks 1..n, runs rank 0 to the end; returns rank 0's output and
/// the others'.
fn sweep(n: usize, extra0: &[&str], extra: &[&str]) -> (Output, Vec<Output>) {
    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = (1..n).map(|r| Proc::spawn(&mut rank(r, n, &coord, extra))).collect();
    let zero = Proc::spawn(&mut rank(0, n, &coord, &[extra, extra0].concat())).wait(LIMIT * 2);
    let rest = others.into_iter().map(|p| p.wait(LIMIT)).collect();
    (zero, rest)
}

/// Whether a rank's one line says rank 0 stopped the sweep, with `why`
/// somewhere in what it printed.
fn told_rank_0_stopped(o: &Output, why: &str) -> bool {
    o.one_line().contains("rank 0 stopped") && o.stderr.contains(why)
}

/// The error of pair a-b (a < b), or "" if it has none.
fn pair_error(doc: &Value, a: u64, b: u64) -> String {
    doc["pairs"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["a"] == a && p["b"] == b))
        .and_then(|p| p["error"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Every pair without rank `r` was measured.
fn measured_without(doc: &Value, r: u64) -> bool {
    doc["pairs"].as_array().is_some_and(|ps| {
        ps.iter()
            .filter(|p| p["a"] != r && p["b"] != r)
            .all(|p| p["value"].is_number())
    })
}

#[test]
fn four_ranks_on_loopback_test_every_pair_once_with_one_endpoint_each() {
    let _cpu = cpu();
    let (_folder, dir) = tempdir("sweep4");
    // what this test checks is coverage, not outliers: on a loaded 2-core
    // machine a pair can be slow by chance, so the rules here flag nothing
    let calm: &[&str] = &["--outlier-fraction", "0.001"];
    let (zero, rest) = sweep(4, &[&["--json", "--output", &dir][..], calm].concat(), &[]);
    assert_eq!(zero.code, Some(0), "rank 0: {}", zero.stderr);
    for (i, o) in rest.iter().enumerate() {
        assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
        // nothing is printed by the other ranks when all is well
        assert_eq!((o.stdout.as_str(), o.stderr.as_str()), ("", ""), "rank {}", i + 1);
    }
    let doc = zero.json();
    assert_eq!(doc["schema"], "fabdiag-sweep/1");
    assert_eq!(doc["schedule"]["rounds"], 3);
    assert_eq!(pairs_measured(&doc), 6);
    let mut keys: Vec<(u64, u64)> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap()))
        .collect();
    keys.sort();
    assert_eq!(keys, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
    // the matrix is symmetric with an empty diagonal
    let m = &doc["matrix"];
    for a in 0..4 {
        assert!(m[a][a].is_null());
        for b in 0..4 {
            assert_eq!(m[a][b], m[b][a]);
        }
    }
    // each rank opened its endpoint once and reused it for every pair
    for node in doc["nodes"].as_array().unwrap() {
        assert_eq!(node["status"], "ok");
        assert_eq!(node["endpoint_opens"], 1, "{node}");
    }
    assert!(doc["overhead"]["round_mean_s"].is_number());
    let rounds = doc["overhead"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "round")
        .count();
    assert_eq!(rounds, 3);
    assert!(doc["libfabric_version"].is_string());
    assert_eq!(doc["verdict"]["failed_pairs"], 0);
    // results were written as they came, and the report at the end
    let lines = std::fs::read_to_string(format!("{dir}/pairs.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 6);
    let text = std::fs::read_to_string(format!("{dir}/summary.txt")).unwrap();
    assert!(
        text.starts_with("fabdiag sweep: 4 nodes, 6 pairs in 3 rounds, write-bw 65536 B"),
        "{text}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/sweep.json")).unwrap()).unwrap();
    assert_eq!(saved["pairs"], doc["pairs"]);

    // --resume: every pair has a result, so nothing runs again
    let (again, rest) = sweep(4, &[&["--json", "--output", &dir, "--resume"][..], calm].concat(), &[]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(rest.iter().all(|o| o.code == Some(0)));
    let d2 = again.json();
    assert_eq!(pairs_measured(&d2), 6);
    assert_eq!(d2["overhead"]["steps"].as_array().unwrap().len(), 0, "no round ran");
    assert_eq!(
        std::fs::read_to_string(format!("{dir}/pairs.jsonl"))
            .unwrap()
            .lines()
            .count(),
        6
    );
}

#[test]
fn ranks_reach_rank_0_and_each_other_over_ipv6() {
    if !ipv6_loopback() {
        return;
    }
    let _cpu = cpu();
    let coord = format!("[::1]:{}", free_port());
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut rank(r, 3, &coord, &[]))).collect();
    let calm: &[&str] = &["--json", "--outlier-fraction", "0.001"];
    let zero = Proc::spawn(&mut rank(0, 3, &coord, calm)).wait(LIMIT * 2);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    assert_eq!(zero.code, Some(0), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(pairs_measured(&doc), 3);
    // each rank is named by the address rank 0 saw it on, and its partners
    // reached it there
    for node in doc["nodes"].as_array().unwrap() {
        assert!(node["addr"].as_str().unwrap().starts_with("[::1]:"), "{node}");
    }
}

/// `--figure p99`: a latency sweep judges each pair by its p99, and says
/// so in the metric, the options, the text, a report made again, and by
/// refusing a baseline judged by the mean.
#[test]
fn a_latency_sweep_judged_by_p99_says_so_everywhere() {
    let _cpu = cpu();
    let (_folder, dir) = tempdir("sweep-p99");
    let coord = format!("127.0.0.1:{}", free_port());
    let lat_rank = |r: usize, extra: &[&str]| {
        let mut c = fabdiag(&["sweep", "--coordinator", &coord, "-P", "tcp"]);
        c.args(["--lat", "-s", "8", "-n", "200"]).args(extra);
        c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", "3");
        c
    };
    let p99 = ["--figure", "p99"];
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut lat_rank(r, &p99))).collect();
    let zero = Proc::spawn(&mut lat_rank(0, &[&p99[..], &["--json", "--output", &dir]].concat())).wait(LIMIT * 2);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    assert!(matches!(zero.code, Some(0 | 5)), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(pairs_measured(&doc), 3);
    assert_eq!(doc["metric"]["name"], "p99 latency");
    assert_eq!(doc["metric"]["test"], "write-lat 8 B, p99");
    assert_eq!(doc["options"]["figure"], "p99");
    let summary = std::fs::read_to_string(format!("{dir}/summary.txt")).unwrap();
    assert!(
        summary.starts_with("fabdiag sweep: 3 nodes, 3 pairs in 3 rounds, write-lat 8 B, p99 (us, lower is better)\n"),
        "{summary}"
    );
    // resumed with the mean: refused before anything runs, or one report
    // would hold pairs judged by two figures
    // (rank 0 then tells the ranks that join why, for the join timeout)
    let mut mean = lat_rank(0, &["--output", &dir, "--resume", "--join-timeout", "2"]);
    let o = Proc::spawn(&mut mean).wait(LIMIT);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.one_line()
            .ends_with("its pairs were judged by their p99; this sweep's by their mean (--figure)"),
        "{}",
        o.stderr
    );
    // a report made again, from the document or from what the folder
    // recorded alone, is still of the p99
    std::fs::remove_file(format!("{dir}/sweep.json")).unwrap();
    let again = run(&["sweep", "--report", &dir, "--json"], LIMIT);
    assert_eq!(again.json()["metric"]["name"], "p99 latency", "{}", again.stderr);
    // a sweep judged by the mean is not compared with it
    expect_failure(
        &["sweep", "--simulate", "3", "--lat", "-s", "8", "--baseline", &dir],
        1,
        "it measured write-lat 8 B, p99 (p99 latency), this sweep measures write-lat 8 B (latency)",
    );
}

#[test]
fn a_rank_that_never_joins_is_reported_missing_and_the_rest_complete() {
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let n = 4;
    // rank 2 is never started
    let others: Vec<Proc> = [1, 3]
        .iter()
        .map(|&r| Proc::spawn(&mut rank(r, n, &coord, &["--join-timeout", "3"])))
        .collect();
    let zero = Proc::spawn(rank(0, n, &coord, &["--join-timeout", "3", "--json"]).env("FABDIAG_PROGRESS_SECS", "0"))
        .wait(LIMIT);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    assert_eq!(zero.code, Some(2), "incomplete sweep: {}", zero.stderr);
    // the missing rank's pairs are not counted as done while it runs
    assert!(
        zero.stderr
            .contains("round 3 of 3; 3/4 ranks, 2/6 pairs done, 2 not run, 0 failed; "),
        "{}",
        zero.stderr
    );
    let doc = zero.json();
    assert_eq!(doc["nodes"][2]["status"], "missing");
    assert!(doc["nodes"][2]["reason"]
        .as_str()
        .unwrap()
        .contains("never joined within 3 s"));
    assert_eq!(pairs_measured(&doc), 3, "0-1, 0-3 and 1-3 still ran");
    assert_eq!(doc["verdict"]["untested_pairs"], 3);
    let untested: Vec<&Value> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["untested"] == true)
        .collect();
    assert!(untested.iter().all(|p| p["a"] == 2 || p["b"] == 2));
    assert!(untested[0]["error"].as_str().unwrap().contains("rank 2"));
}

/// A rank that cannot take part (here: `-t 0` where no GPU runtime loads;
/// the others have the host-memory stand-in) says so on its own stderr
/// and tells rank 0, whose report names the reason at once instead of
/// "never joined" after the join timeout (60 s here); the rest is
/// measured. When rank 0 is the one that cannot, every rank hears why.
#[test]
fn a_rank_that_cannot_start_is_named_with_its_reason_at_once() {
    let _cpu = cpu();
    let no_runtime = "-t/-r ask for GPU memory but no GPU runtime loads here";
    for broken in [2, 0] {
        let coord = format!("127.0.0.1:{}", free_port());
        let start = |r: usize, extra: &[&str]| {
            let mut c = rank(
                r,
                3,
                &coord,
                &[&["-P", "shm", "-t", "0", "--join-timeout", "60"][..], extra].concat(),
            );
            if r != broken {
                c.env("FABDIAG_TEST_HOST_AS_GPU", "1");
            }
            Proc::spawn(&mut c)
        };
        let t = Instant::now();
        let others: Vec<Proc> = (1..3).map(|r| start(r, &[])).collect();
        let zero = start(0, &["--json"]).wait(LIMIT);
        let others: Vec<Output> = others.into_iter().map(|p| p.wait(LIMIT)).collect();
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "broken rank {broken}: {:?}",
            t.elapsed()
        );
        if broken == 2 {
            assert_eq!(others[1].code, Some(4), "{}", others[1].stderr);
            assert!(others[1]
                .one_line()
                .starts_with(&format!("fabdiag sweep: rank 2: {no_runtime}")));
            assert_eq!(others[0].code, Some(0), "{}", others[0].stderr);
            assert_eq!(zero.code, Some(2), "{}", zero.stderr);
            let doc = zero.json();
            assert_eq!(doc["nodes"][2]["status"], "missing");
            let why = doc["nodes"][2]["reason"].as_str().unwrap_or_default();
            assert!(why.starts_with(&format!("could not start: {no_runtime}")), "{why}");
            assert_eq!(pairs_measured(&doc), 1, "0-1 still ran");
            assert_eq!(doc["verdict"]["untested_pairs"], 2);
        } else {
            assert_eq!(zero.code, Some(4), "{}", zero.stderr);
            for (i, o) in others.iter().enumerate() {
                assert_eq!(o.code, Some(1), "rank {}: {}", i + 1, o.stderr);
                assert!(
                    o.one_line().contains(&format!("rank 0 stopped: {no_runtime}")),
                    "{}",
                    o.stderr
                );
            }
        }
    }
}

#[test]
fn a_rank_killed_mid_sweep_is_lost_and_the_others_pairs_complete() {
    let _cpu = cpu();
    // the first round's results in, then rank 3 killed
    let (_folder, _, mut others, zero) = sweep_under_way("sweepkill", 4, 2);
    others[2].signal(Signal::SIGKILL);
    let zero = zero.wait(LIMIT * 2);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(doc["nodes"][3]["status"], "lost", "{}", doc["nodes"][3]);
    let measured = pairs_measured(&doc);
    // the pairs of ranks 0, 1 and 2 all ran; rank 3 did at most its first
    assert!(measured_without(&doc, 3), "{}", doc["pairs"]);
    assert!((3..=4).contains(&measured), "{measured} measured");
    assert_eq!(doc["pairs"].as_array().unwrap().len(), 6, "every pair is in the report");
    // round 2's 3>1 was under way: what rank 1 saw of it is kept
    let e = pair_error(&doc, 1, 3);
    assert!(
        e.starts_with("client rank 3 (") && e.contains(" (server rank 1: "),
        "{e}"
    );
    for p in others.drain(..2) {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

/// A rank lost mid-sweep is written to nodes.json as lost when it is lost,
/// so a report made from the folder after rank 0 itself died (`--report`
/// on pairs.jsonl and nodes.json) names it lost, not ok.
#[test]
fn a_rank_lost_before_rank_0_dies_is_lost_in_the_report_made_from_its_folder() {
    let _cpu = cpu();
    let (_folder, dir, mut others, zero) = sweep_under_way("sweeplostdead", 4, 2);
    others[2].signal(Signal::SIGKILL);
    let nodes = format!("{dir}/nodes.json");
    let rank_3 = || {
        std::fs::read_to_string(&nodes)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map(|v| v[3]["status"].clone())
    };
    until("rank 3 lost in nodes.json", || rank_3() == Some("lost".into()));
    zero.signal(Signal::SIGKILL);
    let _ = zero.wait(LIMIT);
    for p in others.drain(..) {
        p.signal(Signal::SIGKILL);
        let _ = p.wait(LIMIT);
    }
    // (rank 0 may have finished its report first: without it, the
    // folder's report is made from what was kept beside the pairs)
    let _ = std::fs::remove_file(format!("{dir}/sweep.json"));
    let o = run(&["sweep", "--report", &dir, "--json"], LIMIT);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["nodes"][3]["status"], "lost", "{}", doc["nodes"][3]);
    assert!(
        doc["nodes"][3]["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{}",
        doc["nodes"][3]
    );
    assert!(doc["verdict"]["lost_nodes"].as_array().unwrap().contains(&3.into()));
}

/// A rank that stops answering mid-sweep but keeps its connections open
/// (SIGSTOP: a hung node) is lost once its pair partner has reported their
/// pair failed and 15 s more have passed, not at the end of the step's
/// limit (300 s here); its pair keeps what the partner saw, and the rest
/// of the sweep runs.
#[test]
fn a_silent_rank_is_lost_soon_after_its_partner_reports_it() {
    let _cpu = cpu();
    let (_folder, dir) = tempdir("sweepsilent");
    let coord = format!("127.0.0.1:{}", free_port());
    let big: &[&str] = &["-n", "200", "--pair-timeout", "300"];
    let mut others: Vec<Proc> = (1..4).map(|r| Proc::spawn(&mut rank(r, 4, &coord, big))).collect();
    let zero = Proc::spawn(&mut rank(0, 4, &coord, &[big, &["--json", "--output", &dir]].concat()));
    records(&dir, 2);
    let t = Instant::now();
    others[2].signal(Signal::SIGSTOP);
    let zero = zero.wait(Duration::from_secs(200));
    let took = t.elapsed();
    others[2].signal(Signal::SIGKILL);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    assert!(took < Duration::from_secs(90), "{took:?}");
    let doc = zero.json();
    assert_eq!(doc["nodes"][3]["status"], "lost", "{}", doc["nodes"][3]);
    let why = doc["nodes"][3]["reason"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("stopped answering: no answer within 15 s of rank ")
            && why.contains("'s report that their pair failed"),
        "{why}"
    );
    let failed: Vec<&Value> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["b"] == 3 && !p["value"].is_number() && p["untested"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{}", doc["pairs"]);
    let e = failed[0]["error"].as_str().unwrap_or_default();
    assert!(e.contains("stopped answering"), "{e}");
    assert!(measured_without(&doc, 3), "{}", doc["pairs"]);
    for p in others.drain(..2) {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

/// The hook that holds an endpoint's 40th data call inside for good, as
/// psm3 holds one whose peer is gone: within a rank's first tests as a
/// client (each makes hundreds), whatever the schedule.
const HELD: (&str, &str) = ("FABDIAG_TEST_STALL_DATA_CALL", "40");

/// Rank 0's report of a sweep that rank `r`, held inside a provider call,
/// left: `r` lost with the held call as its reason, that call the error of
/// exactly one pair run with it, and every pair without it measured.
fn held_rank_left(doc: &Value, r: u64) {
    let node = &doc["nodes"][r as usize];
    assert_eq!(node["status"], "lost", "{node}");
    let why = node["reason"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("left the sweep: provider '") && why.contains(" has not returned from fi_"),
        "{node}"
    );
    assert!(measured_without(doc, r), "{}", doc["pairs"]);
    let held = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| (p["a"] == r || p["b"] == r) && p["untested"] == false)
        .filter(|p| {
            p["error"]
                .as_str()
                .is_some_and(|e| e.contains("has not returned from fi_"))
        })
        .count();
    assert_eq!(held, 1, "{}", doc["pairs"]);
}

/// A rank held inside a provider call gives its part up after the guard's
/// 10 s: it answers that pair test with the held call, tells rank 0 it
/// leaves and why, says so in one line and exits 2, so rank 0 records
/// why and the other ranks' pairs complete. (Before, such a rank never exited, and its launcher never
/// returned.)
#[test]
fn a_rank_held_inside_a_provider_call_leaves_saying_why() {
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = [1, 3]
        .iter()
        .map(|&r| Proc::spawn(&mut rank(r, 4, &coord, &[])))
        .collect();
    let held = Proc::spawn(rank(2, 4, &coord, &[]).env(HELD.0, HELD.1));
    let zero = Proc::spawn(&mut rank(0, 4, &coord, &["--json"])).wait(LIMIT * 2);
    let h = held.wait(LIMIT);
    assert_eq!(h.code, Some(2), "{}", h.stderr);
    let line = h.one_line();
    assert!(
        line.starts_with("fabdiag sweep: rank 2: provider '")
            && line.contains(" has not returned from fi_")
            && line.contains(" for 10 s in the pair test with rank ")
            && line.ends_with("; this rank leaves the sweep"),
        "{line}"
    );
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    held_rank_left(&zero.json(), 2);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

/// Rank 0's own rank held inside a provider call gives its part up the
/// same way; the sweep goes on without it, and rank 0 still writes the
/// report (rank 0 lost, its held pair's error, every other pair
/// measured). Before, a held rank 0 held the whole sweep for good.
#[test]
fn rank_0_held_inside_a_provider_call_still_reports_the_sweep() {
    let _cpu = cpu();
    let (_folder, dir) = tempdir("sweepheld0");
    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = (1..4).map(|r| Proc::spawn(&mut rank(r, 4, &coord, &[]))).collect();
    let zero = Proc::spawn(rank(0, 4, &coord, &["--json", "--output", &dir]).env(HELD.0, HELD.1)).wait(LIMIT * 2);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    assert!(
        zero.stderr.contains("fabdiag sweep: rank 0: provider '")
            && zero.stderr.contains("; this rank leaves the sweep"),
        "{}",
        zero.stderr
    );
    held_rank_left(&zero.json(), 0);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/sweep.json")).unwrap()).unwrap();
    assert_eq!(kept["nodes"][0]["status"], "lost");
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

/// `--output` on a full disk (a 16 KiB tmpfs): one line naming the file
/// and the first pair it could not record, nothing written after that
/// (so every line there but a torn last one is readable by --resume), the
/// whole report still on stdout, and exit 2, as for any failure of the run.
#[test]
fn a_full_output_disk_loses_no_result_from_the_report() {
    require_root();
    let (_folder, dir) = tempdir("sweepfull");
    must(&["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", &dir]);
    struct Unmount<'a>(&'a str);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&dir);
    let out = format!("{dir}/out");
    let o = run(&["sweep", "--simulate", "30", "--retest", "0", "--output", &out], LIMIT);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    let why = format!("cannot record results in {out}/pairs.jsonl from pair ");
    assert_eq!(o.stderr.matches(&why).count(), 1, "{}", o.stderr);
    assert!(o.stdout.contains("pairs: 435 measured, 0 failed"), "{}", o.stdout);
    let recorded = std::fs::read_to_string(format!("{out}/pairs.jsonl")).unwrap();
    let lines: Vec<&str> = recorded.lines().collect();
    assert!(lines.len() > 10 && lines.len() < 435, "{} lines", lines.len());
    for l in &lines[..lines.len() - 1] {
        assert!(serde_json::from_str::<Value>(l).is_ok(), "{l}");
    }
}

/// Waits until `dir`'s pairs.jsonl holds `n` records.
fn records(dir: &str, n: usize) {
    until(&format!("{n} records in {dir}/pairs.jsonl"), || {
        std::fs::read_to_string(format!("{dir}/pairs.jsonl")).map_or(0, |t| t.lines().count()) >= n
    });
}

/// Waits up to `LIMIT` for `done`, failing the test naming `what`.
fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !done() {
        assert!(Instant::now() < deadline, "no {what} within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `n` real ranks with pair tests big enough to act on mid-sweep, rank 0
/// writing JSON and `--output`, once the first round's `first` records are
/// in: (the output directory's guard and path, ranks 1.., rank 0).
fn sweep_under_way(tag: &str, n: usize, first: usize) -> (tempfile::TempDir, String, Vec<Proc>, Proc) {
    let (folder, dir) = tempdir(tag);
    let coord = format!("127.0.0.1:{}", free_port());
    let big: &[&str] = &["-n", "200", "--pair-timeout", "20"];
    let others: Vec<Proc> = (1..n).map(|r| Proc::spawn(&mut rank(r, n, &coord, big))).collect();
    let zero = Proc::spawn(&mut rank(0, n, &coord, &[big, &["--json", "--output", &dir]].concat()));
    records(&dir, first);
    (folder, dir, others, zero)
}

/// Ctrl-C under a launcher signals every rank: rank 0 ends the sweep after
/// the round in progress, marks the rounds left "not tested" and writes
/// its report; every rank then dies by the signal. No rank is reported
/// lost, since each was told to finish.
#[test]
fn a_stop_signal_to_every_rank_ends_the_sweep_with_its_report() {
    let _cpu = cpu();
    // six ranks, five rounds of three: a stop after the first round leaves
    // rounds untested even if the next one or two started before it landed
    let (_folder, dir, others, zero) = sweep_under_way("sweepstop", 6, 3);
    // rank 0 first, as a launcher may: the others then finish their round
    zero.signal(Signal::SIGTERM);
    for p in &others {
        p.signal(Signal::SIGTERM);
    }
    let zero = zero.wait(LIMIT * 2);
    assert_eq!(
        (zero.code, zero.signal),
        (None, Some(Signal::SIGTERM as i32)),
        "{}",
        zero.stderr
    );
    assert!(
        zero.stderr.ends_with("fabdiag sweep: stopped by SIGTERM\n"),
        "{}",
        zero.stderr
    );
    let doc = zero.json();
    assert_eq!(doc["stopped"], "SIGTERM");
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 15, "every pair is in the report");
    let measured = pairs_measured(&doc);
    let untested = doc["verdict"]["untested_pairs"].as_u64().unwrap() as usize;
    assert!(
        measured >= 3 && untested >= 3,
        "{measured} measured, {untested} not tested"
    );
    assert_eq!(measured + untested, 15, "{}", doc["pairs"]);
    assert_eq!(doc["verdict"]["failed_pairs"], 0, "{}", doc["pairs"]);
    for p in pairs.iter().filter(|p| p["untested"] == true) {
        assert_eq!(p["error"], "not tested: the sweep was stopped by SIGTERM", "{p}");
    }
    assert!(doc["nodes"].as_array().unwrap().iter().all(|x| x["status"] == "ok"));
    let summary = std::fs::read_to_string(format!("{dir}/summary.txt")).unwrap();
    assert!(
        summary.contains("\nstopped by SIGTERM: the pairs of the rounds left were not tested"),
        "{summary}"
    );
    assert!(std::path::Path::new(&format!("{dir}/report.html")).is_file());
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert_eq!(
            (o.code, o.signal),
            (None, Some(Signal::SIGTERM as i32)),
            "rank {}: {}",
            i + 1,
            o.stderr
        );
        assert_eq!(
            o.one_line(),
            format!("fabdiag sweep: rank {}: stopped by SIGTERM", i + 1)
        );
    }
}

/// One rank stopped on its own obeys one more order, answers the next with
/// the reason and leaves; the sweep goes on without it, and that pair's
/// error names why.
#[test]
fn a_rank_stopped_alone_leaves_naming_why() {
    let _cpu = cpu();
    // six ranks, five rounds: the stopped rank obeys the order that may
    // already be on its way (rank 0 could be stopping too) and leaves at
    // the one after
    let (_folder, _, mut others, zero) = sweep_under_way("sweepstop1", 6, 3);
    others[2].signal(Signal::SIGINT);
    let zero = zero.wait(LIMIT * 2);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert!(doc.get("stopped").is_none(), "rank 0 was not stopped: {doc}");
    // its next pair failed naming why; a round after that finds it gone
    assert!(
        doc["nodes"][3]["pairs_failed"].as_u64() >= Some(1),
        "{}",
        doc["nodes"][3]
    );
    let said = doc["pairs"].as_array().unwrap().iter().any(|p| {
        p["error"]
            .as_str()
            .is_some_and(|e| e.contains("rank 3 was stopped by SIGINT"))
    });
    assert!(said, "{}", doc["pairs"]);
    let three = others.remove(2).wait(LIMIT);
    assert_eq!(
        (three.code, three.signal),
        (None, Some(Signal::SIGINT as i32)),
        "{}",
        three.stderr
    );
    assert_eq!(three.one_line(), "fabdiag sweep: rank 3: stopped by SIGINT");
    for p in others {
        assert_eq!(p.wait(LIMIT).code, Some(0));
    }
}

/// A stop while rank 0 still waits for ranks to join is heard at once,
/// not after the join timeout: the ranks not there are named as such; a
/// rank still trying to reach rank 0 stops at once as well.
#[test]
fn a_stop_during_the_join_ends_the_sweep_at_once() {
    let port = free_port();
    let coord = format!("127.0.0.1:{port}");
    // rank 0's own rank not joined yet either (as on a loaded node): it
    // must not retry for the join timeout once its coordinator has ended
    let mut zero = Proc::spawn(
        rank(0, 3, &coord, &["--join-timeout", "60", "--json"]).env("FABDIAG_TEST_OWN_JOIN_DELAY_MS", "2000"),
    );
    wait_listening(&mut zero, "127.0.0.1", port);
    let t = Instant::now();
    zero.signal(Signal::SIGINT);
    let o = zero.wait(LIMIT);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!((o.code, o.signal), (None, Some(Signal::SIGINT as i32)), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["stopped"], "SIGINT");
    assert_eq!(doc["verdict"]["untested_pairs"], 3, "{}", doc["pairs"]);
    for r in [1, 2] {
        assert_eq!(doc["nodes"][r]["status"], "missing");
        assert_eq!(
            doc["nodes"][r]["reason"],
            "had not joined when the sweep was stopped by SIGINT"
        );
    }
    // a rank still trying to reach its coordinator hears a stop too
    let one = Proc::spawn(&mut rank(1, 3, &coord, &["--join-timeout", "60"]));
    // once its watcher holds SIGTERM (blocked, for sigwait), not before
    let deadline = Instant::now() + LIMIT;
    while !signal_in_mask(&one.pid().to_string(), "SigBlk", Signal::SIGTERM) {
        assert!(Instant::now() < deadline, "rank 1 never watched for SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    }
    let t = Instant::now();
    one.signal(Signal::SIGTERM);
    let o = one.wait(LIMIT);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!((o.code, o.signal), (None, Some(Signal::SIGTERM as i32)), "{}", o.stderr);
    assert_eq!(o.one_line(), "fabdiag sweep: rank 1: stopped by SIGTERM");
}

/// `--simulate` stops the same way (its ranks are threads of the process).
#[test]
fn a_stopped_simulation_reports_what_it_measured() {
    let (_folder, dir) = tempdir("simstop");
    let sim = Proc::spawn(&mut fabdiag(&[
        "sweep",
        "--simulate",
        "40",
        "--sim-pair-ms",
        "50",
        "--json",
        "--output",
        &dir,
    ]));
    records(&dir, 1);
    sim.signal(Signal::SIGINT);
    let o = sim.wait(LIMIT);
    assert_eq!((o.code, o.signal), (None, Some(Signal::SIGINT as i32)), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["stopped"], "SIGINT");
    assert_eq!(doc["pairs"].as_array().unwrap().len(), 780);
    assert!(pairs_measured(&doc) >= 1);
    assert!(doc["verdict"]["untested_pairs"].as_u64().unwrap() >= 1);
    assert_eq!(doc["retests"].as_array().unwrap().len(), 0, "no re-test after a stop");
    let page = std::fs::read_to_string(format!("{dir}/report.html")).unwrap();
    assert!(
        page.contains(" not tested (stopped by SIGINT)"),
        "the page's verdict says why"
    );
}

#[test]
fn bad_options_fail_at_once_with_one_line() {
    let o = run(&["sweep", "--outlier-fraction", "2"], SHORT);
    assert_eq!(o.code, Some(1));
    assert_eq!(
        o.one_line(),
        "fabdiag sweep: invalid --outlier-fraction: '2' (must be between 0 and 1)"
    );
    let o = run(&["sweep", "-s", "banana"], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.one_line().starts_with("fabdiag sweep: write-bw: "), "{}", o.stderr);
    // a GPU list is checked whole, before any rank runs
    let o = run(&["sweep", "--plan", "-t", "0,x"], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(
        o.one_line(),
        "fabdiag sweep: write-bw: Invalid src gpu device: 0,x ('x' is not a GPU index)"
    );
    // a stray operand or --local is named (--plan takes no count)
    for (args, named) in [
        (&["sweep", "--plan", "3"][..], "unexpected argument '3': "),
        (&["sweep", "--local"][..], "--local: "),
    ] {
        let o = run(args, SHORT);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert_eq!(
            o.one_line(),
            format!("fabdiag sweep: {named}a sweep finds its peers itself (give no address and no --local)")
        );
    }
    // more ranks than a sweep takes: one line, not rank 0 out of memory
    // (before, --plan --ranks 4294967296 died of a failed allocation and
    // 18446744073709551615 of a panic)
    let huge = "more than a sweep takes (65536): rank 0 would keep a record of each of their";
    for args in [
        &["sweep", "--plan", "--ranks", "65537"][..],
        &["sweep", "--plan", "--ranks", "18446744073709551615"][..],
        &["sweep", "--simulate", "100000"][..],
    ] {
        let o = run(args, SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(o.one_line().contains(huge), "{args:?}: {}", o.stderr);
    }
    let o = run(&["sweep", "--plan", "--ranks", "65536", "--rails", "8"], SHORT);
    assert_eq!(o.code, Some(0), "the most it takes: {}", o.stderr);
    let mut c = fabdiag(&["sweep", "--coordinator", "127.0.0.1:1"]);
    c.env("FABDIAG_RANK", "0").env("FABDIAG_SIZE", "100000000");
    let o = Proc::spawn(&mut c).wait(SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.one_line().contains("100000000 ranks is more than a sweep takes"),
        "{}",
        o.stderr
    );
    // no launcher and no FABDIAG_RANK
    let o = run(&["sweep", "--coordinator", "127.0.0.1:1"], SHORT);
    assert_eq!(o.code, Some(1));
    assert!(o.one_line().contains("FABDIAG_RANK"), "{}", o.stderr);
    // a size rank 0 does not share is refused, on that rank, at once
    let coord = format!("127.0.0.1:{}", free_port());
    let zero = Proc::spawn(&mut rank(0, 2, &coord, &["--join-timeout", "5", "--json"]));
    let stray = Proc::spawn(&mut rank(1, 3, &coord, &["--join-timeout", "5"])).wait(LIMIT);
    assert_eq!(stray.code, Some(1), "{}", stray.stderr);
    assert!(
        stray.one_line().contains("started with 3 ranks, rank 0 with 2"),
        "{}",
        stray.stderr
    );
    let zero = zero.wait(LIMIT);
    assert_eq!(zero.code, Some(2));
    // a coordinator that is not there: bounded, one line
    let t = Instant::now();
    let mut c = rank(1, 2, "127.0.0.1:1", &["--join-timeout", "2"]);
    let o = Proc::spawn(&mut c).wait(LIMIT);
    assert_eq!(o.code, Some(2));
    assert!(
        o.one_line()
            .contains("cannot reach the sweep coordinator at 127.0.0.1:1 within 2 s"),
        "{}",
        o.stderr
    );
    assert!(t.elapsed() < LIMIT);
}

#[test]
fn when_rank_0_cannot_start_every_rank_is_told_at_once() {
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut rank(r, 3, &coord, &[]))).collect();
    let zero = Proc::spawn(&mut rank(0, 3, &coord, &["--output", "/proc/fabdiag-no-such-dir"])).wait(LIMIT);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    assert!(zero.one_line().contains("/proc/fabdiag-no-such-dir"), "{}", zero.stderr);
    for (i, p) in others.into_iter().enumerate() {
        // well inside the 60 s join timeout they would otherwise wait out
        let o = p.wait(Duration::from_secs(20));
        assert_eq!(o.code, Some(1), "rank {}: {}", i + 1, o.stderr);
        assert!(
            told_rank_0_stopped(&o, "/proc/fabdiag-no-such-dir"),
            "rank {}: {}",
            i + 1,
            o.stderr
        );
    }
}

/// `-t/-r` in the tool options put every pair test's buffers on the GPU
/// (the GPU plumbing's hook: host memory through the device path, one
/// "GPU", index 0; crates/cli/tests/gpu_plumbing.rs): over shm each pair
/// is measured with the data checked (on by default for GPU buffers).
/// A list gives each local rank its own GPU, as a `-d` list gives it its
/// NIC, and the report names each rank's: here local rank 2 takes "GPU 1",
/// which the hook lacks, so its pairs fail naming it while 0-1 is measured.
#[test]
fn gpu_buffers_reach_every_pair_test() {
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let gpu = ["-P", "shm", "-t", "0,0,1", "-r", "0"];
    let start = |r: usize, extra: &[&str]| {
        let mut c = rank(r, 3, &coord, &[&gpu[..], extra].concat());
        c.env("FABDIAG_TEST_HOST_AS_GPU", "1");
        c.env("FABDIAG_LOCAL_RANK", r.to_string());
        Proc::spawn(&mut c)
    };
    let others: Vec<Proc> = (1..3).map(|r| start(r, &[])).collect();
    let zero = start(0, &["--json", "--outlier-fraction", "0.001"]).wait(LIMIT * 2);
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
    }
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(doc["options"]["test"]["verify"], true);
    let gpus: Vec<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["gpu"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(gpus, ["GPU 0", "GPU 0", "TX GPU 1 RX GPU 0"]);
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    for p in pairs {
        if p["b"] == 2 {
            let e = p["error"].as_str().unwrap_or_default();
            assert!(e.contains("GPU 1 does not exist"), "{p}");
        } else {
            assert!(p["value"].as_f64().is_some_and(|v| v > 0.0), "{p}");
        }
    }
}

/// A setting rank 0 cannot run (an unknown provider; `-t` on tcp, which
/// lacks FI_HMEM) ends the sweep at once with rank 0's reason on every
/// rank, instead of failing every pair round after round: exit 4 on rank
/// 0, the others told it stopped.
#[test]
fn a_test_rank_0_cannot_run_ends_the_sweep_at_once() {
    let _cpu = cpu();
    for (args, reason) in [
        (&["-P", "nosuch"][..], "no libfabric provider named 'nosuch'"),
        (
            &["-t", "0"][..],
            "provider 'tcp' cannot run this test: it lacks RMA write with device memory (FI_HMEM)",
        ),
    ] {
        let coord = format!("127.0.0.1:{}", free_port());
        let start = |r: usize| {
            let mut c = rank(r, 3, &coord, args);
            c.env("FABDIAG_TEST_HOST_AS_GPU", "1");
            Proc::spawn(&mut c)
        };
        let t0 = Instant::now();
        let others: Vec<Proc> = (1..3).map(start).collect();
        let zero = start(0).wait(LIMIT);
        assert_eq!(zero.code, Some(4), "{args:?}: {}", zero.stderr);
        assert!(zero.one_line().contains(reason), "{args:?}: {}", zero.stderr);
        for (i, p) in others.into_iter().enumerate() {
            let o = p.wait(LIMIT);
            assert_eq!(o.code, Some(1), "rank {}: {}", i + 1, o.stderr);
            assert!(told_rank_0_stopped(&o, reason), "rank {}: {}", i + 1, o.stderr);
        }
        // well inside the 60 s join timeout the others would wait out
        assert!(t0.elapsed() < Duration::from_secs(20), "{args:?}: {:?}", t0.elapsed());
    }
}

/// Rank 0 holds a connection per rank. A soft open-file limit below what
/// that needs is raised within the hard limit (a simulation of 300 ranks,
/// 600 sockets, under a soft limit of 256); a hard limit below it refuses
/// the sweep before it starts, on rank 0 (exit 4, one line) and on every
/// rank that joins, instead of failing mid-join.
#[test]
fn rank_0_makes_room_for_a_connection_per_rank_or_says_why_not() {
    let _cpu = cpu();
    let raised = Proc::spawn(&mut limited(
        "-Sn 256",
        &["sweep", "--simulate", "300", "--retest", "0"],
    ))
    .wait(LIMIT * 2);
    assert_eq!(raised.code, Some(0), "{}", raised.stderr);
    assert!(raised.stdout.contains("pairs: 44850 measured"), "{}", raised.stdout);

    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut rank(r, 3, &coord, &[]))).collect();
    let mut zero = limited("-n 100", &["sweep", "--coordinator", &coord]);
    zero.args(SMALL).env("FABDIAG_RANK", "0").env("FABDIAG_SIZE", "3");
    let zero = Proc::spawn(&mut zero).wait(LIMIT);
    let why = "rank 0 needs about 131 open files for 3 connections and may open only 100 here";
    assert_eq!(zero.code, Some(4), "{}", zero.stderr);
    assert!(zero.one_line().contains(why), "{}", zero.stderr);
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert!(told_rank_0_stopped(&o, why), "rank {}: {}", i + 1, o.stderr);
    }
}

/// Connections that reach rank 0's port and say nothing (a port scanner)
/// delay no join: rank 0 reads a connection once it has something to say.
/// Read in turn, three of them cost 5 s each before the first rank joined.
#[test]
fn silent_connections_to_the_coordinator_delay_no_join() {
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let zero = Proc::spawn(&mut rank(0, 3, &coord, &["--json"]));
    let t0 = Instant::now();
    let strays: Vec<std::net::TcpStream> = (0..3)
        .map(|_| loop {
            match std::net::TcpStream::connect(&coord) {
                Ok(s) => break s,
                Err(e) => {
                    assert!(t0.elapsed() < LIMIT, "rank 0 never listened: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        })
        .collect();
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut rank(r, 3, &coord, &[]))).collect();
    let zero = zero.wait(LIMIT);
    assert_eq!(zero.code, Some(0), "{}", zero.stderr);
    let join_s = zero.json()["overhead"]["join_s"].as_f64().unwrap_or(f64::MAX);
    assert!(join_s < 4.0, "the join took {join_s} s");
    for p in others {
        assert_eq!(p.wait(LIMIT).code, Some(0));
    }
    drop(strays);
}

#[test]
fn plan_and_simulation_need_no_fabric() {
    let o = run(&["sweep", "--plan", "--ranks", "5"], SHORT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.lines().filter(|l| l.starts_with("round")).count(), 5);
    assert!(
        o.stdout.contains("5 ranks: 5 rounds of 2 pairs (10 pairs in all"),
        "{}",
        o.stdout
    );
    let o = run(&["sweep", "--simulate", "64", "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(pairs_measured(&doc), 64 * 63 / 2);
    assert_eq!(doc["overhead"]["steps"].as_array().unwrap().len(), 63);
}

/// A round's default limit allows its pair test's data at 100 MB/s, its
/// iterations at 1 ms and operations at 10 µs, or a duration run's whole
/// duration, plus a minute: a flat minute lost every healthy rank of a
/// sweep moving more (the default atomic-bw took 246 s over tcp here, the
/// default write-bw's 16.7 GB take 143 s on 1 GbE). `--pair-timeout` wins.
#[test]
fn a_rounds_default_limit_allows_the_pair_tests_data_at_the_floor() {
    for (extra, limit) in [
        (&[][..], 231),
        (&["-s", "1048576", "-n", "100"][..], 328),
        (&["--lat"][..], 60),
        (&["--tool", "atomic-bw"][..], 493),
        (&["-D", "5", "-s", "1024:4096"][..], 75),
        (&["--tool", "atomic-bw", "--pair-timeout", "7"][..], 7),
    ] {
        let args = [&["sweep", "--simulate", "2", "--sim-pair-ms", "0", "--json"][..], extra].concat();
        let o = run(&args, LIMIT);
        assert_eq!(o.code, Some(0), "{extra:?}: {}", o.stderr);
        assert_eq!(o.json()["options"]["pair_timeout_s"], limit, "{extra:?}");
    }
}

/// `--rails K`: only ranks on one rail (rank mod K) are paired, all rails
/// in the same rounds; rails that do not fit the ranks are refused.
#[test]
fn on_rails_only_ranks_of_one_rail_are_paired() {
    let o = run(&["sweep", "--plan", "--ranks", "12", "--rails", "3"], SHORT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.lines().filter(|l| l.starts_with("round")).count(), 3);
    assert!(
        o.stdout
            .contains("12 ranks on 3 rails (rank mod 3), 4 on each: 3 rounds of 6 pairs (18 pairs in all"),
        "{}",
        o.stdout
    );
    for (args, what) in [
        (
            &["--simulate", "10", "--rails", "3"][..],
            "10 ranks, not a multiple of 3",
        ),
        (&["--plan", "--ranks", "4", "--rails", "4"][..], "pairs no one"),
        (
            &["--simulate", "12", "--rails", "3", "--sim-slow", "0-1"][..],
            "--sim-slow names the pair 0-1, which --rails 3 never pairs",
        ),
    ] {
        let o = run(&[&["sweep"][..], args].concat(), SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(o.one_line().contains(what), "{args:?}: {}", o.stderr);
    }
    let o = run(&["sweep", "--simulate", "12", "--rails", "3", "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs_measured(&doc), 18);
    assert!(pairs
        .iter()
        .all(|p| p["a"].as_u64().unwrap() % 3 == p["b"].as_u64().unwrap() % 3));
    assert_eq!(doc["schedule"]["rails"], 3);
    assert_eq!(
        (
            doc["schedule"]["rounds"].as_u64(),
            doc["schedule"]["total_pairs"].as_u64()
        ),
        (Some(3), Some(18))
    );
    assert_eq!(doc["matrix"][0][1], Value::Null, "ranks 0 and 1 are on different rails");
    assert!(doc["matrix"][0][3].is_number());
    // every rank of rail 1 slow: one slow rail
    let o = run(
        &[
            "sweep",
            "--simulate",
            "12",
            "--rails",
            "3",
            "--sim-slow",
            "1,4,7,10",
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["verdict"]["slow_rails"], serde_json::json!([1]), "{}", doc["rails"]);
    assert_eq!(doc["rails"][1]["slow_ranks"], 4);
    let (_folder, dir) = tempdir("rails");
    let o = run(&["sweep", "--simulate", "12", "--rails", "3", "--output", &dir], LIMIT);
    assert!(
        o.stdout
            .starts_with("fabdiag sweep: 12 nodes, 18 pairs on 3 rails (rank mod 3) in 3 rounds,"),
        "{}",
        o.stdout
    );
    // its results are not those of a sweep of every pair
    expect_failure(
        &["sweep", "--simulate", "12", "--output", &dir, "--resume"],
        2,
        "it holds a sweep on 3 rail(s); this one is on 1 (--rails)",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Real ranks on two rails: each pairs with its own rail only; a rank
/// the launcher placed as another local rank than its rail takes no part
/// and says why, and rank 0's report names it.
#[test]
fn on_rails_a_rank_placed_off_its_rail_says_so() {
    let _cpu = cpu();
    for misplaced in [None, Some(3)] {
        let coord = format!("127.0.0.1:{}", free_port());
        let start = |r: usize, extra: &[&str]| {
            let mut c = rank(r, 4, &coord, &[&["--rails", "2"][..], extra].concat());
            let local = if misplaced == Some(r) { 0 } else { r % 2 };
            c.env("FABDIAG_LOCAL_RANK", local.to_string());
            Proc::spawn(&mut c)
        };
        let others: Vec<Proc> = (1..4).map(|r| start(r, &[])).collect();
        let zero = start(0, &["--json"]).wait(LIMIT * 2);
        let others: Vec<Output> = others.into_iter().map(|p| p.wait(LIMIT)).collect();
        let doc = zero.json();
        assert_eq!(doc["schedule"]["total_pairs"], 2, "{}", zero.stderr);
        assert!(doc["pairs"][0]["value"].is_number() || doc["pairs"][1]["value"].is_number());
        if misplaced.is_none() {
            assert_eq!(zero.code, Some(0), "{}", zero.stderr);
            assert_eq!(pairs_measured(&doc), 2);
            for (i, o) in others.iter().enumerate() {
                assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
            }
        } else {
            let want = "--rails 2 puts rank 3 on rail 1, but it is local rank 0 on its node (rail 0)";
            assert_eq!(others[2].code, Some(1), "{}", others[2].stderr);
            assert!(others[2].one_line().contains(want), "{}", others[2].stderr);
            assert_eq!(zero.code, Some(2), "{}", zero.stderr);
            assert_eq!(doc["nodes"][3]["status"], "missing");
            let why = doc["nodes"][3]["reason"].as_str().unwrap_or_default();
            assert!(why.starts_with(&format!("could not start: {want}")), "{why}");
            assert_eq!(pairs_measured(&doc), 1, "0-2 still ran");
            assert!(pair_error(&doc, 1, 3).contains("rank 3"), "{}", pair_error(&doc, 1, 3));
        }
    }
}

/// `--resume` reads the earlier results a line at a time, skipping a line
/// cut short; results it cannot read at all end the sweep in one line
/// rather than counting as "nothing ran" (every pair run again).
#[test]
fn resume_skips_a_torn_line_and_refuses_results_it_cannot_read() {
    let (_folder, dir) = tempdir("resume");
    let o = run(&["sweep", "--simulate", "4", "--output", &dir], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let jsonl = format!("{dir}/pairs.jsonl");
    let full = std::fs::read_to_string(&jsonl).unwrap();
    // the last record torn in half, as a crash mid-write leaves it
    let torn = &full[..full.trim_end().rfind('\n').unwrap() + 20];
    std::fs::write(&jsonl, torn).unwrap();
    let o = run(
        &["sweep", "--simulate", "4", "--output", &dir, "--resume", "--json"],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(pairs_measured(&doc), 6);
    let rounds = doc["overhead"]["steps"].as_array().unwrap().len();
    assert_eq!(rounds, 1, "only the torn pair's round ran again");
    // the torn half was cut off before the new record was appended, so
    // the folder reads back whole: every line a record, all six pairs
    let after = std::fs::read_to_string(&jsonl).unwrap();
    assert!(after.starts_with(&full[..full.trim_end().rfind('\n').unwrap() + 1]));
    assert!(
        after
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
        "{after}"
    );
    let o = run(&["sweep", "--report", &dir, "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(pairs_measured(&o.json()), 6);
    std::fs::remove_file(format!("{dir}/sweep.json")).unwrap();
    let o = run(&["sweep", "--report", &dir, "--json"], LIMIT);
    assert_eq!(pairs_measured(&o.json()), 6, "made from pairs.jsonl: {}", o.stderr);
    // a results file that cannot be read
    std::fs::remove_file(&jsonl).unwrap();
    std::fs::create_dir(&jsonl).unwrap();
    let o = run(&["sweep", "--simulate", "4", "--output", &dir, "--resume"], LIMIT);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.one_line().contains(&format!(
            "cannot resume from {dir}: pairs.jsonl: not a regular file (a folder)"
        )),
        "{}",
        o.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A results file damaged other than by a crash (a line in the middle that
/// is not a record) is refused naming the file, the line and its byte
/// offset, by `--report` and `--resume` alike, and the reading leaves it
/// as it was.
#[test]
fn a_damaged_results_file_is_refused_naming_the_line_and_left_alone() {
    let (_folder, dir) = tempdir("damaged");
    let o = run(&["sweep", "--simulate", "4", "--output", &dir], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    std::fs::remove_file(format!("{dir}/sweep.json")).unwrap();
    let jsonl = format!("{dir}/pairs.jsonl");
    let full = std::fs::read_to_string(&jsonl).unwrap();
    let first = full.find('\n').unwrap() + 1;
    let damaged = format!("{}{{\"a\": 0, \"garbage\n{}", &full[..first], &full[first..]);
    std::fs::write(&jsonl, &damaged).unwrap();
    let want = format!("pairs.jsonl: line 2 (byte {first}) is not a pair record (");
    let o = run(&["sweep", "--report", &dir], LIMIT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.one_line().contains(&want), "{}", o.stderr);
    let o = run(&["sweep", "--simulate", "4", "--output", &dir, "--resume"], LIMIT);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.one_line().contains(&want), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(&jsonl).unwrap(),
        damaged,
        "the reading changed the file"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--min-bw` / `--max-lat` name the pairs and nodes that miss them and
/// exit with the threshold code (3), ahead of the outlier code (5); met,
/// they change nothing. Simulated ranks: pairs near 10,000 MB/s, and
/// rank 2's pairs about a quarter of that with `--sim-slow 2`.
#[test]
fn thresholds_name_the_pairs_and_nodes_that_miss_them_with_their_own_exit_code() {
    let sim = |extra: &[&str]| {
        let mut a = vec!["sweep", "--simulate", "6", "--sim-pair-ms", "1", "--json"];
        a.extend_from_slice(extra);
        let o = run(&a, LIMIT);
        let doc = o.json();
        (o.code, doc["verdict"].clone())
    };
    let count = |v: &Value, k: &str| v[k].as_array().map_or(usize::MAX, Vec::len);
    // (pairs, nodes) that missed the threshold
    let missed = |v: &Value| (count(v, "threshold_pairs"), count(v, "threshold_nodes"));
    // every pair and node below an impossible floor
    let (code, v) = sim(&["--min-bw", "1e12"]);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(missed(&v), (15, 6), "{v}");
    // met by all: no verdict, exit 0
    let (code, v) = sim(&["--min-bw", "1"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(missed(&v), (0, 0), "{v}");
    // a slow rank: its 5 pairs and itself miss 5,000 MB/s; the threshold
    // code wins over the outlier code the slow node alone would give
    let (code, v) = sim(&["--sim-slow", "2"]);
    assert_eq!(code, Some(5), "the slow node alone is an outlier: {v}");
    let (code, v) = sim(&["--sim-slow", "2", "--min-bw", "5000"]);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(missed(&v), (5, 1), "{v}");
    assert_eq!(v["threshold_nodes"][0], 2, "{v}");
    // latency: an impossible ceiling, and one met by all
    let (code, v) = sim(&["--lat", "--max-lat", "0.0001"]);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(count(&v, "threshold_pairs"), 15, "{v}");
    let (code, _) = sim(&["--lat", "--max-lat", "1e9"]);
    assert_eq!(code, Some(0));
    // and the text summary says it
    let o = run(
        &["sweep", "--simulate", "6", "--sim-pair-ms", "1", "--min-bw", "1e12"],
        LIMIT,
    );
    assert!(
        o.stdout.contains(
            "thresholds: at least 1000000000000.00 MB/s for every pair and node (--min-bw): 15 pairs and 6 nodes missed it\n  rank 0 ("
        ),
        "{}",
        o.stdout
    );
}

/// A new folder for a sweep's output and its path; the folder goes, with
/// everything in it, when the first is dropped (at the end of the test,
/// passed or failed), so the suite leaves nothing behind in /tmp.
fn tempdir(tag: &str) -> (tempfile::TempDir, String) {
    let d = tempfile::Builder::new()
        .prefix(&format!("fabdiag-{tag}-"))
        .tempdir()
        .unwrap();
    let path = d.path().display().to_string();
    (d, path)
}

/// A coordinator known only by its link-local address, named with its
/// interface as on a management network without routed addresses
/// (`[fe80::a:1%eth0]:PORT`): every rank joins through its own eth0, and
/// the pair tests reach each other by the link-local addresses rank 0 saw,
/// on the interface each rank reached rank 0 by (rank 0 cannot name it:
/// interface numbers differ from host to host).
#[test]
fn ranks_meet_on_a_link_local_coordinator_named_with_its_interface() {
    let _cpu = cpu();
    if !ipv6_loopback() {
        return;
    }
    let c = Cluster::new(3);
    for i in 0..3 {
        // nodad: usable at once, not after duplicate detection's second
        let a = format!("fe80::a:{}/64", i + 1);
        must(&["ip", "-n", &c.node(i), "addr", "add", &a, "dev", "eth0", "nodad"]);
    }
    // and the link-local address the kernel made itself past its duplicate
    // detection: libfabric offers it too, and one still tentative cannot
    // be bound (fi_endpoint: Cannot assign requested address), as on a
    // node whose link has only just come up
    until("settled link-local address (duplicate detection over)", || {
        (0..3).all(|i| {
            let o = Command::new("ip")
                .args(["-n", &c.node(i), "-6", "addr", "show", "dev", "eth0", "tentative"])
                .output()
                .unwrap();
            o.status.success() && o.stdout.is_empty()
        })
    });
    let coord = format!("[fe80::a:1%eth0]:{}", free_port());
    let args: &[&str] = &["-P", "tcp", "-s", "4096", "-n", "4", "--retest", "0"];
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut c.rank_at(r, &coord, args))).collect();
    let zero = Proc::spawn(&mut c.rank_at(0, &coord, &[args, &["--json"]].concat())).wait(LIMIT * 2);
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
    }
    assert_eq!(zero.code, Some(0), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(pairs_measured(&doc), 3, "{}", doc["pairs"]);
    for node in doc["nodes"].as_array().unwrap() {
        assert!(node["addr"].as_str().unwrap_or("").starts_with("[fe80::"), "{node}");
    }
}

/// One node cannot reach another (an unreachable route on node 1 for
/// node 3's address): their pair fails with both sides' reasons, the rest
/// is measured, and neither node is taken for a hung one. The server's
/// side gives up waiting for its client within 10 s, well inside the 15 s
/// rank 0 allows after the client's report.
#[test]
fn two_nodes_that_cannot_reach_each_other_fail_their_pair_and_stay_in() {
    let _cpu = cpu();
    let c = Cluster::new(4);
    must(&[
        "ip",
        "-n",
        &c.node(1),
        "route",
        "add",
        "unreachable",
        &format!("{}/32", c.ip(3)),
    ]);
    let port = free_port();
    let args: &[&str] = &["-P", "tcp", "-s", "65536", "-n", "4", "-l", "16", "--retest", "0"];
    let others: Vec<Proc> = (1..4).map(|r| Proc::spawn(&mut c.rank(r, port, args))).collect();
    let zero = Proc::spawn(&mut c.rank(0, port, &[args, &["--json"]].concat())).wait(LIMIT * 2);
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
    }
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    for node in doc["nodes"].as_array().unwrap() {
        assert_eq!(node["status"], "ok", "{node}");
    }
    assert_eq!(pairs_measured(&doc), 5, "{}", doc["pairs"]);
    let e = pair_error(&doc, 1, 3);
    assert!(e.contains("cannot connect to rank"), "{e}");
    assert!(e.contains("never connected for the pair test"), "{e}");
}

/// A node whose link goes down mid-sweep (its switch port set down once
/// the first round is in): rank 0 loses it and measures the rest, and the
/// node itself gives up on the coordinator within seconds, because the
/// kernel watches the control connection. Before that watch it waited out
/// its idle limit, the pair limit + 30 s (90 s here).
#[test]
fn a_node_cut_off_mid_sweep_is_lost_and_gives_up_within_seconds() {
    let _cpu = cpu();
    let c = Cluster::new(4);
    let (_folder, dir) = tempdir("sweepcut");
    let port = free_port();
    let args: &[&str] = &["-P", "tcp", "-s", "65536", "-D", "2", "--retest", "0"];
    let mut others: Vec<Proc> = (1..4).map(|r| Proc::spawn(&mut c.rank(r, port, args))).collect();
    let zero = Proc::spawn(&mut c.rank(0, port, &[args, &["--json", "--output", &dir]].concat()));
    records(&dir, 2);
    c.link(3, false);
    let cut = Instant::now();
    let cut_off = others.remove(2).wait(Duration::from_secs(80));
    let took = cut.elapsed();
    assert_ne!(cut_off.code, Some(0), "{}", cut_off.stderr);
    assert!(
        cut_off
            .stderr
            .contains("rank 3: lost the coordinator: its host acknowledged nothing for 20 s"),
        "{}",
        cut_off.stderr
    );
    assert!(
        took < Duration::from_secs(45),
        "rank 3 gave up {took:?} after its link went down"
    );
    let zero = zero.wait(LIMIT);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(doc["nodes"][3]["status"], "lost", "{}", doc["nodes"][3]);
    assert!(measured_without(&doc, 3), "{}", doc["pairs"]);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

#[test]
fn eight_namespaces_name_the_slowed_link_and_the_slowed_node() {
    let _cpu = cpu();
    let c = Cluster::new(8);
    // a twentieth and a tenth of LINK_RATE: far enough below that healthy
    // pairs starved of CPU (seen in one clean-clone run: 2-9 MB/s at a
    // 12.5 MB/s limit, log MAD 0.23) still leave them over 5 MADs out
    c.slow_link(2, 5, "5mbit");
    c.slow_node(6, "10mbit");
    let port = free_port();
    let (_folder, dir) = tempdir("sweepns");
    let args: &[&str] = &["-P", "tcp", "-s", "65536", "-n", "4", "-l", "16", "--retest", "8"];
    let others: Vec<Proc> = (1..8).map(|r| Proc::spawn(&mut c.rank(r, port, args))).collect();
    let zero = Proc::spawn(&mut c.rank(0, port, &[args, &["--json", "--output", &dir]].concat())).wait(LIMIT * 4);
    // the one-page summary (shown with --nocapture; the README quotes one)
    let text = std::fs::read_to_string(format!("{dir}/summary.txt")).unwrap_or_default();
    println!("{text}");
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
    }
    let doc = zero.json();
    let figures: Vec<String> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}-{}:{:.1}", p["a"], p["b"], p["value"].as_f64().unwrap_or(-1.0)))
        .collect();
    let summary = format!("{:#}\n{}", doc["analysis"], figures.join(" "));
    assert_eq!(
        zero.code,
        Some(5),
        "slow links or nodes found: {}\n{summary}",
        zero.stderr
    );
    assert_eq!(pairs_measured(&doc), 28);
    for node in doc["nodes"].as_array().unwrap() {
        assert_eq!(node["endpoint_opens"], 1, "one endpoint per rank: {node}");
    }
    // every node is named by its own address: the domain that reaches the peer
    assert_eq!(
        doc["nodes"][3]["addr"].as_str().unwrap().split(':').next(),
        Some("198.18.10.4")
    );
    let nodes: Vec<u64> = doc["analysis"]["slow_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["node"].as_u64().unwrap())
        .collect();
    assert_eq!(nodes, [6], "{summary}");
    let links: Vec<(u64, u64)> = doc["analysis"]["slow_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["a"].as_u64().unwrap(), f["b"].as_u64().unwrap()))
        .collect();
    assert_eq!(links, [(2, 5)], "{summary}");
    // the node's host is the one to look at; the link's ends are not
    assert_eq!(doc["verdict"]["suspect_hosts"], serde_json::json!(["node6"]));
    assert!(text.contains("\nhosts to look at: node6\n"), "{text}");
    // the slowed link and the slowed node (with a healthy partner) were
    // re-tested alone, the node first, and are still slow. Healthy links the
    // sweep's contention dragged below the fraction (seen in CI: two at 0.65
    // of the median, 12 MB/s alone) may follow; the budget of 8 leaves room
    // for six, each of which must be cleared, since the only slow link left
    // is 2-5.
    let re = doc["retests"].as_array().unwrap();
    assert!((2..=8).contains(&re.len()), "{re:?}");
    assert_eq!(re[0]["node"], 6, "{re:?}");
    assert!(re[0]["a"] == 6 || re[0]["b"] == 6, "{re:?}");
    assert_eq!(re[0]["verdict"], "confirmed", "{re:?}");
    assert_eq!(
        (&re[1]["a"], &re[1]["b"], &re[1]["verdict"]),
        (&2.into(), &5.into(), &"confirmed".into()),
        "{re:?}"
    );
    for extra in &re[2..] {
        assert!(extra.get("node").is_none(), "{re:?}");
        assert_eq!(extra["verdict"], "cleared", "{re:?}");
    }
}

/// `--baseline` with real ranks: rank 0 alone reads it (the others are
/// given no such option); its nodes are matched by their names (here one
/// host, so by rank order), and every pair is compared. The figures are
/// real, so whether one fell below 0.8 of its earlier self on a loaded
/// machine is not asserted, only that each was compared. A baseline rank
/// 0 cannot use stops every rank at once, as any other start-up failure.
#[test]
fn real_ranks_are_compared_with_their_baseline_and_a_bad_one_stops_all() {
    let _cpu = cpu();
    let (_folder, dir) = tempdir("baseline-real");
    let (zero, rest) = sweep(3, &["--output", &dir], &[]);
    assert_eq!(zero.code, Some(0), "{}", zero.stderr);
    assert!(rest.iter().all(|o| o.code == Some(0)));
    let (zero, _) = sweep(3, &["--baseline", &dir, "--json"], &[]);
    assert!(matches!(zero.code, Some(0 | 5)), "{}", zero.stderr);
    let c = zero.json()["baseline"].clone();
    assert_eq!(c["compared_pairs"], 3, "{c}");
    // and each node's NIC error rates with its own (lo's and TCP's here)
    assert_eq!(c["error_rates"]["compared_nodes"], 3, "{c}");
    assert_eq!(
        (c["new_nodes"].clone(), c["absent_nodes"].clone()),
        (serde_json::json!([]), serde_json::json!([]))
    );
    let coord = format!("127.0.0.1:{}", free_port());
    let others: Vec<Proc> = (1..3).map(|r| Proc::spawn(&mut rank(r, 3, &coord, &[]))).collect();
    let zero = Proc::spawn(&mut rank(0, 3, &coord, &["--baseline", &dir, "-s", "8"])).wait(LIMIT);
    assert_eq!(zero.code, Some(1), "{}", zero.stderr);
    let why = "this sweep measures write-bw 8 B";
    assert!(zero.one_line().contains(why), "{}", zero.stderr);
    for (i, p) in others.into_iter().enumerate() {
        let o = p.wait(Duration::from_secs(20));
        assert_eq!(o.code, Some(1), "rank {}: {}", i + 1, o.stderr);
        assert!(told_rank_0_stopped(&o, why), "rank {}: {}", i + 1, o.stderr);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
