#!/usr/bin/env python3
"""Soak: N connection open / request / close cycles, us-loadgen ->
us-httpecho over net_memif, and the server's resources back to baseline.

Before the load and after it (once TIME_WAIT has drained) the server's
/userstack/stats telemetry gives: mbufs in use (its mempool's in-use count),
TCBs (conns) and armed timers.  Pass: all three equal their baseline, the
load generator saw no error and answered N requests, the server exits 0 on
SIGTERM, and (sanitizer builds) neither process logged an ASan, UBSan or
LSan report.

    bench/soak.sh [--cycles N] [--asan]       (the wrapper builds first)
    soak.py --build DIR [--cycles N] [--conns C]

Exit status: 0 pass, 1 fail, 77 skipped (not root).
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRV, CLI, PORT = "10.79.0.2", "10.79.0.1", 8080
SANITIZER_RE = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")


def say(msg):
    print(msg, flush=True)


def config(tmp, name, role, sock, addr, lcore, prefix, time_wait_ms):
    text = (f"[eal]\nlcores = {lcore}\nhugepages = off\nno_huge_mem_mb = 512\n"
            f"file_prefix = {prefix}\nlog_level = warning\n"
            f"[port]\ndevice = net_memif0,role={role},socket={sock},socket-abstract=no\n"
            f"mbufs = 8191\n[ip]\naddr = {addr}/24\n"
            f"[tcp]\ntime_wait_ms = {time_wait_ms}\n"
            "[engine]\nidle_sleep_max_us = 200\n")
    path = os.path.join(tmp, f"{name}.ini")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def telemetry(prefix, cmd="/userstack/stats"):
    path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
    for attempt in range(200):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(10)
        try:
            s.connect(path)
            break
        except (BlockingIOError, FileNotFoundError, ConnectionRefusedError):
            s.close()
            if attempt == 199:
                raise
            time.sleep(0.05)
    with s:
        max_len = int(json.loads(s.recv(1 << 16).decode())["max_output_len"])
        s.send(cmd.encode())
        return json.loads(s.recv(max_len).decode())[cmd]


def counters(prefix):
    st = telemetry(prefix)
    return {"mbufs_in_use": st["mbufs_in_use"], "tcbs": st["conns"],
            "timers_armed": st["timers_armed"]}


def wait_log(path, text, proc, timeout=30):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def settle(prefix, time_wait_ms, want):
    """The counters once TIME_WAIT and the last FINs are over: equal to want,
    or (want None) no TCB left, or whatever they are at the timeout."""
    t_end = time.monotonic() + time_wait_ms / 1000 + 30
    cur = counters(prefix)
    while time.monotonic() < t_end:
        if cur == want or (want is None and cur["tcbs"] == 0):
            break
        time.sleep(0.5)
        cur = counters(prefix)
    return cur


def run_loadgen(a, tmp, cli_cfg, n, env, procs, srv_pre=None):
    """n open/request/close cycles; us-loadgen's JSON summary, with the
    server's peak counters (sampled each second) under "server_peak"."""
    out = os.path.join(tmp, "lg.json")
    with open(os.path.join(tmp, "lg.log"), "ab") as f:
        lg = subprocess.Popen(["taskset", "-c", "0", a.loadgen, "--config", cli_cfg,
                               "--target", f"{SRV}:{PORT}", "--connections", str(a.conns),
                               "--close", "--requests", str(n), "--delay", "1",
                               "--quiet", "--stats", "--json", out],
                              stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              env=env, start_new_session=True)
    procs.append(lg)
    peak = {}
    while lg.poll() is None:
        time.sleep(1)
        if srv_pre:
            for k, v in counters(srv_pre).items():
                peak[k] = max(peak.get(k, 0), v)
    with open(out, encoding="utf-8") as f:
        res = json.load(f)
    res["server_peak"] = peak
    return res


