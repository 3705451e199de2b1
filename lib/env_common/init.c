/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_env_init() / nvp_env_fini(): the part both backends share - one lock, the
 * initialised flag, copying and checking the options, recording them for the rest of env
 * and fixing the tick rate. What differs (starting DPDK's EAL, capping anonymous memory)
 * sits behind env_backend_start() / env_backend_stop().
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_initialized;

/* Checks every backend makes; backend-specific ones are in env_backend_start(). */
static int
check_opts(const struct nvp_env_opts *opts)
{
	uint64_t mask;

	/* posix pins no cores, but rejects what the DPDK backend would reject. */
	if (nvp_strtou64(opts->core_mask, 1, UINT64_MAX, &mask) != 0) {
		NVP_ERRLOG("core mask \"%s\" is not a non-zero number such as 0x1",
			   opts->core_mask);
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
		rc = env_backend_start(&opts);
	}
	if (rc == 0) {
		env_opts_set(&opts);
		/* Calibrate the tick rate now rather than on the first timed I/O. */
		(void)nvp_env_get_ticks_hz();
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
		/* a device thread still running would DMA into freed memory */
		env_vdev_quiesce_all();
		env_backend_stop();
		env_iova_map_fini();
	}
	pthread_mutex_unlock(&g_init_lock);
}
