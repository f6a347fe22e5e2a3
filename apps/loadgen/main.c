/* apps/loadgen/main.c: us-loadgen's options, loop and report (loadgen.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loadgen.h"

#define LG_EVENTS 256
#define LG_MAX_ENGINES 16

static volatile int lg_stop;

static void lg_on_signal(int sig)
{
	(void)sig;
	lg_stop = 1;
}

uint64_t lg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lg_usage(FILE *out)
{
	fprintf(out,
		"usage: us-loadgen --target ADDR:PORT [options]\n"
		"HTTP/1.1 or raw TCP request/response load on userstack.\n"
		"  --config FILE        userstack INI config (default config/tap.ini)\n"
		"  --target ADDR:PORT   server to load (required): a.b.c.d:port or [IPv6]:port\n"
		"  --connections N      concurrent connections (default 64)\n"
		"  --duration S         seconds to run (default 10; fractions allowed)\n"
		"  --requests N         stop after N answered requests (--duration, when\n"
		"                       given, still bounds the run; e.g. bench/soak.sh)\n"
		"  --request-size B     HTTP: POST body bytes, 0 = GET (default 0);\n"
		"                       raw: request bytes (default 64)\n"
		"  --response-size B    raw: response bytes expected (default = request)\n"
		"  --raw                raw TCP instead of HTTP/1.1\n"
		"  --close              one connection per request (default keep-alive)\n"
		"  --rate R             requests per second in total (default: as fast as\n"
		"                       the server answers)\n"
		"  --path P             HTTP request target (default /)\n"
		"  --timeout-ms MS      connect and response timeout (default 5000)\n"
		"  --json FILE          write the summary as JSON too\n"
		"  --delay S            run the stack S seconds before starting (default 0),\n"
		"                       e.g. while the peer configures a new tap interface\n"
		"  --quiet              no progress line each second\n"
		"  --stats              print the stack's counters at the end\n"
		"  --fastopen           TCP Fast Open (RFC 7413): each new connection sends its\n"
		"                       first request in the SYN (us_sendto US_MSG_FASTOPEN)\n"
		"                       once the server's cookie is cached; use with --close\n"
		"  --from-connect       a connection's first request's latency counts from\n"
		"                       the connect (the handshake included: compares plain\n"
		"                       and --fastopen connections per request)\n"

		"  --engines N          N engines (one queue and lcore each), the connections\n"
		"                       and the rate split between them (default 1)\n"
		"  --lcores LIST        EAL lcores for the engines (default 0-(N-1))\n"
		"  --download           one GET of --path on one connection: the body's\n"
		"                       length, SHA-256 and rate printed, then exit (1 if\n"
		"                       it failed); --duration and --timeout-ms bound it\n"
		"  --check-echo         every response body (raw: the response) must be the\n"
		"                       request's bytes, as an echo server sends them back;\n"
		"                       a difference counts as error echo_mismatch\n"
		"  --idle N             first open N connections that then stay idle (no\n"
		"                       request), then run the load (e.g. bench/: the rate\n"
		"                       with 100 K idle connections open)\n"
		"  --idle-ports P       the idle connections go to the P ports after the\n"
		"                       target's, round robin (one client address reaches\n"
		"                       ~28 K connections per server port; default 0: the\n"
		"                       target's port)\n"
		"  --idle-wait S        poll S seconds before and after opening them (default 0)\n");
}

/* a.b.c.d:port or [IPv6]:port (RFC 3986 3.2.2's brackets, as curl takes
 * it); the text is also the HTTP Host header. */
static int lg_parse_target(struct lg_opts *o, const char *s)
{
	char host[64];
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hlen;
	char *end;
	unsigned long port;
	bool v6 = s[0] == '[';

	if (colon == NULL)
		return -1;
	hlen = (size_t)(colon - s);
	if (v6) {
		if (hlen < 2 || s[hlen - 1] != ']')
			return -1;
		h = s + 1;
		hlen -= 2;
	}
	if (hlen >= sizeof(host) || strlen(s) >= sizeof(o->target_text))
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port == 0 || port > 65535)
		return -1;
	memset(&o->target, 0, sizeof(o->target));
	if (v6) {
		if (inet_pton(AF_INET6, host, &o->target.sin6.sin6_addr) != 1)
			return -1;
		o->target.sin6.sin6_family = AF_INET6;
		o->target.sin6.sin6_port = htons((uint16_t)port);
		o->target_len = sizeof(o->target.sin6);
	} else {
		if (inet_pton(AF_INET, host, &o->target.sin.sin_addr) != 1)
			return -1;
		o->target.sin.sin_family = AF_INET;
		o->target.sin.sin_port = htons((uint16_t)port);
		o->target_len = sizeof(o->target.sin);
	}
	snprintf(o->target_text, sizeof(o->target_text), "%s", s);
	return 0;
}

