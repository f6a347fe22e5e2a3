#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/) for a while each:
#   tools/fuzz.sh [SECONDS [TARGET...]]    default 30 s, every target
#   tools/fuzz.sh 600                      a long run
# Builds $FUZZ_BUILD (default build-fuzz: clang, ASan + UBSan, -Dfuzz=true)
# if needed.  Seeds come from tests/fuzz/corpus/<target>/ (left untouched);
# what a run learns goes to $FUZZ_BUILD/fuzz-corpus/<target>/ and is reused by
# the next run.  Prints executions and coverage per target; exits non-zero if
# any target crashed, leaked or timed out, keeping the reproducer in
# $FUZZ_BUILD/fuzz-crashes/ (replay: <target binary> <file>).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${1:-30}
shift || true
BUILD=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-2}
TARGETS=("$@")
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=(fuzz_rx_frame fuzz_tcp_options fuzz_config)

# Longest input per target: several frames; one option area (flags + 40);
# a config file.
max_len() {
	case $1 in
	fuzz_rx_frame) echo 4096 ;;
	fuzz_tcp_options) echo 41 ;;
	*) echo 4096 ;;
	esac
}

if [[ ! -d $BUILD/meson-private ]]; then
	CC=clang meson setup "$BUILD" -Dfuzz=true -Db_lundef=false -Db_sanitize=address,undefined
fi
ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]/#/tests/fuzz/}"

# UBSan findings count as crashes (libFuzzer keeps the input).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1}
mkdir -p "$BUILD/fuzz-crashes"
status=0
summary=()
for t in "${TARGETS[@]}"; do
	work=$BUILD/fuzz-corpus/$t
	log=$BUILD/fuzz-logs/$t.log
	mkdir -p "$work" "$(dirname "$log")"
	echo "=== $t: ${SECS}s"
	rc=0
	"$BUILD/tests/fuzz/$t" -max_total_time="$SECS" -max_len="$(max_len "$t")" -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$BUILD/fuzz-crashes/$t-" \
		"$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	line="$t: executions ${execs:-?} cov ${cov:-?} ft ${ft:-?} corpus $(ls "$work" | wc -l)"
	if [[ $rc -ne 0 ]]; then
		status=1
		line="$line CRASHED (exit $rc): $(grep -o "Test unit written to .*" "$log" | tail -1)"
		grep -m1 -B2 -A12 -E '^==[0-9]+==ERROR|runtime error|fuzz_[a-z_]+: ' "$log" || tail -20 "$log"
	fi
	echo "$line"
	summary+=("$line")
done
# A crashed process leaves EAL's runtime directory behind (tests/common/test_eal.h).
for d in /var/run/dpdk/ustest-fuzz_rx-*; do
	[[ -d $d ]] || continue
	pid=${d##*-}
	kill -0 "$pid" 2>/dev/null || rm -rf "$d"
done
echo "=== fuzz summary (logs in $BUILD/fuzz-logs/)"
printf '%s\n' "${summary[@]}"
exit $status
