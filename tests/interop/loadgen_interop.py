#!/usr/bin/env python3
"""us-loadgen end to end: against us-httpecho over net_memif, and against a
kernel HTTP server over net_tap in a network namespace.

Cases:
  memif-64         us-httpecho and us-loadgen, two processes, one memif link
                   (socket file in a temp dir, socket-abstract=no, distinct
                   --file-prefix), 64 keep-alive connections for 5 s: zero
                   errors, requests answered.
  memif-64-idle    the same with the idle back-off on in both stacks
                   ([engine] idle_sleep_max_us = 200).
  memif-rate       --rate 1000 for 4 s: about 4000 requests (70 % .. 102 %).
  memif-idle-ports --idle 29000 over --idle-ports 2 (us-httpecho --ports 3): all open
  tap-keepalive    us-loadgen in a namespace over its tap against a small
                   Python HTTP/1.1 keep-alive server on the kernel side.
  tap-close        the same, one connection per request (Connection: close).
  tap6-keepalive, tap6-close  the same two over IPv6: us-loadgen --target
                   [fd00:77::1]:8000 (our active opens over IPv6, neighbour
                   discovery both ways; the kernel server is dual-stack).
  tap-raw          raw TCP request/response (--raw) against a kernel echo server.
  tap-refused      a port nobody listens on: only ECONNREFUSED errors.
  tap-timeout      an address nobody has: only connect timeouts (--timeout-ms).
  tap-download-256m  us-loadgen --download: one GET of 256 MiB of seeded
                   pseudo-random bytes from a kernel HTTP server; the SHA-256
                   of the body it received equals the one computed here.

    loadgen_interop.py --loadgen build/apps/loadgen/us-loadgen \
        --httpecho build/apps/httpecho/us-httpecho --config config/tap.ini CASE...

Every case removes what it made (processes, namespace, temp dir, DPDK
runtime and hugepage files of its prefixes), pass or fail.  Exit status:
0 passed, 1 failed, 77 skipped (not root).
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import secrets
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402

KERNEL_SERVER = r'''
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this the body waits
    # for the ACK of the headers (Nagle), which a client delays 40 ms.
    disable_nagle_algorithm = True
    def _answer(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self._answer(b"x" * 64)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self._answer(b"got %d\n" % len(self.rfile.read(n)))
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    # Dual-stack (net.ipv6.bindv6only is 0): IPv4 clients arrive v4-mapped.
    address_family = __import__("socket").AF_INET6
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
S(("::", int(sys.argv[1])), H).serve_forever()
'''


KERNEL_ECHO = r'''
import socketserver, sys
class H(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            b = self.request.recv(65536)
            if not b:
                return
            self.request.sendall(b)
class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
S(("0.0.0.0", int(sys.argv[1])), H).serve_forever()
'''


# 256 MiB of seeded pseudo-random bytes in 1 MiB chunks, each chunk
# different, so a misplaced or repeated segment changes the hash.
DOWNLOAD_CHUNK = 1 << 20
DOWNLOAD_CHUNKS = 256
DOWNLOAD_SEED = 20260505

KERNEL_DOWNLOAD = r'''
import http.server, random, sys
CHUNK, CHUNKS, SEED = %d, %d, %d
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(CHUNK * CHUNKS))
        self.end_headers()
        rng = random.Random(SEED)
        for _ in range(CHUNKS):
            self.wfile.write(rng.randbytes(CHUNK))
    def log_message(self, *a):
        pass
http.server.HTTPServer(("0.0.0.0", int(sys.argv[1])), H).serve_forever()
''' % (DOWNLOAD_CHUNK, DOWNLOAD_CHUNKS, DOWNLOAD_SEED)


def download_sha256():
    """The SHA-256 of what KERNEL_DOWNLOAD sends, computed independently."""
    rng = random.Random(DOWNLOAD_SEED)
    h = hashlib.sha256()
    for _ in range(DOWNLOAD_CHUNKS):
        h.update(rng.randbytes(DOWNLOAD_CHUNK))
    return h.hexdigest()


class Run:
    """Processes, namespace and files of one case; all removed on exit."""

    def __init__(self, name):
        self.name = name
        self.tag = f"{os.getpid()}_{name.replace('-', '_')}"
        self.tmp = tempfile.mkdtemp(prefix=f"us-lg-{name}-")
        self.procs = []
        self.prefixes = []
        self.ns = None
        self.ip = ei.tool("ip")

    def __enter__(self):
        return self

    def config(self, name, base_text, eal=None, port=None, ip=None):
        """A config file for one stack with its own file_prefix."""
        prefix = f"uslg_{self.tag}_{name}"
        self.prefixes.append(prefix)
        text = ei.ini_with_overrides(base_text, "eal", dict({"file_prefix": prefix}, **(eal or {})))
        if port:
            text = ei.ini_with_overrides(text, "port", port)
        if ip:
            text = ei.ini_with_overrides(text, "ip", ip)
        path = os.path.join(self.tmp, f"{name}.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def start(self, cmd, log):
        f = open(os.path.join(self.tmp, log), "wb")
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        self.procs.append((p, f))
        return p

    def log(self, name):
        try:
            with open(os.path.join(self.tmp, name), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def make_ns(self):
        self.ns = f"{ei.NS_PREFIX}{os.getpid()}-lg{secrets.token_hex(3)}"
        ei.run([self.ip, "netns", "add", self.ns])
        ei.run([self.ip, "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"])
        ei.run([self.ip, "netns", "exec", self.ns, "sysctl", "-qw",
                "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
               check_rc=False)
        return self.ns

    def ns_cmd(self, cmd):
        return [self.ip, "netns", "exec", self.ns] + list(cmd)

    def stop(self, p, wait=10):
        """SIGTERM, SIGKILL after wait; the exit status."""
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def __exit__(self, *exc):
        for p, f in self.procs:
            try:
                self.stop(p, 5)
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            f.close()
        if self.ns:
            ei.run([self.ip, "netns", "del", self.ns], check_rc=False)
        for prefix in self.prefixes:
            for rt in ("/var/run/dpdk", "/run/dpdk"):
                shutil.rmtree(os.path.join(rt, prefix), ignore_errors=True)
            for d in ("/dev/hugepages",):
                for fn in os.listdir(d) if os.path.isdir(d) else []:
                    if fn.startswith(prefix):
                        os.unlink(os.path.join(d, fn))
        if os.environ.get("US_INTEROP_KEEP"):
            ei.say(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return False


def wait_for(pred, timeout, what):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if pred():
            return
        time.sleep(0.05)
    raise ei.CaseFailed(f"timed out waiting for {what}")


def start_httpecho(run, cmd, tail=500):
    """Starts us-httpecho (cmd, its output in httpecho.log); returns its
    process once it listens."""
    echo = run.start(cmd, "httpecho.log")
    wait_for(lambda: "listening on" in run.log("httpecho.log") or echo.poll() is not None,
             20, "us-httpecho's listening line")
    ei.check(echo.poll() is None, f"us-httpecho exited: {run.log('httpecho.log')[-tail:]}")
    return echo


def run_loadgen(run, cmd, secs, ns=False):
    """Runs us-loadgen to its end; its JSON summary."""
    out = os.path.join(run.tmp, "loadgen.json")
    cmd = cmd + ["--json", out]
    p = run.start(run.ns_cmd(cmd) if ns else cmd, "loadgen.log")
    try:
        p.wait(secs + 30)
    except subprocess.TimeoutExpired as e:
        raise ei.CaseFailed(f"us-loadgen still running after {secs + 30}s") from e
    text = run.log("loadgen.log")
    summary = [ln for ln in text.splitlines()
               if ln.startswith(("[", "target", "requests", "latency", "  error", "us-loadgen"))]
    ei.say("\n".join("  " + ln for ln in summary[-8:]))
    ei.check(p.returncode == 0, f"us-loadgen exited {p.returncode}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def case_memif(args, run, secs=5, conns=64, idle_us=0, extra=(), srv_extra=()):
    base = ("[eal]\nhugepages = off\nno_huge_mem_mb = 256\n"
            "[port]\nmbufs = 8191\n[ip]\n"
            f"[engine]\nidle_sleep_max_us = {idle_us}\n")
    sock = os.path.join(run.tmp, "memif.sock")
    dev = "net_memif0,role={},socket=" + sock + ",socket-abstract=no"
    # One core each: two busy pollers on lcore 0 (the default) share one CPU
    # and trade ~4 ms time slices, 8 000 req/s for 64 connections.
    srv = run.config("srv", base, eal={"lcores": "1"}, port={"device": dev.format("server")},
                     ip={"addr": "10.79.0.2/24"})
    cli = run.config("cli", base, eal={"lcores": "0"}, port={"device": dev.format("client")},
                     ip={"addr": "10.79.0.1/24"})
    echo = start_httpecho(run, [args.httpecho, "--config", srv, "--port", "8080"] +
                          list(srv_extra))
    res = run_loadgen(run, [args.loadgen, "--config", cli, "--target", "10.79.0.2:8080",
                            "--connections", str(conns), "--duration", str(secs),
                            "--delay", "1", "--stats"] + list(extra), secs)
    died = echo.poll()  # before SIGTERM: did it survive the client's leaving?
    rc = run.stop(echo)
    when = f"before SIGTERM (status {died})" if died is not None else f"{rc} on SIGTERM"
    ei.check(rc == 0, f"us-httpecho exited {when} (want 0 on SIGTERM); its log ends:\n"
             + run.log("httpecho.log")[-3000:])
    return res


def tap_env(args, run, server_port, server=KERNEL_SERVER):
    """Namespace; the kernel HTTP server in it; a tap config for us-loadgen."""
    with open(args.config, encoding="utf-8") as f:
        base = f.read()
    cfg = run.config("tap", base)
    ini = ei.ini_read(cfg)
    iface = "ustap0"
    dev = ini.get("port", {}).get("device", "")
    if "iface=" in dev:
        iface = dev.split("iface=")[1].split(",")[0]
    run.make_ns()
    script = os.path.join(run.tmp, "kernel_server.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(server)
    run.start(run.ns_cmd([sys.executable, script, str(server_port)]), "kernel_server.log")
    return cfg, iface


def case_tap(args, run, close=False, refused=False, secs=4, target=None, extra=(), server=None,
             family=4):
    server = server or (KERNEL_ECHO if "--raw" in extra else KERNEL_SERVER)
    cfg, iface = tap_env(args, run, 8000, server)
    port = 8001 if refused else 8000
    kernel = f"[{ei.KERNEL_ADDR6}]" if family == 6 else ei.KERNEL_ADDR
    cmd = [args.loadgen, "--config", cfg, "--target", target or f"{kernel}:{port}",
           "--connections", "16", "--duration", str(secs), "--delay", "2",
           "--timeout-ms", "1000"]
    if close:
        cmd.append("--close")
    cmd += list(extra)
    out = os.path.join(run.tmp, "loadgen.json")
    p = run.start(run.ns_cmd(cmd + ["--json", out]), "loadgen.log")
    wait_for(lambda: ei.run(run.ns_cmd(["ip", "link", "show", iface]),
                            check_rc=False).returncode == 0 or p.poll() is not None,
             20, f"interface {iface}")
    ei.run(run.ns_cmd(["ip", "addr", "add", f"{ei.KERNEL_ADDR}/{ei.KERNEL_PREFIX}",
                       "dev", iface]))
    if family == 6:
        # As echo_interop's kernel side: no RA, no DAD of its own (nodad).
        conf = f"net.ipv6.conf.{iface}"
        ei.run(run.ns_cmd(["sysctl", "-qw", f"{conf}.disable_ipv6=0", f"{conf}.accept_ra=0",
                           f"{conf}.router_solicitations=0", f"{conf}.accept_dad=0"]))
        ei.run(run.ns_cmd(["ip", "-6", "addr", "add", f"{ei.KERNEL_ADDR6}/64", "dev", iface,
                           "nodad"]))
    ei.run(run.ns_cmd(["ip", "link", "set", iface, "up"]))
    try:
        p.wait(secs + 40)
    except subprocess.TimeoutExpired as e:
        raise ei.CaseFailed("us-loadgen did not finish") from e
    ei.say("\n".join("  " + ln for ln in run.log("loadgen.log").splitlines()[-6:]))
    ei.check(p.returncode == 0, f"us-loadgen exited {p.returncode}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def say_result(res):
    """The line the lead reads from us-loadgen's summary."""
    ei.say(f"result: {res['requests']} requests, {res['requests_per_s']}/s, "
           f"p99 {res['latency_us']['p99']} us, errors {res['errors']['total']}")


