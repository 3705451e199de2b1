/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the lib/emu unit tests: the whole controller compiled in (every test
 * program #includes the emu sources so static functions are reachable), a CUnit runner,
 * and a minimal polled "host" that drives a controller through its register page and DMA
 * memory exactly as a driver would, calling the controller's poll function directly
 * instead of running its thread (deterministic, no timing).
 */
#ifndef EMU_UT_HELPERS_H
#define EMU_UT_HELPERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* the emu sources need it before any system header */
#endif

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.c"
#include "emu/emu_opts.c"
#include "emu/emu_regs.c"
#include "emu/emu_queue.c"
#include "emu/emu_admin.c"
#include "emu/emu_io.c"
#include "emu/emu_prp.c"
#include "emu/emu_backend.c"
#include "emu/emu_log.c"
#include "emu/emu_fw.c"
#include "emu/emu_dir.c"
#include "emu/emu_ftl.c"
#include "emu/emu_fdp.c"
#include "emu/emu_model.c"
#include "emu/emu_preset.c"
#include "emu/emu_irq.c"
#include "emu/emu_plm.c"

/* ---- runner ---- */

struct ut_test {
	const char *name;
	CU_TestFunc fn;
};

#define UT_TEST(fn)     \
	{               \
#fn, fn \
	}

static inline void
ut_env_init(void)
{
	struct nvp_env_opts o;

	if (nvp_env_is_initialized()) {
		return;
	}
	nvp_env_opts_init(&o, sizeof(o));
	o.name = "emu_ut";
	o.no_pci = true;
	o.no_huge = true;
	o.quiet = true;
	if (nvp_env_init(&o) != 0) {
		fprintf(stderr, "emu unit test: nvp_env_init failed\n");
		exit(1);
	}
}

static inline int
ut_run(const char *suite_name, const struct ut_test *tests, size_t count)
{
	unsigned int failures;
	CU_pSuite suite;

	ut_env_init();
	nvp_log_set_level(NVP_LOG_ERROR);
	if (getenv("NVP_LOG_LEVEL") != NULL) {
		nvp_log_set_level((enum nvp_log_level)nvp_log_level_parse(getenv("NVP_LOG_LEVEL")));
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite(suite_name, NULL, NULL);
	for (size_t i = 0; suite != NULL && i < count; i++) {
		CU_add_test(suite, tests[i].name, tests[i].fn);
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	nvp_env_fini();
	return failures == 0 ? 0 : 1;
}

/* ---- controllers without a thread ---- */

static inline struct emu_ctrlr *
ut_ctrlr_new(const char *optstr)
{
	static unsigned int n;
	struct nvp_emu_opts o;
	struct emu_ctrlr *c = NULL;
	char err[256];

	nvp_emu_opts_init(&o, sizeof(o));
	snprintf(o.name, sizeof(o.name), "ut%u", n++);
	if (nvp_emu_opts_parse(&o, optstr, err, sizeof(err)) != 0) {
		fprintf(stderr, "bad test options '%s': %s\n", optstr, err);
		return NULL;
	}
	if (emu_opts_validate(&o, err, sizeof(err)) != 0 || emu_ctrlr_alloc(&o, &c) != 0) {
		return NULL;
	}
	return c;
}

static inline void
ut_poll(struct emu_ctrlr *c, unsigned int n)
{
	while (n-- > 0) {
		emu_ctrlr_poll(c);
	}
}

static inline void
ut_bus_master(struct emu_ctrlr *c, bool on)
{
	uint16_t cmd = on ? (NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER) : 0;

	emu_pci_ops.cfg_write(&c->pci, &cmd, 2, NVP_PCI_CFG_COMMAND);
}

static inline uint32_t
ut_csts(struct emu_ctrlr *c)
{
	return nvp_mmio_read4(&c->regs->csts.raw);
}

/* Poll until CSTS.RDY == @rdy or CFS, at most @ms milliseconds. */
static inline bool
ut_wait_rdy(struct emu_ctrlr *c, uint32_t rdy, uint32_t ms)
{
	uint64_t end = nvp_env_get_ticks() + nvp_env_get_ticks_hz() / 1000 * ms;

	do {
		emu_ctrlr_poll(c);
		if ((ut_csts(c) & 1u) == rdy) {
			return true;
		}
	} while (nvp_env_get_ticks() < end);
	return false;
}

/* ---- the minimal host ---- */

#define UT_MAX_Q 8

struct ut_q {
	struct nvme_cmd *sq;
	struct nvme_cpl *cq;
	uint32_t size;
	uint32_t sq_tail;
	uint32_t cq_head;
	uint8_t phase;
};

struct ut_host {
	struct emu_ctrlr *c;
	struct ut_q q[UT_MAX_Q];
	uint16_t cid;
	bool hold_cq_db;           /* do not ring CQ head doorbells (CQ full tests) */
	bool threaded;             /* the controller thread runs: never call its poll function */
	struct nvme_cpl stash[32]; /* completions reaped while waiting for another CID */
	uint32_t nstash;
};

/* Let the controller make progress: poll it, or just wait when its thread runs. */
static inline void
ut_step(struct ut_host *h)
{
	if (h->threaded) {
		nvp_pause();
	} else {
		emu_ctrlr_poll(h->c);
	}
}

static inline volatile uint32_t *
ut_db(struct ut_host *h, uint16_t qid, int is_cq)
{
	return (volatile uint32_t *)((uint8_t *)h->c->regs +
				     nvme_doorbell_offset(qid, is_cq, h->c->opts.dstrd));
}

static inline int
ut_q_alloc(struct ut_q *q, uint32_t entries, uint64_t *sq_iova, uint64_t *cq_iova)
{
	q->sq = nvp_env_dma_zmalloc(entries * sizeof(struct nvme_cmd), 4096, sq_iova);
	q->cq = nvp_env_dma_zmalloc(entries * sizeof(struct nvme_cpl), 4096, cq_iova);
	q->size = entries;
	q->sq_tail = 0;
	q->cq_head = 0;
	q->phase = 1;
	return q->sq != NULL && q->cq != NULL ? 0 : -1;
}

static inline void
ut_q_free(struct ut_q *q)
{
	nvp_env_dma_free(q->sq);
	nvp_env_dma_free(q->cq);
	memset(q, 0, sizeof(*q));
}

/* Program the admin queue and enable; \return 0 once CSTS.RDY = 1. */
static inline int
ut_host_enable(struct ut_host *h, uint32_t aq_entries)
{
	union nvme_cc_register cc = { .raw = 0 };
	union nvme_aqa_register aqa = { .raw = 0 };
	uint64_t asq, acq;

	ut_bus_master(h->c, true);

	if (ut_q_alloc(&h->q[0], aq_entries, &asq, &acq) != 0) {
		return -1;
	}
	aqa.bits.asqs = aq_entries - 1;
	aqa.bits.acqs = aq_entries - 1;
	nvp_mmio_write4(&h->c->regs->aqa.raw, aqa.raw);
	nvp_mmio_write8(&h->c->regs->asq, asq);
	nvp_mmio_write8(&h->c->regs->acq, acq);
	cc.bits.en = 1;
	cc.bits.iosqes = 6;
	cc.bits.iocqes = 4;
	nvp_mmio_write4(&h->c->regs->cc.raw, cc.raw);
	if (h->threaded) {
		uint64_t end = nvp_env_get_ticks() + nvp_env_get_ticks_hz() / 2;

		while ((ut_csts(h->c) & 1u) == 0 && nvp_env_get_ticks() < end) {
			nvp_env_delay_us(10);
		}
		return (ut_csts(h->c) & 1u) ? 0 : -1;
	}
	return ut_wait_rdy(h->c, 1, 500) ? 0 : -1;
}

static inline int
ut_host_init(struct ut_host *h, const char *optstr)
{
	memset(h, 0, sizeof(*h));
	h->c = ut_ctrlr_new(optstr);
	if (h->c == NULL) {
		return -1;
	}
	return ut_host_enable(h, 32);
}

static inline void
ut_host_fini(struct ut_host *h)
{
	for (int i = 0; i < UT_MAX_Q; i++) {
		ut_q_free(&h->q[i]);
	}
	emu_ctrlr_free(h->c);
	h->c = NULL;
}

/* Copy @cmd into SQ @qid (a fresh CID unless @keep_cid) and ring the doorbell. */
static inline uint16_t
ut_submit(struct ut_host *h, uint16_t qid, struct nvme_cmd *cmd, bool keep_cid)
{
	struct ut_q *q = &h->q[qid];

	if (!keep_cid) {
		cmd->cid = ++h->cid;
	}
	q->sq[q->sq_tail] = *cmd;
	q->sq_tail = (q->sq_tail + 1) % q->size;
	nvp_wmb();
	nvp_mmio_write4(ut_db(h, qid, 0), q->sq_tail);
	return cmd->cid;
}

static inline void
ut_cq_ring(struct ut_host *h, uint16_t qid)
{
	nvp_mmio_write4(ut_db(h, qid, 1), h->q[qid].cq_head);
}

/* Take one completion from CQ @qid if there is one (stashed ones first). */
static inline bool
ut_reap(struct ut_host *h, uint16_t qid, struct nvme_cpl *cpl)
{
	struct ut_q *q = &h->q[qid];
	struct nvme_cpl *e = &q->cq[q->cq_head];

	for (uint32_t i = 0; i < h->nstash; i++) {
		if (h->stash[i].sqid == qid) {
			*cpl = h->stash[i];
			memmove(&h->stash[i], &h->stash[i + 1],
				(h->nstash - i - 1) * sizeof(h->stash[0]));
			h->nstash--;
			return true;
		}
	}

	if ((__atomic_load_n(&e->status_raw, __ATOMIC_ACQUIRE) & 1u) != q->phase) {
		return false;
	}
	*cpl = *e;
	if (++q->cq_head == q->size) {
		q->cq_head = 0;
		q->phase ^= 1;
	}
	if (!h->hold_cq_db) {
		ut_cq_ring(h, qid);
	}
	return true;
}

/* Poll the controller until CQ @qid has a completion (at most ~2 s). */
static inline int
ut_wait(struct ut_host *h, uint16_t qid, struct nvme_cpl *cpl)
{
	memset(cpl, 0, sizeof(*cpl));
	uint64_t end = nvp_env_get_ticks() + 2 * nvp_env_get_ticks_hz();

	do {
		if (ut_reap(h, qid, cpl)) {
			return 0;
		}
		ut_step(h);
	} while (nvp_env_get_ticks() < end);
	return -1;
}

/* Submit and wait for this command's completion; others seen meanwhile are stashed. */
static inline int
ut_cmd(struct ut_host *h, uint16_t qid, struct nvme_cmd *cmd, struct nvme_cpl *cpl)
{
	struct ut_q *q = &h->q[qid];
	uint16_t cid = ut_submit(h, qid, cmd, false);
	uint64_t end = nvp_env_get_ticks() + 2 * nvp_env_get_ticks_hz();

	memset(cpl, 0, sizeof(*cpl));
	do {
		struct nvme_cpl *e = &q->cq[q->cq_head];

		if ((__atomic_load_n(&e->status_raw, __ATOMIC_ACQUIRE) & 1u) != q->phase) {
			ut_step(h);
			continue;
		}
		*cpl = *e;
		if (++q->cq_head == q->size) {
			q->cq_head = 0;
			q->phase ^= 1;
		}
		if (!h->hold_cq_db) {
			ut_cq_ring(h, qid);
		}
		if (cpl->cid == cid) {
			return 0;
		}
		if (h->nstash < NVP_COUNTOF(h->stash)) {
			h->stash[h->nstash++] = *cpl;
		}
	} while (nvp_env_get_ticks() < end);
	return -1;
}

/* Status as sct << 8 | sc, the encoding of fault_arg. */
static inline uint16_t
ut_st(const struct nvme_cpl *cpl)
{
	return (uint16_t)((cpl->status.sct << 8) | cpl->status.sc);
}

#define UT_SC(sct, sc) ((uint16_t)(((sct) << 8) | (sc)))

static inline uint16_t
ut_admin_st(struct ut_host *h, struct nvme_cmd *cmd, struct nvme_cpl *cpl)
{
	struct nvme_cpl tmp = { 0 };

	if (cpl == NULL) {
		cpl = &tmp;
	}
	if (ut_cmd(h, 0, cmd, cpl) != 0) {
		return 0xffff;
	}
	return ut_st(cpl);
}

/* Create I/O CQ @qid and SQ @qid of @entries each. \return 0 or the failing status. */
static inline int
ut_create_qpair(struct ut_host *h, uint16_t qid, uint32_t entries)
{
	struct nvme_cmd cmd;
	uint64_t sq_iova, cq_iova;
	uint16_t st;

	if (ut_q_alloc(&h->q[qid], entries, &sq_iova, &cq_iova) != 0) {
		return -1;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_CREATE_IO_CQ;
	cmd.dptr.prp.prp1 = cq_iova;
	cmd.cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd.cdw11 = NVME_CREATE_IO_CQ_PC;
	st = ut_admin_st(h, &cmd, NULL);
	if (st != 0) {
		return st;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_CREATE_IO_SQ;
	cmd.dptr.prp.prp1 = sq_iova;
	cmd.cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd.cdw11 = NVME_CREATE_IO_SQ_PC | ((uint32_t)qid << NVME_CREATE_IO_SQ_CQID_SHIFT);
	return ut_admin_st(h, &cmd, NULL);
}

static inline void
ut_rw_cmd(struct nvme_cmd *cmd, uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb,
	  uint64_t prp1, uint64_t prp2)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->nsid = nsid;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = nlb - 1;
	cmd->dptr.prp.prp1 = prp1;
	cmd->dptr.prp.prp2 = prp2;
}

/*
 * Build PRPs for a virtually contiguous DMA buffer (IOVA = VA in env_posix), with a PRP
 * list in @list (a DMA page) when needed; one list page only (up to 512 entries).
 */
static inline void
ut_prps(void *buf, uint64_t len, uint64_t *list, uint64_t *prp1, uint64_t *prp2)
{
	uint64_t iova = nvp_env_vtophys(buf, NULL);
	uint64_t first = 4096 - (iova & 4095);
	uint64_t next = iova + first;

	*prp1 = iova;
	*prp2 = 0;
	if (len <= first) {
		return;
	}
	if (len - first <= 4096) {
		*prp2 = next;
		return;
	}
	for (uint64_t i = 0; first + i * 4096 < len; i++) {
		list[i] = next + i * 4096;
	}
	*prp2 = nvp_env_vtophys(list, NULL);
}

#endif /* EMU_UT_HELPERS_H */
