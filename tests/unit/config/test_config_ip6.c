/* tests/unit/config: the [ip6] section: defaults, each accepted form, each
 * refusal with the message a user sees, and the shipped files (argv[1] is
 * their directory): tap.ini turns IPv6 on, the others leave it off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "tests/unit/config/config_check.h"

static const char *ini_dir;

#define MIN "[port]\ndevice = net_tap0,iface=ustap0\n[ip]\naddr = 10.77.0.2/24\n"
#define IP6 MIN "[ip6]\n"
#define ON IP6 "enable = on\n"
#define ADDR ON "addr = fd00:77::2/64\n"

/* Helpers */

static struct us_in6 in6(const char *text)
{
	struct us_in6 a;

	assert_int_equal(inet_pton(AF_INET6, text, a.b), 1);
	return a;
}

static void assert_in6(const struct us_in6 *got, const char *want)
{
	struct us_in6 w = in6(want);

	assert_memory_equal(got->b, w.b, sizeof(w.b));
}

/* Rejected input: one test per case */

#define REJECT(fn, text, want) \
	static void fn(void **state) \
	{ \
		(void)state; \
		cfg_expect_reject(text, want); \
	}

REJECT(rej_enable_word, IP6 "enable = maybe\n",
       "t.ini: [ip6] enable = 'maybe': must be on or off")
REJECT(rej_unknown_key, IP6 "ttl = 64\n",
       "t.ini: [ip6] ttl: unknown key")
REJECT(rej_section_twice, ON "[ip6]\ndad = off\n",
       "t.ini: [ip6]: section given twice")
REJECT(rej_addr_twice, ADDR "addr = fd00:77::3/64\n",
       "t.ini: [ip6] addr = 'fd00:77::3/64': key given twice")
REJECT(rej_addr_not_v6, ON "addr = fd00:77::g/64\n",
       "t.ini: [ip6] addr = 'fd00:77::g/64': not an IPv6 address")
REJECT(rej_addr_double_colon, ON "addr = fd00::77::2/64\n",
       "t.ini: [ip6] addr = 'fd00::77::2/64': not an IPv6 address")
REJECT(rej_addr_v4, ON "addr = 10.77.0.2/24\n",
       "t.ini: [ip6] addr = '10.77.0.2/24': not an IPv6 address (IPv4 addresses go in [ip])")
REJECT(rej_addr_brackets, ON "addr = [fd00:77::2]/64\n",
       "t.ini: [ip6] addr = '[fd00:77::2]/64': not an IPv6 address")
REJECT(rej_addr_zone, ON "addr = fd00:77::2%ustap0/64\n",
       "t.ini: [ip6] addr = 'fd00:77::2%ustap0/64': not an IPv6 address (no zone index")
REJECT(rej_addr_no_prefix, ON "addr = fd00:77::2\n",
       "t.ini: [ip6] addr = 'fd00:77::2': missing prefix length (expected x::y/len)")
REJECT(rej_addr_prefix_0, ON "addr = fd00:77::2/0\n",
       "t.ini: [ip6] addr = 'fd00:77::2/0': prefix length: out of range (1..128)")
REJECT(rej_addr_prefix_129, ON "addr = fd00:77::2/129\n",
       "t.ini: [ip6] addr = 'fd00:77::2/129': prefix length: out of range (1..128)")
REJECT(rej_addr_prefix_word, ON "addr = fd00:77::2/sixty\n",
       "t.ini: [ip6] addr = 'fd00:77::2/sixty': prefix length: not a decimal number")
REJECT(rej_addr_multicast, ON "addr = ff02::1/64\n",
       "t.ini: [ip6] addr = 'ff02::1/64': a multicast address (ff00::/8), not a host")
REJECT(rej_addr_unspec, ON "addr = ::/64\n",
       "t.ini: [ip6] addr = '::/64': the unspecified address ::, not a host")
REJECT(rej_addr_loopback, ON "addr = ::1/128\n",
       "t.ini: [ip6] addr = '::1/128': the loopback address ::1, not on the link")
REJECT(rej_addr_linklocal, ON "addr = fe80::2/64\n",
       "t.ini: [ip6] addr = 'fe80::2/64': a link-local address (fe80::/10): the stack makes "
       "its own from the MAC")
