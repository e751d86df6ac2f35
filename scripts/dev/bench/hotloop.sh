#!/usr/bin/env bash
# The fabric driver's own cost per operation, in instructions counted by
# callgrind: the driver runs against a fake provider that completes every
# operation at once (crates/session/src/driver/fake.rs), N and 2N times,
# and the difference is divided by N, so start-up cancels out. Instruction
# counts do not depend on the machine's load, so a regression in the hot
# loop shows here without a fabric. Usage: scripts/dev/bench/hotloop.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH="$HOME/.cargo/bin:$PATH"
N="${1:-100000}"
command -v valgrind >/dev/null || { echo "hotloop.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
bin="$(cargo test --release -q -p fabdiag-session --lib --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "fabdiag_session":
        print(m["executable"])')"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
count() { # test ops -> instructions
    FABDIAG_HOTLOOP_OPS="$2" valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
        "$bin" --ignored --exact "driver::fake::hot_loop_$1" --test-threads=1 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-10s %s\n' loop "instructions per operation (driver + fake provider, $N vs $((2 * N)) operations)"
for t in write send_bw send_lat; do
    a=$(count "$t" "$N")
    b=$(count "$t" $((2 * N)))
    printf '%-10s %s\n' "$t" "$(( (b - a) / N ))"
done
