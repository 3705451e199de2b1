/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PRP walking (NVMe 1.4, section 4.3) and the IOMMU check of every address.
 *
 * A transfer of @len bytes is described by PRP1 and PRP2:
 *  - PRP1 points at the first byte and may carry an offset into its memory page; the
 *    offset must be dword aligned (bits 1:0 clear).
 *  - If the transfer ends inside PRP1's page, PRP2 is not used.
 *  - If it crosses exactly one page boundary, PRP2 points at the second page and must
 *    have a zero offset.
 *  - Otherwise PRP2 points at a PRP list: 8-byte entries, each a page with zero offset.
 *    The list pointer may carry a qword aligned offset; the list then runs to the end of
 *    that page. When more entries are needed than fit in a list page, the last entry of
 *    the page points at the next list page (page aligned) instead of at data.
 *
 * Every range is translated with nvp_env_iova_to_vaddr(), the device's IOMMU: a range
 * that is not DMA memory fails the command with DATA_TRANSFER_ERROR. Entries that are
 * contiguous in IOVA space are merged into one range and translated once (the fast path
 * for large buffers); if the merged range is not contiguous in virtual memory, it is
 * translated again page by page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* IOVA run being accumulated before translation. */
struct prp_run {
	uint64_t iova;
	uint64_t len;
};

int
emu_sgl_init(struct emu_sgl *sgl, uint32_t max_segs)
{
	sgl->segs = calloc(max_segs, sizeof(*sgl->segs));
	if (sgl->segs == NULL) {
		return -ENOMEM;
	}
	sgl->max_segs = max_segs;
	sgl->nsegs = 0;
	sgl->len = 0;
	return 0;
}

void
emu_sgl_fini(struct emu_sgl *sgl)
{
	free(sgl->segs);
	sgl->segs = NULL;
	sgl->max_segs = 0;
}

