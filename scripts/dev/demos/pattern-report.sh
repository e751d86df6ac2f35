#!/usr/bin/env bash
# A bisection's report from a fabric with a cut and a bad port (not a
# test: it takes about half a minute). Eight network namespaces on two
# "leaf" bridges (198.18.23.x), every switch port shaped to 100 Mbit/s,
# the spine cable between the leaves to SPINE (default 40mbit) and node
# SLOW's link to SLOW_RATE both ways (default node 6 at 8mbit). Runs three random
# splits (seed 4) with --expect 12.5 (100 Mbit/s) and writes the report
# to DIR (pattern.json, summary.txt, report.html); prints the summary.
# Needs root, iproute2 and a release build.
#   scripts/dev/demos/pattern-report.sh DIR [SWEEP OPTIONS]
set -u
dir=${1:?usage: $0 DIR [SWEEP OPTIONS]}
shift
mkdir -p "$dir"
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pr 198.18.23 8 100mbit 2
spine_rate "${SPINE:-40mbit}"
slow=${SLOW:-6}
# both ways: the switch's port toward it and the node's own eth0
ip netns exec "$sw" tc qdisc replace dev "$(switch_port "$slow")" root tbf rate "${SLOW_RATE:-8mbit}" burst 32kb latency 400ms
ip netns exec "$(node_ns "$slow")" tc qdisc replace dev eth0 root tbf rate "${SLOW_RATE:-8mbit}" burst 32kb latency 400ms
cluster_fabdiag
args=(--coordinator 198.18.23.1:47730 -P tcp -s 65536 -D 4 --pattern bisection --split-by random --splits 3
  --seed 4 --expect 12.5 "$@")
sweep_others "$bin" "${args[@]}"
sweep_lead "$bin" "${args[@]}" --output "$(cd "$dir" && pwd)" --replace
