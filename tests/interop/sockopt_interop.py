#!/usr/bin/env python3
"""Socket options side by side: the same Linux client against our server
(us-sockopt-peer on the tap, echo_interop.py's namespace) and against a
kernel server (Python, in a second namespace over a veth pair of the same
MTU), each setting the same options.  Passes when the client sees the same
of both:

  - TCP_MAXSEG 1000 on the listener: the client's send MSS (its
    TCP_MAXSEG, from our SYN-ACK's MSS option) and the largest segment it
    received (tcpi_rcv_mss) of a 100,000-byte answer; a plain listener's
    for comparison;
  - SO_LINGER {1, 0} then close: the client's read ends in ECONNRESET (an
    RST), a plain close in end of stream (a FIN);
  - TCP_CORK, 100 bytes then nothing: they arrive after the cork's 200 ms,
    not at once;
  - the errno (or the value read back) of each option misuse of
    us-sockopt-peer's probe list, against the same calls on a kernel socket.

    sockopt_interop.py --server build/tests/interop/us-sockopt-peer \
        --config config/tap.ini sockopt-linux

Everything made (namespaces, processes, temp dir, DPDK files of the unique
--file-prefix) is removed, pass or fail.  Exit: 0 passed, 1 failed, 77
skipped (not root).
"""

import argparse
import errno
import os
import re
import secrets
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402

PORT = 8100
KERNEL_NET = ("10.78.0.1", "10.78.0.2")  # client side, kernel server side (veth)

# The kernel's server: us-sockopt-peer's protocol on the same four ports.
KERNEL_SERVER = r'''
import socket, sys, threading, time
port = int(sys.argv[1])
data = bytes(ord("a") + i % 26 for i in range(1 << 20))
def serve(c):
    req = c.recv(64).decode()
    mode, n = req.split()
    n = int(n)
    if mode == "linger0":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    if mode == "cork":
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    c.sendall(data[:n])
    if mode == "cork":
        time.sleep(1)
    c.close()
def listen(p, maxseg):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if maxseg:
        l.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, maxseg)
    l.bind(("0.0.0.0", p))
    l.listen(64)
    while True:
        c, _ = l.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
for i in range(4):
    threading.Thread(target=listen, args=(port + i, 1000 if i == 1 else 0), daemon=True).start()
print("listening", flush=True)
while True:
    time.sleep(60)
'''

ENAMES = {0: "OK", errno.EINVAL: "EINVAL", errno.ENOPROTOOPT: "ENOPROTOOPT",
          errno.ENOENT: "ENOENT", errno.EFAULT: "EFAULT"}
TCP_INQ, TCP_FASTOPEN_KEY = 36, 33

# us-sockopt-peer's probes: name -> (kind, level, option, value[, length]).
PROBES = {
    "maxseg-87": ("set", socket.IPPROTO_TCP, socket.TCP_MAXSEG, 87),
    "maxseg-65536": ("set", socket.IPPROTO_TCP, socket.TCP_MAXSEG, 65536),
    "keepidle-0": ("set", socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 0),
    "keepintvl-32768": ("set", socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 32768),
    "keepcnt-128": ("set", socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 128),
    "syncnt-0": ("set", socket.IPPROTO_TCP, socket.TCP_SYNCNT, 0),
    "user-timeout--1": ("set", socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, -1),
    "inq-2": ("set", socket.IPPROTO_TCP, TCP_INQ, 2),
    "nodelay-len2": ("set", socket.IPPROTO_TCP, socket.TCP_NODELAY, 1, 2),
    "tcp-99": ("set", socket.IPPROTO_TCP, 99, 1),
    "ttl-0": ("set", socket.IPPROTO_IP, socket.IP_TTL, 0),
    "ttl-256": ("set", socket.IPPROTO_IP, socket.IP_TTL, 256),
    "so-type-set": ("set", socket.SOL_SOCKET, socket.SO_TYPE, 1),
    "so-error-set": ("set", socket.SOL_SOCKET, socket.SO_ERROR, 1),
    "level-999": ("set", 999, 1, 1),
    "linger2-500": ("get", socket.IPPROTO_TCP, socket.TCP_LINGER2, 500),
    "linger2--5": ("get", socket.IPPROTO_TCP, socket.TCP_LINGER2, -5),
    "defer-accept-5": ("get", socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 5),
    "rcvbuf-8192": ("get", socket.SOL_SOCKET, socket.SO_RCVBUF, 8192),
    "sndbuf-10000": ("get", socket.SOL_SOCKET, socket.SO_SNDBUF, 10000),
    "rcvlowat-0": ("get", socket.SOL_SOCKET, socket.SO_RCVLOWAT, 0),
    "maxseg-1000": ("get", socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1000),
    "tos-0x2b": ("get", socket.IPPROTO_IP, socket.IP_TOS, 0x2b),
    "notsent-lowat--1": ("get", socket.IPPROTO_TCP, socket.TCP_NOTSENT_LOWAT, -1),
    "congestion-nosuch": ("raw", socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"nosuch"),
    "fastopen-key-15": ("raw", socket.IPPROTO_TCP, TCP_FASTOPEN_KEY, bytes(15)),
}


