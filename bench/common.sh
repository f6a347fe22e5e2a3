# shellcheck shell=sh
# bench/common.sh: what bench/run.sh, perf.sh and soak.sh share; sourced by
# each (POSIX sh, after `set -eu`).  Sets src (the source tree).
src=$(cd "$(dirname "$0")/.." && pwd)

# bench_need_root NAME WHY: exit 77 (skipped) unless we are root.
bench_need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "bench/$1: needs root ($2)" >&2
		exit 77
	fi
}

# bench_build DIR MESON_OPTION...: configure DIR once with the options, then
# build the two apps the benchmarks run.
bench_build() {
	_dir=$1
	shift
	[ -f "$_dir/build.ninja" ] || meson setup "$_dir" "$src" "$@"
	ninja -C "$_dir" -j2 apps/httpecho/us-httpecho apps/loadgen/us-loadgen
}

# bench_python SCRIPT ARG...: replace this shell by bench/SCRIPT under
# Debian's python3 (matplotlib), not a pyenv shim.
bench_python() {
	_py=/usr/bin/python3
	[ -x "$_py" ] || _py=python3
	_script=$1
	shift
	exec "$_py" "$src/bench/$_script" "$@"
}

# bench_build_release DIR: the same for a release tree (-O3, with the
# project's -Werror like every other build; no tests).
bench_build_release() {
	bench_build "$1" --buildtype=release -Db_ndebug=true -Dtests=false
}

# bench_release_tree NAME WHY (run.sh, perf.sh): root, then what a fresh
# machine lacks (the project's packages and hugepages, plus the bench's
# own), then the bench release tree built: $US_BENCH_BUILD or build-bench/,
# left in $build.
bench_release_tree() {
	build=${US_BENCH_BUILD:-$src/build-bench}
	bench_need_root "$1" "$2"
	"$src/tools/setup.sh" --bench >/dev/null
	bench_build_release "$build"
}
