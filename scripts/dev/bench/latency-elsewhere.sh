#!/usr/bin/env bash
# The latency-floor check on another machine's CPU (e.g. a GPU machine's
# host CPUs), run in a copy of the repository with gpu-kit/lat/ copied into
# its root (scripts/dev/bench/latency-kit.sh builds it on a machine with
# Rust): the machine's CPUs and libfabric, then scripts/dev/bench/bench.sh's latency rows on shm (with
# fabdiag-before, when the kit has one) and tcp against fi_pingpong and
# fi_rdm_pingpong, scripts/dev/bench/slow-mode.sh's count of slow runs, and
# whether fabdiag's helper threads beside its polling thread cost anything
# (place: each side on one CPU, against each side on two, 10 alternating
# runs of shm 8 B send-lat), and scripts/dev/demos/pattern-victim.sh's victim
# latency under load with a CPU for every rank (victim: each rank pinned
# to one of CPUs 6 and up; Reno, a 30 ms spine queue; five runs of 10 s
# steps, then of 3 s steps).
# Each step's output goes to $OUT/STEP.txt as it comes, so a step cut
# short keeps what it printed. Not a test: the figures are the machine's.
#
# usage: [OUT=DIR] [DEADLINE=SECONDS] scripts/dev/bench/latency-elsewhere.sh [STEP...]
#   steps: info shm slow tcp place victim (default: info shm slow tcp place;
#   place and victim both take CPUs 6 and up, so name one of them);
#   DEADLINE (540) caps the whole run, each step cut to what is left of it;
#   SHM_RUNS, TCP_RUNS: alternating runs a row (5 each)
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/fabdiag-latency-out}
mkdir -p "$OUT"
k=$PWD/gpu-kit/lat
[ -x "$k/bin/fabdiag" ] || { echo "latency-elsewhere.sh: no $k/bin/fabdiag (scripts/dev/bench/latency-kit.sh)" >&2; exit 1; }
export PATH=$k/bin:$PATH FABDIAG_BIN=$k/bin/fabdiag CORE_PINGPONG=$k/bin/core-pingpong
# Debian's libfabric, from the kit, for fabdiag and the peers alike; the
# machine's own only where the kit's does not load (its C library older
# than Debian's), and the info step says which ran
if LD_LIBRARY_PATH=$k/lib fi_info --version >/dev/null 2>&1; then
    export LD_LIBRARY_PATH=$k/lib
    LIBFABRIC="Debian's, from the kit"
else
    LIBFABRIC="the machine's own"
fi
end=$(( $(date +%s) + ${DEADLINE:-540} ))
step() { # name command... : runs with what is left of the deadline
    local name=$1 left; shift
    left=$(( end - $(date +%s) ))
    if [ "$left" -lt 20 ]; then echo "$name: skipped, $left s left" | tee -a "$OUT/steps.txt"; return; fi
    local t0=$SECONDS
    timeout "$left" "$@" > "$OUT/$name.txt" 2>&1
    echo "$name: exit $? after $((SECONDS - t0)) s" | tee -a "$OUT/steps.txt"
}
# With 6 CPUs or more the three measuring steps run at once, each on a
# pair of CPUs of its own (slow 0-1, shm 2-3, tcp 4-5) and its own ports:
# the whole check then fits in DEADLINE, and each step still alternates
# its tools under the same neighbours, which is what its ratios compare.
parallel=0
[ "$(nproc)" -ge 6 ] && parallel=1
parallel=${PARALLEL:-$parallel}
measure() { # name cpus port command...
    local name=$1 cpus=$2 port=$3; shift 3
    if [ "$parallel" = 1 ]; then
        BENCH_CPUS=$cpus BENCH_PORT=$port step "$name" "$@" &
    else
        BENCH_PORT=$port step "$name" "$@"
    fi
}
info() {
    echo "libfabric: $LIBFABRIC"; fi_info --version
    uname -r; ldd --version | head -1; nproc
    lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node|L[23] cache|Hypervisor'
    for c in 0 1; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null)"; done
    fi_info -l | tr '\n' ' '; echo
    fabdiag --version
}
place() { # S1 S2 C1 C2: each side on one CPU, then on two (S1,S2 and C1,C2)
    local port=58000 one=() two=()
    lat() { # server-cpus client-cpus
        port=$((port + 1))
        taskset -c "$1" fabdiag send-lat -p "$port" >/dev/null 2>&1 &
        local s=$!
        sleep 0.3
        taskset -c "$2" fabdiag send-lat 127.0.0.1 -p "$port" -P shm -s 8 -n 400000 --warmup 100 --latency-gap 0 --json |
            python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.3f" % (r["mean_ns"]/1000))'
        wait "$s" || true
    }
    for _ in $(seq 10); do
        one+=("$(lat "$1" "$3")")
        two+=("$(lat "$1,$2" "$3,$4")")
    done
    echo "shm 8 B send-lat, one-way usec, 400000 iterations a run, 10 alternating runs"
    echo "server CPU $1, client CPU $3:          ${one[*]}"
    echo "server CPUs $1,$2, client CPUs $3,$4:  ${two[*]}"
}
victim_series() { # on CPUs 6 and up, beside the measuring steps on 0-5
    local cpus=6-$(( $(nproc) - 1 )) secs
    export PATH=$k/sbin:$PATH
    for secs in 10 3; do
        taskset -c "$cpus" env PIN=1 SECS=$secs TCP_CC=reno SPINE_QUEUE=30ms scripts/dev/demos/pattern-victim.sh
    done
}
before=()
[ -x "$k/bin/fabdiag-before" ] && before=(--before "$k/bin/fabdiag-before")
steps=${*:-info shm slow tcp place}
for s in $steps; do
    case "$s" in
        info) info > "$OUT/info.txt" 2>&1 ;;
        shm) measure shm "2 3" 52000 scripts/dev/bench/bench.sh --only latency --provider shm --runs "${SHM_RUNS:-5}" --fabtests "$k/bin" "${before[@]}" ;;
        slow) measure slow "0 1" 56000 scripts/dev/bench/slow-mode.sh --runs 50 --iters 200000 ;;
        tcp) measure tcp "4 5" 54000 scripts/dev/bench/bench.sh --only latency --provider tcp --runs "${TCP_RUNS:-5}" --fabtests "$k/bin" "${before[@]}" ;;
        place) if [ "$(nproc)" -ge 10 ]; then place 6 8 7 9 > "$OUT/place.txt" 2>&1 &
               else echo "place: skipped, needs 10 CPUs" | tee -a "$OUT/steps.txt"; fi ;;
        victim) if [ "$(nproc)" -ge 12 ]; then export -f victim_series; export k; step victim bash -c victim_series &
                else echo "victim: skipped, needs 12 CPUs" | tee -a "$OUT/steps.txt"; fi ;;
        *) echo "latency-elsewhere.sh: unknown step '$s' (info shm slow tcp place victim)" >&2; exit 1 ;;
    esac
done
wait
