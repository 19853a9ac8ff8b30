#!/usr/bin/env bash
# The demo: installs what vslint needs (Debian packages), builds it, starts the bundled vCenter
# simulator with the `violations` scenario, and runs vslint against it.
# Everything it writes goes to ./.demo (configuration, password file, database).
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
cat >"$demo/vslint.conf" <<CONF
# Written by scripts/demo.sh: vslint against the bundled vCenter simulator ($scenario).
[database]
path = $demo/vslint.db

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
echo "Configuration: .demo/vslint.conf. Try: build/vslint checks, build/vslint check -c .demo/vslint.conf --format sarif"
