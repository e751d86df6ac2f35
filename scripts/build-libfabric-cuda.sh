#!/usr/bin/env bash
# libfabric with CUDA (FI_HMEM_CUDA), for fabdiag's GPU memory on a GPU node.
# Debian's libfabric is built without it, and no package registry ships
# one, so it is built from the public source (ofiwg/libfabric, a release
# tag), with only the providers fabdiag tests with: shm, tcp, sockets.
# v2.6.0 by default: it opens libcuda.so.1 (1.22 wants the development
# link libcuda.so, which driver-only machines lack) and is newer than CUDA
# 13. fabdiag's tools ran against both, built here without CUDA, and
# against v2.6.0 built here with CUDA 12.4's headers from NVIDIA's PyPI
# wheels (no GPU: configure and make only need the headers); v2.6.0 and
# v1.22.0 both build with CUDA 13.0's, the GPU machine's version
# (2026-11-24; fabdiag ran against that v2.6.0 here): cuda_runtime.h
# there needs crt/, in a wheel of its own, and nvml.h another:
#   pip download --no-deps nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.* nvidia-nvml-dev==13.0.*
#   unzip each; CUDA_DIR/include = their nvidia/cu13/include merged
#
#   scripts/build-libfabric-cuda.sh prepare SRC_GIT OUT_TAR
#       on a machine with network and autotools: export tag $LIBFABRIC_TAG
#       from a clone (e.g. `git clone --bare https://github.com/ofiwg/libfabric`),
#       run autogen.sh, and pack the tree (a GPU machine may have no
#       network and no autotools)
#   scripts/build-libfabric-cuda.sh build SRC_TAR PREFIX [CUDA_DIR]
#       on a GPU machine: configure --with-cuda, make, install to PREFIX;
#       then FABDIAG_LIBFABRIC=PREFIX/lib/libfabric.so.1
#
# Check what a libfabric supports with: PREFIX/bin/fi_info -c FI_HMEM
set -euo pipefail
LIBFABRIC_TAG=${LIBFABRIC_TAG:-v2.6.0}
case "${1:-}" in
prepare)
  src=$2 out=$3
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git --git-dir="$src" archive --prefix=libfabric/ "$LIBFABRIC_TAG" | tar -x -C "$tmp"
  (cd "$tmp/libfabric" && ./autogen.sh >/dev/null)
  mkdir -p "$(dirname "$out")"
  tar -C "$tmp" -czf "$out" libfabric
  echo "packed libfabric $LIBFABRIC_TAG with configure into $out"
  ;;
build)
  tarball=$2 prefix=$3 cuda=${4:-/usr/local/cuda}
  [ -d "$cuda/include" ] || { echo "no CUDA toolkit at $cuda (pass its directory)" >&2; exit 1; }
  work=$(mktemp -d)
  tar -xzf "$tarball" -C "$work"
  cd "$work/libfabric"
  # --disable-static: fabdiag opens the shared library, and the build
  # is copied between machines (gpu-run.sh), so it is kept small
  # --enable-cuda-dlopen: without it configure links -lcudart -lcuda
  # -lnvidia-ml, and a toolkit keeps libcuda.so and libnvidia-ml.so only
  # as stubs (lib64/stubs), which it does not search; opened at run time,
  # the build needs the headers alone
  # (one list, so the line printed below is the line that ran)
  flags=(--prefix="$prefix" --with-cuda="$cuda" --enable-cuda-dlopen --disable-static
    --enable-shm --enable-tcp --enable-sockets
    --disable-verbs --disable-efa --disable-psm2 --disable-psm3 --disable-opx
    --disable-usnic --disable-rxd --disable-udp --disable-mrail --disable-ucx
    --disable-lpp --disable-xpmem --disable-perf)
  ./configure "${flags[@]}" >"$work/configure.log" 2>&1 ||
    { tail -30 "$work/configure.log" >&2; exit 1; }
  grep -E "^ *(shm|tcp|sockets|CUDA|cuda)" "$work/configure.log" | head -10 || true
  make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; exit 1; }
  make install >/dev/null
  # stripped: the build is packed into one small file to copy back from
  # the GPU machine (scripts/dev/gpu/gpu-run.sh), and debug symbols are
  # most of it
  find "$prefix/lib" "$prefix/bin" -type f \( -name '*.so*' -o -perm -u+x \) \
    -exec strip --strip-unneeded {} + 2>/dev/null || true
  echo "configure: ${flags[*]}"
  "$prefix/bin/fi_info" --version | head -2
  "$prefix/bin/fi_info" -c FI_HMEM -t FI_EP_RDM 2>/dev/null | grep -E "provider|domain" | sort -u | head -20 || true
  ;;
*)
  sed -n 2,17p "$0"
  exit 2
  ;;
esac
