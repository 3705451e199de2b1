/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/common/tgt_fabric.c, the Fabrics answers both NVMe/TCP
 * targets give: Connect's parameter checks and the field its Invalid Parameters
 * status names, the registers as properties, Identify Controller's fabrics
 * fields, a discovery record.
 */
#include <string.h>

#include "tgt_fabric.c"

#include "ut_main.h"

static void
connect_cmd(struct nvme_fabric_connect_cmd *fc, uint16_t qid, uint16_t sqsize)
{
	memset(fc, 0, sizeof(*fc));
	fc->opcode = NVME_OPC_FABRIC;
	fc->fctype = NVME_FCTYPE_CONNECT;
	fc->qid = qid;
	fc->sqsize = sqsize;
}

static void
test_connect_check(void)
{
	static struct nvme_fabric_connect_data d;
	struct nvme_fabric_connect_cmd fc;
	struct nvme_cpl cpl;

	memset(&d, 'x', sizeof(d)); /* NQNs without their terminating zero */
	connect_cmd(&fc, 0, 31);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(tgt_fabric_connect_check(&fc, &d, sizeof(d), 31, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.status.sc, 0);
	CU_ASSERT_EQUAL(strlen(d.subnqn), sizeof(d.subnqn) - 1);
	CU_ASSERT_EQUAL(strlen(d.hostnqn), sizeof(d.hostnqn) - 1);

	connect_cmd(&fc, 0, 32); /* SQSIZE over the limit: named in the command */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(tgt_fabric_connect_check(&fc, &d, sizeof(d), 31, &cpl), -1);
	CU_ASSERT_EQUAL(cpl.status.sct, NVME_SCT_COMMAND_SPECIFIC);
	CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_CONNECT_INVALID_PARAMETERS);
	CU_ASSERT_EQUAL(cpl.status.dnr, 1);
	CU_ASSERT_EQUAL(cpl.cdw0, offsetof(struct nvme_fabric_connect_cmd, sqsize));
	connect_cmd(&fc, 1, 0); /* SQSIZE 0: a one-entry queue is no queue */
	CU_ASSERT_EQUAL(tgt_fabric_connect_check(&fc, &d, sizeof(d), 127, &cpl), -1);
	connect_cmd(&fc, 1, 127);
	fc.recfmt = 1;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(tgt_fabric_connect_check(&fc, &d, sizeof(d), 127, &cpl), -1);
	CU_ASSERT_EQUAL(cpl.cdw0, offsetof(struct nvme_fabric_connect_cmd, recfmt));
	fc.recfmt = 0;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(tgt_fabric_connect_check(&fc, NULL, 512, 127, &cpl), -1); /* no data */
	CU_ASSERT_EQUAL(cpl.cdw0, offsetof(struct nvme_fabric_connect_cmd, sgl1));

	/* a parameter in the data: bit 16 set */
	memset(&cpl, 0, sizeof(cpl));
	tgt_fabric_connect_invalid(&cpl, true, offsetof(struct nvme_fabric_connect_data, cntlid));
	CU_ASSERT_EQUAL(cpl.cdw0, 1u << 16 | 16u);
}

static void
prop(struct nvme_fabric_prop_cmd *p, uint8_t fctype, uint32_t ofst, uint64_t value)
{
	memset(p, 0, sizeof(*p));
	p->opcode = NVME_OPC_FABRIC;
	p->fctype = fctype;
	p->ofst = ofst;
	p->value = value;
}