def kernel_probe(p):
    kind, level, opt, v = p[:4]
    s = socket.socket()
    try:
        if kind == "raw":
            s.setsockopt(level, opt, v)
        elif kind == "set" and len(p) > 4:
            s.setsockopt(level, opt, struct.pack("i", v)[:p[4]])
        else:
            s.setsockopt(level, opt, v)
        if kind == "get":
            return str(s.getsockopt(level, opt))
        return "OK"
    except OSError as e:
        return ENAMES.get(e.errno, "OTHER")
    finally:
        s.close()


def tcp_info_rcv_mss(s):
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return struct.unpack_from("I", info, 20)[0]   # tcpi_rcv_mss


def request(host, port, mode, n, timeout=10.0):
    """Connects, asks for mode and n bytes, reads to the end: a dict of what
    the client saw."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        seen = {"maxseg": s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)}
        t0 = time.monotonic()
        s.sendall(f"{mode} {n}\n".encode())
        got, first, end = 0, None, "eof"
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                end = "reset"
                break
            if not b:
                break
            if first is None:
                first = time.monotonic() - t0
            got += len(b)
        seen.update(bytes=got, end=end, first_ms=None if first is None else first * 1000,
                    rcv_mss=tcp_info_rcv_mss(s) if end == "eof" else None)
        return seen
    finally:
        s.close()


def observe(host):
    return {
        "plain": request(host, PORT, "data", 100000),
        "maxseg": request(host, PORT + 1, "data", 100000),
        "linger0": request(host, PORT + 2, "linger0", 5),
        "fin": request(host, PORT + 2, "data", 5),
        "cork": request(host, PORT + 3, "cork", 100),
        "nocork": request(host, PORT + 3, "data", 100),
    }


def compare(ours, linux):
    bad = []
    for k in ("plain", "maxseg"):
        for f in ("maxseg", "rcv_mss", "bytes", "end"):
            if ours[k][f] != linux[k][f]:
                bad.append(f"{k}: {f} ours {ours[k][f]}, Linux {linux[k][f]}")
    for k in ("linger0", "fin"):
        if ours[k]["end"] != linux[k]["end"]:
            bad.append(f"{k}: ours ends in {ours[k]['end']}, Linux in {linux[k]['end']}")
    for side, seen in (("ours", ours), ("Linux", linux)):
        if seen["linger0"]["end"] != "reset" or seen["fin"]["end"] != "eof":
            bad.append(f"{side}: linger0 {seen['linger0']['end']}, plain {seen['fin']['end']}")
        cork, nocork = seen["cork"]["first_ms"], seen["nocork"]["first_ms"]
        if cork is None or not 150 <= cork <= 600 or nocork is None or nocork > 100:
            bad.append(f"{side}: corked data after {cork} ms, uncorked after {nocork} ms")
    return bad


def case_sockopt_linux(args):
    env = ei.EchoEnv(args)
    env.prefix = f"sockopt_{os.getpid()}_{secrets.token_hex(3)}"  # our DPDK file prefix
    with env:
        nsk = env.ns + "k"
        srv = None
        try:
            kcmd = ei.kernel_peer_ns(env, nsk, ("vk0", "vk1"), KERNEL_NET)
            srv = subprocess.Popen(kcmd + [sys.executable, "-c", KERNEL_SERVER, str(PORT)],
                                   stdout=subprocess.PIPE, text=True)
            ei.check(srv.stdout.readline().strip() == "listening", "the kernel server did not start")
            with env.netns():
                ours = observe(env.stack_ip)
                linux = observe(KERNEL_NET[1])
                kprobes = {n: kernel_probe(p) for n, p in PROBES.items()}
            ei.say(f"ours:  {ours}")
            ei.say(f"Linux: {linux}")
            bad = compare(ours, linux)
            uprobes = dict(re.findall(r"^probe (\S+) (\S+)$", env.log_text(), re.M))
            for n, want in kprobes.items():
                if uprobes.get(n) != want:
                    bad.append(f"probe {n}: ours {uprobes.get(n)}, Linux {want}")
            ei.say(f"{len(kprobes)} option misuses compared")
            ei.check(not bad, "; ".join(bad))
        finally:
            if srv is not None:
                srv.kill()
                srv.wait()
            ei.run([env.ip, "netns", "del", nsk], check_rc=False)
    env.cleanup_files()


CASES = {"sockopt-linux": case_sockopt_linux}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="us-sockopt-peer command line")
    ap.add_argument("--config", required=True, help="INI to copy (file_prefix is replaced)")
    ap.add_argument("--port", type=int, default=PORT)
    ap.add_argument("cases", nargs="+", help="case names: " + " ".join(CASES))
    args = ap.parse_args()
    names = ei.case_names(ap, args.cases, CASES, allow_all=False)
    return ei.run_cases(args, names, CASES)


if __name__ == "__main__":
    ei.run_main(main)
