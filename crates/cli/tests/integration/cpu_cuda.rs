//! fabdiag's CUDA paths end to end without a GPU, on the CPU stand-in for
//! the CUDA driver (crates/testkit/cuda/cpu_cuda.cpp, built here as
//! libcuda.so.1 and put on LD_LIBRARY_PATH): the real binary, its real use
//! of the driver API held to the driver's rules (a current context on
//! every thread that needs one, copies inside live allocations, timing
//! only between finished events, frees that wait for queued work), the
//! committed PTX checked against the kernels' source, and GPU faults on
//! demand (FABDIAG_CPU_CUDA_FAULT). The stand-in's figures are memcpy on
//! this CPU and mean nothing: no test here reads one as a speed. What a
//! real GPU must show is crates/cli/tests/gpu.rs's, run by
//! scripts/dev/gpu/gpu-run.sh.

use crate::common::*;
use nix::sys::signal::Signal;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Small enough for the CPU: 2 blocks of 50,000 transfers (tens of
/// milliseconds, time for many 64 KiB host chunks to finish inside the
/// tile work even on a loaded machine, or a simultaneous test has no host
/// figure and fails, saying so).
const SMALL: &[&str] = &[
    "-n",
    "2",
    "-i",
    "50000",
    "--chunk-size",
    "65536",
    "--test-duration",
    "1",
];
/// What one tile test of SMALL moves: blocks × iterations × 4096.
const TILE_BYTES: u64 = 2 * 50000 * 4096;

/// The stand-in, built once per test process.
fn driver() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cpu-cuda-{}", std::process::id()));
        fabdiag_testkit::cpu_cuda(&dir).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// fabdiag `args` with the stand-in as its CUDA driver, and `env`.
fn on_cpu(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = fabdiag(args);
    c.env("LD_LIBRARY_PATH", driver()).envs(env.iter().copied());
    c
}

fn run_on_cpu(args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    Proc::spawn(&mut on_cpu(args, env)).wait(limit)
}

/// host-traffic with SMALL and `args`, the stand-in failing as `fault`.
fn traffic(args: &[&str], fault: &str) -> Output {
    let args = [&["host-traffic"], SMALL, args].concat();
    run_on_cpu(&args, &[("FABDIAG_CPU_CUDA_FAULT", fault)], Duration::from_secs(60))
}

/// The original's text line of a finished test: its description, each
/// figure in Gbps with two decimals, its duration.
fn finished_line(line: &str) -> bool {
    let Some((desc, rest)) = line.split_once(":  ") else {
        return false;
    };
    let figures_ok = rest.split(", ").all(|part| {
        let w: Vec<&str> = part.split(' ').collect();
        match w.as_slice() {
            [n, "Gbps", "RDMA", "host", "read" | "write"] | [n, "Gbps", "tile", "read" | "write"] => {
                n.split_once('.').is_some_and(|(_, d)| d.len() == 2) && n.parse::<f64>().is_ok()
            }
            [.., "for", n, "seconds."] => n.parse::<f64>().is_ok(),
            _ => false,
        }
    });
    desc.contains("buffer") && rest.ends_with(" seconds.") && figures_ok
}

#[test]
fn the_four_simultaneous_tests_run_and_print_the_originals_lines() {
    let o = traffic(&[], "");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "Running test sequence 1/1");
    let descs: Vec<&str> = lines[1..].iter().map(|l| l.split(':').next().unwrap_or("")).collect();
    assert_eq!(
        descs,
        [
            "host <- buffer <- tile",
            "host -> buffer -> tile",
            "host -> buffer <- tile",
            "host <- buffer -> tile"
        ]
    );
    for l in &lines[1..] {
        assert!(finished_line(l), "{l}");
        assert!(l.contains("Gbps RDMA host") && l.contains("Gbps tile"), "{l}");
    }
}

