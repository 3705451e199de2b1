/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCIe transport's own state, kept out of the generic structs: BAR0 and doorbells,
 * the SQ/CQ rings, PRP list pages per tracker and the pool of chained list pages. Shared
 * by nvme_pcie_ctrlr.c, nvme_pcie.c, nvme_pcie_prp.c and the dispatch header nvme_transport.h, which calls
 * the PCIe hot path (submit, doorbell, completions) directly instead of through the ops
 * table: no indirect call per I/O, and the compiler can inline the submission.
 */
#ifndef NVP_NVME_PCIE_INTERNAL_H
#define NVP_NVME_PCIE_INTERNAL_H

#include "nvme_cpl.h"

/* The PCIe transport's ops (nvme_pcie_ctrlr.c); nvme_transport.h tells its qpairs by it. */
extern const struct nvme_transport_ops g_nvme_pcie_transport;

/* A virtual device made for a controller's trid (nvme_pcie_probe.c), destroyed with it. */
struct nvme_pcie_vdev {
	const struct nvp_env_vdev_provider *provider; /* NULL: a function found, not made */
	struct nvp_pci_addr addr;
};

struct nvme_pcie_ctrlr {
	struct nvp_nvme_ctrlr ctrlr; /* first: the generic code only sees this */
	volatile uint8_t *bar;       /* BAR0 mapping */
	uint64_t bar_size;
	uint32_t doorbell_stride; /* bytes: 4 << CAP.DSTRD */
	struct nvp_pci_device *dev;
	bool bus_master; /* we turned it on: turn it off at detach */
	char addr_str[NVP_PCI_ADDR_STRLEN];
	/*
	 * Shadow doorbells (Doorbell Buffer Config, NVMe 1.3 section 5.7), when OACS bit 8
	 * says the controller has them: a page the host writes its doorbell values into
	 * (same layout as the doorbell registers) and a page of EventIdx values the
	 * controller writes. Configured at the first I/O qpair after each enable.
	 */
	uint32_t *dbbuf_db;
	uint32_t *dbbuf_ei;
	bool dbbuf_on;     /* configured since the last enable */
	bool dbbuf_failed; /* the controller refused: MMIO only */
	struct nvme_pcie_vdev vdev;
};

/* A chained PRP list page from a qpair's pool. */
struct nvme_prp_page {
	uint64_t *va;
	uint64_t iova;
	struct nvme_prp_page *next;
};

/* What PCIe keeps per tracker (same index as the generic tracker: the CID). */
struct nvme_pcie_tracker {
	uint64_t *prp_list; /* this tracker's PRP list page */
	uint64_t prp_list_iova;
	struct nvme_prp_page *extra; /* chained list pages taken from the pool */
};

struct nvme_pcie_qpair {
	struct nvp_nvme_qpair qpair; /* first: the generic code only sees this */

	/* Hot: ring state. */
	struct nvme_cmd *sq;
	volatile struct nvme_cpl *cq;
	volatile uint32_t *sq_tdbl; /* SQ tail doorbell */
	volatile uint32_t *cq_hdbl; /* CQ head doorbell */
	uint32_t sq_tail;
	uint32_t cq_head;
	uint32_t page_size;     /* the controller's CC.MPS page: PRP granularity */
	uint32_t max_unchained; /* payloads up to this size never need chained list pages */
	uint8_t phase;          /* the phase tag a new completion carries */
	bool sq_mmio_owed;      /* a shadow-only ring found the controller idle: MMIO next ring */
	uint16_t idle_polls;    /* polls that found nothing, modulo 65536 (shadow doorbells) */
	uint64_t *const *iova_map;    /* env's IOVA map: translations inline */
	volatile uint32_t *sq_shadow; /* shadow doorbells, NULL = MMIO only */
	volatile uint32_t *sq_ei;
	volatile uint32_t *cq_shadow;
	volatile uint32_t *cq_ei;
	struct nvme_pcie_tracker *ptrackers; /* indexed by CID */
	struct nvme_prp_page *prp_pool;      /* free chained PRP list pages */
	uint32_t prp_pool_free;

