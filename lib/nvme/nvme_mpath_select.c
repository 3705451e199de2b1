/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which path a multipath request goes down (ANA: NVMe 1.4 section 8.20.3). Optimized paths
 * first, non-optimized ones only when no optimized one is usable (Linux's
 * __nvme_find_path() and SPDK's bdev_nvme_find_io_path() order them the same way);
 * inaccessible, persistent loss and change paths never.
 *   failover:  stay on the current path while it is usable and no better kind exists;
 *              else the first best path after it (so paths take turns as they fail).
 *   multipath: the next best path after the last one used (round-robin).
 */
#include "nvme_mpath_internal.h"
#include "nvpoll/nvme_spec.h"

/* 0 optimized, 1 non-optimized, 2 not to be used. */
static int
rank(const struct nvme_mpath_view *v, uint32_t i, uint32_t exclude)
{
	if (!v->usable || (exclude & (1u << i)) != 0) {
		return 2;
	}
	switch (v->ana_state) {
	case NVME_ANA_OPTIMIZED:
		return 0;
	case NVME_ANA_NON_OPTIMIZED:
		return 1;
	default:
		return 2;
	}
}

/* The first path of rank @r after @from (wrapping, @from itself last), or -1. */
static int
next_of_rank(const struct nvme_mpath_view *paths, uint32_t n, uint32_t exclude, uint32_t from,
	     int r)
{
	for (uint32_t k = 1; k <= n; k++) {
		uint32_t i = (from + k) % n;

		if (rank(&paths[i], i, exclude) == r) {
			return (int)i;
		}
	}
	return -1;
}

int
nvme_mpath_select(enum nvp_nvme_mpath_policy policy, const struct nvme_mpath_view *paths,
		  uint32_t num_paths, uint32_t exclude, uint32_t *cursor)
{
	uint32_t cur = num_paths != 0 ? *cursor % num_paths : 0;
	int best = 2, i = -1;

	for (uint32_t k = 0; k < num_paths; k++) {
		int r = rank(&paths[k], k, exclude);

		best = r < best ? r : best;
	}
	if (best == 2) {
		return -1;
	}
	if (policy == NVP_NVME_MPATH_FAILOVER && rank(&paths[cur], cur, exclude) == best) {
		i = (int)cur;
	} else {
		i = next_of_rank(paths, num_paths, exclude, cur, best);
	}
	if (i >= 0) {
		*cursor = (uint32_t)i;
	}
	return i;
}
