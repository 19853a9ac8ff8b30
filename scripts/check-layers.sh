#!/usr/bin/env bash
# Fails when a source file includes a header from a layer it may not depend on.
#
# The layers, and what each may include besides its own folder (docs/design.md draws the map):
#   util/     nothing: error codes, bounded buffers, logging
#   model/    util/: the data every layer shares (the estate, findings, inventory rows)
#   vsphere/  util/ model/: talks SOAP, emits inventory rows
#   arrays/   util/ model/: talks to storage arrays (Unity REST), emits inventory rows
#   db/       util/ model/: owns SQL; knows no check and no SOAP
#   checks/   util/ model/: judges an estate; knows no SQL and no SOAP
#   rules/    util/ model/: site rules in SQL over the public views, on their own sandboxed
#             connection (SQLite directly: it never uses db/'s writer)
#   web/      util/: the embedded dashboard
#   api/      util/ model/ db/ checks/ web/: answers HTTP from the database and the catalogue
#   daemon/   everything: the only place that wires the layers together
#
# Usage: scripts/check-layers.sh [ROOT]   (ROOT defaults to the repository)
# Prints one line per wrong-way include, "FILE:LINE: FOLDER/ may not include HEADER", and exits
# 1 when there is any; prints "layers OK" and exits 0 otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

allowed() {
    case "$1" in
    util) echo "util" ;;
    model) echo "model util" ;;
    vsphere) echo "vsphere model util" ;;
    arrays) echo "arrays model util" ;;
    db) echo "db model util" ;;
    checks) echo "checks model util" ;;
    rules) echo "rules model util" ;;
    web) echo "web util" ;;
    api) echo "api db checks rules model util web" ;;
    daemon) echo "daemon api db checks rules vsphere arrays model util web" ;;
    esac
}

bad=0
for layer in util model vsphere arrays db checks rules web api daemon; do
    [ -d "$root/$layer" ] || continue
    files=$(ls "$root/$layer"/*.c "$root/$layer"/*.h 2>/dev/null)
    [ -n "$files" ] || continue
    # shellcheck disable=SC2086
    awk -v layer="$layer" -v ok=" $(allowed "$layer") " -v root="$root/" '
        /^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
            h = $0
            sub(/^[^"]*"/, "", h)
            sub(/".*$/, "", h)
            n = index(h, "/")
            if (n == 0)
                next # a header next to the file, or a generated one
            if (index(ok, " " substr(h, 1, n - 1) " ") == 0) {
                f = FILENAME
                if (index(f, root) == 1)
                    f = substr(f, length(root) + 1)
                printf "%s:%d: %s/ may not include %s\n", f, FNR, layer, h
                found = 1
            }
        }
        END { exit found }' $files || bad=1
done
if [ "$bad" = 0 ]; then
    echo "layers OK"
fi
exit "$bad"
