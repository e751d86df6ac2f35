//! Finished sweeps: a sweep against an earlier one (`--baseline`) names
//! the links and nodes below their own earlier figures, in the text, the
//! JSON and the page, with the outlier exit code, and a baseline of another
//! test, or no sweep at all, is refused in one line before anything runs;
//! and a finished sweep's report is made again (`--report`) with other
//! rules, thresholds or a baseline, running nothing. Simulated ranks (their
//! figures are fixed, so a change is one the test made): an earlier
//! sweep's sweep.json is edited as a fabric's history would have it. The
//! real ranks' side of `--baseline` is in sweep.rs.

use crate::common::*;
use serde_json::Value;

fn tempdir(tag: &str) -> String {
    let d = std::env::temp_dir().join(format!("fabdiag-history-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.display().to_string()
}

fn simulate(n: &str, extra: &[&str]) -> Output {
    let mut a = vec!["sweep", "--simulate", n];
    a.extend_from_slice(extra);
    run(&a, LIMIT)
}

/// The pairs of a `baseline.links` list, low rank first.
fn links(c: &Value) -> Vec<(u64, u64)> {
    c["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["a"].as_u64().unwrap(), x["b"].as_u64().unwrap()))
        .collect()
}

#[test]
fn a_link_slower_than_in_its_baseline_is_named_though_no_outlier() {
    let dir = tempdir("link");
    let o = simulate("8", &["--output", &format!("{dir}/base")]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // the baseline's figure for pair 2-5 twice what the simulation measures
    let path = format!("{dir}/base/sweep.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for p in doc["pairs"].as_array_mut().unwrap() {
        if (p["a"].as_u64(), p["b"].as_u64()) == (Some(2), Some(5)) {
            p["value"] = (p["value"].as_f64().unwrap() * 2.0).into();
        }
    }
    std::fs::write(format!("{dir}/edited.json"), doc.to_string()).unwrap();
    // the unedited baseline: nothing below it
    let o = simulate("8", &["--baseline", &format!("{dir}/base"), "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let same = o.json();
    assert_eq!(same["baseline"]["compared_pairs"], 28);
    assert_eq!(links(&same["baseline"]), vec![]);
    // the edited one
    let edited = format!("{dir}/edited.json");
    let o = simulate("8", &["--baseline", &edited, "--json"]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    let now = o.json();
    assert_eq!(
        now["analysis"]["slow_links"],
        serde_json::json!([]),
        "no outlier in the sweep itself"
    );
    let c = &now["baseline"];
    assert_eq!(links(c), vec![(2, 5)]);
    let f = c["links"][0]["of_baseline"].as_f64().unwrap();
    assert!((f - 0.5).abs() < 1e-6, "{f}");
    assert_eq!(c["nodes"], serde_json::json!([]));
    assert_eq!(c["fabric_regressed"], false);
    assert_eq!(c["file"], edited.as_str());
    assert_eq!(now["verdict"]["regressed_links"], 1);
    // the text says it under its own heading, the page in its verdict
    let out = format!("{dir}/now");
    let o = simulate("8", &["--baseline", &edited, "--output", &out]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    let t = &o.stdout;
    assert!(t.contains(&format!("baseline: {edited} (started ")), "{t}");
    assert!(
        t.contains("28 pairs compared, their median 1.00 of their baseline figures"),
        "{t}"
    );
    let after = t.split("regressed links:\n").nth(1).unwrap_or_else(|| panic!("{t}"));
    let first = after.lines().next().unwrap();
    assert!(
        first.starts_with("  rank 2 (") && first.contains("<-> rank 5 (") && first.ends_with("in the baseline (0.50)"),
        "{first}"
    );
    assert!(t.contains("regressed nodes: none"), "{t}");
    let page = std::fs::read_to_string(format!("{out}/report.html")).unwrap();
    assert!(page.contains("<h2>Against the baseline</h2>"), "no baseline section");
    assert!(page.contains("1 link below its baseline"), "not in the verdict");
    // the change picture beside the heatmap, and in the page's section
    let png = std::fs::read(format!("{out}/change.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "change.png is no PNG");
    let section = page.split("<h2>Against the baseline</h2>").nth(1).unwrap();
    assert!(section.contains("alt=\"each pair&#39;s result against its baseline\" src=\"data:image/png;base64,"));
    let exists = |f: &str| std::path::Path::new(f).exists();
    assert!(
        !exists(&format!("{dir}/base/change.png")),
        "no baseline, no change picture"
    );
    // made again in place without the baseline: its picture goes too
    let o = run(&["sweep", "--report", &out, "--output", &out], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        !exists(&format!("{out}/change.png")),
        "a picture of a comparison no longer made"
    );
    assert!(exists(&format!("{out}/heatmap.png")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A node slower than before is named once, as the node; one faster than
/// before is no regression.
#[test]
fn a_node_slower_than_in_its_baseline_is_named_and_a_faster_one_is_not() {
    let dir = tempdir("node");
    let (healthy, slow) = (format!("{dir}/healthy"), format!("{dir}/slow"));
    assert_eq!(simulate("6", &["--output", &healthy]).code, Some(0));
    assert_eq!(simulate("6", &["--sim-slow", "3", "--output", &slow]).code, Some(5));
    let o = simulate("6", &["--sim-slow", "3", "--baseline", &healthy, "--json"]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    let doc = o.json();
    let c = doc["baseline"].clone();
    assert_eq!(c["nodes"].as_array().unwrap().len(), 1, "{c}");
    // its host is the one to look at (simulated ranks share this VM's)
    assert_eq!(
        doc["verdict"]["suspect_hosts"],
        serde_json::json!([doc["nodes"][3]["host"]])
    );
    assert_eq!(c["nodes"][0]["rank"], 3);
    assert_eq!(c["nodes"][0]["regressed_pairs"], 5);
    assert!(
        (c["nodes"][0]["of_baseline"].as_f64().unwrap() - 0.25).abs() < 0.01,
        "{c}"
    );
    assert_eq!(links(&c), vec![], "the node's pairs are said once, as the node");
    // rank 3 recovered: better than its baseline is no regression
    let o = simulate("6", &["--baseline", &slow, "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let c = o.json()["baseline"].clone();
    assert_eq!((c["nodes"].clone(), links(&c)), (serde_json::json!([]), vec![]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The whole fabric slower (every figure of the baseline doubled): said
/// once, and no pair named for it.
#[test]
fn a_fabric_slower_as_a_whole_is_said_once() {
    let dir = tempdir("fabric");
    assert_eq!(simulate("6", &["--output", &dir]).code, Some(0));
    let path = format!("{dir}/sweep.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for p in doc["pairs"].as_array_mut().unwrap() {
        p["value"] = (p["value"].as_f64().unwrap() * 2.0).into();
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    let o = simulate("6", &["--baseline", &dir]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("  the fabric as a whole is at 0.50 of its baseline: suspect what every pair shares"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("regressed links: none"), "{}", o.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What cannot be compared is refused in one line, exit 1, before
/// anything runs: the output folder of the refused sweep is not touched.
#[test]
fn a_baseline_that_cannot_be_compared_is_refused_before_anything_runs() {
    let dir = tempdir("refused");
    let base = format!("{dir}/base");
    assert_eq!(simulate("4", &["--output", &base]).code, Some(0));
    let out = format!("{dir}/out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(format!("{out}/pairs.jsonl"), "kept\n").unwrap();
    std::fs::write(format!("{dir}/not.json"), "{\"schema\": 1}").unwrap();
    let cases: &[(&[&str], String)] = &[
        (
            &["--baseline", "/nonexistent/fabdiag"],
            "--baseline /nonexistent/fabdiag: No such file or directory (os error 2)".into(),
        ),
        (
            &["--baseline", &format!("{dir}/not.json")],
            format!("--baseline {dir}/not.json: not a fabdiag sweep's JSON document (invalid type: integer `1`"),
        ),
        (
            &["--baseline", &base, "-s", "4096"],
            format!("--baseline {base}/sweep.json: it measured write-bw 65536 B (bandwidth), this sweep measures write-bw 4096 B (bandwidth): compare sweeps of the same test"),
        ),
        (
            &["--baseline", &base, "--lat"],
            format!("--baseline {base}/sweep.json: it measured write-bw 65536 B (bandwidth), this sweep measures write-lat 8 B (latency)"),
        ),
        (
            &["--baseline", &base, "-P", "verbs"],
            format!("--baseline {base}/sweep.json: its pairs ran with provider (not given), this sweep's with \"verbs\""),
        ),
        (
            &["--baseline", &base, "-b"],
            format!("--baseline {base}/sweep.json: its pairs ran with bidirectional false, this sweep's with true"),
        ),
        (
            &["--baseline", &base, "--baseline-fraction", "1"],
            "invalid --baseline-fraction: '1' (must be between 0 and 1)".into(),
        ),
    ];
    for (args, says) in cases {
        let mut a = vec!["--output", out.as_str()];
        a.extend_from_slice(args);
        let o = simulate("4", &a);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
        assert!(o.one_line().contains(says.as_str()), "{args:?}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{args:?} ran: {}", o.stdout);
    }
    assert_eq!(std::fs::read_to_string(format!("{out}/pairs.jsonl")).unwrap(), "kept\n");
    // how long a pair test ran may differ
    let o = simulate("4", &["--baseline", &base, "-n", "10", "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["baseline"]["compared_pairs"], 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--report DIR` makes the report of the sweep in DIR again: with the
/// sweep's own rules the same text and, written back in place, the same
/// document to the last digit; with other rules, thresholds or a baseline,
/// what those find; nothing runs, and what it cannot use is refused.
#[test]
fn a_finished_sweeps_report_is_made_again_with_other_rules_running_nothing() {
    let dir = tempdir("report");
    let (a, first) = (format!("{dir}/a"), format!("{dir}/first.json"));
    let o = simulate("8", &["--sim-slow", "3,1-6", "--output", &a]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    std::fs::copy(format!("{a}/sweep.json"), &first).unwrap();
    let again = run(&["sweep", "--report", &a], LIMIT);
    assert_eq!(again.code, Some(5), "{}", again.stderr);
    remade_with_its_own_rules(&a, &first, &o.stdout, again);
    remade_by_another_fabdiag(&a, &first);
    remade_with_other_rules(&first);
    what_a_report_cannot_use(&dir, &first);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same rules make the same report, said to be made again; written
/// back in place, the same document but for where it was made from.
fn remade_with_its_own_rules(a: &str, first: &str, measured: &str, again: Output) {
    // the same report, said to be made again
    let (head, rest) = again.stdout.split_once('\n').unwrap();
    let (remade, rest) = rest.split_once('\n').unwrap();
    assert_eq!(
        remade,
        format!("report made again from {a}/sweep.json (--report): nothing was run for it")
    );
    assert_eq!(
        format!("{head}\n{rest}"),
        measured,
        "the same rules make the same report"
    );
    // in place: the same document, but for where it was made from
    let again = run(&["sweep", "--report", a, "--output", a], LIMIT);
    assert_eq!(again.code, Some(5), "{}", again.stderr);
    let read = |p: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let mut remade = read(&format!("{a}/sweep.json"));
    let from = remade["options"].as_object_mut().unwrap().remove("report_from");
    assert_eq!(from, Some(Value::from(format!("{a}/sweep.json"))));
    let maker = remade["options"]
        .as_object_mut()
        .unwrap()
        .remove("report_fabdiag_version");
    assert_eq!(maker, Some(Value::from(env!("CARGO_PKG_VERSION"))));
    assert_eq!(remade, read(first));
}

/// Made again by another fabdiag: the versions stay those that measured.
fn remade_by_another_fabdiag(a: &str, first: &str) {
    let read = |p: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    // made again by another fabdiag: the versions stay those that measured
    let mut older = read(first);
    older["fabdiag_version"] = "0.0.9".into();
    older["libfabric_version"] = "1.15.2".into();
    let older_file = format!("{a}/older.json");
    std::fs::write(&older_file, older.to_string()).unwrap();
    let o = run(&["sweep", "--report", &older_file, "--json"], LIMIT);
    let doc = o.json();
    assert_eq!(
        (&doc["fabdiag_version"], &doc["libfabric_version"]),
        (&"0.0.9".into(), &"1.15.2".into())
    );
    assert_eq!(doc["options"]["report_fabdiag_version"], env!("CARGO_PKG_VERSION"));
    let o = run(&["sweep", "--report", &older_file], LIMIT);
    let line = o.stdout.lines().nth(1).unwrap_or_default();
    assert!(
        line.ends_with(&format!(
            "nothing was run for it; made by fabdiag {}, measured by fabdiag 0.0.9",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
    for f in ["summary.txt", "report.html", "heatmap.png"] {
        assert!(std::path::Path::new(&format!("{a}/{f}")).exists(), "{f}");
    }
}

/// Other rules, a threshold and a baseline, on a finished sweep.
fn remade_with_other_rules(first: &str) {
    // a looser rule names nothing; the re-tests are kept, judged by nothing
    let o = run(
        &["sweep", "--report", first, "--outlier-fraction", "0.1", "--json"],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(
        (
            doc["verdict"]["slow_nodes"].clone(),
            doc["verdict"]["slow_links"].clone()
        ),
        (0.into(), 0.into())
    );
    assert_eq!(doc["analysis"]["rules"]["fraction"], 0.1);
    assert_eq!(doc["analysis"]["rules"]["z"], 3.5, "a rule not given stays the sweep's");
    let verdicts: Vec<&Value> = doc["retests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["verdict"])
        .collect();
    assert_eq!(verdicts, vec!["not_suspect", "not_suspect"]);
    let o = run(&["sweep", "--report", first, "--outlier-fraction", "0.1"], LIMIT);
    assert!(!o.stdout.contains("cleared by re-test"), "{}", o.stdout);
    // a threshold, and a baseline
    let o = run(&["sweep", "--report", first, "--min-bw", "5000"], LIMIT);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(
        o.stdout.contains(
            "thresholds: at least 5000.00 MB/s for every pair and node (--min-bw): 8 pairs and 1 node missed it\n"
        ),
        "{}",
        o.stdout
    );
    // the node that missed it, with its median
    let missed = o
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("thresholds:"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        missed.starts_with("  rank ") && missed.contains("): median ") && missed.ends_with(" MB/s"),
        "{missed}"
    );
    let o = run(&["sweep", "--report", first, "--baseline", first, "--json"], LIMIT);
    assert_eq!(o.json()["baseline"]["compared_pairs"], 28);
}

/// What `--report` cannot use: one line, exit 1, nothing printed.
fn what_a_report_cannot_use(dir: &str, first: &str) {
    // what it cannot use: one line, exit 1, nothing printed
    std::fs::write(format!("{dir}/other.json"), "{\"schema\": \"fabdiag-traffic/1\"}").unwrap();
    let cases: &[(&[&str], String)] = &[
        (
            &["-s", "8"],
            "'-s' has no effect with --report, which runs no pair test".into(),
        ),
        (
            &["--rails", "2"],
            "--rails has no effect with --report, which runs nothing".into(),
        ),
        (&["--simulate", "4"], "--simulate has no effect with --report".into()),
        (&["--max-lat", "3"], "write-bw: unrecognized option '--max-lat'".into()),
    ];
    for (args, says) in cases {
        let mut a = vec!["sweep", "--report", first];
        a.extend_from_slice(args);
        let o = run(&a, LIMIT);
        assert_eq!((o.code, o.stdout.as_str()), (Some(1), ""), "{args:?}: {}", o.stderr);
        assert!(o.one_line().contains(says.as_str()), "{args:?}: {}", o.stderr);
    }
    for (path, says) in [
        (
            format!("{dir}/none"),
            format!("--report {dir}/none: No such file or directory"),
        ),
        (
            format!("{dir}/other.json"),
            format!(
                "--report {dir}/other.json: its schema is 'fabdiag-traffic/1'; this fabdiag reads 'fabdiag-sweep/1'"
            ),
        ),
    ] {
        let o = run(&["sweep", "--report", &path], LIMIT);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(o.one_line().contains(&says), "{}", o.stderr);
    }
}

/// Rank 0 killed mid-sweep (SIGKILL: no report, no handler): its
/// `--output` folder still holds who joined and every pair measured, and
/// `--report` makes the report from them, the pairs not reached counted as
/// not tested; written back, the next `--report` reads that document.
#[test]
fn a_report_is_made_from_what_a_killed_rank_0_recorded() {
    let dir = tempdir("killed");
    let p = Proc::spawn(&mut fabdiag(&[
        "sweep",
        "--simulate",
        "8",
        "--sim-pair-ms",
        "300",
        "--sim-slow",
        "3",
        "--output",
        &dir,
    ]));
    let jsonl = format!("{dir}/pairs.jsonl");
    let lines = || std::fs::read_to_string(&jsonl).map_or(0, |t| t.lines().count());
    let t = std::time::Instant::now();
    // three rounds of four pairs: rank 3 in three of them
    while lines() < 12 {
        assert!(t.elapsed() < LIMIT, "no progress: {}", p.stderr_now());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    p.signal(Signal::SIGKILL);
    let killed = p.wait(LIMIT);
    assert_eq!(killed.code, None, "killed by the signal");
    assert!(!std::path::Path::new(&format!("{dir}/sweep.json")).exists());
    let o = run(&["sweep", "--report", &dir, "--json"], LIMIT);
    assert_eq!(o.code, Some(2), "pairs not tested: {}", o.stderr);
    let doc = o.json();
    let measured = pairs_measured(&doc);
    assert!((12..28).contains(&measured), "{measured}");
    assert_eq!(doc["verdict"]["untested_pairs"], 28 - measured);
    assert_eq!(doc["verdict"]["failed_pairs"], 0);
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 8);
    assert!(
        doc["nodes"].as_array().unwrap().iter().all(|n| n["host"].is_string()),
        "named from nodes.json"
    );
    assert_eq!(doc["analysis"]["slow_nodes"][0]["node"], 3, "{}", doc["analysis"]);
    let stopped = doc["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("made from pairs.jsonl"), "{stopped}");
    // the folder as a baseline: its measured pairs are compared
    let o = simulate("8", &["--sim-slow", "3", "--baseline", &dir, "--json"]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    let c = o.json()["baseline"].clone();
    assert_eq!(
        (c["compared_pairs"].as_u64(), c["file"].as_str()),
        (Some(measured as u64), Some(dir.as_str()))
    );
    assert_eq!(c["fabdiag_version"], env!("CARGO_PKG_VERSION"), "kept in meta.json");
    assert_eq!((links(&c), c["nodes"].clone()), (vec![], serde_json::json!([])), "{c}");
    let text = run(&["sweep", "--report", &dir, "--output", &dir], LIMIT);
    assert_eq!(text.code, Some(2), "{}", text.stderr);
    assert!(text.stdout.contains("not tested:\n  "), "{}", text.stdout);
    assert!(text.stdout.contains("overhead: none recorded"), "{}", text.stdout);
    // now from the document it wrote: the same report but for its source
    let again = run(&["sweep", "--report", &dir], LIMIT);
    assert_eq!(again.code, Some(2), "{}", again.stderr);
    let from = |what: &str| format!("report made again from {dir}/{what} (--report): nothing was run for it");
    assert!(text.stdout.contains(&from("pairs.jsonl")), "{}", text.stdout);
    assert_eq!(
        again.stdout,
        text.stdout.replace(&from("pairs.jsonl"), &from("sweep.json"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder that holds a sweep's results is never overwritten by another
/// sweep by accident: a second `--output` into it is refused in one line
/// naming what is there, and every file is left byte for byte; `--replace`
/// asks for it, `--resume` continues it. A link planted at a result's name
/// (in a shared folder, say) is replaced, never written through.
#[test]
fn a_finished_sweep_is_never_overwritten_by_accident() {
    let dir = tempdir("kept");
    let out = format!("{dir}/out");
    assert_eq!(simulate("6", &["--output", &out]).code, Some(0));
    let files = |d: &str| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = files(&out);
    assert!(
        before.iter().any(|(n, _)| n == "pairs.jsonl"),
        "{:?}",
        before.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let o = simulate("6", &["--sim-slow", "3", "--output", &out]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.one_line().contains(&format!(
            "{out} already holds a sweep's results (meta.json, pairs.jsonl,"
        )),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("--resume continues it, --replace discards it"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "it ran: {}", o.stdout);
    assert_eq!(files(&out), before, "a refused sweep changed the folder");
    let o = simulate("6", &["--output", &out, "--resume", "--replace"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.one_line()
            .contains("--replace goes with --output DIR, and not with --resume"),
        "{}",
        o.stderr
    );
    // asked for: the slow node's sweep replaces the healthy one
    let o = simulate("6", &["--sim-slow", "3", "--output", &out, "--replace"]);
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    assert_ne!(files(&out), before);

    // --report of another sweep into this folder: refused, the folder kept;
    // into its own folder (from a path spelt another way) it is made again
    let other = format!("{dir}/other");
    assert_eq!(simulate("4", &["--output", &other]).code, Some(0));
    let kept = files(&out);
    let o = run(&["sweep", "--report", &other, "--output", &out], LIMIT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.one_line().contains(&format!(
            "{out} already holds another sweep's results (meta.json, pairs.jsonl,"
        )),
        "{}",
        o.stderr
    );
    assert_eq!(files(&out), kept, "a refused --report changed the folder");
    let o = run(
        &[
            "sweep",
            "--report",
            &format!("{out}/sweep.json"),
            "--output",
            &format!("{dir}/./out"),
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(5), "its own folder: {}", o.stderr);
    let o = run(&["sweep", "--report", &other, "--output", &out, "--replace"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let names: Vec<String> = files(&out).into_iter().map(|f| f.0).collect();
    assert!(
        !names.iter().any(|n| n == "pairs.jsonl"),
        "the other sweep's records stayed: {names:?}"
    );

    // links planted in a fresh folder: replaced by the sweep's own files,
    // what they point to untouched
    let planted = format!("{dir}/planted");
    std::fs::create_dir_all(&planted).unwrap();
    let victim = format!("{dir}/victim");
    std::fs::write(&victim, "someone else's file\n").unwrap();
    std::os::unix::fs::symlink(&victim, format!("{planted}/summary.txt")).unwrap();
    let o = simulate("4", &["--output", &planted]);
    assert_eq!(
        o.code,
        Some(1),
        "a link at a result's name is something there: {}",
        o.stderr
    );
    let o = simulate("4", &["--output", &planted, "--replace"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "someone else's file\n");
    let summary = std::fs::symlink_metadata(format!("{planted}/summary.txt")).unwrap();
    assert!(summary.file_type().is_file(), "summary.txt is still a link");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--replace` clears a traffic pattern's run as it clears a sweep's: the
/// sweep that replaced it is reported from the folder, never refused as
/// the pattern run that is gone.
#[test]
fn replace_leaves_nothing_of_a_pattern_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").display().to_string();
    let o = simulate("4", &["--pattern", "bisection", "-D", "1", "--output", &out]);
    assert!(
        std::path::Path::new(&out).join("pattern.json").is_file(),
        "{}",
        o.stderr
    );
    let o = simulate("4", &["--output", &out, "--replace"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        !std::path::Path::new(&out).join("pattern.json").exists(),
        "the pattern run's document outlived --replace"
    );
    let o = run(&["sweep", "--report", &out], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}
