#!/bin/sh
# Builds a Go program of this repository in GOPATH mode against Debian's packaged govmomi
# (golang-github-vmware-govmomi-dev): no module proxy is needed. The simulator harness
# (tests/sim), the synthetic responder (tests/sim/synth) and the benchmark's govmomi client
# (bench/govmomi) are built with it. tests/sim/gopath comes first on GOPATH: its src/simkit is
# the package the harness's programs share.
# usage: tests/sim/build.sh OUTPUT_BINARY [GOCACHE_DIR [SOURCE_DIR]]   (works from any cwd;
#        SOURCE_DIR defaults to tests/sim)
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 OUTPUT_BINARY [GOCACHE_DIR [SOURCE_DIR]]" >&2
	exit 2
fi
abs() { case "$1" in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
out=$(abs "$1")
cache=$(abs "${2:-${GOCACHE:-${TMPDIR:-/tmp}/vslint-sim-gocache}}")
here=$(abs "$(dirname "$0")")
src=${3:-$here}
mkdir -p "$cache"
cd "$src"
GO111MODULE=off GOPATH="$here/gopath:/usr/share/gocode" GOCACHE="$cache" GOFLAGS= \
	go build -o "$out" .
