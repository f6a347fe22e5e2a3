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
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_release_tree run.sh "namespaces, DPDK"
mkdir -p "$build/bench"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$build/bench/kserver" "$src/bench/kserver.c"
bench_python bench.py --build "$build" "$@"
