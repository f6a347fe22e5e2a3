"""IPv6 cases of adversarial.py: crafted Neighbor Discovery, extension
headers, fragments and ICMPv6 against the stack's IPv6 layer (docs/IPV6.md).

Each runs in an AdvEnv with ip6=True: the kernel side has KERNEL_ADDR6
(fd00:77::1/64) on the tap, the stack has config/tap.ini's [ip6] addr.
Packets sent "from the kernel" carry its address and the tap's MAC, so the
stack resolves the kernel by Neighbor Discovery to answer them; packets
from a made-up neighbour carry a made-up MAC, and the case itself answers
for it.  As in adversarial.py, every "nothing comes back" is paired with a
control that is answered, and every case leaves the counters it expects
in env.expect_counters.
"""

import random
import socket
import time

import advwire as aw
from advwire import check, say

ei = aw.ei
SC = aw.SC

K6 = ei.KERNEL_ADDR6
ALL_NODES, ALL_NODES_MAC = "ff02::1", "33:33:00:00:00:01"
ND_NS, ND_NA = 135, 136
ICMP6_ECHO_REPLY = 129
ICMP6_PARAM_PROB = 4
ICMP6_QUOTE_MAX = 1280 - 40 - 8     # RFC 4443 2.4 (c)
IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ICMPV6 = 0, 60, 58
US_IP6_EXT_MAX, US_IP6_EXT_BYTES = 8, 1024   # stack/net/net6.h


# ----------------------------------------------------------------------------
# Building

def solicited_node(addr):
    """(ff02::1:ffXX:XXXX, 33:33:ff:XX:XX:XX) of addr (RFC 4291 2.7.1)."""
    low = socket.inet_pton(socket.AF_INET6, addr)[13:]
    group = socket.inet_ntop(socket.AF_INET6, bytes.fromhex("ff02" + "00" * 9 + "01ff") + low)
    return group, "33:33:ff:" + ":".join(f"{b:02x}" for b in low)


def icmp6_bytes(src, dst, icmp):
    """An ICMPv6 message as bytes, its checksum over (src, dst): valid
    behind any extension headers but a routing header with segments left."""
    return bytes(SC["IPv6"](src=src, dst=dst) / icmp)[40:]


def echo_req(ident, seq=1, data=b""):
    return SC["ICMPv6EchoRequest"](id=ident, seq=seq, data=data)


