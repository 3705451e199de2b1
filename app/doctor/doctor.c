/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_doctor: checks what a userspace NVMe driver needs and explains each gap - hugepages
 * (free vs needed for --queues x --depth), the IOMMU and IOMMU group viability, the
 * locked-memory limit, and for every NVMe function whether nvpoll can use it or why it
 * is skipped. Reads sysfs ($NVP_SYSFS_ROOT for a fake tree) and never touches a device.
 *
 * Exit: 0 when at least one NVMe function is usable, 1 when none is (the summary says
 * why), 2 for bad flags.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <libgen.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvp_config.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#define MIB ((uint64_t)1024 * 1024)
#define HUGEPAGE_2M (2 * MIB)
/* What the driver allocates per queue pair besides the rings (lib/nvme): one PRP list page
 * per tracker, a pool of DSM range pages, and a PRP pool - rounded up here. */
#define PAGE ((uint64_t)4096)
#define DSM_POOL_BYTES (32 * PAGE)
#define ADMIN_DEPTH 32u
/* NVMe registers (0x1000) plus the admin queue's doorbells at the smallest stride. */
#define BAR0_MIN 0x1008u

struct doctor {
	uint32_t queues;
	uint32_t depth;
	uint32_t io_size;
	uint64_t hp_free;  /* free 2 MiB hugepages */
	uint64_t hp_total; /* reserved 2 MiB hugepages */
	int usable;
	int skipped;
};

static void
usage(FILE *f)
{
	fprintf(f, "Usage: nvp_doctor [--queues N] [--depth N] [--io-size BYTES]\n"
		   "Check hugepages, IOMMU, memlock limit and NVMe functions for nvpoll.\n"
		   "  --queues N       I/O queue pairs you will create (default 1)\n"
		   "  --depth N        entries per queue (default 128)\n"
		   "  --io-size SIZE   data buffer per outstanding request, bytes with an\n"
		   "                   optional k/M suffix as nvp_perf -o takes (default 4096)\n"
		   "  --version        print the version\n"
		   "Exit 0 if at least one NVMe function is usable, 1 if none, 2 on bad flags.\n"
		   "NVP_SYSFS_ROOT=DIR reads a fake sysfs tree instead of /sys.\n");
}

/*
 * How to run setup.sh here: "nvp-setup" when it is installed beside this program (make
 * install), else the source tree's scripts/setup.sh.
 */
static const char *
setup_cmd(void)
{
	static char cmd[32];
	char exe[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n;

	if (cmd[0] != '\0') {
		return cmd;
	}
	snprintf(cmd, sizeof(cmd), "scripts/setup.sh");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		snprintf(path, sizeof(path), "%s/nvp-setup", dirname(exe));
		if (access(path, X_OK) == 0) {
			snprintf(cmd, sizeof(cmd), "nvp-setup");
		}
	}
	return cmd;
}

static uint64_t
per_qpair_bytes(uint32_t depth)
{
	/* SQ (64-byte entries) + CQ (16-byte entries), each page aligned, + a PRP list page
	 * per tracker + the DSM pool. */
	return NVP_ALIGN_UP(depth * (uint64_t)64, PAGE) + NVP_ALIGN_UP(depth * (uint64_t)16, PAGE) +
	       depth * PAGE + DSM_POOL_BYTES;
}

static uint64_t
needed_bytes(const struct doctor *d)
{
	uint64_t queues = per_qpair_bytes(ADMIN_DEPTH) + d->queues * per_qpair_bytes(d->depth);
	uint64_t buffers = (uint64_t)d->queues * d->depth * d->io_size;

	/* Identify data and other admin buffers: a few pages; hugepage granularity. */
	return NVP_ALIGN_UP(queues + buffers + 16 * PAGE, HUGEPAGE_2M);
}

static uint64_t
read_u64(const char *path)
{
	char line[64];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		return 0;
	}
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (nvp_strtou64(line, 0, UINT64_MAX, &v) != 0) {
			v = 0;
		}
	}
	fclose(f);
	return v;
}

static bool
check_hugepages(struct doctor *d)
{
	char path[PATH_MAX];
	uint64_t need = needed_bytes(d), free_b;

	snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		 nvp_env_sysfs_root());
	d->hp_free = read_u64(path);
	snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
		 nvp_env_sysfs_root());
	d->hp_total = read_u64(path);
	free_b = d->hp_free * HUGEPAGE_2M;
	printf("%s hugepages: %" PRIu64 " MiB free of %" PRIu64 " MiB reserved (2 MiB pages); "
	       "need about %" PRIu64 " MiB for %u queue(s) x depth %u with %u-byte buffers "
	       "(queues %" PRIu64 " KiB each, plus the admin queue)\n",
	       free_b >= need ? "[ok]  " : "[FAIL]", free_b / MIB, d->hp_total * 2, need / MIB,
	       d->queues, d->depth, d->io_size, per_qpair_bytes(d->depth) / 1024);
	if (free_b < need) {
		printf("       -> reserve more: sudo HUGEMEM=%" PRIu64 " %s config "
		       "(DPDK's own heap needs some on top; 2048 MiB is the usual choice)\n",
		       NVP_MAX(need / MIB + 64, (uint64_t)256), setup_cmd());
	}
	return free_b >= need;
}

