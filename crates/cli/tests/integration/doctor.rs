//! `fabdiag doctor` on this node: with libfabric (providers, tools that can
//! run), without it (exit 4, every tool says why), without a GPU, and with
//! and without huge pages reserved, and under low process limits; the JSON
//! parsed each time.

use crate::common::*;
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Command;

fn doctor(env: &[(&str, &str)]) -> (Output, Value) {
    let mut cmd = fabdiag(&["doctor", "--json"]);
    cmd.envs(env.iter().copied());
    let o = Proc::spawn(&mut cmd).wait(LIMIT);
    let j = o.json();
    (o, j)
}

fn provider_names(j: &Value) -> Vec<&str> {
    j["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider"].as_str().unwrap())
        .collect()
}

fn tool<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == name)
        .unwrap_or_else(|| panic!("{name} missing: {j}"))
}

/// The API version ("1.17") of the libfabric at `lib` (the file fabdiag
/// loaded), as that build's own fi_info says: its `bin/` beside `lib/`,
/// else the one on PATH for a system library. None where there is none.
pub fn fi_info_api_version(lib: &str) -> Option<String> {
    let dir = std::path::Path::new(lib).parent()?;
    let beside = dir.parent()?.join("bin/fi_info");
    let fi_info = if beside.exists() {
        beside
    } else if lib.starts_with("/usr/lib") {
        "fi_info".into()
    } else {
        return None;
    };
    let o = Command::new(fi_info)
        .arg("--version")
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("libfabric api:"))
        .map(|v| v.trim().to_string())
}

