/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_admin.c: identify, features, queue creation/deletion
 * validation, abort and AER limits, format NVM, unknown opcodes. Commands go through the
 * admin queue in DMA memory, the controller is stepped by polling.
 */
#include "emu_ut_helpers.h"

#define CS(sc) UT_SC(NVME_SCT_COMMAND_SPECIFIC, sc)
#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)

static void *g_page;
static uint64_t g_page_iova;

static struct nvme_cmd
acmd(uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = opc;
	cmd.nsid = nsid;
	cmd.cdw10 = cdw10;
	cmd.cdw11 = cdw11;
	cmd.dptr.prp.prp1 = g_page_iova;
	return cmd;
}

static uint16_t
run(struct ut_host *h, struct nvme_cmd cmd, uint32_t *cdw0)
{
	struct nvme_cpl cpl = { 0 };
	uint16_t st = ut_admin_st(h, &cmd, &cpl);

	if (cdw0 != NULL) {
		*cdw0 = cpl.cdw0;
	}
	return st;
}

static uint16_t
identify(struct ut_host *h, uint32_t cns, uint32_t nsid)
{
	memset(g_page, 0xee, 4096);
	return run(h, acmd(NVME_OPC_IDENTIFY, nsid, cns, 0), NULL);
}

static void
test_identify_ctrlr(void)
{
	struct ut_host h;
	struct nvme_ctrlr_data *cd = g_page;
	char nqn[64];

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "nn=2 size=2M"), 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_CTRLR, 0), 0);
	CU_ASSERT_EQUAL(cd->vid, EMU_PCI_VID);
	CU_ASSERT_EQUAL(cd->ssvid, EMU_PCI_VID);
	CU_ASSERT(memcmp(cd->sn, "EMU", 3) == 0);
	CU_ASSERT_EQUAL(nvp_strpadlen(cd->mn, sizeof(cd->mn)), strlen(EMU_MODEL));
	CU_ASSERT(memcmp(cd->fr, "1.0     ", 8) == 0);
	CU_ASSERT_EQUAL(cd->mdts, 5);
	CU_ASSERT_EQUAL(cd->cntlid, h.c->cntlid);
	CU_ASSERT_EQUAL(cd->ver, NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(cd->oacs,
			NVME_OACS_FORMAT | NVME_OACS_FIRMWARE | NVME_OACS_DOORBELL_BUFFER_CONFIG);
	CU_ASSERT_EQUAL(cd->acl, 3);
	CU_ASSERT_EQUAL(cd->aerl, 3);
	CU_ASSERT_EQUAL(cd->frmw, NVME_FRMW_SLOT1_RO | (3u << NVME_FRMW_NUM_SLOTS_SHIFT));
	CU_ASSERT_EQUAL(cd->lpa, NVME_LPA_EXTENDED_DATA);
	CU_ASSERT_EQUAL(cd->elpe, 63);
	CU_ASSERT_EQUAL(cd->sqes, 0x66);
	CU_ASSERT_EQUAL(cd->cqes, 0x44);
	CU_ASSERT_EQUAL(cd->nn, 2);
	CU_ASSERT_EQUAL(cd->oncs, NVME_ONCS_COMPARE | NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES);
	CU_ASSERT_EQUAL(cd->vwc & 1u, 1u);
	CU_ASSERT_EQUAL(cd->wctemp, EMU_WCTEMP);
	CU_ASSERT_EQUAL(cd->cctemp, EMU_CCTEMP);
	CU_ASSERT_EQUAL(cd->tnvmcap[0], 4ull << 20);
	CU_ASSERT_EQUAL(cd->sgls, 0);
	snprintf(nqn, sizeof(nqn), "nqn.2026-12.io.nvpoll:emu:%s", h.c->opts.name);
	CU_ASSERT_STRING_EQUAL(cd->subnqn, nqn);
	ut_host_fini(&h);
}

/*
 * Doorbell Buffer Config: I/O queues then take the host's doorbells from the shadow page
 * (an MMIO write alone is not news) and report what they saw in the EventIdx page.
 */