	/* Cold. */
	uint64_t idle_seen;  /* sq_tail, cq_head and phase at the last idle look */
	uint64_t idle_since; /* ticks: when idle_seen last changed (or the last rekick) */
	uint32_t prp_pool_total;
	uint64_t sq_iova;
	uint64_t cq_iova;
	bool has_irq; /* CQ created with interrupts: irq_fd is its vector's eventfd */
	int irq_fd;
	uint32_t irq_vector;
	void *prp_pages;                  /* one list page per tracker */
	struct nvme_prp_page *pool_descs; /* chained list pages */
	void *pool_mem;
};

static inline struct nvme_pcie_ctrlr *
to_pcie_ctrlr(struct nvp_nvme_ctrlr *ctrlr)
{
	return (struct nvme_pcie_ctrlr *)ctrlr;
}

static inline struct nvme_pcie_qpair *
to_pcie_qpair(struct nvp_nvme_qpair *qpair)
{
	return (struct nvme_pcie_qpair *)qpair;
}

/* nvme_pcie_probe.c */
/*
 * The function @trid names, made by a virtual device provider if trtype names one (then
 * @vdev says which, for nvme_pcie_device_put()). \return 0, -EINVAL (no PCI address),
 * -ENODEV (no such NVMe function), -EBUSY (the device exists), or the provider's -errno.
 */
int nvme_pcie_device_get(const struct nvp_nvme_transport_id *trid, struct nvp_pci_device **dev,
			 struct nvme_pcie_vdev *vdev);
/* Destroy the device nvme_pcie_device_get() made, if it made one. */
void nvme_pcie_device_put(struct nvme_pcie_vdev *vdev);
int nvme_pcie_scan(void *ctx, nvme_transport_found_cb found);
int nvme_pcie_trid_check(const struct nvp_nvme_transport_id *trid);

/* nvme_pcie_prp.c */
int nvme_pcie_prp_build(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr,
			struct nvme_request *req);
int nvme_pcie_prp_check(struct nvme_pcie_qpair *pq, const struct nvme_request *req);
uint32_t nvme_pcie_prp_extra_pages(uint32_t page_size, uint32_t payload_size);
int nvme_pcie_prp_reserve(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr, uint32_t n);
void nvme_pcie_prp_release(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr);

/* nvme_pcie.c: the parts of the I/O path that are not inline (PRP lists, checks) */
int nvme_pcie_qpair_build_list(struct nvme_pcie_qpair *pq, struct nvme_tracker *tr,
			       struct nvme_request *req);
int nvme_pcie_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req);
void nvme_pcie_qpair_idle_look(struct nvp_nvme_qpair *qpair);
/* Empty polls between two looks for a missed shadow doorbell update (a power of two),
 * and how long a qpair with commands in the device may see nothing before its MMIO
 * doorbells are written again (nvme_pcie.c). */
#define NVME_PCIE_IDLE_LOOK_POLLS 4096u
#define NVME_PCIE_IDLE_REKICK_MS 1u

/*
 * The common payload: one contiguous buffer within two pages. PRP1 is its address, PRP2
 * the second page if it reaches one (section 4.3): a lookup per page, no list, no walk.
 * \return 0 (PRPs written into the command), 1 if the payload is not of this kind,
 * -EINVAL (not dword aligned) or -EFAULT (not DMA memory).
 */
