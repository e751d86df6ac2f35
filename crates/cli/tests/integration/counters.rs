//! NIC counters read around every pair test and set beside its result:
//! on this machine's own loopback (real sysfs and procfs), on shm (no
//! NIC: said once per side), against a fixture tree changed while the
//! test runs (the whole path through the binary, both sides, JSON and
//! the `--counters` block), and across network namespaces for real: a
//! veth taken down and up mid-run shows carrier changes on the side
//! whose link flapped, and loss on one namespace's path shows TCP
//! retransmissions there, not on the clean side; and eight ranks of a
//! sweep, one flapping and one lossy, named in its report every time.

use crate::common::cluster::Cluster;
use crate::common::netns::*;
use crate::common::*;
use fabdiag_testkit::counters::{netdev_counters, set, set_tcp, set_telemetry};
use fabdiag_testkit::sysfs::SysfsTree;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The change of `name` in the source `device` of a side's counters.
fn change<'a>(side: &'a Value, device: &str, name: &str) -> &'a Value {
    let sources = side["sources"].as_array().unwrap_or_else(|| panic!("{side}"));
    let s = sources
        .iter()
        .find(|s| s["device"].as_str().is_some_and(|d| d.starts_with(device)))
        .unwrap_or_else(|| panic!("no source {device} in {side}"));
    s["counters"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {s}"))
}

