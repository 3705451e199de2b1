/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCIe transport: drives any PCI function env offers (a real function bound to
 * vfio-pci or uio_pci_generic, or a virtual one registered by a device model) through
 * BAR0 and DMA memory. Nothing here knows which kind of function it is talking to.
 *
 * BAR0 holds the register file (NVMe 1.4 section 3.1) and, from offset 0x1000, the
 * doorbells: SQ y tail at 0x1000 + (2y) * (4 << CAP.DSTRD), CQ y head one stride later.
 * Each queue is a ring in DMA memory: 64-byte submission entries, 16-byte completion
 * entries whose phase tag flips every pass over the ring (section 4.6).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme_pcie_internal.h"

/* ---------------------------------------------------------------------------------------
 * Registers
 * ------------------------------------------------------------------------------------- */

static int
pcie_reg_check(struct nvme_pcie_ctrlr *pctrlr, uint32_t offset, uint32_t size)
{
	if (nvp_unlikely(pctrlr->bar == NULL || (uint64_t)offset + size > pctrlr->bar_size ||
			 (offset & (size - 1)) != 0)) {
		NVP_ERRLOG("%s: register access at 0x%x (%u bytes) outside BAR0 (%" PRIu64
			   " bytes) or misaligned",
			   pctrlr->addr_str, offset, size, pctrlr->bar_size);
		return -EINVAL;
	}
	return 0;
}

static int
pcie_get_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t *value)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	int rc = pcie_reg_check(pctrlr, offset, 4);

	if (rc == 0) {
		*value = nvp_mmio_read4((volatile uint32_t *)(pctrlr->bar + offset));
	}
	return rc;
}

static int
pcie_set_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t value)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	int rc = pcie_reg_check(pctrlr, offset, 4);

	if (rc == 0) {
		nvp_mmio_write4((volatile uint32_t *)(pctrlr->bar + offset), value);
	}
	return rc;
}

static int
pcie_get_reg_8(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint64_t *value)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	int rc = pcie_reg_check(pctrlr, offset, 8);

	if (rc == 0) {
		*value = nvp_mmio_read8((volatile uint64_t *)(pctrlr->bar + offset));
	}
	return rc;
}

static int
pcie_set_reg_8(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint64_t value)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	int rc = pcie_reg_check(pctrlr, offset, 8);

	if (rc == 0) {
		nvp_mmio_write8((volatile uint64_t *)(pctrlr->bar + offset), value);
	}
	return rc;
}

static volatile uint32_t *
pcie_doorbell(struct nvme_pcie_ctrlr *pctrlr, uint16_t qid, int is_cq)
{
	uint32_t offset = nvme_doorbell_offset(qid, is_cq, pctrlr->ctrlr.cap.bits.dstrd);

	return (volatile uint32_t *)(pctrlr->bar + offset);
}

/* I/O queues whose doorbells fit in BAR0 (the admin pair takes the first two). */
static uint32_t
pcie_get_max_io_queues(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	uint64_t pairs = (pctrlr->bar_size - NVME_REG_DBS) / (2ull * pctrlr->doorbell_stride);

	return pairs > 1 ? (uint32_t)NVP_MIN(pairs - 1, 65535ull) : 0;
}

/* ---------------------------------------------------------------------------------------
 * Queue pairs
 * ------------------------------------------------------------------------------------- */

/* A ring must be one IOVA-contiguous block: the queues are created physically
 * contiguous (PC = 1), so the device walks it by offset from its base. */
static void *
alloc_ring(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, size_t size, uint64_t *iova,
	   const char *what)
{
	uint64_t len = size;
	void *va = nvp_env_dma_zmalloc(size, ctrlr->page_size, NULL);

	if (va == NULL) {
		NVP_ERRLOG("qpair %u: cannot allocate %zu bytes of DMA memory for its %s", qid,
			   size, what);
		return NULL;
	}
	*iova = nvp_env_vtophys(va, &len);
	if (*iova == NVP_ENV_BAD_IOVA || len < size) {
		NVP_ERRLOG("qpair %u: the %s (%zu bytes) is not IOVA-contiguous; use smaller "
			   "queues or hugepages",
			   qid, what, size);
		nvp_env_dma_free(va);
		return NULL;
	}
	return va;
}

