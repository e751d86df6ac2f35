//! `fabdiag sweep` under the real launchers, from Debian's packages: Open
//! MPI's `mpirun` (8 ranks, rank and size from its variables) and Slurm's
//! `srun` on a single-node cluster this test starts with
//! scripts/dev/support/slurm-local.sh (munged, slurmctld, slurmd), where rank 0 is found
//! from the step's node list with no option at all, and several ranks on
//! one node choose their NIC (`-d`) by local rank, and ranks prove their
//! job's user with `--auth-munge`; and traffic patterns launched the
//! same way (an all-to-all under mpirun, an incast with a victim under
//! srun). Needs root, openmpi-bin, slurm-wlm and
//! munge (scripts/install-deps.sh); without them the tests
//! fail, they do not skip.

use crate::common::slurm::Slurm;
use crate::common::*;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const SMALL: &[&str] = &["-P", "tcp", "-s", "65536", "-n", "10", "-l", "16"];
/// Coverage, not outliers, is checked: on a loaded 2-core machine a pair
/// can be slow by chance, so the rules flag nothing.
const CALM: &[&str] = &["--outlier-fraction", "0.001", "--json"];

/// Every unordered pair once.
fn every_pair_once(doc: &Value, n: usize) {
    let mut seen = std::collections::HashSet::new();
    for p in doc["pairs"].as_array().expect("pairs") {
        if p["round"].is_null() {
            continue; // a re-test
        }
        let key = (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap());
        assert!(key.0 < key.1 && key.1 < n as u64, "{key:?}");
        assert!(seen.insert(key), "{key:?} twice");
    }
    assert_eq!(seen.len(), n * (n - 1) / 2);
}

#[test]
fn mpirun_starts_eight_ranks_that_test_every_pair() {
    require_root();
    let _cpu = cpu();
    let coord = format!("127.0.0.1:{}", free_port());
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe", "-n", "8", bin(), "sweep"])
        .args(SMALL)
        .args(CALM)
        .args(["--coordinator", &coord]);
    let o = Proc::spawn(&mut cmd).wait(LIMIT * 3);
    assert_eq!(o.code, Some(0), "mpirun: {}", o.stderr);
    // only rank 0 prints: one JSON document
    let doc = o.json();
    assert_eq!(doc["options"]["launcher"], "Open MPI");
    assert_eq!(doc["nodes"].as_array().map(Vec::len), Some(8));
    every_pair_once(&doc, 8);
    assert_eq!(pairs_measured(&doc), 28, "{}", o.stdout);
}

