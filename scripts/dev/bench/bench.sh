#!/usr/bin/env bash
# fabdiag side by side with independent peers on this machine: same
# provider, size, iterations and window, two processes each, runs
# alternating (fabdiag, peer, fabdiag, peer, ...), medians, and the ratio
# of fabdiag's speed to the peer's (above 1: fabdiag is faster). The
# settings each pair was matched on are printed beside it. Not a test: the
# numbers depend on the machine and its load.
#
# usage: [FABDIAG_BIN=path] scripts/dev/bench/bench.sh [--runs N] [--iters N] [--fabtests DIR] [--before BIN] [--quick | --sizes LIST]
#                                           [--only latency|rate|bandwidth|writes] [--provider shm|tcp]
#   (env BENCH_CPUS="S C" and BENCH_PORT: see below)
#   --runs      alternations per row (default 5; the median is reported,
#               and per tool the runs worse than 1.5x it: "slow")
#   --iters     the least iterations of a latency row (default 200000; more
#               when a run of the peer would last under 0.5 s, from a probe
#               of fi_pingpong), and the base of the message-rate and write
#               rows' counts (x10, x5)
#   --fabtests  a directory holding fabtests' binaries (fi_rdm_pingpong,
#               fi_rdm_tagged_bw, fi_rma_bw), e.g. built from libfabric's
#               sources; without it only Debian's fi_pingpong and iperf3 are
#               compared
#   --before    another fabdiag build (e.g. an earlier commit's) run in the
#               same alternation on latency rows, for a before and after
#   --quick     fewer sizes; --sizes "A B ...": these
#   --only      one kind of row; --provider: one provider (default both)
#   (env RUN_FIGURES=1: each latency row followed by every run's figure,
#   sorted, per tool, the rank test of fabdiag's runs against each
#   peer's, and the same runs paired round by round: the median of the
#   rounds' ratios, scripts/dev/lib/rank-test.py [--paired]; with --before,
#   its runs too, paired with this build's)
#
# Rows:
#   latency    fabdiag send-lat (mean of round trip / 2, --latency-gap 0)
#              vs fi_pingpong -e rdm and fi_rdm_pingpong (usec/xfer: their
#              time per one-way transfer), one message in flight, all in
#              one alternation; "speed" is over the better of the peers,
#              "paired" the same round by round (the median over the
#              rounds of the round's better peer time / fabdiag's: it
#              does not jump when a few more of one tool's runs than of
#              another's fall into a VM's slow mode, which a median of
#              runs does),
#              "slow" fabdiag's/fi_pingpong's[/fi_rdm_pingpong's]
#   msg rate   fabdiag send-bw -l W (a batch of W sends, then the receiver's
#              empty response) vs fi_rdm_tagged_bw -W W (a window of W
#              tagged sends, then the receiver's 4-byte acknowledgement:
#              bw_tx_comp/bw_rx_comp in fabtests' benchmark_shared.c), in
#              million messages per second
#   bandwidth  fabdiag write-bw -b (RMA writes, delivery complete, both
#              sides writing, as fi_rma_bw's do) vs fi_rma_bw -o write -U,
#              each side's own direction; and, on tcp, fabdiag write-bw
#              (one way) vs one iperf3 TCP stream
#   writes     8 B RMA writes per second: fabdiag write-bw -b vs fi_rma_bw -U
#              (matched), and vs fi_rma_bw as it comes (not matched: what
#              the originals' delivery-complete guarantee costs)
# fabdiag runs with --buf-sz equal to the size, so that, like every peer,
# it reuses one buffer: stepping through a window's worth of buffers was
# 2-3x slower for 64 KiB writes on shm (cache misses), which is a
# difference of settings, not of speed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH="$HOME/.cargo/bin:$PATH"