#[test]
fn loopback_tcp_counters_are_read_on_both_sides() {
    let _cpu = cpu();
    let o = run(&["write-bw", "--local", "-P", "tcp", "-n", "50", "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert_eq!(doc["schema_version"], 2);
    for side in ["local", "peer"] {
        let c = &doc["counters"][side];
        assert_eq!(c["state"], "read", "{side}: {c}");
        // the domain's own interface and the namespace's TCP counters
        let families: Vec<&str> = c["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["family"].as_str())
            .collect();
        assert_eq!(families, ["netdev", "tcp"], "{c}");
        let rx = change(c, "lo", "rx_packets");
        assert_eq!(rx["change"], "rose", "{rx}");
        assert_eq!(rx["class"], "traffic");
        assert_eq!(rx["fault"], false);
        assert!(c["counters_read"].as_u64().unwrap() > 20, "{c}");
        assert!(c["seconds"].as_f64().unwrap() > 0.0, "{c}");
    }
}

#[test]
fn a_provider_without_a_nic_says_so_once_per_side() {
    let _cpu = cpu();
    let o = run(&["send-lat", "--local", "-P", "shm", "-n", "20", "--json"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let none = serde_json::json!({"state": "not_available", "reason": "shm has no NIC behind it"});
    assert_eq!(o.json()["counters"], serde_json::json!({"local": none, "peer": none}));
    let o = run(&["send-lat", "--local", "-P", "shm", "-n", "20", "--counters"], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.ends_with(
            "Counters (client): not available (shm has no NIC behind it)\n\
             Counters (server): not available (shm has no NIC behind it)\n"
        ),
        "{}",
        o.stdout
    );
    // without --counters the originals' output is untouched
    let o = run(&["send-lat", "--local", "-P", "shm", "-n", "20"], LIMIT);
    assert!(!o.stdout.contains("Counters"), "{}", o.stdout);
}

/// A fixture machine whose tcp domain "lo" is a netdev with every
/// statistic, plus the namespace's TCP counters.
fn lo_fixture(root: &std::path::Path) -> std::path::PathBuf {
    let t = SysfsTree::new(root);
    let lo = t.netdev(None, "lo", "unknown", 1, -1);
    netdev_counters(&lo, 0);
    set_tcp(&root.join("proc/net"), 100, 0);
    lo
}

#[test]
fn counters_changed_during_a_test_reach_the_json_and_the_block() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().unwrap();
    let lo = lo_fixture(dir.path());
    let root = dir.path().to_str().unwrap();
    let mut cmd = fabdiag(&[
        "write-bw",
        "--local",
        "-P",
        "tcp",
        "-D",
        "1",
        "-s",
        "8:64",
        "--counters",
    ]);
    cmd.env("FABDIAG_TEST_SYSFS_ROOT", root);
    let mut p = Proc::spawn(&mut cmd);
    // the first row is out: both sides have read their counters
    p.wait_for("the first row", LIMIT, |out, _| {
        out.lines().any(|l| l.trim_start().starts_with("8 "))
    });
    set(&lo, &[("carrier_changes", 2)]);
    set(&lo.join("statistics"), &[("rx_crc_errors", 1207), ("tx_dropped", 3)]);
    set_tcp(&dir.path().join("proc/net"), 130, 1);
    let o = p.wait(LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let block = &o.stdout[o.stdout.find("Counters (client").expect("the block")..];
    for who in ["client", "server"] {
        let at = block
            .find(&format!("Counters ({who}, lo + tcp: "))
            .unwrap_or_else(|| panic!("{block}"));
        let lines: Vec<&str> = block[at..]
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .collect();
        assert_eq!(
            lines,
            [
                "  lo carrier_changes +2 [flap: the link went down or retrained]",
                "  lo rx_crc_errors +1,207 [physical: suspect the cable, optics or port]",
                "  lo tx_dropped +3 [drop: packets were dropped]",
                "  tcp RetransSegs +30 [retransmit: packets were lost and sent again]",
                "  tcp TCPTimeouts +1 [retransmit: packets were lost and sent again]",
            ],
            "{block}"
        );
    }
}

/// A pair tool across namespaces: the server in A (its JSON), the client
/// in B (text with --counters); `during` runs once the test is under way.
fn across(ns: &Netns, k: u16, seconds: &str, during: impl FnOnce()) -> (Output, Output) {
    let port = (49500 + k).to_string();
    let srv = Proc::spawn(&mut ns.cmd(&ns.a, &["write-bw", "-p", &port, "--json"]));
    wait_listen_in_ns(srv.pid(), 49500 + k);
    let addr = ns.a_addr();
    let mut cli = Proc::spawn(&mut ns.cmd(
        &ns.b,
        &[
            "write-bw",
            &addr,
            "-p",
            &port,
            "-D",
            seconds,
            "-s",
            "65536",
            "--counters",
        ],
    ));
    cli.wait_for("the table header", SHORT, |out, _| out.contains("Size[B]"));
    // past the ready barrier: both sides have read their counters
    std::thread::sleep(Duration::from_millis(300));
    during();
    (cli.wait(LIMIT), srv.wait(LIMIT))
}

fn rise(v: &Value) -> u64 {
    assert_eq!(v["change"], "rose", "{v}");
    v["by"].as_u64().unwrap_or_default()
}

#[test]
fn a_flapping_veth_shows_carrier_changes_on_its_side() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(5);
    let (va, vb) = ns.ends();
    let (c, s) = across(&ns, 0, "4", || {
        ip(&["-n", &ns.a, "link", "set", &va, "down"]);
        std::thread::sleep(Duration::from_millis(300));
        ip(&["-n", &ns.a, "link", "set", &va, "up"]);
    });
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    let doc = s.json();
    // the server's own end went down and up
    assert!(
        rise(change(&doc["counters"]["local"], &va, "carrier_changes")) >= 2,
        "{doc}"
    );
    // the client's end lost its carrier with it (a veth pair) and says so
    // under its own name, on its own side
    assert!(
        rise(change(&doc["counters"]["peer"], &vb, "carrier_changes")) >= 2,
        "{doc}"
    );
    assert!(
        c.stdout.contains(&format!("  {vb} carrier_changes +"))
            && c.stdout.contains(&format!("  {va} carrier_changes +")),
        "{}",
        c.stdout
    );
}

/// A link down for longer than a peer may be silent: both sides fail,
/// and each one's error line says its port's carrier changed meanwhile.
#[test]
fn a_failure_says_the_carrier_changed_meanwhile() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(10);
    let (va, vb) = ns.ends();
    let (c, s) = across(&ns, 3, "30", || {
        ip(&["-n", &ns.a, "link", "set", &va, "down"]);
        std::thread::sleep(Duration::from_secs(7));
        ip(&["-n", &ns.a, "link", "set", &va, "up"]);
    });
    assert_eq!(c.code, Some(2), "{}", c.stderr);
    assert_eq!(s.code, Some(2), "{}", s.stderr);
    let line = c.one_line();
    assert!(
        line.contains(&format!(
            "; NIC counters that rose meanwhile: this side: {vb} carrier_changes +"
        )),
        "{line}"
    );
    let doc = s.json();
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "; NIC counters that rose meanwhile: this side: {va} carrier_changes +"
        )),
        "{doc}"
    );
}

