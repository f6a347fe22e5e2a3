#!/bin/sh
# The benchmark suite, one command (see bench/README.md):
#
#   sudo bench/run.sh [--quick] [bench.py options...]
#
# Builds a release tree of its own (build-bench/: -O3, -Db_ndebug=true, no
# tests) and bench/kserver, then runs bench/bench.py: userstack against the
# kernel and against dpdk-testpmd, alternating, pinned to cores 0 and 1.
# Results: bench/results/<date>-<host>.md, .json and .png.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${US_BENCH_BUILD:-$src/build-bench}
if [ "$(id -u)" != 0 ]; then
	echo "bench/run.sh: needs root (namespaces, DPDK)" >&2
	exit 77
fi
# A fresh machine: the project's packages and hugepages, plus the bench's own.
"$src/tools/setup.sh" --bench >/dev/null
if [ ! -f "$build/build.ninja" ]; then
	# Release (-O3) with the project's -Werror, like every other build.
	meson setup "$build" "$src" --buildtype=release -Db_ndebug=true -Dtests=false
fi
ninja -C "$build" -j2 apps/httpecho/us-httpecho apps/loadgen/us-loadgen
mkdir -p "$build/bench"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$build/bench/kserver" "$src/bench/kserver.c"
# Debian's python3 (matplotlib), not a pyenv shim.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$src/bench/bench.py" --build "$build" "$@"
