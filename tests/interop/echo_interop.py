#!/usr/bin/env python3
"""Interop tests: the Linux kernel as the peer of us-httpecho.

Each run starts the server command inside a fresh network namespace, waits
for its tap interface (ustap0) to appear there, gives the kernel side
10.77.0.1/24, waits for the "listening" line, runs one case and ALWAYS tears
everything down (SIGTERM, SIGKILL fallback, namespace, temp files, leftover
DPDK hugepage/runtime files of its unique --file-prefix), also on failure,
Ctrl-C or SIGTERM (meson's timeout).

    echo_interop.py --server build/apps/httpecho/us-httpecho \
                    --config config/tap.ini CASE [CASE...]

--server is a command line (split like a shell would); the harness appends
`--config <temp copy> --port <port>`.  Cases: see CASES at the bottom.
Exit status: 0 all passed, 1 a case failed, 77 skipped (meson's convention).
Needs root (ip netns), curl, ping, wrk and dumpcap (from tshark's package).
Set US_INTEROP_KEEP=1 to keep the server log after the run.
"""

import argparse
import contextlib
import ctypes
import glob
import hashlib
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

SKIP = 77
KERNEL_ADDR = "10.77.0.1"
KERNEL_PREFIX = 24
NS_PREFIX = "usi-"          # namespaces are usi-<harness pid>-<random>
TAP_WAIT_S = 15.0           # the tap appears ~1-2 s after start; be generous
LISTEN_WAIT_S = 20.0
STOP_WAIT_S = 10.0
CLONE_NEWNET = 0x40000000


class CaseFailed(Exception):
    pass


class Terminated(BaseException):
    """SIGTERM/SIGHUP turned into an exception so that teardown runs."""


def check(cond, msg):
    if not cond:
        raise CaseFailed(msg)


def say(msg):
    print(msg, flush=True)


