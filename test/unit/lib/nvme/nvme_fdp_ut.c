/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of nvme_fdp.c: the FDP Configurations log parser on good, truncated and
 * inconsistent pages; the Get Log Page / features / I/O Management commands the helpers
 * build; which placement identifiers hints use (reclaim group 0, not handle 0); and the
 * hint set-up against a scripted FDP controller (enabled, disabled, refusing RUH
 * Status), with the admin queue and the I/O qpair replaced by recorders. nvme_dir.c is
 * included too: the set-up starts there.
 */
#include "nvme/nvme_dir.c"
#include "nvme/nvme_fdp.c"

#include "ut_nvme.h"

/* ---- a scripted FDP controller ---- */

#define MAX_CMDS 8

static struct nvme_cmd g_cmds[MAX_CMDS];
static uint32_t g_lens[MAX_CMDS];
static uint32_t g_ncmds;
static bool g_fdp_enabled;
static uint8_t g_rgif;
static uint16_t g_nruh = 4;
static uint16_t g_pids[8];
static uint16_t g_npids;
static bool g_ruhs_refused;
static uint8_t g_sent[64];

static void
record(const struct nvme_cmd *cmd, uint32_t len)
{
	if (g_ncmds < MAX_CMDS) {
		g_lens[g_ncmds] = len;
		g_cmds[g_ncmds++] = *cmd;
	}
}

/*
 * Configurations log: two configurations, the second (index 1) with g_nruh handles; it
 * starts at byte 84, not 8-byte aligned, as on a real device.
 */
static uint32_t
make_configs(uint8_t *p)
{
	struct nvme_fdp_config_log h = { .numfdpc = 1 };
	struct nvme_fdp_config_desc d0 = { .dsze = 64 + 4, .nruh = 1 }, d1;

	memset(p, 0, 512);
	memset(&d1, 0, sizeof(d1));
	d1.dsze = (uint16_t)(64 + 4 * g_nruh);
	d1.fdpa = (uint8_t)(NVME_FDPA_VALID | g_rgif);
	d1.nrg = 1;
	d1.nruh = g_nruh;
	d1.runs = 1u << 20;
	h.size = 16u + d0.dsze + d1.dsze;
	memcpy(p, &h, sizeof(h));
	memcpy(p + 16, &d0, sizeof(d0));
	memcpy(p + 16 + d0.dsze, &d1, sizeof(d1));
	return h.size;
}

static void
put_u16(uint8_t *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void
put_u32(uint8_t *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

int
nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			      uint32_t len, struct nvme_cpl *cpl)
{
	_Alignas(8) uint8_t page[512];

	(void)ctrlr;
	record(cmd, len);
	if (cpl != NULL) {
		memset(cpl, 0, sizeof(*cpl));
	}
	if (cmd->opc == NVME_OPC_GET_LOG_PAGE && (cmd->cdw10 & 0xff) == NVME_LOG_FDP_CONFIGS) {
		make_configs(page);
		memcpy(buf, page, NVP_MIN(len, sizeof(page)));
		return 0;
	}
	CU_FAIL("unexpected admin command");
	return -EIO;
}

int
nvp_nvme_ctrlr_get_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint8_t sel, uint32_t cdw11,
			   uint32_t nsid, uint32_t *result, void *buf, uint32_t len,
			   struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_GET_FEATURES, .nsid = nsid };

	(void)ctrlr, (void)buf, (void)len, (void)cpl;
	cmd.cdw10 = fid | (uint32_t)sel << 8;
	cmd.cdw11 = cdw11;
	record(&cmd, 0);
	*result = NVME_FEAT_FDP_CDW12(g_fdp_enabled, 1);
	return 0;
}

int
nvp_nvme_ctrlr_set_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint32_t cdw11,
			   uint32_t cdw12, uint32_t nsid, bool save, uint32_t *result, void *buf,
			   uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_SET_FEATURES, .nsid = nsid };

	(void)ctrlr, (void)save, (void)result, (void)buf, (void)len, (void)cpl;
	cmd.cdw10 = fid;
	cmd.cdw11 = cdw11;
	cmd.cdw12 = cdw12;
	record(&cmd, 0);
	return 0;
}

static struct nvp_nvme_qpair *g_qpair = (struct nvp_nvme_qpair *)(uintptr_t)0x1000;
static uint32_t g_qpairs_alive;
static struct {
	nvp_nvme_cmd_cb cb;
	void *arg;
} g_pending;

