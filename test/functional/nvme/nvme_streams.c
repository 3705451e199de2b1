/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Directives and write lifetime hints through the driver: Streams enabled, allocated and
 * written on a software controller that offers them (the stream of each write seen in
 * the controller's counters and its FTL log page), fewer streams than hint classes, and
 * the fallback on a controller without directives: the hint set-up sends nothing, hinted
 * writes go out as plain writes, land, and are counted as dropped. The fallback test
 * also runs against a real controller (NVP_TEST_TRID, the QEMU judge).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define NBLK 64

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

/* Write up to NBLK blocks (one command) at @lba0 with @hint, read them back. */
static void
write_verify(struct fx_ctrlr *fx, uint64_t lba0, enum nvp_nvme_write_hint hint, uint32_t tag)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(fx->ns);
	uint32_t n = NVP_MIN(NBLK, nvp_nvme_ns_get_max_io_xfer_size(fx->ns) / bs);
	uint8_t *buf = fx_dma_alloc((size_t)NBLK * bs);

	fx_pattern_fill(buf, lba0, n, bs, tag);
	CU_ASSERT_EQUAL(write_hint_sync(fx, buf, lba0, n, hint), 0);
	memset(buf, 0, (size_t)n * bs);
	CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_READ, buf, lba0, n, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, lba0, n, bs, tag), -1);
	nvp_env_dma_free(buf);
}

static void
ftl_log(struct fx_ctrlr *fx, struct nvp_emu_ftl_log *l)
{
	memset(l, 0, sizeof(*l));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(fx->ctrlr, NVP_EMU_LOG_FTL,
						    nvp_nvme_ns_get_id(fx->ns), l, sizeof(*l), 0,
						    NULL),
			0);
}

static void
test_streams_hints(void)
{
	struct nvme_dir_identify_params id;
	struct nvme_dir_streams_params p;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct nvp_emu_ftl_log l;
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("emu streams and FTL options");
	if (fx_open(&fx, "size=4M lba=512 streams=8 ftl=1 ftl_ppb=16 ftl_op=40") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT(nvp_nvme_ctrlr_get_data(fx.ctrlr)->oacs & NVME_OACS_DIRECTIVES);
	/* before set-up: a hint is a plain write, counted */
	write_verify(&fx, 0, NVP_NVME_WRITE_HINT_LONG, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), 1);

	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(fx.ns), NVP_NVME_PLACEMENT_STREAMS);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(fx.ns), 4);
	CU_ASSERT_EQUAL(nvp_nvme_ns_identify_directives(fx.ns, &id, NULL), 0);
	CU_ASSERT_EQUAL(id.supported[0], 0x3);
	CU_ASSERT_EQUAL(id.enabled[0], 0x3);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_get_params(fx.ns, &p, NULL), 0);
	CU_ASSERT_EQUAL(p.msl, 8);
	CU_ASSERT_EQUAL(p.nsa, 4);
	CU_ASSERT_EQUAL(p.nssa, 4);
	CU_ASSERT_EQUAL(p.sws, 8); /* a 4 KiB page of 512-byte blocks */
	CU_ASSERT_EQUAL(p.sgs, 16);

	for (uint32_t h = 0; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
		write_verify(&fx, 64 + (uint64_t)h * NBLK, (enum nvp_nvme_write_hint)h, 10 + h);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), 1);
	nvp_emu_ctrlr_get_stats(fx.emu, &st);
	CU_ASSERT_EQUAL(st.stream_writes, 4);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_get_params(fx.ns, &p, NULL), 0);
	CU_ASSERT_EQUAL(p.nso, 4); /* each class opened its stream */
	ftl_log(&fx, &l);
	CU_ASSERT_EQUAL(memcmp(l.signature, NVP_EMU_FTL_LOG_SIGNATURE, 4), 0);
	CU_ASSERT_EQUAL(l.host_pages, 6 * NBLK / 8);
	CU_ASSERT_EQUAL(l.stream_pages, 4 * NBLK / 8);
	CU_ASSERT_EQUAL(l.host_pages, st.ftl_host_pages);
	CU_ASSERT_EQUAL(l.nand_pages, st.ftl_nand_pages);
	fx_close(&fx);
}

