#!/usr/bin/env bash
# tools/idle-latency.sh: the latency cost of [engine] idle_sleep_max_us
# (idle back-off, stack/engine/idle.h), for docs/API.md.  Not part of CI.
#
# us-httpecho and us-loadgen, two processes over one net_memif link (no
# hugepages), 1 keep-alive connection, small GETs, for each bound on both
# sides; the settings alternate run by run (0 50 200 1000, 0 50 200 1000, ...)
# so a neighbour's load on the shared machine hits every setting alike.  The
# server runs on lcore 1, the client on lcore 0.  Prints each run and the
# medians of p50 / p99 / requests per second per setting.
#
#   tools/idle-latency.sh [BUILD_DIR] [RUNS] [SECONDS] [SETTINGS...]
#   tools/idle-latency.sh build 3 5 0 50 200 1000      (the defaults)
#   RATE=1000 tools/idle-latency.sh                    (paced: us-loadgen --rate)
#
# Back to back (RATE unset or 0) the engines never run out of work between a
# request and its response, so the back-off rarely starts; paced requests
# (RATE=1000: one per ms) leave both engines idle between requests, which is
# where a sleeping engine wakes late.
#
# Needs root (memif socket, DPDK).  Removes its temp dir and DPDK runtime
# files on exit.
set -euo pipefail

build=${1:-build}
runs=${2:-3}
secs=${3:-5}
rate=${RATE:-0}
shift $(( $# < 3 ? $# : 3 ))
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=(0 50 200 1000)

echo_bin=$build/apps/httpecho/us-httpecho
lg_bin=$build/apps/loadgen/us-loadgen
for b in "$echo_bin" "$lg_bin"; do
	[ -x "$b" ] || { echo "idle-latency: $b missing (ninja -C $build)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/us-idlelat.XXXXXX)
tag="usidl_$$"
srv_pid=""
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$tmp" /var/run/dpdk/"${tag}"_* /run/dpdk/"${tag}"_* 2>/dev/null || true
}
trap cleanup EXIT

# config NAME ROLE ADDR LCORE IDLE_US
config() {
	cat > "$tmp/$1.ini" <<EOF
[eal]
lcores = $4
hugepages = off
no_huge_mem_mb = 256
file_prefix = ${tag}_$1
log_level = error
[port]
device = net_memif0,role=$2,socket=$tmp/memif.sock,socket-abstract=no
mbufs = 8191
[ip]
addr = $3/24
[engine]
idle_sleep_max_us = $5
EOF
}

# run IDLE_US: one measurement, "p50 p99 req_per_s" on stdout
run() {
	config srv server 10.79.0.2 1 "$1"
	config cli client 10.79.0.1 0 "$1"
	rm -f "$tmp/memif.sock" "$tmp/lg.json"
	"$echo_bin" --config "$tmp/srv.ini" --port 8080 > "$tmp/srv.log" 2>&1 &
	srv_pid=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$tmp/srv.log" && break
		sleep 0.1
	done
	"$lg_bin" --config "$tmp/cli.ini" --target 10.79.0.2:8080 --connections 1 \
		--duration "$secs" --delay 1 --quiet --rate "$rate" --json "$tmp/lg.json" > "$tmp/lg.log" 2>&1 ||
		{ cat "$tmp/lg.log" >&2; return 1; }
	kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true
	srv_pid=""
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
assert j["errors"]["total"] == 0, j["errors"]
l=j["latency_us"]; print(l["p50"], l["p99"], j["requests_per_s"])' "$tmp/lg.json"
}

echo "# idle_sleep_max_us run p50_us p99_us req_per_s ($runs runs x $secs s, 1 conn, keep-alive GET, rate ${rate:-0} (0: back to back))"
: > "$tmp/results"
for r in $(seq "$runs"); do
	for s in "${settings[@]}"; do
		res=$(run "$s")
		echo "$s $r $res"
		echo "$s $res" >> "$tmp/results"
	done
done

python3 - "$tmp/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    s, p50, p99, rps = line.split()
    rows.setdefault(int(s), []).append((float(p50), float(p99), float(rps)))
base = statistics.median(r[0] for r in rows.get(0, [(0, 0, 0)])) or None
print("\n| idle_sleep_max_us | runs | p50 us (median) | p99 us (median) | req/s (median) | p50 vs busy |")
print("|---:|---:|---:|---:|---:|---:|")
for s in sorted(rows):
    v = rows[s]
    p50 = statistics.median(x[0] for x in v)
    p99 = statistics.median(x[1] for x in v)
    rps = statistics.median(x[2] for x in v)
    ratio = f"{p50 / base:.2f}x" if base else "-"
    print(f"| {s} | {len(v)} | {p50:.1f} | {p99:.1f} | {rps:.0f} | {ratio} |")
EOF
