#!/usr/bin/env python3
"""Debian's redis-server and nginx, unchanged, on userstack through
libuserstack-preload.so against the same binaries on the kernel, in one run
of alternating pairs.

    sudo bench/preload.sh [--pairs 5] [--secs 3] [--only redis|nginx]

Every run is pinned like bench.py's: the server on core 1, the client on
core 0 (taskset; ours' EAL lcores the same).  Within each pair every
workload runs on the kernel, then on ours; the report gives each run (with
the load average), the medians and the median of the pairwise ratios
ours / kernel.

  redis-P1, redis-P16   redis-server --save '' --appendonly no and
        redis-benchmark -t set,get -c 50 -d 64 -P 1 (-n --requests) or
        -P 16 (-n --requests-pipelined), --csv: SET and GET ops/s.
        ours: both under LD_PRELOAD, each with its own USERSTACK_CONFIG,
        bench.py's memif link (server and client roles); kernel: 127.0.0.1.
  nginx   nginx (the interop suite's nginx.conf: master_process off, one
        worker, access_log off, sendfile on) serving a 64-byte file, keep-alive GETs on 32 connections for --secs.
        ours: nginx under LD_PRELOAD, us-loadgen (userstack's own client,
        native); kernel: wrk -t1 over 127.0.0.1.  THE CLIENTS DIFFER: wrk
        cannot run under the preload library (its main thread's test
        connect starts the stack, and the sockets of its worker thread are
        then the kernel's; docs/PRELOAD.md), and us-loadgen runs only on
        userstack.

A run counts only when the client saw no error: redis-benchmark's exit
status and its SET and GET rows, then the server's own count of the
commands (redis-cli INFO commandstats, under the preload library for ours:
a run that did not reach the server fails); us-loadgen's and wrk's errors
(non-2xx answers included).
"""

import argparse
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "interop"))
import bench  # noqa: E402
import bench_report  # noqa: E402
import ours_ini  # noqa: E402
# the interop suite's nginx.conf: one process, one worker, access_log off,
# sendfile and tcp_nopush on (as Debian's own nginx.conf)
from preload_interop import NGINX_CONF  # noqa: E402

REDIS_PORT = 6379
KERNEL_ADDR = "127.0.0.1"
REDIS_CONNS, REDIS_VALUE = 50, 64
NGINX_FILE = "f64.bin"
NGINX_FILE_BYTES = 64
READY = {"redis": "Ready to accept connections",
         # logged once the listening sockets are open (ngx_os_status)
         "nginx": "getrlimit(RLIMIT_NOFILE)"}