#[test]
fn mpirun_bad_options_fail_on_every_rank_with_one_line() {
    let mpirun = |extra: &[&str]| {
        let mut cmd = Command::new("mpirun");
        cmd.args(["--allow-run-as-root", "--oversubscribe"]).args(extra).args([
            "-n",
            "4",
            bin(),
            "sweep",
            "--tool",
            "nope",
        ]);
        Proc::spawn(&mut cmd).wait(LIMIT)
    };
    let said = |o: &Output| {
        o.stderr
            .lines()
            .filter(|l| l.contains("invalid --tool: 'nope'"))
            .count()
    };
    // by default mpirun aborts the job when the first rank exits non-zero,
    // so the others may be killed before they say anything
    let o = mpirun(&[]);
    assert_ne!(o.code, Some(0));
    assert!(said(&o) >= 1, "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    // left to finish, every rank says it (mpirun then exits 0 itself)
    let o = mpirun(&["--mca", "orte_abort_on_non_zero_status", "0"]);
    assert_eq!(said(&o), 4, "one line from each rank: {}", o.stderr);
}

#[test]
fn srun_ranks_find_rank_0_from_the_node_list_and_pick_their_nic_by_local_rank() {
    let _cpu = cpu();
    let slurm = Slurm::start();
    // eight ranks on one node, no --coordinator: from SLURM_STEP_NODELIST
    let args = [&["-n", "8", bin(), "sweep"][..], SMALL, CALM].concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(0), "srun: {}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["options"]["launcher"], "Slurm");
    every_pair_once(&doc, 8);
    assert_eq!(pairs_measured(&doc), 28, "{}", o.stdout);
    // with MUNGE, as Slurm itself authenticates: the job's ranks prove
    // their user to rank 0 and to each other
    let args = [&["-n", "4", bin(), "sweep", "--auth-munge"][..], SMALL, CALM].concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(0), "srun: {}", o.stderr);
    assert_eq!(pairs_measured(&o.json()), 6, "{}", o.stdout);
    // the fabric's map as Slurm has it: scontrol's output, read by the
    // sweep's ranks' host name (all four on one node cross nothing)
    let topo = slurm.scontrol(&["show", "topology"]);
    assert_eq!(topo.code, Some(0), "{}", topo.stderr);
    let map = slurm.dir.join("scontrol-topology.txt");
    std::fs::write(&map, &topo.stdout).unwrap();
    let map = map.display().to_string();
    let drawn = run(&["topology", &map, "--draw"], LIMIT);
    assert!(
        drawn.stdout.contains("  leaf1 -- spine1\n    hosts (1): "),
        "{}{}",
        drawn.stdout,
        drawn.stderr
    );
    let args = [&["-n", "4", bin(), "sweep", "--topology", &map][..], SMALL, CALM].concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(0), "srun: {}", o.stderr);
    let fabric = &o.json()["fabric"];
    assert_eq!(
        fabric["off_map"],
        serde_json::Value::Null,
        "every rank on the map: {fabric}"
    );
    assert_eq!(fabric["blamed"], serde_json::json!([]));

    // several ranks per node, one per NIC: local rank i takes the i-th of
    // `-d`. The second "NIC" does not exist, so exactly the pairs with a
    // rank on it fail, each naming it, and the sweep says so (exit 2).
    let args = [&["-n", "4", bin(), "sweep", "-d", "lo,nosuch0"][..], SMALL, CALM].concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(2), "srun: {}", o.stderr);
    let doc = o.json();
    for (rank, nic) in [(0, "lo"), (1, "nosuch0"), (2, "lo"), (3, "nosuch0")] {
        assert_eq!(doc["nodes"][rank]["device"], nic, "rank {rank}");
    }
    // the same on two rails: Slurm's local ids (block placement) put
    // every rank on its rail, and only the pairs of one NIC run
    let args = [
        &["-n", "4", bin(), "sweep", "--rails", "2", "-d", "lo,lo"][..],
        SMALL,
        CALM,
    ]
    .concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(0), "srun: {}", o.stderr);
    let rails = o.json();
    let keys: Vec<(u64, u64)> = rails["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .filter(|p| p["value"].is_number())
        .map(|p| (p["a"].as_u64().unwrap_or(9), p["b"].as_u64().unwrap_or(9)))
        .collect();
    assert_eq!(keys.len(), 2, "{}", o.stdout);
    assert!(keys.contains(&(0, 2)) && keys.contains(&(1, 3)), "{keys:?}");
    for p in doc["pairs"].as_array().expect("pairs") {
        let (a, b) = (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap());
        if a % 2 == 0 && b % 2 == 0 {
            assert!(p["value"].is_number(), "lo <-> lo: {p}");
        } else {
            assert!(
                p["error"].as_str().is_some_and(|e| e.contains("nosuch0")),
                "a pair on the missing NIC names it: {p}"
            );
        }
    }
}

#[test]
fn patterns_run_under_mpirun_and_srun() {
    require_root();
    let _cpu = cpu();
    let flows = ["-P", "tcp", "-s", "65536", "-D", "1", "--json"];
    let coord = format!("127.0.0.1:{}", free_port());
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe", "-n", "4", bin(), "sweep"])
        .args(flows)
        .args(["--pattern", "alltoall", "--coordinator", &coord]);
    let o = Proc::spawn(&mut cmd).wait(LIMIT * 3);
    assert_eq!(o.code, Some(0), "mpirun: {}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["options"]["launcher"], "Open MPI");
    assert_eq!(doc["phases"].as_array().map(Vec::len), Some(3), "{doc}");
    assert_eq!(doc["verdict"]["measured_flows"], 12, "{}", doc["verdict"]);

    let slurm = Slurm::start();
    let pattern = ["--pattern", "incast", "--receivers", "1", "--victim", "write-lat"];
    let args = [&["-n", "5", bin(), "sweep"][..], &flows, &pattern].concat();
    let o = slurm.srun(&args);
    assert_eq!(o.code, Some(0), "srun: {}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["options"]["launcher"], "Slurm");
    // the victim 0 -> 4 alone, then beside the incast of 2 and 3 into 1
    let x = &doc["incasts"][0];
    assert_eq!(
        (x["receiver"].as_u64(), x["measured"].as_u64()),
        (Some(1), Some(2)),
        "{x}"
    );
    let v = &doc["victim"];
    assert_eq!((v["client"].as_u64(), v["server"].as_u64()), (Some(0), Some(4)), "{v}");
    assert!(v["alone"]["lat"]["p99_us"].is_number(), "{v}");
    assert_eq!(v["loaded"].as_array().map(Vec::len), Some(2), "{v}");
}

#[test]
fn srun_bad_options_fail_on_every_rank_with_one_line() {
    let slurm = Slurm::start();
    let o = slurm.srun(&["-n", "4", bin(), "sweep", "--outlier-fraction", "7"]);
    assert_ne!(o.code, Some(0));
    let lines = o.stderr.lines().filter(|l| l.contains("--outlier-fraction")).count();
    assert_eq!(lines, 4, "one line from each rank: {}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(30), "{:?}", o.elapsed);
}
