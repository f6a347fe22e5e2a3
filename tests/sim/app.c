/* tests/sim/app.c: the applications of a world, drawn in its plan.
 *
 * A conversation is a client and a server on two stacks, over IPv4 or IPv6
 * as its plan draws (an IPv4 client may use an AF_INET6 socket and the
 * server's v4-mapped address; a server listens on one dual-stack socket or
 * one per family, world.h sim_eng lfd), each sending its own stream (a
 * pattern of the conversation, the direction and the offset, so every byte
 * read is checked: right byte, right place, once) and reading the other's,
 * fast, slowly or after a stall (zero windows).  The client
 * connects (with data in the SYN when the plan says Fast Open), may pause
 * mid-stream with keepalive on, and ends by a half-close, a close, or one
 * side resets on purpose; the server may move its end to the other engine.
 * Every call is non-blocking; an end that cannot move waits for the next
 * instant something arrives.  The UDP flows are in udp.c, the verdict on
 * each conversation at the end in verdict.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "stack/include/us_socket.h"
#include "stack/sock/socket_priv.h"
#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/sim/world.h"

#define READ_BUF 65536u
/* An application gives up on a connection where nothing moved for this
 * long (as services time out idle peers): a peer a partition cut off may
 * be gone for good while our TCB, with nothing to send, has no timer to
 * notice (a half-open connection, RFC 9293 3.5.1).  Far beyond a stall,
 * an idle pause or an RTO backed off to rto_max. */
#define SIM_PATIENCE US_SEC(1200)
#define READS_PER_STEP 64u /* a fast reader's calls per pass */

static uint8_t buf[READ_BUF];
static uint8_t peeked[READ_BUF]; /* what MSG_PEEK saw before a read */

/* Byte o of conversation k's stream dir (0: client to server). */
static inline uint8_t pattern(unsigned k, unsigned dir, uint64_t o)
{
	uint32_t x = (uint32_t)o * 2654435761u;

	return (uint8_t)((x >> 24) ^ (o >> 12) ^ (k * 31 + dir * 7));
}

static unsigned end_stack(const struct sim_plan *p, unsigned k, unsigned s)
{
	return s == 0 ? p->conv[k].cli : p->conv[k].srv;
}

const char *sim_conv_str(const struct sim_world *w, unsigned k)
{
	static char out[2 * US_IN6_EPSTRLEN + 32];
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	struct us_in6 cli = sim_stack_addr(cp->cli, cp->family);
	struct us_in6 srv = sim_stack_addr(cp->srv, cp->family);
	char a[US_IN6_EPSTRLEN], b[US_IN6_EPSTRLEN];

	us_in6_endpoint_str(&cli, w->conv[k].cport, a, sizeof(a));
	us_in6_endpoint_str(&srv, SIM_TCP_PORT, b, sizeof(b));
	snprintf(out, sizeof(out), "ipv%u%s %s -> %s", cp->family, cp->mapped ? " v4-mapped" : "", a, b);
	return out;
}

/* A byte moved at this end: its patience starts again. */
static void end_moved(struct sim_world *w, unsigned k, unsigned s)
{
	struct sim_end *e = &w->conv[k].end[s];

	e->last_move_ns = w->now;
	e->drops_at_move = sim_path_drops(w, w->plan.conv[k].cli, w->plan.conv[k].srv);
}

/* The end is over: its socket closed (if still open), done. */
static void end_close(struct sim_world *w, struct sim_end *e)
{
	if (w->verbose)
		fprintf(stderr, "  close fd %d at %.6fs: sent %lu read %lu eof %d err %d\n", e->fd,
			(w->now - w->t0) / 1e9, (unsigned long)e->sent, (unsigned long)e->rcvd, e->eof,
			e->err);
	if (e->fd >= 0 && us_close(e->fd) != 0)
		sim_fail(w, "us_close(%d): %s", e->fd, strerror(errno));
	e->fd = -1;
	e->done = true;
	e->closed_ns = w->now;
	w->progress = true;
}

