#!/usr/bin/env python3
"""Our TCP and Linux's side by side, with the same application on both.

One small Python server (SERVER below: one thread, plain socket calls) runs
twice: under the kernel in a second namespace over a veth pair (offloads
that merge segments off, gso_max_segs 1, so the capture shows the wire's
segments), and under libuserstack-preload.so on our stack (tap), both
reached from the kernel client in the test's namespace.  The client makes
eight exchanges with each and a capture on each interface records them:

  small      handshake, a 5-byte request and answer, close
  bulk       a 100 KB answer
  loss       a 100 KB answer whose server segments 35 and 36 (counted by
             conntrack in the client's namespace) are dropped once: a
             2-segment loss inside a flight of about 30
  keepalive  an idle connection whose server keeps it alive
             (SO_KEEPALIVE, TCP_KEEPIDLE 1 s, TCP_KEEPINTVL 1 s) for 2.6 s
  tfo        a Fast Open client's second connection (cookie from the
             first): data in the SYN, the answer
  abort      the server closes with SO_LINGER 0 after the request: an RST
  late       the server closes after the request without answering; the
             client, having read the FIN, sends more: an RST
  zero window  a 1 MB answer to a client with an 8 KB receive buffer that
             reads nothing for 2 s: the server's zero-window probes

The server's segments of each exchange are normalised (sequence numbers
relative to the ISNs, no timestamps' values, no window values) and compared
feature by feature.  A feature that differs passes only when KNOWN lists it
with its reason (the same list as docs/linux-differences.md); an
unexplained difference fails, and a listed one that no longer differs is
reported (not a failure: timing can hide one).

    sidebyside_interop.py --preload build/preload/libuserstack-preload.so \
        --config config/tap.ini side-by-side [side-by-side6]

side-by-side6 makes the same exchanges over IPv6 (the stack's [ip6]
address, IPv6 on the veth pair).

Everything made (namespaces, processes, nftables table, temp dir, DPDK
files of the unique --file-prefix) is removed, pass or fail.  Exit: 0
passed, 1 failed, 77 skipped (not root).
"""

import argparse
import errno
import os
import secrets
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402
import preload_interop as pi  # noqa: E402
from echo_interop import check, say  # noqa: E402

PORT = 8300                     # small/bulk; +1 keepalive; +2 loss; +3 Fast Open
KERNEL_NET = ("10.79.0.1", "10.79.0.2")  # client side, kernel server side (veth)
KERNEL_NET6 = ("fd00:79::1", "fd00:79::2")  # the same over IPv6 (side-by-side6)
LOSS_PACKETS = (35, 36)         # the server's packets of the loss exchange dropped
BULK = 100000
MSS = {4: 1448, 6: 1428}        # 1500 - 40 (60 for IPv6) - 12 (timestamps)
KA_IDLE_S = 2.6
ZW_IDLE_S = 2.0

# The application, the same on both stacks: one thread (the preload library
# serves the thread that started the stack), blocking calls, one
# connection at a time as the client makes them.
SERVER = r'''
import selectors, socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
data = bytes(ord("a") + i % 26 for i in range(1 << 20))
sel = selectors.DefaultSelector()
for i in range(4):
    l = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if i == 3:
        l.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
    l.bind((host, port + i))
    l.listen(16)
    sel.register(l, selectors.EVENT_READ)
print("listening", flush=True)
while True:
    for key, _ in sel.select():
        c, _ = key.fileobj.accept()
        c.setblocking(True)
        req = b""
        while not req.endswith(b"\n"):
            b = c.recv(64)
            if not b:
                break
            req += b
        if req.endswith(b"\n"):
            mode, n = req.decode().split()
            if mode == "ka":
                c.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
                while c.recv(64):
                    pass
            elif mode == "abort":
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif mode == "late":
                pass
            else:
                c.sendall(data[:int(n)])
        c.close()
'''

