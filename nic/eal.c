/* nic/eal.c: the EAL command line, built from the configuration.
 *
 * The argv builder is a pure function so that the decisions it makes (PCI
 * allow-list or --no-pci, --vdev, hugepages or --no-huge) are unit-tested
 * without starting EAL, which can be started only once per process.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_pdump.h>

#include "stack/base/log.h"
#include "nic/nic.h"

/* rte_pdump_init succeeded: nic_eal_cleanup undoes it. */
static bool eal_pdump_up;

/* Builder state: appends strings into a->buf and pointers into a->argv. */
struct eal_builder {
	struct nic_eal_args *a;
	size_t used;
	int overflow;
};

static void eal_push(struct eal_builder *b, const char *s)
{
	struct nic_eal_args *a = b->a;
	size_t n = strlen(s) + 1;

	if (a->argc >= NIC_EAL_MAX_ARGS || b->used + n > sizeof(a->buf)) {
		b->overflow = 1;
		return;
	}
	memcpy(a->buf + b->used, s, n);
	a->argv[a->argc++] = a->buf + b->used;
	a->argv[a->argc] = NULL;
	b->used += n;
}

/* Hex digits only, exactly n of them, then the separator sep (or the end
 * of the address when sep is 0).  Returns the position after sep. */
static const char *pci_field(const char *s, int n, char sep)
{
	for (int i = 0; i < n; i++, s++)
		if (!isxdigit((unsigned char)*s))
			return NULL;
	if (sep == 0)
		return (*s == '\0' || *s == ',') ? s : NULL;
	return *s == sep ? s + 1 : NULL;
}

bool nic_device_is_pci(const char *s)
{
	const char *p;

	if (s == NULL)
		return false;
	/* dddd:bb:dd.f or bb:dd.f: the form with a domain has ':' at index 4. */
	p = (strlen(s) > 4 && s[4] == ':') ? pci_field(s, 4, ':') : s;
	if (p)
		p = pci_field(p, 2, ':');
	if (p)
		p = pci_field(p, 2, '.');
	if (p)
		p = pci_field(p, 1, 0);
	return p != NULL;
}

void nic_device_name(const char *device, char *name, size_t len)
{
	size_t n = strcspn(device, ",");
	const char *domain = "";

	if (nic_device_is_pci(device) && !(n > 4 && device[4] == ':'))
		domain = "0000:"; /* ethdev names PCI ports with the domain */
	snprintf(name, len, "%s%.*s", domain, (int)n, device);
}

void nic_hugepages_probe(const char *meminfo, const char *mounts, struct nic_hugepages *hp)
{
	char line[512];
	FILE *f;

	hp->free_pages = -1;
	hp->mounted = false;
	f = fopen(meminfo, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "HugePages_Free: %ld", &hp->free_pages) == 1)
				break;
		fclose(f);
	}
	f = fopen(mounts, "r");
	if (f) {
		/* /proc/mounts: "device mountpoint fstype options 0 0" */
		char dev[256], dir[256], type[64];
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%255s %255s %63s", dev, dir, type) == 3 &&
			    strcmp(type, "hugetlbfs") == 0)
				hp->mounted = true;
		fclose(f);
	}
}

/* --no-pci, -a <pci>, or --vdev <device>; the device string is passed whole
 * so its devargs (",iface=ustap0") reach the driver. */
static int eal_device_args(struct eal_builder *b, const char *device, char *err, size_t errlen)
{
	if (device[0] != '\0' && nic_device_is_pci(device)) {
		eal_push(b, "-a");
		eal_push(b, device);
		return 0;
	}
	eal_push(b, "--no-pci");
	if (device[0] == '\0')
		return 0; /* the port may come from extra_args */
	if (strncmp(device, "net_", 4) != 0) {
		snprintf(err, errlen,
			 "[port] device = '%s': neither a PCI address (0000:01:00.0) "
			 "nor a virtual device (net_tap0,iface=ustap0)", device);
		return -EINVAL;
	}
	eal_push(b, "--vdev");
	eal_push(b, device);
	return 0;
}

static int eal_memory_args(struct eal_builder *b, const struct nic_config *cfg,
			   bool hugepages_available, char *err, size_t errlen)
{
	char mem[32];

	if (cfg->hugepages == NIC_HUGEPAGES_ON && !hugepages_available) {
		snprintf(err, errlen,
			 "[eal] hugepages = on, but no free hugepages on a mounted hugetlbfs: "
			 "run tools/setup.sh (or dpdk-hugepages.py -p 2M --setup 1G), "
			 "or set hugepages = auto");
		return -ENOMEM;
	}
	if (cfg->hugepages == NIC_HUGEPAGES_OFF ||
	    (cfg->hugepages == NIC_HUGEPAGES_AUTO && !hugepages_available)) {
		/* Never --in-memory here: 22.11 refuses it together with --no-huge. */
		snprintf(mem, sizeof(mem), "%u", (unsigned)cfg->no_huge_mem_mb);
		eal_push(b, "--no-huge");
		eal_push(b, "-m");
		eal_push(b, mem);
		b->a->no_huge = true;
	} else if (!cfg->capture_pdump) {
		/* Unlink hugepage files once mapped: a crashed or killed process then
		 * leaves nothing behind in the hugetlbfs (the kernel frees the pages
		 * when the last mapping goes).  Secondary processes (dpdk-dumpcap)
		 * cannot attach in this mode: they map the primary's memory through
		 * those files, so [capture] pdump = on keeps them. */
		eal_push(b, "--huge-unlink");
	}
	return 0;
}

