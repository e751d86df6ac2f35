//! The GPU-present path: what CI (no GPU) cannot run and a GPU machine
//! must. Built here, carried to the GPU machine with the fabdiag binary
//! (`FABDIAG_TEST_BIN`) and a CUDA-enabled libfabric (`FABDIAG_LIBFABRIC`),
//! and run there by scripts/dev/gpu/gpu-run.sh with `--include-ignored`. Every test
//! is `#[ignore]`d with what it needs, so a plain `cargo test` lists it as
//! ignored with that reason rather than as a pass that ran nothing; run on
//! purpose, a missing GPU or libfabric fails it.

use crate::common::*;
use nix::sys::signal::Signal;
use std::time::Duration;

const GPU_LIMIT: Duration = Duration::from_secs(300);

/// An NVIDIA GPU, or the test fails saying so.
fn require_gpu() {
    let found = fabdiag_gpu::Cuda::load().and_then(|c| c.devices());
    match found {
        Ok(d) if !d.is_empty() => {}
        other => panic!("no NVIDIA GPU here ({other:?}): run these on a GPU machine (scripts/dev/gpu/gpu-run.sh)"),
    }
}

/// The NVIDIA GPUs here.
fn gpu_count() -> usize {
    fabdiag_gpu::Cuda::load()
        .and_then(|c| c.devices())
        .map_or(0, |d| d.len())
}

