#!/usr/bin/env bash
# Installs what vslint needs to build, run its demo and run its tests, from Debian's packages.
# Run as root (or with sudo) on Debian 12. Idempotent.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    exec sudo "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
    build-essential meson ninja-build pkg-config \
    libcurl4-openssl-dev libssl-dev libxml2-dev libsqlite3-dev libinih-dev libjansson-dev \
    zlib1g-dev \
    libmicrohttpd-dev libgnutls28-dev libcmocka-dev libsystemd-dev scdoc bash-completion \
    golang-go golang-github-vmware-govmomi-dev \
    python3 python3-pytest python3-aiosmtpd sqlite3 curl ca-certificates openssl
# Node.js runs the independent validators of the test suite; keep a newer one if present.
if ! command -v npm >/dev/null 2>&1; then
    apt-get install -y -q --no-install-recommends nodejs npm
fi
# Headless Chromium for the dashboard's browser test (tests/e2e), driven by playwright-core.
apt-get install -y -q --no-install-recommends chromium
# promtool (Debian ships it in prometheus) checks /metrics in tests/integration/test_api.py;
# that test fails without it.
apt-get install -y -q --no-install-recommends prometheus
# jq runs the README's Terraform example of the gate (tests/integration/test_gate_api.py).
apt-get install -y -q --no-install-recommends jq
# The Debian package and its test (tests/integration/test_package.py): dpkg-buildpackage,
# debhelper, lintian, and systemd-analyze (systemd) for the unit.
apt-get install -y -q --no-install-recommends dpkg-dev debhelper fakeroot lintian systemd
