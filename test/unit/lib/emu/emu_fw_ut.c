/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_fw.c: revision naming, image download rules, commit actions
 * and slots, activation at the next controller reset (firmware slot log and identify FR).
 */
#include "emu_ut_helpers.h"

#define CS(sc) UT_SC(NVME_SCT_COMMAND_SPECIFIC, sc)
#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)

static uint8_t *g_img;
static uint64_t *g_list;

static uint16_t
download(struct ut_host *h, uint32_t off, uint32_t len)
{
	struct nvme_cmd cmd;
	uint64_t prp1, prp2;

	ut_prps(g_img + off, len, g_list, &prp1, &prp2);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD;
	cmd.cdw10 = len / 4 - 1;
	cmd.cdw11 = off / 4;
	cmd.dptr.prp.prp1 = prp1;
	cmd.dptr.prp.prp2 = prp2;
	return ut_admin_st(h, &cmd, NULL);
}

static uint16_t
commit(struct ut_host *h, uint32_t fs, uint32_t ca)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_FIRMWARE_COMMIT, .cdw10 = fs | (ca << 3) };

	return ut_admin_st(h, &cmd, NULL);
}

static void
fw_log(struct ut_host *h, struct nvme_firmware_page *page)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_GET_LOG_PAGE,
				.cdw10 = NVME_GET_LOG_CDW10(NVME_LOG_FIRMWARE_SLOT, 128) };
	void *buf = nvp_env_dma_zmalloc(4096, 4096, NULL);

	cmd.dptr.prp.prp1 = nvp_env_vtophys(buf, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(h, &cmd, NULL), 0);
	memcpy(page, buf, sizeof(*page));
	nvp_env_dma_free(buf);
}

static void
identify_fr(struct ut_host *h, char fr[8])
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_IDENTIFY, .cdw10 = NVME_IDENTIFY_CTRLR };
	struct nvme_ctrlr_data *cd = nvp_env_dma_zmalloc(4096, 4096, NULL);

	cmd.dptr.prp.prp1 = nvp_env_vtophys(cd, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(h, &cmd, NULL), 0);
	memcpy(fr, cd->fr, 8);
	nvp_env_dma_free(cd);
}

/* CC.EN 1 -> 0 -> 1, as a driver's controller reset does. */
static void
reset(struct ut_host *h)
{
	nvp_mmio_write4(&h->c->regs->cc.raw, 0);
	CU_ASSERT(ut_wait_rdy(h->c, 0, 100));
	ut_q_free(&h->q[0]);
	CU_ASSERT_EQUAL(ut_host_enable(h, 32), 0);
}

static void
test_revision(void)
{
	static const uint8_t bin[16] = { 0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 9, 9, 9, 9 };
	char rev[8], expect[9];

	emu_fw_revision((const uint8_t *)"VER2.5.1-extra", 14, rev);
	CU_ASSERT(memcmp(rev, "VER2.5.1", 8) == 0);
	emu_fw_revision(bin, sizeof(bin), rev);
	snprintf(expect, sizeof(expect), "NVP%04X ", nvp_crc32c(~0u, bin, sizeof(bin)) & 0xffff);
	CU_ASSERT(memcmp(rev, expect, 8) == 0);
	emu_fw_revision((const uint8_t *)"1.2", 3, rev); /* too short to be a revision */
	CU_ASSERT(memcmp(rev, "NVP", 3) == 0);
}

static void
test_download_commit_activate(void)
{
	struct ut_host h;
	struct nvme_firmware_page page;
	char fr[8];

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	fw_log(&h, &page);
	CU_ASSERT_EQUAL(page.afi, 0x01);
	CU_ASSERT(memcmp(page.revision[0], "1.0     ", 8) == 0);
	CU_ASSERT_EQUAL(page.revision[1][0], 0);
	memcpy(g_img, "NVPFW2.0", 8);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(download(&h, 4096, 8192), 0);
	CU_ASSERT_EQUAL(h.c->fw_staged, 12288);
	CU_ASSERT_EQUAL(commit(&h, 2, NVME_FW_COMMIT_REPLACE_AND_ENABLE), 0);
	fw_log(&h, &page);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(page.afi), 1);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(page.afi), 2);
	CU_ASSERT(memcmp(page.revision[1], "NVPFW2.0", 8) == 0);
	identify_fr(&h, fr);
	CU_ASSERT(memcmp(fr, "1.0     ", 8) == 0);
	reset(&h);
	fw_log(&h, &page);
	CU_ASSERT_EQUAL(page.afi, 0x02);
	identify_fr(&h, fr);
	CU_ASSERT(memcmp(fr, "NVPFW2.0", 8) == 0);
	/* back to slot 1 with commit action 2 */
	CU_ASSERT_EQUAL(commit(&h, 1, NVME_FW_COMMIT_ENABLE_IMG), 0);
	reset(&h);
	identify_fr(&h, fr);
	CU_ASSERT(memcmp(fr, "1.0     ", 8) == 0);
	ut_host_fini(&h);
}

