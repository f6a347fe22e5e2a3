/* tests/sim/check_rx.c: a segment inside the window is taken whole.
 *
 * When an engine takes a data segment from its NIC queue that starts at or
 * before RCV.NXT and ends within the right edge the receiver advertised
 * (RCV.NXT .. RCV.ADV, read from its TCB at that moment), then once the
 * instant has settled RCV.NXT must have reached the segment's end (RFC
 * 9293 3.10.7.4: acceptable text is delivered; 3.8.6.2.2: what the window
 * offers, the receiver takes).  RCV.NXT and the right edge only grow in
 * between, so the segment stays acceptable whatever the engine processes
 * first.  Left out, because the stack rightly refuses them or may: text
 * after the application closed, after the peer's FIN, an ACK the RFCs
 * reject (beyond SND.MAX, or older than the window), and a timestamp
 * older than TS.Recent (PAWS).  A stall that any lossy path would
 * explain is caught here at the segment that started it.  Both families:
 * IPv4 and IPv6's fixed header (the stacks send no extension headers).
 */
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/sim/world.h"

struct rx_pending {
	unsigned stack, epoch;
	struct us_in6 lip, rip;
	uint16_t lport, rport;
	uint32_t iss, seq, end, nxt0, adv0;
};

struct sim_rx_check {
	unsigned n, cap;
	struct rx_pending *p;
};

void sim_rx_check_init(struct sim_world *w)
{
	w->rxcheck = calloc(1, sizeof(*w->rxcheck));
	if (w->rxcheck == NULL)
		sim_fail(w, "out of memory");
}

void sim_rx_check_free(struct sim_world *w)
{
	if (w->rxcheck != NULL)
		free(w->rxcheck->p);
	free(w->rxcheck);
	w->rxcheck = NULL;
}

static struct tcp_conn *conn_of(struct sim_world *w, unsigned stack, const struct us_in6 *lip,
				uint16_t lport, const struct us_in6 *rip, uint16_t rport)
{
	for (unsigned k = 0; k < w->plan.stack[stack].engines; k++) {
		struct tcp_conn *c = tcp_table_lookup(us_engine_tcp(w->st[stack].eng[k].e), lip, lport,
						      rip, rport);

		if (c != NULL)
			return c;
	}
	return NULL;
}

/* TSval of the timestamp option, if the header has one. */
static bool tsval_of(const struct rte_tcp_hdr *th, uint32_t *tsval)
{
	const uint8_t *o = (const uint8_t *)(th + 1);
	unsigned len = (unsigned)(th->data_off >> 4) * 4 - sizeof(*th);

	for (unsigned i = 0; i < len;) {
		if (o[i] == 0)
			break;
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2 || i + o[i + 1] > len)
			break;
		if (o[i] == 8 && o[i + 1] == 10) {
			memcpy(tsval, o + i + 2, 4);
			*tsval = rte_be_to_cpu_32(*tsval);
			return true;
		}
		i += o[i + 1];
	}
	return false;
}

/* Whether c must take the whole of [seq, end) with this ACK and TSval. */
static bool must_take(const struct tcp_conn *c, uint32_t seq, uint32_t end, uint32_t ack,
		      bool has_ts, uint32_t tsval)
{
	uint32_t max_wnd = RTE_MAX(c->max_snd_wnd, c->snd_wnd);

	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 && c->state != TCP_FIN_WAIT_2)
		return false;
	if (c->app_closed || c->fin_rcvd)
		return false;
	if (SEQ_GT(ack, c->snd_max) || SEQ_LT(ack, c->snd_una - max_wnd))
		return false;
	if (c->ts_ok && (!has_ts || SEQ_LT(tsval, c->ts_recent)))
		return false;
	return SEQ_LEQ(seq, c->rcv_nxt) && SEQ_GT(end, c->rcv_nxt) && SEQ_LEQ(end, c->rcv_adv);
}

static void pending_add(struct sim_world *w, const struct rx_pending *p)
{
	struct sim_rx_check *x = w->rxcheck;

	if (x->n == x->cap) {
		unsigned cap = x->cap ? 2 * x->cap : 64;
		struct rx_pending *np = realloc(x->p, cap * sizeof(*np));

		if (np == NULL)
			sim_fail(w, "out of memory");
		x->p = np;
		x->cap = cap;
	}
	x->p[x->n++] = *p;
}

/* The TCP segment of frame m over IPv4 (not a fragment) or IPv6 (the sim
 * makes no extension headers): its addresses as tcp/ holds them, its
 * header and its payload's length.  False for anything else. */
