#!/bin/sh
# Soak, one command (see bench/README.md):
#
#   sudo bench/soak.sh [--asan] [--cycles N] [soak.py options...]
#
# N (default 1,000,000) connection open/request/close cycles, us-loadgen ->
# us-httpecho over net_memif; the server's mbufs in use, TCBs and armed
# timers must return to their baseline.  --asan: an ASan+UBSan build of its
# own (build-soak-asan/), 100,000 cycles unless --cycles says otherwise, and
# any ASan/LSan/UBSan report fails the run.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
asan=0
if [ "${1:-}" = "--asan" ]; then
	asan=1
	shift
fi
bench_need_root soak.sh "DPDK runtime files"
if [ $asan = 1 ]; then
	build=${US_SOAK_BUILD:-$src/build-soak-asan}
	bench_build "$build" -Dtests=false -Db_sanitize=address,undefined -Db_lundef=false
	set -- --cycles 100000 "$@"
else
	build=${US_SOAK_BUILD:-$src/build-bench}
	bench_build_release "$build"
fi
bench_python soak.py --build "$build" "$@"
