#!/usr/bin/env python3
"""Interop tests: the Linux kernel as the peer of us-httpecho.

Each run starts the server command inside a fresh network namespace, waits
for its tap interface (ustap0) to appear there, gives the kernel side
10.77.0.1/24 (and fd00:77::1/64 for the IPv6 cases), waits for the
"listening" line, runs one case and ALWAYS tears
everything down (SIGTERM, SIGKILL fallback, namespace, temp files, leftover
DPDK hugepage/runtime files of its unique --file-prefix), also on failure,
Ctrl-C or SIGTERM (meson's timeout).

    echo_interop.py --server build/apps/httpecho/us-httpecho \
                    --config config/tap.ini CASE [CASE...]

--server is a command line (split like a shell would); the harness appends
`--config <temp copy> --port <port>`.  Cases: see CASES at the bottom; a
case function serves both families (EchoEnv's family, TcpPeer), the IPv6
cases being named with a 6.
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
import random
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
KERNEL_ADDR6 = "fd00:77::1"  # the kernel side of config/tap.ini's [ip6] addr
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


def trap_signals(sigint=True):
    """SIGTERM and SIGHUP raise Terminated, and with sigint SIGINT raises
    KeyboardInterrupt (also when started with SIGINT ignored, a background
    job of a script): the running case's teardown runs either way."""
    def on_signal(signum, _frame):
        raise Terminated(f"signal {signum}")

    if sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)


def case_names(ap, given, cases, allow_all=True):
    """The cases to run: given, or every one of cases for 'all' (allow_all);
    an unknown name is the command line's error (argparse exits 2)."""
    names = list(cases) if allow_all and given == ["all"] else given
    bad = [n for n in names if n not in cases]
    if bad:
        ap.error(f"unknown case(s) {bad}; known: {' '.join(cases)}")
    return names


def kernel_peer_ns(env, nsk, ifaces, addrs, mtu=None, peer_opts=()):
    """A second namespace nsk for a kernel peer, joined to env's namespace
    by a veth pair (ifaces: env's end, nsk's end; addrs: their /24
    addresses), both ends at mtu if given, peer_opts on nsk's end only
    (e.g. gso_max_segs 1), loopback up there.  Returns the command prefix
    that runs in nsk; the caller deletes nsk, pass or fail."""
    mtu_opts = ["mtu", str(mtu)] if mtu else []
    run([env.ip, "netns", "add", nsk])
    run([env.ip, "link", "add", ifaces[0], "netns", env.ns, "type", "veth",
         "peer", "name", ifaces[1], "netns", nsk])
    kcmd = [env.ip, "netns", "exec", nsk]
    env.ns_run(["ip", "addr", "add", f"{addrs[0]}/24", "dev", ifaces[0]])
    env.ns_run(["ip", "link", "set", ifaces[0]] + mtu_opts + ["up"])
    run(kcmd + ["ip", "addr", "add", f"{addrs[1]}/24", "dev", ifaces[1]])
    run(kcmd + ["ip", "link", "set", ifaces[1]] + mtu_opts + list(peer_opts) + ["up"])
    run(kcmd + ["ip", "link", "set", "lo", "up"])
    return kcmd


def run_cases(args, names, cases):
    """Each named case as cases[name](args), root only: the exit status
    (0 all passed, 1 one failed, SKIP without root)."""
    if os.geteuid() != 0:
        say("SKIP: interop tests need root (network namespaces)")
        return SKIP
    trap_signals()
    failed = 0
    for name in names:
        try:
            cases[name](args)
            say(f"PASS {name}")
        except CaseFailed as e:
            say(f"FAIL {name}: {e}")
            failed += 1
    return 1 if failed else 0


def run_main(main):
    """Exits with main()'s code; interrupted (Ctrl-C, SIGTERM, SIGHUP): 130,
    each case having torn down what it made."""
    try:
        sys.exit(main())
    except (KeyboardInterrupt, Terminated) as e:
        say(f"interrupted ({str(e) or 'Ctrl-C'}): torn down")
        sys.exit(130)


def sanitized(binary):
    """True when binary links libasan (the ASan+UBSan build of test.sh)."""
    return "libasan" in subprocess.run(["ldd", binary], text=True,
                                       capture_output=True).stdout


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


def nd_packets(frames):
    """(type, source IPv6, target IPv6, source MAC) for every Neighbor
    Solicitation (135) and Advertisement (136) in Ethernet frames (no
    extension headers: ND never carries them)."""
    out = []
    for fr in frames:
        if len(fr) < 14 + 40 + 24 or fr[12:14] != b"\x86\xdd" or fr[20] != 58:
            continue
        icmp = fr[54:]
        if icmp[0] not in (135, 136):
            continue
        out.append((icmp[0], socket.inet_ntop(socket.AF_INET6, fr[22:38]),
                    socket.inet_ntop(socket.AF_INET6, icmp[8:24]), mac_str(fr[6:12])))
    return out


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

class TcpPeer:
    """The stack as the TCP cases see it, in one family, so that one case
    function serves IPv4 and IPv6.  Needs stack_ip (and stack_ip6 for
    family 6), port and netns()."""
    family = 4
    stack_ip6 = None

    @property
    def peer(self):
        """The stack's address the TCP cases talk to."""
        return self.stack_ip6 if self.family == 6 else self.stack_ip

    @property
    def kernel_addr(self):
        return KERNEL_ADDR6 if self.family == 6 else KERNEL_ADDR

    @property
    def host(self):
        """peer as a URL and a Host header name it (RFC 3986 3.2.2: IPv6 in brackets)."""
        return f"[{self.peer}]" if self.family == 6 else self.peer

    @property
    def l3(self):
        """tshark's name of the network layer: ip.src or ipv6.src."""
        return "ipv6" if self.family == 6 else "ip"

    @property
    def sockaddr(self):
        return (self.peer, self.port)

    def tcp_socket(self):
        """A TCP socket of the case's family, made in the namespace."""
        with self.netns():
            return socket.socket(socket.AF_INET6 if self.family == 6 else socket.AF_INET,
                                 socket.SOCK_STREAM)

    def curl(self):
        """curl held to the case's family (no fallback to the other one)."""
        return ["curl", f"-{self.family}"]

    def url(self, path="/"):
        return f"http://{self.host}:{self.port}{path}"


