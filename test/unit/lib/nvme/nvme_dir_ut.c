/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of nvme_dir.c: the Directive Send/Receive commands each helper builds
 * (opcode, NSID, NUMD, DOPER/DTYPE/DSPEC, CDW12), the hint set-up against scripted
 * controllers (no directives, directives without streams, streams refused, fewer
 * streams than hint classes), and the directive each hinted write carries, with the
 * admin queue and the write submission replaced by recorders.
 */
#include "nvme/nvme_dir.c"
#include "nvme/nvme_hint.c"

#include "ut_nvme.h"

/* ---- admin queue and writes, recorded ---- */

#define MAX_CMDS 8

static struct nvme_cmd g_cmds[MAX_CMDS];
static uint32_t g_lens[MAX_CMDS];
static uint32_t g_ncmds;
static uint16_t g_fail_opc_doper; /* opc << 8 | doper refused with Invalid Field */
static uint16_t g_msl, g_grant;
static bool g_streams_supported;

int
nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			      uint32_t len, struct nvme_cpl *cpl)
{
	uint8_t doper = cmd->cdw11 & 0xff, dtype = (cmd->cdw11 >> 8) & 0xff;

	(void)ctrlr;
	if (g_ncmds < MAX_CMDS) {
		g_lens[g_ncmds] = len;
		g_cmds[g_ncmds++] = *cmd;
	}
	memset(cpl, 0, sizeof(*cpl));
	if (g_fail_opc_doper == ((cmd->opc << 8) | doper)) {
		cpl->status.sc = NVME_SC_INVALID_FIELD;
		return -EIO;
	}
	if (cmd->opc == NVME_OPC_DIRECTIVE_RECEIVE && dtype == NVME_DIRECTIVE_TYPE_IDENTIFY) {
		struct nvme_dir_identify_params *p = buf;

		memset(p, 0, sizeof(*p));
		p->supported[0] = g_streams_supported ? 3 : 1;
	} else if (cmd->opc == NVME_OPC_DIRECTIVE_RECEIVE &&
		   doper == NVME_DIR_RECV_STREAMS_PARAMS) {
		struct nvme_dir_streams_params *p = buf;

		memset(p, 0, sizeof(*p));
		p->msl = g_msl;
		p->sws = 8;
		p->sgs = 64;
	} else if (cmd->opc == NVME_OPC_DIRECTIVE_RECEIVE) {
		cpl->cdw0 = NVP_MIN(cmd->cdw12 & 0xffff, g_grant);
	}
	return 0;
}

/* nvme_fdp.c has its own test: these controllers have no FDP (CTRATT.FDPS clear). */
int
nvme_fdp_hints_setup(struct nvp_nvme_ns *ns, uint16_t max_ids)
{
	(void)ns, (void)max_ids;
	CU_FAIL("FDP set-up on a controller without FDPS");
	return -ENODEV;
}

static uint32_t g_wflags;
static uint16_t g_wdspec;
static uint32_t g_writes;