RUNS=5
ITERS=200000
# the least time a peer's latency run lasts: shorter runs print too few
# digits to compare (20,000 shm round trips take 0.01 s)
MIN_RUN_S=0.5
FT=""
BEFORE=""
QUICK=0
SIZES=""
ONLY=""
PROVS="shm tcp"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --iters) ITERS="$2"; shift 2 ;;
        --before) BEFORE="$2"; shift 2 ;;
        --fabtests) FT="$2"; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --sizes) SIZES="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --provider) PROVS="$2"; shift 2 ;;
        *) echo "bench.sh: unknown argument '$1'" >&2; exit 1 ;;
    esac
done
# FABDIAG_BIN: compare another build (e.g. an earlier commit's)
if [ -n "${FABDIAG_BIN:-}" ]; then
    B=$FABDIAG_BIN
else
    cargo build --release -q
    B=target/release/fabdiag
fi
# BENCH_PORT: the first port (default: drawn), for several runs at once
port=${BENCH_PORT:-$((52000 + RANDOM % 4000))}
# Servers on CPU 0 and clients on CPU 1, for fabdiag and every peer alike:
# two busy-polling processes left to the scheduler share a CPU now and then,
# which swings results by 2x on a 2-CPU machine. BENCH_CPUS="S C": other
# CPUs, for several runs at once on a larger machine (bench-common.sh).
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    SRV="taskset -c $SCPU"
    CLI="taskset -c $CCPU"
    PINNED="server CPU $SCPU, client CPU $CCPU"
else
    SRV=""
    CLI=""
    PINNED="not pinned"
fi
WINDOW=64

# next_port: the next unused port. Every measurement runs inside $(...),
# a subshell whose variables die with it, so the count lives in a file.
PORT_FILE=$(mktemp)
trap 'rm -f "$PORT_FILE"' EXIT
echo "$port" >"$PORT_FILE"
next_port() { local p; p=$(($(cat "$PORT_FILE") + 1)); echo "$p" >"$PORT_FILE"; echo "$p"; }

# --- one measurement each; every function prints one number -----------------

fabdiag_run() { # tool PYTHON-EXPR client-args... -> EXPR of the JSON's first result `r`
    local tool=$1 expr=$2 sp; shift 2; sp=$(next_port)
    $SRV $B "$tool" -p "$sp" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    $CLI $B "$tool" 127.0.0.1 -p "$sp" "$@" --json |
        python3 -c "import json,sys; r=json.load(sys.stdin)['results'][0]; print($expr)"
    wait "$srv" || true
}

# per-message rate in millions per second, of the ops this side initiated
RATE='"%.4f" % (r["ops"]*1000/r["elapsed_ns"])'

fabdiag_lat() { # provider size -> one-way usec (mean)
    fabdiag_run send-lat '"%.3f" % (r["mean_ns"]/1000)' -P "$1" -s "$2" -n "$LAT_ITERS" --warmup 100 --latency-gap 0
}

pingpong_lat() { # provider size [iterations] -> usec/xfer (Debian's fi_pingpong)
    fi_pingpong_lat "$1" "$2" "${3:-$LAT_ITERS}" "$(next_port)"
}

# Iterations for a latency row: --iters, or more when a round trip (two
# one-way transfers, the fastest of three probes of 20,000: a probe that
# lands in a slow mode would shorten every run) would make a run shorter
# than MIN_RUN_S; rounded up to 10,000.
lat_iters() { # provider size -> iterations
    local probe
    probe=$(for _ in 1 2 3; do pingpong_lat "$1" "$2" 20000; done | sort -g | head -1)
    awk -v u="${probe:-0}" -v min="$ITERS" -v t="$MIN_RUN_S" 'BEGIN {
        n = (u > 0) ? t * 1e6 / (2 * u) : min; if (n < min) n = min
        printf "%d", int((n + 9999) / 10000) * 10000 }'
}

