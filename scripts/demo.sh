#!/usr/bin/env bash
# The demo: installs what vslint needs (Debian packages), builds it, starts the bundled vCenter
# simulator with the `violations` scenario, runs vslint against it once, then leaves
# `vslint serve` running on it and prints the dashboard's URL. Ctrl-C stops both.
# Everything it writes goes to ./.demo (configuration, password and token files, database).
# PORT (default 8080, or the next free one) sets the dashboard's port.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/install-deps.sh
scripts/build.sh >/dev/null
mkdir -p .demo
demo="$root/.demo"
scenario=${SCENARIO:-violations}

# The simulator prints its SDK URL on its first line, then serves until stopped.
rm -f "$demo/sim.url"
build/tests/sim/vcsim-vslint -scenario "$scenario" >"$demo/sim.url" 2>"$demo/sim.log" &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    [ -s "$demo/sim.url" ] && break
    sleep 0.1
done
url=$(head -1 "$demo/sim.url")
[ -n "$url" ] || { echo "the simulator did not start:"; cat "$demo/sim.log"; exit 1; }

umask 077
printf 'vslint-secret\n' >"$demo/password"
# A bearer token for the API's POST /api/v1/polls ("Poll now" on the dashboard).
[ -s "$demo/token" ] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$demo/token"
port=$(python3 - "${PORT:-8080}" <<'PY'
import socket, sys
port = int(sys.argv[1])
for p in range(port, port + 100):
    s = socket.socket()
    try:
        s.bind(('127.0.0.1', p))
        print(p)
        break
    except OSError:
        pass
    finally:
        s.close()
PY
)
cat >"$demo/vslint.conf" <<CONF
# Written by scripts/demo.sh: vslint against the bundled vCenter simulator ($scenario).
[database]
path = $demo/vslint.db

[server]
listen = 127.0.0.1:$port
token_file = $demo/token

[vcenter demo]
url = $url
user = vslint
password_file = $demo/password
interval = 60
CONF

echo "== vCenter simulator ($scenario) at $url"
echo "== vslint collect -c .demo/vslint.conf"
build/vslint collect -c "$demo/vslint.conf"
echo
echo "== vslint inventory -c .demo/vslint.conf (first lines; all of it in .demo/inventory.txt)"
build/vslint inventory -c "$demo/vslint.conf" >"$demo/inventory.txt"
head -40 "$demo/inventory.txt"
echo
echo "== vslint check -c .demo/vslint.conf --offline"
build/vslint check -c "$demo/vslint.conf" --offline --fail-on never
echo
echo "== vslint serve -c .demo/vslint.conf"
echo "Dashboard: http://127.0.0.1:$port/   (API: http://127.0.0.1:$port/api/v1/summary, token in .demo/token)"
echo "Also try: build/vslint checks; build/vslint check -c .demo/vslint.conf --offline --format sarif"
echo "Ctrl-C stops the daemon and the simulator."
build/vslint serve -c "$demo/vslint.conf"