static uint16_t
sgl_append(struct emu_sgl *sgl, uint8_t *addr, uint64_t len)
{
	struct emu_seg *last;

	if (sgl->nsegs > 0) {
		last = &sgl->segs[sgl->nsegs - 1];
		if (last->addr + last->len == addr) {
			last->len += len;
			sgl->len += len;
			return EMU_ST_OK;
		}
	}
	if (nvp_unlikely(sgl->nsegs == sgl->max_segs)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	sgl->segs[sgl->nsegs].addr = addr;
	sgl->segs[sgl->nsegs].len = len;
	sgl->nsegs++;
	sgl->len += len;
	return EMU_ST_OK;
}

/* Translate a run page by page: the run was contiguous in IOVA but not in VA. */
static uint16_t
run_flush_slow(struct emu_sgl *sgl, const struct prp_run *run, uint32_t page_size)
{
	uint64_t iova = run->iova;
	uint64_t left = run->len;
	uint16_t st;

	while (left > 0) {
		uint64_t chunk = NVP_MIN(left, page_size - (iova & (page_size - 1)));
		void *va = nvp_env_iova_to_vaddr(iova, chunk);

		if (va == NULL) {
			return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
		}
		st = sgl_append(sgl, va, chunk);
		if (st != EMU_ST_OK) {
			return st;
		}
		iova += chunk;
		left -= chunk;
	}
	return EMU_ST_OK;
}

static uint16_t
run_flush(struct emu_sgl *sgl, struct prp_run *run, uint32_t page_size)
{
	void *va;

	if (run->len == 0) {
		return EMU_ST_OK;
	}
	va = nvp_env_iova_to_vaddr(run->iova, run->len);
	if (nvp_likely(va != NULL)) {
		uint16_t st = sgl_append(sgl, va, run->len);

		run->len = 0;
		return st;
	}
	if (run->len <= page_size - (run->iova & (page_size - 1))) {
		return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
	}
	return run_flush_slow(sgl, run, page_size);
}

/* Add [iova, iova + len) to the run, flushing it first when not contiguous. */
static uint16_t
run_add(struct emu_sgl *sgl, struct prp_run *run, uint64_t iova, uint64_t len, uint32_t page_size)
{
	if (run->len != 0 && run->iova + run->len == iova) {
		run->len += len;
		return EMU_ST_OK;
	}
	if (run->len != 0) {
		uint16_t st = run_flush(sgl, run, page_size);

		if (st != EMU_ST_OK) {
			return st;
		}
	}
	run->iova = iova;
	run->len = len;
	return EMU_ST_OK;
}

/*
 * Walk the PRP list starting at @list for @left bytes of data pages.
 */
static uint16_t
prp_walk_list(struct emu_sgl *sgl, struct prp_run *run, uint64_t list, uint64_t left,
	      uint32_t page_size)
{
	uint64_t pages = (left + page_size - 1) / page_size;
	uint16_t st;

	if (list & 0x7u) {
		return EMU_GEN(NVME_SC_INVALID_PRP_OFFSET);
	}
	while (pages > 0) {
		uint32_t slots = (page_size - (uint32_t)(list & (page_size - 1))) / 8u;
		bool chain = pages > slots;
		uint32_t n = chain ? slots : (uint32_t)pages;
		uint32_t ndata = chain ? slots - 1 : n;
		const uint64_t *ent = nvp_env_iova_to_vaddr(list, (uint64_t)n * 8u);

		if (ent == NULL) {
			return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
		}
		for (uint32_t i = 0; i < ndata; i++) {
			uint64_t e = ent[i];
			uint64_t chunk = NVP_MIN(left, (uint64_t)page_size);

			if (e & (page_size - 1)) {
				return EMU_GEN(NVME_SC_INVALID_PRP_OFFSET);
			}
			st = run_add(sgl, run, e, chunk, page_size);
			if (st != EMU_ST_OK) {
				return st;
			}
			left -= chunk;
		}
		pages -= ndata;
		if (chain) {
			list = ent[slots - 1];
			if (list & (page_size - 1)) {
				return EMU_GEN(NVME_SC_INVALID_PRP_OFFSET);
			}
		}
	}
	return EMU_ST_OK;
}

/*
 * Translate the host memory of a @len byte transfer into @sgl.
 * \return EMU_ST_OK, INVALID_PRP_OFFSET, DATA_TRANSFER_ERROR (not DMA memory) or
 * INVALID_FIELD (more segments than the command may have).
 */
uint16_t
emu_prp_map(struct emu_sgl *sgl, uint64_t prp1, uint64_t prp2, uint64_t len, uint32_t page_size)
{
	struct prp_run run = { 0, 0 };
	uint64_t first, left;
	uint16_t st;

	sgl->nsegs = 0;
	sgl->len = 0;
	if (len == 0) {
		return EMU_ST_OK;
	}
	if (prp1 & 0x3u) {
		return EMU_GEN(NVME_SC_INVALID_PRP_OFFSET);
	}
	first = NVP_MIN(len, page_size - (prp1 & (page_size - 1)));
	run.iova = prp1;
	run.len = first;
	left = len - first;
	if (left == 0) {
		st = EMU_ST_OK;
	} else if (left <= page_size) {
		if (prp2 & (page_size - 1)) {
			return EMU_GEN(NVME_SC_INVALID_PRP_OFFSET);
		}
		st = run_add(sgl, &run, prp2, left, page_size);
	} else {
		st = prp_walk_list(sgl, &run, prp2, left, page_size);
	}
	if (st != EMU_ST_OK) {
		return st;
	}
	return run_flush(sgl, &run, page_size);
}

/* Copy @len bytes from @src into the host memory of @sgl. */
void
emu_sgl_to_host(const struct emu_sgl *sgl, const void *src, uint64_t len)
{
	const uint8_t *p = src;

	for (uint32_t i = 0; i < sgl->nsegs && len > 0; i++) {
		uint64_t n = NVP_MIN(len, sgl->segs[i].len);

		memcpy(sgl->segs[i].addr, p, n);
		p += n;
		len -= n;
	}
}

/* Copy @len bytes of the host memory of @sgl into @dst. */
void
emu_sgl_from_host(const struct emu_sgl *sgl, void *dst, uint64_t len)
{
	uint8_t *p = dst;

	for (uint32_t i = 0; i < sgl->nsegs && len > 0; i++) {
		uint64_t n = NVP_MIN(len, sgl->segs[i].len);

		memcpy(p, sgl->segs[i].addr, n);
		p += n;
		len -= n;
	}
}