def opts_hdr(nh, size):
    """A hop-by-hop or destination options header of size bytes (a multiple
    of 8) naming nh next, filled with PadN options."""
    fill, body = size - 2, b""
    while fill > 0:
        n = min(fill - 2, 255)
        if fill - 2 - n == 1:   # never leave one byte: PadN takes at least 2
            n -= 1
        body += bytes([1, n]) + bytes(n)
        fill -= 2 + n
    return bytes([nh, size // 8 - 1]) + body


def chain_packet(src, dst, sizes, icmp):
    """IPv6 from src to dst: a hop-by-hop header then destination options
    headers, of these sizes in bytes, then the ICMPv6 message icmp."""
    tail = icmp6_bytes(src, dst, icmp)
    nh = IPPROTO_ICMPV6
    for i in reversed(range(len(sizes))):
        tail = opts_hdr(nh, sizes[i]) + tail
        nh = IPPROTO_HOPOPTS if i == 0 else IPPROTO_DSTOPTS
    return bytes(SC["IPv6"](src=src, dst=dst, nh=nh) / SC["Raw"](tail))


def fragment(src, dst, ident, off, data, more):
    """One fragment: data at byte offset off of the fragmentable part."""
    IPv6, Frag, Raw = SC["IPv6"], SC["IPv6ExtHdrFragment"], SC["Raw"]
    return bytes(IPv6(src=src, dst=dst, nh=44) /
                 Frag(nh=IPPROTO_ICMPV6, offset=off // 8, m=int(more), id=ident) / Raw(data))


# ----------------------------------------------------------------------------
# Matching what the stack sent (scapy Ether frames, advwire.Wire.take6)

def icmp6_type(fr):
    """The ICMPv6 type of a frame whose IPv6 header names ICMPv6 directly."""
    ip6 = fr[SC["IPv6"]]
    raw = bytes(ip6.payload)
    return raw[0] if ip6.nh == IPPROTO_ICMPV6 and raw else None


def to(addr):
    """Anything but ND to addr: the stack resolving or probing a neighbour
    is no answer to the packet under test."""
    return lambda fr: fr[SC["IPv6"]].dst == addr and icmp6_type(fr) not in (ND_NS, ND_NA)


def reply_to(addr, ident, seq=None):
    def match(fr):
        r = fr.getlayer(SC["ICMPv6EchoReply"])
        return (fr[SC["IPv6"]].dst == addr and r is not None and r.id == ident and
                (seq is None or r.seq == seq))
    return match


def ns_for(target):
    return lambda fr: icmp6_type(fr) == ND_NS and fr[SC["ICMPv6ND_NS"]].tgt == target


def expect6(env, what, match, timeout=2.0):
    fr = env.wire.take6(match, timeout)
    check(fr is not None, f"no {what} from the stack within {timeout}s")
    return fr


def expect6_none(env, what, match, timeout=0.8):
    fr = env.wire.take6(match, timeout)
    check(fr is None, f"{what}: the stack sent {fr.summary() if fr else ''}, want nothing")


def ping6_ok(env):
    """After every IPv6 case: the kernel's own ping -6 is answered."""
    tx, rx, rtt, _ = ei.ping(env, ["-6"], dst=env.stack_ip6)
    say(f"ping -6 {env.stack_ip6} after the case: {rx}/{tx} replies, rtt {rtt} ms")
    check(rx == tx == 3, f"{tx - rx} of {tx} pings -6 unanswered after the case")


# ----------------------------------------------------------------------------
# Neighbor Discovery (RFC 4861)

def case_nd6_hlim_254(env):
    """RFC 4861 7.1.1, 7.1.2: an NS or NA whose hop limit is not 255 may
    have crossed a router: silently discarded.  From a neighbour the stack
    has never heard of (its own address and MAC): an NS with hop limit 254
    for our address gets no NA, the same NS with 255 gets one (solicited,
    override, our MAC, to the MAC the NS gave).  Then an NA with hop limit
    254 answering the stack's own solicitation teaches it nothing (the
    echo reply waiting on it stays queued); with 255 it does."""
    IPv6, NS, NA = SC["IPv6"], SC["ICMPv6ND_NS"], SC["ICMPv6ND_NA"]
    SLL, TLL = SC["ICMPv6NDOptSrcLLAddr"], SC["ICMPv6NDOptDstLLAddr"]
    me, mac = "fd00:77::66", "02:00:00:00:66:66"
    group, gmac = solicited_node(env.stack_ip6)

    def ns(hlim):
        return IPv6(src=me, dst=group, hlim=hlim) / NS(tgt=env.stack_ip6) / SLL(lladdr=mac)

    def na_to_me(fr):
        return icmp6_type(fr) == ND_NA and fr[IPv6].dst == me

    env.wire.send6(ns(254), dst_mac=gmac, src_mac=mac)
    expect6_none(env, "NS with hop limit 254", na_to_me)
    env.wire.send6(ns(255), dst_mac=gmac, src_mac=mac)
    fr = expect6(env, "NA to the same NS with hop limit 255", na_to_me)
    na, tll = fr[NA], fr.getlayer(TLL)
    check(fr.dst == mac and fr[IPv6].src == env.stack_ip6 and fr[IPv6].hlim == 255,
          f"NA {fr.dst} {fr[IPv6].src} hlim {fr[IPv6].hlim}: want to {mac}, from "
          f"{env.stack_ip6}, hop limit 255")
    check(na.tgt == env.stack_ip6 and (na.R, na.S, na.O) == (0, 1, 1),
          f"NA target {na.tgt} R/S/O {na.R}{na.S}{na.O}: want {env.stack_ip6}, 011")
    check(tll is not None and tll.lladdr == env.stack_mac,
          f"NA target link-layer address {tll.lladdr if tll else None}, want {env.stack_mac}")
    say(f"NS hop limit 254: nothing; 255: NA S+O to {mac} with {env.stack_mac}")

    me2, mac2 = "fd00:77::67", "02:00:00:00:67:67"
    ident = random.getrandbits(16)
    env.wire.send6(IPv6(src=me2, dst=env.stack_ip6) / echo_req(ident),
                   src_mac=mac2)
    expect6(env, f"NS for {me2} (to answer its echo request)", ns_for(me2))

    def na(hlim):
        return (IPv6(src=me2, dst=env.stack_ip6, hlim=hlim) /
                NA(R=0, S=1, O=1, tgt=me2) / TLL(lladdr=mac2))

    env.wire.send6(na(254), src_mac=mac2)
    expect6_none(env, "echo reply after an NA with hop limit 254", reply_to(me2, ident), 0.5)
    env.wire.send6(na(255), src_mac=mac2)
    fr = expect6(env, "echo reply once an NA with hop limit 255 came", reply_to(me2, ident))
    check(fr.dst == mac2, f"echo reply to {fr.dst}, want {mac2} (the NA's MAC)")
    say(f"NA hop limit 254: the reply to {me2} waits; 255: sent to {mac2}")
    env.expect_counters = {"nd6_drop_hop_limit": 2, "nd6_tx_na": (">=", 1),
                           "nd6_rx_na_unknown": 0}


def case_nd6_unsolicited_na(env):
    """RFC 4861 7.2.5: an NA for an address with no cache entry is silently
    discarded.  Unsolicited NAs (Override set, Solicited clear) for an
    address the stack never asked about, to all nodes and to us, create no
    entry: when the stack must reach that address (to answer its echo
    request) it solicits it first, and sends nothing before the answer."""
    IPv6, NA, TLL = SC["IPv6"], SC["ICMPv6ND_NA"], SC["ICMPv6NDOptDstLLAddr"]
    who, mac = "fd00:77::55", "02:00:00:00:55:55"
    for dst, dmac in ((ALL_NODES, ALL_NODES_MAC), (env.stack_ip6, None)):
        env.wire.send6(IPv6(src=who, dst=dst, hlim=255) / NA(R=0, S=0, O=1, tgt=who) /
                       TLL(lladdr=mac), dst_mac=dmac, src_mac=mac)
    ident = random.getrandbits(16)
    env.wire.send6(IPv6(src=who, dst=env.stack_ip6) / echo_req(ident),
                   src_mac=mac)
    first = expect6(env, f"NS for {who} or an echo reply to it",
                    lambda fr: ns_for(who)(fr) or reply_to(who, ident)(fr))
    check(icmp6_type(first) == ND_NS,
          f"the stack answered {who} at {first.dst} without soliciting it: it learned "
          "from an unsolicited NA")
    group, gmac = solicited_node(who)
    check(first[SC["IPv6"]].dst == group and first.dst == gmac,
          f"NS to {first[SC['IPv6']].dst} ({first.dst}), want {group} ({gmac})")
    env.wire.send6(IPv6(src=who, dst=env.stack_ip6, hlim=255) / NA(R=0, S=1, O=1, tgt=who) /
                   TLL(lladdr=mac), src_mac=mac)
    fr = expect6(env, "echo reply once the solicited NA came", reply_to(who, ident))
    check(fr.dst == mac, f"echo reply to {fr.dst}, want {mac}")
    say(f"2 unsolicited NAs for {who}: not learned (NS to {group} first); solicited NA: "
        f"reply to {mac}")
    env.expect_counters = {"nd6_rx_na_unknown": 2, "nd6_drop_hop_limit": 0}


# ----------------------------------------------------------------------------
# Extension headers (RFC 8200 4, RFC 8504 5.3, RFC 5095)

def case_ip6_ext_chain_long(env):
    """RFC 8504 5.3 lets a host bound the extension-header chain; ours is
    US_IP6_EXT_MAX headers and US_IP6_EXT_BYTES bytes (ip6_ext.c), and past
    either the packet is dropped without an answer.  One header more than
    the bound, and one byte-bound's worth plus 16: no reply, no error.  At
    each bound exactly: the echo reply."""
    stack6 = env.stack_ip6
    too_many = [8] * (US_IP6_EXT_MAX + 1)
    too_long = [8, US_IP6_EXT_BYTES + 8]
    for what, sizes in ((f"{len(too_many)} extension headers", too_many),
                        (f"{sum(too_long)} bytes of extension headers", too_long)):
        ident = random.getrandbits(16)
        env.wire.send6(chain_packet(K6, stack6, sizes, echo_req(ident)))
        expect6_none(env, f"echo request behind {what}", to(K6))
        say(f"  echo request behind {what}: nothing")
    for what, sizes in ((f"{US_IP6_EXT_MAX} extension headers", [8] * US_IP6_EXT_MAX),
                        (f"{US_IP6_EXT_BYTES} bytes of extension headers",
                         [8, US_IP6_EXT_BYTES - 8])):
        ident = random.getrandbits(16)
        data = bytes(random.getrandbits(8) for _ in range(32))
        env.wire.send6(chain_packet(K6, stack6, sizes,
                                    echo_req(ident, data=data)))
        fr = expect6(env, f"echo reply behind {what}", reply_to(K6, ident))
        check(bytes(fr[SC["ICMPv6EchoReply"]].data) == data, "echo reply data differs")
        say(f"  echo request behind {what}: answered")
    env.expect_counters = {"ip6_ext_drop_too_many": 1, "ip6_ext_drop_too_long": 1,
                           "icmp6_param_problem_out": 0}


def case_ip6_rh0(env):
    """RFC 5095 3: a routing header type 0 is one a node does not
    recognise; Segments Left 1: the packet is discarded and a parameter
    problem, code 0, points at the Routing Type field (RFC 8200 4.4).  No
    echo reply.  Segments Left 0: the header is ignored, the echo
    answered."""
    IPv6, RH = SC["IPv6"], SC["IPv6ExtHdrRouting"]
    stack6, ident = env.stack_ip6, random.getrandbits(16)
    pkt = bytes(IPv6(src=K6, dst=stack6) /
                RH(type=0, segleft=1, addresses=["fd00:77::99"]) /
                echo_req(ident, data=b"rh0"))
    env.wire.send6(pkt)
    fr = expect6(env, "parameter problem for RH0", to(K6))
    raw = bytes(fr[IPv6].payload)
    check(fr[IPv6].nh == IPPROTO_ICMPV6 and raw[0] == ICMP6_PARAM_PROB,
          f"the stack sent {fr.summary()}, want a parameter problem")
    code, ptr = raw[1], int.from_bytes(raw[4:8], "big")
    check(code == 0 and ptr == 40 + 2,
          f"parameter problem code {code} pointer {ptr}: want code 0 (erroneous header "
          "field), pointer 42 (the Routing Type, 2 bytes into the header after the fixed 40)")
    check(raw[8:] == pkt[:ICMP6_QUOTE_MAX],
          f"the quote is {len(raw) - 8} bytes not matching the {len(pkt)}-byte packet")
    check(fr[IPv6].src == stack6, f"error from {fr[IPv6].src}, want {stack6}")
    expect6_none(env, "echo reply to the RH0 packet", reply_to(K6, ident), 0.5)
    say(f"RH0, segments left 1: parameter problem code {code} pointer {ptr}, whole packet "
        "quoted, no echo reply")
    ident = random.getrandbits(16)
    env.wire.send6(IPv6(src=K6, dst=stack6) /
                   RH(type=0, segleft=0, addresses=["fd00:77::99"]) /
                   echo_req(ident, data=b"rh0-done"))
    expect6(env, "echo reply to RH0 with segments left 0", reply_to(K6, ident))
    say("RH0, segments left 0: ignored, echo answered")
    env.expect_counters = {"ip6_ext_drop_rh0": 1, "icmp6_param_problem_out": 1,
                           "ip6_ext_rh_ignored": 1, "icmp6_ratelimited": 0}


# ----------------------------------------------------------------------------
# Fragments (RFC 8200 4.5, RFC 5722)

def case_ip6_frag_overlap(env):
    """RFC 5722 4: when a fragment overlaps another, the whole datagram,
    fragments not yet received included, is silently discarded.  Tiny
    fragments of an echo request:
      a) a middle fragment rewriting bytes of the first, then a clean set
         completing the datagram under the same identification: nothing;
      b) a second first fragment, same range, other bytes (an overlap, not
         a duplicate), then the rest: nothing.
    Control: the same echo request fragmented cleanly is answered."""
    stack6 = env.stack_ip6
    ident = random.getrandbits(16)
    data = bytes(random.getrandbits(8) for _ in range(64))
    msg = icmp6_bytes(K6, stack6, echo_req(ident, data=data))   # 72 bytes

    def frag(fid, off, chunk, more):
        return fragment(K6, stack6, fid, off, chunk, more)

    ids = random.sample(range(1, 1 << 32), 3)
    variants = [
        ("a middle fragment rewriting the first's bytes 8..16, then the datagram "
         "completed cleanly", ids[0],
         [frag(ids[0], 0, msg[:16], True), frag(ids[0], 8, b"Z" * 16, True),
          frag(ids[0], 0, msg[:16], True), frag(ids[0], 16, msg[16:], False)]),
        ("a first fragment sent twice with other bytes, then the rest", ids[1],
         [frag(ids[1], 0, msg[:16], True),
          frag(ids[1], 0, msg[:4] + bytes(b ^ 0xFF for b in msg[4:8]) + msg[8:16], True),
          frag(ids[1], 16, msg[16:], False)]),
    ]
    for what, _, frags in variants:
        for fr in frags:
            env.wire.send6(fr)
        expect6_none(env, f"echo request in overlapping fragments ({what})", to(K6))
        say(f"  overlap ({what}): nothing")
    for fr in (frag(ids[2], 0, msg[:16], True), frag(ids[2], 16, msg[16:], False)):
        env.wire.send6(fr)
    fr = expect6(env, "echo reply to the same request fragmented cleanly", reply_to(K6, ident))
    check(bytes(fr[SC["ICMPv6EchoReply"]].data) == data, "echo reply data differs")
    say("  the same request in 2 clean fragments: answered")
    env.expect_counters = {"ip6_frag_in": 9, "ip6_frag_drop_overlap": 2,
                           "ip6_frag_drop_after_overlap": 3, "ip6_frag_reassembled": 1,
                           "ip6_frag_dup": 0}


# ----------------------------------------------------------------------------
# ICMPv6: Packet Too Big (RFC 8201), errors about TCP (RFC 4443, RFC 5927)

def big_echo(env, seq, size=1400):
    """A size-byte echo request from the kernel's address; its reply's
    frames (one, or fragments) and the reply's ICMPv6 bytes reassembled."""
    ident = 0x6b00 | seq
    data = bytes((seq + i) & 0xFF for i in range(size))
    env.wire.send6(SC["IPv6"](src=K6, dst=env.stack_ip6) /
                   echo_req(ident, seq, data))
    frames = env.wire.drain6(to(K6), first=2.0)
    check(frames, f"no answer to a {size}-byte echo request")
    Frag = SC["IPv6ExtHdrFragment"]
    if len(frames) == 1 and frames[0].getlayer(Frag) is None:
        fr = frames[0]
        check(reply_to(K6, ident, seq)(fr), f"the stack sent {fr.summary()}, want an echo reply")
        return frames, bytes(fr[SC["IPv6"]].payload)
    pieces = sorted((f[Frag].offset * 8, bytes(f[Frag].payload), f[Frag].m) for f in frames
                    if f.getlayer(Frag) is not None)
    check(len(pieces) == len(frames), "fragments mixed with whole packets")
    msg = b""
    for off, chunk, _ in pieces:
        check(off == len(msg), f"fragment at {off}, want {len(msg)}")
        msg += chunk
    check(pieces[-1][2] == 0 and msg[0] == ICMP6_ECHO_REPLY and msg[8:] == data,
          "the fragments do not make the echo reply")
    return frames, msg


def case_ip6_ptb_small(env):
    """RFC 8201 4: a Packet Too Big reporting an MTU below 1280 does not
    lower the path MTU below 1280; ours refuses it whole
    (icmp6_ptb_drop_small), so 1448-byte replies still go unfragmented.  A
    Packet Too Big with 1280 quoting our reply lowers the path MTU to the
    kernel: the next 1400-byte echo reply comes in fragments of at most
    1280 bytes (RFC 8200 5)."""
    IPv6, PTB, Raw = SC["IPv6"], SC["ICMPv6PacketTooBig"], SC["Raw"]
    router = "fd00:77::fe"
    frames, _ = big_echo(env, 1)
    check(len(frames) == 1 and len(frames[0][IPv6]) == 1448,
          f"1400-byte echo: {len(frames)} frame(s), want one 1448-byte packet")
    quote = bytes(frames[0][IPv6])[:ICMP6_QUOTE_MAX]

    def ptb(mtu):
        env.wire.send6(IPv6(src=router, dst=env.stack_ip6) / PTB(mtu=mtu) / Raw(quote))

    ptb(1000)
    expect6_none(env, "Packet Too Big 1000", lambda fr: fr[IPv6].dst == router, 0.3)
    frames, _ = big_echo(env, 2)
    check(len(frames) == 1 and len(frames[0][IPv6]) == 1448,
          f"after a PTB of 1000: {len(frames)} frame(s) for a 1400-byte echo, want one "
          "1448-byte packet (path MTU unchanged)")
    tx, rx, _, out = ei.ping(env, ["-6", "-s", "1400"], count=2, dst=env.stack_ip6)
    seen = env.wire.drain6(to(K6))
    whole = [f for f in seen if f.getlayer(SC["IPv6ExtHdrFragment"]) is None]
    check(rx == tx == 2, f"{tx - rx} of {tx} pings -6 -s 1400 unanswered after a PTB of 1000")
    check(len(whole) == len(seen) == 2, f"ping -6 -s 1400 after a PTB of 1000: {len(seen)} "
          f"frames, {len(whole)} unfragmented; want 2, 2")
    say("PTB 1000: refused; 1400-byte echoes still answered in one 1448-byte packet")
    ptb(1280)
    frames, msg = big_echo(env, 3)
    sizes = [len(f[IPv6]) for f in frames]
    check(len(frames) == 2 and max(sizes) <= 1280,
          f"after a PTB of 1280: frames of {sizes} bytes, want 2 fragments of at most 1280")
    tx, rx, _, _ = ei.ping(env, ["-6", "-s", "1400"], count=2, dst=env.stack_ip6)
    seen = env.wire.drain6(to(K6))
    check(rx == tx == 2, f"{tx - rx} of {tx} pings -6 -s 1400 unanswered after a PTB of 1280")
    check(len(seen) == 4 and all(f.getlayer(SC["IPv6ExtHdrFragment"]) for f in seen),
          f"ping -6 -s 1400 after a PTB of 1280: {len(seen)} frames, want 4 fragments")
    say(f"PTB 1280: the next 1400-byte echo reply in fragments of {sizes} bytes; "
        "ping -6 -s 1400 answered in fragments")
    env.expect_counters = {"icmp6_ptb_in": 2, "icmp6_ptb_drop_small": 1,
                           "icmp6_ptb_lowered": 1, "ip6_frag_out": 6}


def case_icmp6_error_unknown_conn(env):
    """RFC 4443 2.4 (a, b): errors about our packets go to the upper layer
    they name; none about a TCP connection that does not exist may do
    anything.  ICMPv6 destination unreachable (codes 0, 1, 3, 4), time
    exceeded and parameter problem, each quoting a TCP segment from our
    address and port to the kernel's, over IPv6 where we have no
    connection (one with an in-window sequence, one out of window), and one
    quoting too little to show a header: nothing answered, all counted
    (icmp6_rx_errors).  The seven that quote a whole TCP header go to tcp/
    (icmp6_errors_to_tcp), which finds no connection for any of them
    (tcp icmp_ignored_no_conn); the 16-byte quote stays in icmp6.c
    (icmp6_error_unhandled).  The ports are those of a live IPv4
    connection, which must see none of it: it answers after."""
    IPv6, TCP, Raw = SC["IPv6"], SC["TCP"], SC["Raw"]
    Unreach, TimeEx, Param = (SC["ICMPv6DestUnreach"], SC["ICMPv6TimeExceeded"],
                              SC["ICMPv6ParamProblem"])
    q = aw.Peer(env)
    q.connect()
    q.echo_ok("first")
    q.settle()
    stack6 = env.stack_ip6

    def quote(seq):
        return bytes(IPv6(src=stack6, dst=K6, nh=6, plen=20) /
                     TCP(sport=q.dport, dport=q.sport, seq=seq, ack=q.snd_nxt, flags="A"))

    in_win, far = quote(q.rcv_nxt), quote(aw.seq_add(q.rcv_nxt, 1 << 30))
    errors = [(f"destination unreachable code {c}", Unreach(code=c), in_win) for c in (0, 1, 3, 4)]
    errors += [("destination unreachable code 4, out of window", Unreach(code=4), far),
               ("time exceeded", TimeEx(code=0), in_win),
               ("parameter problem at the next header", Param(code=1, ptr=6), in_win),
               ("destination unreachable quoting 16 bytes", Unreach(code=1), in_win[:16])]
    for what, err, body in errors:
        env.wire.send6(IPv6(src=K6, dst=stack6) / err / Raw(body))
    expect6_none(env, "ICMPv6 errors about a connection that does not exist", to(K6))
    q.expect_none("the IPv4 connection on the same ports")
    q.echo_ok("after")
    say(f"{len(errors)} ICMPv6 errors quoting TCP over IPv6 to no connection: nothing sent, "
        "the IPv4 connection on the same ports answers")
    env.expect_counters = {"icmp6_rx_errors": len(errors), "icmp6_drop_bad_csum": 0,
                           "icmp_errors_to_tcp": 0, "icmp6_error_suppressed": 0,
                           "icmp6_errors_to_tcp": len(errors) - 1,
                           "tcp_icmp_ignored_no_conn": len(errors) - 1,
                           "tcp_icmp_soft_errors": 0, "tcp_icmp_hard_errors": 0,
                           "tcp_icmp_ignored_out_of_window": 0, "icmp6_error_unhandled": 1}


def echo_req_bytes(env, tag, pad):
    """A GET whose echo (the request itself) is pad bytes longer than bare."""
    return (f"GET /adv6/{tag} HTTP/1.1\r\nHost: [{env.stack_ip6}]\r\n"
            f"X-Pad: {'p' * pad}\r\n\r\n").encode()


def tcp_frames_to(env, p, quiet=0.3, first=2.0):
    """Every IPv6 frame the stack sends to p's address until quiet: p's
    segments, and any fragment (none may be: TCP never relies on them)."""
    frames = env.wire.drain6(to(K6), quiet=quiet, first=first)
    frags = [f for f in frames if f.getlayer(SC["IPv6ExtHdrFragment"]) is not None]
    check(not frags, f"{len(frags)} IPv6 fragments to the kernel: TCP segments fragmented")
    return [aw.Seg(f) for f in frames if p.mine(f)]


def echo_sizes(env, p, tag, pad=3000):
    """A request echoed byte-exact; the payload sizes of its response's
    segments."""
    segs, req = [], echo_req_bytes(env, tag, pad)
    body = p.exchange(req, segs=segs)
    check(body == req, f"echo of {tag} differs ({len(body)} bytes for {len(req)})")
    return [len(s.data) for s in segs]


def held_response(env, p, tag, pad=3000):
    """A request whose response is read but not acknowledged: all in flight.
    Its segments (the first quotable as sent) and SND.UNA."""
    segs, req = [], echo_req_bytes(env, tag, pad)
    una = p.rcv_nxt
    p.send_data(req)
    resp = p.read_response(ack=False, segs=segs)
    check(resp.endswith(req), f"response to {tag} does not end with the request")
    return segs, una, resp


def case_icmp6_error_live_conn(env):
    """RFC 5927 4.1 over IPv6: tcp/ believes an ICMPv6 error only if the
    sequence number it quotes is in flight (SND.UNA =< seq < SND.MAX).  On
    a live connection (Peer6, timestamps on, so a full segment carries
    1440 - 12 = 1428 bytes):
      a) destination unreachable code 4 quoting a sequence never sent, and
         a Packet Too Big of 1280 quoting a segment already acknowledged:
         ignored; the next echo comes byte-exact in 1428-byte segments, not
         fragmented, none dropped for the path MTU (a Packet Too Big
         quoting TCP lowers the path MTU only once TCP believed it);
      b) Packet Too Big of 1280 quoting the first segment of a response in
         flight: the MSS drops to 1280 - 60 - 12 = 1208 and the flight is
         resent from SND.UNA at once in segments of at most 1208 bytes,
         the same bytes; the next echo comes byte-exact in 1208s;
      c) destination unreachable code 1 (administratively prohibited)
         quoting a segment in flight: soft, the connection lives (no RST,
         the next echo exact)."""
    IPv6, Raw = SC["IPv6"], SC["Raw"]
    Unreach, PTB, TCP = SC["ICMPv6DestUnreach"], SC["ICMPv6PacketTooBig"], SC["TCP"]
    router, stack6 = "fd00:77::fe", env.stack_ip6
    p = aw.Peer6(env)
    p.connect(options=[("MSS", 1460), ("SAckOK", b""), ("WScale", 7),
                       ("Timestamp", (1, 0))])
    check(p.ts_ok, "timestamps not negotiated")
    segs = []
    p.exchange(echo_req_bytes(env, "first", 3000), segs=segs)
    sizes = [len(s.data) for s in segs]
    check(max(sizes) == 1428, f"first echo in segments of {sizes}, want full ones of 1428")
    acked = bytes(segs[0].ip[IPv6])[:ICMP6_QUOTE_MAX]
    p.settle()

    def error(icmp, quote):
        env.wire.send6(IPv6(src=router, dst=stack6) / icmp / Raw(quote))

    una = p.rcv_nxt   # nothing in flight: SND.UNA == SND.MAX
    never = bytes(IPv6(src=stack6, dst=K6, nh=6, plen=20) /
                  TCP(sport=p.dport, dport=p.sport, seq=aw.seq_add(una, 100000),
                      ack=p.snd_nxt, flags="A"))
    error(Unreach(code=4), never)
    error(PTB(mtu=1280), acked)
    p.expect_none("unreachable and Packet Too Big quoting sequences not in flight")
    expect6_none(env, "errors out of window", lambda fr: fr[IPv6].dst == router, 0.1)
    sizes = echo_sizes(env, p, "after-out-of-window")
    check(max(sizes) == 1428, f"after errors out of window: segments of {sizes}, want 1428s "
          "(MSS unchanged)")
    say(f"a) unreachable code 4 (seq +100000) and PTB 1280 (an acknowledged segment): "
        f"ignored, echo exact in {sizes}")

    p.settle()
    segs, una, resp = held_response(env, p, "ptb")
    check(max(len(s.data) for s in segs) == 1428 and segs[0].seq == una,
          f"held response {segs}: want 1428-byte segments from {una}")
    error(PTB(mtu=1280), bytes(segs[0].ip[IPv6])[:ICMP6_QUOTE_MAX])
    t0, upto, rs = time.monotonic(), una, []
    while aw.seq_diff(p.rcv_nxt, upto) > 0:
        s = p.expect("the flight resent after a Packet Too Big quoting it", timeout=1.0,
                     pred=lambda s: bool(s.data))
        off = aw.seq_diff(s.seq, una)
        check(s.seq == upto and len(s.data) <= 1208,
              f"resent after PTB 1280: {s} at +{off}; want the flight from SND.UNA {una} "
              f"in order, at most 1208 bytes a segment")
        check(resp[off:off + len(s.data)] == s.data, f"resent bytes at +{off} differ")
        upto = aw.seq_add(upto, len(s.data))
        rs.append(len(s.data))
    p.send(flags=aw.A)
    delay_ms = (s.t - t0) * 1000
    check(rs[0] == 1208, f"resent after PTB 1280 in segments of {rs}: want full 1208s")
    expect6_none(env, "IPv6 fragments to the kernel (TCP never relies on them)",
                 lambda fr: fr.getlayer(SC["IPv6ExtHdrFragment"]) is not None, 0.05)
    sizes = echo_sizes(env, p, "after-ptb")
    check(max(sizes) == 1208, f"after PTB 1280: segments of {sizes}, want 1208s")
    say(f"b) PTB 1280 quoting SND.UNA: flight resent in {rs} after "
        f"{delay_ms:.0f} ms; next echo in {sizes}")

    p.settle()
    segs, una, _ = held_response(env, p, "prohibited", pad=100)
    error(Unreach(code=1), bytes(segs[0].ip[IPv6])[:ICMP6_QUOTE_MAX])
    seen = tcp_frames_to(env, p, quiet=0.2, first=0.2)
    check(not any(s.flags & aw.R for s in seen), f"RST after a soft error: {seen}")
    p.send(flags=aw.A)
    sizes = echo_sizes(env, p, "after-prohibited")
    say(f"c) unreachable code 1 quoting SND.UNA {una}: the connection lives, echo "
        f"exact in {sizes}")
    env.expect_counters = {"icmp6_ptb_in": 2, "icmp6_rx_errors": 2,
                           "icmp6_errors_to_tcp": 4, "icmp6_ptb_lowered": 1,
                           "ip6_drop_too_big": 0, "ip6_frag_out": 0,
                           "tcp_icmp_ignored_out_of_window": 2,
                           "tcp_icmp_frag_needed_applied": 1, "tcp_pmtu_resends": 1,
                           "tcp_icmp_soft_errors": 1, "tcp_icmp_hard_errors": 0,
                           "tcp_icmp_ignored_no_conn": 0, "icmp6_error_unhandled": 0,
                           "icmp6_ptb_drop_tcp_ignored": 1}


CASES = {
    "nd6-hlim-254": case_nd6_hlim_254,
    "nd6-unsolicited-na": case_nd6_unsolicited_na,
    "ip6-ext-chain-long": case_ip6_ext_chain_long,
    "ip6-rh0": case_ip6_rh0,
    "ip6-frag-overlap": case_ip6_frag_overlap,
    "ip6-ptb-small": case_ip6_ptb_small,
    "icmp6-error-unknown-conn": case_icmp6_error_unknown_conn,
    "icmp6-error-live-conn": case_icmp6_error_live_conn,
}