REJECT(rej_addr_v4mapped, ON "addr = ::ffff:10.77.0.2/120\n",
       "t.ini: [ip6] addr = '::ffff:10.77.0.2/120': an IPv4-mapped address (::ffff:0:0/96); "
       "IPv4 addresses go in [ip]")
REJECT(rej_addr_anycast, ON "addr = fd00:77::/64\n",
       "t.ini: [ip6] addr = 'fd00:77::/64': is the Subnet-Router anycast address of its prefix")
REJECT(rej_addr_empty, ON "addr =\n",
       "t.ini: [ip6] addr = '': empty value")
REJECT(rej_gateway_not_v6, ADDR "gateway = fe80::1::2\n",
       "t.ini: [ip6] gateway = 'fe80::1::2': not an IPv6 address")
REJECT(rej_gateway_zone, ADDR "gateway = fe80::1%ustap0\n",
       "t.ini: [ip6] gateway = 'fe80::1%ustap0': not an IPv6 address (no zone index: the stack "
       "has one link)")
REJECT(rej_gateway_multicast, ADDR "gateway = ff02::2\n",
       "t.ini: [ip6] gateway = 'ff02::2': a multicast address (ff00::/8), not a host")
REJECT(rej_gateway_unspec, ADDR "gateway = ::\n",
       "t.ini: [ip6] gateway = '::': the unspecified address ::, not a host "
       "(leave gateway out for none)")
REJECT(rej_gateway_self, ADDR "gateway = fd00:77::2\n",
       "t.ini: [ip6] gateway = 'fd00:77::2': is addr itself")
REJECT(rej_gateway_outside, ADDR "gateway = fd00:78::1\n",
       "t.ini: [ip6] gateway = 'fd00:78::1': is not in the prefix of addr fd00:77::2/64 "
       "(not on the link: give the router's link-local address, fe80::...)")
REJECT(rej_gateway_global_no_addr, ON "gateway = fd00:77::1\n",
       "t.ini: [ip6] gateway = 'fd00:77::1': is not link-local and there is no addr")
REJECT(rej_route_syntax, ADDR "route = fd01::/16 by fe80::1\n",
       "t.ini: [ip6] route = 'fd01::/16 by fe80::1': expected 'net/len via gateway' or 'net/len'")
REJECT(rej_route_no_prefix, ADDR "route = fd01:: via fe80::1\n",
       "t.ini: [ip6] route = 'fd01:: via fe80::1': missing prefix length (expected x::y/len)")
REJECT(rej_route_prefix_129, ADDR "route = fd01::/129\n",
       "t.ini: [ip6] route = 'fd01::/129': prefix length: out of range (0..128)")
REJECT(rej_route_host_bits, ADDR "route = fd01:2:3::/16 via fe80::1\n",
       "t.ini: [ip6] route = 'fd01:2:3::/16 via fe80::1': host bits set in the network "
       "(did you mean fd01::/16?)")
REJECT(rej_route_host_bits_odd, ADDR "route = fd01:ff00::/20\n",
       "(did you mean fd01:f000::/20?)")
REJECT(rej_route_gw_not_v6, ADDR "route = fd01::/16 via 10.77.0.1\n",
       "t.ini: [ip6] route = 'fd01::/16 via 10.77.0.1': gateway '10.77.0.1' is not an IPv6 "
       "address")
REJECT(rej_route_gw_multicast, ADDR "route = fd01::/16 via ff02::2\n",
       "t.ini: [ip6] route = 'fd01::/16 via ff02::2': gateway ff02::2 is a multicast address")
REJECT(rej_route_gw_unspec, ADDR "route = fd01::/16 via ::\n",
       "t.ini: [ip6] route = 'fd01::/16 via ::': gateway :: is the unspecified address")
REJECT(rej_route_gw_self, ADDR "route = fd01::/16 via fd00:77::2\n",
       "t.ini: [ip6] route = 'fd01::/16 via fd00:77::2': gateway is addr itself")
