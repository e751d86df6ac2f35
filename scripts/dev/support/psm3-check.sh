#!/usr/bin/env bash
# fabdiag on psm3, a provider that requires a context per operation
# (FI_CONTEXT), through its sockets HAL, which runs over any Ethernet
# interface: Debian's libfabric has no psm3, so CI runs that path only
# with fabdiag lending contexts to tcp and shm (a test hook); this runs it
# on the real provider. Builds libfabric with psm3 from the public source
# (ofiwg/libfabric, a release tag), then runs fabdiag's test of it
# (crates/cli/tests/op_contexts.rs: every tool between two network
# namespaces, 198.18.9.0/24) against that build, and prints doctor's line.
#
#   scripts/dev/support/psm3-check.sh SRC_GIT [PREFIX]
#       SRC_GIT: the git directory of a libfabric clone (e.g. the one
#       `git clone --bare https://github.com/ofiwg/libfabric` makes);
#       PREFIX: where the build goes (default /tmp/libfabric-psm3),
#       reused when it has psm3
#
# Needs root; installs the autotools, libnuma-dev and uuid-dev where
# missing (scripts/dev/lib/dev-deps.sh). v2.4.0 by default (LIBFABRIC_TAG):
# checked 2026-11-24.
set -euo pipefail
LIBFABRIC_TAG=${LIBFABRIC_TAG:-v2.4.0}
src=${1:?usage: scripts/dev/support/psm3-check.sh SRC_GIT [PREFIX]}
prefix=${2:-/tmp/libfabric-psm3}
cd "$(dirname "$0")/../../.."
# shellcheck source=scripts/dev/lib/dev-deps.sh
source scripts/dev/lib/dev-deps.sh
need_packages psm3-check autoreconf=autoconf aclocal=automake libtoolize=libtool \
  make=build-essential ip=iproute2 numa.h=libnuma-dev uuid/uuid.h=uuid-dev
if ! LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/fi_info" -l 2>/dev/null | grep -q '^psm3:'; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  git --git-dir="$src" archive --prefix=libfabric/ "$LIBFABRIC_TAG" | tar -x -C "$work"
  cd "$work/libfabric"
  # psm3 with the sockets HAL (and UDP) only: the verbs HAL needs RDMA
  # hardware and rdma-core; tcp and shm for the rest of the suite
  flags=(--prefix="$prefix" --disable-static
    --enable-psm3 --enable-psm3-sockets --enable-psm3-udp --disable-psm3-verbs
    --enable-shm --enable-tcp --enable-sockets
    --disable-verbs --disable-efa --disable-psm2 --disable-opx --disable-cxi
    --disable-usnic --disable-ucx --disable-lpp)
  ./autogen.sh >"$work/autogen.log" 2>&1 || { tail -20 "$work/autogen.log" >&2; exit 1; }
  ./configure "${flags[@]}" >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" >&2; exit 1; }
  make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; exit 1; }
  make install >/dev/null
  cd - >/dev/null
  echo "libfabric $LIBFABRIC_TAG built into $prefix: configure ${flags[*]}"
fi
lib="$prefix/lib/libfabric.so.1"
cargo build --release --locked -p fabdiag >/dev/null
doctor=$(FABDIAG_LIBFABRIC="$lib" target/release/fabdiag doctor)
grep -E '^(libfabric$|  /| *providers |  psm3 )' <<<"$doctor"
grep -q '^  psm3 ' <<<"$doctor" || { echo "psm3-check: fabdiag does not list psm3 from $lib" >&2; exit 1; }
FABDIAG_LIBFABRIC="$lib" cargo test --release --locked -p fabdiag --test integration -- --nocapture op_contexts::
