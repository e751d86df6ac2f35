//! Everything around the GPU runtime, on machines without a GPU: with the
//! test hook `FABDIAG_TEST_HOST_AS_GPU=1` a "GPU" buffer is host memory
//! registered through the device path (fi_mr_regattr with FI_HMEM, here
//! FI_HMEM_SYSTEM) and reached only through copies, as a GPU's is. So the
//! FI_HMEM capability check, the registration, the banner lines of both
//! sides, inject kept off, and --verify through copies are all real here;
//! only the CUDA calls are not (crates/cli/tests/gpu.rs has those).

use crate::common::*;

/// The hook as most tests set it: "GPU" buffers of host memory.
const HOOK: (&str, &str) = ("FABDIAG_TEST_HOST_AS_GPU", "1");

/// fabdiag with `env` (the hook, and any other test hook).
fn with_env(env: &[(&str, &str)], args: &[&str]) -> Output {
    Proc::spawn(fabdiag(args).envs(env.iter().copied())).wait(LIMIT)
}

fn hooked(args: &[&str]) -> Output {
    with_env(&[HOOK], args)
}

/// The smallest gpu-loopback-bw run: one iteration of four 4 KiB writes.
const ONE_RUN: &[&str] = &["gpu-loopback-bw", "-i", "1", "-n", "4", "-s", "4096"];

/// Exit 4, with its one line naming `what`, and the JSON saying so.
fn unavailable_with_json(o: &Output, what: &str) {
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(one_line(&o.stderr).contains(what), "{}", o.stderr);
    assert_eq!(o.json()["error"]["kind"], "unavailable");
}

#[test]
fn gpu_loopback_bw_through_the_device_path() {
    let _cpu = cpu();
    check_gpu_loopback(&hooked, 1);
}

#[test]
fn a_provider_without_fi_hmem_and_a_gpu_that_does_not_exist_are_unavailable() {
    let _cpu = cpu();
    // tcp cannot register device memory (1.17's, 2.6's); shm can
    if let Some(p) = provider_without_hmem() {
        let o = hooked(&[ONE_RUN, &["-P", p, "-t", "0"]].concat());
        assert_eq!(o.code, Some(4), "{}", o.stderr);
        assert_eq!(
            one_line(&o.stderr),
            format!("fabdiag gpu-loopback-bw: provider '{p}' cannot run this test: it lacks RMA write with device memory (FI_HMEM)")
        );
    }
    let o = hooked(&[ONE_RUN, &["-P", "shm", "-r", "1", "--json"]].concat());
    unavailable_with_json(&o, "GPU 1 does not exist: GPU must be in the range: 0 to 0.");
}

/// A server that cannot put its buffer on the GPU (tcp lacks FI_HMEM)
/// fails as unavailable, and tells the client so: both sides exit 4 with
/// the server's reason, not the client as if its run had broken.
#[test]
fn a_server_without_fi_hmem_is_unavailable_at_the_client_too() {
    let _cpu = cpu();
    let Some(p) = provider_without_hmem() else { return };
    let (c, s) = pair_env(
        "write-bw",
        &[HOOK],
        &["-r", "0"],
        &["-P", p, "-n", "3", "-s", "4096", "--json"],
    );
    let reason = format!("provider '{p}' cannot run this test: it lacks RMA write with device memory (FI_HMEM)");
    assert_eq!(s.code, Some(4), "{}", s.stderr);
    // (the line before is the readiness probe's connection, turned away)
    assert!(s.stderr.trim_end().ends_with(&reason), "{}", s.stderr);
    unavailable_with_json(&c, &format!("peer failed during config: {reason}"));
}

/// Server and client in their own processes, each with its own GPU
/// buffer: both banners name both sides' buffers, and the data is checked.
#[test]
fn pair_tools_with_gpu_buffers_on_both_sides() {
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        let (c, s) = pair_env(
            tool,
            &[HOOK],
            &["-r", "0", "-t", "0"],
            &["-P", "shm", "-n", "3", "-l", "8", "-s", "1:16384", "-t", "0", "-r", "0"],
        );
        both_exit(&c, &s, 0, tool);
        let lines = "Client TX Mem    : GPU 0\nClient GPU Type  : NVIDIA\nServer RX Mem    : GPU 0\nServer GPU Type  : NVIDIA\n";
        assert!(c.stdout.contains(lines), "{tool} client:\n{}", c.stdout);
        assert!(s.stdout.contains(lines), "{tool} server:\n{}", s.stdout);
        assert!(c.stdout.contains("\nFound 1 GPU(s)\n"), "{}", c.stdout);
    }
    // the client's GPU buffer, the server's host memory: each as it is
    // (the hook changes nothing on the server, which asks for no GPU)
    let (c, s) = pair_env("send-lat", &[HOOK], &[], &["-P", "shm", "-n", "20", "-t", "0"]);
    both_exit(&c, &s, 0, "send-lat");
    for out in [&c.stdout, &s.stdout] {
        assert!(
            out.contains("Client TX Mem    : GPU 0\nClient GPU Type  : NVIDIA\nServer RX Mem    : System\nTest Type"),
            "{out}"
        );
    }
}

