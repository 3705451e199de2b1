/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flexible Data Placement through the driver, against a software controller with
 * fdp=8: the controller's FDP identity, feature and configuration as the driver reads
 * them; the hint set-up choosing placement identifiers; hinted writes that read back
 * intact and each land in the reclaim unit of their own handle (the device's RUH Status
 * shows which units were written, its FDP statistics what was written); RUH Update
 * giving a handle a fresh unit; and FDP switched off, where the same hints are dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define NBLK 64 /* 32 KiB of 512-byte blocks: 8 FTL pages */
#define FDP_EMU "size=4M lba=512 fdp=8 ftl=1 ftl_ppb=16 ftl_op=60"
#define UNIT_BLOCKS (16u * 8u) /* one reclaim unit: 16 pages of 8 blocks */

static int
write_hint_sync(struct fx_ctrlr *fx, void *buf, uint64_t lba, uint32_t n,
		enum nvp_nvme_write_hint hint)
{
	struct fx_cpl c = { 0 };
	int rc;

	rc = nvp_nvme_ns_cmd_write_hint(fx->ns, fx->qpair, buf, lba, n, fx_cpl_cb, &c, 0, hint);
	if (rc != 0) {
		return rc;
	}
	rc = fx_poll_until(fx->qpair, &c.calls, 1, FX_WAIT_MS);
	if (rc != 0) {
		return rc;
	}
	fx_print_cpl("hinted write", &c.cpl);
	return nvme_cpl_is_error(&c.cpl) ? -EIO : 0;
}

static void
write_verify(struct fx_ctrlr *fx, uint64_t lba0, enum nvp_nvme_write_hint hint, uint32_t tag)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(fx->ns);
	uint8_t *buf = fx_dma_alloc((size_t)NBLK * bs);

	fx_pattern_fill(buf, lba0, NBLK, bs, tag);
	CU_ASSERT_EQUAL(write_hint_sync(fx, buf, lba0, NBLK, hint), 0);
	memset(buf, 0, (size_t)NBLK * bs);
	CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_READ, buf, lba0, NBLK, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, lba0, NBLK, bs, tag), -1);
	nvp_env_dma_free(buf);
}

/* RUAMW of each of the 8 handles, in logical blocks. */
static void
ruamw(struct fx_ctrlr *fx, uint64_t *out)
{
	uint8_t buf[16 + 32 * 8];
	const struct nvme_fdp_ruh_status_desc *d = (const void *)(buf + 16);

	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_status(fx->ns, fx->qpair, buf, sizeof(buf), NULL), 0);
	CU_ASSERT_EQUAL(((const struct nvme_fdp_ruh_status *)(const void *)buf)->nruhsd, 8);
	for (uint32_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(d[i].pid, i);
		out[i] = d[i].ruamw;
	}
}

static void
check_identity(struct fx_ctrlr *fx)
{
	struct nvme_fdp_config_desc cfg;
	uint8_t idx = 9;
	bool en = false;

	CU_ASSERT(nvp_nvme_ctrlr_fdp_supported(fx->ctrlr));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_endgid(fx->ns), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_feature(fx->ctrlr, 1, &en, &idx, NULL), 0);
	CU_ASSERT(en);
	CU_ASSERT_EQUAL(idx, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_config(fx->ctrlr, 1, 0, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(cfg.nruh, 8);
	CU_ASSERT_EQUAL(cfg.nrg, 1);
	CU_ASSERT_EQUAL(cfg.runs, 16u * 4096u);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_config(fx->ctrlr, 1, 1, &cfg, NULL), -ENOENT);
}

static void
test_fdp_hints(void)
{
	struct nvme_fdp_stats_log s;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;
	uint64_t room[8];
	uint16_t pid;

	FX_NEEDS_EMU("emu fdp and FTL options");
	if (fx_open(&fx, FDP_EMU) != 0) {
		fx_close(&fx);
		return;
	}
	check_identity(&fx);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(fx.ns), NVP_NVME_PLACEMENT_FDP);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(fx.ns), 4);
	for (uint32_t h = 1; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(fx.ns, (enum nvp_nvme_write_hint)h), h);
	}
	/* every handle starts on a whole unit */
	ruamw(&fx, room);
	for (uint32_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(room[i], UNIT_BLOCKS);
	}
	for (uint32_t h = 0; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
		write_verify(&fx, (uint64_t)h * NBLK, (enum nvp_nvme_write_hint)h, 30 + h);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), 0);
	nvp_emu_ctrlr_get_stats(fx.emu, &st);
	CU_ASSERT_EQUAL(st.placement_writes, 4);
	/* handle 0 (no hint) and 1..4 each filled half a unit of its own; 5..7 untouched */
	ruamw(&fx, room);
	for (uint32_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(room[i], i <= 4 ? UNIT_BLOCKS - NBLK : UNIT_BLOCKS);
	}
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_fdp_get_log(fx.ctrlr, NVME_LOG_FDP_STATS, 1, 0, &s, sizeof(s), NULL),
		0);
	CU_ASSERT_EQUAL(s.hbmw[0], 5u * NBLK * 512u);
	CU_ASSERT_EQUAL(s.mbmw[0], s.hbmw[0]);
	/* RUH Update: handle 2 (medium) moves to a fresh unit */
	pid = 2;
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_update(fx.ns, fx.qpair, &pid, 1, NULL), 0);
	ruamw(&fx, room);
	CU_ASSERT_EQUAL(room[2], UNIT_BLOCKS);
	CU_ASSERT_EQUAL(room[1], UNIT_BLOCKS - NBLK);
	write_verify(&fx, 8 * NBLK, NVP_NVME_WRITE_HINT_MEDIUM, 40);
	ruamw(&fx, room);
	CU_ASSERT_EQUAL(room[2], UNIT_BLOCKS - NBLK);
	fx_close(&fx);
}

/* FDP disabled by Set Features: the set-up finds no placement, hints are dropped. */
static void
test_fdp_disabled(void)
{
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;

	FX_NEEDS_EMU("emu fdp option");
	if (fx_open(&fx, FDP_EMU) != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_set_feature(fx.ctrlr, 1, true, 3, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_set_feature(fx.ctrlr, 1, false, 0, NULL), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(fx.ns), NVP_NVME_PLACEMENT_NONE);
	write_verify(&fx, 0, NVP_NVME_WRITE_HINT_SHORT, 50);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), 1);
	nvp_emu_ctrlr_get_stats(fx.emu, &st);
	CU_ASSERT_EQUAL(st.placement_writes, 0);
	/* on again: placement identifiers again */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_set_feature(fx.ctrlr, 1, true, 0, NULL), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(fx.ns), NVP_NVME_PLACEMENT_FDP);
	write_verify(&fx, 0, NVP_NVME_WRITE_HINT_SHORT, 51);
	nvp_emu_ctrlr_get_stats(fx.emu, &st);
	CU_ASSERT_EQUAL(st.placement_writes, 1);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "fdp_hints", test_fdp_hints },
		{ "fdp_disabled", test_fdp_disabled },
	};

	return fx_main(argc, argv, "nvme_fdp", tests, NVP_COUNTOF(tests));
}
