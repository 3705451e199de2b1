/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_dir.c through the register page: the Directive Send/Receive
 * encodings (Identify and Streams), writes carrying a stream, the refusals of a
 * controller without directives, and the FTL model seen through the NVM commands
 * (write, DSM deallocate, write zeroes, format) and the vendor log page C0h.
 */
#include "emu_ut_helpers.h"

#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)

static uint8_t *g_buf;
static uint64_t *g_list;

static uint16_t
dir(struct ut_host *h, uint8_t opc, uint32_t nsid, uint8_t dtype, uint8_t doper, uint16_t dspec,
    uint32_t cdw12, uint32_t len, uint32_t *dw0)
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
		cmd.cdw10 = len / 4 - 1;
	}
	cmd.cdw11 = NVME_DIR_CDW11(doper, dtype, dspec);
	cmd.cdw12 = cdw12;
	st = ut_admin_st(h, &cmd, &cpl);
	if (dw0 != NULL) {
		*dw0 = cpl.cdw0;
	}
	return st;
}

static uint16_t
recv(struct ut_host *h, uint32_t nsid, uint8_t dtype, uint8_t doper, uint32_t cdw12, uint32_t len)
{
	return dir(h, NVME_OPC_DIRECTIVE_RECEIVE, nsid, dtype, doper, 0, cdw12, len, NULL);
}

static uint16_t
enable_streams(struct ut_host *h, uint32_t nsid, bool on)
{
	return dir(h, NVME_OPC_DIRECTIVE_SEND, nsid, NVME_DIRECTIVE_TYPE_IDENTIFY,
		   NVME_DIR_SEND_IDENTIFY_ENABLE, 0,
		   NVME_DIR_ENABLE_CDW12(NVME_DIRECTIVE_TYPE_STREAMS, on), 0, NULL);
}

