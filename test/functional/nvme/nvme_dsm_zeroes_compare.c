/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVM commands besides read and write: dataset management (deallocate), write
 * zeroes, compare (match and mismatch), flush; LBA range checks in the driver (-ERANGE)
 * and in the device (LBA Out of Range, seen through raw commands that skip the driver's
 * checks); an unknown I/O opcode.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define NBLK 256

/* Write NBLK blocks of pattern @tag from LBA 0. */
static void
fill_ns(struct fx_ctrlr *fx, uint8_t *buf, uint32_t bs, uint32_t tag)
{
	uint32_t per = nvp_nvme_ns_get_max_io_xfer_size(fx->ns) / bs;
	uint32_t lba;

	fx_pattern_fill(buf, 0, NBLK, bs, tag);
	for (lba = 0; lba < NBLK; lba += per) {
		uint32_t n = NVP_MIN(per, NBLK - lba);

		CU_ASSERT_EQUAL(
			fx_io(fx->ns, fx->qpair, FX_WRITE, buf + (size_t)lba * bs, lba, n, 0, NULL),
			0);
	}
}

/* Read NBLK blocks from LBA 0 into @buf. */
static void
read_ns(struct fx_ctrlr *fx, uint8_t *buf, uint32_t bs)
{
	uint32_t per = nvp_nvme_ns_get_max_io_xfer_size(fx->ns) / bs;
	uint32_t lba;

	memset(buf, 0xee, (size_t)NBLK * bs);
	for (lba = 0; lba < NBLK; lba += per) {
		uint32_t n = NVP_MIN(per, NBLK - lba);

		CU_ASSERT_EQUAL(
			fx_io(fx->ns, fx->qpair, FX_READ, buf + (size_t)lba * bs, lba, n, 0, NULL),
			0);
	}
}

/* Blocks marked in @zero read as zeroes; every other block of [0, NBLK) has pattern @tag. */
static void
check_zero_range(const uint8_t *buf, uint32_t bs, uint32_t tag, const bool *zero)
{
	uint32_t lba;

	for (lba = 0; lba < NBLK; lba++) {
		const uint8_t *b = buf + (size_t)lba * bs;

		if (zero[lba]) {
			if (!fx_is_zero(b, bs)) {
				fprintf(stderr, "  lba %u should read as zeroes\n", lba);
				CU_FAIL("block not zero");
				return;
			}
		} else if (fx_pattern_check(b, lba, 1, bs, tag) >= 0) {
			fprintf(stderr, "  lba %u should be untouched\n", lba);
			CU_FAIL("block changed");
			return;
		}
	}
}

static int
dsm_sync(struct fx_ctrlr *fx, uint32_t attributes, const struct nvme_dsm_range *ranges, uint16_t n,
	 struct nvme_cpl *cpl)
{
	struct fx_cpl c = { 0 };
	int rc;

	rc = nvp_nvme_ns_cmd_dataset_management(fx->ns, fx->qpair, attributes, ranges, n, fx_cpl_cb,
						&c);
	if (rc != 0) {
		return rc;
	}
	rc = fx_poll_until(fx->qpair, &c.calls, 1, FX_WAIT_MS);
	if (rc != 0) {
		return rc;
	}
	fx_poll_for(fx->qpair, 2);
	CU_ASSERT_EQUAL(c.calls, 1);
	if (cpl != NULL) {
		*cpl = c.cpl;
	}
	return nvme_cpl_is_error(&c.cpl) ? -EIO : 0;
}

