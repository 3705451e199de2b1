/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/emu/emu_prp.c: PRP1/PRP2/list walking and the IOMMU check. */
#include "emu_ut_helpers.h"

#define PG 4096u
#define ST_OFFSET EMU_GEN(NVME_SC_INVALID_PRP_OFFSET)
#define ST_DTE EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR)

static struct emu_sgl g_sgl;

static uint64_t
iova(const void *p)
{
	return nvp_env_vtophys(p, NULL);
}

static uint8_t *
dma_pages(uint32_t n)
{
	uint8_t *p = nvp_env_dma_zmalloc((size_t)n * PG, 2 * PG, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (size_t i = 0; i < (size_t)n * PG; i++) {
		p[i] = (uint8_t)(i * 7 + i / PG);
	}
	return p;
}

/* The bytes the walk describes equal @expect. */
static bool
sgl_equals(const void *expect, uint64_t len)
{
	uint8_t *tmp = malloc(len);
	bool eq;

	emu_sgl_from_host(&g_sgl, tmp, len);
	eq = memcmp(tmp, expect, len) == 0 && g_sgl.len == len;
	free(tmp);
	return eq;
}

static void
test_single_page_offsets(void)
{
	static const uint32_t offs[] = { 0, 512, 4092 };
	uint8_t *buf = dma_pages(2);

	for (uint32_t i = 0; i < NVP_COUNTOF(offs); i++) {
		uint64_t len = PG - offs[i];

		/* PRP2 is not used when the transfer ends in PRP1's page: garbage is fine */
		CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf + offs[i]), 0xdeadbeef1, len, PG),
				EMU_ST_OK);
		CU_ASSERT_EQUAL(g_sgl.nsegs, 1);
		CU_ASSERT_PTR_EQUAL(g_sgl.segs[0].addr, buf + offs[i]);
		CU_ASSERT(sgl_equals(buf + offs[i], len));
	}
	/* offset 4092, 8 bytes: crosses into the second page through PRP2 */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf + 4092), iova(buf + PG), 8, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 1); /* contiguous: merged */
	CU_ASSERT(sgl_equals(buf + 4092, 8));
	/* zero length: nothing mapped */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, 0, 0, 0, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 0);
	nvp_env_dma_free(buf);
}

static void
test_two_pages(void)
{
	uint8_t *a = dma_pages(1), *b = dma_pages(1);
	uint8_t expect[PG + 512];

	/* two separate buffers: two segments, in PRP order */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(a + 3584), iova(b), 512 + PG, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 2);
	memcpy(expect, a + 3584, 512);
	memcpy(expect + 512, b, PG);
	CU_ASSERT(sgl_equals(expect, sizeof(expect)));
	/* PRP2 of a two-page transfer must not have an offset */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(a), iova(b) + 512, 2 * PG, PG), ST_OFFSET);
	nvp_env_dma_free(a);
	nvp_env_dma_free(b);
}

static void
test_three_pages_list(void)
{
	uint8_t *buf = dma_pages(4);
	uint64_t *list = (uint64_t *)dma_pages(1);
	uint64_t prp1, prp2;

	/* offset 0, 3 pages: PRP1 + a list of 2 */
	ut_prps(buf, 3 * PG, list, &prp1, &prp2);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, prp1, prp2, 3 * PG, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 1); /* contiguous IOVA: one translation, one segment */
	CU_ASSERT(sgl_equals(buf, 3 * PG));
	/* offset 512, 3 pages of data: touches 4 pages, list of 3 */
	ut_prps(buf + 512, 3 * PG, list, &prp1, &prp2);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, prp1, prp2, 3 * PG, PG), EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf + 512, 3 * PG));
	/* reverse page order in the list: two segments out of order */
	list[0] = iova(buf + 3 * PG);
	list[1] = iova(buf + 2 * PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list), 3 * PG, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 3);
	CU_ASSERT_PTR_EQUAL(g_sgl.segs[1].addr, buf + 3 * PG);
	CU_ASSERT_PTR_EQUAL(g_sgl.segs[2].addr, buf + 2 * PG);
	/* a list entry with an offset */
	list[0] = iova(buf + PG) + 512;
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list), 3 * PG, PG), ST_OFFSET);
	/* a list pointer that is not qword aligned */
	list[0] = iova(buf + PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list) + 4, 3 * PG, PG), ST_OFFSET);
	nvp_env_dma_free(buf);
	nvp_env_dma_free(list);
}

static void
test_list_with_offset(void)
{
	uint8_t *buf = dma_pages(3);
	uint64_t *list = (uint64_t *)dma_pages(1);

	/* the list may start inside its page (qword aligned) */
	list[100] = iova(buf + PG);
	list[101] = iova(buf + 2 * PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(&list[100]), 3 * PG, PG), EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf, 3 * PG));
	/* a list starting at the last qword of its page holds only a chain pointer */
	list[511] = iova(&list[0]);
	list[0] = iova(buf + PG);
	list[1] = iova(buf + 2 * PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(&list[511]), 3 * PG, PG), EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf, 3 * PG));
	nvp_env_dma_free(buf);
	nvp_env_dma_free(list);
}

