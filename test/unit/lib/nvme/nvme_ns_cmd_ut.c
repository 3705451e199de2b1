/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of NVM command submission (nvme_ns_cmd.c): the errno of every kind of bad
 * input, and the command each call builds (opcode, NSID, CDW10-15, MPTR, payload), with
 * the qpair's submission and the split code (tested in nvme_ns_split_ut.c) replaced by
 * recorders; metadata rules on separate, extended and protection-information formats.
 */
#include "nvp_config.h"
#undef NVP_CONFIG_DEBUG
#define NVP_CONFIG_DEBUG 1 /* exercise the owner-thread check */

#include "nvme/nvme_ns_cmd.c"

#include "ut_nvme.h"

/* ---- the qpair's submission, recorded ---- */

static struct nvme_request g_last;
static uint32_t g_submits;
static int g_submit_rc;

int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	g_last = *req;
	g_submits++;
	nvme_qpair_free_request(qpair, req);
	return g_submit_rc;
}

/* Reads and writes submit inline (nvme_transport.h): this qpair has no free tracker, so
 * each goes to nvme_qpair_submit_wait(), recorded the same way. The rest is never
 * reached. */
int
nvme_qpair_submit_wait(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	CU_ASSERT(SLIST_EMPTY(&qpair->free_tr));
	return nvme_qpair_submit_request(qpair, req);
}

const struct nvme_transport_ops g_nvme_pcie_transport;

int
nvme_qpair_submit_refused(struct nvp_nvme_qpair *qpair, struct nvme_request *req, int rc)
{
	(void)qpair;
	(void)req;
	CU_FAIL("a transport submission in nvme_ns_cmd_ut");
	return rc;
}

void
nvme_qpair_ring_sq_guarded(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	CU_FAIL("a doorbell in nvme_ns_cmd_ut");
}

int
nvme_pcie_qpair_build_list(struct nvme_pcie_qpair *pq, struct nvme_tracker *tr,
			   struct nvme_request *req)
{
	(void)pq;
	(void)tr;
	(void)req;
	CU_FAIL("a PRP list in nvme_ns_cmd_ut");
	return -EINVAL;
}

/* ---- the split code, recorded ---- */

static struct nvme_request g_split;
static uint32_t g_splits;

int
nvme_split_submit(struct nvp_nvme_qpair *qpair, struct nvme_request *parent)
{
	g_split = *parent;
	g_splits++;
	nvme_qpair_free_request(qpair, parent);
	return 0;
}

/* Metadata buffers: any dword-aligned address "is DMA memory" here. */
int
nvme_md_iova(const void *md_buf, uint32_t len, uint64_t *iova)
{
	(void)len;
	if (((uintptr_t)md_buf & 3u) != 0) {
		return -EINVAL;
	}
	*iova = (uintptr_t)md_buf;
	return 0;
}

/* ---- fixture ---- */

#define NUM_REQS 4

static struct nvp_nvme_ctrlr g_ctrlr, g_other_ctrlr;
static struct nvp_nvme_ns g_ns;
static struct nvp_nvme_qpair g_qpair;
static struct nvme_request g_reqs[NUM_REQS];
static uint8_t g_pages[NUM_REQS][NVME_DSM_PAGE_SIZE];
static void *g_dsm_free[NUM_REQS];
static uint32_t g_buf[4096];

static void
dummy_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	(void)cpl;
}

static void
dummy_reset(void *arg, uint32_t offset)
{
	(void)arg;
	(void)offset;
}

static int
dummy_next(void *arg, void **addr, uint32_t *len)
{
	(void)arg;
	(void)addr;
	(void)len;
	return 0;
}

