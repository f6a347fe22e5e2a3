"""Crafted packets against us-httpecho over the interop harness's tap.

The environment (namespace, tap, server start and stop, cleanup) is the
interop suite's EchoEnv (tests/interop/echo_interop.py), imported as is.
On top of it AdvEnv adds:
  - an nftables rule in the namespace (one per family) that drops every
    TCP segment the kernel would send from the crafted ports (PEER_PORTS)
    to the stack: the kernel has no socket there and would answer the
    stack's segments with RSTs of its own;
  - a raw AF_PACKET socket on the tap (Wire): frames built with scapy go
    straight to the stack, the stack's frames are read back and parsed
    (IPv4 packets from the stack's address; every IPv6 frame the stack
    sends, with its Ethernet header, since Neighbor Discovery's answers
    are judged by the MACs too);
  - the server's counters, read from its log after SIGTERM.
Peer is a hand-driven TCP endpoint on one crafted port (sequence numbers,
options, windows all chosen by the case); Peer6 the same over IPv6.
"""

import os
import random
import re
import select
import socket
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))

import echo_interop as ei  # noqa: E402  (the path above first)

check, say, CaseFailed = ei.check, ei.say, ei.CaseFailed

PEER_PORTS = (20000, 29999)   # below Linux's ephemeral range: never curl's
CLOSED_PORT = 9               # no listener on the stack there
ETH_P_ALL = 0x0003
ETH_P_IP = b"\x08\x00"
ETH_P_IPV6 = b"\x86\xdd"
PACKET_OUTGOING = 4
F, S, R, P, A, U = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NFT_TABLE = "usadv"


def import_scapy():
    """scapy's layers; Debian's python3-scapy also under a non-Debian python3."""
    try:
        import scapy  # noqa: F401
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")
    warnings.filterwarnings("ignore")  # cryptography deprecations inside scapy
    import logging
    logging.getLogger("scapy").setLevel(logging.ERROR)
    try:
        from scapy.layers import inet6
        from scapy.layers.inet import ICMP, IP, TCP, IPOption_NOP, IPOption_RR
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
    except ImportError as e:
        raise CaseFailed(f"scapy missing ({e}): apt-get install python3-scapy "
                         "(tools/setup.sh)") from e
    sc = dict(ICMP=ICMP, IP=IP, TCP=TCP, Ether=Ether, Raw=Raw,
              IPOption_NOP=IPOption_NOP, IPOption_RR=IPOption_RR)
    for name in ("IPv6", "IPv6ExtHdrFragment", "IPv6ExtHdrRouting", "ICMPv6EchoRequest",
                 "ICMPv6EchoReply", "ICMPv6ND_NS", "ICMPv6ND_NA", "ICMPv6NDOptSrcLLAddr",
                 "ICMPv6NDOptDstLLAddr", "ICMPv6PacketTooBig", "ICMPv6DestUnreach",
                 "ICMPv6TimeExceeded", "ICMPv6ParamProblem"):
        sc[name] = getattr(inet6, name)
    return sc


SC = {}


def seq_add(a, n):
    return (a + n) & 0xFFFFFFFF


