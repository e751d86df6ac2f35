#!/bin/bash
# fabdiag monitor left running: a monitor in namespace A watches three
# fabdiag serve in namespace B (198.18.14.0/24) and a closed port, while
# the third server is stopped and started again every PERIOD seconds and
# the link is shaped to 40 Mbit/s (tc tbf) during the middle third of the
# run. Debian's Prometheus in A scrapes the monitor every 2 s. Every 30 s
# it prints the monitor's resident memory and open descriptors; at the end
# the state changes the monitor logged against the counter it exports,
# Prometheus's view of the shaped link (a range query), the share of link
# time probing took, and (with SHOT=FILE) a screenshot of Prometheus's
# graph page of the bandwidth, taken by headless Chromium. BUDGET is the
# monitor's --budget (default 5 %): a shaped link's probes take so much
# more link time that, held to a small budget, few run while it is shaped.
#   [BUDGET=20] [SHOT=FILE] scripts/dev/demos/monitor-soak.sh [SECONDS] [PERIOD]   (root; default 300 30)
set -euo pipefail
cd "$(dirname "$0")/../../.."
secs="${1:-300}"
period="${2:-30}"
budget="${BUDGET:-5}"
# shellcheck source=scripts/dev/lib/netns-pair.sh
. scripts/dev/lib/netns-pair.sh
pair_up fdsoak 198.18.14
fabdiag_copy

serve() { ip netns exec "$B" "$bin" serve -p "$1" -P tcp >>"$work/serve-$1.log" 2>&1 & echo $!; }
serve 41001 >/dev/null
serve 41002 >/dev/null
flap=$(serve 41003)
printf '198.18.14.2:%s\n' 41001 41002 41003 41004 >"$work/peers"
ip netns exec "$A" "$bin" monitor --peers "$work/peers" --listen 127.0.0.1:9477 -P tcp \
    --interval 5 --bw-interval 10 --bw-size 4096 --budget "$budget" 2>"$work/monitor.log" &
sleep 1
mon=$(ip netns pids "$A" | head -1)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: fabdiag-monitor
    static_configs:
      - targets: ['127.0.0.1:9477']
EOF
ip netns exec "$A" prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address=127.0.0.1:9090 >/dev/null 2>&1 &
q() { ip netns exec "$A" promtool query instant http://127.0.0.1:9090 "$1" 2>/dev/null; }
footprint() { echo "$(awk '/VmRSS/{print $2}' /proc/"$mon"/status) kB, $(ls /proc/"$mon"/fd | wc -l) fds"; }

start=$(date +%s)
next_flap=$((start + period)) next_print=$start shaped=no
while :; do
    now=$(date +%s)
    t=$((now - start))
    [ "$t" -ge "$secs" ] && break
    if [ "$now" -ge "$next_print" ]; then
        echo "t=${t}s monitor $(footprint), probes running: $(pgrep -P "$mon" | wc -l)"
        next_print=$((next_print + 30))
    fi
    if [ "$now" -ge "$next_flap" ]; then
        if kill -0 "$flap" 2>/dev/null; then kill "$flap"; wait "$flap" 2>/dev/null || true; else flap=$(serve 41003); fi
        next_flap=$((next_flap + period))
    fi
    if [ "$shaped" = no ] && [ "$t" -ge $((secs / 3)) ]; then
        ip netns exec "$A" tc qdisc add dev "$VA" root tbf rate 40mbit burst 32kb latency 400ms
        shaped=yes shaped_at=$now
        echo "t=${t}s link shaped to 40 Mbit/s"
    elif [ "$shaped" = yes ] && [ "$t" -ge $((2 * secs / 3)) ]; then
        ip netns exec "$A" tc qdisc del dev "$VA" root
        shaped=done unshaped_at=$now
        echo "t=${t}s shaping removed"
    fi
    sleep 1
done
echo "end: monitor $(footprint)"
logged=$(grep -c '198.18.14.2:41003 \(up\|down\)' "$work/monitor.log" || true)
echo "state changes of 198.18.14.2:41003 logged: $logged (the first finding is not a change)"
q 'fabdiag_monitor_peer_state_changes_total'
q 'fabdiag_monitor_peer_up'
q 'sum(increase(fabdiag_monitor_probes_total[1h])) by (probe, outcome)'
echo "share of link time probing took over the run (budget $budget %):"
q "sum(increase(fabdiag_monitor_probe_link_seconds_total[1h])) / $secs"
echo "bandwidth to 198.18.14.2:41001 (MB/s): before, during and after the shaping:"
for at in $((shaped_at - 5)) $((unshaped_at - 5)) $((start + secs - 2)); do
    ip netns exec "$A" promtool query instant --time="$at" http://127.0.0.1:9090 \
        'fabdiag_monitor_bandwidth_bytes_per_second{peer="198.18.14.2:41001"} / 1e6' 2>/dev/null
done
if [ -n "${SHOT:-}" ]; then
    url="http://127.0.0.1:9090/graph?g0.expr=fabdiag_monitor_bandwidth_bytes_per_second&g0.tab=0&g0.range_input=$((secs / 60 + 1))m"
    ip netns exec "$A" chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1400,800 --virtual-time-budget=15000 --screenshot="$SHOT" "$url" 2>/dev/null
    echo "screenshot: $SHOT"
fi
echo "monitor log:"
cat "$work/monitor.log"