def check_clean(res, min_requests):
    ei.check(res["errors"]["total"] == 0, f"errors: {res['errors']}")
    ei.check(res["requests"] >= min_requests,
             f"only {res['requests']} requests (want >= {min_requests})")


def run_case(args, name):
    ei.say(f"== {name}")
    try:
        with Run(name) as run:
            if name in ("memif-64", "memif-64-idle"):
                res = case_memif(args, run, secs=args.secs, conns=args.conns,
                                 idle_us=args.idle_us if name == "memif-64" else 200)
                check_clean(res, 10 * args.conns)
                ei.check(res["connects"] == args.conns,
                         f"{res['connects']} connections, want {args.conns}")
            elif name == "memif-rate":
                # --rate 1000 for 4 s over 8 connections: about 4000 requests.
                res = case_memif(args, run, secs=4, conns=8, idle_us=200,
                                 extra=("--rate", "1000"))
                check_clean(res, 1)
                ei.check(2800 <= res["requests"] <= 4100,
                         f"{res['requests']} requests at --rate 1000 for 4 s")
            elif name == "memif-idle-ports":
                # 29000 idle connections: more than one server port's ~28 K
                # ephemeral ports from one address, so only --idle-ports 2
                # (us-httpecho --ports 3: 8081 and 8082) opens them all.
                res = case_memif(args, run, secs=2, conns=8, idle_us=200,
                                 extra=("--idle", "29000", "--idle-ports", "2"),
                                 srv_extra=("--ports", "3"))
                check_clean(res, 80)
                ei.check(res["idle"] == {"wanted": 29000, "established": 29000, "failed": 0},
                         f"idle: {res['idle']}")
                ei.check(res["connects"] == 8, f"{res['connects']} active connections, want 8")
            elif name in ("tap-keepalive", "tap6-keepalive"):
                res = case_tap(args, run, family=6 if name.startswith("tap6") else 4)
                check_clean(res, 200)
                ei.check(res["connects"] == 16, f"{res['connects']} connections, want 16")
            elif name in ("tap-close", "tap6-close"):
                # Every connection leaves its port in TIME-WAIT on our side:
                # a fast machine would use up the 28,232 ephemeral ports in
                # 4 s (EADDRNOTAVAIL, counted as connect_other), so the rate
                # stays below that (4 s x 3000 = 12,000 ports).
                res = case_tap(args, run, close=True, extra=("--rate", "3000"),
                               family=6 if name.startswith("tap6") else 4)
                check_clean(res, 100)
                ei.check(res["connects"] >= res["requests"],
                         f"{res['connects']} connects for {res['requests']} requests")
            elif name == "tap-refused":
                res = case_tap(args, run, refused=True, secs=2)
                e = res["errors"]
                ei.check(res["requests"] == 0, "requests answered on a closed port")
                ei.check(e["connect_refused"] > 0 and e["total"] == e["connect_refused"],
                         f"want only connect_refused: {e}")
            elif name == "tap-raw":
                # Raw TCP: 100-byte requests echoed by a kernel echo server.
                res = case_tap(args, run, extra=("--raw", "--request-size", "100"))
                check_clean(res, 200)
                # Whole responses, plus at most one partial per connection.
                extra = res["bytes_received"] - 100 * res["requests"]
                ei.check(0 <= extra < 100 * 16,
                         f"{res['bytes_received']} bytes for {res['requests']} responses")
            elif name == "tap-timeout":
                # Nobody has 10.77.0.99: no ARP answer, no SYN-ACK.
                res = case_tap(args, run, secs=3, target="10.77.0.99:8000")
                e = res["errors"]
                ei.check(res["requests"] == 0, "requests answered by nobody")
                ei.check(e["connect_timeout"] >= 16 and e["total"] == e["connect_timeout"],
                         f"want only connect_timeout: {e}")
            elif name == "tap-download-256m":
                res = case_tap(args, run, secs=250, server=KERNEL_DOWNLOAD,
                               extra=("--download", "--path", "/big", "--timeout-ms", "250000"))
                want = download_sha256()
                dl = res["download"]
                ei.say(f"download: {dl['bytes']} bytes in {res['duration_s']:.1f} s, "
                       f"{dl['mbytes_per_s']} MB/s, sha256 {dl['sha256']} (want {want})")
                check_clean(res, 1)
                ei.check(dl["complete"] and dl["bytes"] == DOWNLOAD_CHUNK * DOWNLOAD_CHUNKS,
                         f"{dl['bytes']} body bytes, complete {dl['complete']}")
                ei.check(dl["sha256"] == want, "body differs from what the kernel sent")
            say_result(res)
    except ei.CaseFailed as e:
        ei.say(f"FAIL {name}: {e}")
        return 1
    ei.say(f"PASS {name}")
    return 0


CASES = ("memif-64", "memif-64-idle", "memif-rate", "memif-idle-ports", "tap-keepalive", "tap-close", "tap-raw", "tap-refused",
         "tap-timeout", "tap-download-256m", "tap6-keepalive", "tap6-close")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--httpecho", required=True)
    ap.add_argument("--config", required=True, help="tap config to copy")
    ap.add_argument("--secs", type=float, default=5, help="memif cases: seconds")
    ap.add_argument("--conns", type=int, default=64, help="memif cases: connections")
    ap.add_argument("--idle-us", type=int, default=0,
                    help="memif-64: [engine] idle_sleep_max_us of both stacks")
    ap.add_argument("cases", nargs="+", help="case names: " + " ".join(CASES))
    args = ap.parse_args()
    ei.case_names(ap, args.cases, CASES, allow_all=False)
    if os.geteuid() != 0:
        ei.say("SKIP: needs root (namespaces, hugepage files)")
        return ei.SKIP
    ei.trap_signals(sigint=False)
    failed = sum(run_case(args, c) for c in args.cases)
    return 1 if failed else 0


if __name__ == "__main__":
    ei.run_main(main)