#[test]
fn tile_only_and_host_only_tests_account_for_every_byte_in_each_repeat() {
    let o = traffic(&["--tile", "-R", "2", "-j"], "");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    assert!(doc.get("error").is_none(), "{doc}");
    assert_eq!(doc["configuration"]["gpu_name"], "fabdiag CPU stand-in 0 (not a GPU)");
    assert_eq!(doc["configuration"]["tiles_per_ipu"], "2");
    for rep in 0..2 {
        let t = traffic_tests(&doc, rep);
        let names: Vec<&str> = t.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["buffer_from_tile", "buffer_to_tile"], "repeat {rep}");
        for (name, v) in &t {
            assert!(v.get("error").is_none(), "{name}: {v}");
            assert_eq!(
                traffic_num(v, "tile_data_transferred_bytes") as u64,
                TILE_BYTES,
                "{name}"
            );
            assert!(traffic_num(v, "tile_transfer_speed_gbps") > 0.0, "{name}: {v}");
            assert!(v.get("host_data_transferred_bytes").is_none(), "{name}: {v}");
        }
    }
    assert!(doc.get("repeat_2").is_none());
    // host-only tests stream for --test-duration, in whole chunks
    let o = traffic(&["--host", "-j"], "");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let t = traffic_tests(&o.json(), 0);
    let names: Vec<&str> = t.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["host_to_buffer", "host_from_buffer"]);
    for (name, v) in &t {
        let bytes = traffic_num(v, "host_data_transferred_bytes") as u64;
        assert!(bytes > 0 && bytes.is_multiple_of(65536), "{name}: {bytes}");
        let d = traffic_num(v, "duration_seconds");
        assert!((0.9..30.0).contains(&d), "{name}: {d} s for a 1 s test");
    }
}

/// Each GPU fault the stand-in can raise: the failing test carries the
/// error in its own result, the tests before it keep their figures, none
/// runs after it, stderr has one line, and the exit is 2.
#[test]
fn gpu_faults_are_one_line_each_and_keep_the_tests_before_them() {
    let cases = [
        // (fault, tests finished before it, what the line says)
        ("illegal-address:tile_read", 1, "the GPU failed while running queued work: an illegal memory access was encountered (CUDA error 700); nothing more can run on it in this process"),
        ("ecc:1", 0, "the GPU failed while running queued work: uncorrectable ECC error encountered (CUDA error 214)"),
        ("corrupt:htod", 1, "data check failed: host writes: 4 16-byte vectors of device memory differ from the pattern, the first at byte "),
        ("corrupt:dtoh", 0, "data check failed: host reads: byte 32768 of the host buffer holds 0x"),
        // (either stream's gate may be seen first)
        ("gate-timeout", 0, "the start gate timed out: the "),
    ];
    let order = [
        "host_from_buffer_from_tile",
        "host_to_buffer_to_tile",
        "host_to_buffer_from_tile",
        "host_from_buffer_to_tile",
    ];
    for (fault, before, says) in cases {
        let o = traffic(&["-j"], fault);
        assert_eq!(o.code, Some(2), "{fault}: {}", o.stderr);
        let line = one_line(&o.stderr);
        assert!(
            line.starts_with("fabdiag host-traffic: ") && line.contains(says),
            "{fault}: {line}"
        );
        let doc = o.json();
        let t = traffic_tests(&doc, 0);
        assert_eq!(t.len(), before + 1, "{fault}: {doc}");
        for (i, (name, v)) in t.iter().enumerate() {
            assert_eq!(name, order[i], "{fault}");
            if i < before {
                assert!(v.get("error").is_none(), "{fault}: {v}");
                assert_eq!(
                    traffic_num(v, "tile_data_transferred_bytes") as u64,
                    TILE_BYTES,
                    "{fault}"
                );
            } else {
                assert!(v["error"].as_str().is_some_and(|e| e.contains(says)), "{fault}: {v}");
                assert_eq!(traffic_num(v, "tile_data_transferred_bytes"), 0.0, "{fault}");
            }
        }
        assert!(
            doc["error"].as_str().is_some_and(|e| e.contains(says)),
            "{fault}: {doc}"
        );
    }
    // an allocation that fails names its size; the JSON is still whole
    let o = traffic(&["-j"], "oom");
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag host-traffic: cuMemAlloc of 4456448 bytes failed: out of memory (CUDA error 2)"
    );
    assert_eq!(o.json()["configuration"]["tiles_per_ipu"], Value::Null);
    assert!(o.json()["error"].as_str().is_some_and(|e| e.contains("out of memory")));
}

