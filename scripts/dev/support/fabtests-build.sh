#!/usr/bin/env bash
# Builds fabtests (fi_rdm_pingpong, fi_rdm_tagged_bw, fi_rma_bw, ...) from
# libfabric's public sources at the tag that matches the libfabric they are
# built against, for scripts/dev/bench/bench.sh --fabtests and psm3-bench.sh.
#
#   scripts/dev/support/fabtests-build.sh SRC_GIT [PREFIX] [LIBFABRIC_PREFIX]
#       SRC_GIT: the git directory of a libfabric clone (e.g. the one
#       `git clone --bare https://github.com/ofiwg/libfabric` makes);
#       PREFIX: where the binaries go (default /tmp/fabtests, its bin/ then
#       holds them); LIBFABRIC_PREFIX: the libfabric to build against
#       (default /usr, Debian's).
#
# FABTESTS_TAG picks the tag (default: v + the version of that libfabric's
# fi_info, e.g. v1.17.0 for Debian 12's). FABTESTS_EDIT, a command, is run
# in the fabtests sources before they are configured (an experiment's
# build, scripts/dev/bench/rdm-config.sh; the build fails if it fails).
# Installs the autotools where missing (scripts/dev/lib/dev-deps.sh).
set -euo pipefail
src=${1:?usage: scripts/dev/support/fabtests-build.sh SRC_GIT [PREFIX] [LIBFABRIC_PREFIX]}
prefix=${2:-/tmp/fabtests}
lf=${3:-/usr}
# shellcheck source=scripts/dev/lib/dev-deps.sh
source "$(dirname "$0")/../lib/dev-deps.sh"
need_packages fabtests-build.sh autoreconf=autoconf aclocal=automake libtoolize=libtool \
    make=build-essential cc=build-essential
[ -e "$lf/include/rdma/fabric.h" ] || { echo "fabtests-build.sh: no $lf/include/rdma/fabric.h (apt-get install libfabric-dev)" >&2; exit 1; }
version=$(LD_LIBRARY_PATH="$lf/lib" "$lf/bin/fi_info" --version 2>/dev/null | sed -n 's/^libfabric: *//p' | head -1)
tag=${FABTESTS_TAG:-v${version%%[a-z]*}}
[ -n "${version}${FABTESTS_TAG:-}" ] || { echo "fabtests-build.sh: cannot tell the libfabric version under $lf" >&2; exit 1; }
if [ -x "$prefix/bin/fi_rdm_pingpong" ]; then
    echo "fabtests-build.sh: $prefix/bin already holds fabtests"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git --git-dir="$src" archive "$tag" fabtests | tar -x -C "$work"
cd "$work/fabtests"
[ -z "${FABTESTS_EDIT:-}" ] || bash -c "$FABTESTS_EDIT"
./autogen.sh >/dev/null
./configure -q --prefix="$prefix" --with-libfabric="$lf" >/dev/null
make -s -j"$(nproc)" >/dev/null 2>&1 || make -j1
make -s install >/dev/null
echo "fabtests-build.sh: fabtests $tag built against $lf (libfabric $version) in $prefix/bin"
