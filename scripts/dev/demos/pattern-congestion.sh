#!/usr/bin/env bash
# How repeatable an incast's and an all-to-all's figures are (not a test:
# it takes about six minutes). Four network namespaces on one bridge
# (198.18.23.x), every switch port shaped to 100 Mbit/s (12.5 MB/s).
#  - incast into rank 0, its switch port shaped to 40 Mbit/s (5 MB/s) and
#    node 3's own cable out to 8 Mbit/s (1 MB/s), read-bw (the receiver
#    reads, so its figures are what landed): each run's aggregate,
#    Jain's index and starved senders; then the control, rank 0's port at
#    the others' rate.
#  - all-to-all, the link between nodes 1 and 2 shaped to 20 Mbit/s
#    (2.5 MB/s) each way: each run's mean aggregate a phase and each
#    phase's slowest flow.
# RUNS runs of each (default 5), their mean and largest distance from it.
# With DIR, the last run of each leaves its --output folder there
# (incast/, alltoall/). Needs root, iproute2 and a release build.
#   scripts/dev/demos/pattern-congestion.sh [DIR]
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pc 198.18.23 4 100mbit
keep=${1:-}
cluster_fabdiag
port=47730
# run NAME ARGS...: one pattern run, its document in $out/NAME.json (and,
# with DIR, its folder in DIR/NAME)
run() {
  local name=$1
  shift
  port=$((port + 1))
  local args=(--coordinator "198.18.23.1:$port" -P tcp -s 65536 "$@")
  local folder=()
  [ -n "$keep" ] && folder=(--output "$keep/$name" --replace)
  sweep_others "$bin" "${args[@]}"
  sweep_lead "$bin" "${args[@]}" "${folder[@]}" --json 2>"$out/lead.err" >"$out/$name.json" ||
    { cat "$out/lead.err" >&2; exit 1; }
}
# field PYTHON-EXPRESSION NAME: of the document d
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$out/$2.json"; }

shape "$sw" "$(switch_port 0)" 40mbit
shape "$(node_ns 3)" eth0 8mbit
echo "incast into rank 0: its port 40mbit, node 3 out at 8mbit, ports 100mbit; fabdiag sweep --tool read-bw -s 65536 -l 16 -D 4 --pattern incast --receivers 0"
values=()
for i in $(seq 1 "${RUNS:-5}"); do
  run incast --tool read-bw -l 16 -D 4 --pattern incast --receivers 0
  v=$(field '"%.2f" % d["incasts"][0]["aggregate"]' incast)
  values+=("$v")
  echo "run $i: aggregate $v MB/s, one sender alone $(field '"%.2f" % d["incasts"][0]["single"]["aggregate"]' incast) MB/s, Jain's index $(field '"%.2f" % d["incasts"][0]["jain"]' incast), starved $(field 'd["incasts"][0]["starved"]' incast)"
done
spread "${values[@]}"
shape "$sw" "$(switch_port 0)" 100mbit
unshape "$(node_ns 3)" eth0
run control --tool read-bw -l 16 -D 4 --pattern incast --receivers 0
echo "control, rank 0's port 100mbit, node 3 unshaped: aggregate $(field '"%.2f" % d["incasts"][0]["aggregate"]' control) MB/s"

slow_link 1 2 20mbit
echo "all-to-all: link 1-2 at 20mbit each way, ports 100mbit; fabdiag sweep -s 65536 -D 3 --pattern alltoall"
values=()
for i in $(seq 1 "${RUNS:-5}"); do
  run alltoall -D 3 --pattern alltoall
  v=$(field '"%.2f" % d["alltoall"]["mean_aggregate"]' alltoall)
  values+=("$v")
  echo "run $i: $v MB/s a phase; slowest by phase $(field '" ".join("%s->%s" % tuple(p["slowest"]) for p in d["phases"])' alltoall)"
done
spread "${values[@]}"
