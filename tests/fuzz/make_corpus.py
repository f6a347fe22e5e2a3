#!/usr/bin/python3
"""tests/fuzz/make_corpus.py: seed corpora for the fuzz targets.

Writes tests/fuzz/corpus/<target>/ (run with the Debian python3-scapy:
/usr/bin/python3 tests/fuzz/make_corpus.py, from anywhere):
  fuzz_rx_frame     frames built with scapy, in the harness's input format
                    (see tests/fuzz/fuzz_rx_frame.c): one control byte, then
                    records [kind][len hi][len lo][bytes];
  fuzz_tcp_options  [flags byte] + TCP option bytes;
  fuzz_config       the shipped config/*.ini files.
"""
import os
import shutil
import struct
import sys

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, fragment
from scapy.layers.inet6 import (ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr,
                                ICMPv6PacketTooBig, IPv6, IPv6ExtHdrDestOpt,
                                IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                                IPv6ExtHdrRouting, fragment6)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUR_MAC, PEER_MAC = "02:00:00:00:00:02", "02:00:00:00:00:07"
OUR_IP, PEER_IP = "10.77.0.2", "10.77.0.7"
OUR_IP6, PEER_IP6 = "fd00:77::2", "fd00:77::7"
SNODE6 = "ff02::1:ff00:2"  # our solicited-node group
SYN_OPTS = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (100, 0)), ("NOP", None),
            ("WScale", 7)]

# Record kinds: checksum verdict in bits 0-1, "reply to the last frame" bit 2,
# two-segment mbuf chain bit 3.
SOFT, GOOD, BAD, REPLY, CHAIN = 0, 1, 2, 4, 8
SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def rec(kind, data):
    data = bytes(data)
    return struct.pack(">BH", kind, len(data)) + data


def reply(flags, wnd=65535, delta=0, payload=b""):
    return rec(REPLY, struct.pack(">BHb", flags, wnd, delta) + payload)


def eth(pkt):
    return Ether(src=PEER_MAC, dst=OUR_MAC) / pkt


def ip(l4, **kw):
    return eth(IP(src=PEER_IP, dst=OUR_IP, **kw) / l4)


def arp_request():
    return Ether(src=PEER_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=PEER_MAC, psrc=PEER_IP, pdst=OUR_IP)


def syn(sport=40000, payload=b""):
    return ip(TCP(sport=sport, dport=80, flags="S", seq=1000, options=SYN_OPTS) / payload)


def seeds_rx():
    ping = ip(ICMP(id=1, seq=1) / (b"x" * 56))
    big_ping = IP(src=PEER_IP, dst=OUR_IP) / ICMP(id=1, seq=2) / (b"y" * 3000)
    frags = [eth(f) for f in fragment(big_ping, fragsize=1480)]
    handshake = [rec(SOFT, arp_request()), rec(SOFT, syn()), reply(ACK)]
    s = {
        "arp_request": [rec(SOFT, arp_request())],
        "arp_reply": [rec(SOFT, Ether(src=PEER_MAC, dst=OUR_MAC) / ARP(
            op=2, hwsrc=PEER_MAC, psrc=PEER_IP, hwdst=OUR_MAC, pdst=OUR_IP))],
        "ping": [rec(SOFT, ping)],
        "ping_offload_good": [rec(GOOD, ping)],
        "ping_chain": [rec(SOFT | CHAIN, ping)],
        "ping_fragmented": [rec(SOFT, f) for f in frags],
        "ping_fragments_reversed": [rec(SOFT, f) for f in reversed(frags)],
        "udp": [rec(SOFT, ip(UDP(sport=5000, dport=9) / b"hello"))],
        "udp_bad_csum": [rec(BAD, ip(UDP(sport=5000, dport=9) / b"hello"))],
        "syn": [rec(SOFT, syn())],
        "syn_data": [rec(SOFT, syn(payload=b"GET / HTTP/1.0\r\n\r\n"))],
        "syn_closed_port": [rec(SOFT, ip(TCP(sport=40001, dport=81, flags="S")))],
        "ack_no_conn": [rec(SOFT, ip(TCP(sport=40002, dport=80, flags="A", seq=1, ack=1)))],
        "rst_no_conn": [rec(SOFT, ip(TCP(sport=40003, dport=80, flags="R", seq=1)))],
        "fin_no_conn": [rec(SOFT, ip(TCP(sport=40004, dport=80, flags="FA", seq=1, ack=1)))],
        # Whole exchanges: the harness fills in sequence numbers (REPLY).
        "handshake": handshake,
        "echo": handshake + [reply(ACK | PSH, payload=b"hello, userstack\n"), reply(ACK)],
        "echo_fin": handshake + [reply(ACK | PSH, payload=b"bye\n"), reply(ACK | FIN),
                                 reply(ACK)],
        "echo_rst": handshake + [reply(ACK | PSH, payload=b"data"), reply(RST)],
        "out_of_order": handshake + [reply(ACK, delta=20, payload=b"b" * 20),
                                     reply(ACK, payload=b"a" * 20)],
        "zero_window": handshake + [reply(ACK | PSH, wnd=0, payload=b"z" * 100)],
    }
    out = {}
    for name, recs in s.items():
        # Control byte: advance 2 ms; the _late variants jump 5 s first.
        out[name] = bytes([2]) + b"".join(recs)
        if name in ("handshake", "echo", "syn"):
            out[name + "_late"] = bytes([0x80 | 5]) + b"".join(recs)
    return out


def ip6(l4, dst=OUR_IP6, hlim=64):
    return Ether(src=PEER_MAC, dst=OUR_MAC) / IPv6(src=PEER_IP6, dst=dst, hlim=hlim) / l4