#[test]
fn loss_on_one_side_shows_retransmissions_there() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(6);
    // the client's namespace drops one in ten of the TCP segments it sends
    let nft = |args: &[&str]| must(&[&["ip", "netns", "exec", &ns.b, "nft"][..], args].concat());
    nft(&["add", "table", "inet", "lossy"]);
    nft(&[
        "add",
        "chain",
        "inet",
        "lossy",
        "out",
        "{ type filter hook output priority 0; }",
    ]);
    nft(&[
        "add", "rule", "inet", "lossy", "out", "meta", "l4proto", "tcp", "numgen", "random", "mod", "100", "<", "10",
        "drop",
    ]);
    let (c, s) = across(&ns, 1, "2", || {});
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    let doc = s.json();
    let client_retrans = rise(change(&doc["counters"]["peer"], "tcp", "RetransSegs"));
    assert!(client_retrans > 0, "{doc}");
    assert!(c.stdout.contains("  tcp RetransSegs +"), "{}", c.stdout);
    // the server's namespace sends acks only: what it resent, if anything,
    // is far below what the lossy side resent
    let server = change(&doc["counters"]["local"], "tcp", "RetransSegs");
    let server_retrans = server["by"].as_u64().unwrap_or(0);
    assert!(server_retrans * 10 < client_retrans, "{server} vs {client_retrans}");
}

#[test]
fn a_run_that_fails_mid_way_keeps_this_side_s_counters() {
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p, "--json"], port);
    let mut cli = Proc::spawn(&mut fabdiag(&["write-bw", "127.0.0.1", "-p", &p, "-D", "30"]));
    cli.wait_for("the table header", SHORT, |out, _| out.contains("Size[B]"));
    std::thread::sleep(Duration::from_millis(300));
    cli.signal(Signal::SIGKILL);
    drop(cli);
    let s = srv.wait(LIMIT);
    assert_eq!(s.code, Some(2), "{}", s.stderr);
    let doc = s.json();
    assert!(
        doc["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("peer closed")),
        "{doc}"
    );
    // read before the run and again at the failure; the peer's never came
    assert_eq!(doc["counters"]["local"]["state"], "read", "{doc}");
    assert_eq!(
        change(&doc["counters"]["local"], "lo", "rx_bytes")["change"],
        "rose",
        "{doc}"
    );
    assert!(doc["counters"]["peer"].is_null(), "{doc}");
}

/// `loss` % of the frames into and out of node `node` dropped on the
/// switch (a bridge table in the switch namespace, as a bad cable would).
fn lossy_port(c: &Cluster, node: usize, loss: u32) {
    let nft = |args: &[&str]| must(&[&["ip", "netns", "exec", &c.switch(), "nft"][..], args].concat());
    nft(&["add", "table", "bridge", "lossy"]);
    nft(&[
        "add",
        "chain",
        "bridge",
        "lossy",
        "cross",
        "{ type filter hook forward priority 0; }",
    ]);
    let port = format!("\"{}\"", c.port(node));
    let pct = loss.to_string();
    for dir in ["iifname", "oifname"] {
        nft(&[
            "add", "rule", "bridge", "lossy", "cross", dir, &port, "numgen", "random", "mod", "100", "<", &pct, "drop",
        ]);
    }
}

