#!/usr/bin/env bash
# How repeatable a victim's figures are (not a test: it takes about three
# minutes). Six network namespaces on two "leaf" bridges (198.18.24.x),
# ports at 100 Mbit/s, the spine between the leaves at 40 Mbit/s
# (5 MB/s); the victim write-lat (or VICTIM, e.g. write-bw) 0 -> 3 across
# the spine, a bisection of ranks 1 2 | 4 5 as the load (both flows
# across the spine). RUNS runs (default 5) of SECS seconds a step
# (default 3): the victim's p50 and p99 (a bandwidth victim's MB/s) alone
# and beside the load; then the control, the spine at 10 Gbit/s. Each
# run starts with the nodes' TCP metrics flushed, as the first.
# SPINE_QUEUE: how much traffic the spine's queue holds before it drops
# (default 400ms, far more than the load's TCP flows put in it);
# SPINE_FAIR=1: the spine shares its rate out sender by sender (round
# robin, spine_fair) instead of through one first-come queue; TCP_CC: the
# nodes' TCP congestion control (default: the kernel's; the header names
# it); POLL=yield: every rank polls with --poll yield (for fewer cores
# than busy ranks); PIN=1: each rank on one CPU, rank modulo the CPUs
# the script may run on (rank_cpu); LIST: the load's -l (and a bandwidth
# victim's: keep an iteration short against SECS). With DIR, the last shaped run leaves its
# --output folder there. Needs root, iproute2 and a release build (or
# FABDIAG_BIN, another build: e.g. one copied to a machine with more
# cores than ranks).
#   [SECS=3] [RUNS=5] [VICTIM=write-lat] [LIST=256] [SPINE_QUEUE=400ms | SPINE_FAIR=1] [TCP_CC=reno] [POLL=yield] [PIN=1] \
#     scripts/dev/demos/pattern-victim.sh [DIR]
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pv 198.18.24 6 100mbit 2
cluster_fabdiag
[ -n "${TCP_CC:-}" ] && tcp_cc "$TCP_CC"
port=47750
keep=${1:-}
# one run: the victim's figures, alone then loaded (ARGS: more for rank 0)
victim() {
  port=$((port + 1))
  # every run as cold as the first (see cold_tcp)
  cold_tcp
  local args=(--coordinator "198.18.24.1:$port" -P tcp -s 65536 ${LIST:+-l "$LIST"} -D "${SECS:-3}" --pattern bisection --split-by rank
    --victim "${VICTIM:-write-lat}" --victim-ranks 0,3 ${POLL:+--poll "$POLL"})
  sweep_others "$bin" "${args[@]}"
  sweep_lead "$bin" "${args[@]}" "$@" --json 2>"$out/lead.err" >"$out/doc.json" || { cat "$out/lead.err" >&2; exit 1; }
  python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["victim"]
if "lat" not in v["alone"]:
    a, l = v["alone"]["value"], v["loaded"][0]["value"]
    print("alone %.2f MB/s; loaded %.2f MB/s (%.2f of alone)" % (a, l, l / a))
    sys.exit()
a, l = v["alone"]["lat"], v["loaded"][0]["lat"]
print("alone p50 %.0f us p99 %.0f us; loaded p50 %.0f us p99 %.0f us (p99 %.0f x)" % (a["p50_us"], a["p99_us"], l["p50_us"], l["p99_us"], l["p99_us"] / a["p99_us"]))
' "$out/doc.json"
}
if [ -n "${SPINE_FAIR:-}" ]; then
  spine_fair 40mbit
  spine="spine 40mbit (shared sender by sender)"
else
  spine_rate 40mbit "${SPINE_QUEUE:-400ms}"
  spine="spine 40mbit (queue ${SPINE_QUEUE:-400ms})"
fi
echo "$spine, ports 100mbit, TCP $(node_cc); fabdiag sweep -s 65536 -D ${SECS:-3}${LIST:+ -l $LIST} --pattern bisection --split-by rank --victim ${VICTIM:-write-lat} --victim-ranks 0,3${POLL:+ --poll $POLL}${PIN:+; rank r on the r-th of CPUs $(taskset -pc $$ | sed 's/.*: //')}"
folder=()
[ -n "$keep" ] && folder=(--output "$keep" --replace)
for i in $(seq 1 "${RUNS:-5}"); do echo "run $i: $(victim "${folder[@]}")"; done
spine_rate 10gbit
echo "control, spine 10gbit: $(victim)"