static inline __attribute__((always_inline)) int
nvme_pcie_prp_fast(const struct nvme_pcie_qpair *pq, struct nvme_request *req)
{
	uintptr_t va = (uintptr_t)req->payload.buf;
	uint32_t ps = pq->page_size;
	uint64_t end = (va & (ps - 1)) + req->payload.size;
	uint64_t prp1, prp2 = 0;

	if (nvp_unlikely(req->payload.type != NVME_PAYLOAD_CONTIG || end > 2ull * ps)) {
		return 1;
	}
	prp1 = nvp_env_iova_map_translate(pq->iova_map, req->payload.buf);
	if (nvp_unlikely(prp1 == NVP_ENV_BAD_IOVA || (va & 3u) != 0)) {
		return prp1 == NVP_ENV_BAD_IOVA ? -EFAULT : -EINVAL;
	}
	if (end > ps) {
		prp2 = nvp_env_iova_map_translate(pq->iova_map,
						  (const void *)((va & ~(uintptr_t)(ps - 1)) + ps));
		if (nvp_unlikely(prp2 == NVP_ENV_BAD_IOVA)) {
			return -EFAULT;
		}
	}
	req->cmd.psdt = NVME_PSDT_PRP;
	req->cmd.dptr.prp.prp1 = prp1;
	req->cmd.dptr.prp.prp2 = prp2;
	return 0;
}

/*
 * Write @req into the SQ slot at the tail, in slot @tr (CID). The doorbell is left to the
 * caller so that a batch of submissions costs one MMIO write. \return 0, -EAGAIN when
 * chained PRP list pages are short, or -errno for a bad payload.
 */
static inline __attribute__((always_inline)) int
nvme_pcie_qpair_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
		       struct nvme_request *req)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	int rc;

	if (!req->dptr_built) {
		rc = nvme_pcie_prp_fast(pq, req);
		if (nvp_unlikely(rc != 0)) {
			rc = rc < 0 ? rc : nvme_pcie_qpair_build_list(pq, tr, req);
			if (rc != 0) {
				return rc;
			}
		}
	}
	req->cmd.cid = tr->cid;
	pq->sq[pq->sq_tail] = req->cmd;
	if (nvp_unlikely(++pq->sq_tail == qpair->num_entries)) {
		pq->sq_tail = 0;
	}
	return 0;
}

/*
 * The EventIdx rule (NVMe 1.3 section 5.7, as virtio's): the controller asks to be told
 * once the value moves past @event_idx; ring the MMIO doorbell only if the move from
 * @old to @new_val crossed it. All in 16-bit arithmetic (queue indices wrap).
 */
static inline bool
nvme_pcie_dbbuf_need_event(uint16_t event_idx, uint16_t new_val, uint16_t old)
{
	return (uint16_t)(new_val - event_idx - 1) < (uint16_t)(new_val - old);
}

/*
 * Write a doorbell value to the shadow doorbell and decide whether the MMIO doorbell is
 * needed too. \return true to write MMIO.
 */
static inline bool
nvme_pcie_dbbuf_update(volatile uint32_t *shadow, volatile uint32_t *ei, uint32_t value)
{
	uint32_t old = *shadow;

	*shadow = value;
	/* The shadow value must be visible to the controller before EventIdx is read: a
	 * store followed by a load of another location, the one reordering x86 does
	 * (mfence; arm64 dsb sy). The controller orders its side the other way round. */
	nvp_mb();
	return nvme_pcie_dbbuf_need_event((uint16_t)*ei, (uint16_t)value, (uint16_t)old);
}

/* Tell the device about the entries written since the last doorbell. */
static inline void
nvme_pcie_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	/* The entries must be visible to the device before it sees the new tail and
	 * fetches them (section 4.1: the host writes the entry, then the doorbell). The SQ
	 * is write-back DMA memory: a compiler barrier on x86, dmb oshst on arm64. */
	nvp_dma_wmb();
	if (pq->sq_shadow != NULL &&
	    !nvme_pcie_dbbuf_update(pq->sq_shadow, pq->sq_ei, pq->sq_tail) &&
	    nvp_likely(!pq->sq_mmio_owed)) {
		qpair->stats.sq_shadow_updates++;
		return;
	}
	pq->sq_mmio_owed = false;
	nvp_mmio_write4(pq->sq_tdbl, pq->sq_tail);
	qpair->stats.sq_doorbell_writes++;
}