fabtests_run() { # binary args... -> fabtests' result line (client side)
    local bin=$1; shift
    # the out-of-band socket, the server's provider port (fabtests'
    # default, 9228, would be shared by every bench.sh running at once)
    # and the client's
    local oob sp src
    oob=$(next_port) sp=$(next_port) src=$(next_port)
    $SRV timeout 120 "$FT/$bin" "$@" -E="$oob" -B "$sp" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.4
    $CLI timeout 120 "$FT/$bin" "$@" -E="$oob" -P "$sp" -B "$src" 127.0.0.1 2>/dev/null | tail -1
    wait "$srv" || true
}

ft_lat() { # provider size -> usec/xfer (fabtests fi_rdm_pingpong)
    fi_rdm_pingpong_lat "$FT" "$1" "$2" "$LAT_ITERS" "$(next_port)" "$(next_port)" "$(next_port)"
}

fabdiag_rate() { # provider size -> million messages per second
    fabdiag_run send-bw "$RATE" -P "$1" -s "$2" -l "$WINDOW" -n $((ITERS * 10 / WINDOW)) --buf-sz "$2"
}

ft_rate() { # provider size -> Mxfers/sec (fabtests fi_rdm_tagged_bw)
    fabtests_run fi_rdm_tagged_bw -p "$1" -S "$2" -I $((ITERS * 10)) -W "$WINDOW" -w 1000 | awk '{print $7}'
}

fabdiag_bw() { # provider size [-b] -> Gbit/s (with -b: this side's direction only)
    fabdiag_run write-bw '"%.3f" % (r["ops"]*r["size_bytes"]*8/r["elapsed_ns"])' \
        -P "$1" -s "$2" -l "$WINDOW" -D 2 --buf-sz "$2" ${3:-}
}

# fi_rma_bw -o write runs the same loop on both sides (bandwidth_rma in
# fabtests' benchmark_shared.c), so both write at once and each reports its
# own direction: fabdiag is matched with -b and its own direction.
fabdiag_bw_both() { fabdiag_bw "$1" "$2" -b; }

ft_bw() { # provider size -> Gbit/s (fabtests fi_rma_bw, delivery complete)
    fabtests_run fi_rma_bw -p "$1" -S "$2" -I 20000 -W "$WINDOW" -o write -U | awk '{print $5 * 8 / 1000}'
}

fabdiag_writes() { # provider size -> million writes per second, this side's, both sides writing (-b)
    fabdiag_run write-bw "$RATE" -P "$1" -s "$2" -l "$WINDOW" -n $((ITERS * 5 / WINDOW)) --buf-sz "$2" -b
}

ft_writes_dc() { # provider size -> Mxfers/sec (fi_rma_bw, delivery complete)
    # -j 0: no inject. An injected write leaves no completion at all, so
    # with injection -U would not wait for delivery of small writes.
    fabtests_run fi_rma_bw -p "$1" -S "$2" -I $((ITERS * 5)) -W "$WINDOW" -o write -U -j 0 | awk '{print $7}'
}

ft_writes() { # provider size -> Mxfers/sec (fi_rma_bw as it comes: inject, transmit complete)
    fabtests_run fi_rma_bw -p "$1" -S "$2" -I $((ITERS * 5)) -W "$WINDOW" -o write | awk '{print $7}'
}

iperf_bw() { # (ignored) (ignored) -> Gbit/s of one TCP stream over loopback
    local ip; ip=$(next_port)
    $SRV iperf3 -s -1 -p "$ip" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.4
    $CLI iperf3 -c 127.0.0.1 -p "$ip" -t 2 -J | python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))'
    wait "$srv" || true
}

# --- rows ---------------------------------------------------------------------

