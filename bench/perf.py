#!/usr/bin/env python3
"""Instructions per request of us-httpecho (keep-alive, 64 B POST echoed),
counted by valgrind's callgrind: instruction counts are stable on this
shared machine where times are not, and `perf stat -e instructions` is not
supported in this VM (no PMU).

us-httpecho runs under callgrind (core 1), us-loadgen natively (core 0),
over net_memif.  After a warm-up the counters are zeroed
(callgrind_control -z), us-loadgen sends N1 requests, the profile is dumped;
zeroed again, N2 requests, dumped.  Instructions per request =
(Ir(N2) - Ir(N1)) / (N2 - N1): start-up, the client's connect phase and idle
polls cancel out.  The top functions are those of the N2 profile (self cost,
per request).

    bench/perf.sh [--n1 2000] [--n2 8000] [--conns 64] [--size 64] [--close] [--top 10]
    bench/perf.sh --client ...   # us-loadgen under callgrind, us-httpecho native
    bench/perf.sh --ip6 ...      # the load over IPv6 (both ends have both families)

--client counts the load generator instead: each of its two runs (N1 and N2
requests) is a whole process under callgrind, so start-up, --delay and the
connect phase cancel out the same way.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRV, CLI, PORT = "10.79.0.2", "10.79.0.1", 8080
SRV6, CLI6 = "fd00:79::2", "fd00:79::1"


def say(msg):
    print(msg, flush=True)


def config(tmp, name, role, sock, addr, lcore, prefix, port_extra=(), addr6=None, tcp_extra=()):
    # idle back-off: the server's empty polls (while the client starts) stay
    # few; under callgrind the server is the bottleneck and rarely idle.
    text = (f"[eal]\nlcores = {lcore}\nhugepages = off\nno_huge_mem_mb = 256\n"
            f"file_prefix = {prefix}\nlog_level = warning\n"
            f"[port]\ndevice = net_memif0,role={role},socket={sock},socket-abstract=no\n"
            f"mbufs = 8191\n" + "".join(f"{kv}\n" for kv in port_extra) + f"[ip]\naddr = {addr}/24\n[engine]\nidle_sleep_max_us = 1000\n")
    if addr6:
        text += f"[ip6]\nenable = on\naddr = {addr6}/64\ndad = off\n"
    if tcp_extra:
        text += "[tcp]\n" + "".join(f"{kv}\n" for kv in tcp_extra)
    path = os.path.join(tmp, f"{name}.ini")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def loadgen(a, cfg, n, tmp, vg=None):
    out = subprocess.run(["taskset", "-c", "0"] + (vg or []) + [a.loadgen, "--config", cfg, "--target",
                          f"[{SRV6}]:{PORT}" if a.ip6 else f"{SRV}:{PORT}", "--connections",
                          str(a.conns), "--request-size",
                          str(a.size), "--requests", str(n), "--delay", "0.5", "--quiet",
                          "--timeout-ms", "60000"] + (["--close"] if a.close else []),
                         capture_output=True, text=True, timeout=900, check=False)
    m = re.search(r"^requests (\d+)", out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"us-loadgen: {out.stdout[-500:]} {out.stderr[-500:]}")
    errs = re.search(r"errors (\d+)", out.stdout)
    return int(m.group(1)), int(errs.group(1)) if errs else 0


def total_ir(path):
    with open(path, errors="replace") as f:
        text = f.read()
    m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    return int(m.group(1))


def dump(pid, tmp, tag):
    before = set(os.listdir(tmp))
    subprocess.run(["callgrind_control", "-d", tag, str(pid)], capture_output=True, check=True)
    for _ in range(100):
        new = [f for f in set(os.listdir(tmp)) - before if f.startswith("cg.out")]
        if new:
            time.sleep(0.5)
            return os.path.join(tmp, new[0])
        time.sleep(0.2)
    raise RuntimeError("no callgrind dump appeared")


def top(path, n, per):
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(\S.*)$", line)
        # Above 50 %: main's callers, which callgrind_annotate lists with
        # their callees' cost after a callgrind_control dump; not self cost.
        if m and "PROGRAM TOTALS" not in line and float(m.group(2)) < 50:
            ir = int(m.group(1).replace(",", ""))
            name, _, lib = m.group(3).partition(" [")
            fn = name.split(":", 1)[-1]
            if fn.startswith("0x"):
                fn += " (" + os.path.basename(lib.rstrip("]")) + ")"
            rows.append((ir / per, float(m.group(2)), fn, m.group(3)))
        if len(rows) >= n:
            break
    return rows


# Functions that run once per poll whatever the load (PERF.md "work"): the
# polling share of the count, which moves with the number of empty polls.
PER_POLL = ("us_engine_poll", "us_timer_run", "nic_rx", "nic_tx", "api_port_rx", "api_port_tx",
            "us_engine_flush", "us_run", "api_poll", "api_drv_poll", "api_drv_now", "api_now_ns",
            "us_epoll_wait", "lg_loop", "lg_now_ns", "clock_gettime", "__clock_gettime",
            "us_telemetry_poll", "0x0000000000008720", "0x0000000000008240")


def self_costs(path):
    out = {}
    for ir, _pct, _fn, full in top(path, 100000, 1):
        out[full] = out.get(full, 0) + ir
    return out


def work(costs):
    """Self cost without the per-poll functions (PER_POLL)."""
    return sum(v for k, v in costs.items()
               if k.split(" [")[0].split(":", 1)[-1] not in PER_POLL)


def diff_top(p1, p2, n, per):
    """Top n functions by self cost of p2 minus p1 (the client's two runs:
    start-up and exit cancel out), per request."""
    c1, c2 = self_costs(p1), self_costs(p2)
    rows = sorted(((c2[k] - c1.get(k, 0), k) for k in c2), reverse=True)[:n]
    total = sum(c2.values()) - sum(c1.values())
    return [(d / per, 100.0 * d / total, k.split(" [")[0].split(":", 1)[-1], k)
            for d, k in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--port", action="append", default=[], metavar="KEY=VALUE",
                    help="a [port] setting for both sides, e.g. --port 'gso = off' (repeatable)")
    ap.add_argument("--tcp", action="append", default=[], metavar="KEY=VALUE",
                    help="a [tcp] setting for both sides, e.g. --tcp 'tlp = off' (repeatable)")
    ap.add_argument("--n1", type=int, default=2000)
    ap.add_argument("--n2", type=int, default=8000)
    ap.add_argument("--conns", type=int, default=64)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--ip6", action="store_true", help="the load over IPv6")
    ap.add_argument("--close", action="store_true",
                    help="one connection per request (GET with --size 0) instead of keep-alive")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind files (printed)")
    ap.add_argument("--client", action="store_true",
                    help="profile us-loadgen (under callgrind) instead of us-httpecho")
    a = ap.parse_args()
    a.httpecho = os.path.join(a.build, "apps", "httpecho", "us-httpecho")
    a.loadgen = os.path.join(a.build, "apps", "loadgen", "us-loadgen")
    tmp = tempfile.mkdtemp(prefix="us-perf-")
    pre = f"usperf{os.getpid()}"
    prefixes = [pre + "s", pre + "c"]
    sock = os.path.join(tmp, "memif.sock")
    srv = config(tmp, "srv", "server", sock, SRV, 1, prefixes[0], a.port,
                 SRV6 if a.ip6 else None, a.tcp)
    cli = config(tmp, "cli", "client", sock, CLI, 0, prefixes[1], a.port,
                 CLI6 if a.ip6 else None, a.tcp)
    log = open(os.path.join(tmp, "echo.log"), "wb")
    vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out.%p"]
    echo = subprocess.Popen(["taskset", "-c", "1"] + ([] if a.client else vg) + [
                             a.httpecho, "--config", srv, "--port", str(PORT)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        t_end = time.monotonic() + 300
        while "listening on" not in open(os.path.join(tmp, "echo.log"), errors="replace").read():
            if echo.poll() is not None or time.monotonic() > t_end:
                raise RuntimeError("us-httpecho under callgrind did not start: " +
                                   open(os.path.join(tmp, "echo.log")).read()[-800:])
            time.sleep(0.5)
        loadgen(a, cli, 500, tmp)  # warm-up: ARP, caches, pool
        results = []
        for n in (a.n1, a.n2) if a.client else ():
            before = set(os.listdir(tmp))
            got, errs = loadgen(a, cli, n, tmp, vg + ["--dump-instr=no"])
            path = os.path.join(tmp, [f for f in set(os.listdir(tmp)) - before
                                      if f.startswith("cg.out")][0])
            results.append((got, total_ir(path), path))
            say(f"{got} requests ({errs} errors): {total_ir(path):,} instructions")
        for n in () if a.client else (a.n1, a.n2):
            subprocess.run(["callgrind_control", "-z", str(echo.pid)], capture_output=True,
                           check=True)
            got, errs = loadgen(a, cli, n, tmp)
            path = dump(echo.pid, tmp, f"n{n}")
            results.append((got, total_ir(path), path))
            say(f"{got} requests ({errs} errors): {total_ir(path):,} instructions")
        (r1, i1, _), (r2, i2, p2) = results
        per = (i2 - i1) / (r2 - r1)
        mode = "connection per request" if a.close else "keep-alive"
        who = "us-loadgen" if a.client else "us-httpecho"
        say(f"\n{who}, {mode}, {a.size} B body echoed, {a.conns} connections: "
            f"{per:,.0f} instructions per request")
        say(f"\ntop {a.top} functions (self, N2 profile) | instructions per request | share")
        w = (work(self_costs(p2)) - work(self_costs(results[0][2]))) / (r2 - r1)
        say(f"work (without the per-poll functions): {w:,.0f} instructions per request")
        rows = diff_top(results[0][2], p2, a.top, r2 - r1) if a.client else top(p2, a.top, r2)
        for ir, pct, fn, _full in rows:
            say(f"| {fn} | {ir:,.0f} | {pct:.1f} % |")
        if a.keep:
            keep = os.path.join(os.getcwd(), f"callgrind-{a.size}b.out")
            shutil.copy(p2, keep)
            say(f"kept {keep}")
    finally:
        if echo.poll() is None:
            os.killpg(echo.pid, signal.SIGKILL)
            echo.wait()
        log.close()
        for prefix in prefixes:
            for rt in ("/var/run/dpdk", "/run/dpdk"):
                shutil.rmtree(os.path.join(rt, prefix), ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
