#!/bin/sh
# Soak (issue #10), one command (see bench/README.md):
#
#   sudo bench/soak.sh [--asan] [--cycles N] [soak.py options...]
#
# N (default 1,000,000) connection open/request/close cycles, us-loadgen ->
# us-httpecho over net_memif; the server's mbufs in use, TCBs and armed
# timers must return to their baseline.  --asan: an ASan+UBSan build of its
# own (build-soak-asan/), 100,000 cycles unless --cycles says otherwise, and
# any ASan/LSan/UBSan report fails the run.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
asan=0
if [ "${1:-}" = "--asan" ]; then
	asan=1
	shift
fi
if [ "$(id -u)" != 0 ]; then
	echo "bench/soak.sh: needs root (DPDK runtime files)" >&2
	exit 77
fi
if [ $asan = 1 ]; then
	build=${US_SOAK_BUILD:-$src/build-soak-asan}
	[ -f "$build/build.ninja" ] || meson setup "$build" "$src" -Dtests=false \
		-Db_sanitize=address,undefined -Db_lundef=false
	set -- --cycles 100000 "$@"
else
	build=${US_SOAK_BUILD:-$src/build-bench}
	[ -f "$build/build.ninja" ] || meson setup "$build" "$src" --buildtype=release \
		-Db_ndebug=true -Dtests=false
fi
ninja -C "$build" -j2 apps/httpecho/us-httpecho apps/loadgen/us-loadgen
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$src/bench/soak.py" --build "$build" "$@"
