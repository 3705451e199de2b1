/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Identify: what the driver learns from the controller (identify controller and
 * namespace data, CAP/VS) matches the options the software controller was made with,
 * and the fields a host relies on follow the specification (NVMe 1.4 section 5.15).
 * Both ways of attaching are used: the PCIe transport at the controller's virtual PCI
 * address, and a "trtype:emu" transport ID.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* An identify string: printable ASCII, space padded, not empty, no NUL inside. */
static void
check_ascii_field(const char *name, const char *field, size_t len)
{
	size_t used = nvp_strpadlen(field, len);
	size_t i;

	CU_ASSERT(used > 0);
	CU_ASSERT(field[0] != ' ');
	for (i = 0; i < len; i++) {
		if ((unsigned char)field[i] < 0x20 || (unsigned char)field[i] > 0x7e) {
			fprintf(stderr, "  %s: byte %zu is 0x%02x\n", name, i,
				(unsigned char)field[i]);
			CU_FAIL("identify string holds a non-printable byte (NUL padding?)");
			return;
		}
		if (i >= used) {
			CU_ASSERT_EQUAL(field[i], ' ');
		}
	}
}

static void
check_ctrlr_data(struct nvp_emu_ctrlr *emu, struct nvp_nvme_ctrlr *ctrlr, uint32_t nn,
		 uint32_t mdts, uint32_t fw_slots, bool vwc)
{
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(ctrlr);
	struct nvp_pci_device *dev;

	CU_ASSERT_PTR_NOT_NULL_FATAL(cd);
	/* VID and SSVID are the PCI function's vendor and subsystem vendor ids. */
	dev = nvp_pci_device_find(nvp_emu_ctrlr_get_pci_addr(emu));
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	CU_ASSERT_NOT_EQUAL(cd->vid, 0);
	CU_ASSERT_NOT_EQUAL(cd->vid, 0xffff);
	CU_ASSERT_EQUAL(cd->vid, dev->id.vendor_id);
	CU_ASSERT_EQUAL(cd->ssvid, dev->id.subvendor_id);
	CU_ASSERT_EQUAL(dev->id.class_id, NVP_PCI_CLASS_NVME);

	check_ascii_field("SN", cd->sn, sizeof(cd->sn));
	check_ascii_field("MN", cd->mn, sizeof(cd->mn));
	check_ascii_field("FR", cd->fr, sizeof(cd->fr));

	CU_ASSERT_EQUAL(cd->ver, NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(cd->mdts, mdts);
	CU_ASSERT_EQUAL(cd->nn, nn);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(ctrlr), nn);
	/* Required sizes 64/16 bytes, no larger ones (section 5.15.2.2). */
	CU_ASSERT_EQUAL(cd->sqes, 0x66);
	CU_ASSERT_EQUAL(cd->cqes, 0x44);
	/* The NVM commands the software controller implements. */
	CU_ASSERT(cd->oncs & NVME_ONCS_COMPARE);
	CU_ASSERT(cd->oncs & NVME_ONCS_DSM);
	CU_ASSERT(cd->oncs & NVME_ONCS_WRITE_ZEROES);
	CU_ASSERT(cd->oacs & NVME_OACS_FORMAT);
	CU_ASSERT(cd->oacs & NVME_OACS_FIRMWARE);
	CU_ASSERT_EQUAL(cd->vwc & 1, vwc ? 1 : 0);
	CU_ASSERT(cd->frmw & NVME_FRMW_SLOT1_RO);
	CU_ASSERT_EQUAL((cd->frmw >> NVME_FRMW_NUM_SLOTS_SHIFT) & NVME_FRMW_NUM_SLOTS_MASK,
			fw_slots);
	CU_ASSERT(cd->cntlid != 0xffff);
}

