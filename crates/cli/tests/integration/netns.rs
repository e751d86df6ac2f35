//! Two hosts: network namespaces joined by a veth pair, addressed in
//! 198.18.0.0/15 (the benchmarking range), with a server in one and a
//! client in the other over the tcp provider, for the bandwidth and latency
//! tools. Needs root and iproute2,
//! which CI has; without them the test fails loudly rather than skipping,
//! because this is the path that proves the tools cross a network.

use crate::common::netns::*;
use crate::common::*;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn two_hosts_over_veth_all_tools() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(1);
    for (k, (tool, extra)) in [
        ("write-bw", &["-s", "1024:65536"][..]),
        ("read-bw", &["-b"][..]),
        ("send-bw", &["-s", "8:8192"][..]),
    ]
    .into_iter()
    .enumerate()
    {
        let port = 49194 + k as u16;
        let p = port.to_string();
        let srv = Proc::spawn(&mut ns.cmd(&ns.a, &[tool, "-p", &p, "--json"]));
        // `ip netns exec` execs in place, so the pid is the server's
        wait_listen_in_ns(srv.pid(), port);
        let mut args = vec![tool, "198.18.1.1", "-p", p.as_str(), "-n", "20", "--json"];
        args.extend_from_slice(extra);
        let c = Proc::spawn(&mut ns.cmd(&ns.b, &args)).wait(LIMIT);
        let s = srv.wait(LIMIT);
        assert_eq!(c.code, Some(0), "{tool} client: {}", c.stderr);
        assert_eq!(s.code, Some(0), "{tool} server: {}", s.stderr);
        let (cj, sj) = (c.json(), s.json());
        // the default domain is the veth that reaches the peer, not lo/eth0
        assert!(
            cj["config"]["device"].as_str().unwrap().starts_with("vb"),
            "{}",
            cj["config"]
        );
        assert!(
            sj["config"]["device"].as_str().unwrap().starts_with("va"),
            "{}",
            sj["config"]
        );
        // an address that is an IP (tcp's, Debian's default here) is the one
        // that reaches the peer; psm3's, say, are opaque
        let local = cj["config"]["local_address"].as_str().unwrap();
        let provider = cj["config"]["provider"].as_str().unwrap();
        if local.starts_with("fi_sockaddr") || core_provider(provider) == "tcp" {
            assert!(local.contains("198.18.1.2"), "{local}");
            assert!(cj["config"]["remote_address"].as_str().unwrap().contains("198.18.1.1"));
        }
        for r in cj["results"].as_array().unwrap() {
            assert_eq!(r["ops"], 20 * 256);
            let bw = r["bw_mb_per_s"].as_f64().unwrap();
            assert!(bw > 0.01 && bw < 1e6, "{tool}: {bw}");
        }
        assert!(!cj["results"].as_array().unwrap().is_empty());
    }
}

#[test]
fn unreachable_server_in_another_namespace() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(2);
    // nothing listens on 198.18.2.1: refused at once, not a hang
    let o = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "198.18.2.1", "-p", "49194"])).wait(Duration::from_secs(15));
    assert_eq!(o.code, Some(2));
    assert!(
        o.stderr.contains("no server listening on 198.18.2.1:49194"),
        "{}",
        o.stderr
    );
    // a host that does not exist on the link: the kernel gives up on ARP
    // ("No route to host") or our 5 s connect limit ends it
    let o = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "198.18.2.77", "-p", "49194"])).wait(Duration::from_secs(15));
    assert_eq!(o.code, Some(2));
    let e = &o.stderr;
    assert!(e.contains("cannot connect to 198.18.2.77:49194"), "{e}");
    assert!(
        e.contains("no answer within 5 s") || e.contains("No route to host"),
        "{e}"
    );
    assert!(o.elapsed < Duration::from_secs(8), "{:?}", o.elapsed);
    // a path that swallows every packet (a firewall that drops silently):
    // the server's link address is pinned on the client's side so that no
    // ARP is needed, and the server's host no longer has the address, so
    // it drops what arrives without a word (it forwards nothing); our 5 s
    // connect limit ends it
    let tag = ns.a.trim_start_matches("fdA").to_string();
    let (va, vb) = (format!("va{tag}"), format!("vb{tag}"));
    let link = Command::new("ip")
        .args(["-n", &ns.a, "-o", "link", "show", &va])
        .output()
        .unwrap();
    let link = String::from_utf8_lossy(&link.stdout).into_owned();
    let mac = link
        .split("link/ether ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no MAC in {link}"));
    let pin = [
        "-n",
        &ns.b,
        "neigh",
        "replace",
        "198.18.2.1",
        "lladdr",
        mac,
        "dev",
        &vb,
        "nud",
        "permanent",
    ];
    ip(&pin);
    ip(&["-n", &ns.a, "addr", "del", "198.18.2.1/24", "dev", &va]);
    let o = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "198.18.2.1", "-p", "49194"])).wait(Duration::from_secs(15));
    assert_eq!(o.code, Some(2));
    assert_eq!(
        o.one_line(),
        "fabdiag write-bw: cannot connect to 198.18.2.1:49194: no answer within 5 s"
    );
    assert!(o.elapsed < Duration::from_secs(8), "{:?}", o.elapsed);
}