def seq_diff(a, b):
    """a - b as a signed 32-bit distance."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d


def flag_str(f):
    return "".join(c for bit, c in ((S, "S"), (F, "F"), (R, "R"), (P, "P"), (A, "A"),
                                    (U, "U")) if f & bit) or "-"


class Seg:
    """One TCP segment from the stack, in plain fields."""

    def __init__(self, ip):
        t = ip[SC["TCP"]]
        self.ip = ip
        self.sport, self.dport = t.sport, t.dport
        self.seq, self.ack, self.flags, self.wnd = t.seq, t.ack, int(t.flags), t.window
        self.opts = dict((k, v) for k, v in t.options if isinstance(k, str))
        self.data = bytes(t.payload)
        self.t = time.monotonic()

    def __repr__(self):
        return (f"<{flag_str(self.flags)} seq={self.seq} ack={self.ack} wnd={self.wnd} "
                f"len={len(self.data)} opts={self.opts}>")


class Wire:
    """A raw socket on the namespace's tap: frames to and from the stack."""

    def __init__(self, env):
        self.env = env
        with env.netns():
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                      socket.htons(ETH_P_ALL))
        self.sock.bind((env.iface, 0))
        self.sock.setblocking(False)
        self.q = []    # parsed IP packets from the stack, not yet taken
        self.q6 = []   # parsed Ethernet frames carrying IPv6 from the stack

    def close(self):
        self.sock.close()

    def send_frame(self, frame):
        self.sock.send(bytes(frame))

    def send(self, l3):
        """l3: a scapy IP packet or raw IPv4 bytes."""
        eth = SC["Ether"](src=self.env.tap_mac, dst=self.env.stack_mac, type=0x0800)
        self.send_frame(bytes(eth) + bytes(l3))

    def send6(self, l3, dst_mac=None, src_mac=None):
        """l3: a scapy IPv6 packet or raw IPv6 bytes; from the tap's MAC to
        the stack's unless told (a group's MAC, a neighbour that is not the
        kernel)."""
        eth = SC["Ether"](src=src_mac or self.env.tap_mac,
                          dst=dst_mac or self.env.stack_mac, type=0x86DD)
        self.send_frame(bytes(eth) + bytes(l3))

    def _pump(self, timeout):
        r, _, _ = select.select([self.sock], [], [], max(timeout, 0))
        if not r:
            return False
        while True:
            try:
                data, addr = self.sock.recvfrom(65535)
            except BlockingIOError:
                return True
            # Only the stack writes into the tap: every incoming frame is its.
            if addr[2] == PACKET_OUTGOING:
                continue
            if data[12:14] == ETH_P_IP and len(data) >= 34:
                ip = SC["IP"](data[14:])
                if ip.src == self.env.stack_ip:
                    self.q.append(ip)
            elif data[12:14] == ETH_P_IPV6 and len(data) >= 54:
                self.q6.append(SC["Ether"](data))

    def _take(self, q, match, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, pkt in enumerate(q):
                if match(pkt):
                    return q.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pump(left)

    def take(self, match, timeout):
        """First queued or arriving IP packet with match(ip), else None."""
        return self._take(self.q, match, timeout)

    def take6(self, match, timeout):
        """First queued or arriving IPv6 frame (scapy Ether) with
        match(frame), else None."""
        return self._take(self.q6, match, timeout)

    def drain6(self, match, quiet=0.3, first=None):
        """Every IPv6 frame with match(frame) until none has come for quiet
        seconds (for first seconds before the first one)."""
        out = []
        while (fr := self.take6(match, quiet if out or first is None else first)) is not None:
            out.append(fr)
        return out

    def flush(self):
        while self._pump(0):
            pass
        self.q.clear()
        self.q6.clear()


class Peer:
    """A hand-driven TCP endpoint at KERNEL_ADDR:sport talking to the stack."""

    def __init__(self, env, dport=None, sport=None, isn=None):
        self.env, self.w = env, env.wire
        self.dport = dport or env.port
        self.sport = sport or env.new_port()
        self.iss = isn if isn is not None else random.getrandbits(32)
        self.snd_nxt = self.iss
        self.rcv_nxt = None     # the stack's next sequence number
        self.wnd = 65535
        self.syn_ack = None
        self.ts_ok = False      # timestamps negotiated: every segment carries them
        self.ts_recent = 0
        self.ip_kw = {}         # e.g. {"options": [...]} on every datagram
        self.nsent = 0

    # -- building and sending
    def ip(self, **kw):
        return SC["IP"](src=ei.KERNEL_ADDR, dst=self.env.stack_ip, **kw)

    def tcp(self, flags=A, seq=None, ack=None, wnd=None, options=None, data=b"", **kw):
        if options is None:
            options = [("NOP", None), ("NOP", None),
                       ("Timestamp", (int(time.monotonic() * 1000) & 0xFFFFFFFF,
                                      self.ts_recent))] if self.ts_ok else []
        t = SC["TCP"](sport=self.sport, dport=self.dport,
                      seq=self.snd_nxt if seq is None else seq,
                      ack=(self.rcv_nxt or 0) if ack is None else ack,
                      flags=flags, window=self.wnd if wnd is None else wnd,
                      options=list(options), **kw)
        return t / SC["Raw"](data) if data else t

    def send(self, flags=A, **kw):
        pkt = self.ip(**self.ip_kw) / self.tcp(flags=flags, **kw)
        self.put(pkt)
        self.nsent += 1
        return pkt

    def put(self, pkt):
        self.w.send(pkt)

    # -- receiving
    def take(self, match, timeout):
        """The stack's next packet to us with match(packet), else None."""
        return self.w.take(match, timeout)

    def mine(self, ip):
        t = ip.getlayer(SC["TCP"])
        return t is not None and t.sport == self.dport and t.dport == self.sport

    def expect(self, what="a segment", timeout=2.0, pred=None):
        ip = self.take(lambda p: self.mine(p) and (pred is None or pred(Seg(p))), timeout)
        check(ip is not None, f"port {self.sport}: no {what} from the stack within {timeout}s")
        return self.heard(Seg(ip))

    def heard(self, s):
        if self.ts_ok and "Timestamp" in s.opts:
            self.ts_recent = s.opts["Timestamp"][0]
        return s

    def settle(self, quiet=0.15):
        """Let stray segments (delayed ACKs, window updates) pass unjudged:
        drop what arrives until nothing has for `quiet` seconds."""
        while self.take(self.mine, quiet) is not None:
            pass

    def expect_none(self, what, timeout=0.8):
        ip = self.take(self.mine, timeout)
        check(ip is None, f"port {self.sport}: {what}: the stack answered {Seg(ip) if ip else ''}"
                          ", want nothing")

    def expect_ack_only(self, what, timeout=2.0):
        """An ACK without data carrying SND.NXT/RCV.NXT as we know them."""
        s = self.expect(what, timeout)
        check(s.flags == A and not s.data and s.ack == self.snd_nxt and s.seq == self.rcv_nxt,
              f"{what}: got {s}, want <A seq={self.rcv_nxt} ack={self.snd_nxt}> "
              "without data")
        return s

    # -- the handshake
    def syn(self, options=(("MSS", 1460), ("SAckOK", b""), ("WScale", 7)), wnd=None,
            **kw):
        self.send(flags=S, seq=self.iss, ack=0, options=options, wnd=wnd, **kw)
        sa = self.expect("SYN-ACK", pred=lambda s: s.flags & S)
        check(sa.flags == S | A and sa.ack == seq_add(self.iss, 1),
              f"SYN answered with {sa}, want SYN-ACK ack={seq_add(self.iss, 1)}")
        self.syn_ack = sa
        self.ts_ok = "Timestamp" in sa.opts and any(o[0] == "Timestamp" for o in options)
        self.snd_nxt = seq_add(self.iss, 1)
        self.rcv_nxt = seq_add(sa.seq, 1)
        return sa

    def connect(self, **kw):
        sa = self.syn(**kw)
        self.send(flags=A)
        return sa

    # -- data
    def send_data(self, data, mss=1400, flags=P | A):
        for off in range(0, len(data), mss):
            self.send(flags=flags, data=data[off:off + mss])
            self.snd_nxt = seq_add(self.snd_nxt, len(data[off:off + mss]))

    def read_response(self, timeout=5.0, ack=True, segs=None, buf=b""):
        """The stack's HTTP response (after buf, already taken), ACKing
        every segment unless told not to; bytes."""
        deadline = time.monotonic() + timeout
        while True:
            head, sep, body = buf.partition(b"\r\n\r\n")
            m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
            if sep and m and len(body) >= int(m.group(1)):
                return buf
            s = self.expect("response data", max(deadline - time.monotonic(), 0.01),
                            pred=lambda s: bool(s.data))
            if segs is not None:
                segs.append(s)
            if s.seq == self.rcv_nxt:
                buf += s.data
                self.rcv_nxt = seq_add(self.rcv_nxt, len(s.data))
            if ack:
                self.send(flags=A)

    def exchange(self, req, timeout=5.0, segs=None):
        self.send_data(req)
        resp = self.read_response(timeout, segs=segs)
        head, _, body = resp.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 200 "), f"response {head[:80]!r}")
        return body

    def echo_ok(self, tag="x", timeout=5.0):
        """One GET on this connection, echoed byte for byte: it still works."""
        req = (f"GET /adv/{tag} HTTP/1.1\r\nHost: {self.env.stack_ip}\r\n\r\n").encode()
        body = self.exchange(req, timeout)
        check(body == req, f"echo differs: sent {req!r}, got {body!r}")

    def close_rst(self):
        """Leave without a trace: an exact RST (accepted, no answer)."""
        self.send(flags=R | A)


class Peer6(Peer):
    """Peer over IPv6, at KERNEL_ADDR6 (an AdvEnv with ip6=True).  What it
    takes are the stack's Ethernet frames (Wire.take6): pkt[TCP],
    pkt[IPv6] and Seg work on them as on IPv4 packets."""

    def ip(self, **kw):
        return SC["IPv6"](src=ei.KERNEL_ADDR6, dst=self.env.stack_ip6, **kw)

    def put(self, pkt):
        self.w.send6(pkt)

    def take(self, match, timeout):
        return self.w.take6(lambda fr: fr[SC["IPv6"]].dst == ei.KERNEL_ADDR6 and match(fr),
                            timeout)


class AdvEnv(ei.EchoEnv):
    """EchoEnv plus [tcp] config overrides, the RST filter and the Wire."""

    def __init__(self, args, tcp=None, **kw):
        super().__init__(args, **kw)
        self.tcp_overrides = tcp or {}
        self.wire = None
        self.counters = {}
        self.expect_counters = {}
        self._ports = random.sample(range(PEER_PORTS[0], PEER_PORTS[1] + 1), 200)

    def new_port(self):
        return self._ports.pop()

    def _write_config(self):
        super()._write_config()
        if self.tcp_overrides:
            with open(self.cfgpath, encoding="utf-8") as f:
                text = f.read()
            with open(self.cfgpath, "w", encoding="utf-8") as f:
                f.write(ei.ini_with_overrides(text, "tcp", self.tcp_overrides))

    def _setup(self):
        super()._setup()
        nft = ei.tool("nft")
        check(nft, "nft not found (Debian package nftables, tools/setup.sh)")
        rules = "".join(self._rst_filter(fam, addr) for fam, addr in
                        (("ip", self.stack_ip), ("ip6", self.stack_ip6 if self.ip6 else None))
                        if addr)
        p = subprocess.run(self.ns_cmd([nft, "-f", "-"]), input=rules,
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, f"nft -f failed: {p.stderr.strip()}")
        self.tap_mac = self.ns_run(["cat", f"/sys/class/net/{self.iface}/address"]) \
            .stdout.strip()
        tx, rx, _, _ = ei.ping(self, [], count=1)
        check(rx == tx == 1, "the stack did not answer a ping")
        self.stack_mac, state = ei._neigh(self, self.stack_ip)
        check(self.stack_mac, f"no neighbour entry for {self.stack_ip}: {state}")
        self.wire = Wire(self)

    @staticmethod
    def _rst_filter(family, stack_addr):
        """nft table of this family dropping the kernel's segments from the
        crafted ports to the stack (Peer over IPv4, Peer6 over IPv6)."""
        return (f"table {family} {NFT_TABLE} {{\n chain out {{\n"
                "  type filter hook output priority 0; policy accept;\n"
                f"  {family} daddr {stack_addr} tcp sport {PEER_PORTS[0]}-{PEER_PORTS[1]} "
                "counter drop\n }\n}\n")

    def _teardown(self):
        if self.wire is not None:
            self.wire.close()
            self.wire = None
        super()._teardown()

    def kernel_rsts_dropped(self):
        total = 0
        for family in ("ip", "ip6") if self.ip6 else ("ip",):
            p = self.ns_run([ei.tool("nft"), "list", "table", family, NFT_TABLE])
            m = re.search(r"counter packets (\d+)", p.stdout)
            if not m:
                return -1
            total += int(m.group(1))
        return total

    def read_counters(self):
        """name -> value from the server's stats printed on SIGTERM."""
        out = {}
        for line in self.log_text().splitlines():
            m = re.match(r"^([a-z][a-z0-9_.]*) (\d+)(?:  #|$)", line)
            if m:
                out[m.group(1)] = int(m.group(2))
        self.counters = out
        return out


def curl_ok(env, path="/adv-after"):
    """(b) of every case: a curl GET from the kernel's own TCP still works."""
    p = env.ns_run(["curl", "-sS", "--max-time", "10", "-o", "/dev/null",
                    "-w", "%{http_code} %{size_download}", env.url(path)], check_rc=False)
    check(p.stdout.startswith("200 ") and int(p.stdout.split()[1]) > 0,
          f"curl after the case failed: {p.stdout} {p.stderr.strip()}")
    say(f"curl GET after the case: {p.stdout}")


def check_counters(env, want):
    """want: name -> int (exact) or (">=", n)."""
    got = env.read_counters()
    check(got, "no counters in the server log (stats are printed on SIGTERM)")
    for name, w in want.items():
        check(name in got, f"counter {name} not printed by the server")
        v = got[name]
        if isinstance(w, tuple):
            op, n = w
            ok = v >= n if op == ">=" else v <= n
            say(f"counter {name} = {v} (want {op} {n})")
        else:
            ok = v == w
            say(f"counter {name} = {v} (want {w})")
        check(ok, f"counter {name} is {v}, want {w}")
