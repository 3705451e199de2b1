/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run-time checks of include/nvpoll/nvme_spec.h against the NVMe 1.4 specification.
 *
 * The header's _Static_asserts cover sizes and a few offsets; this program checks the
 * rest, and in particular where every bitfield lands in the raw value (bitfield layout
 * is the compiler's choice, so it is checked by setting a field and reading the raw
 * dword, and the other way round).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "nvpoll/nvme_spec.h"

#define CHECK_SIZE(type, size) CU_ASSERT_EQUAL(sizeof(type), (size))
#define CHECK_OFF(type, field, off) CU_ASSERT_EQUAL(offsetof(type, field), (off))

/* Bits [hi:lo] of @v. */
static uint64_t
bits(uint64_t v, unsigned int hi, unsigned int lo)
{
	return (v >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

static uint32_t
dword_at(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)p + off, sizeof(v));
	return v;
}

static void
test_sizes(void)
{
	CHECK_SIZE(union nvme_cap_register, 8);
	CHECK_SIZE(union nvme_vs_register, 4);
	CHECK_SIZE(union nvme_cc_register, 4);
	CHECK_SIZE(union nvme_csts_register, 4);
	CHECK_SIZE(union nvme_aqa_register, 4);
	CHECK_SIZE(struct nvme_registers, 0x1000);
	CHECK_SIZE(struct nvme_sgl_descriptor, 16);
	CHECK_SIZE(struct nvme_cmd, 64);
	CHECK_SIZE(struct nvme_status, 2);
	CHECK_SIZE(struct nvme_cpl, 16);
	CHECK_SIZE(struct nvme_power_state, 32);
	CHECK_SIZE(struct nvme_ctrlr_data, 4096);
	CHECK_SIZE(struct nvme_lbaf, 4);
	CHECK_SIZE(struct nvme_ns_data, 4096);
	CHECK_SIZE(struct nvme_ns_list, 4096);
	CHECK_SIZE(struct nvme_dsm_range, 16);
	CHECK_SIZE(struct nvme_error_information_entry, 64);
	CHECK_SIZE(struct nvme_health_information_page, 512);
	CHECK_SIZE(struct nvme_firmware_page, 512);
	CHECK_SIZE(union nvme_feat_arbitration, 4);
	CHECK_SIZE(union nvme_feat_temperature_threshold, 4);
	CHECK_SIZE(union nvme_feat_number_of_queues, 4);
	CHECK_SIZE(union nvme_feat_volatile_write_cache, 4);
	CHECK_SIZE(union nvme_feat_async_event_configuration, 4);
	CHECK_SIZE(union nvme_format_cdw10, 4);
	CHECK_SIZE(union nvme_fw_commit_cdw10, 4);
	CHECK_SIZE(union nvme_async_event_completion, 4);
}

/* Section 3.1: register offsets within BAR0. */
static void
test_register_offsets(void)
{
	CHECK_OFF(struct nvme_registers, cap, 0x00);
	CHECK_OFF(struct nvme_registers, vs, 0x08);
	CHECK_OFF(struct nvme_registers, intms, 0x0c);
	CHECK_OFF(struct nvme_registers, intmc, 0x10);
	CHECK_OFF(struct nvme_registers, cc, 0x14);
	CHECK_OFF(struct nvme_registers, csts, 0x1c);
	CHECK_OFF(struct nvme_registers, nssr, 0x20);
	CHECK_OFF(struct nvme_registers, aqa, 0x24);
	CHECK_OFF(struct nvme_registers, asq, 0x28);
	CHECK_OFF(struct nvme_registers, acq, 0x30);
	CHECK_OFF(struct nvme_registers, cmbloc, 0x38);
	CHECK_OFF(struct nvme_registers, cmbsz, 0x3c);
	CHECK_OFF(struct nvme_registers, bpinfo, 0x40);
	CHECK_OFF(struct nvme_registers, bprsel, 0x44);
	CHECK_OFF(struct nvme_registers, bpmbl, 0x48);
	CHECK_OFF(struct nvme_registers, cmbmsc, 0x50);
	CHECK_OFF(struct nvme_registers, cmbsts, 0x58);
	CHECK_OFF(struct nvme_registers, pmrcap, 0xe00);
	CHECK_OFF(struct nvme_registers, pmrmscu, 0xe18);
	CHECK_OFF(struct nvme_registers, doorbell, 0x1000);

	CU_ASSERT_EQUAL(NVME_REG_CAP, 0x00);
	CU_ASSERT_EQUAL(NVME_REG_VS, 0x08);
	CU_ASSERT_EQUAL(NVME_REG_CC, 0x14);
	CU_ASSERT_EQUAL(NVME_REG_CSTS, 0x1c);
	CU_ASSERT_EQUAL(NVME_REG_AQA, 0x24);
	CU_ASSERT_EQUAL(NVME_REG_ASQ, 0x28);
	CU_ASSERT_EQUAL(NVME_REG_ACQ, 0x30);
	CU_ASSERT_EQUAL(NVME_REG_DBS, 0x1000);
}

