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

usage() {
	cat <<USAGE
usage: sudo bench/run.sh [bench.py options...]

Builds its own release tree (\${US_BENCH_BUILD:-build-bench/}, after
tools/setup.sh --bench on a fresh machine) and bench/kserver, then runs
bench/bench.py --build that tree with the options below.  --help and
--print-config need neither root nor a build.  See bench/README.md.

USAGE
}

# Answers that need nothing installed or built: bench.py gives them at once.
for _arg in "$@"; do
	case $_arg in
	-h | --help)
		usage
		bench_python bench.py --help
		;;
	--print-config)
		bench_python bench.py "$@"
		;;
	esac
done

bench_release_tree run.sh "namespaces, DPDK"
mkdir -p "$build/bench"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$build/bench/kserver" "$src/bench/kserver.c"
bench_python bench.py --build "$build" "$@"
