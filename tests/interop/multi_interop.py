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
  memif-wrongq
              us-loadgen --engines 2 -> us-netem --queues 2 --swap-queues ->
              us-httpecho --lcores 0-1, all over 2-queue net_memif: us-netem
              sends what arrived on queue q out of queue (q+1)%2, so every
              frame reaches the engine that does not own its connection, on
              both sides.  200 keep-alive connections, every response
              byte-checked (--check-echo).  The per-engine counters prove
              each connection was served only by its owner (accepted on the
              engine that opened it, requests answered there, no TCP frame
              kept where it arrived, every one handed off), nothing dropped.
  afpacket-active-200
              the active-open direction over af_packet: us-loadgen --engines
              2 over net_af_packet (qpairs=2) on a veth into a namespace with
              a kernel echo server (python); 200 keep-alive connections
              byte-checked; fanout spreads the kernel's answers its own way,
              so hand-offs happen; active opens per engine and hand-offs
              counted, no error, no drop.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import echo_interop as ei  # noqa: E402
import loadgen_interop as li  # noqa: E402

STEER_KEYS = ("nic.rx_pkts", "tcp_passive_opens", "tcp_active_opens", "steer_rx_own",
              "steer_handoff_out", "steer_handoff_in", "steer_arp_copies",
              "steer_nd6_copies", "steer_drop_ring_full")
# The wrong-queue cases' table: the above plus what proves "served by its
# owner only" and "nothing lost".
OWNER_KEYS = STEER_KEYS + ("steer_rx_own_tcp", "steer_drop_no_mbuf", "tcp_retrans_segs")
# Every stack's config in these cases (address and device added per case).
BASE = ("[eal]\nhugepages = off\nno_huge_mem_mb = 256\n"
        "[port]\nmbufs = 16383\n[ip]\n[engine]\nidle_sleep_max_us = 200\n")
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


def start_httpecho(args, run, cfg, extra=()):
    """us-httpecho with two engines (--lcores 0-1) on port 8080, listening."""
    return li.start_httpecho(run, [args.httpecho, "--config", cfg, "--port", "8080",
                                   "--lcores", "0-1", *extra], tail=800)


def run_loadgen(args, run, cfg, target, conns, secs, request_size=None, stats=True):
    """us-loadgen with two engines after a 1 s delay, every answer
    byte-checked (--check-echo); its JSON summary."""
    cmd = [args.loadgen, "--config", cfg, "--target", target, "--connections", str(conns),
           "--duration", str(secs), "--check-echo", "--delay", "1", "--engines", "2"]
    if request_size is not None:
        cmd += ["--request-size", str(request_size)]
    if stats:
        cmd.append("--stats")
    return li.run_loadgen(run, cmd, secs)


def check_loadgen(res, conns, min_requests=None, checked_exactly=True):
    """us-loadgen's summary: no error, at least min_requests requests
    (default conns), every connection made, every answer byte-checked
    (checked_exactly=False: at least as many checked as counted, > 0)."""
    ei.say(f"  us-loadgen: {res['requests']} requests, {res.get('echo_checked')} byte-checked, "
           f"errors {res['errors']['total']}")
    li.check_clean(res, conns if min_requests is None else min_requests)
    ei.check(res["connects"] == conns, f"{res['connects']} connections, want {conns}")
    if checked_exactly:
        ei.check(res.get("echo_checked") == res["requests"],
                 f"{res.get('echo_checked')} of {res['requests']} responses checked")
    else:
        ei.check(res.get("echo_checked", 0) >= res["requests"] > 0,
                 f"{res.get('echo_checked')} answers byte-checked of {res['requests']}")


