#!/usr/bin/env bash
# fabdiag next to independent peers on this machine, same provider, same
# sizes; prints each figure and the ratio. Not a test: numbers depend on
# the machine. Usage: scripts/bench.sh [iterations]
#
#  1. ping-pong shape, tcp and shm: `fi_pingpong -e rdm` (libfabric-bin)
#     against `fabdiag send-bw -l 1` (one message, then the receiver's
#     zero-byte response). Compared as microseconds per round trip:
#     fi_pingpong's usec/xfer is per one-way transfer (half a round trip,
#     both legs full size); one fabdiag iteration is a full round trip
#     (full-size message, empty reply, and fabdiag also waits for the send's
#     own completion, as the originals wait for every ACK).
#  2. latency, tcp and shm: fi_pingpong's usec/xfer (half its round trip)
#     against `fabdiag send-lat` (mean of round trip / 2, no gap): the same
#     quantity, so the ratio is like for like.
#  3. streaming, tcp: `iperf3` over loopback TCP (the kernel ceiling that
#     libfabric's tcp provider sits on) against `fabdiag write-bw`
#     (64 KiB RMA writes, 256 per batch), in Gbit/s.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
ITERS="${1:-5000}"
cargo build --release -q
B=target/release/fabdiag
port=51000

pingpong() { # provider size port -> usec per round trip
    local p=$1 s=$2 cp=$3
    timeout 60 fi_pingpong -p "$p" -e rdm -S "$s" -I "$ITERS" -B "$cp" >/dev/null 2>&1 &
    sleep 0.5
    timeout 60 fi_pingpong -p "$p" -e rdm -S "$s" -I "$ITERS" -P "$cp" 127.0.0.1 2>/dev/null | awk 'NR==2 {printf "%.2f\n", 2 * $7}'
    wait
}

fabdiag_us() { # provider size -> usec per iteration
    local p=$1 s=$2 sp=$3
    $B send-bw -p "$sp" >/dev/null 2>&1 &
    sleep 0.3
    $B send-bw 127.0.0.1 -p "$sp" -P "$p" -s "$s" -l 1 -n "$ITERS" --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.2f" % (r["elapsed_ns"]/1000/r["iterations"]))'
    wait
}

printf '%-8s %6s  %16s  %16s  %s\n' provider size "fi_pingpong RTT" "fabdiag RTT" "ratio peer/fabdiag (1.00 = same speed)"
for p in tcp shm; do
    for s in 64 4096 65536; do
        a=$(pingpong "$p" "$s" $((port++)))
        b=$(fabdiag_us "$p" "$s" $((port++)))
        printf '%-8s %6s  %13s us  %13s us  %.2f\n' "$p" "$s" "$a" "$b" "$(echo "$a / $b" | bc -l)"
    done
done

echo
pp_oneway() { # provider size port -> usec per one-way transfer
    local p=$1 s=$2 cp=$3
    timeout 60 fi_pingpong -p "$p" -e rdm -S "$s" -I "$ITERS" -B "$cp" >/dev/null 2>&1 &
    sleep 0.5
    timeout 60 fi_pingpong -p "$p" -e rdm -S "$s" -I "$ITERS" -P "$cp" 127.0.0.1 2>/dev/null | awk 'NR==2 {print $7}'
    wait
}
lat_oneway() { # provider size port -> mean one-way usec
    local p=$1 s=$2 sp=$3
    $B send-lat -p "$sp" >/dev/null 2>&1 &
    sleep 0.3
    $B send-lat 127.0.0.1 -p "$sp" -P "$p" -s "$s" -n "$ITERS" --latency-gap 0 --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.2f" % (r["mean_ns"]/1000))'
    wait
}
printf '%-8s %6s  %16s  %16s  %s\n' provider size "fi_pingpong 1-way" "send-lat 1-way" "ratio peer/fabdiag"
for p in tcp shm; do
    for s in 8 4096; do
        a=$(pp_oneway "$p" "$s" $((port++)))
        b=$(lat_oneway "$p" "$s" $((port++)))
        printf '%-8s %6s  %13s us  %13s us  %.2f\n' "$p" "$s" "$a" "$b" "$(echo "$a / $b" | bc -l)"
    done
done

echo
ip=$((port++))
iperf3 -s -1 -p "$ip" >/dev/null 2>&1 &
sleep 0.5
ig=$(iperf3 -c 127.0.0.1 -p "$ip" -t 5 -J | python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))')
sp=$((port++))
$B write-bw -p "$sp" >/dev/null 2>&1 &
sleep 0.3
fg=$($B write-bw 127.0.0.1 -p "$sp" -P tcp -D 5 --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["results"][0]["bw_gbit_per_s"])')
wait
printf 'streaming over loopback: iperf3 %s Gbit/s, fabdiag write-bw (tcp) %s Gbit/s, ratio fabdiag/iperf3 %.2f\n' "$ig" "$fg" "$(echo "$fg / $ig" | bc -l)"
