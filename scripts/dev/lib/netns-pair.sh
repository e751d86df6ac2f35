# shellcheck shell=bash
# Sourced by the monitor scripts (monitor-soak.sh, monitor-cost.sh): two
# network namespaces A and B joined by a veth pair, A at SUBNET.1/24 and
# B at SUBNET.2/24, a scratch directory, and a copy of fabdiag in it.
# Needs root and iproute2; removes what it made on exit (every process
# left in either namespace included). Defines nothing else and runs
# nothing when sourced.

# fabdiag_copy: builds fabdiag and sets bin to a copy of it in work, so
# that a rebuild during a long run does not replace the program under test.
fabdiag_copy() {
  cargo build --release -q -p fabdiag
  cp target/release/fabdiag "$work/fabdiag"
  bin="$work/fabdiag"
}

# pair_up TAG SUBNET: sets A and B (the namespaces), VA (A's end of the
# link, for tc) and work (the scratch directory).
pair_up() {
  A=${1}A$$ B=${1}B$$ VA=${1}a$$
  local vb=${1}b$$
  work=$(mktemp -d)
  trap pair_down EXIT
  ip netns add "$A"
  ip netns add "$B"
  ip link add "$VA" type veth peer name "$vb"
  ip link set "$VA" netns "$A"
  ip link set "$vb" netns "$B"
  ip -n "$A" addr add "$2.1/24" dev "$VA"
  ip -n "$B" addr add "$2.2/24" dev "$vb"
  local ns
  for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
  ip -n "$A" link set "$VA" up
  ip -n "$B" link set "$vb" up
}

pair_down() {
  jobs -p | xargs -r kill 2>/dev/null || true
  ip netns pids "$A" 2>/dev/null | xargs -r kill 2>/dev/null || true
  ip netns pids "$B" 2>/dev/null | xargs -r kill 2>/dev/null || true
  sleep 0.5
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  rm -rf "$work"
}
