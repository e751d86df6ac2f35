#!/bin/bash
# fabdiag serve's limits under a crowd of clients asking beyond them:
# N clients (default 200) each ask for a GiB of buffer or an hour of
# duration from `fabdiag serve --max-memory 64K --max-test-seconds 5`,
# each is refused, and the server's resident memory and open descriptors
# after the first 10 and after all N are printed. The suite runs the same
# test with 100 clients; this runs it with as many as asked.
#   scripts/dev/demos/serve-limits.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
n="${1:-200}"
FABDIAG_TEST_REFUSED_CLIENTS="$n" cargo test --release -q -p fabdiag --test integration -- \
    serve::clients_beyond_the_limits_leave_the_server_as_it_was --nocapture 2>&1 |
    grep -E -A6 'server after|test result|panicked'
