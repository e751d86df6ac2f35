//! `fabdiag sweep --pattern alltoall`: every rank to every other in
//! shifted phases, rank i to rank i+k in phase k. A simulation checks
//! that every ordered pair runs once and that a slow link's two flows are
//! each its phase's slowest; four ranks in network namespaces, one link
//! between two of them shaped to a fifth of the others, check that the
//! real fabric's report names that link's flows as the slowest in the
//! two phases that use it, and no other; four ranks on loopback, one
//! killed after the first phase, check that a rank running several flows
//! at once loses only those with the killed rank, each naming it.

use crate::common::cluster::Cluster;
use crate::common::*;
use serde_json::Value;

/// Each phase's slowest flow as (shift, [client, server]).
fn slowest(doc: &Value) -> Vec<(u64, Value)> {
    let phases = doc["phases"].as_array().expect("phases");
    phases
        .iter()
        .map(|p| (p["shift"].as_u64().unwrap_or(0), p["slowest"].clone()))
        .collect()
}

#[test]
fn a_simulated_alltoall_runs_every_ordered_pair_once_and_names_a_slow_links_flows() {
    let args = [
        "sweep",
        "--simulate",
        "5",
        "--pattern",
        "alltoall",
        "-D",
        "1",
        "--sim-slow",
        "1-3",
        "--json",
    ];
    let o = run(&args, LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["pattern"], serde_json::json!({"kind": "alltoall"}));
    let mut seen = std::collections::HashSet::new();
    for p in doc["phases"].as_array().expect("phases") {
        let k = p["shift"].as_u64().expect("a shift");
        for f in p["flows"].as_array().expect("flows") {
            let (c, s) = (f["client"].as_u64().unwrap_or(9), f["server"].as_u64().unwrap_or(9));
            assert_eq!((c + k) % 5, s, "phase {k}: {f}");
            assert!(seen.insert((c, s)), "{c} -> {s} twice");
        }
    }
    assert_eq!(seen.len(), 20);
    // 1 -> 3 in phase 2, 3 -> 1 in phase 3
    let want = |k: u64| match k {
        2 => serde_json::json!([1, 3]),
        3 => serde_json::json!([3, 1]),
        _ => Value::Null,
    };
    for (k, s) in slowest(&doc) {
        if want(k).is_null() {
            assert!(
                s != serde_json::json!([1, 3]) && s != serde_json::json!([3, 1]),
                "phase {k}: {s}"
            );
        } else {
            assert_eq!(s, want(k), "phase {k}");
        }
    }
    let a = &doc["alltoall"];
    assert!(a["mean_aggregate"].as_f64().is_some_and(|m| m > 0.0), "{a}");
    // a slow link is no rank's slow side
    let sides = a["ranks"].as_array().expect("ranks");
    assert_eq!(sides.len(), 5);
    assert!(
        sides
            .iter()
            .all(|r| r["slow_send"] == false && r["slow_receive"] == false),
        "{a}"
    );
    assert_eq!(doc["heatmap"]["values"][1][3], doc["phases"][1]["flows"][1]["value"]);
}

#[test]
fn an_alltoall_across_a_shaped_link_names_its_flows_the_slowest_of_their_phases() {
    let _cpu = cpu();
    let c = Cluster::new(4);
    // 20 Mbit/s (2.5 MB/s) between nodes 1 and 2, each way; the others at
    // the ports' 100 Mbit/s
    c.slow_link(1, 2, "20mbit");
    let doc = c.every_rank(&["-P", "tcp", "-s", "65536", "-D", "3", "--pattern", "alltoall"]);
    assert_eq!(doc["verdict"]["measured_flows"], 12, "{}", doc["verdict"]);
    assert_eq!(
        slowest(&doc),
        vec![
            (1, serde_json::json!([1, 2])),
            (2, doc["phases"][1]["slowest"].clone()),
            (3, serde_json::json!([2, 1])),
        ]
    );
    let middle = &doc["phases"][1]["slowest"];
    assert!(
        middle != &serde_json::json!([1, 2]) && middle != &serde_json::json!([2, 1]),
        "{middle}"
    );
    // and it is slow, not merely the lowest of equals
    for (phase, flow) in [(0, 1), (2, 2)] {
        let f = &doc["phases"][phase]["flows"][flow];
        assert_eq!(f["slow"], true, "{f}");
        assert!(f["value"].as_f64().is_some_and(|v| v < 3.5), "{f}");
    }
}

#[test]
fn a_rank_killed_mid_alltoall_ends_only_its_flows_and_the_report_is_written() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let args = [
        "-P",
        "tcp",
        "-s",
        "65536",
        "-l",
        "16",
        "-D",
        "2",
        "--pattern",
        "alltoall",
        "--pair-timeout",
        "20",
    ];
    // phase 1's four flows recorded: rank 3 goes
    let (mut others, zero) = four_ranks_under_way(&dir, &args, 4);
    others[2].signal(nix::sys::signal::Signal::SIGKILL);
    let zero = zero.wait(LIMIT * 2);
    assert_eq!(zero.code, Some(2), "{}", zero.stderr);
    let doc = zero.json();
    assert_eq!(
        doc["verdict"]["lost_nodes"],
        serde_json::json!([3]),
        "{}",
        doc["verdict"]
    );
    let phases = doc["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 3, "every phase is in the report");
    assert_eq!(phases[0]["measured"], 4, "{}", phases[0]);
    for p in &phases[1..] {
        for f in p["flows"].as_array().expect("flows") {
            match f["client"] == 3 || f["server"] == 3 {
                true => assert!(f["error"].as_str().is_some_and(|e| e.contains("rank 3")), "{f}"),
                false => assert!(f["value"].is_number(), "{f}"),
            }
        }
    }
    for name in ["pattern.json", "summary.txt", "report.html"] {
        assert!(dir.path().join(name).is_file(), "{name}");
    }
    for p in others.drain(..2) {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}