static void
test_dbbuf_config(void)
{
	struct ut_host h;
	struct nvme_ctrlr_data *cd = g_page;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t db_iova = 0, ei_iova = 0;
	uint32_t *db, *ei;
	int i;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "size=2M"), 0);
	db = nvp_env_dma_zmalloc(4096, 4096, &db_iova);
	ei = nvp_env_dma_zmalloc(4096, 4096, &ei_iova);
	CU_ASSERT_FATAL(db != NULL && ei != NULL);
	CU_ASSERT_EQUAL(ut_create_qpair(&h, 1, 8), 0);
	cmd = acmd(NVME_OPC_DOORBELL_BUFFER_CONFIG, 0, 0, 0);
	cmd.dptr.prp.prp1 = db_iova + 8; /* not page aligned */
	cmd.dptr.prp.prp2 = ei_iova;
	CU_ASSERT_EQUAL(run(&h, cmd, NULL), GEN(NVME_SC_INVALID_FIELD));
	cmd.dptr.prp.prp1 = db_iova;
	CU_ASSERT_EQUAL(run(&h, cmd, NULL), 0);
	CU_ASSERT_PTR_EQUAL(h.c->sqs[1].shadow, &db[2]); /* SQ 1 tail: (2 * 1) * 4 bytes */
	CU_ASSERT_PTR_EQUAL(h.c->cqs[1].shadow, &db[3]);
	CU_ASSERT_PTR_EQUAL(h.c->sqs[1].ei, &ei[2]);
	CU_ASSERT_PTR_NULL(h.c->sqs[0].shadow); /* the admin queue stays on MMIO */
	/* MMIO alone is not looked at any more ... */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FLUSH;
	cmd.nsid = 1;
	ut_submit(&h, 1, &cmd, false);
	for (i = 0; i < 100; i++) {
		ut_step(&h);
	}
	CU_ASSERT_FALSE(ut_reap(&h, 1, &cpl));
	/* ... the shadow value is, and EventIdx says it was seen. */
	__atomic_store_n(&db[2], h.q[1].sq_tail, __ATOMIC_RELEASE);
	CU_ASSERT_EQUAL(ut_wait(&h, 1, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&ei[2], __ATOMIC_ACQUIRE), h.q[1].sq_tail);
	ut_host_fini(&h);
	nvp_env_dma_free(db);
	nvp_env_dma_free(ei);

	/* Not offered: no OACS bit, the opcode is unknown. */
	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "size=2M dbbuf=0"), 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_CTRLR, 0), 0);
	CU_ASSERT_EQUAL(cd->oacs & NVME_OACS_DOORBELL_BUFFER_CONFIG, 0);
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DOORBELL_BUFFER_CONFIG, 0, 0, 0), NULL),
			GEN(NVME_SC_INVALID_OPCODE));
	ut_host_fini(&h);
}

static void
test_identify_ns(void)
{
	struct ut_host h;
	struct nvme_ns_data *nd = g_page;
	uint8_t nguid[16], eui[8];

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "nn=2 size=8M lba=512/4096"), 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 1), 0);
	CU_ASSERT_EQUAL(nd->nsze, (8u << 20) / 512);
	CU_ASSERT_EQUAL(nd->ncap, nd->nsze);
	CU_ASSERT_EQUAL(nd->nlbaf, 1);
	CU_ASSERT_EQUAL(nd->flbas & NVME_FLBAS_FORMAT_MASK, 0);
	CU_ASSERT_EQUAL(nd->lbaf[0].lbads, 9);
	CU_ASSERT_EQUAL(nd->lbaf[1].lbads, 12);
	CU_ASSERT_EQUAL(nd->dlfeat & 0x7u, NVME_DLFEAT_READ_ZEROES);
	memcpy(nguid, nd->nguid, 16);
	memcpy(eui, nd->eui64, 8);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 2), 0);
	CU_ASSERT_EQUAL(nd->nsze, (8u << 20) / 4096);
	CU_ASSERT_EQUAL(nd->flbas & NVME_FLBAS_FORMAT_MASK, 1);
	CU_ASSERT(memcmp(nguid, nd->nguid, 16) != 0);
	CU_ASSERT(memcmp(eui, nd->eui64, 8) != 0);
	/* invalid namespace ids */
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 0),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 3),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 0xffffffff),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	ut_host_fini(&h);
}

