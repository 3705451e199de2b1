/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests larger than the controller's transfer limit are split, not refused (issue 9):
 * against a software controller with mdts=1 (8 KiB per command), 1 MiB written from a
 * contiguous buffer at a dword offset and read back through a scattered payload whose
 * elements straddle the split points, in 512 B and 4 KiB formats; a request needing more
 * children than its qpair has request objects; as many large requests at once as the
 * queue has slots, none refused; a failing child completing the parent once with its
 * status; write zeroes of more than 65536 blocks. Data is verified every time.
 *
 * With NVP_TEST_TRID (a real controller) the same runs with that controller's limit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define MIB (1024u * 1024u)

/* A scattered view of @buf: a first element from an offset that ends on a page, then
 * elements of 3, 1, 5, 2 ... pages, the last one ending where the payload ends. */
static void
straddling_sgl(struct fx_sgl *s, uint8_t *buf, uint32_t first_off, uint32_t len)
{
	static const uint32_t pages[] = { 3, 1, 5, 2, 7 };
	uint32_t off = first_off, i = 0;

	fx_sgl_init(s);
	fx_sgl_add(s, buf + off, 4096 - first_off);
	len -= 4096 - first_off;
	off = 4096;
	while (len > 0) {
		uint32_t el = NVP_MIN(len, pages[i++ % NVP_COUNTOF(pages)] * 4096u);

		fx_sgl_add(s, buf + off, el);
		off += el;
		len -= el;
	}
}

/* Write @len bytes at @lba contiguous (offset 4), read back scattered, verify. */
static void
split_write_read(struct fx_ctrlr *fx, uint64_t lba, uint32_t len, uint32_t tag)
{
	static struct fx_sgl s;
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	uint32_t bs = nvp_nvme_ns_get_sector_size(fx->ns);
	uint32_t max = nvp_nvme_ns_get_max_io_xfer_size(fx->ns);
	uint32_t count = len / bs;
	uint8_t *wbuf = fx_dma_alloc(len + 4096);
	uint8_t *rbuf = fx_dma_alloc(len + 4096);

	memset(&before, 0, sizeof(before));
	before.info_size = sizeof(before);
	memset(&after, 0, sizeof(after));
	after.info_size = sizeof(after);
	if (fx_is_emu(fx)) {
		nvp_emu_ctrlr_get_stats(fx->emu, &before);
	}
	fx_pattern_fill(wbuf + 4, lba, count, bs, tag);
	CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_WRITE, wbuf + 4, lba, count, 0, NULL), 0);
	/* Elements straddle the split points: max is a multiple of the page, the first
	 * element is not. */
	straddling_sgl(&s, rbuf, 1024, len);
	CU_ASSERT_EQUAL(fx_iov_io(fx->ns, fx->qpair, false, &s, lba, count, NULL), 0);
	CU_ASSERT(fx_pattern_check(rbuf + 1024, lba, count, bs, tag) < 0);
	if (len > max) {
		CU_ASSERT(s.resets > 1); /* each child rewound the caller's SGL to its offset */
	}
	if (fx_is_emu(fx)) {
		nvp_emu_ctrlr_get_stats(fx->emu, &after);
		CU_ASSERT_EQUAL(after.write_cmds - before.write_cmds, (len + max - 1) / max);
		CU_ASSERT_EQUAL(after.read_cmds - before.read_cmds, (len + max - 1) / max);
		CU_ASSERT_EQUAL(after.bytes_written - before.bytes_written, len);
		CU_ASSERT_EQUAL(after.bytes_read - before.bytes_read, len);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx->qpair), 0);
	nvp_env_dma_free(wbuf);
	nvp_env_dma_free(rbuf);
}

static void
split_format(const char *opts, uint32_t bs)
{
	struct fx_ctrlr fx;

	if (fx_open(&fx, opts) != 0 || fx_skip_unless_bs(&fx, bs)) {
		fx_close(&fx);
		return;
	}
	if (fx_is_emu(&fx)) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_max_io_xfer_size(fx.ns), 8192);
	}
	printf("  %u-byte blocks, %u bytes per command\n", bs,
	       nvp_nvme_ns_get_max_io_xfer_size(fx.ns));
	split_write_read(&fx, 8, MIB, 1);
	/* One block past the limit. */
	split_write_read(&fx, 3, nvp_nvme_ns_get_max_io_xfer_size(fx.ns) + bs, 2);
	fx_close(&fx);
}

static void
test_split_512(void)
{
	split_format("size=16M,lba=512,mdts=1", 512);
}

static void
test_split_4k(void)
{
	split_format("size=16M,lba=4096,mdts=1", 4096);
}

