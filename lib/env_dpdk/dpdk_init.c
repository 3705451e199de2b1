/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK environment: starts the EAL for its memory (hugepages when reserved, else
 * anonymous 4 KiB pages) and nothing else - no PCI bus scan, no shared files, no
 * telemetry, one lcore. nvpoll does its own PCI work (lib/env_common).
 *
 * EAL quirks handled here:
 * - rte_eal_init() pins the calling thread to the main lcore; we restore its affinity, or
 *   every thread the application starts afterwards would share one CPU.
 * - DPDK 22.11 logs to stdout and syslog by default; its log goes through nvp_log()
 *   (component "dpdk") instead, so the library never prints to stdout.
 * - The EAL cannot be started again after rte_eal_cleanup(): nvp_env_init() after
 *   nvp_env_fini() fails with -EALREADY. Tests call nvp_env_fini() once, at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#define NVP_LOG_COMPONENT "env"
#include "env_dpdk_internal.h"
#include "nvp_config.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define HUGEPAGES_2M_FREE "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
/* -m for --no-huge when opts.mem_size_mb is 0. */
#define DEFAULT_NO_HUGE_MB 256
#define MAX_EAL_ARGS 16

static bool g_eal_done;   /* rte_eal_init() ran once; DPDK cannot run it again */
static bool g_eal_failed; /* ... and failed */

/* argv for rte_eal_init(): static because the EAL may keep pointers into it. */
static char g_arg_buf[MAX_EAL_ARGS][96];
static char *g_argv[MAX_EAL_ARGS + 1];
static int g_argc;

/* ---- DPDK log -> nvp_log ---- */

static ssize_t
dpdk_log_write(void *cookie, const char *buf, size_t size)
{
	int dl = rte_log_cur_msg_loglevel();
	enum nvp_log_level level = NVP_LOG_DEBUG;
	const char *p = buf, *end = buf + size;

	(void)cookie;
	if (dl <= (int)RTE_LOG_ERR) {
		level = NVP_LOG_ERROR;
	} else if (dl == (int)RTE_LOG_WARNING) {
		level = NVP_LOG_WARN;
	} else if (dl == (int)RTE_LOG_NOTICE) {
		level = NVP_LOG_NOTICE;
	} else if (dl == (int)RTE_LOG_INFO) {
		level = NVP_LOG_INFO;
	}
	/* One nvp_log() line per line of DPDK output. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		int n = (int)((nl != NULL ? nl : end) - p);

		if (n > 0) {
			nvp_log(level, "dpdk", "%.*s", n, p);
		}
		p += n + 1;
	}
	return (ssize_t)size;
}

static void
redirect_dpdk_log(void)
{
	static FILE *stream;
	cookie_io_functions_t io = { .write = dpdk_log_write };

	if (stream == NULL) {
		stream = fopencookie(NULL, "w", io);
	}
	if (stream != NULL) {
		rte_openlog_stream(stream);
	}
}

/* ---- EAL arguments ---- */

static void
add_arg(const char *arg)
{
	if (g_argc >= MAX_EAL_ARGS) {
		return;
	}
	nvp_strlcpy(g_arg_buf[g_argc], arg, sizeof(g_arg_buf[g_argc]));
	g_argv[g_argc] = g_arg_buf[g_argc];
	g_argv[++g_argc] = NULL;
}

/* Free 2 MiB hugepages, or 0 if none are reserved (or the kernel has none). */
static uint64_t
free_hugepages_2m(void)
{
	char line[32];
	uint64_t n = 0;
	FILE *f = fopen(HUGEPAGES_2M_FREE, "re");

	if (f == NULL) {
		return 0;
	}
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (nvp_strtou64(line, 0, UINT64_MAX, &n) != 0) {
			n = 0;
		}
	}
	fclose(f);
	return n;
}

/*
 * Running without hugepages matters only to real NVMe functions (bound to vfio-pci or
 * uio_pci_generic, which this process may then drive); the software controller needs no
 * more than anonymous memory. So: a warning when such a function exists, else an info
 * line nobody sees by default. Called once per process (nvp_env_init runs once).
 */
