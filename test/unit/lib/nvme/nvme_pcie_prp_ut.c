/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of PRP list building (nvme_pcie_prp.c) against real DMA memory from
 * env_posix (IOVA = virtual address): every boundary of PRP1/PRP2/list, chained list
 * pages, scattered payloads and the PRP rule, alignment and non-DMA memory.
 */
#include "nvme/nvme_pcie_prp.c"

#include "ut_nvme.h"

#define PS 4096u

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvme_pcie_qpair g_qpair;
static struct nvme_pcie_tracker g_tr;
static struct nvme_prp_page g_pool[4];
static uint8_t *g_buf; /* 520 pages of DMA memory, page aligned */
static uint8_t *g_pool_mem;
#define BUF_PAGES 520u

static uint64_t
iova(const void *p)
{
	return nvp_env_vtophys(p, NULL);
}

static int
suite_init(void)
{
	uint32_t i;

	if (ut_env_init() != 0) {
		return -1;
	}
	g_ctrlr.page_size = PS;
	g_qpair.page_size = PS;
	g_qpair.qpair.ctrlr = &g_ctrlr;
	g_buf = nvp_env_dma_zmalloc((size_t)BUF_PAGES * PS, PS, NULL);
	g_tr.prp_list = nvp_env_dma_zmalloc(PS, PS, NULL);
	g_pool_mem = nvp_env_dma_zmalloc(NVP_COUNTOF(g_pool) * PS, PS, NULL);
	if (g_buf == NULL || g_tr.prp_list == NULL || g_pool_mem == NULL) {
		return -1;
	}
	g_tr.prp_list_iova = iova(g_tr.prp_list);
	for (i = 0; i < NVP_COUNTOF(g_pool); i++) {
		g_pool[i].va = (uint64_t *)(g_pool_mem + (size_t)i * PS);
		g_pool[i].iova = iova(g_pool[i].va);
		g_pool[i].next = g_qpair.prp_pool;
		g_qpair.prp_pool = &g_pool[i];
	}
	g_qpair.prp_pool_free = g_qpair.prp_pool_total = NVP_COUNTOF(g_pool);
	return 0;
}

static int
suite_fini(void)
{
	nvp_env_dma_free(g_buf);
	nvp_env_dma_free(g_tr.prp_list);
	nvp_env_dma_free(g_pool_mem);
	nvp_env_fini();
	return 0;
}

/* Build PRPs for a contiguous payload at g_buf + @offset of @len bytes. */
static int
build_contig(struct nvme_request *req, uint32_t offset, uint32_t len)
{
	memset(req, 0, sizeof(*req));
	memset(g_tr.prp_list, 0xa5, PS);
	nvme_request_set_contig(req, g_buf + offset, len);
	return nvme_pcie_prp_build(&g_qpair, &g_tr, req);
}

