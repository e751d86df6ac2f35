# shellcheck shell=bash
# Sourced by the Clos fault scripts: a two-level Clos (leaf-spine) fabric of
# network namespaces in which the leaves and spines are real routers, so a
# fault sits on one cable, port or switch of a fabric a map can name, and
# traffic between leaves spreads over every spine as a real fabric's does
# (ECMP, hashed on the TCP ports). Needs root, iproute2, nftables (for
# drop_leaf) and lldpd (Debian's package; scripts/install-deps.sh installs
# it, else apt-get install lldpd). Every address is in 198.18.0.0/15 and
# every interface inside the fabric's namespaces: nothing leaves them.
# Removes what it made on exit. Defines functions only and runs nothing when
# sourced.
#
# Names: hosts node0, node1, ... in rank order, host I under leaf I/HOSTS+1
# (leaves leaf1.., spines spine1.., as topology's fat-tree map names them).
# Inside leafL the port to its k-th host is hk and the one to spineS is sS;
# inside spineS the port to leafL is lL; a host's own is eth0. Addresses:
# leafL's hosts 198.18.(10+L).0/24, the leaf .1 and its k-th host .(k+2);
# the cable leafL-spineS 198.19.S.(2L)/31 at the leaf, .(2L+1) at the spine.

# The one-switch cluster's shape, unshape, cold_tcp, tcp_cc, cluster_fabdiag,
# sweep_others and sweep_lead work here unchanged: they only need tag, nodes,
# out and node_ns, which clos_up sets as cluster_up does.
# shellcheck source-path=SCRIPTDIR source=netns-cluster.sh disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/netns-cluster.sh"

