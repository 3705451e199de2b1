/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_fdp.c through the register page: the FDP identify fields,
 * Set/Get Features FDP, the four FDP log pages, I/O Management Receive (RUH Status) and
 * Send (RUH Update), writes with DTYPE 2 landing in their handle's erase block of the
 * FTL model, invalid placement identifiers as events, and a controller without FDP
 * refusing all of it.
 */
#include "emu_ut_helpers.h"

#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)
#define CS(sc) UT_SC(NVME_SCT_COMMAND_SPECIFIC, sc)
#define FDP_OPTS "size=1M lba=4096 ftl=1 ftl_ppb=16 ftl_op=100 fdp=4"

static uint8_t *g_buf;
static uint64_t *g_list;

static uint16_t
admin(struct ut_host *h, uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw12,
      uint32_t len, uint32_t *dw0)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };
	uint16_t st;

	memset(&cmd, 0, sizeof(cmd));
	memset(g_buf, 0xee, 8192);
	cmd.opc = opc;
	cmd.nsid = nsid;
	if (len != 0) {
		ut_prps(g_buf, len, g_list, &cmd.dptr.prp.prp1, &cmd.dptr.prp.prp2);
	}
	cmd.cdw10 = cdw10;
	cmd.cdw11 = cdw11;
	cmd.cdw12 = cdw12;
	st = ut_admin_st(h, &cmd, &cpl);
	if (dw0 != NULL) {
		*dw0 = cpl.cdw0;
	}
	return st;
}

/* Get Log Page @lid for endurance group @endgid, @len bytes into g_buf. */
static uint16_t
fdp_log(struct ut_host *h, uint8_t lid, uint16_t endgid, uint32_t lsp, uint32_t len)
{
	return admin(h, NVME_OPC_GET_LOG_PAGE, 0, NVME_GET_LOG_CDW10(lid, len / 4) | lsp << 8,
		     NVME_GET_LOG_CDW11(len / 4) | NVME_GET_LOG_CDW11_LSI(endgid), 0, len, NULL);
}

static uint16_t
io(struct ut_host *h, struct nvme_cmd *cmd)
{
	struct nvme_cpl cpl;

	if (ut_cmd(h, 1, cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

/* Write @nlb 4 KiB blocks at @slba with DTYPE/DSPEC. */
static uint16_t
write_dir(struct ut_host *h, uint64_t slba, uint32_t nlb, uint32_t dtype, uint16_t dspec)
{
	struct nvme_cmd cmd;
	uint64_t prp1, prp2;

	ut_prps(g_buf + 8192, (uint64_t)nlb * 4096, g_list, &prp1, &prp2);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, slba, nlb, prp1, prp2);
	cmd.cdw12 |= dtype << NVME_IO_FLAGS_DTYPE_SHIFT;
	cmd.cdw13 = (uint32_t)dspec << NVME_IO_FLAGS_DSPEC_SHIFT;
	return io(h, &cmd);
}

static uint16_t
ruh_status(struct ut_host *h, uint32_t nsid, uint32_t mo, uint32_t len)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	memset(g_buf, 0xee, 8192);
	cmd.opc = NVME_OPC_IO_MGMT_RECEIVE;
	cmd.nsid = nsid;
	cmd.cdw10 = NVME_IO_MGMT_CDW10(mo, 0);
	cmd.cdw11 = len / 4 - 1;
	ut_prps(g_buf, len, g_list, &cmd.dptr.prp.prp1, &cmd.dptr.prp.prp2);
	return io(h, &cmd);
}

static uint16_t
ruh_update(struct ut_host *h, const uint16_t *pids, uint32_t n)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(g_buf, pids, n * 2);
	cmd.opc = NVME_OPC_IO_MGMT_SEND;
	cmd.nsid = 1;
	cmd.cdw10 = NVME_IO_MGMT_CDW10(NVME_IO_MGMT_SEND_RUH_UPDATE, n - 1);
	ut_prps(g_buf, 4096, g_list, &cmd.dptr.prp.prp1, &cmd.dptr.prp.prp2);
	return io(h, &cmd);
}

static const struct nvme_fdp_ruh_status_desc *
ruhs_desc(uint32_t i)
{
	return (const void *)(g_buf + sizeof(struct nvme_fdp_ruh_status) + 32u * i);
}