/* Figure 3.1.1 (CAP). */
static void
test_cap_bits(void)
{
	union nvme_cap_register cap;

	cap.raw = 0;
	cap.bits.mqes = 0xabcd;
	CU_ASSERT_EQUAL(cap.raw, 0xabcdull);

	cap.raw = 0;
	cap.bits.cqr = 1;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 16);

	cap.raw = 0;
	cap.bits.ams = 3;
	CU_ASSERT_EQUAL(cap.raw, 3ull << 17);

	cap.raw = 0;
	cap.bits.to = 0xa5;
	CU_ASSERT_EQUAL(cap.raw, 0xa5ull << 24);

	cap.raw = 0;
	cap.bits.dstrd = 0xf;
	CU_ASSERT_EQUAL(cap.raw, 0xfull << 32);

	cap.raw = 0;
	cap.bits.nssrs = 1;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 36);

	cap.raw = 0;
	cap.bits.css = NVME_CAP_CSS_NVM;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 37);
	cap.bits.css = 0xff;
	CU_ASSERT_EQUAL(cap.raw, 0xffull << 37);

	cap.raw = 0;
	cap.bits.bps = 1;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 45);

	cap.raw = 0;
	cap.bits.mpsmin = 0x9;
	CU_ASSERT_EQUAL(cap.raw, 0x9ull << 48);

	cap.raw = 0;
	cap.bits.mpsmax = 0x6;
	CU_ASSERT_EQUAL(cap.raw, 0x6ull << 52);

	cap.raw = 0;
	cap.bits.pmrs = 1;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 56);
	cap.raw = 0;
	cap.bits.cmbs = 1;
	CU_ASSERT_EQUAL(cap.raw, 1ull << 57);

	/* The other way: a raw value with MQES 2047, CQR, TO 255, DSTRD 0, CSS NVM,
	 * MPSMIN 0, MPSMAX 4. */
	cap.raw = 0x00400020ff0107ffull;
	CU_ASSERT_EQUAL(cap.bits.mqes, 0x7ff);
	CU_ASSERT_EQUAL(cap.bits.cqr, 1);
	CU_ASSERT_EQUAL(cap.bits.ams, 0);
	CU_ASSERT_EQUAL(cap.bits.to, 0xff);
	CU_ASSERT_EQUAL(cap.bits.dstrd, 0);
	CU_ASSERT_EQUAL(cap.bits.css, 1);
	CU_ASSERT_EQUAL(cap.bits.mpsmin, 0);
	CU_ASSERT_EQUAL(cap.bits.mpsmax, 4);

	cap.raw = 2ull << 32;
	CU_ASSERT_EQUAL(cap.bits.dstrd, 2);
	CU_ASSERT_EQUAL(cap.bits.to, 0);
	CU_ASSERT_EQUAL(cap.bits.nssrs, 0);
}

/* Figures 3.1.2 (VS), 3.1.5 (CC), 3.1.6 (CSTS), 3.1.8 (AQA). */
static void
test_vs_cc_csts_aqa_bits(void)
{
	union nvme_vs_register vs;
	union nvme_cc_register cc;
	union nvme_csts_register csts;
	union nvme_aqa_register aqa;

	vs.raw = NVME_VERSION(1, 4, 0);
	CU_ASSERT_EQUAL(vs.raw, 0x00010400u);
	CU_ASSERT_EQUAL(vs.bits.mjr, 1);
	CU_ASSERT_EQUAL(vs.bits.mnr, 4);
	CU_ASSERT_EQUAL(vs.bits.ter, 0);
	vs.raw = NVME_VERSION(2, 0, 1);
	CU_ASSERT_EQUAL(vs.bits.mjr, 2);
	CU_ASSERT_EQUAL(vs.bits.ter, 1);

	cc.raw = 0;
	cc.bits.en = 1;
	CU_ASSERT_EQUAL(cc.raw, 1u);
	cc.raw = 0;
	cc.bits.css = 7;
	CU_ASSERT_EQUAL(cc.raw, 7u << 4);
	cc.raw = 0;
	cc.bits.mps = 0xf;
	CU_ASSERT_EQUAL(cc.raw, 0xfu << 7);
	cc.raw = 0;
	cc.bits.ams = 7;
	CU_ASSERT_EQUAL(cc.raw, 7u << 11);
	cc.raw = 0;
	cc.bits.shn = NVME_SHN_NORMAL;
	CU_ASSERT_EQUAL(cc.raw, 1u << 14);
	cc.bits.shn = NVME_SHN_ABRUPT;
	CU_ASSERT_EQUAL(cc.raw, 2u << 14);
	cc.raw = 0;
	cc.bits.iosqes = 6;
	CU_ASSERT_EQUAL(cc.raw, 6u << 16);
	cc.raw = 0;
	cc.bits.iocqes = 4;
	CU_ASSERT_EQUAL(cc.raw, 4u << 20);
	/* The value a driver writes to enable: EN, 4 KiB pages, IOSQES 6, IOCQES 4. */
	cc.raw = 0;
	cc.bits.en = 1;
	cc.bits.iosqes = 6;
	cc.bits.iocqes = 4;
	CU_ASSERT_EQUAL(cc.raw, 0x00460001u);

	csts.raw = 0;
	csts.bits.rdy = 1;
	CU_ASSERT_EQUAL(csts.raw, 1u);
	csts.raw = 0;
	csts.bits.cfs = 1;
	CU_ASSERT_EQUAL(csts.raw, 2u);
	csts.raw = 0;
	csts.bits.shst = NVME_SHST_COMPLETE;
	CU_ASSERT_EQUAL(csts.raw, 2u << 2);
	csts.bits.shst = NVME_SHST_OCCURRING;
	CU_ASSERT_EQUAL(csts.raw, 1u << 2);
	csts.raw = 0;
	csts.bits.nssro = 1;
	CU_ASSERT_EQUAL(csts.raw, 1u << 4);
	csts.raw = 0;
	csts.bits.pp = 1;
	CU_ASSERT_EQUAL(csts.raw, 1u << 5);
	csts.raw = 0x9;
	CU_ASSERT_EQUAL(csts.bits.rdy, 1);
	CU_ASSERT_EQUAL(csts.bits.cfs, 0);
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_COMPLETE);

	aqa.raw = 0;
	aqa.bits.asqs = 0xfff;
	CU_ASSERT_EQUAL(aqa.raw, 0xfffu);
	aqa.raw = 0;
	aqa.bits.acqs = 31;
	CU_ASSERT_EQUAL(aqa.raw, 31u << 16);
}