/// The ranks a sweep's report names by their counters, each with the
/// counters it names.
fn named(doc: &Value) -> Vec<(u64, Vec<String>)> {
    doc["counters"]["named"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    let rises = n["rises"].as_array().unwrap().iter();
                    let names =
                        rises.map(|r| format!("{} {}", r["device"].as_str().unwrap(), r["name"].as_str().unwrap()));
                    (n["rank"].as_u64().unwrap(), names.collect())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Eight ranks over namespaces on a bridge: node 3's cable flaps all
/// through the sweep, node 6's drops a tenth of its frames. The report
/// names node 3 by its carrier changes and node 6 by its retransmissions,
/// and no other rank: the partners resent too (in their tests with nodes 3
/// and 6, and in the tests after, as those connections closed), but no
/// more than the rest of the sweep, test for test. The suite runs one
/// sweep; FABDIAG_COUNTER_SWEEPS runs that many in a row (the campaign,
/// scripts/dev/demos/counters-sweeps.sh).
#[test]
fn a_sweep_names_the_flapping_node_and_the_lossy_one_every_time() {
    let _cpu = cpu();
    let args: &[&str] = &["-P", "tcp", "-s", "65536", "-n", "4", "-l", "16", "--retest", "0"];
    let sweeps: u32 = std::env::var("FABDIAG_COUNTER_SWEEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for run in 1..=sweeps {
        let c = Cluster::new(8);
        lossy_port(&c, 6, 10);
        let stop = Arc::new(AtomicBool::new(false));
        let flapper = {
            let (sw, port, stop) = (c.switch(), c.port(3), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(600));
                    for state in ["down", "up"] {
                        must(&["ip", "-n", &sw, "link", "set", &port, state]);
                        std::thread::sleep(Duration::from_millis(150));
                    }
                }
            })
        };
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let others: Vec<Proc> = (1..8).map(|r| Proc::spawn(&mut c.rank(r, port, args))).collect();
        let zero = Proc::spawn(&mut c.rank(0, port, &[args, &["--json", "--output", out]].concat())).wait(LIMIT * 4);
        stop.store(true, Ordering::Relaxed);
        let _ = flapper.join();
        for p in others {
            let _ = p.wait(LIMIT);
        }
        let doc = zero.json();
        let text = std::fs::read_to_string(dir.path().join("summary.txt")).unwrap_or_default();
        // (shown with --nocapture; the guide quotes one)
        println!("run {run}:\n{text}");
        let found = named(&doc);
        let ranks: Vec<u64> = {
            let mut r: Vec<u64> = found.iter().map(|(r, _)| *r).collect();
            r.sort();
            r
        };
        assert_eq!(ranks, [3, 6], "run {run}: {found:?}\n{text}");
        for (rank, counters) in &found {
            let want = if *rank == 3 {
                "eth0 carrier_changes"
            } else {
                "tcp RetransSegs"
            };
            assert!(
                counters.iter().any(|c| c == want),
                "run {run}: rank {rank} {counters:?}\n{text}"
            );
        }
        // every rank says what it read: its own eth0, the flapping one
        // too (its link may be down as it chooses a domain: it waits for
        // it rather than opening lo), and the summary says who to blame
        for n in doc["nodes"].as_array().unwrap() {
            assert_eq!(n["counters"], "eth0 + tcp", "run {run}: {n}");
        }
        let section = text.split("\nNIC counters that rose:\n").nth(1).unwrap_or_default();
        let line = |r: usize| {
            let head = format!("  rank {r} (node{r}): ");
            section.lines().find(|l| l.starts_with(&head)).unwrap_or_default()
        };
        assert!(
            // (slow, or its tests failed: the words say which, and what to suspect)
            line(3).contains(": eth0 carrier_changes +") && line(3).contains("eth0's link went down or retrained"),
            "run {run}:\n{text}"
        );
        // the page says the same
        let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap_or_default();
        let at = page
            .find("<h2>NIC counters</h2>")
            .unwrap_or_else(|| panic!("run {run}: no section"));
        assert!(
            page[at..].contains("<li>rank 3 (node3): eth0 carrier_changes +"),
            "run {run}"
        );
        assert!(
            line(6).contains(": tcp RetransSegs +")
                && line(6).contains("packets were lost on its path (TCP resent them)"),
            "run {run}:\n{text}"
        );
    }
}