static void
test_identify_lists(void)
{
	struct ut_host h;
	uint32_t *list = g_page;
	uint8_t *desc = g_page;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "nn=3 size=1M"), 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_ACTIVE_NS_LIST, 0), 0);
	CU_ASSERT(list[0] == 1 && list[1] == 2 && list[2] == 3 && list[3] == 0);
	CU_ASSERT_EQUAL(list[1023], 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_ACTIVE_NS_LIST, 1), 0);
	CU_ASSERT(list[0] == 2 && list[1] == 3 && list[2] == 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_ACTIVE_NS_LIST, 3), 0);
	CU_ASSERT_EQUAL(list[0], 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_ACTIVE_NS_LIST, 0xfffffffe),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS_ID_DESCRIPTOR_LIST, 2), 0);
	CU_ASSERT(desc[0] == 1 && desc[1] == 8 && desc[12] == 2 && desc[13] == 16);
	CU_ASSERT(memcmp(&desc[4], h.c->ns[1].eui64, 8) == 0);
	CU_ASSERT_EQUAL(desc[32], 0);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS_ID_DESCRIPTOR_LIST, 4),
			GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_ALLOCATED_NS_LIST, 0),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(identify(&h, 0x55, 0), GEN(NVME_SC_INVALID_FIELD));
	ut_host_fini(&h);
}

static uint16_t
setf(struct ut_host *h, uint32_t fid, uint32_t cdw11, uint32_t *cdw0)
{
	return run(h, acmd(NVME_OPC_SET_FEATURES, 0, fid, cdw11), cdw0);
}

static uint16_t
getf(struct ut_host *h, uint32_t fid, uint32_t sel, uint32_t cdw11, uint32_t *cdw0)
{
	return run(h, acmd(NVME_OPC_GET_FEATURES, 0, fid | (sel << 8), cdw11), cdw0);
}

static void
test_number_of_queues(void)
{
	struct ut_host h;
	uint32_t dw0 = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=8"), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, (7u << 16) | 7u);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_NUMBER_OF_QUEUES, 0xffff, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	/* ask for 3 SQs and 2 CQs (0's based) */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_NUMBER_OF_QUEUES, (1u << 16) | 2u, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, (1u << 16) | 2u);
	/* more than the controller has: capped */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_NUMBER_OF_QUEUES, (100u << 16) | 100u, NULL),
			GEN(NVME_SC_COMMAND_SEQUENCE_ERROR));
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, (1u << 16) | 2u);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_NUMBER_OF_QUEUES, NVME_FEAT_SEL_DEFAULT, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, (7u << 16) | 7u);
	/* queue 3 is beyond the 2 CQs granted */
	CU_ASSERT_EQUAL(ut_create_qpair(&h, 3, 8), CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(ut_create_qpair(&h, 2, 8), 0);
	ut_host_fini(&h);

	/* after a reset the feature can be set again, but not once I/O queues exist */
	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=8"), 0);
	CU_ASSERT_EQUAL(ut_create_qpair(&h, 1, 8), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_NUMBER_OF_QUEUES, 0, NULL),
			GEN(NVME_SC_COMMAND_SEQUENCE_ERROR));
	ut_host_fini(&h);
	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=300"), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_NUMBER_OF_QUEUES, (299u << 16) | 299u, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, (299u << 16) | 299u);
	ut_host_fini(&h);
}