#[test]
fn with_libfabric_every_pair_tool_can_run() {
    let _cpu = cpu();
    let (o, j) = doctor(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(j["libfabric"]["found"], true);
    let path = j["libfabric"]["path"].as_str().unwrap();
    assert!(path.contains("libfabric.so"), "{}", j["libfabric"]);
    // the version is the loaded library's own, as its fi_info tells it
    // (Debian's fi_info comes with libfabric-bin, which CI installs)
    match fi_info_api_version(path) {
        Some(v) => assert_eq!(j["libfabric"]["version"], v.as_str()),
        None => skipped(format!("no fi_info beside {path} to check doctor's version against")),
    }
    let providers = provider_names(&j);
    for p in ["tcp", "shm", "sockets"] {
        assert!(providers.iter().any(|n| core_provider(n) == p), "{p}: {providers:?}");
    }
    // tcp's RMA and atomics, natively or through ofi_rxm (2.x's native
    // tcp has no atomics, 1.17's tcp is only ever seen through ofi_rxm)
    let tcp: Vec<&Value> = j["providers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| core_provider(p["provider"].as_str().unwrap()) == "tcp")
        .collect();
    for cap in ["rma_write", "atomic"] {
        assert!(tcp.iter().any(|p| p[cap] == true), "{cap}: {tcp:?}");
    }
    for p in &tcp {
        assert!(p["domains"].as_array().unwrap().iter().any(|d| d == "lo"), "{p}");
    }
    for t in ["cxi_write_bw", "cxi_send_lat", "cxi_atomic_lat"] {
        let s = tool(&j, t);
        assert_eq!(s["runnable"], true, "{s}");
        assert!(
            s["providers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| core_provider(p.as_str().unwrap()) == "tcp"),
            "{s}"
        );
    }
    assert_eq!(j["usable"], true);
    // the clocks: a calibrated counter or the reason it cannot be
    let c = &j["clock"];
    assert!(
        c["cycle_counter_mhz"].as_f64().is_some() || c["calibration_error"].is_string(),
        "{c}"
    );
    // the text page has every section
    let t = run(&["doctor"], LIMIT);
    assert_eq!(t.code, Some(0));
    for section in [
        "libfabric\n",
        "providers ",
        "GPUs\n",
        "huge pages\n",
        "clocks\n",
        "tools\n",
    ] {
        assert!(t.stdout.contains(section), "{section}: {}", t.stdout);
    }
    assert!(t.stdout.contains("  cxi_write_bw         yes ("), "{}", t.stdout);
}

#[test]
fn without_libfabric_nothing_runs_and_every_tool_says_why() {
    let (o, j) = doctor(&[("FABDIAG_LIBFABRIC", "/nonexistent/libfabric.so.1")]);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert_eq!(j["libfabric"]["found"], false);
    assert!(j["libfabric"]["error"]
        .as_str()
        .unwrap()
        .starts_with("cannot load libfabric"));
    assert!(j["providers"].as_array().unwrap().is_empty());
    for t in j["tools"].as_array().unwrap() {
        assert_eq!(t["runnable"], false, "{t}");
        assert!(!t["reason"].as_str().unwrap().is_empty(), "{t}");
    }
    assert_eq!(tool(&j, "cxi_read_bw")["reason"], j["libfabric"]["error"]);
    assert_eq!(j["usable"], false);
    // the variable that chose the library is shown with it
    assert_eq!(
        j["libfabric"]["environment"]["FABDIAG_LIBFABRIC"],
        "/nonexistent/libfabric.so.1"
    );
    let t = run(&["doctor"], LIMIT);
    assert_eq!(t.code, Some(0), "the text form on this machine still finds libfabric");
}

#[test]
fn fi_provider_is_shown_with_the_providers_it_leaves() {
    let _cpu = cpu();
    let (o, j) = doctor(&[("FI_PROVIDER", "tcp")]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(j["libfabric"]["environment"]["FI_PROVIDER"], "tcp");
    // tcp's alone: 'tcp;ofi_rxm' (1.17), with the native 'tcp' (2.x)
    let providers = provider_names(&j);
    assert!(
        !providers.is_empty() && providers.iter().all(|p| core_provider(p) == "tcp"),
        "{providers:?}"
    );
    let mut cmd = fabdiag(&["doctor"]);
    cmd.env("FI_PROVIDER", "tcp");
    let t = Proc::spawn(&mut cmd).wait(LIMIT);
    // (after FABDIAG_LIBFABRIC, where that chose the library)
    let env = t
        .stdout
        .lines()
        .find(|l| l.starts_with("  environment: "))
        .unwrap_or("");
    assert!(env.ends_with(" FI_PROVIDER=tcp"), "{}", t.stdout);
}

#[test]
fn without_a_gpu_the_gpu_runtimes_are_reported_missing() {
    if std::path::Path::new("/proc/driver/nvidia").exists() {
        skipped("an NVIDIA driver is present; this checks the no-GPU report");
        return;
    }
    let (_, j) = doctor(&[]);
    let gpus = j["gpus"].as_array().unwrap();
    let kinds: Vec<&str> = gpus.iter().map(|g| g["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["NVIDIA", "AMD", "INTEL"]);
    let nvidia = &gpus[0];
    assert_eq!(nvidia["found"], false);
    assert!(nvidia["devices"].as_array().unwrap().is_empty());
    assert!(
        nvidia["error"].as_str().unwrap().starts_with("no NVIDIA driver"),
        "{nvidia}"
    );
    let h = tool(&j, "gc-hosttraffictest");
    assert_eq!(h["runnable"], false);
    assert!(h["reason"].as_str().unwrap().starts_with("no NVIDIA driver"), "{h}");
}

const NR: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";

struct Restore(String);
impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(NR, &self.0);
    }
}

#[test]
fn huge_pages_configured_and_free_are_reported() {
    let _cpu = cpu();
    let before = std::fs::read_to_string(NR).expect("2M huge page pool (needs root to change)");
    let _restore = Restore(before.trim().to_string());
    let two_mib = |j: &Value| {
        j["hugepages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["size"] == "2M")
            .cloned()
            .unwrap()
    };
    std::fs::write(NR, "0").expect("write nr_hugepages (needs root)");
    let (_, j) = doctor(&[]);
    let h = two_mib(&j);
    assert_eq!((h["total"].as_u64(), h["free"].as_u64()), (Some(0), Some(0)), "{h}");
    std::fs::write(NR, "4").unwrap();
    let (_, j) = doctor(&[]);
    let h = two_mib(&j);
    let granted = std::fs::read_to_string(NR).unwrap().trim().parse::<u64>().unwrap();
    assert_eq!(h["total"].as_u64(), Some(granted), "{h}");
    assert_eq!(h["free"].as_u64(), Some(granted), "nothing uses them: {h}");
    if granted < 4 {
        eprintln!("note: the kernel granted only {granted} of 4 huge pages");
    }
}

/// The limits a node or batch job sets, as doctor reads them: locked
/// memory too small for RDMA registration is named with what to raise,
/// and the open files a sweep's rank 0 could hold.
#[test]
fn limits_on_locked_memory_and_open_files_are_reported() {
    let o = Proc::spawn(&mut limited("-l 64 && ulimit -Sn 512", &["doctor", "--json"])).wait(LIMIT);
    let j = o.json();
    assert_eq!(j["limits"]["locked_memory_bytes"]["soft"], 65536, "{}", j["limits"]);
    assert_eq!(j["limits"]["open_files"]["soft"], 512, "{}", j["limits"]);
    if let Some(h) = j["limits"]["open_files"]["hard"].as_u64() {
        assert_eq!(j["limits"]["sweep_ranks"].as_u64(), Some(h - 128), "{}", j["limits"]);
    }
    let t = Proc::spawn(&mut limited("-l 64", &["doctor"])).wait(LIMIT);
    assert!(
        t.stdout.contains(
            "  locked memory  64 KiB (hard 64 KiB): too little for RDMA providers (verbs, cxi, efa), which pin every buffer they register"
        ),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout.contains("a sweep's rank 0 raises it as needed, for up to "),
        "{}",
        t.stdout
    );
}

/// The accept queue is read from the network namespace doctor runs in: a
/// short one (64 here) is named with what it costs a sweep and what to
/// raise; the host's own is reported as it is.
#[test]
fn a_short_accept_queue_is_named_for_sweeps() {
    require_root();
    let host = std::fs::read_to_string("/proc/sys/net/core/somaxconn").unwrap();
    let o = run(&["doctor", "--json"], LIMIT);
    assert_eq!(o.json()["limits"]["accept_queue"].as_u64(), host.trim().parse().ok());
    let ns = format!("fdq{}", std::process::id());
    let ip = |args: &[&str]| {
        Command::new("ip")
            .args(args)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    assert!(ip(&["netns", "add", &ns]), "cannot make namespace {ns}");
    let set = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            "sh",
            "-c",
            "echo 64 > /proc/sys/net/core/somaxconn",
        ])
        .status()
        .map(|s| s.success());
    let o = Command::new("ip")
        .args(["netns", "exec", &ns, bin(), "doctor"])
        .output();
    ip(&["netns", "del", &ns]);
    assert_eq!(set.ok(), Some(true), "setting somaxconn in {ns}");
    let out = String::from_utf8_lossy(&o.unwrap().stdout).into_owned();
    assert!(
        out.contains("  accept queue   64 (net.core.somaxconn): ranks beyond it joining a sweep's rank 0 at once wait for TCP's retry"),
        "{out}"
    );
}

/// Each domain's NIC counters, read from a fixture tree whose `lo` has
/// errors and flaps: the counters not at zero (traffic aside) with their
/// classes; with `--watch 2`, a flap and errors added meanwhile show as
/// rises with their rates; shm is "not available" with its reason; and a
/// bad `--watch` is one line.
#[test]
fn nic_counters_now_and_watched() {
    use fabdiag_testkit::counters::{netdev_counters, set, set_tcp};
    let _cpu = cpu();
    let dir = tempfile::tempdir().unwrap();
    let t = fabdiag_testkit::sysfs::SysfsTree::new(dir.path());
    let lo = t.netdev(None, "lo", "unknown", 1, -1);
    netdev_counters(&lo, 3);
    set(&lo.join("statistics"), &[("rx_crc_errors", 5), ("rx_bytes", 1000)]);
    set_tcp(&dir.path().join("proc/net"), 100, 0);
    let root = dir.path().to_str().unwrap();
    let o = Proc::spawn(fabdiag(&["doctor"]).env("FABDIAG_TEST_SYSFS_ROOT", root)).wait(LIMIT);
    let section = o
        .stdout
        .split("\nNIC counters (not at zero, traffic aside)\n")
        .nth(1)
        .unwrap_or_default();
    assert!(
        section.contains("\n    lo carrier_changes 3 [flap: the link went down or retrained]\n"),
        "{}",
        o.stdout
    );
    assert!(
        section.contains("\n    lo rx_crc_errors 5 [physical: suspect the cable, optics or port]\n"),
        "{section}"
    );
    assert!(
        section.contains("\n    tcp RetransSegs 100 [retransmit: packets were lost and sent again]\n"),
        "{section}"
    );
    assert!(!section.contains("rx_bytes"), "{section}");
    if section.contains("\n  shm (") {
        assert!(
            section.contains(": not available (shm has no NIC behind it)\n"),
            "{section}"
        );
    }
    // watched: a flap and more errors between its two readings. The flap
    // counter is a FIFO, so each reading waits for the value this test
    // gives it: no guess at when doctor reads.
    let flaps = lo.join("carrier_changes");
    std::fs::remove_file(&flaps).unwrap();
    assert!(Command::new("mkfifo").arg(&flaps).status().unwrap().success());
    let p = Proc::spawn(fabdiag(&["doctor", "--json", "--watch", "2"]).env("FABDIAG_TEST_SYSFS_ROOT", root));
    let give = |value: &str| {
        let t0 = std::time::Instant::now();
        loop {
            // (a FIFO opens for writing only once its reader has opened it)
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&flaps)
            {
                Ok(mut f) => break f.write_all(value.as_bytes()).unwrap(),
                Err(_) => assert!(t0.elapsed() < LIMIT, "doctor never read {}", flaps.display()),
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    give("3\n");
    set(&lo.join("statistics"), &[("rx_crc_errors", 15)]);
    give("5\n");
    let j = p.wait(LIMIT).json();
    let lo_nic = j["nics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["domain"] == "lo")
        .expect("lo");
    assert_eq!(lo_nic["read"], "lo + tcp", "{lo_nic}");
    let watched = lo_nic["watched_s"].as_f64().unwrap();
    assert!((2.0..10.0).contains(&watched), "{lo_nic}");
    let rate = |name: &str| {
        lo_nic["rates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
    };
    let flap = rate("carrier_changes").expect("the flap");
    assert_eq!(flap["rise"], 2);
    assert!(
        (flap["per_second"].as_f64().unwrap() - 2.0 / watched).abs() < 1e-9,
        "{flap}"
    );
    assert_eq!(rate("rx_crc_errors").expect("the errors")["rise"], 10);
    let o = run(&["doctor", "--watch", "0"], SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(
        o.one_line(),
        "fabdiag doctor: Invalid --watch: '0' (seconds, 1 to 3600)"
    );
}