class EchoEnv(TcpPeer):
    def __init__(self, args, hugepages=None, hide_hugepages=False, server_args=(),
                 loss=None, impair=None, ip6=False, family=4, tcp=None):
        self.args = args
        self.family = family                  # 4 or 6: the family the TCP cases use
        self.ip6 = ip6 or family == 6         # kernel side gets KERNEL_ADDR6 on the tap
        self.hide_hugepages = hide_hugepages
        self.server_args = list(server_args)  # e.g. ["--max-body", "N"] for one case
        self.loss = loss                      # percent dropped each way by nftables
        self.impair = impair                  # {"rx": spec, "tx": spec}: the stack's [impair]
        self.tcp = tcp                        # {key: value}: [tcp] overrides
        self.expect_server = None             # {"requests": n, "connections": n}
        # {"tfo_srv_accepted": minimum, ...}; over IPv6, TCP must have gone there
        self.expect_counters = {"ip6_rx_tcp": 1} if family == 6 else {}
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
        text = ini_with_overrides(text, "eal", ov)
        if self.impair:
            text = ini_with_overrides(text, "impair", self.impair)
        if self.tcp:
            text = ini_with_overrides(text, "tcp", self.tcp)
        with open(self.cfgpath, "w", encoding="utf-8") as f:
            f.write(text)
        ini = ini_read(self.cfgpath)
        self.stack_ip = ini.get("ip", {}).get("addr", "10.77.0.2").split("/")[0]
        self.stack_ip6 = ini.get("ip6", {}).get("addr", "").split("/")[0] or None
        self.mtu = int(ini.get("port", {}).get("mtu", "1500"))
        m = re.search(r"iface=([^,\s]+)", ini.get("port", {}).get("device", ""))
        self.iface = m.group(1) if m else "ustap0"

    def make_ns(self):
        """The namespace, loopback up, IPv6 off unless a case turns it on
        for the tap: keeps router solicitations/MLD off the wire."""
        run([self.ip, "netns", "add", self.ns])
        self.ns_made = True
        self.ns_run(["ip", "link", "set", "lo", "up"])
        self.ns_run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1"], check_rc=False)

    def _setup(self):
        self.tmpdir = tempfile.mkdtemp(prefix="us-interop-")
        self._write_config()
        self.logpath = os.path.join(self.tmpdir, "server.log")
        self.make_ns()
        cmd = shlex.split(self.args.server) + ["--config", self.cfgpath,
                                               "--port", str(self.port)] + self.server_args
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
        if self.ip6:
            self._kernel_ip6()
        self.ns_run(["ip", "link", "set", self.iface, "up"])
        listen_re = re.compile(r"listening on http://\S+:%d/" % self.port)
        self._wait(lambda: listen_re.search(self.log_text()), LISTEN_WAIT_S,
                   "the 'listening on' line in the server log (is stdout flushed?)")
        say(f"server up: {self.iface} after {t_tap:.2f}s, listening after "
            f"{time.monotonic() - t0:.2f}s")
        if self.loss:
            self._add_loss()

    def _kernel_ip6(self):
        """IPv6 on the tap only (the namespace default keeps it off): no
        router solicitations, no DAD for our address (nodad), so the
        stack's own DAD and neighbour discovery are all that runs."""
        if not self.stack_ip6:
            raise CaseFailed("the config has no [ip6] addr")
        conf = f"net.ipv6.conf.{self.iface}"
        self.ns_run(["sysctl", "-qw", f"{conf}.disable_ipv6=0", f"{conf}.accept_ra=0",
                     f"{conf}.router_solicitations=0", f"{conf}.accept_dad=0"])
        self.ns_run(["ip", "-6", "addr", "add", f"{KERNEL_ADDR6}/64", "dev", self.iface,
                     "nodad"])

    # -- random loss on the tap, both ways (netdev ingress: stack -> kernel,
    # egress: kernel -> stack).  A netdev hook sees every frame whatever its
    # ethertype, so the drop takes IPv4, IPv6, ARP and ND alike; counters
    # before it count all packets and those of the case's family (proof that
    # the case's traffic crossed the hook).
    LOSS_TABLE = "usloss"

    def _add_loss(self):
        nft = tool("nft")
        if not nft:
            raise CaseFailed("nft not found (Debian package nftables, tools/setup.sh)")
        rules = [f"table netdev {self.LOSS_TABLE} {{"]
        for hook in ("ingress", "egress"):
            rules += [f"  chain {hook} {{",
                      f'    type filter hook {hook} device "{self.iface}" priority 0;',
                      "    counter",
                      f"    meta protocol {self.nft_family} counter",
                      f"    numgen random mod 100 < {self.loss} counter drop",
                      "  }"]
        rules.append("}")
        p = subprocess.run(self.ns_cmd([nft, "-f", "-"]), input="\n".join(rules) + "\n",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=30)
        if p.returncode != 0:
            raise CaseFailed(f"nft -f failed ({p.returncode}): {p.stderr.strip()}")
        say(f"loss: nftables netdev {self.iface} ingress+egress drop {self.loss}% at random")

    @property
    def nft_family(self):
        return "ip6" if self.family == 6 else "ip"

    def loss_counts(self):
        """{hook: (packets seen, of the case's family, dropped)} from the nft counters."""
        p = self.ns_run([tool("nft"), "list", "table", "netdev", self.LOSS_TABLE])
        out = {}
        for hook in ("ingress", "egress"):
            m = re.search(r"chain %s \{(.*?)\n\s*\}" % hook, p.stdout, re.S)
            check(m, f"nft: no chain {hook} in {p.stdout!r}")
            n = [int(x) for x in re.findall(r"counter packets (\d+)", m.group(1))]
            check(len(n) == 3, f"nft: {len(n)} counters in chain {hook}: {m.group(1)!r}")
            out[hook] = (n[0], n[1], n[2])
        return out

    def check_loss(self, min_packets=500):
        """Print the drops; demand some each way once enough packets crossed
        (at 2% and 500 packets, no drop at all has odds ~4e-5)."""
        counts = self.loss_counts()
        names = {"ingress": "stack->kernel", "egress": "kernel->stack"}
        fam = f"IPv{self.family}"
        say("loss: " + "; ".join(
            f"{names[h]} dropped {d} of {n} ({100.0 * d / max(n, 1):.2f}%; {f} {fam})"
            for h, (n, f, d) in counts.items()))
        for h, (n, f, d) in counts.items():
            if n >= min_packets:
                check(d > 0, f"nft dropped nothing {names[h]} in {n} packets")
                check(f > n // 2, f"only {f} of {n} packets {names[h]} were {fam}")

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
    sock = env.tcp_socket()
    errors = []

    def sender():
        try:
            sock.sendall(request)
        except OSError as e:
            errors.append(e)

    with sock:
        sock.settimeout(timeout)
        sock.connect(env.sockaddr)
        # Send from a thread: a server that echoes while still reading must
        # not deadlock against our full receive buffer.
        t = threading.Thread(target=sender, daemon=True)
        t.start()
        resp = read_response(sock)
        t.join(timeout)
    check(not errors, f"send failed: {errors}")
    return resp


def ping(env, extra, count=3, dst=None):
    p = env.ns_run(["ping", "-n", "-c", str(count), "-i", "0.2", "-W", "2"] + extra
                   + [dst or env.stack_ip], timeout=30, check_rc=False)
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


def case_ping6(env):
    tx, rx, rtt, _ = ping(env, ["-6"], dst=env.stack_ip6)
    say(f"ping -6 {env.stack_ip6}: {rx}/{tx} replies, rtt min/avg/max/mdev {rtt} ms")
    check(rx == tx == 3, f"{tx - rx} of {tx} pings unanswered")


def case_ping6_frag(env):
    """3000 bytes each way: the kernel fragments the request, we reassemble
    it, and we fragment the reply (RFC 8200 4.5)."""
    tx, rx, rtt, out = ping(env, ["-6", "-s", "3000"], dst=env.stack_ip6)
    sizes = set(re.findall(r"^(\d+) bytes from", out, re.M))
    say(f"ping -6 -s 3000: {rx}/{tx} replies of {sizes or '-'} bytes, rtt {rtt} ms")
    check(rx == tx == 3, f"{tx - rx} of {tx} fragmented pings unanswered")
    check(sizes == {"3008"}, f"reply sizes {sizes}, want 3008 (3000 + ICMPv6 header)")


def case_nd6(env):
    """Neighbour discovery both ways (RFC 4861): the kernel resolves us, and
    we resolve a kernel address we have never heard from."""
    tap_mac = env.ns_run(["cat", f"/sys/class/net/{env.iface}/address"]).stdout.strip()
    with Capture(env, "icmp6") as cap:
        env.ns_run(["ip", "-6", "neigh", "flush", "dev", env.iface])
        tx, rx, _, _ = ping(env, ["-6"], count=2, dst=env.stack_ip6)
        check(rx == tx, f"{tx - rx} of {tx} pings unanswered after neigh flush")
        stack_mac, state = _neigh(env, env.stack_ip6)
        check(stack_mac, f"no neighbour entry for {env.stack_ip6}: {state}")
        # A second kernel address, the stack pinned in the kernel's cache so
        # that no solicitation of the kernel's can teach the stack: it must ask.
        env.ns_run(["ip", "-6", "addr", "add", "fd00:77::3/64", "dev", env.iface, "nodad"])
        env.ns_run(["ip", "-6", "neigh", "replace", env.stack_ip6, "lladdr", stack_mac,
                    "nud", "permanent", "dev", env.iface])
        tx3, rx3, _, _ = ping(env, ["-6", "-I", "fd00:77::3"], count=2, dst=env.stack_ip6)
        time.sleep(0.3)
    nds = nd_packets(cap.frames())
    for t, src, target, smac in nds:
        say(f"  seen {'NS' if t == 135 else 'NA'}: {src} ({smac}) target {target}")
    say(f"kernel resolved {env.stack_ip6} -> {stack_mac} ({state}); "
        f"{env.iface} itself is {tap_mac}; ping from fd00:77::3: {rx3}/{tx3}")
    check(state in ("REACHABLE", "STALE", "DELAY"), f"neighbour state {state}")
    check(stack_mac != tap_mac, "the stack answered with the kernel tap's own MAC")
    check(any(t == 136 and target == env.stack_ip6 and smac == stack_mac
              for t, _, target, smac in nds), f"no NA from the stack for {env.stack_ip6}")
    check(any(t == 135 and target == "fd00:77::3" and smac == stack_mac
              for t, _, target, smac in nds), "the stack never solicited fd00:77::3")
    check(rx3 == tx3, f"{tx3 - rx3} of {tx3} pings from fd00:77::3 unanswered")


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
    req = (f"GET /interop/get?x=1 HTTP/1.1\r\nHost: {env.host}:{env.port}\r\n"
           "User-Agent: userstack-interop\r\nX-Odd:  two  spaces\t\r\n"
           "Accept: */*\r\n\r\n").encode()
    code, status, hdrs, body = http_exchange(env, req)
    say(f"socket GET: {status!r}, Content-Length {hdrs['content-length']}, "
        f"echo {'byte-exact' if body == req else 'DIFFERENT'} ({len(req)} bytes sent)")
    check(code == 200, f"status {status!r}")
    check(body == req, f"echo differs:\n sent {req!r}\n got  {body!r}")
    trace = os.path.join(env.tmpdir, "curl.trace")
    out = os.path.join(env.tmpdir, "curl.body")
    p = env.ns_run(env.curl() + ["-sS", "--max-time", "10", "--trace", trace, "-o", out,
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
    req = (f"POST /interop/post HTTP/1.1\r\nHost: {env.host}:{env.port}\r\n"
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
    script = ("for i in $(seq %d); do %s -sS --max-time 5 -o /dev/null "
              "-w '%%{http_code} %%{size_download}\\n' %s; done"
              % (n, shlex.join(env.curl()), env.url("/seq")))
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
            env.ns_cmd(env.curl() + ["-sS", "--max-time", "15", "-o", "/dev/null",
                                     "-w", "%{http_code} %{size_download}",
                                     env.url(f"/c{i}")]),
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


def case_rst(env, port=9, tries=3):
    times = []
    for _ in range(tries):
        with env.tcp_socket() as s:
            s.settimeout(3)
            t0 = time.monotonic()
            try:
                s.connect((env.peer, port))
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
    p = env.ns_run(env.curl() + ["-sS", "--max-time", "10", "-o", "/dev/null",
                                 "-w", "%{http_code} %{size_download}", env.url("/nohuge")],
                   check_rc=False)
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


# ----------------------------------------------------------------------------
# Load, upload, half-close, dissection and the same under random loss

SERVED_RE = re.compile(r"us-httpecho: served (\d+) requests on (\d+) connections, (\d+) errors")


def check_served(env):
    """After the server stopped: its own summary must match what the case did."""
    m = SERVED_RE.search(env.log_text())
    if env.expect_server is None:
        return
    check(m, "no 'served ... requests' summary in the server log")
    say(f"server: {m.group(0)}")
    got = {"requests": int(m.group(1)), "connections": int(m.group(2))}
    for k, want in env.expect_server.items():
        check(got[k] == want, f"server counted {got[k]} {k}, the case made {want}")
    check(m.group(3) == "0", f"server counted {m.group(3)} errors")


def raise_nofile(need):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(need, soft), max(need, hard)))


def ka_request(env, cid, i, rnd):
    """Request i of connection cid: mostly GETs, every 4th a POST with a body."""
    tag = rnd.randbytes(rnd.randrange(1, 48)).hex()
    if i % 4 == 3:
        body = rnd.randbytes(rnd.randrange(1, 4096))
        return (f"POST /ka/{cid}/{i} HTTP/1.1\r\nHost: {env.host}\r\nX-Tag: {tag}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    return f"GET /ka/{cid}/{i}?t={tag} HTTP/1.1\r\nHost: {env.host}\r\n\r\n".encode()


async def ka_client(env, sock, cid, nreq, op_timeout, stats):
    import asyncio
    loop = asyncio.get_running_loop()
    rnd = random.Random(cid * 7919 + 1)
    await asyncio.wait_for(loop.sock_connect(sock, env.sockaddr), op_timeout)
    stats["connected"] += 1
    reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 16)
    try:
        for i in range(nreq):
            req = ka_request(env, cid, i, rnd)
            writer.write(req)
            await asyncio.wait_for(writer.drain(), op_timeout)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), op_timeout)
            m = re.search(rb"\r\ncontent-length: *(\d+)\r\n", head, re.I)
            if not head.startswith(b"HTTP/1.1 200 ") or not m:
                raise CaseFailed(f"conn {cid} req {i}: bad response head {head[:200]!r}")
            body = await asyncio.wait_for(reader.readexactly(int(m.group(1))), op_timeout)
            if body != req:
                raise CaseFailed(f"conn {cid} req {i}: echo differs ({len(body)} bytes "
                                 f"for {len(req)})")
            stats["requests"] += 1
        # Our FIN after the last response: the server must answer with its own.
        writer.write_eof()
        rest = await asyncio.wait_for(reader.read(), op_timeout)
        if rest:
            raise CaseFailed(f"conn {cid}: {len(rest)} stray bytes after the last response")
        stats["closed"] += 1
    finally:
        writer.close()


