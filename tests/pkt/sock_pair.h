/* tests/pkt/sock_pair.h: two engines wired back to back in virtual time,
 * each with its descriptor table (slots 0 and 1), for the socket API tests.
 *
 * A frame one engine transmits is what the other receives on its next poll,
 * copied into one fresh mbuf as a NIC would deliver it.
 * The driver of both tables advances the shared virtual clock by 1 ms and
 * polls both engines, so us_epoll_wait on either side moves the whole
 * two-host world forward.  sp_teardown closes every descriptor, destroys
 * both engines and checks that the mbuf pool is empty again.
 */
#ifndef US_TEST_SOCK_PAIR_H
#define US_TEST_SOCK_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/engine/engine.h"
#include "stack/sock/socket_priv.h"

/* Types */

#define SP_A_IP 0x0a000001u /* 10.0.0.1 */
#define SP_B_IP 0x0a000002u /* 10.0.0.2 */
#define SP_Q_MAX 4096u

/* A TCP segment one side sent, as the wire saw it (host byte order). */
struct sp_seg {
	uint64_t at;        /* sp.now when sent */
	uint8_t flags;      /* TH_* bits */
	uint32_t seq, ack;
	uint32_t wnd;       /* the window field, unscaled */
	int payload;
	int mss;            /* MSS option, -1 when absent */
	uint8_t tos, ttl;   /* IPv4 TOS and TTL (IPv6: traffic class 0, hop limit) */
};
#define SP_LOG_MAX 8192u

struct sp_side {
	struct us_config cfg;
	struct us_port_ops ops;
	struct us_engine *e;
	struct us_sock_table *tab;
	struct rte_mbuf *q[SP_Q_MAX]; /* frames waiting to be received */
	unsigned head, n;
	struct sp_side *peer;
	bool wire_down;               /* frames sent by this side are lost */
	unsigned drop_every;          /* lose every n-th frame this side sends (0: none) */
	unsigned sent;
	uint32_t max_frame;           /* longest frame this side sent, bytes */
	struct sp_seg log[SP_LOG_MAX]; /* TCP segments sent, oldest first */
	unsigned nlog;                /* (stops at SP_LOG_MAX) */
};

struct sp {
	struct sp_side a, b;
	uint64_t now;
};

extern struct sp sp;

/* Prototypes */

/* cfg_hook (may be NULL) edits each side's config before its engine starts. */
void sp_setup(void (*cfg_hook)(struct us_config *cfg));
void sp_teardown(void);
/* Make the calling thread create sockets on this side. */
void sp_on(struct sp_side *s);
/* Run both engines for ms of virtual time. */
void sp_run(unsigned ms);
/* An IPv4 sockaddr_in. */
struct sockaddr_in sp_addr(uint32_t ip, uint16_t port);

/* IPv6 on both sides as well (sp_setup(sp_cfg_ip6)): A sp_a6 (fd00:77::1),
 * B sp_b6 (fd00:77::2), /64, DAD off. */
extern const struct us_in6 sp_a6, sp_b6;
void sp_cfg_ip6(struct us_config *cfg);
/* A sockaddr_in6 for ip:port; ::ffff:ip (ip in host order):port; the
 * address a sockaddr_in6 holds. */
struct sockaddr_in6 sp_addr6(const struct us_in6 *ip, uint16_t port);
struct sockaddr_in6 sp_mapped(uint32_t ip, uint16_t port);
struct us_in6 sp_in6_of(const struct sockaddr_in6 *s);

/* The first SYN waiting in side's receive queue (sent by its peer, not
 * received yet), IPv4 or IPv6: its payload bytes and the Fast Open
 * option's cookie length (-1: no option; 0: a cookie request). */
struct sp_syn {
	bool found;
	int family; /* AF_INET or AF_INET6 */
	int payload, cookie_len;
};
struct sp_syn sp_syn_waiting(const struct sp_side *side);

/* Forgets the segments side sent so far. */
void sp_log_clear(struct sp_side *side);
/* Segments side sent since the last clear with all of flags set (0: any)
 * and none of not. */
unsigned sp_log_count(const struct sp_side *side, uint8_t flags, uint8_t not);
/* The largest payload among them. */
int sp_log_max_payload(const struct sp_side *side);

/* For the option tests (tests/pkt/test_sockopt*.c): an int option set
 * (must succeed) and read back (its length checked). */
void sp_set_int(int fd, int level, int name, int v);
int sp_get_int(int fd, int level, int name);
/* A TCP listener on B at port, prep(fd) (may be NULL) run before listen. */
int sp_listen_b(uint16_t port, void (*prep)(int fd));
/* A TCP socket on A, prep(fd) (may be NULL) run before its connect to
 * B:port (EINPROGRESS). */
int sp_connect_a(uint16_t port, void (*prep)(int fd));
/* A connected pair through B's listener l on port: *c on A, *s accepted
 * on B; the thread on A after. */
void sp_pair(int l, uint16_t port, void (*cprep)(int fd), int *c, int *s);
/* Everything B's socket s can read now, dropped; the byte count. */
size_t sp_drain_b(int s);
/* Closes c on A and s, l on B (each -1 skipped); the thread on A after. */
void sp_close3(int c, int s, int l);

/* Waits up to ms for fd's events (one of interest) on a fresh epoll of
 * side's table, then binds the thread to side A again; 0 for none. */
uint32_t sp_wait_events(struct sp_side *side, int fd, uint32_t interest, int ms);

/* cmocka set-up and teardown for a test on a fresh pair (sp_setup(NULL),
 * sp_teardown with its leak check). */
int sp_test_setup(void **state);
/* The same with IPv6 on both sides (sp_cfg_ip6). */
int sp_test_setup6(void **state);
int sp_test_teardown(void **state);

/* For the tests (cmocka included first) */

#define SA(x) ((struct sockaddr *)&(x))

/* A cmocka test on a fresh pair. */
#define sp_unit_test(f) cmocka_unit_test_setup_teardown(f, sp_test_setup, sp_test_teardown)
/* A cmocka test on a fresh pair with IPv6 on both sides. */
#define sp_unit_test6(f) cmocka_unit_test_setup_teardown(f, sp_test_setup6, sp_test_teardown)

/* call returns -1 with this errno. */
#define assert_fails(call, err) do { \
	errno = 0; \
	assert_int_equal((long)(call), -1); \
	assert_int_equal(errno, (err)); \
} while (0)

#endif
