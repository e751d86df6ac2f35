#!/usr/bin/env bash
# Instructions per round trip on a real provider, fabdiag send-lat's client
# against fi_pingpong's, each under callgrind against a normal server (or,
# with SIDE=server, each server under callgrind against a normal client,
# whose echo then finds the message waiting at nearly every poll): two
# run lengths, and the difference divided by the extra iterations, so
# start-up and tear-down cancel. Printed per library (the tool itself with
# libc, and libfabric). Waiting for the echo is a busy poll, so the totals
# include a varying number of empty polls; the per-function lines (saved in
# OUT) are the stable part, and so are the instructions per call of the
# send, the receive's post and the poll (scripts/dev/lib/callgrind-calls.py),
# printed last. FABTESTS=DIR (fabtests' binaries,
# scripts/dev/support/fabtests-build.sh) adds fi_rdm_pingpong, counted the same
# way. Not a test.
#
# usage: [SIDE=client|server] [FABTESTS=DIR] scripts/dev/bench/callgrind-pingpong.sh [provider (shm)] [size (8)] [OUT dir (/tmp/fabdiag-cg)]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH="$HOME/.cargo/bin:$PATH"
P=${1:-shm}
S=${2:-8}
OUT=${3:-/tmp/fabdiag-cg}
B=${FABDIAG_BIN:-target/release/fabdiag}
SIDE=${SIDE:-client}
[ -n "${FABDIAG_BIN:-}" ] || cargo build --release -q
command -v valgrind >/dev/null || { echo "callgrind-pingpong.sh: needs valgrind" >&2; exit 1; }
mkdir -p "$OUT"
N1=4000
N2=8000
port=$((43000 + RANDOM % 2000))

# vg TAG N: valgrind's command line for one side's run, or nothing where
# this side runs as it is (SIDE says which side is watched)
vg() { echo "valgrind --tool=callgrind --callgrind-out-file=$OUT/$1.$2"; }
if [ "$SIDE" = server ]; then
    SRV_VG=vg CLI_VG=: WAIT=3
else
    SRV_VG=: CLI_VG=vg WAIT=0.4
fi

fab() { # n
    port=$((port + 1))
    # shellcheck disable=SC2046
    taskset -c 0 $($SRV_VG fabdiag "$1") "$B" send-lat -p "$port" >/dev/null 2>&1 &
    local s=$!
    sleep "$WAIT"
    # shellcheck disable=SC2046
    taskset -c 1 $($CLI_VG fabdiag "$1") \
        "$B" send-lat 127.0.0.1 -p "$port" -P "$P" -s "$S" -n "$1" --latency-gap 0 >/dev/null 2>&1
    wait "$s" || true
}

pp() { # n
    port=$((port + 1))
    # shellcheck disable=SC2046
    taskset -c 0 timeout 120 $($SRV_VG pingpong "$1") fi_pingpong -p "$P" -e rdm -S "$S" -I "$1" -B "$port" >/dev/null 2>&1 &
    local s=$!
    sleep "$WAIT"
    # shellcheck disable=SC2046
    taskset -c 1 $($CLI_VG pingpong "$1") \
        fi_pingpong -p "$P" -e rdm -S "$S" -I "$1" -P "$port" 127.0.0.1 >/dev/null 2>&1
    wait "$s" || true
}

rdm() { # n: fabtests' fi_rdm_pingpong (its out-of-band port, the server's
    # provider port and the client's: three ports, none of them the next run's)
    local oob=$((port + 1)) sp=$((port + 2)) src=$((port + 3))
    port=$src
    # shellcheck disable=SC2046
    taskset -c 0 timeout 120 $($SRV_VG rdm "$1") "$FABTESTS/fi_rdm_pingpong" -p "$P" -S "$S" -I "$1" -E="$oob" -B "$sp" >/dev/null 2>&1 &
    local s=$!
    sleep "$WAIT"
    # shellcheck disable=SC2046
    taskset -c 1 $($CLI_VG rdm "$1") \
        "$FABTESTS/fi_rdm_pingpong" -p "$P" -S "$S" -I "$1" -E="$oob" -P "$sp" -B "$src" 127.0.0.1 >/dev/null 2>&1
    wait "$s" || true
}

. scripts/dev/lib/callgrind-common.sh

fab $N1; fab $N2; pp $N1; pp $N2
per_unit fabdiag per-iteration
per_unit pingpong per-iteration
if [ -n "${FABTESTS:-}" ]; then
    rdm $N1; rdm $N2
    per_unit rdm per-iteration
fi
echo "instructions per round trip, $SIDE side, $P, $S B (callgrind, $N2 - $N1 iterations; details in $OUT/*.per-iteration)"
printf '%-12s %8s %8s %8s\n' "" total "own+libc" libfabric
printf '%-12s %8s %8s %8s\n' fabdiag "$(tot "$OUT/fabdiag.per-iteration")" "$(sum "$OUT/fabdiag.per-iteration" 'fabdiag|libc')" "$(sum "$OUT/fabdiag.per-iteration" libfabric)"
printf '%-12s %8s %8s %8s\n' fi_pingpong "$(tot "$OUT/pingpong.per-iteration")" "$(sum "$OUT/pingpong.per-iteration" 'fi_pingpong|libc')" "$(sum "$OUT/pingpong.per-iteration" libfabric)"
[ -z "${FABTESTS:-}" ] ||
    printf '%-12s %8s %8s %8s\n' fi_rdm_pingpong "$(tot "$OUT/rdm.per-iteration")" "$(sum "$OUT/rdm.per-iteration" 'fi_rdm_pingpong|libc')" "$(sum "$OUT/rdm.per-iteration" libfabric)"
echo "instructions per call on fabdiag's $SIDE, inclusive ($OUT/fabdiag.$N2): the send, the receive's post, the CQ poll"
scripts/dev/lib/callgrind-calls.py "$OUT/fabdiag.$N2" 'FabricDriver<W>::post$|::send_prepared$|::recv$|::recv_prepared$|Endpoint>::poll$|^fdg_cq_read$'
