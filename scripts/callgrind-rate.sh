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
# usage: scripts/callgrind-rate.sh FABTESTS_BIN_DIR [provider (shm)] [size (64)] [OUT (/tmp/fabdiag-cg-rate)]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
FT=${1:?usage: scripts/callgrind-rate.sh FABTESTS_BIN_DIR [provider] [size] [OUT]}
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

# per-function instructions per message: (run N2 - run N1) / (N2 - N1)
per_message() { # tag
    for n in $N1 $N2; do
        callgrind_annotate --threshold=100 --auto=no "$OUT/$1.$n" |
            awk -v n="$n" '/^ *[0-9,]+ +\( *[0-9.]+%\) +/ {v=$1; gsub(",", "", v); sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, ""); print n "\t" v "\t" $0}'
    done | awk -F'\t' -v a="$N1" -v b="$N2" '
        { if ($1 == a) x[$3] = $2; else y[$3] = $2; k[$3] = 1 }
        END { for (f in k) { d = (y[f] - x[f]) / (b - a); if (d >= 0.5 || d <= -0.5) printf "%8.1f\t%s\n", d, f } }' |
        sort -rn >"$OUT/$1.per-message"
}

for side in send recv; do
    for n in $N1 $N2; do fab "$side" "$n"; ft "$side" "$n"; done
    per_message "fabdiag.$side"
    per_message "tagged_bw.$side"
done
sum() { awk -F'\t' -v re="$2" '$2 ~ re && $2 !~ /PROGRAM TOTALS/ {s += $1} END {printf "%7.0f", s}' "$OUT/$1.per-message"; }
tot() { awk -F'\t' '$2 ~ /PROGRAM TOTALS/ {printf "%7.0f", $1}' "$OUT/$1.per-message"; }
echo "instructions per message, $P, $S B, window $W (callgrind, $N2 - $N1 messages; details in $OUT/*.per-message)"
printf '%-22s %8s %8s %8s\n' "" total "own+libc" libfabric
for side in send recv; do
    printf '%-22s %8s %8s %8s\n' "fabdiag $side" "$(tot fabdiag.$side)" "$(sum fabdiag.$side 'fabdiag|libc')" "$(sum fabdiag.$side libfabric)"
    printf '%-22s %8s %8s %8s\n' "fi_rdm_tagged_bw $side" "$(tot tagged_bw.$side)" "$(sum tagged_bw.$side 'fi_rdm_tagged_bw|libc|libfabtests')" "$(sum tagged_bw.$side libfabric)"
done
