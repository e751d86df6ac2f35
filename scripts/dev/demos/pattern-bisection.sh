#!/usr/bin/env bash
# How repeatable a bisection's aggregate is (not a test: it takes about
# two minutes). Eight network namespaces on two "leaf" bridges (198.18.22.x),
# every switch port shaped to 100 Mbit/s, the one "spine" cable between
# the leaves shaped to SPINE (default 40mbit, 5 MB/s); RUNS bisections by
# rank (default 5; ranks 0-3 against 4-7, so every flow crosses the
# spine), then one with the spine at 10 Gbit/s as the control. Prints each
# run's aggregate, their mean, and the largest distance from it as a
# share of the mean. Needs root, iproute2 and a release build.
#   scripts/dev/demos/pattern-bisection.sh [SWEEP OPTIONS]   (default -s 65536 -D 4)
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pb 198.18.22 8 100mbit 2
spine=${SPINE:-40mbit}
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(-s 65536 -D 4)
cluster_fabdiag
port=47710
# one bisection: its aggregate in MB/s on stdout
bisect() {
  port=$((port + 1))
  local args=(--coordinator "198.18.22.1:$port" -P tcp "${opts[@]}" --pattern bisection --split-by rank)
  sweep_others "$bin" "${args[@]}"
  sweep_lead "$bin" "${args[@]}" --json 2>"$out/lead.err" >"$out/doc.json"
  python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["splits"][0]["aggregate"])' "$out/doc.json" ||
    { cat "$out/lead.err" >&2; exit 1; }
}
spine_rate "$spine"
echo "spine $spine, ports 100mbit, fabdiag sweep ${opts[*]} --pattern bisection --split-by rank"
values=()
for run in $(seq 1 "${RUNS:-5}"); do
  v=$(bisect)
  values+=("$v")
  echo "run $run: aggregate $v MB/s"
done
spread "${values[@]}"
spine_rate 10gbit
echo "control, spine 10gbit: aggregate $(bisect) MB/s"
