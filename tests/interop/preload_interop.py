#!/usr/bin/env python3
"""Debian's own redis-server and nginx, unchanged, on userstack through
libuserstack-preload.so, with the Linux kernel as the client.

Each case starts the server under LD_PRELOAD=libuserstack-preload.so
with USERSTACK_CONFIG pointing to a per-run copy of the tap config, inside
a fresh network namespace (the stack's tap appears there when the server
makes its first socket), gives the kernel side 10.77.0.1/24, drives the server
from the kernel side and ALWAYS tears down (server, namespace, temp files,
DPDK runtime and hugepage files of its unique --file-prefix), pass or fail.

    preload_interop.py --preload build/preload/libuserstack-preload.so \
                       --config config/tap.ini CASE [CASE...]

Cases:
  redis-setget      SET/GET and MSET/MGET of 1 MB random binary values,
                    compared byte for byte; 2000 pipelined commands in one
                    write, every reply checked in order.
  redis-setget6     the same over IPv6 (Redis bound to the stack's IPv4 and
                    IPv6 addresses; CLIENT LIST shows an IPv6 client).
  redis-pubsub      a subscriber gets 200 messages from a publisher in order
                    (PUBLISH reports one receiver each time).
  redis-debug-sleep DEBUG SLEEP 1 on one connection while another waits
                    for its PING: the engine runs only when Redis is back
                    (the documented cost of blocking outside the stack),
                    and both answers arrive.
  redis-bgsave      BGSAVE forks a child after the stack started (the child
                    must leave the stack alone) while clients keep writing
                    and reading; the save succeeds and the parent serves on.
  redis-shutdown    SHUTDOWN NOSAVE: the server exits 0 on its own.
  redis-benchmark   redis-benchmark -P 16 -n 20000 -t set,get: no error,
                    every command counted by the server, values right.
  python-client     Python's socket and select modules as an unmodified client
                    (preload_client.py) against kernel servers: blocking and
                    poll-based (timeout) TCP echo of 1 MB, socket.sendfile
                    with an offset, UDP echo, select over a connection
                    and a pipe, SO_RCVTIMEO/SO_SNDTIMEO, MSG_WAITALL, dup
                    and a fork child that closes its inherited socket,
                    SIGPIPE on a reset connection and none with
                    MSG_NOSIGNAL.
  nginx-static      nginx-light (master_process off, daemon off, tcp_nopush
                    on): a 1 MB file and 20 small ones fetched by curl over
                    one keep-alive connection, with sendfile on and off,
                    and 8 clients at once; every body byte-exact; then
                    wrk on a small file (8 connections, 2 s): no errors.

Exit status: 0 all passed, 1 a case failed, 77 skipped (not root, or
the server's package not installed: tools/setup.sh installs them).
Under a sanitized build (the library links libasan) the ASan runtime goes
first in LD_PRELOAD, as ASan requires, and leak detection is off for the
unsanitized Redis (its own allocations at exit are not ours to report).
"""

import argparse
import os
import re
import secrets
import shlex
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402
from echo_interop import CaseFailed, check, say  # noqa: E402

REDIS_PORT = 6379
NGINX_PORT = 8080
MB = 1 << 20
READY_WAIT_S = 30.0


# ----------------------------------------------------------------------------
# RESP (the Redis protocol) over a socket made in the namespace

class RespError(Exception):
    pass


