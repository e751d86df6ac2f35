#!/usr/bin/env bash
# The README's set-up on a Debian 12 that has no Rust at all: a root made
# with debootstrap from Debian's packages (no rustup, no cargo), entered with
# chroot (proc, sys and dev mounted), this checkout copied in (git archive of
# HEAD), then the README's first command run there (install-deps.sh, the
# build, write-bw --local), then the unit and golden tests (the workspace's
# libraries and fabdiag's own unit tests; the namespace, launcher and
# Prometheus tests need more of a machine than a chroot gives).
#
#   scripts/dev/demos/bare-debian-check.sh [ROOT]     (as root; ROOT default /var/tmp/fabdiag-bookworm)
#
# Prints each step's outcome and a summary line; the root is kept for a
# rerun (delete it to start over). Needs network access to Debian's
# archive, about 3 GiB of disk, and 20-40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root="${1:-/var/tmp/fabdiag-bookworm}"
mirror="${MIRROR:-http://deb.debian.org/debian}"

if [ "$(id -u)" -ne 0 ]; then
    echo "bare-debian-check.sh: run as root (debootstrap, chroot, mount)" >&2
    exit 1
fi
command -v debootstrap >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null

if [ ! -x "$root/usr/bin/apt-get" ]; then
    echo "== debootstrap bookworm into $root"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
fi
# the security archive carries rustc-web's newer versions
cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
# what Debian's installer writes and debootstrap does not: without it
# "localhost" does not resolve in the root
[ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
# this host's own local CAs (a network whose proxy re-signs TLS needs them to
# reach crates.io; a plain Debian box has none), installed once
# ca-certificates is in the root
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" sh -c 'command -v update-ca-certificates >/dev/null && update-ca-certificates >/dev/null' || true
fi

mounted=()
cleanup() {
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[$i]}" 2>/dev/null || true
    done
}
trap cleanup EXIT
for m in proc sys dev dev/pts; do
    mkdir -p "$root/$m"
    mount --bind "/$m" "$root/$m"
    mounted+=("$root/$m")
done

echo "== copying HEAD ($(git rev-parse --short HEAD)) into $root/src/fabdiag"
# (its target/ kept from an earlier run: only fabdiag's own crates build again)
mkdir -p "$root/src/fabdiag"
find "$root/src/fabdiag" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
git archive HEAD | tar -x -C "$root/src/fabdiag"

in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        TERM=dumb bash -c "cd /src/fabdiag && $1"
}

if in_root "command -v rustup" >/dev/null 2>&1; then
    echo "bare-debian-check.sh: the root has rustup; this check is for a Debian without it" >&2
    exit 1
fi

first='./scripts/install-deps.sh && cargo build --release && ./target/release/fabdiag write-bw --local'
echo "== the README's first command: $first"
if in_root "$first" > /tmp/bare-debian-first.log 2>&1; then
    first_ok=yes
else
    first_ok=no
fi
tail -n 25 /tmp/bare-debian-first.log
echo "== the toolchain: $(in_root 'rustc --version; cargo --version' | tr '\n' ' ')"

echo "== unit and golden tests"
tests='cargo test --release --workspace --locked --no-fail-fast --exclude fabdiag && cargo test --release --locked -p fabdiag --bins'
if in_root "$tests" > /tmp/bare-debian-tests.log 2>&1; then
    tests_ok=yes
else
    tests_ok=no
fi
grep -E "^test result|FAILED|panicked" /tmp/bare-debian-tests.log | sort | uniq -c
echo "== the test command's first steps (formatting and lints without rustup), cut off after 3 minutes"
in_root "timeout 180 ./scripts/test.sh > /tmp/test-sh.log 2>&1; grep -m1 '^test.sh:' /tmp/test-sh.log || echo 'test.sh said nothing of formatting and lints'" || true

echo "bare-debian-check.sh: first command ${first_ok}; unit and golden tests ${tests_ok} (logs: /tmp/bare-debian-first.log, /tmp/bare-debian-tests.log)"
[ "$first_ok" = yes ] && [ "$tests_ok" = yes ]
