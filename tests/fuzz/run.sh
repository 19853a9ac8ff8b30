#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, AddressSanitizer + UndefinedBehaviorSanitizer) into
# build-fuzz and runs each for SECONDS (default 60), one job each, on its seed corpus. New
# inputs go to build-fuzz/fuzz-corpus/TARGET (the seeds in tests/fuzz/corpus stay as they are),
# crashes to build-fuzz/fuzz-artifacts/TARGET/, full logs to build-fuzz/fuzz-logs/.
# TARGETS="fuzz_soap" limits the run; extra libFuzzer flags go in FUZZ_FLAGS.
# Exit status: 0 when no target crashed.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
dir=build-fuzz
targets=${TARGETS:-fuzz_soap fuzz_config fuzz_query fuzz_gate fuzz_unity fuzz_api}

if [ ! -f "$dir/build.ninja" ]; then
    # fuzzer-no-link instruments the library for coverage; the targets add -fsanitize=fuzzer.
    CC=clang meson setup "$dir" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link >/dev/null || exit 1
fi
# shellcheck disable=SC2046
ninja -C "$dir" $(for t in $targets; do echo "tests/fuzz/$t"; done) >/dev/null || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
for t in $targets; do
    mkdir -p "$dir/fuzz-corpus/$t" "$dir/fuzz-artifacts/$t" "$dir/fuzz-logs"
    log=$dir/fuzz-logs/$t.log
    # shellcheck disable=SC2086
    "$dir/tests/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="$dir/fuzz-artifacts/$t/" ${FUZZ_FLAGS:-} \
        "$dir/fuzz-corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1
    status=$?
    done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "$t: ${execs:-?} executions in ${secs}s; ${done_line:-no stats}"
    if [ "$status" -ne 0 ]; then
        failed=1
        echo "$t: CRASH (exit $status), log $log:"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written|^ +#[0-9]+ ' "$log" | head -40
    fi
done
exit $failed
