/* main.c: us-httpecho, an HTTP/1.1 echo server on userstack.
 *
 * Every request is answered 200 with the request's raw bytes as the body;
 * big Content-Length bodies are echoed as they arrive (server.c).
 * Uses only the public API (stack/include/userstack.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "userstack.h"

/* Types */

#define ECHO_FASTOPEN_QLEN 16u

struct echo_opts {
	const char *config;
	uint16_t port;
	unsigned ports;         /* --ports: port .. port + ports - 1 */
	struct http_limits lim;
	unsigned fastopen_qlen; /* 0: off */
	const char *lcores;     /* --lcores: one engine per lcore; NULL: config */
	unsigned engines;
	unsigned migrate_every; /* --migrate-every: 0 off */
};

#define ECHO_MAX_ENGINES 16

/* us_run polls this; an int store is what the API takes (a signal handler
 * writing one aligned int is safe on every target DPDK runs on). */
static volatile int echo_stop;

static void echo_on_signal(int sig)
{
	(void)sig;
	echo_stop = 1;
}

static void echo_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [--config FILE] [--port N] [--max-body BYTES] [--max-header BYTES]\n"
		"          [--fastopen[=QLEN]] [--lcores LIST] [--migrate-every N]\n"
		"          [--ports N]\n"
		"HTTP/1.1 echo server on userstack: every request gets 200 with its raw\n"
		"bytes (request line, headers, body as received) as the body.\n"
		"  --config FILE       userstack INI config (default: config/tap.ini,\n"
		"                      relative to the current directory)\n"
		"  --port N            TCP port (default: 8080)\n"
		"  --ports N           listen on N ports from --port on (default: 1; one\n"
		"                      client address reaches ~28 K connections per port)\n"
		"  --max-body BYTES    larger bodies get 413 (default: %llu)\n"
		"  --max-header BYTES  larger header sections get 431 (default: %u)\n"
		"  --fastopen[=QLEN]   TCP Fast Open (RFC 7413) on the listener: requests\n"
		"                      in the SYN, at most QLEN pending (default: %u)\n"
		"  --lcores LIST       one engine per lcore of LIST (e.g. 0-1: two engines,\n"
		"                      engine 0 on the main lcore), each on its own queue\n"
		"  --migrate-every N   after N requests on a connection, hand it to the\n"
		"                      next engine (us_conn_migrate; a test of migration)\n"
		"  --help              this text\n"
		"SIGINT or SIGTERM stops it and prints the counters.\n",
		prog, (unsigned long long)HTTP_MAX_BODY_DEFAULT, HTTP_MAX_HEADER_DEFAULT,
		ECHO_FASTOPEN_QLEN);
}

static int echo_number(const char *opt, const char *s, unsigned long long max,
		       unsigned long long *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *v == 0 || *v > max || s[0] == '-') {
		fprintf(stderr, "us-httpecho: %s '%s': need a number from 1 to %llu\n", opt, s,
			max);
		return -EINVAL;
	}
	return 0;
}

/* Lcores in an EAL list "0-2,5" (0 if malformed). */
static unsigned echo_count_lcores(const char *s)
{
	unsigned n = 0;

	while (*s != '\0') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return 0;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || b < a)
				return 0;
		}
		n += (unsigned)(b - a + 1);
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return 0;
		s = end;
	}
	return n;
}

/* Each option's setter: v is the option's number when it takes one
 * (checked against its maximum), arg its text (NULL when optional and
 * absent); 0 or -EINVAL (message printed). */
static int echo_set_config(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)v;
	o->config = arg;
	return 0;
}

static int echo_set_port(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)arg;
	o->port = (uint16_t)v;
	return 0;
}

static int echo_set_ports(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)arg;
	o->ports = (unsigned)v;
	return 0;
}

static int echo_set_max_body(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)arg;
	o->lim.max_body = v;
	return 0;
}