/* One PRP list page per tracker, in one DMA block. */
static int
alloc_tracker_pages(struct nvme_pcie_qpair *pq)
{
	struct nvp_nvme_qpair *qpair = &pq->qpair;
	uint32_t ps = qpair->ctrlr->page_size;
	uint32_t i;

	pq->prp_pages = nvp_env_dma_zmalloc((size_t)qpair->num_trackers * ps, ps, NULL);
	if (pq->prp_pages == NULL) {
		NVP_ERRLOG("qpair %u: cannot allocate %u PRP list pages of DMA memory", qpair->id,
			   qpair->num_trackers);
		return -ENOMEM;
	}
	pq->ptrackers = calloc(qpair->num_trackers, sizeof(*pq->ptrackers));
	if (pq->ptrackers == NULL) {
		return -ENOMEM;
	}
	for (i = 0; i < qpair->num_trackers; i++) {
		struct nvme_pcie_tracker *ptr = &pq->ptrackers[i];

		ptr->prp_list = (uint64_t *)((uint8_t *)pq->prp_pages + (size_t)i * ps);
		ptr->prp_list_iova = nvp_env_vtophys(ptr->prp_list, NULL);
		if (ptr->prp_list_iova == NVP_ENV_BAD_IOVA) {
			return -EFAULT;
		}
	}
	return 0;
}

/* The pool of chained list pages, big enough for a few maximum-size requests at once. */
static int
alloc_prp_pool(struct nvme_pcie_qpair *pq)
{
	struct nvp_nvme_qpair *qpair = &pq->qpair;
	uint32_t ps = qpair->ctrlr->page_size;
	uint32_t per_req = nvme_pcie_prp_extra_pages(ps, qpair->ctrlr->max_xfer_size);
	uint32_t n = per_req * NVP_MIN(qpair->num_trackers, NVME_PRP_POOL_MAX_REQS);
	uint32_t i;

	pq->max_unchained = (ps / (uint32_t)sizeof(uint64_t)) * ps;
	if (n == 0) {
		return 0;
	}
	pq->pool_descs = calloc(n, sizeof(*pq->pool_descs));
	pq->pool_mem = nvp_env_dma_zmalloc((size_t)n * ps, ps, NULL);
	if (pq->pool_descs == NULL || pq->pool_mem == NULL) {
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct nvme_prp_page *pg = &pq->pool_descs[i];

		pg->va = (uint64_t *)((uint8_t *)pq->pool_mem + (size_t)i * ps);
		pg->iova = nvp_env_vtophys(pg->va, NULL);
		pg->next = pq->prp_pool;
		pq->prp_pool = pg;
	}
	pq->prp_pool_free = n;
	pq->prp_pool_total = n;
	return 0;
}

static void
pcie_qpair_reset(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	pq->sq_tail = 0;
	pq->cq_head = 0;
	/* Fresh CQ memory is zero: the first pass looks for phase 1 (section 4.6). */
	pq->phase = 1;
	memset((void *)pq->cq, 0, (size_t)qpair->num_entries * sizeof(struct nvme_cpl));
	qpair->sq_dirty = false;
}

static void
pcie_qpair_destroy(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	if (pq == NULL) {
		return;
	}
	nvp_env_dma_free(pq->sq);
	nvp_env_dma_free((void *)pq->cq);
	nvp_env_dma_free(pq->prp_pages);
	nvp_env_dma_free(pq->pool_mem);
	free(pq->pool_descs);
	free(pq->ptrackers);
	nvme_qpair_fini(qpair);
	free(pq);
}

static int
pcie_qpair_alloc_memory(struct nvme_pcie_qpair *pq)
{
	struct nvp_nvme_qpair *qpair = &pq->qpair;
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	uint32_t n = qpair->num_entries;
	int rc;

	pq->sq = alloc_ring(ctrlr, qpair->id, (size_t)n * sizeof(struct nvme_cmd), &pq->sq_iova,
			    "submission queue");
	pq->cq = alloc_ring(ctrlr, qpair->id, (size_t)n * sizeof(struct nvme_cpl), &pq->cq_iova,
			    "completion queue");
	if (pq->sq == NULL || pq->cq == NULL) {
		return -ENOMEM;
	}
	rc = alloc_tracker_pages(pq);
	if (rc == 0) {
		rc = alloc_prp_pool(pq);
	}
	return rc;
}

