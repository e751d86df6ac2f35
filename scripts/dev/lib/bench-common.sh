# Shared by the benchmark scripts (bench.sh, psm3-bench.sh, slow-mode.sh,
# fdtable-cost.sh);
# sourced, never run. Not a test: the scripts' figures depend on the
# machine and its load.

# BENCH_CPUS="S C": the CPUs the server and the client are pinned to
# (default 0 and 1), read once here for every script
read -r SCPU CCPU <<< "${BENCH_CPUS:-0 1}"

# median: the median of the numbers on standard input, one a line ("nan"
# for none); an empty line or "nan" (a run that gave no figure) is left out
median() { sort -g | awk 'NF && $1 != "nan" {a[++n]=$1} END {if (n == 0) print "nan"; else if (n % 2) print a[(n+1)/2]; else print (a[n/2]+a[n/2+1])/2}'; }

# fig COMMAND...: the command's figure, or "nan" for a run that gave none
# (figures kept in a word-split list would otherwise lose it, and every
# later round of a paired test would shift)
fig() { local v; v=$("$@"); echo "${v:-nan}"; }

# poll_figures FILE USEC ITERS: from scripts/dev/lib/syscall-count.c's line in
# FILE for a run of ITERS round trips whose one-way time was USEC,
# "USEC NS_PER_POLL_PASS POLL SEND RECV READ WRITE" (the calls a round
# trip; "nan" throughout when there is no count or no time)
poll_figures() {
    awk -v us="$2" -v n="$3" '{for (i = 2; i <= NF; i++) {split($i, a, "="); c[a[1]] = a[2]}}
        END {if (!c["poll"] || us == "nan" || us == "") {print "nan nan nan nan nan nan nan"; exit}
             printf "%s %.0f %.2f %.2f %.2f %.2f %.2f\n", us, us * 2 * n * 1000 / c["poll"],
                 c["poll"] / n, c["send"] / n, c["recv"] / n, c["read"] / n, c["write"] / n}' "$1" 2>/dev/null ||
        echo "nan nan nan nan nan nan nan"
}

# runs_line TOOL FIGURE...: the figures of every run, sorted (RUN_FIGURES),
# and how many runs gave none
runs_line() {
    local t=$1
    shift
    printf '  runs %-15s %s\n' "$t" "$(printf '%s\n' "$@" | awk 'NF && $1 != "nan"' | sort -g | paste -sd ' ')$(printf '%s\n' "$@" |
        awk '!NF || $1 == "nan" {n++} END {if (n) printf "  (%d lost)", n}')"
}

# rank_line A B A_FIGURE... -- B_FIGURE...: whether tool A's runs and tool
# B's differ beyond chance (the rank test of scripts/dev/lib/rank-test.py: p
# under 0.05 says they are apart), beside the medians' ratio, which with
# runs as spread as a VM's can differ by 5 % while the runs do not
rank_line() {
    local a=$1 b=$2
    shift 2
    printf '  rank %-15s against %-15s %s\n' "$a" "$b" "$(python3 "$(dirname "${BASH_SOURCE[0]}")/rank-test.py" "$@" 2>&1)"
}

# pair_line A B A_FIGURE... -- B_FIGURE...: the same runs round by round, in
# the order they ran (rank-test.py --paired): the median of each round's
# B/A (for times, A's speed over B's), the rounds A was faster in, and
# whether one tool is ahead round after round. What drifts slowly on a VM
# moves both runs of a round, so the rounds' ratios scatter less than the
# runs do.
pair_line() {
    local a=$1 b=$2
    shift 2
    printf '  pair %-15s against %-15s %s\n' "$a" "$b" "$(python3 "$(dirname "${BASH_SOURCE[0]}")/rank-test.py" --paired "$@" 2>&1)"
}

