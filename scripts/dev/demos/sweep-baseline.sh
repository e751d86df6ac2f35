#!/usr/bin/env bash
# shellcheck disable=SC2154  # nodes and out are set by cluster_up (netns-cluster.sh)
# What --baseline finds that a sweep alone cannot (not a test: about a
# minute). N network namespaces (default 4) on a bridge, 198.18.22.x; every
# node sends at 100 Mbit/s (htb on its own interface), except that nodes 1
# and 2 send to each other at FAST (default 200mbit), as a shorter path
# would. A first sweep records that as the baseline. Then the link 1-2 is
# set to 100 Mbit/s like every other and a second sweep runs against the
# first: its figure is now the median, so no outlier, but half of its own
# earlier one. Prints both reports. Needs root, iproute2 and a release
# build.
#   scripts/dev/demos/sweep-baseline.sh [SWEEP OPTIONS]   (default -s 65536 -D 2)
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up bl 198.18.22 "${N:-4}"
fast=${FAST:-200mbit}
shape() { ip netns exec "$(node_ns "$1")" tc "${@:2}" || exit 1; }
for i in $(seq 0 $((nodes - 1))); do
  shape "$i" qdisc add dev eth0 root handle 1: htb default 10
  shape "$i" class add dev eth0 parent 1: classid 1:10 htb rate 100mbit
done
for pair in "1 2" "2 1"; do
  from=${pair% *} to=${pair#* }
  shape "$from" class add dev eth0 parent 1: classid 1:20 htb rate "$fast"
  shape "$from" filter add dev eth0 parent 1: protocol ip u32 match ip dst "198.18.22.$((to + 1))/32" flowid 1:20
done
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(-s 65536 -D 2)
bin=$here/target/release/fabdiag
args=(--coordinator 198.18.22.1:47800 -P tcp "${opts[@]}")
echo "== the baseline: link 1-2 at $fast, every other at 100mbit"
sweep_others "$bin" "${args[@]}"
sweep_lead "$bin" "${args[@]}" --output "$out/base"
for n in 1 2; do shape "$n" class change dev eth0 parent 1: classid 1:20 htb rate 100mbit; done
echo "== now: link 1-2 at 100mbit like every other, against the baseline"
sweep_others "$bin" "${args[@]}"
sweep_lead "$bin" "${args[@]}" --baseline "$out/base"