union lg_sockaddr lg_target_port(const struct lg_opts *o, uint16_t port)
{
	union lg_sockaddr a = o->target;

	if (a.sa.sa_family == AF_INET6)
		a.sin6.sin6_port = htons(port);
	else
		a.sin.sin_port = htons(port);
	return a;
}

uint16_t lg_target_port_of(const struct lg_opts *o)
{
	return ntohs(o->target.sa.sa_family == AF_INET6 ? o->target.sin6.sin6_port
							  : o->target.sin.sin_port);
}

/* --download: one connection, one GET (Connection: close). */
static int lg_download_opts(struct lg_opts *o)
{
	if (!o->download)
		return 0;
	if (o->mode == LG_RAW || o->req_size > 0 || o->engines > 1) {
		fprintf(stderr, "us-loadgen: --download is one HTTP GET on one engine\n");
		return -1;
	}
	o->conns = 1;
	o->keepalive = false;
	return 0;
}

/* --check-echo compares the response with the request: same length. */
static int lg_echo_opts(const struct lg_opts *o)
{
	if (o->check_echo && (o->download || o->resp_size != o->req_size)) {
		fprintf(stderr, "us-loadgen: --check-echo needs the response as long as the "
			"request (no --download, no other --response-size)\n");
		return -1;
	}
	return 0;
}

/* How an option's text lands in struct lg_opts (the field at .off). */
enum lg_optkind {
	LG_OPT_SET,    /* bool = true (no argument) */
	LG_OPT_CLEAR,  /* bool = false (no argument) */
	LG_OPT_RAW,    /* mode = LG_RAW (no argument) */
	LG_OPT_HELP,   /* the usage on stdout, exit 0 */
	LG_OPT_STR,    /* const char * = the argument */
	LG_OPT_BUF,    /* char[] = a copy of it */
	LG_OPT_UINT,   /* unsigned = strtoul */
	LG_OPT_U32,    /* uint32_t = strtoul */
	LG_OPT_U64,    /* uint64_t = strtoull */
	LG_OPT_DOUBLE, /* double = strtod */
	LG_OPT_TARGET, /* target and target_text from a.b.c.d:port */
};

struct lg_optdef {
	const char *name;
	enum lg_optkind kind;
	size_t off, size;
};

#define LG_FIELD(f) offsetof(struct lg_opts, f), sizeof(((struct lg_opts *)NULL)->f)

/* The options, one line each (and a paragraph in lg_usage); getopt_long
 * names the candidates of an ambiguous prefix in this order. */
static const struct lg_optdef lg_optdefs[] = {
	{ "config", LG_OPT_STR, LG_FIELD(config) },
	{ "target", LG_OPT_TARGET, LG_FIELD(target) },
	{ "connections", LG_OPT_UINT, LG_FIELD(conns) },
	{ "duration", LG_OPT_DOUBLE, LG_FIELD(duration_s) },
	{ "request-size", LG_OPT_U64, LG_FIELD(req_size) },
	{ "response-size", LG_OPT_U64, LG_FIELD(resp_size) },
	{ "raw", LG_OPT_RAW, LG_FIELD(mode) },
	{ "close", LG_OPT_CLEAR, LG_FIELD(keepalive) },
	{ "rate", LG_OPT_DOUBLE, LG_FIELD(rate) },
	{ "path", LG_OPT_STR, LG_FIELD(path) },
	{ "json", LG_OPT_STR, LG_FIELD(json) },
	{ "timeout-ms", LG_OPT_U32, LG_FIELD(timeout_ms) },
	{ "quiet", LG_OPT_SET, LG_FIELD(quiet) },
	{ "delay", LG_OPT_DOUBLE, LG_FIELD(delay_s) },
	{ "help", LG_OPT_HELP, 0, 0 },
	{ "stats", LG_OPT_SET, LG_FIELD(stats) },
	{ "fastopen", LG_OPT_SET, LG_FIELD(fastopen) },
	{ "from-connect", LG_OPT_SET, LG_FIELD(from_connect) },
	{ "engines", LG_OPT_UINT, LG_FIELD(engines) },
	{ "lcores", LG_OPT_BUF, LG_FIELD(lcores) },
	{ "requests", LG_OPT_U64, LG_FIELD(max_requests) },
	{ "download", LG_OPT_SET, LG_FIELD(download) },
	{ "check-echo", LG_OPT_SET, LG_FIELD(check_echo) },
	{ "idle", LG_OPT_UINT, LG_FIELD(idle) },
	{ "idle-ports", LG_OPT_UINT, LG_FIELD(idle_ports) },
	{ "idle-wait", LG_OPT_DOUBLE, LG_FIELD(idle_wait_s) },
};

