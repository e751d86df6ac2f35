#!/usr/bin/env bash
# What a sweep over psm3 does when a rank is killed mid-sweep (not a test:
# it takes about 30 s). psm3 holds a data call of the killed rank's
# partner for good, so the partner's guard gives its part up. Four
# network namespaces on a bridge, 198.18.22.1-4; rank KILL (default 3)
# is killed KILL_AT seconds in (default 4). Prints rank 0's report, each
# other rank's stderr, and when each rank ended. Needs root, iproute2, a
# release build and a libfabric with psm3 (scripts/dev/support/psm3-check.sh builds
# one).
#   scripts/dev/demos/sweep-psm3-kill.sh LIBFABRIC_SO [EXTRA SWEEP OPTIONS, e.g. --json]
set -u
lib=${1:?usage: scripts/dev/demos/sweep-psm3-kill.sh LIBFABRIC_SO [EXTRA SWEEP OPTIONS]}
shift
export FABDIAG_LIBFABRIC=$lib
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/scripts/dev/lib/netns-cluster.sh"
cluster_up pk 198.18.22 4
args=(--coordinator 198.18.22.1:47610 -P psm3 -s 65536 -D 3 "$@")
sweep_others "$here/target/release/fabdiag" "${args[@]}"
kill_rank=${KILL:-3}
(
    sleep "${KILL_AT:-4}"
    echo "rank $kill_rank killed after $((SECONDS - t0)) s" >&2
    ip netns pids "$(node_ns "$kill_rank")" | xargs -r kill -9
) &
sweep_lead "$here/target/release/fabdiag" "${args[@]}"