static void end_error(struct sim_world *w, unsigned k, unsigned s, int err)
{
	struct sim_end *e = &w->conv[k].end[s];

	if (err == EAGAIN)
		return;
	e->err = err;
	e->err_ns = w->now;
	if (w->verbose)
		fprintf(stderr, "  conv %u (%s) %s: %s at %.6fs\n", k, sim_conv_str(w, k),
			s ? "server" : "client", strerror(err), (w->now - w->t0) / 1e9);
	end_close(w, e);
}

/* The plan's socket options for a new end of conversation k. */
static void end_opts(struct sim_world *w, unsigned k, unsigned s, int fd)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	int one = 1, ut = (int)cp->user_timeout_ms;

	if (cp->side[s].cork &&
	    us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_CORK, &one, sizeof(one)) != 0)
		sim_fail(w, "TCP_CORK: %s", strerror(errno));
	if (ut > 0 && us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_USER_TIMEOUT, &ut, sizeof(ut)) != 0)
		sim_fail(w, "TCP_USER_TIMEOUT: %s", strerror(errno));
	w->n.ends_cork += cp->side[s].cork;
	w->n.ends_more += cp->side[s].more;
	w->n.ends_peek += cp->side[s].peek;
	w->n.convs_user_timeout += s == 0 && ut > 0;
}

/* Send */

/* What a send would take now (the socket layer's own view): filling a
 * pattern buffer only to be told EAGAIN, event after event, would cost
 * more than the whole stack.  SIZE_MAX when the socket is not sending
 * yet (connecting) or already failed: the send call says what it is. */
static size_t send_room(int fd)
{
	struct us_sock *s;

	if (us_sock_lookup(fd, &s) != 0 || s->tc == NULL || s->state != US_SS_CONNECTED ||
	    s->so_error)
		return SIZE_MAX;
	return tcp_send_space(s->tc);
}

static void end_send(struct sim_world *w, unsigned k, unsigned s)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	const struct sim_side_plan *sp = &cp->side[s];
	struct sim_end *e = &w->conv[k].end[s];

	while (!e->done && e->sent < sp->bytes && w->now >= e->next_send_ns) {
		uint64_t len = sp->bytes - e->sent;
		size_t room = send_room(e->fd);
		ssize_t n;

		if (room == 0)
			return;
		if (len > room)
			len = room;
		if (s == 0 && cp->idle_ns && e->sent < cp->idle_at && e->sent + len > cp->idle_at)
			len = cp->idle_at - e->sent;
		if (len > sp->chunk)
			len = sp->chunk;
		for (uint64_t i = 0; i < len; i++)
			buf[i] = pattern(k, s, e->sent + i);
		/* MSG_MORE while more of the stream follows this call. */
		n = us_send(e->fd, buf, (size_t)len,
			    sp->more && e->sent + len < sp->bytes ? US_MSG_MORE : 0);
		if (n < 0) {
			end_error(w, k, s, errno);
			return;
		}
		e->sent += (uint64_t)n;
		end_moved(w, k, s);
		w->progress = true;
		if (s == 0 && cp->idle_ns && e->sent == cp->idle_at)
			e->next_send_ns = w->now + cp->idle_ns; /* keepalive's turn */
		else if (sp->gap_ns)
			e->next_send_ns = w->now + sp->gap_ns;
		if ((uint64_t)n < len)
			return;
	}
}

/* Read */

static bool reading_paused(const struct sim_world *w, const struct sim_side_plan *sp,
			   const struct sim_end *e)
{
	uint64_t from = e->born_ns + sp->stall_at_ns;

	if (sp->read == SIM_READ_STALL && w->now >= from && w->now < from + sp->stall_ns)
		return true;
	return sp->read == SIM_READ_SLOW && w->now < e->next_read_ns;
}

/* MSG_PEEK of what the next read takes, and FIONREAD, which must agree
 * with it: the bytes peeked (-1: none waited; -2: an error, reported). */
