/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_io.c: read/write/compare/flush/write zeroes/DSM through an
 * I/O queue pair, the status of every kind of bad command, statistics and SMART
 * counters, and the command faults (error, drop_cpl) that act on I/O commands.
 */
#include "emu_ut_helpers.h"

#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)
#define BUF_SIZE (256u * 1024u)

static uint8_t *g_wbuf;
static uint8_t *g_rbuf;
static uint64_t *g_list;

static uint16_t
io(struct ut_host *h, uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb, void *buf,
   uint64_t len)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t prp1 = 0, prp2 = 0;

	if (buf != NULL) {
		ut_prps(buf, len, g_list, &prp1, &prp2);
	}
	ut_rw_cmd(&cmd, opc, nsid, slba, nlb, prp1, prp2);
	if (ut_cmd(h, 1, &cmd, &cpl) != 0) {
		return 0xffff;
	}
	CU_ASSERT_EQUAL(cpl.cid, cmd.cid);
	return ut_st(&cpl);
}

static void
fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len; i++) {
		p[i] = (uint8_t)((i * 31 + seed) ^ (i >> 9));
	}
}

static bool
all_zero(const uint8_t *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++) {
		if (p[i] != 0) {
			return false;
		}
	}
	return true;
}

static int
setup(struct ut_host *h, const char *opts)
{
	if (ut_host_init(h, opts) != 0) {
		return -1;
	}
	return ut_create_qpair(h, 1, 64);
}

/* Many sizes and buffer offsets on a 512 B and a 4 KiB namespace. */
static void
test_rw_sizes_offsets(void)
{
	static const uint32_t offs[] = { 0, 4, 512, 2048, 4092 };
	static const uint32_t blocks[] = { 1, 2, 7, 8, 9, 16, 33 };
	struct ut_host h;
	uint32_t seed = 1;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "nn=2 size=4M lba=512/4096"), 0);
	for (uint32_t ns = 1; ns <= 2; ns++) {
		uint32_t bs = ns == 1 ? 512 : 4096;

		for (uint32_t o = 0; o < NVP_COUNTOF(offs); o++) {
			for (uint32_t b = 0; b < NVP_COUNTOF(blocks); b++) {
				uint64_t len = (uint64_t)blocks[b] * bs;
				uint64_t slba = (seed * 37) % 200;

				if (len > 128 * 1024) {
					continue; /* MDTS 5: 128 KiB */
				}
				fill(g_wbuf + offs[o], len, seed++);
				memset(g_rbuf + offs[o], 0, len);
				CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, ns, slba, blocks[b],
						   g_wbuf + offs[o], len),
						0);
				CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, ns, slba, blocks[b],
						   g_rbuf + offs[o], len),
						0);
				CU_ASSERT(memcmp(g_wbuf + offs[o], g_rbuf + offs[o], len) == 0);
			}
		}
	}
	ut_host_fini(&h);
}

static void
test_lba_range_and_nsid(void)
{
	struct ut_host h;
	uint64_t nsze;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "nn=2 size=1M"), 0);
	nsze = h.c->ns[0].nsze;
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, nsze - 1, 1, g_rbuf, 512), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, nsze - 1, 2, g_rbuf, 1024),
			GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, nsze, 1, g_wbuf, 512),
			GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, UINT64_MAX - 1, 4, g_rbuf, 2048),
			GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE_ZEROES, 1, nsze - 2, 3, NULL, 0),
			GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_COMPARE, 1, nsze, 1, g_rbuf, 512),
			GEN(NVME_SC_LBA_OUT_OF_RANGE));
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t nsid = i == 0 ? 0 : i == 1 ? 3 : 0xffffffff;

		CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, nsid, 0, 1, g_rbuf, 512),
				GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
		CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE_ZEROES, nsid, 0, 1, NULL, 0),
				GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	}
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 2, 0, 1, g_rbuf, 512), 0);
	ut_host_fini(&h);
}