/* Write @nlb blocks at @slba from g_buf + 8 KiB, with DTYPE/DSPEC. */
static uint16_t
write_dir(struct ut_host *h, uint32_t nsid, uint64_t slba, uint32_t nlb, uint32_t dtype,
	  uint16_t dspec)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t prp1, prp2;

	ut_prps(g_buf + 8192, (uint64_t)nlb * 4096, g_list, &prp1, &prp2);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, nsid, slba, nlb, prp1, prp2);
	cmd.cdw12 |= dtype << NVME_IO_FLAGS_DTYPE_SHIFT;
	cmd.cdw13 = (uint32_t)dspec << NVME_IO_FLAGS_DSPEC_SHIFT;
	if (ut_cmd(h, 1, &cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

static uint16_t
io_st(struct ut_host *h, struct nvme_cmd *cmd)
{
	struct nvme_cpl cpl;

	if (ut_cmd(h, 1, cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

static const struct nvp_emu_ftl_log *
ftl_log(struct ut_host *h, uint32_t nsid)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.nsid = nsid;
	cmd.cdw10 = NVME_GET_LOG_CDW10(NVP_EMU_LOG_FTL, 128);
	ut_prps(g_buf, 512, g_list, &cmd.dptr.prp.prp1, &cmd.dptr.prp.prp2);
	CU_ASSERT_EQUAL(ut_admin_st(h, &cmd, NULL), 0);
	return (const void *)g_buf;
}

/* streams=0: no OACS bit, both commands unknown, DTYPE on a write refused. */
static void
test_no_directives(void)
{
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "size=1M lba=4096"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(h.c->opts.streams, 0);
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_IDENTIFY, NVME_DIR_RECV_IDENTIFY_PARAMS, 0, 4096),
		GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(enable_streams(&h, 1, true), GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_STREAMS, 1),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, 0, 0), 0);
	/* the vendor page exists, all zero without the FTL model */
	CU_ASSERT_EQUAL(memcmp(ftl_log(&h, 0)->signature, "NVPF", 4), 0);
	CU_ASSERT_EQUAL(ftl_log(&h, 0)->pages_per_block, 0);
	CU_ASSERT_EQUAL(ftl_log(&h, 0)->nsid_count, 0);
	ut_host_fini(&h);
}

static void
check_params(struct ut_host *h, uint16_t nssa, uint16_t nsa, uint16_t nso)
{
	const struct nvme_dir_streams_params *p = (const void *)g_buf;

	CU_ASSERT_EQUAL(
		recv(h, 1, NVME_DIRECTIVE_TYPE_STREAMS, NVME_DIR_RECV_STREAMS_PARAMS, 0, 32), 0);
	CU_ASSERT_EQUAL(p->msl, 4);
	CU_ASSERT_EQUAL(p->nssa, nssa);
	CU_ASSERT_EQUAL(p->sws, 1); /* one 4 KiB page of 4 KiB blocks */
	CU_ASSERT_EQUAL(p->sgs, 16);
	CU_ASSERT_EQUAL(p->nsa, nsa);
	CU_ASSERT_EQUAL(p->nso, nso);
	CU_ASSERT_EQUAL(p->nsso, nso);
	CU_ASSERT_EQUAL(g_buf[32], 0xee); /* nothing past the requested 32 bytes */
}

static void
test_streams_commands(void)
{
	const struct nvme_dir_identify_params *id = (const void *)g_buf;
	const struct nvme_dir_streams_status *ss = (const void *)g_buf;
	struct ut_host h;
	uint32_t dw0 = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "size=1M lba=4096 streams=4 ftl_ppb=16"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_IDENTIFY, NVME_DIR_RECV_IDENTIFY_PARAMS, 0, 4096),
		0);
	CU_ASSERT_EQUAL(id->supported[0], 0x3);
	CU_ASSERT_EQUAL(id->enabled[0], 0x1);
	CU_ASSERT_EQUAL(id->rsvd96[0], 0);
	/* streams not enabled yet: parameters readable; writes, status, allocation refused */
	check_params(&h, 4, 0, 0);
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_STREAMS, NVME_DIR_RECV_STREAMS_STATUS, 0, 64),
		GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_STREAMS, NVME_DIR_RECV_STREAMS_ALLOC_RES, 1, 0),
		GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_STREAMS, 1),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(enable_streams(&h, 2, true), GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(dir(&h, NVME_OPC_DIRECTIVE_SEND, 1, NVME_DIRECTIVE_TYPE_IDENTIFY,
			    NVME_DIR_SEND_IDENTIFY_ENABLE, 0,
			    NVME_DIR_ENABLE_CDW12(NVME_DIRECTIVE_TYPE_IDENTIFY, false), 0, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(enable_streams(&h, 1, true), 0);
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_IDENTIFY, NVME_DIR_RECV_IDENTIFY_PARAMS, 0, 4096),
		0);
	CU_ASSERT_EQUAL(id->enabled[0], 0x3);
	check_params(&h, 4, 0, 0);

	/* allocate more than there are: granted what exists */
	CU_ASSERT_EQUAL(dir(&h, NVME_OPC_DIRECTIVE_RECEIVE, 1, NVME_DIRECTIVE_TYPE_STREAMS,
			    NVME_DIR_RECV_STREAMS_ALLOC_RES, 0, 9, 0, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, 4);
	check_params(&h, 0, 4, 0);

	/* writes open streams 1..MSL; 0 and MSL+1 are invalid */
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 2, NVME_DIRECTIVE_TYPE_STREAMS, 3), 0);
	CU_ASSERT_EQUAL(write_dir(&h, 1, 2, 2, NVME_DIRECTIVE_TYPE_STREAMS, 1), 0);
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_STREAMS, 0),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_STREAMS, 5),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_DATA_PLACEMENT, 1),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(h.c->stats.stream_writes, 2);
	check_params(&h, 0, 4, 2);
	CU_ASSERT_EQUAL(
		recv(&h, 1, NVME_DIRECTIVE_TYPE_STREAMS, NVME_DIR_RECV_STREAMS_STATUS, 0, 64), 0);
	CU_ASSERT_EQUAL(ss->osc, 2);
	CU_ASSERT_EQUAL(ss->sid[0], 1);
	CU_ASSERT_EQUAL(ss->sid[1], 3);

	/* release one identifier, then the resources, then disable */
	CU_ASSERT_EQUAL(dir(&h, NVME_OPC_DIRECTIVE_SEND, 1, NVME_DIRECTIVE_TYPE_STREAMS,
			    NVME_DIR_SEND_STREAMS_RELEASE_ID, 3, 0, 0, NULL),
			0);
	check_params(&h, 0, 4, 1);
	CU_ASSERT_EQUAL(dir(&h, NVME_OPC_DIRECTIVE_SEND, 1, NVME_DIRECTIVE_TYPE_STREAMS,
			    NVME_DIR_SEND_STREAMS_RELEASE_RES, 0, 0, 0, NULL),
			0);
	check_params(&h, 4, 0, 0);
	CU_ASSERT_EQUAL(recv(&h, 1, NVME_DIRECTIVE_TYPE_STREAMS, 0x7f, 0, 32),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(enable_streams(&h, 1, false), 0);
	CU_ASSERT_EQUAL(write_dir(&h, 1, 0, 1, NVME_DIRECTIVE_TYPE_STREAMS, 1),
			GEN(NVME_SC_INVALID_FIELD));
	ut_host_fini(&h);
}

