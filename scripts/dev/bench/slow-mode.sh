#!/usr/bin/env bash
# Slow-mode count: N alternating two-process runs of fabdiag send-lat and
# Debian's fi_pingpong (-e rdm) at one size, each run's one-way latency
# printed, then per tool the median and how many runs were above 1.5 times
# it. Server on CPU 0, client on CPU 1 for both, as scripts/dev/bench/bench.sh
# (BENCH_CPUS="S C" for others).
# Between runs, scripts/dev/cost/core-pingpong.c times a bare cache-line round
# trip between the same two CPUs (how far apart they are now); the end
# compares each run with the probes on either side of it.
# Not a test: the figures depend on the machine and its load.
# usage: [FABDIAG_BIN=path] scripts/dev/bench/slow-mode.sh [--runs N] [--iters N] [--size S] [--provider P]
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=50 ITERS=200000 SIZE=8 PROV=shm
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --iters) ITERS="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --provider) PROV="$2"; shift 2 ;;
        *) echo "slow-mode.sh: unknown argument '$1'" >&2; exit 1 ;;
    esac
done
B=${FABDIAG_BIN:-target/release/fabdiag}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# CORE_PINGPONG: a build of core-pingpong.c brought along (a machine
# without a compiler, scripts/dev/bench/latency-kit.sh)
probe_bin=${CORE_PINGPONG:-$work/core-pingpong}
[ -n "${CORE_PINGPONG:-}" ] ||
    gcc -O2 -pthread -o "$probe_bin" scripts/dev/cost/core-pingpong.c || { echo "slow-mode.sh: needs gcc" >&2; exit 1; }
# BENCH_CPUS="S C": the server's and the client's CPUs (default 0 and 1)
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh
probe() { "$probe_bin" "$SCPU" "$CCPU" 100000; }
SRV="taskset -c $SCPU" CLI="taskset -c $CCPU"
port=${BENCH_PORT:-$((56000 + RANDOM % 4000))}
fab() {
    port=$((port + 1))
    fabdiag_lat "$B" "$PROV" "$SIZE" "$ITERS" "$port"
}
peer() {
    port=$((port + 1))
    fi_pingpong_lat "$PROV" "$SIZE" "$ITERS" "$port"
}
f=() p=()
log=$work/runs
for i in $(seq "$RUNS"); do
    a=$(probe)
    f+=("$(fab)")
    b=$(probe)
    p+=("$(peer)")
    c=$(probe)
    echo "run $i probe $a fabdiag ${f[-1]} probe $b fi_pingpong ${p[-1]} probe $c" | tee -a "$log"
done
summary() { # name values...
    local name=$1; shift
    printf '%s\n' "$@" | sort -g | awk -v n="$name" '{a[NR]=$1} END {
        m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; slow = 0
        for (i = 1; i <= NR; i++) if (a[i] > 1.5*m) slow++
        printf "%-12s runs %d  median %.3f us  min %.3f  max %.3f  above 1.5x median: %d\n", n, NR, m, a[1], a[NR], slow }'
}
echo "$(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $PROV, $SIZE B, $ITERS iterations per run, server CPU $SCPU, client CPU $CCPU"
summary fabdiag "${f[@]}"
summary fi_pingpong "${p[@]}"
# Each run beside the cache-line round trips measured just before and
# after it: are the slow runs the ones where the two CPUs were far apart?
python3 - "$log" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
for name, run, before, after in (("fabdiag", 5, 3, 7), ("fi_pingpong", 9, 7, 11)):
    runs = [(float(r[before]), float(r[run]), float(r[after])) for r in rows]
    median = statistics.median(x for _, x, _ in runs)
    far = lambda a, b: max(a, b) > 300
    slow = [far(a, b) for a, x, b in runs if x > 1.5 * median]
    rest = [far(a, b) for a, x, b in runs if x <= 1.5 * median]
    print(f"{name:12s} slow runs {len(slow)}, {sum(slow)} of them beside a cache-line round trip over 300 ns;"
          f" other runs {len(rest)}, {sum(rest)} of them")
PY