# clos_up TAG [SPINES [LEAVES [HOSTS [RATE]]]]: the fabric (default 2
# spines, 4 leaves, 2 hosts a leaf), every switch port shaped to RATE (tbf;
# default 200mbit, so that the shaping and not this machine's CPUs sets how
# fast a cable is; "none" leaves them unshaped), and an lldpd in every
# namespace. Sets tag, nodes (the hosts), spines, leaves, per_leaf, rate and
# out (a scratch directory). Says in one line what failed, removes what it
# had made and returns 1 when anything fails, a sysctl the kernel refuses
# included.
clos_up() {
  tag=$1 spines=${2:-2} leaves=${3:-4} per_leaf=${4:-2} rate=${5:-200mbit}
  [ "$rate" = none ] && rate=
  nodes=$((leaves * per_leaf))
  command -v lldpd >/dev/null || { echo "clos_up: needs lldpd (apt-get install lldpd)" >&2; return 1; }
  # the addressing plan's bounds: 198.19.S.(2L+1) and 198.18.(10+L).(k+2)
  if [ "$spines" -lt 1 ] || [ "$spines" -gt 255 ] || [ "$leaves" -lt 1 ] || [ "$leaves" -gt 127 ] ||
    [ "$per_leaf" -lt 1 ] || [ "$per_leaf" -gt 253 ]; then
    echo "clos_up: $spines spines, $leaves leaves, $per_leaf hosts a leaf: at most 255, 127 and 253 (and at least 1)" >&2
    return 1
  fi
  out=$(mktemp -d)
  # lldpcli is set-user-ID _lldpd on Debian, so the control sockets and the
  # configuration lldpd hands lldpcli must lie where _lldpd can reach them
  chmod 711 "$out"
  install -d -m 700 -o _lldpd -g _lldpd "$out/lldp" || { echo "clos_up: cannot make $out/lldp for _lldpd" >&2; clos_down; return 1; }
  trap clos_down EXIT
  local s l i k
  for s in $(seq 1 "$spines"); do clos_router "$(spine_ns "$s")" || { clos_down; return 1; }; done
  for l in $(seq 1 "$leaves"); do
    # proxy ARP: a host asks for its neighbour under the same leaf (the
    # same /24) on the wire, and the leaf, the one that can reach it,
    # answers and routes it
    clos_router "$(leaf_ns "$l")" net.ipv4.conf.all.proxy_arp=1 || { clos_down; return 1; }
  done
  for i in $(seq 0 $((nodes - 1))); do
    l=$((i / per_leaf + 1)) k=$((i % per_leaf))
    { ip netns add "$(node_ns "$i")" &&
      ip -n "$(node_ns "$i")" link set lo up &&
      ip -n "$(leaf_ns "$l")" link add "h$k" type veth peer name eth0 netns "$(node_ns "$i")" &&
      ip -n "$(node_ns "$i")" addr add "$(clos_addr "$i")/24" dev eth0 &&
      ip -n "$(node_ns "$i")" link set eth0 up &&
      ip -n "$(node_ns "$i")" route add default via "198.18.$((10 + l)).1"; } ||
      { echo "clos_up: host $i (node$i) could not be made" >&2; clos_down; return 1; }
    # every host port of a leaf carries the leaf's address: a router
    # answering on one /24 out of several ports, the hosts told apart by
    # a /32 route each
    ip -n "$(leaf_ns "$l")" addr add "198.18.$((10 + l)).1/32" dev "h$k"
    ip -n "$(leaf_ns "$l")" link set "h$k" up
    ip -n "$(leaf_ns "$l")" route add "$(clos_addr "$i")/32" dev "h$k"
  done
  local delays
  for l in $(seq 1 "$leaves"); do
    # the leaf answers a proxied ARP at once, not after the usual random
    # wait of up to 0.8 s (proxy_delay 80, in hundredths) that slowed each
    # pair's first connection; per port, a namespace having no
    # neigh.default of its own to set this once
    delays=$(seq -f "net.ipv4.neigh.h%g.proxy_delay=0" 0 $((per_leaf - 1)))
    # shellcheck disable=SC2086 # one sysctl a word
    ip netns exec "$(leaf_ns "$l")" sysctl -qw $delays >/dev/null 2>&1 ||
      { echo "clos_up: leaf$l: this kernel refuses sysctl net.ipv4.neigh.hK.proxy_delay=0" >&2; clos_down; return 1; }
    for s in $(seq 1 "$spines"); do
      { ip -n "$(leaf_ns "$l")" link add "s$s" type veth peer name "l$l" netns "$(spine_ns "$s")" &&
        ip -n "$(leaf_ns "$l")" addr add "198.19.$s.$((2 * l))/31" dev "s$s" &&
        ip -n "$(spine_ns "$s")" addr add "198.19.$s.$((2 * l + 1))/31" dev "l$l" &&
        ip -n "$(leaf_ns "$l")" link set "s$s" up &&
        ip -n "$(spine_ns "$s")" link set "l$l" up &&
        ip -n "$(spine_ns "$s")" route add "198.18.$((10 + l)).0/24" via "198.19.$s.$((2 * l))"; } ||
        { echo "clos_up: cable leaf$l-spine$s could not be made" >&2; clos_down; return 1; }
    done
  done
  local m hops
  for l in $(seq 1 "$leaves"); do
    # one route to every other leaf's hosts over every spine at once; which
    # spine a flow takes is the hash of its addresses and ports
    hops=()
    for s in $(seq 1 "$spines"); do hops+=(nexthop via "198.19.$s.$((2 * l + 1))" dev "s$s"); done
    for m in $(seq 1 "$leaves"); do
      [ "$m" = "$l" ] && continue
      ip -n "$(leaf_ns "$l")" route add "198.18.$((10 + m)).0/24" "${hops[@]}" ||
        { echo "clos_up: leaf$l: no multipath route to leaf$m's hosts" >&2; clos_down; return 1; }
    done
  done
  if [ -n "$rate" ]; then
    for l in $(seq 1 "$leaves"); do for k in $(seq 0 $((per_leaf - 1))); do shape "$(leaf_ns "$l")" "h$k" "$rate"; done; done
    for l in $(seq 1 "$leaves"); do for s in $(seq 1 "$spines"); do
      shape "$(leaf_ns "$l")" "s$s" "$rate"
      shape "$(spine_ns "$s")" "l$l" "$rate"
    done; done
  fi
  local ports
  for s in $(seq 1 "$spines"); do
    ports=$(seq -s, -f "l%g" 1 "$leaves")
    clos_lldpd "$(spine_ns "$s")" "spine$s" "$ports" || { clos_down; return 1; }
  done
  for l in $(seq 1 "$leaves"); do
    ports=$(seq -s, -f "h%g" 0 $((per_leaf - 1))),$(seq -s, -f "s%g" 1 "$spines")
    clos_lldpd "$(leaf_ns "$l")" "leaf$l" "$ports" || { clos_down; return 1; }
  done
  for i in $(seq 0 $((nodes - 1))); do clos_lldpd "$(node_ns "$i")" "node$i" eth0 || { clos_down; return 1; }; done
}

