/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_regs.c: CAP/VS, the CC/CSTS state machine driven by writing
 * CC in the register page and stepping the poll loop, controller faults, the PCI
 * configuration space and bus mastering, and a minimal-driver self test.
 */
#include "emu_ut_helpers.h"

static void
write_cc(struct emu_ctrlr *c, uint32_t en, uint32_t mps, uint32_t iosqes, uint32_t iocqes)
{
	union nvme_cc_register cc = { .raw = 0 };

	cc.bits.en = en;
	cc.bits.mps = mps;
	cc.bits.iosqes = iosqes;
	cc.bits.iocqes = iocqes;
	nvp_mmio_write4(&c->regs->cc.raw, cc.raw);
}

static void
test_cap_vs(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("mqes=255 to=10 dstrd=2 mpsmax=2 queues=7");
	union nvme_cap_register cap;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	cap.raw = nvp_mmio_read8(&c->regs->cap.raw);
	CU_ASSERT_EQUAL(cap.bits.mqes, 255);
	CU_ASSERT_EQUAL(cap.bits.cqr, 1);
	CU_ASSERT_EQUAL(cap.bits.to, 10);
	CU_ASSERT_EQUAL(cap.bits.dstrd, 2);
	CU_ASSERT_EQUAL(cap.bits.css, NVME_CAP_CSS_NVM);
	CU_ASSERT_EQUAL(cap.bits.mpsmin, 0);
	CU_ASSERT_EQUAL(cap.bits.mpsmax, 2);
	CU_ASSERT_EQUAL(nvp_mmio_read4(&c->regs->vs.raw), NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(ut_csts(c), 0);
	/* doorbells for 8 queue pairs with a 16-byte stride fit in the page */
	CU_ASSERT(c->regs_size >= 0x1000u + 2u * 8u * 16u);
	CU_ASSERT_EQUAL(c->regs_size % 4096, 0);
	CU_ASSERT_EQUAL((uint8_t *)emu_db_ptr(c, 7, 1) - (uint8_t *)c->regs,
			nvme_doorbell_offset(7, 1, 2));
	emu_ctrlr_free(c);
}

static bool
enable_ok(struct emu_ctrlr *c)
{
	uint64_t asq, acq;
	void *sq = nvp_env_dma_zmalloc(4096, 4096, &asq);
	void *cq = nvp_env_dma_zmalloc(4096, 4096, &acq);
	bool ok;

	nvp_mmio_write4(&c->regs->aqa.raw, (15u << 16) | 15u);
	nvp_mmio_write8(&c->regs->asq, asq);
	nvp_mmio_write8(&c->regs->acq, acq);
	write_cc(c, 1, 0, 6, 4);
	ok = ut_wait_rdy(c, 1, 1000);
	write_cc(c, 0, 0, 6, 4);
	ok = ok && ut_wait_rdy(c, 0, 1000);
	nvp_env_dma_free(sq);
	nvp_env_dma_free(cq);
	return ok;
}

static void
test_enable_disable(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("");
	struct nvp_emu_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT(enable_ok(c));
	CU_ASSERT_EQUAL(c->state, EMU_STATE_DISABLED);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)c, &st);
	CU_ASSERT_EQUAL(st.resets, 1);
	/* again: a controller can be enabled after a reset */
	CU_ASSERT(enable_ok(c));
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)c, &st);
	CU_ASSERT_EQUAL(st.resets, 2);
	emu_ctrlr_free(c);
}

