#!/bin/sh
# Instructions per request (callgrind; see bench/perf.py and PERF.md):
#
#   sudo bench/perf.sh [--n1 2000] [--n2 8000] [--conns 64] [--size 64] [--close] [--top 10]
#
# Uses the bench release tree (build-bench/, built here when missing).
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_release_tree perf.sh "DPDK runtime files"
bench_python perf.py --build "$build" "$@"
