#!/bin/sh
# bench/preload.sh: Redis and nginx under libuserstack-preload.so against the
# same binaries on the kernel (bench/preload_bench.py; bench/README.md).
# Builds the bench release tree (build-bench/, or $US_BENCH_BUILD) with the
# preload library, then runs the pairs.  --help answers without root.
set -eu
. "$(dirname "$0")/common.sh"
case " $* " in
*" -h "* | *" --help "*) bench_python preload_bench.py --build - --help ;;
esac
bench_release_tree preload "DPDK memif, pinned servers"
ninja -C "$build" -j2 preload/libuserstack-preload.so
bench_python preload_bench.py --build "$build" "$@"