def case_memif(args, run, secs=5, conns=64, migrate_every=0):
    sock = os.path.join(run.tmp, "memif.sock")
    dev = "net_memif0,role={},socket=" + sock + ",socket-abstract=no"
    srv = run.config("srv", BASE, port={"device": dev.format("server")},
                     ip={"addr": "10.79.0.2/24"})
    cli = run.config("cli", BASE, port={"device": dev.format("client")},
                     ip={"addr": "10.79.0.1/24"})
    extra = ["--migrate-every", str(migrate_every)] if migrate_every else []
    echo = start_httpecho(args, run, srv, extra)
    # With migration, requests of 3 segments keep data in flight.
    res = run_loadgen(args, run, cli, "10.79.0.2:8080", conns, secs,
                      request_size=3000 if migrate_every else None)
    ei.check(run.stop(echo) == 0, "us-httpecho did not exit 0 on SIGTERM")
    check_loadgen(res, conns, min_requests=10 * conns, checked_exactly=False)
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
            # The only frames between engines: ARP and ND copies (each
            # engine keeps its own table and neighbour cache).
            arp_in = ctr[1 - k].get("steer_arp_copies", 0) + \
                ctr[1 - k].get("steer_nd6_copies", 0)
            ei.check(c.get("steer_handoff_out") == 0 and c.get("steer_handoff_in") == arp_in,
                     f"{who} engine {k} handed TCP frames off: out "
                     f"{c.get('steer_handoff_out')}, in {c.get('steer_handoff_in')}, "
                     f"ARP/ND copies in {arp_in}")
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
            res = CASES[name](args, run)
            if res is not None:
                li.say_result(res)
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
    veth = veth_into_ns(run, "10.78.0.1/24")
    srv = run.config("afp", BASE, port={"device": f"net_af_packet0,iface={veth},qpairs=2"},
                     ip={"addr": "10.78.0.2/24"})
    echo = start_httpecho(args, run, srv)
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
                 ctr[1 - k].get("steer_arp_copies", 0) + ctr[1 - k].get("steer_nd6_copies", 0),
                 f"engine {k}: frames handed to it and frames it received disagree")


# ---- wrong-queue peer and the active-open direction ----

def table(cols, keys=OWNER_KEYS):
    """Per-engine counters as a table: one row per counter, one column per
    (program, engine); cols is [(title, {engine: {name: value}})]."""
    heads = [f"{who}.e{k}" for who, ctr in cols for k in sorted(ctr)]
    w = max(len(h) for h in heads) + 2
    ei.say("  " + "counter".ljust(22) + "".join(h.rjust(w) for h in heads))
    for n in keys:
        vals = [ctr[k].get(n, "?") for _, ctr in cols for k in sorted(ctr)]
        ei.say("  " + n.ljust(22) + "".join(str(v).rjust(w) for v in vals))


def app_engines(text, pattern):
    """{k: (requests, connections, errors)} from per-engine summary lines."""
    out = {}
    for m in re.finditer(pattern, text, re.M):
        out[int(m.group(1))] = tuple(int(m.group(i)) for i in (2, 3, 4))
    return out


def lg_engines(text):
    return app_engines(text, r"^engine (\d+): requests (\d+), connections (\d+), errors (\d+)")


def echo_engines(text):
    return app_engines(text, r"^httpecho\.e(\d+): (\d+) requests on (\d+) connections, "
                             r"(\d+) errors")


def netem_queues(text):
    """{(port, queue): {name: value}} from us-netem's per-queue lines."""
    out = {}
    for m in re.finditer(r"^port(\d)\.q(\d+)\.(\w+)\s+(\d+)\s+#", text, re.M):
        out.setdefault((int(m.group(1)), int(m.group(2))), {})[m.group(3)] = int(m.group(4))
    return out


def check_swapped(nq, lossless=True, client_tail=0):
    """us-netem's books: whatever arrived on port p queue q left port 1-p by
    queue (q+1)%2 or was refused by a full ring (sent + refused = received),
    and every queue carried frames.  Refusals: none towards the server
    (port 1); towards the client (port 0) at most client_tail, the answers
    still in flight when us-loadgen stops at its deadline and leaves the link
    (its memif ring then takes nothing more).  lossless=False (sanitizer
    builds, every process several times slower): us-netem, the test peer, may
    find a receiver's ring full at any time and drop; the byte-checked answers
    show TCP repaired it."""
    for p in (0, 1):
        for q in (0, 1):
            rx = nq.get((p, q), {}).get("rx_pkts", -1)
            out_port = 1 - p
            out = nq.get((out_port, (q + 1) % 2), {})
            refused = out.get("tx_dropped_full", -1)
            ei.say(f"  us-netem: port{p} queue {q} rx {rx} -> port{out_port} queue {(q + 1) % 2} "
                   f"tx {out.get('tx_pkts')} (refused {refused})")
            ei.check(rx > 0, f"us-netem port{p} queue {q} carried nothing")
            allowed = (1 << 62) if not lossless else (client_tail if out_port == 0 else 0)
            ei.check(0 <= refused <= allowed,
                     f"us-netem port{out_port} queue {(q + 1) % 2}: {refused} frames refused "
                     f"(allowed {allowed})")
            ei.check(out.get("tx_pkts", -1) + refused == rx,
                     f"us-netem port{p} q{q}: {rx} in, {out.get('tx_pkts')} out swapped "
                     f"+ {refused} refused")