static void
test_rdy_delay(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("rdy_delay_ms=30");
	uint64_t asq, acq, t0, ms;
	void *sq = nvp_env_dma_zmalloc(4096, 4096, &asq);
	void *cq = nvp_env_dma_zmalloc(4096, 4096, &acq);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	nvp_mmio_write4(&c->regs->aqa.raw, (1u << 16) | 1u);
	nvp_mmio_write8(&c->regs->asq, asq);
	nvp_mmio_write8(&c->regs->acq, acq);
	t0 = nvp_env_get_ticks();
	write_cc(c, 1, 0, 6, 4);
	ut_poll(c, 10);
	CU_ASSERT_EQUAL(ut_csts(c) & 1u, 0);
	CU_ASSERT(ut_wait_rdy(c, 1, 2000));
	ms = (nvp_env_get_ticks() - t0) * 1000 / nvp_env_get_ticks_hz();
	CU_ASSERT(ms >= 29);
	/* RDY falls after the delay too */
	write_cc(c, 0, 0, 6, 4);
	ut_poll(c, 10);
	CU_ASSERT_EQUAL(ut_csts(c) & 1u, 1);
	CU_ASSERT(ut_wait_rdy(c, 0, 2000));
	emu_ctrlr_free(c);
	nvp_env_dma_free(sq);
	nvp_env_dma_free(cq);
}

/* Enable with one field wrong: CSTS.CFS, RDY stays 0; CC.EN = 0 clears it. */
static void
expect_cfs(const char *what, uint32_t aqa, uint64_t asq, uint64_t acq, uint32_t mps,
	   uint32_t iosqes, uint32_t extra_cc)
{
	struct emu_ctrlr *c = ut_ctrlr_new("mpsmax=1");
	union nvme_csts_register csts;
	union nvme_cc_register cc = { .raw = 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	nvp_mmio_write4(&c->regs->aqa.raw, aqa);
	nvp_mmio_write8(&c->regs->asq, asq);
	nvp_mmio_write8(&c->regs->acq, acq);
	cc.bits.en = 1;
	cc.bits.mps = mps;
	cc.bits.iosqes = iosqes;
	cc.bits.iocqes = 4;
	nvp_mmio_write4(&c->regs->cc.raw, cc.raw | extra_cc);
	ut_poll(c, 5);
	csts.raw = ut_csts(c);
	if (!csts.bits.cfs || csts.bits.rdy) {
		fprintf(stderr, "\n  case '%s': CSTS 0x%x\n", what, csts.raw);
	}
	CU_ASSERT_EQUAL(csts.bits.cfs, 1);
	CU_ASSERT_EQUAL(csts.bits.rdy, 0);
	nvp_mmio_write4(&c->regs->cc.raw, 0);
	ut_poll(c, 5);
	CU_ASSERT_EQUAL(ut_csts(c), 0);
	emu_ctrlr_free(c);
}

static void
test_bad_config(void)
{
	uint64_t asq, acq;
	void *sq = nvp_env_dma_zmalloc(8192, 8192, &asq);
	void *cq = nvp_env_dma_zmalloc(8192, 8192, &acq);
	uint8_t *heap = aligned_alloc(4096, 4096);
	uint32_t aqa = (3u << 16) | 3u;

	expect_cfs("mps above mpsmax", aqa, asq, acq, 2, 6, 0);
	expect_cfs("iosqes", aqa, asq, acq, 0, 0, 0);
	expect_cfs("css", aqa, asq, acq, 0, 6, 1u << 4);
	expect_cfs("ams", aqa, asq, acq, 0, 6, 1u << 11);
	expect_cfs("asqs 0", 3u << 16, asq, acq, 0, 6, 0);
	expect_cfs("acqs 0", 3u, asq, acq, 0, 6, 0);
	expect_cfs("asq unaligned", aqa, asq + 64, acq, 0, 6, 0);
	expect_cfs("acq zero", aqa, asq, 0, 0, 6, 0);
	expect_cfs("asq not dma", aqa, (uintptr_t)heap, acq, 0, 6, 0);
	expect_cfs("asq 4k aligned with mps 8k", aqa, asq + 4096, acq, 1, 6, 0);
	free(heap);
	nvp_env_dma_free(sq);
	nvp_env_dma_free(cq);
}

static void
test_shutdown(void)
{
	struct ut_host h;
	union nvme_cc_register cc;
	union nvme_csts_register csts;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	cc.raw = nvp_mmio_read4(&h.c->regs->cc.raw);
	cc.bits.shn = NVME_SHN_NORMAL;
	nvp_mmio_write4(&h.c->regs->cc.raw, cc.raw);
	ut_poll(h.c, 2);
	csts.raw = ut_csts(h.c);
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_COMPLETE);
	CU_ASSERT_EQUAL(csts.bits.rdy, 1);
	cc.bits.shn = 0;
	cc.bits.en = 0;
	nvp_mmio_write4(&h.c->regs->cc.raw, cc.raw);
	ut_poll(h.c, 2);
	csts.raw = ut_csts(h.c);
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_NORMAL);
	CU_ASSERT_EQUAL(csts.bits.rdy, 0);
	ut_host_fini(&h);
}