static void
dsm_deallocate(const char *emu_opts, uint32_t want_bs)
{
	static struct nvme_dsm_range many[NVME_DSM_MAX_RANGES + 1];
	static bool zero[NBLK];
	struct nvme_dsm_range r[3];
	const struct nvme_ns_data *nd;
	struct fx_ctrlr fx;
	uint8_t *buf;
	uint32_t bs;
	unsigned int i;

	if (fx_open(&fx, emu_opts) != 0 || fx_skip_unless_bs(&fx, want_bs)) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	nd = nvp_nvme_ns_get_data(fx.ns);
	/* The controller promises zeroes for deallocated blocks, and supports DSM. */
	CU_ASSERT_EQUAL(nd->dlfeat & 0x7, NVME_DLFEAT_READ_ZEROES);
	CU_ASSERT(nvp_nvme_ctrlr_get_data(fx.ctrlr)->oncs & NVME_ONCS_DSM);
	buf = fx_dma_alloc((size_t)NBLK * bs);

	fill_ns(&fx, buf, bs, 0x21);
	memset(r, 0, sizeof(r));
	r[0].starting_lba = 10;
	r[0].length = 20;
	r[1].starting_lba = 100;
	r[1].length = 1;
	r[2].starting_lba = 200;
	r[2].length = 56;
	CU_ASSERT_EQUAL(dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, r, 3, NULL), 0);
	memset(zero, 0, sizeof(zero));
	for (i = 10; i < 30; i++) {
		zero[i] = true;
	}
	zero[100] = true;
	for (i = 200; i < 256; i++) {
		zero[i] = true;
	}
	read_ns(&fx, buf, bs);
	check_zero_range(buf, bs, 0x21, zero);

	/* Without the deallocate attribute DSM is a hint: data stays. */
	fill_ns(&fx, buf, bs, 0x22);
	CU_ASSERT_EQUAL(dsm_sync(&fx, NVME_DSM_ATTR_INTEGRAL_READ, r, 3, NULL), 0);
	memset(zero, 0, sizeof(zero));
	read_ns(&fx, buf, bs);
	check_zero_range(buf, bs, 0x22, zero);

	/* The largest number of ranges: every even block. */
	fill_ns(&fx, buf, bs, 0x23);
	for (i = 0; i < NVME_DSM_MAX_RANGES; i++) {
		many[i].attributes = 0;
		many[i].starting_lba = 2 * (i % (NBLK / 2));
		many[i].length = 1;
		zero[2 * (i % (NBLK / 2))] = true;
	}
	CU_ASSERT_EQUAL(dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, many, NVME_DSM_MAX_RANGES, NULL),
			0);
	read_ns(&fx, buf, bs);
	check_zero_range(buf, bs, 0x23, zero);

	/* A range past the end: refused by the driver or by the device, never applied. */
	{
		struct nvme_dsm_range past = { 0 };
		struct nvme_cpl cpl;
		int rc;

		past.starting_lba = nvp_nvme_ns_get_num_sectors(fx.ns) - 1;
		past.length = 2;
		memset(&cpl, 0, sizeof(cpl));
		rc = dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, &past, 1, &cpl);
		if (rc == -EIO) {
			FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
		} else {
			CU_ASSERT_EQUAL(rc, -ERANGE);
		}
	}

	/* Range counts the command cannot carry. */
	CU_ASSERT_EQUAL(dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, many, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(
		dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, many, NVME_DSM_MAX_RANGES + 1, NULL),
		-EINVAL);
	CU_ASSERT_EQUAL(dsm_sync(&fx, NVME_DSM_ATTR_DEALLOCATE, NULL, 1, NULL) < 0, 1);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_dsm_deallocate_512(void)
{
	dsm_deallocate("size=4M,lba=512", 512);
}

static void
test_dsm_deallocate_4k(void)
{
	dsm_deallocate("size=4M,lba=4096", 4096);
}

