#!/usr/bin/env bash
# The project's test command (README, CI): the layering rule
# (tools/check-deps.py), every suite except 'long' in build/, then every
# suite except 'long' again under ASan + UBSan in build-asan (BUILD= and
# ASAN_BUILD= choose other directories; ASAN_SUITES="unit pkt" narrows the
# sanitizer run for a quick local check).  The
# interop and flood suites start the us-httpecho of the build directory they
# run in, so the sanitizer run tests the sanitized server.
# Exits non-zero if a build or any test fails; meson's summary (Ok:/Fail:)
# is printed for each run.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-2}   # the CI machines have two cores
BUILD=${BUILD:-build}            # overridable so a developer's own dirs stay untouched
ASAN_BUILD=${ASAN_BUILD:-build-asan}
status=0
passed=0   # totals over every run below, for one closing line
failed=0

# The README promises one command that sets up, builds and tests.
if [[ ${US_SKIP_SETUP:-0} != 1 ]]; then
	bash tools/setup.sh
fi

# The layering rule of tools/rooms.txt, before spending minutes on builds;
# a violation fails the run like a failed test but the builds still run.
echo "=== check-deps"
if bash tools/check-deps; then
	passed=$((passed + 1))
else
	echo "=== check-deps: FAILED"
	status=1
	failed=$((failed + 1))
fi

# meson setup, or --reconfigure when the directory exists (options may change).
setup_build() {
	local dir=$1
	shift
	if [[ -d $dir/meson-private ]]; then
		meson setup --reconfigure "$dir" "$@"
	else
		meson setup "$dir" "$@"
	fi
}

# build_and_test DIR [meson test arguments...]; failure is recorded, not fatal,
# so the sanitizer run still happens and both summaries are shown.
build_and_test() {
	local dir=$1
	shift
	echo "=== $dir: build"
	if ! meson compile -C "$dir" -j "$JOBS"; then
		echo "=== $dir: BUILD FAILED"
		status=1
		return
	fi
	echo "=== $dir: meson test $*"
	local out t0=$SECONDS
	out=$(mktemp)
	if ! meson test -C "$dir" --print-errorlogs --num-processes "$JOBS" "$@" | tee "$out"; then
		echo "=== $dir: TESTS FAILED"
		status=1
	fi
	count_results "$out"
	rm -f "$out"
	echo "=== $dir: tests took $((SECONDS - t0)) s"
}

# Totals over every meson run (its summary lines), for one closing line.
count_results() {
	local ok fail to
	ok=$(awk '/^Ok:/ {print $2}' "$1" | tail -n 1)
	fail=$(awk '/^Fail:/ {print $2}' "$1" | tail -n 1)
	to=$(awk '/^Timeout:/ {print $2}' "$1" | tail -n 1)
	passed=$((passed + ${ok:-0}))
	failed=$((failed + ${fail:-0} + ${to:-0}))
}

# Test processes remove their EAL runtime directories at exit; this sweeps
# those of any that crashed (prefixes ustest-*, interop's usinterop_*).
sweep_dpdk_leftovers() {
	rm -rf /var/run/dpdk/ustest-* /var/run/dpdk/usinterop_* /dev/hugepages/ustest-* \
		/dev/hugepages/usinterop_* 2>/dev/null || true
}
trap sweep_dpdk_leftovers EXIT

# Default options apply only when a directory is first set up: pass the one
# the install test needs, so an older build directory works too.
setup_build "$BUILD" -Dpkgconfig.relocatable=true
build_and_test "$BUILD" --no-suite long

# DPDK and ASan get along both with --no-huge (the unit/pkt/dpdk tests) and
# with hugepages (interop and flood servers, hugepages = auto): DPDK's memory
# is mmap()ed, outside ASan's heap, so mbuf leaks show in the servers'
# mbufs_in_use gauge rather than in LSan.  LSan suppressions, if ever
# needed, cover DPDK's own EAL internals only, never our code.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [[ -f tools/lsan.supp ]]; then
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tools/lsan.supp:print_suppressions=0}
fi
setup_build "$ASAN_BUILD" -Db_sanitize=address,undefined -Db_lundef=false -Dpkgconfig.relocatable=true
asan_args=(--no-suite long)
if [[ -n ${ASAN_SUITES:-} ]]; then
	asan_args=()
	for suite in $ASAN_SUITES; do
		asan_args+=(--suite "$suite")
	done
fi
build_and_test "$ASAN_BUILD" "${asan_args[@]}"

# A short libFuzzer run of every target (clang build in build-fuzz); the long
# one is `tools/fuzz.sh 600`.
echo "=== fuzz: 30 s per target"
fuzz_t0=$SECONDS
if bash tools/fuzz.sh 30; then
	passed=$((passed + 1))
else
	echo "=== fuzz: FAILED"
	status=1
	failed=$((failed + 1))
fi

echo "=== fuzz: took $((SECONDS - fuzz_t0)) s (build included)"

if [[ $status -ne 0 ]]; then
	echo "=== tools/test.sh: FAILED"
	[[ $failed -gt 0 ]] || failed=1   # a build failure counts too
else
	echo "=== tools/test.sh: all passed"
fi
echo "tests: $passed passed, $failed failed; $SECONDS s in all"
exit "$status"
