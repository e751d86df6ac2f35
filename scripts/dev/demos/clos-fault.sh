#!/usr/bin/env bash
# One fault placed on a Clos of network namespaces (2 spines, 4 leaves,
# PER_LEAF hosts a leaf, real routers with ECMP: scripts/dev/lib/netns-clos.sh)
# and a sweep across it with the fabric's map; rank 0's report on stdout,
# then each other rank's stderr and exit on stderr; exits as rank 0 did.
# Needs root, iproute2, nftables, lldpd and a release build.
#
#   scripts/dev/demos/clos-fault.sh KIND [WHERE...] [-- EXTRA SWEEP OPTIONS]
#
# KIND and WHERE: none | host I | uplink LEAF SPINE | spine SPINE |
# drop LEAF PERCENT | spinelink SPINE LEAF. A slow element runs at
# FAULT_RATE (default 20mbit) against the fabric's 200mbit.
# MAP=lldp: the hosts' places come from each rank's own LLDP (lldpd in
# every namespace), the switch layer from the map file.
# FABDIAG_BIN: the fabdiag to run (default this checkout's release build).
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/netns-clos.sh
. "$here/scripts/dev/lib/netns-clos.sh"
kind=${1:?KIND: none, host, uplink, spine, drop or spinelink}
shift
where=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  where+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
clos_up cf 2 4 "${PER_LEAF:-2}" 200mbit || exit 1
clos_map "$out/map.toml"
clos_lldp_wait 30 >/dev/null || exit 1
slow=${FAULT_RATE:-20mbit}
case $kind in
  none) ;;
  host) slow_host_cable "${where[0]}" "$slow" ;;
  uplink) slow_uplink "${where[0]}" "${where[1]}" "$slow" ;;
  spine) slow_spine "${where[0]}" "$slow" ;;
  drop) drop_leaf "${where[0]}" "${where[1]}" ;;
  spinelink) slow_spine_link "${where[0]}" "${where[1]}" "$slow" ;;
  *)
    echo "clos-fault.sh: unknown fault '$kind'" >&2
    exit 1
    ;;
esac
cluster_fabdiag
if [ "${MAP:-file}" = lldp ]; then
  # the switch layer from the file, the hosts from their own LLDP
  grep -v -e '^\[\[host\]\]' -e '^name = "node' -e '^switch = "leaf' -e '^port = "h' "$out/map.toml" >"$out/switches.toml"
  topo=(--topology "$out/switches.toml" --topology lldp)
else
  topo=(--topology "$out/map.toml")
fi
args=(--coordinator "$(clos_addr 0):47700" "${topo[@]}" -P tcp -s 65536 -n 5 -l 16 "$@")
rank_env() {
  echo "FABDIAG_RANK=$1 FABDIAG_SIZE=$nodes FABDIAG_NODE_NAME=node$1"
}
for r in $(seq 1 $((nodes - 1))); do
  (
    # shellcheck disable=SC2046
    ip netns exec "$(node_ns "$r")" env $(rank_env "$r") "FABDIAG_LLDPCTL=lldpctl -u $out/lldp/node$r.sock -f json" \
      "$bin" sweep "${args[@]}" >"$out/rank$r" 2>&1
    echo "rank $r: exit $?" >>"$out/rank$r"
  ) &
done
# shellcheck disable=SC2046
ip netns exec "$(node_ns 0)" env $(rank_env 0) "FABDIAG_LLDPCTL=lldpctl -u $out/lldp/node0.sock -f json" \
  "$bin" sweep "${args[@]}"
code=$?
wait
for r in $(seq 1 $((nodes - 1))); do cat "$out/rank$r" >&2; done
exit "$code"
