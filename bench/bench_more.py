#!/usr/bin/env python3
"""bench.py's later workloads: many idle connections with a few
active ones, memory per idle connection, and the junk flood.

  idle    us-loadgen --idle N (N idle connections over 4 extra server ports,
          us-httpecho --ports 5) then the ka-64 load on 32 connections; the
          kernel: N idle loopback connections held by this script (--hold,
          4 client addresses) then wrk -c32 at bench/kserver.  Memory per idle
          connection: ours = the server's VmRSS growth (TCBs, sockets and
          us-httpecho's state are on the libc heap; the mbuf pool is
          preallocated, its in-use count from telemetry is reported beside);
          kernel = /proc/slabinfo's growth halved (both ends are kernel
          sockets) plus kserver's VmRSS growth.
  flood   af_packet over veths on a bridge in a namespace (the memif link is
          point to point, and a stack has one port): server, client and the
          junk sender (this script, --junk: a paced AF_PACKET socket) each on
          their own veth.  ours = us-httpecho / us-loadgen on net_af_packet;
          kernel = bench/kserver / wrk on the same bridge.  Each system runs
          with and without the flood in the same pair.

Run by bench.py; the --hold and --junk modes are its helper processes.
"""

import os
import random
import re
import resource
import secrets
import select
import signal
import socket
import struct
import subprocess
import sys
import time

IDLE_FULL, IDLE_QUICK = 100000, 20000
IDLE_PORTS = 4                 # the idle ones on PORT+1..PORT+4: ~25 K each at 100 K
IDLE_SRC = ["127.0.0.%d" % i for i in range(11, 31)]  # kernel holders' sources
KERNEL_PER_PROC = 19000        # RLIMIT_NOFILE is 20000 and cannot be raised here
KERNEL_IDLE_PORT = 20000       # the kernel's idle servers' ports, from here
FLOOD_PPS = 100000             # junk frames per second (paced; --flood-pps)
# af_packet RX ring of ours in the flood (PMD devargs framecnt; its default
# is 512 frames, ~3 ms of a 100 K/s flood plus the real traffic: one
# time slice of anything else on the server's core and the ring overflows,
# real segments with the junk, and each lost one costs an RTO).  4096 frames
# (8 MiB) is ~25 ms, like a NIC's 4096 RX descriptors; the kernel server
# has its backlog and socket buffers for the same purpose.
FLOOD_AFP_FRAMES = 4096
FLOOD_NET = {"k": ("10.88.0.2", "10.88.0.1"), "us": ("10.88.1.2", "10.88.1.1")}


# -- measurements ---------------------------------------------------------------
def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def slab_bytes():
    """Sum of num_objs x objsize over /proc/slabinfo (root only)."""
    total = 0
    with open("/proc/slabinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith(("slabinfo", "#")):
                continue
            parts = line.split()
            total += int(parts[2]) * int(parts[3])
    return total


def snmp(ns):
    """{Group.Counter: value} of a namespace's /proc/net/snmp and netstat."""
    out = {}
    for fn in ("snmp", "netstat"):
        text = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/proc/net/{fn}"],
                              capture_output=True, text=True, check=False).stdout
        lines = text.splitlines()
        for head, vals in zip(lines[0::2], lines[1::2]):
            grp, names = head.split(":", 1)
            for k, v in zip(names.split(), vals.split(":", 1)[1].split()):
                out[f"{grp}.{k}"] = int(v)
    return out


# What counts as the kernel dropping junk (RFC 1122 silent discards and
# answered closed ports), for the report.
KERNEL_DROP_KEYS = ("Ip.InHdrErrors", "Ip.InAddrErrors", "Ip.InUnknownProtos",
                    "Ip.InTruncatedPkts", "Ip.InDiscards", "Ip.InCsumErrors",
                    "Udp.NoPorts", "Udp.InErrors", "Udp.InCsumErrors", "Tcp.InErrs",
                    "Tcp.InCsumErrors", "Tcp.OutRsts", "Icmp.OutDestUnreachs")
OURS_DROP_RE = re.compile(r"drop|no_port|bad|unknown|csum|rst|unreach|trunc|ratelimit")


