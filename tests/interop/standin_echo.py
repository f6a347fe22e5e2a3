#!/usr/bin/env python3
"""A stand-in for us-httpecho, ONLY for checking the interop harness itself.

It is not userstack and is not registered as a test: it puts the Linux
kernel's own TCP/IP stack where userstack should be, so that a change to
echo_interop.py can be checked without a working us-httpecho:

    sudo python3 tests/interop/echo_interop.py \
        --server 'python3 tests/interop/standin_echo.py' --config config/tap.ini all

Started (like us-httpecho) inside the test namespace with --config/--port,
it creates a veth pair there: the interface named in [port] device
(iface=ustap0) stays in the namespace, its peer goes into a private
namespace of a child process (unshare -n) that holds [ip] addr and serves
the echo: 200 OK, Content-Length, body = the raw request bytes.  The
hugepage "log line" is imitated from [eal] hugepages, since there is no EAL
here.  SIGTERM/SIGINT end the child (its namespace and the veth pair go
with it) and exit 0.
"""

import argparse
import os
import re
import signal
import socket
import socketserver
import subprocess
import sys
import time

PEER_IF = "sieth0"
# Harness self-checks: STANDIN_FAULT=echo corrupts one echoed byte,
# STANDIN_FAULT=exit1 exits 1 on SIGTERM; each must make a case fail.
FAULT = os.environ.get("STANDIN_FAULT", "")


def ini_get(path, section, key, default):
    sect = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            m = re.search(r"(?<!\\)#", raw)
            line = (raw[:m.start()] if m else raw).strip()
            if line.startswith("[") and line.endswith("]"):
                sect = line[1:-1].strip()
            elif sect == section and "=" in line:
                k, v = line.split("=", 1)
                if k.strip() == key:
                    return v.strip()
    return default


class EchoHandler(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            self.echo()
        except OSError:
            pass  # e.g. wrk resets its connections at the end

    def echo(self):
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, _, rest = buf.partition(b"\r\n\r\n")
            m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
            need = int(m.group(1)) if m else 0
            while len(rest) < need:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                rest += chunk
            req = head + b"\r\n\r\n" + rest[:need]
            buf = rest[need:]
            if FAULT == "echo":  # harness self-check: the echo must be caught
                req = req[:-1] + bytes([req[-1] ^ 1])
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream"
                                 b"\r\nContent-Length: %d\r\n\r\n" % len(req) + req)
            if re.search(rb"(?im)^connection:\s*close", head):
                return


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def serve(addr, prefixlen, port):
    """Child, in its own netns: wait for the veth end, configure it, serve."""
    print("netns-ready", flush=True)
    deadline = time.monotonic() + 10
    while subprocess.run(["ip", "link", "show", PEER_IF], capture_output=True).returncode:
        if time.monotonic() > deadline:
            sys.exit("standin: veth peer never arrived")
        time.sleep(0.05)
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "addr", "add", f"{addr}/{prefixlen}", "dev", PEER_IF],
                ["ip", "link", "set", PEER_IF, "up"]):
        subprocess.run(cmd, check=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = Server((addr, port), EchoHandler)
    print(f"us-httpecho (STAND-IN): listening on http://{addr}:{port}/", flush=True)
    try:
        srv.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    srv.server_close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    a = ap.parse_args()
    addr, _, plen = ini_get(a.config, "ip", "addr", "10.77.0.2/24").partition("/")
    if a.serve:
        serve(addr, plen or "24", a.port)
        return 0
    m = re.search(r"iface=([^,\s]+)", ini_get(a.config, "port", "device", ""))
    iface = m.group(1) if m else "ustap0"
    huge = ini_get(a.config, "eal", "hugepages", "auto")
    with open("/proc/meminfo") as f:
        free = int(re.search(r"HugePages_Free:\s*(\d+)", f.read()).group(1))
    with open("/proc/mounts") as f:
        mounted = any(ln.split()[2] == "hugetlbfs" for ln in f if len(ln.split()) > 2)
    if huge == "off" or (huge == "auto" and not (free and mounted)):
        print(f"standin: hugepages = {huge}, {free} free, hugetlbfs mounted: {mounted}: "
              "userstack would start EAL with --no-huge", flush=True)
    time.sleep(0.5)  # like the real tap, appear a little after start
    child = subprocess.Popen(["unshare", "-n", sys.executable, os.path.abspath(__file__),
                              "--config", a.config, "--port", str(a.port), "--serve", "1"],
                             stdout=subprocess.PIPE, text=True)
    stop = []

    def on_stop(*_):
        stop.append(1)
        child.terminate()   # its EOF ends the relay loop below

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    try:
        if child.stdout.readline().strip() != "netns-ready":
            return 1
        subprocess.run(["ip", "link", "add", iface, "type", "veth", "peer", "name", PEER_IF,
                        "netns", str(child.pid)], check=True)
        subprocess.run(["ip", "link", "set", iface, "up"], check=True)
        for line in child.stdout:   # relay the child's output (the listening line)
            print(line, end="", flush=True)
        return 0 if stop and FAULT != "exit1" else 1
    finally:
        if child.poll() is None:
            child.terminate()
            child.wait(5)


if __name__ == "__main__":
    sys.exit(main())