static void
test_contig_offset0(void)
{
	struct nvme_request req;
	uint64_t b = iova(g_buf);

	/* One page: PRP1 only. */
	CU_ASSERT_EQUAL(build_contig(&req, 0, PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, 0);
	CU_ASSERT_EQUAL(req.cmd.psdt, NVME_PSDT_PRP);
	/* Part of a page. */
	CU_ASSERT_EQUAL(build_contig(&req, 0, 512), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, 0);
	/* Two pages: PRP2 is the second page itself. */
	CU_ASSERT_EQUAL(build_contig(&req, 0, 2 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, b + PS);
	/* Three pages: PRP2 points to a list of the second and third. */
	CU_ASSERT_EQUAL(build_contig(&req, 0, 3 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	CU_ASSERT_EQUAL(g_tr.prp_list[0], b + PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[1], b + 2 * PS);
}

static void
test_contig_offset512(void)
{
	struct nvme_request req;
	uint64_t b = iova(g_buf);

	CU_ASSERT_EQUAL(build_contig(&req, 512, 512), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 512);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, 0);
	/* 3584 bytes end exactly at the page boundary: still one entry. */
	CU_ASSERT_EQUAL(build_contig(&req, 512, PS - 512), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, 0);
	/* One page's worth from offset 512 touches two pages. */
	CU_ASSERT_EQUAL(build_contig(&req, 512, PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 512);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, b + PS);
	/* Two pages' worth from offset 512 touches three: a list. */
	CU_ASSERT_EQUAL(build_contig(&req, 512, 2 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 512);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	CU_ASSERT_EQUAL(g_tr.prp_list[0], b + PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[1], b + 2 * PS);
	/* Three pages' worth: four entries, three in the list. */
	CU_ASSERT_EQUAL(build_contig(&req, 512, 3 * PS), 0);
	CU_ASSERT_EQUAL(g_tr.prp_list[2], b + 3 * PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[3], 0xa5a5a5a5a5a5a5a5ull); /* untouched */
}

static void
test_contig_offset4092(void)
{
	struct nvme_request req;
	uint64_t b = iova(g_buf);

	/* The last dword of a page. */
	CU_ASSERT_EQUAL(build_contig(&req, 4092, 4), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 4092);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, 0);
	/* 8 bytes cross into the next page. */
	CU_ASSERT_EQUAL(build_contig(&req, 4092, 8), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, b + PS);
	/* One page's worth: two entries. */
	CU_ASSERT_EQUAL(build_contig(&req, 4092, PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 4092);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, b + PS);
	/* Two pages' worth: three entries, list. */
	CU_ASSERT_EQUAL(build_contig(&req, 4092, 2 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	CU_ASSERT_EQUAL(g_tr.prp_list[0], b + PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[1], b + 2 * PS);
	/* Three pages' worth: four entries. */
	CU_ASSERT_EQUAL(build_contig(&req, 4092, 3 * PS), 0);
	CU_ASSERT_EQUAL(g_tr.prp_list[2], b + 3 * PS);
}

/* 512 list slots per page: one page holds 512 entries, more need a chained page. */
static void
test_full_list_no_chain(void)
{
	struct nvme_request req;
	uint64_t b = iova(g_buf);

	g_tr.extra = NULL;
	/* Offset 512 and 512 pages' worth: 513 entries, 512 in the list: one full page. */
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 512 * PS), 0);
	CU_ASSERT_EQUAL(build_contig(&req, 512, 512 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	CU_ASSERT_EQUAL(g_tr.prp_list[0], b + PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[511], b + 512 * PS);
}

static void
test_chained_list(void)
{
	struct nvme_request req;
	uint64_t b = iova(g_buf);
	uint32_t extra = nvme_pcie_prp_extra_pages(PS, 514 * PS);
	struct nvme_prp_page *pg;
	uint32_t i;

	/* 514 pages from offset 0: 514 entries, 513 in the list: 511 + pointer, then 2. */
	CU_ASSERT_EQUAL(extra, 1);
	g_tr.extra = NULL;
	CU_ASSERT_EQUAL(nvme_pcie_prp_reserve(&g_qpair, &g_tr, extra), 0);
	CU_ASSERT_EQUAL(g_qpair.prp_pool_free, NVP_COUNTOF(g_pool) - 1);
	pg = g_tr.extra;
	CU_ASSERT_PTR_NOT_NULL_FATAL(pg);
	CU_ASSERT_EQUAL(build_contig(&req, 0, 514 * PS), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	for (i = 0; i < 511; i++) {
		CU_ASSERT_EQUAL(g_tr.prp_list[i], b + (uint64_t)(i + 1) * PS);
	}
	CU_ASSERT_EQUAL(g_tr.prp_list[511], pg->iova); /* the chain pointer */
	CU_ASSERT_EQUAL(pg->va[0], b + 512ull * PS);
	CU_ASSERT_EQUAL(pg->va[1], b + 513ull * PS);
	nvme_pcie_prp_release(&g_qpair, &g_tr);
	CU_ASSERT_PTR_NULL(g_tr.extra);
	CU_ASSERT_EQUAL(g_qpair.prp_pool_free, NVP_COUNTOF(g_pool));
}

static void
test_extra_pages_and_pool(void)
{
	/* Up to 512 list entries: the tracker's own page suffices. */
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 0), 0);
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 512 * PS), 0);
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 513 * PS), 1);
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 1023 * PS), 1);
	CU_ASSERT_EQUAL(nvme_pcie_prp_extra_pages(PS, 1024 * PS), 2);
	g_tr.extra = NULL;
	CU_ASSERT_EQUAL(nvme_pcie_prp_reserve(&g_qpair, &g_tr, NVP_COUNTOF(g_pool) + 1), -EAGAIN);
	CU_ASSERT_PTR_NULL(g_tr.extra);
	CU_ASSERT_EQUAL(nvme_pcie_prp_reserve(&g_qpair, &g_tr, NVP_COUNTOF(g_pool)), 0);
	CU_ASSERT_EQUAL(g_qpair.prp_pool_free, 0);
	CU_ASSERT_EQUAL(nvme_pcie_prp_reserve(&g_qpair, &g_tr, 1), -EAGAIN);
	nvme_pcie_prp_release(&g_qpair, &g_tr);
	CU_ASSERT_EQUAL(g_qpair.prp_pool_free, NVP_COUNTOF(g_pool));
}

