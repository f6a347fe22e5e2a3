/* tcp/scoreboard.c: the sender's SACK scoreboard (RFC 6675) and the
 * delivery-rate estimate; see scoreboard.h for the design.
 *
 * Choices, with their sources:
 * - After an RTO the scoreboard is cleared.  RFC 2018 5: "after a
 *   retransmit timeout the data sender SHOULD turn off all of the SACKed
 *   bits, since the timeout might indicate that the data receiver has
 *   reneged"; RFC 6675 5.1 allows keeping it, but our go-back-N RTO resends
 *   everything from SND.UNA anyway, so keeping it would only let stale
 *   information outlive a possible renege.  tcb_timers.c calls tcp_sb_on_rto().
 * - Reneging (RFC 2018 8): when a cumulative ACK advances to a point inside
 *   or at the start of a SACKed range, the receiver has dropped what it
 *   SACKed (it would otherwise have acknowledged through it).  The
 *   scoreboard is cleared and rebuilt from this ACK's blocks; the data was
 *   never released, so the RTO still resends it from SND.UNA.
 * - D-SACK (RFC 2883 4): only the first block can be one: it lies (partly)
 *   below the cumulative ACK, or inside the second block.  Counted, never
 *   merged.
 */
#include <string.h>

#include "tcp/scoreboard.h"
#include "tcp/tcb.h"