def ns6(hlim=255):
    """A Neighbor Solicitation for our address (RFC 4861 requires hop limit 255)."""
    return Ether(src=PEER_MAC, dst="33:33:ff:00:00:02") / IPv6(
        src=PEER_IP6, dst=SNODE6, hlim=hlim) / ICMPv6ND_NS(tgt=OUR_IP6) / \
        ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC)


def seeds_rx6():
    """IPv6: echo, neighbour discovery, extension headers, fragments, PTB."""
    ping6 = IPv6(src=PEER_IP6, dst=OUR_IP6) / ICMPv6EchoRequest(id=1, seq=1, data=b"x" * 56)
    big6 = IPv6(src=PEER_IP6, dst=OUR_IP6) / IPv6ExtHdrFragment() / ICMPv6EchoRequest(
        id=1, seq=2, data=b"y" * 3000)
    frags6 = [Ether(src=PEER_MAC, dst=OUR_MAC) / f for f in fragment6(big6, 1280)]
    ns = ns6()
    na = ip6(ICMPv6ND_NA(tgt=PEER_IP6, R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=PEER_MAC),
             hlim=255)
    s = {
        "ping6": [rec(SOFT, Ether(src=PEER_MAC, dst=OUR_MAC) / ping6)],
        "ping6_chain": [rec(SOFT | CHAIN, Ether(src=PEER_MAC, dst=OUR_MAC) / ping6)],
        "ping6_fragmented": [rec(SOFT, f) for f in frags6],
        "ping6_fragments_reversed": [rec(SOFT, f) for f in reversed(frags6)],
        "ns6": [rec(SOFT, ns)],
        "ns6_then_na": [rec(SOFT, ns), rec(SOFT, na)],
        "ns6_bad_hlim": [rec(SOFT, ns6(hlim=254))],
        "ext6_hbh_dest": [rec(SOFT, ip6(IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() /
                                        ICMPv6EchoRequest(id=2, seq=1)))],
        "ext6_rh0": [rec(SOFT, ip6(IPv6ExtHdrRouting(type=0, segleft=1, addresses=[PEER_IP6]) /
                                   ICMPv6EchoRequest(id=3, seq=1)))],
        "udp6": [rec(SOFT, ip6(UDP(sport=5000, dport=9) / b"hello"))],
        # TCP over IPv6: a SYN to the listener (also behind a hop-by-hop
        # header, and with data), to a closed port, an ACK for nothing, and
        # a Packet Too Big quoting a segment of ours.
        "syn6": [rec(SOFT, ip6(TCP(sport=40000, dport=80, flags="S", seq=1000,
                                   options=SYN_OPTS)))],
        "syn6_hbh_data": [rec(SOFT, ip6(IPv6ExtHdrHopByHop() / TCP(
            sport=40005, dport=80, flags="S", seq=1000, options=SYN_OPTS) / b"GET / HTTP/1.0\r\n\r\n"))],
        "syn6_closed_port": [rec(SOFT, ip6(TCP(sport=40001, dport=81, flags="S")))],
        "ack6_no_conn": [rec(SOFT, ip6(TCP(sport=40002, dport=80, flags="A", seq=1, ack=1)))],
        "ptb6_tcp": [rec(SOFT, ip6(TCP(sport=40006, dport=80, flags="S", seq=1000,
                                       options=SYN_OPTS))),
                     rec(SOFT, ip6(ICMPv6PacketTooBig(mtu=1280) / bytes(
                         IPv6(src=OUR_IP6, dst=PEER_IP6) / TCP(sport=80, dport=40006,
                                                                flags="SA", seq=1, ack=1001))))],
        "ptb6": [rec(SOFT, ip6(ICMPv6PacketTooBig(mtu=1280) / bytes(
            IPv6(src=OUR_IP6, dst=PEER_IP6) / ICMPv6EchoRequest(id=1, seq=1, data=b"z" * 64))))],
    }
    return {name: bytes([2]) + b"".join(recs) for name, recs in s.items()}


def seeds_options():
    mss = b"\x02\x04\x05\xb4"
    return {
        "syn_linux": bytes([SYN]) + mss + b"\x04\x02\x08\x0a\x00\x00\x00\x64\x00\x00\x00\x00"
        b"\x01\x03\x03\x07",
        "syn_mss": bytes([SYN]) + mss,
        "ack_ts": bytes([ACK]) + b"\x01\x01\x08\x0a\x00\x00\x01\x00\x00\x00\x00\x64",
        "ack_sack": bytes([ACK]) + b"\x01\x01\x05\x0a\x00\x00\x10\x00\x00\x00\x20\x00",
        "syn_ws_15": bytes([SYN]) + b"\x01\x03\x03\x0f",
        "bad_len": bytes([SYN]) + b"\x02\x00\x05\xb4",
        "eol": bytes([SYN]) + b"\x00\x02\x04\x05",
    }


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    print(f"{d}: {len(seeds)} seeds", file=sys.stderr)


def main():
    write("fuzz_rx_frame", {**seeds_rx(), **seeds_rx6()})
    write("fuzz_tcp_options", seeds_options())
    d = os.path.join(HERE, "corpus", "fuzz_config")
    os.makedirs(d, exist_ok=True)
    cfgdir = os.path.join(ROOT, "config")
    inis = sorted(f for f in os.listdir(cfgdir) if f.endswith(".ini"))
    for f in inis:
        shutil.copy(os.path.join(cfgdir, f), os.path.join(d, f))
    print(f"{d}: {len(inis)} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
