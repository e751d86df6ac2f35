#!/bin/bash
# What fabdiag monitor's probes cost a link that is busy at full rate:
# write-bw for SECONDS between two namespaces (198.18.15.0/24, tcp), with
# no monitor and with a monitor in the same namespace probing another
# serve across the same link, alternating ROUNDS times. The monitor runs
# with the shipped defaults (a latency probe every 30 s, a bandwidth probe
# every 300 s, 1 % budget), started with each window, so each window holds
# its first bandwidth probe (15 s in): the most a window of this length
# sees. Prints each run's bandwidth, the ratio of the medians, and the
# link time the monitor's own counter says its probes took.
#   scripts/dev/cost/monitor-cost.sh [SECONDS] [ROUNDS]      (root; default 60 3)
set -euo pipefail
cd "$(dirname "$0")/../../.."
secs="${1:-60}"
rounds="${2:-3}"
# shellcheck source=scripts/dev/lib/netns-pair.sh
. scripts/dev/lib/netns-pair.sh
pair_up fdcost 198.18.15
fabdiag_copy
ip netns exec "$B" "$bin" serve -p 42001 -P tcp >/dev/null 2>&1 &
ip netns exec "$B" "$bin" serve -p 42002 -P tcp >/dev/null 2>&1 &
echo 198.18.15.2:42002 >"$work/peers"
sleep 1

measure() {
    ip netns exec "$A" "$bin" write-bw 198.18.15.2 -p 42001 -P tcp -D "$secs" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["bw_mb_per_s"])'
}
off=() on=()
for r in $(seq "$rounds"); do
    off+=("$(measure)")
    echo "round $r without a monitor: ${off[-1]} MB/s"
    ip netns exec "$A" "$bin" monitor --peers "$work/peers" --listen 127.0.0.1:9477 -P tcp \
        2>"$work/monitor.log" &
    mon=$!
    sleep 1
    on+=("$(measure)")
    share=$(ip netns exec "$A" python3 -c '
import re, sys, urllib.request
page = urllib.request.urlopen("http://127.0.0.1:9477/metrics").read().decode()
link = sum(float(l.split()[-1]) for l in page.splitlines() if l.startswith("fabdiag_monitor_probe_link_seconds_total"))
probes = {m.group(1): m.group(2) for m in re.finditer(r"probes_total\{[^}]*probe=\"(\w+)\",outcome=\"ok\"\} (\d+)", page)}
print(f"{link:.4f} s of link in {sys.argv[1]} s ({100 * link / float(sys.argv[1]):.2f} %), probes ok: {probes}")
' "$((secs + 1))")
    kill "$mon"
    wait "$mon" 2>/dev/null || true
    echo "round $r with a monitor:    ${on[-1]} MB/s; its probes took $share"
done
python3 - "${off[*]}" "${on[*]}" <<'EOF'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
on = [float(x) for x in sys.argv[2].split()]
m_off, m_on = statistics.median(off), statistics.median(on)
print(f"median without {m_off:.1f} MB/s, with {m_on:.1f} MB/s: ratio {m_on / m_off:.3f}")
EOF