class PreloadBench(bench.Bench):
    """bench.Bench's processes, configs and clean-up, plus the preloaded
    servers and clients."""

    def memif_config(self, name, addr, cpu, role, sock):
        """The config of one end of the memif link (--mtu sizes its buffers)."""
        return self.us_config(name, addr, cpu, ours_ini.memif_device(role, sock, self.a.mtu),
                              mtu=self.a.mtu)

    def preload_env(self, name, addr, cpu, role, sock):
        """LD_PRELOAD and USERSTACK_CONFIG of one end of the memif link."""
        return {"LD_PRELOAD": self.a.preload,
                "USERSTACK_CONFIG": self.memif_config(name, addr, cpu, role, sock)}

    def server(self, kind, cmd, ours):
        """Starts the server on core 1 (ours: under the preload library on a
        new memif socket) and waits for it to listen; returns (process,
        address, memif socket or None)."""
        sock = os.path.join(self.tmp, f"m{self.n}.sock") if ours else None
        env = self.preload_env("srv", bench.MEMIF_SRV, bench.SERVER_CPU, "server",
                               sock) if ours else None
        addr = bench.MEMIF_SRV if ours else KERNEL_ADDR
        p = self.start(["taskset", "-c", bench.SERVER_CPU] + cmd(addr), f"{kind}.log", env=env)
        self.wait_log(p, f"{kind}.log", READY[kind])
        return p, addr, sock

    def client(self, cmd, log, ours, sock, timeout):
        """Runs a client on core 0 to its end; ours: under the preload
        library as the memif link's client.  Returns its output."""
        env = self.preload_env("cli", bench.MEMIF_CLI, bench.CLIENT_CPU, "client",
                               sock) if ours else None
        p = self.start(["taskset", "-c", bench.CLIENT_CPU] + cmd, log, env=env)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"{cmd[0]} did not finish in {timeout} s: "
                               f"{self.log(log)[-600:]}") from e
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[0]} exited {p.returncode}: {self.log(log)[-600:]}")
        return self.log(log)

    # -- Redis ---------------------------------------------------------------
    def run_redis(self, pipeline, ours):
        a = self.a
        n = a.requests if pipeline == 1 else a.requests_pipelined
        srv, addr, sock = self.server(
            "redis", lambda addr: [a.redis_server, "--bind", addr, "--port", str(REDIS_PORT),
                                   "--save", "", "--appendonly", "no",
                                   "--protected-mode", "no"], ours)
        try:
            out = self.client([a.redis_benchmark, "-h", addr, "-p", str(REDIS_PORT),
                               "-t", "set,get", "-n", str(n), "-c", str(REDIS_CONNS),
                               "-d", str(REDIS_VALUE), "-P", str(pipeline), "--csv"],
                              "rb.log", ours, sock, timeout=n / 1000 + 60)
            r = parse_redis_benchmark(out)
            info = self.client([a.redis_cli, "-h", addr, "-p", str(REDIS_PORT), "INFO",
                                "commandstats"], "cli.log", ours, sock, timeout=30)
            check_redis_calls(info, n)
            return r
        finally:
            self.stop(srv)
            self.reap()

    # -- nginx ---------------------------------------------------------------
    def nginx_conf(self, addr):
        www = os.path.join(self.tmp, "www")
        os.makedirs(www, exist_ok=True)
        with open(os.path.join(www, NGINX_FILE), "wb") as f:
            f.write(b"x" * (NGINX_FILE_BYTES - 1) + b"\n")
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(NGINX_CONF.format(dir=self.tmp, ip=addr, port=bench.PORT))
        return [self.a.nginx, "-c", conf, "-p", self.tmp + "/"]

    def run_nginx(self, ours):
        secs = self.a.secs
        srv, addr, sock = self.server("nginx", self.nginx_conf, ours)
        try:
            if ours:
                cli = self.memif_config("cli", bench.MEMIF_CLI, bench.CLIENT_CPU, "client", sock)
                r = self.loadgen("ka-1", cli, secs, path="/" + NGINX_FILE)
                r["client"] = "us-loadgen"
            else:
                out = self.client(["wrk", "-t1", f"-c{bench.WORKLOADS['ka-1'][2]}",
                                   f"-d{max(1, round(secs))}s", "--latency", "--timeout", "5s",
                                   f"http://{addr}:{bench.PORT}/{NGINX_FILE}"], "wrk.log",
                                  False, None, timeout=secs + 30)
                r = bench.parse_wrk(out, 0)
                r["client"] = "wrk -t1"
            if r["errors"]:
                raise RuntimeError(f"{r['client']}: {r['errors']} errors")
            bad = [ln for ln in self.log("nginx.log").splitlines()
                   if re.search(r"\[(emerg|alert|crit|error)\]", ln)]
            if bad:
                raise RuntimeError(f"nginx logged: {bad[:3]}")
            return r
        finally:
            self.stop(srv)
            self.reap()


def parse_redis_benchmark(out):
    """redis-benchmark --csv: {"set": ops/s, "get": ops/s, latencies in us}."""
    rows = {row[0]: row for row in csv.reader(io.StringIO(out)) if len(row) >= 8}
    if "SET" not in rows or "GET" not in rows:
        raise RuntimeError(f"redis-benchmark: no SET and GET rows: {out[-600:]}")
    if re.search(r"error", out, re.I):
        raise RuntimeError(f"redis-benchmark reported an error: {out[-600:]}")
    r = {}
    for op in ("set", "get"):
        row = rows[op.upper()]
        r[op] = float(row[1])
        r[op + "_p50"] = float(row[4]) * 1e3
        r[op + "_p99"] = float(row[6]) * 1e3
    return r


def check_redis_calls(info, n):
    """The server counted at least n SETs and n GETs (redis-benchmark sends
    them all before it reports)."""
    calls = dict(re.findall(r"^cmdstat_(\w+):calls=(\d+)", info, re.M))
    if int(calls.get("set", 0)) < n or int(calls.get("get", 0)) < n:
        raise RuntimeError(f"the server counted {calls}, not {n} SET and {n} GET")


# workload -> (metrics, function(b, ours))
WORKLOADS = {
    "redis-P1": (("set", "get"), lambda b, ours: b.run_redis(1, ours)),
    "redis-P16": (("set", "get"), lambda b, ours: b.run_redis(16, ours)),
    "nginx": (("rps",), lambda b, ours: b.run_nginx(ours)),
}
UNITS = {"set": "SET/s", "get": "GET/s", "rps": "requests/s"}


def with_load(wl, b, ours):
    """One run, and the 1-minute load average after it (the machine is
    shared: other jobs move the numbers more than most changes do)."""
    r = WORKLOADS[wl][1](b, ours)
    r["load"] = float(open("/proc/loadavg", encoding="ascii").read().split()[0])
    return r