def tool(name):
    path = shutil.which(name)
    if path:
        return path
    for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def run(cmd, timeout=30, check_rc=True):
    """Run a command, return CompletedProcess (text); raise CaseFailed on failure."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise CaseFailed(f"timed out after {timeout}s: {shlex.join(cmd)}") from e
    if check_rc and p.returncode != 0:
        raise CaseFailed(f"{shlex.join(cmd)} exited {p.returncode}: "
                         f"{(p.stderr or p.stdout).strip()[-500:]}")
    return p


# ----------------------------------------------------------------------------
# The config file: read the few values we need, write a per-run copy

def ini_strip(line):
    """A line without its comment: '#' anywhere, except the escaped "\\#"."""
    m = re.search(r"(?<!\\)#", line)
    return (line[:m.start()] if m else line).strip()


def ini_read(path):
    """{section: {key: value}} from our INI files (rte_cfgfile, '#' comments)."""
    out, sect = {}, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = ini_strip(raw)
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                sect = line[1:-1].strip()
                out.setdefault(sect, {})
            elif "=" in line and sect is not None:
                k, v = line.split("=", 1)
                out[sect][k.strip()] = v.strip()
    return out


def ini_with_overrides(text, section, overrides):
    """Return text with keys of one section replaced (or added), the rest verbatim."""
    lines = text.splitlines()
    out, sect, done, seen_sect = [], None, set(), False

    def flush_missing():
        for k, v in overrides.items():
            if k not in done:
                out.append(f"{k} = {v}")
                done.add(k)

    for raw in lines:
        s = ini_strip(raw)
        if s.startswith("[") and s.endswith("]"):
            if sect == section:
                flush_missing()
            sect = s[1:-1].strip()
            seen_sect = seen_sect or sect == section
        elif sect == section and "=" in s:
            k = s.split("=", 1)[0].strip()
            if k in overrides:
                out.append(f"{k} = {overrides[k]}")
                done.add(k)
                continue
        out.append(raw)
    if sect == section:
        flush_missing()
    if not seen_sect:
        out.append(f"[{section}]")
        flush_missing()
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------
# Network namespaces: sockets are created inside with setns() on this thread

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd):
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)
        return
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


@contextlib.contextmanager
def in_netns(name):
    """Switch this thread into netns `name`; a socket keeps the netns it was made in."""
    orig = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        _setns(target)
        yield
    finally:
        _setns(orig)
        os.close(orig)
        os.close(target)


def sweep_stale_namespaces(ip):
    """Delete usi-<pid>-* namespaces whose harness is gone (e.g. after SIGKILL)."""
    p = run([ip, "netns", "list"], check_rc=False)
    for line in p.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(rf"^{NS_PREFIX}(\d+)-", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            say(f"note: deleting stale namespace {name}")
            run([ip, "netns", "del", name], check_rc=False)


# ----------------------------------------------------------------------------
# A packet capture on the tap (dumpcap writes classic pcap with -P)

class Capture:
    def __init__(self, env, bpf):
        self.env, self.bpf = env, bpf
        self.path = os.path.join(env.tmpdir, f"cap-{secrets.token_hex(3)}.pcap")
        self.proc = None

    def __enter__(self):
        dumpcap = tool("dumpcap")
        if not dumpcap:
            raise CaseFailed("dumpcap not found (Debian package: tshark / wireshark-common)")
        self.errpath = self.path + ".err"
        self.err = open(self.errpath, "w")
        self.proc = subprocess.Popen(
            self.env.ns_cmd([dumpcap, "-q", "-P", "-i", self.env.iface, "-f", self.bpf,
                             "-w", self.path]),
            stdout=subprocess.DEVNULL, stderr=self.err, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(self.errpath) as f:
                if "Capturing on" in f.read():
                    time.sleep(0.3)  # the filter is attached just after the message
                    return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        with open(self.errpath) as f:
            raise CaseFailed(f"dumpcap did not start: {f.read().strip()}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()

    def __exit__(self, *exc):
        self.stop()
        return False

    def frames(self):
        """Ethernet frames from the pcap file, as bytes."""
        with open(self.path, "rb") as f:
            data = f.read()
        if len(data) < 24:
            return []
        magic = struct.unpack("<I", data[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        out, off = [], 24
        while off + 16 <= len(data):
            _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
            out.append(data[off + 16:off + 16 + incl])
            off += 16 + incl
        return out


def mac_str(b):
    return ":".join(f"{x:02x}" for x in b)


def arp_packets(frames):
    """(op, sender mac, sender ip, target ip) for every Ethernet/IPv4 ARP frame."""
    out = []
    for fr in frames:
        if len(fr) < 42 or fr[12:14] != b"\x08\x06":
            continue
        op = struct.unpack("!H", fr[20:22])[0]
        out.append((op, mac_str(fr[22:28]), socket.inet_ntoa(fr[28:32]),
                    socket.inet_ntoa(fr[38:42])))
    return out


# ----------------------------------------------------------------------------
# The environment: namespace + server + kernel side, always torn down

class EchoEnv:
    def __init__(self, args, hugepages=None, hide_hugepages=False):
        self.args = args
        self.hide_hugepages = hide_hugepages
        self.ip = tool("ip")
        self.port = args.port
        self.hugepages = hugepages
        self.ns = f"{NS_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        self.prefix = f"usinterop_{os.getpid()}_{secrets.token_hex(3)}"
        self.tmpdir = None
        self.proc = None
        self.ns_made = False
        self.exit_code = None   # server exit status after teardown
        self.stop_problem = None

    # -- helpers usable by cases
    def ns_cmd(self, cmd):
        return [self.ip, "netns", "exec", self.ns] + list(cmd)

    def ns_run(self, cmd, timeout=30, check_rc=True):
        return run(self.ns_cmd(cmd), timeout=timeout, check_rc=check_rc)

    def netns(self):
        return in_netns(self.ns)

    def url(self, path="/"):
        return f"http://{self.stack_ip}:{self.port}{path}"

    def log_text(self):
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def server_alive(self):
        return self.proc is not None and self.proc.poll() is None

    # -- set up
    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self._teardown()
            self.dump_log()
            raise
        return self

    def _write_config(self):
        src = self.args.config
        with open(src, encoding="utf-8") as f:
            text = f.read()
        ov = {"file_prefix": self.prefix}
        if self.hugepages:
            ov["hugepages"] = self.hugepages
        self.cfgpath = os.path.join(self.tmpdir, "server.ini")
        with open(self.cfgpath, "w", encoding="utf-8") as f:
            f.write(ini_with_overrides(text, "eal", ov))
        ini = ini_read(self.cfgpath)
        self.stack_ip = ini.get("ip", {}).get("addr", "10.77.0.2").split("/")[0]
        m = re.search(r"iface=([^,\s]+)", ini.get("port", {}).get("device", ""))
        self.iface = m.group(1) if m else "ustap0"

    def _setup(self):
        self.tmpdir = tempfile.mkdtemp(prefix="us-interop-")
        self._write_config()
        self.logpath = os.path.join(self.tmpdir, "server.log")
        run([self.ip, "netns", "add", self.ns])
        self.ns_made = True
        self.ns_run(["ip", "link", "set", "lo", "up"])
        # No IPv6 on the tap: keeps router solicitations/MLD off the wire.
        self.ns_run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1"], check_rc=False)
        cmd = shlex.split(self.args.server) + ["--config", self.cfgpath,
                                               "--port", str(self.port)]
        if self.hide_hugepages:
            # Hugepages unavailable to this server only: a private mount
            # namespace without any hugetlbfs mount (the host keeps its own).
            cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   "for m in $(awk '$3 == \"hugetlbfs\" {print $2}' /proc/mounts); do "
                   "umount -l \"$m\" || exit 1; done; exec \"$@\"", "sh"] + cmd
        say(f"server: {shlex.join(cmd)} (netns {self.ns}, file_prefix {self.prefix})")
        self.logf = open(self.logpath, "wb")
        t0 = time.monotonic()
        # Own session: a terminal's Ctrl-C reaches only us; we stop the server.
        self.proc = subprocess.Popen(self.ns_cmd(cmd), stdout=self.logf,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self._wait(lambda: self.ns_run(["ip", "link", "show", self.iface],
                                       check_rc=False).returncode == 0,
                   TAP_WAIT_S, f"interface {self.iface} in netns {self.ns}")
        t_tap = time.monotonic() - t0
        self.ns_run(["ip", "addr", "add", f"{KERNEL_ADDR}/{KERNEL_PREFIX}",
                     "dev", self.iface])
        self.ns_run(["ip", "link", "set", self.iface, "up"])
        listen_re = re.compile(r"listening on http://\S+:%d/" % self.port)
        self._wait(lambda: listen_re.search(self.log_text()), LISTEN_WAIT_S,
                   "the 'listening on' line in the server log (is stdout flushed?)")
        say(f"server up: {self.iface} after {t_tap:.2f}s, listening after "
            f"{time.monotonic() - t0:.2f}s")

    def _wait(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return
            if not self.server_alive():
                raise CaseFailed(f"server exited ({self.proc.returncode}) before {what}")
            time.sleep(0.1)
        raise CaseFailed(f"timed out after {timeout:.0f}s waiting for {what}")

    # -- tear down
    def __exit__(self, exc_type, exc, tb):
        failed = exc_type is not None
        self._teardown()
        if failed or self.stop_problem:
            self.dump_log()
        return False

    def _stop_server(self):
        if self.proc is None:
            return
        if self.proc.poll() is not None:
            self.exit_code = self.proc.returncode
            self.stop_problem = f"server had already exited with {self.exit_code}"
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.exit_code = self.proc.wait(STOP_WAIT_S)
            if self.exit_code != 0:
                self.stop_problem = f"server exited {self.exit_code} on SIGTERM (want 0)"
        except subprocess.TimeoutExpired:
            self.stop_problem = f"server ignored SIGTERM for {STOP_WAIT_S:.0f}s: SIGKILL"
            self.proc.kill()
            self.exit_code = self.proc.wait()
        finally:
            # Anything the server left behind in its own process group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def _teardown(self):
        # Each step on its own, so one failing cannot skip the others; a
        # second Ctrl-C/SIGTERM waits until the teardown is complete.
        sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        try:
            for step in (self._stop_server, self._del_ns, self._rm_dpdk_files):
                try:
                    step()
                except Exception as e:  # noqa: BLE001 - teardown must go on
                    say(f"teardown: {step.__name__}: {e}")
            if getattr(self, "logf", None):
                self.logf.close()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _del_ns(self):
        if self.ns_made:
            run([self.ip, "netns", "del", self.ns], check_rc=False)
            self.ns_made = False

    def hugepage_files(self):
        """This run's files on every hugetlbfs mount (EAL names them <prefix>map_N)."""
        mounts = {"/dev/hugepages"}
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and parts[2] == "hugetlbfs":
                    mounts.add(parts[1])
        return [p for m in sorted(mounts) for p in glob.glob(os.path.join(m, self.prefix + "*"))]

    def _rm_dpdk_files(self):
        for p in self.hugepage_files():
            os.unlink(p)
        for rt in ("/var/run/dpdk", "/run/dpdk"):
            shutil.rmtree(os.path.join(rt, self.prefix), ignore_errors=True)

    def dump_log(self, lines=40):
        text = self.log_text().splitlines()
        say(f"---- server log ({self.logpath}), last {min(lines, len(text))} lines ----")
        for line in text[-lines:]:
            say("  " + line)
        say("---- end of server log ----")

    def cleanup_files(self):
        if self.tmpdir and not os.environ.get("US_INTEROP_KEEP"):
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        elif self.tmpdir:
            say(f"kept {self.tmpdir}")


