//! Real server and client processes on loopback over the tcp and shm
//! providers, for every bandwidth tool, uni- and bidirectional, single size
//! and ranges. Both sides' JSON is parsed and checked for the sizes, the
//! counts the run must have made and a plausible, positive bandwidth.

use crate::common::*;
use serde_json::Value;

fn sizes_of(doc: &Value) -> Vec<u64> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["size_bytes"].as_u64().unwrap())
        .collect()
}

fn check_pair(tool: &str, provider: &str, extra: &[&str], iters: u64, list: u64, want_sizes: &[u64], bidir: bool) {
    let n = iters.to_string();
    let l = list.to_string();
    let mut args = vec!["-P", provider, "-n", &n, "-l", &l, "--json"];
    args.extend_from_slice(extra);
    let (c, s) = pair(tool, &["--json"], &args);
    assert_eq!(c.code, Some(0), "client failed: {}", c.stderr);
    assert_eq!(s.code, Some(0), "server failed: {}", s.stderr);
    let (cj, sj) = (c.json(), s.json());
    for (doc, role) in [(&cj, "client"), (&sj, "server")] {
        assert_eq!(doc["schema_version"], 2);
        assert_eq!(doc["role"], role);
        assert!(doc["error"].is_null(), "{doc}");
        assert_eq!(sizes_of(doc), want_sizes, "{role}");
        let cfg = &doc["config"];
        assert!(cfg["provider"].as_str().unwrap().starts_with(provider), "{cfg}");
        assert_eq!(cfg["bidirectional"], bidir);
        assert_eq!(cfg["list_size"], list);
    }
    let cres = cj["results"].as_array().unwrap();
    let sres = sj["results"].as_array().unwrap();
    for (cr, sr) in cres.iter().zip(sres) {
        let size = cr["size_bytes"].as_u64().unwrap();
        // the client initiated exactly iterations × list-size operations
        assert_eq!(cr["iterations"], iters);
        assert_eq!(cr["ops"], iters * list, "size {size}");
        let bw = cr["bw_mb_per_s"].as_f64().unwrap();
        // plausible on loopback: above 1 kB/s, below 1 TB/s
        assert!(bw > 0.001 && bw < 1e6, "size {size}: {bw} MB/s");
        let rate = cr["pkt_rate_mpkt_per_s"].as_f64().unwrap();
        let elapsed = cr["elapsed_ns"].as_u64().unwrap();
        assert!(elapsed > 0);
        // recompute both figures from the raw counts (originals §2.9): bytes per
        // µs and ceil(size/2048) packets per operation, summed over sides
        let mut want_bw = 0.0;
        let mut want_rate = 0.0;
        for (ops, ns) in [
            (&cr["ops"], &cr["elapsed_ns"]),
            (&cr["peer_ops"], &cr["peer_elapsed_ns"]),
        ] {
            let (ops, ns) = (ops.as_u64().unwrap_or(0) as f64, ns.as_u64().unwrap() as f64);
            if ns > 0.0 {
                want_bw += size as f64 * ops / (ns / 1000.0);
                want_rate += ops * size.div_ceil(2048) as f64 / (ns / 1000.0);
            }
        }
        assert!((bw - want_bw).abs() <= 1e-4 + want_bw * 1e-9, "bw {bw} vs {want_bw}");
        assert!(
            (rate - want_rate).abs() <= 1e-6 + want_rate * 1e-9,
            "rate {rate} vs {want_rate}"
        );
        if bidir {
            // each side initiated its own batches and the totals agree
            assert_eq!(sr["ops"], iters * list);
            assert!((cr["bw_mb_per_s"].as_f64().unwrap() - sr["bw_mb_per_s"].as_f64().unwrap()).abs() < 1e-6);
            assert_eq!(cr["peer_ops"], iters * list);
        } else {
            // the server initiated nothing and reports the client's figure
            assert!(sr["ops"].is_null(), "{sr}");
            assert_eq!(sr["bw_mb_per_s"], cr["bw_mb_per_s"]);
            assert_eq!(sr["peer_ops"], iters * list);
        }
    }
}

#[test]
fn tcp_write_read_send_unidirectional_range() {
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        check_pair(
            tool,
            "tcp",
            &["-s", "1:8192"],
            20,
            64,
            &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192],
            false,
        );
    }
}

#[test]
fn tcp_bidirectional_single_size() {
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        check_pair(tool, "tcp", &["-s", "65536", "-b"], 20, 32, &[65536], true);
    }
}

#[test]
fn shm_all_tools_both_directions() {
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        check_pair(
            tool,
            "shm",
            &["-s", "64:65536"],
            20,
            128,
            &[64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
            false,
        );
        check_pair(
            tool,
            "shm",
            &["-s", "4096:16384", "-b"],
            20,
            128,
            &[4096, 8192, 16384],
            true,
        );
    }
}

#[test]
fn sockets_provider_write() {
    let _cpu = cpu();
    check_pair("write-bw", "sockets", &["-s", "4096"], 10, 16, &[4096], false);
}

#[test]
fn non_power_of_two_size_overlap_and_alignment() {
    let _cpu = cpu();
    // a single size need not be a power of two; a tiny --buf-sz makes every
    // operation of a batch overlap (originals §2.8) and must still work
    check_pair(
        "write-bw",
        "tcp",
        &["-s", "1000", "--buf-sz", "1000", "--buf-align", "4096"],
        10,
        16,
        &[1000],
        false,
    );
    check_pair(
        "send-bw",
        "tcp",
        &["-s", "3000", "--buf-align", "128"],
        10,
        16,
        &[3000],
        false,
    );
}

