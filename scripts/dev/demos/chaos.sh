#!/usr/bin/env bash
# The chaos campaign: RUNS real eight-rank sweeps over network namespaces,
# each with one or two faults drawn from its seed (rank 0 or another rank
# killed or stopped, a cable pulled, a lossy or slow link, a partition, a
# full disk under rank 0's --output, a stranger on the coordinator's port),
# each checked against the invariants written at the top of
# crates/cli/tests/integration/chaos/mod.rs. Prints a line per seed (its
# faults, how it ended, "held" or "BROKEN" with every breach under it) and
# a last line with the count; exits non-zero if any seed broke an
# invariant. A seed given again replays the same faults at the same times.
# Not a test: hundreds of runs take an hour or more. Needs root, iproute2,
# nftables and a release build (scripts/install-deps.sh).
#   scripts/dev/demos/chaos.sh [RUNS [FIRST_SEED]]      (default 300 from 1)
#   scripts/dev/demos/chaos.sh --list [RUNS [FIRST_SEED]]  the seeds' faults only
set -euo pipefail
cd "$(dirname "$0")/../../.."
list=
if [ "${1:-}" = --list ]; then
    list=1
    shift
fi
export FABDIAG_CHAOS_RUNS=${1:-300} FABDIAG_CHAOS_SEED=${2:-1}
if [ -n "$list" ]; then
    export FABDIAG_CHAOS_LIST=1
fi
cargo build --release --locked -p fabdiag --tests >/dev/null 2>&1
# (the test harness's own lines, and cargo's, are left out)
cargo test --release --locked -p fabdiag --test integration chaos::chaos_campaign -- --ignored --nocapture --exact 2>/dev/null |
    grep --line-buffered -E '^(seed |    |runs )'