static int echo_set_max_header(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)arg;
	o->lim.max_header = (size_t)v;
	return 0;
}

static int echo_set_fastopen(struct echo_opts *o, const char *arg, unsigned long long v)
{
	o->fastopen_qlen = arg != NULL ? (unsigned)v : ECHO_FASTOPEN_QLEN;
	return 0;
}

static int echo_set_lcores(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)v;
	o->lcores = arg;
	o->engines = echo_count_lcores(arg);
	if (o->engines == 0 || o->engines > ECHO_MAX_ENGINES) {
		fprintf(stderr, "us-httpecho: --lcores '%s': need a list like 0-1 or 0,2 of 1 "
			"to %u lcores\n", arg, ECHO_MAX_ENGINES);
		return -EINVAL;
	}
	return 0;
}

static int echo_set_migrate_every(struct echo_opts *o, const char *arg, unsigned long long v)
{
	(void)arg;
	o->migrate_every = (unsigned)v;
	return 0;
}

/* The options, one line each; getopt_long names the candidates of an
 * ambiguous prefix in this order. */
static const struct echo_optdef {
	const char *name;
	int has_arg;
	int val;                /* the short option, or a code of its own */
	unsigned long long max; /* a number from 1 to max; 0: not a number */
	int (*set)(struct echo_opts *o, const char *arg, unsigned long long v); /* NULL: --help */
} echo_optdefs[] = {
	{ "config", required_argument, 'c', 0, echo_set_config },
	{ "port", required_argument, 'p', 65535, echo_set_port },
	{ "max-body", required_argument, 'b', 1ull << 40, echo_set_max_body },
	{ "max-header", required_argument, 'H', 1u << 20, echo_set_max_header },
	{ "fastopen", optional_argument, 'f', 65535, echo_set_fastopen },
	{ "lcores", required_argument, 'l', 0, echo_set_lcores },
	{ "migrate-every", required_argument, 'm', 1u << 30, echo_set_migrate_every },
	{ "ports", required_argument, 'P', 64, echo_set_ports },
	{ "help", no_argument, 'h', 0, NULL },
};

#define ECHO_NOPTS (sizeof(echo_optdefs) / sizeof(echo_optdefs[0]))

/* One option getopt_long returned: 0, 1 after --help, -EINVAL. */
static int echo_apply(struct echo_opts *o, int val, const char *arg, const char *prog)
{
	for (size_t i = 0; i < ECHO_NOPTS; i++) {
		const struct echo_optdef *d = &echo_optdefs[i];
		unsigned long long v = 0;
		char name[32];

		if (d->val != val)
			continue;
		if (d->set == NULL) {
			echo_usage(stdout, prog);
			return 1;
		}
		snprintf(name, sizeof(name), "--%s", d->name);
		if (d->max > 0 && arg != NULL && echo_number(name, arg, d->max, &v) < 0)
			return -EINVAL;
		return d->set(o, arg, v);
	}
	echo_usage(stderr, prog); /* unknown option or missing argument */
	return -EINVAL;
}