static void
test_no_fdp(void)
{
	struct ut_host h;
	uint32_t dw0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "size=1M lba=4096 ftl=1 ftl_ppb=16 ftl_op=100"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_IDENTIFY, 0, NVME_IDENTIFY_CTRLR, 0, 0, 4096, NULL), 0);
	CU_ASSERT_EQUAL(((struct nvme_ctrlr_data *)(void *)g_buf)->ctratt & NVME_CTRATT_FDPS, 0);
	CU_ASSERT_EQUAL(((struct nvme_ctrlr_data *)(void *)g_buf)->oacs & NVME_OACS_DIRECTIVES, 0);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_GET_FEATURES, 0, NVME_FEAT_FDP, 1, 0, 0, &dw0),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_CONFIGS, 1, 0, 512), CS(NVME_SC_INVALID_LOG_PAGE));
	CU_ASSERT_EQUAL(ruh_status(&h, 1, NVME_IO_MGMT_RECV_RUH_STATUS, 4096),
			GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(write_dir(&h, 0, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1),
			GEN(NVME_SC_INVALID_FIELD));
	ut_host_fini(&h);
}

static void
test_identify_features(void)
{
	const struct nvme_dir_identify_params *id = (const void *)g_buf;
	struct ut_host h;
	uint32_t dw0 = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, FDP_OPTS), 0);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_IDENTIFY, 0, NVME_IDENTIFY_CTRLR, 0, 0, 4096, NULL), 0);
	CU_ASSERT(((struct nvme_ctrlr_data *)(void *)g_buf)->ctratt & NVME_CTRATT_FDPS);
	CU_ASSERT_EQUAL(((struct nvme_ctrlr_data *)(void *)g_buf)->endgidmax, 1);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_IDENTIFY, 1, NVME_IDENTIFY_NS, 0, 0, 4096, NULL), 0);
	CU_ASSERT_EQUAL(((struct nvme_ns_data *)(void *)g_buf)->endgid, 1);
	/* enabled from creation, configuration 0; the wrong endurance group is refused */
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_GET_FEATURES, 0, NVME_FEAT_FDP, 1, 0, 0, &dw0), 0);
	CU_ASSERT(NVME_FEAT_FDP_FDPE(dw0));
	CU_ASSERT_EQUAL(NVME_FEAT_FDP_FDPCIDX(dw0), 0);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_GET_FEATURES, 0, NVME_FEAT_FDP, 2, 0, 0, &dw0),
			GEN(NVME_SC_INVALID_FIELD));
	/* Identify directive: Data Placement supported and enabled, Streams not offered */
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_DIRECTIVE_RECEIVE, 1, 4096 / 4 - 1,
			      NVME_DIR_CDW11(NVME_DIR_RECV_IDENTIFY_PARAMS, 0, 0), 0, 4096, NULL),
			0);
	CU_ASSERT_EQUAL(id->supported[0], 0x5);
	CU_ASSERT_EQUAL(id->enabled[0], 0x5);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_DIRECTIVE_SEND, 1, 0,
			      NVME_DIR_CDW11(NVME_DIR_SEND_IDENTIFY_ENABLE, 0, 0),
			      NVME_DIR_ENABLE_CDW12(NVME_DIRECTIVE_TYPE_STREAMS, true), 0, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	/* configuration 1 does not exist; disable, then enable again */
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_SET_FEATURES, 0, NVME_FEAT_FDP, 1,
			      NVME_FEAT_FDP_CDW12(true, 1), 0, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_SET_FEATURES, 0, NVME_FEAT_FDP, 1,
			      NVME_FEAT_FDP_CDW12(false, 0), 0, NULL),
			0);
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_GET_FEATURES, 0, NVME_FEAT_FDP, 1, 0, 0, &dw0), 0);
	CU_ASSERT(!NVME_FEAT_FDP_FDPE(dw0));
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(write_dir(&h, 0, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(admin(&h, NVME_OPC_SET_FEATURES, 0, NVME_FEAT_FDP, 1,
			      NVME_FEAT_FDP_CDW12(true, 0), 0, NULL),
			0);
	CU_ASSERT_EQUAL(write_dir(&h, 0, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1), 0);
	ut_host_fini(&h);
}

static void
test_logs(void)
{
	const struct nvme_fdp_config_log *cl = (const void *)g_buf;
	const struct nvme_fdp_config_desc *cd = (const void *)(g_buf + 16);
	const struct nvme_fdp_ruhu_log *ul = (const void *)g_buf;
	const struct nvme_fdp_stats_log *sl = (const void *)g_buf;
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, FDP_OPTS), 0);
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_CONFIGS, 2, 0, 512), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_CONFIGS, 1, 0, 512), 0);
	CU_ASSERT_EQUAL(cl->numfdpc, 0);
	CU_ASSERT_EQUAL(cl->size, 16 + 64 + 4 * 4);
	CU_ASSERT_EQUAL(cd->dsze, 64 + 4 * 4);
	CU_ASSERT(cd->fdpa & NVME_FDPA_VALID);
	CU_ASSERT_EQUAL(NVME_FDPA_RGIF(cd->fdpa), 0);
	CU_ASSERT_EQUAL(cd->nrg, 1);
	CU_ASSERT_EQUAL(cd->nruh, 4);
	CU_ASSERT_EQUAL(cd->maxpids, 3);
	CU_ASSERT_EQUAL(cd->runs, 16 * 4096);
	CU_ASSERT_EQUAL(g_buf[16 + 64], NVME_RUHT_INITIALLY_ISOLATED);
	CU_ASSERT_EQUAL(g_buf[16 + 64 + 12], NVME_RUHT_INITIALLY_ISOLATED);
	CU_ASSERT_EQUAL(g_buf[16 + 64 + 16], 0); /* zero past the page */
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_RUH_USAGE, 1, 0, 64), 0);
	CU_ASSERT_EQUAL(ul->nruh, 4);
	CU_ASSERT_EQUAL(g_buf[8], NVME_RUHA_HOST);
	CU_ASSERT_EQUAL(g_buf[8 + 3 * 8], NVME_RUHA_HOST);
	/* statistics count from zero: 8 pages through handle 2, whole 4 KiB pages */
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(write_dir(&h, 0, 8, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 2), 0);
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_STATS, 1, 0, 64), 0);
	CU_ASSERT_EQUAL(sl->hbmw[0], 8 * 4096);
	CU_ASSERT_EQUAL(sl->mbmw[0], 8 * 4096);
	CU_ASSERT_EQUAL(sl->mbe[0], 0);
	CU_ASSERT_EQUAL(sl->hbmw[1], 0);
	CU_ASSERT_EQUAL(h.c->stats.placement_writes, 1);
	ut_host_fini(&h);
}