REJECT(rej_route_gw_outside, ADDR "route = fd01::/16 via fd00:78::1\n",
       "t.ini: [ip6] route = 'fd01::/16 via fd00:78::1': gateway is not in the prefix of addr "
       "fd00:77::2/64")
REJECT(rej_route_gw_no_addr, ON "route = fd01::/16 via fd00:77::1\n",
       "t.ini: [ip6] route = 'fd01::/16 via fd00:77::1': gateway is not link-local and there "
       "is no addr")
REJECT(rej_route_twice, ADDR "route = fd01::/16 via fe80::1\nroute = fd01:0::/16\n",
       "t.ini: [ip6] route = 'fd01::/16': a route to fd01::/16 is already given")
REJECT(rej_route_17, ADDR
       "route = fd01::/16\nroute = fd02::/16\nroute = fd03::/16\nroute = fd04::/16\n"
       "route = fd05::/16\nroute = fd06::/16\nroute = fd07::/16\nroute = fd08::/16\n"
       "route = fd09::/16\nroute = fd0a::/16\nroute = fd0b::/16\nroute = fd0c::/16\n"
       "route = fd0d::/16\nroute = fd0e::/16\nroute = fd0f::/16\nroute = fd10::/16\n"
       "route = fd11::/16\n",
       "t.ini: [ip6] route = 'fd11::/16': more than 16 routes")
REJECT(rej_hop_limit_zero, ON "hop_limit = 0\n",
       "t.ini: [ip6] hop_limit = '0': out of range (1..255)")
REJECT(rej_hop_limit_256, ON "hop_limit = 256\n",
       "t.ini: [ip6] hop_limit = '256': out of range (1..255)")
REJECT(rej_dad_word, ON "dad = sometimes\n",
       "t.ini: [ip6] dad = 'sometimes': must be on or off")
/* Switched off, the keys are still checked: turning IPv6 on is one line. */
REJECT(rej_off_still_checked, IP6 "enable = off\naddr = fd00:77::2/64\ngateway = fd00:78::1\n",
       "t.ini: [ip6] gateway = 'fd00:78::1': is not in the prefix of addr fd00:77::2/64")

/* Accepted input */

static void test_defaults(void **state)
{
	struct us_config cfg;

	(void)state;
	us_config_defaults(&cfg);
	assert_false(cfg.ip6_enable);
	assert_false(cfg.has_addr6);
	assert_false(cfg.has_gateway6);
	assert_int_equal(cfg.nroutes6, 0);
	assert_int_equal(cfg.hop_limit, 64);
	assert_true(cfg.dad);
	assert_false(cfg.nic.ip6_multicast);
	/* A file without [ip6] gets exactly the defaults there. */
	cfg_load_ok(MIN, &cfg);
	assert_false(cfg.ip6_enable);
	assert_false(cfg.has_addr6);
	assert_int_equal(cfg.hop_limit, 64);
	assert_true(cfg.dad);
	assert_false(cfg.nic.ip6_multicast);
}

/* enable = on alone: link-local only (derived from the MAC at start). */
static void test_enable_only(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(ON, &cfg);
	assert_true(cfg.ip6_enable);
	assert_false(cfg.has_addr6);
	assert_false(cfg.has_gateway6);
	assert_true(cfg.nic.ip6_multicast);
	cfg_load_ok(IP6 "enable = yes\n", &cfg);
	assert_true(cfg.ip6_enable);
	cfg_load_ok(IP6 "enable = off\n", &cfg);
	assert_false(cfg.ip6_enable);
	assert_false(cfg.nic.ip6_multicast);
}

static void test_addr(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(ADDR, &cfg);
	assert_true(cfg.has_addr6);
	assert_in6(&cfg.addr6, "fd00:77::2");
	assert_int_equal(cfg.prefixlen6, 64);
	/* Any spelling inet_pton takes: upper case, leading zeros, a dotted tail. */
	cfg_load_ok(ON "addr = 2001:DB8:0:0:0:0:0:0A/48\n", &cfg);
	assert_in6(&cfg.addr6, "2001:db8::a");
	assert_int_equal(cfg.prefixlen6, 48);
	cfg_load_ok(ON "addr = 2001:db8::10.0.0.1/96\n", &cfg);
	assert_in6(&cfg.addr6, "2001:db8::a00:1");
	/* /127 (RFC 6164) and /128 have no anycast address to avoid. */
	cfg_load_ok(ON "addr = fd00:77::/127\n", &cfg);
	assert_int_equal(cfg.prefixlen6, 127);
	cfg_load_ok(ON "addr = fd00:77::/128\n", &cfg);
	assert_int_equal(cfg.prefixlen6, 128);
	cfg_load_ok(ON "addr = fd00:77::2/1\n", &cfg);
	assert_int_equal(cfg.prefixlen6, 1);
}

