#!/usr/bin/env python3
"""Several engines per process (issues 5 and 8) over real PMDs.

Cases:
  memif-2x2   us-httpecho --lcores 0-1 and us-loadgen --engines 2, two
              processes over a 2-queue net_memif (the sender picks the queue,
              so loadgen engine k talks to httpecho engine k), idle back-off
              on, 64 keep-alive connections for 5 s: zero errors, both
              engines of each side busy, and no frame handed off: every
              engine served only the connections it owns.
  afpacket-2  us-httpecho --lcores 0-1 over net_af_packet (qpairs=2) on a
              veth whose peer is in a namespace; the kernel opens 200
              connections (one request each) with source ports of its own
              choosing.  af_packet's fanout spreads flows by the kernel's
              hash, not ours, so some frames reach the wrong engine and are
              handed to their owner: all 200 answered, hand-offs counted,
              no frame dropped by the hand-off.
  memif-migrate  as memif-2x2, but us-httpecho --migrate-every 5: after every
              5 requests a connection moves to the other engine (and back),
              while us-loadgen keeps it busy.  Zero errors (every response
              byte-exact), migrate_out/in counted on both engines and equal
              across them, no migration failed, no RST, and both engines
              served requests on migrated connections (the old owner only
              forwards their frames).

Per-engine counters and the steering probe's line are printed for the lead.
    multi_interop.py --loadgen L --httpecho H CASE...
Every case removes what it made (processes, namespace, veth, temp dir, DPDK
files of its prefixes), pass or fail.  Exit: 0 passed, 1 failed, 77 skipped.
"""

import argparse
import os
import re
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402
import loadgen_interop as li  # noqa: E402

STEER_KEYS = ("nic.rx_pkts", "tcp_passive_opens", "tcp_active_opens", "steer_rx_own",
              "steer_handoff_out", "steer_handoff_in", "steer_arp_copies",
              "steer_drop_ring_full")
MIGRATE_KEYS = ("migrate_out", "migrate_in", "migrate_failed", "migrate_redirected",
                "migrate_held", "migrate_drop_hold_full", "migrate_markers",
                "tcp_resets_sent", "tcp_resets_rcvd", "tcp_drop_no_conn")


def engine_counters(text, n=2):
    """{k: {name: value}} from us_print_stats' "e<k>.name value" lines."""
    out = {k: {} for k in range(n)}
    for ln in text.splitlines():
        m = re.match(r"e(\d+)\.(\S+) (\d+)", ln)
        if m and int(m.group(1)) in out:
            out[int(m.group(1))][m.group(2)] = int(m.group(3))
    return out


def show(who, ctr):
    for k, c in sorted(ctr.items()):
        ei.say(f"  {who} engine {k}: " + ", ".join(f"{n} {c.get(n, '?')}" for n in STEER_KEYS))


def case_memif(args, run, secs=5, conns=64, migrate_every=0):
    base = ("[eal]\nhugepages = off\nno_huge_mem_mb = 256\n"
            "[port]\nmbufs = 16383\n[ip]\n"
            "[engine]\nidle_sleep_max_us = 200\n")
    sock = os.path.join(run.tmp, "memif.sock")
    dev = "net_memif0,role={},socket=" + sock + ",socket-abstract=no"
    srv = run.config("srv", base, port={"device": dev.format("server")},
                     ip={"addr": "10.79.0.2/24"})
    cli = run.config("cli", base, port={"device": dev.format("client")},
                     ip={"addr": "10.79.0.1/24"})
    extra = ["--migrate-every", str(migrate_every)] if migrate_every else []
    echo = run.start([args.httpecho, "--config", srv, "--port", "8080", "--lcores", "0-1"] +
                     extra, "httpecho.log")
    li.wait_for(lambda: "listening on" in run.log("httpecho.log") or echo.poll() is not None,
                20, "us-httpecho's listening line")
    ei.check(echo.poll() is None, f"us-httpecho exited: {run.log('httpecho.log')[-800:]}")
    res = li.run_loadgen(run, [args.loadgen, "--config", cli, "--target", "10.79.0.2:8080",
                               "--connections", str(conns), "--duration", str(secs),
                               "--delay", "1", "--stats", "--engines", "2"], secs)
    ei.check(run.stop(echo) == 0, "us-httpecho did not exit 0 on SIGTERM")
    li.check_clean(res, 10 * conns)
    ei.check(res["connects"] == conns, f"{res['connects']} connections, want {conns}")
    srv_c = engine_counters(run.log("httpecho.log"))
    cli_c = engine_counters(run.log("loadgen.log"))
    show("us-httpecho", srv_c)
    show("us-loadgen", cli_c)
    for who, name in (("us-httpecho", "httpecho.log"), ("us-loadgen", "loadgen.log")):
        for ln in run.log(name).splitlines():
            if ln.startswith("httpecho.e") or "steering:" in ln:
                ei.say(f"  {who}: " + ln.strip())
    if migrate_every:
        check_migrated(srv_c, run.log("httpecho.log"), conns)
        return res
    for who, ctr in (("us-httpecho", srv_c), ("us-loadgen", cli_c)):
        for k in (0, 1):
            c = ctr[k]
            # The only frames between engines: ARP copies (each engine keeps
            # its own table).
            arp_in = ctr[1 - k].get("steer_arp_copies")
            ei.check(c.get("steer_handoff_out") == 0 and c.get("steer_handoff_in") == arp_in,
                     f"{who} engine {k} handed TCP frames off: out "
                     f"{c.get('steer_handoff_out')}, in {c.get('steer_handoff_in')}, "
                     f"ARP copies in {arp_in}")
            ei.check(c.get("steer_drop_ring_full") == 0, f"{who} engine {k}: ring drops")
    for k in (0, 1):
        opens = cli_c[k].get("tcp_active_opens", 0)
        ei.check(opens > 0, f"us-loadgen engine {k} opened no connection")
        ei.check(srv_c[k].get("tcp_passive_opens", -1) == opens,
                 f"engine {k}: {srv_c[k].get('tcp_passive_opens')} accepted for {opens} "
                 "opened by its peer engine")
    return res


