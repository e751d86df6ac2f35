#!/usr/bin/env bash
# Installs everything fabdiag needs to build, test, package and benchmark on
# Debian 12 (as root): libfabric (headers, library, fi_info/fi_pingpong), a C
# compiler for the libfabric shim, iproute2 and nftables for the namespace tests
# (links shaped, cut, partitioned and made lossy), lldpd for the namespace
# Clos (each namespace's LLDP neighbours),
# iperf3 for the benchmark, dpkg-dev and man-db for the package and its
# manual pages, Open MPI, Slurm and munge for the sweep's launcher tests,
# Chromium for rendering the sweep's HTML report in a test, and a Rust
# toolchain with rustfmt and clippy.
set -euo pipefail

need_rust="1.87.0"
export PATH="$HOME/.cargo/bin:$PATH"

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: run as root (apt-get install)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
    libfabric-dev libfabric-bin libfabric1 \
    build-essential pkg-config ca-certificates \
    iproute2 nftables lldpd iperf3 procps strace \
    dpkg-dev binutils man-db bash \
    openmpi-bin slurm-wlm munge chromium \
    prometheus prometheus-node-exporter >/dev/null
# lldpd is for the namespaces, each running its own; the system's own
# daemon, where the package started one, would send LLDP frames out of
# this machine's NICs
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet lldpd 2>/dev/null; then
    systemctl disable --now lldpd >/dev/null 2>&1 || true
fi

version_ok() {
    command -v cargo >/dev/null 2>&1 || return 1
    local have
    have="$(rustc --version | awk '{print $2}')"
    [ "$(printf '%s\n%s\n' "$need_rust" "$have" | sort -V | head -n1)" = "$need_rust" ]
}

# Whether the archive offers package $1 at a version >= need_rust (the
# version it brings, read from apt, not assumed).
offered_ok() {
    local v
    v="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    [ -n "$v" ] && [ "$v" != "(none)" ] || return 1
    v="${v%%+*}"
    [ "$(printf '%s\n%s\n' "$need_rust" "$v" | sort -V | head -n1)" = "$need_rust" ]
}

if ! version_ok; then
    if command -v rustup >/dev/null 2>&1; then
        rustup toolchain install stable --profile minimal
        rustup default stable
    elif offered_ok rustc-web && offered_ok cargo-web; then
        # Debian 12's newer toolchain, packaged for building browsers
        # (bookworm-security); it installs /usr/bin/rustc and cargo
        apt-get install -y -qq --no-install-recommends rustc-web cargo-web >/dev/null
    else
        apt-get install -y -qq --no-install-recommends cargo rustc >/dev/null
    fi
fi
if ! version_ok; then
    echo "install-deps.sh: fabdiag needs Rust >= $need_rust; found $(rustc --version 2>/dev/null || echo none): install rustup's stable toolchain, or Debian 12's rustc-web and cargo-web (bookworm-security)" >&2
    exit 1
fi
if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
echo "install-deps.sh: ok ($(rustc --version), libfabric $(dpkg-query -W -f='${Version}' libfabric1))"