/* Handles keep their data apart: each has its own erase block, and GC copies nothing
 * when each handle's data dies together. */
static void
test_placement(void)
{
	const struct nvme_fdp_stats_log *sl = (const void *)g_buf;
	const struct nvme_fdp_events_log *el = (const void *)g_buf;
	const struct nvme_fdp_event *ev = (const void *)(g_buf + 64);
	struct ut_host h;
	uint16_t pid = 1;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, FDP_OPTS), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(ruh_status(&h, 1, 2, 4096), GEN(NVME_SC_INVALID_FIELD)); /* MO 2 */
	CU_ASSERT_EQUAL(ruh_status(&h, 9, 1, 4096), GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(ruh_status(&h, 1, 1, 4096), 0);
	CU_ASSERT_EQUAL(((const struct nvme_fdp_ruh_status *)(void *)g_buf)->nruhsd, 4);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(ruhs_desc(i)->pid, i);
		CU_ASSERT_EQUAL(ruhs_desc(i)->ruhid, i);
		CU_ASSERT_EQUAL(ruhs_desc(i)->ruamw, 16); /* a whole unit of 16 4 KiB blocks */
	}
	CU_ASSERT_EQUAL(g_buf[16 + 4 * 32], 0);
	/* interleave three handles' writes: 5 blocks each */
	for (uint32_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(write_dir(&h, i, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1), 0);
		CU_ASSERT_EQUAL(write_dir(&h, 64 + i, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 2), 0);
		CU_ASSERT_EQUAL(write_dir(&h, 128 + i, 1, 0, 0), 0); /* handle 0 */
	}
	CU_ASSERT_EQUAL(ruh_status(&h, 1, 1, 4096), 0);
	CU_ASSERT_EQUAL(ruhs_desc(0)->ruamw, 11);
	CU_ASSERT_EQUAL(ruhs_desc(1)->ruamw, 11);
	CU_ASSERT_EQUAL(ruhs_desc(2)->ruamw, 11);
	CU_ASSERT_EQUAL(ruhs_desc(3)->ruamw, 16);
	/* three units, each holding one handle's pages only */
	CU_ASSERT_EQUAL(h.c->ns[0].ftl->blk[0].valid, 5);
	CU_ASSERT_EQUAL(h.c->ns[0].ftl->p2l[0 * 16 + 4], 4);
	CU_ASSERT_EQUAL(h.c->ns[0].ftl->p2l[h.c->ns[0].ftl->open[1] * 16 + 4], 4);
	CU_ASSERT_EQUAL(h.c->ns[0].ftl->p2l[h.c->ns[0].ftl->open[2] * 16 + 4], 68);
	CU_ASSERT_EQUAL(h.c->ns[0].ftl->p2l[h.c->ns[0].ftl->open[0] * 16 + 4], 132);
	/* RUH Update: handle 1 moves to a fresh unit; a bad identifier updates nothing */
	CU_ASSERT_EQUAL(ruh_update(&h, (uint16_t[]){ 1, 7 }, 2), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(ruh_update(&h, &pid, 1), 0);
	CU_ASSERT_EQUAL(ruh_status(&h, 1, 1, 4096), 0);
	CU_ASSERT_EQUAL(ruhs_desc(1)->ruamw, 16);
	CU_ASSERT_EQUAL(ruhs_desc(2)->ruamw, 11);
	/* an invalid placement identifier writes through handle 0 and is a host event */
	CU_ASSERT_EQUAL(write_dir(&h, 200, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 9), 0);
	CU_ASSERT_EQUAL(ruh_status(&h, 1, 1, 4096), 0);
	CU_ASSERT_EQUAL(ruhs_desc(0)->ruamw, 10);
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_EVENTS, 1, 0, 4096), 0);
	CU_ASSERT_EQUAL(el->nevents, 1);
	CU_ASSERT_EQUAL(ev->type, NVME_FDP_EVT_INVALID_PID);
	CU_ASSERT_EQUAL(ev->pid, 9);
	CU_ASSERT_EQUAL(ev->nsid, 1);
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_EVENTS, 1, 1, 4096), 0); /* controller's */
	CU_ASSERT_EQUAL(el->nevents, 0);
	/* overwrite everything many times, each handle its own range: no GC copies */
	for (uint32_t round = 0; round < 20; round++) {
		for (uint32_t i = 0; i < 16; i++) {
			CU_ASSERT_EQUAL(write_dir(&h, i, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1),
					0);
			CU_ASSERT_EQUAL(
				write_dir(&h, 64 + i, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 2), 0);
		}
	}
	CU_ASSERT_EQUAL(fdp_log(&h, NVME_LOG_FDP_STATS, 1, 0, 64), 0);
	CU_ASSERT_EQUAL(sl->hbmw[0], (15 + 1 + 20 * 32) * 4096ull);
	CU_ASSERT(sl->mbe[0] > 0);
	CU_ASSERT_EQUAL(emu_ftl_counters(h.c->ns[0].ftl)->gc_pages, 0);
	CU_ASSERT_EQUAL(sl->mbmw[0], sl->hbmw[0]);
	ut_host_fini(&h);
}

static void
test_options(void)
{
	struct nvp_emu_opts o;
	char err[200];

	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.fdp, 0);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "fdp=8", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.fdp, 8);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "fdp=33", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "streams=4", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "exclude") != NULL);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_no_fdp),    UT_TEST(test_identify_features), UT_TEST(test_logs),
		UT_TEST(test_placement), UT_TEST(test_options),
	};

	ut_env_init();
	g_buf = nvp_env_dma_zmalloc(64u << 10, 4096, NULL);
	g_list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	return ut_run("emu_fdp", tests, NVP_COUNTOF(tests));
}