# row KIND PROVIDER SIZE FAB_FN PEER_FN PEER_NAME SETTINGS: alternating runs,
# medians, and fabdiag's speed over the peer's
row() {
    local kind=$1 p=$2 s=$3 ffn=$4 pfn=$5 pname=$6 settings=$7
    local fa=() pa=()
    for _ in $(seq "$RUNS"); do
        fa+=("$($ffn "$p" "$s")")
        pa+=("$($pfn "$p" "$s")")
    done
    local fm pm ratio lower=0
    fm=$(printf '%s\n' "${fa[@]}" | median)
    pm=$(printf '%s\n' "${pa[@]}" | median)
    if [ "$kind" = latency ]; then
        ratio=$(awk -v f="$fm" -v p="$pm" 'BEGIN {printf "%.2f", p / f}')
        lower=1
    else
        ratio=$(awk -v f="$fm" -v p="$pm" 'BEGIN {printf "%.2f", f / p}')
    fi
    local slow
    slow="$(slow_runs "$fm" "$lower" "${fa[@]}")/$(slow_runs "$pm" "$lower" "${pa[@]}")"
    printf '%-9s %-4s %6s  %10s  %-16s %10s  %5s  %5s  %s\n' "$kind" "$p" "$s" "$fm" "$pname" "$pm" "$ratio" "$slow" "$settings"
}

# Runs worse than 1.5x the median: above it (lower is better) or below
# median / 1.5. A run in a slow mode lasts its whole length (a mode of the
# machine: both tools show them, see docs/results/speed.md).
slow_runs() { # median lower-is-better values... -> count
    local m=$1 lower=$2; shift 2
    printf '%s\n' "$@" | awk -v m="$m" -v lower="$lower" '
        NF && $1 != "nan" && ((lower && $1 > 1.5 * m) || (!lower && $1 * 1.5 < m)) {n++} END {print n + 0}'
}

# lat_row PROVIDER SIZE: fabdiag (and --before's build), fi_pingpong and
# (with --fabtests) fi_rdm_pingpong in turn, RUNS times; medians, the
# speed of each build over the better peer, and every tool's slow runs.
lat_row() {
    local p=$1 s=$2 fa=() ba=() pa=() ra=() peers="fi_pingpong"
    for _ in $(seq "$RUNS"); do
        fa+=("$(fabdiag_lat "$p" "$s")")
        [ -z "$BEFORE" ] || ba+=("$(B=$BEFORE fabdiag_lat "$p" "$s")")
        pa+=("$(pingpong_lat "$p" "$s")")
        [ -z "$FT" ] || ra+=("$(ft_lat "$p" "$s")")
    done
    local fm bm pm rm best
    fm=$(printf '%s\n' "${fa[@]}" | median)
    pm=$(printf '%s\n' "${pa[@]}" | median)
    best=$pm
    local slow="$(slow_runs "$fm" 1 "${fa[@]}")"
    if [ -n "$FT" ]; then
        rm=$(printf '%s\n' "${ra[@]}" | median)
        best=$(awk -v a="$pm" -v b="$rm" 'BEGIN {print (b < a) ? b : a}')
        peers="$peers $pm, fi_rdm_pingpong $rm"
    else
        peers="$peers $pm"
    fi
    local speed paired before=""
    speed=$(awk -v f="$fm" -v p="$best" 'BEGIN {printf "%.2f", p / f}')
    if [ -n "$FT" ]; then
        paired=$(paired_speed "${fa[@]}" -- "${pa[@]}" -- "${ra[@]}")
    else
        paired=$(paired_speed "${fa[@]}" -- "${pa[@]}")
    fi
    if [ -n "$BEFORE" ]; then
        bm=$(printf '%s\n' "${ba[@]}" | median)
        before="  before $bm ($(awk -v f="$bm" -v p="$best" 'BEGIN {printf "%.2f", p / f}'), slow $(slow_runs "$bm" 1 "${ba[@]}"))"
    fi
    slow="$slow/$(slow_runs "$pm" 1 "${pa[@]}")"
    [ -z "$FT" ] || slow="$slow/$(slow_runs "$rm" 1 "${ra[@]}")"
    printf '%-9s %-4s %6s  %10s  %-40s %5s  paired %4s  %7s  usec one-way, %s iterations%s\n' latency "$p" "$s" "$fm" "$peers" "$speed" "$paired" "$slow" "$LAT_ITERS" "$before"
    if [ "${RUN_FIGURES:-0}" = 1 ]; then
        runs_line send-lat "${fa[@]}"
        [ -z "$BEFORE" ] || runs_line before "${ba[@]}"
        runs_line fi_pingpong "${pa[@]}"
        [ -z "$FT" ] || runs_line fi_rdm_pingpong "${ra[@]}"
        rank_line send-lat fi_pingpong "${fa[@]}" -- "${pa[@]}"
        [ -z "$FT" ] || rank_line send-lat fi_rdm_pingpong "${fa[@]}" -- "${ra[@]}"
        pair_line send-lat fi_pingpong "${fa[@]}" -- "${pa[@]}"
        [ -z "$FT" ] || pair_line send-lat fi_rdm_pingpong "${fa[@]}" -- "${ra[@]}"
        [ -z "$FT" ] || pair_line send-lat "better peer" "${fa[@]}" -- "${pa[@]}" -- "${ra[@]}"
        [ -z "$BEFORE" ] || pair_line send-lat before "${fa[@]}" -- "${ba[@]}"
    fi
}

