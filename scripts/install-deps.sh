#!/usr/bin/env bash
# Installs what vslint needs to build, run its demo and run its tests, from Debian's packages
# (the list: scripts/deps.list). Run as root (or with sudo) on Debian 12. Idempotent.
# --check: install nothing; exit status 0 when every package is installed, 1 when one is missing
# (scripts/test.sh asks so on every run, without root).
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")"
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' deps.list)

# Whether every listed package is installed, and Node.js's npm is there (a newer Node.js than
# Debian's, installed another way, is kept: nodejs and npm are installed only without one).
all_installed() {
    command -v npm >/dev/null 2>&1 || return 1
    local st
    st=$(dpkg-query -W -f '${db:Status-Status}\n' "${pkgs[@]}" 2>/dev/null) || return 1
    [ "$(grep -c '^installed$' <<<"$st")" = "${#pkgs[@]}" ]
}

if [ "${1:-}" = --check ]; then
    all_installed
    exit
fi
if [ "$(id -u)" != 0 ]; then
    exec sudo "$self" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${pkgs[@]}"
# Node.js runs the independent validators of the test suite; keep a newer one if present.
if ! command -v npm >/dev/null 2>&1; then
    apt-get install -y -q --no-install-recommends nodejs npm
fi