#[test]
fn link_cut_mid_run_is_noticed_on_both_sides() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(3);
    let srv = Proc::spawn(&mut ns.cmd(&ns.a, &["write-bw", "-p", "49200"]));
    wait_listen_in_ns(srv.pid(), 49200);
    let mut cli = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "198.18.3.1", "-p", "49200", "-D", "60"]));
    cli.wait_for("the table header", SHORT, |out, _| out.contains("Size[B]"));
    std::thread::sleep(Duration::from_millis(200));
    let tag = ns.a.trim_start_matches("fdA").to_string();
    // pull the cable: the server's end goes down
    ip(&["-n", &ns.a, "link", "set", &format!("va{tag}"), "down"]);
    let t0 = Instant::now();
    let c = cli.wait(Duration::from_secs(30));
    let s = srv.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(2), "{}", c.stderr);
    assert_eq!(s.code, Some(2), "{}", s.stderr);
    assert!(mid_run_phase(&c.stderr), "{}", c.stderr);
    assert!(mid_run_phase(&s.stderr), "{}", s.stderr);
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
}

#[test]
fn latency_tools_across_veth() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(4);
    for (k, tool) in ["send-lat", "write-lat", "read-lat"].into_iter().enumerate() {
        let port = 49300 + k as u16;
        let p = port.to_string();
        let srv = Proc::spawn(&mut ns.cmd(&ns.a, &[tool, "-p", &p, "--json"]));
        wait_listen_in_ns(srv.pid(), port);
        let c = Proc::spawn(&mut ns.cmd(
            &ns.b,
            &[tool, "198.18.4.1", "-p", &p, "-n", "30", "-s", "8:1024", "--json"],
        ))
        .wait(LIMIT);
        let s = srv.wait(LIMIT);
        assert_eq!(c.code, Some(0), "{tool}: {}", c.stderr);
        assert_eq!(s.code, Some(0), "{tool} server: {}", s.stderr);
        let j = c.json();
        assert!(j["config"]["device"].as_str().unwrap().starts_with("vb"));
        let results = j["results"].as_array().unwrap();
        assert_eq!(results.len(), 8);
        for r in results {
            assert_eq!(r["iterations"], 30);
            let (min, mean, max) = (
                r["min_ns"].as_u64().unwrap(),
                r["mean_ns"].as_u64().unwrap(),
                r["max_ns"].as_u64().unwrap(),
            );
            assert!(0 < min && min <= mean && mean <= max, "{r}");
        }
    }
}

/// A write-bw server and client both in B over tcp, talking to B's own
/// address, with A's veth end down (so B's end has no carrier, and
/// libfabric does not list it); `meanwhile` runs once the client has
/// started. The client's output, then the server's.
fn with_b_s_link_down(ns: &Netns, k: u8, meanwhile: impl FnOnce(&str)) -> (Output, Output) {
    let (va, _) = ns.ends();
    ip(&["-n", &ns.a, "link", "set", &va, "down"]);
    let port = 49200 + u16::from(k);
    let p = port.to_string();
    let srv = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "-P", "tcp", "-p", &p, "--json"]));
    wait_listen_in_ns(srv.pid(), port);
    let addr = format!("198.18.{k}.2");
    let cli = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", &addr, "-P", "tcp", "-p", &p, "-n", "20", "--json"]));
    meanwhile(&va);
    (cli.wait(LIMIT), srv.wait(LIMIT))
}

/// A link down for a moment as a run starts: libfabric lists only running
/// interfaces, so the domain holding this side's address is missing.
/// Each side asks again until it is back (up to 2 s) rather than opening
/// the first domain listed (`lo`, while the kernel carries the traffic
/// over the hidden link, and the counters read would be lo's). A's end
/// comes up 0.6 s after the client starts.
#[test]
fn a_link_down_as_the_run_starts_is_waited_for_not_replaced_by_lo() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(7);
    let (c, s) = with_b_s_link_down(&ns, 7, |va| {
        std::thread::sleep(Duration::from_millis(600));
        ip(&["-n", &ns.a, "link", "set", va, "up"]);
    });
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    let (_, vb) = ns.ends();
    for doc in [c.json(), s.json()] {
        assert_eq!(doc["config"]["device"], vb.as_str(), "{}", doc["config"]);
        let sources = doc["counters"]["local"]["sources"].as_array().unwrap();
        assert_eq!(sources[0]["device"], vb.as_str(), "{}", doc["counters"]);
    }
}

/// The same link down for the whole run: after the wait each side opens
/// the first domain listed, as before, and says so in one line.
#[test]
fn a_link_down_for_good_is_said_and_the_run_goes_on() {
    require_root();
    let _cpu = cpu();
    let ns = Netns::new(8);
    let (c, s) = with_b_s_link_down(&ns, 8, |_| {});
    for (side, o) in [("client", &c), ("server", &s)] {
        assert_eq!(o.code, Some(0), "{side}: {}", o.stderr);
        assert_eq!(o.json()["config"]["device"], "lo", "{side}");
        let said: Vec<&str> = o.stderr.lines().filter(|l| l.contains("libfabric lists no")).collect();
        assert_eq!(
            said,
            ["fabdiag write-bw: libfabric lists no tcp;ofi_rxm domain holding 198.18.8.2, the address this side talks to its peer from (is its link down?): using lo"],
            "{side}: {}",
            o.stderr
        );
    }
}