def check_migrated(ctr, log, conns):
    """memif-migrate: both engines moved connections out and took them in,
    each move arrived, none failed, we sent no RST and found no frame
    without its connection, and each engine served requests (httpecho.e<k>
    lines) after taking some in.  The RSTs we receive: one per connection
    when us-loadgen exits (memif-2x2 shows the same without migration)."""
    for k, c in sorted(ctr.items()):
        ei.say(f"  us-httpecho engine {k}: " +
               ", ".join(f"{n} {c.get(n, '?')}" for n in MIGRATE_KEYS))
    rst_in = sum(ctr[k].get("tcp_resets_rcvd", 0) for k in (0, 1))
    ei.check(rst_in <= conns, f"us-httpecho received {rst_in} RSTs for {conns} connections")
    served = {}
    for ln in log.splitlines():
        m = re.match(r"httpecho\.e(\d+): (\d+) requests on (\d+) connections, (\d+) errors, "
                     r"(\d+) migrated away", ln)
        if m:
            served[int(m.group(1))] = [int(x) for x in m.groups()[1:]]
    ei.check(sorted(served) == [0, 1], f"no per-engine httpecho lines: {served}")
    for k in (0, 1):
        c, o = ctr[k], ctr[1 - k]
        ei.check(c.get("migrate_out", 0) > 0 and c.get("migrate_in", 0) > 0,
                 f"engine {k}: migrate_out {c.get('migrate_out')}, in {c.get('migrate_in')}")
        ei.check(c.get("migrate_in") == o.get("migrate_out"),
                 f"engine {k} took in {c.get('migrate_in')} of {o.get('migrate_out')} sent")
        for name in ("migrate_failed", "migrate_drop_hold_full", "steer_drop_ring_full",
                     "tcp_resets_sent", "tcp_drop_no_conn"):
            ei.check(c.get(name) == 0, f"engine {k}: {name} {c.get(name)}")
        # Its accepts beyond its own passive opens are migrated-in ones, and
        # it answered requests on them (5 per move before it moves again).
        ei.check(served[k][1] == c.get("tcp_passive_opens", 0) + c.get("migrate_in", 0),
                 f"engine {k}: {served[k][1]} connections, passive "
                 f"{c.get('tcp_passive_opens')} + migrated in {c.get('migrate_in')}")
        ei.check(served[k][0] > 0 and served[k][2] == 0, f"engine {k}: served {served[k]}")


class Run(li.Run):
    """li.Run plus the veths the case made (removed before the namespace)."""

    def __init__(self, name):
        super().__init__(name)
        self.links = []

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            for link in self.links:
                ei.run([self.ip, "link", "del", link], check_rc=False)


def run_case(args, name):
    ei.say(f"== {name}")
    try:
        with Run(name) as run:
            if name == "memif-2x2":
                res = case_memif(args, run)
                ei.say(f"result: {res['requests']} requests, {res['requests_per_s']}/s, "
                       f"p99 {res['latency_us']['p99']} us, errors {res['errors']['total']}")
            elif name == "afpacket-2":
                case_afpacket(args, run)
            elif name == "memif-migrate":
                res = case_memif(args, run, secs=5, conns=32, migrate_every=5)
                ei.say(f"result: {res['requests']} requests, {res['requests_per_s']}/s, "
                       f"p99 {res['latency_us']['p99']} us, errors {res['errors']['total']}")
    except ei.CaseFailed as e:
        ei.say(f"FAIL {name}: {e}")
        return 1
    ei.say(f"PASS {name}")
    return 0


