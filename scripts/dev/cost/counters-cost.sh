#!/usr/bin/env bash
# What reading the NIC counters costs a pair test: RUNS runs of
# `fabdiag TOOL --local -P PROVIDER -n ITERS --json` (default write-bw over
# tcp, 20 iterations: a short test, where the cost weighs most), each
# side's counters read per reading and the time both its readings took
# (read_us, from the JSON), against the whole command's wall time.
#
#   scripts/dev/cost/counters-cost.sh [RUNS] [TOOL] [PROVIDER] [ITERS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
runs=${1:-20} tool=${2:-write-bw} prov=${3:-tcp} iters=${4:-20}
bin=${FABDIAG:-target/release/fabdiag}
echo "$tool --local -P $prov -n $iters, $runs runs, on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
for _ in $(seq "$runs"); do
  t0=$(date +%s%N)
  doc=$("$bin" "$tool" --local -P "$prov" -n "$iters" --json)
  t1=$(date +%s%N)
  echo "$doc" | python3 -c "
import json, sys
d = json.load(sys.stdin)['counters']
print(d['local'].get('counters_read', 0), d['local'].get('read_us', 0), d['peer'].get('read_us', 0), ($t1 - $t0) / 1000)"
done | python3 -c "
import statistics as st, sys
rows = [list(map(float, l.split())) for l in sys.stdin]
n = int(rows[0][0])
client = st.median(r[1] for r in rows); server = st.median(r[2] for r in rows)
wall = st.median(r[3] for r in rows)
print(f'counters per reading:        {n}')
print(f'client, both readings:       {client:.0f} us (median)')
print(f'server, both readings:       {server:.0f} us (median)')
print(f'whole command:               {wall / 1000:.0f} ms (median)')
print(f'reading, share of the test:  {max(client, server) / wall * 100:.2f} % (the sides read at the same time)')
"