void
nvp_nvme_ctrlr_get_default_io_qpair_opts(const struct nvp_nvme_ctrlr *ctrlr,
					 struct nvp_nvme_io_qpair_opts *opts, size_t opts_size)
{
	(void)ctrlr;
	memset(opts, 0, opts_size);
}

int
nvp_nvme_ctrlr_alloc_io_qpair(struct nvp_nvme_ctrlr *ctrlr,
			      const struct nvp_nvme_io_qpair_opts *opts,
			      struct nvp_nvme_qpair **qpair)
{
	(void)ctrlr;
	CU_ASSERT_EQUAL(opts->io_queue_size, 2);
	g_qpairs_alive++;
	*qpair = g_qpair;
	return 0;
}

int
nvp_nvme_ctrlr_free_io_qpair(struct nvp_nvme_qpair *qpair)
{
	CU_ASSERT_PTR_EQUAL(qpair, g_qpair);
	g_qpairs_alive--;
	return 0;
}

int
nvp_nvme_ctrlr_cmd_io_raw(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair,
			  const struct nvme_cmd *cmd, void *buf, uint32_t len, nvp_nvme_cmd_cb cb,
			  void *cb_arg)
{
	struct nvme_fdp_ruh_status *h = buf;
	struct nvme_fdp_ruh_status_desc *d = (void *)(h + 1);

	(void)ctrlr, (void)qpair;
	record(cmd, len);
	if (cmd->opc == NVME_OPC_IO_MGMT_RECEIVE) {
		h->nruhsd = g_npids;
		for (uint32_t i = 0; i < g_npids && 16u + 32u * (i + 1) <= len; i++) {
			d[i].pid = g_pids[i];
			d[i].ruhid = (uint16_t)i;
		}
	} else {
		memcpy(g_sent, buf, NVP_MIN(len, sizeof(g_sent)));
	}
	g_pending.cb = cb;
	g_pending.arg = cb_arg;
	return 0;
}

int32_t
nvp_nvme_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	struct nvme_cpl cpl;

	(void)qpair, (void)max_completions;
	memset(&cpl, 0, sizeof(cpl));
	if (g_ruhs_refused) {
		cpl.status.sc = NVME_SC_INVALID_OPCODE;
	}
	g_pending.cb(g_pending.arg, &cpl);
	return 1;
}

int
nvp_nvme_ns_cmd_write_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				uint32_t io_flags, uint16_t dspec)
{
	(void)ns, (void)qpair, (void)buf, (void)lba, (void)lba_count, (void)cb, (void)cb_arg;
	(void)io_flags, (void)dspec;
	return 0;
}

int
nvp_nvme_ns_cmd_writev_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
				 uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				 uint32_t io_flags, uint16_t dspec,
				 nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				 nvp_nvme_req_next_sge_cb next_sge_fn)
{
	(void)reset_sgl_fn, (void)next_sge_fn;
	return nvp_nvme_ns_cmd_write_directive(ns, qpair, NULL, lba, lba_count, cb, cb_arg,
					       io_flags, dspec);
}

char *
nvp_nvme_cpl_fmt(char *buf, size_t len, const struct nvme_cpl *cpl)
{
	snprintf(buf, len, "sc 0x%x", cpl->status.sc);
	return buf;
}

/* ---- fixture ---- */

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvp_nvme_ns g_ns;

static void
setup(bool fdps, bool enabled, uint16_t endgid)
{
	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.cdata.ctratt = fdps ? NVME_CTRATT_FDPS : 0;
	g_ctrlr.max_xfer_size = 128u << 10;
	memset(&g_ns, 0, sizeof(g_ns));
	g_ns.ctrlr = &g_ctrlr;
	g_ns.id = 3;
	g_ns.active = true;
	g_ns.data.endgid = endgid;
	g_ncmds = 0;
	g_fdp_enabled = enabled;
	g_rgif = 0;
	g_nruh = 4;
	g_npids = 4;
	for (uint16_t i = 0; i < 8; i++) {
		g_pids[i] = i;
	}
	g_ruhs_refused = false;
	g_qpairs_alive = 0;
}