/* extra_args is split on blanks and appended last, so it can add to (or,
 * for options EAL lets repeat, override) what the config asked for. */
static void eal_extra_args(struct eal_builder *b, const char *extra)
{
	char copy[NIC_CFG_STR];
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", extra);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		eal_push(b, t);
}

int nic_eal_build_args(const struct nic_config *cfg, const char *argv0, bool hugepages_available,
		       struct nic_eal_args *a, char *err, size_t errlen)
{
	struct eal_builder b = { .a = a };
	int rc;

	memset(a, 0, sizeof(*a));
	eal_push(&b, argv0 ? argv0 : "userstack");
	if (cfg->lcores[0] != '\0') {
		eal_push(&b, "-l");
		eal_push(&b, cfg->lcores);
	}
	if (cfg->file_prefix[0] != '\0') {
		eal_push(&b, "--file-prefix");
		eal_push(&b, cfg->file_prefix);
	}
	if (cfg->log_level[0] != '\0') {
		eal_push(&b, "--log-level");
		eal_push(&b, cfg->log_level);
	}
	rc = eal_memory_args(&b, cfg, hugepages_available, err, errlen);
	if (rc == 0)
		rc = eal_device_args(&b, cfg->device, err, errlen);
	if (rc != 0)
		return rc;
	eal_extra_args(&b, cfg->extra_args);
	if (b.overflow) {
		snprintf(err, errlen, "[eal] extra_args = '%s': too many EAL arguments (max %d)",
			 cfg->extra_args, NIC_EAL_MAX_ARGS);
		return -E2BIG;
	}
	return 0;
}

static void eal_print_args(const struct nic_eal_args *a)
{
	fprintf(stderr, "userstack: EAL arguments:");
	for (int i = 1; i < a->argc; i++)
		fprintf(stderr, " %s", a->argv[i]);
	fprintf(stderr, "\n");
}

/* [capture] pdump = on: serve dpdk-dumpcap/dpdk-pdump (secondary processes
 * that ask, through EAL's multi-process channel, for copies of a port's
 * packets).  Not on --no-huge: no secondary could attach (a warning; the
 * config already refuses pdump = on with hugepages = off). */
static int eal_pdump_start(const struct nic_config *cfg, bool no_huge)
{
	if (!cfg->capture_pdump)
		return 0;
	if (no_huge) {
		/* hugepages = auto found none: serving goes on, capture does not. */
		US_LOG(nic, WARNING, "[capture] pdump = on, but running with --no-huge: "
		       "dpdk-dumpcap cannot attach (free some hugepages, or use "
		       "[capture] pcap = FILE); pdump stays off\n");
		return 0;
	}
	if (rte_pdump_init() < 0) {
		fprintf(stderr, "userstack: rte_pdump_init failed: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return rte_errno ? -rte_errno : -EIO;
	}
	eal_pdump_up = true;
	US_LOG(nic, NOTICE, "pdump on: capture with dpdk-dumpcap --file-prefix %s -i 0\n",
	       cfg->file_prefix);
	return 0;
}

int nic_eal_init(const struct nic_config *cfg, const struct us_log_config *log,
		 const char *source, const char *argv0)
{
	/* Static: EAL may keep pointers into argv, and it runs once per process. */
	static struct nic_eal_args a;
	struct nic_hugepages hp;
	char err[512];
	bool avail;
	int rc;

	nic_hugepages_probe("/proc/meminfo", "/proc/mounts", &hp);
	avail = hp.free_pages > 0 && hp.mounted;
	rc = nic_eal_build_args(cfg, argv0, avail, &a, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "userstack: %s: %s\n", source[0] ? source : "config", err);
		return rc;
	}
	if (us_log_apply(log) < 0) {
		fprintf(stderr, "userstack: %s: [log]: bad level\n", source);
		return -EINVAL;
	}
	/* One line either way, so an operator sees why memory is not hugepages
	 * (before EAL is up rte_log writes to stderr). */
	if (a.no_huge)
		US_LOG(nic, NOTICE, "%s, running with --no-huge -m %u\n",
		       cfg->hugepages == NIC_HUGEPAGES_OFF ? "hugepages = off"
		       : hp.free_pages <= 0 ? "no free hugepages" : "no hugetlbfs mounted",
		       (unsigned)cfg->no_huge_mem_mb);
	if (rte_eal_init(a.argc, a.argv) < 0) {
		rc = rte_errno ? -rte_errno : -EINVAL;
		fprintf(stderr, "userstack: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		eal_print_args(&a);
		return rc;
	}
	us_log_raise_global(log);
	return eal_pdump_start(cfg, a.no_huge);
}

void nic_eal_cleanup(void)
{
	if (eal_pdump_up)
		rte_pdump_uninit();
	eal_pdump_up = false;
	rte_eal_cleanup();
}
