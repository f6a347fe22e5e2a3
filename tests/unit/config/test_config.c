/* tests/unit/config: the INI parser, its errors and the shipped files.
 *
 * Every rejected case is its own test and checks the message text: the
 * message is the interface a user sees.  "t.ini" is the name given to
 * us_config_parse_string, so each message starts with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "tests/unit/config/config_check.h"

static const char *ini_dir;

#define PORT "[port]\ndevice = net_tap0,iface=ustap0\n"
#define IP "[ip]\naddr = 10.77.0.2/24\n"
#define MIN PORT IP

/* Helpers */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* Rejected input: one test per case */

#define REJECT(fn, text, want) \
	static void fn(void **state) \
	{ \
		(void)state; \
		cfg_expect_reject(text, want); \
	}

REJECT(rej_bool_word, MIN "[tcp]\nsack = maybe\n",
       "t.ini: [tcp] sack = 'maybe': must be on or off")
REJECT(rej_isolate_word, "[port]\ndevice = net_tap0\nisolate = yes please\n" IP,
       "t.ini: [port] isolate = 'yes please': must be on or off")
REJECT(rej_gso_word, "[port]\ndevice = net_tap0\ngso = on\n" IP,
       "t.ini: [port] gso = 'on': must be off or auto")
REJECT(rej_keepalive_idle_low, MIN "[tcp]\nkeepalive_idle_ms = 10\n",
       "t.ini: [tcp] keepalive_idle_ms = '10':")
REJECT(rej_cc_unknown, MIN "[tcp]\ncc = bbr\n",
       "t.ini: [tcp] cc = 'bbr': must be cubic or newreno")
REJECT(rej_syncookies_unknown, MIN "[tcp]\nsyncookies = sometimes\n",
       "t.ini: [tcp] syncookies = 'sometimes': must be auto, always or off")
REJECT(rej_challenge_ack_limit_zero, MIN "[tcp]\nchallenge_ack_limit = 0\n",
       "t.ini: [tcp] challenge_ack_limit = '0':")
REJECT(rej_recovery_unknown, MIN "[tcp]\nrecovery = prr2\n",
       "t.ini: [tcp] recovery = 'prr2': must be prr, prr-crb, prr-ssrb, rfc6675 or ratehalving")
REJECT(rej_loss_detection_unknown, MIN "[tcp]\nloss_detection = fack\n",
       "t.ini: [tcp] loss_detection = 'fack': must be dupack or rack")
REJECT(rej_profile_unknown, MIN "[tcp]\nprofile = bsd\n",
       "t.ini: [tcp] profile = 'bsd': must be linux or rfc")
REJECT(rej_synack_retries_zero, MIN "[tcp]\nsynack_retries = 0\n",
       "t.ini: [tcp] synack_retries = '0': out of range (1..127)")
REJECT(rej_ip_octet, PORT "[ip]\naddr = 10.77.0.300/24\n",
       "t.ini: [ip] addr = '10.77.0.300/24': not an IPv4 address")
REJECT(rej_ip_three_parts, PORT "[ip]\naddr = 10.77.0/24\n",
       "t.ini: [ip] addr = '10.77.0/24': not an IPv4 address")
REJECT(rej_ip_inner_blank, PORT "[ip]\naddr = 10.77.0.2 /24\n",
       "t.ini: [ip] addr = '10.77.0.2 /24': not an IPv4 address")
REJECT(rej_addr_no_prefix, PORT "[ip]\naddr = 10.77.0.2\n",
       "t.ini: [ip] addr = '10.77.0.2': missing prefix length (expected a.b.c.d/len)")
REJECT(rej_addr_prefix_33, PORT "[ip]\naddr = 10.77.0.2/33\n",
       "t.ini: [ip] addr = '10.77.0.2/33': prefix length: out of range (1..32)")
REJECT(rej_addr_broadcast, PORT "[ip]\naddr = 10.77.0.255/24\n",
       "t.ini: [ip] addr = '10.77.0.255/24': is the broadcast address of its subnet")
REJECT(rej_addr_multicast, PORT "[ip]\naddr = 224.0.0.9/24\n",
       "t.ini: [ip] addr = '224.0.0.9/24': not a unicast host address")