#define LG_NOPTS (sizeof(lg_optdefs) / sizeof(lg_optdefs[0]))
#define LG_OPTV0 256 /* getopt_long's value of lg_optdefs[0]; clear of '?' */

/* The value's bytes into d's field, whose size must be the value's. */
static void lg_store(struct lg_opts *o, const struct lg_optdef *d, const void *v, size_t size)
{
	if (d->size != size) { /* a table entry of the wrong kind: a bug here */
		fprintf(stderr, "us-loadgen: --%s: option table entry of the wrong kind\n",
			d->name);
		abort();
	}
	memcpy((char *)o + d->off, v, size);
}

/* One option: 0, or -1 (message printed). */
static int lg_apply(struct lg_opts *o, const struct lg_optdef *d, const char *arg)
{
	bool b = d->kind == LG_OPT_SET;
	enum lg_mode mode = LG_RAW;
	unsigned u;
	uint32_t u32;
	uint64_t u64;
	double x;

	switch (d->kind) {
	case LG_OPT_SET:
	case LG_OPT_CLEAR:
		lg_store(o, d, &b, sizeof(b));
		break;
	case LG_OPT_RAW:
		lg_store(o, d, &mode, sizeof(mode));
		break;
	case LG_OPT_HELP:
		lg_usage(stdout);
		exit(0);
	case LG_OPT_STR:
		lg_store(o, d, &arg, sizeof(arg));
		break;
	case LG_OPT_BUF:
		snprintf((char *)o + d->off, d->size, "%s", arg);
		break;
	case LG_OPT_UINT:
		u = (unsigned)strtoul(arg, NULL, 10);
		lg_store(o, d, &u, sizeof(u));
		break;
	case LG_OPT_U32:
		u32 = (uint32_t)strtoul(arg, NULL, 10);
		lg_store(o, d, &u32, sizeof(u32));
		break;
	case LG_OPT_U64:
		u64 = strtoull(arg, NULL, 10);
		lg_store(o, d, &u64, sizeof(u64));
		break;
	case LG_OPT_DOUBLE:
		x = strtod(arg, NULL);
		lg_store(o, d, &x, sizeof(x));
		break;
	case LG_OPT_TARGET:
		if (lg_parse_target(o, arg) < 0) {
			fprintf(stderr, "us-loadgen: --target '%s': need a.b.c.d:port or [addr]:port\n",
				arg);
			return -1;
		}
		break;
	}
	return 0;
}

/* Was option name on the command line? */
static bool lg_given(const bool *given, const char *name)
{
	for (size_t i = 0; i < LG_NOPTS; i++)
		if (strcmp(lg_optdefs[i].name, name) == 0)
			return given[i];
	return false;
}

/* The options together: defaults that depend on others, then ranges and
 * combinations; 0 or -1 (message printed). */
