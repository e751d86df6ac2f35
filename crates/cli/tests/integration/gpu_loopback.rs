//! gpu-loopback-bw with system memory, a real process on the tcp and shm
//! providers (no GPU here; a GPU machine runs the same with -t/-r): the
//! counts the run must have made, a positive bandwidth in Gb/s, the data
//! check passing and failing on a corrupted target, thresholds, its own
//! NIC counters (no peer's), and the three original names it answers to.

use crate::common::*;
use std::process::Command;

fn loopback(args: &[&str]) -> Output {
    let mut a = vec!["gpu-loopback-bw"];
    a.extend_from_slice(args);
    run(&a, LIMIT)
}

#[test]
fn writes_into_itself_over_tcp_and_shm_with_the_data_checked() {
    let _cpu = cpu();
    for provider in ["tcp", "shm"] {
        let o = loopback(&[
            "-P", provider, "-i", "3", "-n", "32", "-s", "65536", "--verify", "--json",
        ]);
        assert_eq!(o.code, Some(0), "{provider}: {}", o.stderr);
        let j = o.json();
        assert_eq!(j["tool"], "cxi_gpu_loopback_bw");
        assert!(j["error"].is_null(), "{j}");
        let cfg = &j["config"];
        assert_eq!(cfg["tool"], "gpu_loopback_bw");
        assert!(cfg["provider"].as_str().unwrap().starts_with(provider), "{cfg}");
        assert_eq!(
            (cfg["list_size"].as_u64(), cfg["max_size_bytes"].as_u64()),
            (Some(32), Some(65536))
        );
        assert_eq!(cfg["verify"], true);
        assert_eq!(cfg["client_mem"]["tx"]["kind"], "system");
        let r = &j["results"][0];
        assert_eq!(j["results"].as_array().unwrap().len(), 1, "one size");
        // iterations × writes per iteration, and no "peer"
        assert_eq!(
            (r["iterations"].as_u64(), r["ops"].as_u64()),
            (Some(3), Some(96)),
            "{r}"
        );
        assert_eq!(r["peer_ops"], 0);
        let (mb, gbit) = (r["bw_mb_per_s"].as_f64().unwrap(), r["bw_gbit_per_s"].as_f64().unwrap());
        assert!(mb > 0.0 && (gbit - mb * 8.0 / 1000.0).abs() < 0.01, "{r}");
        // its own NIC counters around the run, and no peer's: it has none
        let c = &j["counters"];
        assert!(c["peer"].is_null(), "{c}");
        match provider {
            "tcp" => {
                assert_eq!(c["local"]["state"], "read", "{c}");
                let families: Vec<&str> = c["local"]["sources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["family"].as_str().unwrap())
                    .collect();
                assert_eq!(families, ["netdev", "tcp"], "{c}");
            }
            _ => assert_eq!(
                c["local"],
                serde_json::json!({"state": "not_available", "reason": "shm has no NIC behind it"})
            ),
        }
    }
}

/// `--counters`: one block, this side's (there is no server).
#[test]
fn its_counter_block_is_its_own_side_only() {
    let _cpu = cpu();
    let o = loopback(&["-P", "tcp", "-i", "3", "-n", "32", "-s", "65536", "--counters"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let heads: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("Counters (")).collect();
    assert_eq!(heads.len(), 1, "{}", o.stdout);
    assert!(
        heads[0].starts_with("Counters (client, ") && heads[0].contains(" + tcp: "),
        "{}",
        o.stdout
    );
}

#[test]
fn text_output_keeps_the_originals_banner_and_columns() {
    let _cpu = cpu();
    let o = loopback(&["-P", "shm", "-i", "2", "-n", "16", "-s", "4096"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let sep = "-".repeat(51);
    let lines: Vec<&str> = o.stdout.lines().collect();
    let want_start = [
        sep.as_str(),
        "    CXI Loopback Bandwidth Test",
        "Device           : shm",
        "Service ID       : 1",
        "TX Mem           : System",
        "RX Mem           : System",
        "Test Type        : Iteration",
        "Iterations       : 2",
        "Write Size (B)   : 4096",
        "Cmds per iter    : 16",
        "Hugepages        : Disabled",
        sep.as_str(),
        "RDMA Size[B]      Writes  BW[Gb/s]  PktRate[Mpkt/s]",
    ];
    assert_eq!(&lines[..want_start.len()], &want_start, "{}", o.stdout);
    // one row, parsed by columns as site scripts do, then the separator
    let cols: Vec<&str> = lines[want_start.len()].split_whitespace().collect();
    assert_eq!(cols.len(), 4, "{}", o.stdout);
    assert_eq!((cols[0], cols[1]), ("4096", "32"));
    assert!(cols[2].parse::<f64>().unwrap() > 0.0);
    assert_eq!(lines[want_start.len() + 1], sep);
    assert_eq!(lines.len(), want_start.len() + 2);
    // a duration run counts whole iterations
    let o = loopback(&["-P", "shm", "-D", "1", "-n", "8", "-s", "4096", "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = &o.json()["results"][0];
    let (it, ops) = (r["iterations"].as_u64().unwrap(), r["ops"].as_u64().unwrap());
    assert!(it > 0 && ops == it * 8, "{r}");
}

#[test]
fn a_corrupted_target_is_an_error_naming_the_offset() {
    let _cpu = cpu();
    for provider in ["tcp", "shm"] {
        let o = Proc::spawn(
            fabdiag(&[
                "gpu-loopback-bw",
                "-P",
                provider,
                "-i",
                "2",
                "-n",
                "4",
                "-s",
                "4096",
                "--verify",
                "--json",
            ])
            .env("FABDIAG_TEST_CORRUPT_OFFSET", "1000"),
        )
        .wait(LIMIT);
        assert_eq!(o.code, Some(2), "{provider}: {}", o.stderr);
        let line = one_line(&o.stderr);
        assert!(
            line.contains("data check failed for size 4096: the RX buffer at offset 1000 holds 0x"),
            "{line}"
        );
        let j = o.json();
        assert_eq!(j["error"]["kind"], "runtime");
        // what was measured is kept
        assert_eq!(j["results"][0]["ops"], 8);
        // the same hook with the check off changes nothing that is looked at
        let o = Proc::spawn(
            fabdiag(&["gpu-loopback-bw", "-P", provider, "-i", "2", "-n", "4", "-s", "4096"])
                .env("FABDIAG_TEST_CORRUPT_OFFSET", "1000"),
        )
        .wait(LIMIT);
        assert_eq!(o.code, Some(0), "{provider}: {}", o.stderr);
    }
}

#[test]
fn min_bw_in_gbit_per_s_has_its_own_exit_code() {
    let _cpu = cpu();
    let o = loopback(&[
        "-P", "shm", "-i", "2", "-n", "8", "-s", "4096", "--min-bw", "1000000", "--json",
    ]);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(one_line(&o.stderr).contains("bandwidth below --min-bw 1000000 Gb/s: 4096 B at "));
    let j = o.json();
    assert_eq!(j["threshold"]["min_bw_gbit_per_s"], 1000000.0);
    assert_eq!(j["threshold"]["passed"], false);
    let o = loopback(&["-P", "shm", "-i", "2", "-n", "8", "-s", "4096", "--min-bw", "0.000001"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn answers_to_the_three_original_names() {
    let dir = std::env::temp_dir().join(format!("fabdiag-loopback-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["cxi_gpu_loopback_bw", "cxi_gpu_bw_loopback", "cxi_loopback_bw"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(bin(), &link).unwrap();
        let v = Proc::spawn(Command::new(&link).arg("-V")).wait(SHORT);
        assert_eq!(v.stdout, format!("{name} version: {}\n", env!("CARGO_PKG_VERSION")));
        let h = Proc::spawn(Command::new(&link).arg("-h")).wait(SHORT);
        assert!(
            h.stdout.starts_with(&format!("Usage:\n  {name} [OPTIONS]\n")),
            "{}",
            h.stdout
        );
        let e = Proc::spawn(Command::new(&link).args(["-s", "0"])).wait(SHORT);
        assert_eq!(
            (e.code, one_line(&e.stderr)),
            (Some(1), format!("{name}: Invalid transfer size: 0").as_str())
        );
    }
    // one run prints the title once (scripts count it)
    let _cpu = cpu();
    let o =
        Proc::spawn(Command::new(dir.join("cxi_loopback_bw")).args(["-P", "shm", "-i", "1", "-n", "4", "-s", "4096"]))
            .wait(LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.matches("CXI Loopback Bandwidth Test").count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
    // it has no server: a serve client or a sweep cannot name it
    let o = run(&["sweep", "--tool", "gpu-loopback-bw"], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(one_line(&o.stderr).contains("runs in one process"));
}
