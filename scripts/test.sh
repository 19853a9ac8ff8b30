#!/usr/bin/env bash
# Runs every test suite (unit, integration) against a fresh build and prints one closing line
# "N passed, N failed". Exit status 0 only when nothing failed.
# SANITIZE=1 builds into build-asan with AddressSanitizer and UndefinedBehaviorSanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${SANITIZE:-0}" = 1 ]; then
    export BUILD_DIR=build-asan MESON_ARGS="-Db_sanitize=address,undefined -Db_lundef=false"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
dir=${BUILD_DIR:-build}
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
meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"
status=$?
python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)['result']
    if r in ('OK', 'EXPECTEDFAIL'):
        passed += 1
    elif r == 'SKIP':
        skipped += 1
    else:
        failed += 1
print('%d passed, %d failed' % (passed, failed) + (', %d skipped' % skipped if skipped else ''))
PY
exit $status