static int
pcie_qpair_create(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid,
		  const struct nvp_nvme_io_qpair_opts *opts, struct nvp_nvme_qpair **out)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	uint32_t entries = qid == 0 ? ctrlr->opts.admin_queue_size : opts->io_queue_size;
	uint32_t requests = qid == 0 ? NVP_MAX(2 * entries, 64u) : opts->io_queue_requests;
	struct nvme_pcie_qpair *pq;
	int rc;

	pq = calloc(1, sizeof(*pq));
	if (pq == NULL) {
		return -ENOMEM;
	}
	rc = nvme_qpair_init(&pq->qpair, ctrlr, qid, entries, requests, qid != 0);
	if (rc == 0) {
		rc = pcie_qpair_alloc_memory(pq);
	}
	if (rc != 0) {
		pcie_qpair_destroy(&pq->qpair);
		return rc;
	}
	pq->qpair.transport = &g_nvme_pcie_transport;
	pq->page_size = ctrlr->page_size;
	pq->iova_map = nvp_env_iova_map();
	pq->sq_tdbl = pcie_doorbell(pctrlr, qid, 0);
	pq->cq_hdbl = pcie_doorbell(pctrlr, qid, 1);
	pcie_qpair_reset(&pq->qpair);
	*out = &pq->qpair;
	return 0;
}

/*
 * Interrupts asked for: vector = qid where the function has enough (an eventfd from env),
 * \return the vector for CDW11 IV, -1 for a polled CQ, or -errno.
 */
static int32_t
pcie_qpair_irq(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(qpair->ctrlr);
	uint32_t iv = 0;
	int fd;

	if (!qpair->opts.interrupts) {
		return -1;
	}
	fd = nvp_pci_device_irq_fd(pctrlr->dev, qpair->id, &iv);
	if (fd < 0) {
		NVP_ERRLOG("%s: qpair %u: interrupts asked for, but the function gives none (%s)",
			   qpair->ctrlr->name, qpair->id, strerror(-fd));
		return fd == -ENOTSUP ? -ENOTSUP : -EIO;
	}
	to_pcie_qpair(qpair)->has_irq = true;
	to_pcie_qpair(qpair)->irq_fd = fd;
	to_pcie_qpair(qpair)->irq_vector = iv;
	return (int32_t)iv;
}

static int
pcie_qpair_get_irq_fd(const struct nvp_nvme_qpair *qpair)
{
	const struct nvme_pcie_qpair *pq = (const struct nvme_pcie_qpair *)qpair;

	return pq->has_irq ? pq->irq_fd : -ENOTSUP;
}

static int
pcie_qpair_irq_unmask(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	if (!pq->has_irq) {
		return -ENOTSUP;
	}
	return nvp_pci_device_irq_unmask(to_pcie_ctrlr(qpair->ctrlr)->dev, pq->irq_vector);
}

/* ---------------------------------------------------------------------------------------
 * Shadow doorbells (Doorbell Buffer Config, NVMe 1.3 section 5.7)
 * ------------------------------------------------------------------------------------- */

/*
 * Give the controller the shadow doorbell and EventIdx pages, once per enable and only
 * if it offers them (OACS bit 8). A refusal is not an error: MMIO doorbells work anyway.
 */