/// A kernel that never finishes ends its test at the limit (30 s for this
/// little work) and the process then exits: the driver's frees wait for
/// queued work, so a session dropped after a hang would hang the process
/// (it did, until killed, before the session was abandoned on failure).
#[test]
fn a_hung_kernel_ends_the_run_at_its_limit_and_the_process_exits() {
    let o = traffic(&[], "hang:tile_read");
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag host-traffic: host -> buffer -> tile: the test did not finish within 30 s (a hung kernel or a lost GPU); --no-timeout waits forever"
    );
    assert!(o.elapsed < Duration::from_secs(50), "took {:?}", o.elapsed);
    assert!(o.stdout.lines().nth(1).is_some_and(finished_line), "{}", o.stdout);
}

/// With --no-timeout the same hang is waited on past the limit; SIGINT
/// then ends the run, keeping the test that finished.
#[test]
fn no_timeout_waits_past_the_limit_and_a_stop_keeps_the_finished_test() {
    let args = [&["host-traffic"], SMALL, &["--no-timeout"]].concat();
    let mut p = Proc::spawn(&mut on_cpu(&args, &[("FABDIAG_CPU_CUDA_FAULT", "hang:tile_read")]));
    p.wait_for("the first test's line", Duration::from_secs(30), |out, _| {
        out.lines().nth(1).is_some_and(finished_line)
    });
    std::thread::sleep(Duration::from_secs(35));
    assert!(p.alive(), "ended before the stop: {}", p.stderr_now());
    p.signal(Signal::SIGINT);
    let o = p.wait(Duration::from_secs(10));
    assert_eq!(o.signal, Some(Signal::SIGINT as i32), "{:?} {}", o.code, o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag host-traffic: stopped by SIGINT during host -> buffer -> tile (1 test finished)"
    );
    assert_eq!(o.stdout.lines().filter(|l| finished_line(l)).count(), 1, "{}", o.stdout);
}

#[test]
fn thresholds_name_the_test_and_the_figure() {
    let o = traffic(&["--tile-read", "--min-tile-bandwidth", "1e9"], "");
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let line = one_line(&o.stderr);
    assert!(line.contains("buffer -> tile") && line.contains("tile"), "{line}");
    let o = traffic(&["--host-write", "--min-host-bandwidth", "0.001"], "");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn a_gpu_is_chosen_by_ordinal_uuid_or_bus_id() {
    let two = [("FABDIAG_CPU_CUDA_DEVICES", "2")];
    for wanted in [
        "1",
        "GPU-c0c1c2c3-c4c5-c6c7-c8c9-cacbcccdce01",
        "0000:f1:00.0",
        "F1:00.0",
    ] {
        let args = [&["host-traffic", "-j", "--tile-read", "-d", wanted], SMALL].concat();
        let o = run_on_cpu(&args, &two, Duration::from_secs(60));
        assert_eq!(o.code, Some(0), "-d {wanted}: {}", o.stderr);
        let c = &o.json()["configuration"];
        assert_eq!(c["gpu_pci_bus_id"], "0000:F1:00.0", "-d {wanted}");
        assert_eq!(c["gpu_name"], "fabdiag CPU stand-in 1 (not a GPU)", "-d {wanted}");
    }
    let o = run_on_cpu(&["host-traffic", "-d", "7"], &two, Duration::from_secs(10));
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).starts_with(
            "fabdiag host-traffic: no GPU '7'; GPUs present: 0 fabdiag CPU stand-in 0 (not a GPU) (GPU-c0c1c2c3-"
        ),
        "{}",
        o.stderr
    );
    let o = run_on_cpu(
        &["host-traffic"],
        &[("FABDIAG_CPU_CUDA_DEVICES", "0")],
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        "fabdiag host-traffic: no CUDA GPU found (the driver reports 0 devices)"
    );
    // too little GPU memory is said before anything is allocated
    let o = run_on_cpu(
        &[&["host-traffic"], SMALL].concat(),
        &[("FABDIAG_CPU_CUDA_MEMORY", "4194304")],
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(one_line(&o.stderr).contains("lower -n or --chunk-size"), "{}", o.stderr);
}