# ----------------------------------------------------------------------------
# HTTP over a raw socket in the namespace, so the echo can be compared exactly

def read_response(sock):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise CaseFailed(f"connection closed inside the response head: {buf[:200]!r}")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ?(.*)", lines[0])
    check(m, f"bad status line {lines[0]!r}")
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    check("content-length" in hdrs, f"no Content-Length in response: {lines}")
    want = int(hdrs["content-length"])
    body = bytearray(rest)
    while len(body) < want:
        chunk = sock.recv(min(1 << 20, want - len(body)))
        if not chunk:
            raise CaseFailed(f"connection closed after {len(body)} of {want} body bytes")
        body += chunk
    check(len(body) == want, f"{len(body) - want} bytes beyond Content-Length")
    return int(m.group(1)), lines[0], hdrs, bytes(body)


def http_exchange(env, request, timeout=20):
    """Send request (bytes) on a fresh connection; return (code, status, hdrs, body)."""
    with env.netns():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    errors = []

    def sender():
        try:
            sock.sendall(request)
        except OSError as e:
            errors.append(e)

    with sock:
        sock.settimeout(timeout)
        sock.connect((env.stack_ip, env.port))
        # Send from a thread: a server that echoes while still reading must
        # not deadlock against our full receive buffer.
        t = threading.Thread(target=sender, daemon=True)
        t.start()
        resp = read_response(sock)
        t.join(timeout)
    check(not errors, f"send failed: {errors}")
    return resp


