/* tests/unit/config: the operations keys ([log], [capture]), the log levels
 * they set on userstack's rte_log types, and what pdump = on changes in the
 * EAL command line.  No EAL: rte_log works before rte_eal_init. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_log.h>

#include "config/config.h"
#include "tests/unit/config/config_check.h"
#include "stack/base/log.h"
#include "nic/nic.h"

#define MIN "[port]\ndevice = net_tap0,iface=ustap0\n[ip]\naddr = 10.77.0.2/24\n"

/* Helpers */

static int arg_index(const struct nic_eal_args *a, const char *s)
{
	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], s) == 0)
			return i;
	return -1;
}

/* Tests */

static void defaults(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(MIN, &cfg);
	assert_string_equal(cfg.log.level, "notice");
	assert_string_equal(cfg.log.nic, "");
	assert_string_equal(cfg.log.stack, "");
	assert_string_equal(cfg.capture_pcap, "");
	assert_int_equal(cfg.capture_snaplen, 65535);
	assert_false(cfg.nic.capture_pdump);
}

static void keys_stored(void **state)
{
	struct us_config cfg;

	(void)state;
	cfg_load_ok(MIN "[log]\nlevel = info\nnic = debug\nstack = 4\n"
		    "[capture]\npcap = /tmp/x.pcap\nsnaplen = 128\npdump = on\n", &cfg);
	assert_string_equal(cfg.log.level, "info");
	assert_string_equal(cfg.log.nic, "debug");
	assert_string_equal(cfg.log.stack, "4");
	assert_string_equal(cfg.capture_pcap, "/tmp/x.pcap");
	assert_int_equal(cfg.capture_snaplen, 128);
	assert_true(cfg.nic.capture_pdump);
}

static void rejects(void **state)
{
	(void)state;
	cfg_expect_reject(MIN "[log]\nlevel = loud\n", "t.ini: [log] level = 'loud': must be one of");
	cfg_expect_reject(MIN "[log]\nnic = 9\n", "t.ini: [log] nic = '9': must be one of");
	cfg_expect_reject(MIN "[log]\ntcp = debug\n", "t.ini: [log] tcp: unknown key");
	cfg_expect_reject(MIN "[capture]\nsnaplen = 10\n", "t.ini: [capture] snaplen = '10':");
	cfg_expect_reject(MIN "[capture]\npdump = maybe\n", "t.ini: [capture] pdump = 'maybe':");
	cfg_expect_reject(MIN "[capture]\npcap =\n", "t.ini: [capture] pcap = '': empty value");
	cfg_expect_reject("[eal]\nhugepages = off\n" MIN "[capture]\npdump = on\n",
		          "t.ini: [capture] pdump = 'on': needs hugepages");
}

static void level_parse(void **state)
{
	(void)state;
	assert_int_equal(us_log_level_parse("emergency"), RTE_LOG_EMERG);
	assert_int_equal(us_log_level_parse("warning"), RTE_LOG_WARNING);
	assert_int_equal(us_log_level_parse("debug"), RTE_LOG_DEBUG);
	assert_int_equal(us_log_level_parse("1"), RTE_LOG_EMERG);
	assert_int_equal(us_log_level_parse("8"), RTE_LOG_DEBUG);
	assert_int_equal(us_log_level_parse("0"), -EINVAL);
	assert_int_equal(us_log_level_parse("9"), -EINVAL);
	assert_int_equal(us_log_level_parse("Debug"), -EINVAL);
}

/* The types exist under their names and take [log]'s levels: the section's
 * level for every type, a room's key for that room only. */
static void levels_applied(void **state)
{
	struct us_config cfg;

	(void)state;
	assert_int_equal(rte_log_register("userstack.nic"), us_logtype_nic);
	assert_int_equal(rte_log_register("userstack.stack"), us_logtype_stack);
	assert_int_equal(rte_log_register("userstack"), us_logtype);
	cfg_load_ok(MIN "[log]\nlevel = warning\nnic = debug\n", &cfg);
	assert_int_equal(us_log_apply(&cfg.log), 0);
	assert_int_equal(rte_log_get_level(us_logtype), RTE_LOG_WARNING);
	assert_int_equal(rte_log_get_level(us_logtype_stack), RTE_LOG_WARNING);
	assert_int_equal(rte_log_get_level(us_logtype_nic), RTE_LOG_DEBUG);
	/* The global level caps every type: raised to the most verbose. */
	rte_log_set_global_level(RTE_LOG_NOTICE);
	us_log_raise_global(&cfg.log);
	assert_int_equal(rte_log_get_global_level(), RTE_LOG_DEBUG);
	assert_true(rte_log_can_log(us_logtype_nic, RTE_LOG_DEBUG));
	assert_false(rte_log_can_log(us_logtype_stack, RTE_LOG_NOTICE));
	/* Never lowered. */
	cfg_load_ok(MIN "[log]\nlevel = error\n", &cfg);
	us_log_raise_global(&cfg.log);
	assert_int_equal(rte_log_get_global_level(), RTE_LOG_DEBUG);
}

/* dpdk-dumpcap maps the primary's hugepage files: pdump = on keeps them. */
static void pdump_keeps_hugepage_files(void **state)
{
	struct us_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	(void)state;
	cfg_load_ok(MIN, &cfg);
	assert_int_equal(nic_eal_build_args(&cfg.nic, "p", true, &a, err, sizeof(err)), 0);
	assert_true(arg_index(&a, "--huge-unlink") > 0);
	cfg_load_ok(MIN "[capture]\npdump = on\n", &cfg);
	assert_int_equal(nic_eal_build_args(&cfg.nic, "p", true, &a, err, sizeof(err)), 0);
	assert_int_equal(arg_index(&a, "--huge-unlink"), -1);
	assert_int_equal(arg_index(&a, "--no-huge"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(keys_stored),
		cmocka_unit_test(rejects),
		cmocka_unit_test(level_parse),
		cmocka_unit_test(levels_applied),
		cmocka_unit_test(pdump_keeps_hugepage_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