# Differences we know, by (exchange, feature): the reason.  The same list is
# docs/linux-differences.md's.
KNOWN = {
    ("small", "segments"):
        "the quick ACK of the request waits for the application's turn in the same engine "
        "iteration, so the answer written at once carries it; Linux sends it from the "
        "softirq before the application runs (one bare ACK more per request)",
    ("small", "request acked alone"):
        "as above: the quick ACK rides on the answer",
    ("bulk", "retransmissions"):
        "timing: a needless Tail Loss Probe now and then, on either stack (ours waits "
        "2 SRTT + two 1 ms wheel ticks, Debian's kernel 2 SRTT + two 4 ms jiffies; an ACK "
        "late on a loaded machine draws one)",
    ("bulk", "fin with the last data"):
        "timing: the FIN joins the last data segment when the application's close comes "
        "before that segment left (both stacks do so; Linux's tail had left already)",
}


# ----------------------------------------------------------------------------
# The client's side: the eight exchanges against one server address

def read_all(s):
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            return got
        got += b


def ask(host, port, req, timeout=20.0):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(req)
        return read_all(s)


def ask_fastopen(host, port, req, timeout=20.0):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.sendto(req, socket.MSG_FASTOPEN, (host, port))  # blocking: waits for the handshake
        s.settimeout(timeout)
        return read_all(s)


def reset_after(host, req, late):
    """Sends req; after the server's end of stream sends late (if any);
    "reset" when the connection was then reset, else what happened.  A
    reset after our end of stream is no error a read returns (Linux keeps
    it as EPIPE in SO_ERROR: the stream had ended)."""
    with socket.create_connection((host, PORT), timeout=10) as s:
        s.sendall(req)
        try:
            if s.recv(64):
                return "data"
            if late:
                s.sendall(late)
                time.sleep(0.3)
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        except ConnectionResetError:
            return "reset"
        return "reset" if err in (errno.ECONNRESET, errno.EPIPE) else f"no reset ({err})"