/* Doorbells: 0x1000 + (2 * qid + is_cq) * (4 << CAP.DSTRD). */
static void
test_doorbell_offset(void)
{
	CU_ASSERT_EQUAL(nvme_doorbell_offset(0, 0, 0), 0x1000u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(0, 1, 0), 0x1004u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(1, 0, 0), 0x1008u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(1, 1, 0), 0x100cu);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(65535, 1, 0), 0x1000u + 131071u * 4u);

	CU_ASSERT_EQUAL(nvme_doorbell_offset(0, 0, 2), 0x1000u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(0, 1, 2), 0x1010u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(1, 0, 2), 0x1020u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(3, 1, 2), 0x1000u + 7u * 16u);
	CU_ASSERT_EQUAL(nvme_doorbell_offset(1, 1, 15), 0x1000u + 3u * (4u << 15));
	/* Any non-zero is_cq selects the CQ doorbell. */
	CU_ASSERT_EQUAL(nvme_doorbell_offset(2, 5, 0), nvme_doorbell_offset(2, 1, 0));
}

/* Figure 4.2 (common command format): dword 0 and the data pointer. */
static void
test_cmd_layout(void)
{
	struct nvme_cmd cmd;

	CHECK_OFF(struct nvme_cmd, cid, 2);
	CHECK_OFF(struct nvme_cmd, nsid, 4);
	CHECK_OFF(struct nvme_cmd, cdw2, 8);
	CHECK_OFF(struct nvme_cmd, cdw3, 12);
	CHECK_OFF(struct nvme_cmd, mptr, 16);
	CHECK_OFF(struct nvme_cmd, dptr.prp.prp1, 24);
	CHECK_OFF(struct nvme_cmd, dptr.prp.prp2, 32);
	CHECK_OFF(struct nvme_cmd, dptr.sgl1, 24);
	CHECK_OFF(struct nvme_cmd, cdw10, 40);
	CHECK_OFF(struct nvme_cmd, cdw11, 44);
	CHECK_OFF(struct nvme_cmd, cdw12, 48);
	CHECK_OFF(struct nvme_cmd, cdw13, 52);
	CHECK_OFF(struct nvme_cmd, cdw14, 56);
	CHECK_OFF(struct nvme_cmd, cdw15, 60);

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_READ;
	CU_ASSERT_EQUAL(dword_at(&cmd, 0), 0x02u);
	cmd.fuse = 3;
	CU_ASSERT_EQUAL(bits(dword_at(&cmd, 0), 9, 8), 3);
	cmd.fuse = 0;
	cmd.psdt = NVME_PSDT_SGL_MPTR_SGL;
	CU_ASSERT_EQUAL(dword_at(&cmd, 0), (2u << 14) | 0x02u);
	cmd.psdt = 0;
	cmd.cid = 0xbeef;
	CU_ASSERT_EQUAL(dword_at(&cmd, 0), 0xbeef0002u);
	cmd.opc = 0xff;
	CU_ASSERT_EQUAL(dword_at(&cmd, 0), 0xbeef00ffu);
	cmd.nsid = 0x11223344;
	CU_ASSERT_EQUAL(dword_at(&cmd, 4), 0x11223344u);
	cmd.dptr.prp.prp1 = 0x1000;
	cmd.dptr.prp.prp2 = 0x2000;
	CU_ASSERT_EQUAL(dword_at(&cmd, 24), 0x1000u);
	CU_ASSERT_EQUAL(dword_at(&cmd, 32), 0x2000u);
	cmd.cdw10 = 7;
	CU_ASSERT_EQUAL(dword_at(&cmd, 40), 7u);

	/* SGL descriptor: identifier in byte 15, type in the high nibble (section 4.4). */
	memset(&cmd, 0, sizeof(cmd));
	cmd.dptr.sgl1.type = 0x5;
	cmd.dptr.sgl1.subtype = 0x1;
	cmd.dptr.sgl1.length = 0x200;
	CU_ASSERT_EQUAL(((uint8_t *)&cmd)[24 + 15], 0x51);
	CU_ASSERT_EQUAL(dword_at(&cmd, 24 + 8), 0x200u);

	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_READ), NVME_DATA_CONTROLLER_TO_HOST);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_WRITE), NVME_DATA_HOST_TO_CONTROLLER);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_COMPARE), NVME_DATA_HOST_TO_CONTROLLER);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_DATASET_MANAGEMENT),
			NVME_DATA_HOST_TO_CONTROLLER);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_FLUSH), NVME_DATA_NONE);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_WRITE_ZEROES), NVME_DATA_NONE);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_IDENTIFY),
			NVME_DATA_CONTROLLER_TO_HOST);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_GET_LOG_PAGE),
			NVME_DATA_CONTROLLER_TO_HOST);
	CU_ASSERT_EQUAL(nvme_opc_get_data_transfer(NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD),
			NVME_DATA_HOST_TO_CONTROLLER);
}