def ping(env, extra, count=3):
    p = env.ns_run(["ping", "-n", "-c", str(count), "-i", "0.2", "-W", "2"] + extra
                   + [env.stack_ip], timeout=30, check_rc=False)
    m = re.search(r"(\d+) packets transmitted, (\d+) received", p.stdout)
    check(m, f"no ping summary: {p.stdout} {p.stderr}")
    rtt = re.search(r"rtt min/avg/max/mdev = (\S+) ms", p.stdout)
    return int(m.group(1)), int(m.group(2)), (rtt.group(1) if rtt else "-"), p.stdout


# ----------------------------------------------------------------------------
# Cases: each takes the started EchoEnv

def case_ping(env):
    tx, rx, rtt, _ = ping(env, [])
    say(f"ping: {rx}/{tx} replies, rtt min/avg/max/mdev {rtt} ms")
    check(rx == tx == 3, f"{tx - rx} of {tx} pings unanswered")


def case_ping_frag(env):
    tx, rx, rtt, out = ping(env, ["-s", "3000"])
    sizes = set(re.findall(r"^(\d+) bytes from", out, re.M))
    say(f"ping -s 3000: {rx}/{tx} replies of {sizes or '-'} bytes, rtt {rtt} ms")
    check(rx == tx == 3, f"{tx - rx} of {tx} fragmented pings unanswered")
    check(sizes == {"3008"}, f"reply sizes {sizes}, want 3008 (3000 + ICMP header)")


def _neigh(env, addr):
    p = env.ns_run(["ip", "neigh", "show", addr, "dev", env.iface])
    m = re.search(r"lladdr (\S+) .*?(REACHABLE|STALE|DELAY|PROBE|PERMANENT|FAILED)",
                  p.stdout)
    return (m.group(1).lower(), m.group(2)) if m else (None, p.stdout.strip())