/* 1 + 513 pages: list page 1 holds 511 data entries and the chain, list page 2 holds 2. */
static void
test_chained_list(void)
{
	const uint32_t npages = 1 + 513;
	uint8_t *buf = dma_pages(npages);
	uint64_t *l1 = (uint64_t *)dma_pages(1), *l2 = (uint64_t *)dma_pages(1);
	uint64_t len = (uint64_t)npages * PG;

	for (uint32_t i = 0; i < 511; i++) {
		l1[i] = iova(buf + (uint64_t)(i + 1) * PG);
	}
	l1[511] = iova(l2);
	l2[0] = iova(buf + 512ull * PG);
	l2[1] = iova(buf + 513ull * PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(l1), len, PG), EMU_ST_OK);
	CU_ASSERT_EQUAL(g_sgl.nsegs, 1);
	CU_ASSERT(sgl_equals(buf, len));
	/* the chain pointer must be page aligned */
	l1[511] = iova(l2) + 8;
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(l1), len, PG), ST_OFFSET);
	/* exactly 512 entries fit: the last entry is data, no chain */
	l1[511] = iova(buf + 512ull * PG);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(l1), 513ull * PG, PG), EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf, 513ull * PG));
	nvp_env_dma_free(buf);
	nvp_env_dma_free(l1);
	nvp_env_dma_free(l2);
}

static void
test_bad_offsets(void)
{
	uint8_t *buf = dma_pages(2);

	/* PRP1 must be dword aligned */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf) + 2, 0, 512, PG), ST_OFFSET);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf) + 1, 0, 4, PG), ST_OFFSET);
	/* an offset that is dword aligned is fine */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf) + 4, 0, 4, PG), EMU_ST_OK);
	nvp_env_dma_free(buf);
}

static void
test_not_dma_memory(void)
{
	uint8_t *buf = dma_pages(3);
	uint64_t *list = (uint64_t *)dma_pages(1);
	uint8_t *heap = aligned_alloc(PG, 2 * PG);
	uint64_t guard = iova(buf) + 3ull * PG; /* the page after the buffer */

	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, (uintptr_t)heap, 0, 512, PG), ST_DTE);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), (uintptr_t)heap, 2 * PG, PG), ST_DTE);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), guard, 2 * PG, PG), ST_DTE);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, 0, 0, 512, PG), ST_DTE);
	/* the list page itself is not DMA memory */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), (uintptr_t)heap, 3 * PG, PG), ST_DTE);
	/* a list entry is not */
	list[0] = iova(buf + PG);
	list[1] = (uintptr_t)heap;
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list), 3 * PG, PG), ST_DTE);
	/* a contiguous run that runs into the guard page */
	list[0] = iova(buf + PG);
	list[1] = iova(buf + 2 * PG);
	list[2] = guard;
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list), 4 * PG, PG), ST_DTE);
	free(heap);
	nvp_env_dma_free(buf);
	nvp_env_dma_free(list);
}

static void
test_segment_limit(void)
{
	struct emu_sgl small;
	uint8_t *a = dma_pages(1), *b = dma_pages(1), *c = dma_pages(1);
	uint64_t *list = (uint64_t *)dma_pages(1);

	CU_ASSERT_EQUAL_FATAL(emu_sgl_init(&small, 2), 0);
	list[0] = iova(b);
	list[1] = iova(c);
	CU_ASSERT_EQUAL(emu_prp_map(&small, iova(a), iova(list), 3 * PG, PG),
			EMU_GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(emu_prp_map(&small, iova(a), iova(b), 2 * PG, PG), EMU_ST_OK);
	emu_sgl_fini(&small);
	nvp_env_dma_free(a);
	nvp_env_dma_free(b);
	nvp_env_dma_free(c);
	nvp_env_dma_free(list);
}

/* CC.MPS = 1: 8 KiB memory pages change every boundary. */
static void
test_page_size_8k(void)
{
	uint8_t *buf = dma_pages(8);
	uint64_t *list = (uint64_t *)dma_pages(2);

	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf + 4096), 0, 4096, 8192), EMU_ST_OK);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf + 4096), iova(buf + 8192), 4096 + 8192, 8192),
			EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf + 4096, 4096 + 8192));
	/* 4 KiB aligned is not 8 KiB aligned for a second-page entry */
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(buf + 12288), 16384, 8192), ST_OFFSET);
	list[0] = iova(buf + 8192);
	list[1] = iova(buf + 16384);
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(buf), iova(list), 3 * 8192, 8192), EMU_ST_OK);
	CU_ASSERT(sgl_equals(buf, 3 * 8192));
	nvp_env_dma_free(buf);
	nvp_env_dma_free(list);
}

static void
test_copy_helpers(void)
{
	uint8_t *a = dma_pages(1), *b = dma_pages(1);
	uint8_t src[PG + 100], dst[PG + 100];

	for (size_t i = 0; i < sizeof(src); i++) {
		src[i] = (uint8_t)(i ^ 0x5a);
	}
	CU_ASSERT_EQUAL(emu_prp_map(&g_sgl, iova(a + PG - 100), iova(b), sizeof(src), PG),
			EMU_ST_OK);
	emu_sgl_to_host(&g_sgl, src, sizeof(src));
	CU_ASSERT(memcmp(a + PG - 100, src, 100) == 0);
	CU_ASSERT(memcmp(b, src + 100, PG) == 0);
	emu_sgl_from_host(&g_sgl, dst, sizeof(dst));
	CU_ASSERT(memcmp(dst, src, sizeof(src)) == 0);
	nvp_env_dma_free(a);
	nvp_env_dma_free(b);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_single_page_offsets), UT_TEST(test_two_pages),
		UT_TEST(test_three_pages_list),    UT_TEST(test_list_with_offset),
		UT_TEST(test_chained_list),        UT_TEST(test_bad_offsets),
		UT_TEST(test_not_dma_memory),      UT_TEST(test_segment_limit),
		UT_TEST(test_page_size_8k),        UT_TEST(test_copy_helpers),
	};
	int rc;

	ut_env_init();
	if (emu_sgl_init(&g_sgl, 4096) != 0) {
		return 1;
	}
	rc = ut_run("emu_prp", tests, NVP_COUNTOF(tests));
	emu_sgl_fini(&g_sgl);
	return rc;
}