# clos_router NAMESPACE [SYSCTL=VALUE...]: a namespace that forwards,
# choosing a multipath route's next hop from a hash of the packet's
# addresses, protocol and TCP/UDP ports (policy 3, fields 0x37) as a
# switch's ECMP does, so that flows between the same two hosts on other
# ports take other spines and the same five take the same spine every time;
# with the SYSCTLs given. Not policy 1 (L4): for a packet that comes from a
# socket on this machine that one takes the socket's own random hash
# instead of the ports, a new spine each connection whatever its ports, and
# another when TCP rehashes after a timeout. One line and 1 when the
# kernel refuses any.
clos_router() {
  local k ns=$1
  shift
  ip netns add "$ns" || { echo "clos_up: namespace $ns could not be made" >&2; return 1; }
  ip -n "$ns" link set lo up
  for k in net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=3 net.ipv4.fib_multipath_hash_fields=0x0037 "$@"; do
    ip netns exec "$ns" sysctl -qw "$k" >/dev/null 2>&1 ||
      { echo "clos_up: $ns: this kernel refuses sysctl $k" >&2; return 1; }
  done
}

# clos_lldpd NAMESPACE NAME PORTS: an lldpd of its own there (its own
# control socket, PID file and configuration under $out/lldp), telling its
# neighbours it is NAME and naming its ports by interface name, once a
# second (LLDP's default is every 30 s), on the PORTS listed only, none
# reading the system's /etc/lldpd.d or writing its /run/lldpd.pid. It
# daemonises rather than stay this shell's child: a child would hold up
# every plain `wait` of the script that sourced this (sweep_lead's).
clos_lldpd() {
  local conf="$out/lldp/$2.conf"
  printf 'configure system hostname %s\nconfigure lldp tx-interval 1\nconfigure lldp portidsubtype ifname\n' "$2" >"$conf"
  ip netns exec "$1" lldpd -u "$out/lldp/$2.sock" -p "$out/lldp/$2.pid" -O "$conf" -I "$3" ||
    { echo "clos_up: $2: lldpd did not start" >&2; return 1; }
}

# clos_lldp_json I: what host I's lldpd has heard from its neighbours
# (its leaf's name and port), as lldpctl's JSON.
clos_lldp_json() {
  ip netns exec "$(node_ns "$1")" lldpctl -u "$out/lldp/node$1.sock" -f json
}

# clos_lldp_wait [SECONDS]: waits until every host's lldpd names its leaf and
# port (at most SECONDS, default 30) and prints how long that took (in
# seconds, to a tenth); one line naming a host still without it and 1 on
# timeout.
clos_lldp_wait() {
  local t0=$EPOCHREALTIME t=$SECONDS i
  for i in $(seq 0 $((nodes - 1))); do
    until clos_lldp_sees "$i"; do
      [ $((SECONDS - t)) -ge "${1:-30}" ] && { echo "clos_lldp_wait: node$i hears no leaf after ${1:-30} s" >&2; return 1; }
      sleep 0.1
    done
  done
  python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$t0" "$EPOCHREALTIME"
}

# clos_lldp_sees I: whether host I's lldpd has heard its own leaf on its own
# port (chassis name leafL, port id hk).
clos_lldp_sees() {
  local kv
  kv=$(ip netns exec "$(node_ns "$1")" lldpctl -u "$out/lldp/node$1.sock" -f keyvalue 2>/dev/null)
  grep -qx "lldp\.eth0\.chassis\.name=leaf$(($1 / per_leaf + 1))" <<<"$kv" &&
    grep -qx "lldp\.eth0\.port\.ifname=h$(($1 % per_leaf))" <<<"$kv"
}

# clos_map FILE: the fabric's map (topology's TOML): spines at level 2,
# leaves at 1, every host with its leaf and port, every cable by its ends.
clos_map() {
  local s l i
  {
    for s in $(seq 1 "$spines"); do printf '[[switch]]\nname = "spine%s"\nlevel = 2\n' "$s"; done
    for l in $(seq 1 "$leaves"); do printf '[[switch]]\nname = "leaf%s"\nlevel = 1\n' "$l"; done
    for i in $(seq 0 $((nodes - 1))); do
      printf '[[host]]\nname = "node%s"\nswitch = "leaf%s"\nport = "h%s"\n' "$i" $((i / per_leaf + 1)) $((i % per_leaf))
    done
    for l in $(seq 1 "$leaves"); do for s in $(seq 1 "$spines"); do
      printf '[[cable]]\na = "leaf%s:s%s"\nb = "spine%s:l%s"\n' "$l" "$s" "$s" "$l"
    done; done
  } >"$1"
}

# slow_host_cable I RATE: host I's cable at RATE each way (its leaf's port
# and the host's eth0).
slow_host_cable() {
  shape "$(leaf_ns $(($1 / per_leaf + 1)))" "h$(($1 % per_leaf))" "$2"
  shape "$(node_ns "$1")" eth0 "$2"
}