static void
no_huge_notice(const struct nvp_env_opts *opts, uint64_t free_mb)
{
	int users = opts->no_pci ? 0 : env_dpdk_count_user_nvme();
	char why[96];

	if (free_mb == 0) {
		snprintf(why, sizeof(why), "no free hugepages");
	} else {
		snprintf(why, sizeof(why), "hugepages: need %zu MiB, %" PRIu64 " MiB free",
			 opts->mem_size_mb, free_mb);
	}
	if (users == 0) {
		NVP_INFOLOG("%s; DMA memory is anonymous 4 KiB pages (--no-huge), all the "
			    "software controller needs",
			    why);
		return;
	}
	NVP_WARNLOG("%s; DMA memory is anonymous 4 KiB pages (--no-huge), which the %d NVMe "
		    "function(s) bound to vfio-pci/uio_pci_generic here cannot use well - reserve "
		    "hugepages: echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages "
		    "(or scripts/setup.sh)%s",
		    why, users, free_mb == 0 ? "" : ", or lower mem_size_mb");
}

/*
 * Decide between hugepages and --no-huge. \return true for --no-huge. Says why once.
 */
static bool
choose_no_huge(const struct nvp_env_opts *opts)
{
	uint64_t free_mb = free_hugepages_2m() * 2;

	if (opts->no_huge) {
		if (!opts->quiet) {
			NVP_INFOLOG("no_huge set: DMA memory is anonymous 4 KiB pages (--no-huge)");
		}
		return true;
	}
	if (free_mb == 0 || opts->mem_size_mb > free_mb) {
		no_huge_notice(opts, free_mb);
		return true;
	}
	return false;
}

/*
 * The core mask for -c: the caller's, except that the default "0x1" moves to the first
 * CPU this process may run on (under taskset CPU 0 may not be one of them).
 */
static void
core_mask_arg(const struct nvp_env_opts *opts, char *buf, size_t len)
{
	cpu_set_t set;
	int cpu;

	nvp_strlcpy(buf, opts->core_mask, len);
	if (strcmp(opts->core_mask, "0x1") != 0 || sched_getaffinity(0, sizeof(set), &set) != 0 ||
	    CPU_ISSET(0, &set)) {
		return;
	}
	for (cpu = 0; cpu < 64; cpu++) {
		if (CPU_ISSET(cpu, &set)) {
			snprintf(buf, len, "0x%llx", 1ull << cpu);
			return;
		}
	}
}

static void
build_eal_args(const struct nvp_env_opts *opts, bool no_huge)
{
	char buf[96];

	g_argc = 0;
	add_arg(opts->name);
	core_mask_arg(opts, buf, sizeof(buf));
	add_arg("-c");
	add_arg(buf);
	snprintf(buf, sizeof(buf), "--file-prefix=%s", opts->name);
	add_arg(buf);
	/* No PCI scan (ours is in env_common), no telemetry socket or thread, and no shared
	 * files in /var/run/dpdk so processes run side by side: --in-memory with hugepages;
	 * --no-huge implies --legacy-mem, which DPDK refuses with --in-memory, so there
	 * --no-shconf (no hugepage files exist to share anyway). */
	add_arg("--no-pci");
	add_arg(no_huge ? "--no-shconf" : "--in-memory");
	add_arg("--no-telemetry");
	/* IOVA = VA: the software controller needs no more, nor do vfio-pci functions behind
	 * an IOMMU. Functions bound only to uio_pci_generic DMA to physical addresses. */
	add_arg(env_dpdk_want_iova_pa(opts, no_huge) ? "--iova-mode=pa" : "--iova-mode=va");
	/* The EAL's chatter only when asked for: NVP_LOG_LEVEL=info/debug or a debug build. */
	if (nvp_log_get_level() >= NVP_LOG_DEBUG) {
		add_arg("--log-level=lib.eal:debug");
	} else if (nvp_log_get_level() >= NVP_LOG_INFO) {
		add_arg("--log-level=lib.eal:info");
	} else if (NVP_CONFIG_DEBUG) {
		add_arg("--log-level=lib.eal:notice");
	} else {
		add_arg("--log-level=lib.eal:error");
	}
	if (no_huge) {
		add_arg("--no-huge");
	}
	if (no_huge || opts->mem_size_mb != 0) {
		snprintf(buf, sizeof(buf), "%zu",
			 opts->mem_size_mb != 0 ? opts->mem_size_mb : (size_t)DEFAULT_NO_HUGE_MB);
		add_arg("-m");
		add_arg(buf);
	}
}

