/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The POSIX environment: no DPDK, anonymous page-aligned memory with IOVA = virtual
 * address. Good for the software controller, which reaches memory through
 * nvp_env_iova_to_vaddr(); a real device would need physical or IOMMU addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#define NVP_LOG_COMPONENT "env"
#include "env_posix_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

static int
check_opts(const struct nvp_env_opts *opts)
{
	if (opts->mem_size_mb > (UINT64_MAX >> 20)) {
		NVP_ERRLOG("mem_size_mb %zu is too large", opts->mem_size_mb);
		return -EINVAL;
	}
	return 0;
}

int
env_backend_start(const struct nvp_env_opts *opts)
{
	int rc = check_opts(opts);

	if (rc != 0) {
		return rc;
	}
	env_posix_mem_set_limit((uint64_t)opts->mem_size_mb << 20);
	if (!opts->quiet) {
		NVP_INFOLOG("posix environment: anonymous DMA memory with IOVA = virtual "
			    "address (software controller only), %" PRIu64 " ticks/s",
			    nvp_env_get_ticks_hz());
	}
	return 0;
}

void
env_backend_stop(void)
{
	env_posix_mem_fini();
}

/* ---- real devices: our own VFIO container; no physical addresses ---- */

int
env_backend_vfio_open(const char *bdf, int group, int *device_fd)
{
	return env_vfio_generic_open(bdf, group, device_fd);
}

void
env_backend_vfio_close(const char *bdf, int group, int device_fd)
{
	env_vfio_generic_close(bdf, group, device_fd);
}

bool
env_backend_iova_is_phys(char *why, size_t whylen)
{
	snprintf(why, whylen,
		 "the posix environment (a build without DPDK) has only anonymous 4 KiB memory "
		 "with no stable physical addresses; build with DPDK and reserve hugepages");
	return false;
}

const char *
nvp_env_name(void)
{
	return "posix";
}