/*
 * The SQ doorbell only where it costs no MMIO write (the caller checked sq_shadow): the
 * new tail goes to the shadow doorbell, which a controller still reading the SQ picks up
 * by itself. If EventIdx says it has stopped reading, the MMIO write is left owed: the
 * next nvme_pcie_qpair_ring_doorbell() writes it whatever EventIdx says then.
 * \return true if the controller was told.
 */
static inline bool
nvme_pcie_qpair_ring_shadow(struct nvp_nvme_qpair *qpair)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);

	/* The entries before the tail that announces them, as in the full ring. */
	nvp_dma_wmb();
	if (nvme_pcie_dbbuf_update(pq->sq_shadow, pq->sq_ei, pq->sq_tail) || pq->sq_mmio_owed) {
		pq->sq_mmio_owed = true;
		return false;
	}
	qpair->stats.sq_shadow_updates++;
	return true;
}

/*
 * Consume completions whose phase tag matches the current pass, inline in the generic
 * poll (nvme_transport.h) as the submission is: what PCIe does for a read or write of up
 * to two pages is all in this header; nvme_pcie.c holds the slow paths and nvme_pcie_ctrlr.c set-up. The
 * ring state lives in @pq and is updated before each callback, so a callback that processes completions of
 * the same queue again (an admin callback issuing an admin command) stays consistent.
 */
static inline int32_t
nvme_pcie_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(qpair);
	uint32_t n = 0;

	if (max == 0 || max > qpair->num_trackers) {
		max = qpair->num_trackers;
	}
	while (n < max) {
		volatile struct nvme_cpl *entry = &pq->cq[pq->cq_head];
		struct nvme_cpl cpl;

		if (entry->status.p != pq->phase) {
			break;
		}
		/* Read the rest of the entry only after its phase tag: the loads must not be
		 * satisfied before the tag was seen (x86: a compiler barrier, loads are not
		 * reordered with loads; arm64: dmb oshld). */
		nvp_dma_rmb();
		cpl = *(const struct nvme_cpl *)entry;
		if (nvp_unlikely(++pq->cq_head == qpair->num_entries)) {
			pq->cq_head = 0;
			pq->phase ^= 1;
		}
		/* The next entry is where the next look goes: start fetching its line while
		 * this one's callback runs. */
		nvp_prefetch((const void *)&pq->cq[pq->cq_head]);
		n++;
		nvme_qpair_complete_cpl(qpair, &cpl);
	}
	if (n == 0) {
		/* Only with shadow doorbells: a look every NVME_PCIE_IDLE_LOOK_POLLS empty polls. */
		if (pq->cq_shadow != NULL &&
		    nvp_unlikely((++pq->idle_polls & (NVME_PCIE_IDLE_LOOK_POLLS - 1)) == 0)) {
			nvme_pcie_qpair_idle_look(qpair);
		}
		return 0;
	}
	/* One head doorbell for the batch. It gives the slots back to the device, so every
	 * read of the entries must be done first (x86: a compiler barrier, stores are not
	 * reordered with older loads; arm64: dmb osh). */
	if (nvp_likely(!nvme_qpair_reset_pending(qpair))) {
		nvp_dma_rwmb();
		if (pq->cq_shadow == NULL ||
		    nvme_pcie_dbbuf_update(pq->cq_shadow, pq->cq_ei, pq->cq_head)) {
			nvp_mmio_write4(pq->cq_hdbl, pq->cq_head);
			qpair->stats.cq_doorbell_writes++;
		} else {
			qpair->stats.cq_shadow_updates++;
		}
	}
	return (int32_t)n;
}

#endif /* NVP_NVME_PCIE_INTERNAL_H */