static void
dbbuf_configure(struct nvme_pcie_ctrlr *pctrlr)
{
	struct nvp_nvme_ctrlr *ctrlr = &pctrlr->ctrlr;
	uint32_t ps = ctrlr->page_size;
	uint64_t db_iova, ei_iova;
	int rc;

	if (pctrlr->dbbuf_on || pctrlr->dbbuf_failed ||
	    !(ctrlr->cdata.oacs & NVME_OACS_DOORBELL_BUFFER_CONFIG)) {
		return;
	}
	if (pctrlr->dbbuf_db == NULL) {
		pctrlr->dbbuf_db = nvp_env_dma_zmalloc(ps, ps, NULL);
		pctrlr->dbbuf_ei = nvp_env_dma_zmalloc(ps, ps, NULL);
	}
	if (pctrlr->dbbuf_db == NULL || pctrlr->dbbuf_ei == NULL) {
		pctrlr->dbbuf_failed = true;
		return;
	}
	/* After a reset: no value of an earlier life of a queue may be taken for news. */
	memset(pctrlr->dbbuf_db, 0, ps);
	memset(pctrlr->dbbuf_ei, 0, ps);
	db_iova = nvp_env_vtophys(pctrlr->dbbuf_db, NULL);
	ei_iova = nvp_env_vtophys(pctrlr->dbbuf_ei, NULL);
	rc = nvme_ctrlr_cmd_doorbell_buffer_config(ctrlr, db_iova, ei_iova);
	if (rc != 0) {
		NVP_NOTICELOG("%s: Doorbell Buffer Config failed (%d): MMIO doorbells only",
			      ctrlr->name, rc);
		pctrlr->dbbuf_failed = true;
		return;
	}
	pctrlr->dbbuf_on = true;
}

/* Point @pq at its shadow doorbells (same offsets as in BAR0), zeroed, or at none. */
static void
dbbuf_attach(struct nvme_pcie_qpair *pq)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(pq->qpair.ctrlr);
	uint32_t stride = pctrlr->doorbell_stride / (uint32_t)sizeof(uint32_t);
	uint32_t sq = 2u * pq->qpair.id * stride;

	pq->sq_shadow = pq->sq_ei = pq->cq_shadow = pq->cq_ei = NULL;
	pq->sq_mmio_owed = false;
	if (!pctrlr->dbbuf_on || (sq + stride + 1) * sizeof(uint32_t) > pctrlr->ctrlr.page_size) {
		return;
	}
	pctrlr->dbbuf_db[sq] = pctrlr->dbbuf_ei[sq] = 0;
	pctrlr->dbbuf_db[sq + stride] = pctrlr->dbbuf_ei[sq + stride] = 0;
	pq->sq_shadow = &pctrlr->dbbuf_db[sq];
	pq->sq_ei = &pctrlr->dbbuf_ei[sq];
	pq->cq_shadow = &pctrlr->dbbuf_db[sq + stride];
	pq->cq_ei = &pctrlr->dbbuf_ei[sq + stride];
}

/*
 * Once per qpair, before its queues are first created: the interrupt vector, the
 * controller's shadow doorbells. \return the vector for CDW11 IV, -1 for a polled CQ, or
 * -errno.
 */
static int32_t
pcie_qpair_prepare(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int32_t iv = pcie_qpair_irq(qpair);

	if (iv < -1) {
		return iv;
	}
	nvme_ctrlr_lock(ctrlr); /* dbbuf state is the controller's: one configurer at a time */
	dbbuf_configure(to_pcie_ctrlr(ctrlr));
	nvme_ctrlr_unlock(ctrlr);
	return iv;
}

/* The same for a qpair whose queues the owner's polls create (pcie_qpair_conn_cmd()). */
static int
pcie_qpair_connect_prepare(struct nvp_nvme_qpair *qpair)
{
	int32_t iv = pcie_qpair_prepare(qpair);

	return iv < -1 ? (int)iv : 0;
}

/* Create I/O CQ, then the SQ bound to it (section 5.3, 5.4). */
static int
pcie_qpair_connect(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int32_t iv = pcie_qpair_prepare(qpair);
	int rc;

	if (iv < -1) {
		return iv;
	}
	dbbuf_attach(pq); /* before the queues exist: the shadow values start at 0 */
	rc = nvme_ctrlr_cmd_create_io_cq(ctrlr, qpair->id, iv, qpair->num_entries, pq->cq_iova);
	if (rc != 0) {
		return rc;
	}
	rc = nvme_ctrlr_cmd_create_io_sq(ctrlr, qpair->id, qpair->num_entries, pq->sq_iova,
					 qpair->opts.qprio);
	if (rc != 0) {
		(void)nvme_ctrlr_cmd_delete_io_queue(ctrlr, NVME_OPC_DELETE_IO_CQ, qpair->id);
	}
	return rc;
}

