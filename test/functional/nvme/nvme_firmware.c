/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware image download and commit (sections 5.11, 5.12): an image committed to slot 2
 * with "replace and enable" is listed in the firmware slot log as the slot for the next
 * reset, becomes the active slot after nvp_nvme_ctrlr_reset(), and its revision (the
 * first 8 bytes of the image) shows in identify FR. Slot 1 is read-only; slots beyond
 * FRMW's count are invalid; a commit with no image downloaded is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static void
get_fw_log(struct nvp_nvme_ctrlr *ctrlr, struct nvme_firmware_page *fw)
{
	memset(fw, 0xcc, sizeof(*fw));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_FIRMWARE_SLOT,
						    NVME_GLOBAL_NS_TAG, fw, sizeof(*fw), 0, NULL),
			0);
}

static bool
slot_empty(const struct nvme_firmware_page *fw, unsigned int slot)
{
	static const char zero[8];

	return memcmp(fw->revision[slot - 1], zero, 8) == 0;
}

/* An image of @size bytes whose first 8 bytes are the revision @rev. */
static uint8_t *
make_image(const char rev[8], size_t size)
{
	uint8_t *img = fx_dma_alloc(size);
	size_t i;

	for (i = 0; i < size; i++) {
		img[i] = (uint8_t)(i * 13 + 7);
	}
	memcpy(img, rev, 8);
	return img;
}

static void
test_download_commit_reset(void)
{
	struct nvme_firmware_page fw;
	struct nvme_ctrlr_data *cd;
	char old_fr[8];
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *img, *buf;

	if (fx_open(&fx, "size=4M,fw_slots=3") != 0) {
		fx_close(&fx);
		return;
	}
	memcpy(old_fr, nvp_nvme_ctrlr_get_data(fx.ctrlr)->fr, 8);

	/* Before: slot 1 active, holding the running revision; slot 2 empty. */
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 0);
	CU_ASSERT_EQUAL(memcmp(fw.revision[0], old_fr, 8), 0);
	CU_ASSERT(slot_empty(&fw, 2));
	CU_ASSERT(slot_empty(&fw, 3));

	/* A 192 KiB image: more than one 128 KiB transfer, so the driver splits it. */
	img = make_image("NVPFW002", 192 * 1024);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(fx.ctrlr, img, 192 * 1024, &cpl), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 2, NVME_FW_COMMIT_REPLACE_AND_ENABLE, &cpl), 0);
	fx_print_cpl("fw commit", &cpl);

	/* Committed: slot 2 holds the image and is next; slot 1 still runs. */
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 2);
	CU_ASSERT_EQUAL(memcmp(fw.revision[1], "NVPFW002", 8), 0);
	CU_ASSERT_EQUAL(memcmp(fw.revision[0], old_fr, 8), 0);

	/* Activation happens at reset. */
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 2);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 0);
	CU_ASSERT_EQUAL(memcmp(fw.revision[1], "NVPFW002", 8), 0);

	/* Identify FR names the running firmware: from the device and in the driver's copy
	 * (reset re-reads identify data). */
	cd = fx_dma_alloc(sizeof(*cd));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_CTRLR, 0, cd, sizeof(*cd), NULL),
		0);
	CU_ASSERT_EQUAL(memcmp(cd->fr, "NVPFW002", 8), 0);
	CU_ASSERT_EQUAL(memcmp(nvp_nvme_ctrlr_get_data(fx.ctrlr)->fr, "NVPFW002", 8), 0);
	nvp_env_dma_free(cd);

	/* The I/O qpair was re-created by the reset and works. */
	buf = fx_dma_alloc(4096);
	fx_pattern_fill(buf, 3, 1, 512, 0x81);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 3, 1, 0, NULL), 0);
	memset(buf, 0, 512);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 3, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 3, 1, 512, 0x81) < 0);

	nvp_env_dma_free(buf);
	nvp_env_dma_free(img);
	fx_close(&fx);
}

/* Replace without enabling, then enable the slot on its own. */
static void
test_replace_then_enable(void)
{
	struct nvme_firmware_page fw;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *img;

	if (fx_open(&fx, "size=4M,fw_slots=3") != 0) {
		fx_close(&fx);
		return;
	}
	img = make_image("NVPFW003", 8192);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(fx.ctrlr, img, 8192, &cpl), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 3, NVME_FW_COMMIT_REPLACE_IMG, &cpl), 0);
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(memcmp(fw.revision[2], "NVPFW003", 8), 0);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 0);

	/* A reset without an enabled slot keeps slot 1. */
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);

	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 3, NVME_FW_COMMIT_ENABLE_IMG, &cpl), 0);
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 3);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 3);
	CU_ASSERT_EQUAL(memcmp(nvp_nvme_ctrlr_get_data(fx.ctrlr)->fr, "NVPFW003", 8), 0);

	/* Back to the read-only slot 1 (enabling an existing image there is allowed). */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 1, NVME_FW_COMMIT_ENABLE_IMG, &cpl), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);

	nvp_env_dma_free(img);
	fx_close(&fx);
}

static void
test_invalid(void)
{
	struct nvme_firmware_page fw;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *img;

	if (fx_open(&fx, "size=4M,fw_slots=3") != 0) {
		fx_close(&fx);
		return;
	}

	/* Nothing downloaded yet: Invalid Firmware Image. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 2, NVME_FW_COMMIT_REPLACE_AND_ENABLE, &cpl),
		-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FIRMWARE_IMAGE);

	img = make_image("NVPFWBAD", 4096);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(fx.ctrlr, img, 4096, &cpl), 0);

	/* Slot 1 is read-only (FRMW bit 0): Invalid Firmware Slot. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 1, NVME_FW_COMMIT_REPLACE_IMG, &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FIRMWARE_SLOT);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 1, NVME_FW_COMMIT_REPLACE_AND_ENABLE, &cpl),
		-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FIRMWARE_SLOT);

	/* Slots past the three supported: Invalid Firmware Slot. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 5, NVME_FW_COMMIT_REPLACE_IMG, &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FIRMWARE_SLOT);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(fx.ctrlr, 7, NVME_FW_COMMIT_ENABLE_IMG, &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FIRMWARE_SLOT);

	/* None of that changed the slots. */
	get_fw_log(fx.ctrlr, &fw);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(fw.afi), 1);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(fw.afi), 0);
	CU_ASSERT(slot_empty(&fw, 2));
	CU_ASSERT_EQUAL(memcmp(fw.revision[0], nvp_nvme_ctrlr_get_data(fx.ctrlr)->fr, 8), 0);

	/* Image sizes the command cannot express. */
	CU_ASSERT(nvp_nvme_ctrlr_fw_download(fx.ctrlr, img, 0, &cpl) < 0);
	CU_ASSERT(nvp_nvme_ctrlr_fw_download(fx.ctrlr, img, 4094, &cpl) < 0);
	CU_ASSERT(nvp_nvme_ctrlr_fw_download(fx.ctrlr, NULL, 4096, &cpl) < 0);

	nvp_env_dma_free(img);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "download_commit_reset", test_download_commit_reset },
		{ "replace_then_enable", test_replace_then_enable },
		{ "invalid", test_invalid },
	};

	return fx_main(argc, argv, "nvme_firmware", tests, NVP_COUNTOF(tests));
}