static void
setup(void)
{
	uint32_t i;

	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.max_xfer_size = 128 * 1024;
	memset(&g_ns, 0, sizeof(g_ns));
	g_ns.ctrlr = &g_ctrlr;
	g_ns.id = 3;
	g_ns.sector_size = 512;
	g_ns.data_size = 512;
	g_ns.num_sectors = 1000;
	g_ns.max_io_sectors = 256;
	g_ns.active = true;
	memset(&g_qpair, 0, sizeof(g_qpair));
	g_qpair.ctrlr = &g_ctrlr;
	g_qpair.id = 1;
	g_qpair.owner = pthread_self();
	SLIST_INIT(&g_qpair.free_req);
	for (i = 0; i < NUM_REQS; i++) {
		SLIST_INSERT_HEAD(&g_qpair.free_req, &g_reqs[NUM_REQS - 1 - i], free_link);
		g_dsm_free[i] = g_pages[i];
	}
	g_qpair.dsm_free = g_dsm_free;
	g_qpair.dsm_free_count = NUM_REQS;
	memset(&g_last, 0, sizeof(g_last));
	g_submits = 0;
	memset(&g_split, 0, sizeof(g_split));
	g_splits = 0;
	g_submit_rc = 0;
}

static void
test_read_write_encoding(void)
{
	setup();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 10, 8, dummy_cb, &g_ns,
					     NVME_IO_FLAGS_FORCE_UNIT_ACCESS),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_READ);
	CU_ASSERT_EQUAL(g_last.cmd.nsid, 3);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 10);
	CU_ASSERT_EQUAL(g_last.cmd.cdw11, 0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 7u | NVME_IO_FLAGS_FORCE_UNIT_ACCESS);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_CONTIG);
	CU_ASSERT_PTR_EQUAL(g_last.payload.buf, g_buf);
	CU_ASSERT_EQUAL(g_last.payload.size, 4096);
	CU_ASSERT_PTR_EQUAL(g_last.cb_fn, dummy_cb);
	CU_ASSERT_PTR_EQUAL(g_last.cb_arg, &g_ns);
	/* A 64-bit LBA is split over CDW10/11. */
	g_ns.num_sectors = 1ull << 40;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0x100000002ull, 1, dummy_cb,
					      NULL, NVME_IO_FLAGS_LIMITED_RETRY),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 2);
	CU_ASSERT_EQUAL(g_last.cmd.cdw11, 1);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, NVME_IO_FLAGS_LIMITED_RETRY);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_compare(&g_ns, &g_qpair, g_buf, 0, 256, dummy_cb, NULL, 0),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_COMPARE);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 255);
	CU_ASSERT_EQUAL(g_last.payload.size, 256 * 512);
	/* Directive type passes through. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL,
					      1u << NVME_IO_FLAGS_DTYPE_SHIFT),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 1u << NVME_IO_FLAGS_DTYPE_SHIFT);
}

/* Writes with a directive: DTYPE in CDW12 23:20, DSPEC in CDW13 31:16. */
static void
test_write_directive(void)
{
	setup();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_directive(
				&g_ns, &g_qpair, g_buf, 5, 2, dummy_cb, NULL,
				NVME_IO_FLAGS_DTYPE_STREAMS | NVME_IO_FLAGS_FORCE_UNIT_ACCESS,
				0xbeef),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 5);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12,
			1u | (1u << 20) | NVME_IO_FLAGS_FORCE_UNIT_ACCESS); /* NLB 0's based */
	CU_ASSERT_EQUAL(g_last.cmd.cdw13, 0xbeef0000u);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_writev_directive(&g_ns, &g_qpair, 0, 8, dummy_cb, NULL,
							 NVME_IO_FLAGS_DTYPE_STREAMS, 3,
							 dummy_reset, dummy_next),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 7u | (1u << 20));
	CU_ASSERT_EQUAL(g_last.cmd.cdw13, 3u << 16);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_SGL);
	/* plain writes leave CDW13 clear; bad flags still refused */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw13, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_directive(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb,
							NULL, NVME_IO_FLAGS_DEALLOCATE, 1),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_directive(&g_ns, &g_qpair, g_buf, 999, 2, dummy_cb,
							NULL, NVME_IO_FLAGS_DTYPE_STREAMS, 1),
			-ERANGE);
}