/* Figure 4.6 (completion queue entry) and 4.6.1 (status field). */
static void
test_cpl_layout(void)
{
	struct nvme_cpl cpl;

	CHECK_OFF(struct nvme_cpl, cdw0, 0);
	CHECK_OFF(struct nvme_cpl, cdw1, 4);
	CHECK_OFF(struct nvme_cpl, sqhd, 8);
	CHECK_OFF(struct nvme_cpl, sqid, 10);
	CHECK_OFF(struct nvme_cpl, cid, 12);
	CHECK_OFF(struct nvme_cpl, status, 14);
	CHECK_OFF(struct nvme_cpl, status_raw, 14);

	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	cpl.status.p = 1;
	CU_ASSERT_EQUAL(cpl.status_raw, 0x0001);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	cpl.status_raw = 0;
	cpl.status.sc = 0xff;
	CU_ASSERT_EQUAL(cpl.status_raw, 0xff << 1);
	CU_ASSERT_TRUE(nvme_cpl_is_error(&cpl));
	cpl.status_raw = 0;
	cpl.status.sct = 7;
	CU_ASSERT_EQUAL(cpl.status_raw, 7 << 9);
	CU_ASSERT_TRUE(nvme_cpl_is_error(&cpl));
	cpl.status_raw = 0;
	cpl.status.crd = 3;
	CU_ASSERT_EQUAL(cpl.status_raw, 3 << 12);
	cpl.status_raw = 0;
	cpl.status.m = 1;
	CU_ASSERT_EQUAL(cpl.status_raw, 1 << 14);
	cpl.status_raw = 0;
	cpl.status.dnr = 1;
	CU_ASSERT_EQUAL(cpl.status_raw, 1 << 15);

	/* Dword 3 as a controller writes it: status 31:17, phase 16, CID 15:0. */
	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = 0x1234;
	cpl.status.p = 1;
	cpl.status.sct = NVME_SCT_MEDIA_ERROR;
	cpl.status.sc = NVME_SC_COMPARE_FAILURE;
	cpl.status.dnr = 1;
	CU_ASSERT_EQUAL(dword_at(&cpl, 12),
			(1u << 31) | (2u << 25) | (0x85u << 17) | (1u << 16) | 0x1234u);
	cpl.sqhd = 0x0005;
	cpl.sqid = 0x0003;
	CU_ASSERT_EQUAL(dword_at(&cpl, 8), 0x00030005u);

	/* And back: LBA out of range (generic 0x80) with the phase tag clear. */
	memset(&cpl, 0, sizeof(cpl));
	cpl.status_raw = (uint16_t)((NVME_SCT_GENERIC << 9) | (NVME_SC_LBA_OUT_OF_RANGE << 1));
	CU_ASSERT_EQUAL(cpl.status.sc, 0x80);
	CU_ASSERT_EQUAL(cpl.status.sct, 0);
	CU_ASSERT_EQUAL(cpl.status.p, 0);
}