static void
check_regs(struct nvp_emu_ctrlr *emu, struct nvp_nvme_ctrlr *ctrlr, uint32_t mqes, uint32_t to,
	   uint32_t dstrd)
{
	union nvme_cap_register cap = nvp_nvme_ctrlr_get_regs_cap(ctrlr);
	union nvme_vs_register vs = nvp_nvme_ctrlr_get_regs_vs(ctrlr);
	union nvme_csts_register csts = nvp_nvme_ctrlr_get_regs_csts(ctrlr);
	uint64_t cap_bar = 0;
	uint32_t cc_raw = 0;
	union nvme_cc_register cc;

	CU_ASSERT_EQUAL(cap.bits.mqes, mqes);
	CU_ASSERT_EQUAL(cap.bits.to, to);
	CU_ASSERT_EQUAL(cap.bits.dstrd, dstrd);
	CU_ASSERT_EQUAL(cap.bits.mpsmin, 0);
	CU_ASSERT(cap.bits.css & NVME_CAP_CSS_NVM);
	CU_ASSERT_EQUAL(vs.raw, NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(csts.bits.rdy, 1);
	CU_ASSERT_EQUAL(csts.bits.cfs, 0);
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_NORMAL);

	/* The driver's copy of CAP is what BAR0 holds; CC is what the driver must set. */
	CU_ASSERT_EQUAL_FATAL(fx_emu_read_cap(emu, &cap_bar), 0);
	CU_ASSERT_EQUAL(cap_bar, cap.raw);
	CU_ASSERT_EQUAL_FATAL(fx_emu_read_reg32(emu, NVME_REG_CC, &cc_raw), 0);
	cc.raw = cc_raw;
	CU_ASSERT_EQUAL(cc.bits.en, 1);
	CU_ASSERT_EQUAL(cc.bits.css, 0);
	CU_ASSERT_EQUAL(cc.bits.mps, 0);
	CU_ASSERT_EQUAL(cc.bits.iosqes, 6);
	CU_ASSERT_EQUAL(cc.bits.iocqes, 4);
	CU_ASSERT_EQUAL(cc.bits.shn, NVME_SHN_NONE);
}

/* Namespace @nsid formatted with @lba_size bytes per block and @size bytes in all. */
static void
check_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, uint32_t lba_size, uint64_t size)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	const struct nvme_ns_data *nd;
	struct nvme_ns_data *fresh;
	unsigned int i, fmt;
	bool has512 = false, has4k = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_id(ns), nsid);
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ns_get_ctrlr(ns), ctrlr);
	nd = nvp_nvme_ns_get_data(ns);
	CU_ASSERT_PTR_NOT_NULL_FATAL(nd);

	CU_ASSERT_EQUAL(nd->nsze, size / lba_size);
	CU_ASSERT_EQUAL(nd->ncap, nd->nsze);
	CU_ASSERT(nd->nuse <= nd->ncap);
	fmt = nd->flbas & NVME_FLBAS_FORMAT_MASK;
	CU_ASSERT(fmt <= nd->nlbaf);
	CU_ASSERT_EQUAL(1u << nd->lbaf[fmt].lbads, lba_size);
	CU_ASSERT_EQUAL(nd->lbaf[fmt].ms, 0);
	/* Every namespace offers 512 and 4096: format 0 is 512 B and format 1 is 4 KiB
	 * (the format test relies on it). */
	for (i = 0; i <= nd->nlbaf && i < NVME_MAX_LBAF; i++) {
		has512 |= nd->lbaf[i].lbads == 9;
		has4k |= nd->lbaf[i].lbads == 12;
	}
	CU_ASSERT(has512);
	CU_ASSERT(has4k);
	CU_ASSERT_EQUAL(nd->lbaf[0].lbads, 9);
	CU_ASSERT_EQUAL(nd->lbaf[1].lbads, 12);

	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns), lba_size);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns), size / lba_size);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_size(ns), size);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_max_io_xfer_size(ns),
			nvp_nvme_ctrlr_get_max_xfer_size(ctrlr));

	/* The cached data is what the controller answers now. */
	fresh = fx_dma_alloc(sizeof(*fresh));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, fresh, sizeof(*fresh), NULL),
		0);
	CU_ASSERT_EQUAL(memcmp(fresh, nd, sizeof(*fresh)), 0);
	nvp_env_dma_free(fresh);
}

