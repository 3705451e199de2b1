/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A completion queue entry handed to the generic qpair: what every transport calls for
 * each entry it consumes (PCIe from its completion loop, NVMe/TCP from a response
 * capsule). The common case (an active tracker) is inline; anything else (an unknown or
 * idle CID, a tracker in recovery) goes to nvme_qpair_recovery.c. Apart from
 * nvme_internal.h so that the shared header calls nothing above it: the layers run
 * nvme_internal.h <- nvme_qpair_recovery.c <- this header <- the transports.
 */
#ifndef NVP_NVME_CPL_H
#define NVP_NVME_CPL_H

#include "nvme_internal.h"

/* Called by the transport for each completion queue entry. */
static inline void
nvme_qpair_complete_cpl(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl)
{
	struct nvme_tracker *tr = &qpair->trackers[cpl->cid & qpair->cid_idx_mask];
	struct nvme_request *req;

	/* ACTIVE implies a completion pending and a slot held (the other states clear or
	 * keep them apart): one test for the common case. An unused index is FREE; a CID of
	 * another generation is a duplicated or stale completion. */
	if (nvp_unlikely(tr->state != NVME_TR_ACTIVE || tr->cid != cpl->cid)) {
		nvme_qpair_complete_slow(qpair, cpl);
		return;
	}
	tr->cpl_pending = false;
	tr->holds_slot = false;
	qpair->slots_used--;
	req = tr->req;
	TAILQ_REMOVE(&qpair->outstanding, tr, link);
	tracker_put(qpair, tr);
	nvme_complete_request(qpair, req, cpl);
}

#endif /* NVP_NVME_CPL_H */