static ssize_t end_peek(struct sim_world *w, unsigned k, unsigned s, size_t want)
{
	struct sim_end *e = &w->conv[k].end[s];
	int inq = -1;
	ssize_t p;

	if (us_ioctl(e->fd, US_FIONREAD, &inq) != 0)
		inq = -1; /* a listener's or a closed socket's question */
	p = us_recv(e->fd, peeked, want, US_MSG_PEEK);
	if (p < 0 && errno != EAGAIN) {
		end_error(w, k, s, errno);
		return -2;
	}
	if (p > 0 && inq > 0 && (size_t)p != RTE_MIN(want, (size_t)inq))
		sim_fail(w, "conv %u (%s) %s: MSG_PEEK gave %ld bytes of %zu, FIONREAD said %d",
			 k, sim_conv_str(w, k), s ? "server" : "client", (long)p, want, inq);
	return p < 0 ? -1 : p;
}

static void end_read(struct sim_world *w, unsigned k, unsigned s)
{
	const struct sim_side_plan *sp = &w->plan.conv[k].side[s];
	const struct sim_side_plan *other = &w->plan.conv[k].side[!s];
	struct sim_end *e = &w->conv[k].end[s];
	unsigned calls = sp->read == SIM_READ_SLOW ? 1 : READS_PER_STEP;

	for (unsigned c = 0; c < calls && !e->done && !e->eof && !reading_paused(w, sp, e); c++) {
		size_t want = sp->read == SIM_READ_SLOW ? sp->read_max : READ_BUF;
		ssize_t p = sp->peek ? end_peek(w, k, s, want) : -1;
		ssize_t n;

		if (p < -1)
			return; /* the peek met the error */
		n = us_recv(e->fd, buf, want, 0);
		if (n < 0) {
			end_error(w, k, s, errno);
			return;
		}
		if (p >= 0 && (n != p || memcmp(buf, peeked, (size_t)n) != 0))
			sim_fail(w, "conv %u (%s) %s: read %ld bytes, MSG_PEEK saw %ld (or others)",
				 k, sim_conv_str(w, k), s ? "server" : "client", (long)n, (long)p);
		if (sp->read == SIM_READ_SLOW)
			e->next_read_ns = w->now + sp->read_every_ns;
		w->progress = true;
		if (n == 0) {
			e->eof = true;
			end_moved(w, k, s);
			return;
		}
		if (e->rcvd + (uint64_t)n > other->bytes)
			sim_fail(w, "conv %u (%s) %s: %lu bytes read, the stream has %lu", k,
				 sim_conv_str(w, k), s ? "server" : "client",
				 (unsigned long)(e->rcvd + (uint64_t)n),
				 (unsigned long)other->bytes);
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(k, !s, e->rcvd + (uint64_t)i))
				sim_fail(w, "conv %u (%s) %s: byte %lu is %#x, sent %#x", k,
					 sim_conv_str(w, k), s ? "server" : "client",
					 (unsigned long)(e->rcvd + (uint64_t)i),
					 buf[i], pattern(k, !s, e->rcvd + (uint64_t)i));
		e->rcvd += (uint64_t)n;
		end_moved(w, k, s);
		/* The writer's bytes moved too: an end that wrote everything and
		 * waits for its peer's close is not stuck while they arrive. */
		end_moved(w, k, !s);
		w->n.bytes += (uint64_t)n;
	}
}

/* Ends */

/* A client that closes in SYN-SENT deletes its TCB (RFC 9293 3.10.4) and
 * its server never hears of it: the applications here finish only what
 * they started, so they close once the handshake is over. */
static bool handshake_over(int fd)
{
	struct us_sock *s;

	return us_sock_lookup(fd, &s) != 0 || s->state >= US_SS_CONNECTED;
}

static void end_abort(struct sim_world *w, unsigned k, unsigned s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sim_end *e = &w->conv[k].end[s];

	if (us_setsockopt(e->fd, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg)) != 0)
		sim_fail(w, "SO_LINGER: %s", strerror(errno));
	w->conv[k].aborted = true;
	end_close(w, e);
}

/* What ends this end, once its stream is out: the plan's way for the
 * client, "the client's stream read to its end and ours sent" for the
 * server. */