def check_handoff_books(who, ctr, in_flight=0):
    """Hand-off rings lose nothing: what engine k received by hand-off is what
    the other handed out plus its ARP and ND copies; no ring or mbuf drop.
    in_flight: frames a program stopping at a deadline may leave in a ring
    (its engines stop one after the other; us_handoff_destroy frees them)."""
    for k in (0, 1):
        c, o = ctr[k], ctr[1 - k]
        # Every frame the queue gave this engine was kept or handed on.
        ei.check(c.get("nic.rx_pkts") == c.get("steer_rx_own", -1) +
                 c.get("steer_handoff_out", -1) + c.get("steer_drop_ring_full", -1),
                 f"{who} engine {k}: {c.get('nic.rx_pkts')} received, "
                 f"{c.get('steer_rx_own')} kept + {c.get('steer_handoff_out')} handed off")
        gap = o.get("steer_handoff_out", -1) + o.get("steer_arp_copies", -1) + \
            o.get("steer_nd6_copies", 0) - c.get("steer_handoff_in", -1)
        if gap:
            ei.say(f"  {who} engine {k}: {gap} handed-off frames still in the ring at exit")
        ei.check(0 <= gap <= in_flight,
                 f"{who} engine {k}: {c.get('steer_handoff_in')} handed in, the other handed "
                 f"{o.get('steer_handoff_out')} + {o.get('steer_arp_copies')} ARP + "
                 f"{o.get('steer_nd6_copies')} ND copies")
        ei.check(c.get("steer_drop_ring_full") == 0 and c.get("steer_drop_no_mbuf") == 0,
                 f"{who} engine {k}: hand-off drops")


def check_owners(cli_c, srv_c, lg_e, echo_e, conns):
    """Every connection served only by its owner engine on both sides."""
    ei.check(sum(cli_c[k].get("tcp_active_opens", 0) for k in (0, 1)) == conns,
             f"us-loadgen opened {[cli_c[k].get('tcp_active_opens') for k in (0, 1)]}, "
             f"want {conns} in all")
    for k in (0, 1):
        opens = cli_c[k].get("tcp_active_opens", 0)
        ei.check(opens > 0, f"us-loadgen engine {k} opened no connection")
        # The symmetric key: the tuple loadgen engine k picked hashes to
        # queue k on the server too, though its SYN arrived on the other.
        ei.check(srv_c[k].get("tcp_passive_opens") == opens,
                 f"us-httpecho engine {k} accepted {srv_c[k].get('tcp_passive_opens')}, its "
                 f"peer engine opened {opens}")
        ei.check(lg_e.get(k, (0, -1, 0))[1] == opens,
                 f"us-loadgen engine {k}: app saw {lg_e.get(k)} for {opens} opens")
        # us-loadgen stops at its deadline with up to one request per
        # connection answered but not read: the server's engine k served
        # what the client's engine k counted, plus at most those.
        ei.check(echo_e.get(k) is not None and echo_e[k][1] == opens and echo_e[k][2] == 0 and
                 0 <= echo_e[k][0] - lg_e[k][0] <= opens,
                 f"engine {k}: us-httpecho served {echo_e.get(k)}, us-loadgen counted "
                 f"{lg_e.get(k)} (requests, connections, errors)")
        for who, ctr in (("us-loadgen", cli_c), ("us-httpecho", srv_c)):
            ei.check(ctr[k].get("steer_rx_own_tcp") == 0,
                     f"{who} engine {k} kept {ctr[k].get('steer_rx_own_tcp')} TCP frames on "
                     "the queue they arrived on: the peer did not swap queues?")
            ei.check(ctr[k].get("steer_handoff_out", 0) > 0, f"{who} engine {k}: no hand-off")


