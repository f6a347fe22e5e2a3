/* tests/common/test_eal.h: EAL for test processes.
 *
 * Test processes start EAL for mbuf pools only (no hugepages, no PCI, no
 * shared config).  EAL 22.11 still creates /var/run/dpdk/<prefix>/ and never
 * removes it, so every test process registers test_eal_remove_runtime_dir()
 * at exit: tests leave nothing behind, pass or fail.  tools/test.sh sweeps
 * /var/run/dpdk/ustest-* as well, for processes that crashed.
 */
#ifndef US_TEST_EAL_H
#define US_TEST_EAL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>

/* Prototypes */

static inline void test_eal_remove_runtime_dir(void)
{
	const char *dir = rte_eal_get_runtime_dir();
	char path[512];
	DIR *d;
	struct dirent *e;

	if (dir == NULL || strstr(dir, "/ustest-") == NULL || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* The file prefix every test process uses: ustest-<name>-<pid>. */
static inline void test_eal_prefix(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "ustest-%s-%d", name, (int)getpid());
}

/* Starts EAL for mbuf pools; 0 or -1 (message on stderr). */
static inline int test_eal_start(const char *name)
{
	static char prefix_arg[96];
	char prefix[64];

	test_eal_prefix(prefix, sizeof(prefix), name);
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	char *argv[] = { (char *)(uintptr_t)name, "--no-huge", "--no-pci", "--no-shconf", "-m", "64",
			 "--log-level=error", prefix_arg };
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "%s: rte_eal_init failed\n", name);
		return -1;
	}
	atexit(test_eal_remove_runtime_dir);
	return 0;
}

#endif
