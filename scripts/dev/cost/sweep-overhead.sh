#!/usr/bin/env bash
# The sweep's cost beyond the measurements themselves, on this machine:
# N real ranks on loopback (tcp provider, a small write-bw per pair), and
# the coordination simulation with SIM stand-in ranks (each pair test a
# 1 ms pause). Prints the per-round overhead from the sweep's own JSON,
# and the simulation's peak memory (rank 0's records of every pair and
# the report, plus the SIM stand-in ranks' threads; GNU time's %M).
# Usage: scripts/dev/cost/sweep-overhead.sh [N=8] [SIM=1000]
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-8}
SIM=${2:-1000}
BIN=target/release/fabdiag
[ -x "$BIN" ] || cargo build --release -p fabdiag
PORT=$((40000 + RANDOM % 10000))
OUT=$(mktemp -d)
TEST=(-P tcp -s 65536 -n 10 -l 16 --retest 0)
for r in $(seq 1 $((N - 1))); do
    FABDIAG_RANK=$r FABDIAG_SIZE=$N "$BIN" sweep --coordinator 127.0.0.1:$PORT "${TEST[@]}" &
done
FABDIAG_RANK=0 FABDIAG_SIZE=$N "$BIN" sweep --coordinator 127.0.0.1:$PORT "${TEST[@]}" --json > "$OUT/real.json" || true
wait
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "sweep-overhead.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
"$TIME" -f %M -o "$OUT/sim.rss" "$BIN" sweep --simulate "$SIM" --retest 0 --json > "$OUT/sim.json" || true
python3 - "$OUT" "$N" "$SIM" <<'PY'
import json, sys, statistics as st
out, n, sim = sys.argv[1], sys.argv[2], sys.argv[3]
for name, label in (("real", f"{n} ranks, loopback tcp, write-bw 10 x 16 x 64 KiB"), ("sim", f"{sim} simulated ranks, 1 ms pair tests")):
    d = json.load(open(f"{out}/{name}.json"))
    o = d["overhead"]; steps = o["steps"]
    print(f"{label}: {len(steps)} rounds, {sum(1 for p in d['pairs'] if p.get('value') is not None)} pairs measured")
    print(f"  join {o['join_s']:.2f} s; round wall {st.mean(s['wall_s'] for s in steps)*1e3:.1f} ms mean;"
          f" beyond the measurement: first round {o['first_round_s']*1e3:.0f} ms (endpoints opened),"
          f" later rounds {o['round_mean_s']*1e3:.1f} ms mean, {o['round_max_s']*1e3:.1f} ms max;"
          f" coordinator busy {o['coordinator_mean_s']*1e3:.2f} ms per round;"
          f" endpoint opens {o['endpoint_opens']} ({o['endpoint_open_s']:.2f} s)")
pairs = int(sim) * (int(sim) - 1) // 2
kb = int(open(f"{out}/sim.rss").read().split()[-1])
print(f"{sim} simulated ranks: peak memory {kb / 1024:.0f} MiB, {kb * 1024 / pairs:.0f} bytes per pair")
PY
rm -rf "$OUT"
