/* stack/sock/epoll.c: epoll-shaped readiness (us_epoll_create/ctl/wait).
 *
 * Linux's model (fs/eventpoll.c), rebuilt small: a registration sits on its
 * socket's watcher list; a wake (tcp/ callback or a state change the
 * application made) puts it on its epoll's ready list; us_epoll_wait takes
 * items off that list, asks the socket for its current mask and reports
 * what matches the interest.  A level-triggered item goes back on the list
 * (reported again next time while the condition holds); an edge-triggered
 * one waits for the next wake; a one-shot one is disabled until MOD. */
#include <errno.h>
#include <stdlib.h>

#include "stack/sock/socket_priv.h"

#define EP_ALWAYS (US_EPOLLERR | US_EPOLLHUP)
#define EP_KNOWN (US_EPOLLIN | US_EPOLLPRI | US_EPOLLOUT | US_EPOLLRDHUP | EP_ALWAYS | US_EPOLLET | \
		  US_EPOLLONESHOT)

static void ep_ready(struct us_epitem *it)
{
	if (it->ready || it->disabled)
		return;
	it->ready = true;
	TAILQ_INSERT_TAIL(&it->ep->readyq, it, ready_link);
}

static void ep_unready(struct us_epitem *it)
{
	if (!it->ready)
		return;
	it->ready = false;
	TAILQ_REMOVE(&it->ep->readyq, it, ready_link);
}

void us_sock_wake(struct us_sock *s)
{
	struct us_epitem *it;

	LIST_FOREACH(it, &s->watchers, sock_link)
		ep_ready(it);
}

static void ep_item_free(struct us_epitem *it)
{
	ep_unready(it);
	LIST_REMOVE(it, sock_link);
	LIST_REMOVE(it, ep_link);
	free(it);
}

void us_sock_unwatch(struct us_sock *s)
{
	struct us_epitem *it;

	while ((it = LIST_FIRST(&s->watchers)) != NULL)
		ep_item_free(it);
}

void us_epoll_close(struct us_sock *ep)
{
	struct us_epitem *it;

	while ((it = LIST_FIRST(&ep->items)) != NULL)
		ep_item_free(it);
}

int us_epoll_create1(int flags)
{
	struct us_sock *ep;
	int rc;

	if (flags & ~US_SOCK_CLOEXEC)
		return us_sock_fail(-EINVAL);
	rc = us_sock_alloc(us_sock_table_current(), US_SK_EPOLL, &ep);
	return rc < 0 ? us_sock_fail(rc) : ep->fd;
}

int us_epoll_create(int size)
{
	if (size <= 0)
		return us_sock_fail(-EINVAL);
	return us_epoll_create1(0);
}

static struct us_epitem *ep_find(struct us_sock *ep, struct us_sock *s)
{
	struct us_epitem *it;

	LIST_FOREACH(it, &s->watchers, sock_link)
		if (it->ep == ep)
			return it;
	return NULL;
}

static int ep_add(struct us_sock *ep, struct us_sock *s, const struct us_epoll_event *ev)
{
	struct us_epitem *it;

	if (ep_find(ep, s) != NULL)
		return -EEXIST;
	it = calloc(1, sizeof(*it));
	if (it == NULL)
		return -ENOMEM;
	it->ep = ep;
	it->s = s;
	it->events = ev->events | EP_ALWAYS;
	it->data = ev->data;
	LIST_INSERT_HEAD(&s->watchers, it, sock_link);
	LIST_INSERT_HEAD(&ep->items, it, ep_link);
	ep_ready(it); /* as Linux: an already-ready socket is reported at once */
	return 0;
}

int us_epoll_ctl(int epfd, int op, int fd, struct us_epoll_event *ev)
{
	struct us_sock *ep, *s;
	struct us_epitem *it;
	int rc = us_sock_lookup(epfd, &ep);

	if (rc == 0)
		rc = us_sock_lookup(fd, &s);
	if (rc < 0)
		return us_sock_fail(rc);
	if (ep->kind != US_SK_EPOLL || ep == s || s->tab != ep->tab)
		return us_sock_fail(-EINVAL);
	if (s->kind == US_SK_EPOLL)
		return us_sock_fail(-EPERM); /* nesting is not supported */
	if (op != US_EPOLL_CTL_DEL && ev == NULL)
		return us_sock_fail(-EFAULT);
	if (op != US_EPOLL_CTL_DEL && (ev->events & ~EP_KNOWN))
		return us_sock_fail(-EINVAL);
	it = ep_find(ep, s);
	switch (op) {
	case US_EPOLL_CTL_ADD:
		rc = ep_add(ep, s, ev);
		break;
	case US_EPOLL_CTL_MOD:
		if (it == NULL)
			return us_sock_fail(-ENOENT);
		it->events = ev->events | EP_ALWAYS;
		it->data = ev->data;
		it->disabled = false;
		ep_ready(it);
		break;
	case US_EPOLL_CTL_DEL:
		if (it == NULL)
			return us_sock_fail(-ENOENT);
		ep_item_free(it);
		break;
	default:
		rc = -EINVAL;
	}
	return rc < 0 ? us_sock_fail(rc) : 0;
}

/* Reports ready items into events; at most one pass over the list, so a
 * level-triggered item put back at the tail is not seen twice. */
static int ep_collect(struct us_sock *ep, struct us_epoll_event *events, int max)
{
	struct us_epitem *it, *last = TAILQ_LAST(&ep->readyq, us_epitem_queue);
	int n = 0;
	bool end = last == NULL;

	while (!end && n < max && (it = TAILQ_FIRST(&ep->readyq)) != NULL) {
		uint32_t mask = us_sock_poll(it->s) & it->events;

		end = it == last;
		ep_unready(it);
		if (mask == 0)
			continue; /* the next wake brings it back */
		events[n].events = mask;
		events[n].data = it->data;
		n++;
		if (it->events & US_EPOLLONESHOT)
			it->disabled = true;
		else if (!(it->events & US_EPOLLET))
			ep_ready(it);
	}
	return n;
}

int us_epoll_wait(int epfd, struct us_epoll_event *events, int maxevents, int timeout_ms)
{
	struct us_sock *ep;
	struct us_sock_table *tab;
	uint64_t deadline = 0;
	int n, rc = us_sock_lookup(epfd, &ep);

	if (rc < 0)
		return us_sock_fail(rc);
	if (ep->kind != US_SK_EPOLL || maxevents <= 0)
		return us_sock_fail(-EINVAL);
	if (events == NULL)
		return us_sock_fail(-EFAULT);
	tab = ep->tab;
	tab->stats.epoll_waits++;
	if (timeout_ms > 0)
		deadline = tab->drv.now_ns(tab->drv.ctx) + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		tab->drv.poll(tab->drv.ctx);
		n = ep_collect(ep, events, maxevents);
		if (n > 0 || timeout_ms == 0)
			break;
		if (timeout_ms > 0 && tab->drv.now_ns(tab->drv.ctx) >= deadline)
			break;
	}
	tab->stats.epoll_events += (uint64_t)n;
	return n;
}
