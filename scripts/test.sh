#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs dependencies, checks
# formatting and lints, then runs every test (unit, golden, loopback over
# tcp/shm/sockets, network namespaces, faults, huge pages). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

./scripts/install-deps.sh
cargo fmt --all -- --check
cargo clippy --release --all-targets --locked -- -D warnings
cargo test --release --workspace --locked --no-fail-fast