static void end_finish(struct sim_world *w, unsigned k, unsigned s)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	struct sim_end *e = &w->conv[k].end[s];
	bool all_out = e->sent == cp->side[s].bytes;
	bool all_in = e->rcvd == cp->side[!s].bytes;

	if (e->done)
		return;
	if (cp->end == SIM_END_ABORT && cp->abort_side == s && e->rcvd >= cp->abort_after) {
		end_abort(w, k, s);
		return;
	}
	/* A peer whose stack restarted under it may end the stream early and
	 * rightly: its new incarnation accepts this end's next SYN as a
	 * stranger's and closes it (the verdict then counts the restart). */
	if (e->eof && !all_in && !w->conv[k].aborted && !e->lost && !w->conv[k].end[!s].lost)
		sim_fail(w, "conv %u (%s) %s: end of stream after %lu of %lu bytes", k,
			 sim_conv_str(w, k), s ? "server" : "client", (unsigned long)e->rcvd,
			 (unsigned long)cp->side[!s].bytes);
	if (s == 0 && cp->end == SIM_END_HALF && all_out && !e->shut) {
		if (us_shutdown(e->fd, US_SHUT_WR) != 0) {
			end_error(w, k, s, errno);
			return;
		}
		e->shut = true;
		w->progress = true;
	}
	if (!all_out || !handshake_over(e->fd))
		return;
	if ((s == 0 && cp->end != SIM_END_HALF && all_in) || (e->eof && all_in))
		end_close(w, e);
}

static void end_migrate(struct sim_world *w, unsigned k)
{
	struct sim_end *e = &w->conv[k].end[1];

	if (!w->plan.conv[k].migrate || e->moved || e->done ||
	    w->now < e->born_ns + w->plan.conv[k].migrate_after_ns)
		return;
	if (us_migrate(e->fd, 1 - e->eng) != 0) {
		if (errno == EBUSY)
			return;
		e->moved = true; /* not in a state that moves: stays */
		return;
	}
	e->moved = e->moving = true;
	e->fd = -1;
	e->eng = 1 - e->eng;
	w->n.migrations++;
	w->progress = true;
}


/* The retransmission timer of end s's connection, backed off: 0 when
 * the end has no connection (the descriptor table is its stack's). */
static unsigned end_backoff(struct sim_world *w, unsigned k, unsigned s)
{
	const struct sim_end *e = &w->conv[k].end[s];
	struct us_sock *so;
	unsigned b = 0;

	if (!e->open || e->done || e->moving || e->fd < 0)
		return 0;
	us_sock_table_bind_thread(w->st[end_stack(&w->plan, k, s)].eng[e->eng].tab);
	if (us_sock_lookup(e->fd, &so) == 0 && so->tc != NULL)
		b = so->tc->backoff;
	return b;
}

/* A lossy path still losing what a backed-off retransmission timer sends:
 * the emulator's burst state moves per packet, and a connection that
 * sends one segment per backed-off RTO (up to rto_max apart) can sit in a
 * bad state for many minutes, every resend and every ACK of it lost,
 * while the bytes it moves now and then reach no application. */
static bool retransmitting_into_loss(struct sim_world *w, unsigned k, unsigned s)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	bool lossy = sim_path_lossy(w, cp->cli, cp->srv) &&
		     sim_path_drops(w, cp->cli, cp->srv) > w->conv[k].end[s].drops_at_move;
	bool backed_off = lossy && (end_backoff(w, k, 0) > 0 || end_backoff(w, k, 1) > 0);
	unsigned eng = w->conv[k].end[s].eng;

	us_sock_table_bind_thread(w->st[end_stack(&w->plan, k, s)].eng[eng].tab);
	return backed_off;
}

/* Nothing moved for SIM_PATIENCE: the application resets the connection
 * when a fault explains the silence, else the world is stuck. */