/*
 * The same commands one at a time for the owner's non-blocking (re-)creation: create CQ,
 * create SQ; or delete SQ, delete CQ. The interrupt vector and shadow doorbells were set
 * up when the qpair was first connected or prepared (and again by ctrlr_reset_done).
 */
static int
pcie_qpair_conn_cmd(struct nvp_nvme_qpair *qpair, bool create, uint32_t step, struct nvme_cmd *cmd)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	int32_t iv = to_pcie_qpair(qpair)->has_irq ? (int32_t)to_pcie_qpair(qpair)->irq_vector : -1;

	if (step >= 2) {
		return -ENOENT;
	}
	if (create && step == 0) {
		dbbuf_attach(pq);
		nvme_ctrlr_cmd_build_create_io_cq(cmd, qpair->id, iv, qpair->num_entries,
						  pq->cq_iova);
	} else if (create) {
		nvme_ctrlr_cmd_build_create_io_sq(cmd, qpair->id, qpair->num_entries, pq->sq_iova,
						  qpair->opts.qprio);
	} else {
		memset(cmd, 0, sizeof(*cmd));
		cmd->opc = step == 0 ? NVME_OPC_DELETE_IO_SQ : NVME_OPC_DELETE_IO_CQ;
		cmd->cdw10 = qpair->id;
	}
	return 0;
}

/* After a reset: the shadow doorbells again, before any qpair re-creates its queues. */
static void
pcie_ctrlr_reset_done(struct nvp_nvme_ctrlr *ctrlr)
{
	dbbuf_configure(to_pcie_ctrlr(ctrlr));
}

/* Delete the SQ first: a CQ cannot be deleted while an SQ still posts to it. */
static int
pcie_qpair_disconnect(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int rc, rc2;

	rc = nvme_ctrlr_cmd_delete_io_queue(ctrlr, NVME_OPC_DELETE_IO_SQ, qpair->id);
	rc2 = nvme_ctrlr_cmd_delete_io_queue(ctrlr, NVME_OPC_DELETE_IO_CQ, qpair->id);
	return rc != 0 ? rc : rc2;
}

/* The ops table's entries for the hot path (generic code calls the inline ones). */
static int
pcie_qpair_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, struct nvme_request *req)
{
	return nvme_pcie_qpair_submit(qpair, tr, req);
}

static void
pcie_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	nvme_pcie_qpair_ring_doorbell(qpair);
}

/*
 * The CQ is stuck behind its head entry: that entry still carries the previous pass's
 * phase tag, yet one after it carries this pass's. A controller posts entries in order at
 * the CQ tail (section 4.6), so it wrote the head entry too (and any between), with a
 * wrong phase tag: the host will never consume it nor anything after it. The entries
 * between may be stale as well, so the look goes on past them, as far as the device can
 * have posted: one entry per command it may hold (a tracker holding an SQ slot, or in
 * recovery: a quarantined CID gave its slot back), the head entry being one of them, and
 * never a full CQ; the next entry at least. Called on slow paths only (a deadline passed,
 * or recovery under way); the look stops at the first entry with this pass's tag.
 */
static bool
pcie_qpair_cq_stalled(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	const struct nvme_tracker *tr;
	uint32_t idx = pq->cq_head, held = qpair->slots_used, left;
	uint8_t phase = pq->phase;

	if (pq->cq[idx].status.p == phase) {
		return false; /* the head entry is there to be consumed */
	}
	TAILQ_FOREACH (tr, &qpair->recovery, link) {
		held++;
	}
	left = NVP_MIN(NVP_MAX(held, 2u) - 1, qpair->num_entries - 1);
	while (left-- > 0) {
		if (++idx == qpair->num_entries) {
			idx = 0;
			phase ^= 1;
		}
		if (pq->cq[idx].status.p != phase) {
			continue; /* not written yet, or stale too */
		}
		/* The head entry is read again after this one: had the controller just written
		 * both, the head one (written first) is seen with its new tag (x86: loads are
		 * not reordered with loads, a compiler barrier; arm64: dmb oshld). */
		nvp_dma_rmb();
		return pq->cq[pq->cq_head].status.p != pq->phase;
	}
	return false;
}

