#!/usr/bin/env bash
# On a GPU machine, with gpu-kit/fabdiag copied there (a release build,
# scripts/dev/gpu/gpu-kit.sh), run from the folder that holds gpu-kit/: reads
# the real PCI tree with `fabdiag health --topology` beside
# `nvidia-smi topo -m`, runs `fabdiag health` (its GPU checks: the CUDA
# driver's GPUs, host -> GPU copy, topology) and `--write-expect -`, and
# packs a copy of the PCI tree's sysfs attributes (links, class, vendor,
# NUMA node, link speed and width) for a fixture. Everything lands in
# $OUT/health.tar.gz.  Usage: scripts/dev/gpu/gpu-health.sh
set -u
OUT=${OUT:-/tmp/fabdiag-gpu-out}
W=/tmp/fabdiag-health
rm -rf "$W"; mkdir -p "$W" "$OUT"
F=$PWD/gpu-kit/fabdiag
run() { # NAME CMD...: output and exit code into $W/NAME.txt
  local name=$1; shift
  { echo "\$ $*"; timeout 120 "$@" 2>&1; echo "exit $?"; } >"$W/$name.txt"
}
run nvidia-smi-topo nvidia-smi topo -m
run nvidia-smi-pcie sh -c "nvidia-smi -q | grep -i -A4 'PCIe Generation\|Link Width\|Bus Id'"
run lscpu lscpu
run topology "$F" health --topology
run topology-json "$F" health --topology --json
run health-time sh -c "time $F health --budget 30"
run health-json "$F" health --json --budget 30
run write-expect "$F" health --write-expect - --budget 30
FABDIAG_LIBFABRIC=/nonexistent run health-nolib "$F" health --budget 30
run lspci-tree sh -c "command -v lspci && lspci -tv"
run lspci-acs sh -c "command -v lspci && lspci -vvv | grep -E '^[0-9a-f]|ACSCtl|LnkSta:|LnkCap:'"
# the sysfs attributes of every PCI function, as a fixture can be made of
{
  for d in /sys/bus/pci/devices/*; do
    a=$(basename "$d")
    echo "== $a -> $(readlink "$d")"
    for f in class vendor device numa_node current_link_speed max_link_speed current_link_width max_link_width local_cpulist; do
      [ -r "$d/$f" ] && echo "$f=$(cat "$d/$f" 2>/dev/null)"
    done
    for s in infiniband net; do [ -d "$d/$s" ] && echo "$s=$(ls "$d/$s" | tr '\n' ' ')"; done
    for v in "$d"/virtio*/net; do [ -d "$v" ] && echo "virtio-net=$(ls "$v" | tr '\n' ' ')"; done
    echo "config_bytes=$(wc -c <"$d/config" 2>/dev/null)"
  done
  ls -l /sys/class/infiniband /sys/class/net 2>&1
} >"$W/sysfs-pci.txt"
tar czf "$OUT/health.tar.gz" -C "$W" .
ls -l "$OUT"