#[test]
fn doctor_lists_the_gpu_and_host_traffic_as_runnable() {
    let o = run_on_cpu(&["doctor", "--json"], &[], Duration::from_secs(30));
    let j = o.json();
    let nvidia = &j["gpus"][0];
    assert_eq!(nvidia["kind"], "NVIDIA");
    assert_eq!(nvidia["found"], true);
    assert_eq!(nvidia["devices"][0]["name"], "fabdiag CPU stand-in 0 (not a GPU)");
    let h = j["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["tool"] == "gc-hosttraffictest"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(h["runnable"], true, "{h}");
    let o = run_on_cpu(&["doctor"], &[], Duration::from_secs(30));
    assert!(o.stdout.contains("\n  gc-hosttraffictest   yes\n"), "{}", o.stdout);
}

/// The fabric tools' GPU buffers through the real CUDA allocation: a GPU
/// that does not exist is named, and Debian's libfabric, built without
/// CUDA, refuses the device memory with its own line (exit 4), never a
/// crash or host memory in its place.
#[test]
fn gpu_buffers_from_the_driver_meet_a_libfabric_without_cuda() {
    let _cpu = cpu();
    let one = ["gpu-loopback-bw", "-P", "shm", "-i", "1", "-n", "4", "-s", "4096"];
    let o = run_on_cpu(&[&one[..], &["-t", "0", "-r", "0"]].concat(), &[], LIMIT);
    if o.code == Some(0) {
        skipped("this libfabric registers FI_HMEM_CUDA memory (built with CUDA)");
        return;
    }
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(
        one_line(&o.stderr)
            .contains("this libfabric cannot register FI_HMEM_CUDA memory (fi_mr_regattr (FI_HMEM) failed: "),
        "{}",
        o.stderr
    );
    let o = run_on_cpu(&[&one[..], &["-r", "1", "--json"]].concat(), &[], LIMIT);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).ends_with("-r 1: no such GPU; GPU must be in the range: 0 to 0 (1 NVIDIA GPU(s) found)"),
        "{}",
        o.stderr
    );
    assert_eq!(o.json()["error"]["kind"], "unavailable");
}

/// `fabdiag health`'s GPU checks on the stand-in: every GPU the driver
/// shows is counted and copied to and from, a count below the file's is
/// CRITICAL, and a GPU whose memory cannot be had fails its copy in one
/// line of its own while the run goes on to a verdict.
#[test]
fn health_counts_and_copies_every_gpu() {
    let _cpu = cpu();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        run_on_cpu(&[&["health", "--budget", "30"][..], args].concat(), env, LIMIT)
    };
    let o = run(&[], &[("FABDIAG_CPU_CUDA_DEVICES", "2")]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("OK       gpus: 2 found"), "{}", o.stdout);
    for gpu in 0..2 {
        for what in ["host->GPU copy", "GPU->host copy"] {
            let prefix = format!("OK       GPU{gpu} (");
            assert!(
                o.stdout
                    .lines()
                    .any(|l| l.starts_with(&prefix) && l.contains(&format!(") {what}: ")) && l.ends_with("GB/s")),
                "GPU{gpu} {what}:\n{}",
                o.stdout
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h.toml");
    std::fs::write(&f, "gpus = 3\n").unwrap();
    let o = run(&["--expect", f.to_str().unwrap()], &[("FABDIAG_CPU_CUDA_DEVICES", "2")]);
    assert_eq!(o.code, Some(2), "{}", o.stdout);
    assert_eq!(
        o.stdout.lines().next(),
        Some("fabdiag health: CRITICAL: gpus: 2 found, 3 expected (h.toml)")
    );
    let o = run(&[], &[("FABDIAG_CPU_CUDA_FAULT", "oom")]);
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("CRITICAL GPU0 (") && l.contains(") host->GPU copy: failed: ")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains(") GPU->host copy: failed: not tried"), "{}", o.stdout);
}
