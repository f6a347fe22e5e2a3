#!/usr/bin/env python3
"""TCP Fast Open experiment: a short HTTP request on a fresh
connection, with and without TFO, over the link emulator at several RTTs.

    sudo tools/tfo_experiment.py [--builddir build] [--rtts 10,50,100,200] [--runs 9]
                                 [--client linux|userstack]

A benchmark, not a test.  The path:

    Linux client (netns, tcp_fastopen=1) -- tap usx0 -- us-netem (delay RTT/2
    each way) -- memif -- us-httpecho --fastopen (userstack)

us-httpecho runs on core 1 and us-netem on core 0 (both busy-poll).  For
each RTT, "plain" is connect() + send(); "tfo" is sendto(MSG_FASTOPEN) with a
cookie already cached by the kernel (one warm-up connection per RTT), so the
request rides in the SYN.  Printed: medians of time to the first response
byte (TTFB) and to the whole response, the saving and how close it is to the
ideal one RTT, and an ASCII plot.  Everything it starts (processes,
namespace, DPDK runtime files of its own --file-prefix, temp files) is
removed at the end, also on failure.

--client userstack turns it around: our client against Linux's TFO server,

    us-loadgen --close [--fastopen] (userstack, memif client) -- memif --
    us-netem -- tap usx0 -- Linux HTTP server with TCP_FASTOPEN (netns,
    tcp_fastopen=3)

one connection at a time for about --runs requests per mode.  us-loadgen
measures each request from its connect (--from-connect), so "plain" is
handshake + request and "tfo" is the request in the SYN (the first
connection of a run asks for the cookie).  The response is a few dozen
bytes: TTFB and total are the same measurement (the loadgen's median).
"path RTT" is the median of a request on an established connection.
"""

import argparse
import ctypes
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PORT = 8080
KERNEL_ADDR = "10.79.0.1"
STACK_ADDR = "10.79.0.2"
MSG_FASTOPEN = getattr(socket, "MSG_FASTOPEN", 0x20000000)

# --client userstack: the kernel's HTTP server with Fast Open on its listener.
KERNEL_TFO_SERVER = r'''
import http.server, socket, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"exp " + self.path.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 64)
        super().server_bind()
S(("0.0.0.0", int(sys.argv[1])), H).serve_forever()
'''


def run(cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=30)


