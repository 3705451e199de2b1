/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several namespaces on one controller: each has its own LBA format and size, data
 * written to one never shows in another, and a command for a namespace that does not
 * exist gets Invalid Namespace or Format from the device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* Two namespaces of different LBA formats: each is its own storage. */
static void
check_isolation_ns(struct nvp_nvme_ns *ns1, struct nvp_nvme_ns *ns2, struct nvp_nvme_qpair *qpair)
{
	uint32_t bs1 = nvp_nvme_ns_get_sector_size(ns1), bs2 = nvp_nvme_ns_get_sector_size(ns2);
	uint64_t last1 = nvp_nvme_ns_get_num_sectors(ns1) - 1;
	uint64_t last2 = nvp_nvme_ns_get_num_sectors(ns2) - 1;
	uint32_t c1 = 32768 / bs1, c2 = 32768 / bs2;
	uint8_t *buf;

	buf = fx_dma_alloc(64 * 1024);

	/* The same 32 KiB byte range of both namespaces, different data. */
	fx_pattern_fill(buf, 0, c1, bs1, 1);
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_WRITE, buf, 0, c1, 0, NULL), 0);
	fx_pattern_fill(buf, 0, c2, bs2, 2);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_WRITE, buf, 0, c2, 0, NULL), 0);

	memset(buf, 0, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_READ, buf, 0, c1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, c1, bs1, 1) < 0);
	memset(buf, 0, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_READ, buf, 0, c2, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, c2, bs2, 2) < 0);

	/* The last block of each, then one past it. */
	fx_pattern_fill(buf, last1, 1, bs1, 3);
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_WRITE, buf, last1, 1, 0, NULL), 0);
	fx_pattern_fill(buf, last2, 1, bs2, 4);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_WRITE, buf, last2, 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_READ, buf, last1 + 1, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_READ, buf, last2 + 1, 1, 0, NULL), -ERANGE);
	/* ns2's last LBA would be inside ns1 if the namespaces were confused. */
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_READ, buf, last1, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, last1, 1, bs1, 3) < 0);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_READ, buf, last2, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, last2, 1, bs2, 4) < 0);

	/* Zeroing ns2 leaves ns1 alone. */
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_WRITE_ZEROES, NULL, 0, c2, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(ns2, qpair, FX_READ, buf, 0, c2, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 32768));
	CU_ASSERT_EQUAL(fx_io(ns1, qpair, FX_READ, buf, 0, c1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, c1, bs1, 1) < 0);

	nvp_env_dma_free(buf);
}

static void
check_isolation(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ns *ns1 = nvp_nvme_ctrlr_get_ns(ctrlr, 1);
	struct nvp_nvme_ns *ns2 = nvp_nvme_ctrlr_get_ns(ctrlr, 2);

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns1), 512);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns2), 4096);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns1), (8u << 20) / 512);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns2), (8u << 20) / 4096);
	check_isolation_ns(ns1, ns2, qpair);
}

/* Up to @max active namespaces of @ctrlr into @ns. \return how many. */
static unsigned int
active_ns(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_ns **ns, unsigned int max)
{
	unsigned int n = 0;
	uint32_t nsid;

	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(ctrlr); nsid != 0 && n < max;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, nsid)) {
		ns[n] = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ns[n]);
		n++;
	}
	return n;
}

/* A real controller: its first two namespaces, whatever their formats. */
static void
two_ns_real(struct fx_ctrlr *fx)
{
	struct nvp_nvme_ns *ns[2];

	if (active_ns(fx->ctrlr, ns, 2) < 2) {
		printf("SKIP (the controller has one active namespace)\n");
		return;
	}
	printf("  nsid %u: %u-byte blocks, nsid %u: %u-byte blocks\n", nvp_nvme_ns_get_id(ns[0]),
	       nvp_nvme_ns_get_sector_size(ns[0]), nvp_nvme_ns_get_id(ns[1]),
	       nvp_nvme_ns_get_sector_size(ns[1]));
	check_isolation_ns(ns[0], ns[1], fx->qpair);
}