def case_memif_wrongq(args, run, conns=200, secs=3):
    ei.check(args.netem, "memif-wrongq needs --netem")
    socks = [os.path.join(run.tmp, f"memif{i}.sock") for i in (0, 1)]
    dev = "net_memif{},role={},socket={},socket-abstract=no"
    srv = run.config("srv", BASE, port={"device": dev.format(0, "server", socks[1])},
                     ip={"addr": "10.77.0.2/24"})
    cli = run.config("cli", BASE, port={"device": dev.format(0, "client", socks[0])},
                     ip={"addr": "10.77.0.1/24"})
    netem_prefix = f"uslg_{run.tag}_netem"
    run.prefixes.append(netem_prefix)
    echo = start_httpecho(args, run, srv)
    netem = run.start([args.netem, "--port0", dev.format(0, "server", socks[0]),
                       "--port1", dev.format(1, "client", socks[1]), "--queues", "2",
                       "--swap-queues", "--a2b", "limit=4096", "--b2a", "limit=4096",
                       "--", "--file-prefix", netem_prefix], "netem.log")
    li.wait_for(lambda: "<->" in run.log("netem.log") or netem.poll() is not None,
                20, "us-netem's start line")
    ei.check(netem.poll() is None, f"us-netem exited: {run.log('netem.log')[-800:]}")
    res = run_loadgen(args, run, cli, "10.77.0.2:8080", conns, secs, request_size=300)
    ei.check(run.stop(echo) == 0, "us-httpecho did not exit 0 on SIGTERM")
    ei.check(run.stop(netem) == 0, "us-netem did not exit 0 on SIGTERM")
    srv_c, cli_c = engine_counters(run.log("httpecho.log")), engine_counters(run.log("loadgen.log"))
    table([("loadgen", cli_c), ("httpecho", srv_c)])
    lg_e, echo_e = lg_engines(run.log("loadgen.log")), echo_engines(run.log("httpecho.log"))
    ei.say(f"  per engine (requests, connections, errors): us-loadgen {lg_e}, "
           f"us-httpecho {echo_e}")
    check_loadgen(res, conns)
    # Up to one answer (<= 2 frames) per connection may still be on its way
    # to us-loadgen when it stops at its deadline.
    check_swapped(netem_queues(run.log("netem.log")), lossless=not ei.sanitized(args.httpecho),
                  client_tail=2 * conns)
    check_owners(cli_c, srv_c, lg_e, echo_e, conns)
    # us-httpecho stops on SIGTERM after the traffic ended: exact books.
    check_handoff_books("us-httpecho", srv_c)
    check_handoff_books("us-loadgen", cli_c, in_flight=1024)  # US_HANDOFF_RING


# A kernel HTTP echo server (the body of each answer is the request's raw
# bytes, as us-httpecho answers), one thread per connection, keep-alive; on
# SIGTERM it prints how many connections it accepted.  A third argument N:
# one byte in the middle of every Nth answer's body is changed (the
# negative check of us-loadgen --check-echo).
KERNEL_ECHO_SERVER = r"""
import itertools, os, signal, socket, sys, threading
addr, port = sys.argv[1], int(sys.argv[2])
corrupt = int(sys.argv[3]) if len(sys.argv) > 3 else 0
answers = itertools.count(1)
accepted = [0]
def bye(*_):
    print("accepted", accepted[0], flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, bye)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((addr, port))
srv.listen(1024)
print("ready", flush=True)
def recv_more(c, buf):
    d = c.recv(65536)
    if not d:
        raise EOFError
    return buf + d
def serve(c):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                buf = recv_more(c, buf)
            head, _, buf = buf.partition(b"\r\n\r\n")
            clen = 0
            for ln in head.split(b"\r\n")[1:]:
                k, _, v = ln.partition(b":")
                if k.strip().lower() == b"content-length":
                    clen = int(v)
            while len(buf) < clen:
                buf = recv_more(c, buf)
            req, buf = head + b"\r\n\r\n" + buf[:clen], buf[clen:]
            if corrupt and next(answers) % corrupt == 0:
                req = req[:len(req) // 2] + bytes([req[len(req) // 2] ^ 1]) + \
                    req[len(req) // 2 + 1:]
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(req) + req)
    except (EOFError, OSError):
        pass
    finally:
        c.close()
while True:
    c, _ = srv.accept()
    accepted[0] += 1
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


def veth_into_ns(run, kernel_addr):
    """A veth pair: ours in the root namespace (returned), the peer in the
    case's namespace with kernel_addr, TX checksums filled (NO_TX_CSUM)."""
    tag = secrets.token_hex(2)
    veth, peer = f"usav{tag}", f"usap{tag}"
    run.make_ns()
    ei.run([run.ip, "link", "add", veth, "type", "veth", "peer", "name", peer])
    run.links.append(veth)
    ei.run([run.ip, "link", "set", peer, "netns", run.ns])
    ei.run([run.ip, "link", "set", veth, "up"])
    ei.run(run.ns_cmd(["ip", "addr", "add", kernel_addr, "dev", peer]))
    ei.run(run.ns_cmd(["ip", "link", "set", peer, "up"]))
    ei.run(run.ns_cmd([sys.executable, "-c", NO_TX_CSUM, peer]))
    return veth


