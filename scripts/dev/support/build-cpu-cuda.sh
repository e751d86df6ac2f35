#!/usr/bin/env bash
# Builds the CPU stand-in for the CUDA driver (crates/testkit/cuda/cpu_cuda.cpp;
# what it is and is not: its header) into DIR as libcuda.so.1, with the
# links libcuda.so (the name cudarc opens) and libcudart.so (libfabric's
# CUDA support opens the runtime by that name; the stand-in answers both).
# Put DIR on LD_LIBRARY_PATH. The one definition of the build: the tests
# run it (fabdiag_testkit::cpu_cuda), and so does cuda-standin-check.sh.
#   scripts/dev/support/build-cpu-cuda.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/dev/support/build-cpu-cuda.sh DIR}
crates=$(cd "$(dirname "$0")/../../../crates" && pwd)
mkdir -p "$dir"
"${CXX:-c++}" -std=c++17 -O2 -g -shared -fPIC -pthread \
  -Wall -Wextra -Werror -Wno-unknown-pragmas \
  -I "$crates/testkit/cuda" -I "$crates/gpu/kernels" "$crates/testkit/cuda/cpu_cuda.cpp" -o "$dir/libcuda.so.1"
ln -sf libcuda.so.1 "$dir/libcuda.so"
ln -sf libcuda.so.1 "$dir/libcudart.so"