echo "fabdiag $($B --version | awk '{print $2}'), $(date -u +%Y-%m-%d), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: *//p' | head -1), $RUNS alternating runs, medians, $PINNED"
printf '%-9s %-4s %6s  %10s  %-16s %10s  %5s  %5s  %s\n' kind prov size fabdiag peer peer "speed" "slow" "matched settings"
if [ -n "$SIZES" ]; then sizes=$SIZES; elif [ "$QUICK" = 1 ]; then sizes="8 4096"; else sizes="8 64 1024 4096"; fi
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
want latency && for p in $PROVS; do
    for s in $sizes; do
        LAT_ITERS=$(lat_iters "$p" "$s")
        lat_row "$p" "$s"
    done
done
if [ -n "$FT" ] && want rate; then
    for p in $PROVS; do
        for s in $sizes; do
            row "msg rate" "$p" "$s" fabdiag_rate ft_rate fi_rdm_tagged_bw "M msg/s; unidirectional, window $WINDOW, sends injected, each window confirmed by the receiver's answer (fabdiag: empty, fabtests: 4 B); one buffer reused by both"
        done
    done
fi
if [ -n "$FT" ] && want bandwidth; then
    for p in $PROVS; do
        row bandwidth "$p" 65536 fabdiag_bw_both ft_bw fi_rma_bw "Gbit/s one way; both sides write at once (fabdiag -b), window $WINDOW, delivery complete (fi_rma_bw -U); one buffer reused by both"
    done
fi
if want bandwidth && [[ " $PROVS " == *" tcp "* ]]; then
    row bandwidth tcp 65536 fabdiag_bw iperf_bw iperf3 "Gbit/s; unidirectional; write-bw window $WINDOW, delivery complete, one buffer, over tcp;ofi_rxm vs one iperf3 TCP stream"
fi
# Small RMA writes: the originals' writes are delivery complete, which costs
# on tcp; fi_rma_bw as it comes injects them with transmit complete. The
# second row is therefore NOT matched: it shows what the guarantee costs.
if [ -n "$FT" ] && want writes; then
    for p in $PROVS; do
        row writes "$p" 8 fabdiag_writes ft_writes_dc fi_rma_bw "M writes/s one way; both sides write at once (fabdiag -b), window $WINDOW, delivery complete, each completion awaited (fi_rma_bw -U -j 0); one buffer reused by both"
        row writes "$p" 8 fabdiag_writes ft_writes fi_rma_bw "M writes/s one way; both sides write; NOT matched: fabdiag delivery complete (the originals'), fi_rma_bw injected, transmit complete"
    done
fi
