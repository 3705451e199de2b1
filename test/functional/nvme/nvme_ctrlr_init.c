/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controller initialisation, failure and shutdown, seen from both sides: the driver's
 * return codes and timing, and the registers in the function's BAR0.
 *  - CSTS.RDY never rises: nvp_nvme_connect() gives -ETIMEDOUT after about CAP.TO.
 *  - CSTS.RDY late but within CAP.TO: attach waits for it.
 *  - CSTS.CFS at start: -EIO; CFS or all-ones registers while attached: commands fail
 *    in bounded time, the controller is marked failed, detach still releases it.
 *  - Detach shuts down with CC.SHN = normal and waits for CSTS.SHST = complete; the
 *    controller can be attached again afterwards.
 *  - Reset keeps namespaces, data and qpairs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static bool
function_claimed(struct nvp_emu_ctrlr *emu)
{
	struct nvp_pci_device *dev = nvp_pci_device_find(nvp_emu_ctrlr_get_pci_addr(emu));

	return dev != NULL && dev->claimed;
}

static void
test_rdy_never(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_emu_ctrlr *emu = NULL;
	uint64_t start, elapsed;
	int rc;

	/* CAP.TO = 1: 500 ms. */
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("size=4M,fault=rdy_never,to=1", &emu), 0);
	start = fx_now_us();
	rc = fx_connect_pcie(emu, NULL, &ctrlr);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  connect: %d after %" PRIu64 " ms\n", rc, elapsed / 1000);
	CU_ASSERT_EQUAL(rc, -ETIMEDOUT);
	CU_ASSERT_PTR_NULL(ctrlr);
	CU_ASSERT(elapsed >= 400000);
	CU_ASSERT(elapsed < 5000000);
	/* The failed attach let go of the function. */
	CU_ASSERT_FALSE(function_claimed(emu));

	/* Clear the fault: the same controller attaches now. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(emu, NVP_EMU_FAULT_RDY_NEVER, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(fx_connect_pcie(emu, NULL, &ctrlr), 0);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);

	/* Through a "trtype:emu" ID: the device made for the attach is destroyed again. */
	ctrlr = NULL;
	start = fx_now_us();
	rc = fx_connect_str("trtype:emu name:rdynever size:4M fault:rdy_never to:1", NULL, &ctrlr);
	elapsed = fx_now_us() - start;
	CU_ASSERT_EQUAL(rc, -ETIMEDOUT);
	CU_ASSERT(elapsed < 5000000);
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("rdynever"));
}

static void
test_rdy_delay(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_emu_ctrlr *emu = NULL;
	uint64_t start, elapsed;
	int rc;

	/* RDY follows EN after 300 ms; CAP.TO allows 10 s: attach waits and succeeds. */
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("size=4M,rdy_delay_ms=300", &emu), 0);
	start = fx_now_us();
	rc = fx_connect_pcie(emu, NULL, &ctrlr);
	elapsed = fx_now_us() - start;
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(elapsed >= 250000);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(ctrlr).bits.rdy, 1);
		/* A reset waits for RDY both ways too. */
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(ctrlr), 0);
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);

	/* 800 ms delay but CAP.TO = 1 (500 ms): the driver honours CAP.TO. */
	ctrlr = NULL;
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("size=4M,rdy_delay_ms=800,to=1", &emu), 0);
	rc = fx_connect_pcie(emu, NULL, &ctrlr);
	CU_ASSERT_EQUAL(rc, -ETIMEDOUT);
	CU_ASSERT_FALSE(function_claimed(emu));
	if (rc == 0) {
		nvp_nvme_detach(ctrlr);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);
}

static void
test_cfs_at_start(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_emu_ctrlr *emu = NULL;
	uint64_t start, elapsed;
	int rc;

	CU_ASSERT_EQUAL_FATAL(fx_emu_create("size=4M,fault=cfs,to=2", &emu), 0);
	start = fx_now_us();
	rc = fx_connect_pcie(emu, NULL, &ctrlr);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  connect with CFS: %d after %" PRIu64 " ms\n", rc, elapsed / 1000);
	CU_ASSERT_EQUAL(rc, -EIO);
	CU_ASSERT_PTR_NULL(ctrlr);
	CU_ASSERT(elapsed < 5000000);
	CU_ASSERT_FALSE(function_claimed(emu));
	if (rc == 0) {
		nvp_nvme_detach(ctrlr);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);
}