def case_many_keepalive(env, nconn=1000, nreq=10, op_timeout=30.0):
    import asyncio
    raise_nofile(nconn + 256)
    socks = []
    try:
        for _ in range(nconn):
            s = env.tcp_socket()
            s.setblocking(False)
            socks.append(s)
        stats = {"connected": 0, "requests": 0, "closed": 0}

        async def main():
            return await asyncio.gather(
                *(ka_client(env, s, cid, nreq, op_timeout, stats)
                  for cid, s in enumerate(socks)), return_exceptions=True)

        t0 = time.monotonic()
        results = asyncio.run(main())
        dt = time.monotonic() - t0
    finally:
        for s in socks:
            s.close()
    errors = [r for r in results if isinstance(r, BaseException)]
    say(f"{nconn} concurrent keep-alive connections x {nreq} requests: "
        f"{stats['connected']} connected, {stats['requests']} byte-exact echoes, "
        f"{stats['closed']} clean closes, {len(errors)} errors in {dt:.2f}s: "
        f"{stats['closed'] / dt:.0f} connections/s, {stats['requests'] / dt:.0f} requests/s")
    kinds = {}
    for e in errors:
        kinds.setdefault(f"{type(e).__name__}: {e}"[:120], 0)
        kinds[f"{type(e).__name__}: {e}"[:120]] += 1
    check(not errors, f"{len(errors)} connections failed: "
          + "; ".join(f"{n}x {k}" for k, n in list(kinds.items())[:5]))
    check(stats["requests"] == nconn * nreq, f"{stats['requests']} of {nconn * nreq} echoes")
    env.expect_server = {"requests": nconn * nreq, "connections": nconn}