def summary(runs):
    """{workload: {metric: {kernel, ours: medians, ratio: (median of the
    pairwise ratios, pairs)}}}"""
    out = {}
    for wl, (metrics, _fn) in WORKLOADS.items():
        k, o = runs.get(wl + "/kernel", []), runs.get(wl + "/ours", [])
        if not k and not o:
            continue
        out[wl] = {m: {"kernel": bench_report.median([r[m] for r in k]),
                       "ours": bench_report.median([r[m] for r in o]),
                       "ratio": bench_report.pairwise(o, k, m, m)} for m in metrics}
    return out


def report(s, machine, mtu):
    lines = ["", "| workload | metric | kernel (median) | ours (median) | ours / kernel "
             "(median of the pairwise ratios) |", "|---|---|---|---|---|"]
    for wl, ms in s.items():
        for m, d in ms.items():
            lines.append(f"| {wl} | {UNITS[m]} | {bench_report.fmt(d['kernel'])} | "
                         f"{bench_report.fmt(d['ours'])} | {bench_report.ratio_text(d['ratio'])} |")
    lines.append(f"\nMTU: ours (memif) {mtu or ours_ini.MTU_DEFAULT}, kernel (lo) "
                 f"{bench.link_mtu('lo')}; load average at the end: {' '.join(machine['loadavg'])}; "
                 f"commit {machine['commit']}; {machine['cpu']}, {machine['cpus']} CPUs")
    return "\n".join(lines)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See bench/README.md and docs/PRELOAD.md.")
    ap.add_argument("--build", required=True,
                    help="build dir with preload/ and apps/loadgen (preload.sh gives it)")
    ap.add_argument("--pairs", type=int, default=5, help="alternating pairs (default 5)")
    ap.add_argument("--secs", type=float, default=3.0, help="seconds of each nginx run")
    ap.add_argument("--requests", type=int, default=100000,
                    help="redis-benchmark -n at -P 1 (default 100000)")
    ap.add_argument("--requests-pipelined", type=int, default=1000000,
                    help="redis-benchmark -n at -P 16 (default 1000000)")
    ap.add_argument("--only", default=None,
                    help="comma-separated workloads: " + ",".join(WORKLOADS))
    ap.add_argument("--mtu", type=int, default=None, metavar="N",
                    help="ours: [port] mtu = N and memif buffers for the frame, as bench.py's "
                    "--mtu (default: the stack's 1500; loopback has 65536)")
    ap.add_argument("--json", default=None, metavar="FILE", help="every run and the summary")
    for tool, default in (("redis-server", "redis-server"),
                          ("redis-benchmark", "redis-benchmark"),
                          ("redis-cli", "redis-cli"), ("nginx", "nginx")):
        ap.add_argument("--" + tool, default=default, help=f"(default {default})")
    a = ap.parse_args()
    if a.mtu is not None and ours_ini.mtu_problem(a.mtu):
        ap.error(f"--mtu {a.mtu}: {ours_ini.mtu_problem(a.mtu)}")
    a.wls = a.only.split(",") if a.only else list(WORKLOADS)
    for wl in a.wls:
        if wl not in WORKLOADS:
            ap.error(f"unknown workload {wl}")
    if a.pairs < 1:
        ap.error("--pairs must be at least 1")
    a.preload = os.path.abspath(os.path.join(a.build, "preload", "libuserstack-preload.so"))
    a.loadgen = os.path.join(a.build, "apps", "loadgen", "us-loadgen")
    # bench.Bench reads this from bench.py's options: ours as bench configures it
    a.ours_extra_entries = []
    return a


def main():
    a = parse_args()
    for path in (a.preload, a.loadgen):
        if not os.path.exists(path):
            bench.say(f"{path} not found (bench/preload.sh builds it)")
            return 1
    b = PreloadBench(a)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    runs = {}
    try:
        for i in range(a.pairs):
            bench.say(f"== pair {i + 1}/{a.pairs}")
            for wl in a.wls:
                for system, ours in (("kernel", False), ("ours", True)):
                    bench.attempt(runs, f"{wl}/{system}", lambda: with_load(wl, b, ours), i)
    finally:
        b.close()
    machine = bench.machine()
    s = summary(runs)
    bench.say(report(s, machine, a.mtu))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine, "args": {k: v for k, v in vars(a).items()},
                       "runs": runs, "summary": s}, f, indent=1)
    failed = sum(len(v) for k, v in runs.items() if k.endswith(":failed"))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        bench.say(f"interrupted ({e}): cleaned up")
        sys.exit(130)