/* Identify controller data structure (section 5.15.2.2, figure 247). */
static void
test_ctrlr_data_offsets(void)
{
	CHECK_OFF(struct nvme_ctrlr_data, vid, 0);
	CHECK_OFF(struct nvme_ctrlr_data, ssvid, 2);
	CHECK_OFF(struct nvme_ctrlr_data, sn, 4);
	CHECK_OFF(struct nvme_ctrlr_data, mn, 24);
	CHECK_OFF(struct nvme_ctrlr_data, fr, 64);
	CHECK_OFF(struct nvme_ctrlr_data, rab, 72);
	CHECK_OFF(struct nvme_ctrlr_data, ieee, 73);
	CHECK_OFF(struct nvme_ctrlr_data, cmic, 76);
	CHECK_OFF(struct nvme_ctrlr_data, mdts, 77);
	CHECK_OFF(struct nvme_ctrlr_data, cntlid, 78);
	CHECK_OFF(struct nvme_ctrlr_data, ver, 80);
	CHECK_OFF(struct nvme_ctrlr_data, rtd3r, 84);
	CHECK_OFF(struct nvme_ctrlr_data, rtd3e, 88);
	CHECK_OFF(struct nvme_ctrlr_data, oaes, 92);
	CHECK_OFF(struct nvme_ctrlr_data, ctratt, 96);
	CHECK_OFF(struct nvme_ctrlr_data, rrls, 100);
	CHECK_OFF(struct nvme_ctrlr_data, cntrltype, 111);
	CHECK_OFF(struct nvme_ctrlr_data, fguid, 112);
	CHECK_OFF(struct nvme_ctrlr_data, crdt1, 128);
	CHECK_OFF(struct nvme_ctrlr_data, crdt3, 132);
	CHECK_OFF(struct nvme_ctrlr_data, oacs, 256);
	CHECK_OFF(struct nvme_ctrlr_data, acl, 258);
	CHECK_OFF(struct nvme_ctrlr_data, aerl, 259);
	CHECK_OFF(struct nvme_ctrlr_data, frmw, 260);
	CHECK_OFF(struct nvme_ctrlr_data, lpa, 261);
	CHECK_OFF(struct nvme_ctrlr_data, elpe, 262);
	CHECK_OFF(struct nvme_ctrlr_data, npss, 263);
	CHECK_OFF(struct nvme_ctrlr_data, avscc, 264);
	CHECK_OFF(struct nvme_ctrlr_data, apsta, 265);
	CHECK_OFF(struct nvme_ctrlr_data, wctemp, 266);
	CHECK_OFF(struct nvme_ctrlr_data, cctemp, 268);
	CHECK_OFF(struct nvme_ctrlr_data, mtfa, 270);
	CHECK_OFF(struct nvme_ctrlr_data, hmpre, 272);
	CHECK_OFF(struct nvme_ctrlr_data, hmmin, 276);
	CHECK_OFF(struct nvme_ctrlr_data, tnvmcap, 280);
	CHECK_OFF(struct nvme_ctrlr_data, unvmcap, 296);
	CHECK_OFF(struct nvme_ctrlr_data, rpmbs, 312);
	CHECK_OFF(struct nvme_ctrlr_data, edstt, 316);
	CHECK_OFF(struct nvme_ctrlr_data, dsto, 318);
	CHECK_OFF(struct nvme_ctrlr_data, fwug, 319);
	CHECK_OFF(struct nvme_ctrlr_data, kas, 320);
	CHECK_OFF(struct nvme_ctrlr_data, hctma, 322);
	CHECK_OFF(struct nvme_ctrlr_data, mntmt, 324);
	CHECK_OFF(struct nvme_ctrlr_data, mxtmt, 326);
	CHECK_OFF(struct nvme_ctrlr_data, sanicap, 328);
	CHECK_OFF(struct nvme_ctrlr_data, hmminds, 332);
	CHECK_OFF(struct nvme_ctrlr_data, hmmaxd, 336);
	CHECK_OFF(struct nvme_ctrlr_data, nsetidmax, 338);
	CHECK_OFF(struct nvme_ctrlr_data, endgidmax, 340);
	CHECK_OFF(struct nvme_ctrlr_data, anatt, 342);
	CHECK_OFF(struct nvme_ctrlr_data, anacap, 343);
	CHECK_OFF(struct nvme_ctrlr_data, anagrpmax, 344);
	CHECK_OFF(struct nvme_ctrlr_data, nanagrpid, 348);
	CHECK_OFF(struct nvme_ctrlr_data, pels, 352);
	CHECK_OFF(struct nvme_ctrlr_data, sqes, 512);
	CHECK_OFF(struct nvme_ctrlr_data, cqes, 513);
	CHECK_OFF(struct nvme_ctrlr_data, maxcmd, 514);
	CHECK_OFF(struct nvme_ctrlr_data, nn, 516);
	CHECK_OFF(struct nvme_ctrlr_data, oncs, 520);
	CHECK_OFF(struct nvme_ctrlr_data, fuses, 522);
	CHECK_OFF(struct nvme_ctrlr_data, fna, 524);
	CHECK_OFF(struct nvme_ctrlr_data, vwc, 525);
	CHECK_OFF(struct nvme_ctrlr_data, awun, 526);
	CHECK_OFF(struct nvme_ctrlr_data, awupf, 528);
	CHECK_OFF(struct nvme_ctrlr_data, nvscc, 530);
	CHECK_OFF(struct nvme_ctrlr_data, nwpc, 531);
	CHECK_OFF(struct nvme_ctrlr_data, acwu, 532);
	CHECK_OFF(struct nvme_ctrlr_data, sgls, 536);
	CHECK_OFF(struct nvme_ctrlr_data, mnan, 540);
	CHECK_OFF(struct nvme_ctrlr_data, subnqn, 768);
	CHECK_OFF(struct nvme_ctrlr_data, nvmf_specific, 1792);
	CHECK_OFF(struct nvme_ctrlr_data, psd, 2048);
	CHECK_OFF(struct nvme_ctrlr_data, psd[1], 2080);
	CHECK_OFF(struct nvme_ctrlr_data, vs, 3072);

	/* Power state descriptor (figure 249). */
	CHECK_OFF(struct nvme_power_state, mp, 0);
	CHECK_OFF(struct nvme_power_state, enlat, 4);
	CHECK_OFF(struct nvme_power_state, exlat, 8);
	CHECK_OFF(struct nvme_power_state, idlp, 16);
	CHECK_OFF(struct nvme_power_state, actp, 20);

	CU_ASSERT_EQUAL(NVME_ONCS_COMPARE, 1u << 0);
	CU_ASSERT_EQUAL(NVME_ONCS_DSM, 1u << 2);
	CU_ASSERT_EQUAL(NVME_ONCS_WRITE_ZEROES, 1u << 3);
	CU_ASSERT_EQUAL(NVME_OACS_FORMAT, 1u << 1);
	CU_ASSERT_EQUAL(NVME_OACS_FIRMWARE, 1u << 2);
}

