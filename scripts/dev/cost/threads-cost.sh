#!/usr/bin/env bash
# What being a multi-threaded process costs a one-way latency over a
# provider whose every poll is a system call (tcp): Debian's fi_pingpong
# as it comes (one thread), with one idle thread preloaded
# (scripts/dev/lib/idle-thread.c), and with that thread holding its own fd
# table (-DUNSHARE_FILES), and with the main thread's cancellation off and
# asynchronous (-DASYNC_OFF: glibc's wrappers skip their atomic updates),
# and with both (the state fabdiag's measuring thread runs in: what is
# left is what a second thread still costs), RUNS rounds of the five in
# turn, server on CPU
# 0 and client on CPU 1 (BENCH_CPUS). Prints each variant's median and the
# rounds paired (rank-test.py --paired). fabdiag's polling thread has
# helper threads beside it (stuck-call guard, heartbeat, control reader,
# signals); this asks what that alone costs, with fabdiag out of the way.
# Not a test: the figures depend on the machine and its load.
# usage: scripts/dev/cost/threads-cost.sh [RUNS (20)] [SIZE (8)] [PROVIDER (tcp)] [ITERS (200000)]
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=${1:-20} SIZE=${2:-8} PROV=${3:-tcp} ITERS=${4:-200000}
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh
lib=$(mktemp -d)
trap 'rm -rf "$lib"' EXIT
# the variants, by index: the name the medians line gives, the short one
# the pair lines give, and the flags idle-thread.c is built with ("none":
# nothing preloaded); each round runs them in the order of `order`
long=("one thread" "idle thread" "idle thread, own fd table" "idle thread, cancellation off" "both")
short=("one thread" "idle thread" "own fd table" "cancellation off" "both")
flags=(none "" "-DUNSHARE_FILES" "-DASYNC_OFF" "-DUNSHARE_FILES -DASYNC_OFF")
order=(1 2 3 4 0)
for k in "${!flags[@]}"; do
    # shellcheck disable=SC2086
    [ "${flags[k]}" = none ] || cc -O2 -shared -fPIC ${flags[k]} -o "$lib/v$k.so" scripts/dev/lib/idle-thread.c -lpthread
done
port=$((49000 + RANDOM % 4000))
SRV="taskset -c $SCPU" CLI="taskset -c $CCPU"
one() { # variant -> usec/xfer ("nan" when the run gave none)
    port=$((port + 1))
    local pre=""
    [ "${flags[$1]}" = none ] || pre="LD_PRELOAD=$lib/v$1.so"
    PEER_ENV=$pre fig fi_pingpong_lat "$PROV" "$SIZE" "$ITERS" "$port"
}
declare -A got # got[VARIANT,ROUND]
for r in $(seq "$RUNS"); do
    for k in "${order[@]}"; do got[$k,$r]=$(one "$k"); done
done
# a round with a failed run is left out of every comparison
ok=()
for r in $(seq "$RUNS"); do
    whole=1
    for k in "${!flags[@]}"; do [ "${got[$k,$r]}" != nan ] || whole=0; done
    [ "$whole" = 0 ] || ok+=("$r")
done
col() { local r; for r in "${ok[@]}"; do echo "${got[$1,$r]}"; done; } # variant -> its figures, whole rounds
echo "fi_pingpong -p $PROV -e rdm -S $SIZE -I $ITERS, ${#ok[@]} of $RUNS rounds whole, usec one-way, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), server CPU $SCPU, client CPU $CCPU"
line="median"
for k in "${!flags[@]}"; do line+="  ${long[k]} $(col "$k" | median)"; done
echo "$line"
for pr in "1 0" "2 0" "2 1" "3 0" "3 1" "4 0" "4 1"; do
    read -r x y <<<"$pr"
    # shellcheck disable=SC2046
    pair_line "${short[x]}" "${short[y]}" $(col "$x") -- $(col "$y")
done
