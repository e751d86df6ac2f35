#!/usr/bin/env bash
# How a lossy link shows in a sweep (not a test: it takes about a
# minute). N network namespaces (default 3) on a bridge, 198.18.21.x,
# every switch port shaped to 100 Mbit/s; nftables drops LOSS per
# thousand (default 20, i.e. 2 %; 1000 drops all) of the packets between
# node 1 and node 2, each way. Three ranks keep one pair test at a time, so two
# busy-polling processes share this machine's CPUs and no latency
# figure comes from waiting for a CPU. Prints rank 0's report and when
# each rank ended. Needs root, iproute2, nftables (apt-get install
# nftables) and a release build.
#   scripts/dev/demos/sweep-lossy-link.sh [SWEEP OPTIONS]   (default -s 65536 -D 2)
#   scripts/dev/demos/sweep-lossy-link.sh --lat -s 8 -n 2000
set -u
command -v nft >/dev/null || { echo "needs nft: apt-get install nftables" >&2; exit 1; }
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up ls 198.18.21 "${N:-3}" 100mbit
loss=${LOSS:-20}
if [ "$loss" -ge 1000 ]; then drop=(drop); else drop=(numgen random mod 1000 '<' "$loss" drop); fi
for pair in "1 2" "2 1"; do
  from=${pair% *} to=${pair#* }
  n=$(node_ns "$from")
  { ip netns exec "$n" nft add table ip loss &&
    ip netns exec "$n" nft add chain ip loss out '{ type filter hook output priority 0; }' &&
    ip netns exec "$n" nft add rule ip loss out ip daddr "198.18.21.$((to + 1))" "${drop[@]}"; } || exit 1
done
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(-s 65536 -D 2)
args=(--coordinator 198.18.21.1:47700 -P tcp "${opts[@]}")
sweep_others "$here/target/release/fabdiag" "${args[@]}"
sweep_lead "$here/target/release/fabdiag" "${args[@]}"