static void end_patience(struct sim_world *w, unsigned k, unsigned s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sim_end *e = &w->conv[k].end[s];

	if (w->now < e->last_move_ns + SIM_PATIENCE)
		return;
	/* The other end reset on purpose: an RST is sent once, never
	 * retransmitted, and a lost one leaves this end half-open.  Or, on a
	 * lossy path, the other side's TCB went where no one could see: its
	 * application closed with data in flight and the orphan ran out of
	 * retries, or (never accepted) its SYN-RECEIVED TCB ran out of
	 * SYN-ACKs while every ACK of ours was lost. */
	const struct sim_end *peer = &w->conv[k].end[!s];
	bool orphan_lost = ((peer->done && !peer->err) || !peer->open) &&
			   sim_path_lossy(w, w->plan.conv[k].cli, w->plan.conv[k].srv);

	if (!sim_explained(w, k) && !w->conv[k].aborted && !orphan_lost &&
	    !retransmitting_into_loss(w, k, s))
		sim_fail(w, "conv %u (%s) %s: nothing moved for %.0f s (%lu bytes sent, %lu read)", k,
			 sim_conv_str(w, k), s ? "server" : "client", SIM_PATIENCE / 1e9,
			 (unsigned long)e->sent,
			 (unsigned long)e->rcvd);
	us_setsockopt(e->fd, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg));
	e->err = ETIMEDOUT;
	w->n.convs_gave_up++;
	end_close(w, e);
}

static void end_step(struct sim_world *w, unsigned k, unsigned s)
{
	struct sim_end *e = &w->conv[k].end[s];

	if (!e->open || e->done || e->moving)
		return;
	sim_bind(w, end_stack(&w->plan, k, s), e->eng);
	end_patience(w, k, s);
	if (e->done)
		return;
	end_send(w, k, s);
	end_read(w, k, s);
	end_finish(w, k, s);
	if (s == 1 && !e->done)
		end_migrate(w, k);
}

static void client_start(struct sim_world *w, unsigned k)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	struct sim_conv *c = &w->conv[k];
	struct sim_end *e = &c->end[0];
	int domain = cp->family == 6 || cp->mapped ? AF_INET6 : AF_INET;
	struct us_in6 srv = sim_stack_addr(cp->srv, cp->family), mine;
	struct sockaddr_storage dst, me;
	socklen_t dlen = sim_sockaddr(domain, &srv, SIM_TCP_PORT, &dst), mlen = sizeof(me);
	int one = 1, rc;

	c->started = true;
	w->n.convs++;
	w->n.convs_ip6 += cp->family == 6;
	w->n.convs_mapped += cp->mapped;
	if (!w->st[cp->cli].up) { /* its stack is down: nobody to start it */
		e->lost = true;
		e->done = true;
		return;
	}
	sim_bind(w, cp->cli, cp->cli_eng);
	*e = (struct sim_end){ .fd = us_socket(domain, SOCK_STREAM, 0), .eng = cp->cli_eng,
			       .epoch = w->st[cp->cli].epoch, .open = true, .born_ns = w->now };
	end_moved(w, k, 0);
	if (e->fd < 0)
		sim_fail(w, "us_socket: %s", strerror(errno));
	if (cp->side[0].nodelay)
		us_setsockopt(e->fd, US_IPPROTO_TCP, US_TCP_NODELAY, &one, sizeof(one));
	end_opts(w, k, 0, e->fd);
	if (cp->side[0].keepalive || cp->idle_ns)
		us_setsockopt(e->fd, US_SOL_SOCKET, US_SO_KEEPALIVE, &one, sizeof(one));
	if (cp->tfo && cp->side[0].bytes > 0) {
		uint64_t len = cp->side[0].bytes < cp->side[0].chunk ? cp->side[0].bytes : cp->side[0].chunk;
		ssize_t n;

		for (uint64_t i = 0; i < len; i++)
			buf[i] = pattern(k, 0, i);
		n = us_sendto(e->fd, buf, (size_t)len, US_MSG_FASTOPEN, (struct sockaddr *)&dst, dlen);
		rc = n < 0 ? -1 : 0;
		if (n > 0)
			e->sent = (uint64_t)n;
		w->n.tfo++;
	} else {
		rc = us_connect(e->fd, (struct sockaddr *)&dst, dlen);
	}
	if (rc != 0 && errno != EINPROGRESS) {
		end_error(w, k, 0, errno);
		return;
	}
	if (us_getsockname(e->fd, (struct sockaddr *)&me, &mlen) != 0)
		sim_fail(w, "us_getsockname: %s", strerror(errno));
	sim_sockaddr_parse(&me, &mine, &c->cport);
	w->progress = true;
}