def soak(a, tmp, prefixes, procs):
    sock = os.path.join(tmp, "memif.sock")
    srv_pre, cli_pre = f"ussoak{os.getpid()}s", f"ussoak{os.getpid()}c"
    prefixes += [srv_pre, cli_pre]
    srv_cfg = config(tmp, "srv", "server", sock, SRV, 1, srv_pre, a.time_wait_ms)
    cli_cfg = config(tmp, "cli", "client", sock, CLI, 0, cli_pre, a.time_wait_ms)
    echo_log, lg_log = os.path.join(tmp, "echo.log"), os.path.join(tmp, "lg.log")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    with open(echo_log, "wb") as f:
        echo = subprocess.Popen(["taskset", "-c", "1", a.httpecho, "--config", srv_cfg,
                                 "--port", str(PORT)], stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    procs.append(echo)
    if not wait_log(echo_log, "listening on", echo):
        say(f"FAIL: us-httpecho did not start: {read(echo_log)[-800:]}")
        return 1
    # Warm-up: 100 cycles first, so the baseline holds what stays on purpose
    # (the client's ARP entry and its aging timer), then TIME_WAIT drains.
    warm = run_loadgen(a, tmp, cli_cfg, 100, env, procs)
    before = settle(srv_pre, a.time_wait_ms, None)
    say(f"server before (after {warm['connects']} warm-up cycles): {before}")
    t0 = time.monotonic()
    res = run_loadgen(a, tmp, cli_cfg, a.cycles, env, procs, srv_pre)
    lg = procs[-1]
    secs = time.monotonic() - t0
    say(f"us-loadgen: {res['requests']} requests, {res['connects']} connections in "
        f"{res['duration_s']:.1f} s ({res['connects_per_s']:.0f}/s), errors {res['errors']}")
    say(f"server peak during the run (sampled each second): {res['server_peak']}")
    after = settle(srv_pre, a.time_wait_ms, before)
    say(f"server after:  {after}")
    if after != before:  # which connections stayed, in which state
        say(f"server connections left: {json.dumps(telemetry(srv_pre, '/userstack/conns'))[:1500]}")
    echo.send_signal(signal.SIGTERM)
    rc = echo.wait(60)
    logs = read(echo_log) + read(lg_log)
    fails = []
    if lg.returncode != 0:
        fails.append(f"us-loadgen exited {lg.returncode}")
    if res["requests"] < a.cycles or res["errors"]["total"] != 0:
        fails.append(f"{res['requests']} requests (want {a.cycles}), "
                     f"errors {res['errors']['total']}")
    if after != before:
        fails.append(f"server counters not back to baseline: {before} -> {after}")
    if rc != 0:
        fails.append(f"us-httpecho exited {rc}")
    if SANITIZER_RE.search(logs):
        fails.append("sanitizer report: " + SANITIZER_RE.search(logs).group(0))
    cli = dict(re.findall(r"^(tcp_\w+|nic\.\w+) (\d+)", read(lg_log), re.M))
    say("client counters: " + ", ".join(f"{k} {cli[k]}" for k in
                                        ("nic.rx_pkts", "nic.tx_pkts", "tcp_active_opens")
                                        if k in cli))
    for ln in read(lg_log).splitlines():
        if ln.startswith("userstack: shutdown:"):
            say("client " + ln)  # closes cut short by its exit, reset (exit_resets)
    say(f"wall time {secs:.1f} s")
    for m in fails:
        say("FAIL: " + m)
    if fails:
        say("server log tail:\n" + read(echo_log)[-1500:])
        say("loadgen log tail:\n" + read(lg_log)[-1500:])
        return 1
    say(f"PASS: {a.cycles} cycles, server mbufs/TCBs/timers back to baseline")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--cycles", type=int, default=1000000)
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--time-wait-ms", type=int, default=1000,
                    help="[tcp] time_wait_ms of both stacks (default 1000: the TIME_WAIT "
                    "population at the end, not the soak, is what a long value grows)")
    a = ap.parse_args()
    a.httpecho = os.path.join(a.build, "apps", "httpecho", "us-httpecho")
    a.loadgen = os.path.join(a.build, "apps", "loadgen", "us-loadgen")
    if os.geteuid() != 0:
        say("SKIP: needs root (DPDK runtime files)")
        return 77
    tmp = tempfile.mkdtemp(prefix="us-soak-")
    prefixes, procs = [], []

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    try:
        return soak(a, tmp, prefixes, procs)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for prefix in prefixes:
            for rt in ("/var/run/dpdk", "/run/dpdk"):
                shutil.rmtree(os.path.join(rt, prefix), ignore_errors=True)
            if os.path.isdir("/dev/hugepages"):
                for fn in os.listdir("/dev/hugepages"):
                    if fn.startswith(prefix):
                        os.unlink(os.path.join("/dev/hugepages", fn))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        say(f"interrupted ({e}): cleaned up")
        sys.exit(130)