static void
test_bad_buffers(void)
{
	struct nvme_request req;
	uint8_t stack_buf[64];

	/* PRP1 offsets must be dword aligned. */
	CU_ASSERT_EQUAL(build_contig(&req, 2, 512), -EINVAL);
	CU_ASSERT_EQUAL(build_contig(&req, 4094, 8), -EINVAL);
	/* Not DMA memory. */
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, stack_buf, sizeof(stack_buf));
	CU_ASSERT_EQUAL(nvme_pcie_prp_build(&g_qpair, &g_tr, &req), -EFAULT);
	CU_ASSERT_EQUAL(nvme_pcie_prp_check(&g_qpair, &req), -EFAULT);
	/* Runs off the end of the DMA buffer (into its guard page). */
	CU_ASSERT_EQUAL(build_contig(&req, (BUF_PAGES - 1) * PS, 2 * PS), -EFAULT);
	/* No payload: the data pointer is left alone. */
	memset(&req, 0, sizeof(req));
	req.cmd.dptr.prp.prp1 = 0x1234000;
	CU_ASSERT_EQUAL(nvme_pcie_prp_build(&g_qpair, &g_tr, &req), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, 0x1234000);
}

/* A scattered payload: up to 8 elements of (offset into g_buf, length). */
struct ut_sgl {
	uint32_t off[8];
	uint32_t len[8];
	uint32_t n;
	uint32_t next;
	int fail_rc;
};

static void
ut_reset_sgl(void *arg, uint32_t offset)
{
	struct ut_sgl *s = arg;

	CU_ASSERT_EQUAL(offset, 0);
	s->next = 0;
}

static int
ut_next_sge(void *arg, void **address, uint32_t *length)
{
	struct ut_sgl *s = arg;

	if (s->fail_rc != 0) {
		return s->fail_rc;
	}
	if (s->next >= s->n) {
		return -EINVAL;
	}
	*address = g_buf + s->off[s->next];
	*length = s->len[s->next];
	s->next++;
	return 0;
}

static int
build_sgl(struct ut_sgl *s, uint32_t size, struct nvme_request *req)
{
	int rc;

	memset(req, 0, sizeof(*req));
	memset(g_tr.prp_list, 0xa5, PS);
	req->payload.type = NVME_PAYLOAD_SGL;
	req->payload.size = size;
	req->payload.reset_sgl_fn = ut_reset_sgl;
	req->payload.next_sge_fn = ut_next_sge;
	req->payload.sgl_arg = s;
	rc = nvme_pcie_prp_check(&g_qpair, req);
	CU_ASSERT_EQUAL(rc, nvme_pcie_prp_build(&g_qpair, &g_tr, req));
	return rc;
}

