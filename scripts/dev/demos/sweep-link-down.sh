#!/usr/bin/env bash
# What a sweep does when a node's link goes down mid-sweep (not a test:
# it takes about 30 s). Four network namespaces on a bridge,
# 198.18.20.1-4; node CUT's switch port (default 3; 0 cuts rank 0's node)
# is set down DOWN_AT seconds in (default 3). Prints rank 0's report, each
# other rank's stderr, and when each rank ended. Needs root, iproute2 and
# a release build.
#   scripts/dev/demos/sweep-link-down.sh [EXTRA SWEEP OPTIONS, e.g. --json]
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up ld 198.18.20 4
args=(--coordinator 198.18.20.1:47600 -P tcp -s 65536 -D 2 "$@")
sweep_others "$here/target/release/fabdiag" "${args[@]}"
cut=${CUT:-3}
(sleep "${DOWN_AT:-3}"; echo "node $cut's link down after $((SECONDS - t0)) s" >&2; ip -n "$sw" link set "$(switch_port "$cut")" down) &
sweep_lead "$here/target/release/fabdiag" "${args[@]}"