def zero_window(host, want):
    """A 1 MB answer read only after ZW_IDLE_S, into a small receive buffer
    (the window closes and stays closed while the server probes)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.settimeout(20)
        s.connect((host, PORT))
        s.sendall(b"data %d\n" % len(want))
        time.sleep(ZW_IDLE_S)
        return read_all(s) == want


def exchanges(host):
    """The eight exchanges, one after the other (pauses keep their segments
    apart in time); checks every answer."""
    want = bytes(ord("a") + i % 26 for i in range(BULK))
    check(ask(host, PORT, b"data 5\n") == want[:5], f"{host}: small answer wrong")
    time.sleep(0.3)
    check(ask(host, PORT, b"data %d\n" % BULK) == want, f"{host}: bulk answer wrong")
    time.sleep(0.3)
    check(ask(host, PORT + 2, b"data %d\n" % BULK) == want, f"{host}: loss answer wrong")
    time.sleep(0.3)
    with socket.create_connection((host, PORT + 1), timeout=10) as s:
        s.sendall(b"ka 0\n")
        time.sleep(KA_IDLE_S)
    time.sleep(0.3)
    check(ask_fastopen(host, PORT + 3, b"data 5\n") == want[:5], f"{host}: tfo 1 wrong")
    time.sleep(0.3)
    check(ask_fastopen(host, PORT + 3, b"data 5\n") == want[:5], f"{host}: tfo 2 wrong")
    time.sleep(0.3)
    got = reset_after(host, b"abort 0\n", b"")
    check(got == "reset", f"{host}: abort: {got}")
    time.sleep(0.3)
    got = reset_after(host, b"late 0\n", b"late data")
    check(got == "reset", f"{host}: late: {got}")
    time.sleep(0.3)
    check(zero_window(host, bytes(ord("a") + i % 26 for i in range(1 << 20))),
          f"{host}: zero-window answer wrong")
    time.sleep(0.3)


# ----------------------------------------------------------------------------
# Captures and their normalised segments

FIELDS = ["frame.time_relative", "tcp.stream", "L3.src", "tcp.srcport", "tcp.dstport",
          "tcp.flags.str", "tcp.seq", "tcp.ack", "tcp.len", "tcp.option_kind",
          "tcp.options.mss_val", "tcp.options.tfo.cookie", "tcp.options.tfo.request",
          "tcp.options.timestamp.tsecr", "tcp.window_size_value"]


def segments(path, server_ip):
    """Per connection (tshark's stream), the segments of both directions:
    dicts with t, srv (sent by the server), flags ("SA", "PA", ...), rel seq
    and ack, len, opts (option kinds in order), mss, cookie, tsecr, win."""
    tshark = ei.tool("tshark")
    check(tshark, "tshark not found (Debian package tshark)")
    cmd = [tshark, "-n", "-r", path, "-Y", "tcp", "-T", "fields", "-E", "separator=;",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f.replace("L3", "ipv6" if ":" in server_ip else "ip")]
    conns = {}
    for line in ei.run(cmd, timeout=60).stdout.splitlines():
        v = line.split(";")
        if len(v) < len(FIELDS):
            continue
        flags = "".join(ch for ch in v[5] if ch.isalpha() and ch != "·")
        seg = {"t": float(v[0]), "srv": v[2] == server_ip,
               "port": int(v[3]) if v[2] == server_ip else int(v[4]),
               "flags": flags, "seq": int(v[6]), "ack": int(v[7] or 0), "len": int(v[8] or 0),
               "opts": tuple(int(k) for k in v[9].split(",") if k),
               "mss": v[10], "cookie": bool(v[11]), "fo_req": bool(v[12]),
               "tsecr": int(v[13] or 0), "win": int(v[14] or 0)}
        conns.setdefault(int(v[1]), []).append(seg)
    return [conns[k] for k in sorted(conns)]


def stack_counters(env):
    """Our stack's counters (telemetry /userstack/stats), {} if unreadable."""
    import json
    path = f"/var/run/dpdk/{env.prefix}/dpdk_telemetry.v2"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.connect(path)
            t.recv(4096)
            t.send(b"/userstack/stats")
            reply = json.loads(t.recv(1 << 20).decode())
        return reply.get("/userstack/stats", {})
    except (OSError, ValueError):
        return {}


class Iface:
    """What ei.Capture needs of an environment, for another interface."""
    def __init__(self, env, iface):
        self.ns_cmd, self.tmpdir, self.iface = env.ns_cmd, env.tmpdir, iface


# ----------------------------------------------------------------------------
# Features of each exchange (on the server's segments)

OPT_NAMES = {0: "EOL", 1: "NOP", 2: "MSS", 3: "WS", 4: "SACK_PERM", 5: "SACK", 8: "TS",
             34: "FO"}


def opts(seg):
    return ",".join(OPT_NAMES.get(k, str(k)) for k in seg["opts"])


def srv(conn):
    return [s for s in conn if s["srv"]]


def shape(conn):
    """The server's segments as the client saw them, in order."""
    return " ".join(f"{s['flags']}:{s['seq']}+{s['len']}" for s in srv(conn))


def features_small(conn):
    out = srv(conn)
    synack = next(s for s in out if "S" in s["flags"])
    req = next(s for s in conn if not s["srv"] and s["len"] > 0)
    acks_req = [s for s in out if s["ack"] >= req["seq"] + req["len"] and "S" not in s["flags"]]
    return {
        "syn-ack options": opts(synack),
        "syn-ack mss": synack["mss"],
        "segments": shape(conn),
        "request acked alone": bool(acks_req) and acks_req[0]["len"] == 0,
        "psh on the answer": any("P" in s["flags"] for s in out if s["len"] > 0),
        "fin with the answer": any("F" in s["flags"] and s["len"] > 0 for s in out),
    }


def data_segs(conn):
    return [s for s in srv(conn) if s["len"] > 0]


def features_bulk(conn):
    """Segmentation, PSH and FIN of the first transmissions (a resend, on
    either stack now and then, is counted apart)."""
    d = data_segs(conn)
    first = {}
    for s in d:
        first.setdefault(s["seq"], s)
    f = [first[k] for k in sorted(first)]
    return {
        "data segments": len(f),
        "segment sizes": ",".join(map(str, sorted({s["len"] for s in f}))),
        "psh before the last": any("P" in s["flags"] for s in f[:-1]),
        "psh on the last": "P" in f[-1]["flags"],
        "fin with the last data": "F" in f[-1]["flags"],
        "retransmissions": len(d) - len(f),
    }


def features_loss(conn, mss):
    """The retransmissions: which segments (by index in the answer, mss
    each), in what order, and whether any waited for an RTO."""
    d = data_segs(conn)
    first, rxt = {}, []
    for s in d:
        if s["seq"] in first:
            rxt.append(s)
        else:
            first[s["seq"]] = s
    delay = [round((s["t"] - first[s["seq"]]["t"]) * 1000) for s in rxt]
    idx = [(s["seq"] - 1) // mss for s in rxt]
    # Which two were dropped depends on how many segments went before
    # (a bare ACK of the request or not): the pattern is compared.
    # (and a needless resend now and then, on either stack, is timing).
    return {
        "two consecutive segments resent": any(b == a + 1 for a, b in zip(sorted(set(idx)),
                                                                      sorted(set(idx))[1:])),
        "resent after 200 ms or more (an RTO)": any(x >= 200 for x in delay),
    }


def features_keepalive(conn):
    out = srv(conn)
    last_data_end = max((s["seq"] + s["len"] for s in out), default=1)
    probes = [s for s in out if s["len"] <= 1 and "F" not in s["flags"] and "S" not in s["flags"]
              and s["seq"] < last_data_end and s["t"] > out[0]["t"] + 0.5]
    gaps = [round(b["t"] - a["t"]) for a, b in zip(probes, probes[1:])]
    return {
        "probes": len(probes),
        "probe seq": "SND.UNA-1" if probes and probes[0]["seq"] == last_data_end - 1 else
                     (probes[0]["seq"] if probes else None),
        "probe payload": probes[0]["len"] if probes else None,
        "probe gaps s": ",".join(map(str, gaps)),
    }


def features_tfo(first, second):
    s1 = next(s for s in srv(first) if "S" in s["flags"])
    syn2 = next(s for s in second if not s["srv"] and "S" in s["flags"])
    s2 = next(s for s in srv(second) if "S" in s["flags"])
    return {
        "first syn-ack options": opts(s1),
        "first syn-ack cookie": s1["cookie"],
        "client's second syn data": syn2["len"],
        "second syn-ack options": opts(s2),
        "second syn-ack cookie": s2["cookie"],
        "second syn-ack acks the data": s2["ack"] == 1 + syn2["len"],
        "second segments": shape(second),
    }


def features_zero_window(conn):
    """The server's segments while the client's window was closed: the
    probes' sequence number (against the client's acknowledgement) and
    payload, and whether the window, once open, took the rest."""
    win, ack, probes = None, 0, []
    for s in conn:
        if not s["srv"]:
            win, ack = s["win"], max(ack, s["ack"])
        elif win == 0 and "S" not in s["flags"] and "F" not in s["flags"] and s["len"] <= 1:
            probes.append((s, ack))
    first = probes[0] if probes else None
    return {
        "probed": bool(probes),
        "probe seq": None if not first else
                     "SND.UNA-1" if first[0]["seq"] == first[1] - 1 else
                     "SND.UNA" if first[0]["seq"] == first[1] else first[0]["seq"] - first[1],
        "probe payload": first[0]["len"] if first else None,
    }


def features_reset(conn):
    """The server's RST: its flags, options, whether it echoes TS.Recent,
    carries a window, and where it lies (the server's next sequence
    number, or the peer's acknowledgement if that is below)."""
    out = srv(conn)
    rst = [s for s in out if "R" in s["flags"]]
    if not rst:
        return {"resets": 0}
    r = rst[0]
    nxt = max(s["seq"] + s["len"] + ("S" in s["flags"]) + ("F" in s["flags"])
              for s in out if s is not r)
    peer_ack = max((s["ack"] for s in conn if not s["srv"] and s["t"] <= r["t"]), default=0)
    return {
        "resets": len(rst),
        "reset flags": r["flags"],
        "reset options": opts(r),
        "reset echoes TS.Recent": r["tsecr"] != 0,
        "reset carries a window": r["win"] != 0,
        "reset seq": "SND.NXT" if r["seq"] == nxt else
                     "SEG.ACK" if r["seq"] == peer_ack else r["seq"],
    }


def features(conns, family):
    """{exchange: {feature: value}} of one capture's nine connections."""
    check(len(conns) == 9, f"{len(conns)} connections captured, 9 expected")
    return {
        "small": features_small(conns[0]),
        "bulk": features_bulk(conns[1]),
        "loss": features_loss(conns[2], MSS[family]),
        "keepalive": features_keepalive(conns[3]),
        "tfo": features_tfo(conns[4], conns[5]),
        "abort": features_reset(conns[6]),
        "late": features_reset(conns[7]),
        "zero window": features_zero_window(conns[8]),
    }


def compare(ours, linux):
    """(unexplained differences, explained ones, listed but now the same)."""
    bad, known, gone = [], [], []
    for ex in linux:
        for feat, lv in linux[ex].items():
            ov = ours[ex][feat]
            why = KNOWN.get((ex, feat))
            if ov != lv and why:
                known.append(f"{ex} / {feat}: ours {ov!r}, Linux {lv!r} ({why})")
            elif ov != lv:
                bad.append(f"{ex} / {feat}: ours {ov!r}, Linux {lv!r}")
            elif why:
                gone.append(f"{ex} / {feat}: now the same ({lv!r})")
    return bad, known, gone


# ----------------------------------------------------------------------------
# The run

class PyServerEnv(pi.PreloadEnv):
    """SERVER under the preload library on our stack, at its address of
    the family (6: [ip6] on, the kernel side's tap address too)."""
    def __init__(self, args, family):
        super().__init__(args)
        self.port = PORT
        self.family, self.ip6 = family, family == 6

    def server_cmd(self):
        return [sys.executable, "-c", SERVER, self.peer, str(PORT)]

    def ready(self):
        return "listening" in self.log_text()


def veth_ip6(run, iface, addr):
    """IPv6 on one veth end (namespaces here keep it off by default): the
    address without DAD, no router solicitations."""
    conf = f"net.ipv6.conf.{iface}"
    run(["sysctl", "-qw", f"{conf}.disable_ipv6=0", f"{conf}.accept_ra=0",
         f"{conf}.router_solicitations=0", f"{conf}.accept_dad=0"])
    run(["ip", "-6", "addr", "add", f"{addr}/64", "dev", iface, "nodad"])


def kernel_side(env, nsk):
    """The veth pair to a second namespace and SERVER there, under the
    kernel, at its address of env's family; returns the server process."""
    mtu = env.ns_run(["cat", f"/sys/class/net/{env.iface}/mtu"]).stdout.strip()
    kcmd = ei.kernel_peer_ns(env, nsk, ("vs0", "vs1"), KERNEL_NET, mtu=mtu,
                             peer_opts=("gso_max_segs", "1"))
    if env.family == 6:
        veth_ip6(env.ns_run, "vs0", KERNEL_NET6[0])
        veth_ip6(lambda c: ei.run(kcmd + c), "vs1", KERNEL_NET6[1])
    ei.run(kcmd + ["sysctl", "-qw", "net.ipv4.tcp_fastopen=3"])
    srv = subprocess.Popen(kcmd + [sys.executable, "-c", SERVER, kernel_addr(env), str(PORT)],
                           stdout=subprocess.PIPE, text=True)
    check(srv.stdout.readline().strip() == "listening", "the kernel server did not start")
    return srv


NFT = """table inet sidebyside {{
    chain pre {{
        type filter hook prerouting priority -150; policy accept;
        tcp sport {port} ct reply packets {lo}-{hi} counter drop
    }}
}}
"""


def drop_rule(env):
    """The loss exchange's drop: the server's packets LOSS_PACKETS of each
    connection to PORT + 2 (conntrack counts them, so a retransmission is
    not dropped again)."""
    env.ns_run(["sysctl", "-qw", "net.netfilter.nf_conntrack_acct=1"])
    env.ns_run(["sysctl", "-qw", "net.ipv4.tcp_fastopen=1"])
    path = os.path.join(env.tmpdir, "sidebyside.nft")
    with open(path, "w", encoding="utf-8") as f:
        f.write(NFT.format(port=PORT + 2, lo=LOSS_PACKETS[0], hi=LOSS_PACKETS[1]))
    env.ns_run(["nft", "-f", path])


def kernel_addr(env):
    return KERNEL_NET6[1] if env.family == 6 else KERNEL_NET[1]


def case_side_by_side(args, family=4):
    env = PyServerEnv(args, family)
    env.prefix = f"sbs_{os.getpid()}_{secrets.token_hex(3)}"
    with env:
        nsk = env.ns + "k"
        ksrv = None
        try:
            ksrv = kernel_side(env, nsk)
            drop_rule(env)
            caps = {}
            for name, host, iface in (("ours", env.peer, env.iface),
                                      ("linux", kernel_addr(env), "vs0")):
                with ei.Capture(Iface(env, iface), f"tcp and host {host}") as cap:
                    with env.netns():
                        exchanges(host)
                    time.sleep(0.3)
                caps[name] = (cap.path, host)
                if args.keep:
                    subprocess.run(["cp", cap.path, os.path.join(args.keep, f"{name}.pcap")],
                                   check=False)
            if args.keep:
                with open(os.path.join(args.keep, "counters.txt"), "w") as f:
                    for k, v in sorted(stack_counters(env).items()):
                        f.write(f"{k} {v}\n")
            seen = {n: features(segments(p, h), family) for n, (p, h) in caps.items()}
            for ex in seen["linux"]:
                for feat in seen["linux"][ex]:
                    say(f"{ex:9} {feat:38} ours {seen['ours'][ex][feat]!r:24} "
                        f"Linux {seen['linux'][ex][feat]!r}")
            bad, known, gone = compare(seen["ours"], seen["linux"])
            for line in known:
                say(f"known difference: {line}")
            for line in gone:
                say(f"listed difference not seen: {line}")
            say(f"{sum(len(v) for v in seen['linux'].values())} features compared, "
                f"{len(known)} known differences, {len(bad)} unexplained")
            check(not bad, "unexplained: " + "; ".join(bad))
        finally:
            if ksrv is not None:
                ksrv.kill()
                ksrv.wait()
            ei.run([env.ip, "netns", "del", nsk], check_rc=False)
    env.cleanup_files()


CASES = {"side-by-side": case_side_by_side,
         "side-by-side6": lambda args: case_side_by_side(args, 6)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preload", required=True, help="libuserstack-preload.so")
    ap.add_argument("--config", required=True, help="INI to copy (file_prefix is replaced)")
    ap.add_argument("--port", type=int, default=PORT)
    ap.add_argument("--keep", metavar="DIR", help="copy the two captures there (ours.pcap, linux.pcap)")
    ap.add_argument("cases", nargs="+", help="case names: " + " ".join(CASES))
    args = ap.parse_args()
    names = ei.case_names(ap, args.cases, CASES, allow_all=False)
    return ei.run_cases(args, names, CASES)


if __name__ == "__main__":
    ei.run_main(main)