/* The conversation an accepted connection belongs to: the latest one from
 * that client port not yet accepted (or moving here); -1 if none. */
static int conv_of(struct sim_world *w, unsigned stack, const struct us_in6 *ip, uint16_t port,
		   bool *dup)
{
	int found = -1;

	*dup = false;
	for (unsigned k = 0; k < w->plan.nconvs; k++) {
		const struct sim_conv *c = &w->conv[k];
		const struct sim_conv_plan *cp = &w->plan.conv[k];
		struct us_in6 cli = sim_stack_addr(cp->cli, cp->family);

		if (cp->off || !c->started || cp->srv != stack || !us_in6_eq(&cli, ip) ||
		    c->cport != port)
			continue;
		if (!c->end[1].open || c->end[1].moving)
			found = (int)k;
		else
			*dup = true;
	}
	if (found >= 0)
		*dup = false;
	return found;
}

/* An accepted peer on listener j of a stack: the family its socket names
 * (a V6ONLY listener takes no IPv4 peer). */
static void accept_check(struct sim_world *w, unsigned i, unsigned j,
			 const struct sockaddr_storage *peer, const struct us_in6 *ip, uint16_t port)
{
	int domain = !w->plan.ip6 || (j == 0 && !w->plan.stack[i].dual) ? AF_INET : AF_INET6;
	char ep[US_IN6_EPSTRLEN];

	if (peer->ss_family == domain && !(j == 1 && us_in6_is_v4mapped(ip)))
		return;
	us_in6_endpoint_str(ip, port, ep, sizeof(ep));
	sim_fail(w, "stack %u listener %u (%s%s) accepted %s as family %d", i, j,
		 domain == AF_INET ? "AF_INET" : "AF_INET6", j == 1 ? ", V6ONLY" : "", ep,
		 peer->ss_family);
}

/* A new server end (or a moved one arriving). */
static void server_end(struct sim_world *w, unsigned i, unsigned g, int k, int fd)
{
	struct sim_end *e = &w->conv[k].end[1];
	int one = 1;

	if (e->moving) {
		if (e->eng != g)
			sim_fail(w, "conv %d moved to engine %u, arrived on %u", k, e->eng, g);
		e->fd = fd;
		e->moving = false;
		return;
	}
	*e = (struct sim_end){ .fd = fd, .eng = g, .epoch = w->st[i].epoch, .open = true,
			       .born_ns = w->now };
	end_moved(w, (unsigned)k, 1);
	if (w->plan.conv[k].side[1].nodelay)
		us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_NODELAY, &one, sizeof(one));
	end_opts(w, (unsigned)k, 1, fd);
	if (w->plan.conv[k].side[1].keepalive || w->plan.conv[k].idle_ns)
		us_setsockopt(fd, US_SOL_SOCKET, US_SO_KEEPALIVE, &one, sizeof(one));
}

static void server_accept(struct sim_world *w, unsigned i, unsigned g, unsigned j)
{
	struct sim_eng *eng = &w->st[i].eng[g];
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	struct us_in6 ip;
	uint16_t port;
	bool dup;
	int fd, k;

	if (eng->lfd[j] < 0)
		return;
	sim_bind(w, i, g);
	while ((fd = us_accept(eng->lfd[j], (struct sockaddr *)&peer, &plen)) >= 0) {
		w->progress = true;
		sim_sockaddr_parse(&peer, &ip, &port);
		accept_check(w, i, j, &peer, &ip, port);
		k = conv_of(w, i, &ip, port, &dup);
		plen = sizeof(peer);
		if (k < 0 && dup) { /* a replayed SYN (Fast Open data again): not ours */
			us_close(fd);
			continue;
		}
		if (k < 0) {
			char ep[US_IN6_EPSTRLEN];

			us_in6_endpoint_str(&ip, port, ep, sizeof(ep));
			sim_fail(w, "stack %u accepted %s, which no application opened", i, ep);
		}
		server_end(w, i, g, k, fd);
	}
	if (errno != EAGAIN)
		sim_fail(w, "us_accept: %s", strerror(errno));
}

