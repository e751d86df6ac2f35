#!/usr/bin/env bash
# The fuzzing campaign: every target in fuzz/ (cargo-fuzz: libFuzzer with
# AddressSanitizer, on a nightly compiler) run for SECONDS each from its
# committed corpus, one after another on one core. An input is a failure
# if it panics, trips the sanitizer, takes over 5 s (a decoder that
# blocks), or makes a single allocation over 64 MiB (64 times the frame
# limit: a length believed before it was checked). Afterwards each corpus
# is minimised (cargo fuzz cmin) and packed again into the committed
# fuzz/corpus/TARGET.tar.gz (libFuzzer works in the unpacked folder beside
# it, which git ignores), and a line per target gives its executions,
# time, corpus and what it found.
# Failing inputs land in fuzz/artifacts/TARGET/ (commit them, with a
# regression test in the normal suite, once fixed).
#   scripts/dev/demos/fuzz.sh [--seconds N] [--seeds] [TARGET...]
# --seeds writes the seed corpus again first (fuzz/seeds.rs, from a
# simulated sweep's folder). Installs the nightly compiler and cargo-fuzz
# when they are missing (rustup and crates.io must be reachable).
set -euo pipefail
cd "$(dirname "$0")/../../.."
seconds=300 seeds=0 targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) seconds=${2:?--seconds N}; shift 2 ;;
        --seeds) seeds=1; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
cd fuzz
if [ ${#targets[@]} -eq 0 ]; then
    # (seeds is the program that writes the seed corpus, not a target)
    mapfile -t targets < <(cargo +nightly fuzz list | grep -vx seeds)
fi
# a corpus folder from its committed archive, and back
unpack() { rm -rf "corpus/$1"; mkdir -p "corpus/$1"; [ ! -f "corpus/$1.tar.gz" ] || tar -xzf "corpus/$1.tar.gz" -C "corpus/$1"; }
pack() {
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "corpus/$1" -cf - . | gzip -n -9 >"corpus/$1.tar.gz"
}
cargo +nightly fuzz build -O >/dev/null 2>&1 || {
    echo "fuzz.sh: the targets do not build (cargo +nightly fuzz build -O says why)" >&2
    exit 1
}
if [ "$seeds" = 1 ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    ../target/release/fabdiag sweep --simulate 6 --sim-slow 2 --output "$out/sweep" >/dev/null || true
    # the seeds join each target's corpus
    for t in "${targets[@]}"; do unpack "$t"; done
    cargo +nightly run --release --bin seeds -- "$out/sweep" >/dev/null
    for t in "${targets[@]}"; do pack "$t"; done
fi
log=$(mktemp)
printf '%-13s %12s %8s %8s %8s  %s\n' target executions seconds corpus rss_mb found
for t in "${targets[@]}"; do
    unpack "$t"
    mkdir -p "artifacts/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    rc=0
    cargo +nightly fuzz run -O "$t" -- -max_total_time="$seconds" -timeout=5 \
        -malloc_limit_mb=64 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    cargo +nightly fuzz cmin -O "$t" >/dev/null 2>&1 || true
    size=$(find "corpus/$t" -type f | wc -l)
    pack "$t"
    after=$(find "artifacts/$t" -type f | wc -l)
    found=nothing
    if [ "$rc" != 0 ] || [ "$after" -gt "$before" ]; then
        found="$((after - before)) failing input(s) in fuzz/artifacts/$t: $(grep -m1 -E 'panicked|ERROR: ' "$log" || echo "exit $rc")"
    fi
    printf '%-13s %12s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${took:-?}" "$size" "${rss:-?}" "$found"
done
rm -f "$log"
