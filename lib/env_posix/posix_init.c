/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The POSIX environment: no DPDK, anonymous page-aligned memory with IOVA = virtual
 * address. Good for the software controller, which reaches memory through
 * nvp_env_iova_to_vaddr(); a real device would need physical or IOMMU addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdatomic.h>

#define NVP_LOG_COMPONENT "env"
#include "env_posix_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_initialized;

static int
check_opts(const struct nvp_env_opts *opts)
{
	uint64_t mask;

	/* No cores to pin here, but reject what the DPDK backend would reject. */
	if (nvp_strtou64(opts->core_mask, 1, UINT64_MAX, &mask) != 0) {
		NVP_ERRLOG("core mask \"%s\" is not a non-zero number such as 0x1",
			   opts->core_mask);
		return -EINVAL;
	}
	if (opts->mem_size_mb > (UINT64_MAX >> 20)) {
		NVP_ERRLOG("mem_size_mb %zu is too large", opts->mem_size_mb);
		return -EINVAL;
	}
	return 0;
}

int
nvp_env_init(const struct nvp_env_opts *user_opts)
{
	struct nvp_env_opts opts;
	int rc;

	pthread_mutex_lock(&g_init_lock);
	if (atomic_load(&g_initialized)) {
		pthread_mutex_unlock(&g_init_lock);
		return 0;
	}
	rc = env_opts_copy(&opts, user_opts);
	if (rc != 0) {
		NVP_ERRLOG("nvp_env_init: opts_size %zu is too small; call nvp_env_opts_init()",
			   user_opts->opts_size);
	} else {
		rc = check_opts(&opts);
	}
	if (rc == 0) {
		env_posix_mem_set_limit((uint64_t)opts.mem_size_mb << 20);
		env_opts_set(&opts);
		/* Calibrate the tick rate now rather than on the first timed I/O. */
		(void)nvp_env_get_ticks_hz();
		if (!opts.quiet) {
			NVP_INFOLOG("posix environment: anonymous DMA memory with IOVA = virtual "
				    "address (software controller only), %" PRIu64 " ticks/s",
				    nvp_env_get_ticks_hz());
		}
		atomic_store(&g_initialized, true);
	}
	pthread_mutex_unlock(&g_init_lock);
	return rc;
}

bool
nvp_env_is_initialized(void)
{
	return atomic_load_explicit(&g_initialized, memory_order_acquire);
}

void
nvp_env_fini(void)
{
	pthread_mutex_lock(&g_init_lock);
	if (atomic_load(&g_initialized)) {
		atomic_store(&g_initialized, false);
		env_posix_mem_fini();
	}
	pthread_mutex_unlock(&g_init_lock);
}

const char *
nvp_env_name(void)
{
	return "posix";
}