# slow_uplink LEAF SPINE RATE: the cable between leafLEAF and spineSPINE at
# RATE each way (both its ends).
slow_uplink() {
  shape "$(leaf_ns "$1")" "s$2" "$3"
  shape "$(spine_ns "$2")" "l$1" "$3"
}

# slow_spine SPINE RATE: every port of spineSPINE at RATE: all that crosses
# it, either way.
slow_spine() {
  local l
  for l in $(seq 1 "$leaves"); do shape "$(spine_ns "$1")" "l$l" "$2"; done
}

# slow_spine_link SPINE LEAF RATE: spineSPINE's one port to leafLEAF at
# RATE, one way (towards the leaf): only the flows into that leaf that
# hash onto that spine are slow, so one flow a pair may miss it and it
# shows only with several flows (different ports) between the same hosts.
slow_spine_link() {
  shape "$(spine_ns "$1")" "l$2" "$3"
}

# drop_leaf LEAF PERCENT: leafLEAF drops PERCENT of the packets it forwards
# (each at random; nftables in its namespace, counted: see clos_drops); 0
# drops none, 100 all.
drop_leaf() {
  local ns which=
  ns=$(leaf_ns "$1")
  ip netns exec "$ns" nft delete table inet clos_fault 2>/dev/null
  [ "$2" -gt 0 ] || return 0
  [ "$2" -lt 100 ] && which="numgen random mod 100 < $2"
  ip netns exec "$ns" nft -f - <<EOF
table inet clos_fault {
  chain forward {
    type filter hook forward priority 0; policy accept;
    $which counter drop
  }
}
EOF
}

# clos_drops LEAF: how many packets drop_leaf has dropped on leafLEAF so
# far (0 with no drop in place).
clos_drops() {
  ip netns exec "$(leaf_ns "$1")" nft list table inet clos_fault 2>/dev/null |
    sed -n 's/.*counter packets \([0-9]*\) .*/\1/p' | grep . || echo 0
}

# heal: every fault undone: every switch port back at the fabric's rate,
# every host's eth0 unshaped, every leaf's drops gone.
heal() {
  local s l k i
  for l in $(seq 1 "$leaves"); do
    for k in $(seq 0 $((per_leaf - 1))); do clos_port "$(leaf_ns "$l")" "h$k"; done
    for s in $(seq 1 "$spines"); do
      clos_port "$(leaf_ns "$l")" "s$s"
      clos_port "$(spine_ns "$s")" "l$l"
    done
    drop_leaf "$l" 0
  done
  for i in $(seq 0 $((nodes - 1))); do unshape "$(node_ns "$i")" eth0; done
}

# clos_port NAMESPACE DEV: a switch port back at the fabric's rate
# (unshaped when clos_up was given none).
clos_port() {
  if [ -n "$rate" ]; then shape "$1" "$2" "$rate"; else unshape "$1" "$2"; fi
}

# clos_addr I: host I's address.
clos_addr() { echo "198.18.$((10 + $1 / per_leaf + 1)).$(($1 % per_leaf + 2))"; }

node_ns() { echo "${tag}n$1x$$"; }
leaf_ns() { echo "${tag}l$1x$$"; }
spine_ns() { echo "${tag}s$1x$$"; }

# clos_down: every process still in the fabric's namespaces ended by its
# id (the lldpds, and whatever a script left there: a namespace with a
# process in it outlives `ip netns del`, its ports and addresses with it),
# then the namespaces and the scratch directory. Safe to call twice.
clos_down() {
  local p n left
  for n in $(clos_namespaces); do
    for p in $(ip netns pids "$n" 2>/dev/null); do kill "$p" 2>/dev/null; done
  done
  # an lldpd's monitor hands the TERM to its worker and leaves once the
  # worker has; wait for them (at most 5 s) so none outlives its namespace
  for _ in $(seq 50); do
    left=
    for n in $(clos_namespaces); do left+=$(ip netns pids "$n" 2>/dev/null); done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for n in $(clos_namespaces); do ip netns del "$n" 2>/dev/null; done
  [ -n "${out:-}" ] && rm -rf "$out"
  out=
  true
}

# clos_namespaces: every namespace of the fabric that exists.
clos_namespaces() {
  local s l i
  {
    for s in $(seq 1 "${spines:-0}"); do spine_ns "$s"; done
    for l in $(seq 1 "${leaves:-0}"); do leaf_ns "$l"; done
    for i in $(seq 0 $((${nodes:-0} - 1))); do node_ns "$i"; done
  } | grep -Fxf <(ip netns list | cut -d' ' -f1)
}
