#!/usr/bin/env bash
# How long `fabdiag health` takes on this machine, idle: RUNS runs (default
# 10) of the given health options (default: shm and tcp over lo measured),
# each run's wall time and verdict, then the median and the slowest, beside
# the budget (10 s by default; Slurm kills a HealthCheckProgram at 60 s).
# Not a test: the time depends on the machine and its load.
# usage: [FABDIAG_BIN=path] scripts/dev/cost/health-budget.sh [--runs N] [-- HEALTH-OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=10
if [ "${1:-}" = "--runs" ]; then RUNS=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || set -- -d shm:shm -d tcp:lo
B=${FABDIAG_BIN:-target/release/fabdiag}
echo "$(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), fabdiag health $*"
times=()
for i in $(seq "$RUNS"); do
    s=$(date +%s.%N)
    set +e
    first=$("$B" health "$@" 2>&1 | head -1)
    set -e
    e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    times+=("$t")
    printf 'run %2d  %6.2f s  %s\n' "$i" "$t" "$first"
done
printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {
    m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
    printf "runs %d  median %.2f s  fastest %.2f s  slowest %.2f s\n", NR, m, a[1], a[NR] }'