REJECT(rej_mtu_junk, PORT "mtu = 100x\n" IP,
       "t.ini: [port] mtu = '100x': trailing characters 'x' after the number")
REJECT(rej_mtu_word, PORT "mtu = abc\n" IP,
       "t.ini: [port] mtu = 'abc': not a decimal number")
REJECT(rej_mtu_hex, PORT "mtu = 0x5dc\n" IP,
       "t.ini: [port] mtu = '0x5dc': trailing characters 'x5dc' after the number")
REJECT(rej_mtu_negative, PORT "mtu = -1500\n" IP,
       "t.ini: [port] mtu = '-1500': must not be negative")
REJECT(rej_mtu_small, PORT "mtu = 67\n" IP,
       "t.ini: [port] mtu = '67': out of range (68..9000)")
REJECT(rej_mtu_big, PORT "mtu = 9001\n" IP,
       "t.ini: [port] mtu = '9001': out of range (68..9000)")
REJECT(rej_rx_desc_small, PORT "rx_desc = 16\n" IP,
       "t.ini: [port] rx_desc = '16': out of range (32..4096)")
REJECT(rej_mbufs_small, PORT "mbufs = 1022\n" IP,
       "t.ini: [port] mbufs = '1022': out of range (1023..1048575)")
REJECT(rej_mbufs_vs_desc, PORT "mbufs = 2000\n" IP,
       "t.ini: [port] mbufs = '2000': too few to fill one RX and one TX ring")
REJECT(rej_ttl_zero, MIN "ttl = 0\n",
       "t.ini: [ip] ttl = '0': out of range (1..255)")
REJECT(rej_u32_overflow, MIN "[tcp]\nrcvbuf = 99999999999999999999\n",
       "t.ini: [tcp] rcvbuf = '99999999999999999999': out of range (4096..67108864)")
REJECT(rej_rcvbuf_small, MIN "[tcp]\nrcvbuf = 1024\n",
       "t.ini: [tcp] rcvbuf = '1024': out of range (4096..67108864)")
REJECT(rej_rcvbuf_max_big, MIN "[tcp]\nrcvbuf_max = 67108865\n",
       "t.ini: [tcp] rcvbuf_max = '67108865': out of range (4096..67108864)")
REJECT(rej_rcvbuf_max_below_rcvbuf, MIN "[tcp]\nrcvbuf = 65536\nrcvbuf_max = 32768\n",
       "t.ini: [tcp] rcvbuf_max = '32768': less than rcvbuf (65536)")
REJECT(rej_rto_min_zero, MIN "[tcp]\nrto_min_ms = 0\n",
       "t.ini: [tcp] rto_min_ms = '0': out of range (1..60000)")
REJECT(rej_rto_min_gt_max, MIN "[tcp]\nrto_min_ms = 5000\nrto_max_ms = 3000\n",
       "t.ini: [tcp] rto_min_ms = '5000': greater than rto_max_ms (3000)")
REJECT(rej_rto_initial, MIN "[tcp]\nrto_initial_ms = 100\n",
       "t.ini: [tcp] rto_initial_ms = '100': outside rto_min_ms..rto_max_ms (200..120000)")
REJECT(rej_delack, MIN "[tcp]\ndelack_ms = 501\n",
       "t.ini: [tcp] delack_ms = '501': out of range (0..500)")
REJECT(rej_gateway_subnet, MIN "gateway = 10.78.0.1\n",
       "t.ini: [ip] gateway = '10.78.0.1': not in the subnet of addr 10.77.0.2/24")
REJECT(rej_gateway_bad, MIN "gateway = 10.77.0.1.5\n",
       "t.ini: [ip] gateway = '10.77.0.1.5': not an IPv4 address")
REJECT(rej_route_syntax, MIN "route = 10.0.0.0/8 by 10.77.0.1\n",
       "t.ini: [ip] route = '10.0.0.0/8 by 10.77.0.1': expected 'net/len via gateway' or 'net/len'")
