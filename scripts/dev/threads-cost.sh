#!/usr/bin/env bash
# What being a multi-threaded process costs a one-way latency over a
# provider whose every poll is a system call (tcp): Debian's fi_pingpong
# as it comes (one thread), with one idle thread preloaded
# (scripts/dev/idle-thread.c), and with that thread holding its own fd
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
# usage: scripts/dev/threads-cost.sh [RUNS (20)] [SIZE (8)] [PROVIDER (tcp)] [ITERS (200000)]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-20} SIZE=${2:-8} PROV=${3:-tcp} ITERS=${4:-200000}
# shellcheck source=scripts/dev/bench-common.sh
source scripts/dev/bench-common.sh
lib=$(mktemp -d)
trap 'rm -rf "$lib"' EXIT
cc -O2 -shared -fPIC -o "$lib/idle.so" scripts/dev/idle-thread.c -lpthread
cc -O2 -shared -fPIC -DUNSHARE_FILES -o "$lib/unshared.so" scripts/dev/idle-thread.c -lpthread
cc -O2 -shared -fPIC -DASYNC_OFF -o "$lib/async.so" scripts/dev/idle-thread.c -lpthread
cc -O2 -shared -fPIC -DUNSHARE_FILES -DASYNC_OFF -o "$lib/both.so" scripts/dev/idle-thread.c -lpthread
port=$((49000 + RANDOM % 4000))
SRV="taskset -c $SCPU" CLI="taskset -c $CCPU"
one() { # preload-or-empty -> usec/xfer ("nan" when the run gave none)
    port=$((port + 1))
    PEER_ENV=${1:+LD_PRELOAD=$1} fig fi_pingpong_lat "$PROV" "$SIZE" "$ITERS" "$port"
}
single=() multi=() unshared=() async=() both=()
for _ in $(seq "$RUNS"); do
    multi+=("$(one "$lib/idle.so")")
    unshared+=("$(one "$lib/unshared.so")")
    async+=("$(one "$lib/async.so")")
    both+=("$(one "$lib/both.so")")
    single+=("$(one "")")
done
# a round with a failed run is left out of every comparison
keep() { local i; for i in "${!single[@]}"; do
    [ "${single[i]}" != nan ] && [ "${multi[i]}" != nan ] && [ "${unshared[i]}" != nan ] \
        && [ "${async[i]}" != nan ] && [ "${both[i]}" != nan ] && echo "$i"; done; }
mapfile -t ok < <(keep)
pick() { local -n v=$1; local i; for i in "${ok[@]}"; do echo "${v[i]}"; done; }
mapfile -t s < <(pick single); mapfile -t m < <(pick multi); mapfile -t u < <(pick unshared)
mapfile -t a < <(pick async); mapfile -t b < <(pick both)
echo "fi_pingpong -p $PROV -e rdm -S $SIZE -I $ITERS, ${#ok[@]} of $RUNS rounds whole, usec one-way, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), server CPU $SCPU, client CPU $CCPU"
printf 'median  one thread %s  idle thread %s  idle thread, own fd table %s  idle thread, cancellation off %s  both %s\n' \
    "$(printf '%s\n' "${s[@]}" | median)" "$(printf '%s\n' "${m[@]}" | median)" "$(printf '%s\n' "${u[@]}" | median)" \
    "$(printf '%s\n' "${a[@]}" | median)" "$(printf '%s\n' "${b[@]}" | median)"
pair_line "idle thread" "one thread" "${m[@]}" -- "${s[@]}"
pair_line "own fd table" "one thread" "${u[@]}" -- "${s[@]}"
pair_line "own fd table" "idle thread" "${u[@]}" -- "${m[@]}"
pair_line "cancellation off" "one thread" "${a[@]}" -- "${s[@]}"
pair_line "cancellation off" "idle thread" "${a[@]}" -- "${m[@]}"
pair_line "both" "one thread" "${b[@]}" -- "${s[@]}"
pair_line "both" "idle thread" "${b[@]}" -- "${m[@]}"
