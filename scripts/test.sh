#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs dependencies, checks
# formatting and lints, then runs every test (unit, golden, loopback over
# tcp/shm/sockets, network namespaces, faults, huge pages). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

./scripts/install-deps.sh
# formatting and lints need rustup's rustfmt and clippy (Debian's are 1.63,
# too old for this code); CI has them and always runs both
if command -v rustup >/dev/null 2>&1; then
    cargo fmt --all -- --check
    cargo clippy --release --all-targets --locked -- -D warnings
elif [ "${CI:-}" = true ]; then
    echo "test.sh: CI checks formatting and lints, and this machine has no rustup (rustfmt, clippy)" >&2
    exit 1
else
    echo "test.sh: formatting and lints not checked: no rustup here for rustfmt and clippy ($(rustc --version)); CI checks them" >&2
fi
cargo test --release --workspace --locked --no-fail-fast