static int
identify_st(struct ut_host *h, void *buf)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.cdw10 = NVME_IDENTIFY_CTRLR;
	cmd.dptr.prp.prp1 = nvp_env_vtophys(buf, NULL);
	return ut_admin_st(h, &cmd, NULL);
}

static void
test_fault_cfs_rdy_never(void)
{
	struct ut_host h;
	struct nvp_emu_ctrlr *pub;
	void *buf = nvp_env_dma_zmalloc(4096, 4096, NULL);

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	pub = (struct nvp_emu_ctrlr *)h.c;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_CFS, 1, 0, 0), 0);
	ut_poll(h.c, 1);
	CU_ASSERT_EQUAL(ut_csts(h.c) & 2u, 2u);
	/* no command is processed while CFS is set */
	ut_submit(&h, 0, &(struct nvme_cmd){ .opc = NVME_OPC_IDENTIFY, .cdw10 = 1 }, false);
	ut_poll(h.c, 50);
	CU_ASSERT_EQUAL(h.c->sqs[0].head, 0);
	/* Switched off, the fatal state is still latched: nothing runs until a reset. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_CFS, 0, 0, 0), 0);
	ut_poll(h.c, 50);
	CU_ASSERT_EQUAL(ut_csts(h.c) & 2u, 2u);
	CU_ASSERT_EQUAL(h.c->sqs[0].head, 0);
	/* CC.EN 1 -> 0 clears it; enabled again, the controller works */
	nvp_mmio_write4(&h.c->regs->cc.raw, 0);
	CU_ASSERT(ut_wait_rdy(h.c, 0, 100));
	CU_ASSERT_EQUAL(ut_csts(h.c) & 2u, 0);
	ut_q_free(&h.q[0]);
	CU_ASSERT_EQUAL(ut_host_enable(&h, 4), 0);
	CU_ASSERT_EQUAL(identify_st(&h, buf), 0);
	ut_host_fini(&h);

	/* rdy_never from the options: RDY never rises, until the fault is switched off */
	memset(&h, 0, sizeof(h));
	h.c = ut_ctrlr_new("fault=rdy_never");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h.c);
	CU_ASSERT_NOT_EQUAL(ut_host_enable(&h, 4), 0);
	CU_ASSERT_EQUAL(ut_csts(h.c), 0);
	nvp_emu_ctrlr_inject_fault((struct nvp_emu_ctrlr *)h.c, NVP_EMU_FAULT_RDY_NEVER, 0, 0, 0);
	CU_ASSERT(ut_wait_rdy(h.c, 1, 100));
	CU_ASSERT_EQUAL(identify_st(&h, buf), 0);
	ut_host_fini(&h);
	nvp_env_dma_free(buf);
}

static void
test_fault_all_ones(void)
{
	struct ut_host h;
	struct nvp_emu_ctrlr *pub;
	uint64_t cap;
	uint32_t v;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	pub = (struct nvp_emu_ctrlr *)h.c;
	cap = nvp_mmio_read8(&h.c->regs->cap.raw);
	nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_ALL_ONES, 1, 0, 0);
	ut_poll(h.c, 1);
	CU_ASSERT_EQUAL(nvp_mmio_read8(&h.c->regs->cap.raw), UINT64_MAX);
	CU_ASSERT_EQUAL(nvp_mmio_read4(&h.c->regs->vs.raw), UINT32_MAX);
	CU_ASSERT_EQUAL(ut_csts(h.c), UINT32_MAX);
	CU_ASSERT_EQUAL(emu_pci_ops.cfg_read(&h.c->pci, &v, 4, 0), 0);
	CU_ASSERT_EQUAL(v, UINT32_MAX);
	nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_ALL_ONES, 0, 0, 0);
	ut_poll(h.c, 1);
	CU_ASSERT_EQUAL(nvp_mmio_read8(&h.c->regs->cap.raw), cap);
	CU_ASSERT_EQUAL(ut_csts(h.c) & 1u, 1u);
	CU_ASSERT_EQUAL(emu_pci_ops.cfg_read(&h.c->pci, &v, 2, 0), 0);
	CU_ASSERT_EQUAL(v & 0xffff, EMU_PCI_VID);
	ut_host_fini(&h);
}

