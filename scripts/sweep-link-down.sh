#!/usr/bin/env bash
# What a sweep does when a node's link goes down mid-sweep (not a test:
# it takes about 30 s). Four network namespaces on a bridge,
# 198.18.20.1-4; node CUT's switch port (default 3; 0 cuts rank 0's node)
# is set down DOWN_AT seconds in (default 3). Prints rank 0's report, each
# other rank's stderr, and when each rank ended. Needs root, iproute2 and
# a release build.
#   scripts/sweep-link-down.sh [EXTRA SWEEP OPTIONS, e.g. --json]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
F=$here/target/release/fabdiag
sw=ldsw$$
ns() { echo "ldn$1x$$"; }
out=$(mktemp -d)
cleanup() {
  for i in 0 1 2 3; do ip netns del "$(ns $i)" 2>/dev/null; done
  ip netns del "$sw" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$sw"
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
for i in 0 1 2 3; do
  n=$(ns $i)
  ip netns add "$n"
  ip link add "le$i$$" type veth peer name "lp$i$$"
  ip link set "le$i$$" netns "$n"
  ip link set "lp$i$$" netns "$sw"
  ip -n "$n" link set "le$i$$" name eth0
  ip -n "$n" addr add "198.18.20.$((i + 1))/24" dev eth0
  ip -n "$n" link set eth0 up
  ip -n "$n" link set lo up
  ip -n "$sw" link set "lp$i$$" master br0
  ip -n "$sw" link set "lp$i$$" up
done
args=(--coordinator 198.18.20.1:47600 -P tcp -s 65536 -D 2 "$@")
t0=$SECONDS
for r in 1 2 3; do
  (
    ip netns exec "$(ns $r)" env FABDIAG_RANK=$r FABDIAG_SIZE=4 "$F" sweep "${args[@]}" >"$out/$r" 2>&1
    echo "rank $r: exit $? after $((SECONDS - t0)) s" >>"$out/$r"
  ) &
done
cut=${CUT:-3}
(sleep "${DOWN_AT:-3}"; echo "node $cut's link down after $((SECONDS - t0)) s" >&2; ip -n "$sw" link set "lp$cut$$" down) &
ip netns exec "$(ns 0)" env FABDIAG_RANK=0 FABDIAG_SIZE=4 "$F" sweep "${args[@]}"
echo "rank 0: exit $? after $((SECONDS - t0)) s" >&2
wait
for r in 1 2 3; do echo "-- rank $r" >&2; cat "$out/$r" >&2; done
