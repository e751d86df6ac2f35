//! The host-traffic kernels, run on the CPU: crates/gpu/kernels/traffic.cu
//! (the source of the committed PTX) built as host C++ with a small shim
//! (kernels_on_cpu/cuda_shim.h) and AddressSanitizer, each kernel launched
//! with the grid and block fabdiag-gpu gives it, its threads one after
//! another. Checked against this crate's own pattern and plan: the fill
//! kernel writes what the host's checks expect, the verify kernel accepts
//! what the host writes, the tile walk writes exactly the pieces the plan's
//! data check looks at and stays inside each block's slice, the checks
//! find a flipped byte, and the start gate gives up in time. What it cannot
//! check is the GPU itself (its memory model, the copy engines, the
//! driver, speed): that is the GPU test path's (crates/cli/tests/gpu.rs).
//! Needs a C++ compiler with AddressSanitizer (build-essential, which
//! scripts/install-deps.sh installs); without one the tests fail.

use fabdiag_gpu::cuda::{STRIDE_BLOCK, STRIDE_GRID, VERIFY_TILES_BLOCK};
use fabdiag_traffic::pattern::{self, VEC};
use fabdiag_traffic::plan::{GpuFacts, Plan, Request};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The harness, built once per test process.
fn harness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("traffic-kernels-on-cpu-{}", std::process::id()));
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let o = Command::new(&cxx)
            .args([
                "-std=c++17",
                "-O1",
                "-g",
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=all",
            ])
            .args(["-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-I"])
            .arg(here.join("../gpu/kernels"))
            .arg(here.join("tests/kernels_on_cpu/harness.cpp"))
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C++ compiler '{cxx}' ({e}): install build-essential"));
        assert!(
            o.status.success(),
            "the kernels do not build as C++:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

/// Runs the harness; its `name value ...` lines.
fn run(args: &[String]) -> Vec<(String, Vec<u64>)> {
    let o = Command::new(harness())
        .args(args)
        // LeakSanitizer needs ptrace, which a container may not allow
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .expect("run the harness");
    assert!(
        o.status.success(),
        "harness {args:?}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap_or_default().to_string();
            (name, w.map(|n| n.parse().expect("a number")).collect())
        })
        .collect()
}

fn args(a: &[&dyn ToString]) -> Vec<String> {
    a.iter().map(|x| x.to_string()).collect()
}

fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kernels-on-cpu-{}-{name}", std::process::id()))
}

#[test]
fn the_fill_kernel_writes_the_pattern_the_host_checks() {
    // the last one has more vectors than the grid has threads: the
    // grid-stride loop goes round
    for (seed, first, n) in [(0u32, 0u64, 64u64), (1, 0, 4096), (0xdead_beef, 123_456_789, 300_000)] {
        let out = scratch("fill");
        run(&args(&[
            &"fill",
            &STRIDE_GRID,
            &STRIDE_BLOCK,
            &seed,
            &first,
            &n,
            &out.display(),
        ]));
        let got = std::fs::read(&out).expect("the kernel's buffer");
        let _ = std::fs::remove_file(&out);
        let mut want = vec![0u8; (n * VEC) as usize];
        pattern::fill(&mut want, seed, first);
        assert!(
            got == want,
            "seed {seed} first {first}: {:?}",
            pattern::first_mismatch(&got, seed, first)
        );
    }
}

#[test]
fn the_verify_kernel_accepts_the_hosts_pattern_and_names_the_first_bad_vector() {
    let (seed, first, n) = (7u32, 1000u64, 300_000u64);
    let mut buf = vec![0u8; (n * VEC) as usize];
    pattern::fill(&mut buf, seed, first);
    let path = scratch("verify");
    let verify = |buf: &[u8]| {
        std::fs::write(&path, buf).expect("write");
        let r = run(&args(&[
            &"verify",
            &STRIDE_GRID,
            &STRIDE_BLOCK,
            &seed,
            &first,
            &path.display(),
        ]));
        r[0].1.clone()
    };
    assert_eq!(verify(&buf), [0, u64::MAX]);
    buf[4_000_007] ^= 0x10;
    buf[17] ^= 1;
    assert_eq!(verify(&buf), [2, 1], "two vectors bad, the lowest is vector 1");
    // another seed: every vector
    let r = run(&args(&[
        &"verify",
        &STRIDE_GRID,
        &STRIDE_BLOCK,
        &(seed + 1),
        &first,
        &path.display(),
    ]));
    assert_eq!(r[0].1, [n, 0]);
    let _ = std::fs::remove_file(&path);
}

