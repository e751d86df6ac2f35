#!/usr/bin/env bash
# Instructions per message of a message-rate run on a real provider:
# fabdiag send-bw against fabtests' fi_rdm_tagged_bw (same provider, size
# and window), the sender and the receiver each measured under callgrind
# in its own run while the other side runs normally. Two run lengths per
# side, and the difference divided by the extra messages, so start-up and
# tear-down cancel. The side that spends more per message sets the rate.
# Waiting is a busy poll, so the totals include empty polls (the side
# under callgrind is the slow one, so it rarely waits); the per-function
# lines saved in OUT are the stable part. Not a test.
#
# usage: scripts/dev/bench/callgrind-rate.sh FABTESTS_BIN_DIR [provider (shm)] [size (64)] [OUT (/tmp/fabdiag-cg-rate)]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH="$HOME/.cargo/bin:$PATH"
FT=${1:?usage: scripts/dev/bench/callgrind-rate.sh FABTESTS_BIN_DIR [provider] [size] [OUT]}
P=${2:-shm}
S=${3:-64}
OUT=${4:-/tmp/fabdiag-cg-rate}
W=64
B=${FABDIAG_BIN:-target/release/fabdiag}
[ -n "${FABDIAG_BIN:-}" ] || cargo build --release -q
command -v valgrind >/dev/null || { echo "callgrind-rate.sh: needs valgrind" >&2; exit 1; }
[ -x "$FT/fi_rdm_tagged_bw" ] || { echo "callgrind-rate.sh: no fi_rdm_tagged_bw in $FT" >&2; exit 1; }
mkdir -p "$OUT"
N1=64000
N2=128000
port=$((45000 + RANDOM % 2000))
CG="valgrind --tool=callgrind --callgrind-out-file"

fab() { # side messages
    port=$((port + 1))
    local srv="" cli=""
    [ "$1" = recv ] && srv="$CG=$OUT/fabdiag.recv.$2"
    [ "$1" = send ] && cli="$CG=$OUT/fabdiag.send.$2"
    taskset -c 0 timeout 300 $srv "$B" send-bw -p "$port" >/dev/null 2>&1 &
    local s=$!
    sleep 1
    taskset -c 1 timeout 300 $cli "$B" send-bw 127.0.0.1 -p "$port" -P "$P" -s "$S" -l "$W" -n $(($2 / W)) >/dev/null 2>&1
    wait "$s" || true
}

ft() { # side messages
    port=$((port + 1))
    local srv="" cli=""
    [ "$1" = recv ] && srv="$CG=$OUT/tagged_bw.recv.$2"
    [ "$1" = send ] && cli="$CG=$OUT/tagged_bw.send.$2"
    taskset -c 0 timeout 300 $srv "$FT/fi_rdm_tagged_bw" -p "$P" -S "$S" -I "$2" -W "$W" -E="$port" >/dev/null 2>&1 &
    local s=$!
    sleep 1
    taskset -c 1 timeout 300 $cli "$FT/fi_rdm_tagged_bw" -p "$P" -S "$S" -I "$2" -W "$W" -E="$port" -B $((port + 3000)) 127.0.0.1 >/dev/null 2>&1
    wait "$s" || true
}

. scripts/dev/lib/callgrind-common.sh

for side in send recv; do
    for n in $N1 $N2; do fab "$side" "$n"; ft "$side" "$n"; done
    per_unit "fabdiag.$side" per-message
    per_unit "tagged_bw.$side" per-message
done
echo "instructions per message, $P, $S B, window $W (callgrind, $N2 - $N1 messages; details in $OUT/*.per-message)"
printf '%-22s %8s %8s %8s\n' "" total "own+libc" libfabric
for side in send recv; do
    printf '%-22s %8s %8s %8s\n' "fabdiag $side" "$(tot "$OUT/fabdiag.$side.per-message")" "$(sum "$OUT/fabdiag.$side.per-message" 'fabdiag|libc')" "$(sum "$OUT/fabdiag.$side.per-message" libfabric)"
    printf '%-22s %8s %8s %8s\n' "fi_rdm_tagged_bw $side" "$(tot "$OUT/tagged_bw.$side.per-message")" "$(sum "$OUT/tagged_bw.$side.per-message" 'fi_rdm_tagged_bw|libc|libfabtests')" "$(sum "$OUT/tagged_bw.$side.per-message" libfabric)"
done