def start_kernel_echo(run, extra=()):
    veth = veth_into_ns(run, "10.76.0.1/24")
    srv = run.start(run.ns_cmd([sys.executable, "-c", KERNEL_ECHO_SERVER, "10.76.0.1", "8080",
                                *extra]), "kernel.log")
    li.wait_for(lambda: "ready" in run.log("kernel.log") or srv.poll() is not None, 20,
                "the kernel echo server")
    ei.check(srv.poll() is None, f"kernel server exited: {run.log('kernel.log')[-800:]}")
    cli = run.config("afa", BASE, port={"device": f"net_af_packet0,iface={veth},qpairs=2"},
                     ip={"addr": "10.76.0.2/24"})
    return srv, cli


def case_echo_corrupt(args, run, conns=20, secs=2, every=50):
    """--check-echo can fail: the kernel server changes one byte of every
    50th answer; us-loadgen must count exactly those as echo_mismatch."""
    srv, cli = start_kernel_echo(run, (str(every),))
    res = run_loadgen(args, run, cli, "10.76.0.1:8080", conns, secs, request_size=300,
                      stats=False)
    ei.check(run.stop(srv) == 0, "the kernel echo server did not exit 0 on SIGTERM")
    e = res["errors"]
    ei.say(f"  us-loadgen: {res['requests']} requests equal, {e['echo_mismatch']} changed, "
           f"errors {e['total']}")
    ei.check(res["requests"] >= 10 * every, f"only {res['requests']} requests")
    ei.check(e["echo_mismatch"] > 0 and e["total"] == e["echo_mismatch"],
             f"changed answers not (only) counted as echo_mismatch: {e}")
    # Answers n*every are changed: the good ones come every-1 to a bad one
    # (the last few may still have been on their way at the deadline).
    want = (res["requests"] + e["echo_mismatch"]) // every
    ei.check(abs(e["echo_mismatch"] - want) <= conns,
             f"{e['echo_mismatch']} mismatches for ~{want} changed answers")
    ei.check(res.get("echo_checked") == res["requests"], "echo_checked != requests")


def case_afpacket_active(args, run, conns=200, secs=3):
    srv, cli = start_kernel_echo(run)
    res = run_loadgen(args, run, cli, "10.76.0.1:8080", conns, secs, request_size=300)
    ei.check(run.stop(srv) == 0, "the kernel echo server did not exit 0 on SIGTERM")
    log = run.log("loadgen.log")
    for ln in log.splitlines():
        if "steering" in ln:
            ei.say("  " + ln.strip())
    cli_c, lg_e = engine_counters(log), lg_engines(log)
    table([("loadgen", cli_c)])
    kernel = run.log("kernel.log").strip().splitlines()
    ei.say(f"  per engine (requests, connections, errors): us-loadgen {lg_e}; kernel server: "
           f"{kernel[-1] if kernel else '?'}")
    check_loadgen(res, conns)
    ei.check(f"accepted {conns}" in (kernel[-1] if kernel else ""),
             f"kernel server: {kernel[-1:] or 'nothing'}, want {conns} accepted")
    opens = [cli_c[k].get("tcp_active_opens", 0) for k in (0, 1)]
    ei.check(sum(opens) == conns and min(opens) > 0, f"active opens per engine {opens}")
    for k in (0, 1):
        ei.check(lg_e.get(k, (0, -1, 0))[1] == opens[k] and lg_e[k][2] == 0,
                 f"us-loadgen engine {k}: app saw {lg_e.get(k)} for {opens[k]} opens")
    handed = sum(cli_c[k].get("steer_handoff_out", 0) for k in (0, 1))
    ei.check(handed > 0, "no frame handed off: fanout agreed with us on every flow?")
    check_handoff_books("us-loadgen", cli_c, in_flight=1024)  # US_HANDOFF_RING


# Each case's function; those returning us-loadgen's summary get a result line.
CASES = {
    "memif-2x2": case_memif,
    "afpacket-2": case_afpacket,
    "memif-wrongq": case_memif_wrongq,
    "afpacket-active-200": case_afpacket_active,
    "echo-corrupt": case_echo_corrupt,
    "memif-migrate": lambda args, run: case_memif(args, run, secs=5, conns=32, migrate_every=5),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--httpecho", required=True)
    ap.add_argument("--netem", help="us-netem (memif-wrongq)")
    ap.add_argument("cases", nargs="+", choices=list(CASES))
    args = ap.parse_args()
    if os.geteuid() != 0:
        ei.say("SKIP: needs root (memif sockets, namespaces)")
        return 77
    return 1 if sum(run_case(args, c) for c in args.cases) else 0


if __name__ == "__main__":
    sys.exit(main())