static void
test_sgl_valid(void)
{
	struct ut_sgl s = { .off = { 512, 8 * PS, 16 * PS },
			    .len = { PS - 512, 2 * PS, 1024 },
			    .n = 3 };
	struct nvme_request req;
	uint64_t b = iova(g_buf);

	/* First element starts mid-page and ends on a boundary, middle ones are whole
	 * pages, the last starts on a boundary: entries 512, 8P, 9P, 16P. */
	CU_ASSERT_EQUAL(build_sgl(&s, (PS - 512) + 2 * PS + 1024, &req), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, b + 512);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, g_tr.prp_list_iova);
	CU_ASSERT_EQUAL(g_tr.prp_list[0], b + 8 * PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[1], b + 9 * PS);
	CU_ASSERT_EQUAL(g_tr.prp_list[2], b + 16 * PS);
	/* The payload size bounds the walk: a longer last element is cut. */
	s.len[2] = 8 * PS;
	CU_ASSERT_EQUAL(build_sgl(&s, (PS - 512) + 2 * PS + 512, &req), 0);
	CU_ASSERT_EQUAL(g_tr.prp_list[3], 0xa5a5a5a5a5a5a5a5ull);
	/* Two elements, two entries: PRP2 is the second element's page. */
	s.n = 2;
	s.off[1] = 4 * PS;
	s.len[1] = 100;
	CU_ASSERT_EQUAL(build_sgl(&s, PS - 512 + 100, &req), 0);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp2, b + 4 * PS);
}

static void
test_sgl_prp_rule(void)
{
	struct ut_sgl s = { .off = { 0, 4 * PS }, .len = { PS, PS }, .n = 2 };
	struct nvme_request req;

	/* A later element that does not start on a page boundary. */
	s.off[1] = 4 * PS + 512;
	CU_ASSERT_EQUAL(build_sgl(&s, 2 * PS, &req), -EINVAL);
	/* An element before the last that does not end on a page boundary. */
	s.off[1] = 4 * PS;
	s.len[0] = PS - 512;
	CU_ASSERT_EQUAL(build_sgl(&s, 2 * PS - 512, &req), -EINVAL);
	/* Even when the next element is virtually contiguous with it. */
	s.off[1] = PS - 512;
	CU_ASSERT_EQUAL(build_sgl(&s, 2 * PS - 512, &req), -EINVAL);
	/* The first element must be dword aligned. */
	s.off[0] = 2;
	s.len[0] = PS - 2;
	s.off[1] = PS;
	CU_ASSERT_EQUAL(build_sgl(&s, 2 * PS - 2, &req), -EINVAL);
	/* An empty element. */
	s.off[0] = 0;
	s.len[0] = 0;
	CU_ASSERT_EQUAL(build_sgl(&s, PS, &req), -EINVAL);
	/* Too few elements for the payload. */
	s.len[0] = PS;
	s.n = 1;
	CU_ASSERT_EQUAL(build_sgl(&s, 2 * PS, &req), -EINVAL);
	/* The callback's error comes back as is. */
	s.fail_rc = -ENOBUFS;
	CU_ASSERT_EQUAL(build_sgl(&s, PS, &req), -ENOBUFS);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_pcie_prp", suite_init, suite_fini);
	CU_ADD_TEST(s, test_contig_offset0);
	CU_ADD_TEST(s, test_contig_offset512);
	CU_ADD_TEST(s, test_contig_offset4092);
	CU_ADD_TEST(s, test_full_list_no_chain);
	CU_ADD_TEST(s, test_chained_list);
	CU_ADD_TEST(s, test_extra_pages_and_pool);
	CU_ADD_TEST(s, test_bad_buffers);
	CU_ADD_TEST(s, test_sgl_valid);
	CU_ADD_TEST(s, test_sgl_prp_rule);
	return ut_run();
}
