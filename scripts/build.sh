#!/usr/bin/env bash
# Configures (once) and builds vslint and the simulator harness into ./build.
# BUILD_DIR and MESON_ARGS (e.g. "-Db_sanitize=address,undefined") may be set.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build}
if [ ! -f "$dir/build.ninja" ]; then
    # shellcheck disable=SC2086
    meson setup "$dir" --werror ${MESON_ARGS:-} >/dev/null
fi
ninja -C "$dir"