/* 0 to run, 1 after --help, -EINVAL on a bad command line. */
static int echo_parse_args(int argc, char **argv, struct echo_opts *o)
{
	struct option longopts[ECHO_NOPTS + 1];
	int opt, rc;

	for (size_t i = 0; i < ECHO_NOPTS; i++)
		longopts[i] = (struct option){ echo_optdefs[i].name, echo_optdefs[i].has_arg, NULL,
					       echo_optdefs[i].val };
	longopts[ECHO_NOPTS] = (struct option){ NULL, 0, NULL, 0 };
	*o = (struct echo_opts){ .config = "config/tap.ini", .port = 8080, .ports = 1 };
	while ((opt = getopt_long(argc, argv, "c:p:h", longopts, NULL)) != -1)
		if ((rc = echo_apply(o, opt, optarg, argv[0])) != 0)
			return rc;
	if (optind < argc) {
		fprintf(stderr, "us-httpecho: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void echo_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = echo_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* One server per engine: each engine's thread touches only its own. */
static struct echo_server echo_srv[ECHO_MAX_ENGINES];

static int echo_start(struct us_stack *st, const struct echo_opts *o)
{
	unsigned n = us_engine_count(st);

	for (unsigned k = 0; k < n; k++) {
		if (echo_server_start(&echo_srv[k], st, k, o->port, &o->lim) < 0) {
			fprintf(stderr, "us-httpecho: cannot listen on port %u: %s\n", o->port,
				strerror(errno));
			return -1;
		}
		echo_srv[k].migrate_every = o->migrate_every;
		echo_srv[k].engine = k;
		echo_srv[k].nengines = n;
		for (unsigned i = 1; i < o->ports; i++) {
			if (o->port + i > 65535 ||
			    echo_server_listen(&echo_srv[k], k, (uint16_t)(o->port + i)) < 0) {
				fprintf(stderr, "us-httpecho: cannot listen on port %u: %s\n",
					o->port + i, strerror(errno));
				return -1;
			}
		}
	}
	if (o->fastopen_qlen > 0 && us_listen_set_fastopen(st, o->port, o->fastopen_qlen) < 0) {
		fprintf(stderr, "us-httpecho: --fastopen: %s\n", strerror(errno));
		return -1;
	}
	if (o->fastopen_qlen > 0)
		printf("us-httpecho: TCP Fast Open on, qlen %u\n", o->fastopen_qlen);
	if (n > 1)
		printf("us-httpecho: %u engines\n", n);
	printf("us-httpecho: listening on http://%s:%u/\n", us_local_addr(st), o->port);
	if (us_local_addr6(st) != NULL)
		printf("us-httpecho: listening on http://[%s]:%u/\n", us_local_addr6(st), o->port);
	fflush(stdout);
	return 0;
}

/* Our connections first (graceful closes), then the summary over every
 * engine's server and, with several, each engine's own line. */
static void echo_stop_all(struct us_stack *st)
{
	unsigned n = us_engine_count(st);
	static struct echo_server total;

	for (unsigned k = 0; k < n; k++)
		echo_server_stop(&echo_srv[k]);
	for (unsigned k = 0; k < n; k++)
		echo_server_add(&total, &echo_srv[k]);
	echo_server_print_stats(&total, stdout);
	for (unsigned k = 0; n > 1 && k < n; k++)
		printf("httpecho.e%u: %llu requests on %llu connections, %llu errors, "
		       "%llu migrated away\n", k,
		       (unsigned long long)echo_srv[k].ctr.requests,
		       (unsigned long long)echo_srv[k].ctr.connections,
		       (unsigned long long)echo_server_errors(&echo_srv[k]),
		       (unsigned long long)echo_srv[k].ctr.migrated);
}

int main(int argc, char **argv)
{
	struct echo_opts o;
	int rc = echo_parse_args(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;

	echo_signals();
	struct us_init_opts io = { .lcores = o.lcores, .engines = o.engines };
	struct us_stack *st = us_init_with(o.config, argv[0], &io);
	if (st == NULL) {
		fprintf(stderr, "us-httpecho: cannot start userstack with %s: %s\n", o.config,
			strerror(errno));
		return 1;
	}
	if (echo_start(st, &o) < 0) {
		for (unsigned k = 0; k < us_engine_count(st); k++)
			echo_server_stop(&echo_srv[k]);
		us_fini(st);
		return 1;
	}
	rc = us_run(st, &echo_stop);
	if (rc < 0)
		fprintf(stderr, "us-httpecho: us_run: %s\n", strerror(errno));
	/* The stack's counters are read before us_fini frees them. */
	echo_stop_all(st);
	us_print_stats(st, stdout);
	fflush(stdout);
	us_fini(st);
	return rc < 0 ? 1 : 0;
}
