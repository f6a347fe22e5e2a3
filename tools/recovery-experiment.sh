#!/usr/bin/env bash
# The fast-recovery comparison: many short responses (1-100 KB) over
# an emulated 100 ms RTT path with 1% and 2% loss each way, every recovery
# algorithm, seeds 1..SEEDS (the same seeds for every algorithm), in virtual
# time (tests/bench/recovery_experiment.c: two stacks in one process over
# nic/impair; reproducible, no PMD, no wall-clock timing).
#
#   tools/recovery-experiment.sh            # build/, 5 seeds x 2000 responses
#   SEEDS=3 CONNS=1000 tools/recovery-experiment.sh
#   RATE=10 OUT=build/recexp-10mbit tools/recovery-experiment.sh   # with a bottleneck
#
# Prints one table per run and, per loss rate, the table pooled over the
# seeds (lossy responses of all seeds together) with the median over seeds
# of each run's mean; writes OUT/*.csv and, when python3-matplotlib is
# installed, OUT/recovery-experiment.png (CDF of lossy completion times).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SEEDS=${SEEDS:-5}
CONNS=${CONNS:-2000}
LOSSES=${LOSSES:-"1 2"}
RATE=${RATE:-0}       # Mbit/s bottleneck server -> client, 0: none
OUT=${OUT:-$BUILD/recovery-experiment}

ninja -C "$BUILD" -j2 tests/bench/recovery_experiment >/dev/null
mkdir -p "$OUT"
for loss in $LOSSES; do
	for seed in $(seq 1 "$SEEDS"); do
		"$BUILD/tests/bench/recovery_experiment" --conns "$CONNS" --loss "$loss" \
			--seed "$seed" --rate "$RATE" --csv "$OUT/loss${loss}-seed${seed}.csv"
		echo
	done
done
# The system python: python3-matplotlib is a Debian package.
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" tools/recovery-experiment.py "$OUT" $LOSSES
