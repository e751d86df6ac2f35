#!/usr/bin/env bash
# Packs what a GPU machine without Rust or network access needs to check
# fabdiag's GPU paths into gpu-kit/ (git-ignored): copy it into the root
# of a copy of this repository on that machine, where
# scripts/dev/gpu/gpu-run.sh runs it:
#   gpu-kit/fabdiag              release build, stripped
#   gpu-kit/gpu-tests            crates/cli/tests/integration (run with the filter gpu::), release, stripped
#   gpu-kit/libfabric-TAG-src.tar.gz  libfabric v2.6.0 and v1.22.0 with
#                                configure (build-libfabric-cuda.sh prepare)
# Usage: scripts/dev/gpu/gpu-kit.sh LIBFABRIC_GIT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$here"
src=${1:?"the libfabric git directory (e.g. from: git clone --bare https://github.com/ofiwg/libfabric)"}
# libfabric's autogen.sh (the `prepare` step) needs the autotools
for t in autoreconf automake libtoolize; do
  command -v "$t" >/dev/null ||
    { echo "gpu-kit.sh: $t is missing (apt-get install autoconf automake libtool)" >&2; exit 1; }
done
mkdir -p gpu-kit
for tag in v2.6.0 v1.22.0; do
  t=gpu-kit/libfabric-$tag-src.tar.gz
  [ -f "$t" ] || LIBFABRIC_TAG=$tag scripts/build-libfabric-cuda.sh prepare "$src" "$t"
done
cargo build --release --bin fabdiag
install -m 755 target/release/fabdiag gpu-kit/fabdiag
t=$(cargo test --release -p fabdiag --test integration --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "integration":
        print(m["executable"])')
install -m 755 "$t" gpu-kit/gpu-tests
strip gpu-kit/fabdiag gpu-kit/gpu-tests
du -sh gpu-kit/*