static void test_gateway(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(ADDR "gateway = fe80::1\n", &cfg);
	assert_true(cfg.has_gateway6);
	assert_in6(&cfg.gateway6, "fe80::1");
	cfg_load_ok(ADDR "gateway = fd00:77::1\n", &cfg);
	assert_in6(&cfg.gateway6, "fd00:77::1");
	/* A link-local router needs no addr. */
	cfg_load_ok(ON "gateway = fe80::1\n", &cfg);
	assert_true(cfg.has_gateway6);
	assert_false(cfg.has_addr6);
}

static void test_routes(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(ADDR "route = fd01::/16 via fe80::1\nroute = fd02:1::/32\n"
		    "route = ::/0 via fd00:77::1\nroute = fd00:77:0:0:1::5/128\n", &cfg);
	assert_int_equal(cfg.nroutes6, 4);
	assert_in6(&cfg.routes6[0].net, "fd01::");
	assert_int_equal(cfg.routes6[0].prefixlen, 16);
	assert_true(cfg.routes6[0].has_gateway);
	assert_in6(&cfg.routes6[0].gateway, "fe80::1");
	assert_in6(&cfg.routes6[1].net, "fd02:1::");
	assert_int_equal(cfg.routes6[1].prefixlen, 32);
	assert_false(cfg.routes6[1].has_gateway);
	assert_in6(&cfg.routes6[1].gateway, "::");
	assert_in6(&cfg.routes6[2].net, "::");
	assert_int_equal(cfg.routes6[2].prefixlen, 0);
	assert_in6(&cfg.routes6[2].gateway, "fd00:77::1");
	assert_int_equal(cfg.routes6[3].prefixlen, 128);
	/* Sixteen fit; the same net with another length is another route. */
	cfg_load_ok(ADDR
		    "route = fd01::/16\nroute = fd02::/16\nroute = fd03::/16\nroute = fd04::/16\n"
		    "route = fd05::/16\nroute = fd06::/16\nroute = fd07::/16\nroute = fd08::/16\n"
		    "route = fd09::/16\nroute = fd0a::/16\nroute = fd0b::/16\nroute = fd0c::/16\n"
		    "route = fd0d::/16\nroute = fd0e::/16\nroute = fd0f::/16\nroute = fd0f::/17\n",
		    &cfg);
	assert_int_equal(cfg.nroutes6, 16);
}

static void test_hop_limit_dad(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(ON "hop_limit = 1\ndad = off\n", &cfg);
	assert_int_equal(cfg.hop_limit, 1);
	assert_false(cfg.dad);
	cfg_load_ok(ON "hop_limit = 255\ndad = on\n", &cfg);
	assert_int_equal(cfg.hop_limit, 255);
	assert_true(cfg.dad);
	/* [ip] ttl and [ip6] hop_limit are separate keys. */
	cfg_load_ok(MIN "ttl = 9\n[ip6]\nhop_limit = 200\n", &cfg);
	assert_int_equal(cfg.ttl, 9);
	assert_int_equal(cfg.hop_limit, 200);
}

/* Every key given while enable = off is kept: one line switches IPv6. */
static void test_off_keeps_keys(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(IP6 "enable = off\naddr = fd00:77::2/64\ngateway = fe80::1\n"
		    "route = fd01::/16 via fd00:77::1\nhop_limit = 32\ndad = off\n", &cfg);
	assert_false(cfg.ip6_enable);
	assert_false(cfg.nic.ip6_multicast);
	assert_true(cfg.has_addr6);
	assert_in6(&cfg.addr6, "fd00:77::2");
	assert_true(cfg.has_gateway6);
	assert_int_equal(cfg.nroutes6, 1);
	assert_int_equal(cfg.hop_limit, 32);
	assert_false(cfg.dad);
	/* Same keys, enable left out: off too. */
	cfg_load_ok(IP6 "addr = fd00:77::2/64\n", &cfg);
	assert_false(cfg.ip6_enable);
	assert_true(cfg.has_addr6);
}

