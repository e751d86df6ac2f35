#!/usr/bin/env bash
# fabdiag side by side with fabtests over psm3 (its sockets HAL) between
# two network namespaces joined by a veth pair (198.18.7.0/24): send-bw
# against fi_rdm_bw and write-bw against fi_rma_bw -o write, same size,
# window and number of operations, runs alternating, medians in MB/s and
# the ratio fabdiag / fabtests (above 1: fabdiag is faster). Not a test:
# the numbers depend on the machine and its load.
#
# With ROWS=latency (or "bandwidth latency"), one-way latency instead (or
# as well): send-lat against fi_pingpong (the libfabric build's own) and
# fi_rdm_pingpong at 8 B, 64 B, 1 KiB and 4 KiB, LAT_ITERS (200,000)
# iterations a run, and fabdiag's speed over the better of the two (of the
# medians, and "paired": round by round, as bench.sh's);
# LAT_SIZES changes the sizes, and with RUN_FIGURES=1 each row is followed
# by every run's figure, sorted, for each tool, the rank test of
# fabdiag's runs against each peer's, and the rounds' paired ratios. BEFORE=PATH (an earlier
# fabdiag build) runs in the same alternation, its median and its speed
# over the better peer after the row's.
#
# usage (as root): [ROWS=...] scripts/dev/bench/psm3-bench.sh LIBFABRIC_SO FABTESTS_BIN [RUNS] [SIZE] [WINDOW]
#   LIBFABRIC_SO  a libfabric.so.1 with psm3 (scripts/dev/support/psm3-check.sh builds
#                 one: /tmp/libfabric-psm3/lib/libfabric.so.1)
#   FABTESTS_BIN  fabtests' binaries built against the same libfabric
#   RUNS 5, SIZE 65536, WINDOW 64 by default; 20,000 operations a run
# Server and client pinned to CPUs 0 and 1 (BENCH_CPUS="S C" for others).
set -euo pipefail
cd "$(dirname "$0")/../../.."
LIB="${1:?usage: scripts/dev/bench/psm3-bench.sh LIBFABRIC_SO FABTESTS_BIN [RUNS] [SIZE] [WINDOW]}"
FT="${2:?usage: scripts/dev/bench/psm3-bench.sh LIBFABRIC_SO FABTESTS_BIN [RUNS] [SIZE] [WINDOW]}"
RUNS="${3:-5}"
SIZE="${4:-65536}"
WINDOW="${5:-64}"
OPS=20000
ROWS=${ROWS:-bandwidth}
LAT_ITERS=${LAT_ITERS:-200000}
BIN="${FABDIAG_BIN:-target/release/fabdiag}"
[ -x "$BIN" ] || cargo build --release --locked -q
for t in fi_rdm_bw fi_rma_bw; do
    [ -x "$FT/$t" ] || { echo "psm3-bench.sh: no $t in $FT" >&2; exit 1; }
done
A=fdpb-a B=fdpb-b
cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add "$A"
ip netns add "$B"
ip link add fdpb-va type veth peer name fdpb-vb
ip link set fdpb-va netns "$A"
ip link set fdpb-vb netns "$B"
ip -n "$A" addr add 198.18.7.1/24 dev fdpb-va
ip -n "$B" addr add 198.18.7.2/24 dev fdpb-vb
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set fdpb-va up
ip -n "$B" link set fdpb-vb up
export FABDIAG_LIBFABRIC="$LIB" LD_LIBRARY_PATH="$(dirname "$LIB")"

fabdiag_mb() { # tool [-b] -> MB/s at SIZE, this side's own direction
    ip netns exec "$A" "$BIN" "$1" -p 47950 -P psm3 >/dev/null 2>&1 &
    sleep 0.7
    ip netns exec "$B" "$BIN" "$@" 198.18.7.1 -p 47950 -P psm3 -s "$SIZE" -l "$WINDOW" \
        -n $((OPS / WINDOW)) --buf-sz "$SIZE" --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][-1]; print("%.1f" % (r["ops"]*r["size_bytes"]*1000/r["elapsed_ns"]))'
    wait
}
fabtests_mb() { # binary [args] -> MB/s at SIZE
    local t="$1"; shift
    ip netns exec "$A" timeout 120 "$FT/$t" -p psm3 -e rdm "$@" -S "$SIZE" -I "$OPS" -W "$WINDOW" >/dev/null 2>&1 &
    sleep 1
    ip netns exec "$B" timeout 120 "$FT/$t" -p psm3 -e rdm "$@" -S "$SIZE" -I "$OPS" -W "$WINDOW" 198.18.7.1 |
        awk 'NR > 1 {print $5}'
    wait
}
# median, runs_line
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh

row() { # label "fabdiag tool and args" fabtests-binary [fabtests args]
    local label="$1" tool="$2" t="$3"; shift 3
    local f="" p=""
    for _ in $(seq "$RUNS"); do
        # shellcheck disable=SC2086 # the tool and its flags, split on purpose
        f+="$(fabdiag_mb $tool)"$'\n'
        p+="$(fabtests_mb "$t" "$@")"$'\n'
    done
    local fm pm
    fm=$(printf '%s' "$f" | median)
    pm=$(printf '%s' "$p" | median)
    printf '%-8s %-13s %9s  %-24s %9s %6.2f\n' "$label" "$tool" "$fm" "$t $*" "$pm" "$(echo "$fm / $pm" | bc -l)"
}

