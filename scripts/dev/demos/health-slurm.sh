#!/usr/bin/env bash
# The health gate under real Slurm, as the guide shows it: a single-node
# cluster (scripts/dev/support/slurm-local.sh) whose HealthCheckProgram runs
# `fabdiag health --slurm` every 5 s, watching a veth NIC (198.19.250.1/30,
# a tcp domain); the veth's other end goes down, comes back, and then an
# operator drains the node by hand. Prints what sinfo -R and the health
# log say at each step. Needs root, slurm-wlm and munge.
# usage: [FABDIAG_BIN=path] scripts/dev/demos/health-slurm.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
B=$(readlink -f "${FABDIAG_BIN:-target/release/fabdiag}")
W=$(mktemp -d /tmp/fabdiag-health-slurm.XXXX)
nic=fdgate0 peer=fdgate1
cleanup() {
    scripts/dev/support/slurm-local.sh stop "$W/slurm" >/dev/null 2>&1 || true
    ip link del "$nic" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
ip link del "$nic" 2>/dev/null || true
ip link add "$nic" type veth peer name "$peer"
ip addr add 198.19.250.1/30 dev "$nic"
ip link set "$nic" up
ip link set "$peer" up
printf '[[domain]]\nprovider = "tcp"\ndomain = "%s"\n' "$nic" >"$W/health.toml"
mkdir -p "$W/slurm"
cat >"$W/healthcheck" <<EOS
#!/bin/sh
export SLURM_CONF=$W/slurm/slurm.conf
exec $B health --slurm --expect $W/health.toml --state-dir $W/state >>$W/health.log 2>&1
EOS
chmod +x "$W/healthcheck"
SLURM_LOCAL_EXTRA="HealthCheckProgram=$W/healthcheck
HealthCheckInterval=5" scripts/dev/support/slurm-local.sh start "$W/slurm" >/dev/null
export SLURM_CONF=$W/slurm/slurm.conf
node=$(hostname -s)
runs() { grep -c '^fabdiag health: ' "$W/health.log" 2>/dev/null || echo 0; }
settle() { # wait for two more health runs, then show the node, what the runs told Slurm, and the last run
    local n l; n=$(runs); l=$(wc -l <"$W/health.log" 2>/dev/null || echo 0)
    for _ in $(seq 200); do [ "$(runs)" -ge $((n + 2)) ] && break; sleep 0.2; done
    echo "\$ what the runs since told Slurm"
    tail -n +$((l + 1)) "$W/health.log" | grep '^slurm:' | sed 's/^/  /' 
    echo "\$ sinfo -R -o '%n %T %E'"
    sinfo -R -h -o '%n %T %E' | sed 's/^/  /'
    [ -n "$(sinfo -R -h)" ] || echo "  (no node is drained)"
    echo "\$ the last run"
    awk '/^fabdiag health: /{s=NR} {a[NR]=$0} END {for (i=s; i<=NR; i++) print "  " a[i]}' "$W/health.log"
}
echo "# $node, HealthCheckProgram every 5 s, watching tcp:$nic"
settle
echo; echo "# ip link set $peer down   (the cable's other end)"
ip link set "$peer" down
settle
echo; echo "# ip link set $peer up"
ip link set "$peer" up
settle
echo; echo "# scontrol update nodename=$node state=drain reason='maintenance: new DIMM'"
scontrol update nodename="$node" state=drain reason="maintenance: new DIMM"
settle
