#!/usr/bin/env bash
# Each kind of fault placed at random RUNS times (default 20) on the
# namespace Clos (clos-fault.sh: 2 spines, 4 leaves, 2 hosts a leaf, ECMP
# on the TCP ports), a sweep across it with the fabric's map each time, and
# whether the planted element was named first: a slow host cable, a slow
# leaf uplink, a slow spine (all its ports), a leaf dropping 5 % of the
# frames it forwards, and one spine's link into a leaf slow one way, swept
# with --flows 4. Prints a Markdown table and keeps every run's report in
# OUT (default a new temporary folder). Needs root, iproute2, nftables,
# lldpd and a release build. Not a test: about half an hour.
#
#   scripts/dev/demos/clos-campaign.sh [RUNS [SEED [OUT]]]
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
runs=${1:-20}
RANDOM=${2:-1}
out=${3:-$(mktemp -d)}
mkdir -p "$out"
echo "$runs placements a kind, seed ${2:-1}; each run's report in $out"
echo "| fault | named first | alone | in a group of (median) | others, cleared alone | clean blamed | s a run |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for kind in host uplink spine drop spinelink; do
  t0=$SECONDS
  : >"$out/$kind.tsv"
  for n in $(seq 1 "$runs"); do
    extra=()
    case $kind in
      host) where=($((RANDOM % 8))) planted="node${where[0]}" ;;
      uplink) where=($((RANDOM % 4 + 1)) $((RANDOM % 2 + 1))) planted="leaf${where[0]}-spine${where[1]}" ;;
      spine) where=($((RANDOM % 2 + 1))) planted="spine${where[0]}" ;;
      drop) where=($((RANDOM % 4 + 1)) 5) planted="leaf${where[0]}" ;;
      spinelink)
        where=($((RANDOM % 2 + 1)) $((RANDOM % 4 + 1)))
        planted="leaf${where[1]}-spine${where[0]}"
        extra=(--flows 4)
        ;;
    esac
    report="$out/$kind-$n.json"
    "$here/scripts/dev/demos/clos-fault.sh" "$kind" "${where[@]}" -- --json "${extra[@]}" >"$report" 2>"$out/$kind-$n.err"
    # planted, whether the first suspect holds it, its size, the suspects
    # holding something else
    python3 - "$report" "$planted" >>"$out/$kind.tsv" <<'PY'
import json, sys
try:
    blamed = json.load(open(sys.argv[1])).get("fabric", {}).get("blamed", [])
except (OSError, ValueError):
    blamed = []
planted = sys.argv[2]
first = blamed[0]["elements"] if blamed else []
# further suspects without the planted element: cleared by their
# re-test alone, or blamed
others = [b for b in blamed[1:] if planted not in b["elements"]]
cleared = sum(1 for b in others if (b.get("retest") or {}).get("verdict") == "cleared")
print(f"{planted}\t{int(planted in first)}\t{len(first)}\t{cleared}\t{len(others) - cleared}")
PY
  done
  python3 - "$out/$kind.tsv" "$kind" "$runs" $((SECONDS - t0)) <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
runs = int(sys.argv[3])
named = sum(int(r[1]) for r in rows)
alone = sum(1 for r in rows if r[1] == "1" and r[2] == "1")
sizes = sorted(int(r[2]) for r in rows if r[1] == "1")
median = sizes[len(sizes) // 2] if sizes else 0
cleared = sum(int(r[3]) for r in rows)
clean = sum(int(r[4]) for r in rows)
names = {"host": "a host cable slow", "uplink": "a leaf uplink slow", "spine": "a spine slow",
         "drop": "a leaf dropping 5 %", "spinelink": "a spine's link into a leaf slow, --flows 4"}
print(f"| {names[sys.argv[2]]} | {named}/{runs} | {alone} | {median} | {cleared} | {clean} | {int(sys.argv[4]) / max(runs, 1):.0f} |")
PY
done