# --- latency: one message in flight, one-way usec ----------------------------
fabdiag_lat() { # size [fabdiag binary]
    local bin=${2:-$BIN}
    ip netns exec "$A" taskset -c "$SCPU" "$bin" send-lat -p 47951 >/dev/null 2>&1 &
    sleep 0.7
    ip netns exec "$B" taskset -c "$CCPU" "$bin" send-lat 198.18.7.1 -p 47951 -P psm3 -s "$1" -n "$LAT_ITERS" --warmup 100 \
        --latency-gap 0 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.3f" % (r["mean_ns"]/1000))'
    wait
}
pingpong_lat() { # size (fi_pingpong of the same libfabric build)
    local pp; pp="$(dirname "$(dirname "$LIB")")/bin/fi_pingpong"
    ip netns exec "$A" taskset -c "$SCPU" timeout 300 "$pp" -p psm3 -e rdm -S "$1" -I "$LAT_ITERS" >/dev/null 2>&1 &
    sleep 1
    ip netns exec "$B" taskset -c "$CCPU" timeout 300 "$pp" -p psm3 -e rdm -S "$1" -I "$LAT_ITERS" 198.18.7.1 2>/dev/null | awk 'NR==2 {print $7}'
    wait
}
rdm_pingpong_lat() { # size
    ip netns exec "$A" taskset -c "$SCPU" timeout 300 "$FT/fi_rdm_pingpong" -p psm3 -S "$1" -I "$LAT_ITERS" -w 100 >/dev/null 2>&1 &
    sleep 1
    ip netns exec "$B" taskset -c "$CCPU" timeout 300 "$FT/fi_rdm_pingpong" -p psm3 -S "$1" -I "$LAT_ITERS" -w 100 198.18.7.1 2>/dev/null |
        tail -1 | awk '{print $6}'
    wait
}
# speed FABDIAG PEER1 PEER2: the better peer's latency over fabdiag's
speed() { awk -v f="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%.2f", ((a < b) ? a : b) / f}'; }
lat_row() { # size
    local f="" p="" r="" e=""
    for _ in $(seq "$RUNS"); do
        f+="$(fig fabdiag_lat "$1")"$'\n'
        p+="$(fig pingpong_lat "$1")"$'\n'
        r+="$(fig rdm_pingpong_lat "$1")"$'\n'
        [ -z "${BEFORE:-}" ] || e+="$(fig fabdiag_lat "$1" "$BEFORE")"$'\n'
    done
    local fm pm rm em before=""
    fm=$(printf '%s' "$f" | median)
    pm=$(printf '%s' "$p" | median)
    rm=$(printf '%s' "$r" | median)
    if [ -n "${BEFORE:-}" ]; then
        em=$(printf '%s' "$e" | median)
        before="  before $em ($(speed "$em" "$pm" "$rm"))"
    fi
    # (word-split on purpose: one figure a line)
    # shellcheck disable=SC2086
    printf '%-8s %6s  send-lat %9s  fi_pingpong %9s  fi_rdm_pingpong %9s  speed %5s  paired %4s%s\n' latency "$1" "$fm" "$pm" "$rm" \
        "$(speed "$fm" "$pm" "$rm")" "$(paired_speed $f -- $p -- $r)" "$before"
    if [ "${RUN_FIGURES:-0}" = 1 ]; then
        # (word-split on purpose: one figure a line)
        # shellcheck disable=SC2086
        { runs_line send-lat $f; runs_line fi_pingpong $p; runs_line fi_rdm_pingpong $r; }
        # shellcheck disable=SC2086
        { rank_line send-lat fi_pingpong $f -- $p; rank_line send-lat fi_rdm_pingpong $f -- $r; }
        # shellcheck disable=SC2086
        { pair_line send-lat fi_pingpong $f -- $p; pair_line send-lat fi_rdm_pingpong $f -- $r; }
        # shellcheck disable=SC2086
        pair_line send-lat "better peer" $f -- $p -- $r
        # shellcheck disable=SC2086
        [ -z "${BEFORE:-}" ] || runs_line before $e
    fi
}

if [[ " $ROWS " == *" latency "* ]]; then
    echo "psm3 (sockets HAL) over a veth pair, one-way latency in usec, $LAT_ITERS iterations a run, medians of $RUNS alternating runs ($(date -u +%F), $(nproc) cores)"
    for s in ${LAT_SIZES:-8 64 1024 4096}; do lat_row "$s"; done
fi
[[ " $ROWS " == *" bandwidth "* ]] || exit 0

echo "psm3 (sockets HAL) over a veth pair, $SIZE B, window $WINDOW, $OPS operations a run, medians of $RUNS alternating runs ($(date -u +%F), $(nproc) cores)"
printf '%-8s %-13s %9s  %-24s %9s %6s\n' "row" "fabdiag" "MB/s" "fabtests" "MB/s" "ratio"
# one way, each window closed by the receiver's answer (fabdiag: empty,
# fabtests: its acknowledgement)
row sends send-bw fi_rdm_bw
# both sides writing at once, delivery complete, each its own direction
# (fi_rma_bw runs the same loop on both sides)
row writes "write-bw -b" fi_rma_bw -o write -U