static void
test_write_zeroes(void)
{
	static bool zero[NBLK];
	struct fx_ctrlr fx;
	uint8_t *buf;
	uint32_t bs, i, big;

	if (fx_open(&fx, "size=8M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT(nvp_nvme_ctrlr_get_data(fx.ctrlr)->oncs & NVME_ONCS_WRITE_ZEROES);
	buf = fx_dma_alloc((size_t)NBLK * bs);

	fill_ns(&fx, buf, bs, 0x31);
	memset(zero, 0, sizeof(zero));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 10, 20, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 255, 1, 0, NULL), 0);
	/* With DEAC the blocks may be deallocated; they still read as zeroes. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 100, 7,
			      NVME_IO_FLAGS_DEALLOCATE, NULL),
			0);
	for (i = 10; i < 30; i++) {
		zero[i] = true;
	}
	for (i = 100; i < 107; i++) {
		zero[i] = true;
	}
	zero[255] = true;
	read_ns(&fx, buf, bs);
	check_zero_range(buf, bs, 0x31, zero);

	/* Write zeroes moves no data, so MDTS does not limit it: 1 MiB in one command. */
	big = (1u << 20) / bs;
	CU_ASSERT(big * bs > nvp_nvme_ctrlr_get_max_xfer_size(fx.ctrlr));
	fill_ns(&fx, buf, bs, 0x32);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 0, big, 0, NULL), 0);
	for (i = 0; i < NBLK; i++) {
		zero[i] = true;
	}
	read_ns(&fx, buf, bs);
	check_zero_range(buf, bs, 0x32, zero);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
compare(const char *emu_opts, uint32_t want_bs)
{
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint32_t bs;

	if (fx_open(&fx, emu_opts) != 0 || fx_skip_unless_bs(&fx, want_bs)) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT(nvp_nvme_ctrlr_get_data(fx.ctrlr)->oncs & NVME_ONCS_COMPARE);
	buf = fx_dma_alloc(8 * bs + 4096);

	fx_pattern_fill(buf, 50, 8, bs, 0x41);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 50, 8, 0, NULL), 0);

	/* Same data: success. */
	memset(&cpl, 0xff, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 50, 8, 0, &cpl), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));

	/* One byte different in the last block: Compare Failure (media error type). */
	buf[7 * bs + bs / 2] ^= 0x01;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 50, 8, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_MEDIA_ERROR, NVME_SC_COMPARE_FAILURE);
	buf[7 * bs + bs / 2] ^= 0x01;

	/* The right data at the wrong LBA. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 51, 7, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_MEDIA_ERROR, NVME_SC_COMPARE_FAILURE);

	/* A partial match: only the first block. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 50, 1, 0, &cpl), 0);

	/* Unwritten blocks equal a zero buffer (a real disk's blocks may hold old data:
	 * zero them first). */
	if (!fx_is_emu(&fx)) {
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 1000, 8, 0, NULL), 0);
	}
	memset(buf, 0, 8 * bs);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 1000, 8, 0, &cpl), 0);

	/* Compare from a buffer at a dword offset crossing a page. */
	fx_pattern_fill(buf + 4092, 50, 2, bs, 0x41);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf + 4092, 50, 2, 0, &cpl), 0);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_compare_512(void)
{
	compare("size=4M,lba=512", 512);
}

static void
test_compare_4k(void)
{
	compare("size=8M,lba=4096", 4096);
}

/* Raw command for @opc at @slba with @nlb blocks (NLB is 0's based in CDW12). */
static void
raw_range_cmd(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->nsid = nsid;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (nlb - 1) & 0xffff;
}