static void
check_iommu(void)
{
	if (nvp_env_iommu_present()) {
		printf("[ok]   IOMMU: on - vfio-pci is the driver to use\n");
	} else {
		printf("[warn] IOMMU: off (%s/kernel/iommu_groups is empty) - vfio-pci cannot be "
		       "used; uio_pci_generic works with root and hugepages (DMA to physical "
		       "addresses). For vfio-pci boot with intel_iommu=on or amd_iommu=on\n",
		       nvp_env_sysfs_root());
	}
}

static void
check_memlock(const struct doctor *d)
{
	struct rlimit rl;
	uint64_t need = needed_bytes(d);

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
		printf("[warn] RLIMIT_MEMLOCK: cannot read it (%s)\n", strerror(errno));
	} else if (rl.rlim_cur == RLIM_INFINITY) {
		printf("[ok]   RLIMIT_MEMLOCK: unlimited\n");
	} else if (geteuid() == 0) {
		printf("[ok]   RLIMIT_MEMLOCK: %llu KiB, but root (CAP_IPC_LOCK) is not bound by it\n",
		       (unsigned long long)rl.rlim_cur / 1024);
	} else if ((uint64_t)rl.rlim_cur < need) {
		printf("[FAIL] RLIMIT_MEMLOCK: %llu KiB - vfio pins all DMA memory (about %" PRIu64
		       " MiB here): raise it (ulimit -l unlimited, or memlock in "
		       "/etc/security/limits.conf) or run as root\n",
		       (unsigned long long)rl.rlim_cur / 1024, need / MIB);
	} else {
		printf("[ok]   RLIMIT_MEMLOCK: %llu KiB\n", (unsigned long long)rl.rlim_cur / 1024);
	}
}

/* If a kernel-bound function's namespaces are mounted or held, say which; else "". */
static void
in_use(const char *bdf, char *why, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX], needle[320], line[512];
	const char *mounts = getenv("NVP_PROC_MOUNTS");
	struct dirent *de, *h;
	DIR *d, *hd;
	FILE *f;

	why[0] = '\0';
	snprintf(path, sizeof(path), "%s/block", nvp_env_sysfs_root());
	snprintf(needle, sizeof(needle), "/%s/", bdf);
	d = opendir(path);
	while (d != NULL && why[0] == '\0' && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "nvme", 4) != 0) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/block/%s/device", nvp_env_sysfs_root(),
			 de->d_name);
		if (realpath(path, target) == NULL || strstr(target, needle) == NULL) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/block/%s/holders", nvp_env_sysfs_root(),
			 de->d_name);
		hd = opendir(path);
		while (hd != NULL && (h = readdir(hd)) != NULL) {
			if (h->d_name[0] != '.') {
				snprintf(why, len, "%.64s is held by %.64s (LVM, md or dm)",
					 de->d_name, h->d_name);
				break;
			}
		}
		if (hd != NULL) {
			closedir(hd);
		}
		f = fopen(mounts != NULL ? mounts : "/proc/mounts", "re");
		snprintf(needle, sizeof(needle), "/dev/%s", de->d_name);
		while (f != NULL && why[0] == '\0' && fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, needle, strlen(needle)) == 0) {
				snprintf(why, len, "%.80s or a partition of it is mounted", needle);
			}
		}
		if (f != NULL) {
			fclose(f);
		}
		snprintf(needle, sizeof(needle), "/%s/", bdf);
	}
	if (d != NULL) {
		closedir(d);
	}
}