# paired_speed A_FIGURE... -- B_FIGURE... [-- C_FIGURE...]: A's speed over
# the better peer round by round: the median over the rounds of the
# round's best peer time / A's time. Where a VM puts whole runs in a slow
# mode (every tool alike) the runs of a row gather in two groups, and a
# median of all of a tool's runs lands in either depending on how many of
# them fell slow; the runs of one round mostly share the machine's state,
# so the rounds' ratios do not jump with it
paired_speed() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/rank-test.py" --median "$@" 2>/dev/null || echo nan
}

# fi_pingpong_lat PROVIDER SIZE ITERS PORT [DST]: one run of Debian's
# fi_pingpong (-e rdm) to DST (default 127.0.0.1, loopback), its server
# under $SRV and its client under $CLI
# (the caller's pinning, e.g. "taskset -c 0"; empty: not pinned),
# PEER_ENV (e.g. "LD_PRELOAD=...") in both sides' environment and
# CLIENT_ENV in the client's alone; prints the client's usec per one-way
# transfer (nothing when the run gave none)
fi_pingpong_lat() {
    local p=$1 s=$2 n=$3 port=$4 dst=${5:-127.0.0.1}
    # (env after timeout: a preload is for fi_pingpong, not for timeout)
    # shellcheck disable=SC2086
    $SRV timeout 120 env ${PEER_ENV:-} fi_pingpong -p "$p" -e rdm -S "$s" -I "$n" -B "$port" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.4
    # shellcheck disable=SC2086
    $CLI timeout 120 env ${PEER_ENV:-} ${CLIENT_ENV:-} fi_pingpong -p "$p" -e rdm -S "$s" -I "$n" -P "$port" "$dst" 2>/dev/null | awk 'NR==2 {print $7}'
    wait "$srv" || true
}

# fi_rdm_pingpong_lat FABTESTS_DIR PROVIDER SIZE ITERS OOB_PORT PORT SRC_PORT:
# one run of fabtests' fi_rdm_pingpong over loopback, as fi_pingpong_lat
# runs its peer ($SRV, $CLI, PEER_ENV, CLIENT_ENV), on its out-of-band
# port, the server's provider port and the client's (fabtests' default,
# 9228, would be shared by runs at once); prints the client's usec per
# one-way transfer (nothing when the run gave none)
fi_rdm_pingpong_lat() {
    local ft=$1 p=$2 s=$3 n=$4 oob=$5 sp=$6 src=$7
    # shellcheck disable=SC2086
    $SRV timeout 120 env ${PEER_ENV:-} "$ft/fi_rdm_pingpong" -p "$p" -S "$s" -I "$n" -w 100 -E="$oob" -B "$sp" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.4
    # shellcheck disable=SC2086
    $CLI timeout 120 env ${PEER_ENV:-} ${CLIENT_ENV:-} "$ft/fi_rdm_pingpong" -p "$p" -S "$s" -I "$n" -w 100 \
        -E="$oob" -P "$sp" -B "$src" 127.0.0.1 2>/dev/null | tail -1 | awk '{print $6}'
    wait "$srv" || true
}

# fabdiag_lat FABDIAG PROVIDER SIZE ITERS PORT: one run of fabdiag
# send-lat over loopback, as fi_pingpong_lat runs its peer ($SRV, $CLI,
# PEER_ENV, CLIENT_ENV); prints the client's mean one-way usec (nothing
# when the run gave none)
fabdiag_lat() {
    local b=$1 p=$2 s=$3 n=$4 port=$5
    # shellcheck disable=SC2086
    $SRV env ${PEER_ENV:-} "$b" send-lat -p "$port" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    # shellcheck disable=SC2086
    $CLI env ${PEER_ENV:-} ${CLIENT_ENV:-} "$b" send-lat 127.0.0.1 -p "$port" -P "$p" -s "$s" -n "$n" --warmup 100 --latency-gap 0 --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.3f" % (r["mean_ns"]/1000))' 2>/dev/null
    wait "$srv" || true
}
