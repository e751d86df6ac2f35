#!/usr/bin/env bash
# Where a latency victim's loaded time goes on this machine: one run of
# scripts/dev/demos/pattern-victim.sh's set-up (six ranks on two leaves, victim
# write-lat 0 -> 3, a bisection 1 2 | 4 5 as the load) with every thread
# of ranks 0, 1 and 3 sampled from /proc/PID/task/TID/schedstat every
# 0.2 s: per victim rank, the share of a CPU its busiest thread ran and
# the share it waited on a run queue, alone (rank 1 idle) and loaded
# (rank 1 busy), beside the victim's figures. Not a test.
#   SPINE=40mbit SECS=5 scripts/dev/demos/pattern-victim-sched.sh
# Needs root, iproute2 and a release build (or FABDIAG_BIN).
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pw 198.18.25 6 100mbit 2
cluster_fabdiag
spine_rate "${SPINE:-40mbit}"
args=(--coordinator "198.18.25.1:47799" -P tcp -s 65536 -D "${SECS:-5}" --pattern bisection --split-by rank
  --victim write-lat --victim-ranks 0,3)
sweep_others "$bin" "${args[@]}"
samples=$out/sched
# until rank 0 has ended (sweep_lead waits for every child of this shell)
(
  until [ -n "$(ip netns pids "$(node_ns 0)")" ]; do sleep 0.05; done
  while [ -n "$(ip netns pids "$(node_ns 0)")" ] && sleep 0.2; do
    now=$(date +%s.%N)
    for r in 0 1 3; do
      for p in $(ip netns pids "$(node_ns "$r")"); do
        for t in /proc/"$p"/task/*; do
          s=$(cat "$t/schedstat" 2>/dev/null) && echo "$now $r ${t##*/} $s"
        done
      done
    done
  done >"$samples"
) &
sweep_lead "$bin" "${args[@]}" --json 2>"$out/lead.err" >"$out/doc.json" || { cat "$out/lead.err" >&2; exit 1; }
echo "spine ${SPINE:-40mbit}, ports 100mbit, -D ${SECS:-5}"
python3 - "$samples" "$out/doc.json" <<'PY'
import json, sys
from collections import defaultdict
series = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 6:
        series[(f[1], f[2])].append((float(f[0]), int(f[3]), int(f[4])))
def rates(v):  # (start time, cpu share, run-queue share) per interval
    return [(a[0], (b[1] - a[1]) / 1e9 / (b[0] - a[0]), (b[2] - a[2]) / 1e9 / (b[0] - a[0])) for a, b in zip(v, v[1:])]
load = defaultdict(float)  # rank 1's cpu share per sample time
for (r, _), v in series.items():
    if r == "1":
        for t, cpu, _ in rates(v):
            load[round(t, 3)] += cpu
for rank in ("0", "3"):
    busiest = max((v for (r, _), v in series.items() if r == rank), key=lambda v: v[-1][1] - v[0][1])
    windows = {"alone": [], "loaded": []}
    for t, cpu, wait in rates(busiest):
        if cpu < 0.05:
            continue
        windows["loaded" if load.get(round(t, 3), 0) > 0.05 else "alone"].append((cpu, wait))
    for name, w in windows.items():
        if w:
            print("victim rank %s %-6s: ran %3.0f %% of a CPU, waited for one %3.0f %% (%d samples)"
                  % (rank, name, 100 * sum(c for c, _ in w) / len(w), 100 * sum(x for _, x in w) / len(w), len(w)))
v = json.load(open(sys.argv[2]))["victim"]
a, l = v["alone"]["lat"], v["loaded"][0]["lat"]
print("victim alone p50 %.0f us p99 %.0f us; loaded p50 %.0f us p99 %.0f us" % (a["p50_us"], a["p99_us"], l["p50_us"], l["p99_us"]))
PY