# -- idle ---------------------------------------------------------------------
def hold_main(srcs, dst, port, n, timeout):
    """--hold: n idle connections to dst:port from the source addresses in
    turn; prints 'held ESTABLISHED FAILED' and keeps them until stdin closes,
    then resets them (SO_LINGER 0: no TIME-WAIT left for the next run)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
    # from 30000: clear of the kservers' ports (8081.., 20000..)
    socks, pending, failed, lport = [], {}, 0, 29999
    poller = select.poll()
    deadline = time.monotonic() + timeout
    for start in range(0, n, 500):
        for i in range(start, min(n, start + 500)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            # Explicit ports: the kernel's own choice scans its bind hash
            # for each connect (16 s of system time for 19 K here).
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            while True:
                lport += 1
                try:
                    s.bind((srcs[i % len(srcs)], lport))
                    break
                except OSError:
                    if lport >= 65535:
                        raise
            s.setblocking(False)
            socks.append(s)
            if s.connect_ex((dst, port)) not in (0, 115):  # EINPROGRESS
                failed += 1
                continue
            pending[s.fileno()] = s
            poller.register(s, select.POLLOUT)
        while pending and time.monotonic() < deadline:
            for fd, _ in poller.poll(200):
                s = pending.pop(fd)
                poller.unregister(fd)
                failed += s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0
    failed += len(pending)
    print(f"held {n - failed} {failed}", flush=True)
    sys.stdin.read()
    linger = struct.pack("ii", 1, 0)
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        except OSError:
            pass
        s.close()
    return 0


def ours_idle_sample(b, echo, prefix):
    """The server's VmRSS (kB) and telemetry (mbufs in use, TCBs) now."""
    import soak
    st = soak.telemetry(prefix)
    return {"rss_kb": rss_kb(echo.pid), "mbufs": st["mbufs_in_use"], "tcbs": st["conns"]}


def ours_idle_watch(b, lg, echo, prefix, n):
    """While us-loadgen opens its idle connections: samples before and after."""
    b.wait_log(lg, "lg.log", "idle: ready", timeout=60)
    m0 = ours_idle_sample(b, echo, prefix)
    b.wait_log(lg, "lg.log", " established, ", timeout=60 + n / 1000)
    time.sleep(0.4)  # us-loadgen polls --idle-wait (1 s) before its load
    m1 = ours_idle_sample(b, echo, prefix)
    m = re.search(r"idle: (\d+) established, (\d+) failed in ([\d.]+) s", b.log("lg.log"))
    est = int(m.group(1)) if m else 0
    return {"idle_est": est, "idle_open_s": float(m.group(3)) if m else None,
            "mem_per_idle": (m1["rss_kb"] - m0["rss_kb"]) * 1024 / est if est else None,
            "mbufs_per_idle": (m1["mbufs"] - m0["mbufs"]) / est if est else None,
            "tcbs_added": m1["tcbs"] - m0["tcbs"]}