static void
test_features(void)
{
	struct ut_host h;
	uint32_t dw0 = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	/* volatile write cache */
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, NULL), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, NVME_FEAT_SEL_DEFAULT, 0, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, 1);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, NVME_FEAT_SEL_SAVED, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 1);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, NVME_FEAT_SEL_SUPPORTED, 0, &dw0),
			0);
	CU_ASSERT_EQUAL(dw0, 1u << 2); /* changeable, not saveable */
	/* arbitration */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ARBITRATION, 0x00030207, NULL), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_ARBITRATION, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0x00030207u);
	CU_ASSERT_EQUAL(h.c->burst, UINT32_MAX);
	/* temperature threshold */
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0 & 0xffff, EMU_WCTEMP);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 0, 1u << 20, &dw0), 0);
	CU_ASSERT_EQUAL(dw0 & 0xffff, 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, (1u << 16) | 300, NULL),
			GEN(NVME_SC_INVALID_FIELD)); /* sensor 1 does not exist */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, (2u << 20) | 300, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	/* power management: only state 0 */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_POWER_MANAGEMENT, 0, NULL), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_POWER_MANAGEMENT, 1, NULL), GEN(NVME_SC_INVALID_FIELD));
	/* interrupt coalescing, vector config, atomicity, error recovery, AEC are stored */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_INTERRUPT_COALESCING, 0x0408, NULL), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_INTERRUPT_COALESCING, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0x0408);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION, 0x10001, NULL), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION, 0, 1, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0x10001);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_WRITE_ATOMICITY, 1, NULL), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ERROR_RECOVERY, 100, NULL), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ERROR_RECOVERY, 1u << 16, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, 0x1ff, NULL), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, 0, 0, &dw0), 0);
	CU_ASSERT_EQUAL(dw0, 0x1ff);
	/* unknown FIDs, SEL 4, save */
	CU_ASSERT_EQUAL(getf(&h, 0x7f, 0, 0, NULL), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(setf(&h, 0x7f, 0, NULL), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_KEEP_ALIVE_TIMER, 0, NULL), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_ARBITRATION, 4, 0, NULL), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ARBITRATION | (1u << 31), 0, NULL),
			CS(NVME_SC_FEATURE_ID_NOT_SAVEABLE));
	ut_host_fini(&h);

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "vwc=0"), 0);
	CU_ASSERT_EQUAL(getf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 0, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_VOLATILE_WRITE_CACHE, 1, NULL),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_CTRLR, 0), 0);
	CU_ASSERT_EQUAL(((struct nvme_ctrlr_data *)g_page)->vwc, 0);
	ut_host_fini(&h);
}

static uint16_t
create_q(struct ut_host *h, uint8_t opc, uint32_t qid, uint32_t qs0, uint32_t cdw11, uint64_t base)
{
	struct nvme_cmd cmd = acmd(opc, 0, (qs0 << 16) | qid, cdw11);

	cmd.dptr.prp.prp1 = base;
	return run(h, cmd, NULL);
}

static void
test_create_delete_validation(void)
{
	struct ut_host h;
	uint64_t big_iova;
	void *big = nvp_env_dma_zmalloc(65536, 4096, &big_iova);
	void *heap = aligned_alloc(4096, 4096);
	const uint32_t pc = NVME_CREATE_IO_CQ_PC;
	const uint8_t CQ = NVME_OPC_CREATE_IO_CQ, SQ = NVME_OPC_CREATE_IO_SQ;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=4 mqes=1023"), 0);
	CU_ASSERT_EQUAL(create_q(&h, CQ, 0, 7, pc, big_iova), CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 5, 7, pc, big_iova), CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 0, pc, big_iova), CS(NVME_SC_INVALID_QUEUE_SIZE));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 1024, pc, big_iova), CS(NVME_SC_INVALID_QUEUE_SIZE));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 7, 0, big_iova), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 7, pc, big_iova + 16), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 7, pc, 0), GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 7, pc, (uintptr_t)heap),
			GEN(NVME_SC_DATA_TRANSFER_ERROR));
	/* 512 entries of 16 bytes do not fit in the last page of the buffer */
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 511, pc, big_iova + 61440),
			GEN(NVME_SC_DATA_TRANSFER_ERROR));
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.dma_rejects, 2);
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 255, pc, big_iova), 0);
	CU_ASSERT_EQUAL(create_q(&h, CQ, 1, 7, pc, big_iova), CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	/* SQs */
	CU_ASSERT_EQUAL(create_q(&h, SQ, 1, 7, pc, big_iova + 8192),
			CS(NVME_SC_COMPLETION_QUEUE_INVALID));
	CU_ASSERT_EQUAL(create_q(&h, SQ, 1, 7, pc | (2u << 16), big_iova + 8192),
			CS(NVME_SC_COMPLETION_QUEUE_INVALID));
	CU_ASSERT_EQUAL(create_q(&h, SQ, 0, 7, pc | (1u << 16), big_iova + 8192),
			CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(create_q(&h, SQ, 1, 7, 1u << 16, big_iova + 8192),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(create_q(&h, SQ, 1, 7, pc | (1u << 16), big_iova + 8192), 0);
	CU_ASSERT_EQUAL(create_q(&h, SQ, 2, 7, pc | (1u << 16), big_iova + 16384), 0);
	CU_ASSERT_EQUAL(h.c->cqs[1].nsq, 2);
	/* deletes */
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_SQ, 0, 0, 0), NULL),
			CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_CQ, 0, 0, 0), NULL),
			CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_CQ, 0, 1, 0), NULL),
			CS(NVME_SC_INVALID_QUEUE_DELETION));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_SQ, 0, 1, 0), NULL), 0);
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_SQ, 0, 2, 0), NULL), 0);
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_CQ, 0, 1, 0), NULL), 0);
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_CQ, 0, 1, 0), NULL),
			CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_DELETE_IO_CQ, 0, 0xffff, 0), NULL),
			CS(NVME_SC_INVALID_QUEUE_IDENTIFIER));
	ut_host_fini(&h);
	free(heap);
	nvp_env_dma_free(big);
}