static void
test_property(void)
{
	struct tgt_fabric_regs regs = { .cap = 0x0000002000ff007full, .vs = 0x10400 };
	struct nvme_fabric_prop_cmd p;
	struct nvme_cpl cpl;
	union nvme_cc_register cc = { .raw = 0 };
	union nvme_csts_register csts;

	prop(&p, NVME_FCTYPE_PROPERTY_GET, NVME_REG_CAP, 0);
	memset(&cpl, 0, sizeof(cpl));
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.cdw0, 0x00ff007fu);
	CU_ASSERT_EQUAL(cpl.cdw1, 0x20u);
	prop(&p, NVME_FCTYPE_PROPERTY_GET, NVME_REG_VS, 0);
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.cdw0, 0x10400u);

	/* enable: ready at once; shut down: complete at once */
	cc.bits.en = 1;
	prop(&p, NVME_FCTYPE_PROPERTY_SET, NVME_REG_CC, cc.raw);
	memset(&cpl, 0, sizeof(cpl));
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.status.sc, 0);
	prop(&p, NVME_FCTYPE_PROPERTY_GET, NVME_REG_CSTS, 0);
	tgt_fabric_property(&p, &regs, &cpl);
	csts.raw = cpl.cdw0;
	CU_ASSERT(csts.bits.rdy == 1 && csts.bits.shst == 0);
	cc.bits.shn = 1;
	prop(&p, NVME_FCTYPE_PROPERTY_SET, NVME_REG_CC, cc.raw);
	tgt_fabric_property(&p, &regs, &cpl);
	prop(&p, NVME_FCTYPE_PROPERTY_GET, NVME_REG_CSTS, 0);
	tgt_fabric_property(&p, &regs, &cpl);
	csts.raw = cpl.cdw0;
	CU_ASSERT_EQUAL(csts.bits.shst, NVME_SHST_COMPLETE);
	prop(&p, NVME_FCTYPE_PROPERTY_GET, NVME_REG_CC, 0);
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.cdw0, cc.raw);

	/* any other property is no register of a fabrics controller here */
	prop(&p, NVME_FCTYPE_PROPERTY_GET, 0x24 /* AQA */, 0);
	memset(&cpl, 0, sizeof(cpl));
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_INVALID_FIELD);
	prop(&p, NVME_FCTYPE_PROPERTY_SET, NVME_REG_CSTS, 1);
	memset(&cpl, 0, sizeof(cpl));
	tgt_fabric_property(&p, &regs, &cpl);
	CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_INVALID_FIELD);
	CU_ASSERT_EQUAL(regs.csts & 1u, 1u); /* untouched: still ready */
}

static void
test_identify_and_discovery(void)
{
	static struct nvme_ctrlr_data cd;
	static struct nvme_discovery_log_entry e;
	const struct nvme_fabric_ctrlr_data *f = (const void *)cd.nvmf_specific;

	memset(&cd, 0xff, sizeof(cd));
	tgt_fabric_identify(&cd, 7, "nqn.2026-01.io.nvpoll:x", 8192);
	CU_ASSERT_EQUAL(cd.cntlid, 7);
	CU_ASSERT_STRING_EQUAL(cd.subnqn, "nqn.2026-01.io.nvpoll:x");
	CU_ASSERT_EQUAL(cd.subnqn[sizeof(cd.subnqn) - 1], 0);
	CU_ASSERT_EQUAL(f->ioccsz, (64 + 8192) / 16);
	CU_ASSERT_EQUAL(f->iorcsz, 1);
	CU_ASSERT_EQUAL(f->icdoff, 0);
	CU_ASSERT_EQUAL(f->msdbd, 1);
	CU_ASSERT_EQUAL(cd.sgls & 3u, 1u); /* SGLs supported */

	memset(&e, 0xff, sizeof(e));
	tgt_fabric_disc_entry(&e, true, "::1", "4420", "nqn.2026-01.io.nvpoll:x", 2, 32);
	CU_ASSERT_EQUAL(e.trtype, NVME_TRTYPE_TCP);
	CU_ASSERT_EQUAL(e.adrfam, NVME_ADRFAM_IPV6);
	CU_ASSERT_EQUAL(e.subtype, NVME_SUBTYPE_NVME);
	CU_ASSERT_EQUAL(e.portid, 2);
	CU_ASSERT_EQUAL(e.cntlid, NVME_FABRIC_CNTLID_DYNAMIC);
	CU_ASSERT_EQUAL(e.asqsz, 32);
	CU_ASSERT(memcmp(e.trsvcid, "4420 ", 5) == 0 && e.trsvcid[31] == ' ');
	CU_ASSERT(memcmp(e.traddr, "::1 ", 4) == 0 && e.traddr[255] == ' ');
	CU_ASSERT_STRING_EQUAL(e.subnqn, "nqn.2026-01.io.nvpoll:x");
	CU_ASSERT_EQUAL(e.tsas[0], 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_connect_check),
		UT_TEST(test_property),
		UT_TEST(test_identify_and_discovery),
	};

	return ut_run("tgt_fabric", tests, sizeof(tests) / sizeof(tests[0]));
}