void tcp_sb_init(struct tcp_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void tcp_sb_clear(struct tcp_sb *sb)
{
	sb->n = 0;
	sb->sacked = 0;
}

uint32_t tcp_sb_prune(struct tcp_sb *sb, uint32_t una)
{
	uint32_t gone = 0;
	unsigned k = 0;

	while (k < sb->n && SEQ_LEQ(sb->r[k].end, una))
		gone += sb->r[k].end - sb->r[k].start, k++;
	if (k > 0) {
		memmove(sb->r, sb->r + k, (sb->n - k) * sizeof(sb->r[0]));
		sb->n -= k;
	}
	if (sb->n > 0 && SEQ_LT(sb->r[0].start, una)) {
		gone += una - sb->r[0].start;
		sb->r[0].start = una;
	}
	sb->sacked -= gone;
	return gone;
}

/* Inserts a disjoint range at index i; when full the lowest range goes
 * (or the new one, if it would be the lowest). */
static void insert_at(struct tcp_sb *sb, unsigned i, uint32_t start, uint32_t end)
{
	if (sb->n == TCP_SB_MAX_RANGES) {
		sb->overflows++;
		if (i == 0)
			return;
		sb->sacked -= sb->r[0].end - sb->r[0].start;
		memmove(sb->r, sb->r + 1, (i - 1) * sizeof(sb->r[0]));
		sb->r[i - 1] = (struct tcp_sb_range){ start, end };
		sb->sacked += end - start;
		return;
	}
	memmove(sb->r + i + 1, sb->r + i, (sb->n - i) * sizeof(sb->r[0]));
	sb->r[i] = (struct tcp_sb_range){ start, end };
	sb->n++;
	sb->sacked += end - start;
}

uint32_t tcp_sb_add(struct tcp_sb *sb, uint32_t start, uint32_t end)
{
	unsigned i = 0, j;
	uint32_t before = 0, lo = start, hi = end;

	/* Ranges i .. j-1 overlap or touch [start, end). */
	while (i < sb->n && SEQ_LT(sb->r[i].end, start))
		i++;
	for (j = i; j < sb->n && SEQ_LEQ(sb->r[j].start, end); j++) {
		before += sb->r[j].end - sb->r[j].start;
		if (SEQ_LT(sb->r[j].start, lo))
			lo = sb->r[j].start;
		if (SEQ_GT(sb->r[j].end, hi))
			hi = sb->r[j].end;
	}
	if (j == i) {
		uint64_t ov = sb->overflows;

		insert_at(sb, i, start, end);
		return sb->overflows != ov && i == 0 ? 0 : end - start;
	}
	sb->r[i] = (struct tcp_sb_range){ lo, hi };
	memmove(sb->r + i + 1, sb->r + j, (sb->n - j) * sizeof(sb->r[0]));
	sb->n -= j - i - 1;
	sb->sacked += (hi - lo) - before;
	return (hi - lo) - before;
}

/* RFC 2883 4: is the first block a D-SACK? */
bool tcp_sb_is_dsack(const uint32_t (*blk)[2], unsigned nblk, uint32_t ack)
{
	if (SEQ_LT(blk[0][0], ack))
		return true;
	return nblk >= 2 && SEQ_LEQ(blk[1][0], blk[0][0]) && SEQ_LEQ(blk[0][1], blk[1][1]) &&
	       SEQ_LT(blk[1][0], blk[1][1]);
}

uint32_t tcp_sb_update(struct tcp_sb *sb, uint32_t ack, uint32_t max,
		       const uint32_t (*blk)[2], unsigned nblk)
{
	uint32_t added = 0;

	for (unsigned k = 0; k < nblk; k++) {
		uint32_t s = blk[k][0], e = blk[k][1];

		if (k == 0 && tcp_sb_is_dsack(blk, nblk, ack)) {
			sb->dsack_rcvd++;
			continue;
		}
		/* RFC 2018 3 / RFC 6675 5: only [SND.UNA, SND.MAX] is meaningful. */
		if (!SEQ_LT(s, e) || SEQ_LT(s, ack) || SEQ_GT(e, max)) {
			sb->invalid++;
			continue;
		}
		added += tcp_sb_add(sb, s, e);
	}
	return added;
}

/* RFC 6675 4 IsLost: DupThresh discontiguous SACKed ranges above seq, or
 * more than (DupThresh - 1) * SMSS SACKed bytes above it.  A SACKed
 * sequence number is not lost. */
bool tcp_sb_is_lost(const struct tcp_sb *sb, uint32_t seq, uint32_t smss)
{
	uint32_t bytes = 0;
	unsigned cnt = 0;

	for (unsigned k = sb->n; k-- > 0;) {
		const struct tcp_sb_range *r = &sb->r[k];

		if (SEQ_LEQ(r->start, seq)) {
			if (SEQ_LT(seq, r->end))
				return false;
			break;
		}
		cnt++;
		bytes += r->end - r->start;
	}
	return cnt >= TCP_SB_DUPTHRESH || bytes > (TCP_SB_DUPTHRESH - 1) * smss;
}

/* Every octet of a hole has the same SACKed ranges above it, so IsLost of
 * its first octet decides for the whole hole. */
uint32_t tcp_sb_lost_bytes(const struct tcp_sb *sb, uint32_t una, uint32_t smss)
{
	uint32_t lost = 0, prev = una;

	for (unsigned k = 0; k < sb->n; k++) {
		if (SEQ_LT(prev, sb->r[k].start) && tcp_sb_is_lost(sb, prev, smss))
			lost += sb->r[k].start - prev;
		prev = sb->r[k].end;
	}
	return lost;
}

/* SACKed bytes within [lo, hi). */
static uint32_t sacked_within(const struct tcp_sb *sb, uint32_t lo, uint32_t hi)
{
	uint32_t n = 0;

	for (unsigned k = 0; k < sb->n; k++) {
		uint32_t s = SEQ_GT(sb->r[k].start, lo) ? sb->r[k].start : lo;
		uint32_t e = SEQ_LT(sb->r[k].end, hi) ? sb->r[k].end : hi;

		if (SEQ_LT(s, e))
			n += e - s;
	}
	return n;
}

/* RFC 6675 4 SetPipe: over the octets from HighACK to HighData not SACKed,
 * (a) one for each not IsLost, (b) one more for each at or below HighRxt. */
uint32_t tcp_sb_pipe(const struct tcp_sb *sb, uint32_t una, uint32_t max, uint32_t rxt_high,
		     uint32_t smss)
{
	uint32_t out = SEQ_GT(max, una) ? max - una : 0;
	uint32_t pipe = out - sacked_within(sb, una, una + out) - tcp_sb_lost_bytes(sb, una, smss);

	if (SEQ_GT(rxt_high, una)) {
		uint32_t hi = SEQ_LT(rxt_high, una + out) ? rxt_high : una + out;

		pipe += (hi - una) - sacked_within(sb, una, hi);
	}
	return pipe;
}

/* RFC 2018 5: turn off the SACKed bits after a retransmission timeout. */
void tcp_sb_on_rto(struct tcp_conn *c)
{
	struct tcp_sb *sb = &c->sb;

	if (sb->n > 0) {
		sb->rto_cleared++;
		c->ts->stats.sack_rto_cleared++;
		tcp_sb_clear(sb);
	}
}

void tcp_sb_ack_begin(struct tcp_conn *c)
{
	struct tcp_sb *sb = &c->sb;

	sb->una0 = c->snd_una;
	sb->acked0 = c->bytes_acked;
}

/* RFC 2018 8: SND.UNA moved to a point a SACKed range covers. */
static bool reneged(const struct tcp_sb *sb, uint32_t una)
{
	for (unsigned k = 0; k < sb->n && SEQ_LEQ(sb->r[k].start, una); k++)
		if (SEQ_LT(una, sb->r[k].end))
			return true;
	return false;
}

/* Bytes delivered by this ACK feed an interval that starts at an ACK and
 * ends at the first later ACK at least max(SRTT, 1 ms) after it; an ACK
 * that leaves nothing in flight ends it early (the idle time that follows
 * is no delivery time), and a too-short interval is then discarded. */
static void rate_update(struct tcp_conn *c, uint32_t delivered)
{
	struct tcp_sb *sb = &c->sb;
	uint64_t now = tcp_now(c), min_ns = RTE_MAX((uint64_t)c->srtt_us * 1000, US_MS(1));
	bool idle = c->snd_una == c->snd_max;

	if (!sb->dr_open) {
		if (delivered > 0 && !idle) {
			sb->dr_open = true;
			sb->dr_start_ns = now;
			sb->dr_bytes = 0;
		}
		return;
	}
	sb->dr_bytes += delivered;
	if (now - sb->dr_start_ns >= min_ns) {
		sb->delivery_rate = sb->dr_bytes * 1000000000ull / (now - sb->dr_start_ns);
		sb->dr_start_ns = now;
		sb->dr_bytes = 0;
	}
	if (idle)
		sb->dr_open = false;
}

void tcp_sb_ack_end(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_sb *sb = &c->sb;
	struct tcp_stats *st = &c->ts->stats;
	uint32_t delivered = (uint32_t)(c->bytes_acked - sb->acked0), gone;
	uint64_t dsack = sb->dsack_rcvd, inval = sb->invalid, ovf = sb->overflows;

	if (c->snd_una != sb->una0 && reneged(sb, c->snd_una)) {
		sb->reneged++;
		st->sack_reneged++;
		tcp_sb_clear(sb);
	}
	/* SACKed bytes now cumulatively ACKed were counted when SACKed. */
	gone = tcp_sb_prune(sb, c->snd_una);
	delivered -= RTE_MIN(gone, delivered);
	if (c->sack_ok && seg->nsack > 0)
		delivered += tcp_sb_update(sb, c->snd_una, c->snd_max,
					   (const uint32_t (*)[2])seg->sack, seg->nsack);
	st->dsack_rcvd += sb->dsack_rcvd - dsack;
	st->sack_invalid += sb->invalid - inval;
	st->sack_overflow += sb->overflows - ovf;
	rate_update(c, delivered);
}

uint32_t tcp_sb_conn_sacked(const struct tcp_conn *c)
{
	return c->sb.sacked;
}

uint32_t tcp_sb_conn_lost(const struct tcp_conn *c)
{
	return tcp_sb_lost_bytes(&c->sb, c->snd_una, c->mss);
}

/* HighRxt: in fast recovery tcp_loss_pipe's (loss.c); during go-back-N
 * after an RTO everything below SND.NXT has been sent again; otherwise
 * nothing it still tracks was retransmitted. */
uint32_t tcp_sb_conn_pipe(const struct tcp_conn *c)
{
	const struct tcp_sb *sb = &c->sb;
	uint32_t rxt = SEQ_LT(c->snd_nxt, c->snd_max) ? c->snd_nxt : c->snd_una;

	if (c->loss.in_recovery)
		return tcp_loss_pipe(c);

	return tcp_sb_pipe(sb, c->snd_una, c->snd_max, rxt, c->mss);
}
