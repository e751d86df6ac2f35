//! `fabdiag sweep --pattern bisection`: the ranks split in two halves and
//! every rank of one streams to its partner in the other at once. A
//! simulation checks what the report says of a slow flow and the weakest
//! split, and that random splits come again from their seed; eight ranks
//! in network namespaces on two "leaf" bridges joined by one shaped
//! "spine" cable check that the aggregate is held to the spine's rate,
//! and an unshaped spine is not.

use crate::common::cluster::Cluster;
use crate::common::*;
use serde_json::Value;

fn simulated(extra: &[&str]) -> Output {
    let args = [
        &[
            "sweep",
            "--simulate",
            "8",
            "--pattern",
            "bisection",
            "-D",
            "1",
            "--json",
        ][..],
        extra,
    ]
    .concat();
    run(&args, LIMIT)
}

/// Each split's flows as (client, server, slow).
fn flows(split: &Value) -> Vec<(u64, u64, bool)> {
    split["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .map(|f| {
            (
                f["client"].as_u64().unwrap_or(99),
                f["server"].as_u64().unwrap_or(99),
                f["slow"] == true,
            )
        })
        .collect()
}

#[test]
fn a_simulated_bisection_names_its_slow_flow_and_the_split_that_held_it() {
    let o = simulated(&[
        "--split-by",
        "random",
        "--splits",
        "4",
        "--seed",
        "9",
        "--sim-slow",
        "1-5",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["schema"], "fabdiag-pattern/1");
    assert_eq!(doc["pattern"]["by"], "random");
    let splits = doc["splits"].as_array().expect("splits");
    assert_eq!(splits.len(), 4);
    let mut with_slow = Vec::new();
    for (i, s) in splits.iter().enumerate() {
        let f = flows(s);
        assert_eq!(f.len(), 4, "{s}");
        let mut ranks: Vec<u64> = f.iter().flat_map(|x| [x.0, x.1]).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..8).collect::<Vec<u64>>(), "every rank in one flow: {s}");
        for (c, v, slow) in f {
            let the_slow_link = (c.min(v), c.max(v)) == (1, 5);
            assert_eq!(slow, the_slow_link, "split {i}: {c} -> {v}");
            if the_slow_link {
                with_slow.push(i as u64);
            }
        }
    }
    // the weakest split is one that held the slow link, when one did
    if !with_slow.is_empty() {
        assert!(with_slow.contains(&doc["weakest"].as_u64().unwrap_or(99)), "{doc}");
    }
    // the same seed draws the same halves; another seed others
    let halves = |d: &Value| -> Vec<Value> {
        d["splits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["halves"].clone())
            .collect()
    };
    let again = simulated(&["--split-by", "random", "--splits", "4", "--seed", "9"]).json();
    assert_eq!(halves(&doc), halves(&again));
    let other = simulated(&["--split-by", "random", "--splits", "4", "--seed", "10"]).json();
    assert_ne!(halves(&doc), halves(&other));
    // by node, the simulation's ranks all on this one: no flow crosses,
    // and the run says so rather than report nothing as a result
    let o = simulated(&[]);
    assert_eq!(o.code, Some(2), "{}", o.stdout);
    assert_eq!(o.json()["verdict"]["measured_flows"], 0);
}

