/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place where generic code picks a transport on the I/O path: PCIe's submit,
 * doorbell and completion functions are called inline when the qpair is PCIe's (no
 * indirect call per I/O, and the compiler can fold the submission into its caller, as
 * SPDK does); every other transport goes through its struct nvme_transport_ops.
 *
 * Layering: nvme_internal.h (generic) <- nvme_pcie_internal.h (PCIe) <- this header <-
 * the generic qpair code (nvme_qpair.c) and the reads and writes of nvme_ns_cmd.c, which
 * submit inline. Generic files include this header, never a transport's internal header,
 * and name no transport's fields.
 */
#ifndef NVP_NVME_TRANSPORT_H
#define NVP_NVME_TRANSPORT_H

#include "nvme_pcie_internal.h"

static inline bool
nvme_transport_is_pcie(const struct nvp_nvme_qpair *qpair)
{
	return qpair->transport == &g_nvme_pcie_transport;
}

/* Put @req into the queue in slot @tr (see qpair_submit in struct nvme_transport_ops). */
static inline __attribute__((always_inline)) int
nvme_transport_qpair_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
			    struct nvme_request *req)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_submit(qpair, tr, req);
	}
	return qpair->transport->qpair_submit(qpair, tr, req);
}

/* Tell the device about the entries written since the last doorbell. */
static inline void
nvme_transport_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		nvme_pcie_qpair_ring_doorbell(qpair);
	} else {
		qpair->transport->qpair_ring_doorbell(qpair);
	}
}

static inline int32_t
nvme_transport_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_process_completions(qpair, max);
	}
	return qpair->transport->qpair_process_completions(qpair, max);
}

static inline int
nvme_transport_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_check_request(qpair, req);
	}
	return qpair->transport->qpair_check_request(qpair, req);
}

/* True if the qpair's SQ has a doorbell the host can write without MMIO (a shadow). */
static inline bool
nvme_transport_qpair_has_shadow(struct nvp_nvme_qpair *qpair)
{
	if (nvme_transport_is_pcie(qpair)) {
		return to_pcie_qpair(qpair)->sq_shadow != NULL;
	}
	return qpair->transport->qpair_ring_shadow != NULL;
}

/*
 * The SQ doorbell through the shadow only (nvme_transport_qpair_has_shadow() said yes).
 * \return true if the controller was told; false leaves the MMIO write owed.
 */
static inline bool
nvme_transport_qpair_ring_shadow(struct nvp_nvme_qpair *qpair)
{
	if (nvme_transport_is_pcie(qpair)) {
		return nvme_pcie_qpair_ring_shadow(qpair);
	}
	return qpair->transport->qpair_ring_shadow(qpair);
}

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

	if (nvp_unlikely(qpair->not_ready != 0 || nvme_ctrlr_is_failed(qpair->ctrlr) ||
			 nvme_qpair_reset_pending(qpair) || tr == NULL ||
			 qpair->slots_used >= qpair->num_slots || !STAILQ_EMPTY(&qpair->queued))) {
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

#endif /* NVP_NVME_TRANSPORT_H */