static bool segment_of(const struct rte_mbuf *m, struct us_in6 *src, struct us_in6 *dst,
		       const struct rte_tcp_hdr **th, uint32_t *payload)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint32_t len = rte_pktmbuf_data_len(m), hlen, tot, doff;

	if (len < sizeof(*eh) + sizeof(struct rte_ipv4_hdr) + sizeof(**th))
		return false;
	if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);

		if (ip->next_proto_id != IPPROTO_TCP ||
		    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
			return false;
		hlen = (uint32_t)(ip->version_ihl & 0xf) * 4;
		tot = rte_be_to_cpu_16(ip->total_length);
		*src = us_in6_of_v4(rte_be_to_cpu_32(ip->src_addr));
		*dst = us_in6_of_v4(rte_be_to_cpu_32(ip->dst_addr));
		if (hlen < sizeof(*ip))
			return false;
	} else if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eh + 1);

		if (len < sizeof(*eh) + sizeof(*ip) + sizeof(**th) || ip->proto != IPPROTO_TCP)
			return false;
		hlen = sizeof(*ip);
		tot = hlen + rte_be_to_cpu_16(ip->payload_len);
		memcpy(src->b, ip->src_addr, sizeof(src->b));
		memcpy(dst->b, ip->dst_addr, sizeof(dst->b));
	} else {
		return false;
	}
	if (sizeof(*eh) + hlen + sizeof(**th) > len || tot > len - sizeof(*eh))
		return false;
	*th = (const struct rte_tcp_hdr *)((const uint8_t *)(eh + 1) + hlen);
	doff = (uint32_t)((*th)->data_off >> 4) * 4;
	if (doff < sizeof(**th) || hlen + doff >= tot)
		return false;
	*payload = tot - hlen - doff;
	return true;
}

void sim_rx_check_frame(struct sim_world *w, unsigned stack, const struct rte_mbuf *m)
{
	const struct rte_tcp_hdr *th;
	uint32_t seq, len, tsval = 0;
	struct us_in6 lip, rip;
	struct tcp_conn *c;
	bool has_ts;

	if (!segment_of(m, &rip, &lip, &th, &len) ||
	    (th->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG)) || !(th->tcp_flags & RTE_TCP_ACK_FLAG))
		return;
	seq = rte_be_to_cpu_32(th->sent_seq);
	c = conn_of(w, stack, &lip, rte_be_to_cpu_16(th->dst_port), &rip,
		    rte_be_to_cpu_16(th->src_port));
	has_ts = tsval_of(th, &tsval);
	if (c == NULL || !must_take(c, seq, seq + len, rte_be_to_cpu_32(th->recv_ack), has_ts, tsval))
		return;
	pending_add(w, &(struct rx_pending){ .stack = stack, .epoch = w->st[stack].epoch,
					    .lip = c->local_ip, .rip = c->remote_ip,
					    .lport = c->local_port, .rport = c->remote_port,
					    .iss = c->iss, .seq = seq, .end = seq + len,
					    .nxt0 = c->rcv_nxt, .adv0 = c->rcv_adv });
}

void sim_rx_check_settle(struct sim_world *w)
{
	struct sim_rx_check *x = w->rxcheck;

	for (unsigned i = 0; i < x->n; i++) {
		const struct rx_pending *p = &x->p[i];
		const struct tcp_conn *c;

		if (!w->st[p->stack].up || w->st[p->stack].epoch != p->epoch)
			continue;
		c = conn_of(w, p->stack, &p->lip, p->lport, &p->rip, p->rport);
		if (c == NULL || c->iss != p->iss || c->state == TCP_CLOSED)
			continue; /* reset, or moving between engines */
		if (SEQ_LT(c->rcv_nxt, p->end)) {
			char l[US_IN6_EPSTRLEN], r[US_IN6_EPSTRLEN];

			us_in6_endpoint_str(&p->lip, p->lport, l, sizeof(l));
			us_in6_endpoint_str(&p->rip, p->rport, r, sizeof(r));
			sim_fail(w, "stack %u %s <- %s %s: in-window segment [%u, %u) refused (RCV.NXT %u, right edge %u when it arrived; RCV.NXT %u now)",
				 p->stack, l, r, tcp_state_str((uint8_t)c->state),
				 p->seq - c->irs, p->end - c->irs, p->nxt0 - c->irs, p->adv0 - c->irs,
				 c->rcv_nxt - c->irs);
		}
	}
	x->n = 0;
}
