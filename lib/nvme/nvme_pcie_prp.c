/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PRP lists (NVMe 1.4 section 4.3).
 *
 * A payload is described by PRP entries, one per memory page (CC.MPS) it touches:
 * PRP1 is the first, and may start at any dword offset in its page; every further entry
 * is page aligned. With two entries PRP2 is the second page; with more, PRP2 points to a
 * PRP list, a page of 8-byte entries. When a list needs more entries than a page holds,
 * the last entry of a full page points to the next list page (chaining).
 *
 * The payload is walked as a sequence of IOVA-contiguous segments: each element of a
 * scattered payload (reset_sgl/next_sge), split wherever nvp_env_vtophys() says the IOVA
 * stops being contiguous. The PRP rule applies to those segments: every segment except
 * the first starts on a page boundary, and every segment except the last ends on one.
 */
#include <errno.h>

#include "nvme_pcie_internal.h"

struct prp_builder {
	uint64_t page_mask; /* page size - 1 */
	uint64_t page_size;
	uint64_t prp1;
	uint32_t num_entries; /* entries emitted, PRP1 included */
	uint32_t slots_per_page;
	uint32_t slot;                   /* next free slot of the current list page */
	uint64_t *list;                  /* current list page; NULL when only checking */
	struct nvme_prp_page *next_page; /* chained pages not used yet */
	bool prev_ends_aligned;
};

static void
builder_init(struct prp_builder *b, uint32_t page_size, uint64_t *list, struct nvme_prp_page *extra)
{
	b->page_size = page_size;
	b->page_mask = (uint64_t)page_size - 1;
	b->prp1 = 0;
	b->num_entries = 0;
	b->slots_per_page = page_size / sizeof(uint64_t);
	b->slot = 0;
	b->list = list;
	b->next_page = extra;
	b->prev_ends_aligned = true;
}

/*
 * Move to the next chained page: the value in the last slot of the full page moves to the
 * first slot of the new page and its place takes the new page's address (section 4.3:
 * "the last entry of the page ... is a PRP List pointer to the next PRP List page").
 */
static int
chain_next_page(struct prp_builder *b)
{
	struct nvme_prp_page *pg = b->next_page;
	uint32_t last = b->slots_per_page - 1;

	if (nvp_unlikely(pg == NULL)) {
		/* Reservation is an upper bound computed from the size; cannot happen. */
		NVP_ERRLOG("PRP list: out of reserved list pages (internal error)");
		return -ENOSPC;
	}
	b->next_page = pg->next;
	pg->va[0] = b->list[last];
	b->list[last] = pg->iova;
	b->list = pg->va;
	b->slot = 1;
	return 0;
}

static int
add_entry(struct prp_builder *b, uint64_t iova)
{
	int rc;

	if (b->num_entries == 0) {
		b->prp1 = iova;
		b->num_entries = 1;
		return 0;
	}
	if (b->list != NULL) {
		if (b->slot == b->slots_per_page) {
			rc = chain_next_page(b);
			if (rc != 0) {
				return rc;
			}
		}
		b->list[b->slot++] = iova;
	}
	b->num_entries++;
	return 0;
}

/* One IOVA-contiguous segment of the payload. */
static int
add_segment(struct prp_builder *b, uint64_t iova, uint64_t len)
{
	uint64_t end = iova + len;
	uint64_t page;
	int rc;

	if (b->num_entries == 0) {
		/* PRP1 may carry an offset, but only a dword aligned one (section 4.3). */
		if (nvp_unlikely(iova & 3u)) {
			return -EINVAL;
		}
	} else if (nvp_unlikely(!b->prev_ends_aligned || (iova & b->page_mask) != 0)) {
		return -EINVAL;
	}
	rc = add_entry(b, iova);
	for (page = (iova & ~b->page_mask) + b->page_size; rc == 0 && page < end;
	     page += b->page_size) {
		rc = add_entry(b, page);
	}
	b->prev_ends_aligned = (end & b->page_mask) == 0;
	return rc;
}

/* A virtually contiguous range: translate, splitting where the IOVA is not contiguous. */
static int
add_va_range(struct prp_builder *b, const uint8_t *va, uint64_t len)
{
	while (len > 0) {
		uint64_t seg = len;
		uint64_t iova = nvp_env_vtophys(va, &seg);
		int rc;

		if (nvp_unlikely(iova == NVP_ENV_BAD_IOVA || seg == 0)) {
			return -EFAULT;
		}
		rc = add_segment(b, iova, seg);
		if (nvp_unlikely(rc != 0)) {
			return rc;
		}
		va += seg;
		len -= seg;
	}
	return 0;
}