def kernel_idle_open(b, kserver, n):
    """n idle loopback connections to kernel sockets.  RLIMIT_NOFILE is
    20000 (hard) here and cannot be raised (no CAP_SYS_RESOURCE), so they
    go to their own bench/kserver processes, at most KERNEL_PER_PROC each
    on ports of their own, from holder processes (one source address each);
    the measured server keeps only the 32 active ones.  Returns (processes
    to close, fields)."""
    k = -(-n // KERNEL_PER_PROC)
    base = KERNEL_IDLE_PORT + (b.n % 500) * 10
    procs, holders = [], []
    try:
        for j in range(k):
            p = b.start(["taskset", "-c", "1", kserver, "--port", str(base + j)], f"ksi{j}.log")
            procs.append(p)
            b.wait_log(p, f"ksi{j}.log", "listening on")
        slab0, rss0 = slab_bytes(), sum(rss_kb(p.pid) for p in procs)
        t0 = time.monotonic()
        for j in range(k):
            cnt = min(KERNEL_PER_PROC, n - j * KERNEL_PER_PROC)
            holders.append(subprocess.Popen(
                ["taskset", "-c", "0", sys.executable, os.path.abspath(__file__), "--hold",
                 IDLE_SRC[j % len(IDLE_SRC)], "127.0.0.1", str(base + j), str(cnt),
                 str(60 + cnt // 1000)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True))
        est = 0
        for h in holders:
            line = h.stdout.readline().split()
            if len(line) != 3 or line[0] != "held":
                raise RuntimeError(f"idle holder: {line}")
            est += int(line[1])
        dt = time.monotonic() - t0
        time.sleep(0.5)
        slab1, rss1 = slab_bytes(), sum(rss_kb(p.pid) for p in procs)
    except BaseException:
        kernel_idle_close(b, (holders, procs))
        raise
    return (holders, procs), {
        "idle_est": est, "idle_open_s": dt,
        # both ends are kernel sockets: half the slab growth is the server's
        "mem_per_idle": ((slab1 - slab0) / 2 + (rss1 - rss0) * 1024) / est if est else None,
        "slab_per_idle_both": (slab1 - slab0) / est if est else None,
        "kserver_rss_per_idle": (rss1 - rss0) * 1024 / est if est else None,
    }


def kernel_idle_close(b, held):
    holders, procs = held
    for h in holders:
        try:
            h.stdin.close()
            h.wait(120)
        except (OSError, subprocess.TimeoutExpired):
            h.kill()
            h.wait()
    for p in procs:
        b.stop(p)


# -- flood --------------------------------------------------------------------
def make_flood_net(b):
    """Namespaces: s (servers), c (clients and the junk sender), w (the
    bridge); a veth per party.  Returns {name: (ns, ifname, mac)}."""
    base = f"usf{os.getpid() % 10000}{secrets.token_hex(2)}"
    ns = {k: base + k for k in ("s", "c", "w")}
    for n in ns.values():
        subprocess.run(["ip", "netns", "add", n], check=True)
        b.ns.append(n)
        subprocess.run(["ip", "-n", n, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "netns", "exec", n, "sysctl", "-qw",
                        "net.ipv6.conf.all.disable_ipv6=1"], check=False)
    # br_netfilter would validate IPv4 headers on the bridge and drop the
    # bad-checksum and truncated junk before either server saw it.
    for t in ("iptables", "ip6tables", "arptables"):
        subprocess.run(["ip", "netns", "exec", ns["w"], "sysctl", "-qw",
                        f"net.bridge.bridge-nf-call-{t}=0"], check=False,
                       stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "-n", ns["w"], "link", "add", "br0", "type", "bridge"], check=True)
    subprocess.run(["ip", "-n", ns["w"], "link", "set", "br0", "up"], check=True)
    ifs = {}
    for i, (name, side) in enumerate((("us_s", "s"), ("k_s", "s"), ("us_c", "c"),
                                      ("k_c", "c"), ("junk", "c"))):
        peer = f"bp{i}"
        subprocess.run(["ip", "link", "add", name, "netns", ns[side], "type", "veth", "peer",
                        "name", peer, "netns", ns["w"]], check=True)
        subprocess.run(["ip", "-n", ns["w"], "link", "set", peer, "master", "br0", "up"],
                       check=True)
        subprocess.run(["ip", "netns", "exec", ns[side], "sysctl", "-qw",
                        f"net.ipv6.conf.{name}.disable_ipv6=1"], check=False)
        subprocess.run(["ip", "-n", ns[side], "link", "set", name, "up"], check=True)
        mac = subprocess.run(["ip", "netns", "exec", ns[side], "cat",
                              f"/sys/class/net/{name}/address"], capture_output=True,
                             text=True, check=True).stdout.strip()
        ifs[name] = (ns[side], name, mac)
    subprocess.run(["ip", "-n", ns["s"], "addr", "add", FLOOD_NET["k"][0] + "/24", "dev", "k_s"],
                   check=True)
    # RPS: the kernel server's receive processing (the junk's included) on
    # the server's core, as a NIC's interrupt there would put it; without
    # it a veth runs it on the sender's core (the junk sender's, core 0)
    # and the kernel's server core never sees the flood.
    subprocess.run(["ip", "netns", "exec", ns["s"], "sh", "-c",
                    "echo 2 > /sys/class/net/k_s/queues/rx-0/rps_cpus"], check=True)
    subprocess.run(["ip", "-n", ns["c"], "addr", "add", FLOOD_NET["k"][1] + "/24", "dev", "k_c"],
                   check=True)
    return ifs


def _csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _ip(src, dst, proto, payload, bad_csum=False, total=None):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total or 20 + len(payload), 0, 0x4000, 64,
                      proto, 0, socket.inet_aton(src), socket.inet_aton(dst))
    c = _csum(hdr) ^ (0x5A5A if bad_csum else 0)
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def _l4(src, dst, proto, seg, csum_at, bad=False):
    pseudo = struct.pack("!4s4sBBH", socket.inet_aton(src), socket.inet_aton(dst), 0, proto,
                         len(seg))
    c = _csum(pseudo + seg) ^ (0x1234 if bad else 0)
    return seg[:csum_at] + struct.pack("!H", c) + seg[csum_at + 2:]


def junk_frames(dst_mac, src_mac, dst_ip, src_ip, port, count=256, seed=9):
    """count frames of junk: UDP and TCP to closed ports, TCP with a bad
    checksum to the server's port, IPv4 with a bad header checksum, IPv4
    truncated (total length past the frame), an unknown ethertype."""
    rnd = random.Random(seed)
    eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", ""))
    out = []
    for i in range(count):
        sp, dp = rnd.randrange(1024, 65535), rnd.randrange(1, 8000)
        kind = i % 6
        if kind == 0:    # UDP to a closed port
            seg = _l4(src_ip, dst_ip, 17, struct.pack("!HHHH", sp, dp, 8 + 18, 0) + b"u" * 18, 6)
            f = eth + b"\x08\x00" + _ip(src_ip, dst_ip, 17, seg)
        elif kind == 1:  # TCP ACK to a closed port (answered with a RST)
            seg = struct.pack("!HHIIBBHHH", sp, dp, rnd.getrandbits(32), rnd.getrandbits(32),
                              0x50, 0x10, 8192, 0, 0)
            f = eth + b"\x08\x00" + _ip(src_ip, dst_ip, 6, _l4(src_ip, dst_ip, 6, seg, 16))
        elif kind == 2:  # TCP with a bad checksum to the server's port
            seg = struct.pack("!HHIIBBHHH", sp, port, rnd.getrandbits(32), 0, 0x50, 0x02, 8192,
                              0, 0)
            f = eth + b"\x08\x00" + _ip(src_ip, dst_ip, 6, _l4(src_ip, dst_ip, 6, seg, 16, True))
        elif kind == 3:  # IPv4 header checksum wrong
            seg = _l4(src_ip, dst_ip, 17, struct.pack("!HHHH", sp, dp, 8 + 18, 0) + b"h" * 18, 6)
            f = eth + b"\x08\x00" + _ip(src_ip, dst_ip, 17, seg, bad_csum=True)
        elif kind == 4:  # truncated: total length 1000, 46 bytes on the wire
            f = eth + b"\x08\x00" + _ip(src_ip, dst_ip, 17, b"t" * 26, total=1000)
        else:            # unknown ethertype (IEEE 802 local experimental)
            f = eth + b"\x88\xb5" + bytes(rnd.getrandbits(8) for _ in range(46))
        out.append(f.ljust(60, b"\0"))
    return out


def junk_main(iface, dst_mac, dst_ip, port, pps, secs):
    """--junk: paced junk frames out of iface for secs; prints 'sent N'."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    with open(f"/sys/class/net/{iface}/address", encoding="utf-8") as f:
        src_mac = f.read().strip()
    frames = junk_frames(dst_mac, src_mac, dst_ip, "10.88.7.7", port)
    burst, sent = 32, 0
    t0 = time.monotonic()
    t_end = t0 + secs
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        now = time.monotonic()
        if now >= t_end:
            break
        due = int((now - t0) * pps)
        if sent >= due:
            time.sleep(min(burst / pps, t_end - now))
            continue
        for k in range(min(burst, due - sent)):
            try:
                s.send(frames[(sent + k) % len(frames)])
            except OSError:
                pass
        sent += min(burst, due - sent)
    print(f"sent {sent} in {time.monotonic() - t0:.2f} s", flush=True)
    return 0


def start_junk(b, ifs, target, secs):
    """The junk sender at the server interface target ('us_s' or 'k_s'),
    or 'decoy': the same junk at the sender's own MAC, which the bridge
    drops at once (never sent back out of the port it came in by), so that
    core 0 pays the sending and no server sees a frame: what is left of
    the fall then is the client's lost CPU (bench.py --flood-decoy)."""
    ns, iface, _ = ifs["junk"]
    mac = ifs["junk" if target == "decoy" else target][2]
    ip = FLOOD_NET["us" if target == "us_s" else "k"][0]
    return b.start(["taskset", "-c", "0", sys.executable, os.path.abspath(__file__), "--junk",
                    iface, mac, ip, "8080", str(FLOOD_PPS), str(secs)], "junk.log", ns=ns)


def junk_sent(text):
    m = re.search(r"sent (\d+) in ([\d.]+) s", text)
    return (int(m.group(1)), float(m.group(2))) if m else (0, 0.0)


def main(argv):
    if argv[:1] == ["--hold"]:
        return hold_main(argv[1].split(","), argv[2], int(argv[3]), int(argv[4]),
                         float(argv[5]))
    if argv[:1] == ["--junk"]:
        return junk_main(argv[1], argv[2], argv[3], int(argv[4]), float(argv[5]),
                         float(argv[6]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