static void
test_identify_defaults(void)
{
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("the software controller's default identify values");

	if (fx_open(&fx, "size=16M") != 0) {
		fx_close(&fx);
		return;
	}
	/* Defaults from emu.h: nn=1, lba=512, mqes=1023, to=20, dstrd=0, mdts=5, vwc=1,
	 * fw_slots=3. */
	check_ctrlr_data(fx.emu, fx.ctrlr, 1, 5, 3, true);
	check_regs(fx.emu, fx.ctrlr, 1023, 20, 0);
	check_ns(fx.ctrlr, 1, 512, 16u << 20);

	/* MDTS 5 with 4 KiB pages: 128 KiB per command. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_max_xfer_size(fx.ctrlr), 128u * 1024);
	CU_ASSERT_STRING_EQUAL(nvp_nvme_ctrlr_get_transport_id(fx.ctrlr)->traddr,
			       nvp_emu_ctrlr_get_traddr(fx.emu));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_transport_id(fx.ctrlr)->trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	fx_close(&fx);
}

static void
test_identify_options(void)
{
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("software controller options (nn, mqes, dstrd, mdts, fw_slots)");

	/* Shaped controller: 3 namespaces of 4 KiB, small MQES, DSTRD 2, MDTS 3. */
	if (fx_open(&fx, "nn=3,size=8M,lba=4096,mqes=63,to=7,dstrd=2,mdts=3,vwc=0,fw_slots=5") !=
	    0) {
		fx_close(&fx);
		return;
	}
	check_ctrlr_data(fx.emu, fx.ctrlr, 3, 3, 5, false);
	check_regs(fx.emu, fx.ctrlr, 63, 7, 2);
	check_ns(fx.ctrlr, 1, 4096, 8u << 20);
	check_ns(fx.ctrlr, 2, 4096, 8u << 20);
	check_ns(fx.ctrlr, 3, 4096, 8u << 20);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_max_xfer_size(fx.ctrlr), 32u * 1024);
	/* The default qpair depth is clamped to MQES + 1. */
	CU_ASSERT(nvp_nvme_qpair_get_size(fx.qpair) <= 64);
	/* Doorbells at a 16-byte stride: I/O on every namespace works (and fx_close checks
	 * that the device saw no doorbell write it could not place). */
	{
		uint8_t *buf = fx_dma_alloc(36 * 1024);
		uint32_t nsid;

		for (nsid = 1; nsid <= 3; nsid++) {
			struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, nsid);

			fx_pattern_fill(buf, 5, 8, 4096, nsid);
			CU_ASSERT_EQUAL(fx_io(ns, fx.qpair, FX_WRITE, buf, 5, 8, 0, NULL), 0);
			memset(buf, 0, 32 * 1024);
			CU_ASSERT_EQUAL(fx_io(ns, fx.qpair, FX_READ, buf, 5, 8, 0, NULL), 0);
			CU_ASSERT(fx_pattern_check(buf, 5, 8, 4096, nsid) < 0);
			/* More than MDTS allows is split into two commands (issue 9). */
			fx_pattern_fill(buf, 20, 9, 4096, nsid + 10);
			CU_ASSERT_EQUAL(fx_io(ns, fx.qpair, FX_WRITE, buf, 20, 9, 0, NULL), 0);
			memset(buf, 0, 36 * 1024);
			CU_ASSERT_EQUAL(fx_io(ns, fx.qpair, FX_READ, buf, 20, 9, 0, NULL), 0);
			CU_ASSERT(fx_pattern_check(buf, 20, 9, 4096, nsid + 10) < 0);
		}
		nvp_env_dma_free(buf);
	}
	fx_close(&fx);
}