static void
test_mdts_and_prp_errors(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	void *heap = aligned_alloc(4096, 8192);

	CU_ASSERT_EQUAL_FATAL(setup(&h, "mdts=2"), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 32, g_rbuf, 16384), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 33, g_rbuf, 16896), GEN(NVME_SC_INVALID_FIELD));
	/* PRP1 not dword aligned */
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1, nvp_env_vtophys(g_rbuf, NULL) + 2, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_INVALID_PRP_OFFSET));
	/* not DMA memory: PRP1, then PRP2 */
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, 1, (uintptr_t)heap, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_DATA_TRANSFER_ERROR));
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 16, nvp_env_vtophys(g_rbuf, NULL),
		  (uintptr_t)heap + 4096);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_DATA_TRANSFER_ERROR));
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.dma_rejects, 2);
	/* SGLs are not supported; fused commands neither */
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1, nvp_env_vtophys(g_rbuf, NULL), 0);
	cmd.psdt = NVME_PSDT_SGL_MPTR_CONTIG;
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_INVALID_FIELD));
	ut_rw_cmd(&cmd, NVME_OPC_COMPARE, 1, 0, 1, nvp_env_vtophys(g_rbuf, NULL), 0);
	cmd.fuse = 1;
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_INVALID_FIELD));
	/* opcodes outside ONCS */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE_UNCORRECTABLE, 1, 0, 1, NULL, 0),
			GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_VERIFY, 1, 0, 1, NULL, 0), GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(io(&h, 0x7e, 1, 0, 1, NULL, 0), GEN(NVME_SC_INVALID_OPCODE));
	ut_host_fini(&h);
	free(heap);
}

static struct nvme_dsm_range *
dsm_ranges(void)
{
	return (struct nvme_dsm_range *)(void *)(g_wbuf + BUF_SIZE - 4096);
}

static uint16_t
dsm(struct ut_host *h, uint32_t nsid, uint32_t nr, uint32_t attr)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_DATASET_MANAGEMENT;
	cmd.nsid = nsid;
	cmd.cdw10 = nr - 1;
	cmd.cdw11 = attr;
	cmd.dptr.prp.prp1 = nvp_env_vtophys(dsm_ranges(), NULL);
	if (ut_cmd(h, 1, &cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

static void
test_write_zeroes_and_dsm(void)
{
	struct ut_host h;
	struct nvme_dsm_range *r = dsm_ranges();
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "size=4M"), 0);
	fill(g_wbuf, 65536, 3);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 0, 128, g_wbuf, 65536), 0);
	/* write zeroes over blocks 8..15, DEAC over 16..23 */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE_ZEROES, 1, 8, 8, NULL, 0), 0);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE_ZEROES, 1, 16, 8, 0, 0);
	cmd.cdw12 |= NVME_IO_FLAGS_DEALLOCATE;
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 128, g_rbuf, 65536), 0);
	CU_ASSERT(memcmp(g_rbuf, g_wbuf, 4096) == 0);
	CU_ASSERT(all_zero(g_rbuf + 4096, 8192));
	CU_ASSERT(memcmp(g_rbuf + 12288, g_wbuf + 12288, 65536 - 12288) == 0);
	/* DSM deallocate two ranges; a range of length 0 is ignored */
	memset(r, 0, 4096);
	r[0].starting_lba = 32;
	r[0].length = 4;
	r[1].starting_lba = 100;
	r[1].length = 28;
	r[2].starting_lba = 0;
	r[2].length = 0;
	CU_ASSERT_EQUAL(dsm(&h, 1, 3, NVME_DSM_ATTR_DEALLOCATE), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 128, g_rbuf, 65536), 0);
	CU_ASSERT(all_zero(g_rbuf + 32 * 512, 4 * 512));
	CU_ASSERT(all_zero(g_rbuf + 100 * 512, 28 * 512));
	CU_ASSERT(memcmp(g_rbuf + 36 * 512, g_wbuf + 36 * 512, 64 * 512) == 0);
	/* hints only: nothing changes; a range past the end fails, changing nothing */
	r[0].starting_lba = 40;
	r[0].length = 4;
	CU_ASSERT_EQUAL(dsm(&h, 1, 1, NVME_DSM_ATTR_INTEGRAL_READ), 0);
	r[1].starting_lba = h.c->ns[0].nsze - 1;
	r[1].length = 2;
	CU_ASSERT_EQUAL(dsm(&h, 1, 2, NVME_DSM_ATTR_DEALLOCATE), GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 40, 4, g_rbuf, 2048), 0);
	CU_ASSERT(memcmp(g_rbuf, g_wbuf + 40 * 512, 2048) == 0);
	CU_ASSERT_EQUAL(dsm(&h, 2, 1, NVME_DSM_ATTR_DEALLOCATE),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	/* 256 ranges: a 4 KiB range list */
	for (uint32_t i = 0; i < 256; i++) {
		r[i].starting_lba = i * 4;
		r[i].length = 1;
	}
	CU_ASSERT_EQUAL(dsm(&h, 1, 256, NVME_DSM_ATTR_DEALLOCATE), 0);
	ut_host_fini(&h);
}