#[test]
fn duration_mode_runs_each_size_for_its_duration() {
    let _cpu = cpu();
    let (c, s) = pair("write-bw", &["--json"], &["-D", "1", "-s", "4096:8192", "--json"]);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(s.code, Some(0), "{}", s.stderr);
    let j = c.json();
    assert_eq!(j["config"]["mode"]["kind"], "duration");
    for r in j["results"].as_array().unwrap() {
        let ns = r["elapsed_ns"].as_u64().unwrap();
        // at least the duration; the upper bound only catches a hang
        assert!((1_000_000_000..10_000_000_000).contains(&ns), "elapsed {ns} ns");
        assert!(r["iterations"].as_u64().unwrap() >= 1);
        assert_eq!(r["ops"].as_u64().unwrap(), r["iterations"].as_u64().unwrap() * 256);
    }
    assert!(c.elapsed.as_secs_f64() >= 2.0);
}

#[test]
fn legacy_text_output_shape_on_both_sides() {
    let _cpu = cpu();
    // (-P tcp: its domain and addresses are what this test checks, whatever
    // this libfabric's best provider)
    let (c, s) = pair("read-bw", &[], &["-n", "10", "-s", "1024:2048", "-P", "tcp"]);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let sep = "-".repeat(51);
    let cl: Vec<&str> = c.stdout.lines().collect();
    assert_eq!(cl[0], sep);
    assert_eq!(cl[1], "    CXI RDMA Read Bandwidth Test");
    assert_eq!(cl[2], "Device           : lo");
    assert!(cl.contains(&"Test Type        : Iteration"));
    assert!(cl.contains(&"Min Read Size    : 1024"));
    assert!(cl.contains(&"Max Read Size    : 2048"));
    assert!(cl
        .iter()
        .any(|l| l.starts_with("Local (client)   : fi_sockaddr_in://127.0.0.1:")));
    assert!(cl
        .iter()
        .any(|l| l.starts_with("Remote (server)  : fi_sockaddr_in://127.0.0.1:")));
    let hdr = cl
        .iter()
        .position(|l| *l == "RDMA Size[B]       Reads  BW[MB/s]  PktRate[Mpkt/s]")
        .unwrap();
    assert_eq!(cl[hdr + 1].len(), 51);
    assert!(cl[hdr + 1].starts_with("        1024        2560  "), "{}", cl[hdr + 1]);
    assert!(cl[hdr + 2].starts_with("        2048        2560  "));
    assert_eq!(cl[hdr + 3], sep);
    assert_eq!(cl.len(), hdr + 4);
    let sl: Vec<&str> = s.stdout.lines().collect();
    assert!(sl[0].starts_with("Listening on port "), "{}", s.stdout);
    assert!(
        sl.iter().any(|l| l.starts_with("        1024           -  ")),
        "{}",
        s.stdout
    );
    // the server shows the client's bandwidth
    let crow = cl[hdr + 1].split_whitespace().nth(2).unwrap();
    let srow = sl
        .iter()
        .find(|l| l.starts_with("        1024"))
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap();
    assert_eq!(crow, srow);
}

#[test]
fn a_client_reaches_the_server_by_ipv6_and_by_ipv4() {
    // one server socket takes both: the originals listened on IPv4 alone,
    // and a client given an IPv6 name was told no server was there
    if !ipv6_loopback() {
        return;
    }
    let _cpu = cpu();
    let port = free_port();
    let p = port.to_string();
    for host in ["::1", "127.0.0.1"] {
        let mut srv = Proc::spawn(&mut fabdiag(&["write-bw", "-p", &p, "-P", "tcp", "--json"]));
        wait_listening(&mut srv, host, port);
        let c = run(
            &[
                "write-bw", host, "-p", &p, "-P", "tcp", "-n", "5", "-s", "4096", "--json",
            ],
            LIMIT,
        );
        let s = srv.wait(LIMIT);
        assert_eq!((c.code, s.code), (Some(0), Some(0)), "{host}: {}{}", c.stderr, s.stderr);
        // the server picks its domain by the address the client reached:
        // an IPv4 client is seen as 127.0.0.1, not as ::ffff:127.0.0.1
        let local = s.json()["config"]["local_address"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let family = if host == "::1" {
            "fi_sockaddr_in6://[::1]"
        } else {
            "fi_sockaddr_in://127.0.0.1"
        };
        assert!(local.starts_with(family), "{host}: server's address {local}");
    }
}

#[test]
fn local_mode_runs_both_sides_in_one_command() {
    let _cpu = cpu();
    let c = run(&["write-bw", "--local", "-n", "20", "-s", "8:64", "--json"], LIMIT);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(sizes_of(&c.json()), vec![8, 16, 32, 64]);
    let t = run(&["send-bw", "--local", "-n", "20", "-b"], LIMIT);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("Bidirectional    : Enabled"));
}

#[test]
fn min_bw_threshold_has_its_own_exit_code() {
    let _cpu = cpu();
    let pass = run(
        &["write-bw", "--local", "-n", "10", "--min-bw", "0.001", "--json"],
        LIMIT,
    );
    assert_eq!(pass.code, Some(0), "{}", pass.stderr);
    assert_eq!(pass.json()["threshold"]["passed"], true);
    let fail = run(
        &[
            "write-bw", "--local", "-n", "10", "-s", "1:2", "--min-bw", "1e9", "--json",
        ],
        LIMIT,
    );
    assert_eq!(fail.code, Some(3), "{}", fail.stderr);
    let j = fail.json();
    assert_eq!(j["threshold"]["passed"], false);
    assert_eq!(j["threshold"]["failed_sizes_bytes"], serde_json::json!([1, 2]));
    assert_eq!(j["error"]["kind"], "threshold");
    assert!(fail.stderr.contains("below --min-bw"), "{}", fail.stderr);
    assert_eq!(j["results"].as_array().unwrap().len(), 2);
}
