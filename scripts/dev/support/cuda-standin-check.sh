#!/usr/bin/env bash
# A dry run, without a GPU, of the GPU test path scripts/dev/gpu/gpu-run.sh runs on
# a GPU machine (crates/cli/tests/gpu.rs, every test): against the CPU
# stand-in for the CUDA driver (crates/testkit/cuda/cpu_cuda.cpp, also answering
# as libcudart.so) and a libfabric built with CUDA support from CUDA 13's
# headers (NVIDIA's PyPI wheels; build-libfabric-cuda.sh). It checks
# fabdiag's and the tests' use of the CUDA APIs, of FI_HMEM_CUDA
# registration and of libfabric's CUDA paths (shm moving device memory
# between processes through CUDA IPC, which the stand-in does with shared
# memory); it says nothing about a GPU: its figures are memcpy on this CPU.
#
#   scripts/dev/support/cuda-standin-check.sh SRC_GIT [PREFIX]
#       SRC_GIT: the git directory of a libfabric clone (e.g. the one
#       `git clone --bare https://github.com/ofiwg/libfabric` makes);
#       PREFIX: where the build goes (default /tmp/libfabric-cuda-standin),
#       reused when present
#
# Needs the autotools, pip (for the headers) and a C++ compiler. v2.6.0 by
# default (LIBFABRIC_TAG): 7 of 7 tests passed, 2026-11-25.
set -euo pipefail
LIBFABRIC_TAG=${LIBFABRIC_TAG:-v2.6.0}
src=${1:?usage: scripts/dev/support/cuda-standin-check.sh SRC_GIT [PREFIX]}
prefix=${2:-/tmp/libfabric-cuda-standin}
cd "$(dirname "$0")/../../.."
for t in autoreconf libtoolize pip3; do
  command -v "$t" >/dev/null || { echo "cuda-standin-check: needs $t (apt-get install autoconf automake libtool python3-pip)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -e "$prefix/lib/libfabric.so.1" ]; then
  # the headers only: cuda_runtime.h needs crt/, and libfabric nvml.h
  pip3 download -q --no-deps -d "$work/wheels" \
    'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*' 'nvidia-nvml-dev==13.0.*'
  python3 - "$work" <<'PY'
import glob, shutil, sys, zipfile
work = sys.argv[1]
for w in glob.glob(work + "/wheels/*.whl"):
    zipfile.ZipFile(w).extractall(work + "/x")
shutil.copytree(work + "/x/nvidia/cu13/include", work + "/cuda/include", dirs_exist_ok=True)
PY
  LIBFABRIC_TAG=$LIBFABRIC_TAG scripts/build-libfabric-cuda.sh prepare "$src" "$work/src.tar.gz"
  scripts/build-libfabric-cuda.sh build "$work/src.tar.gz" "$prefix" "$work/cuda"
fi
scripts/dev/support/build-cpu-cuda.sh "$prefix/cpu-cuda"
trace=$work/ipc-trace
LD_LIBRARY_PATH="$prefix/cpu-cuda" FABDIAG_LIBFABRIC="$prefix/lib/libfabric.so.1" FABDIAG_CPU_CUDA_TRACE=$trace \
  cargo test --release --locked -p fabdiag --test integration -- --include-ignored --test-threads=1 gpu::
# device memory between two processes went device to device (shm's IPC
# protocol, which FI_HMEM_DEVICE_ONLY selects), not through host memory
opened=$(wc -l <"$trace" 2>/dev/null || echo 0)
echo "cuda-standin-check: $opened IPC handles opened by peer processes"
[ "$opened" -gt 0 ] || { echo "cuda-standin-check: no IPC handle was opened: shm copied device memory through host memory" >&2; exit 1; }
