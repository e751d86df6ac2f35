#!/usr/bin/env bash
# Packs what another machine (no Rust, no network, perhaps no libfabric or
# compiler) needs for the latency-floor check of
# scripts/dev/bench/latency-elsewhere.sh into gpu-kit/lat/ (git-ignored):
# copy it into the root of a copy of this repository on that machine.
# It holds:
#   bin/fabdiag [bin/fabdiag-before]   release builds, stripped
#   bin/fi_pingpong bin/fi_info        Debian's (libfabric-bin)
#   bin/fi_rdm_pingpong                fabtests, from FABTESTS_BIN
#   bin/core-pingpong                  scripts/dev/cost/core-pingpong.c
#   lib/                               Debian's libfabric.so.1 and the
#                                      libraries it links (not glibc's)
#   sbin/ip sbin/tc                    Debian's iproute2 behind wrappers
#                                      (netlib/ holds its libraries), for
#                                      the namespace scripts on a machine
#                                      without iproute2: PATH=$k/sbin:$PATH
# usage: scripts/dev/bench/latency-kit.sh FABTESTS_BIN [BEFORE_FABDIAG]
#   FABTESTS_BIN: e.g. /tmp/fabtests/bin from scripts/dev/support/fabtests-build.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
ft=${1:?"usage: scripts/dev/bench/latency-kit.sh FABTESTS_BIN [BEFORE_FABDIAG]"}
before=${2:-}
[ -x "$ft/fi_rdm_pingpong" ] || { echo "latency-kit.sh: no fi_rdm_pingpong in $ft (scripts/dev/support/fabtests-build.sh)" >&2; exit 1; }
[ -x /usr/bin/fi_pingpong ] || { echo "latency-kit.sh: no /usr/bin/fi_pingpong (apt-get install libfabric-bin)" >&2; exit 1; }
k=gpu-kit/lat
rm -rf "$k"
mkdir -p "$k/bin" "$k/lib"
cargo build --release --locked --bin fabdiag
install -m 755 target/release/fabdiag "$k/bin/fabdiag"
[ -z "$before" ] || install -m 755 "$before" "$k/bin/fabdiag-before"
install -m 755 /usr/bin/fi_pingpong /usr/bin/fi_info "$ft/fi_rdm_pingpong" "$k/bin/"
gcc -O2 -pthread -o "$k/bin/core-pingpong" scripts/dev/cost/core-pingpong.c
strip "$k"/bin/*
# libs_into DIR FILE: the libraries FILE links, glibc's left out (the
# other machine has its own), copied into DIR
libs_into() {
    local l
    for l in $(ldd "$2" | awk '/=> \//{print $3}'); do
        case "$(basename "$l")" in
            libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
            *) cp -L "$l" "$1/" ;;
        esac
    done
}
lf=$(ldconfig -p | awk '/libfabric\.so\.1 /{print $NF; exit}')
cp -L "$lf" "$k/lib/"
libs_into "$k/lib" "$lf"
# iproute2: the wrappers put netlib/ first for ip and for what
# `ip netns exec` starts, keeping LD_LIBRARY_PATH's lib/ behind it
mkdir -p "$k/sbin" "$k/netbin" "$k/netlib"
for t in ip tc; do
    install -m 755 "/usr/sbin/$t" "$k/netbin/$t"
    libs_into "$k/netlib" "/usr/sbin/$t"
    printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")/..\nLD_LIBRARY_PATH=$d/netlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$d/netbin/%s" "$@"\n' "$t" >"$k/sbin/$t"
    chmod 755 "$k/sbin/$t"
done
du -sh "$k"