/* Two streams for four classes: still streams, the map spreads them. */
static void
test_fewer_streams(void)
{
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("emu streams option");
	if (fx_open(&fx, "size=4M lba=4096 streams=2") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(fx.ns), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(fx.ns, NVP_NVME_WRITE_HINT_SHORT), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(fx.ns, NVP_NVME_WRITE_HINT_LONG), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(fx.ns, NVP_NVME_WRITE_HINT_EXTREME), 0);
	write_verify(&fx, 0, NVP_NVME_WRITE_HINT_MEDIUM, 3);
	write_verify(&fx, NBLK, NVP_NVME_WRITE_HINT_LONG, 4);
	write_verify(&fx, 2 * NBLK, NVP_NVME_WRITE_HINT_EXTREME, 5); /* default stream */
	nvp_emu_ctrlr_get_stats(fx.emu, &st);
	CU_ASSERT_EQUAL(st.stream_writes, 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), 0);
	/* a raw write naming a stream the namespace never got is refused by the device */
	{
		uint8_t *buf = fx_dma_alloc(4096);
		struct nvme_cpl cpl;
		struct fx_cpl c = { 0 };

		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_directive(fx.ns, fx.qpair, buf, 0, 1,
								fx_cpl_cb, &c,
								NVME_IO_FLAGS_DTYPE_STREAMS, 3),
				0);
		CU_ASSERT_EQUAL(fx_poll_until(fx.qpair, &c.calls, 1, FX_WAIT_MS), 0);
		cpl = c.cpl;
		FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		nvp_env_dma_free(buf);
	}
	fx_close(&fx);
}

/*
 * No directives: the set-up sends no command, hinted writes land as plain writes and are
 * counted. On a real controller the same must hold whenever it offers no streams.
 */
static void
test_no_directives_fallback(void)
{
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	struct fx_ctrlr fx;
	bool directives;

	if (fx_open(&fx, "size=4M lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	directives = (nvp_nvme_ctrlr_get_data(fx.ctrlr)->oacs & NVME_OACS_DIRECTIVES) != 0;
	if (fx_is_emu(&fx)) {
		CU_ASSERT(!directives);
		CU_ASSERT(!nvp_nvme_ctrlr_fdp_supported(fx.ctrlr));
		nvp_emu_ctrlr_get_stats(fx.emu, &before);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(fx.ns, 0), 0);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &after);
		CU_ASSERT_EQUAL(after.admin_cmds, before.admin_cmds); /* nothing was sent */
	}
	printf("\n  controller: directives %s, placement %s, %u streams\n",
	       directives ? "yes" : "no",
	       nvp_nvme_ns_get_placement(fx.ns) == NVP_NVME_PLACEMENT_STREAMS ? "streams" : "none",
	       nvp_nvme_ns_get_num_streams(fx.ns));
	if (nvp_nvme_ns_get_placement(fx.ns) != NVP_NVME_PLACEMENT_NONE) {
		fx_close(&fx); /* a real controller with streams: the other tests cover it */
		return;
	}
	for (uint32_t h = 0; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
		write_verify(&fx, (uint64_t)h * NBLK, (enum nvp_nvme_write_hint)h, 20 + h);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(fx.ns), NVP_NVME_WRITE_HINT_COUNT - 1);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &after);
		CU_ASSERT_EQUAL(after.stream_writes, 0);
	}
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "streams_hints", test_streams_hints },
		{ "fewer_streams", test_fewer_streams },
		{ "no_directives_fallback", test_no_directives_fallback },
	};

	return fx_main(argc, argv, "nvme_streams", tests, NVP_COUNTOF(tests));
}