int
nvp_nvme_ns_cmd_write_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				uint32_t io_flags, uint16_t dspec)
{
	(void)ns, (void)qpair, (void)buf, (void)lba, (void)lba_count, (void)cb, (void)cb_arg;
	g_wflags = io_flags;
	g_wdspec = dspec;
	g_writes++;
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
setup(bool directives, bool streams, uint16_t msl, uint16_t grant)
{
	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.cdata.oacs = NVME_OACS_FORMAT | (directives ? NVME_OACS_DIRECTIVES : 0);
	memset(&g_ns, 0, sizeof(g_ns));
	g_ns.ctrlr = &g_ctrlr;
	g_ns.id = 7;
	g_ns.active = true;
	g_ncmds = 0;
	g_fail_opc_doper = 0;
	g_streams_supported = streams;
	g_msl = msl;
	g_grant = grant;
	g_writes = 0;
}

/* The command encodings of the helpers. */
static void
test_encodings(void)
{
	struct nvme_dir_identify_params id;
	struct nvme_dir_streams_params p;
	uint16_t nsa = 0;
	uint32_t dw0 = 0;

	setup(true, true, 8, 8);
	CU_ASSERT_EQUAL(nvp_nvme_ns_identify_directives(&g_ns, &id, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[0].opc, 0x1a);
	CU_ASSERT_EQUAL(g_cmds[0].nsid, 7);
	CU_ASSERT_EQUAL(g_cmds[0].cdw10, 1023);   /* NUMD: 4096 bytes, 0's based dwords */
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 0x0001); /* DOPER 01h, DTYPE 00h */
	CU_ASSERT_EQUAL(g_lens[0], 4096);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_enable(&g_ns, true, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[1].opc, 0x19);
	CU_ASSERT_EQUAL(g_cmds[1].cdw10, 0);
	CU_ASSERT_EQUAL(g_cmds[1].cdw11, 0x0001);
	CU_ASSERT_EQUAL(g_cmds[1].cdw12, 0x0101); /* TDTYPE streams, ENDIR */
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_enable(&g_ns, false, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[2].cdw12, 0x0100);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_get_params(&g_ns, &p, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[3].cdw10, 7); /* 32 bytes */
	CU_ASSERT_EQUAL(g_cmds[3].cdw11, 0x0101);
	CU_ASSERT_EQUAL(p.msl, 8);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_allocate(&g_ns, 5, &nsa, NULL), 0);
	CU_ASSERT_EQUAL(g_cmds[4].opc, 0x1a);
	CU_ASSERT_EQUAL(g_cmds[4].cdw11, 0x0103);
	CU_ASSERT_EQUAL(g_cmds[4].cdw12, 5);
	CU_ASSERT_EQUAL(nsa, 5);
	/* release identifier 9: DSPEC in CDW11 31:16 */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_directive(&g_ctrlr, true, 7, NVME_DIRECTIVE_TYPE_STREAMS,
						 NVME_DIR_SEND_STREAMS_RELEASE_ID, 9, 0, NULL, 0,
						 &dw0, NULL),
			0);
	CU_ASSERT_EQUAL(g_cmds[5].cdw11, 0x00090101u);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_directive(&g_ctrlr, false, 7, 1, 2, 0, 0, &p, 3, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_directive(NULL, false, 7, 1, 2, 0, 0, NULL, 0, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_streams_allocate(NULL, 5, &nsa, NULL), -EINVAL);
}

/* Without the OACS bit not one command goes to the controller; hints are counted. */
static void
test_no_directives(void)
{
	setup(false, false, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_ncmds, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_hint(&g_ns, NULL, NULL, 0, 1, NULL, NULL, 0,
						   NVP_NVME_WRITE_HINT_SHORT),
			0);
	CU_ASSERT_EQUAL(g_wflags, 0);
	CU_ASSERT_EQUAL(g_wdspec, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_hint(&g_ns, NULL, NULL, 0, 1, NULL, NULL, 0,
						   NVP_NVME_WRITE_HINT_NONE),
			0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(&g_ns), 1); /* NONE is not a drop */

	/* directives but no streams: identify only */
	setup(true, false, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_ncmds, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);

	/* a controller that refuses to enable streams: no placement, no error */
	setup(true, true, 4, 4);
	g_fail_opc_doper = (NVME_OPC_DIRECTIVE_SEND << 8) | NVME_DIR_SEND_IDENTIFY_ENABLE;
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(NULL, 0), -EINVAL);
}