/* Identify namespace data structure and LBA format (section 5.15.2.1). */
static void
test_ns_data_offsets(void)
{
	struct nvme_lbaf lbaf;

	CHECK_OFF(struct nvme_ns_data, nsze, 0);
	CHECK_OFF(struct nvme_ns_data, ncap, 8);
	CHECK_OFF(struct nvme_ns_data, nuse, 16);
	CHECK_OFF(struct nvme_ns_data, nsfeat, 24);
	CHECK_OFF(struct nvme_ns_data, nlbaf, 25);
	CHECK_OFF(struct nvme_ns_data, flbas, 26);
	CHECK_OFF(struct nvme_ns_data, mc, 27);
	CHECK_OFF(struct nvme_ns_data, dpc, 28);
	CHECK_OFF(struct nvme_ns_data, dps, 29);
	CHECK_OFF(struct nvme_ns_data, nmic, 30);
	CHECK_OFF(struct nvme_ns_data, rescap, 31);
	CHECK_OFF(struct nvme_ns_data, fpi, 32);
	CHECK_OFF(struct nvme_ns_data, dlfeat, 33);
	CHECK_OFF(struct nvme_ns_data, nawun, 34);
	CHECK_OFF(struct nvme_ns_data, nawupf, 36);
	CHECK_OFF(struct nvme_ns_data, nacwu, 38);
	CHECK_OFF(struct nvme_ns_data, nabsn, 40);
	CHECK_OFF(struct nvme_ns_data, nabo, 42);
	CHECK_OFF(struct nvme_ns_data, nabspf, 44);
	CHECK_OFF(struct nvme_ns_data, noiob, 46);
	CHECK_OFF(struct nvme_ns_data, nvmcap, 48);
	CHECK_OFF(struct nvme_ns_data, npwg, 64);
	CHECK_OFF(struct nvme_ns_data, npwa, 66);
	CHECK_OFF(struct nvme_ns_data, npdg, 68);
	CHECK_OFF(struct nvme_ns_data, npda, 70);
	CHECK_OFF(struct nvme_ns_data, nows, 72);
	CHECK_OFF(struct nvme_ns_data, anagrpid, 92);
	CHECK_OFF(struct nvme_ns_data, nsattr, 99);
	CHECK_OFF(struct nvme_ns_data, nvmsetid, 100);
	CHECK_OFF(struct nvme_ns_data, endgid, 102);
	CHECK_OFF(struct nvme_ns_data, nguid, 104);
	CHECK_OFF(struct nvme_ns_data, eui64, 120);
	CHECK_OFF(struct nvme_ns_data, lbaf, 128);
	CHECK_OFF(struct nvme_ns_data, lbaf[1], 132);
	CHECK_OFF(struct nvme_ns_data, lbaf[15], 188);
	CHECK_OFF(struct nvme_ns_data, vs, 384);

	/* LBAF: MS 15:0, LBADS 23:16, RP 25:24. */
	memset(&lbaf, 0, sizeof(lbaf));
	lbaf.ms = 8;
	lbaf.lbads = 12;
	lbaf.rp = 2;
	CU_ASSERT_EQUAL(dword_at(&lbaf, 0), (2u << 24) | (12u << 16) | 8u);
	CU_ASSERT_EQUAL(NVME_FLBAS_FORMAT_MASK, 0xfu);
	CU_ASSERT_EQUAL(NVME_FLBAS_EXTENDED, 0x10u);
}

