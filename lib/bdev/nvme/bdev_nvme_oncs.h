/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which bdev I/O types an NVMe controller takes, from its Identify data (ONCS): one
 * answer for the nvme module and its multipath sibling.
 */
#ifndef NVP_BDEV_NVME_ONCS_H
#define NVP_BDEV_NVME_ONCS_H

#include <stdbool.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/nvme_spec.h"

static inline bool
bdev_nvme_oncs_supports(const struct nvme_ctrlr_data *cd, enum nvp_bdev_io_type type)
{
	switch (type) {
	case NVP_BDEV_IO_READ:
	case NVP_BDEV_IO_WRITE:
	case NVP_BDEV_IO_FLUSH:
		return true;
	case NVP_BDEV_IO_WRITE_ZEROES:
		return (cd->oncs & NVME_ONCS_WRITE_ZEROES) != 0;
	case NVP_BDEV_IO_UNMAP:
		return (cd->oncs & NVME_ONCS_DSM) != 0;
	case NVP_BDEV_IO_COMPARE:
		return (cd->oncs & NVME_ONCS_COMPARE) != 0;
	default:
		return false;
	}
}

#endif /* NVP_BDEV_NVME_ONCS_H */