/* tap.ini gives the stack fd00:77::2/64 with DAD; the other shipped files
 * have no [ip6] (IPv6 off). */
static void test_shipped(void **state)
{
	static const char *const off[] = { "af_packet.ini", "memif.ini", "pci.ini" };
	struct us_config cfg;
	char path[512], err[1024] = "";

	(void)state;
	assert_non_null(ini_dir);
	snprintf(path, sizeof(path), "%s/tap.ini", ini_dir);
	if (us_config_load(path, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(cfg.ip6_enable);
	assert_true(cfg.nic.ip6_multicast);
	assert_true(cfg.has_addr6);
	assert_in6(&cfg.addr6, "fd00:77::2");
	assert_int_equal(cfg.prefixlen6, 64);
	assert_false(cfg.has_gateway6);
	assert_int_equal(cfg.nroutes6, 0);
	assert_int_equal(cfg.hop_limit, 64);
	assert_true(cfg.dad);
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", ini_dir, off[i]);
		if (us_config_load(path, &cfg, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		assert_false(cfg.ip6_enable);
		assert_false(cfg.nic.ip6_multicast);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_enable_only),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_gateway),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_hop_limit_dad),
		cmocka_unit_test(test_off_keeps_keys),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(rej_enable_word),
		cmocka_unit_test(rej_unknown_key),
		cmocka_unit_test(rej_section_twice),
		cmocka_unit_test(rej_addr_twice),
		cmocka_unit_test(rej_addr_not_v6),
		cmocka_unit_test(rej_addr_double_colon),
		cmocka_unit_test(rej_addr_v4),
		cmocka_unit_test(rej_addr_brackets),
		cmocka_unit_test(rej_addr_zone),
		cmocka_unit_test(rej_addr_no_prefix),
		cmocka_unit_test(rej_addr_prefix_0),
		cmocka_unit_test(rej_addr_prefix_129),
		cmocka_unit_test(rej_addr_prefix_word),
		cmocka_unit_test(rej_addr_multicast),
		cmocka_unit_test(rej_addr_unspec),
		cmocka_unit_test(rej_addr_loopback),
		cmocka_unit_test(rej_addr_linklocal),
		cmocka_unit_test(rej_addr_v4mapped),
		cmocka_unit_test(rej_addr_anycast),
		cmocka_unit_test(rej_addr_empty),
		cmocka_unit_test(rej_gateway_not_v6),
		cmocka_unit_test(rej_gateway_zone),
		cmocka_unit_test(rej_gateway_multicast),
		cmocka_unit_test(rej_gateway_unspec),
		cmocka_unit_test(rej_gateway_self),
		cmocka_unit_test(rej_gateway_outside),
		cmocka_unit_test(rej_gateway_global_no_addr),
		cmocka_unit_test(rej_route_syntax),
		cmocka_unit_test(rej_route_no_prefix),
		cmocka_unit_test(rej_route_prefix_129),
		cmocka_unit_test(rej_route_host_bits),
		cmocka_unit_test(rej_route_host_bits_odd),
		cmocka_unit_test(rej_route_gw_not_v6),
		cmocka_unit_test(rej_route_gw_multicast),
		cmocka_unit_test(rej_route_gw_unspec),
		cmocka_unit_test(rej_route_gw_self),
		cmocka_unit_test(rej_route_gw_outside),
		cmocka_unit_test(rej_route_gw_no_addr),
		cmocka_unit_test(rej_route_twice),
		cmocka_unit_test(rej_route_17),
		cmocka_unit_test(rej_hop_limit_zero),
		cmocka_unit_test(rej_hop_limit_256),
		cmocka_unit_test(rej_dad_word),
		cmocka_unit_test(rej_off_still_checked),
	};

	ini_dir = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
