/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCIe transport's I/O path where it is not inline (nvme_pcie_internal.h has the rest):
 * the check of a request that waits for a slot, and PRP lists past the two entries of the
 * command (NVMe 1.4 section 4.3), built in the tracker's page with chained pages from the
 * qpair's pool. The generic qpair reaches both through nvme_transport.h without an
 * indirect call; nothing here calls the controller or the qpair code above it (set-up and
 * the ops table are nvme_pcie_ctrlr.c's). Also the look for a controller that missed a
 * shadow doorbell update.
 */
#include <inttypes.h>

#include "nvme_pcie_internal.h"

/*
 * A request that must wait for a slot is checked now, so the caller hears of a bad
 * buffer. A payload of the common kind gets its PRPs here and keeps them (dptr_built):
 * its submission from the queued list does not walk it again.
 */
int
nvme_pcie_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	uint32_t extra;
	int rc = nvme_pcie_prp_fast(pq, req);

	if (rc <= 0) {
		req->dptr_built = rc == 0;
		return rc;
	}
	extra = nvme_pcie_prp_extra_pages(qpair->ctrlr->page_size, req->payload.size);
	if (req->payload.type != NVME_PAYLOAD_NONE && extra > pq->prp_pool_total) {
		NVP_ERRLOG("qpair %u: a %u-byte payload needs %u chained PRP list pages, the "
			   "qpair has %u",
			   qpair->id, req->payload.size, extra, pq->prp_pool_total);
		return -EINVAL;
	}
	return nvme_pcie_prp_check(pq, req);
}

/*
 * PRPs of any payload the fast path does not take: a list in the tracker's page, with
 * chained pages from the pool for long ones (the tracker then holds transport
 * resources, given back by pcie_qpair_release_tracker()). \return 0, -EAGAIN (pool
 * short), or -errno for a bad payload.
 */
int
nvme_pcie_qpair_build_list(struct nvme_pcie_qpair *pq, struct nvme_tracker *tr,
			   struct nvme_request *req)
{
	struct nvme_pcie_tracker *ptr = &pq->ptrackers[nvme_tracker_idx(&pq->qpair, tr)];
	int rc;

	if (req->payload.size > pq->max_unchained && req->payload.type != NVME_PAYLOAD_NONE) {
		uint32_t extra = nvme_pcie_prp_extra_pages(pq->page_size, req->payload.size);

		if (extra > pq->prp_pool_total) {
			return -EINVAL;
		}
		rc = nvme_pcie_prp_reserve(pq, ptr, extra);
		if (rc != 0) {
			return rc;
		}
		tr->xport_res = ptr->extra != NULL;
	}
	rc = nvme_pcie_prp_build(pq, ptr, req);
	if (nvp_unlikely(rc != 0)) {
		nvme_pcie_prp_release(pq, ptr);
		tr->xport_res = false;
	}
	return rc;
}

/*
 * Before doorbells are written again: CSTS, one MMIO read. A device being pulled out
 * reads all ones (or fatal), and a doorbell write to it is at best lost: QEMU 7.2 even
 * crashed on them while it removed the device (the pc guest's surprise removal). The
 * qpair's own health checks report the removal; the look only stays out of the way.
 */
static bool
nvme_pcie_qpair_device_there(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(qpair->ctrlr);
	union nvme_csts_register csts;

	csts.raw = nvp_mmio_read4((volatile uint32_t *)(pctrlr->bar + NVME_REG_CSTS));
	return csts.raw != UINT32_MAX && !csts.bits.cfs && csts.bits.rdy;
}

/*
 * Every NVME_PCIE_IDLE_LOOK_POLLS polls that found no completion on a qpair with shadow
 * doorbells. A controller that misses a shadow doorbell update (it reads the shadow tail
 * before the host's write is visible and sets EventIdx after, with no full barrier
 * between) stops fetching, while the host, told by EventIdx that an MMIO write is not
 * needed, writes none: both wait for ever. nvp_perf -b at QD32 on QEMU 7.2's controller
 * stopped so, now and then, with shadow doorbells only. If commands are in the device
 * and nothing was submitted or completed for NVME_PCIE_IDLE_REKICK_MS, write both MMIO
 * doorbells again with their current values (once per such period): a controller that
 * was only slow sees the same tail and head.
 */
void
nvme_pcie_qpair_idle_look(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	uint64_t seen = pq->cq_head | (uint64_t)pq->phase << 16 | (uint64_t)pq->sq_tail << 32;
	uint64_t n, now = nvme_ticks(qpair->ctrlr);

	if (qpair->slots_used == 0 || seen != pq->idle_seen) {
		pq->idle_seen = seen;
		pq->idle_since = now;
		return;
	}
	if (now - pq->idle_since < nvme_ms_to_ticks(qpair->ctrlr, NVME_PCIE_IDLE_REKICK_MS) ||
	    nvme_qpair_reset_pending(qpair)) {
		return;
	}
	pq->idle_since = now;
	if (!nvme_pcie_qpair_device_there(qpair)) {
		return;
	}
	if (!qpair->sq_dirty) { /* else the poll's own ring writes it */
		pq->sq_mmio_owed = true;
		qpair->sq_dirty = true;
	}
	nvp_mmio_write4(pq->cq_hdbl, pq->cq_head);
	n = ++qpair->stats.doorbell_rekicks;
	if ((n & (n - 1)) == 0) { /* the 1st, 2nd, 4th, 8th... */
		NVP_NOTICELOG("qpair %u: no completion for %u ms with %u commands in the device: "
			      "MMIO doorbells written again, in case the controller missed a "
			      "shadow doorbell update (%" PRIu64 " times so far)",
			      qpair->id, NVME_PCIE_IDLE_REKICK_MS, qpair->slots_used, n);
	}
}