static void
test_two_ns_pcie(void)
{
	struct fx_ctrlr fx;

	if (fx_open(&fx, "nn=2,lba=512/4096,size=8M") != 0) {
		fx_close(&fx);
		return;
	}
	if (!fx_is_emu(&fx)) {
		two_ns_real(&fx);
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(fx.ctrlr), 2);
	check_isolation(fx.ctrlr, fx.qpair);
	fx_close(&fx);
}

static void
test_two_ns_emu_trid(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qpair = NULL;

	FX_NEEDS_EMU("a \"trtype:emu\" transport ID");
	CU_ASSERT_EQUAL_FATAL(
		fx_connect_str("trtype:emu name:multi2 nn:2 lba:512/4096 size:8M", NULL, &ctrlr),
		0);
	if (fx_qpair_alloc(ctrlr, 0, 0, 0, false, &qpair) == 0) {
		check_isolation(ctrlr, qpair);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	} else {
		CU_FAIL("qpair");
	}
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
}

/* One request per namespace in flight together on one qpair. */
static void
test_interleaved(void)
{
	struct {
		struct fx_cpl c;
		uint8_t *buf;
	} reqs[16];
	struct nvp_nvme_ns *ns[4];
	struct fx_ctrlr fx;
	unsigned int i, round, nns;
	int rc;

	if (fx_open(&fx, "nn=4,lba=512/4096/512/4096,size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	/* A real controller: as many of its namespaces as it has, in turn. */
	nns = active_ns(fx.ctrlr, ns, 4);
	CU_ASSERT_FATAL(nns >= 1);
	if (fx_is_emu(&fx)) {
		CU_ASSERT_EQUAL_FATAL(nns, 4);
	}
	for (i = 0; i < 16; i++) {
		reqs[i].buf = fx_dma_alloc(4 * 4096);
	}
	for (round = 0; round < 2; round++) {
		bool write = round == 0;

		for (i = 0; i < 16; i++) {
			struct nvp_nvme_ns *n = ns[i % nns];
			uint32_t bs = nvp_nvme_ns_get_sector_size(n);
			uint32_t count = 4 * 4096 / bs;
			uint64_t lba = (uint64_t)(i / nns) * count;

			memset(&reqs[i].c, 0, sizeof(reqs[i].c));
			if (write) {
				fx_pattern_fill(reqs[i].buf, lba, count, bs, 0x10 + i % nns);
				rc = nvp_nvme_ns_cmd_write(n, fx.qpair, reqs[i].buf, lba, count,
							   fx_cpl_cb, &reqs[i].c, 0);
			} else {
				memset(reqs[i].buf, 0, 4 * 4096);
				rc = nvp_nvme_ns_cmd_read(n, fx.qpair, reqs[i].buf, lba, count,
							  fx_cpl_cb, &reqs[i].c, 0);
			}
			CU_ASSERT_EQUAL(rc, 0);
		}
		for (i = 0; i < 16; i++) {
			CU_ASSERT_EQUAL(fx_poll_until(fx.qpair, &reqs[i].c.calls, 1, FX_WAIT_MS),
					0);
			CU_ASSERT_FALSE(nvme_cpl_is_error(&reqs[i].c.cpl));
		}
	}
	for (i = 0; i < 16; i++) {
		uint32_t bs = nvp_nvme_ns_get_sector_size(ns[i % nns]);
		uint32_t count = 4 * 4096 / bs;

		CU_ASSERT(fx_pattern_check(reqs[i].buf, (uint64_t)(i / nns) * count, count, bs,
					   0x10 + i % nns) < 0);
		nvp_env_dma_free(reqs[i].buf);
	}
	fx_close(&fx);
}

/* The largest number of namespaces: every one is separate storage. */
static void
test_sixteen_ns(void)
{
	struct fx_ctrlr fx;
	uint8_t *buf;
	uint32_t nsid, count = 0;

	FX_NEEDS_EMU("a controller with 16 namespaces");
	if (fx_open(&fx, "nn=16,lba=4096,size=1M") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(fx.ctrlr), 16);
	buf = fx_dma_alloc(4096);
	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(fx.ctrlr); nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(fx.ctrlr, nsid)) {
		struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, nsid);

		CU_ASSERT_EQUAL(nsid, count + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns), 256);
		fx_pattern_fill(buf, 7, 1, 4096, nsid);
		CU_ASSERT_EQUAL(fx_io(ns, fx.qpair, FX_WRITE, buf, 7, 1, 0, NULL), 0);
		count++;
	}
	CU_ASSERT_EQUAL(count, 16);
	for (nsid = 1; nsid <= 16; nsid++) {
		memset(buf, 0, 4096);
		CU_ASSERT_EQUAL(fx_io(nvp_nvme_ctrlr_get_ns(fx.ctrlr, nsid), fx.qpair, FX_READ, buf,
				      7, 1, 0, NULL),
				0);
		CU_ASSERT(fx_pattern_check(buf, 7, 1, 4096, nsid) < 0);
	}
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* A raw one-block read of @nsid; \return as fx_io_raw(). */
static int
raw_read(struct fx_ctrlr *fx, uint32_t nsid, uint8_t *buf, uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_READ;
	cmd.nsid = nsid;
	cmd.cdw10 = 0; /* SLBA */
	cmd.cdw12 = 0; /* NLB 0's based: one block */
	memset(cpl, 0, sizeof(*cpl));
	return fx_io_raw(fx->ctrlr, fx->qpair, &cmd, buf, len, cpl);
}