/* Abort completions held behind a full admin CQ count as outstanding: the 5th fails. */
static void
test_abort_limit(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint16_t n = 0, limit = 0;

	memset(&h, 0, sizeof(h));
	h.c = ut_ctrlr_new("");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h.c);
	CU_ASSERT_EQUAL_FATAL(ut_host_enable(&h, 8), 0);
	h.hold_cq_db = true;
	for (uint32_t i = 0; i < 7; i++) {
		cmd = acmd(NVME_OPC_GET_FEATURES, 0, NVME_FEAT_ARBITRATION, 0);
		ut_submit(&h, 0, &cmd, false);
	}
	ut_poll(h.c, 5);
	for (uint32_t i = 0; i < 5; i++) {
		cmd = acmd(NVME_OPC_ABORT, 0, NVME_ABORT_CDW10(1, 77), 0);
		ut_submit(&h, 0, &cmd, false);
		ut_poll(h.c, 2);
	}
	CU_ASSERT_EQUAL(h.c->aborts_outstanding, 4);
	while (ut_reap(&h, 0, &cpl)) {
		n++;
	}
	CU_ASSERT_EQUAL(n, 7);
	ut_cq_ring(&h, 0);
	ut_poll(h.c, 5);
	n = 0;
	while (ut_reap(&h, 0, &cpl)) {
		n++;
		limit += ut_st(&cpl) == CS(NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED);
	}
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_EQUAL(limit, 1);
	CU_ASSERT_EQUAL(h.c->aborts_outstanding, 0);
	ut_host_fini(&h);
}

static void
test_aer_limit_and_reset(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	for (uint32_t i = 0; i < 4; i++) {
		cmd = acmd(NVME_OPC_ASYNC_EVENT_REQUEST, 0, 0, 0);
		ut_submit(&h, 0, &cmd, false);
	}
	ut_poll(h.c, 5);
	CU_ASSERT_FALSE(ut_reap(&h, 0, &cpl));
	CU_ASSERT_EQUAL(h.c->naer, 4);
	cmd = acmd(NVME_OPC_ASYNC_EVENT_REQUEST, 0, 0, 0);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, &cpl),
			CS(NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED));
	/* a reset drops outstanding AERs without completing them */
	nvp_mmio_write4(&h.c->regs->cc.raw, 0);
	CU_ASSERT(ut_wait_rdy(h.c, 0, 100));
	CU_ASSERT_EQUAL(h.c->naer, 0);
	ut_q_free(&h.q[0]);
	CU_ASSERT_EQUAL_FATAL(ut_host_enable(&h, 16), 0);
	for (uint32_t i = 0; i < 4; i++) {
		cmd = acmd(NVME_OPC_ASYNC_EVENT_REQUEST, 0, 0, 0);
		ut_submit(&h, 0, &cmd, false);
	}
	ut_poll(h.c, 5);
	CU_ASSERT_FALSE(ut_reap(&h, 0, &cpl));
	CU_ASSERT_EQUAL(h.c->naer, 4);
	ut_host_fini(&h);
}

static uint16_t
format(struct ut_host *h, uint32_t nsid, uint32_t cdw10)
{
	return run(h, acmd(NVME_OPC_FORMAT_NVM, nsid, cdw10, 0), NULL);
}

