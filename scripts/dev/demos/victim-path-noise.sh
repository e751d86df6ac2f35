#!/usr/bin/env bash
# How far a latency victim's idle figure moves from run to run because of
# the path, not of fabdiag: pattern-victim.sh's fabric (six namespaces on
# two leaf bridges, ports at 100 Mbit/s, the spine at 40 Mbit/s with a
# 30 ms queue) with no load, and between node 0 and node 3 (the victim's
# pair, across the spine) RUNS alternating runs (default 5) of
#   - write-lat as the victim runs alone (8 B, its 1 ms pause, SECS
#     seconds, default 10): p50 and p99;
#   - send-lat without a pause, ITERS iterations (default 100000): the
#     mean one way;
#   - Debian's fi_pingpong over tcp (-e rdm), the same size and
#     iterations: its usec/xfer;
# then each figure's mean and largest distance from it. If a plain
# ping-pong tool moves by as much as fabdiag between runs over the same
# path, the spread is the machine's. Not a test. PIN=1: node 0's processes
# on the first CPU the script may use, node 3's on the fourth (rank_cpu,
# modulo the CPUs); FABDIAG_BIN: another build. Needs root, iproute2 and
# fi_pingpong (libfabric-bin).
#   [RUNS=5] [SECS=10] [ITERS=100000] [PIN=1] scripts/dev/demos/victim-path-noise.sh
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
. "$here/scripts/dev/lib/bench-common.sh"
command -v fi_pingpong >/dev/null || { echo "victim-path-noise.sh: needs fi_pingpong (apt-get install libfabric-bin)" >&2; exit 1; }
cluster_up vn 198.18.26 6 100mbit 2
cluster_fabdiag
spine_rate 40mbit 30ms
runs=${RUNS:-5} secs=${SECS:-10} iters=${ITERS:-100000}
client=(ip netns exec "$(node_ns 0)") server=(ip netns exec "$(node_ns 3)")
# shellcheck disable=SC2207
client+=($(rank_cpu 0)) server+=($(rank_cpu 3))
dst=198.18.26.4
port=47900
# fab TOOL ARGS... : one fabdiag run from node 0 to node 3, its first
# result's JSON object on stdout
fab() {
  local tool=$1
  shift
  port=$((port + 1))
  "${server[@]}" "$bin" "$tool" -p "$port" >/dev/null 2>&1 &
  local s=$!
  sleep 0.3
  "${client[@]}" "$bin" "$tool" "$dst" -p "$port" -P tcp "$@" --json |
    python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["results"][0]))'
  wait "$s" || true
}
pingpong() {
  port=$((port + 1))
  SRV="${server[*]}" CLI="${client[*]}" fi_pingpong_lat tcp 8 "$iters" "$port" "$dst"
}
p50=() p99=() mean=() pp=()
echo "node 0 -> node 3 across the spine (40mbit, queue 30ms), no load; write-lat -D $secs (1 ms pause), send-lat and fi_pingpong -I $iters without one${PIN:+; pinned}"
for r in $(seq "$runs"); do
  cold_tcp
  w=$(fab write-lat -D "$secs")
  l=$(fab send-lat -n "$iters" --latency-gap 0)
  p=$(pingpong)
  p50+=("$(python3 -c 'import json, sys; print("%.1f" % (json.loads(sys.argv[1])["p50_ns"] / 1000))' "$w")")
  p99+=("$(python3 -c 'import json, sys; print("%.1f" % (json.loads(sys.argv[1])["p99_ns"] / 1000))' "$w")")
  mean+=("$(python3 -c 'import json, sys; print("%.2f" % (json.loads(sys.argv[1])["mean_ns"] / 1000))' "$l")")
  pp+=("${p:-nan}")
  echo "run $r: write-lat p50 ${p50[-1]} us p99 ${p99[-1]} us; send-lat ${mean[-1]} us; fi_pingpong ${pp[-1]} us"
done
echo "write-lat alone p50: $(UNIT=us spread "${p50[@]}")"
echo "write-lat alone p99: $(UNIT=us spread "${p99[@]}")"
echo "send-lat mean:       $(UNIT=us spread "${mean[@]}")"
echo "fi_pingpong:         $(UNIT=us spread "${pp[@]}")"