/* Raw commands for namespaces that do not exist: the device's own status. */
static void
test_bad_nsid_raw(void)
{
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint32_t bad[] = { 0, 3, 1000 };
	uint32_t nn, nsid, good = 2;
	unsigned int i;

	if (fx_open(&fx, "nn=2,size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nn = nvp_nvme_ctrlr_get_data(fx.ctrlr)->nn;
	if (!fx_is_emu(&fx)) {
		/* Above NN is an invalid NSID whatever NN is (QEMU reports 256). */
		bad[1] = nn + 1;
		bad[2] = nn < 1000 ? 1000 : nn + 2;
		good = nvp_nvme_ns_get_id(fx.ns);
	}
	buf = fx_dma_alloc(4096);
	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		CU_ASSERT_EQUAL(raw_read(&fx, bad[i], buf, 512, &cpl), -EIO);
		FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	/* A valid but inactive NSID (1..NN, not attached): NVMe 1.4 section 6.1.5 lets the
	 * controller answer Invalid Field in Command (QEMU does) or Invalid Namespace. */
	for (nsid = 1; nsid <= nn && nsid < 1024; nsid++) {
		if (!nvp_nvme_ctrlr_is_active_ns(fx.ctrlr, nsid)) {
			CU_ASSERT_EQUAL(raw_read(&fx, nsid, buf, 512, &cpl), -EIO);
			fx_print_cpl("inactive nsid", &cpl);
			CU_ASSERT_EQUAL(cpl.status.sct, NVME_SCT_GENERIC);
			CU_ASSERT(cpl.status.sc == NVME_SC_INVALID_FIELD ||
				  cpl.status.sc == NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
			break;
		}
	}
	/* And a good one through the same path. */
	CU_ASSERT_EQUAL(raw_read(&fx, good, buf,
				 nvp_nvme_ns_get_sector_size(nvp_nvme_ctrlr_get_ns(fx.ctrlr, good)),
				 &cpl),
			0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "two_ns_pcie", test_two_ns_pcie },   { "two_ns_emu_trid", test_two_ns_emu_trid },
		{ "interleaved", test_interleaved },   { "sixteen_ns", test_sixteen_ns },
		{ "bad_nsid_raw", test_bad_nsid_raw },
	};

	return fx_main(argc, argv, "nvme_ns_multi", tests, NVP_COUNTOF(tests));
}