/// A plan as Plan::new makes it, on a GPU with a small L2 (so slices stay
/// small enough to walk on the CPU).
fn plan(payload_blocks: u32, iterations: u64) -> Plan {
    let facts = GpuFacts {
        sm_count: 3,
        l2_bytes: 64 << 10,
        free_bytes: 1 << 30,
        copy_engines: 2,
    };
    let req = Request {
        tiles: None,
        payload_blocks,
        iterations,
        chunk: 64 << 10,
    };
    Plan::new(&req, &facts, true).expect("a plan")
}

/// What the tile walk must leave in a zeroed region: in each block's slice,
/// the pattern in the first min(pieces, slots) pieces of its walk, zeros
/// elsewhere.
fn walked(p: &Plan, seed: u32) -> Vec<u8> {
    let mut region = vec![0u8; p.tile_region as usize];
    let (vpp, slots) = (p.piece / VEC, p.slots());
    for b in 0..u64::from(p.blocks) {
        for q in 0..p.pieces_per_block().min(slots) {
            let first = b * (p.block_region / VEC) + pattern::slot_of(q, slots) * vpp;
            let at = (first * VEC) as usize;
            pattern::fill(&mut region[at..at + p.piece as usize], seed, first);
        }
    }
    region
}

#[test]
fn the_tile_walk_writes_what_the_plan_checks_and_the_checks_find_damage() {
    // -p 4 and -p 2; a walk shorter than a slice, and one going round it
    for (payload, iterations) in [(4, 5), (2, 3), (4, 300)] {
        let p = plan(payload, iterations);
        let seed = 0x5eed + payload;
        let out = scratch("tiles");
        let region_args = |corrupt: Option<u64>| {
            let mut a = args(&[
                &"tiles",
                &p.blocks,
                &p.threads,
                &VERIFY_TILES_BLOCK,
                &p.block_region,
                &p.piece,
                &p.iterations,
                &p.pieces_per_block(),
                &seed,
                &out.display(),
            ]);
            a.extend(corrupt.map(|c| c.to_string()));
            a
        };
        let r = run(&region_args(None));
        let got = std::fs::read(&out).expect("the region");
        let want = walked(&p, seed);
        let diff = got.iter().zip(&want).position(|(g, w)| g != w);
        assert_eq!(
            diff, None,
            "-p {payload} -i {iterations}: the walk differs at this byte"
        );
        assert_eq!(r[0], ("progress".into(), vec![iterations; p.blocks as usize]));
        assert_eq!(r[1], ("verify_tiles".into(), vec![0, u64::MAX]));
        assert_eq!(r[2], ("tile_read".into(), vec![0]));
        // one byte of the last block's last visited piece flipped: both
        // checks see it, verify_tiles names its vector
        let slots = p.slots();
        let last = p.pieces_per_block().min(slots) - 1;
        let v = u64::from(p.blocks - 1) * (p.block_region / VEC) + pattern::slot_of(last, slots) * (p.piece / VEC);
        let r = run(&region_args(Some(v * VEC + 5)));
        assert_eq!(
            r[3],
            ("verify_tiles".into(), vec![1, v]),
            "-p {payload} -i {iterations}"
        );
        assert!(r[4].0 == "tile_read" && r[4].1[0] >= 1, "{r:?}");
        let _ = std::fs::remove_file(&out);
    }
}

#[test]
fn the_start_gate_opens_when_released_and_gives_up_in_time() {
    assert_eq!(run(&args(&[&"gate", &1, &1_000_000_000u64]))[0].1, [0]);
    let t0 = std::time::Instant::now();
    assert_eq!(run(&args(&[&"gate", &0, &20_000_000u64]))[0].1, [1]);
    assert!(t0.elapsed() >= std::time::Duration::from_millis(20));
}