REJECT(rej_route_host_bits, MIN "route = 10.1.2.3/8 via 10.77.0.1\n",
       "t.ini: [ip] route = '10.1.2.3/8 via 10.77.0.1': host bits set in the network "
       "(did you mean 10.0.0.0/8?)")
REJECT(rej_route_gw_subnet, MIN "route = 10.0.0.0/8 via 192.168.0.1\n",
       "t.ini: [ip] route = '10.0.0.0/8 via 192.168.0.1': gateway not in the subnet of addr "
       "10.77.0.2/24")
REJECT(rej_route_twice, MIN "route = 10.0.0.0/8 via 10.77.0.1\nroute = 10.0.0.0/8\n",
       "t.ini: [ip] route = '10.0.0.0/8': a route to 10.0.0.0/8 is already given")
REJECT(rej_route_17, MIN
       "route = 10.1.0.0/16\nroute = 10.2.0.0/16\nroute = 10.3.0.0/16\nroute = 10.4.0.0/16\n"
       "route = 10.5.0.0/16\nroute = 10.6.0.0/16\nroute = 10.7.0.0/16\nroute = 10.8.0.0/16\n"
       "route = 10.9.0.0/16\nroute = 10.10.0.0/16\nroute = 10.11.0.0/16\nroute = 10.12.0.0/16\n"
       "route = 10.13.0.0/16\nroute = 10.14.0.0/16\nroute = 10.15.0.0/16\nroute = 10.16.0.0/16\n"
       "route = 10.17.0.0/16\n",
       "t.ini: [ip] route = '10.17.0.0/16': more than 16 routes")
REJECT(rej_hugepages, "[eal]\nhugepages = yes\n" MIN,
       "t.ini: [eal] hugepages = 'yes': must be auto, on or off")
REJECT(rej_log_level, "[eal]\nlog_level = verbose\n" MIN,
       "t.ini: [eal] log_level = 'verbose': must be one of emergency")
REJECT(rej_lcores, "[eal]\nlcores = all\n" MIN,
       "t.ini: [eal] lcores = 'all': expected a core list")
REJECT(rej_prefix_slash, "[eal]\nfile_prefix = ../etc\n" MIN,
       "t.ini: [eal] file_prefix = '../etc': only letters, digits")
REJECT(rej_prefix_long, "[eal]\nfile_prefix = "
       "0123456789012345678901234567890123456789012345678901234567890123\n" MIN,
       "': longer than 63 characters")
REJECT(rej_device_empty, "[port]\ndevice =\n" IP,
       "t.ini: [port] device = '': empty value")
REJECT(rej_device_blank, "[port]\ndevice = net_tap0, iface=ustap0\n" IP,
       "t.ini: [port] device = 'net_tap0, iface=ustap0': contains blanks")
REJECT(rej_device_255, "[port]\ndevice = net_tap0,iface="
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
       IP,
       "': longer than 254 characters")
REJECT(rej_missing_device, IP,
       "t.ini: [port] device: required key missing")
REJECT(rej_missing_addr, PORT "[ip]\nttl = 64\n",
       "t.ini: [ip] addr: required key missing")
REJECT(rej_unknown_key, "[port]\ndevcie = net_tap0\n" IP,
       "t.ini: [port] devcie: unknown key")
REJECT(rej_unknown_section, MIN "[foo]\nbar = 1\n",
       "t.ini: [foo]: unknown section")
REJECT(rej_key_twice, PORT "mtu = 1500\nmtu = 9000\n" IP,
       "t.ini: [port] mtu = '9000': key given twice")
REJECT(rej_section_twice, MIN "[ip]\nttl = 3\n",
       "t.ini: [ip]: section given twice")
REJECT(rej_no_equals, PORT "mtu 9000\n" IP,
       "t.ini: line 3: neither '[section]' nor 'key = value': 'mtu 9000'")
REJECT(rej_no_bracket, "[port\ndevice = net_tap0\n" IP,
       "t.ini: line 1: section header without ']'")
REJECT(rej_key_before_section, "mtu = 1500\n" MIN,
       "t.ini: mtu = '1500': key before the first [section]")

static void rej_line_too_long(void **state)
{
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text), MIN "# %0400d\n", 0);
	cfg_expect_reject(text, "t.ini: line 5: longer than 322 characters");
}