def seeded_chunks(seed, size, chunk=1 << 20):
    rnd = random.Random(seed)
    left = size
    while left:
        n = min(chunk, left)
        yield rnd.randbytes(n)
        left -= n


def case_upload(env, size, timeout=60.0):
    seed = secrets.randbits(64)
    head = (f"POST /interop/upload HTTP/1.1\r\nHost: {env.host}:{env.port}\r\n"
            "Content-Type: application/octet-stream\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()
    sent_hash, sent, errors = hashlib.sha256(head), [0], []
    sock = env.tcp_socket()
    t_sent = [None]

    def sender():
        try:
            sock.sendall(head)
            for c in seeded_chunks(seed, size):
                sock.sendall(c)
                sent_hash.update(c)
                sent[0] += len(c)
            t_sent[0] = time.monotonic()
        except OSError as e:
            errors.append(e)

    got_hash, got = hashlib.sha256(), 0
    with sock:
        sock.settimeout(timeout)
        sock.connect(env.sockaddr)
        t0 = time.monotonic()
        t = threading.Thread(target=sender, daemon=True)
        t.start()
        buf = b""
        while b"\r\n\r\n" not in buf:
            c = sock.recv(65536)
            check(c, f"closed inside the response head: {buf[:200]!r} ({errors})")
            buf += c
        rhead, rest = buf.split(b"\r\n\r\n", 1)
        m = re.search(rb"\r\ncontent-length: *(\d+)", rhead, re.I)
        check(rhead.startswith(b"HTTP/1.1 200 ") and m, f"bad response head {rhead[:300]!r}")
        want = int(m.group(1))
        check(want == len(head) + size, f"Content-Length {want}, sent {len(head) + size}")
        got_hash.update(rest)
        got = len(rest)
        mv = memoryview(bytearray(1 << 20))
        while got < want:
            n = sock.recv_into(mv, min(len(mv), want - got))
            check(n, f"connection closed after {got} of {want} echoed bytes")
            got_hash.update(mv[:n])
            got += n
        t_end = time.monotonic()
        t.join(timeout)
    check(not errors, f"send failed: {errors}")
    up = t_sent[0] - t0
    mb = size / 1e6
    same = got_hash.digest() == sent_hash.digest()
    say(f"{size >> 20} MiB POST: handed to the kernel in {up:.2f}s ({mb / up:.1f} MB/s), echoed in "
        f"{t_end - t_sent[0]:.2f}s ({mb / max(t_end - t_sent[0], 1e-6):.1f} MB/s), "
        f"{2 * mb / (t_end - t0):.1f} MB/s both ways; sha256 {got_hash.hexdigest()[:16]}.. "
        f"{'==' if same else '!='} {sent_hash.hexdigest()[:16]}..")
    check(got == len(head) + size, f"echoed {got} bytes, sent {len(head) + size}")
    check(same, "sha256 of the echo differs from the request")
    env.expect_server = {"requests": 1, "connections": 1}


def case_half_close(env):
    body = os.urandom(64 << 10)
    reqs = [("GET", f"GET /half HTTP/1.1\r\nHost: {env.host}\r\n\r\n".encode()),
            ("64 KiB POST", f"POST /half HTTP/1.1\r\nHost: {env.host}\r\n"
             f"Content-Length: {len(body)}\r\n\r\n".encode() + body)]
    for label, req in reqs:
        with env.tcp_socket() as sock:
            sock.settimeout(10)
            sock.connect(env.sockaddr)
            t0 = time.monotonic()
            sock.sendall(req)
            sock.shutdown(socket.SHUT_WR)
            code, status, _, echo = read_response(sock)
            t_resp = time.monotonic() - t0
            try:
                rest = sock.recv(65536)
            except ConnectionResetError as e:
                raise CaseFailed(f"{label}: reset instead of the server's FIN") from e
            except socket.timeout as e:
                raise CaseFailed(f"{label}: no FIN from the server within 10s") from e
            t_fin = time.monotonic() - t0
        say(f"half-close {label}: {status!r}, {len(echo)} bytes "
            f"{'byte-exact' if echo == req else 'DIFFERENT'} after {t_resp * 1000:.1f} ms, "
            f"then {'EOF' if rest == b'' else f'{len(rest)} stray bytes'} "
            f"at {t_fin * 1000:.1f} ms")
        check(code == 200, f"{label}: status {status!r}")
        check(echo == req, f"{label}: echo differs from the request")
        check(rest == b"", f"{label}: {len(rest)} bytes after the response, want EOF")
    env.expect_server = {"requests": 2, "connections": 2}


def case_wrk_load(env, secs=10, conns=32, threads=2, loss_ok=False):
    p = env.ns_run(["wrk", "-c", str(conns), "-d", str(secs), "-t", str(threads),
                    "--timeout", "2s", env.url("/wrk")], timeout=secs + 60, check_rc=False)
    out = p.stdout
    for line in out.splitlines():
        say("  wrk| " + line)
    m = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s*(\S+)", out)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                     out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    check(p.returncode == 0 and m and rps, f"wrk failed ({p.returncode}): {p.stderr.strip()}")
    c, r, w, t = (int(x) for x in errs.groups()) if errs else (0, 0, 0, 0)
    say(f"wrk -t{threads} -c{conns} -d{secs}: {m.group(1)} requests, Requests/sec: "
        f"{rps.group(1)}; socket errors connect {c}, read {r}, write {w}, timeout {t}")
    check(int(m.group(1)) > 0, "no request completed")
    check(c == r == w == 0, f"wrk: {errs.group(0) if errs else ''}")
    check(loss_ok or t == 0, f"wrk: {t} timeouts without loss")
    check(not non2xx, f"wrk: {non2xx.group(0) if non2xx else ''}")


def case_get_many(env, n=100):
    """case_get, then n GETs each on a new connection: enough packets for loss."""
    case_get(env)
    t0 = time.monotonic()
    for i in range(n):
        req = (f"GET /interop/many/{i} HTTP/1.1\r\nHost: {env.host}\r\n"
               f"X-N: {secrets.token_hex(8)}\r\n\r\n").encode()
        code, status, _, body = http_exchange(env, req)
        check(code == 200 and body == req, f"GET {i}: {status!r}, echo "
              f"{'byte-exact' if body == req else 'DIFFERENT'}")
    dt = time.monotonic() - t0
    say(f"{n} more GETs on fresh connections: all byte-exact in {dt:.2f}s "
        f"({dt / n * 1000:.1f} ms each)")
    env.expect_server = {"requests": n + 2, "connections": n + 2}


def tshark_expert(path):
    """(full text, {severity: [entry lines]}) of tshark's expert info."""
    tshark = tool("tshark")
    check(tshark, "tshark not found (Debian package tshark)")
    p = run([tshark, "-n", "-r", path, "-o", "tcp.check_checksum:TRUE",
             "-o", "ip.check_checksum:TRUE", "-q", "-z", "expert"], timeout=120)
    sections, cur = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^(Errors|Warns|Warnings|Notes|Chats|Comments) \((\d+)\)", line)
        if m:
            cur = m.group(1)
            sections[cur] = []
        elif cur and line.strip() and not line.startswith("=") and \
                not re.match(r"^\s*Frequency\s+Group", line) and not line.startswith("---"):
            sections[cur].append(line.strip())
    return p.stdout, sections


def tshark_fields(path, fields, display_filter=None):
    """One list of field values per frame (tshark -T fields), checksums checked."""
    tshark = tool("tshark")
    check(tshark, "tshark not found (Debian package tshark)")
    cmd = [tshark, "-n", "-r", path, "-o", "tcp.check_checksum:TRUE",
           "-o", "ip.check_checksum:TRUE", "-T", "fields", "-E", "separator=;"]
    if display_filter:
        cmd += ["-Y", display_filter]
    for f in fields:
        cmd += ["-e", f]
    out = run(cmd, timeout=60).stdout
    return [ln.split(";") for ln in out.splitlines() if ln.strip()]


def is_set(flag):
    """A tshark flag field: '1'/'0' or 'True'/'False' by version."""
    return flag in ("1", "True")


# tshark's checksum.status values (tshark -G values)
CSUM_STATUS = {"0": "bad", "1": "good", "2": "unverified", "3": "not present", "4": "illegal"}


def check_checksums(env, path):
    """Every checksum of the stack's frames checked and good, none bad either
    way; IPv6 has no header checksum, only TCP's (over a pseudo-header)."""
    protos = ("tcp",) if env.family == 6 else ("ip", "tcp")
    status = {}
    for proto in protos:
        for src, st in tshark_fields(path, [f"{env.l3}.src", f"{proto}.checksum.status"]):
            key = (proto, src, CSUM_STATUS.get(st, st or "none"))
            status[key] = status.get(key, 0) + 1
    say("checksums: " + ", ".join(f"{p} from {s}: {n} {st}"
                                  for (p, s, st), n in sorted(status.items())))
    for proto in protos:
        check(status.get((proto, env.peer, "good"), 0) > 0,
              f"tshark validated no {proto} checksum of the stack's frames")
        bads = {k: n for k, n in status.items() if k[0] == proto and k[2] in ("bad", "illegal")}
        check(not bads, f"bad {proto} checksums: {bads}")
        ours = {k: n for k, n in status.items() if k[0] == proto and k[1] == env.peer
                and k[2] != "good"}
        check(not ours, f"{proto} checksums of the stack's frames not good: {ours}")


def check_syn_options(syns):
    """RFC 7323 / RFC 2018: WS (3), SACK permitted (4) and TS (8) both ways."""
    for who, synack in (("kernel SYN", False), ("stack SYN-ACK", True)):
        mine = [s for s in syns if is_set(s[1]) == synack]
        check(mine, f"no {who} captured")
        for s in mine:
            kinds = set(s[2].split(","))
            check({"3", "4", "8"} <= kinds,
                  f"{who} from {s[0]} lacks {sorted({'3', '4', '8'} - kinds)} (kinds {s[2]})")


def check_mss(env, path):
    """RFC 9293 3.7.1 and RFC 8200 8.3: the MSS we offer is the port's MTU
    less the IP header (20 bytes, IPv6's 40) and TCP's 20: 1460 and 1440 at
    MTU 1500.  No segment of ours carries more than the kernel's MSS."""
    rows = tshark_fields(path, [f"{env.l3}.src", "tcp.flags.syn", "tcp.options.mss_val",
                                "tcp.len"])
    want = env.mtu - (40 if env.family == 6 else 20) - 20
    ours = {int(r[2]) for r in rows if r[0] == env.peer and is_set(r[1])}
    theirs = {int(r[2]) for r in rows if r[0] == env.kernel_addr and is_set(r[1])}
    longest = max((int(r[3]) for r in rows if r[0] == env.peer), default=0)
    say(f"MSS: ours {sorted(ours)} (want {want} at MTU {env.mtu}), the kernel's "
        f"{sorted(theirs)}; our longest segment {longest} bytes")
    check(ours == {want}, f"our SYN-ACKs offer MSS {sorted(ours)}, want {want}")
    check(theirs, "no MSS option in the kernel's SYNs")
    check(longest <= min(theirs), f"a segment of ours carries {longest} bytes, "
          f"beyond the kernel's MSS {min(theirs)}")


def check_flow_labels(env, path):
    """RFC 6437 3: each connection's segments of ours carry one non-zero flow
    label, from a keyed hash of its 4-tuple (so connections differ)."""
    labels = {}
    for src, stream, flow in tshark_fields(path, ["ipv6.src", "tcp.stream", "ipv6.flow"]):
        if src == env.peer:
            labels.setdefault(stream, set()).add(int(flow, 0))
    say("flow labels of ours: " + ", ".join(
        f"connection {k}: {' '.join(f'{x:#07x}' for x in sorted(v))}"
        for k, v in sorted(labels.items())))
    check(labels, "no IPv6 segment of ours captured")
    for stream, v in labels.items():
        check(len(v) == 1, f"connection {stream}: {len(v)} flow labels {sorted(v)}")
        check(0 not in v, f"connection {stream}: flow label 0")
    firsts = [next(iter(v)) for v in labels.values()]
    check(len(set(firsts)) == len(firsts), f"connections share flow labels: {labels}")


def case_tshark(env):
    with Capture(env, f"tcp port {env.port}") as cap:
        case_get(env)
        case_post(env)
        time.sleep(0.3)
    text, sect = tshark_expert(cap.path)
    for line in text.strip().splitlines():
        say("  expert| " + line)
    syns = tshark_fields(cap.path, [f"{env.l3}.src", "tcp.flags.ack", "tcp.option_kind"],
                         "tcp.flags.syn == 1")
    nframes = len(tshark_fields(cap.path, ["frame.number"]))
    say(f"captured {nframes} frames; SYNs: "
        + ", ".join(f"{s[0]} {'SYN-ACK' if is_set(s[1]) else 'SYN'} "
                    f"kinds {s[2]}" for s in syns))
    bad = re.compile(r"malformed|checksum|bad", re.I)
    errs = sect.get("Errors", [])
    warns = [w for w in sect.get("Warns", []) + sect.get("Warnings", []) if bad.search(w)]
    check(sect, f"no expert output parsed: {text[:300]!r}")
    check_checksums(env, cap.path)
    check(not errs, f"expert errors: {errs[:5]}")
    check(not warns, f"expert warnings about malformed packets/checksums: {warns[:5]}")
    check_syn_options(syns)
    check_mss(env, cap.path)
    if env.family == 6:
        check_flow_labels(env, cap.path)
    env.expect_server = {"requests": 3, "connections": 3}


def check_counters(env):
    """After the server stopped: stack counters (us_print_stats) at least as given."""
    text = env.log_text()
    for name, least in env.expect_counters.items():
        m = re.search(rf"^{re.escape(name)} (\d+)", text, re.M)
        check(m, f"counter {name} not in the server log")
        say(f"server: {name} {m.group(1)}")
        check(int(m.group(1)) >= least, f"counter {name} is {m.group(1)}, want >= {least}")


# ----------------------------------------------------------------------------
# TCP Fast Open (RFC 7413): Linux's own TFO client against our server

MSG_FASTOPEN = getattr(socket, "MSG_FASTOPEN", 0x20000000)


def tfo_exchange(env, request, timeout=20):
    """One request with sendto(MSG_FASTOPEN) (connect + data in one call, the
    data rides in the SYN once the kernel has a cookie); the response."""
    sock = env.tcp_socket()
    with sock:
        # Blocking for sendto: a timeout makes the socket non-blocking in
        # the kernel, and sendto(MSG_FASTOPEN) then fails with EINPROGRESS.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", timeout, 0))
        sent = sock.sendto(request, MSG_FASTOPEN, env.sockaddr)
        sock.settimeout(timeout)
        if sent < len(request):
            sock.sendall(request[sent:])
        return read_response(sock)


def case_tfo_linux_client(env):
    """Linux client (namespace sysctl tcp_fastopen=1), our server with
    --fastopen: the first connection asks for a cookie, the second's SYN
    carries the cookie and the request; both answers are right."""
    env.ns_run(["sysctl", "-qw", "net.ipv4.tcp_fastopen=1"])  # IPv6 too
    with Capture(env, f"tcp port {env.port}") as cap:
        for i in range(2):
            req = (f"GET /tfo/{i} HTTP/1.1\r\nHost: {env.host}\r\n"
                   f"Connection: close\r\n\r\n").encode()
            code, status, _, body = tfo_exchange(env, req)
            check(code == 200 and body == req, f"connection {i}: {status}, body {body[:80]!r}")
            time.sleep(0.2)
        time.sleep(0.3)
    rows = tshark_fields(cap.path, ["frame.number", f"{env.l3}.src", "tcp.flags.ack",
                                    "tcp.len", "tcp.options.tfo.request",
                                    "tcp.options.tfo.cookie", "tcp.ack"], "tcp.flags.syn == 1")
    for r in rows:
        say("  syn| frame %s %s %s len %s ack %s request %s cookie %s" % (
            r[0], r[1], "SYN-ACK" if is_set(r[2]) else "SYN", r[3], r[6],
            "yes" if r[4] else "no", r[5] or "-"))
    syns = [r for r in rows if r[1] == env.kernel_addr and not is_set(r[2])]
    acks = [r for r in rows if r[1] == env.peer and is_set(r[2])]
    check(len(syns) == 2 and len(acks) == 2, f"want 2 SYNs and 2 SYN-ACKs, got {rows}")
    # 1st: cookie request, no data; our SYN-ACK grants a cookie, acks the SYN.
    check(syns[0][4] != "" and syns[0][3] == "0", f"first SYN is no bare request: {syns[0]}")
    check(acks[0][5] != "" and acks[0][6] == "1", f"first SYN-ACK: {acks[0]}")
    # 2nd: the granted cookie and the request in the SYN; the SYN-ACK acks both.
    check(syns[1][5] == acks[0][5], f"second SYN's cookie {syns[1][5]!r} is not "
          f"the one granted {acks[0][5]!r}")
    check(int(syns[1][3]) > 0, f"second SYN carries no data: {syns[1]}")
    check(int(acks[1][6]) == int(syns[1][3]) + 1,
          f"second SYN-ACK acks {acks[1][6]}, want SYN + {syns[1][3]} data bytes")
    line = tshark_fields(cap.path, ["frame.number", f"{env.l3}.src", f"{env.l3}.dst",
                                    "tcp.flags.str", "tcp.len", "tcp.options.tfo.cookie",
                                    "http.request.method", "http.request.uri"],
                         f"frame.number == {syns[1][0]}")
    say(f"tshark (SYN with data): {' '.join(line[0]) if line else None!r}")
    env.expect_server = {"requests": 2, "connections": 2}
    env.expect_counters.update({"tfo_srv_accepted": 1, "tfo_srv_cookies_sent": 1})


# Linux's own test key: Linux computes cookie 3021b9d889017eeb from it for
# client 192.0.2.1 and server 192.168.0.1 (tests/unit/fastopen).
TFO_SHARED_KEY = "a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4"


def fo_cookie(ip, ns, addr):
    """The Fast Open cookie a namespace's Linux client holds for addr."""
    out = run([ip, "-n", ns, "tcp_metrics", "show", addr], check_rc=False).stdout
    m = re.search(r"fo_cookie ([0-9a-f]+)", out)
    return m.group(1) if m else None


def linux_tfo_server_ns(env, nss, nsc):
    """A Linux Fast Open server at our stack's address, with our key, in
    namespace nss, reached from namespace nsc at the kernel side's address
    (the same addresses as the tap's, on a veth of their own)."""
    for ns in (nss, nsc):
        run([env.ip, "netns", "add", ns])
        run([env.ip, "-n", ns, "link", "set", "lo", "up"])
    va, vb = f"tfs{os.getpid() % 10000}a", f"tfs{os.getpid() % 10000}b"
    run([env.ip, "link", "add", va, "netns", nsc, "type", "veth", "peer", "name", vb,
         "netns", nss])
    run([env.ip, "-n", nsc, "addr", "add", f"{env.kernel_addr}/24", "dev", va])
    run([env.ip, "-n", nss, "addr", "add", f"{env.peer}/24", "dev", vb])
    for ns, v in ((nsc, va), (nss, vb)):
        run([env.ip, "-n", ns, "link", "set", v, "up"])
    run([env.ip, "netns", "exec", nss, "sysctl", "-qw", "net.ipv4.tcp_fastopen=3",
         f"net.ipv4.tcp_fastopen_key={TFO_SHARED_KEY}"])
    run([env.ip, "netns", "exec", nsc, "sysctl", "-qw", "net.ipv4.tcp_fastopen=1"])
    code = ("import socket\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)\n"
            f"s.bind(('{env.peer}', {env.port})); s.listen(16)\n"
            "while True:\n"
            "    c, _ = s.accept(); c.settimeout(5)\n"
            "    try:\n"
            "        d = c.recv(65536); c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n' % len(d) + d)\n"
            "    except OSError:\n"
            "        pass\n"
            "    c.close()\n")
    return subprocess.Popen([env.ip, "netns", "exec", nss, sys.executable, "-c", code],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def syn_with_cookie_acked_data(ns, iface, src, dst, port, cookie_hex, data):
    """scapy in namespace ns: a SYN carrying cookie and data; how many of
    the data bytes the SYN-ACK acknowledges (None: no SYN-ACK)."""
    code = ("from scapy.all import IP, TCP, Raw, sr1, conf\n"
            "conf.verb = 0\n"
            f"p = IP(src='{src}', dst='{dst}') / TCP(sport=41234, dport={port}, flags='S', "
            f"seq=1000, options=[('MSS', 1460), ('TFO', bytes.fromhex('{cookie_hex}'))]) / "
            f"Raw({data!r})\n"
            f"r = sr1(p, iface='{iface}', timeout=3)\n"
            "print(r[TCP].ack - 1001 if r is not None and r.haslayer(TCP) and "
            "r[TCP].flags & 0x12 == 0x12 else 'none')\n")
    out = run(["ip", "netns", "exec", ns, "/usr/bin/python3", "-c", code], timeout=30).stdout
    last = out.strip().splitlines()[-1] if out.strip() else "none"
    return None if last == "none" else int(last)


def case_tfo_shared_key(env):
    """One tcp_fastopen_key for us-httpecho and a Linux server at the same
    address: a Linux client gets the very cookie from each, and the Linux
    server takes data in a SYN carrying the cookie ours granted (cookies
    computed as Linux computes them)."""
    env.ns_run(["sysctl", "-qw", "net.ipv4.tcp_fastopen=1"])
    for i in range(2):
        req = (f"GET /tfo/{i} HTTP/1.1\r\nHost: {env.host}\r\n"
               f"Connection: close\r\n\r\n").encode()
        code, status, _, body = tfo_exchange(env, req)
        check(code == 200 and body == req, f"connection {i}: {status}, body {body[:80]!r}")
    ours = fo_cookie(env.ip, env.ns, env.peer)
    say(f"cookie from us-httpecho: {ours}")
    check(ours is not None, "the Linux client holds no cookie from us")
    nss, nsc = f"{env.ns}-s", f"{env.ns}-c"
    srv = None
    try:
        srv = linux_tfo_server_ns(env, nss, nsc)
        time.sleep(0.5)
        data = b"GET /x HTTP/1.1\r\n\r\n"
        acked = syn_with_cookie_acked_data(nsc, f"tfs{os.getpid() % 10000}a", env.kernel_addr,
                                           env.peer, env.port, ours, data)
        say(f"Linux server, SYN with our cookie and {len(data)} bytes: SYN-ACK acks {acked}")
        check(acked == len(data), f"the Linux server did not take the data with our cookie "
              f"(acked {acked})")
        with in_netns(nsc):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with sock:  # a cookie request: sendto(MSG_FASTOPEN) without a cookie
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 10, 0))
            sock.sendto(b"x", MSG_FASTOPEN, (env.peer, env.port))
            sock.settimeout(10)
            sock.recv(100)
        theirs = fo_cookie(env.ip, nsc, env.peer)
        say(f"cookie from the Linux server: {theirs}")
        check(theirs == ours, f"Linux's cookie {theirs} is not ours {ours}")
    finally:
        if srv is not None:
            srv.kill()
            srv.wait()
        for ns in (nss, nsc):
            run([env.ip, "netns", "del", ns], check_rc=False)
    env.expect_server = {"requests": 2, "connections": 2}
    env.expect_counters.update({"tfo_srv_accepted": 1, "tfo_srv_cookies_sent": 1})


