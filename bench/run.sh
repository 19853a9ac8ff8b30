#!/usr/bin/env bash
# The scale benchmark, by hand (not part of scripts/test.sh): builds vslint and the synthetic
# responder, installs what it drives (curl, wrk, GNU time, and libexpat1-dev for the expat
# anchor, bench/expat_count.c) when missing, then runs bench/bench_scale.py; arguments go to it
# (--sizes 5000,20000,100000 --runs 3 --gzip ...). With --table first, it runs issue 23's one
# table instead (bench/perf_table.py: the expat anchor, collect, govmomi, check --offline,
# placement at 1 and 8 clients, the gate, summary with and without keep-alive, RSS; --sizes
# 20000,100000 by default).
# The table goes to stdout and to build/bench/scale-DATE.txt (table-DATE.txt), progress to
# stderr. At 100,000 VMs it takes about 15 minutes on 2 cores and needs about 5 GB of memory
# (the govmomi client's) and, for the table, 2.2 GB of disk for the captured answers;
# --no-govmomi skips that client.
set -euo pipefail
cd "$(dirname "$0")/.."
script=bench/bench_scale.py
name=scale
if [ "${1:-}" = --table ]; then
    shift
    script=bench/perf_table.py
    name=table
fi
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v wrk >/dev/null || missing+=(wrk)
[ -x /usr/bin/time ] || missing+=(time)
[ -f /usr/include/expat.h ] || missing+=(libexpat1-dev)
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
out=build/bench/$name-$(date +%Y%m%d-%H%M%S).txt
python3 "$script" --json "${out%.txt}.json" "$@" | tee "$out"