/// A libfabric with FI_HMEM for CUDA, or the test fails saying so.
fn require_hmem_libfabric() {
    let p = std::env::var("FABDIAG_LIBFABRIC").unwrap_or_default();
    assert!(
        std::path::Path::new(&p).exists(),
        "FABDIAG_LIBFABRIC ({p:?}) names no CUDA-enabled libfabric (scripts/build-libfabric-cuda.sh)"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU (scripts/dev/gpu/gpu-run.sh)"]
fn host_traffic_measures_the_four_simultaneous_tests_with_checked_data() {
    require_gpu();
    let o = run(
        &["host-traffic", "-j", "-i", "20000", "--test-duration", "1"],
        GPU_LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    let cfg = &doc["configuration"];
    let tiles: f64 = cfg["tiles_per_ipu"].as_str().unwrap().parse().unwrap();
    let chunk: f64 = cfg["host_chunk_bytes"].as_str().unwrap().parse().unwrap();
    let tests = traffic_tests(&doc, 0);
    let keys: Vec<&str> = tests.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "host_from_buffer_from_tile",
            "host_to_buffer_to_tile",
            "host_to_buffer_from_tile",
            "host_from_buffer_to_tile"
        ]
    );
    for (k, t) in &tests {
        assert!(t.get("error").is_none(), "{k}: {t}");
        assert_eq!(
            traffic_num(t, "tile_data_transferred_bytes"),
            tiles * 20000.0 * 4096.0,
            "{k}"
        );
        let host = traffic_num(t, "host_data_transferred_bytes");
        assert!(host > 0.0 && (host / chunk).fract() == 0.0, "{k}: {host}");
        assert!(traffic_num(t, "duration_seconds") > 0.0, "{k}");
        assert!(
            traffic_num(t, "host_transfer_speed_gbps") > 1.0 && traffic_num(t, "tile_transfer_speed_gbps") > 1.0,
            "{k}: {t}"
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (scripts/dev/gpu/gpu-run.sh)"]
fn host_traffic_tile_only_host_only_repeats_and_thresholds() {
    require_gpu();
    let o = run(&["host-traffic", "--tile", "-i", "20000", "-R", "2"], GPU_LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.matches("Running test sequence").count(), 2, "{}", o.stdout);
    assert!(
        o.stdout.contains("buffer <- tile: ") && o.stdout.contains("buffer -> tile: "),
        "{}",
        o.stdout
    );
    let o = run(
        &["host-traffic", "--host", "--test-duration", "1", "-j", "-R", "2"],
        GPU_LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc = o.json();
    for (k, t) in traffic_tests(&doc, 1) {
        assert!((traffic_num(&t, "duration_seconds") - 1.0).abs() < 0.5, "{k}: {t}");
    }
    assert!(doc["statistics"]["host_to_buffer"]["host_transfer_speed_gbps"]["median"].is_string());
    let o = run(
        &[
            "host-traffic",
            "--tile-read",
            "-i",
            "20000",
            "--min-tile-bandwidth",
            "1000000",
        ],
        GPU_LIMIT,
    );
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(o.stderr.contains("buffer -> tile: tile ") && o.stderr.contains("below --min-tile-bandwidth"));
}

/// Ctrl-C (or a batch system's SIGTERM) mid-run keeps the tests that
/// finished: their text lines stay, with -j the document holds them and
/// the stop as its error, and the process dies by the signal.
#[test]
#[ignore = "needs an NVIDIA GPU (scripts/dev/gpu/gpu-run.sh)"]
fn a_stopped_host_traffic_run_keeps_the_finished_tests() {
    require_gpu();
    let args = ["host-traffic", "--host", "--test-duration", "3", "-R", "5"];
    let finished = |out: &str| out.lines().filter(|l| l.contains(" Gbps RDMA host ")).count();
    let mut p = Proc::spawn(&mut fabdiag(&args));
    p.wait_for("two finished tests", GPU_LIMIT, |out, _| finished(out) >= 2);
    p.signal(Signal::SIGTERM);
    let o = p.wait(SHORT);
    assert_eq!((o.code, o.signal), (None, Some(Signal::SIGTERM as i32)), "{}", o.stderr);
    let line = o.one_line();
    let n = finished(&o.stdout);
    assert!(line.contains("stopped by SIGTERM "), "{line}");
    assert!(line.ends_with(&format!("({n} tests finished)")), "{line}\n{}", o.stdout);

    let mut json_args = args.to_vec();
    json_args.push("-j");
    let p = Proc::spawn(&mut fabdiag(&json_args));
    // -j prints nothing until the end: two 3 s tests and the GPU's opening
    std::thread::sleep(Duration::from_secs(8));
    p.signal(Signal::SIGINT);
    let o = p.wait(SHORT);
    assert_eq!((o.code, o.signal), (None, Some(Signal::SIGINT as i32)), "{}", o.stderr);
    let doc = o.json();
    let n: usize = (0..5).map(|r| traffic_tests(&doc, r).len()).sum();
    assert!(n >= 1, "{doc}");
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("stopped by SIGINT "), "{doc}");
    assert!(error.ends_with(&format!("({n} tests finished)")), "{doc}");
    assert_eq!(o.one_line(), format!("fabdiag host-traffic: {error}"));
    assert!(doc["configuration"]["gpu_name"].is_string(), "{doc}");
}

#[test]
#[ignore = "needs an NVIDIA GPU and a CUDA-enabled libfabric (scripts/dev/gpu/gpu-run.sh)"]
fn gpu_loopback_bw_gpu_to_gpu_and_gpu_to_host_with_the_data_checked() {
    require_gpu();
    require_hmem_libfabric();
    let _cpu = cpu();
    check_gpu_loopback(&|a| run(a, GPU_LIMIT), gpu_count() as u64);
}

#[test]
#[ignore = "needs an NVIDIA GPU and a CUDA-enabled libfabric (scripts/dev/gpu/gpu-run.sh)"]
fn pair_tools_with_gpu_buffers_verify_their_data() {
    require_gpu();
    require_hmem_libfabric();
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        let (c, s) = pair(
            tool,
            &["-t", "0", "-r", "0", "--json"],
            &[
                "-P", "shm", "-n", "3", "-l", "8", "-s", "1:65536", "-t", "0", "-r", "0", "--json",
            ],
        );
        both_exit(&c, &s, 0, tool);
        let cj = c.json();
        assert_eq!(cj["config"]["verify"], true);
        assert_eq!(cj["config"]["client_mem"]["tx"]["kind"], "gpu");
        assert_eq!(cj["config"]["server_mem"]["rx"]["kind"], "gpu");
    }
    let (c, s) = pair("send-lat", &["-r", "0"], &["-P", "shm", "-n", "20", "-t", "0"]);
    both_exit(&c, &s, 0, "send-lat");
    assert!(c.stdout.contains("Client TX Mem    : GPU 0\nClient GPU Type  : NVIDIA\nServer RX Mem    : GPU 0\nServer GPU Type  : NVIDIA\n"), "{}", c.stdout);
}

/// A sweep on one GPU node: three ranks over shm with their buffers on
/// GPU 0 (`-t 0,0,1` would give local rank 2 GPU 1: on a one-GPU machine
/// that rank cannot start, and rank 0 names why at once).
#[test]
#[ignore = "needs an NVIDIA GPU and a CUDA-enabled libfabric (scripts/dev/gpu/gpu-run.sh)"]
fn a_sweep_with_gpu_buffers_measures_and_names_each_ranks_gpu() {
    require_gpu();
    require_hmem_libfabric();
    let _cpu = cpu();
    let gpus = gpu_count();
    let coord = format!("127.0.0.1:{}", free_port());
    let list = if gpus > 1 { "0,1,1" } else { "0,0,1" };
    let start = |r: usize, extra: &[&str]| {
        let mut c = fabdiag(&["sweep", "--coordinator", &coord]);
        c.args(["-P", "shm", "-s", "1048576", "-n", "20", "-t", list, "-r", "0"])
            .args(extra);
        c.env("FABDIAG_RANK", r.to_string())
            .env("FABDIAG_SIZE", "3")
            .env("FABDIAG_LOCAL_RANK", r.to_string());
        Proc::spawn(&mut c)
    };
    let others: Vec<Proc> = (1..3).map(|r| start(r, &[])).collect();
    let zero = start(0, &["--json"]).wait(GPU_LIMIT);
    let others: Vec<Output> = others.into_iter().map(|p| p.wait(GPU_LIMIT)).collect();
    let doc = zero.json();
    assert_eq!(doc["nodes"][0]["gpu"], "GPU 0", "{doc}");
    assert_eq!(doc["nodes"][2]["gpu"], "TX GPU 1 RX GPU 0", "{doc}");
    let measured = pairs_measured(&doc);
    if gpus > 1 {
        assert_eq!(zero.code, Some(0), "{}", zero.stderr);
        assert_eq!(measured, 3, "{doc}");
    } else {
        assert_eq!(zero.code, Some(2), "{}", zero.stderr);
        assert_eq!(measured, 1, "0-1 on GPU 0: {doc}");
        assert_eq!(others[1].code, Some(4), "{}", others[1].stderr);
        let why = doc["nodes"][2]["reason"].as_str().unwrap_or_default();
        assert!(why.starts_with("could not start: -t 1: no such GPU"), "{why}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (scripts/dev/gpu/gpu-run.sh)"]
fn a_gpu_that_does_not_exist_is_named() {
    require_gpu();
    let o = run(&["gpu-loopback-bw", "-t", "99", "-g", "nvidia"], SHORT);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(one_line(&o.stderr).contains("-t 99: no such GPU; GPU must be in the range: 0 to "));
}