/* 1 MiB through a qpair of 2 entries and 2 request objects: 128 children, one by one. */
static void
test_more_children_than_requests(void)
{
	struct nvp_nvme_qpair *small = NULL;
	struct fx_ctrlr fx;
	uint32_t bs, count;
	uint8_t *buf;

	if (fx_open(&fx, "size=16M,lba=512,mdts=1") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	count = MIB / bs;
	buf = fx_dma_alloc(MIB);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 2, 2, 0, false, &small), 0);
	fx_pattern_fill(buf, 100, count, bs, 7);
	CU_ASSERT_EQUAL(fx_io(fx.ns, small, FX_WRITE, buf, 100, count, 0, NULL), 0);
	memset(buf, 0, MIB);
	CU_ASSERT_EQUAL(fx_io(fx.ns, small, FX_READ, buf, 100, count, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 100, count, bs, 7) < 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(small), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* As many 256 KiB requests at once as the queue has slots: none refused, all intact. */
static void
test_queue_full_of_large(void)
{
	enum {
		ENTRIES = 16,
		N = ENTRIES - 1
	};
	struct nvp_nvme_qpair *qp = NULL;
	struct fx_cpl done[N];
	struct fx_ctrlr fx;
	uint32_t bs, count, len = 256 * 1024, i;
	unsigned int total = 0;
	uint8_t *buf;

	if (fx_open(&fx, "size=16M,lba=512,mdts=1") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	count = len / bs;
	buf = fx_dma_alloc((size_t)N * len);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, ENTRIES, 0, 0, false, &qp), 0);
	for (int pass = 0; pass < 2; pass++) {
		memset(done, 0, sizeof(done));
		for (i = 0; i < N; i++) {
			uint8_t *b = buf + (size_t)i * len;
			int rc;

			if (pass == 0) {
				fx_pattern_fill(b, (uint64_t)i * count, count, bs, 9);
				rc = nvp_nvme_ns_cmd_write(fx.ns, qp, b, (uint64_t)i * count, count,
							   fx_cpl_cb, &done[i], 0);
			} else {
				rc = nvp_nvme_ns_cmd_read(fx.ns, qp, b, (uint64_t)i * count, count,
							  fx_cpl_cb, &done[i], 0);
			}
			CU_ASSERT_EQUAL(rc, 0);
		}
		for (i = 0; i < N; i++) {
			CU_ASSERT_EQUAL(fx_poll_until(qp, &done[i].calls, 1, FX_WAIT_MS), 0);
			CU_ASSERT(!nvme_cpl_is_error(&done[i].cpl));
		}
		fx_poll_for(qp, 5);
		for (i = 0, total = 0; i < N; i++) {
			total += done[i].calls;
		}
		CU_ASSERT_EQUAL(total, N); /* each parent completed exactly once */
		if (pass == 0) {
			memset(buf, 0, (size_t)N * len);
		}
	}
	for (i = 0; i < N; i++) {
		CU_ASSERT(fx_pattern_check(buf + (size_t)i * len, (uint64_t)i * count, count, bs,
					   9) < 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qp), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* The fourth child fails: the parent completes once, with that status. */
static void
test_child_error(void)
{
	struct fx_ctrlr fx;
	struct fx_cpl c = { 0 };
	uint32_t bs, count;
	uint8_t *buf;

	FX_NEEDS_EMU("fault injection");
	if (fx_open(&fx, "size=16M,lba=512,mdts=1") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	count = 128 * 1024 / bs;
	buf = fx_dma_alloc(128 * 1024);
	CU_ASSERT_EQUAL(
		nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ERROR, 1, 3,
					   (NVME_SCT_GENERIC << 8) | NVME_SC_DATA_TRANSFER_ERROR),
		0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, fx.qpair, buf, 0, count, fx_cpl_cb, &c, 0), 0);
	CU_ASSERT_EQUAL(fx_poll_until(fx.qpair, &c.calls, 1, FX_WAIT_MS), 0);
	fx_poll_for(fx.qpair, 20);
	CU_ASSERT_EQUAL(c.calls, 1);
	FX_ASSERT_STATUS(&c.cpl, NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx.qpair), 0);
	/* The qpair is fine afterwards. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, count, 0, NULL), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* Write zeroes of 70000 blocks (NLB carries 65536): both pieces zeroed, neighbours kept. */
static void
test_write_zeroes_split(void)
{
	struct fx_ctrlr fx;
	uint32_t bs;
	uint8_t *buf;

	if (fx_open(&fx, "size=64M,lba=512") != 0 || fx_skip_unless_bs(&fx, 512)) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	buf = fx_dma_alloc(64 * bs);
	/* Marks at the start, across the 65536-block point, at the end and just past it. */
	fx_pattern_fill(buf, 10, 8, bs, 5);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 10, 8, 0, NULL), 0);
	fx_pattern_fill(buf, 65540, 16, bs, 5);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 65540, 16, 0, NULL), 0);
	fx_pattern_fill(buf, 70004, 16, bs, 5);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 70004, 16, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 12, 70000, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 10, 8, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 10, 2, bs, 5) < 0);
	CU_ASSERT(fx_is_zero(buf + 2 * bs, 6 * bs));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 65540, 16, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 16 * bs));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 70004, 16, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 8 * bs));
	CU_ASSERT(fx_pattern_check(buf + 8 * bs, 70012, 8, bs, 5) < 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "split_512", test_split_512 },
		{ "split_4k", test_split_4k },
		{ "more_children_than_requests", test_more_children_than_requests },
		{ "queue_full_of_large", test_queue_full_of_large },
		{ "child_error", test_child_error },
		{ "write_zeroes_split", test_write_zeroes_split },
	};

	return fx_main(argc, argv, "nvme_split", tests, NVP_COUNTOF(tests));
}