static void
test_rw_errors(void)
{
	setup();
	/* Block counts. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 0, dummy_cb, NULL, 0),
			-EINVAL);
	/* Above the max transfer or 65536 blocks: split, not refused (issue 9). */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 257, dummy_cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(g_splits, 1);
	CU_ASSERT_EQUAL(g_submits, 0);
	CU_ASSERT_EQUAL(g_split.split_lba, 0);
	CU_ASSERT_EQUAL(g_split.split_left, 257);
	CU_ASSERT_EQUAL(g_split.payload.size, 257 * 512);
	CU_ASSERT_PTR_EQUAL(g_split.ns, &g_ns);
	g_ns.max_io_sectors = 65536;
	g_ns.num_sectors = 1ull << 40;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 65537, dummy_cb, NULL, 0),
			0);
	CU_ASSERT_EQUAL(g_splits, 2);
	/* One payload must fit in 32 bits. */
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1u << 23, dummy_cb, NULL, 0),
		-EINVAL);
	g_ns.max_io_sectors = 256;
	g_ns.num_sectors = 1000;
	g_splits = 0;
	/* The range. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 1000, 1, dummy_cb, NULL, 0),
			-ERANGE);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 999, 2, dummy_cb, NULL, 0),
			-ERANGE);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, UINT64_MAX, 2, dummy_cb, NULL, 0),
		-ERANGE);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 999, 1, dummy_cb, NULL, 0), 0);
	/* The buffer. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, (uint8_t *)g_buf + 2, 0, 1, dummy_cb,
					     NULL, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, NULL, 0, 1, dummy_cb, NULL, 0),
			-EINVAL);
	/* Flags a read does not take. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL,
					     NVME_IO_FLAGS_DEALLOCATE),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0x5),
			-EINVAL);
	/* A qpair of another controller, the admin queue, an inactive namespace. */
	g_qpair.ctrlr = &g_other_ctrlr;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-EINVAL);
	g_qpair.ctrlr = &g_ctrlr;
	g_qpair.is_admin = true;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-EINVAL);
	g_qpair.is_admin = false;
	g_ns.active = false;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-EINVAL);
	/* ... but not while a reset identifies the namespaces again: it waits for the end */
	atomic_store(&g_ctrlr.resetting, true);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0), 0);
	atomic_store(&g_ctrlr.resetting, false);
	g_ns.active = true;
	/* Errors from the qpair (bad payload found by the transport) pass through. */
	g_submit_rc = -EFAULT;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-EFAULT);
	g_submit_rc = 0;
	CU_ASSERT_EQUAL(g_submits, 3); /* the read at 999, the write in a reset, -EFAULT's */
}

static void
test_request_exhaustion(void)
{
	uint32_t i;

	setup();
	for (i = 0; i < NUM_REQS; i++) {
		CU_ASSERT_PTR_NOT_NULL(nvme_qpair_alloc_request(&g_qpair));
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-ENOMEM);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_flush(&g_ns, &g_qpair, dummy_cb, NULL), -ENOMEM);
	CU_ASSERT_EQUAL(g_submits, 0);
}

static void
test_vectored(void)
{
	setup();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_readv(&g_ns, &g_qpair, 5, 16, dummy_cb, &g_ns, 0,
					      dummy_reset, dummy_next),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_READ);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 15);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_SGL);
	CU_ASSERT_EQUAL(g_last.payload.size, 16 * 512);
	CU_ASSERT_PTR_EQUAL(g_last.payload.sgl_arg, &g_ns); /* the SGL callbacks get cb_arg */
	CU_ASSERT_PTR_EQUAL(g_last.payload.next_sge_fn, dummy_next);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_writev(&g_ns, &g_qpair, 5, 16, dummy_cb, NULL, 0,
					       dummy_reset, dummy_next),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_writev(&g_ns, &g_qpair, 5, 16, dummy_cb, NULL, 0, NULL, dummy_next),
		-EINVAL);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_readv(&g_ns, &g_qpair, 5, 16, dummy_cb, NULL, 0, dummy_reset, NULL),
		-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_readv(&g_ns, &g_qpair, 995, 16, dummy_cb, NULL, 0,
					      dummy_reset, dummy_next),
			-ERANGE);
}

