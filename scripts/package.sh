#!/usr/bin/env bash
# Builds fabdiag_<version>_<arch>.deb from the release binary with Debian's
# own tools (dpkg-shlibdeps for the dependencies, dpkg-deb for the archive):
#   /usr/bin/fabdiag, every original tool name as a link to it, the manual
#   pages and the bash/zsh/fish completions the binary generates from its
#   option tables, and the README, the user guide (docs/) and the changelog
#   as documentation. libfabric is only
#   recommended: fabdiag loads it at run time and explains its absence.
#
# usage: scripts/package.sh [--binary PATH] [--out DIR]
#   --binary  the fabdiag to package (default: target/release/fabdiag,
#             built with cargo if missing)
#   --out     where the .deb goes (default: target/debian)
# Prints the path of the package it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bin=target/release/fabdiag
out=target/debian
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) bin="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "package.sh: unknown argument '$1' (usage: scripts/package.sh [--binary PATH] [--out DIR])" >&2; exit 1 ;;
    esac
done
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || { echo "package.sh: $tool is missing (apt-get install dpkg-dev binutils gzip)" >&2; exit 1; }
done
if [ ! -x "$bin" ]; then
    cargo build --release --locked
fi

version="$("$bin" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/debian/fabdiag"

install -D -m 0755 "$bin" "$root/usr/bin/fabdiag"
strip --strip-debug "$root/usr/bin/fabdiag"

# One manual page per command name; every name but fabdiag's own pages is
# an original tool name, installed as a link to the one binary.
"$bin" manpages "$stage/man"
install -d "$root/usr/share/man/man1"
for page in "$stage"/man/*.1; do
    name="$(basename "$page" .1)"
    gzip -9n < "$page" > "$root/usr/share/man/man1/$name.1.gz"
    case "$name" in
        fabdiag|fabdiag-*) ;;
        *) ln -s fabdiag "$root/usr/bin/$name" ;;
    esac
done

install -d "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"
for name in $(cd "$root/usr/bin" && ls); do
    "$bin" completions bash "$name" > "$root/usr/share/bash-completion/completions/$name"
    "$bin" completions zsh "$name" > "$root/usr/share/zsh/vendor-completions/_$name"
    "$bin" completions fish "$name" > "$root/usr/share/fish/vendor_completions.d/$name.fish"
done

# the health gate's integrations: Slurm's HealthCheckProgram and a prolog
# example, and the NHC check (copied into /etc/nhc/scripts by the site)
install -D -m 0755 contrib/slurm/fabdiag-healthcheck "$root/usr/share/fabdiag/slurm/fabdiag-healthcheck"
install -D -m 0755 contrib/slurm/prolog.sh "$root/usr/share/fabdiag/slurm/prolog.sh"
install -D -m 0644 contrib/nhc/fabdiag.nhc "$root/usr/share/fabdiag/nhc/fabdiag.nhc"
install -D -m 0644 contrib/grafana/fabdiag.json "$root/usr/share/fabdiag/grafana/fabdiag.json"
install -D -m 0644 contrib/prometheus/fabdiag-alerts.yml "$root/usr/share/fabdiag/prometheus/fabdiag-alerts.yml"
install -D -m 0644 contrib/prometheus/fabdiag-alerts.test.yml "$root/usr/share/fabdiag/prometheus/fabdiag-alerts.test.yml"
# fabdiag serve as a service, installed disabled (no maintainer script
# enables it), with its options as a configuration file dpkg keeps
install -D -m 0644 contrib/systemd/fabdiag-serve.service "$root/lib/systemd/system/fabdiag-serve.service"
install -D -m 0644 contrib/systemd/fabdiag-serve.default "$root/etc/default/fabdiag-serve"
# and fabdiag monitor the same way
install -D -m 0644 contrib/systemd/fabdiag-monitor.service "$root/lib/systemd/system/fabdiag-monitor.service"
install -D -m 0644 contrib/systemd/fabdiag-monitor.default "$root/etc/default/fabdiag-monitor"

doc="$root/usr/share/doc/fabdiag"
install -D -m 0644 README.md "$doc/README.md"
install -D -m 0644 CHANGELOG.md "$doc/CHANGELOG.md"
# the guide as the repository has it, so its relative links (README to
# docs/, a page to results/ and reference/) work where it is installed;
# the manual pages point here for the JSON schema and the rest
(cd docs && find . -type f \( -name '*.md' -o -name '*.png' \) -print0) \
    | while IFS= read -r -d '' f; do install -D -m 0644 "docs/$f" "$doc/docs/$f"; done
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: fabdiag

Files: *
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all
 copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED.
EOF
printf 'fabdiag (%s) unstable; urgency=medium\n\n  * Built from the fabdiag repository.\n\n -- fabdiag developers <fabdiag@localhost>  %s\n' \
    "$version" "$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")" \
    | gzip -9n > "$doc/changelog.Debian.gz"

# dpkg-shlibdeps reads the package list from a debian/control and finds the
# package's root by its DEBIAN directory
install -d "$root/DEBIAN"
printf '/etc/default/fabdiag-serve\n/etc/default/fabdiag-monitor\n' > "$root/DEBIAN/conffiles"
printf 'Source: fabdiag\n\nPackage: fabdiag\nArchitecture: any\n' > "$stage/debian/control"
# (its "should already be installed in their package's directory" warning
# is about the system's libraries, which are not in this package)
depends="$(cd "$stage" && dpkg-shlibdeps -O -e debian/fabdiag/usr/bin/fabdiag 2> >(grep -v 'should already be installed' >&2) | sed -n 's/^shlibs:Depends=//p')"
size="$(du -sk "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<EOF
Package: fabdiag
Version: $version
Architecture: $arch
Maintainer: fabdiag developers <fabdiag@localhost>
Installed-Size: $size
Depends: $depends
Recommends: libfabric1
Suggests: libfabric-bin
Section: net
Priority: optional
Description: fabric and accelerator-link diagnostics on libfabric
 fabdiag re-creates HPE Slingshot's CXI diagnostics (cxi_write_bw,
 cxi_read_bw, cxi_send_bw, cxi_atomic_bw and the latency tools) on libfabric,
 so the same command lines and text output work on any fabric it drives
 (cxi, verbs, efa, tcp, shm). It adds JSON output, thresholds with their own
 exit codes, a server for every tool (fabdiag serve) and a node check
 (fabdiag doctor). The original names are installed as links.
EOF

mkdir -p "$out"
deb="$out/fabdiag_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group "$root" "$deb" >/dev/null
echo "$deb"
