#!/bin/sh
# Instructions per request (callgrind; see bench/perf.py and PERF.md):
#
#   sudo bench/perf.sh [--n1 2000] [--n2 8000] [--conns 64] [--size 64] [--close] [--top 10]
#
# Uses the bench release tree (build-bench/, built here when missing).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${US_BENCH_BUILD:-$src/build-bench}
if [ "$(id -u)" != 0 ]; then
	echo "bench/perf.sh: needs root (DPDK runtime files)" >&2
	exit 77
fi
# A fresh machine: the project's packages and hugepages, plus the bench's own.
"$src/tools/setup.sh" --bench >/dev/null
[ -f "$build/build.ninja" ] || meson setup "$build" "$src" --buildtype=release \
	-Db_ndebug=true -Dtests=false
ninja -C "$build" -j2 apps/httpecho/us-httpecho apps/loadgen/us-loadgen
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$src/bench/perf.py" --build "$build" "$@"