/* Features, queue creation, abort, format, firmware, DSM, AER and log page fields. */
static void
test_command_fields(void)
{
	union nvme_feat_number_of_queues nq;
	union nvme_feat_temperature_threshold tt;
	union nvme_feat_arbitration arb;
	union nvme_feat_volatile_write_cache vwc;
	union nvme_feat_async_event_configuration aec;
	union nvme_format_cdw10 fmt;
	union nvme_fw_commit_cdw10 fwc;
	union nvme_async_event_completion aer;

	nq.raw = 0;
	nq.bits.nsqr = 63;
	nq.bits.ncqr = 31;
	CU_ASSERT_EQUAL(nq.raw, (31u << 16) | 63u);

	tt.raw = 0;
	tt.bits.tmpth = 343;
	tt.bits.tmpsel = 0xf;
	tt.bits.thsel = 1;
	CU_ASSERT_EQUAL(tt.raw, (1u << 20) | (0xfu << 16) | 343u);

	arb.raw = 0;
	arb.bits.ab = 7;
	arb.bits.lpw = 1;
	arb.bits.mpw = 2;
	arb.bits.hpw = 3;
	CU_ASSERT_EQUAL(arb.raw, (3u << 24) | (2u << 16) | (1u << 8) | 7u);

	vwc.raw = 0;
	vwc.bits.wce = 1;
	CU_ASSERT_EQUAL(vwc.raw, 1u);

	aec.raw = 0;
	aec.bits.crit_warn = 0xff;
	CU_ASSERT_EQUAL(aec.raw, 0xffu);
	aec.raw = 0;
	aec.bits.ns_attr_notice = 1;
	CU_ASSERT_EQUAL(aec.raw, 1u << 8);
	aec.raw = 0;
	aec.bits.fw_activation_notice = 1;
	CU_ASSERT_EQUAL(aec.raw, 1u << 9);

	fmt.raw = 0;
	fmt.bits.lbaf = 1;
	CU_ASSERT_EQUAL(fmt.raw, 1u);
	fmt.raw = 0;
	fmt.bits.mset = 1;
	CU_ASSERT_EQUAL(fmt.raw, 1u << 4);
	fmt.raw = 0;
	fmt.bits.pi = 7;
	CU_ASSERT_EQUAL(fmt.raw, 7u << 5);
	fmt.raw = 0;
	fmt.bits.pil = 1;
	CU_ASSERT_EQUAL(fmt.raw, 1u << 8);
	fmt.raw = 0;
	fmt.bits.ses = 1;
	CU_ASSERT_EQUAL(fmt.raw, 1u << 9);

	fwc.raw = 0;
	fwc.bits.fs = 2;
	fwc.bits.ca = NVME_FW_COMMIT_REPLACE_AND_ENABLE;
	CU_ASSERT_EQUAL(fwc.raw, (1u << 3) | 2u);
	fwc.raw = 0;
	fwc.bits.bpid = 1;
	CU_ASSERT_EQUAL(fwc.raw, 1u << 31);

	aer.raw = 0;
	aer.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_SMART;
	aer.bits.async_event_info = NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD;
	aer.bits.log_page_identifier = NVME_LOG_HEALTH_INFORMATION;
	CU_ASSERT_EQUAL(aer.raw, (2u << 16) | (1u << 8) | 1u);

	CU_ASSERT_EQUAL(NVME_CREATE_IO_Q_CDW10(3, 64), (63u << 16) | 3u);
	CU_ASSERT_EQUAL(NVME_CREATE_IO_Q_CDW10(1, 65536), 0xffff0001u);
	CU_ASSERT_EQUAL(NVME_ABORT_CDW10(1, 5), 0x00050001u);
	CU_ASSERT_EQUAL(NVME_GET_LOG_CDW10(NVME_LOG_HEALTH_INFORMATION, 128), (127u << 16) | 2u);
	CU_ASSERT_EQUAL(NVME_GET_LOG_CDW11(128), 0u);
	CU_ASSERT_EQUAL(NVME_GET_LOG_CDW10(1, 0x20000), (0xffffu << 16) | 1u);
	CU_ASSERT_EQUAL(NVME_GET_LOG_CDW11(0x20000), 1u);
	CU_ASSERT_EQUAL(NVME_FW_AFI_ACTIVE_SLOT(0x21), 1u);
	CU_ASSERT_EQUAL(NVME_FW_AFI_NEXT_SLOT(0x21), 2u);

	CHECK_OFF(struct nvme_dsm_range, attributes, 0);
	CHECK_OFF(struct nvme_dsm_range, length, 4);
	CHECK_OFF(struct nvme_dsm_range, starting_lba, 8);
}