static void
test_write_zeroes(void)
{
	setup();
	/* No data moves: the max transfer does not apply, only the 16-bit count. */
	g_ns.num_sectors = 1u << 20;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_zeroes(&g_ns, &g_qpair, 7, 65536, dummy_cb, NULL,
						     NVME_IO_FLAGS_DEALLOCATE),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_WRITE_ZEROES);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 7);
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 65535u | NVME_IO_FLAGS_DEALLOCATE);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_NONE);
	CU_ASSERT_EQUAL(g_splits, 0);
	/* More than NLB's 16 bits: split (issue 9). */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_zeroes(&g_ns, &g_qpair, 7, 65537, dummy_cb, NULL, 0),
			0);
	CU_ASSERT_EQUAL(g_splits, 1);
	CU_ASSERT_EQUAL(g_split.split_left, 65537);
	CU_ASSERT_EQUAL(g_split.payload.type, NVME_PAYLOAD_NONE);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_write_zeroes(&g_ns, &g_qpair, (1u << 20) - 1, 2, dummy_cb, NULL, 0),
		-ERANGE);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_write_zeroes(&g_ns, &g_qpair, 0, 1, dummy_cb, NULL, 0x1u << 8),
		-EINVAL);
}

static void
test_dsm(void)
{
	struct nvme_dsm_range ranges[NVME_DSM_MAX_RANGES + 1];
	struct nvme_dsm_range *copied;
	uint32_t i;

	setup();
	for (i = 0; i < NVP_COUNTOF(ranges); i++) {
		ranges[i].attributes = 0;
		ranges[i].starting_lba = i;
		ranges[i].length = 1;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair,
							   NVME_DSM_ATTR_DEALLOCATE, ranges, 3,
							   dummy_cb, NULL),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_DATASET_MANAGEMENT);
	CU_ASSERT_EQUAL(g_last.cmd.nsid, 3);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 2);
	CU_ASSERT_EQUAL(g_last.cmd.cdw11, NVME_DSM_ATTR_DEALLOCATE);
	CU_ASSERT_EQUAL(g_last.payload.size, 3 * sizeof(struct nvme_dsm_range));
	/* Copied into a DMA page of the qpair's pool, held by the request. */
	CU_ASSERT_PTR_NOT_NULL(g_last.dma_page);
	CU_ASSERT_PTR_EQUAL(g_last.payload.buf, g_last.dma_page);
	copied = g_last.payload.buf;
	CU_ASSERT_EQUAL(copied[2].starting_lba, 2);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, ranges, 256, dummy_cb, NULL),
		0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw10, 255);
	CU_ASSERT_EQUAL(g_last.payload.size, 4096);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, ranges, 0, dummy_cb, NULL),
		-EINVAL);
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, NULL, 1, dummy_cb, NULL),
		-EINVAL);
	ranges[1].starting_lba = 999;
	ranges[1].length = 2;
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, ranges, 2, dummy_cb, NULL),
		-ERANGE);
}

/* DSM pages come from a small per-qpair pool: exhausted -> -ENOMEM, freed -> reusable. */
static void
test_dsm_pool(void)
{
	struct nvme_dsm_range range = { .starting_lba = 0, .length = 1 };

	setup();
	g_qpair.dsm_free_count = 1;
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, &range, 1, dummy_cb, NULL),
		0);
	CU_ASSERT_PTR_EQUAL(g_last.dma_page, g_dsm_free[0]);
	/* The stub completes (frees) the request at once: the page is back in the pool. */
	CU_ASSERT_EQUAL(g_qpair.dsm_free_count, 1);
	g_qpair.dsm_free_count = 0;
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_cmd_dataset_management(&g_ns, &g_qpair, 0, &range, 1, dummy_cb, NULL),
		-ENOMEM);
	/* The failed call gave its request back: all NUM_REQS requests are still usable. */
	for (int i = 0; i < NUM_REQS; i++) {
		CU_ASSERT_PTR_NOT_NULL(nvme_qpair_alloc_request(&g_qpair));
	}
	CU_ASSERT_PTR_NULL(nvme_qpair_alloc_request(&g_qpair));
}