static void
test_identify_raw(void)
{
	struct fx_ctrlr fx;
	struct nvme_ctrlr_data *cd;
	struct nvme_ns_list *list;
	struct nvme_cpl cpl;
	struct nvme_cmd cmd;

	FX_NEEDS_EMU("a software controller with 4 namespaces (identify_real covers a real one)");

	if (fx_open(&fx, "nn=4,size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	cd = fx_dma_alloc(sizeof(*cd));
	list = fx_dma_alloc(sizeof(*list));

	/* The cached identify controller data is what the controller answers now. */
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_CTRLR, 0, cd, sizeof(*cd), &cpl),
		0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	CU_ASSERT_EQUAL(memcmp(cd, nvp_nvme_ctrlr_get_data(fx.ctrlr), sizeof(*cd)), 0);

	/* Active namespace list (CNS 02h): 1..4 then zeros. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_ACTIVE_NS_LIST, 0, list,
						sizeof(*list), &cpl),
			0);
	CU_ASSERT_EQUAL(list->ns_list[0], 1);
	CU_ASSERT_EQUAL(list->ns_list[1], 2);
	CU_ASSERT_EQUAL(list->ns_list[2], 3);
	CU_ASSERT_EQUAL(list->ns_list[3], 4);
	CU_ASSERT_EQUAL(list->ns_list[4], 0);
	/* Only namespaces above the given id. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_ACTIVE_NS_LIST, 2, list,
						sizeof(*list), &cpl),
			0);
	CU_ASSERT_EQUAL(list->ns_list[0], 3);
	CU_ASSERT_EQUAL(list->ns_list[1], 4);
	CU_ASSERT_EQUAL(list->ns_list[2], 0);

	/* The driver's active namespace iteration agrees. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_first_active_ns(fx.ctrlr), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(fx.ctrlr, 1), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(fx.ctrlr, 3), 4);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(fx.ctrlr, 4), 0);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_active_ns(fx.ctrlr, 4));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_active_ns(fx.ctrlr, 0));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_active_ns(fx.ctrlr, 5));
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(fx.ctrlr, 0));
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(fx.ctrlr, 5));
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(fx.ctrlr, NVME_GLOBAL_NS_TAG));

	/* A namespace id above NN: Invalid Namespace or Format. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_NS, 99, list, sizeof(*list), &cpl),
		-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE_OR_FORMAT);

	/* An unknown CNS: Invalid Field in Command. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.cdw10 = 0x7f;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, list, sizeof(*list), &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);

	/* The sync helper takes any memory (it bounces through DMA memory). */
	{
		static struct nvme_ctrlr_data plain;
		uint8_t *small;

		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_CTRLR, 0, &plain,
							sizeof(plain), NULL),
				0);
		CU_ASSERT_EQUAL(memcmp(&plain, cd, sizeof(plain)), 0);
		/* A short buffer gets the start of the data and nothing past its end (a heap
		 * block, so ASan sees an overrun). */
		small = malloc(100);
		CU_ASSERT_PTR_NOT_NULL_FATAL(small);
		CU_ASSERT_EQUAL(
			nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_CTRLR, 0, small, 100, NULL),
			0);
		CU_ASSERT_EQUAL(memcmp(small, cd, 100), 0);
		free(small);
	}

	nvp_env_dma_free(list);
	nvp_env_dma_free(cd);
	fx_close(&fx);
}