/* Section 5.14.1: error information, SMART / health and firmware slot logs. */
static void
test_log_page_offsets(void)
{
	struct nvme_error_information_entry err;

	CHECK_OFF(struct nvme_error_information_entry, error_count, 0);
	CHECK_OFF(struct nvme_error_information_entry, sqid, 8);
	CHECK_OFF(struct nvme_error_information_entry, cid, 10);
	CHECK_OFF(struct nvme_error_information_entry, status, 12);
	CHECK_OFF(struct nvme_error_information_entry, error_location, 14);
	CHECK_OFF(struct nvme_error_information_entry, lba, 16);
	CHECK_OFF(struct nvme_error_information_entry, nsid, 24);
	CHECK_OFF(struct nvme_error_information_entry, vendor_specific, 28);
	CHECK_OFF(struct nvme_error_information_entry, trtype, 29);
	CHECK_OFF(struct nvme_error_information_entry, command_specific, 32);
	CHECK_OFF(struct nvme_error_information_entry, trtype_specific, 40);

	/* The status field of an error entry has the completion's layout (bit 0 = phase). */
	memset(&err, 0, sizeof(err));
	err.status.sc = NVME_SC_LBA_OUT_OF_RANGE;
	CU_ASSERT_EQUAL(dword_at(&err, 12) & 0xffff, 0x80u << 1);

	CHECK_OFF(struct nvme_health_information_page, critical_warning, 0);
	CHECK_OFF(struct nvme_health_information_page, temperature, 1);
	CHECK_OFF(struct nvme_health_information_page, available_spare, 3);
	CHECK_OFF(struct nvme_health_information_page, available_spare_threshold, 4);
	CHECK_OFF(struct nvme_health_information_page, percentage_used, 5);
	CHECK_OFF(struct nvme_health_information_page, endurance_group_critical_warning, 6);
	CHECK_OFF(struct nvme_health_information_page, data_units_read, 32);
	CHECK_OFF(struct nvme_health_information_page, data_units_written, 48);
	CHECK_OFF(struct nvme_health_information_page, host_read_commands, 64);
	CHECK_OFF(struct nvme_health_information_page, host_write_commands, 80);
	CHECK_OFF(struct nvme_health_information_page, controller_busy_time, 96);
	CHECK_OFF(struct nvme_health_information_page, power_cycles, 112);
	CHECK_OFF(struct nvme_health_information_page, power_on_hours, 128);
	CHECK_OFF(struct nvme_health_information_page, unsafe_shutdowns, 144);
	CHECK_OFF(struct nvme_health_information_page, media_errors, 160);
	CHECK_OFF(struct nvme_health_information_page, num_error_info_log_entries, 176);
	CHECK_OFF(struct nvme_health_information_page, warning_temp_time, 192);
	CHECK_OFF(struct nvme_health_information_page, critical_temp_time, 196);
	CHECK_OFF(struct nvme_health_information_page, temp_sensor, 200);
	CHECK_OFF(struct nvme_health_information_page, thm_temp1_trans_count, 216);
	CHECK_OFF(struct nvme_health_information_page, thm_temp2_trans_count, 220);
	CHECK_OFF(struct nvme_health_information_page, thm_temp1_total_time, 224);
	CHECK_OFF(struct nvme_health_information_page, thm_temp2_total_time, 228);
	CHECK_OFF(struct nvme_health_information_page, rsvd232, 232);

	CHECK_OFF(struct nvme_firmware_page, afi, 0);
	CHECK_OFF(struct nvme_firmware_page, revision, 8);
	CHECK_OFF(struct nvme_firmware_page, revision[1], 16);
	CHECK_OFF(struct nvme_firmware_page, revision[6], 56);
	CHECK_OFF(struct nvme_firmware_page, rsvd64, 64);
}

/* Status code values that the driver and the controller must agree on. */
static void
test_status_values(void)
{
	CU_ASSERT_EQUAL(NVME_SCT_GENERIC, 0);
	CU_ASSERT_EQUAL(NVME_SCT_COMMAND_SPECIFIC, 1);
	CU_ASSERT_EQUAL(NVME_SCT_MEDIA_ERROR, 2);
	CU_ASSERT_EQUAL(NVME_SCT_PATH, 3);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_OPCODE, 0x01);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_FIELD, 0x02);
	CU_ASSERT_EQUAL(NVME_SC_DATA_TRANSFER_ERROR, 0x04);
	CU_ASSERT_EQUAL(NVME_SC_ABORTED_BY_REQUEST, 0x07);
	CU_ASSERT_EQUAL(NVME_SC_ABORTED_SQ_DELETION, 0x08);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_NAMESPACE_OR_FORMAT, 0x0b);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_PRP_OFFSET, 0x13);
	CU_ASSERT_EQUAL(NVME_SC_LBA_OUT_OF_RANGE, 0x80);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_QUEUE_IDENTIFIER, 0x01);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_QUEUE_SIZE, 0x02);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_FIRMWARE_SLOT, 0x06);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_FIRMWARE_IMAGE, 0x07);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_LOG_PAGE, 0x09);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_FORMAT, 0x0a);
	CU_ASSERT_EQUAL(NVME_SC_INVALID_QUEUE_DELETION, 0x0c);
	CU_ASSERT_EQUAL(NVME_SC_COMPARE_FAILURE, 0x85);
	CU_ASSERT_EQUAL(NVME_SC_UNRECOVERED_READ_ERROR, 0x81);
	CU_ASSERT_EQUAL(NVME_OPC_ABORT, 0x08);
	CU_ASSERT_EQUAL(NVME_OPC_FORMAT_NVM, 0x80);
	CU_ASSERT_EQUAL(NVME_OPC_FIRMWARE_COMMIT, 0x10);
	CU_ASSERT_EQUAL(NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD, 0x11);
	CU_ASSERT_EQUAL(NVME_OPC_WRITE_ZEROES, 0x08);
	CU_ASSERT_EQUAL(NVME_OPC_DATASET_MANAGEMENT, 0x09);
}

int
main(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
		{ "sizes", test_sizes },
		{ "register_offsets", test_register_offsets },
		{ "cap_bits", test_cap_bits },
		{ "vs_cc_csts_aqa_bits", test_vs_cc_csts_aqa_bits },
		{ "doorbell_offset", test_doorbell_offset },
		{ "cmd_layout", test_cmd_layout },
		{ "cpl_layout", test_cpl_layout },
		{ "ctrlr_data_offsets", test_ctrlr_data_offsets },
		{ "ns_data_offsets", test_ns_data_offsets },
		{ "command_fields", test_command_fields },
		{ "log_page_offsets", test_log_page_offsets },
		{ "status_values", test_status_values },
	};
	CU_pSuite suite;
	unsigned int failures;
	size_t i;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("nvme_spec", NULL, NULL);
	if (suite == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL) {
			CU_cleanup_registry();
			return 1;
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