static void rej_unreadable(void **state)
{
	struct us_config cfg;
	char err[512] = "";

	(void)state;
	assert_int_equal(us_config_load("/nonexistent/x.ini", &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/x.ini: cannot read: No such file or directory");
}

/* Accepted input */

static void test_defaults(void **state)
{
	struct us_config cfg;
	struct tcp_config t;

	(void)state;
	us_config_defaults(&cfg);
	tcp_config_defaults(&t);
	assert_string_equal(cfg.nic.lcores, "0");
	assert_int_equal(cfg.nic.hugepages, NIC_HUGEPAGES_AUTO);
	assert_int_equal(cfg.nic.no_huge_mem_mb, 1024);
	assert_string_equal(cfg.nic.file_prefix, "userstack");
	assert_string_equal(cfg.nic.log_level, "notice");
	assert_string_equal(cfg.nic.extra_args, "");
	assert_string_equal(cfg.nic.device, "");
	assert_int_equal(cfg.nic.rx_desc, 1024);
	assert_int_equal(cfg.nic.tx_desc, 1024);
	assert_int_equal(cfg.nic.mbufs, 16383);
	assert_int_equal(cfg.nic.mtu, 1500);
	assert_int_equal(cfg.nic.link_wait_ms, 5000);
	assert_int_equal(cfg.addr, 0);
	assert_int_equal(cfg.gateway, 0);
	assert_int_equal(cfg.nroutes, 0);
	assert_int_equal(cfg.ttl, 64);
	assert_int_equal(cfg.arp_timeout_s, 300);
	assert_int_equal(cfg.arp_pending_max, 16);
	assert_int_equal(cfg.arp_retry_ms, 1000);
	assert_int_equal(t.rcvbuf_max, 4u << 20);
	assert_int_equal(t.synack_retries, 5);
	assert_int_equal(t.profile, TCP_PROFILE_LINUX);
	assert_memory_equal(&cfg.tcp, &t, sizeof(t));
}

/* Only the required keys: everything else keeps its default. */
static void test_minimal(void **state)
{
	struct us_config cfg, def;

	(void)state;
	cfg_load_ok(MIN, &cfg);
	us_config_defaults(&def);
	assert_string_equal(cfg.path, "t.ini");
	assert_string_equal(cfg.nic.device, "net_tap0,iface=ustap0");
	assert_int_equal(cfg.addr, 0x0a4d0002);
	assert_int_equal(cfg.prefixlen, 24);
	strcpy(def.path, cfg.path);
	strcpy(def.nic.device, cfg.nic.device);
	def.addr = cfg.addr;
	def.prefixlen = cfg.prefixlen;
	assert_memory_equal(&cfg, &def, sizeof(cfg));
}

static const char full_ini[] =
	"# every key, none at its default\n"
	"[eal]\n"
	"lcores = 0-3,6\n"
	"hugepages = off\n"
	"no_huge_mem_mb = 512\n"
	"file_prefix = us-test_1\n"
	"log_level = debug\n"
	"extra_args = --log-level=pmd.net.tap:debug --vdev=net_null0\n"
	"\n"
	"[port]\n"
	"  device   =   net_tap0,iface=ustap9   # trailing comment\n"
	"rx_desc = 512\n"
	"tx_desc = 256\n"
	"mbufs = 8191\n"
	"mtu = 9000\n"
	"link_wait_ms = 0\n"
	"[ip]\n"
	"addr = 192.168.7.10/23\n"
	"gateway = 192.168.6.1\n"
	"route = 10.0.0.0/8 via 192.168.7.254\n"
	"route = 172.16.0.0/12\n"
	"route = 0.0.0.0/0 via 192.168.6.1\n"
	"ttl = 255\n"
	"[arp]\n"
	"timeout_s = 60\n"
	"pending_max = 4\n"
	"retry_ms = 250\n"
	"[tcp]\n"
	"rto_min_ms = 1\n"
	"rto_initial_ms = 300\n"
	"rto_max_ms = 60000\n"
	"time_wait_ms = 0\n"
	"delack_ms = 500\n"
	"syn_retries = 3\n"
	"synack_retries = 2\n"
	"data_retries = 8\n"
	"rcvbuf = 67108864\n"
	"sndbuf = 4096\n"
	"max_conns = 100\n"
	"backlog = 65535\n"
	"wscale = off\n"
	"sack = no\n"
	"timestamps = false\n"
	"nodelay_default = on\n"
	"sws_override_ms = 50\n"
	"keepalive_idle_ms = 60000\n"
	"keepalive_intvl_ms = 1000\n"
	"keepalive_probes = 3\n"
	"cc = newreno\n"
	"syncookies = always\n"
	"challenge_ack_limit = 7\n"
	"challenge_ack_jitter = off\n"
	"recovery = ratehalving\n"
	"undo = on\n"
	"loss_detection = rack\n"
	"profile = rfc\n";

static void test_full(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(full_ini, &cfg);
	assert_string_equal(cfg.nic.lcores, "0-3,6");
	assert_int_equal(cfg.nic.hugepages, NIC_HUGEPAGES_OFF);
	assert_int_equal(cfg.nic.no_huge_mem_mb, 512);
	assert_string_equal(cfg.nic.file_prefix, "us-test_1");
	assert_string_equal(cfg.nic.log_level, "debug");
	assert_string_equal(cfg.nic.extra_args, "--log-level=pmd.net.tap:debug --vdev=net_null0");
	assert_string_equal(cfg.nic.device, "net_tap0,iface=ustap9");
	assert_int_equal(cfg.nic.rx_desc, 512);
	assert_int_equal(cfg.nic.tx_desc, 256);
	assert_int_equal(cfg.nic.mbufs, 8191);
	assert_int_equal(cfg.nic.mtu, 9000);
	assert_int_equal(cfg.nic.link_wait_ms, 0);
	assert_int_equal(cfg.addr, 0xc0a8070a);
	assert_int_equal(cfg.prefixlen, 23);
	assert_int_equal(cfg.gateway, 0xc0a80601);
	assert_int_equal(cfg.nroutes, 3);
	assert_int_equal(cfg.routes[0].net, 0x0a000000);
	assert_int_equal(cfg.routes[0].prefixlen, 8);
	assert_int_equal(cfg.routes[0].gateway, 0xc0a807fe);
	assert_int_equal(cfg.routes[1].net, 0xac100000);
	assert_int_equal(cfg.routes[1].prefixlen, 12);
	assert_int_equal(cfg.routes[1].gateway, 0);
	assert_int_equal(cfg.routes[2].net, 0);
	assert_int_equal(cfg.routes[2].prefixlen, 0);
	assert_int_equal(cfg.routes[2].gateway, 0xc0a80601);
	assert_int_equal(cfg.ttl, 255);
	assert_int_equal(cfg.arp_timeout_s, 60);
	assert_int_equal(cfg.arp_pending_max, 4);
	assert_int_equal(cfg.arp_retry_ms, 250);
	assert_int_equal(cfg.tcp.rto_min_ms, 1);
	assert_int_equal(cfg.tcp.rto_initial_ms, 300);
	assert_int_equal(cfg.tcp.rto_max_ms, 60000);
	assert_int_equal(cfg.tcp.time_wait_ms, 0);
	assert_int_equal(cfg.tcp.delack_ms, 500);
	assert_int_equal(cfg.tcp.syn_retries, 3);
	assert_int_equal(cfg.tcp.synack_retries, 2);
	assert_int_equal(cfg.tcp.data_retries, 8);
	assert_int_equal(cfg.tcp.rcvbuf, 64 * 1024 * 1024);
	/* Left out, rcvbuf_max follows the bigger rcvbuf (autotuning off). */
	assert_int_equal(cfg.tcp.rcvbuf_max, 64 * 1024 * 1024);
	assert_int_equal(cfg.tcp.sndbuf, 4096);
	assert_int_equal(cfg.tcp.max_conns, 100);
	assert_int_equal(cfg.tcp.backlog, 65535);
	assert_false(cfg.tcp.wscale);
	assert_false(cfg.tcp.sack);
	assert_false(cfg.tcp.timestamps);
	assert_true(cfg.tcp.nodelay_default);
	assert_int_equal(cfg.tcp.sws_override_ms, 50);
	assert_int_equal(cfg.tcp.keepalive_idle_ms, 60000);
	assert_int_equal(cfg.tcp.keepalive_intvl_ms, 1000);
	assert_int_equal(cfg.tcp.keepalive_probes, 3);
	assert_int_equal(cfg.tcp.cc, TCP_CC_NEWRENO);
	assert_int_equal(cfg.tcp.syncookies, TCP_SYNCOOKIES_ALWAYS);
	assert_int_equal(cfg.tcp.challenge_ack_limit, 7);
	assert_false(cfg.tcp.challenge_ack_jitter);
	assert_int_equal(cfg.tcp.recovery, TCP_REC_RATEHALVING);
	assert_true(cfg.tcp.undo);
	assert_int_equal(cfg.tcp.loss_detection, TCP_LOSS_RACK);
	assert_int_equal(cfg.tcp.profile, TCP_PROFILE_RFC);
}

/* "\#" is a literal '#' (rte_cfgfile then takes no comment on that line);
 * blanks around the value go; a /31 has no network/broadcast address
 * (RFC 3021). */
/* rcvbuf_max = rcvbuf: autotuning off, taken as given. */
static void test_rcvbuf_max_off(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(MIN "[tcp]\nrcvbuf = 131072\nrcvbuf_max = 131072\n", &cfg);
	assert_int_equal(cfg.tcp.rcvbuf, 131072);
	assert_int_equal(cfg.tcp.rcvbuf_max, 131072);
}

static void test_escape_and_slash31(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok("[eal]\nextra_args =  --a\\#b  \n" PORT "[ip]\naddr = 10.9.9.0/31\n", &cfg);
	assert_string_equal(cfg.nic.extra_args, "--a#b");
	assert_int_equal(cfg.addr, 0x0a090900);
	assert_int_equal(cfg.prefixlen, 31);
}

/* A failed load leaves the caller's struct untouched. */
static void test_failure_keeps_cfg(void **state)
{
	struct us_config cfg, before;
	char err[256];

	(void)state;
	memset(&cfg, 0xa5, sizeof(cfg));
	before = cfg;
	assert_int_equal(us_config_parse_string("t.ini", MIN "ttl = 0\n", &cfg, err, sizeof(err)), -1);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

/* parse_string's temporary file is gone afterwards, on both paths. */
static void test_no_fd_leak(void **state)
{
	struct us_config cfg;
	char err[256];
	int n = count_fds();

	(void)state;
	assert_int_equal(us_config_parse_string("t.ini", MIN, &cfg, err, sizeof(err)), 0);
	assert_int_equal(us_config_parse_string("t.ini", "[x]\n", &cfg, err, sizeof(err)), -1);
	assert_int_equal(count_fds(), n);
}

static void load_shipped(const char *file, const char *device)
{
	struct us_config cfg;
	char path[512], err[1024] = "";

	snprintf(path, sizeof(path), "%s/%s", ini_dir, file);
	if (us_config_load(path, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(cfg.path, path);
	if (device != NULL)
		assert_string_equal(cfg.nic.device, device);
}

/* The contract other rooms and scripts rely on, then every *.ini there. */
static void test_shipped(void **state)
{
	struct us_config cfg;
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	(void)state;
	assert_non_null(ini_dir);
	load_shipped("tap.ini", "net_tap0,iface=ustap0");
	load_shipped("af_packet.ini", "net_af_packet0,iface=veth-us,qpairs=1");
	load_shipped("memif.ini",
		     "net_memif0,role=server,socket=/run/userstack/memif.sock,socket-abstract=no");
	load_shipped("pci.ini", "0000:01:00.0");
	{
		char path[512], err[256];

		snprintf(path, sizeof(path), "%s/tap.ini", ini_dir);
		assert_int_equal(us_config_load(path, &cfg, err, sizeof(err)), 0);
		assert_int_equal(cfg.addr, 0x0a4d0002);
		assert_int_equal(cfg.prefixlen, 24);
		assert_int_equal(cfg.gateway, 0);
	}
	d = opendir(ini_dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len > 4 && strcmp(de->d_name + len - 4, ".ini") == 0) {
			load_shipped(de->d_name, NULL);
			n++;
		}
	}
	closedir(d);
	assert_true(n >= 4);
}

/* RFC 7413 Fast Open keys: off by default; both key forms (Linux's dashed
 * groups and 32 digits in a row) give the same bytes (Linux stores each
 * group as a little-endian word). */
static void test_fastopen(void **state)
{
	static const uint8_t want0[16] = { 0x33, 0x22, 0x11, 0x00, 0x77, 0x66, 0x55, 0x44,
					   0xbb, 0xaa, 0x99, 0x88, 0xff, 0xee, 0xdd, 0xcc };
	struct us_config cfg;

	(void)state;
	cfg_load_ok(MIN, &cfg);
	assert_int_equal(cfg.tcp.fastopen, 0);
	assert_false(cfg.tcp.fastopen_key_set);
	cfg_load_ok(MIN "[tcp]\nfastopen = both\nfastopen_qlen = 5\nfastopen_rotate_s = 0\n"
		    "fastopen_key = 00112233-44556677-8899aabb-ccddeeff,"
		    "0123456789abcdef0123456789ABCDEF\n", &cfg);
	assert_int_equal(cfg.tcp.fastopen, TCP_FASTOPEN_CLIENT | TCP_FASTOPEN_SERVER);
	assert_int_equal(cfg.tcp.fastopen_qlen, 5);
	assert_int_equal(cfg.tcp.fastopen_rotate_s, 0);
	assert_true(cfg.tcp.fastopen_key_set);
	assert_true(cfg.tcp.fastopen_key_backup);
	assert_memory_equal(cfg.tcp.fastopen_key[0], want0, 16);
	assert_int_equal(cfg.tcp.fastopen_key[1][0], 0x67);
	cfg_load_ok(MIN "[tcp]\nfastopen = server\nfastopen_key = 00112233445566778899aabbccddeeff\n",
		    &cfg);
	assert_int_equal(cfg.tcp.fastopen, TCP_FASTOPEN_SERVER);
	assert_false(cfg.tcp.fastopen_key_backup);
	assert_memory_equal(cfg.tcp.fastopen_key[0], want0, 16);
}

REJECT(rej_fastopen_mode, MIN "[tcp]\nfastopen = yes\n",
       "t.ini: [tcp] fastopen = 'yes': must be off, client, server or both")
REJECT(rej_fastopen_key_short, MIN "[tcp]\nfastopen_key = 0011223344\n",
       "t.ini: [tcp] fastopen_key = '0011223344': key 1")
REJECT(rej_fastopen_key_three, MIN "[tcp]\nfastopen_key = "
       "00112233445566778899aabbccddeeff,00112233445566778899aabbccddeeff,00\n",
       "at most two TFO keys")
REJECT(rej_fastopen_qlen_zero, MIN "[tcp]\nfastopen_qlen = 0\n",
       "t.ini: [tcp] fastopen_qlen = '0':")

/* [port] isolate: off unless asked. */
static void test_port_isolate(void **state)
{
	struct us_config cfg;
	(void)state;

	cfg_load_ok(MIN, &cfg);
	assert_false(cfg.nic.port_isolate);
	cfg_load_ok("[port]\ndevice = net_tap0\nisolate = on\n" IP, &cfg);
	assert_true(cfg.nic.port_isolate);
	cfg_load_ok("[port]\ndevice = net_tap0\nisolate = off\n" IP, &cfg);
	assert_false(cfg.nic.port_isolate);
}

/* [port] gso / gro: auto unless turned off. */
static void test_port_offloads(void **state)
{
	struct us_config cfg;
	(void)state;

	cfg_load_ok(MIN, &cfg);
	assert_true(cfg.nic.gso && cfg.nic.gro);
	cfg_load_ok("[port]\ndevice = net_tap0\ngso = off\ngro = auto\n" IP, &cfg);
	assert_false(cfg.nic.gso);
	assert_true(cfg.nic.gro);
	cfg_load_ok("[port]\ndevice = net_tap0\ngso = auto\ngro = off\n" IP, &cfg);
	assert_true(cfg.nic.gso);
	assert_false(cfg.nic.gro);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_port_isolate),
		cmocka_unit_test(rej_isolate_word),
		cmocka_unit_test(test_port_offloads),
		cmocka_unit_test(rej_gso_word),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_rcvbuf_max_off),
		cmocka_unit_test(test_escape_and_slash31),
		cmocka_unit_test(test_failure_keeps_cfg),
		cmocka_unit_test(test_no_fd_leak),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_fastopen),
		cmocka_unit_test(rej_fastopen_mode),
		cmocka_unit_test(rej_fastopen_key_short),
		cmocka_unit_test(rej_fastopen_key_three),
		cmocka_unit_test(rej_fastopen_qlen_zero),
		cmocka_unit_test(rej_bool_word),
		cmocka_unit_test(rej_keepalive_idle_low),
		cmocka_unit_test(rej_cc_unknown),
		cmocka_unit_test(rej_syncookies_unknown),
		cmocka_unit_test(rej_challenge_ack_limit_zero),
		cmocka_unit_test(rej_recovery_unknown),
		cmocka_unit_test(rej_loss_detection_unknown),
		cmocka_unit_test(rej_profile_unknown),
		cmocka_unit_test(rej_synack_retries_zero),
		cmocka_unit_test(rej_ip_octet),
		cmocka_unit_test(rej_ip_three_parts),
		cmocka_unit_test(rej_ip_inner_blank),
		cmocka_unit_test(rej_addr_no_prefix),
		cmocka_unit_test(rej_addr_prefix_33),
		cmocka_unit_test(rej_addr_broadcast),
		cmocka_unit_test(rej_addr_multicast),
		cmocka_unit_test(rej_mtu_junk),
		cmocka_unit_test(rej_mtu_word),
		cmocka_unit_test(rej_mtu_hex),
		cmocka_unit_test(rej_mtu_negative),
		cmocka_unit_test(rej_mtu_small),
		cmocka_unit_test(rej_mtu_big),
		cmocka_unit_test(rej_rx_desc_small),
		cmocka_unit_test(rej_mbufs_small),
		cmocka_unit_test(rej_mbufs_vs_desc),
		cmocka_unit_test(rej_ttl_zero),
		cmocka_unit_test(rej_u32_overflow),
		cmocka_unit_test(rej_rcvbuf_small),
		cmocka_unit_test(rej_rcvbuf_max_big),
		cmocka_unit_test(rej_rcvbuf_max_below_rcvbuf),
		cmocka_unit_test(rej_rto_min_zero),
		cmocka_unit_test(rej_rto_min_gt_max),
		cmocka_unit_test(rej_rto_initial),
		cmocka_unit_test(rej_delack),
		cmocka_unit_test(rej_gateway_subnet),
		cmocka_unit_test(rej_gateway_bad),
		cmocka_unit_test(rej_route_syntax),
		cmocka_unit_test(rej_route_host_bits),
		cmocka_unit_test(rej_route_gw_subnet),
		cmocka_unit_test(rej_route_twice),
		cmocka_unit_test(rej_route_17),
		cmocka_unit_test(rej_hugepages),
		cmocka_unit_test(rej_log_level),
		cmocka_unit_test(rej_lcores),
		cmocka_unit_test(rej_prefix_slash),
		cmocka_unit_test(rej_prefix_long),
		cmocka_unit_test(rej_device_empty),
		cmocka_unit_test(rej_device_blank),
		cmocka_unit_test(rej_device_255),
		cmocka_unit_test(rej_missing_device),
		cmocka_unit_test(rej_missing_addr),
		cmocka_unit_test(rej_unknown_key),
		cmocka_unit_test(rej_unknown_section),
		cmocka_unit_test(rej_key_twice),
		cmocka_unit_test(rej_section_twice),
		cmocka_unit_test(rej_no_equals),
		cmocka_unit_test(rej_no_bracket),
		cmocka_unit_test(rej_key_before_section),
		cmocka_unit_test(rej_line_too_long),
		cmocka_unit_test(rej_unreadable),
	};

	ini_dir = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