static void
test_compare_and_flush(void)
{
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "nn=2 lba=4096 size=1M"), 0);
	fill(g_wbuf, 8192, 9);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 5, 2, g_wbuf, 8192), 0);
	memcpy(g_rbuf, g_wbuf, 8192);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_COMPARE, 1, 5, 2, g_rbuf, 8192), 0);
	g_rbuf[8191] ^= 1;
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_COMPARE, 1, 5, 2, g_rbuf, 8192),
			UT_SC(NVME_SCT_MEDIA_ERROR, NVME_SC_COMPARE_FAILURE));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_FLUSH, 1, 0, 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_FLUSH, 0xffffffff, 0, 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_FLUSH, 0, 0, 1, NULL, 0),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_FLUSH, 3, 0, 1, NULL, 0),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	/* compare failures are not media errors in SMART, but are logged */
	CU_ASSERT_EQUAL(h.c->smart.media_errors, 0);
	CU_ASSERT_EQUAL(h.c->err_count, 3);
	CU_ASSERT_EQUAL(h.c->smart.read_cmds, 2);
	ut_host_fini(&h);
}

static void
test_stats_and_error_log(void)
{
	struct ut_host h;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	const struct nvme_error_information_entry *e;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "size=1M"), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 0, 8, g_wbuf, 4096), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 8, g_rbuf, 4096), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), 0);
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 4096, 1, nvp_env_vtophys(g_rbuf, NULL), 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.io_cmds, 4);
	CU_ASSERT_EQUAL(st.read_cmds, 2);
	CU_ASSERT_EQUAL(st.write_cmds, 1);
	CU_ASSERT_EQUAL(st.bytes_read, 4608);
	CU_ASSERT_EQUAL(st.bytes_written, 4096);
	CU_ASSERT(st.admin_cmds >= 2);
	CU_ASSERT_EQUAL(h.c->smart.read_cmds, 2);
	CU_ASSERT_EQUAL(h.c->smart.write_cmds, 1);
	/* the failed read is the newest error log entry */
	CU_ASSERT_EQUAL(h.c->err_count, 1);
	e = &h.c->errlog[0];
	CU_ASSERT_EQUAL(e->error_count, 1);
	CU_ASSERT_EQUAL(e->sqid, 1);
	CU_ASSERT_EQUAL(e->cid, cmd.cid);
	CU_ASSERT_EQUAL(e->lba, 4096);
	CU_ASSERT_EQUAL(e->nsid, 1);
	CU_ASSERT_EQUAL(e->status.sc, NVME_SC_LBA_OUT_OF_RANGE);
	CU_ASSERT_EQUAL(e->status.dnr, 1);
	ut_host_fini(&h);
}