static void
test_out_of_range(void)
{
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint64_t nsze;
	uint32_t bs, nsid;
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };

	if (fx_open(&fx, "size=4M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	nsze = nvp_nvme_ns_get_num_sectors(fx.ns);
	nsid = nvp_nvme_ns_get_id(fx.ns);
	buf = fx_dma_alloc(16 * bs);

	/* The driver checks the range before building a command. */
	memset(&before, 0, sizeof(before));
	before.info_size = sizeof(before);
	memset(&after, 0, sizeof(after));
	after.info_size = sizeof(after);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &before);
	}
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, nsze, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, nsze - 1, 2, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, nsze - 3, 4, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, nsze, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, nsze - 1, 2, 0, NULL),
			-ERANGE);
	/* LBA + count wrapping around 2^64 is out of range too. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, UINT64_MAX, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, UINT64_MAX - 1, 4, 0, NULL), -ERANGE);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &after);
	}
	CU_ASSERT_EQUAL(after.io_cmds, before.io_cmds);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx.qpair), 0);

	/* The last block is in range. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, nsze - 1, 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, nsze - 16, 16, 0, NULL), 0);

	/* Raw commands reach the device, which answers LBA Out of Range. */
	raw_range_cmd(&cmd, NVME_OPC_READ, nsid, nsze, 1);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, bs, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);

	raw_range_cmd(&cmd, NVME_OPC_WRITE, nsid, nsze - 1, 2);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, 2 * bs, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);

	raw_range_cmd(&cmd, NVME_OPC_WRITE_ZEROES, nsid, UINT64_MAX, 1);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);

	raw_range_cmd(&cmd, NVME_OPC_COMPARE, nsid, nsze + 1000, 1);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, bs, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);

	/* In range through the raw path: success. */
	raw_range_cmd(&cmd, NVME_OPC_READ, nsid, nsze - 2, 2);
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, 2 * bs, &cpl), 0);

	/* The out-of-range data went nowhere: the last block still has its data. */
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_flush_and_unknown_opcode(void)
{
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	if (fx_open(&fx, "size=4M,vwc=1") != 0) {
		fx_close(&fx);
		return;
	}
	if (!fx_is_emu(&fx)) {
		printf("  vwc %u\n", nvp_nvme_ctrlr_get_data(fx.ctrlr)->vwc);
	}
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_FLUSH, NULL, 0, 0, 0, &cpl), 0);

	/* A reserved NVM opcode with no data: Invalid Command Opcode. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = 0x7c;
	cmd.nsid = nvp_nvme_ns_get_id(fx.ns);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);

	/* A raw read with no buffer: refused by the driver, or sent with PRP1 = 0, which
	 * the device must reject (its "IOMMU" check) with an error status, not a crash.
	 * Never to a real device: PRP1 = 0 would be DMA to bus address 0. */
	if (fx_is_emu(&fx)) {
		struct nvp_emu_stats before = { .info_size = sizeof(before) };
		struct nvp_emu_stats after = { .info_size = sizeof(after) };
		int rc;

		nvp_emu_ctrlr_get_stats(fx.emu, &before);
		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_OPC_READ;
		cmd.nsid = 1;
		memset(&cpl, 0, sizeof(cpl));
		rc = fx_io_raw(fx.ctrlr, fx.qpair, &cmd, NULL, 0, &cpl);
		nvp_emu_ctrlr_get_stats(fx.emu, &after);
		fx.dma_rejects_expected = after.dma_rejects;
		if (rc == -EIO) {
			fx_print_cpl("read without a buffer", &cpl);
			CU_ASSERT(after.dma_rejects > before.dma_rejects);
		} else {
			CU_ASSERT(rc < 0);
			CU_ASSERT_EQUAL(after.io_cmds, before.io_cmds);
		}
	}

	/* The qpair carries on. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_FLUSH, NULL, 0, 0, 0, &cpl), 0);
	fx_close(&fx);

	/* Without a volatile write cache flush still succeeds. */
	FX_NEEDS_EMU("a controller without a volatile write cache (vwc=0)");
	if (fx_open(&fx, "size=4M,vwc=0") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_FLUSH, NULL, 0, 0, 0, &cpl), 0);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "dsm_deallocate_512", test_dsm_deallocate_512 },
		{ "dsm_deallocate_4k", test_dsm_deallocate_4k },
		{ "write_zeroes", test_write_zeroes },
		{ "compare_512", test_compare_512 },
		{ "compare_4k", test_compare_4k },
		{ "out_of_range", test_out_of_range },
		{ "flush_and_unknown_opcode", test_flush_and_unknown_opcode },
	};

	return fx_main(argc, argv, "nvme_dsm_zeroes_compare", tests, NVP_COUNTOF(tests));
}