static int lg_check(struct lg_opts *o, const bool *given)
{
	if (o->max_requests > 0 && !lg_given(given, "duration"))
		o->duration_s = 1e7;  /* the request count ends the run */
	if (o->target_len == 0 || o->conns == 0 || o->conns > 60000 ||
	    o->duration_s <= 0 || o->timeout_ms == 0 || o->rate < 0 || o->engines == 0 ||
	    o->engines > LG_MAX_ENGINES || o->engines > o->conns) {
		fprintf(stderr, "us-loadgen: need --target, connections 1..60000, duration > 0, "
			"timeout > 0, rate >= 0, engines 1..%u and <= connections\n",
			LG_MAX_ENGINES);
		return -1;
	}
	if (lg_download_opts(o) < 0)
		return -1;
	if (o->idle > 4000000 || o->idle_ports > 1000 || o->idle_wait_s < 0) {
		fprintf(stderr, "us-loadgen: --idle 0..4000000, --idle-ports 0..1000, "
			"--idle-wait >= 0\n");
		return -1;
	}
	if (o->engines > 1 && o->lcores[0] == '\0')
		snprintf(o->lcores, sizeof(o->lcores), "0-%u", o->engines - 1);
	if (o->mode == LG_RAW && !lg_given(given, "request-size"))
		o->req_size = 64;
	if (o->mode == LG_RAW && o->req_size == 0) {
		fprintf(stderr, "us-loadgen: --raw needs --request-size >= 1\n");
		return -1;
	}
	if (!lg_given(given, "response-size"))
		o->resp_size = o->req_size;
	if (lg_echo_opts(o) < 0)
		return -1;
	o->host = o->target_text;
	return 0;
}

static int lg_parse(int argc, char **argv, struct lg_opts *o)
{
	struct option longs[LG_NOPTS + 1];
	bool given[LG_NOPTS] = { false };
	int ch;

	for (size_t i = 0; i < LG_NOPTS; i++)
		longs[i] = (struct option){ lg_optdefs[i].name,
					    lg_optdefs[i].kind < LG_OPT_STR ? no_argument
									    : required_argument,
					    NULL, LG_OPTV0 + (int)i };
	longs[LG_NOPTS] = (struct option){ NULL, 0, NULL, 0 };
	*o = (struct lg_opts){ .config = "config/tap.ini", .path = "/", .conns = 64,
			       .duration_s = 10, .keepalive = true, .timeout_ms = 5000,
			       .engines = 1 };
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (ch < LG_OPTV0 || ch >= LG_OPTV0 + (int)LG_NOPTS) {
			lg_usage(stderr); /* unknown option or missing argument */
			return -1;
		}
		if (lg_apply(o, &lg_optdefs[ch - LG_OPTV0], optarg) < 0)
			return -1;
		given[ch - LG_OPTV0] = true;
	}
	return lg_check(o, given);
}

static void lg_progress(struct lg_run *r, uint64_t now, uint64_t *t_last)
{
	double dt = (double)(now - *t_last) / 1e9;
	unsigned open = 0;

	for (unsigned i = 0; i < r->o.conns; i++)
		open += r->c[i].state != LG_IDLE && r->c[i].state != LG_CONNECTING;
	if (!r->o.quiet)
		printf("[%5.1fs] %8.0f req/s  p50 %7.1f us  p99 %7.1f us  conns %u  errors %llu\n",
		       (double)(now - r->t0) / 1e9, (double)r->sec_requests / dt,
		       (double)lg_hist_percentile(&r->lat_sec, 50) / 1e3,
		       (double)lg_hist_percentile(&r->lat_sec, 99) / 1e3, open,
		       (unsigned long long)lg_errors_total(&r->err));
	fflush(stdout);
	r->sec_requests = 0;
	lg_hist_init(&r->lat_sec);
	*t_last = now;
}

static void lg_refill(struct lg_run *r, uint64_t now)
{
	double burst = r->o.rate / 100.0 + 1.0; /* at most 10 ms worth at once */

	if (r->o.rate <= 0)
		return;
	r->tokens += r->o.rate * (double)(now - r->t_tokens) / 1e9;
	if (r->tokens > burst)
		r->tokens = burst;
	r->t_tokens = now;
}

/* --download ends with its response or its first error (no retry). */
static bool lg_download_over(const struct lg_run *r)
{
	return r->o.download && (r->finished || lg_errors_total(&r->err) > 0);
}

