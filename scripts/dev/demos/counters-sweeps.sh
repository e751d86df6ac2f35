#!/usr/bin/env bash
# The counters campaign: the suite's sweep of eight namespaced ranks with
# node 3's cable flapping and node 6 dropping a tenth of its frames
# (counters::a_sweep_names_the_flapping_node_and_the_lossy_one_every_time),
# run SWEEPS times in a row (default 20). Each sweep must name ranks 3 and
# 6 by their own counters and no other rank; the first that does not stops
# the campaign with its report. Needs root (network namespaces).
# Results: docs/results/counters.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
sweeps="${1:-20}"
case "$sweeps" in
    '' | *[!0-9]* | 0) echo "counters-sweeps.sh: '$sweeps': how many sweeps, 1 or more" >&2; exit 2 ;;
esac
log="$(mktemp)"
start=$(date +%s)
if FABDIAG_COUNTER_SWEEPS="$sweeps" cargo test --release --locked -p fabdiag --test integration -- \
    --exact counters::a_sweep_names_the_flapping_node_and_the_lossy_one_every_time --nocapture >"$log" 2>&1; then
    ok=true
else
    ok=false
fi
# each sweep prints a line "run N:" once it has ended (the failing assert's
# own message starts "run N: ..." and is not counted)
done=$(grep -cx 'run [0-9]*:' "$log" || true)
if $ok && [ "${done:-0}" = "$sweeps" ]; then
    verdict="all $sweeps sweeps named ranks 3 and 6 and no other"
elif $ok; then
    verdict="the test passed but ${done:-0} of $sweeps sweeps reported (log: $log)"
    ok=false
else
    verdict="stopped after ${done:-0} sweep(s) ran: the last one failed, or the test could not run (log: $log)"
fi
echo "counters-sweeps.sh: $verdict, in $(( $(date +%s) - start )) s"
$ok