static void
test_command_faults(void)
{
	struct ut_host h;
	struct nvp_emu_ctrlr *pub;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint16_t err = UT_SC(NVME_SCT_MEDIA_ERROR, NVME_SC_UNRECOVERED_READ_ERROR);
	uint16_t cid;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "size=1M"), 0);
	pub = (struct nvp_emu_ctrlr *)h.c;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_ERROR, 2, 1, err), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_ERROR, 1, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, 99, 1, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), 0); /* skipped */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), err);
	/* an errored write is not executed */
	fill(g_wbuf, 512, 77);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 0, 1, g_wbuf, 512), err);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), 0);
	CU_ASSERT(all_zero(g_rbuf, 512));
	/* admin commands are never affected */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_ERROR, 5, 0, err), 0);
	cmd = (struct nvme_cmd){ .opc = NVME_OPC_GET_FEATURES, .cdw10 = NVME_FEAT_ARBITRATION };
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_NONE, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), 0);
	/* drop_cpl: the write executes, its completion never comes, Abort cannot find it */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_DROP_CPL, 1, 0, 0), 0);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, 1, nvp_env_vtophys(g_wbuf, NULL), 0);
	cid = ut_submit(&h, 1, &cmd, false);
	ut_poll(h.c, 50);
	CU_ASSERT_FALSE(ut_reap(&h, 1, &cpl));
	cmd = (struct nvme_cmd){ .opc = NVME_OPC_ABORT, .cdw10 = NVME_ABORT_CDW10(1, cid) };
	CU_ASSERT_EQUAL(ut_cmd(&h, 0, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.cdw0 & 1u, 1u);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 0, 1, g_rbuf, 512), 0);
	CU_ASSERT(memcmp(g_rbuf, g_wbuf, 512) == 0);
	nvp_emu_ctrlr_get_stats(pub, &st);
	CU_ASSERT_EQUAL(st.dropped_cpls, 1);
	ut_host_fini(&h);
}

static void
test_null_backend(void)
{
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "backend=null size=1T"), 0);
	fill(g_wbuf, 4096, 5);
	memset(g_rbuf, 0xff, 4096);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 1000000, 8, g_wbuf, 4096), 0);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 1000000, 8, g_rbuf, 4096), 0);
	CU_ASSERT(all_zero(g_rbuf, 4096));
	ut_host_fini(&h);
}