static void
pcie_qpair_release_tracker(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	nvme_pcie_prp_release(pq, &pq->ptrackers[nvme_tracker_idx(qpair, tr)]);
}

/* ---------------------------------------------------------------------------------------
 * Controllers
 * ------------------------------------------------------------------------------------- */

/* Program the admin queue (section 7.6.1: AQA, ASQ, ACQ before CC.EN = 1). */
static int
pcie_ctrlr_enable_admin_queue(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(ctrlr->adminq);
	union nvme_aqa_register aqa = { .raw = 0 };
	int rc;

	pcie_qpair_reset(&pq->qpair);
	/* A controller reset forgets the doorbell buffers: set them again. */
	to_pcie_ctrlr(ctrlr)->dbbuf_on = false;
	to_pcie_ctrlr(ctrlr)->dbbuf_failed = false;
	aqa.bits.asqs = pq->qpair.num_entries - 1;
	aqa.bits.acqs = pq->qpair.num_entries - 1;
	rc = pcie_set_reg_4(ctrlr, NVME_REG_AQA, aqa.raw);
	if (rc == 0) {
		rc = pcie_set_reg_8(ctrlr, NVME_REG_ASQ, pq->sq_iova);
	}
	if (rc == 0) {
		rc = pcie_set_reg_8(ctrlr, NVME_REG_ACQ, pq->cq_iova);
	}
	return rc;
}

static int
pcie_map_bar(struct nvme_pcie_ctrlr *pctrlr)
{
	struct nvp_pci_device *dev = pctrlr->dev;
	uint64_t phys = 0, size = 0;
	void *addr = NULL;
	int rc;

	rc = dev->ops->map_bar(dev, 0, &addr, &phys, &size);
	if (rc != 0 || addr == NULL) {
		NVP_ERRLOG("%s: cannot map BAR0 (%s); is the function bound to vfio-pci or "
			   "uio_pci_generic?",
			   pctrlr->addr_str, strerror(rc ? -rc : EIO));
		return rc != 0 ? rc : -EIO;
	}
	pctrlr->bar = addr;
	pctrlr->bar_size = size;
	/* Registers plus the admin queue's two doorbells at the smallest stride. */
	if (size < NVME_REG_DBS + 8) {
		NVP_ERRLOG("%s: BAR0 is %" PRIu64 " bytes, too small for the NVMe registers "
			   "and doorbells (at least 0x%x)",
			   pctrlr->addr_str, size, NVME_REG_DBS + 8);
		return -EIO;
	}
	return 0;
}

/* Memory space on, bus mastering on (the device DMAs), INTx off (we poll). */
static int
pcie_enable_bus_master(struct nvme_pcie_ctrlr *pctrlr)
{
	uint16_t cmd = 0;
	int rc;

	rc = nvp_pci_cfg_read16(pctrlr->dev, &cmd, NVP_PCI_CFG_COMMAND);
	if (rc == 0) {
		cmd |= NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER |
		       NVP_PCI_COMMAND_INTX_DISABLE;
		rc = nvp_pci_cfg_write16(pctrlr->dev, cmd, NVP_PCI_CFG_COMMAND);
	}
	pctrlr->bus_master = rc == 0;
	if (rc != 0) {
		NVP_ERRLOG("%s: cannot enable memory space and bus mastering in the PCI "
			   "command register (%s)",
			   pctrlr->addr_str, strerror(-rc));
	}
	return rc;
}

