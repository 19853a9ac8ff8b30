#!/usr/bin/env bash
# The scale benchmark, by hand (not part of scripts/test.sh): builds vslint and the synthetic
# responder, installs what it drives (curl, wrk, GNU time) when missing, then runs
# bench/bench_scale.py; arguments go to it (--sizes 5000,20000,100000 --runs 3 --gzip ...).
# The table goes to stdout and to build/bench/scale-DATE.txt, progress to stderr.
# At 100,000 VMs it takes about 15 minutes on 2 cores and needs about 5 GB of memory (the
# govmomi client's); --no-govmomi skips that client.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v wrk >/dev/null || missing+=(wrk)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "missing: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
fi
scripts/build.sh >/dev/null
mkdir -p build/bench
out=build/bench/scale-$(date +%Y%m%d-%H%M%S).txt
python3 bench/bench_scale.py --json "${out%.txt}.json" "$@" | tee "$out"