/* Like io() with a metadata pointer. */
static uint16_t
io_md(struct ut_host *h, uint8_t opc, uint64_t slba, uint32_t nlb, void *buf, uint64_t len,
      uint64_t mptr)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t prp1 = 0, prp2 = 0;

	ut_prps(buf, len, g_list, &prp1, &prp2);
	ut_rw_cmd(&cmd, opc, 1, slba, nlb, prp1, prp2);
	cmd.mptr = mptr;
	if (ut_cmd(h, 1, &cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

/* Separate metadata (ms=16, mset=0): MPTR read and written, and checked. */
static void
test_separate_metadata(void)
{
	uint8_t *md = g_wbuf + 128 * 1024, *rmd = g_rbuf + 128 * 1024;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "size=1M ms=16"), 0);
	CU_ASSERT_EQUAL(h.c->ns[0].lbaf, 2);
	CU_ASSERT_EQUAL(h.c->ns[0].ms, 16);
	fill(g_wbuf, 4096, 11);
	fill(md, 8 * 16, 12);
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_WRITE, 5, 8, g_wbuf, 4096, nvp_env_vtophys(md, NULL)),
			0);
	memset(g_rbuf, 0, 4096);
	memset(rmd, 0, 8 * 16);
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_READ, 5, 8, g_rbuf, 4096, nvp_env_vtophys(rmd, NULL)),
			0);
	CU_ASSERT(memcmp(g_wbuf, g_rbuf, 4096) == 0);
	CU_ASSERT(memcmp(md, rmd, 8 * 16) == 0);
	/* Part of the range: metadata of LBA 7 on is where it was written. */
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_READ, 7, 2, g_rbuf, 1024, nvp_env_vtophys(rmd, NULL)),
			0);
	CU_ASSERT(memcmp(md + 2 * 16, rmd, 2 * 16) == 0);
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_COMPARE, 5, 8, g_wbuf, 4096, nvp_env_vtophys(md, NULL)),
			0);
	md[3] ^= 1;
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_COMPARE, 5, 8, g_wbuf, 4096, nvp_env_vtophys(md, NULL)),
			UT_SC(NVME_SCT_MEDIA_ERROR, NVME_SC_COMPARE_FAILURE));
	/* MPTR 0 and MPTR not DMA memory: Data Transfer Error; misaligned: Invalid Field. */
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_READ, 5, 8, g_rbuf, 4096, 0),
			GEN(NVME_SC_DATA_TRANSFER_ERROR));
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_WRITE, 5, 8, g_wbuf, 4096, 0x7000000000ull),
			GEN(NVME_SC_DATA_TRANSFER_ERROR));
	CU_ASSERT_EQUAL(
		io_md(&h, NVME_OPC_READ, 5, 8, g_rbuf, 4096, nvp_env_vtophys(rmd + 2, NULL)),
		GEN(NVME_SC_INVALID_FIELD));
	{
		struct nvp_emu_stats st2 = { .info_size = sizeof(st2) };

		nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st2);
		CU_ASSERT_EQUAL(st2.dma_rejects - st.dma_rejects, 2);
	}
	/* Write zeroes clears the metadata too. */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE_ZEROES, 1, 5, 8, NULL, 0), 0);
	CU_ASSERT_EQUAL(io_md(&h, NVME_OPC_READ, 5, 8, g_rbuf, 4096, nvp_env_vtophys(rmd, NULL)),
			0);
	CU_ASSERT(all_zero(rmd, 8 * 16));
	ut_host_fini(&h);
}

/* Extended LBAs (4096 + 64, mset=1): metadata interleaved; MDTS counts it. */
static void
test_extended_metadata(void)
{
	const uint32_t bs = 4096 + 64;
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(setup(&h, "size=1M lba=4096 ms=64 mset=1 mdts=2"), 0);
	CU_ASSERT_EQUAL(h.c->ns[0].lbaf, 3);
	fill(g_wbuf + 4, 3 * bs, 21);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_WRITE, 1, 10, 3, g_wbuf + 4, 3 * bs), 0);
	memset(g_rbuf, 0, 4 * bs);
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 10, 3, g_rbuf + 512, 3 * bs), 0);
	CU_ASSERT(memcmp(g_wbuf + 4, g_rbuf + 512, 3 * bs) == 0);
	/* One block alone: its metadata follows its data. */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 11, 1, g_rbuf, bs), 0);
	CU_ASSERT(memcmp(g_wbuf + 4 + bs, g_rbuf, bs) == 0);
	/* 16 KiB limit: three 4160-byte blocks fit, four do not. */
	CU_ASSERT_EQUAL(io(&h, NVME_OPC_READ, 1, 10, 4, g_rbuf, 4 * bs),
			GEN(NVME_SC_INVALID_FIELD));
	ut_host_fini(&h);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_rw_sizes_offsets),    UT_TEST(test_lba_range_and_nsid),
		UT_TEST(test_mdts_and_prp_errors), UT_TEST(test_write_zeroes_and_dsm),
		UT_TEST(test_compare_and_flush),   UT_TEST(test_stats_and_error_log),
		UT_TEST(test_command_faults),      UT_TEST(test_null_backend),
		UT_TEST(test_separate_metadata),   UT_TEST(test_extended_metadata),
	};

	ut_env_init();
	g_wbuf = nvp_env_dma_zmalloc(BUF_SIZE, 4096, NULL);
	g_rbuf = nvp_env_dma_zmalloc(BUF_SIZE, 4096, NULL);
	g_list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	return ut_run("emu_io", tests, NVP_COUNTOF(tests));
}
