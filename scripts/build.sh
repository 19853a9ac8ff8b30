#!/usr/bin/env bash
# Configures (once) and builds vslint and the simulator harness into ./build.
# BUILD_DIR and MESON_ARGS (e.g. "-Db_sanitize=address,undefined") may be set.
# meson remembers what it found when it configured (pytest, Go, scdoc, ...): when the installed
# packages of scripts/deps.list changed since, the build is configured again, so a build dir
# made before scripts/install-deps.sh ran does not keep failing the tests it could not find.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build}
stamp="$dir/.vslint-deps"
deps=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/deps.list |
       xargs dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' 2>/dev/null || true)
deps+=$'\n'"npm $(command -v npm || echo none)"
if [ ! -f "$dir/build.ninja" ]; then
    # shellcheck disable=SC2086
    meson setup "$dir" --werror ${MESON_ARGS:-} >/dev/null
elif [ "$(cat "$stamp" 2>/dev/null)" != "$deps" ]; then
    echo "build.sh: the installed packages changed since $dir was configured: configuring again"
    meson setup --reconfigure "$dir" >/dev/null
fi
printf '%s\n' "$deps" >"$stamp"
ninja -C "$dir"