static void
test_config_parse(void)
{
	struct nvme_fdp_config_desc d;
	_Alignas(8) uint8_t page[512];
	uint32_t size;
	size_t off = 0;

	setup(true, true, 1);
	size = make_configs(page);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 0, &d, &off), 0);
	CU_ASSERT_EQUAL(off, 16);
	CU_ASSERT_EQUAL(d.nruh, 1);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 1, &d, &off), 0);
	CU_ASSERT_EQUAL(off, 16 + 68);
	CU_ASSERT_EQUAL(d.nruh, 4);
	CU_ASSERT_EQUAL(d.runs, 1u << 20);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 1, &d, NULL), 0);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 2, &d, NULL), -ENOENT);
	/* read short of the page, or a page shorter than its descriptors */
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size - 4, 1, &d, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, 12, 0, &d, NULL), -EINVAL);
	put_u32(page, 4, 40); /* SIZE */
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 0, &d, NULL), -EINVAL);
	/* a descriptor too small for its handles, or smaller than its header */
	size = make_configs(page);
	put_u16(page, 16 + 8, 2); /* NRUH of configuration 0 */
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 0, &d, NULL), -EINVAL);
	size = make_configs(page);
	put_u16(page, 16, 8); /* DSZE of configuration 0 */
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(page, size, 1, &d, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_fdp_config_find(NULL, size, 1, &d, NULL), -EINVAL);
}

