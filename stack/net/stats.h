/* stack/net/stats.h: the engine's counters below TCP: the network layers'
 * and, at the end, the engine's own (steer_*, pub_*, migrate_*), kept in
 * struct us_net.
 *
 * Every packet the stack drops is freed and counted under a name that says
 * why ("dropped: ..." in its description); the other counters say what went
 * through.  us_engine_print_stats() prints these, then TCP_COUNTERS.
 */
#ifndef US_STACK_STATS_H
#define US_STACK_STATS_H

#include <stdint.h>

/* Types */

/* X(name, description) */
#define STACK_COUNTERS(X) \
	X(eth_rx_frames, "Ethernet frames received") \
	X(eth_tx_frames, "Ethernet frames handed to the port") \
	X(eth_drop_short, "dropped: frame shorter than an Ethernet header") \
	X(eth_drop_not_for_us, "dropped: destination MAC neither ours, broadcast, nor an IPv6 group we joined") \
	X(eth_drop_unknown_type, "dropped: ethertype neither IPv4, ARP, nor IPv6 with [ip6] enable = on") \
	X(eth_drop_no_headroom, "dropped: no headroom for the Ethernet header") \
	X(arp_rx_requests, "ARP requests received") \
	X(arp_rx_replies, "ARP replies received") \
	X(arp_tx_requests, "ARP requests sent") \
	X(arp_tx_replies, "ARP replies sent") \
	X(arp_tx_gratuitous, "gratuitous ARPs sent") \
	X(arp_rx_other_target, "ARP packets for another address (learned from only)") \
	X(arp_drop_bad, "dropped: malformed ARP (types, lengths, opcode, sender)") \
	X(arp_drop_pending_full, "dropped: per-hop ARP pending queue full") \
	X(arp_drop_table_full, "dropped: ARP table full") \
	X(arp_drop_unresolved, "dropped: queued for a next hop that never answered") \
	X(arp_drop_no_mbuf, "ARP requests/replies not sent: mbuf pool empty") \
	X(arp_timeouts, "next hops given up after ARP retries") \
	X(net_negative_advice, "TCP's negative advice: a next hop's ARP entry polled, ND entry made STALE") \
	X(net_negative_advice_none, "TCP's negative advice with no resolved next hop to doubt") \
	X(arp_expired, "ARP cache entries expired") \
	X(arp_entries, "ARP cache entries now (gauge)") \
	X(ip_rx_packets, "IPv4 packets received") \
	X(ip_tx_packets, "IPv4 packets sent (fragments counted once each)") \
	X(ip_drop_short, "dropped: shorter than an IPv4 header") \
	X(ip_drop_bad_version, "dropped: IP version not 4") \
	X(ip_drop_bad_ihl, "dropped: header length < 20 or beyond the frame") \
	X(ip_drop_bad_len, "dropped: total length beyond the frame or inside the header") \
	X(ip_drop_bad_csum, "dropped: bad IPv4 header checksum") \
	X(ip_drop_not_for_us, "dropped: destination not ours (hosts do not forward)") \
	X(ip_drop_bad_src, "dropped: source address broadcast/multicast") \
	X(ip_drop_tcp_bcast, "dropped: TCP segment to a broadcast address (RFC 9293 MUST-57)") \
	X(ip_tcp_connect_bcast, "TCP connects refused: to a broadcast address (ENETUNREACH)") \
	X(ip_rx_ttl_zero, "accepted with TTL 0 (RFC 1122 3.2.1.7)") \
	X(ip_rx_options, "received with IP options (skipped)") \
	X(ip_frag_in, "fragments received") \
	X(ip_frag_reassembled, "datagrams reassembled") \
	X(ip_frag_drop, "dropped: fragments refused by reassembly (overlap, table full)") \
	X(ip_frag_dup, "dropped: exact duplicates of a fragment seen within the last second") \
	X(ip_frag_timeout, "dropped: fragments of datagrams not completed in time") \
	X(ip_frag_out, "fragments sent") \
	X(ip_drop_frag_fail, "dropped: fragmentation failed (no mbufs)") \
	X(ip_drop_df_too_big, "dropped: larger than the MTU with DF set") \
	X(gso_cut, "TCP segments of several MSS cut into frames (rte_gso)") \
	X(gso_frames, "frames those cuts made") \
	X(gso_by_nic, "TCP segments of several MSS handed to the NIC to cut (TSO)") \
	X(gso_drop_no_mbuf, "dropped: TCP segments not cut for want of mbufs") \
	X(gso_drop_not_cut, "dropped: TCP segments rte_gso refused to cut (larger than the MTU)") \
	X(gro_merged, "TCP segments coalesced into the one before them (rte_gro)") \
	X(ip_drop_no_route, "dropped: no route to destination") \
	X(ip_drop_no_headroom, "dropped: no headroom for the IPv4 header") \
	X(ip_drop_unknown_proto, "dropped: protocol neither TCP, UDP nor ICMP") \
	X(icmp_rx, "ICMP messages received") \
	X(icmp_echo_in, "ICMP echo requests received") \
	X(icmp_echo_out, "ICMP echo replies sent") \
	X(icmp_unreach_in, "ICMP destination unreachable received") \
	X(icmp_unreach_out, "ICMP destination unreachable sent") \
	X(icmp_errors_to_tcp, "ICMP errors passed to TCP") \
	X(icmp_drop_bad, "dropped: ICMP truncated or bad checksum") \
	X(icmp_drop_bcast_echo, "dropped: echo request to a broadcast address") \
	X(icmp_drop_unhandled, "dropped: ICMP type not handled") \
	X(icmp_error_suppressed, "ICMP errors not sent (RFC 1122 3.2.2: bcast, fragment, error)") \
	X(icmp_ratelimited, "ICMP errors not sent: rate limit") \
	X(icmp_drop_no_mbuf, "ICMP messages not sent: mbuf pool empty") \
	X(ip6_rx_packets, "IPv6 packets received") \
	X(ip6_tx_packets, "IPv6 packets sent by the layers above (fragments counted once each; ND's own under nd6_tx_*)") \
	X(ip6_drop_short, "dropped: shorter than an IPv6 header") \
	X(ip6_drop_bad_version, "dropped: IP version not 6") \
	X(ip6_drop_bad_len, "dropped: payload length beyond the frame, or headers beyond the first segment") \
	X(ip6_drop_not_for_us, "dropped: destination neither a usable address of ours nor a group we joined (hosts do not forward)") \
	X(ip6_drop_tentative, "dropped: destination an address of ours still under DAD (RFC 4862 5.4)") \
	X(ip6_drop_bad_src, "dropped: source address multicast or loopback") \
	X(ip6_rx_hop_limit_zero, "accepted with hop limit 0 (a host does not forward)") \
	X(ip6_rx_tcp, "TCP segments over IPv6 handed to TCP") \
	X(ip6_rx_no_next_header, "dropped: next header 59, nothing follows (RFC 8200 4.7)") \
	X(ip6_drop_unknown_proto, "dropped: unrecognized next header (parameter problem sent)") \
	X(ip6_drop_frag_nested, "dropped: a fragment header inside a reassembled datagram") \
	X(ip6_drop_no_route, "dropped: no IPv6 route to the destination") \
	X(ip6_drop_no_src, "dropped: no usable source address (DAD running or failed)") \
	X(ip6_drop_no_headroom, "dropped: no headroom for the IPv6 header") \
	X(ip6_drop_too_big, "dropped: beyond the path MTU and not to be fragmented, or a payload beyond 65535 bytes") \
	X(ip6_ext_drop_too_many, "dropped: more than US_IP6_EXT_MAX IPv6 extension headers") \
	X(ip6_ext_drop_too_long, "dropped: IPv6 extension headers beyond US_IP6_EXT_BYTES in all") \
	X(ip6_ext_drop_truncated, "dropped: an IPv6 extension header running past the payload") \
	X(ip6_ext_drop_hbh_not_first, "dropped: hop-by-hop options not right after the IPv6 header (parameter problem)") \
	X(ip6_ext_drop_opt_overrun, "dropped: an IPv6 option running past its options header") \
	X(ip6_ext_opt_skipped, "unrecognised IPv6 options skipped (action bits 00)") \
	X(ip6_ext_drop_opt_discard, "dropped: unrecognised IPv6 option, action bits 01 (silently)") \
	X(ip6_ext_drop_opt_icmp, "dropped: unrecognised IPv6 option, action bits 10 (parameter problem, multicast too)") \
	X(ip6_ext_drop_opt_icmp_unicast, "dropped: unrecognised IPv6 option, action bits 11 (parameter problem unless multicast)") \
	X(ip6_ext_rh_ignored, "IPv6 routing headers with Segments Left 0 ignored") \
	X(ip6_ext_drop_rh0, "dropped: routing header type 0 with Segments Left > 0 (RFC 5095, parameter problem)") \
	X(ip6_ext_drop_rh_segleft, "dropped: other routing header with Segments Left > 0: a host routes nothing (parameter problem)") \
	X(ip6_frag_in, "IPv6 fragments received (atomic ones included)") \
	X(ip6_frag_atomic, "IPv6 atomic fragments (offset 0, M clear) taken whole at once (RFC 6946)") \
	X(ip6_frag_reassembled, "IPv6 datagrams reassembled") \
	X(ip6_frag_dup, "dropped: IPv6 fragment identical to one held (RFC 8200 4.5)") \
	X(ip6_frag_drop_overlap, "IPv6 datagrams dropped whole: overlapping fragments (RFC 5722)") \
	X(ip6_frag_drop_after_overlap, "dropped: IPv6 fragment of a datagram dropped for an overlap, until its timeout") \
	X(ip6_frag_drop_inconsistent, "IPv6 datagrams dropped whole: a fragment past the last one's end, or two ends") \
	X(ip6_frag_drop_too_many, "IPv6 datagrams dropped whole: more than US_FRAG6_FRAGS fragments") \
	X(ip6_frag_drop_table_full, "dropped: IPv6 fragment with US_FRAG6_DGRAMS datagrams or US_FRAG6_HELD fragments held") \
	X(ip6_frag_drop_bad_len, "dropped: IPv6 fragment with M set, length not a multiple of 8 (parameter problem)") \
	X(ip6_frag_drop_too_big, "dropped: IPv6 fragment ending past 65535 bytes of payload (parameter problem)") \
	X(ip6_frag_drop_incomplete_chain, "dropped: first IPv6 fragment without the whole header chain (RFC 7112, parameter problem)") \
	X(ip6_frag_drop_empty, "dropped: IPv6 fragment with no data") \
	X(ip6_frag_drop_unusable, "dropped: IPv6 fragment shorter than its Payload Length, or its headers split or shared") \
	X(ip6_frag_timeout, "IPv6 datagrams abandoned 60 s after their first fragment came") \
	X(ip6_frag_timeout_icmp, "... of which the first fragment had come: Time Exceeded asked for") \
	X(ip6_frag_out, "IPv6 fragments built for sending") \
	X(ip6_frag_drop_out_fail, "dropped: IPv6 packet not fragmented (no mbufs, more fragments than room, MTU too small)") \
	X(icmp6_rx, "ICMPv6 messages received") \
	X(icmp6_drop_short, "dropped: ICMPv6 message shorter than 8 bytes") \
	X(icmp6_drop_bad_csum, "dropped: bad ICMPv6 checksum") \
	X(icmp6_drop_bad, "dropped: ICMPv6 error too short to quote an IPv6 header") \
	X(icmp6_drop_unhandled, "dropped: ICMPv6 type not handled (echo replies, unknown types)") \
	X(icmp6_echo_in, "ICMPv6 echo requests received") \
	X(icmp6_echo_out, "ICMPv6 echo replies sent") \
	X(icmp6_drop_echo_unspec, "dropped: echo request from :: (no one to answer)") \
	X(icmp6_rx_errors, "ICMPv6 destination unreachable, time exceeded, parameter problem received") \
	X(icmp6_errors_to_tcp, "ICMPv6 errors (packet too big among them) quoting a TCP segment of ours, handed to TCP") \
	X(icmp6_error_unhandled, "ICMPv6 errors quoting no TCP segment of ours (too short, another protocol, not from our address): counted only") \
	X(icmp6_ptb_in, "ICMPv6 packet too big received") \
	X(icmp6_ptb_lowered, "path MTUs lowered by a packet too big") \
	X(icmp6_ptb_not_lower, "packet too big not below the path MTU in use (a PTB never raises it)") \
	X(icmp6_ptb_drop_small, "dropped: packet too big reporting an MTU below 1280 (RFC 8201 4)") \
	X(icmp6_ptb_drop_not_ours, "dropped: packet too big quoting a packet not from our address") \
	X(icmp6_ptb_drop_tcp_ignored, "dropped: packet too big quoting a TCP segment tcp/ did not believe (no connection, or not in flight: RFC 5927)") \
	X(icmp6_unreach_out, "ICMPv6 destination unreachable sent") \
	X(icmp6_ptb_out, "ICMPv6 packet too big sent") \
	X(icmp6_time_exceeded_out, "ICMPv6 time exceeded sent") \
	X(icmp6_param_problem_out, "ICMPv6 parameter problem sent") \
	X(icmp6_error_suppressed, "ICMPv6 errors not sent (RFC 4443 2.4 e: about an error or redirect, to a group, from :: or a group)") \
	X(icmp6_ratelimited, "ICMPv6 errors not sent: rate limit") \
	X(icmp6_drop_no_mbuf, "ICMPv6 errors not sent: mbuf pool empty") \
	X(nd6_rx_ns, "neighbor solicitations received") \
	X(nd6_rx_na, "neighbor advertisements received") \
	X(nd6_tx_ns, "neighbor solicitations sent (DAD's included)") \
	X(nd6_tx_na, "neighbor advertisements sent in answer to a solicitation") \
	X(nd6_tx_unsolicited_na, "unsolicited neighbor advertisements sent (RFC 4861 7.2.6)") \
	X(nd6_drop_hop_limit, "dropped: NS/NA with hop limit not 255 (from beyond the link)") \
	X(nd6_drop_code, "dropped: NS/NA with ICMPv6 code not 0") \
	X(nd6_drop_short, "dropped: NS/NA shorter than 24 bytes") \
	X(nd6_drop_mcast_target, "dropped: NS/NA for a multicast target") \
	X(nd6_drop_bad_opt, "dropped: NS/NA option of length 0, past the end, or a bad link-layer address") \
	X(nd6_drop_unspec_sllao, "dropped: NS from :: with a source link-layer address") \
	X(nd6_drop_unspec_dst, "dropped: NS from :: not to a solicited-node group") \
	X(nd6_drop_solicited_mcast, "dropped: NA with the solicited flag to a multicast address") \
	X(nd6_rx_ns_other_target, "NS for an address not ours (ignored, not learned from)") \
	X(nd6_rx_ns_tentative, "NS from a unicast source for our tentative address (ignored, RFC 4862 5.4.3)") \
	X(nd6_copy_not_answered, "NS for our address seen as another engine's copy: learned from, not answered") \
	X(nd6_rx_na_unknown, "NA for a neighbour we have no entry for (not learned)") \
	X(nd6_rx_na_our_addr, "NA claiming an address of ours after DAD (ignored)") \
	X(nd6_rx_na_no_override, "NA with another MAC and no override flag (not believed)") \
	X(nd6_drop_na_no_tlla, "dropped: NA for an unresolved neighbour without its link-layer address") \
	X(nd6_drop_router, "dropped: router solicitation/advertisement or redirect (router discovery not implemented)") \
	X(nd6_drop_pending_full, "dropped: oldest packet waiting for a neighbour, the queue full") \
	X(nd6_drop_unresolved, "dropped: queued for a neighbour that never answered") \
	X(nd6_drop_evicted, "dropped: queued on a neighbour entry evicted for room") \
	X(nd6_drop_table_full, "dropped: no neighbour entry to be had") \
	X(nd6_drop_no_mbuf, "NS/NA not sent: mbuf pool empty or no headroom") \
	X(nd6_timeouts, "neighbours given up after MAX_MULTICAST_SOLICIT solicitations") \
	X(nd6_probe_failed, "neighbours given up after MAX_UNICAST_SOLICIT probes") \
	X(nd6_evicted, "neighbour entries evicted to make room") \
	X(nd6_entries, "neighbour cache entries now (gauge)") \
	X(dad_tx_ns, "DAD neighbor solicitations sent (RFC 4862 5.4.2)") \
	X(dad_ok, "addresses that passed DAD") \
	X(dad_duplicate, "addresses DAD found in use by another node (not used)") \
	X(udp_rx, "UDP datagrams received (both families)") \
	X(udp_drop_short, "dropped: shorter than a UDP header") \
	X(udp_drop_bad_len, "dropped: UDP length beyond the IP payload or < 8") \
	X(udp_drop_bad_csum, "dropped: bad UDP checksum") \
	X(udp_drop_no_port, "dropped: no socket on the port (ICMP or ICMPv6 port unreachable)") \
	X(udp6_rx, "UDP datagrams received over IPv6 (also in udp_rx)") \
	X(udp6_drop_zero_csum, "dropped: UDP over IPv6 with a zero checksum (RFC 8200 8.1)") \
	X(steer_rx_own, "frames received on this engine's queue and kept (several engines)") \
	X(steer_handoff_out, "frames handed off to the engine owning their connection") \
	X(steer_handoff_in, "frames received by hand-off from another engine") \
	X(steer_arp_copies, "ARP frames copied to the other engines") \
	X(steer_nd6_copies, "IPv6 Neighbor Solicitations and Advertisements copied to the other engines") \
	X(steer_drop_ring_full, "dropped: hand-off ring to the owner engine full") \
	X(steer_drop_no_mbuf, "ARP and ND copies not made: mbuf pool empty") \
	X(steer_rx_own_tcp, "TCP frames (or ICMP errors about TCP) that arrived on their owner's queue") \
	X(arp_copy_not_answered, "ARP requests for us seen as another engine's copy: learned, not answered") \
	X(pub_tfo_keys_sent, "TFO server secrets published to the other engines (writer engine)") \
	X(pub_tfo_keys_applied, "TFO server secrets taken from the writer engine") \
	X(pub_drop_inbox_full, "dropped: secret not published to an engine, its inbox full") \
	X(migrate_out, "connections migrated to another engine (us_migrate)") \
	X(migrate_in, "connections migrated in and queued on a listener's accept queue") \
	X(migrate_failed, "us_migrate calls refused, and migrated-in connections reset (no listener, accept queue full)") \
	X(migrate_redirected, "frames forwarded to the engine their connection migrated to") \
	X(migrate_held, "frames held while a returning connection's forwarded frames came back") \
	X(migrate_drop_hold_full, "dropped: frame of a returning connection beyond the hold queue") \
	X(migrate_markers, "drain markers passed on or returned home")

struct us_stack_stats {
#define US_STACK_X_FIELD(name, desc) uint64_t name;
	STACK_COUNTERS(US_STACK_X_FIELD)
#undef US_STACK_X_FIELD
};

#endif