/* A fault while attached: admin and I/O fail in bounded time, nothing hangs. */
static void
runtime_fault(enum nvp_emu_fault_type type)
{
	struct nvp_nvme_ctrlr_opts opts;
	union nvme_csts_register csts;
	struct fx_cpl c = { 0 };
	struct fx_ctrlr fx;
	uint32_t result;
	uint64_t start, elapsed;
	uint8_t *buf;
	int rc;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_timeout_ms = 1000;
	if (fx_open_opts(&fx, "size=4M,to=2", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4096);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 0, 1, 0, NULL), 0);

	/* The controller thread applies the fault; give it a moment to show. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, type, 1, 0, 0), 0);
	start = fx_now_us();
	do {
		csts = nvp_nvme_ctrlr_get_regs_csts(fx.ctrlr);
	} while (!(type == NVP_EMU_FAULT_CFS ? csts.bits.cfs : csts.raw == 0xffffffffu) &&
		 fx_now_us() - start < 1000000);
	if (type == NVP_EMU_FAULT_CFS) {
		CU_ASSERT_EQUAL(csts.bits.cfs, 1);
	} else {
		CU_ASSERT_EQUAL(csts.raw, 0xffffffffu);
	}

	/* Admin: an error within about the admin timeout. */
	start = fx_now_us();
	rc = nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, 0, &result,
					NULL, 0, NULL);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  admin command after fault: %d in %" PRIu64 " ms\n", rc, elapsed / 1000);
	CU_ASSERT(rc < 0);
	CU_ASSERT(elapsed < 5000000);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));

	/* I/O on a failed controller: refused, or completed with an error; never lost. */
	rc = nvp_nvme_ns_cmd_read(fx.ns, fx.qpair, buf, 0, 1, fx_cpl_cb, &c, 0);
	if (rc == 0) {
		rc = fx_poll_until(fx.qpair, &c.calls, 1, 5000);
		CU_ASSERT(rc == 0 || rc == -ENXIO);
		if (rc == -ENXIO) {
			/* process_completions() reported the failure; it has completed the
			 * outstanding requests with an error. */
			CU_ASSERT_EQUAL(c.calls, 1);
		}
		CU_ASSERT(nvme_cpl_is_error(&c.cpl));
	} else {
		CU_ASSERT_EQUAL(rc, -ENXIO);
	}
	CU_ASSERT(nvp_nvme_qpair_process_completions(fx.qpair, 0) == -ENXIO);
	CU_ASSERT(nvp_nvme_ctrlr_process_admin_completions(fx.ctrlr) == -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &(struct nvme_cmd){ .opc = 0x0a },
						      NULL, 0, NULL),
			-ENXIO);

	/* Freeing and detaching still release everything, in bounded time. */
	start = fx_now_us();
	nvp_nvme_ctrlr_free_io_qpair(fx.qpair);
	fx.qpair = NULL;
	rc = nvp_nvme_detach(fx.ctrlr);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  free + detach after fault: %d in %" PRIu64 " ms\n", rc, elapsed / 1000);
	CU_ASSERT(elapsed < 10000000);
	fx.ctrlr = NULL;
	CU_ASSERT_FALSE(function_claimed(fx.emu));

	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, type, 0, 0, 0), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_cfs_while_attached(void)
{
	runtime_fault(NVP_EMU_FAULT_CFS);
}

static void
test_all_ones_while_attached(void)
{
	runtime_fault(NVP_EMU_FAULT_ALL_ONES);
}

