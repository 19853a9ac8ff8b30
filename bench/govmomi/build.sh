#!/bin/sh
# Build govmomi-poll in GOPATH mode against Debian's packaged govmomi
# (golang-github-vmware-govmomi-dev), like the simulator harness.
# usage: bench/govmomi/build.sh OUTPUT_BINARY [GOCACHE_DIR]   (works from any cwd)
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 OUTPUT_BINARY [GOCACHE_DIR]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$1
case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac
cache=${2:-${GOCACHE:-${TMPDIR:-/tmp}/vslint-sim-gocache}}
case "$cache" in /*) ;; *) cache="$(pwd)/$cache" ;; esac
mkdir -p "$cache"
cd "$here"
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$cache" GOFLAGS= \
	go build -o "$out" .
