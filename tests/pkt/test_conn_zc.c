/* The callback API's zero-copy calls (userstack.h: us_conn_recv_mbuf,
 * us_conn_send_mbuf) between two engines in virtual time: a client socket
 * on A, a callback listener on B.  Their rules are the sockets' (us_recv_mbuf,
 * us_send_mbuf, tests/pkt/test_socket.c): a received chain is the caller's,
 * a sent one the stack's on success and the caller's on failure; here a
 * chain also goes back out on the connection it came from (an echo with no
 * copy), and on_writable follows an EAGAIN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/sock/conn.h"
#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80

/* The life cycle's side of the callback API (stack/api), for engine B
 * alone: conn.c finds its engine and listener records here. */
struct us_stack {
	struct us_conn_listeners ls;
};

static struct us_stack st;

struct us_engine *us_stack_engine(const struct us_stack *s, unsigned k)
{
	(void)s;
	return k == 0 ? sp.b.e : NULL;
}

struct us_conn_listeners *us_stack_listeners(struct us_stack *s)
{
	return &s->ls;
}

unsigned us_engine_count(const struct us_stack *s)
{
	(void)s;
	return 1;
}

/* Handlers: remember the connection, count the calls. */
static struct {
	struct us_conn *c;
	unsigned readable, writable, closed;
} srv;

static void on_accept(void *ctx, struct us_conn *c)
{
	(void)ctx;
	srv.c = c;
}

static void on_readable(void *ctx, struct us_conn *c)
{
	(void)ctx;
	(void)c;
	srv.readable++;
}

static void on_writable(void *ctx, struct us_conn *c)
{
	(void)ctx;
	(void)c;
	srv.writable++;
}

static void on_closed(void *ctx, struct us_conn *c, int err)
{
	(void)ctx;
	(void)c;
	(void)err;
	srv.closed++;
	srv.c = NULL;
}

static const struct us_tcp_handlers handlers = {
	.on_accept = on_accept, .on_readable = on_readable,
	.on_writable = on_writable, .on_closed = on_closed,
};

/* A client socket on A connected to the callback listener on B. */
static int connect_to_b(void)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	int fd;

	memset(&srv, 0, sizeof(srv));
	memset(&st, 0, sizeof(st));
	assert_int_equal(us_tcp_listen_engine(&st, 0, PORT, &handlers, NULL), 0);
	sp_on(&sp.a);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	assert_fails(us_connect(fd, SA(to), sizeof(to)), EINPROGRESS);
	assert_int_equal(sp_wait_events(&sp.a, fd, US_EPOLLOUT, 100), US_EPOLLOUT);
	sp_run(2);
	assert_non_null(srv.c);
	return fd;
}

/* An mbuf of the shared pool holding text. */
static struct rte_mbuf *seg_of(const char *text)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)strlen(text)), text, strlen(text));
	return m;
}

/* An mbuf of the shared pool with len bytes of zeros. */
static struct rte_mbuf *seg_len(uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);

	assert_non_null(m);
	memset(rte_pktmbuf_append(m, len), 0, len);
	return m;
}