# The stack's own link emulator ([impair], nic/impair.h) instead of nftables:
# loss and delay each way, fixed seeds; its drop counters must have moved.
IMPAIR = {"rx": "loss=3%,delay=5ms,seed=7", "tx": "loss=3%,delay=5ms,seed=8"}


def case_upload_impair(env, size):
    case_upload(env, size, timeout=120)
    env.expect_counters.update({"impair_rx_dropped_random": 1, "impair_tx_dropped_random": 1,
                                "impair_rx_delayed": 1, "impair_tx_delayed": 1})


# Reordering as well, which nftables cannot make: 2% of the packets each way
# held back 10 ms (those behind overtake them) on top of 1% loss and 5 ms.
IMPAIR_REORDER = {"rx": "loss=1%,delay=5ms,reorder=2%,reorder_gap=10ms,seed=11",
                  "tx": "loss=1%,delay=5ms,reorder=2%,reorder_gap=10ms,seed=12"}


def case_upload_reorder(env, size):
    case_upload(env, size, timeout=300)
    env.expect_counters.update({"impair_rx_reordered": 1, "impair_tx_reordered": 1,
                                "impair_rx_dropped_random": 1, "impair_tx_dropped_random": 1})


def case_upload_rexmit(env, size):
    """case_upload under loss with a capture: we retransmitted, and over IPv6
    a retransmission keeps its connection's flow label (RFC 6437 3: a
    label changes with the flow, not with the segment)."""
    with Capture(env, f"tcp port {env.port}") as cap:
        case_upload(env, size, timeout=120)
        time.sleep(0.3)
    rexmit = tshark_fields(cap.path, ["frame.number"], f"{env.l3}.src == {env.peer} && "
                           "(tcp.analysis.retransmission || tcp.analysis.fast_retransmission)")
    say(f"capture: {len(rexmit)} retransmissions of ours")
    check(rexmit, "no retransmission of ours captured under loss")
    if env.family == 6:
        check_flow_labels(env, cap.path)


