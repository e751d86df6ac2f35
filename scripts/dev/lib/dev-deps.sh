#!/usr/bin/env bash
# Sourced by the development scripts that build libfabric or fabtests from
# source: installs the Debian packages they need (the autotools, psm3's
# headers), which scripts/install-deps.sh leaves out because neither the
# main job nor the test suite needs them. Installs only as root with
# apt-get; otherwise says which package is missing and stops.
#
#   need_packages WHO ITEM=PACKAGE...
#       ITEM: a command on PATH, or a header path under /usr/include
#       (anything with a slash or ending in .h)
need_packages() {
    local who=$1 spec item pkg missing=()
    shift
    for spec in "$@"; do
        item=${spec%%=*} pkg=${spec#*=}
        case $item in
            */* | *.h) [ -e "/usr/include/$item" ] || missing+=("$pkg") ;;
            *) command -v "$item" >/dev/null || missing+=("$pkg") ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        echo "$who: needs ${missing[*]} (apt-get install ${missing[*]}, as root)" >&2
        exit 1
    fi
    echo "$who: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
