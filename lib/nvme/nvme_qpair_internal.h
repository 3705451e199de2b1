/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generic qpair's submission, inline in the NVM command calls (nvme_ns_cmd.c) as in
 * nvme_qpair.c: a free slot, the tracker, the transport's submit (through the one dispatch
 * of nvme_transport.h) and the doorbell. What is not inline (the queued list, a refused
 * request, the guarded doorbell) is in nvme_qpair.c.
 *
 * Layering: nvme_transport.h <- this header <- nvme_qpair.c, nvme_ns_cmd.c.
 */
#ifndef NVP_NVME_QPAIR_INTERNAL_H
#define NVP_NVME_QPAIR_INTERNAL_H

#include "nvme_transport.h"

/* ---------------------------------------------------------------------------------------
 * Submission, inline in the NVM command calls (nvme_ns_cmd.c) as in nvme_qpair.c
 * ------------------------------------------------------------------------------------- */

/* nvme_qpair.c: the parts of a submission that are not inline */
int nvme_qpair_submit_wait(struct nvp_nvme_qpair *qpair, struct nvme_request *req);
int nvme_qpair_submit_refused(struct nvp_nvme_qpair *qpair, struct nvme_request *req, int rc);
void nvme_qpair_ring_sq_guarded(struct nvp_nvme_qpair *qpair);

/*
 * Hand @req to the transport in slot @tr, the top of the free stack. Its deadline counts
 * from @accepted (when the submit call took it: it waited on the queued list), 0 = now.
 * \return 0, -EAGAIN, or -errno.
 */
static inline __attribute__((always_inline)) int
nvme_qpair_submit_tracker(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
			  struct nvme_request *req, uint64_t accepted)
{
	int rc = nvme_transport_qpair_submit(qpair, tr, req);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	SLIST_REMOVE_HEAD(&qpair->free_tr, free_link); /* @tr is its first */
	qpair->slots_used++;
	tr->req = req;
	tr->state = NVME_TR_ACTIVE;
	tr->cpl_pending = true;
	tr->holds_slot = true;
	tr->rsvd2 = 0; /* with the three above: one store (see struct nvme_tracker) */
	if (qpair->timeout_ticks != 0) {
		/* Inside a poll (callbacks) the poll's own timestamp is fresh enough. */
		if (nvp_likely(accepted == 0)) {
			accepted = qpair->in_batch ? qpair->poll_ticks : nvme_ticks(qpair->ctrlr);
		}
		tr->deadline = accepted + qpair->timeout_ticks;
	} else {
		tr->deadline = 0;
	}
	TAILQ_INSERT_TAIL(&qpair->outstanding, tr, link);
	qpair->sq_dirty = true;
	qpair->stats.submitted++;
	return 0;
}

/*
 * The tracker a request can go out in at once: the qpair is ready, its controller has not
 * failed or been reset since its queues were made, a slot is free and nobody waits ahead.
 * NULL: nvme_qpair_submit_wait() takes the request. Its loads are ordered (the reset
 * generation's is an acquire): a caller building a request asks first, so that the
 * compiler can keep what it writes into the request in registers for the submission.
 * Inline in ns_rw() with nvme_qpair_submit_in(), asked before the request is even taken:
 * 7 instructions fewer per 4 KiB read (bench/driver_cost, QD32: 243 to 236): no call, no
 * reload of the payload, fewer registers held across the build.
 */
static inline __attribute__((always_inline)) struct nvme_tracker *
nvme_qpair_free_slot(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tracker *tr = SLIST_FIRST(&qpair->free_tr);

	/* no tracker free: tr is NULL already, which nvme_qpair_submit_in() tests (once: 2
	 * instructions fewer per I/O, bench/driver_cost) */
	if (nvp_unlikely(qpair->not_ready != 0 || nvme_ctrlr_is_failed(qpair->ctrlr) ||
			 nvme_qpair_reset_pending(qpair) || qpair->slots_used >= qpair->num_slots ||
			 !STAILQ_EMPTY(&qpair->queued))) {
		return NULL;
	}
	return tr;
}

/*
 * Accept @req: into the SQ now in @tr if nvme_qpair_free_slot() gave one, else onto the
 * queued list (after checking its payload, so a bad buffer is still reported to the
 * caller). On error the request object is given back.
 * \return 0, -ENXIO (failed controller or qpair being deleted), or the payload's -errno.
 */
static inline __attribute__((always_inline)) int
nvme_qpair_submit_in(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
		     struct nvme_request *req)
{
	int rc;

	if (nvp_unlikely(tr == NULL)) {
		return nvme_qpair_submit_wait(qpair, req);
	}
	rc = nvme_qpair_submit_tracker(qpair, tr, req, 0);
	if (nvp_unlikely(rc != 0)) {
		return nvme_qpair_submit_refused(qpair, req, rc);
	}
	qpair->num_outstanding++;
	if (qpair->ring_later == 0) {
		nvme_qpair_ring_sq_guarded(qpair);
	}
	return 0;
}

#endif /* NVP_NVME_QPAIR_INTERNAL_H */