static void
test_commit_actions_and_errors(void)
{
	struct ut_host h;
	struct nvme_firmware_page page;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "fw_slots=3"), 0);
	CU_ASSERT_EQUAL(commit(&h, 2, NVME_FW_COMMIT_REPLACE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_IMAGE));
	memcpy(g_img, "IMAGE-A ", 8);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(commit(&h, 1, NVME_FW_COMMIT_REPLACE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_SLOT));
	CU_ASSERT_EQUAL(commit(&h, 4, NVME_FW_COMMIT_REPLACE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_SLOT));
	CU_ASSERT_EQUAL(commit(&h, 2, 4), GEN(NVME_SC_INVALID_FIELD));
	/* FS 0: the controller picks the first empty slot */
	CU_ASSERT_EQUAL(commit(&h, 0, NVME_FW_COMMIT_REPLACE_IMG), 0);
	CU_ASSERT_EQUAL(h.c->fw_staged, 0); /* the image was consumed */
	CU_ASSERT_EQUAL(commit(&h, 3, NVME_FW_COMMIT_ENABLE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_IMAGE));
	/* CA 3: stored, armed for the next reset, answered "conventional reset required" */
	memcpy(g_img, "IMAGE-B ", 8);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(commit(&h, 3, NVME_FW_COMMIT_RUN_IMG),
			CS(NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET));
	fw_log(&h, &page);
	CU_ASSERT(memcmp(page.revision[1], "IMAGE-A ", 8) == 0);
	CU_ASSERT(memcmp(page.revision[2], "IMAGE-B ", 8) == 0);
	CU_ASSERT_EQUAL(page.afi, 0x31);
	/* the conventional-reset status is not an error for the error log */
	CU_ASSERT_EQUAL(h.c->err_count, 5);
	reset(&h);
	fw_log(&h, &page);
	CU_ASSERT_EQUAL(page.afi, 0x03);
	/* slot 3 now runs: FS 0 replaces the first inactive slot (2) */
	memcpy(g_img, "IMAGE-C ", 8);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(commit(&h, 0, NVME_FW_COMMIT_REPLACE_IMG), 0);
	fw_log(&h, &page);
	CU_ASSERT(memcmp(page.revision[1], "IMAGE-C ", 8) == 0);
	ut_host_fini(&h);

	/* one slot only: nowhere to put an image */
	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "fw_slots=1"), 0);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(commit(&h, 0, NVME_FW_COMMIT_REPLACE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_SLOT));
	CU_ASSERT_EQUAL(commit(&h, 2, NVME_FW_COMMIT_REPLACE_IMG),
			CS(NVME_SC_INVALID_FIRMWARE_SLOT));
	ut_host_fini(&h);
}

static void
test_download_errors(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0);
	CU_ASSERT_EQUAL(download(&h, 8192, 4096), GEN(NVME_SC_INVALID_FIELD)); /* gap */
	CU_ASSERT_EQUAL(download(&h, 2048, 4096), GEN(NVME_SC_INVALID_FIELD)); /* overlap */
	CU_ASSERT_EQUAL(download(&h, 4096, 4096), 0);
	CU_ASSERT_EQUAL(h.c->fw_staged, 8192);
	CU_ASSERT_EQUAL(download(&h, 0, 4096), 0); /* offset 0 starts over */
	CU_ASSERT_EQUAL(h.c->fw_staged, 4096);
	/* past the 1 MiB staging buffer */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD;
	cmd.cdw10 = 1023;
	cmd.cdw11 = (EMU_FW_STAGING_MAX - 2048) / 4;
	cmd.dptr.prp.prp1 = nvp_env_vtophys(g_img, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), GEN(NVME_SC_INVALID_FIELD));
	cmd.cdw11 = 0xffffffff;
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), GEN(NVME_SC_INVALID_FIELD));
	/* not DMA memory */
	cmd.cdw11 = 0;
	cmd.dptr.prp.prp1 = 0x10000;
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), GEN(NVME_SC_DATA_TRANSFER_ERROR));
	ut_host_fini(&h);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_revision),
		UT_TEST(test_download_commit_activate),
		UT_TEST(test_commit_actions_and_errors),
		UT_TEST(test_download_errors),
	};

	ut_env_init();
	g_img = nvp_env_dma_zmalloc(65536, 4096, NULL);
	g_list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	return ut_run("emu_fw", tests, NVP_COUNTOF(tests));
}