/* The world's calls */

static void sim_apps_start(struct sim_world *w)
{
	for (unsigned k = 0; k < SIM_CONVS_MAX; k++)
		w->conv[k].end[0].fd = w->conv[k].end[1].fd = -1;
}

/* A socket of domain and type on port of every address of its family
 * (both with domain AF_INET6 unless v6only); -1 and errno on failure. */
static int socket_any(int domain, int type, bool v6only, uint16_t port)
{
	struct us_in6 any = domain == AF_INET ? us_in6_of_v4(0) : (struct us_in6){ 0 };
	struct sockaddr_storage sa;
	socklen_t len = sim_sockaddr(domain, &any, port, &sa);
	int one = 1, fd = us_socket(domain, type, 0);

	if (fd >= 0 && ((v6only && us_setsockopt(fd, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one,
						  sizeof(one)) != 0) ||
			us_bind(fd, (struct sockaddr *)&sa, len) != 0))
		return -1;
	return fd;
}

/* Stack i's sockets of one kind into fds[2] (world.h): AF_INET; or with
 * [ip6], one AF_INET6 of both families, or AF_INET and AF_INET6 V6ONLY. */
static void sockets_open(struct sim_world *w, unsigned i, int type, uint16_t port, int fds[2])
{
	bool dual = w->plan.ip6 && w->plan.stack[i].dual;

	fds[0] = socket_any(dual ? AF_INET6 : AF_INET, type, false, port);
	fds[1] = -1;
	if (fds[0] >= 0 && w->plan.ip6 && !dual)
		fds[1] = socket_any(AF_INET6, type, true, port);
	if (fds[0] < 0 || (w->plan.ip6 && !dual && fds[1] < 0))
		sim_fail(w, "stack %u: %s socket on port %u: %s", i,
			 type == SOCK_STREAM ? "TCP" : "UDP", port, strerror(errno));
}

static void sim_apps_stack_up(struct sim_world *w, unsigned i)
{
	for (unsigned g = 0; g < w->plan.stack[i].engines; g++) {
		struct sim_eng *eng = &w->st[i].eng[g];

		sim_bind(w, i, g);
		sockets_open(w, i, SOCK_STREAM, SIM_TCP_PORT, eng->lfd);
		for (unsigned j = 0; j < 2; j++)
			if (eng->lfd[j] >= 0 && us_listen(eng->lfd[j], (int)w->plan.stack[i].tcp.backlog) != 0)
				sim_fail(w, "stack %u engine %u: listen: %s", i, g, strerror(errno));
		eng->ufd[0] = eng->ufd[1] = -1;
		if (g == 0)
			sockets_open(w, i, SOCK_DGRAM, SIM_UDP_PORT, eng->ufd);
	}
}

static void sim_apps_stack_down(struct sim_world *w, unsigned i)
{
	for (unsigned k = 0; k < w->plan.nconvs; k++)
		for (unsigned s = 0; s < 2; s++) {
			struct sim_end *e = &w->conv[k].end[s];

			if (w->plan.conv[k].off || end_stack(&w->plan, k, s) != i || !e->open || e->done)
				continue;
			e->lost = true;
			e->done = true;
			e->fd = -1;
		}
	for (unsigned g = 0; g < w->plan.stack[i].engines; g++) {
		w->st[i].eng[g].lfd[0] = w->st[i].eng[g].lfd[1] = -1;
		w->st[i].eng[g].ufd[0] = w->st[i].eng[g].ufd[1] = -1;
	}
}