#[test]
fn a_bisection_prints_each_split_and_refuses_what_it_cannot_run() {
    let o = run(
        &[
            "sweep",
            "--simulate",
            "6",
            "--pattern",
            "bisection",
            "--split-by",
            "rank",
            "-D",
            "1",
            "--expect",
            "10000",
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.starts_with("fabdiag sweep --pattern bisection: 6 ranks on 1 node, 1 split(s) by rank; write-bw 65536 B, every flow of a split at once\nsplit 1: ranks 0-2 | 3-5: 3 of 3 flows, aggregate "),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("% of --expect\n"), "{}", o.stdout);
    assert!(
        o.stdout.contains("\n  0 (") && o.stdout.contains(") -> 3 ("),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.ends_with(
            "flows: 0 failed, 0 not run, 0 slow (below the outlier fraction of their split's median flow)\n"
        ),
        "{}",
        o.stdout
    );
    for (args, message) in [
        (
            &["sweep", "--simulate", "4", "--pattern", "bisection"][..],
            "--pattern bisection needs the pair tool's -D SECONDS, so every flow runs at once for the same time (e.g. -D 5)",
        ),
        (
            &["sweep", "--pattern", "bisection", "--tool", "send-lat", "-D", "1"][..],
            "--pattern bisection streams bandwidth; send-lat measures latency (use write-bw, read-bw or send-bw)",
        ),
        (&["sweep", "--splits", "3"][..], "--splits goes with --pattern bisection"),
        (
            &["sweep", "--simulate", "4", "--pattern", "bisection", "-D", "1", "--min-bw", "100"][..],
            "--min-bw judges one pair at a time, not a pattern's flows together: give --expect (one node's rate) instead",
        ),
    ] {
        let o = run(args, SHORT);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert_eq!(one_line(&o.stderr), format!("fabdiag sweep: {message}"), "{args:?}");
    }
}

/// A bisection by rank of real ranks over tcp, write-bw of 64 KiB.
const BY_RANK: &[&str] = &[
    "-P",
    "tcp",
    "-s",
    "65536",
    "--pattern",
    "bisection",
    "--split-by",
    "rank",
];

/// Rank 0's document of a bisection by rank on `c` (-D `secs`).
fn bisect(c: &Cluster, secs: &str) -> Value {
    c.every_rank(&[BY_RANK, &["-D", secs]].concat())
}

#[test]
fn a_bisection_across_an_oversubscribed_spine_is_held_to_the_spines_rate() {
    let _cpu = cpu();
    let c = Cluster::two_leaves(8);
    // four 100 Mbit/s ports a side, one 40 Mbit/s (5 MB/s) cable between
    c.spine("40mbit");
    let doc = bisect(&c, "4");
    let split = &doc["splits"][0];
    assert_eq!(split["halves"], serde_json::json!([[0, 1, 2, 3], [4, 5, 6, 7]]));
    assert_eq!(split["measured"], 4, "{split}");
    let aggregate = split["aggregate"].as_f64().expect("an aggregate");
    assert!(
        (4.5..=5.5).contains(&aggregate),
        "the spine's 5 MB/s: {aggregate} MB/s\n{split}"
    );
    // the same with the spine at the ports' rate: the halves' four ports
    // (4 × 12.5 MB/s) carry far more than the shaped spine did
    c.spine("10gbit");
    let open = bisect(&c, "4");
    let wide = open["splits"][0]["aggregate"].as_f64().expect("an aggregate");
    assert!(
        !(4.5..=5.5).contains(&wide) && wide > 2.0 * aggregate,
        "{wide} against {aggregate}"
    );
}

/// Four real ranks on loopback running `splits` bisections by rank, rank 0
/// writing JSON and `--output` to `dir`, once the first split's two flows
/// are recorded: (ranks 1 to 3, rank 0).
fn pattern_under_way(dir: &tempfile::TempDir, splits: &str) -> (Vec<Proc>, Proc) {
    let args: &[&str] = &[BY_RANK, &["-D", "2", "--splits", splits, "--pair-timeout", "20"]].concat();
    four_ranks_under_way(dir, args, 2)
}

#[test]
fn a_rank_killed_mid_pattern_ends_its_flows_with_the_reason_and_the_rest_finish() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().to_str().expect("a path");
    let (mut others, zero) = pattern_under_way(&dir, "3");
    others[2].signal(nix::sys::signal::Signal::SIGKILL);
    let zero = zero.wait(LIMIT * 2);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(doc["nodes"][3]["status"], "lost", "{}", doc["nodes"][3]);
    assert_eq!(doc["verdict"]["lost_nodes"], serde_json::json!([3]));
    let splits = doc["splits"].as_array().expect("splits");
    assert_eq!(splits.len(), 3, "every split is in the report");
    assert_eq!(splits[0]["measured"], 2, "{}", splits[0]);
    for s in &splits[1..] {
        for f in s["flows"].as_array().expect("flows") {
            let with_3 = f["server"] == 3 || f["client"] == 3;
            match with_3 {
                true => assert!(f["error"].as_str().is_some_and(|e| e.contains("rank 3")), "{f}"),
                false => assert!(f["value"].is_number(), "{f}"),
            }
        }
    }
    let text = std::fs::read_to_string(dir.path().join("summary.txt")).expect("the summary");
    assert!(dir.path().join("report.html").is_file() && dir.path().join("pattern.json").is_file());
    // its flows are no sweep's pairs: no sweep report is made of them
    let o = run(&["sweep", "--report", out], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(
        one_line(&o.stderr).ends_with(
            "it holds a traffic pattern's run (pattern.json), whose report is its summary.txt and report.html"
        ),
        "{}",
        o.stderr
    );
    assert!(text.contains("\nrank 3 ("), "{text}");
    for p in others.drain(..2) {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

#[test]
fn a_stop_signal_to_every_rank_ends_the_pattern_with_what_it_measured() {
    use nix::sys::signal::Signal;
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let (others, zero) = pattern_under_way(&dir, "4");
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
    let doc = zero.json();
    assert_eq!(doc["stopped"], "SIGTERM");
    let flows: Vec<&Value> = doc["splits"]
        .as_array()
        .expect("splits")
        .iter()
        .flat_map(|s| s["flows"].as_array().expect("flows"))
        .collect();
    assert_eq!(flows.len(), 8, "every split's flows are in the report");
    let measured = flows.iter().filter(|f| f["value"].is_number()).count();
    let untested = doc["verdict"]["untested_flows"].as_u64().unwrap_or(0) as usize;
    assert!(
        measured >= 2 && untested >= 2,
        "{measured} measured, {untested} not run"
    );
    assert_eq!(measured + untested, 8, "{}", doc["splits"]);
    for f in flows.iter().filter(|f| !f["value"].is_number()) {
        assert_eq!(f["error"], "not tested: the run was stopped by SIGTERM", "{f}");
    }
    let text = std::fs::read_to_string(dir.path().join("summary.txt")).expect("the summary");
    assert!(
        text.contains("\nstopped by SIGTERM: the splits left were not run\n"),
        "{text}"
    );
    for p in others {
        assert_eq!(p.wait(LIMIT).signal, Some(Signal::SIGTERM as i32));
    }
}