# Linux's veth hands frames on with the TCP checksum still to fill
# (CHECKSUM_PARTIAL); af_packet readers see it unfinished.  No ethtool here:
# turn TX checksumming off with the legacy ETHTOOL_STXCSUM ioctl.
NO_TX_CSUM = r"""
import fcntl, socket, struct, sys, array
val = array.array("I", [0x17, 0])                 # ETHTOOL_STXCSUM, off
ifr = struct.pack("16sP", sys.argv[1].encode(), val.buffer_info()[0])
fcntl.ioctl(socket.socket(), 0x8946, ifr)         # SIOCETHTOOL
"""

KERNEL_CLIENT = r"""
import socket, sys
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok = 0
for i in range(n):
    s = socket.create_connection((addr, port), timeout=5)
    req = b"GET /c%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % i
    s.sendall(req)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    if data.startswith(b"HTTP/1.1 200") and data.endswith(req):
        ok += 1
    else:
        print("bad response", i, data[:80])
print("answered", ok, "of", n)
"""


def case_afpacket(args, run, conns=200):
    tag = secrets.token_hex(2)
    veth, peer = f"usmv{tag}", f"usmp{tag}"
    run.make_ns()
    ip = run.ip
    ei.run([ip, "link", "add", veth, "type", "veth", "peer", "name", peer])
    run.links.append(veth)
    ei.run([ip, "link", "set", peer, "netns", run.ns])
    ei.run([ip, "link", "set", veth, "up"])
    ei.run(run.ns_cmd(["ip", "addr", "add", "10.78.0.1/24", "dev", peer]))
    ei.run(run.ns_cmd(["ip", "link", "set", peer, "up"]))
    ei.run(run.ns_cmd([sys.executable, "-c", NO_TX_CSUM, peer]))
    base = ("[eal]\nhugepages = off\nno_huge_mem_mb = 256\n"
            "[port]\nmbufs = 16383\n[ip]\n[engine]\nidle_sleep_max_us = 200\n")
    srv = run.config("afp", base, port={"device": f"net_af_packet0,iface={veth},qpairs=2"},
                     ip={"addr": "10.78.0.2/24"})
    echo = run.start([args.httpecho, "--config", srv, "--port", "8080", "--lcores", "0-1"],
                     "httpecho.log")
    li.wait_for(lambda: "listening on" in run.log("httpecho.log") or echo.poll() is not None,
                20, "us-httpecho's listening line")
    ei.check(echo.poll() is None, f"us-httpecho exited: {run.log('httpecho.log')[-800:]}")
    p = ei.run(run.ns_cmd([sys.executable, "-c", KERNEL_CLIENT, "10.78.0.2", "8080",
                           str(conns)]), timeout=120, check_rc=False)
    out = (p.stdout + p.stderr).strip()
    ei.say("  kernel client: " + out.splitlines()[-1] if out else "  kernel client: nothing")
    ei.check(run.stop(echo) == 0, "us-httpecho did not exit 0 on SIGTERM")
    log = run.log("httpecho.log")
    for ln in log.splitlines():
        if "steering" in ln or ln.startswith(("httpecho.e", "us-httpecho: served")):
            ei.say("  " + ln.strip())
    ctr = engine_counters(log)
    show("us-httpecho", ctr)
    ei.check(p.returncode == 0 and f"answered {conns} of {conns}" in out,
             f"kernel client: {out[-500:]}")
    accepted = sum(ctr[k].get("tcp_passive_opens", 0) for k in (0, 1))
    ei.check(accepted == conns, f"{accepted} connections accepted, want {conns}")
    handed = sum(ctr[k].get("steer_handoff_out", 0) for k in (0, 1))
    ei.check(handed > 0, "no frame handed off: fanout agreed with us on every flow?")
    for k in (0, 1):
        c = ctr[k]
        ei.check(c.get("steer_drop_ring_full") == 0, f"engine {k}: hand-off ring drops")
        ei.check(c.get("tcp_passive_opens", 0) > 0, f"engine {k} owned no connection")
        ei.check(c.get("steer_handoff_in") == ctr[1 - k].get("steer_handoff_out", 0) +
                 ctr[1 - k].get("steer_arp_copies", 0),
                 f"engine {k}: frames handed to it and frames it received disagree")


CASES = ("memif-2x2", "afpacket-2", "memif-migrate")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--httpecho", required=True)
    ap.add_argument("cases", nargs="+", choices=CASES)
    args = ap.parse_args()
    if os.geteuid() != 0:
        ei.say("SKIP: needs root (memif sockets, namespaces)")
        return 77
    return 1 if sum(run_case(args, c) for c in args.cases) else 0


if __name__ == "__main__":
    sys.exit(main())