static int
pcie_read_cap(struct nvme_pcie_ctrlr *pctrlr)
{
	struct nvp_nvme_ctrlr *ctrlr = &pctrlr->ctrlr;
	union nvme_cap_register cap;
	union nvme_vs_register vs;
	int rc;

	rc = pcie_get_reg_8(ctrlr, NVME_REG_CAP, &cap.raw);
	if (rc == 0) {
		rc = pcie_get_reg_4(ctrlr, NVME_REG_VS, &vs.raw);
	}
	if (rc != 0) {
		return rc;
	}
	if (cap.raw == UINT64_MAX) {
		NVP_ERRLOG("%s: CAP reads all ones at attach: registers read all ones: device "
			   "removed or BAR not mapped",
			   pctrlr->addr_str);
		return -EIO;
	}
	pctrlr->doorbell_stride = 4u << cap.bits.dstrd;
	if (pctrlr->bar_size < NVME_REG_DBS + 2ull * pctrlr->doorbell_stride) {
		NVP_ERRLOG("%s: BAR0 (%" PRIu64 " bytes) ends before the admin doorbells "
			   "(CAP.DSTRD %u)",
			   pctrlr->addr_str, pctrlr->bar_size, cap.bits.dstrd);
		return -EIO;
	}
	return nvme_ctrlr_set_cap_vs(ctrlr, cap, vs);
}

/* Config space still answers with a vendor ID: the function is on the bus. */
static bool
pcie_is_present(struct nvp_nvme_ctrlr *ctrlr)
{
	uint16_t vendor = 0xffff;

	return nvp_pci_cfg_read16(to_pcie_ctrlr(ctrlr)->dev, &vendor, 0) == 0 && vendor != 0xffff;
}

/* The kernel wants the function back (vfio-pci unbind): asked by check_deadlines(). */
static bool
pcie_release_requested(struct nvp_nvme_ctrlr *ctrlr)
{
	return nvp_pci_device_release_requested(to_pcie_ctrlr(ctrlr)->dev);
}

/* No more DMA from the function into memory about to be freed. */
static void
pcie_disable_bus_master(struct nvme_pcie_ctrlr *pctrlr)
{
	uint16_t cmd = 0;

	if (nvp_pci_cfg_read16(pctrlr->dev, &cmd, NVP_PCI_CFG_COMMAND) == 0 &&
	    (cmd & NVP_PCI_COMMAND_MASTER) != 0) {
		cmd &= (uint16_t)~NVP_PCI_COMMAND_MASTER;
		(void)nvp_pci_cfg_write16(pctrlr->dev, cmd, NVP_PCI_CFG_COMMAND);
	}
}

static void
pcie_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_pcie_ctrlr *pctrlr = to_pcie_ctrlr(ctrlr);
	struct nvme_pcie_vdev vdev;

	if (pctrlr->bus_master) {
		pcie_disable_bus_master(pctrlr);
	}
	if (ctrlr->adminq != NULL) {
		pcie_qpair_destroy(ctrlr->adminq);
		ctrlr->adminq = NULL;
	}
	if (pctrlr->bar != NULL) {
		pctrlr->dev->ops->unmap_bar(pctrlr->dev, 0, (void *)pctrlr->bar);
		pctrlr->bar = NULL;
	}
	nvp_pci_device_release(pctrlr->dev);
	nvp_env_dma_free(pctrlr->dbbuf_db);
	nvp_env_dma_free(pctrlr->dbbuf_ei);
	vdev = pctrlr->vdev;
	nvme_ctrlr_destruct(ctrlr);
	free(pctrlr);
	nvme_pcie_device_put(&vdev);
}

/*
 * Attach to @dev: claim it, map BAR0, turn on bus mastering, read CAP and VS, allocate
 * the admin queue. The init state machine runs afterwards.
 */
static int
pcie_ctrlr_construct_dev(const struct nvp_nvme_transport_id *trid,
			 const struct nvp_nvme_ctrlr_opts *opts, struct nvp_pci_device *dev,
			 struct nvp_nvme_ctrlr **out)
{
	char addr[NVP_PCI_ADDR_STRLEN];
	struct nvme_pcie_ctrlr *pctrlr;
	int rc;