static int
walk_sgl(struct prp_builder *b, const struct nvme_payload *payload)
{
	uint32_t remaining = payload->size;

	payload->reset_sgl_fn(payload->sgl_arg, 0);
	while (remaining > 0) {
		void *addr = NULL;
		uint32_t len = 0;
		int rc = payload->next_sge_fn(payload->sgl_arg, &addr, &len);

		if (nvp_unlikely(rc != 0)) {
			return rc < 0 ? rc : -EINVAL;
		}
		if (nvp_unlikely(len == 0 || addr == NULL)) {
			return -EINVAL;
		}
		len = NVP_MIN(len, remaining);
		rc = add_va_range(b, addr, len);
		if (nvp_unlikely(rc != 0)) {
			return rc;
		}
		remaining -= len;
	}
	return 0;
}

static int
walk_payload(struct prp_builder *b, const struct nvme_payload *payload)
{
	switch (payload->type) {
	case NVME_PAYLOAD_CONTIG:
		return add_va_range(b, payload->buf, payload->size);
	case NVME_PAYLOAD_SGL:
		return walk_sgl(b, payload);
	default:
		return 0;
	}
}

/*
 * Fill the command's PRP1/PRP2 and the tracker's list pages (its own page, then the
 * chained pages reserved in tr->extra). \return 0, -EINVAL (alignment or PRP rule),
 * -EFAULT (not DMA memory), or the next_sge callback's error.
 */
int
nvme_pcie_prp_build(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr,
		    struct nvme_request *req)
{
	struct prp_builder b;
	int rc;

	req->cmd.psdt = NVME_PSDT_PRP;
	if (req->payload.type == NVME_PAYLOAD_NONE) {
		return 0; /* the data pointer stays as built (queue creation: the ring) */
	}
	builder_init(&b, pq->page_size, ptr->prp_list, ptr->extra);
	rc = walk_payload(&b, &req->payload);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	req->cmd.dptr.prp.prp1 = b.prp1;
	if (b.num_entries <= 1) {
		req->cmd.dptr.prp.prp2 = 0;
	} else if (b.num_entries == 2) {
		req->cmd.dptr.prp.prp2 = ptr->prp_list[0]; /* the second page itself */
	} else {
		req->cmd.dptr.prp.prp2 = ptr->prp_list_iova; /* a PRP list */
	}
	return 0;
}

/* Walk the payload as nvme_pcie_prp_build() would, writing nothing. */
int
nvme_pcie_prp_check(struct nvme_pcie_qpair *pq, const struct nvme_request *req)
{
	struct prp_builder b;

	builder_init(&b, pq->page_size, NULL, NULL);
	return walk_payload(&b, &req->payload);
}

/*
 * Chained list pages (beyond the tracker's own) a payload of @payload_size bytes may
 * need: an upper bound, since a payload of N pages' worth of bytes has at most N + 1
 * entries, N of them in the list. A full page holds slots - 1 entries plus the chain
 * pointer; the last page holds all its slots.
 */
uint32_t
nvme_pcie_prp_extra_pages(uint32_t page_size, uint32_t payload_size)
{
	uint32_t slots = page_size / sizeof(uint64_t);
	uint32_t list_entries = (uint32_t)(((uint64_t)payload_size + page_size - 1) / page_size);

	if (list_entries <= slots) {
		return 0;
	}
	return (list_entries - slots + (slots - 2)) / (slots - 1);
}

/* Take @n chained list pages for @ptr. \return 0, or -EAGAIN if the pool is short. */
int
nvme_pcie_prp_reserve(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr, uint32_t n)
{
	uint32_t i;

	if (pq->prp_pool_free < n) {
		return -EAGAIN;
	}
	for (i = 0; i < n; i++) {
		struct nvme_prp_page *pg = pq->prp_pool;

		pq->prp_pool = pg->next;
		pg->next = ptr->extra;
		ptr->extra = pg;
	}
	pq->prp_pool_free -= n;
	return 0;
}

/* Give @ptr's chained list pages back to the pool. */
void
nvme_pcie_prp_release(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr)
{
	while (ptr->extra != NULL) {
		struct nvme_prp_page *pg = ptr->extra;

		ptr->extra = pg->next;
		pg->next = pq->prp_pool;
		pq->prp_pool = pg;
		pq->prp_pool_free++;
	}
}