static void lg_loop(struct lg_run *r)
{
	struct us_epoll_event evs[LG_EVENTS];
	uint64_t now = lg_now_ns(), t_tick = 0, t_sec;
	uint64_t t_go = now + (uint64_t)(r->o.delay_s * 1e9);

	while (!lg_stop && now < t_go) {
		us_epoll_wait(r->ep, evs, LG_EVENTS, 10);
		now = lg_now_ns();
	}
	if (lg_idle_start(r) < 0) {
		lg_stop = 1;
		return;
	}
	now = lg_now_ns();
	t_sec = now;
	r->t0 = r->t_tokens = now;
	r->t_end = now + (uint64_t)(r->o.duration_s * 1e9);
	/* One connection first: its SYN resolves the next hop, so the others'
	 * SYNs do not overflow ARP's pending queue ([arp] pending_max) and wait
	 * for a retransmission.  The rest start once it connected or failed. */
	lg_conn_start(r, &r->c[0], now);
	for (unsigned i = 1; i < r->o.conns; i++)
		r->c[i].t_retry = UINT64_MAX;
	while (!lg_stop && !lg_download_over(r) && (now = lg_now_ns()) < r->t_end &&
	       (r->o.max_requests == 0 || r->requests < r->o.max_requests)) {
		int n = us_epoll_wait(r->ep, evs, LG_EVENTS, 0);

		now = lg_now_ns();
		for (int i = 0; i < n; i++)
			lg_conn_event(r, evs[i].data.ptr, evs[i].events, now);
		if (now - t_tick >= 1000000ull) { /* timers: once a millisecond */
			lg_refill(r, now);
			for (unsigned i = 0; i < r->o.conns; i++)
				lg_conn_tick(r, &r->c[i], now);
			t_tick = now;
		}
		if (now - t_sec >= 1000000000ull)
			lg_progress(r, now, &t_sec);
	}
	r->t_end = now;
}

/* --download: the body's length, SHA-256 and rate (the whole run's time). */
static void lg_report_download(const struct lg_run *r, FILE *out, bool json, double secs)
{
	if (!r->o.download)
		return;
	if (!json)
		fprintf(out, "download: %s, %llu body bytes, sha256 %s, %.1f MB/s\n",
			r->finished ? "complete" : "INCOMPLETE",
			(unsigned long long)r->body_bytes, r->body_hex,
			(double)r->body_bytes / secs / 1e6);
	else
		fprintf(out, ",\n  \"download\": {\n    \"complete\": %s,\n    \"bytes\": %llu,\n"
			"    \"sha256\": \"%s\",\n    \"mbytes_per_s\": %.1f\n  }",
			r->finished ? "true" : "false", (unsigned long long)r->body_bytes,
			r->body_hex, (double)r->body_bytes / secs / 1e6);
}

/* --check-echo: how many responses were compared byte for byte. */
static void lg_report_echo(const struct lg_run *r, FILE *out, bool json)
{
	if (!r->o.check_echo)
		return;
	if (!json)
		fprintf(out, "check-echo: %llu responses equal to their request, %llu differed\n",
			(unsigned long long)r->echo_checked,
			(unsigned long long)r->err.echo_mismatch);
	else
		fprintf(out, ",\n  \"echo_checked\": %llu", (unsigned long long)r->echo_checked);
}

/* --idle: how many of the idle connections opened. */
static void lg_report_idle(const struct lg_run *r, FILE *out, bool json)
{
	if (r->o.idle == 0)
		return;
	if (!json)
		fprintf(out, "idle connections: %u established, %u failed\n", r->idle_open,
			r->idle_failed);
	else
		fprintf(out, ",\n  \"idle\": {\n    \"wanted\": %u,\n    \"established\": %u,\n"
			"    \"failed\": %u\n  }", r->o.idle, r->idle_open, r->idle_failed);
}