static void
test_format(void)
{
	struct ut_host h;
	struct nvme_ns_data *nd = g_page;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *buf = nvp_env_dma_zmalloc(4096, 4096, NULL);
	uint64_t iova = nvp_env_vtophys(buf, NULL);

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "nn=2 size=1M"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	memset(buf, 0xab, 4096);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, 8, iova, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_EQUAL(format(&h, 1, 1u | (1u << 9)), 0); /* LBAF 1, SES 1 */
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 1), 0);
	CU_ASSERT_EQUAL(nd->flbas & 0xfu, 1);
	CU_ASSERT_EQUAL(nd->nsze, (1u << 20) / 4096);
	CU_ASSERT_EQUAL(identify(&h, NVME_IDENTIFY_NS, 2), 0);
	CU_ASSERT_EQUAL(nd->flbas & 0xfu, 0);
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 0, 1, iova, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT(buf[0] == 0 && buf[4095] == 0);
	/* 4 KiB blocks now: LBA 256 is past the end */
	ut_rw_cmd(&cmd, NVME_OPC_READ, 1, 256, 1, iova, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), GEN(NVME_SC_LBA_OUT_OF_RANGE));
	CU_ASSERT_EQUAL(format(&h, 1, 2), CS(NVME_SC_INVALID_FORMAT));
	CU_ASSERT_EQUAL(format(&h, 1, 1u << 5), CS(NVME_SC_INVALID_FORMAT)); /* PI */
	CU_ASSERT_EQUAL(format(&h, 1, 1u << 4), CS(NVME_SC_INVALID_FORMAT)); /* MSET */
	CU_ASSERT_EQUAL(format(&h, 1, 2u << 9), GEN(NVME_SC_INVALID_FIELD)); /* crypto erase */
	CU_ASSERT_EQUAL(format(&h, 0, 0), GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(format(&h, 3, 0), GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT));
	CU_ASSERT_EQUAL(format(&h, 0xffffffff, 1), 0);
	CU_ASSERT_EQUAL(h.c->ns[0].lba_shift, 12);
	CU_ASSERT_EQUAL(h.c->ns[1].lba_shift, 12);
	CU_ASSERT_EQUAL(format(&h, 2, 0), 0);
	CU_ASSERT_EQUAL(h.c->ns[1].nsze, (1u << 20) / 512);
	ut_host_fini(&h);
	nvp_env_dma_free(buf);
}

static void
test_bad_admin_commands(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL(run(&h, acmd(0x7f, 0, 0, 0), NULL), GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_NS_MANAGEMENT, 0, 0, 0), NULL),
			GEN(NVME_SC_INVALID_OPCODE));
	CU_ASSERT_EQUAL(run(&h, acmd(NVME_OPC_KEEP_ALIVE, 0, 0, 0), NULL),
			GEN(NVME_SC_INVALID_OPCODE));
	cmd = acmd(NVME_OPC_IDENTIFY, 0, 1, 0);
	cmd.psdt = NVME_PSDT_SGL_MPTR_CONTIG;
	CU_ASSERT_EQUAL(run(&h, cmd, NULL), GEN(NVME_SC_INVALID_FIELD));
	cmd = acmd(NVME_OPC_IDENTIFY, 0, 1, 0);
	cmd.fuse = 1;
	CU_ASSERT_EQUAL(run(&h, cmd, NULL), GEN(NVME_SC_INVALID_FIELD));
	/* identify into memory that is not DMA memory */
	cmd = acmd(NVME_OPC_IDENTIFY, 0, 1, 0);
	cmd.dptr.prp.prp1 = 0x1000;
	CU_ASSERT_EQUAL(run(&h, cmd, NULL), GEN(NVME_SC_DATA_TRANSFER_ERROR));
	ut_host_fini(&h);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_identify_ctrlr),
		UT_TEST(test_dbbuf_config),
		UT_TEST(test_identify_ns),
		UT_TEST(test_identify_lists),
		UT_TEST(test_number_of_queues),
		UT_TEST(test_features),
		UT_TEST(test_create_delete_validation),
		UT_TEST(test_abort_limit),
		UT_TEST(test_aer_limit_and_reset),
		UT_TEST(test_format),
		UT_TEST(test_bad_admin_commands),
	};

	ut_env_init();
	g_page = nvp_env_dma_zmalloc(4096, 4096, &g_page_iova);
	return ut_run("emu_admin", tests, NVP_COUNTOF(tests));
}
