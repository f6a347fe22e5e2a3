#!/bin/bash
# tests/sim/plant.sh: does the simulator catch bugs?  Plants each bug below
# alone in a scratch copy of the tree (a git worktree of HEAD), builds
# us-sim there, runs worlds from seed 1 until the first failure and prints
# how many worlds it took.  The scratch tree is removed at the end.
#
#   tests/sim/plant.sh [BUG...]      (default: all; COUNT=N worlds at most)
#
# The bugs, each a one-line slip of the kind review misses:
#   rcv_edge       the receive window's right edge one byte short when
#                  trimming a segment (tcp/established.c trim)
#   ooo_leak       a duplicate out-of-order piece not freed (tcp/reass.c)
#   persist_rearm  the persist timer not re-armed after a zero-window probe
#                  (tcp/tcb_timers.c)
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
scratch=$(mktemp -d /tmp/us-plant.XXXXXX)
cleanup() {
	git -C "$root" worktree remove --force "$scratch/tree" 2>/dev/null || true
	rm -rf "$scratch"
}
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$scratch/tree" HEAD
cd "$scratch/tree"
meson setup build -Dtests=true > /dev/null

plant() {
	python3 - "$1" <<'PY'
import sys
edits = {
    'rcv_edge': ('tcp/established.c',
                 'uint32_t wnd = rcv_wnd(c), right = c->rcv_nxt + wnd;',
                 'uint32_t wnd = rcv_wnd(c), right = c->rcv_nxt + wnd - 1;'),
    'ooo_leak': ('tcp/reass.c',
                 '\t\t\tif (SEQ_GEQ(ce, end)) {\n\t\t\t\trte_pktmbuf_free_seg(s);\n\t\t\t\treturn false;',
                 '\t\t\tif (SEQ_GEQ(ce, end)) {\n\t\t\t\treturn false;'),
    'persist_rearm': ('tcp/tcb_timers.c',
                      '\t\tc->persist_backoff++;\n\ttcp_persist_start(c);',
                      '\t\tc->persist_backoff++;'),
}
path, old, new = edits[sys.argv[1]]
text = open(path).read()
if old not in text:
    sys.exit(f'{sys.argv[1]}: the code it changes is gone; update tests/sim/plant.sh')
open(path, 'w').write(text.replace(old, new))
PY
}

for bug in "${@:-rcv_edge ooo_leak persist_rearm}"; do
	for b in $bug; do
		git checkout -q -- tcp
		plant "$b"
		ninja -C build tests/sim/us-sim > /dev/null
		t0=$SECONDS
		out=$(build/tests/sim/us-sim --seed 1 --count "${COUNT:-20000}" -q 2>&1 | grep -m1 FAIL || true)
		echo "$b: ${out:-not found in ${COUNT:-20000} worlds} ($((SECONDS - t0)) s)"
	done
done