/// The one-sided latency tools with "GPU" buffers on both sides, as two
/// processes: both banners name both sides' buffers and the GPU count.
#[test]
fn latency_tools_with_gpu_buffers_on_both_sides() {
    let _cpu = cpu();
    for tool in ["write-lat", "read-lat"] {
        let (c, s) = pair_env(
            tool,
            &[HOOK],
            &["-r", "0", "-t", "0"],
            &["-P", "shm", "-n", "20", "-t", "0", "-r", "0"],
        );
        both_exit(&c, &s, 0, tool);
        let lines = "Client TX Mem    : GPU 0\nClient GPU Type  : NVIDIA\nServer RX Mem    : GPU 0\nServer GPU Type  : NVIDIA\n";
        for out in [&c.stdout, &s.stdout] {
            assert!(out.contains(lines), "{tool}:\n{out}");
        }
        assert!(c.stdout.contains("\nFound 1 GPU(s)\n"), "{}", c.stdout);
    }
}

/// A provider may complete an operation on GPU memory once its copy is
/// queued, not done: shm's CUDA IPC copies are cudaMemcpy between device
/// buffers, which returns before the copy ends (seen on an H200 as a
/// constant 5 µs an operation from 512 KiB to 4 MiB). Each side waits for
/// its device's queued work at the post-run barrier, so the client's
/// clock includes what the server's GPU still had to do: with the
/// server's "GPU" taking half a second to settle, every size lasts at
/// least that long on the client's clock. One process likewise.
#[test]
fn the_clock_includes_device_work_the_provider_left_queued() {
    let _cpu = cpu();
    const SETTLE: (&str, &str) = ("FABDIAG_TEST_SETTLE_SECONDS", "0.5");
    let at_least = |doc: &serde_json::Value, what: &str| {
        let rows = doc["results"].as_array().cloned().unwrap_or_default();
        assert!(!rows.is_empty(), "{what}: {doc}");
        for r in rows {
            let ns = r["elapsed_ns"].as_u64().unwrap_or_default();
            assert!(ns >= 500_000_000, "{what}: the wait is not on the clock: {r}");
        }
    };
    for tool in ["write-bw", "read-bw", "send-bw"] {
        // the client's buffers are host memory: only the server settles
        let (c, s) = pair_env(
            tool,
            &[HOOK, SETTLE],
            &["-t", "0", "-r", "0"],
            &["-P", "shm", "-n", "3", "-l", "4", "-s", "4096:8192", "--json"],
        );
        both_exit(&c, &s, 0, tool);
        at_least(&c.json(), tool);
    }
    let o = with_env(
        &[HOOK, SETTLE],
        &[ONE_RUN, &["-P", "shm", "-r", "0", "--json"]].concat(),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    at_least(&o.json(), "gpu-loopback-bw");
}

/// Debian's libfabric has no CUDA: memory registered as FI_HMEM_CUDA is
/// refused, and the one line says what this libfabric lacks (exit 4).
#[test]
fn a_libfabric_without_cuda_is_named() {
    let o = with_env(
        &[("FABDIAG_TEST_HOST_AS_GPU", "cuda")],
        &[ONE_RUN, &["-P", "shm", "-t", "0"]].concat(),
    );
    if o.code == Some(0) {
        skipped("this libfabric registers FI_HMEM_CUDA memory (built with CUDA)");
        return;
    }
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    let line = one_line(&o.stderr);
    assert!(
        line.contains("this libfabric cannot register FI_HMEM_CUDA memory (fi_mr_regattr (FI_HMEM) failed: ")
            && line.contains("built without that interface, or cannot start it here (fabdiag doctor says which")
            && line.contains("point FABDIAG_LIBFABRIC at it"),
        "{line}"
    );
}

#[test]
fn a_corrupted_gpu_target_fails_the_check() {
    let _cpu = cpu();
    let o = with_env(
        &[HOOK, ("FABDIAG_TEST_CORRUPT_OFFSET", "77")],
        &[
            "gpu-loopback-bw",
            "-P",
            "shm",
            "-t",
            "0",
            "-r",
            "0",
            "-i",
            "2",
            "-n",
            "4",
            "-s",
            "4096",
        ],
    );
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).contains("data check failed for size 4096: the RX buffer at offset 77 holds 0x"),
        "{}",
        o.stderr
    );
}