static int
check_opts(const struct nvp_env_opts *opts)
{
	if (opts->name[0] == '\0' || strlen(opts->name) > 64 || strchr(opts->name, '/')) {
		NVP_ERRLOG("name \"%s\" cannot be a DPDK file prefix: use up to 64 characters, "
			   "no '/'",
			   opts->name);
		return -EINVAL;
	}
	return 0;
}

/* Run rte_eal_init() on g_argv, keeping the caller's CPU affinity and getopt state. */
static int
start_eal(void)
{
	char *argv[MAX_EAL_ARGS + 1];
	int saved_optind = optind, saved_opterr = opterr, saved_optopt = optopt;
	char *saved_optarg = optarg;
	cpu_set_t set;
	int have_set, rc;

	memcpy(argv, g_argv, sizeof(argv)); /* rte_eal_init() permutes its argv */
	have_set = pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
	redirect_dpdk_log();
	rc = rte_eal_init(g_argc, argv);
	if (rc < 0) {
		rc = rte_errno != 0 ? rte_errno : EIO;
	} else {
		rc = 0;
	}
	if (have_set == 0) {
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	optind = saved_optind;
	opterr = saved_opterr;
	optopt = saved_optopt;
	optarg = saved_optarg;
	return rc;
}

static void
log_eal_args(enum nvp_log_level level)
{
	char line[512];
	size_t off = 0;
	int i;

	line[0] = '\0';
	for (i = 0; i < g_argc && off < sizeof(line); i++) {
		int n = snprintf(line + off, sizeof(line) - off, "%s%s", i ? " " : "", g_argv[i]);

		if (n < 0) {
			break;
		}
		off += (size_t)n;
	}
	nvp_log(level, NVP_LOG_COMPONENT, "DPDK EAL arguments: %s", line);
}

/* Start the EAL once for this process with @opts. Caller holds env's init lock. */
static int
start_env(const struct nvp_env_opts *opts)
{
	int rc;

	if (g_eal_done) {
		/* rte_eal_init() runs once per process, whether it worked or not. */
		NVP_ERRLOG("DPDK cannot be started twice in one process: %s",
			   g_eal_failed ?
				   "it failed to start before (see the messages above)" :
				   "nvp_env_init() after nvp_env_fini(); call nvp_env_fini() "
				   "only at the end");
		return g_eal_failed ? -EIO : -EALREADY;
	}
	build_eal_args(opts, choose_no_huge(opts));
	log_eal_args(NVP_LOG_DEBUG);
	g_eal_done = true;
	rc = start_eal();
	if (rc != 0) {
		g_eal_failed = true;
		log_eal_args(NVP_LOG_ERROR);
		NVP_ERRLOG("rte_eal_init failed: %s (%d)%s", rte_strerror(rc), rc,
			   rc == EACCES || rc == EPERM ?
				   "; DPDK needs root" :
				   "; try no_huge, or NVP_LOG_LEVEL=debug for the EAL's log");
		return rc == ENOMEM ? -ENOMEM : -EIO;
	}
	return 0;
}

int
env_backend_start(const struct nvp_env_opts *opts)
{
	int rc = check_opts(opts);

	if (rc == 0) {
		rc = start_env(opts);
	}
	if (rc == 0) {
		rc = env_dpdk_mem_init();
		if (rc != 0) {
			rte_eal_cleanup();
		}
	}
	if (rc == 0 && !opts->quiet) {
		NVP_INFOLOG("DPDK environment started (%s, %" PRIu64 " ticks/s)",
			    rte_eal_has_hugepages() ? "hugepages" : "no hugepages",
			    nvp_env_get_ticks_hz());
	}
	return rc;
}

void
env_backend_stop(void)
{
	env_dpdk_mem_fini();
	rte_eal_cleanup();
}

const char *
nvp_env_name(void)
{
	return "dpdk";
}