static void
test_shutdown_on_detach(void)
{
	union nvme_csts_register csts;
	union nvme_cc_register cc;
	struct nvp_nvme_ctrlr_opts opts;
	struct fx_ctrlr fx;
	uint32_t v = 0;
	uint8_t *buf;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4096);
	fx_pattern_fill(buf, 9, 1, 512, 0xc1);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 9, 1, 0, NULL), 0);

	/* Running: SHST normal operation. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(fx.ctrlr).bits.shst, NVME_SHST_NORMAL);

	/* Detach with qpairs still allocated: they are freed by the detach. */
	{
		struct nvp_nvme_qpair *q2 = NULL;

		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 16, 0, 0, false, &q2), 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_detach(fx.ctrlr), 0);
	fx.ctrlr = NULL;
	fx.qpair = NULL;

	/* BAR0 shows the normal shutdown. */
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_CC, &v), 0);
	cc.raw = v;
	CU_ASSERT_EQUAL(cc.bits.shn, NVME_SHN_NORMAL);
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_CSTS, &v), 0);
	csts.raw = v;
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_COMPLETE);
	CU_ASSERT_EQUAL(csts.bits.cfs, 0);
	CU_ASSERT_FALSE(function_claimed(fx.emu));

	/* Attach again after the shutdown: the data is there. */
	CU_ASSERT_EQUAL_FATAL(fx_connect_pcie(fx.emu, NULL, &fx.ctrlr), 0);
	fx.ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 1);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 0, 0, 0, false, &fx.qpair), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(fx.ctrlr).bits.shst, NVME_SHST_NORMAL);
	memset(buf, 0, 512);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 9, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 9, 1, 512, 0xc1) < 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(fx.qpair), 0);
	fx.qpair = NULL;
	CU_ASSERT_EQUAL(nvp_nvme_detach(fx.ctrlr), 0);

	/* Without shutdown notification: CC.SHN is not "normal". */
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.no_shn_notification = true;
	fx.ctrlr = NULL;
	CU_ASSERT_EQUAL_FATAL(fx_connect_pcie(fx.emu, &opts, &fx.ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(fx.ctrlr), 0);
	fx.ctrlr = NULL;
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_CC, &v), 0);
	cc.raw = v;
	CU_ASSERT_NOT_EQUAL(cc.bits.shn, NVME_SHN_NORMAL);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_reset_keeps_state(void)
{
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	struct nvp_nvme_qpair *q2 = NULL;
	struct fx_ctrlr fx;
	uint8_t *buf;
	uint16_t qid1, qid2;

	if (fx_open(&fx, "nn=2,lba=512/4096,size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 16, 0, 0, false, &q2), 0);
	qid1 = nvp_nvme_qpair_get_id(fx.qpair);
	qid2 = nvp_nvme_qpair_get_id(q2);
	buf = fx_dma_alloc(8192);
	fx_pattern_fill(buf, 4, 2, 4096, 0xd1);
	CU_ASSERT_EQUAL(fx_io(nvp_nvme_ctrlr_get_ns(fx.ctrlr, 2), q2, FX_WRITE, buf, 4, 2, 0, NULL),
			0);
	nvp_emu_ctrlr_get_stats(fx.emu, &before);

	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	nvp_emu_ctrlr_get_stats(fx.emu, &after);
	CU_ASSERT_EQUAL(after.resets, before.resets + 2);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));

	/* Same namespaces, same qpairs (ids kept), same data. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(fx.ctrlr), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(nvp_nvme_ctrlr_get_ns(fx.ctrlr, 2)), 4096);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_id(fx.qpair), qid1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_id(q2), qid2);
	memset(buf, 0, 8192);
	CU_ASSERT_EQUAL(
		fx_io(nvp_nvme_ctrlr_get_ns(fx.ctrlr, 2), fx.qpair, FX_READ, buf, 4, 2, 0, NULL),
		0);
	CU_ASSERT(fx_pattern_check(buf, 4, 2, 4096, 0xd1) < 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, q2, FX_WRITE, buf, 0, 16, 0, NULL), 0);

	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q2), 0);
	fx_close(&fx);
}

/* The registers the driver programs, as the device sees them. */
static void
test_registers_programmed(void)
{
	struct fx_ctrlr fx;
	union nvme_aqa_register aqa;
	struct nvp_nvme_ctrlr_opts opts;
	uint32_t v = 0, lo = 0, hi = 0;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	CU_ASSERT_EQUAL(opts.admin_queue_size, 32);
	CU_ASSERT_EQUAL(opts.io_queue_size, 256);
	CU_ASSERT_EQUAL(opts.num_io_queues, 64);
	CU_ASSERT_EQUAL(opts.max_io_size, 2u << 20);
	opts.admin_queue_size = 16;
	if (fx_open_opts(&fx, "size=4M", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_AQA, &v), 0);
	aqa.raw = v;
	CU_ASSERT_EQUAL(aqa.bits.asqs, 15);
	CU_ASSERT_EQUAL(aqa.bits.acqs, 15);
	/* ASQ/ACQ: page aligned bus addresses of DMA memory. */
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_ASQ, &lo), 0);
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_ASQ + 4, &hi), 0);
	CU_ASSERT_EQUAL(lo & 0xfff, 0);
	CU_ASSERT_PTR_NOT_NULL(nvp_env_iova_to_vaddr(((uint64_t)hi << 32) | lo, 16 * 64));
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_ACQ, &lo), 0);
	CU_ASSERT_EQUAL(fx_emu_read_reg32(fx.emu, NVME_REG_ACQ + 4, &hi), 0);
	CU_ASSERT_EQUAL(lo & 0xfff, 0);
	CU_ASSERT_PTR_NOT_NULL(nvp_env_iova_to_vaddr(((uint64_t)hi << 32) | lo, 16 * 16));
	/* Bus mastering and memory space enabled in config space. */
	{
		struct nvp_pci_device *dev = nvp_pci_device_find(
			nvp_emu_ctrlr_get_pci_addr(fx.emu));
		uint16_t cmd = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
		CU_ASSERT_EQUAL(nvp_pci_cfg_read16(dev, &cmd, NVP_PCI_CFG_COMMAND), 0);
		CU_ASSERT(cmd & NVP_PCI_COMMAND_MASTER);
		CU_ASSERT(cmd & NVP_PCI_COMMAND_MEMORY);
		CU_ASSERT_EQUAL(nvp_pci_cfg_read32(dev, &v, NVP_PCI_CFG_CLASS_REV), 0);
		CU_ASSERT_EQUAL(v >> 8, NVP_PCI_CLASS_NVME);
	}
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "rdy_never", test_rdy_never },
		{ "rdy_delay", test_rdy_delay },
		{ "cfs_at_start", test_cfs_at_start },
		{ "cfs_while_attached", test_cfs_while_attached },
		{ "all_ones_while_attached", test_all_ones_while_attached },
		{ "shutdown_on_detach", test_shutdown_on_detach },
		{ "reset_keeps_state", test_reset_keeps_state },
		{ "registers_programmed", test_registers_programmed },
	};

	return fx_main(argc, argv, "nvme_ctrlr_init", tests, NVP_COUNTOF(tests));
}