/* BAR0 size from the sysfs resource0 file (0 if it cannot be told). */
static uint64_t
bar0_size(const char *bdf)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/resource0", nvp_env_sysfs_root(), bdf);
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Usable by nvpoll? Prints one line; \return true if so. */
static bool
check_function(const struct doctor *d, const struct nvp_pci_info *info, char *why, size_t len)
{
	char use[256];
	uint64_t bar;

	if (nvp_pci_usable(info, why, len) != 0) {
		if (strcmp(info->driver, "nvme") == 0) {
			in_use(info->bdf, use, sizeof(use));
			if (use[0] != '\0') {
				snprintf(why, len,
					 "bound to nvme (kernel driver) and in use: %s - %s "
					 "leaves it alone; release it first if it is really free",
					 use, setup_cmd());
			}
		}
		return false;
	}
	bar = bar0_size(info->bdf);
	if (bar != 0 && bar < BAR0_MIN) {
		snprintf(why, len,
			 "BAR0 is %" PRIu64
			 " bytes, too small for the NVMe registers and doorbells "
			 "(at least %u): not a usable NVMe controller",
			 bar, BAR0_MIN);
		return false;
	}
	if (strcmp(info->driver, "vfio-pci") == 0) {
		if (info->iommu_group < 0) {
			snprintf(why, len,
				 "bound to vfio-pci but has no IOMMU group: turn the "
				 "IOMMU on or use uio_pci_generic");
			return false;
		}
		return nvp_env_iommu_group_viable(info->iommu_group, why, len) == 0;
	}
	/* uio_pci_generic: physical addresses need DPDK, root and hugepages. */
	if (strcmp(nvp_env_name(), "dpdk") != 0) {
		snprintf(why, len,
			 "bound to uio_pci_generic, but this build has no DPDK: physical "
			 "addresses need it; rebuild with DPDK or bind to vfio-pci");
		return false;
	}
	if (geteuid() != 0 || d->hp_free == 0) {
		snprintf(why, len,
			 "bound to uio_pci_generic, which needs physical addresses: %s%s%s",
			 geteuid() != 0 ? "run as root" : "reserve hugepages (",
			 geteuid() != 0 ? "" : setup_cmd(), geteuid() != 0 ? "" : ")");
		return false;
	}
	return true;
}

static int
report_function(void *ctx, const struct nvp_pci_info *info)
{
	struct doctor *d = ctx;
	char why[512];
	bool ok = check_function(d, info, why, sizeof(why));

	printf("  %s %04x:%04x  driver %-16s iommu group %-3d numa %-2d  %s%s\n", info->bdf,
	       info->id.vendor_id, info->id.device_id,
	       info->driver[0] != '\0' ? info->driver : "(none)", info->iommu_group,
	       info->numa_node, ok ? "usable" : "skipped: ", ok ? "" : why);
	if (ok) {
		d->usable++;
	} else {
		d->skipped++;
	}
	return 0;
}

static int
parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (nvp_strtou64(arg, min, max, &v) != 0) {
		fprintf(stderr, "nvp_doctor: %s wants a number from %u to %u, got '%s'\n", opt, min,
			max, arg);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A size as nvp_perf -o takes it: bytes, or with a k/M suffix (128k). */
static int
parse_size_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (nvp_parse_size(arg, &v) != 0 || v < min || v > max) {
		fprintf(stderr,
			"nvp_doctor: %s wants a size from %u to %u bytes (k/M suffixes, e.g. 128k), "
			"got '%s'\n",
			opt, min, max, arg);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int
parse_args(struct doctor *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "queues", required_argument, NULL, 'q' },
		{ "depth", required_argument, NULL, 'd' },
		{ "io-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	while (rc == 0 && (c = getopt_long(argc, argv, "q:d:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			rc = parse_u32("--queues", optarg, 1, 65535, &d->queues);
			break;
		case 'd':
			rc = parse_u32("--depth", optarg, 2, 65536, &d->depth);
			break;
		case 's':
			rc = parse_size_u32("--io-size", optarg, 512, 1u << 24, &d->io_size);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("nvp_doctor (nvpoll) %s\n", NVP_VERSION_STRING);
			return 1;
		default:
			rc = -EINVAL;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "nvp_doctor: unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	if (rc != 0) {
		usage(stderr);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct doctor d = { .queues = 1, .depth = 128, .io_size = 4096 };
	bool hp_ok;
	int rc;

	rc = parse_args(&d, argc, argv);
	if (rc != 0) {
		return rc > 0 ? 0 : 2;
	}
	printf("nvp_doctor: nvpoll on real NVMe functions (sysfs at %s, %s environment)\n",
	       nvp_env_sysfs_root(), nvp_env_name());
	hp_ok = check_hugepages(&d);
	check_iommu();
	check_memlock(&d);
	printf("NVMe functions (class 0x010802):\n");
	rc = nvp_pci_scan(NVP_PCI_CLASS_NVME, report_function, &d);
	if (rc != 0) {
		printf("  cannot scan the PCI bus: %s\n", strerror(-rc));
	} else if (d.usable + d.skipped == 0) {
		printf("  none found\n");
	}
	printf("Summary: %d usable, %d skipped%s%s\n", d.usable, d.skipped,
	       d.usable > 0 && !hp_ok ? "; too few free hugepages" : "",
	       d.usable == 0 ? " - nothing for nvpoll to drive here (the software controller, "
			       "trtype:emu, needs none of this)" :
			       "");
	return d.usable > 0 ? 0 : 1;
}