static void lg_report(const struct lg_run *r, FILE *out, bool json)
{
	double secs = (double)(r->t_end - r->t0) / 1e9;
	static const double pct[] = { 50, 90, 99, 99.9 };
	static const char *const pname[] = { "p50", "p90", "p99", "p99.9" };

	if (!json) {
		fprintf(out, "target %s, %s, %s, %u connections, %.2f s\n", r->o.target_text,
			r->o.mode == LG_RAW ? "raw TCP" : "HTTP/1.1",
			r->o.keepalive ? "keep-alive" : "connection per request", r->o.conns, secs);
		fprintf(out, "requests %llu (%.1f/s), connections %llu (%.1f/s), errors %llu\n",
			(unsigned long long)r->requests, (double)r->requests / secs,
			(unsigned long long)r->connects, (double)r->connects / secs,
			(unsigned long long)lg_errors_total(&r->err));
#define LG_X_TEXT(name, desc) \
		if (r->err.name) \
			fprintf(out, "  error %s %llu  (%s)\n", #name, \
				(unsigned long long)r->err.name, desc);
		LG_ERRORS(LG_X_TEXT)
#undef LG_X_TEXT
		if (r->o.fastopen)
			fprintf(out, "fastopen: %llu requests in the SYN, %llu cookie requests\n",
				(unsigned long long)r->tfo_syn_requests,
				(unsigned long long)r->tfo_cookie_requests);
		fprintf(out, "latency us: min %.1f mean %.1f", (double)r->lat.min / 1e3 * (r->lat.n > 0),
			lg_hist_mean(&r->lat) / 1e3);
		for (unsigned i = 0; i < 4; i++)
			fprintf(out, " %s %.1f", pname[i], (double)lg_hist_percentile(&r->lat, pct[i]) / 1e3);
		fprintf(out, " max %.1f\n", (double)r->lat.max / 1e3);
		lg_report_download(r, out, false, secs);
		lg_report_echo(r, out, false);
		lg_report_idle(r, out, false);
		return;
	}
	fprintf(out, "{\n  \"target\": \"%s\",\n  \"mode\": \"%s\",\n  \"keepalive\": %s,\n"
		"  \"connections\": %u,\n  \"duration_s\": %.3f,\n  \"request_bytes\": %zu,\n"
		"  \"requests\": %llu,\n  \"requests_per_s\": %.1f,\n  \"connects\": %llu,\n"
		"  \"connects_per_s\": %.1f,\n  \"bytes_sent\": %llu,\n  \"bytes_received\": %llu,\n"
		"  \"errors\": {\n    \"total\": %llu", r->o.target_text,
		r->o.mode == LG_RAW ? "raw" : "http", r->o.keepalive ? "true" : "false",
		r->o.conns, secs, r->req_len, (unsigned long long)r->requests,
		(double)r->requests / secs, (unsigned long long)r->connects,
		(double)r->connects / secs, (unsigned long long)r->bytes_sent,
		(unsigned long long)r->bytes_rcvd, (unsigned long long)lg_errors_total(&r->err));
#define LG_X_JSON(name, desc) fprintf(out, ",\n    \"%s\": %llu", #name, \
				      (unsigned long long)r->err.name);
	LG_ERRORS(LG_X_JSON)
#undef LG_X_JSON
	if (r->o.fastopen)
		fprintf(out, "\n  },\n  \"fastopen\": {\n    \"syn_requests\": %llu,\n"
			"    \"cookie_requests\": %llu", (unsigned long long)r->tfo_syn_requests,
			(unsigned long long)r->tfo_cookie_requests);
	fprintf(out, "\n  },\n  \"latency_us\": {\n    \"min\": %.1f,\n    \"mean\": %.1f",
		r->lat.n ? (double)r->lat.min / 1e3 : 0.0, lg_hist_mean(&r->lat) / 1e3);
	for (unsigned i = 0; i < 4; i++)
		fprintf(out, ",\n    \"%s\": %.1f", pname[i],
			(double)lg_hist_percentile(&r->lat, pct[i]) / 1e3);
	fprintf(out, ",\n    \"max\": %.1f\n  }", (double)r->lat.max / 1e3);
	lg_report_download(r, out, true, secs);
	lg_report_echo(r, out, true);
	lg_report_idle(r, out, true);
	fprintf(out, "\n}\n");
}

/* Engine k's share: connections and rate split evenly, the remainder to
 * the first engines; only engine 0 prints progress. */
static int lg_run_init(struct lg_run *r, const struct lg_opts *o, unsigned k)
{
	unsigned n = o->engines;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	r->o.conns = o->conns / n + (k < o->conns % n);
	r->o.rate = o->rate / n;
	if (o->max_requests > 0) /* --requests: the total, split like the connections */
		r->o.max_requests = o->max_requests / n + (k < o->max_requests % n);
	r->o.quiet = o->quiet || k > 0;
	r->o.idle = o->idle / n + (k < o->idle % n);
	if (lg_build_request(r) < 0)
		return -1;
	r->c = calloc(r->o.conns, sizeof(*r->c));
	if (r->c == NULL)
		return -1;
	for (unsigned i = 0; i < r->o.conns; i++)
		r->c[i].fd = -1;
	lg_hist_init(&r->lat);
	lg_hist_init(&r->lat_sec);
	crypto_hash_sha256_init(&r->body_sha); /* again at each request */
	return 0;
}

