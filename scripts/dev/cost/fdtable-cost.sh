#!/usr/bin/env bash
# What a shared fd table costs fabdiag's polling loop over a provider
# whose every poll is a system call (tcp): send-lat as it comes (its
# measuring thread takes a table of its own before the timed loop),
# send-lat with every other thread on its own table as well
# (scripts/dev/lib/unshare-threads.c, preloaded into both sides; the way this
# was first measured), and Debian's fi_pingpong (one thread), RUNS rounds
# of the three in turn,
# server on CPU 0 and client on CPU 1 (BENCH_CPUS). Each client runs under
# scripts/dev/lib/syscall-count.c, so beside each one-way latency it gives the
# calls a round trip makes and the time one pass of the polling loop
# takes (the run's time over its poll() calls): a figure that does not
# wait on the other side, so it moves less than the latency. Prints each
# variant's medians and the rounds paired (rank-test.py --paired).
# FABTESTS=DIR (fabtests' binaries, scripts/dev/support/fabtests-build.sh) adds
# fi_rdm_pingpong to each round, counted the same way. BEFORE=PATH (an
# earlier build of fabdiag, one whose measuring thread shares its fd table)
# takes the preloaded variant's place: the build as it was against the
# build as it is, round by round.
# Not a test: the figures depend on the machine and its load.
# usage: FABDIAG_BIN=PATH scripts/dev/cost/fdtable-cost.sh [RUNS (12)] [SIZE (64)] [ITERS (100000)]
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=${1:-12} SIZE=${2:-64} ITERS=${3:-100000} PROV=tcp
B=${FABDIAG_BIN:-target/release/fabdiag}
[ -x "$B" ] || { echo "fdtable-cost.sh: no fabdiag at $B (cargo build --release, or FABDIAG_BIN)" >&2; exit 1; }
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh
lib=$(mktemp -d)
trap 'rm -rf "$lib"' EXIT
cc -O2 -shared -fPIC -o "$lib/count.so" scripts/dev/lib/syscall-count.c -ldl
cc -O2 -shared -fPIC -o "$lib/unshare.so" scripts/dev/lib/unshare-threads.c -ldl
port=$((49000 + RANDOM % 4000))

SRV="taskset -c $SCPU" CLI="taskset -c $CCPU"
one() { # "fabdiag BINARY [PRELOAD]", "pingpong" or "rdm" -> poll_figures
    port=$((port + 1))
    rm -f "$lib/out"
    local us
    if [ "$1" = pingpong ]; then
        us=$(CLIENT_ENV="SYSCALL_COUNT_OUT=$lib/out LD_PRELOAD=$lib/count.so" fi_pingpong_lat "$PROV" "$SIZE" "$ITERS" "$port")
    elif [ "$1" = rdm ]; then
        # its out-of-band port, the server's provider port and the client's:
        # three ports, none of them the next run's
        local oob=$port sp=$((port + 1)) src=$((port + 2))
        port=$src
        us=$(CLIENT_ENV="SYSCALL_COUNT_OUT=$lib/out LD_PRELOAD=$lib/count.so" \
            fi_rdm_pingpong_lat "$FABTESTS" "$PROV" "$SIZE" "$ITERS" "$oob" "$sp" "$src")
    else
        us=$(PEER_ENV=${3:+LD_PRELOAD=$3} CLIENT_ENV="SYSCALL_COUNT_OUT=$lib/out LD_PRELOAD=$lib/count.so${3:+:$3}" \
            fabdiag_lat "$2" "$PROV" "$SIZE" "$ITERS" "$port")
    fi
    poll_figures "$lib/out" "${us:-nan}" "$ITERS"
}
if [ -n "${BEFORE:-}" ]; then
    [ -x "$BEFORE" ] || { echo "fdtable-cost.sh: no fabdiag at BEFORE=$BEFORE" >&2; exit 1; }
    second=before what="$BEFORE as it was"
else
    second=unshared what="send-lat with its helper threads on their own fd tables"
fi
echo "send-lat / $what / fi_pingpong${FABTESTS:+ / fi_rdm_pingpong}, $PROV, $SIZE B, $ITERS iterations, $RUNS rounds, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), server CPU $SCPU, client CPU $CCPU"
echo "round  tool        usec  ns/poll-pass  calls a round trip: poll send recv read write"
declare -a A U P R
for r in $(seq "$RUNS"); do
    a=$(one fabdiag "$B")
    if [ -n "${BEFORE:-}" ]; then u=$(one fabdiag "$BEFORE"); else u=$(one fabdiag "$B" "$lib/unshare.so"); fi
    p=$(one pingpong)
    printf '%5d  send-lat    %s\n%5d  %-11s %s\n%5d  fi_pingpong %s\n' "$r" "$a" "$r" "$second" "$u" "$r" "$p"
    A+=("$a") U+=("$u") P+=("$p")
    if [ -n "${FABTESTS:-}" ]; then
        x=$(one rdm)
        printf '%5d  fi_rdm_pp   %s\n' "$r" "$x"
        R+=("$x")
    fi
done
col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{print $k}'; }
for t in send-lat "$second" fi_pingpong ${FABTESTS:+fi_rdm_pingpong}; do
    case $t in send-lat) set -- "${A[@]}" ;; "$second") set -- "${U[@]}" ;; fi_pingpong) set -- "${P[@]}" ;; *) set -- "${R[@]}" ;; esac
    printf 'median %-12s %s usec  %s ns a poll pass  calls a round trip: poll %s send %s recv %s read %s write %s\n' "$t" \
        "$(col 1 "$@" | median)" "$(col 2 "$@" | median)" "$(col 3 "$@" | median)" "$(col 4 "$@" | median)" \
        "$(col 5 "$@" | median)" "$(col 6 "$@" | median)" "$(col 7 "$@" | median)"
done
# shellcheck disable=SC2046
pair_line "$second" send-lat $(col 1 "${U[@]}") -- $(col 1 "${A[@]}")
# shellcheck disable=SC2046
pair_line send-lat fi_pingpong $(col 1 "${A[@]}") -- $(col 1 "${P[@]}")
# shellcheck disable=SC2046
pair_line "$second" fi_pingpong $(col 1 "${U[@]}") -- $(col 1 "${P[@]}")
if [ -n "${FABTESTS:-}" ]; then
    # shellcheck disable=SC2046
    pair_line send-lat fi_rdm_pingpong $(col 1 "${A[@]}") -- $(col 1 "${R[@]}")
    # shellcheck disable=SC2046
    pair_line "$second" fi_rdm_pingpong $(col 1 "${U[@]}") -- $(col 1 "${R[@]}")
fi
echo "poll passes, ns (lower is faster):"
# shellcheck disable=SC2046
pair_line "$second" send-lat $(col 2 "${U[@]}") -- $(col 2 "${A[@]}")
# shellcheck disable=SC2046
pair_line send-lat fi_pingpong $(col 2 "${A[@]}") -- $(col 2 "${P[@]}")
if [ -n "${FABTESTS:-}" ]; then
    # shellcheck disable=SC2046
    pair_line send-lat fi_rdm_pingpong $(col 2 "${A[@]}") -- $(col 2 "${R[@]}")
    # shellcheck disable=SC2046
    pair_line "$second" fi_rdm_pingpong $(col 2 "${U[@]}") -- $(col 2 "${R[@]}")
fi
