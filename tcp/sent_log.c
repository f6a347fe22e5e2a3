/* tcp/sent_log.c: the record of what is in flight (see sent_log.h). */
#include <stdlib.h>
#include <string.h>

#include "tcp/sent_log.h"
#include "tcp/tcb.h"

/* Room for one more entry at e[n]: the acknowledged front is reused
 * first, then the array doubles. */
static bool reserve(struct tcp_slog *l)
{
	struct tcp_slog_ent *v;
	uint32_t cap;

	if (l->n < l->cap)
		return true;
	if (l->lo > 0) {
		memmove(l->e, l->e + l->lo, (l->n - l->lo) * sizeof(*l->e));
		l->n -= l->lo;
		l->lo = 0;
		return true;
	}
	if (l->cap >= TCP_SLOG_MAX)
		return false;
	cap = l->cap != 0 ? l->cap * 2 : TCP_SLOG_MIN;
	v = realloc(l->e, cap * sizeof(*v));
	if (v == NULL)
		return false;
	l->e = v;
	l->cap = cap;
	return true;
}

uint32_t tcp_slog_find(const struct tcp_slog *l, uint32_t seq)
{
	uint32_t a = l->lo, b = l->n;

	while (a < b) {
		uint32_t m = a + (b - a) / 2;

		if (SEQ_GT(l->e[m].end, seq))
			b = m;
		else
			a = m + 1;
	}
	return a;
}

bool tcp_slog_split(struct tcp_slog *l, uint32_t seq)
{
	uint32_t i = tcp_slog_find(l, seq);

	if (i == l->n || !SEQ_LT(l->e[i].start, seq))
		return true;
	if (!reserve(l))
		return false;
	i = tcp_slog_find(l, seq); /* reserve may have moved the entries down */
	memmove(l->e + i + 1, l->e + i, (l->n - i) * sizeof(*l->e));
	l->n++;
	l->e[i].end = seq;
	l->e[i + 1].start = seq;
	return true;
}

static bool touch_alike(const struct tcp_slog_ent *a, const struct tcp_slog_ent *b)
{
	return a->end == b->start && a->xmit_ns == b->xmit_ns && a->flags == b->flags;
}

bool tcp_slog_append(struct tcp_slog *l, uint32_t start, uint32_t end, uint64_t xmit_ns,
		     uint8_t flags)
{
	struct tcp_slog_ent x = { .start = start, .end = end, .xmit_ns = xmit_ns, .flags = flags };

	if (!tcp_slog_empty(l) && touch_alike(&l->e[l->n - 1], &x)) {
		l->e[l->n - 1].end = end;
		return true;
	}
	if (!reserve(l))
		return false;
	l->e[l->n++] = x;
	return true;
}

void tcp_slog_coalesce(struct tcp_slog *l, uint32_t a, uint32_t b)
{
	uint32_t w;

	if (tcp_slog_empty(l))
		return;
	a = a < l->lo ? l->lo : a;
	b = b >= l->n ? l->n - 1 : b;
	if (a >= b)
		return;
	w = a;
	for (uint32_t i = a + 1; i <= b; i++) {
		if (touch_alike(&l->e[w], &l->e[i]))
			l->e[w].end = l->e[i].end;
		else
			l->e[++w] = l->e[i];
	}
	if (w == b)
		return;
	memmove(l->e + w + 1, l->e + b + 1, (l->n - b - 1) * sizeof(*l->e));
	l->n -= b - w;
}

void tcp_slog_trim(struct tcp_slog *l, uint32_t una)
{
	l->lo = tcp_slog_find(l, una);
	if (!tcp_slog_empty(l) && SEQ_LT(l->e[l->lo].start, una))
		l->e[l->lo].start = una;
	if (!tcp_slog_empty(l))
		return;
	l->lo = l->n = 0;
	if (l->cap > TCP_SLOG_MIN)
		tcp_slog_free(l);
}

void tcp_slog_free(struct tcp_slog *l)
{
	free(l->e);
	*l = (struct tcp_slog){ 0 };
}
