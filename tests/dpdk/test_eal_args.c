/* Unit tests of the EAL command line builder (nic/eal.c): which device,
 * memory and extra arguments a configuration turns into.  No EAL is started. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nic/nic.h"

/* Index of the first argument equal to s, or -1. */
static int arg_index(const struct nic_eal_args *a, const char *s)
{
	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], s) == 0)
			return i;
	return -1;
}

/* Asserts that option opt is present and followed by value. */
static void assert_opt(const struct nic_eal_args *a, const char *opt, const char *value)
{
	int i = arg_index(a, opt);

	assert_true(i > 0);
	assert_true(i + 1 < a->argc);
	assert_string_equal(a->argv[i + 1], value);
}

static void base_config(struct nic_config *cfg, const char *device, enum nic_hugepages_mode hp)
{
	nic_config_defaults(cfg);
	snprintf(cfg->lcores, sizeof(cfg->lcores), "%s", "1-2");
	snprintf(cfg->file_prefix, sizeof(cfg->file_prefix), "%s", "ustest");
	snprintf(cfg->log_level, sizeof(cfg->log_level), "%s", "notice");
	snprintf(cfg->device, sizeof(cfg->device), "%s", device);
	cfg->extra_args[0] = '\0';
	cfg->hugepages = hp;
	cfg->no_huge_mem_mb = 512;
}

static void test_vdev_with_hugepages(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "net_tap0,iface=ustap0", NIC_HUGEPAGES_AUTO);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_string_equal(a.argv[0], "prog");
	assert_opt(&a, "-l", "1-2");
	assert_opt(&a, "--file-prefix", "ustest");
	assert_opt(&a, "--log-level", "notice");
	assert_opt(&a, "--vdev", "net_tap0,iface=ustap0");
	assert_true(arg_index(&a, "--no-pci") > 0);
	assert_int_equal(arg_index(&a, "--no-huge"), -1);
	assert_int_equal(arg_index(&a, "-a"), -1);
	assert_false(a.no_huge);
	assert_null(a.argv[a.argc]);
}

static void test_auto_without_hugepages_falls_back(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "net_ring0", NIC_HUGEPAGES_AUTO);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", false, &a, err, sizeof(err)), 0);
	assert_true(a.no_huge);
	assert_true(arg_index(&a, "--no-huge") > 0);
	assert_opt(&a, "-m", "512");
	/* DPDK 22.11 refuses --in-memory together with --no-huge. */
	assert_int_equal(arg_index(&a, "--in-memory"), -1);
}

static void test_on_without_hugepages_fails(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "net_ring0", NIC_HUGEPAGES_ON);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", false, &a, err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "hugepages = on"));
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_int_equal(arg_index(&a, "--no-huge"), -1);
}

static void test_off_ignores_hugepages(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "net_null0", NIC_HUGEPAGES_OFF);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_true(a.no_huge);
	assert_opt(&a, "-m", "512");
}

static void test_pci_device_is_allowed_not_vdev(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "0000:3b:00.1", NIC_HUGEPAGES_AUTO);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_opt(&a, "-a", "0000:3b:00.1");
	assert_int_equal(arg_index(&a, "--no-pci"), -1);
	assert_int_equal(arg_index(&a, "--vdev"), -1);

	base_config(&cfg, "3b:00.1", NIC_HUGEPAGES_AUTO);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_opt(&a, "-a", "3b:00.1");
}

static void test_pci_address_forms(void **state)
{
	(void)state;
	char name[64];

	assert_true(nic_device_is_pci("0000:01:00.0"));
	assert_true(nic_device_is_pci("01:00.0"));
	assert_true(nic_device_is_pci("0000:af:1f.7,rxq_pkt_fill=1"));
	assert_false(nic_device_is_pci("net_ring0"));
	assert_false(nic_device_is_pci("0000:01:00"));
	assert_false(nic_device_is_pci("0000:01:00.0x"));
	assert_false(nic_device_is_pci("zz:00.0"));
	assert_false(nic_device_is_pci("1:00.0"));
	assert_false(nic_device_is_pci(""));

	nic_device_name("01:00.0", name, sizeof(name));
	assert_string_equal(name, "0000:01:00.0");
	nic_device_name("0000:01:00.0,foo=1", name, sizeof(name));
	assert_string_equal(name, "0000:01:00.0");
	nic_device_name("net_tap0,iface=ustap0", name, sizeof(name));
	assert_string_equal(name, "net_tap0");
}

static void test_unknown_device_rejected(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "eth0", NIC_HUGEPAGES_AUTO);
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'eth0'"));
}

static void test_no_device_and_extra_args(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";

	base_config(&cfg, "", NIC_HUGEPAGES_AUTO);
	snprintf(cfg.extra_args, sizeof(cfg.extra_args), "%s", " --vdev  net_null0\t--no-shconf ");
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), 0);
	assert_true(arg_index(&a, "--no-pci") > 0);
	/* extra_args come last, split on blanks, empty pieces dropped. */
	assert_int_equal(a.argc, arg_index(&a, "--no-shconf") + 1);
	assert_string_equal(a.argv[a.argc - 3], "--vdev");
	assert_string_equal(a.argv[a.argc - 2], "net_null0");
}

static void test_too_many_args_rejected(void **state)
{
	(void)state;
	struct nic_config cfg;
	struct nic_eal_args a;
	char err[256] = "";
	size_t len = 0;

	base_config(&cfg, "net_ring0", NIC_HUGEPAGES_AUTO);
	while (len + 3 < sizeof(cfg.extra_args))
		len += (size_t)snprintf(cfg.extra_args + len, sizeof(cfg.extra_args) - len, "-v ");
	assert_int_equal(nic_eal_build_args(&cfg, "prog", true, &a, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "extra_args"));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_hugepages_probe(void **state)
{
	(void)state;
	char meminfo[64], mounts[64];
	struct nic_hugepages hp;

	snprintf(meminfo, sizeof(meminfo), "/tmp/us_meminfo.%d", (int)getpid());
	snprintf(mounts, sizeof(mounts), "/tmp/us_mounts.%d", (int)getpid());
	write_file(meminfo, "MemTotal: 100 kB\nHugePages_Total:     512\n"
		   "HugePages_Free:      500\nHugepagesize:       2048 kB\n");
	write_file(mounts, "proc /proc proc rw 0 0\n"
		   "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n");
	nic_hugepages_probe(meminfo, mounts, &hp);
	assert_int_equal(hp.free_pages, 500);
	assert_true(hp.mounted);

	write_file(meminfo, "HugePages_Free:        0\n");
	write_file(mounts, "tmpfs /dev/hugepages tmpfs rw 0 0\n");
	nic_hugepages_probe(meminfo, mounts, &hp);
	assert_int_equal(hp.free_pages, 0);
	assert_false(hp.mounted);
	unlink(meminfo);
	unlink(mounts);

	nic_hugepages_probe(meminfo, mounts, &hp);
	assert_int_equal(hp.free_pages, -1);
	assert_false(hp.mounted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vdev_with_hugepages),
		cmocka_unit_test(test_auto_without_hugepages_falls_back),
		cmocka_unit_test(test_on_without_hugepages_fails),
		cmocka_unit_test(test_off_ignores_hugepages),
		cmocka_unit_test(test_pci_device_is_allowed_not_vdev),
		cmocka_unit_test(test_pci_address_forms),
		cmocka_unit_test(test_unknown_device_rejected),
		cmocka_unit_test(test_no_device_and_extra_args),
		cmocka_unit_test(test_too_many_args_rejected),
		cmocka_unit_test(test_hugepages_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