/* Runs on engine k's thread (us_launch): its descriptors are engine k's. */
static int lg_engine_main(struct us_stack *st, unsigned k, void *arg)
{
	struct lg_run *r = &((struct lg_run *)arg)[k];

	(void)st;
	r->ep = us_epoll_create1(0);
	if (r->ep < 0) {
		perror("us-loadgen: us_epoll_create1");
		return -1;
	}
	lg_loop(r);
	for (unsigned i = 0; i < r->o.conns; i++)
		lg_conn_close(r, &r->c[i]);
	lg_idle_stop(r);
	us_close(r->ep);
	return 0;
}

/* The summary over engines; each engine's own line with several. */
static void lg_merge(struct lg_run *total, const struct lg_run *runs, unsigned n)
{
	total->t0 = runs[0].t0;
	for (unsigned k = 0; k < n; k++) {
		const struct lg_run *r = &runs[k];

		total->requests += r->requests;
		total->connects += r->connects;
		total->bytes_sent += r->bytes_sent;
		total->bytes_rcvd += r->bytes_rcvd;
		total->tfo_syn_requests += r->tfo_syn_requests;
		total->tfo_cookie_requests += r->tfo_cookie_requests;
		total->echo_checked += r->echo_checked;
		total->idle_open += r->idle_open;
		total->idle_failed += r->idle_failed;
#define LG_X_ADD(name, desc) total->err.name += r->err.name;
		LG_ERRORS(LG_X_ADD)
#undef LG_X_ADD
		lg_hist_merge(&total->lat, &r->lat);
		if (r->t0 < total->t0)
			total->t0 = r->t0;
		if (r->t_end > total->t_end)
			total->t_end = r->t_end;
		if (n > 1)
			printf("engine %u: requests %llu, connections %llu, errors %llu\n", k,
			       (unsigned long long)r->requests, (unsigned long long)r->connects,
			       (unsigned long long)lg_errors_total(&r->err));
	}
}

/* --download (one engine): the body's length and hash into the summary. */
static void lg_download_result(struct lg_run *total, struct lg_run *r)
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_final(&r->body_sha, h);
	sodium_bin2hex(total->body_hex, sizeof(total->body_hex), h, sizeof(h));
	total->body_bytes = r->body_bytes;
	total->finished = r->finished;
}

static int lg_write_json(const struct lg_run *r)
{
	FILE *f = fopen(r->o.json, "w");

	if (f == NULL) {
		perror(r->o.json);
		return 1;
	}
	lg_report(r, f, true);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static struct lg_run runs[LG_MAX_ENGINES], total;
	struct lg_opts o;
	struct us_stack *st;
	int rc = 0;

	if (lg_parse(argc, argv, &o) < 0)
		return 2;
	for (unsigned k = 0; k < o.engines; k++)
		if (lg_run_init(&runs[k], &o, k) < 0)
			return 1;
	total.o = o;
	lg_hist_init(&total.lat);
	if (lg_build_request(&total) < 0)
		return 1;
	signal(SIGINT, lg_on_signal);
	signal(SIGTERM, lg_on_signal);
	struct us_init_opts io = { .lcores = o.lcores[0] ? o.lcores : NULL, .engines = o.engines };
	st = us_init_with(o.config, argv[0], &io);
	if (st == NULL)
		return 1;
	printf("us-loadgen: %s from %s, %u connections for %.1f s on %u engine(s)\n",
	       o.target_text, us_local_addr(st), o.conns, o.duration_s, o.engines);
	fflush(stdout);
	if (us_launch(st, lg_engine_main, runs) < 0)
		rc = 1;
	lg_merge(&total, runs, o.engines);
	if (o.download)
		lg_download_result(&total, &runs[0]);
	lg_report(&total, stdout, false);
	if (o.json != NULL && lg_write_json(&total) != 0)
		rc = 1;
	if (o.download && !total.finished)
		rc = 1;
	if (o.stats)
		us_print_stats(st, stdout);
	us_fini(st);
	for (unsigned k = 0; k < o.engines; k++) {
		free(runs[k].c);
		free(runs[k].req);
	}
	free(total.req);
	return rc;
}