class Resp:
    def __init__(self, env, timeout=30.0):
        with env.netns():
            self.sock = socket.create_connection((env.peer, REDIS_PORT), timeout=timeout)
        self.buf = b""

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise CaseFailed("redis closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise CaseFailed(f"bad RESP line {line[:80]!r}")

    def cmd(self, *args):
        self.send(self.encode(*args))
        r = self.reply()
        if isinstance(r, RespError):
            raise CaseFailed(f"redis: {' '.join(map(str, args))[:60]}: {r}")
        return r

    def close(self):
        self.sock.close()


# ----------------------------------------------------------------------------
# The environment: EchoEnv's namespace, config and teardown, Redis as server

class PreloadEnv(ei.EchoEnv):
    """A server under LD_PRELOAD: server_cmd() and ready() say which."""
    def __init__(self, args):
        super().__init__(args)
        self.port = REDIS_PORT

    def _write_config(self):
        super()._write_config()
        with open(self.cfgpath, encoding="utf-8") as f:
            text = f.read()
        # IPv4 only unless the case is IPv6's; the idle back-off keeps a
        # waiting server off 100 % CPU
        if not self.ip6:
            text = ei.ini_with_overrides(text, "ip6", {"enable": "off"})
        text = ei.ini_with_overrides(text, "engine", {"idle_sleep_max_us": "200"})
        with open(self.cfgpath, "w", encoding="utf-8") as f:
            f.write(text)

    def server_env(self):
        env = dict(os.environ, USERSTACK_CONFIG=self.cfgpath)
        preload = [self.args.preload]
        if ei.sanitized(self.args.preload):
            asan = asan_runtime(self.args.preload)
            check(asan, "the preload library is sanitized but its libasan was not found")
            preload.insert(0, asan)
            env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
        env["LD_PRELOAD"] = " ".join(preload)
        return env

    def _setup(self):
        self.tmpdir = tempfile.mkdtemp(prefix="us-preload-")
        self._write_config()
        self.logpath = os.path.join(self.tmpdir, "server.log")
        self.make_ns()
        cmd = self.server_cmd()
        say(f"server: LD_PRELOAD={self.args.preload} {shlex.join(cmd)} "
            f"(netns {self.ns}, file_prefix {self.prefix})")
        self.logf = open(self.logpath, "wb")
        self.proc = subprocess.Popen(self.ns_cmd(cmd), stdout=self.logf,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, env=self.server_env())
        self._wait(lambda: self.ns_run(["ip", "link", "show", self.iface],
                                       check_rc=False).returncode == 0,
                   ei.TAP_WAIT_S, f"interface {self.iface} in netns {self.ns}")
        self.ns_run(["ip", "addr", "add", f"{ei.KERNEL_ADDR}/{ei.KERNEL_PREFIX}",
                     "dev", self.iface])
        self.ns_run(["ip", "link", "set", self.iface, "up"])
        if self.ip6:
            self._kernel_ip6()
        self._wait(self.ready, READY_WAIT_S, f"{cmd[0]} ready")


class RedisEnv(PreloadEnv):
    def server_cmd(self):
        addrs = [self.stack_ip] + ([self.stack_ip6] if self.ip6 else [])
        return [self.args.redis, "--bind", *addrs, "--port", str(REDIS_PORT),
                "--save", "", "--appendonly", "no", "--protected-mode", "no",
                "--enable-debug-command", "yes", "--daemonize", "no",
                "--dir", self.tmpdir, "--dbfilename", "dump.rdb", "--logfile", ""]

    def ready(self):
        return "Ready to accept connections" in self.log_text()

    def client(self):
        return Resp(self)


class Redis6Env(RedisEnv):
    """Redis bound to the stack's IPv4 and IPv6 addresses, its clients
    over IPv6."""
    def __init__(self, args):
        super().__init__(args)
        self.family, self.ip6 = 6, True


NGINX_CONF = """daemon off;
master_process off;
user root;
worker_processes 1;
error_log stderr notice;
pid {dir}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000;
    client_body_temp_path {dir}/body;
    server {{
        listen {ip}:{port};
        root {dir}/www;
        location /nosendfile/ {{ sendfile off; alias {dir}/www/; }}
    }}
}}
"""


class NginxEnv(PreloadEnv):
    """nginx-light serving tmpdir/www: big.bin (1 MB) and s1..s20.bin."""
    def __init__(self, args):
        super().__init__(args)
        self.port = NGINX_PORT
        self.files = {}

    def server_cmd(self):
        www = os.path.join(self.tmpdir, "www")
        os.makedirs(www)
        self.files = {"big.bin": secrets.token_bytes(MB)}
        for i in range(1, 21):
            self.files[f"s{i}.bin"] = secrets.token_bytes(i * 97 + i * i)
        for name, data in self.files.items():
            with open(os.path.join(www, name), "wb") as f:
                f.write(data)
        conf = os.path.join(self.tmpdir, "nginx.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(NGINX_CONF.format(dir=self.tmpdir, ip=self.stack_ip, port=NGINX_PORT))
        return [self.args.nginx, "-c", conf, "-p", self.tmpdir + "/"]

    def ready(self):
        with self.netns():
            try:
                socket.create_connection((self.stack_ip, NGINX_PORT), timeout=0.5).close()
                return True
            except OSError:
                return False


class PyClientEnv(PreloadEnv):
    """preload_client.py under LD_PRELOAD; the kernel serves at KERNEL_ADDR."""
    def server_cmd(self):
        return [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "preload_client.py"), ei.KERNEL_ADDR, self.tmpdir]

    def ready(self):
        return "stack up" in self.log_text()


def asan_runtime(lib):
    """The libasan the sanitized library was linked with (from ldd)."""
    out = subprocess.run(["ldd", lib], text=True, capture_output=True).stdout
    m = re.search(r"libasan\.so\S*\s+=>\s+(\S+)", out)
    return m.group(1) if m else None


# ----------------------------------------------------------------------------
# Cases

def case_setget(env):
    c = env.client()
    one = secrets.token_bytes(MB)
    check(c.cmd("SET", "one", one) == b"OK", "SET of 1 MB not OK")
    got = c.cmd("GET", "one")
    check(got == one, f"GET returned {len(got or b'')} bytes, not the 1 MB set")
    vals = {f"m{i}".encode(): secrets.token_bytes(MB) for i in range(3)}
    args = [x for kv in vals.items() for x in kv]
    check(c.cmd("MSET", *args) == b"OK", "MSET of 3 x 1 MB not OK")
    got = c.cmd("MGET", *vals.keys())
    check(got == list(vals.values()), "MGET did not return the 3 MB byte-exact")
    # pipelining: 2000 commands in one write, replies in order
    n = 2000
    batch = b"".join(Resp.encode("SET", f"p{i}", f"v{i}-{'x' * (i % 97)}")
                     for i in range(n // 2))
    batch += b"".join(Resp.encode("GET", f"p{i}") for i in range(n // 2))
    c.send(batch)
    replies = [c.reply() for _ in range(n)]
    check(all(r == b"OK" for r in replies[:n // 2]), "a pipelined SET was not OK")
    want = [f"v{i}-{'x' * (i % 97)}".encode() for i in range(n // 2)]
    check(replies[n // 2:] == want, "pipelined GETs did not answer in order, right")
    check(c.cmd("DBSIZE") == 4 + n // 2, "DBSIZE is not the keys set")
    c.close()


def case_setget6(env):
    """case_setget over IPv6, Redis bound to both addresses: CLIENT LIST
    names the kernel's IPv6 address as the client's."""
    c = env.client()
    clients = c.cmd("CLIENT", "LIST").decode()
    c.close()
    check(f"addr=[{ei.KERNEL_ADDR6}]:" in clients, f"not an IPv6 client: {clients[:200]!r}")
    case_setget(env)


def case_pubsub(env):
    sub, pub = env.client(), env.client()
    sub.send(Resp.encode("SUBSCRIBE", "news"))
    check(sub.reply() == [b"subscribe", b"news", 1], "SUBSCRIBE not confirmed")
    msgs = [secrets.token_hex(8 + i % 40).encode() for i in range(200)]
    for m in msgs:
        check(pub.cmd("PUBLISH", "news", m) == 1, "PUBLISH did not reach the subscriber")
    for m in msgs:
        r = sub.reply()
        check(r == [b"message", b"news", m], f"subscriber got {r!r}, want {m!r}")
    sub.close()
    pub.close()


def case_debug_sleep(env):
    sleeper, waiter = env.client(), env.client()
    check(waiter.cmd("PING") == b"PONG", "PING before the sleep")
    result = {}

    def sleep():
        t = time.monotonic()
        result["reply"] = sleeper.cmd("DEBUG", "SLEEP", "1")
        result["s"] = time.monotonic() - t

    th = threading.Thread(target=sleep)
    th.start()
    time.sleep(0.2)  # the sleep has begun
    t = time.monotonic()
    pong = waiter.cmd("PING")
    waited = time.monotonic() - t
    th.join(10)
    check(result.get("reply") == b"OK", f"DEBUG SLEEP answered {result.get('reply')!r}")
    check(result["s"] >= 0.95, f"DEBUG SLEEP 1 returned after {result['s']:.2f}s")
    check(pong == b"PONG", f"the waiting client got {pong!r}")
    check(0.5 <= waited < 5, f"the waiting PING took {waited:.2f}s (want ~0.8 s: "
          "answered when Redis came back)")
    say(f"PING during DEBUG SLEEP 1 answered after {waited:.2f}s")
    sleeper.close()
    waiter.close()


def bgsave_state(c):
    info = c.cmd("INFO", "persistence").decode()
    return dict(re.findall(r"^(\w+):(\S*)\r?$", info, re.M))


def case_bgsave(env):
    c = env.client()
    val = secrets.token_bytes(MB)
    for i in range(24):  # ~24 MB to save: the child runs for a while
        c.cmd("SET", f"big{i}", val)
    check(c.cmd("BGSAVE") == b"Background saving started", "BGSAVE did not start")
    # clients keep working while the child saves
    done, rounds = False, 0
    workers = [env.client() for _ in range(4)]
    deadline = time.monotonic() + 30
    while not done and time.monotonic() < deadline:
        for k, w in enumerate(workers):
            key, v = f"w{k}-{rounds}", secrets.token_bytes(1000 + rounds % 3000)
            check(w.cmd("SET", key, v) == b"OK", "SET during BGSAVE")
            check(w.cmd("GET", key) == v, "GET during BGSAVE returned other bytes")
        rounds += 1
        st = bgsave_state(c)
        done = st.get("rdb_bgsave_in_progress") == "0"
    check(done, "BGSAVE still running after 30 s")
    st = bgsave_state(c)
    check(st.get("rdb_last_bgsave_status") == "ok", f"BGSAVE status {st}")
    rdb = os.path.join(env.tmpdir, "dump.rdb")
    check(os.path.getsize(rdb) > 24 * MB, f"dump.rdb is {os.path.getsize(rdb)} bytes")
    say(f"BGSAVE: {rounds} rounds of 4 clients' SET+GET while it ran; "
        f"dump.rdb {os.path.getsize(rdb)} bytes")
    check("DB saved on disk" in env.log_text(), "the child's 'DB saved on disk' is missing")
    # after the child exited the parent's stack is intact
    check(c.cmd("GET", "big23") == val, "GET after BGSAVE returned other bytes")
    for w in workers:
        w.close()
    c.close()


def case_shutdown(env):
    c = env.client()
    check(c.cmd("SET", "k", "v") == b"OK", "SET")
    c.send(Resp.encode("SHUTDOWN", "NOSAVE"))
    try:
        c.reply()
        raise CaseFailed("SHUTDOWN NOSAVE answered instead of closing")
    except (CaseFailed, OSError) as e:
        if "answered" in str(e):
            raise
    try:
        code = env.proc.wait(15)
    except subprocess.TimeoutExpired as e:
        raise CaseFailed("redis did not exit within 15 s of SHUTDOWN NOSAVE") from e
    check(code == 0, f"redis exited {code} after SHUTDOWN NOSAVE")
    check("ready to exit, bye bye" in env.log_text(), "no 'ready to exit' in the log")
    env.exit_code = code
    c.close()


def case_benchmark(env):
    p = env.ns_run([env.args.redis_benchmark, "-h", env.stack_ip, "-p", str(REDIS_PORT),
                    "-P", "16", "-n", "20000", "-t", "set,get", "-q"], timeout=120)
    out = p.stdout + p.stderr
    say(" ".join(out.split())[-200:])
    check("error" not in out.lower(), f"redis-benchmark reported errors: {out[-500:]}")
    rps = re.findall(r"(SET|GET): ([\d.]+) requests per second", out)
    check({k for k, _ in rps} == {"SET", "GET"}, f"no SET and GET results: {out[-300:]}")
    c = env.client()
    stats = c.cmd("INFO", "commandstats").decode()
    calls = dict(re.findall(r"^cmdstat_(\w+):calls=(\d+)", stats, re.M))
    check(int(calls.get("set", 0)) >= 20000 and int(calls.get("get", 0)) >= 20000,
          f"the server counted {calls} (want 20000 SET and 20000 GET)")
    errs = c.cmd("INFO", "errorstats").decode()
    check("errorstat_" not in errs, f"the server counted errors: {errs}")
    v = c.cmd("GET", "key:__rand_int__")  # -d 3: three random bytes
    check(v is not None and len(v) == 3, f"the benchmark's value is {v!r}, not 3 bytes")
    c.close()


def curl_fetch(env, paths, outdir, tag):
    """One curl, one keep-alive connection: every path into outdir; returns
    {path: bytes} and curl's connection count."""
    args, outs = [], []
    for i, p in enumerate(paths):
        out = os.path.join(outdir, f"{tag}-{i}")
        args += ["-o", out, f"http://{env.stack_ip}:{NGINX_PORT}{p}"]
        outs.append(out)
    r = env.ns_run(["curl", "-sS", "--fail", "-w", "%{num_connects}\n"] + args, timeout=60)
    got = {}
    for p, out in zip(paths, outs):
        with open(out, "rb") as f:
            got[p] = f.read()
        os.unlink(out)
    return got, sum(int(x) for x in r.stdout.split())


def wrk_small_files(env):
    """wrk (one thread, 8 keep-alive connections, 2 s) on a small file: every
    answer a 2xx, no socket error (connect, read, write, timeout)."""
    name = "s5.bin"
    p = env.ns_run([ei.tool("wrk") or "wrk", "-t1", "-c8", "-d2s",
                    f"http://{env.stack_ip}:{NGINX_PORT}/{name}"], timeout=60)
    out = p.stdout
    m = re.search(r"(\d+) requests in ([\d.]+)s, ([\d.]+\w+) read", out)
    check(m and int(m.group(1)) > 0, f"wrk made no requests: {out!r}")
    check("Socket errors" not in out and "Non-2xx" not in out, f"wrk saw errors: {out!r}")
    say(f"wrk: {m.group(1)} requests of /{name} in {m.group(2)} s, no errors")


def case_nginx_static(env):
    outdir = os.path.join(env.tmpdir, "got")
    os.makedirs(outdir)
    for prefix in ("/", "/nosendfile/"):
        paths = [prefix + n for n in env.files]
        got, conns = curl_fetch(env, paths, outdir, prefix.strip("/") or "sf")
        for p in paths:
            want = env.files[p[len(prefix):]]
            check(got[p] == want, f"{p}: {len(got[p])} bytes, not the {len(want)} served")
        check(conns == 1, f"{len(paths)} requests took {conns} connections (want 1)")
        say(f"{prefix}: {len(paths)} files byte-exact over one connection")
    # 8 clients at once, each the big file twice
    procs = []
    for k in range(8):
        outs = [os.path.join(outdir, f"par{k}-{j}") for j in range(2)]
        cmd = ["curl", "-sS", "--fail"]
        for j, o in enumerate(outs):
            cmd += ["-o", o, f"http://{env.stack_ip}:{NGINX_PORT}/"
                    f"{'nosendfile/' if (k + j) % 2 else ''}big.bin"]
        procs.append((subprocess.Popen(env.ns_cmd(cmd), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE), outs))
    for p, outs in procs:
        _, err = p.communicate(timeout=60)
        check(p.returncode == 0, f"a parallel curl failed: {err.decode(errors='replace')}")
        for o in outs:
            with open(o, "rb") as f:
                check(f.read() == env.files["big.bin"], "a parallel big.bin differs")
    say("8 parallel clients: 16 x 1 MB byte-exact")
    wrk_small_files(env)
    # nginx logs a failed setsockopt (TCP_NOPUSH is TCP_CORK), sendfile or
    # epoll call at crit or alert
    bad = [ln for ln in env.log_text().splitlines()
           if re.search(r"\[(emerg|alert|crit|error)\]", ln)]
    check(not bad, f"nginx logged problems: {bad[:3]}")


class KernelServers:
    """TCP echo (7000), TCP reset-at-accept (7001) and UDP echo (7002) on
    the kernel side, each in a thread, sockets made in the namespace."""
    def __init__(self, env):
        self.stop = threading.Event()
        self.socks, self.threads = [], []
        with env.netns():
            for port, kind in ((7000, socket.SOCK_STREAM), (7001, socket.SOCK_STREAM),
                               (7002, socket.SOCK_DGRAM)):
                s = socket.socket(socket.AF_INET, kind)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((ei.KERNEL_ADDR, port))
                if kind == socket.SOCK_STREAM:
                    s.listen(64)
                s.settimeout(0.2)
                self.socks.append(s)
        for fn, s in zip((self._echo, self._rst, self._udp), self.socks):
            self._thread(fn, s)

    def _thread(self, fn, *a):
        t = threading.Thread(target=fn, args=a, daemon=True)
        t.start()
        self.threads.append(t)

    def _accepts(self, s):
        while not self.stop.is_set():
            try:
                c, _ = s.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            yield c

    def _echo(self, s):
        for c in self._accepts(s):
            self._thread(self._echo_one, c)

    def _echo_one(self, c):
        with c:
            try:
                while True:
                    d = c.recv(1 << 20)
                    if not d:
                        return
                    c.sendall(d)
            except OSError:
                return  # a client that reset: its check says what went wrong

    def _rst(self, s):
        for c in self._accepts(s):
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()

    def _udp(self, s):
        while not self.stop.is_set():
            try:
                d, a = s.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            s.sendto(d, a)

    def close(self):
        self.stop.set()
        for t in self.threads[:3]:
            t.join(2)
        for s in self.socks:
            s.close()


def case_python_client(env):
    servers = KernelServers(env)
    try:
        open(os.path.join(env.tmpdir, "go"), "w").close()
        try:
            code = env.proc.wait(90)
        except subprocess.TimeoutExpired as e:
            raise CaseFailed("the client did not finish within 90 s") from e
    finally:
        servers.close()
    env.exit_code = code
    lines = [ln for ln in env.log_text().splitlines() if ln.startswith("check ")]
    for ln in lines:
        say(ln)
    check(len(lines) == 9, f"{len(lines)} checks reported (want 9)")
    check(code == 0 and all(ln.endswith(" ok") for ln in lines),
          f"the client exited {code}: {[ln for ln in lines if not ln.endswith(' ok')]}")


CASES = {
    "redis-setget": case_setget,
    "redis-setget6": case_setget6,
    "redis-pubsub": case_pubsub,
    "redis-debug-sleep": case_debug_sleep,
    "redis-bgsave": case_bgsave,
    "redis-shutdown": case_shutdown,
    "redis-benchmark": case_benchmark,
    "nginx-static": case_nginx_static,
    "python-client": case_python_client,
}


EXITS_BY_ITSELF = ("redis-shutdown", "python-client")


def run_case(args, name):
    say(f"== {name}")
    env = (NginxEnv(args) if name.startswith("nginx") else
           PyClientEnv(args) if name == "python-client" else
           Redis6Env(args) if name.endswith("6") else RedisEnv(args))

    def during():
        CASES[name](env)
        if name not in EXITS_BY_ITSELF:
            check(env.server_alive(), "the server died during the case")

    def after():
        check("userstack-preload:" not in env.log_text(),
              "the preload library complained (see the log)")

    if name in EXITS_BY_ITSELF:
        # exiting by itself is the point: the harness's 'already exited' is not a problem
        orig = env._stop_server

        def stop():
            orig()
            if env.exit_code == 0:
                env.stop_problem = None
        env._stop_server = stop
    return ei.run_env_case(name, env, during, after)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preload", required=True, help="libuserstack-preload.so")
    ap.add_argument("--config", required=True, help="INI to copy (file_prefix is replaced)")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--redis-cli", default="redis-cli")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--nginx", default="nginx")
    ap.add_argument("--port", type=int, default=REDIS_PORT)
    ap.add_argument("cases", nargs="+", help="case names, or 'all': " + " ".join(CASES))
    args = ap.parse_args()
    names = ei.case_names(ap, args.cases, CASES)
    if os.geteuid() != 0:
        say("SKIP: interop tests need root (network namespaces)")
        return ei.SKIP
    need = [attr for prefix, attrs in (("redis", ["redis", "redis_cli", "redis_benchmark"]),
                                       ("nginx", ["nginx"]))
            if any(n.startswith(prefix) for n in names) for attr in attrs]
    for attr in need:
        path = ei.tool(getattr(args, attr))
        if not path:
            say(f"SKIP: {getattr(args, attr)} not installed (tools/setup.sh installs "
                "redis-server, redis-tools and nginx-light)")
            return ei.SKIP
        setattr(args, attr, path)
    if not os.path.exists(args.preload):
        say(f"FAIL: {args.preload} not found (build it first)")
        return 1
    ei.trap_signals()
    ei.sweep_stale_namespaces(ei.tool("ip"))
    results = {n: run_case(args, n) for n in names}
    failed = sum(1 for r in results.values() if r != 0)
    if len(names) > 1:
        say(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    ei.run_main(main)
