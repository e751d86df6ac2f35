//! `fabdiag sweep --pattern incast`: every other rank into one receiver
//! at once, after one sender alone. A simulation checks the steps and
//! the document's shape (every rank in turn, or the receivers named) and
//! what is refused; four ranks in network namespaces, the receiver's
//! switch port shaped to 5 MB/s and one sender's own cable to 1 MB/s,
//! check that the aggregate is held to the receiver's port, that Jain's
//! index says the senders did not share alike, and that the slow sender
//! is the one named starved.

use crate::common::cluster::Cluster;
use crate::common::*;
use serde_json::Value;

fn simulated(n: &str, extra: &[&str]) -> Output {
    let args = [&["sweep", "--simulate", n, "--pattern", "incast", "-D", "1"][..], extra].concat();
    run(&args, LIMIT)
}

/// An incast's senders, in order.
fn senders(x: &Value) -> Vec<u64> {
    let flows = x["flows"].as_array().expect("flows");
    flows.iter().map(|f| f["client"].as_u64().unwrap_or(99)).collect()
}

#[test]
fn a_simulated_incast_runs_into_every_rank_in_turn_or_the_ones_named() {
    let o = simulated("5", &["--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["pattern"], serde_json::json!({"kind": "incast"}));
    let incasts = doc["incasts"].as_array().expect("incasts");
    assert_eq!(incasts.len(), 5);
    for (r, x) in incasts.iter().enumerate() {
        let r = r as u64;
        assert_eq!(x["receiver"], r);
        let mut want: Vec<u64> = (0..5).filter(|&s| s != r).collect();
        assert_eq!(senders(x), want, "{x}");
        // one sender alone first: the next rank up, wrapping
        let next = want.iter().position(|&s| s > r).unwrap_or(0);
        want.rotate_left(next);
        assert_eq!(x["single"]["flows"][0]["client"], want[0], "{x}");
        assert!(x["jain"].as_f64().is_some_and(|j| j > 0.99), "{x}");
        assert!(x["against_single"].as_f64().is_some(), "{x}");
    }
    // the heatmap: sender by receiver, nothing on the diagonal
    let h = &doc["heatmap"];
    assert_eq!(h["ranks"], serde_json::json!([0, 1, 2, 3, 4]));
    assert!(h["values"][2][2].is_null() && h["values"][3][2].is_number(), "{h}");
    assert!(doc.get("splits").is_none() && doc.get("phases").is_none(), "{doc}");
    assert_eq!(doc["verdict"]["measured_flows"], 5 * 4 + 5);

    let o = simulated("6", &["--receivers", "4,1", "--expect", "40000"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let t = &o.stdout;
    assert!(
        t.starts_with("fabdiag sweep --pattern incast: 6 ranks on 1 node, into 2 receivers in turn; write-bw 65536 B, every sender at once\nincast into 4 ("),
        "{t}"
    );
    assert!(
        t.contains(": 5 of 5 senders, aggregate ") && t.contains(" x one sender alone ("),
        "{t}"
    );
    assert!(
        t.contains(", Jain's index 1.00, ") && t.contains(" % of --expect\n"),
        "{t}"
    );
    assert_eq!(t.matches("\nincast into ").count(), 2, "{t}");
    assert!(
        t.ends_with(
            "flows: 0 failed, 0 not run, 0 starved (below the outlier fraction of their incast's median sender)\n"
        ),
        "{t}"
    );
}

#[test]
fn an_incast_refuses_a_receiver_the_run_lacks_and_options_of_other_patterns() {
    for (args, message) in [
        (
            &["sweep", "--simulate", "4", "--pattern", "incast", "--receivers", "4", "-D", "1"][..],
            "--receivers names rank 4, and the run has 4 ranks (0 to 3)",
        ),
        (
            &["sweep", "--simulate", "4", "--pattern", "incast"][..],
            "--pattern incast needs the pair tool's -D SECONDS, so every flow runs at once for the same time (e.g. -D 5)",
        ),
        (
            &["sweep", "--pattern", "incast", "--split-by", "rank"][..],
            "--split-by goes with --pattern bisection",
        ),
        (
            &["sweep", "--pattern", "incast", "--tool", "write-lat", "-D", "1"][..],
            "--pattern incast streams bandwidth; write-lat measures latency (use write-bw, read-bw or send-bw)",
        ),
    ] {
        let o = run(args, SHORT);
        assert_eq!(one_line(&o.stderr), format!("fabdiag sweep: {message}"), "{args:?}");
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn an_incast_onto_a_shaped_port_is_held_to_it_and_names_the_sender_whose_own_link_is_slower() {
    let _cpu = cpu();
    let c = Cluster::new(4);
    // the receiver's switch port at 40 Mbit/s (5 MB/s); node 3's own
    // cable out at 8 Mbit/s (1 MB/s), below a fair third of the port
    c.shape(&c.switch(), &c.port(0), "40mbit");
    c.shape(&c.node(3), "eth0", "8mbit");
    // read-bw: the receiver reads from each sender, and a read completes
    // when its data has landed (a write, once the provider holds it: over
    // tcp what waits in the port's queue would count too); 16 reads an
    // iteration (1 MiB), so that every flow's window ends within a fifth
    // of a second of -D (256, the default, is 16 MiB: 16 s at 1 MB/s)
    let doc = c.every_rank(&[
        "--tool",
        "read-bw",
        "-P",
        "tcp",
        "-s",
        "65536",
        "-l",
        "16",
        "-D",
        "4",
        "--pattern",
        "incast",
        "--receivers",
        "0",
    ]);
    let x = &doc["incasts"][0];
    assert_eq!(
        (x["receiver"].as_u64(), x["measured"].as_u64()),
        (Some(0), Some(3)),
        "{x}"
    );
    // every flow named from its sender to the receiver
    let to_0 = x["flows"]
        .as_array()
        .is_some_and(|f| f.iter().all(|f| f["server"] == 0));
    assert!(to_0, "{x}");
    let aggregate = x["aggregate"].as_f64().expect("an aggregate");
    assert!(
        (4.5..=5.5).contains(&aggregate),
        "the port's 5 MB/s: {aggregate} MB/s\n{x}"
    );
    // one sender alone (rank 1) fills the port by itself too
    let alone = x["single"]["flows"][0]["value"].as_f64().expect("one sender's figure");
    assert!((4.5..=5.5).contains(&alone), "{alone}\n{x}");
    assert_eq!(x["starved"], serde_json::json!([3]), "{x}");
    let jain = x["jain"].as_f64().expect("Jain's index");
    assert!(jain < 0.99 && jain > 1.0 / 3.0, "{jain}");
}