/* Attach through "trtype:emu": the driver has env's provider make the controller. */
static void
test_identify_emu_trid(void)
{
	const char *trid = "trtype:emu name:idtrid nn:2 lba:512/4096 size:8M mqes:127";
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	const struct nvp_nvme_transport_id *t;
	struct nvp_emu_ctrlr *emu;
	struct nvp_pci_device *dev;
	int rc;

	FX_NEEDS_EMU("a \"trtype:emu\" transport ID");

	rc = fx_connect_str(trid, NULL, &ctrlr);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	emu = nvp_emu_ctrlr_find("idtrid");
	CU_ASSERT_PTR_NOT_NULL(emu);
	if (emu != NULL) {
		check_ctrlr_data(emu, ctrlr, 2, 5, 3, true);
		check_regs(emu, ctrlr, 127, 20, 0);
		/* The function is claimed: it cannot be destroyed under the driver. */
		dev = nvp_pci_device_find(nvp_emu_ctrlr_get_pci_addr(emu));
		CU_ASSERT(dev != NULL && dev->claimed);
		CU_ASSERT(dev != NULL && dev->is_virtual);
	}
	check_ns(ctrlr, 1, 512, 8u << 20);
	check_ns(ctrlr, 2, 4096, 8u << 20);
	t = nvp_nvme_ctrlr_get_transport_id(ctrlr);
	CU_ASSERT_PTR_NOT_NULL(t);
	if (t != NULL) {
		CU_ASSERT_STRING_EQUAL(t->name, "idtrid");
	}

	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	/* Detach destroyed the device made for the transport ID. */
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("idtrid"));

	/* And the name can be used again. */
	ctrlr = NULL;
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
}

/* Probe with a NULL trid attaches every unclaimed NVMe function, virtual ones too. */
struct probe_ctx {
	const char *want;
	unsigned int probed;
	unsigned int attached;
	struct nvp_nvme_ctrlr *ctrlr;
};

static bool
probe_cb(void *cb_ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr_opts *opts)
{
	struct probe_ctx *ctx = cb_ctx;

	(void)opts;
	ctx->probed++;
	return trid->trtype == NVP_NVME_TRANSPORT_PCIE && strcmp(trid->traddr, ctx->want) == 0;
}

static void
attach_cb(void *cb_ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr *ctrlr,
	  const struct nvp_nvme_ctrlr_opts *opts)
{
	struct probe_ctx *ctx = cb_ctx;

	(void)opts;
	CU_ASSERT_STRING_EQUAL(trid->traddr, ctx->want);
	ctx->attached++;
	ctx->ctrlr = ctrlr;
}

static void
test_probe(void)
{
	struct nvp_emu_ctrlr *emu = NULL;
	struct probe_ctx ctx = { 0 };
	int rc;

	FX_NEEDS_EMU("a software controller to probe for (identify_real probes the real one)");

	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=probe0,size=4M", &emu), 0);
	ctx.want = nvp_emu_ctrlr_get_traddr(emu);
	rc = nvp_nvme_probe(NULL, &ctx, probe_cb, attach_cb);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(ctx.probed >= 1);
	CU_ASSERT_EQUAL(ctx.attached, 1);
	if (ctx.ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(ctx.ctrlr), 1);
		/* Claimed now: destroying the device is refused. */
		CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), -EBUSY);
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctx.ctrlr), 0);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);

	/* Nothing left to find. */
	memset(&ctx, 0, sizeof(ctx));
	ctx.want = "none";
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, &ctx, probe_cb, attach_cb), -ENODEV);
	CU_ASSERT_EQUAL(ctx.attached, 0);
}

/* ---- a real controller (NVP_TEST_TRID, e.g. QEMU's NVMe device) ---- */