/* Four streams: one per hint class; each write carries its class's stream. */
static void
test_streams_map(void)
{
	setup(true, true, 16, 16);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_ncmds, 4);         /* identify, enable, parameters, allocate */
	CU_ASSERT_EQUAL(g_cmds[3].cdw12, 4); /* asked for one per class */
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_STREAMS);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), 4);
	for (uint32_t h = 0; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, (enum nvp_nvme_write_hint)h), h);
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_writev_hint(&g_ns, NULL, 0, 1, NULL, NULL,
							    NVME_IO_FLAGS_FORCE_UNIT_ACCESS,
							    (enum nvp_nvme_write_hint)h, NULL,
							    NULL),
				0);
		CU_ASSERT_EQUAL(g_wdspec, h);
		CU_ASSERT_EQUAL(g_wflags, NVME_IO_FLAGS_FORCE_UNIT_ACCESS |
						  (h ? NVME_IO_FLAGS_DTYPE_STREAMS : 0));
	}
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(&g_ns), 0);
	/* bad hints and flags that already name a directive */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_hint(&g_ns, NULL, NULL, 0, 1, NULL, NULL, 0,
						   NVP_NVME_WRITE_HINT_COUNT),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_hint(&g_ns, NULL, NULL, 0, 1, NULL, NULL,
						   NVME_IO_FLAGS_DTYPE_STREAMS,
						   NVP_NVME_WRITE_HINT_SHORT),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_hint_stream(&g_ns, NVP_NVME_WRITE_HINT_COUNT), 0);
}

/* Fewer streams than classes: the shortest-lived share, the longest take the default. */
static void
test_fewer_streams(void)
{
	static const uint16_t want[4][5] = {
		{ 0, 1, 1, 0, 0 }, /* 1 stream: the longest-lived go without a directive */
		{ 0, 1, 1, 2, 0 }, /* 2 */
		{ 0, 1, 2, 3, 0 }, /* 3 */
		{ 0, 1, 2, 3, 4 },
	};

	for (uint16_t n = 1; n <= 4; n++) {
		setup(true, true, 16, n); /* the controller grants n */
		CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), n);
		for (uint32_t h = 0; h < NVP_NVME_WRITE_HINT_COUNT; h++) {
			CU_ASSERT_EQUAL(
				nvp_nvme_ns_get_hint_stream(&g_ns, (enum nvp_nvme_write_hint)h),
				want[n - 1][h]);
		}
		/* a class placed in the default stream on purpose is not a dropped hint */
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write_hint(&g_ns, NULL, NULL, 0, 1, NULL, NULL, 0,
							   NVP_NVME_WRITE_HINT_EXTREME),
				0);
		CU_ASSERT_EQUAL(g_wflags, n < 4 ? 0 : NVME_IO_FLAGS_DTYPE_STREAMS);
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_hints_dropped(&g_ns), 0);
	}
	/* the caller's limit, and MSL, bound the request */
	setup(true, true, 16, 16);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 2), 0);
	CU_ASSERT_EQUAL(g_cmds[3].cdw12, 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_streams(&g_ns), 2);
	setup(true, true, 3, 16);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(g_cmds[3].cdw12, 3);
	/* granted none: no placement */
	setup(true, true, 16, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_hints_setup(&g_ns, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_placement(&g_ns), NVP_NVME_PLACEMENT_NONE);
}

static void
test_hint_names(void)
{
	enum nvp_nvme_write_hint h = NVP_NVME_WRITE_HINT_NONE;

	CU_ASSERT_STRING_EQUAL(nvp_nvme_write_hint_name(NVP_NVME_WRITE_HINT_EXTREME), "extreme");
	CU_ASSERT_PTR_NULL(nvp_nvme_write_hint_name(NVP_NVME_WRITE_HINT_COUNT));
	CU_ASSERT_EQUAL(nvp_nvme_write_hint_parse("Medium", &h), 0);
	CU_ASSERT_EQUAL(h, NVP_NVME_WRITE_HINT_MEDIUM);
	CU_ASSERT_EQUAL(nvp_nvme_write_hint_parse("4", &h), 0);
	CU_ASSERT_EQUAL(h, NVP_NVME_WRITE_HINT_EXTREME);
	CU_ASSERT_EQUAL(nvp_nvme_write_hint_parse("5", &h), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_write_hint_parse("longer", &h), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_write_hint_parse(NULL, &h), -EINVAL);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_dir", NULL, NULL);
	CU_ADD_TEST(s, test_encodings);
	CU_ADD_TEST(s, test_no_directives);
	CU_ADD_TEST(s, test_streams_map);
	CU_ADD_TEST(s, test_fewer_streams);
	CU_ADD_TEST(s, test_hint_names);
	return ut_run();
}
