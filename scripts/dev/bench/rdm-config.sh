#!/usr/bin/env bash
# Whether fabdiag's endpoint configuration, rather than its code, is what
# fabtests' fi_rdm_pingpong gains on it over tcp. Builds fi_rdm_pingpong
# from libfabric's sources with six switches read from its environment,
# each one of the ways fabdiag opens its endpoint where fi_rdm_pingpong
# differs (crates/fabric/src/shim.c), through scripts/dev/support/fabtests-build.sh:
#   FTX_SHARED_CQ  one completion queue for sends and receives
#   FTX_CQ_DATA    FI_CQ_FORMAT_DATA entries (fi_rdm_pingpong's: CONTEXT)
#   FTX_AV_TABLE   an FI_AV_TABLE address vector (fi_rdm_pingpong's: MAP)
#   FTX_CTX2       FI_CONTEXT2 offered besides FI_CONTEXT
#   FTX_MR_EP      FI_MR_ENDPOINT in the registration modes offered
#   FTX_NO_TCLASS  no FI_TC_LOW_LATENCY traffic class asked for
# then runs RUNS rounds of fabdiag send-lat, fi_rdm_pingpong as it comes
# and fi_rdm_pingpong with the switches VARIANT sets (default: all six),
# over tcp on loopback, server on CPU 0 and client on CPU 1 (BENCH_CPUS),
# each client counted by scripts/dev/lib/syscall-count.c for the time one pass
# of its polling loop takes. Prints each round, the medians and the rounds
# paired (rank-test.py --paired). Not a test: the figures depend on the
# machine and its load.
#
# usage: FABDIAG_BIN=PATH scripts/dev/bench/rdm-config.sh SRC_GIT [RUNS (15)] [SIZE (8)] [ITERS (200000)]
#   SRC_GIT: a libfabric clone's git directory (`git clone --bare https://github.com/ofiwg/libfabric`)
#   VARIANT="FTX_SHARED_CQ=1 FTX_CQ_DATA=1": the switches the variant runs with
#   RDM_CONFIG_DIR: where the build goes (default /tmp/fabtests-rdm-config)
set -euo pipefail
src=${1:?usage: FABDIAG_BIN=PATH scripts/dev/bench/rdm-config.sh SRC_GIT [RUNS] [SIZE] [ITERS]}
cd "$(dirname "$0")/../../.."
RUNS=${2:-15} SIZE=${3:-8} ITERS=${4:-200000} PROV=tcp
VARIANT=${VARIANT:-FTX_SHARED_CQ=1 FTX_CQ_DATA=1 FTX_AV_TABLE=1 FTX_CTX2=1 FTX_MR_EP=1 FTX_NO_TCLASS=1}
B=${FABDIAG_BIN:-target/release/fabdiag}
dir=${RDM_CONFIG_DIR:-/tmp/fabtests-rdm-config}
[ -x "$B" ] || { echo "rdm-config.sh: no fabdiag at $B (cargo build --release, or FABDIAG_BIN)" >&2; exit 1; }
# shellcheck source=scripts/dev/lib/bench-common.sh
source scripts/dev/lib/bench-common.sh

lib=$(mktemp -d)
trap 'rm -rf "$lib"' EXIT
# the switches, after the hints fi_rdm_pingpong sets itself and before it
# opens anything; fabtests-build.sh builds into $dir once
cat >"$lib/edit.py" <<'EOF'
import sys
p = "benchmarks/rdm_pingpong.c"
s = open(p).read()
anchor = "\thints->addr_format = opts.address_format;\n"
if anchor not in s:
    sys.exit("rdm-config.sh: rdm_pingpong.c is not the one this script knows")