static uint32_t
cfg32(struct emu_ctrlr *c, uint32_t off)
{
	uint32_t v = 0;

	CU_ASSERT_EQUAL(emu_pci_ops.cfg_read(&c->pci, &v, 4, off), 0);
	return v;
}

static void
test_pci_config(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("");
	uint32_t ones = UINT32_MAX, bar, v;
	uint16_t cmd = 0xffff;
	uint64_t phys, size;
	void *map = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(cfg32(c, NVP_PCI_CFG_VENDOR_ID), (EMU_PCI_DID << 16) | EMU_PCI_VID);
	CU_ASSERT_EQUAL(cfg32(c, NVP_PCI_CFG_CLASS_REV) >> 8, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(cfg32(c, NVP_PCI_CFG_SUBVENDOR_ID), (EMU_PCI_DID << 16) | EMU_PCI_VID);
	/* BAR sizing: all ones in, size mask out; the type bits stay */
	bar = cfg32(c, NVP_PCI_CFG_BAR0);
	CU_ASSERT_EQUAL(bar & 0x7u, 0x4u);
	emu_pci_ops.cfg_write(&c->pci, &ones, 4, NVP_PCI_CFG_BAR0);
	v = cfg32(c, NVP_PCI_CFG_BAR0);
	CU_ASSERT_EQUAL(v & 0xfu, 0x4u);
	CU_ASSERT(~(v & 0xfffffff0u) + 1 >= c->regs_size);
	emu_pci_ops.cfg_write(&c->pci, &bar, 4, NVP_PCI_CFG_BAR0);
	CU_ASSERT_EQUAL(cfg32(c, NVP_PCI_CFG_BAR0), bar);
	/* command register: only memory, bus master and INTx disable are writable */
	emu_pci_ops.cfg_write(&c->pci, &cmd, 2, NVP_PCI_CFG_COMMAND);
	CU_ASSERT_EQUAL(cfg32(c, NVP_PCI_CFG_COMMAND) & 0xffff, 0x406);
	CU_ASSERT(emu_pci_bus_master(c));
	/* read-only identity */
	emu_pci_ops.cfg_write(&c->pci, &ones, 4, 0);
	CU_ASSERT_EQUAL(cfg32(c, 0), (EMU_PCI_DID << 16) | EMU_PCI_VID);
	/* bounds */
	CU_ASSERT_EQUAL(emu_pci_ops.cfg_read(&c->pci, &v, 4, 254), -EINVAL);
	CU_ASSERT_EQUAL(emu_pci_ops.cfg_write(&c->pci, &v, 4, 256), -EINVAL);
	CU_ASSERT_EQUAL(emu_pci_ops.cfg_read(&c->pci, &v, 0, 0), -EINVAL);
	/* BAR0 is the register page */
	CU_ASSERT_EQUAL(emu_pci_ops.map_bar(&c->pci, 0, &map, &phys, &size), 0);
	CU_ASSERT_PTR_EQUAL(map, c->regs);
	CU_ASSERT_EQUAL(size, c->regs_size);
	CU_ASSERT_EQUAL(phys, (bar & 0xfffffff0u) | ((uint64_t)cfg32(c, 0x14) << 32));
	CU_ASSERT_EQUAL(emu_pci_ops.unmap_bar(&c->pci, 0, map), 0);
	CU_ASSERT_EQUAL(emu_pci_ops.map_bar(&c->pci, 1, &map, &phys, &size), -EINVAL);
	emu_ctrlr_free(c);
}

static void
test_bus_master_gate(void)
{
	struct ut_host h;
	struct nvme_cpl cpl = { 0 };
	void *buf = nvp_env_dma_zmalloc(4096, 4096, NULL);

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	ut_bus_master(h.c, false);
	ut_submit(&h, 0,
		  &(struct nvme_cmd){ .opc = NVME_OPC_IDENTIFY,
				      .cdw10 = NVME_IDENTIFY_CTRLR,
				      .dptr.prp.prp1 = nvp_env_vtophys(buf, NULL) },
		  false);
	ut_poll(h.c, 100);
	CU_ASSERT_FALSE(ut_reap(&h, 0, &cpl));
	CU_ASSERT(h.c->bm_warned);
	ut_bus_master(h.c, true);
	CU_ASSERT_EQUAL(ut_wait(&h, 0, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	ut_host_fini(&h);
	nvp_env_dma_free(buf);
}

static void
test_ro_registers(void)
{
	struct ut_host h;
	uint64_t cap;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	cap = nvp_mmio_read8(&h.c->regs->cap.raw);
	nvp_mmio_write8(&h.c->regs->cap.raw, 0x1234);
	nvp_mmio_write4(&h.c->regs->vs.raw, 0);
	nvp_mmio_write4(&h.c->regs->csts.raw, 0);
	ut_poll(h.c, SLOW_PATH_INTERVAL + 1);
	CU_ASSERT_EQUAL(nvp_mmio_read8(&h.c->regs->cap.raw), cap);
	CU_ASSERT_EQUAL(nvp_mmio_read4(&h.c->regs->vs.raw), NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(ut_csts(h.c), 1);
	ut_host_fini(&h);
}

/* A minimal driver: enable, identify, one I/O queue pair, write then read back. */
static void
test_self_test_minimal_driver(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };
	struct nvme_ctrlr_data *cd = nvp_env_dma_zmalloc(4096, 4096, NULL);
	uint8_t *wbuf = nvp_env_dma_zmalloc(16384, 4096, NULL);
	uint8_t *rbuf = nvp_env_dma_zmalloc(16384, 4096, NULL);
	uint64_t *list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	uint64_t prp1, prp2;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "dstrd=3 lba=4096"), 0);
	CU_ASSERT_EQUAL(identify_st(&h, cd), 0);
	CU_ASSERT(memcmp(cd->mn, EMU_MODEL, strlen(EMU_MODEL)) == 0);
	CU_ASSERT_EQUAL(cd->nn, 1);
	CU_ASSERT_EQUAL(ut_create_qpair(&h, 1, 64), 0);
	for (int i = 0; i < 16384; i++) {
		wbuf[i] = (uint8_t)(i * 13 + 1);
	}
	ut_prps(wbuf, 16384, list, &prp1, &prp2);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, 10, 4, prp1, prp2);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_EQUAL(cpl.sqid, 1);
	CU_ASSERT_EQUAL(cpl.cid, cmd.cid);
	ut_prps(rbuf, 16384, list, &prp1, &prp2);
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 10, 4, prp1, prp2);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT(memcmp(wbuf, rbuf, 16384) == 0);
	CU_ASSERT_EQUAL(cpl.sqhd, 2);
	ut_host_fini(&h);
	nvp_env_dma_free(cd);
	nvp_env_dma_free(wbuf);
	nvp_env_dma_free(rbuf);
	nvp_env_dma_free(list);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_cap_vs),
		UT_TEST(test_enable_disable),
		UT_TEST(test_rdy_delay),
		UT_TEST(test_bad_config),
		UT_TEST(test_shutdown),
		UT_TEST(test_fault_cfs_rdy_never),
		UT_TEST(test_fault_all_ones),
		UT_TEST(test_pci_config),
		UT_TEST(test_bus_master_gate),
		UT_TEST(test_ro_registers),
		UT_TEST(test_self_test_minimal_driver),
	};

	return ut_run("emu_regs", tests, NVP_COUNTOF(tests));
}