def case_arp(env):
    tap_mac = env.ns_run(["cat", f"/sys/class/net/{env.iface}/address"]).stdout.strip()
    with Capture(env, "arp") as cap:
        # Kernel -> stack: forget the stack, ping, the kernel must ARP for it.
        env.ns_run(["ip", "neigh", "flush", "dev", env.iface])
        tx, rx, _, _ = ping(env, [], count=2)
        check(rx == tx, f"{tx - rx} of {tx} pings unanswered after neigh flush")
        stack_mac, state = _neigh(env, env.stack_ip)
        # Stack -> kernel: a second kernel address the stack has never seen,
        # with the stack pinned in the kernel's table so the kernel sends no
        # ARP request the stack could learn from: the stack must ask.
        check(stack_mac, f"no neighbour entry for {env.stack_ip}: {state}")
        env.ns_run(["ip", "addr", "add", f"10.77.0.3/{KERNEL_PREFIX}", "dev", env.iface])
        env.ns_run(["ip", "neigh", "replace", env.stack_ip, "lladdr", stack_mac,
                    "nud", "permanent", "dev", env.iface])
        tx3, rx3, _, _ = ping(env, ["-I", "10.77.0.3"], count=2)
        time.sleep(0.3)
    arps = arp_packets(cap.frames())
    for op, smac, sip, tip in arps:
        say(f"  seen ARP {'request' if op == 1 else 'reply' if op == 2 else op}: "
            f"{sip} ({smac}) -> {tip}")
    say(f"kernel resolved {env.stack_ip} -> {stack_mac} ({state}); "
        f"{env.iface} itself is {tap_mac}")
    check(state in ("REACHABLE", "STALE", "DELAY"), f"neighbour state {state}")
    check(stack_mac != tap_mac, "the stack answered with the kernel tap's own MAC")
    check(any(op == 2 and sip == env.stack_ip and smac == stack_mac for op, smac, sip, _ in arps),
          f"no ARP reply from {env.stack_ip} ({stack_mac}) seen")
    asked = [a for a in arps if a[0] == 1 and a[1] == stack_mac and a[2] == env.stack_ip]
    say(f"stack ARP requests seen: {[a[3] for a in asked] or 'none'}; "
        f"ping from 10.77.0.3: {rx3}/{tx3}")
    check(any(a[3] == "10.77.0.3" for a in asked),
          f"the stack sent no ARP request for 10.77.0.3 (from {stack_mac})")
    check(rx3 == tx3, f"{tx3 - rx3} of {tx3} pings from 10.77.0.3 unanswered")


def _curl_sent_header(trace_text):
    """The bytes curl sent as its request head, from `curl --trace` hex dump."""
    out, sending = bytearray(), False
    for line in trace_text.splitlines():
        if line.startswith("=>") or line.startswith("<=") or line.startswith("=="):
            sending = line.startswith("=> Send header")
            continue
        m = re.match(r"^[0-9a-f]{4}: ((?:[0-9a-f]{2} ){1,16})", line)
        if sending and m:
            out += bytes.fromhex(m.group(1).replace(" ", ""))
    return bytes(out)


def case_get(env):
    req = (f"GET /interop/get?x=1 HTTP/1.1\r\nHost: {env.stack_ip}:{env.port}\r\n"
           "User-Agent: userstack-interop\r\nX-Odd:  two  spaces\t\r\n"
           "Accept: */*\r\n\r\n").encode()
    code, status, hdrs, body = http_exchange(env, req)
    say(f"socket GET: {status!r}, Content-Length {hdrs['content-length']}, "
        f"echo {'byte-exact' if body == req else 'DIFFERENT'} ({len(req)} bytes sent)")
    check(code == 200, f"status {status!r}")
    check(body == req, f"echo differs:\n sent {req!r}\n got  {body!r}")
    trace = os.path.join(env.tmpdir, "curl.trace")
    out = os.path.join(env.tmpdir, "curl.body")
    p = env.ns_run(["curl", "-sS", "--max-time", "10", "--trace", trace, "-o", out,
                    "-w", "%{http_code}", env.url("/curl")])
    with open(trace) as f:
        sent = _curl_sent_header(f.read())
    with open(out, "rb") as f:
        got = f.read()
    say(f"curl GET: HTTP {p.stdout}, {len(sent)} bytes sent, {len(got)} echoed, "
        f"{'byte-exact' if got == sent else 'DIFFERENT'}")
    check(p.stdout == "200", f"curl got HTTP {p.stdout}")
    check(sent.startswith(b"GET /curl HTTP/1.1\r\n"), f"trace parse: {sent!r}")
    check(got == sent, f"curl echo differs:\n sent {sent!r}\n got  {got!r}")


