#!/usr/bin/env bash
# Writes tests/data/releases/VERSION/vslint.db with that release's own binary and simulator, for
# tests/integration/test_upgrade.py. Run from the top of a checkout of the tag, after its
# scripts/build.sh:  git worktree add /tmp/rel v0.1.0 && (cd /tmp/rel && scripts/build.sh) &&
# (cd /tmp/rel && bash /path/to/main/tests/data/releases/make.sh /path/to/main/tests/data/releases/v0.1.0)
# Two polls of the violations scenario with a waiver (extra.conf beside the database), a
# datastore fixed between them: new, waived and resolved findings, polls and capacity history.
set -euo pipefail
out=$1
work=$(mktemp -d)
trap 'kill "$sim" 2>/dev/null; rm -rf "$work"' EXIT
./build/tests/sim/vcsim-vslint -scenario violations -page-size 100 -stop-after-seconds 600 \
    >"$work/url" 2>"$work/sim.log" &
sim=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.2; done
url=$(head -1 "$work/url")
printf 'vslint-secret\n' >"$work/password"
chmod 600 "$work/password"
rm -f "$out/vslint.db"
{
    printf '[database]\npath = %s\n\n[vcenter lab]\nurl = %s\nuser = vslint\npassword_file = %s\n\n' \
        "$out/vslint.db" "$url" "$work/password"
    cat "$out/extra.conf"
} >"$work/vslint.conf"
./build/vslint check -c "$work/vslint.conf" --fail-on never >/dev/null
base=${url%/sdk}
curl -fsS -X POST "$base/vslint-sim/datastore?name=ds-free-warn&free_pct=50" >/dev/null
./build/vslint check -c "$work/vslint.conf" --fail-on never >/dev/null
sqlite3 "$out/vslint.db" 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;' >/dev/null
rm -f "$out/vslint.db-wal" "$out/vslint.db-shm"
echo "$out/vslint.db: $(./build/vslint --version), schema $(sqlite3 "$out/vslint.db" 'PRAGMA user_version')"
