#!/usr/bin/env bash
# The loss-recovery comparison: many short responses (1-100 KB) over an
# emulated 100 ms RTT path (1% and 2% loss, Gilbert-Elliott bursts, 1% loss
# with reordering, each way), every row (a recovery algorithm and the loss
# detection with it), seeds 1..SEEDS (the same seeds for every row), in virtual
# time (tests/bench/recovery_experiment.c: two stacks in one process over
# nic/impair; reproducible, no PMD, no wall-clock timing).
#
#   tools/recovery-experiment.sh            # build/, 5 seeds x 2000 responses
#   SEEDS=3 CONNS=1000 SCENARIOS="loss1 ge" tools/recovery-experiment.sh
#   RATE=10 OUT=build/recexp-10mbit tools/recovery-experiment.sh   # with a bottleneck
#
# Prints one table per run and, per scenario, the table pooled over the
# seeds (lossy responses of all seeds together) with the median over seeds
# of each run's mean; writes OUT/*.csv and, when python3-matplotlib is
# installed, OUT/recovery-experiment.png (CDF of lossy completion times).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SEEDS=${SEEDS:-5}
CONNS=${CONNS:-2000}
SCENARIOS=${SCENARIOS:-"loss1 loss2 ge reorder1"}
RATE=${RATE:-0}       # Mbit/s bottleneck server -> client, 0: none
OUT=${OUT:-$BUILD/recovery-experiment}

# A path scenario: the program's arguments, and the table's title.
scenario() {
	case "$1" in
	loss1) ARGS=(--loss 1); TITLE="1% loss each way" ;;
	loss2) ARGS=(--loss 2); TITLE="2% loss each way" ;;
	ge) ARGS=(--loss 0 --path ge=0.005:0.3:0.5:0)
	    TITLE="Gilbert-Elliott bursts each way (p 0.5%, r 30%, half lost when bad: 0.8%)" ;;
	reorder1) ARGS=(--loss 1 --path reorder=2%,reorder_gap=10ms)
	    TITLE="1% loss and 2% held back 10 ms each way" ;;
	*) echo "unknown scenario $1 (loss1 loss2 ge reorder1)" >&2; exit 2 ;;
	esac
}

ninja -C "$BUILD" -j2 tests/bench/recovery_experiment >/dev/null
mkdir -p "$OUT"
POOL=()
for sc in $SCENARIOS; do
	scenario "$sc"
	POOL+=("$sc=$TITLE")
	for seed in $(seq 1 "$SEEDS"); do
		"$BUILD/tests/bench/recovery_experiment" --conns "$CONNS" "${ARGS[@]}" \
			--seed "$seed" --rate "$RATE" --csv "$OUT/${sc}-seed${seed}.csv"
		echo
	done
done
# The system python: python3-matplotlib is a Debian package.
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" tools/recovery-experiment.py "$OUT" "${POOL[@]}"
