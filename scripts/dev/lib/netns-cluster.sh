# shellcheck shell=bash
# Sourced by the sweep fault scripts (sweep-link-down.sh,
# sweep-lossy-link.sh): N network namespaces, each a "node" with eth0 at
# SUBNET.<i+1>/24, joined by a bridge in a switch namespace, and a real
# sweep run across them. Needs root and iproute2; removes what it made on
# exit. Defines nothing else and runs nothing when sourced.

# cluster_up TAG SUBNET N [RATE [LEAVES]]: the namespaces, every switch
# port shaped to RATE (tbf) when given. LEAVES=2: two bridges ("leaf
# switches"), nodes 0 to N/2-1 on br0 and the rest on br1, joined by one
# veth pair (the "spine" cable, sp0-sp1) that spine_rate shapes. Sets sw
# (the switch namespace) and out (a scratch directory); node_ns I and
# switch_port I name node I's namespace and its port on the switch.
cluster_up() {
  tag=$1 subnet=$2 nodes=$3
  local rate=${4:-} leaves=${5:-1}
  sw=${tag}sw$$
  out=$(mktemp -d)
  trap cluster_down EXIT
  ip netns add "$sw"
  local i n br
  for i in $(seq 0 $((leaves - 1))); do
    ip -n "$sw" link add "br$i" type bridge
    ip -n "$sw" link set "br$i" up
  done
  if [ "$leaves" = 2 ]; then
    ip -n "$sw" link add sp0 type veth peer name sp1
    ip -n "$sw" link set sp0 master br0
    ip -n "$sw" link set sp1 master br1
    ip -n "$sw" link set sp0 up
    ip -n "$sw" link set sp1 up
  fi
  for i in $(seq 0 $((nodes - 1))); do
    n=$(node_ns "$i")
    ip netns add "$n"
    ip link add "${tag}e$i$$" type veth peer name "$(switch_port "$i")"
    ip link set "${tag}e$i$$" netns "$n"
    ip link set "$(switch_port "$i")" netns "$sw"
    ip -n "$n" link set "${tag}e$i$$" name eth0
    ip -n "$n" addr add "$subnet.$((i + 1))/24" dev eth0
    ip -n "$n" link set eth0 up
    ip -n "$n" link set lo up
    br=br0
    if [ "$leaves" = 2 ] && [ "$i" -ge $((nodes / 2)) ]; then br=br1; fi
    ip -n "$sw" link set "$(switch_port "$i")" master "$br"
    ip -n "$sw" link set "$(switch_port "$i")" up
    if [ -n "$rate" ]; then shape "$sw" "$(switch_port "$i")" "$rate"; fi
  done
}

# cluster_fabdiag: the build the ranks run, copied into the scratch
# directory as $bin: FABDIAG_BIN, else this checkout's release build.
cluster_fabdiag() {
  bin="$out/fabdiag"
  cp "${FABDIAG_BIN:-$(dirname "${BASH_SOURCE[0]}")/../../../target/release/fabdiag}" "$bin"
}

# spine_rate RATE [QUEUE]: the spine cable of a two-leaf cluster at RATE
# each way, its queue holding QUEUE of traffic (default 400ms).
spine_rate() {
  local end
  for end in sp0 sp1; do shape "$sw" "$end" "$1" "${2:-400ms}"; done
}

# spine_fair RATE: the spine cable at RATE (in mbit) each way, shared out sender by
# sender instead of first come, first served, as a switch that serves its
# input ports round robin: an htb class per node with an equal guaranteed
# share, each free to borrow up to RATE what the others leave unused (the
# kernel here has no fair-queue qdisc: htb and tbf only).
spine_fair() {
  local end i
  for end in sp0 sp1; do
    ip netns exec "$sw" tc qdisc replace dev "$end" root handle 1: htb default 99
    ip netns exec "$sw" tc class replace dev "$end" parent 1: classid 1:1 htb rate "$1" ceil "$1" quantum 1514
    ip netns exec "$sw" tc class replace dev "$end" parent 1:1 classid 1:99 htb rate 1kbit ceil "$1" quantum 1514
    for i in $(seq 0 $((nodes - 1))); do
      ip netns exec "$sw" tc class replace dev "$end" parent 1:1 classid "1:$((i + 10))" htb rate "$(( ${1%mbit} * 1000 / nodes ))kbit" ceil "$1" quantum 1514
      ip netns exec "$sw" tc filter add dev "$end" parent 1: protocol ip prio 1 u32 match ip src "$subnet.$((i + 1))/32" flowid "1:$((i + 10))"
    done
  done
}

# shape NAMESPACE DEV RATE [QUEUE]: a tbf at RATE on one interface, its
# queue holding QUEUE of traffic (tbf's latency; default 400ms) before it
# drops.
shape() {
  ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$3" burst 32kb latency "${4:-400ms}"
}

