/* syn_flood.c: a spoofed-source SYN flooder for the flood tests.
 *
 * Sends Ethernet frames carrying TCP SYNs (MSS option only) from random
 * sources in a given prefix and random ports to one address and port,
 * through an AF_PACKET socket on one interface with sendmmsg() batches and
 * PACKET_QDISC_BYPASS: no routing, no neighbour lookup, no netfilter on the
 * way out, so one core sends as fast as the interface takes frames.
 *
 *   syn_flood IFACE DST_MAC DST_IP DPORT SRC_NET/LEN SECONDS [PPS]
 *
 * PPS 0 or absent: as fast as possible.  Prints one summary line:
 *   syn_flood: sent N SYNs in T s (R/s), E send errors
 * (E: frames refused because the interface queue was full).
 * Exit status 0, or 1 on a bad argument or when nothing could be sent.
 * Only for the interfaces a test creates (its own namespace's tap).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Types */

#define FLOOD_BATCH 64
#define FLOOD_FRAME_LEN (14 + 20 + 24) /* Ethernet + IPv4 + TCP with MSS */

struct flood_args {
	const char *iface;
	uint8_t dst_mac[6];
	uint32_t dst_ip;   /* network order */
	uint16_t dport;    /* network order */
	uint32_t src_net;  /* host order */
	uint32_t src_mask; /* host order */
	double secs;
	double pps;        /* 0: unpaced */
};

struct flood_gen {
	uint8_t src_mac[6];
	uint64_t rng;
};

/* Functions */

static uint64_t flood_rand(struct flood_gen *g)
{
	/* xorshift64: fast and good enough for addresses, ports, sequences */
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static double flood_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RFC 1071: the ones' complement sum folded to 16 bits. */
static uint32_t flood_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t flood_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* One SYN from a fresh random source into f (FLOOD_FRAME_LEN bytes). */
static void flood_frame(const struct flood_args *a, struct flood_gen *g, uint8_t *f)
{
	uint64_t r = flood_rand(g);
	uint32_t src = htonl(a->src_net | ((uint32_t)r & ~a->src_mask));
	uint16_t sport = htons((uint16_t)(1024 + (r >> 32) % 64511));
	uint32_t seq = (uint32_t)flood_rand(g);
	uint8_t *ip = f + 14, *tcp = ip + 20;
	uint16_t v16;

	memcpy(f, a->dst_mac, 6);
	memcpy(f + 6, g->src_mac, 6);
	f[12] = 0x08, f[13] = 0x00;
	memset(ip, 0, 20 + 24);
	ip[0] = 0x45;
	v16 = htons(20 + 24);
	memcpy(ip + 2, &v16, 2);
	v16 = (uint16_t)(r >> 48);
	memcpy(ip + 4, &v16, 2);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &a->dst_ip, 4);
	v16 = flood_fold(flood_sum(ip, 20, 0));
	memcpy(ip + 10, &v16, 2);
	memcpy(tcp, &sport, 2);
	memcpy(tcp + 2, &a->dport, 2);
	memcpy(tcp + 4, &seq, 4);
	tcp[12] = 6 << 4; /* 24 bytes: header + MSS option */
	tcp[13] = 0x02;   /* SYN */
	v16 = htons(64240);
	memcpy(tcp + 14, &v16, 2);
	tcp[20] = 2, tcp[21] = 4, tcp[22] = 1460 >> 8, tcp[23] = 1460 & 0xff;
	/* RFC 9293 3.1: the checksum covers the pseudo-header too */
	uint32_t sum = flood_sum(ip + 12, 8, IPPROTO_TCP + 24);
	v16 = flood_fold(flood_sum(tcp, 24, sum));
	memcpy(tcp + 16, &v16, 2);
}

