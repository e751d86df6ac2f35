#!/usr/bin/env bash
# The fast subset of the test suite, for the edit-test loop (about a
# minute once built): every crate's unit tests (option parsing, the
# engine, the schedule and the outlier rules, the report builders, the
# choreography against fakes, the fabric driver against a fake provider),
# the renderers against the originals' documents, the crate map, the
# manual pages' reference and the Markdown check of every page. The
# integration tests (real processes, namespaces, launchers) are not run:
# ./scripts/test.sh runs everything, as CI does.
#   scripts/dev/support/quick-test.sh [cargo test arguments after --]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH="$HOME/.cargo/bin:$PATH"
cargo test --release --workspace --locked --lib --bins --test originals --test tiers --test markdown -- "$@"