static void test_conn_zero_copy(void **state)
{
	struct rte_mbuf *m, *got = (struct rte_mbuf *)&got;
	char flat[32];
	int fd;

	(void)state;
	fd = connect_to_b();
	assert_fails(us_conn_recv_mbuf(srv.c, NULL), EFAULT);
	assert_fails(us_conn_send_mbuf(srv.c, NULL), EFAULT);
	assert_fails(us_conn_recv_mbuf(srv.c, &got), EAGAIN);
	assert_null(got);
	/* Received payload mbufs go back out as they are: an echo, no copy. */
	assert_int_equal(us_send(fd, "zero-copy!", 10, 0), 10);
	sp_run(5);
	assert_true(srv.readable > 0);
	assert_int_equal(us_conn_recv_mbuf(srv.c, &got), 10);
	assert_int_equal(rte_pktmbuf_pkt_len(got), 10);
	assert_memory_equal(rte_pktmbuf_read(got, 0, 10, flat), "zero-copy!", 10);
	assert_int_equal(us_conn_send_mbuf(srv.c, got), 10);
	assert_int_equal(sp_wait_events(&sp.a, fd, US_EPOLLIN, 100), US_EPOLLIN);
	assert_int_equal(us_recv(fd, flat, sizeof(flat), 0), 10);
	assert_memory_equal(flat, "zero-copy!", 10);
	/* A caller-built chain, then copied data behind it. */
	m = seg_of("ab");
	assert_int_equal(rte_pktmbuf_chain(m, seg_of("cd")), 0);
	assert_int_equal(us_conn_send_mbuf(srv.c, m), 4);
	assert_int_equal(us_conn_send(srv.c, "e", 1), 1);
	sp_run(50);
	assert_int_equal(us_recv(fd, flat, sizeof(flat), 0), 5);
	assert_memory_equal(flat, "abcde", 5);
	/* A shared segment is refused and stays the caller's. */
	m = seg_of("xy");
	rte_mbuf_refcnt_update(m, 1);
	assert_fails(us_conn_send_mbuf(srv.c, m), EINVAL);
	rte_mbuf_refcnt_update(m, -1);
	/* The peer's FIN: end of stream, 0 and no chain. */
	assert_int_equal(us_shutdown(fd, US_SHUT_WR), 0);
	sp_run(5);
	got = (struct rte_mbuf *)&got;
	assert_int_equal(us_conn_recv_mbuf(srv.c, &got), 0);
	assert_null(got);
	/* After our FIN: EPIPE, still the caller's. */
	assert_int_equal(us_conn_shutdown_write(srv.c), 0);
	assert_fails(us_conn_send_mbuf(srv.c, m), EPIPE);
	rte_pktmbuf_free(m);
	assert_int_equal(us_close(fd), 0);
	sp_run(5);
	assert_int_equal(srv.closed, 1); /* both sides done */
}

static void small_sndbuf(struct us_config *cfg)
{
	cfg->tcp.sndbuf = 4096;
}

/* A chain larger than the room left: EAGAIN, the chain stays the caller's,
 * and on_writable follows once ACKs free half the buffer; larger than the
 * whole buffer: EMSGSIZE. */
static void test_conn_zero_copy_full(void **state)
{
	static char fill[3000];
	struct rte_mbuf *m, *big;
	int fd;

	(void)state;
	sp_teardown();
	sp_setup(small_sndbuf);
	fd = connect_to_b();
	sp.b.wire_down = true; /* nothing B sends arrives, nothing is ACKed */
	assert_int_equal(us_conn_send(srv.c, fill, sizeof(fill)), 3000);
	m = seg_len(1500);
	assert_fails(us_conn_send_mbuf(srv.c, m), EAGAIN); /* 3000 + 1500 > 4096 */
	big = seg_len(2000);
	assert_int_equal(rte_pktmbuf_chain(big, seg_len(1500)), 0);
	assert_int_equal(rte_pktmbuf_chain(big, seg_len(1000)), 0);
	assert_fails(us_conn_send_mbuf(srv.c, big), EMSGSIZE); /* 4500 > 4096 */
	rte_pktmbuf_free(big);
	assert_int_equal(srv.writable, 0);
	sp.b.wire_down = false; /* the retransmission gets through and is ACKed */
	sp_run(1500);
	assert_int_equal(srv.writable, 1);
	assert_int_equal(us_conn_send_mbuf(srv.c, m), 1500);
	assert_int_equal(us_conn_close(srv.c), 0);
	assert_int_equal(us_close(fd), 0);
	sp_run(5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_conn_zero_copy),
		sp_unit_test(test_conn_zero_copy_full),
	};

	h_eal_init("pkt_conn_zc");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
