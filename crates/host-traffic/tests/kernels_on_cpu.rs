//! The host-traffic kernels, run on the CPU: crates/gpu/kernels/traffic.cu
//! (the source of the committed PTX) built as host C++ with a small shim
//! (crates/testkit/cuda/cuda_shim.h) and AddressSanitizer, its threads run one
//! after another. Each kernel is launched from the same `Launch` that
//! fabdiag-gpu hands to cuLaunchKernel (crates/gpu/src/launch.rs: grid,
//! block, arguments), made from this crate's own plan, with made-up device
//! addresses the harness maps onto its buffers. Checked against this
//! crate's pattern and plan: the fill kernel writes what the host's checks
//! expect, the verify kernel accepts what the host writes, the tile walk
//! writes exactly the pieces the tile check reads and nothing else, the
//! checks find a flipped byte, and the start gate gives up in time. What
//! it cannot check is the GPU itself (its memory model, the copy engines,
//! the driver, speed): that is the GPU test path's (crates/cli/tests/gpu.rs).
//! Needs a C++ compiler with AddressSanitizer (build-essential, which
//! scripts/install-deps.sh installs); without one the tests fail.

use fabdiag_gpu::launch::{self, Arg, Launch};
use fabdiag_host_traffic::pattern::{self, VEC};
use fabdiag_host_traffic::plan::{GpuFacts, Plan, Request};
use fabdiag_host_traffic::run;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Where the made-up device buffer and mapped words start (any address
/// the harness can tell apart will do).
const DEV: u64 = 0x7f00_0000_0000;
const WORDS: u64 = 0x7e00_0000_0000;
/// The mapped words, as a run lays them out.
const FLAG: usize = run::FLAG;
const TIMED_OUT: usize = run::GATE_TIMEOUT_TILE;
const BAD: usize = run::TILE_BAD;
const COUNT: usize = run::CHECK_COUNT;
const FIRST: usize = run::CHECK_FIRST;
const PROGRESS: usize = run::PROGRESS;

/// The harness, built once per test process.
fn harness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = scratch("harness");
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
            .arg("-I")
            .arg(here.join("../testkit/cuda"))
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

fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kernels-on-cpu-{}-{name}", std::process::id()))
}

/// A launch as the harness takes it: made-up addresses back to places in
/// its buffers.
fn call(l: &Launch) -> String {
    let args: Vec<String> = l
        .args
        .iter()
        .map(|a| match *a {
            Arg::Ptr(0) => "z".into(),
            Arg::Ptr(p) if p >= DEV => format!("d:{}", p - DEV),
            Arg::Ptr(p) if p >= WORDS && (p - WORDS).is_multiple_of(8) => format!("w:{}", (p - WORDS) / 8),
            Arg::Ptr(p) => panic!(
                "{}: address {p:#x} is neither device memory nor a word",
                l.kernel.name()
            ),
            Arg::U64(v) => format!("u64:{v}"),
            Arg::U32(v) => format!("u32:{v}"),
        })
        .collect();
    format!("call {} {} {} {}", l.kernel.name(), l.grid, l.block, args.join(" "))
}

fn word(i: usize) -> u64 {
    WORDS + 8 * i as u64
}

/// Runs `script` on a device buffer of `dev_bytes` and 8 + `extra` words;
/// the words after each `words` line.
fn run(dev_bytes: u64, extra: u64, script: &[String]) -> Vec<Vec<u64>> {
    let mut child = Command::new(harness())
        .args([dev_bytes.to_string(), (8 + extra).to_string()])
        // LeakSanitizer needs ptrace, which a container may not allow
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the harness");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all((script.join("\n") + "\n").as_bytes())
        .expect("the script");
    drop(input);
    let o = child.wait_with_output().expect("the harness ends");
    assert!(
        o.status.success(),
        "harness: {}\n{}\nscript:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr),
        script.join("\n")
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("words "))
        .map(|l| l.split_whitespace().map(|n| n.parse().expect("a number")).collect())
        .collect()
}

/// A plan as Plan::new makes it, on a GPU with a small L2 (so slices stay
/// small enough to walk on the CPU).
fn plan(payload_blocks: u32, iterations: u64, chunk: u64) -> Plan {
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
        chunk,
    };
    Plan::new(&req, &facts, true).expect("a plan")
}

#[test]
fn the_fill_kernel_writes_the_pattern_the_host_checks() {
    // the host region, as a host-read test prepares it; the larger one has
    // more vectors than the grid has threads, so the grid-stride loop goes
    // round
    for (seed, chunk) in [(1u32, 4096u64), (0xdead_beef, 2 << 20)] {
        let p = plan(4, 1, chunk);
        let first = p.host_offset() / VEC;
        let out = scratch("fill");
        let fill = launch::fill(DEV + p.host_offset(), p.host_region, first, seed);
        let save = format!("save {} {} {}", p.host_offset(), p.host_region, out.display());
        run(p.tile_region + p.host_region, 0, &[call(&fill), save]);
        let got = std::fs::read(&out).expect("the kernel's bytes");
        let _ = std::fs::remove_file(&out);
        let mut want = vec![0u8; p.host_region as usize];
        pattern::fill(&mut want, seed, first);
        assert!(
            got == want,
            "seed {seed}: {:?}",
            pattern::first_mismatch(&got, seed, first)
        );
    }
}

