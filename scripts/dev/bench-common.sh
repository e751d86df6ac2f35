# Shared by the benchmark scripts (bench.sh, psm3-bench.sh, slow-mode.sh);
# sourced, never run. Not a test: the scripts' figures depend on the
# machine and its load.

# BENCH_CPUS="S C": the CPUs the server and the client are pinned to
# (default 0 and 1), read once here for every script
read -r SCPU CCPU <<< "${BENCH_CPUS:-0 1}"

# median: the median of the numbers on standard input, one a line ("nan"
# for none)
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# runs_line TOOL FIGURE...: the figures of every run, sorted (RUN_FIGURES)
runs_line() {
    local t=$1
    shift
    printf '  runs %-15s %s\n' "$t" "$(printf '%s\n' "$@" | sort -g | paste -sd ' ')"
}
