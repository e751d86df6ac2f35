#!/usr/bin/env bash
# host-traffic's tile-only figures against the number of thread blocks
# (-n), with the same bytes per test (-i scaled), for one or more builds:
# how many blocks per SM the tile walk needs to measure device memory
# rather than its own latency. Run on a GPU machine, beside gpu-run.sh's kit.
#   scripts/dev/gpu/tile-blocks.sh SMS BINARY...
# Prints one line per build and -n: read and write medians over 3 repeats
# (Gbps).
set -u
sms=${1:?usage: scripts/dev/gpu/tile-blocks.sh SMS BINARY...}
shift
# transfers in all (default: the default run's at one block per SM)
bytes=${TILE_TRANSFERS:-$((sms * 2000000))}
printf '%-28s %6s %10s %12s %12s\n' build blocks iterations read_gbps write_gbps
for bin in "$@"; do
  for per in 1 2 4 8; do
    n=$((sms * per)) i=$((bytes / (sms * per)))
    doc=$(timeout 120 "$bin" host-traffic --tile -n "$n" -i "$i" -R 3 -j 2>&1)
    echo "$doc" | python3 -c '
import json, sys
name, n, i = sys.argv[1:]
t = sys.stdin.read()
try:
    s = json.loads(t[t.find("{"):])["statistics"]
    r = float(s["buffer_to_tile"]["tile_transfer_speed_gbps"]["median"])
    w = float(s["buffer_from_tile"]["tile_transfer_speed_gbps"]["median"])
    print(f"{name:<28} {n:>6} {i:>10} {r:>12.0f} {w:>12.0f}")
except Exception as e:
    print(f"{name:<28} {n:>6} {i:>10} failed: {t.strip()[-200:]}")
' "$(basename "$bin")" "$n" "$i"
  done
done
