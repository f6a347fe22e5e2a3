/* stack/engine/publish.c: cross-engine state by message (see publish.h). */
#include "stack/engine/publish.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_ring.h>

#include "stack/engine/engine_priv.h"

struct us_publish *us_publish_create(unsigned n, unsigned writer, const char *name)
{
	char rname[RTE_RING_NAMESIZE];
	struct us_publish *p;

	if (n < 2 || n > US_ENGINES_MAX || writer >= n || name == NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->n = n;
	p->writer = writer;
	for (unsigned k = 0; k < n; k++) {
		if (k == writer)
			continue;
		snprintf(rname, sizeof(rname), "pub_%s_%u", name, k);
		/* One producer (the writer), one consumer (engine k). */
		p->inbox[k] = rte_ring_create(rname, US_PUBLISH_RING, SOCKET_ID_ANY,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (p->inbox[k] == NULL) {
			int err = rte_errno ? rte_errno : ENOMEM;

			us_publish_destroy(p);
			errno = err;
			return NULL;
		}
	}
	return p;
}

void us_publish_destroy(struct us_publish *p)
{
	struct us_publish_msg *m;

	if (p == NULL)
		return;
	for (unsigned k = 0; k < US_ENGINES_MAX; k++) {
		if (p->inbox[k] == NULL)
			continue;
		while ((m = us_publish_recv(p, k)) != NULL)
			us_publish_msg_free(m);
		rte_ring_free(p->inbox[k]);
	}
	free(p);
}

unsigned us_publish_tfo_keys(struct us_publish *p, const struct tfo_keys *k)
{
	unsigned sent = 0;

	for (unsigned e = 0; e < p->n; e++) {
		struct us_publish_msg *m;

		if (p->inbox[e] == NULL)
			continue;
		m = malloc(sizeof(*m));
		if (m == NULL)
			continue;
		m->type = US_PUB_TFO_KEYS;
		m->keys = *k;
		if (rte_ring_sp_enqueue(p->inbox[e], m) != 0) {
			us_publish_msg_free(m);
			continue;
		}
		sent++;
	}
	return sent;
}

struct us_publish_msg *us_publish_recv(struct us_publish *p, unsigned k)
{
	void *m;

	if (k >= US_ENGINES_MAX || p->inbox[k] == NULL ||
	    rte_ring_sc_dequeue(p->inbox[k], &m) != 0)
		return NULL;
	return m;
}

void us_publish_msg_free(struct us_publish_msg *m)
{
	if (m == NULL)
		return;
	tfo_keys_wipe(&m->keys);
	free(m);
}

/* The engine's side: a stage (stage.h) that applies what the writer
 * published before the iteration's segments are looked at. */

static unsigned publish_input(struct us_engine *e, void *ctx)
{
	struct us_publish *p = ctx;
	struct us_publish_msg *m;

	while ((m = us_publish_recv(p, e->id)) != NULL) {
		if (m->type == US_PUB_TFO_KEYS && e->tcp != NULL) {
			tcp_tfo_keys_set(e->tcp, &m->keys);
			US_STAT_INC(e, pub_tfo_keys_applied);
		}
		us_publish_msg_free(m);
	}
	return 0;
}

static const struct us_stage_ops publish_ops = {
	.name = "publish",
	.place = US_PLACE_PUBLISH,
	.input = publish_input,
};

int us_publish_attach(struct us_engine *e, struct us_publish *p)
{
	int rc = us_engine_stage_add(e, &publish_ops, p);

	/* Only the writer draws and rotates the TFO secret. */
	if (rc == 0 && p->writer != e->id && e->tcp != NULL)
		tcp_tfo_follow(e->tcp);
	return rc;
}

void us_publish_tfo_rotated(struct us_engine *e, const struct tfo_keys *k)
{
	struct us_publish *p = us_engine_stage_ctx(e, &publish_ops);
	unsigned sent;

	if (p == NULL || p->writer != e->id)
		return;
	sent = us_publish_tfo_keys(p, k);
	US_STAT_ADD(e, pub_tfo_keys_sent, sent);
	US_STAT_ADD(e, pub_drop_inbox_full, p->n - 1 - sent);
}

int us_publish_send_tfo_keys(struct us_engine *e)
{
	struct us_publish *p = us_engine_stage_ctx(e, &publish_ops);
	struct tfo_keys k;

	if (p == NULL || p->writer != e->id || e->tcp == NULL)
		return -EINVAL;
	tcp_tfo_keys_get(e->tcp, &k);
	us_publish_tfo_rotated(e, &k);
	tfo_keys_wipe(&k);
	return 0;
}