static int flood_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int flood_parse_net(const char *s, uint32_t *net, uint32_t *mask)
{
	char buf[32];
	struct in_addr a;
	char *slash;
	long len;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return -EINVAL;
	*slash = '\0';
	len = strtol(slash + 1, NULL, 10);
	if (inet_pton(AF_INET, buf, &a) != 1 || len < 1 || len > 32)
		return -EINVAL;
	*mask = len == 32 ? UINT32_MAX : ~(UINT32_MAX >> len);
	*net = ntohl(a.s_addr) & *mask;
	return 0;
}

static int flood_parse(int argc, char **argv, struct flood_args *a)
{
	struct in_addr dst;
	long port;

	if (argc < 7 || argc > 8)
		return -EINVAL;
	a->iface = argv[1];
	port = strtol(argv[4], NULL, 10);
	a->secs = strtod(argv[6], NULL);
	a->pps = argc == 8 ? strtod(argv[7], NULL) : 0;
	if (flood_parse_mac(argv[2], a->dst_mac) < 0 || inet_pton(AF_INET, argv[3], &dst) != 1 ||
	    port < 1 || port > 65535 || flood_parse_net(argv[5], &a->src_net, &a->src_mask) < 0 ||
	    a->secs <= 0 || a->pps < 0)
		return -EINVAL;
	a->dst_ip = dst.s_addr;
	a->dport = htons((uint16_t)port);
	return 0;
}

/* An AF_PACKET socket bound to iface; fd or -errno. */
static int flood_socket(const char *iface)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
	struct ifreq ifr;
	int one = 1;
	int fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: we never receive */

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	sll.sll_ifindex = ifr.ifr_ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* Best effort: without it frames still go out, through the qdisc. */
	(void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	return fd;
}

static int flood_mac(const char *iface, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int rc = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		rc = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return rc;
}

/* Send until a->secs passed; *errs counts frames the kernel refused. */
static uint64_t flood_run(int fd, const struct flood_args *a, struct flood_gen *g,
			  uint64_t *errs, double *elapsed)
{
	static uint8_t frames[FLOOD_BATCH][FLOOD_FRAME_LEN];
	struct iovec iov[FLOOD_BATCH];
	struct mmsghdr msgs[FLOOD_BATCH];
	double t0 = flood_now(), now = t0;
	uint64_t sent = 0;

	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < FLOOD_BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = frames[i], .iov_len = FLOOD_FRAME_LEN };
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (now - t0 < a->secs) {
		if (a->pps > 0 && (double)sent > a->pps * (now - t0)) {
			usleep(200);
			now = flood_now();
			continue;
		}
		for (int i = 0; i < FLOOD_BATCH; i++)
			flood_frame(a, g, frames[i]);
		int n = sendmmsg(fd, msgs, FLOOD_BATCH, 0);
		if (n > 0)
			sent += (uint64_t)n;
		if (n < FLOOD_BATCH) {
			/* The tap's queue is full (ENOBUFS): give the core to the
			 * reader instead of spinning on refusals. */
			*errs += (uint64_t)(FLOOD_BATCH - (n > 0 ? n : 0));
			sched_yield();
		}
		now = flood_now();
	}
	*elapsed = now - t0;
	return sent;
}

int main(int argc, char **argv)
{
	struct flood_args a;
	struct flood_gen g = { .rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() };
	uint64_t errs = 0, sent;
	double secs;
	int fd, rc;

	if (flood_parse(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: %s IFACE DST_MAC DST_IP DPORT SRC_NET/LEN SECONDS [PPS]\n",
			argv[0]);
		return 1;
	}
	rc = flood_mac(a.iface, g.src_mac);
	fd = rc < 0 ? rc : flood_socket(a.iface);
	if (fd < 0) {
		fprintf(stderr, "syn_flood: %s: %s\n", a.iface, strerror(-fd));
		return 1;
	}
	sent = flood_run(fd, &a, &g, &errs, &secs);
	close(fd);
	printf("syn_flood: sent %llu SYNs in %.2f s (%.0f/s), %llu send errors\n",
	       (unsigned long long)sent, secs, (double)sent / secs, (unsigned long long)errs);
	return sent > 0 ? 0 : 1;
}