static void
test_flush_and_raw(void)
{
	struct nvme_cmd cmd;

	setup();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_flush(&g_ns, &g_qpair, dummy_cb, NULL), 0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_FLUSH);
	CU_ASSERT_EQUAL(g_last.cmd.nsid, 3);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_NONE);
	/* Raw: the command as given, the data pointer rebuilt by the driver. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = 0x99;
	cmd.nsid = 77;
	cmd.cdw15 = 0xabcd;
	cmd.dptr.prp.prp1 = 0xdeadbeef;
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_cmd_io_raw(&g_ctrlr, &g_qpair, &cmd, g_buf, 4096, dummy_cb, NULL),
		0);
	CU_ASSERT_EQUAL(g_last.cmd.opc, 0x99);
	CU_ASSERT_EQUAL(g_last.cmd.nsid, 77);
	CU_ASSERT_EQUAL(g_last.cmd.cdw15, 0xabcd);
	CU_ASSERT_EQUAL(g_last.cmd.dptr.prp.prp1, 0);
	CU_ASSERT_EQUAL(g_last.payload.size, 4096);
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_cmd_io_raw(&g_ctrlr, &g_qpair, &cmd, NULL, 0, dummy_cb, NULL), 0);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_NONE);
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_cmd_io_raw(&g_ctrlr, &g_qpair, &cmd, NULL, 512, dummy_cb, NULL),
		-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_io_raw(&g_ctrlr, &g_qpair, &cmd, g_buf, 256 * 1024,
						  dummy_cb, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_cmd_io_raw(&g_other_ctrlr, &g_qpair, &cmd, NULL, 0, dummy_cb, NULL),
		-EINVAL);
}

/* NOIOB: a request crossing the boundary is split, one within it is not. */
static void
test_noiob(void)
{
	setup();
	g_ns.noiob = 8;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 8, 8, dummy_cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(g_submits, 1);
	CU_ASSERT_EQUAL(g_splits, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 7, 2, dummy_cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(g_submits, 1);
	CU_ASSERT_EQUAL(g_splits, 1);
}

/* Separate metadata: never a command with MPTR = 0. */
static void
test_separate_md(void)
{
	static uint32_t md[64];

	setup();
	g_ns.md_size = 8;
	g_ns.md_separate = true;
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 8, dummy_cb, NULL, 0),
			-EINVAL);
	CU_ASSERT(ut_log_has("separate metadata"));
	CU_ASSERT(ut_log_has("_with_md"));
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_writev(&g_ns, &g_qpair, 0, 8, dummy_cb, NULL, 0,
					       dummy_reset, dummy_next),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_compare(&g_ns, &g_qpair, g_buf, 0, 8, dummy_cb, NULL, 0),
			-EINVAL);
	/* PRACT is refused without protection information. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 8, dummy_cb, NULL,
					     NVME_IO_FLAGS_PRACT),
			-EINVAL);
	CU_ASSERT_EQUAL(g_submits, 0);
	/* With a metadata buffer: MPTR is its address; the data payload is data only. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_with_md(&g_ns, &g_qpair, g_buf, md, 4, 8, dummy_cb,
						      NULL, 0, 0xffff, 0x1234),
			0);
	CU_ASSERT_EQUAL(g_submits, 1);
	CU_ASSERT_EQUAL(g_last.cmd.opc, NVME_OPC_WRITE);
	CU_ASSERT_EQUAL(g_last.cmd.mptr, (uintptr_t)md);
	CU_ASSERT_EQUAL(g_last.cmd.cdw15, 0xffff1234u);
	CU_ASSERT_EQUAL(g_last.payload.size, 8 * 512);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_readv_with_md(&g_ns, &g_qpair, 0, 8, dummy_cb, NULL, 0,
						      dummy_reset, dummy_next, md, 0, 0),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.mptr, (uintptr_t)md);
	CU_ASSERT_EQUAL(g_last.payload.type, NVME_PAYLOAD_SGL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read_with_md(&g_ns, &g_qpair, g_buf, (uint8_t *)md + 2, 0,
						     8, dummy_cb, NULL, 0, 0, 0),
			-EINVAL); /* misaligned metadata */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read_with_md(&g_ns, &g_qpair, g_buf, NULL, 0, 8, dummy_cb,
						     NULL, 0, 0, 0),
			-EINVAL);
	/* A large one goes to the split code with its metadata buffer. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read_with_md(&g_ns, &g_qpair, g_buf, md, 0, 300, dummy_cb,
						     NULL, 0, 0, 0),
			0);
	CU_ASSERT_EQUAL(g_splits, 1);
	CU_ASSERT_PTR_EQUAL(g_split.md_buf, md);
	/* Protection information only (8 bytes), PRACT: the controller inserts/strips it. */
	g_ns.pi_type = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 77, 8, dummy_cb, NULL,
					      NVME_IO_FLAGS_PRACT | NVME_IO_FLAGS_PRCHK_REFTAG),
			0);
	CU_ASSERT_EQUAL(g_last.cmd.mptr, 0);
	CU_ASSERT_EQUAL(g_last.cmd.cdw14, 77); /* type 1: reference tag = LBA */
	CU_ASSERT_EQUAL(g_last.cmd.cdw12, 7u | NVME_IO_FLAGS_PRACT | NVME_IO_FLAGS_PRCHK_REFTAG);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 77, 8, dummy_cb, NULL, 0),
			-EINVAL); /* without PRACT the metadata must come from somewhere */
	/* More than 8 bytes of metadata: PRACT does not cover it. */
	g_ns.md_size = 16;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 77, 8, dummy_cb, NULL,
					      NVME_IO_FLAGS_PRACT),
			-EINVAL);
}