/// A change made to a fixture tree of NIC counters while a test runs.
type CounterChange = fn(&fabdiag_testkit::counters::Nics);

/// The InfiniBand, RoCE, EFA and CXI layouts through the whole of a run:
/// a tcp `--local` run told to read its counters as verbs on mlx5_0 (or
/// mlx5_1, efa_0, cxi0) would (FABDIAG_TEST_COUNTERS_AS, a test hook),
/// on a fixture tree laid out as each driver lays it out, changed while
/// the test runs: rises, a counter at its IBA ceiling, one that went
/// back, one that vanished, each said as such in the JSON and the block.
#[test]
fn infiniband_roce_efa_and_cxi_counters_reach_the_json_and_the_block() {
    let _cpu = cpu();
    let cases: [(&str, &str, &str, CounterChange, &[&str]); 4] = [
        (
            "verbs;ofi_rxm",
            "mlx5_0",
            "mlx5_0 port 1",
            |n| {
                set(
                    &n.ib_counters,
                    &[("symbol_error", 65535), ("link_downed", 3), ("port_xmit_data", 5)],
                );
                set(&n.ib_hw, &[("out_of_sequence", 5), ("lifespan", 3)]);
            },
            &[
                "  mlx5_0 port 1 link_downed +2 [flap: the link went down or retrained]",
                "  mlx5_0 port 1 out_of_sequence +5 [retransmit: packets were lost and sent again]",
                "  mlx5_0 port 1 symbol_error at its ceiling: rose by at least 65,532, and stopped counting [physical: suspect the cable, optics or port]",
            ],
        ),
        (
            "verbs;ofi_rxm",
            "mlx5_1",
            "mlx5_1 port 1 + enp65s0f1np1",
            |n| {
                set(&n.roce_counters.with_file_name("hw_counters"), &[("np_cnp_sent", 40)]);
                set(&n.roce_net.join("statistics"), &[("rx_dropped", 7)]);
            },
            &[
                "  mlx5_1 port 1 np_cnp_sent +40 [congestion, a sign of load]",
                "  enp65s0f1np1 rx_dropped +7 [drop: packets were dropped]",
            ],
        ),
        (
            "efa",
            "efa_0-rdm",
            "efa_0 port 1",
            |n| set(&n.efa_port_hw, &[("rx_drops", 12), ("retrans_pkts", 40)]),
            &[
                "  efa_0 port 1 retrans_pkts +40 [retransmit: packets were lost and sent again]",
                "  efa_0 port 1 rx_drops +12 [drop: packets were dropped]",
            ],
        ),
        (
            "cxi",
            "cxi0",
            "cxi0 + hsn0",
            |n| {
                set_telemetry(&n.cxi_telemetry, &[("hni_pcs_uncorrected_cw", 2), ("hni_llr_tx_replay_event", 9)]);
                std::fs::remove_file(n.cxi_telemetry.join("hni_pcs_corrected_cw")).unwrap();
                set(&n.hsn0, &[("carrier_changes", 4)]);
            },
            &[
                "  cxi0 hni_llr_tx_replay_event +9 [retransmit: packets were lost and sent again]",
                "  cxi0 hni_pcs_corrected_cw vanished during the test [physical, a sign of load]",
                "  cxi0 hni_pcs_uncorrected_cw +2 [physical: suspect the cable, optics or port]",
                "  hsn0 carrier_changes +2 [flap: the link went down or retrained]",
            ],
        ),
    ];
    // the changes the JSON gives, each with its class: a traffic counter
    // that went back (a reset) too, which the block leaves out
    let json: [&[&str]; 4] = [
        &[
            "mlx5_0 port 1 link_downed flap rose",
            "mlx5_0 port 1 out_of_sequence retransmit rose",
            "mlx5_0 port 1 port_xmit_data traffic went_back",
            "mlx5_0 port 1 symbol_error physical at_ceiling",
        ],
        &[
            "mlx5_1 port 1 np_cnp_sent congestion rose",
            "enp65s0f1np1 rx_dropped drop rose",
        ],
        &[
            "efa_0 port 1 retrans_pkts retransmit rose",
            "efa_0 port 1 rx_drops drop rose",
        ],
        &[
            "cxi0 hni_llr_tx_replay_event retransmit rose",
            "cxi0 hni_pcs_corrected_cw physical vanished",
            "cxi0 hni_pcs_uncorrected_cw physical rose",
            "hsn0 carrier_changes flap rose",
        ],
    ];
    for ((provider, domain, read, change, want), json) in cases.into_iter().zip(json) {
        counters_read_as(provider, domain, read, change, want, json);
    }
}

