/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Path selection for multipath (nvme_mpath.c), kept apart as a pure function of the
 * paths' states so a unit test can walk it with made-up states.
 */
#ifndef NVP_NVME_MPATH_INTERNAL_H
#define NVP_NVME_MPATH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "nvpoll/nvme_mpath.h"

/* What the choice needs to know of one path. */
struct nvme_mpath_view {
	uint8_t ana_state; /* enum nvme_ana_state */
	bool usable;       /* connected, with a qpair on this thread */
};

/*
 * The path for the next request, or -1 when none is usable. Paths in @exclude (bit i =
 * path i: the ones this request already failed on) are passed over. *@cursor is the
 * caller's memory between calls: the current path (failover), the last one used
 * (multipath); updated with the choice.
 */
int nvme_mpath_select(enum nvp_nvme_mpath_policy policy, const struct nvme_mpath_view *paths,
		      uint32_t num_paths, uint32_t exclude, uint32_t *cursor);

#endif /* NVP_NVME_MPATH_INTERNAL_H */