/* Namespace @nsid as identify reports it: consistent sizes, 512 B and 4 KiB offered. */
static void
check_real_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	const struct nvme_ns_data *nd;
	struct nvme_ns_data *fresh;
	unsigned int i, fmt;
	bool has512 = false, has4k = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_id(ns), nsid);
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ns_get_ctrlr(ns), ctrlr);
	nd = nvp_nvme_ns_get_data(ns);
	CU_ASSERT_PTR_NOT_NULL_FATAL(nd);
	fmt = nd->flbas & NVME_FLBAS_FORMAT_MASK;
	CU_ASSERT(fmt <= nd->nlbaf);
	printf("  nsid %u: nsze %" PRIu64 ", flbas %u, nlbaf %u, lbads %u, ms %u\n", nsid,
	       (uint64_t)nd->nsze, nd->flbas, nd->nlbaf, nd->lbaf[fmt].lbads, nd->lbaf[fmt].ms);
	CU_ASSERT(nd->nsze > 0);
	CU_ASSERT(nd->ncap <= nd->nsze);
	CU_ASSERT(nd->nuse <= nd->ncap);
	/* A buffer holds data and, for an extended LBA format, the metadata after it. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns),
			(1u << nd->lbaf[fmt].lbads) +
				((nd->flbas & NVME_FLBAS_EXTENDED) ? nd->lbaf[fmt].ms : 0));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_md_size(ns), nd->lbaf[fmt].ms);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns), nd->nsze);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_size(ns), nd->nsze << nd->lbaf[fmt].lbads);
	CU_ASSERT(nvp_nvme_ns_get_max_io_xfer_size(ns) <= nvp_nvme_ctrlr_get_max_xfer_size(ctrlr));
	for (i = 0; i <= nd->nlbaf && i < NVME_MAX_LBAF; i++) {
		has512 |= nd->lbaf[i].lbads == 9 && nd->lbaf[i].ms == 0;
		has4k |= nd->lbaf[i].lbads == 12 && nd->lbaf[i].ms == 0;
	}
	/* The format test needs both (QEMU offers 512 B and 4 KiB, with and without
	 * metadata). */
	CU_ASSERT(has512);
	CU_ASSERT(has4k);

	fresh = fx_dma_alloc(sizeof(*fresh));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, fresh, sizeof(*fresh), NULL),
		0);
	CU_ASSERT_EQUAL(memcmp(fresh, nd, sizeof(*fresh)), 0);
	nvp_env_dma_free(fresh);
}

static void
check_real_ctrlr(struct fx_ctrlr *fx)
{
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(fx->ctrlr);
	const struct nvp_nvme_transport_id *t = nvp_nvme_ctrlr_get_transport_id(fx->ctrlr);
	union nvme_cap_register cap = nvp_nvme_ctrlr_get_regs_cap(fx->ctrlr);
	union nvme_vs_register vs = nvp_nvme_ctrlr_get_regs_vs(fx->ctrlr);
	union nvme_csts_register csts = nvp_nvme_ctrlr_get_regs_csts(fx->ctrlr);
	struct nvp_pci_device *dev;
	struct nvp_pci_addr addr;

	CU_ASSERT_PTR_NOT_NULL_FATAL(cd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_EQUAL_FATAL(nvp_pci_addr_parse(&addr, t->traddr), 0);
	dev = nvp_pci_device_find(&addr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	CU_ASSERT_FALSE(dev->is_virtual);
	CU_ASSERT(dev->claimed);
	CU_ASSERT_EQUAL(dev->id.class_id, NVP_PCI_CLASS_NVME);
	printf("  %s: vid 0x%04x ssvid 0x%04x mn '%.40s' ver 0x%08x mqes %u mdts %u nn %u "
	       "oncs 0x%x oacs 0x%x vwc %u\n",
	       t->traddr, cd->vid, cd->ssvid, cd->mn, cd->ver, cap.bits.mqes, cd->mdts, cd->nn,
	       cd->oncs, cd->oacs, cd->vwc);
	CU_ASSERT_NOT_EQUAL(cd->vid, 0);
	CU_ASSERT_NOT_EQUAL(cd->vid, 0xffff);
	CU_ASSERT_EQUAL(cd->vid, dev->id.vendor_id);
	CU_ASSERT_EQUAL(cd->ssvid, dev->id.subvendor_id);
	check_ascii_field("SN", cd->sn, sizeof(cd->sn));
	check_ascii_field("MN", cd->mn, sizeof(cd->mn));
	check_ascii_field("FR", cd->fr, sizeof(cd->fr));
	CU_ASSERT_EQUAL(cd->sqes & 0xf, 6);
	CU_ASSERT_EQUAL(cd->cqes & 0xf, 4);
	CU_ASSERT(cd->nn >= 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(fx->ctrlr), cd->nn);
	/* What the suite drives: compare, DSM, write zeroes, format. */
	CU_ASSERT(cd->oncs & NVME_ONCS_COMPARE);
	CU_ASSERT(cd->oncs & NVME_ONCS_DSM);
	CU_ASSERT(cd->oncs & NVME_ONCS_WRITE_ZEROES);
	CU_ASSERT(cd->oacs & NVME_OACS_FORMAT);
	CU_ASSERT(cd->cntlid != 0xffff);
	/* VS and the identify version agree (NVMe 1.4 5.15.2.1: VER is VS when reported). */
	CU_ASSERT(vs.bits.mjr >= 1);
	if (cd->ver != 0) {
		CU_ASSERT_EQUAL(cd->ver, vs.raw);
	}
	CU_ASSERT(cap.bits.css & NVME_CAP_CSS_NVM);
	CU_ASSERT_EQUAL(csts.bits.rdy, 1);
	CU_ASSERT_EQUAL(csts.bits.cfs, 0);
	CU_ASSERT(nvp_nvme_qpair_get_size(fx->qpair) <= cap.bits.mqes + 1u);
	if (cd->mdts != 0) {
		CU_ASSERT(nvp_nvme_ctrlr_get_max_xfer_size(fx->ctrlr) <= (4096u << cd->mdts));
	}
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx->ctrlr));
}