#[test]
fn the_verify_kernel_accepts_the_hosts_pattern_and_names_the_first_bad_vector() {
    let (seed, p) = (7u32, plan(4, 1, 2 << 20));
    let first = p.host_offset() / VEC;
    let mut host = vec![0u8; p.host_region as usize];
    pattern::fill(&mut host, seed, first);
    let path = scratch("verify");
    std::fs::write(&path, &host).expect("the host's bytes");
    let verify = |seed: u32| {
        call(&launch::verify(
            DEV + p.host_offset(),
            p.host_region,
            first,
            seed,
            word(COUNT),
            word(FIRST),
        ))
    };
    let clean = || format!("set {COUNT} 0\nset {FIRST} {}", u64::MAX);
    let at = |byte: u64| format!("flip {}", p.host_offset() + byte);
    let w = run(
        p.tile_region + p.host_region,
        0,
        &[
            format!("load {} {}", p.host_offset(), path.display()),
            clean(),
            verify(seed),
            "words".into(),
            at(4_000_007),
            at(17),
            clean(),
            verify(seed),
            "words".into(),
            clean(),
            verify(seed + 1),
            "words".into(),
        ],
    );
    let _ = std::fs::remove_file(&path);
    let n = p.host_region / VEC;
    assert_eq!((w[0][COUNT], w[0][FIRST]), (0, u64::MAX));
    assert_eq!(
        (w[1][COUNT], w[1][FIRST]),
        (2, 1),
        "two bad vectors, the lowest vector 1"
    );
    assert_eq!((w[2][COUNT], w[2][FIRST]), (n, 0), "another seed: every vector");
}

/// What the tile walk must leave in a zeroed tile region: in each block's
/// slice, the pattern in the first min(pieces, slots) pieces of its walk,
/// zeros elsewhere.
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
        let p = plan(payload, iterations, 4096);
        let seed = 0x5eed + payload;
        let walk = launch::TileWalk {
            region: DEV,
            ..p.walk(seed)
        };
        let write = launch::tile(&walk, true, 0, word(PROGRESS));
        let read = launch::tile(&walk, false, word(BAD), word(PROGRESS));
        let check = launch::verify_tiles(&walk, p.pieces_per_block(), word(COUNT), word(FIRST));
        let checks = || {
            [
                format!("set {BAD} 0\nset {COUNT} 0\nset {FIRST} {}", u64::MAX),
                call(&check),
                call(&read),
                "words".into(),
            ]
        };
        // one byte of the last block's last visited piece
        let slots = p.slots();
        let last = p.pieces_per_block().min(slots) - 1;
        let v = u64::from(p.blocks - 1) * (p.block_region / VEC) + pattern::slot_of(last, slots) * (p.piece / VEC);
        let out = scratch("tiles");
        let all = p.tile_region + p.host_region;
        let mut script = vec![call(&write), "words".into(), format!("save 0 {all} {}", out.display())];
        script.extend(checks());
        script.push(format!("flip {}", v * VEC + 5));
        script.extend(checks());
        let w = run(all, u64::from(p.blocks), &script);
        let got = std::fs::read(&out).expect("the device buffer");
        let _ = std::fs::remove_file(&out);
        let what = format!("-p {payload} -i {iterations}");
        let (tiles, host) = got.split_at(p.tile_region as usize);
        let diff = tiles.iter().zip(walked(&p, seed)).position(|(g, w)| *g != w);
        assert_eq!(diff, None, "{what}: the walk differs at this byte");
        assert!(
            host.iter().all(|b| *b == 0),
            "{what}: the walk wrote into the host region"
        );
        let progress = PROGRESS..PROGRESS + p.blocks as usize;
        assert!(w[0][progress].iter().all(|&n| n == iterations), "{what}: {:?}", w[0]);
        let (bad, count, first) = (BAD, COUNT, FIRST);
        assert_eq!((w[1][count], w[1][first], w[1][bad]), (0, u64::MAX, 0), "{what}");
        // both checks see the flipped byte, verify_tiles names its vector
        assert_eq!((w[2][count], w[2][first]), (1, v), "{what}");
        assert!(w[2][bad] >= 1, "{what}: tile_read missed it");
    }
}

#[test]
fn the_start_gate_opens_when_released_and_gives_up_in_time() {
    let gate = |max_ns| call(&launch::gate(word(FLAG), max_ns, word(TIMED_OUT)));
    harness();
    let t0 = std::time::Instant::now();
    let w = run(
        16,
        0,
        &[
            gate(20_000_000),
            "words".into(),
            format!("set {TIMED_OUT} 0\nset {FLAG} 1"),
            gate(1_000_000_000),
            "words".into(),
        ],
    );
    assert_eq!(w[0][TIMED_OUT], 1, "never released: it gave up");
    // (had it waited its second for nothing, it would have said so too)
    assert_eq!(w[1][TIMED_OUT], 0, "released: it opened");
    assert!(t0.elapsed() >= std::time::Duration::from_millis(20));
}
