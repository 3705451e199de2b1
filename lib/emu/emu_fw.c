/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware slots: image download into a staging buffer, commit into a slot, activation
 * at the next controller reset (NVMe 1.4, sections 5.11, 5.12, 5.14.1.3).
 *
 * Slot 1 is read-only and holds the initial revision "1.0". A committed image's
 * revision is its first 8 bytes if they are printable ASCII, else "NVP" and four hex
 * digits of a checksum. FRMW does not claim activation without reset: commit action 3
 * stores the image, arms activation at the next reset and answers
 * FIRMWARE_REQ_CONVENTIONAL_RESET.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

void
emu_fw_init(struct emu_ctrlr *c)
{
	memset(c->fw_rev, 0, sizeof(c->fw_rev));
	nvp_strpad(c->fw_rev[0], EMU_FW_INITIAL_REV, sizeof(c->fw_rev[0]), ' ');
	c->fw_active = 1;
	c->fw_next = 0;
	c->fw_staged = 0;
	c->fw_staging = NULL;
}

void
emu_fw_fini(struct emu_ctrlr *c)
{
	free(c->fw_staging);
	c->fw_staging = NULL;
	c->fw_staged = 0;
}

/* Controller reset: a slot armed for "next reset" becomes the running one. */
void
emu_fw_reset(struct emu_ctrlr *c)
{
	if (c->fw_next != 0) {
		NVP_NOTICELOG("emu %s: firmware slot %u (%.8s) activated", c->opts.name, c->fw_next,
			      c->fw_rev[c->fw_next - 1]);
		c->fw_active = c->fw_next;
		c->fw_next = 0;
	}
}

void
emu_fw_revision(const uint8_t *img, uint32_t len, char rev[8])
{
	bool printable = len >= 8;
	char tmp[9];

	for (uint32_t i = 0; i < 8 && printable; i++) {
		printable = img[i] >= 0x20 && img[i] <= 0x7e;
	}
	if (printable) {
		memcpy(rev, img, 8);
		return;
	}
	snprintf(tmp, sizeof(tmp), "NVP%04X", nvp_crc32c(~0u, img, len) & 0xffffu);
	nvp_strpad(rev, tmp, 8, ' ');
}

static bool
slot_empty(const struct emu_ctrlr *c, uint32_t slot)
{
	static const char zero[8];

	return memcmp(c->fw_rev[slot - 1], zero, sizeof(zero)) == 0;
}

/*
 * Firmware Image Download: CDW10 NUMD (dwords, 0's based), CDW11 OFST (dwords). Pieces
 * must arrive in order without overlap; offset 0 starts a new image.
 */
uint16_t
emu_fw_download(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint64_t len = ((uint64_t)cmd->cdw10 + 1) * 4;
	uint64_t off = (uint64_t)cmd->cdw11 * 4;
	uint16_t st;

	if (off + len > EMU_FW_STAGING_MAX || (off != 0 && off != c->fw_staged)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	st = emu_map_data(c, cmd, len);
	if (st != EMU_ST_OK) {
		return st;
	}
	if (c->fw_staging == NULL) {
		c->fw_staging = malloc(EMU_FW_STAGING_MAX);
		if (c->fw_staging == NULL) {
			return EMU_GEN(NVME_SC_INTERNAL_DEVICE_ERROR);
		}
	}
	emu_sgl_from_host(&c->sgl, c->fw_staging + off, len);
	c->fw_staged = (uint32_t)(off + len);
	return EMU_ST_OK;
}

/* FS = 0 for a replace: the first empty writable slot, else the first inactive one. */
static uint32_t
choose_slot(const struct emu_ctrlr *c)
{
	for (uint32_t s = 2; s <= c->opts.fw_slots; s++) {
		if (slot_empty(c, s)) {
			return s;
		}
	}
	for (uint32_t s = 2; s <= c->opts.fw_slots; s++) {
		if (s != c->fw_active) {
			return s;
		}
	}
	return 0;
}

static uint16_t
store_image(struct emu_ctrlr *c, uint32_t *fs)
{
	if (*fs == 0) {
		*fs = choose_slot(c);
	}
	if (*fs <= 1) { /* slot 1 is read-only (FRMW bit 0) */
		return EMU_CS(NVME_SC_INVALID_FIRMWARE_SLOT);
	}
	if (c->fw_staged == 0) {
		return EMU_CS(NVME_SC_INVALID_FIRMWARE_IMAGE);
	}
	emu_fw_revision(c->fw_staging, c->fw_staged, c->fw_rev[*fs - 1]);
	c->fw_staged = 0;
	if (c->fw_next == *fs) {
		c->fw_next = 0; /* the armed image was replaced */
	}
	return EMU_ST_OK;
}

static uint16_t
arm_slot(struct emu_ctrlr *c, uint32_t fs)
{
	if (fs == 0) {
		fs = c->fw_active;
	}
	if (slot_empty(c, fs)) {
		return EMU_CS(NVME_SC_INVALID_FIRMWARE_IMAGE);
	}
	c->fw_next = (uint8_t)(fs == c->fw_active ? 0 : fs);
	return EMU_ST_OK;
}

/* Firmware Commit: CDW10 FS 2:0, CA 5:3. */
uint16_t
emu_fw_commit(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	union nvme_fw_commit_cdw10 f = { .raw = cmd->cdw10 };
	uint32_t fs = f.bits.fs;
	uint16_t st;

	if (f.bits.ca > NVME_FW_COMMIT_RUN_IMG || f.bits.bpid) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	if (fs > c->opts.fw_slots) {
		return EMU_CS(NVME_SC_INVALID_FIRMWARE_SLOT);
	}
	switch (f.bits.ca) {
	case NVME_FW_COMMIT_REPLACE_IMG:
		return store_image(c, &fs);
	case NVME_FW_COMMIT_REPLACE_AND_ENABLE:
		st = store_image(c, &fs);
		return st != EMU_ST_OK ? st : arm_slot(c, fs);
	case NVME_FW_COMMIT_ENABLE_IMG:
		return arm_slot(c, fs);
	default: /* RUN_IMG: no activation without reset (FRMW bit 4 clear) */
		if (c->fw_staged != 0) {
			st = store_image(c, &fs);
			if (st != EMU_ST_OK) {
				return st;
			}
		}
		st = arm_slot(c, fs);
		if (st != EMU_ST_OK) {
			return st;
		}
		return EMU_ST_RETRY(NVME_SCT_COMMAND_SPECIFIC,
				    NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET);
	}
}

void
emu_fw_build_log(const struct emu_ctrlr *c, struct nvme_firmware_page *page)
{
	memset(page, 0, sizeof(*page));
	page->afi = (uint8_t)((c->fw_active & 0x7u) | ((c->fw_next & 0x7u) << 4));
	for (uint32_t s = 1; s <= c->opts.fw_slots; s++) {
		memcpy(page->revision[s - 1], c->fw_rev[s - 1], 8);
	}
}