# Loss detection before RFC 8985: duplicate ACKs, no Tail Loss Probe, no
# undo (the defaults are RACK-TLP and undo, as Linux's).
DUPACK = {"loss_detection": "dupack", "tlp": "off", "undo": "off"}


def case_upload_rack(env, size, reorder=False):
    """A big upload under loss with the default loss detection: RACK's marks
    started recoveries."""
    if reorder:
        case_upload_reorder(env, size)
    else:
        case_upload(env, size, timeout=300)
    env.expect_counters.update({"tcp_rec_enter_rack": 1, "tcp_rack_marked_lost": 1})


UPLOAD_BIG = 256 << 20   # above the server's 16 MiB default: --max-body for these only
LOSS_PCT = 2

# name -> (function, EchoEnv keyword arguments)
CASES = {
    "ping": (case_ping, {}),
    "ping-frag": (case_ping_frag, {}),
    "arp": (case_arp, {}),
    # IPv6 (config/tap.ini [ip6]): the kernel side is fd00:77::1/64.
    "ping6": (case_ping6, {"ip6": True}),
    "ping6-frag": (case_ping6_frag, {"ip6": True}),
    "nd6": (case_nd6, {"ip6": True}),
    "get": (case_get, {}),
    "post-1m": (case_post, {}),
    "seq-200": (case_sequential, {}),
    "concurrent-50": (case_concurrent, {}),
    "wrk": (lambda env: case_wrk_load(env, secs=5), {}),
    "rst": (case_rst, {}),
    # The fallback: told not to use hugepages, and (auto) finding none usable.
    "nohuge-off": (case_nohuge, {"hugepages": "off"}),
    "nohuge-auto": (case_nohuge, {"hugepages": "auto", "hide_hugepages": True}),
    "many-keepalive": (case_many_keepalive, {}),
    "upload-256m": (lambda env: case_upload(env, UPLOAD_BIG, timeout=120),
                    {"server_args": ["--max-body", str(UPLOAD_BIG)]}),
    "half-close": (case_half_close, {}),
    "wrk-10s": (case_wrk_load, {}),
    "tshark-dissect": (case_tshark, {}),
    # The same with LOSS_PCT dropped at random each way (nftables on the tap).
    "get-loss": (case_get_many, {"loss": LOSS_PCT}),
    "post-1m-loss": (case_post, {"loss": LOSS_PCT}),
    "many-keepalive-loss": (lambda env: case_many_keepalive(env, nconn=200, op_timeout=60),
                            {"loss": LOSS_PCT}),
    # 4, 16 and 256 MiB echoed whole under loss (meson.build says which run
    # in CI and which in suite 'long').
    "upload-4m-loss": (lambda env: case_upload(env, 4 << 20, timeout=120),
                       {"loss": LOSS_PCT}),
    "upload-16m-loss": (lambda env: case_upload_rack(env, 16 << 20), {"loss": LOSS_PCT}),
    "upload-256m-loss": (lambda env: case_upload(env, UPLOAD_BIG, timeout=300),
                         {"loss": LOSS_PCT, "server_args": ["--max-body", str(UPLOAD_BIG)]}),
    "wrk-10s-loss": (lambda env: case_wrk_load(env, loss_ok=True), {"loss": LOSS_PCT}),
    "upload-4m-impair": (lambda env: case_upload_impair(env, 4 << 20), {"impair": IMPAIR}),
    "upload-16m-reorder": (lambda env: case_upload_rack(env, 16 << 20, reorder=True),
                           {"impair": IMPAIR_REORDER}),
    "upload-16m-loss-dupack": (lambda env: case_upload(env, 16 << 20, timeout=300),
                               {"loss": LOSS_PCT, "tcp": DUPACK}),
    "upload-16m-reorder-dupack": (lambda env: case_upload_reorder(env, 16 << 20),
                                  {"impair": IMPAIR_REORDER, "tcp": DUPACK}),
    # RFC 7413: Linux's Fast Open client, our server with --fastopen.
    "tfo-linux-client": (case_tfo_linux_client, {"server_args": ["--fastopen"]}),
    "tfo-shared-key": (case_tfo_shared_key, {"server_args": ["--fastopen"],
                                             "tcp": {"fastopen_key": TFO_SHARED_KEY}}),
    # TCP over IPv6: the same cases against fd00:77::2 (the listener is dual-stack).
    "get6": (case_get, {"family": 6}),
    "post6-1m": (case_post, {"family": 6}),
    "seq6-200": (case_sequential, {"family": 6}),
    "concurrent6-50": (case_concurrent, {"family": 6}),
    "wrk6": (lambda env: case_wrk_load(env, secs=5), {"family": 6}),
    "tshark6-dissect": (case_tshark, {"family": 6}),
    "upload6-4m-loss": (lambda env: case_upload_rexmit(env, 4 << 20),
                        {"family": 6, "loss": LOSS_PCT}),
    "tfo6-client": (case_tfo_linux_client, {"family": 6, "server_args": ["--fastopen"]}),
    "rst6": (case_rst, {"family": 6}),
    "half-close6": (case_half_close, {"family": 6}),
}


def run_env_case(name, env, during, after):
    """One case on env (an EchoEnv): during() while the server runs, then,
    the server stopped without a problem, after(); says PASS or FAIL and
    returns 0 or 1.  A harness bug fails the case, not the run; the case's
    files go either way."""
    t0 = time.monotonic()
    try:
        with env:
            during()
        check(not env.stop_problem, env.stop_problem or "")
        after()
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


def run_case(args, name):
    fn, kwargs = CASES[name]
    say(f"== {name}")
    env = EchoEnv(args, **kwargs)

    def during():
        fn(env)
        check(env.server_alive(), "server died during the case")
        if env.loss:
            env.check_loss()

    def after():
        check_served(env)
        check_counters(env)

    return run_env_case(name, env, during, after)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True,
                    help="server command line; --config FILE --port N are appended")
    ap.add_argument("--config", required=True, help="INI to copy (file_prefix is replaced)")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("cases", nargs="+", help="case names, or 'all': " + " ".join(CASES))
    args = ap.parse_args()
    names = case_names(ap, args.cases, CASES)
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
    trap_signals()
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
    run_main(main)