knobs = anchor + "".join("\tif (getenv(\"%s\"))\n\t\t%s;\n" % kv for kv in [
    ("FTX_SHARED_CQ", "opts.options |= FT_OPT_CQ_SHARED"),
    ("FTX_CQ_DATA", "cq_attr.format = FI_CQ_FORMAT_DATA"),
    ("FTX_AV_TABLE", "av_attr.type = FI_AV_TABLE"),
    ("FTX_CTX2", "hints->mode |= FI_CONTEXT2"),
    ("FTX_MR_EP", "hints->domain_attr->mr_mode |= FI_MR_ENDPOINT"),
    ("FTX_NO_TCLASS", "hints->tx_attr->tclass = 0"),
])
open(p, "w").write(s.replace(anchor, knobs, 1))
EOF
FABTESTS_EDIT="python3 $lib/edit.py" scripts/dev/support/fabtests-build.sh "$src" "$dir" >"$lib/build.log" 2>&1 ||
    { tail -20 "$lib/build.log" >&2; echo "rdm-config.sh: the build failed" >&2; exit 1; }

cc -O2 -shared -fPIC -o "$lib/count.so" scripts/dev/lib/syscall-count.c -ldl
port=$((47000 + RANDOM % 4000))
SRV="taskset -c $SCPU" CLI="taskset -c $CCPU"
# one fabdiag|plain|variant: "USEC NS_PER_POLL_PASS" (poll_figures)
one() {
    port=$((port + 3))
    rm -f "$lib/out"
    local us count="SYSCALL_COUNT_OUT=$lib/out LD_PRELOAD=$lib/count.so"
    case $1 in
    fabdiag) us=$(CLIENT_ENV=$count fabdiag_lat "$B" "$PROV" "$SIZE" "$ITERS" "$port") ;;
    plain) us=$(CLIENT_ENV=$count fi_rdm_pingpong_lat "$dir/bin" "$PROV" "$SIZE" "$ITERS" "$port" $((port + 1)) $((port + 2))) ;;
    *) us=$(PEER_ENV=$VARIANT CLIENT_ENV=$count fi_rdm_pingpong_lat "$dir/bin" "$PROV" "$SIZE" "$ITERS" "$port" $((port + 1)) $((port + 2))) ;;
    esac
    poll_figures "$lib/out" "${us:-nan}" "$ITERS" | cut -d' ' -f1,2
}
echo "send-lat / fi_rdm_pingpong / fi_rdm_pingpong with $VARIANT; $PROV, $SIZE B, $ITERS iterations, $RUNS rounds, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), server CPU $SCPU, client CPU $CCPU"
echo "round  send-lat usec ns/pass  fi_rdm_pingpong usec ns/pass  variant usec ns/pass"
declare -a F R V
for r in $(seq "$RUNS"); do
    f=$(one fabdiag) x=$(one plain) v=$(one variant)
    printf '%5d  %-22s %-29s %s\n' "$r" "$f" "$x" "$v"
    F+=("$f") R+=("$x") V+=("$v")
done
col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{print $k}'; }
printf 'median  send-lat %s usec %s ns a pass  fi_rdm_pingpong %s usec %s ns a pass  variant %s usec %s ns a pass\n' \
    "$(col 1 "${F[@]}" | median)" "$(col 2 "${F[@]}" | median)" "$(col 1 "${R[@]}" | median)" \
    "$(col 2 "${R[@]}" | median)" "$(col 1 "${V[@]}" | median)" "$(col 2 "${V[@]}" | median)"
# shellcheck disable=SC2046
pair_line variant fi_rdm_pingpong $(col 1 "${V[@]}") -- $(col 1 "${R[@]}")
# shellcheck disable=SC2046
pair_line send-lat variant $(col 1 "${F[@]}") -- $(col 1 "${V[@]}")
# shellcheck disable=SC2046
pair_line send-lat fi_rdm_pingpong $(col 1 "${F[@]}") -- $(col 1 "${R[@]}")
echo "poll passes, ns (lower is faster):"
# shellcheck disable=SC2046
pair_line variant fi_rdm_pingpong $(col 2 "${V[@]}") -- $(col 2 "${R[@]}")
# shellcheck disable=SC2046
pair_line send-lat variant $(col 2 "${F[@]}") -- $(col 2 "${V[@]}")
# shellcheck disable=SC2046
pair_line send-lat fi_rdm_pingpong $(col 2 "${F[@]}") -- $(col 2 "${R[@]}")