# slow_link I J RATE: node I's traffic to node J and J's to I at RATE (htb
# with a filter on the destination, on each node's own eth0).
slow_link() {
  local from to ns
  for from in "$1" "$2"; do
    to=$(( from == $1 ? $2 : $1 ))
    ns=$(node_ns "$from")
    ip netns exec "$ns" tc qdisc replace dev eth0 root handle 1: htb default 10
    ip netns exec "$ns" tc class replace dev eth0 parent 1: classid 1:10 htb rate 10gbit
    ip netns exec "$ns" tc class replace dev eth0 parent 1: classid 1:20 htb rate "$3"
    ip netns exec "$ns" tc filter replace dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "$subnet.$((to + 1))/32" flowid 1:20
  done
}

# cold_tcp: every node forgets what its TCP learnt of its peers. Linux
# keeps each closed connection's congestion window and RTT per
# destination (tcp_metrics, per namespace) and starts the next
# connection to it from them, so without this a run's first connections
# ramp up unlike every later run's.
cold_tcp() {
  local i
  for i in $(seq 0 $((nodes - 1))); do ip -n "$(node_ns "$i")" tcp_metrics flush all 2>/dev/null; done
  true
}

# tcp_cc ALGORITHM: every node's TCP congestion control (per namespace;
# e.g. reno). A namespace may only pick from the host's
# net.ipv4.tcp_allowed_congestion_control, so a refused choice stops the
# script rather than leave the kernel's default running under another name.
tcp_cc() {
  local i
  for i in $(seq 0 $((nodes - 1))); do
    ip netns exec "$(node_ns "$i")" sysctl -qw "net.ipv4.tcp_congestion_control=$1" ||
      { echo "tcp_cc: $1 refused (allowed: $(sysctl -n net.ipv4.tcp_allowed_congestion_control))" >&2; exit 1; }
  done
}

# node_cc: the congestion control node 0 runs.
node_cc() { ip netns exec "$(node_ns 0)" sysctl -n net.ipv4.tcp_congestion_control; }

# unshape NAMESPACE DEV: whatever qdisc is on it removed.
unshape() { ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null; true; }

# spread VALUE...: their mean and the largest distance from it, as a share;
# the values' unit is UNIT (default MB/s).
spread() {
  UNIT=${UNIT:-MB/s} python3 - "$@" <<'PY'
import os, sys
v = [float(x) for x in sys.argv[1:]]
mean = sum(v) / len(v)
far = max(abs(x - mean) for x in v)
u = os.environ["UNIT"]
print(f"mean {mean:.2f} {u}, largest distance from it {far:.2f} {u} ({100 * far / mean:.1f} %)")
PY
}

node_ns() { echo "${tag}n$1x$$"; }
switch_port() { echo "${tag}p$1$$"; }

cluster_down() {
  local i
  for i in $(seq 0 $((nodes - 1))); do ip netns del "$(node_ns "$i")" 2>/dev/null; done
  ip netns del "$sw" 2>/dev/null
  rm -rf "$out"
}

# rank_cpu R: with PIN=1, "taskset -c C", rank R's CPU (the R-th, modulo
# their number, of the CPUs this shell may run on: a script started under
# `taskset -c 6-15` keeps its ranks on CPUs 6-15), so that every rank stays
# where it started and ranks next to each other in number never share a
# CPU; empty otherwise (the scheduler places the ranks and may move them)
rank_cpu() {
  [ "${PIN:-}" = 1 ] && echo "taskset -c $(python3 -c 'import os, sys; c = sorted(os.sched_getaffinity(0)); print(c[int(sys.argv[1]) % len(c)])' "$1")"
  true
}

# sweep_others FABDIAG ARGS...: ranks 1..N-1 in the background, each
# noting its exit status and when it ended (seconds since this call, t0).
sweep_others() {
  local bin=$1 r
  shift
  t0=$SECONDS
  for r in $(seq 1 $((nodes - 1))); do
    (
      # shellcheck disable=SC2046
      ip netns exec "$(node_ns "$r")" $(rank_cpu "$r") env FABDIAG_RANK="$r" FABDIAG_SIZE="$nodes" FABDIAG_NODE_NAME="node$r" \
        "$bin" sweep "$@" >"$out/$r" 2>&1
      echo "rank $r: exit $? after $((SECONDS - t0)) s" >>"$out/$r"
    ) &
  done
}

# sweep_lead FABDIAG ARGS...: rank 0 here, its report on stdout; then,
# once every rank has ended, each other rank's stderr and end.
sweep_lead() {
  local bin=$1 r
  shift
  # shellcheck disable=SC2046
  ip netns exec "$(node_ns 0)" $(rank_cpu 0) env FABDIAG_RANK=0 FABDIAG_SIZE="$nodes" FABDIAG_NODE_NAME=node0 "$bin" sweep "$@"
  echo "rank 0: exit $? after $((SECONDS - t0)) s" >&2
  wait
  for r in $(seq 1 $((nodes - 1))); do
    echo "-- rank $r" >&2
    cat "$out/$r" >&2
  done
}
