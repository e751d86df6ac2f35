//! The fabric's map: `fabdiag topology` reading every kind of source
//! (the map file, Slurm's topology.conf and scontrol's output, real
//! ibnetdiscover and lldpctl captures from tests/fixtures), drawing it and
//! holding it against the expected wiring; and `sweep --topology` naming
//! the slow element on simulated sweeps of generated fat trees and
//! dragonflies, going on without a map it cannot use.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../topology/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A generated map written into `dir`.
fn generated(dir: &Path, shape: &str) -> PathBuf {
    let o = run(&["topology", "--generate", shape], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let path = dir.join(format!("{}.toml", shape.replace([':', ','], "-")));
    std::fs::write(&path, &o.stdout).unwrap();
    path
}

/// `sweep --simulate N --topology MAP --sim-slow SLOW --json`'s fabric verdict.
fn simulated(n: usize, map: &Path, slow: &str) -> Value {
    let o = run(
        &[
            "sweep",
            "--simulate",
            &n.to_string(),
            "--topology",
            &map.display().to_string(),
            "--sim-slow",
            slow,
            "--json",
        ],
        LIMIT,
    );
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    o.json()["fabric"].clone()
}

fn blamed(fabric: &Value) -> Vec<Vec<String>> {
    fabric["blamed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b["elements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn every_kind_of_source_reads_and_two_agree_with_each_other() {
    // a real ibnetdiscover capture against Slurm's file for the same fabric
    let o = run(
        &[
            "topology",
            &fixture("ibnetdiscover.txt"),
            "--expect",
            &fixture("topology.conf"),
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("6 switches on 2 levels, 8 hosts, 8 switch-to-switch links (8 cables)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("no difference"), "{}", o.stdout);
    let o = run(&["topology", &fixture("scontrol-show-topology.txt"), "--draw"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("  leaf3 -- spine1 spine2\n    hosts (2): node4 node5\n"),
        "{}",
        o.stdout
    );
    // a folder of real lldpctl outputs, one per host, for the host ports,
    // on top of Slurm's switches
    let dir = tempfile::tempdir().unwrap();
    for n in ["node0", "node1"] {
        std::fs::copy(
            fixture(&format!("lldpctl-{n}.json")),
            dir.path().join(format!("{n}.json")),
        )
        .unwrap();
    }
    let lldp = dir.path().display().to_string();
    let o = run(&["topology", &fixture("topology.conf"), &lldp, "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let hosts = o.json()["map"]["hosts"].clone();
    assert_eq!(hosts[0]["name"], "node0");
    assert_eq!(hosts[0]["port"], "swp1", "LLDP gave the port: {hosts}");
}

#[test]
fn miswiring_is_listed_line_by_line_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let want = generated(dir.path(), "fat-tree:2,2,2");
    // one of leaf2's uplinks moved from spine2 to spine1, node3 moved to leaf1
    let text = std::fs::read_to_string(&want).unwrap();
    let seen = text
        .replacen("a = \"leaf2\"\nb = \"spine2\"", "a = \"leaf2\"\nb = \"spine1\"", 1)
        .replacen(
            "name = \"node3\"\nswitch = \"leaf2\"",
            "name = \"node3\"\nswitch = \"leaf1\"",
            1,
        );
    assert_ne!(seen, text, "the generated map's layout changed");
    let seen_path = dir.path().join("seen.toml");
    std::fs::write(&seen_path, seen).unwrap();
    let o = run(
        &[
            "topology",
            &seen_path.display().to_string(),
            "--expect",
            &want.display().to_string(),
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(3), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("differs from"), "{}", o.stdout);
    assert!(
        o.stdout.contains("  host node3: under leaf1, expected under leaf2\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("  cable leaf2 <-> spine2: missing\n"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("  cable leaf2 <-> spine1: not expected (leaf2 is cabled to spine1 twice, expected once)\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn bad_maps_are_one_line_naming_the_problem_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let garbage = write("garbage.toml", "[[switch]]\nname = \"a\"\nlevel = 1\n\n%%% not a map\n");
    let cycle = write("cycle.conf", "SwitchName=s1 Switches=s2\nSwitchName=s2 Switches=s1\n");
    let twice = write(
        "twice.toml",
        "[[switch]]\nname = \"a\"\nlevel = 1\n[[switch]]\nname = \"a\"\nlevel = 1\n",
    );
    let nohost = write("nohost.toml", "[[switch]]\nname = \"a\"\nlevel = 1\n");
    let leaf2 = write("other.conf", "SwitchName=leaf2 Nodes=node[0-1]\n");
    let cases = [
        (vec![garbage.clone()], format!("{garbage}: line 5: ")),
        (
            vec![cycle.clone()],
            format!("{cycle}: switch 's1' is under itself (s1 > s2 > s1)"),
        ),
        (vec![twice.clone()], "'a' is named twice".to_string()),
        (vec![nohost.clone()], "no host on the map".to_string()),
        (
            vec![fixture("topology.conf"), leaf2.clone()],
            format!("puts host 'node0' under 'leaf1', {leaf2} under 'leaf2'"),
        ),
        (
            vec!["/nonexistent/map.toml".to_string()],
            "/nonexistent/map.toml: ".to_string(),
        ),
    ];
    for (sources, said) in cases {
        let mut args = vec!["topology"];
        args.extend(sources.iter().map(String::as_str));
        let o = run(&args, LIMIT);
        assert_eq!(o.code, Some(1), "{sources:?}: {}", o.stderr);
        assert!(o.one_line().contains(&said), "{sources:?}: {}", o.stderr);
    }
    // a sweep given such a map says so once and judges pairs and nodes
    let o = run(&["sweep", "--simulate", "4", "--topology", &garbage, "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.one_line()
            .ends_with("the sweep goes on without the map (no element of the fabric is judged)"),
        "{}",
        o.stderr
    );
    assert!(o.json()["fabric"].is_null());
    // an element the map does not have is refused before anything runs
    let map = generated(dir.path(), "fat-tree:2,1,2");
    let o = run(
        &[
            "sweep",
            "--simulate",
            "4",
            "--topology",
            &map.display().to_string(),
            "--sim-slow",
            "leaf9",
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(1));
    assert!(
        o.one_line()
            .contains("'leaf9' is not a host, switch or switch-to-switch cable"),
        "{}",
        o.stderr
    );
}

/// One fixed placement of each kind on generated fabrics of 32 ranks:
/// the planted element named first, alone where the map can tell it
/// apart, its re-tests alone confirming it, and nothing else blamed.
#[test]
fn a_simulated_sweep_names_the_slow_element_first() {
    let dir = tempfile::tempdir().unwrap();
    let fat = generated(dir.path(), "fat-tree:4,2,8");
    let host = simulated(32, &fat, "node13");
    assert_eq!(blamed(&host), [["node13"]]);
    assert_eq!(host["blamed"][0]["kind"], "host");
    assert_eq!(host["blamed"][0]["retest"]["verdict"], "confirmed", "{host}");
    let leaf = simulated(32, &fat, "leaf3");
    assert_eq!(blamed(&leaf), [["leaf3"]]);
    assert_eq!(leaf["blamed"][0]["retest"]["verdict"], "confirmed", "{leaf}");
    // one flow a pair, no routes: which of leaf2's uplinks, or which
    // spine, cannot be told; that it is one of them can
    let uplink = simulated(32, &fat, "leaf2-spine1");
    assert_eq!(blamed(&uplink), [["leaf2-spine1", "leaf2-spine2"]]);
    let spine = simulated(32, &fat, "spine2");
    assert_eq!(blamed(&spine), [["spine1", "spine2"]]);
    let fly = generated(dir.path(), "dragonfly:4,2,4");
    let bundle = simulated(32, &fly, "g1r1-g2r1");
    assert_eq!(blamed(&bundle), [["g1r1-g2r1"]], "{bundle}");
    for f in [&host, &leaf, &uplink, &spine, &bundle] {
        assert_eq!(f["unexplained"], 0, "{f}");
    }
}

/// The text report leads with the fabric, and a report made again from
/// the folder judges on the map the sweep kept.
#[test]
fn the_report_leads_with_the_element_and_keeps_its_map() {
    let dir = tempfile::tempdir().unwrap();
    let fat = generated(dir.path(), "fat-tree:4,2,4");
    let out = dir.path().join("sweep");
    let out_s = out.display().to_string();
    let o = run(
        &[
            "sweep",
            "--simulate",
            "16",
            "--topology",
            &fat.display().to_string(),
            "--sim-slow",
            "leaf4",
            "--output",
            &out_s,
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(5), "slow pairs: {}", o.stderr);
    let fabric_at = o.stdout.find("fabric: map ").expect("a fabric section");
    assert!(fabric_at < o.stdout.find("slow nodes").unwrap(), "{}", o.stdout);
    assert!(o.stdout.contains("  blamed: leaf4 (a switch)\n"), "{}", o.stdout);
    assert!(o.stdout.contains(": confirmed\n"), "{}", o.stdout);
    let again = run(&["sweep", "--report", &format!("{out_s}/sweep.json")], LIMIT);
    assert!(
        again.stdout.contains("  blamed: leaf4 (a switch)\n"),
        "{}{}",
        again.stdout,
        again.stderr
    );
}

/// `--flows`: a slow spine makes pairs path-sensitive (some flows slow,
/// some clean), named as one of the spines; a slow host's pairs are slow
/// on every flow and not path-sensitive.
#[test]
fn flows_tell_a_slow_path_from_a_slow_host() {
    let dir = tempfile::tempdir().unwrap();
    let fat = generated(dir.path(), "fat-tree:4,2,4");
    let map = fat.display().to_string();
    let args = |slow: &str| -> Vec<String> {
        [
            "sweep",
            "--simulate",
            "16",
            "--topology",
            &map,
            "--sim-slow",
            slow,
            "--flows",
            "4",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run_args = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&a, LIMIT)
    };
    let spine = run_args(args("spine2")).json();
    let sensitive = spine["path_sensitive"].as_array().map_or(0, Vec::len);
    assert!(sensitive > 40, "most pairs across leaves split: {sensitive}");
    assert_eq!(blamed(&spine["fabric"]), [["spine1", "spine2"]]);
    assert!(spine["fabric"]["blamed"][0]["path_sensitive"].as_u64().unwrap() > 40);
    assert_eq!(spine["pairs"][0]["flows"].as_array().map(Vec::len), Some(4));
    let host = run_args(args("node5")).json();
    assert!(host["path_sensitive"].is_null(), "a slow host slows every flow");
    assert_eq!(blamed(&host["fabric"]), [["node5"]]);
}

/// `--flows 2` between real processes over loopback (tcp): every pair
/// runs its two flows at once, each with a figure.
#[test]
fn real_ranks_run_several_flows_a_pair() {
    let _cpu = cpu();
    let n = 3;
    let coord = format!("127.0.0.1:{}", free_port());
    let rank = |r: usize| {
        let mut c = fabdiag(&["sweep", "--coordinator", &coord, "--flows", "2", "--json"]);
        c.args(["-P", "tcp", "-s", "65536", "-n", "10", "-l", "16"]);
        c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", n.to_string());
        c
    };
    let others: Vec<Proc> = (1..n).map(|r| Proc::spawn(&mut rank(r))).collect();
    let zero = Proc::spawn(&mut rank(0)).wait(LIMIT * 2);
    for p in others {
        let o = p.wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    assert!(matches!(zero.code, Some(0) | Some(5)), "{}", zero.stderr);
    let doc = zero.json();
    for p in doc["pairs"].as_array().unwrap() {
        let flows = p["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2, "{p}");
        assert!(flows.iter().all(Value::is_number), "{p}");
    }
}

/// The guide's example reports are what their sweeps print: each line a
/// block shows, in order (a block leaves some out, "..."), for every block
/// marked with the command that printed it.
#[test]
fn the_guide_shows_what_the_sweep_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = std::fs::read_to_string(root.join("docs/fabric.md")).unwrap();
    let mut blocks = 0;
    for part in page.split("<!-- printed by: fabdiag ").skip(1) {
        let (command, rest) = part.split_once(" -->\n```text\n").expect("a marked block");
        let block = rest.split("```").next().unwrap_or_default();
        let args: Vec<&str> = command.split_whitespace().collect();
        let o = Proc::spawn(fabdiag(&args).current_dir(&root)).wait(LIMIT);
        assert!(matches!(o.code, Some(0) | Some(5)), "{command}: {}", o.stderr);
        let mut printed = o.stdout.lines();
        for shown in block.lines().skip(1) {
            let shown = shown.trim_end_matches("...");
            if shown.is_empty() {
                continue;
            }
            assert!(
                printed.any(|l| l.starts_with(shown)),
                "the page shows '{shown}', which `fabdiag {command}` did not print (in that order):\n{}",
                o.stdout
            );
        }
        blocks += 1;
    }
    assert!(blocks >= 2, "the guide's marked examples: {blocks}");
}

/// `--topology lldp`: every rank reads its own LLDP neighbours when it
/// joins (here `FABDIAG_LLDPCTL` prints a real lldpctl capture), and rank
/// 0 makes the map of them; a rank whose lldpctl fails is said once.
#[test]
fn ranks_read_their_own_lldp_when_they_join() {
    let _cpu = cpu();
    let n = 3;
    let coord = format!("127.0.0.1:{}", free_port());
    let rank = |r: usize| {
        let mut c = fabdiag(&["sweep", "--coordinator", &coord, "--topology", "lldp", "--json"]);
        c.args(["-P", "tcp", "-s", "4096", "-n", "5", "-l", "4"]);
        c.env("FABDIAG_RANK", r.to_string()).env("FABDIAG_SIZE", n.to_string());
        c.env("FABDIAG_NODE_NAME", format!("node{r}"));
        let lldpctl = match r {
            2 => "false".to_string(),
            _ => format!("cat {}", fixture(&format!("lldpctl-node{r}.json"))),
        };
        c.env("FABDIAG_LLDPCTL", lldpctl);
        c
    };
    let others: Vec<Proc> = (1..n).map(|r| Proc::spawn(&mut rank(r))).collect();
    let zero = Proc::spawn(&mut rank(0)).wait(LIMIT * 2);
    for p in others {
        assert_eq!(p.wait(LIMIT).code, Some(0));
    }
    assert!(
        zero.one_line()
            .contains("--topology lldp: 1 of 3 ranks sent no LLDP neighbours (rank 2: false"),
        "{}",
        zero.stderr
    );
    let doc = zero.json();
    let hosts = doc["fabric"]["map"]["hosts"].clone();
    assert_eq!(hosts[0]["name"], "node0", "{hosts}");
    assert_eq!(hosts[0]["switch"], "leaf1", "{hosts}");
    assert_eq!(hosts[1]["name"], "node1", "{hosts}");
    assert_eq!(doc["fabric"]["off_map"], serde_json::json!([2]), "node2 sent nothing");
    assert_eq!(doc["fabric"]["source"], "lldp");
}

/// With the switches' forwarding tables (a real dump_lfts capture from
/// ibsim beside its ibnetdiscover), each pair's way is known and a slow
/// uplink is named alone, not as one of its leaf's uplinks.
#[test]
fn forwarding_tables_name_the_uplink_itself() {
    let ib = fixture("ibnetdiscover.txt");
    let lfts = fixture("dump_lfts.txt");
    // as infiniband-diags' dump_lfts script printed them, and as Debian 12
    // has it (dump_fts's directed-route headers)
    for (ibnet, tables) in [
        (ib.clone(), lfts.clone()),
        (fixture("ibsim-ibnetdiscover.txt"), fixture("ibsim-dump-lfts.txt")),
    ] {
        let o = run(&["topology", &ibnet, &tables], LIMIT);
        assert!(
            o.stdout.contains("forwarding tables of 6 switches"),
            "{}{}",
            o.stdout,
            o.stderr
        );
    }
    let o = run(
        &[
            "sweep",
            "--simulate",
            "8",
            "--topology",
            &ib,
            "--topology",
            &lfts,
            "--sim-slow",
            "leaf2-spine2",
            "--json",
        ],
        LIMIT,
    );
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    assert_eq!(blamed(&o.json()["fabric"])[0], ["leaf2-spine2"]);
}