/* Extended LBAs (520 bytes): payloads are multiples of 520; no metadata buffer. */
static void
test_extended_md(void)
{
	static uint32_t md[64];

	setup();
	g_ns.md_size = 8;
	g_ns.sector_size = 520;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 3, dummy_cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(g_last.payload.size, 3 * 520);
	CU_ASSERT_EQUAL(g_last.cmd.mptr, 0);
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read_with_md(&g_ns, &g_qpair, g_buf, md, 0, 3, dummy_cb,
						     NULL, 0, 0, 0),
			-EINVAL);
	CU_ASSERT(ut_log_has("no separate metadata"));
	/* PRACT with 8 bytes of protection information: the host moves 512 bytes a block. */
	g_ns.pi_type = 3;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(&g_ns, &g_qpair, g_buf, 0, 3, dummy_cb, NULL,
					      NVME_IO_FLAGS_PRACT),
			0);
	CU_ASSERT_EQUAL(g_last.payload.size, 3 * 512);
	CU_ASSERT_EQUAL(g_last.cmd.cdw14, 0); /* type 3: no reference tag */
}

static void *
foreign_thread(void *arg)
{
	(void)arg;
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(&g_ns, &g_qpair, g_buf, 0, 1, dummy_cb, NULL, 0),
			-EPERM);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_flush(&g_ns, &g_qpair, dummy_cb, NULL), -EPERM);
	return NULL;
}

static void
test_owner_thread(void)
{
	pthread_t t;

	setup();
	pthread_create(&t, NULL, foreign_thread, NULL);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(g_submits, 0);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_ns_cmd", NULL, NULL);
	CU_ADD_TEST(s, test_read_write_encoding);
	CU_ADD_TEST(s, test_write_directive);
	CU_ADD_TEST(s, test_rw_errors);
	CU_ADD_TEST(s, test_request_exhaustion);
	CU_ADD_TEST(s, test_vectored);
	CU_ADD_TEST(s, test_write_zeroes);
	CU_ADD_TEST(s, test_dsm);
	CU_ADD_TEST(s, test_dsm_pool);
	CU_ADD_TEST(s, test_flush_and_raw);
	CU_ADD_TEST(s, test_noiob);
	CU_ADD_TEST(s, test_separate_md);
	CU_ADD_TEST(s, test_extended_md);
	CU_ADD_TEST(s, test_owner_thread);
	return ut_run();
}