class Setup:
    def __init__(self, builddir, tag):
        self.builddir = builddir
        self.tag = tag
        self.ns = f"usx-{tag}"
        self.tmp = tempfile.mkdtemp(prefix="us-tfo-exp-")
        self.sock = os.path.join(self.tmp, "memif.sock")
        self.procs = []
        self.prefixes = [f"usx_{tag}_echo", f"usx_{tag}_netem"]
        self.netem = None

    def config(self):
        path = os.path.join(self.tmp, "echo.ini")
        with open(path, "w") as f:
            f.write(f"[eal]\nlcores = 1\nhugepages = off\nfile_prefix = {self.prefixes[0]}\n"
                    f"[port]\ndevice = net_memif0,role=server,socket={self.sock},"
                    f"socket-abstract=no\n[ip]\naddr = {STACK_ADDR}/24\n")
        return path

    def start_echo(self):
        cmd = [os.path.join(self.builddir, "apps/httpecho/us-httpecho"), "--config",
               self.config(), "--port", str(PORT), "--fastopen"]
        log = open(os.path.join(self.tmp, "echo.log"), "w")
        self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))
        self.wait_log("echo.log", "listening on")

    def start_netem(self, rtt_ms, memif_role="client"):
        half = f"delay={rtt_ms / 2:g}ms"
        cmd = ["ip", "netns", "exec", self.ns,
               os.path.join(self.builddir, "tools/netem/us-netem"),
               "--port0", f"net_memif0,role={memif_role},socket={self.sock},"
               "socket-abstract=no",
               "--port1", "net_tap0,iface=usx0", "--a2b", half, "--b2a", half, "--",
               "--file-prefix", self.prefixes[1]]
        log = open(os.path.join(self.tmp, f"netem-{rtt_ms}.log"), "w")
        self.netem = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        self.procs.append(self.netem)
        deadline = time.monotonic() + 20
        while run(["ip", "netns", "exec", self.ns, "ip", "link", "show", "usx0"],
                  check=False).returncode != 0:
            if time.monotonic() > deadline or self.netem.poll() is not None:
                raise RuntimeError(f"usx0 did not appear; see {log.name}")
            time.sleep(0.1)
        run(["ip", "netns", "exec", self.ns, "ip", "addr", "add", f"{KERNEL_ADDR}/24",
             "dev", "usx0"])
        run(["ip", "netns", "exec", self.ns, "ip", "link", "set", "usx0", "up"])
        time.sleep(1.0)  # memif connects, link settles

    def stop_netem(self):
        stop(self.netem)
        self.netem = None

    def wait_log(self, name, text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(os.path.join(self.tmp, name)) as f:
                if text in f.read():
                    return
            time.sleep(0.1)
        raise RuntimeError(f"no '{text}' in {name}")

    def __enter__(self):
        run(["ip", "netns", "add", self.ns])
        run(["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"])
        # 3: client and server (--client userstack needs the server bit).
        run(["ip", "netns", "exec", self.ns, "sysctl", "-qw", "net.ipv4.tcp_fastopen=3",
             "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            stop(p)
        run(["ip", "netns", "del", self.ns], check=False)
        for p in self.prefixes:
            shutil.rmtree(os.path.join("/var/run/dpdk", p), ignore_errors=True)
        if exc[0] is not None:
            for name in sorted(os.listdir(self.tmp)):
                if name.endswith(".log"):
                    with open(os.path.join(self.tmp, name), errors="replace") as f:
                        print(f"---- {name}\n" + "".join(f.readlines()[-15:]))
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False


def stop(p):
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


_libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if hasattr(os, "setns"):
        os.setns(fd, 0x40000000)
    elif _libc.setns(fd, 0x40000000) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class InNetns:
    """This thread in the namespace while a socket is made."""

    def __init__(self, ns):
        self.ns = ns

    def __enter__(self):
        self.orig = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.ns}", os.O_RDONLY)
        setns(fd)
        os.close(fd)

    def __exit__(self, *exc):
        setns(self.orig)
        os.close(self.orig)


def one_request(ns, i, tfo):
    """(ttfb, total, handshake) in seconds for one request on a fresh
    connection; handshake (connect() alone, plain only) is the path's RTT as
    the client sees it, emulator overhead included."""
    req = (f"GET /exp/{i} HTTP/1.1\r\nHost: {STACK_ADDR}\r\nConnection: close\r\n\r\n").encode()
    with InNetns(ns):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.perf_counter()
        th = t0
        if tfo:
            s.sendto(req, MSG_FASTOPEN, (STACK_ADDR, PORT))
        else:
            s.connect((STACK_ADDR, PORT))
            th = time.perf_counter()
            s.sendall(req)
        s.settimeout(10)
        buf = s.recv(65536)
        t1 = time.perf_counter()
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        t2 = time.perf_counter()
    if not buf.startswith(b"HTTP/1.1 200") or not buf.endswith(req):
        raise RuntimeError(f"bad response {buf[:60]!r}")
    return t1 - t0, t2 - t0, th - t0


def measure(setup, rtt, runs):
    setup.start_netem(rtt)
    try:
        one_request(setup.ns, 0, False)  # ARP, warm caches
        one_request(setup.ns, 0, True)   # the kernel gets (or keeps) its cookie
        res = {}
        for mode in ("plain", "tfo"):
            samples = [one_request(setup.ns, i, mode == "tfo") for i in range(runs)]
            res[mode] = tuple(statistics.median(s[k] for s in samples) for k in range(3))
        return res
    finally:
        setup.stop_netem()


def start_kernel_server(setup):
    """--client userstack: the Linux TFO server in the namespace."""
    script = os.path.join(setup.tmp, "kernel_server.py")
    with open(script, "w") as f:
        f.write(KERNEL_TFO_SERVER)
    log = open(os.path.join(setup.tmp, "kernel_server.log"), "w")
    setup.procs.append(subprocess.Popen(["ip", "netns", "exec", setup.ns, sys.executable,
                                         script, str(PORT)], stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True))


def loadgen_config(setup):
    path = os.path.join(setup.tmp, "loadgen.ini")
    prefix = f"usx_{setup.tag}_loadgen"
    if prefix not in setup.prefixes:
        setup.prefixes.append(prefix)
    with open(path, "w") as f:
        f.write(f"[eal]\nlcores = 1\nhugepages = off\nfile_prefix = {prefix}\n"
                f"[port]\ndevice = net_memif0,role=client,socket={setup.sock},"
                f"socket-abstract=no\n[ip]\naddr = {STACK_ADDR}/24\n")
    return path


def loadgen_median(setup, rtt, runs, extra):
    """Median latency (s) of us-loadgen's requests, one connection."""
    out = os.path.join(setup.tmp, "loadgen.json")
    secs = max(2.0, runs * 3 * rtt / 1000)
    cmd = [os.path.join(setup.builddir, "apps/loadgen/us-loadgen"), "--config",
           loadgen_config(setup), "--target", f"{KERNEL_ADDR}:{PORT}", "--connections", "1",
           "--duration", f"{secs:g}", "--delay", "1.5", "--quiet", "--path", "/exp",
           "--timeout-ms", str(max(2000, 10 * rtt)), "--json", out] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=secs + 60)
    if p.returncode != 0:
        raise RuntimeError(f"us-loadgen failed: {p.stdout[-600:]}")
    with open(out) as f:
        res = json.load(f)
    if res["errors"]["total"] or res["requests"] < 2:
        raise RuntimeError(f"us-loadgen: {res['requests']} requests, errors {res['errors']}")
    return res["latency_us"]["p50"] / 1e6


def measure_userstack(setup, rtt, runs):
    """Our client: (ttfb, total, path RTT) medians per mode, as measure()."""
    setup.start_netem(rtt, memif_role="server")
    try:
        path_rtt = loadgen_median(setup, rtt, runs, [])  # keep-alive: requests alone
        res = {}
        for mode in ("plain", "tfo"):
            extra = ["--close", "--from-connect"] + (["--fastopen"] if mode == "tfo" else [])
            t = loadgen_median(setup, rtt, runs, extra)
            res[mode] = (t, t, path_rtt)
        return res
    finally:
        setup.stop_netem()


def report(rows):
    print("medians; 'path RTT' = plain connect() time (the emulated RTT plus the\n"
          "emulator's and scheduler's own delay); 'saved/RTT' = TTFB saving over it")
    print(f"{'RTT ms':>6} {'path RTT':>9} | {'TTFB plain':>10} {'TTFB tfo':>9} {'saved':>8} "
          f"{'saved/RTT':>9} | {'total plain':>11} {'total tfo':>9} {'saved':>8}")
    for rtt, r in rows:
        (pt, pa, ph), (tt, ta, _) = r["plain"], r["tfo"]
        saved = (pt - tt) * 1000
        print(f"{rtt:>6} {ph * 1000:>7.1f}ms | {pt * 1000:>8.1f}ms {tt * 1000:>7.1f}ms "
              f"{saved:>6.1f}ms {saved / (ph * 1000) * 100:>8.0f}% | {pa * 1000:>9.1f}ms "
              f"{ta * 1000:>7.1f}ms {(pa - ta) * 1000:>6.1f}ms")
    print("\nTTFB (each # = 10 ms)")
    for rtt, r in rows:
        for mode in ("plain", "tfo"):
            ms = r[mode][0] * 1000
            print(f"  RTT {rtt:>3} {mode:>5} {'#' * max(1, round(ms / 10)):<45} {ms:.1f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--rtts", default="10,50,100,200")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--client", choices=("linux", "userstack"), default="linux",
                    help="linux: the kernel's client against us-httpecho (default); "
                    "userstack: us-loadgen against the kernel's TFO server")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespace, tap)")
        return 77
    rtts = [int(x) for x in args.rtts.split(",")]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # cleanup runs
    rows = []
    with Setup(os.path.abspath(args.builddir), f"{os.getpid()}") as setup:
        if args.client == "userstack":
            start_kernel_server(setup)
        else:
            setup.start_echo()
        for rtt in rtts:
            m = measure_userstack if args.client == "userstack" else measure
            rows.append((rtt, m(setup, rtt, args.runs)))
            print(f"RTT {rtt} ms done", flush=True)
    if args.client == "userstack":
        print("--client userstack: us-loadgen's medians; 'path RTT' here is a request on an\n"
              "established connection, and TTFB = total (one small response)")
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