/* The FTL model behind the NVM commands and its log page. */
static void
test_ftl_through_commands(void)
{
	const struct nvp_emu_ftl_log *l;
	struct nvme_dsm_range *r = (void *)g_buf;
	struct nvme_cmd cmd;
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(
		ut_host_init(&h, "nn=2 size=1M lba=4096/512 streams=2 ftl=1 ftl_ppb=16 ftl_op=60"),
		0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(enable_streams(&h, 1, true), 0);
	for (uint32_t lba = 0; lba < 256; lba += 8) {
		CU_ASSERT_EQUAL(
			write_dir(&h, 1, lba, 8, lba < 128 ? NVME_DIRECTIVE_TYPE_STREAMS : 0, 2),
			0);
	}
	l = ftl_log(&h, 1);
	CU_ASSERT_EQUAL(memcmp(l->signature, NVP_EMU_FTL_LOG_SIGNATURE, 4), 0);
	CU_ASSERT_EQUAL(l->version, 1);
	CU_ASSERT_EQUAL(l->nsid_count, 1);
	CU_ASSERT_EQUAL(l->page_size, 4096);
	CU_ASSERT_EQUAL(l->pages_per_block, 16);
	CU_ASSERT_EQUAL(l->op_pct, 60);
	CU_ASSERT_EQUAL(l->streams, 2);
	CU_ASSERT_EQUAL(l->logical_pages, 256);
	CU_ASSERT_EQUAL(l->host_pages, 256);
	CU_ASSERT_EQUAL(l->stream_pages, 128);
	CU_ASSERT_EQUAL(l->valid_pages, 256);
	CU_ASSERT_EQUAL(l->nand_pages, 256);
	CU_ASSERT_EQUAL(h.c->stats.ftl_host_pages, 256);

	/* one 512-byte block of namespace 2 costs a whole page */
	ut_prps(g_buf + 8192, 512, g_list, &cmd.dptr.prp.prp1, &cmd.dptr.prp.prp2);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 2, 9, 1, cmd.dptr.prp.prp1, cmd.dptr.prp.prp2);
	CU_ASSERT_EQUAL(io_st(&h, &cmd), 0);
	CU_ASSERT_EQUAL(ftl_log(&h, 2)->host_pages, 1);
	CU_ASSERT_EQUAL(ftl_log(&h, 0xffffffffu)->host_pages, 257);
	CU_ASSERT_EQUAL(ftl_log(&h, 0)->nsid_count, 2);

	/* DSM deallocate of 16 blocks and write zeroes of 8: 24 pages fewer valid */
	memset(r, 0, 4096);
	r[0].starting_lba = 32;
	r[0].length = 16;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_DATASET_MANAGEMENT;
	cmd.nsid = 1;
	cmd.cdw11 = NVME_DSM_ATTR_DEALLOCATE;
	cmd.dptr.prp.prp1 = nvp_env_vtophys(g_buf, NULL);
	CU_ASSERT_EQUAL(io_st(&h, &cmd), 0);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE_ZEROES, 1, 100, 8, 0, 0);
	CU_ASSERT_EQUAL(io_st(&h, &cmd), 0);
	l = ftl_log(&h, 1);
	CU_ASSERT_EQUAL(l->valid_pages, 256 - 24);
	CU_ASSERT_EQUAL(l->trimmed_pages, 24);

	/* overwrite many times: GC runs, NAND = host + GC, stats follow the log */
	for (uint32_t i = 0; i < 2000; i++) {
		CU_ASSERT_EQUAL(write_dir(&h, 1, (i * 7919u) % 256, 1, 0, 0), 0);
	}
	l = ftl_log(&h, 1);
	CU_ASSERT(l->gc_pages > 0);
	CU_ASSERT(l->erases > 0);
	CU_ASSERT_EQUAL(l->nand_pages, l->host_pages + l->gc_pages);
	CU_ASSERT_EQUAL(h.c->stats.ftl_nand_pages, l->nand_pages + 1); /* + namespace 2's */
	CU_ASSERT_EQUAL(h.c->stats.ftl_gc_pages, l->gc_pages);

	/* format: all deallocated */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FORMAT_NVM;
	cmd.nsid = 1;
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), 0);
	CU_ASSERT_EQUAL(ftl_log(&h, 1)->valid_pages, 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.nsid = 3;
	cmd.cdw10 = NVME_GET_LOG_CDW10(NVP_EMU_LOG_FTL, 128);
	cmd.dptr.prp.prp1 = nvp_env_vtophys(g_buf, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	ut_host_fini(&h);
}

/* Options: names, ranges, a geometry the FTL refuses. */
static void
test_options(void)
{
	struct nvp_emu_opts o;
	struct emu_ctrlr *c = NULL;
	char err[160];

	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.streams, 0);
	CU_ASSERT_EQUAL(o.ftl, false);
	CU_ASSERT_EQUAL(
		nvp_emu_opts_parse(&o, "streams=8 ftl=1 ftl_gc=cb ftl_op=28", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.streams, 8);
	CU_ASSERT(o.ftl);
	CU_ASSERT_EQUAL(o.ftl_gc, 1);
	CU_ASSERT(o.vwc); /* a bool option no longer writes vwc */
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "ftl_gc=lru", err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "greedy") != NULL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "streams=33", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "ftl_op=0", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "size=64k ftl_ppb=16 ftl_op=1", err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(emu_ctrlr_alloc(&o, &c), -EINVAL);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_no_directives),
		UT_TEST(test_streams_commands),
		UT_TEST(test_ftl_through_commands),
		UT_TEST(test_options),
	};

	ut_env_init();
	g_buf = nvp_env_dma_zmalloc(64u << 10, 4096, NULL);
	g_list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	return ut_run("emu_dir", tests, NVP_COUNTOF(tests));
}
