#!/usr/bin/env bash
# Runs every test suite (unit, integration, e2e) against a fresh build and prints one closing
# line "N passed, N failed" (preceded by "N skipped" when some were) counting test cases: cmocka cases,
# pytest cases, the browser test's steps and each replayed fuzz input, from the JUnit XML each
# test writes to BUILD/test-results (tests/results.py). Exit status 0 only when nothing failed.
# SANITIZE=1 builds into build-asan with AddressSanitizer and UndefinedBehaviorSanitizer.
# Arguments go to `meson test` (e.g. --suite unit).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${SANITIZE:-0}" = 1 ]; then
    export BUILD_DIR=build-asan MESON_ARGS="-Db_sanitize=address,undefined -Db_lundef=false"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
dir=${BUILD_DIR:-build}
# What the tests need, installed when something is missing (this command may be the first one
# run on a fresh machine, before scripts/demo.sh); quiet, and without root, when nothing is.
if ! scripts/install-deps.sh --check; then
    echo "installing the Debian packages the tests need (scripts/install-deps.sh) ..."
    if ! scripts/install-deps.sh >"${TMPDIR:-/tmp}/vslint-install-deps.log" 2>&1; then
        tail -20 "${TMPDIR:-/tmp}/vslint-install-deps.log"
        echo "scripts/install-deps.sh failed: the log is ${TMPDIR:-/tmp}/vslint-install-deps.log"
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
# The independent validators (JUnit parser, SARIF schema, ...) come from npm.
if [ ! -d tests/tools/node_modules ] || [ tests/tools/package.json -nt tests/tools/node_modules ]; then
    (cd tests/tools && npm ci --no-audit --no-fund --loglevel=error) || {
        echo "npm install in tests/tools failed"
        echo "0 passed, 1 failed"
        exit 1
    }
fi
if ! scripts/build.sh; then
    echo "build failed"
    echo "0 passed, 1 failed"
    exit 1
fi
# Results of an earlier run must not be counted again.
rm -rf "$dir/test-results" "$dir/meson-logs/testlog.json"
mkdir -p "$dir/test-results"
meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"
status=$?
python3 tests/results.py "$dir/meson-logs/testlog.json" "$dir/test-results" || status=1
exit $status