/// One case of the test above: a tcp `--local` run whose counters are read
/// as `provider` on `domain` would, `change` made to the fixture mid-run;
/// the block must say `want` on both sides and the server's JSON `json`.
fn counters_read_as(provider: &str, domain: &str, read: &str, change: CounterChange, want: &[&str], json: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let nics = fabdiag_testkit::counters::nics(dir.path());
    let with_env = |mut c: std::process::Command| {
        c.env("FABDIAG_TEST_SYSFS_ROOT", dir.path())
            .env("FABDIAG_TEST_COUNTERS_AS", format!("{provider}:{domain}"));
        c
    };
    let port = free_port();
    let p = port.to_string();
    let mut srv = Proc::spawn(&mut with_env(fabdiag(&["write-bw", "-p", &p, "--json"])));
    wait_listening(&mut srv, "127.0.0.1", port);
    let args = [
        "write-bw",
        "127.0.0.1",
        "-p",
        &p,
        "-P",
        "tcp",
        "-D",
        "1",
        "-s",
        "8:16",
        "--counters",
    ];
    let mut cli = Proc::spawn(&mut with_env(fabdiag(&args)));
    // the first row is out: both sides have read their counters
    cli.wait_for("the first row", LIMIT, |out, _| {
        out.lines().any(|l| l.trim_start().starts_with("8 "))
    });
    change(&nics);
    let (c, s) = (cli.wait(LIMIT), srv.wait(LIMIT));
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    // the block: this side's, then the peer's, the same fixture read
    let at = c
        .stdout
        .find("Counters (client")
        .unwrap_or_else(|| panic!("{}", c.stdout));
    let block: Vec<&str> = c.stdout[at..].lines().collect();
    let head = |who: &str| format!("Counters ({who}, {read}: ");
    assert!(block[0].starts_with(&head("client")), "{domain}: {block:?}");
    assert_eq!(block[1..=want.len()], want[..], "{domain}: {block:?}");
    assert!(
        block[want.len() + 1].starts_with(&head("server")),
        "{domain}: {block:?}"
    );
    assert_eq!(block[want.len() + 2..], want[..], "{domain}: {block:?}");
    // the server's JSON: both sides, each change with its class
    let doc = s.json();
    for side in ["local", "peer"] {
        let c = &doc["counters"][side];
        assert_eq!(c["state"], "read", "{domain} {side}: {c}");
        let changed: Vec<String> = c["sources"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| {
                let device = s["device"].as_str().unwrap().to_string();
                s["counters"].as_array().unwrap().iter().filter_map(move |x| {
                    let s = |k: &str| x[k].as_str().unwrap_or_default().to_string();
                    (s("change") != "unchanged")
                        .then(|| format!("{device} {} {} {}", s("name"), s("class"), s("change")))
                })
            })
            .collect();
        assert_eq!(changed, json, "{domain} {side}");
    }
}