def case_post(env):
    payload = os.urandom(1 << 20)
    req = (f"POST /interop/post HTTP/1.1\r\nHost: {env.stack_ip}:{env.port}\r\n"
           "Content-Type: application/octet-stream\r\n"
           f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
    t0 = time.monotonic()
    code, status, _, body = http_exchange(env, req, timeout=60)
    dt = time.monotonic() - t0
    want, got = hashlib.sha256(req).hexdigest(), hashlib.sha256(body).hexdigest()
    say(f"1 MiB POST: {status!r}, sent {len(req)} bytes, echoed {len(body)} in {dt:.3f}s "
        f"({2 * len(req) / dt / 1e6:.1f} MB/s both ways); sha256 {got[:16]}.. "
        f"{'==' if got == want else '!='} {want[:16]}..")
    check(code == 200, f"status {status!r}")
    check(len(body) == len(req), f"echoed {len(body)} bytes, sent {len(req)}")
    check(got == want, "sha256 of the echo differs from the request")


def case_sequential(env, n=200):
    script = ("for i in $(seq %d); do curl -sS --max-time 5 -o /dev/null "
              "-w '%%{http_code} %%{size_download}\\n' %s; done" % (n, env.url("/seq")))
    t0 = time.monotonic()
    p = env.ns_run(["sh", "-c", script], timeout=120, check_rc=False)
    dt = time.monotonic() - t0
    lines = p.stdout.split("\n")[:-1]
    ok = [ln for ln in lines if ln.startswith("200 ") and int(ln.split()[1]) > 0]
    say(f"{n} sequential curls: {len(ok)} x 200 OK in {dt:.2f}s ({dt / n * 1000:.1f} ms each, "
        "including curl start)")
    check(len(ok) == n, f"only {len(ok)} of {n} OK; others: "
          f"{[ln for ln in lines if ln not in ok][:5]} {p.stderr.strip()[-300:]}")


def case_concurrent(env, n=50):
    procs = []
    t0 = time.monotonic()
    for i in range(n):
        procs.append(subprocess.Popen(
            env.ns_cmd(["curl", "-sS", "--max-time", "15", "-o", "/dev/null",
                        "-w", "%{http_code} %{size_download}", env.url(f"/c{i}")]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        results.append((out.strip(), err.strip()))
    dt = time.monotonic() - t0
    ok = [r for r in results if r[0].startswith("200 ") and int(r[0].split()[1]) > 0]
    say(f"{n} concurrent curls: {len(ok)} x 200 OK, all done in {dt:.2f}s")
    check(len(ok) == n, f"{n - len(ok)} failed: {[r for r in results if r not in ok][:5]}")


def case_wrk(env):
    p = env.ns_run(["wrk", "-c", "32", "-d", "5", "-t", "2", "--timeout", "2s",
                    env.url("/wrk")], timeout=60, check_rc=False)
    out = p.stdout
    for line in out.splitlines():
        say("  wrk| " + line)
    m = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s*(\S+)", out)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                     out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    check(p.returncode == 0 and m and rps, f"wrk failed ({p.returncode}): {p.stderr.strip()}")
    say(f"wrk -c 32 -d 5 -t 2: {m.group(1)} requests, Requests/sec: {rps.group(1)}")
    check(int(m.group(1)) > 0, "no request completed")
    check(not errs or all(int(x) == 0 for x in errs.groups()),
          f"wrk: {errs.group(0) if errs else ''}")
    check(not non2xx, f"wrk: {non2xx.group(0) if non2xx else ''}")


def case_rst(env, port=9, tries=3):
    times = []
    for _ in range(tries):
        with env.netns():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with s:
            s.settimeout(3)
            t0 = time.monotonic()
            try:
                s.connect((env.stack_ip, port))
                raise CaseFailed(f"connect to closed port {port} succeeded")
            except ConnectionRefusedError:
                times.append(time.monotonic() - t0)
            except socket.timeout as e:
                raise CaseFailed(f"no RST for a SYN to port {port} within 3s") from e
    say(f"SYN to closed port {port}: ECONNREFUSED {tries}x, in "
        + ", ".join(f"{t * 1000:.1f} ms" for t in times))
    # The kernel retransmits a SYN after 1 s: slower means the first went unanswered.
    check(max(times) < 1.0, "a RST came only after a SYN retransmission")


def _curl_ok(env):
    p = env.ns_run(["curl", "-sS", "--max-time", "10", "-o", "/dev/null",
                    "-w", "%{http_code} %{size_download}", env.url("/nohuge")], check_rc=False)
    say(f"curl: {p.stdout} {p.stderr.strip()}")
    check(p.stdout.startswith("200 "), f"curl failed: {p.stdout} {p.stderr.strip()}")


def case_nohuge(env):
    lines = [ln for ln in env.log_text().splitlines() if "--no-huge" in ln]
    files = env.hugepage_files()
    say(f"hugepages = {env.hugepages}{' (hugetlbfs hidden)' if env.hide_hugepages else ''}: "
        f"log says {lines[0].strip() if lines else 'NOTHING'}; "
        f"{len(files)} hugepage files of prefix {env.prefix}")
    check(lines, "no log line mentions --no-huge")
    check(not files, f"hugepage files exist: {files[:3]}")
    _curl_ok(env)


# name -> (function, EchoEnv keyword arguments)
CASES = {
    "ping": (case_ping, {}),
    "ping-frag": (case_ping_frag, {}),
    "arp": (case_arp, {}),
    "get": (case_get, {}),
    "post-1m": (case_post, {}),
    "seq-200": (case_sequential, {}),
    "concurrent-50": (case_concurrent, {}),
    "wrk": (case_wrk, {}),
    "rst": (case_rst, {}),
    # The fallback: told not to use hugepages, and (auto) finding none usable.
    "nohuge-off": (case_nohuge, {"hugepages": "off"}),
    "nohuge-auto": (case_nohuge, {"hugepages": "auto", "hide_hugepages": True}),
}


def run_case(args, name):
    fn, kwargs = CASES[name]
    say(f"== {name}")
    t0 = time.monotonic()
    env = EchoEnv(args, **kwargs)
    try:
        with env:
            fn(env)
            check(env.server_alive(), "server died during the case")
        check(not env.stop_problem, env.stop_problem or "")
    except CaseFailed as e:
        say(f"FAIL {name}: {e}")
        return 1
    except Exception:  # noqa: BLE001 - a harness bug fails the case, not the run
        say(f"FAIL {name}: unexpected error\n{traceback.format_exc()}")
        return 1
    finally:
        env.cleanup_files()
    say(f"PASS {name} ({time.monotonic() - t0:.1f}s; server exit {env.exit_code})")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True,
                    help="server command line; --config FILE --port N are appended")
    ap.add_argument("--config", required=True, help="INI to copy (file_prefix is replaced)")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("cases", nargs="+", help="case names, or 'all': " + " ".join(CASES))
    args = ap.parse_args()
    names = list(CASES) if args.cases == ["all"] else args.cases
    bad = [n for n in names if n not in CASES]
    if bad:
        ap.error(f"unknown case(s) {bad}; known: {' '.join(CASES)}")
    if os.geteuid() != 0:
        say("SKIP: interop tests need root (network namespaces)")
        return SKIP
    missing = [t for t in ("ip", "curl", "ping", "wrk", "dumpcap") if not tool(t)]
    if missing:
        say(f"FAIL: missing tools {missing} (run tools/setup.sh)")
        return 1
    exe = shlex.split(args.server)[0]
    if not (shutil.which(exe) or os.access(exe, os.X_OK)):
        say(f"FAIL: server {exe} not found or not executable (build it first)")
        return 1
    if not os.path.exists(args.config):
        say(f"FAIL: config {args.config} not found")
        return 1

    def on_signal(signum, _frame):
        raise Terminated(f"signal {signum}")

    # Also when started with SIGINT ignored (a background job of a script).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    sweep_stale_namespaces(tool("ip"))
    results = {n: run_case(args, n) for n in names}
    passed = sum(1 for r in results.values() if r == 0)
    failed = sum(1 for r in results.values() if r not in (0, SKIP))
    skipped = len(results) - passed - failed
    if len(names) > 1:
        say(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    return SKIP if skipped == len(results) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyboardInterrupt, Terminated) as e:
        say(f"interrupted ({str(e) or 'Ctrl-C'}): torn down")
        sys.exit(130)