static void conv_update(struct sim_world *w, unsigned k)
{
	struct sim_conv *c = &w->conv[k];

	if (c->done || !c->started)
		return;
	/* The server end must open and finish, unless the client failed (or
	 * reset on purpose): then nobody may come to accept.  A client that
	 * closed with data in flight waits for its server; one that never
	 * comes within SIM_PATIENCE is given up on when a fault or a lossy
	 * path explains it (the orphaned connection failed), else stuck. */
	const struct sim_end *cl = &c->end[0], *sv = &c->end[1];
	bool client_failed = cl->err || cl->lost || c->aborted;

	if (cl->done && !sv->open && !client_failed &&
	    w->now >= w->t0 + w->plan.conv[k].start_ns + SIM_PATIENCE) {
		if (!sim_explained(w, k) && !sim_path_lossy(w, w->plan.conv[k].cli, w->plan.conv[k].srv))
			sim_fail(w, "conv %u (%s): the server never accepted the client's connection", k,
				 sim_conv_str(w, k));
		w->n.convs_gave_up++;
		client_failed = true;
	}
	if (cl->done && (sv->done || (!sv->open && client_failed))) {
		c->done = true;
		c->done_ns = w->now;
		if (w->verbose)
			fprintf(stderr, "  conv %u done at %.6fs: client %lu/%lu bytes in, server %lu/%lu\n",
				k, (w->now - w->t0) / 1e9, (unsigned long)c->end[0].rcvd,
				(unsigned long)w->plan.conv[k].side[1].bytes, (unsigned long)c->end[1].rcvd,
				(unsigned long)w->plan.conv[k].side[0].bytes);
	}
}

static void sim_apps_step(struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nconvs; k++) {
		if (w->plan.conv[k].off)
			continue;
		/* A client starts once its stack's DAD is done (us_init returns
		 * only then). */
		if (!w->conv[k].started && w->now >= w->t0 + w->plan.conv[k].start_ns &&
		    !w->st[w->plan.conv[k].cli].dad_pending)
			client_start(w, k);
		end_step(w, k, 0);
	}
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned g = 0; w->st[i].up && g < w->plan.stack[i].engines; g++)
			for (unsigned j = 0; j < 2; j++)
				server_accept(w, i, g, j);
	for (unsigned k = 0; k < w->plan.nconvs; k++)
		if (!w->plan.conv[k].off) {
			end_step(w, k, 1);
			conv_update(w, k);
		}
	sim_udp_step(w);
}

static void next_min(uint64_t *next, uint64_t t, uint64_t now)
{
	if (t > now && t < *next)
		*next = t;
}

static uint64_t sim_apps_next(const struct sim_world *w)
{
	uint64_t next = UINT64_MAX;

	for (unsigned k = 0; k < w->plan.nconvs; k++) {
		const struct sim_conv *c = &w->conv[k];
		const struct sim_conv_plan *cp = &w->plan.conv[k];

		if (cp->off)
			continue;
		if (!c->started)
			next_min(&next, w->t0 + cp->start_ns, w->now);
		if (c->started && !c->done)
			next_min(&next, w->t0 + cp->start_ns + SIM_PATIENCE, w->now);
		for (unsigned s = 0; s < 2; s++) {
			const struct sim_end *e = &c->end[s];
			const struct sim_side_plan *sp = &cp->side[s];

			if (!e->open || e->done)
				continue;
			next_min(&next, e->next_send_ns, w->now);
			next_min(&next, e->next_read_ns, w->now);
			next_min(&next, e->last_move_ns + SIM_PATIENCE, w->now);
			if (sp->read == SIM_READ_STALL)
				next_min(&next, e->born_ns + sp->stall_at_ns + sp->stall_ns, w->now);
			if (s == 1 && cp->migrate && !e->moved)
				next_min(&next, e->born_ns + cp->migrate_after_ns, w->now);
		}
	}
	next_min(&next, sim_udp_next(w), w->now);
	return next;
}

static bool sim_apps_done(const struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nconvs; k++) {
		const struct sim_conv *c = &w->conv[k];

		if (w->plan.conv[k].off)
			continue;
		if (!c->done || (c->end[1].open && !c->end[1].done))
			return false;
	}
	return sim_udp_done(w);
}

const struct sim_app_ops sim_apps_conv = {
	.start = sim_apps_start, .stack_up = sim_apps_stack_up, .stack_down = sim_apps_stack_down,
	.step = sim_apps_step, .next = sim_apps_next, .done = sim_apps_done,
	.finish = sim_verdict,
};