/* The active namespace list (CNS 02h) and the driver's iteration agree. */
static void
check_real_ns_list(struct fx_ctrlr *fx)
{
	struct nvme_ns_list *list = fx_dma_alloc(sizeof(*list));
	uint32_t nsid, i = 0;
	struct nvme_cpl cpl;
	struct nvme_cmd cmd;

	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(fx->ctrlr, NVME_IDENTIFY_ACTIVE_NS_LIST, 0, list,
						sizeof(*list), &cpl),
			0);
	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(fx->ctrlr); nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(fx->ctrlr, nsid)) {
		CU_ASSERT_EQUAL(list->ns_list[i], nsid);
		CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_active_ns(fx->ctrlr, nsid));
		check_real_ns(fx->ctrlr, nsid);
		i++;
	}
	CU_ASSERT(i >= 1);
	CU_ASSERT_EQUAL(list->ns_list[i], 0);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(fx->ctrlr, 0));
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(fx->ctrlr, NVME_GLOBAL_NS_TAG));

	/* An unknown CNS: Invalid Field in Command. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.cdw10 = 0x7f;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx->ctrlr, &cmd, list, sizeof(*list), &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	nvp_env_dma_free(list);
}

static void
test_identify_real(void)
{
	struct probe_ctx ctx = { 0 };
	struct fx_ctrlr fx;
	char traddr[64];

	if (fx_real_trid() == NULL) {
		return; /* identify_defaults and the others cover the software controller */
	}
	if (fx_open(&fx, NULL) != 0) {
		fx_close(&fx);
		return;
	}
	check_real_ctrlr(&fx);
	check_real_ns_list(&fx);
	nvp_strlcpy(traddr, nvp_nvme_ctrlr_get_transport_id(fx.ctrlr)->traddr, sizeof(traddr));
	fx_close(&fx);

	/* Probe all finds the real function once it is free again, and attaches it. */
	ctx.want = traddr;
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, &ctx, probe_cb, attach_cb), 0);
	CU_ASSERT_EQUAL(ctx.attached, 1);
	if (ctx.ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctx.ctrlr), 0);
	}
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "identify_defaults", test_identify_defaults },
		{ "identify_options", test_identify_options },
		{ "identify_raw", test_identify_raw },
		{ "identify_emu_trid", test_identify_emu_trid },
		{ "probe", test_probe },
		{ "identify_real", test_identify_real },
	};

	return fx_main(argc, argv, "nvme_identify", tests, NVP_COUNTOF(tests));
}