	rc = nvp_pci_device_claim(dev);
	if (rc != 0) {
		if (rc == -EBUSY) {
			nvp_pci_addr_fmt(addr, sizeof(addr), &dev->addr);
			NVP_ERRLOG("PCI function %s is already attached", addr);
		}
		return rc;
	}
	pctrlr = calloc(1, sizeof(*pctrlr));
	if (pctrlr == NULL) {
		nvp_pci_device_release(dev);
		return -ENOMEM;
	}
	pctrlr->dev = dev;
	nvp_pci_addr_fmt(pctrlr->addr_str, sizeof(pctrlr->addr_str), &dev->addr);
	rc = nvme_ctrlr_construct(&pctrlr->ctrlr, trid, opts, &g_nvme_pcie_transport);
	if (rc != 0) {
		nvp_pci_device_release(dev);
		free(pctrlr);
		return rc;
	}
	snprintf(pctrlr->ctrlr.name, sizeof(pctrlr->ctrlr.name), "%s%s%s", trid->name,
		 trid->name[0] != '\0' ? " at " : "", pctrlr->addr_str);
	rc = pcie_map_bar(pctrlr);
	if (rc == 0) {
		rc = pcie_enable_bus_master(pctrlr);
	}
	if (rc == 0) {
		rc = pcie_read_cap(pctrlr);
	}
	if (rc == 0) {
		rc = pcie_qpair_create(&pctrlr->ctrlr, 0, NULL, &pctrlr->ctrlr.adminq);
	}
	if (rc != 0) {
		pcie_ctrlr_destruct(&pctrlr->ctrlr);
		return rc;
	}
	*out = &pctrlr->ctrlr;
	return 0;
}

/* The transport's construct: the function @trid names (found or made), then attach. */
static int
pcie_ctrlr_construct(const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts, struct nvp_nvme_ctrlr **out)
{
	struct nvp_pci_device *dev;
	struct nvme_pcie_vdev vdev;
	int rc;

	rc = nvme_pcie_device_get(trid, &dev, &vdev);
	if (rc != 0) {
		return rc;
	}
	rc = pcie_ctrlr_construct_dev(trid, opts, dev, out);
	if (rc != 0) {
		nvme_pcie_device_put(&vdev);
		return rc;
	}
	to_pcie_ctrlr(*out)->vdev = vdev;
	return 0;
}

static const char *
pcie_all_ones_cause(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return "registers read all ones: device removed or BAR not mapped";
}

const struct nvme_transport_ops g_nvme_pcie_transport = {
	.name = "PCIe",
	.type = NVP_NVME_TRANSPORT_PCIE,
	.scan = nvme_pcie_scan,
	.trid_check = nvme_pcie_trid_check,
	.ctrlr_construct = pcie_ctrlr_construct,
	.ctrlr_destruct = pcie_ctrlr_destruct,
	.ctrlr_get_reg_4 = pcie_get_reg_4,
	.ctrlr_set_reg_4 = pcie_set_reg_4,
	.ctrlr_enable_admin_queue = pcie_ctrlr_enable_admin_queue,
	.ctrlr_reset_done = pcie_ctrlr_reset_done,
	.ctrlr_release_requested = pcie_release_requested,
	.ctrlr_is_present = pcie_is_present,
	.ctrlr_get_max_io_queues = pcie_get_max_io_queues,
	.ctrlr_all_ones_cause = pcie_all_ones_cause,
	.qpair_create = pcie_qpair_create,
	.qpair_destroy = pcie_qpair_destroy,
	.qpair_connect = pcie_qpair_connect,
	.qpair_connect_prepare = pcie_qpair_connect_prepare,
	.qpair_disconnect = pcie_qpair_disconnect,
	.qpair_reset = pcie_qpair_reset,
	.qpair_conn_cmd = pcie_qpair_conn_cmd,
	.qpair_cq_stalled = pcie_qpair_cq_stalled,
	.qpair_check_request = nvme_pcie_qpair_check_request,
	.qpair_submit = pcie_qpair_submit,
	.qpair_ring_doorbell = pcie_qpair_ring_doorbell,
	.qpair_process_completions = nvme_pcie_qpair_process_completions,
	.qpair_get_irq_fd = pcie_qpair_get_irq_fd,
	.qpair_irq_unmask = pcie_qpair_irq_unmask,
	.qpair_release_tracker = pcie_qpair_release_tracker,
};

/* The PCIe transport is always there: registered when the library loads. */
__attribute__((constructor)) static void
pcie_transport_register(void)
{
	(void)nvme_transport_register(&g_nvme_pcie_transport);
}