static void
test_encodings(void)
{
	uint8_t log[64];
	uint8_t ruhs[64];
	bool en = false;
	uint8_t idx = 0;

	setup(true, true, 1);
	CU_ASSERT(nvp_nvme_ctrlr_fdp_supported(&g_ctrlr));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_endgid(&g_ns), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_log(&g_ctrlr, NVME_LOG_FDP_CONFIGS, 0x102, 1, log,
						   sizeof(log), NULL),
			0);
	CU_ASSERT_EQUAL(g_cmds[0].opc, NVME_OPC_GET_LOG_PAGE);
	CU_ASSERT_EQUAL(g_cmds[0].nsid, 0);
	CU_ASSERT_EQUAL(g_cmds[0].cdw10, 15u << 16 | 1u << 8 | 0x20); /* NUMDL, LSP, LID */
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 0x102u << 16);               /* LSI = ENDGID */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_log(&g_ctrlr, 0x20, 1, 16, log, 64, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_log(&g_ctrlr, 0x20, 1, 0, log, 62, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_get_feature(&g_ctrlr, 5, &en, &idx, NULL), 0);
	CU_ASSERT(en);
	CU_ASSERT_EQUAL(idx, 1);
	CU_ASSERT_EQUAL(g_cmds[1].cdw10, NVME_FEAT_FDP);
	CU_ASSERT_EQUAL(g_cmds[1].cdw11, 5);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fdp_set_feature(&g_ctrlr, 5, true, 2, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[2].cdw11, 5);
	CU_ASSERT_EQUAL(g_cmds[2].cdw12, 0x201);
	/* RUH Status: NUMD, MO; on a temporary qpair freed again */
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_status(&g_ns, NULL, ruhs, sizeof(ruhs), NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[3].opc, 0x12);
	CU_ASSERT_EQUAL(g_cmds[3].nsid, 3);
	CU_ASSERT_EQUAL(g_cmds[3].cdw10, 1);
	CU_ASSERT_EQUAL(g_cmds[3].cdw11, 15);
	CU_ASSERT_EQUAL(((struct nvme_fdp_ruh_status *)(void *)ruhs)->nruhsd, 4);
	CU_ASSERT_EQUAL(((struct nvme_fdp_ruh_status_desc *)(void *)(ruhs + 16))->pid, 0);
	CU_ASSERT_EQUAL(g_qpairs_alive, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_status(&g_ns, NULL, ruhs, 8, NULL), -EINVAL);
	/* RUH Update: MOS = count - 1, the identifiers as data */
	CU_ASSERT_EQUAL(
		nvp_nvme_ns_fdp_ruh_update(&g_ns, g_qpair, (uint16_t[]){ 2, 3, 1 }, 3, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[4].opc, 0x1d);
	CU_ASSERT_EQUAL(g_cmds[4].cdw10, 2u << 16 | 1u);
	CU_ASSERT_EQUAL(g_lens[4], 8);
	CU_ASSERT_EQUAL(memcmp(g_sent, (uint16_t[]){ 2, 3, 1, 0 }, 8), 0);
	CU_ASSERT_EQUAL(g_qpairs_alive, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_update(&g_ns, g_qpair, g_pids, 0, NULL), -EINVAL);
	g_ruhs_refused = true;
	CU_ASSERT_EQUAL(nvp_nvme_ns_fdp_ruh_status(&g_ns, NULL, ruhs, sizeof(ruhs), NULL), -EIO);
	CU_ASSERT_EQUAL(g_qpairs_alive, 0);
}

static void
test_hint_pids(void)
{
	uint8_t buf[16 + 32 * 6];
	struct nvme_fdp_ruh_status *h = (void *)buf;
	struct nvme_fdp_ruh_status_desc *d = (void *)(buf + 16);
	const uint16_t ids[6] = { 0, 1, 0x8000, 0x8001, 2, 3 };
	uint16_t out[8];

	memset(buf, 0, sizeof(buf));
	h->nruhsd = 6;
	for (uint32_t i = 0; i < 6; i++) {
		d[i].pid = ids[i];
	}
	/* RGIF 1: the top bit is the reclaim group: group 0's handles 1, 2, 3 */
	CU_ASSERT_EQUAL(nvme_fdp_hint_pids(buf, sizeof(buf), 1, out, 8), 3);
	CU_ASSERT_EQUAL(out[0], 1);
	CU_ASSERT_EQUAL(out[1], 2);
	CU_ASSERT_EQUAL(out[2], 3);
	/* RGIF 0: 0x8000 and 0x8001 are handles too */
	CU_ASSERT_EQUAL(nvme_fdp_hint_pids(buf, sizeof(buf), 0, out, 8), 5);
	CU_ASSERT_EQUAL(out[1], 0x8000);
	CU_ASSERT_EQUAL(nvme_fdp_hint_pids(buf, sizeof(buf), 0, out, 2), 2);
	/* a count larger than what was read is clipped to it */
	h->nruhsd = 60;
	CU_ASSERT_EQUAL(nvme_fdp_hint_pids(buf, 16 + 32 * 2, 0, out, 8), 1);
}

static void
test_hints_setup(void)
{
	uint32_t flags = 0;
	uint16_t dspec = 0;

	/* 4 handles: 1, 2, 3 for hints, extreme without a directive (handle 0) */
	setup(true, true, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_FDP);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), 3);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_SHORT), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_MEDIUM), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_LONG), 3);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_EXTREME), 0);
	CU_ASSERT_EQUAL(g_cmds[0].opc, NVME_OPC_GET_FEATURES);
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 1);
	CU_ASSERT_EQUAL(g_cmds[3].opc, NVME_OPC_IO_MGMT_RECEIVE);
	CU_ASSERT_EQUAL(g_ncmds, 4); /* feature, log header, whole log, RUH Status */
	CU_ASSERT_EQUAL(g_qpairs_alive, 0);
	CU_ASSERT_EQUAL(hint_directive(&g_ns, NVP_NVME_WRITE_HINT_MEDIUM, &flags, &dspec), 0);
	CU_ASSERT_EQUAL(flags, NVME_IO_FLAGS_DTYPE_PLACEMENT);
	CU_ASSERT_EQUAL(dspec, 2);
	flags = 0;
	CU_ASSERT_EQUAL(hint_directive(&g_ns, NVP_NVME_WRITE_HINT_EXTREME, &flags, &dspec), 0);
	CU_ASSERT_EQUAL(flags, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(&g_ns), 0);

	/* 8 handles, max 2 asked: short, medium -> 1; long -> 2; extreme -> none */
	setup(true, true, 1);
	g_npids = 8;
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 2), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_MEDIUM), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_LONG), 2);

	/* FDP disabled: no placement, and no Streams tried (OACS has no directives here) */
	setup(true, false, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
	CU_ASSERT_EQUAL(g_ncmds, 1);
	flags = 0;
	CU_ASSERT_EQUAL(hint_directive(&g_ns, NVP_NVME_WRITE_HINT_SHORT, &flags, &dspec), 0);
	CU_ASSERT_EQUAL(flags, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(&g_ns), 1);

	/* no endurance group, or no FDPS: not a command */
	setup(true, true, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_ncmds, 0);
	setup(false, true, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_ncmds, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);

	/* RUH Status refused: no placement, set-up still succeeds */
	setup(true, true, 1);
	g_ruhs_refused = true;
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
	CU_ASSERT_EQUAL(g_qpairs_alive, 0);

	/* only handle 0: nothing to spread the hints over */
	setup(true, true, 1);
	g_npids = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	ut_env_init();
	s = CU_add_suite("nvme_fdp", NULL, NULL);
	CU_ADD_TEST(s, test_config_parse);
	CU_ADD_TEST(s, test_encodings);
	CU_ADD_TEST(s, test_hint_pids);
	CU_ADD_TEST(s, test_hints_setup);
	return ut_run();
}
