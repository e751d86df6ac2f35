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
#   scripts/sweep-lossy-link.sh [SWEEP OPTIONS]   (default -s 65536 -D 2)
#   scripts/sweep-lossy-link.sh --lat -s 8 -n 2000
set -u
command -v nft >/dev/null || { echo "needs nft: apt-get install nftables" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
F=$here/target/release/fabdiag
N=${N:-3}
sw=lssw$$
ns() { echo "lsn$1x$$"; }
out=$(mktemp -d)
cleanup() {
  for i in $(seq 0 $((N - 1))); do ip netns del "$(ns "$i")" 2>/dev/null; done
  ip netns del "$sw" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$sw"
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
for i in $(seq 0 $((N - 1))); do
  n=$(ns "$i")
  ip netns add "$n"
  ip link add "se$i$$" type veth peer name "sp$i$$"
  ip link set "se$i$$" netns "$n"
  ip link set "sp$i$$" netns "$sw"
  ip -n "$n" link set "se$i$$" name eth0
  ip -n "$n" addr add "198.18.21.$((i + 1))/24" dev eth0
  ip -n "$n" link set eth0 up
  ip -n "$n" link set lo up
  ip -n "$sw" link set "sp$i$$" master br0
  ip -n "$sw" link set "sp$i$$" up
  ip netns exec "$sw" tc qdisc replace dev "sp$i$$" root tbf rate 100mbit burst 32kb latency 400ms
done
loss=${LOSS:-20}
if [ "$loss" -ge 1000 ]; then drop=(drop); else drop=(numgen random mod 1000 '<' "$loss" drop); fi
for pair in "1 2" "2 1"; do
  from=${pair% *} to=${pair#* }
  n=$(ns "$from")
  { ip netns exec "$n" nft add table ip loss &&
    ip netns exec "$n" nft add chain ip loss out '{ type filter hook output priority 0; }' &&
    ip netns exec "$n" nft add rule ip loss out ip daddr "198.18.21.$((to + 1))" "${drop[@]}"; } || exit 1
done
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(-s 65536 -D 2)
args=(--coordinator 198.18.21.1:47700 -P tcp "${opts[@]}")
t0=$SECONDS
for r in $(seq 1 $((N - 1))); do
  (
    ip netns exec "$(ns "$r")" env FABDIAG_RANK="$r" FABDIAG_SIZE="$N" FABDIAG_NODE_NAME="node$r" "$F" sweep "${args[@]}" >"$out/$r" 2>&1
    echo "rank $r: exit $? after $((SECONDS - t0)) s" >>"$out/$r"
  ) &
done
ip netns exec "$(ns 0)" env FABDIAG_RANK=0 FABDIAG_SIZE="$N" FABDIAG_NODE_NAME=node0 "$F" sweep "${args[@]}"
echo "rank 0: exit $? after $((SECONDS - t0)) s" >&2
wait
for r in $(seq 1 $((N - 1))); do cat "$out/$r" >&2; done
