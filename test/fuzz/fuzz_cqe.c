/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the completion path: an I/O qpair of the PCIe transport over RAM (its rings in
 * DMA memory, BAR0 a plain buffer, the admin side stubbed), driven by the input as a
 * script of device and host actions: submit, post arbitrary 16-byte CQEs anywhere in the
 * CQ, post plausible ones (outstanding or stale CIDs, duplicates, the right or wrong
 * phase, garbage SQ head), poll, let time pass (timeouts, Abort, quarantine, reclaim),
 * finish pending Aborts, reset. The driver must complete every request exactly once,
 * never crash, and never touch memory outside its rings and trackers (ASan).
 */
#include "nvp_config.h"

#define NVME_UT_TICKS fz_ticks
#include "nvme/nvme_qpair.c"
#include "nvme/nvme_qpair_recovery.c"
#include "nvme/nvme_pcie_ctrlr.c"
#include "nvme/nvme_pcie.c"
#include "nvme/nvme_pcie_probe.c"

#include "fuzz.h"

#define FZ_ENTRIES 8
#define FZ_MAX_REQS 512

static uint64_t g_now;

static uint64_t
fz_ticks(void)
{
	return g_now;
}

/* ---- the admin side, stubbed ---- */

static struct {
	nvp_nvme_cmd_cb cb;
	void *cb_arg;
	int rc;
} g_abort;

/* An Abort the recovery code sent: one at a time. */
static int
fz_abort(nvp_nvme_cmd_cb cb, void *cb_arg)
{
	if (g_abort.rc != 0 || g_abort.cb != NULL) {
		return g_abort.rc != 0 ? g_abort.rc : -EBUSY;
	}
	g_abort.cb = cb;
	g_abort.cb_arg = cb_arg;
	return 0;
}

int32_t
nvme_ctrlr_process_admin_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 0;
}

static bool g_ctrlr_dead; /* the next health check finds CSTS.CFS */

void
nvme_ctrlr_removed(struct nvp_nvme_ctrlr *ctrlr)
{
	atomic_store(&ctrlr->removed, true);
	atomic_store(&ctrlr->is_failed, true);
}

/* Reconnect is off in these tests: a lost connection fails the controller, as before. */
void
nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	(void)why;
	atomic_store(&ctrlr->is_failed, true);
}

/* Never reconnecting here: nothing to step. */
void
nvme_ctrlr_reconnect_poll_io(struct nvp_nvme_ctrlr *ctrlr, uint64_t now)
{
	(void)ctrlr;
	(void)now;
}

/* \return true if the controller failed (it is then marked failed). */
bool
nvme_ctrlr_check_health(struct nvp_nvme_ctrlr *ctrlr, const char *context)
{
	(void)context;
	if (g_ctrlr_dead) {
		atomic_store(&ctrlr->is_failed, true);
	}
	return g_ctrlr_dead;
}

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return true;
}

static int g_connect_rc;

int
nvme_ctrlr_cmd_create_io_cq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, int32_t iv,
			    uint32_t entries, uint64_t iova)
{
	(void)ctrlr;
	(void)qid;
	(void)iv;
	(void)entries;
	(void)iova;
	return 0;
}

int
nvme_ctrlr_cmd_doorbell_buffer_config(struct nvp_nvme_ctrlr *ctrlr, uint64_t db_iova,
				      uint64_t ei_iova)
{
	(void)ctrlr;
	(void)db_iova;
	(void)ei_iova;
	return -ENOTSUP; /* the fuzzed controller offers no shadow doorbells */
}

int
nvme_ctrlr_cmd_create_io_sq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, uint32_t entries,
			    uint64_t iova, uint8_t qprio)
{
	(void)ctrlr;
	(void)qid;
	(void)entries;
	(void)iova;
	(void)qprio;
	return g_connect_rc;
}

void
nvme_ctrlr_cmd_build_create_io_cq(struct nvme_cmd *cmd, uint16_t qid, int32_t iv, uint32_t entries,
				  uint64_t iova)
{
	(void)iv;
	(void)entries;
	(void)iova;
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_CQ;
	cmd->cdw10 = qid;
}

void
nvme_ctrlr_cmd_build_create_io_sq(struct nvme_cmd *cmd, uint16_t qid, uint32_t entries,
				  uint64_t iova, uint8_t qprio)
{
	(void)entries;
	(void)iova;
	(void)qprio;
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_SQ;
	cmd->cdw10 = qid;
}

/* Queue steps of the non-blocking re-creation complete at once; Create I/O SQ with the
 * status g_connect_rc asks for. */
int
nvme_ctrlr_submit_admin(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	struct nvme_cpl cpl;

	(void)ctrlr;
	(void)buf;
	(void)len;
	memset(&cpl, 0, sizeof(cpl));
	if (cmd->opc == NVME_OPC_CREATE_IO_SQ && g_connect_rc != 0) {
		cpl.status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
	}
	cb(cb_arg, &cpl);
	return 0;
}

static int
fz_admin_submit(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, nvp_nvme_cmd_cb cb,
		void *cb_arg)
{
	if (cmd->opc == NVME_OPC_ABORT) {
		return fz_abort(cb, cb_arg);
	}
	return nvme_ctrlr_submit_admin(ctrlr, cmd, NULL, 0, cb, cb_arg);
}

/* The controller's side as the recovery code sees it. */
static const struct nvme_ctrlr_recovery_ops g_fz_recovery = {
	.admin_trylock = nvme_ctrlr_trylock,
	.admin_lock = nvme_ctrlr_lock,
	.admin_unlock = nvme_ctrlr_unlock,
	.admin_submit = fz_admin_submit,
	.admin_poll = nvme_ctrlr_process_admin_trylock,
	.check_health = nvme_ctrlr_check_health,
	.removed = nvme_ctrlr_removed,
};

int
nvme_ctrlr_cmd_delete_io_queue(struct nvp_nvme_ctrlr *ctrlr, uint8_t opc, uint16_t qid)
{
	(void)ctrlr;
	(void)opc;
	(void)qid;
	return 0;
}

int
nvme_ctrlr_set_cap_vs(struct nvp_nvme_ctrlr *ctrlr, union nvme_cap_register cap,
		      union nvme_vs_register vs)
{
	ctrlr->cap = cap;
	ctrlr->vs = vs;
	return 0;
}

/* The fixture builds its controller by hand: these are never called. */
int
nvme_ctrlr_construct(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts,
		     const struct nvme_transport_ops *transport)
{
	(void)ctrlr;
	(void)trid;
	(void)opts;
	(void)transport;
	return -ENOSYS;
}

void
nvme_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

int
nvme_transport_register(const struct nvme_transport_ops *ops)
{
	(void)ops;
	return 0;
}

/* Payloads here have no data: PRPs are another harness's business. */
int
nvme_pcie_prp_build(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr,
		    struct nvme_request *req)
{
	(void)pq;
	(void)ptr;
	(void)req;
	return 0;
}

int
nvme_pcie_prp_check(struct nvme_pcie_qpair *pq, const struct nvme_request *req)
{
	(void)pq;
	(void)req;
	return 0;
}

uint32_t
nvme_pcie_prp_extra_pages(uint32_t page_size, uint32_t payload_size)
{
	(void)page_size;
	(void)payload_size;
	return 0;
}

int
nvme_pcie_prp_reserve(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr, uint32_t n)
{
	(void)pq;
	(void)ptr;
	(void)n;
	return 0;
}

void
nvme_pcie_prp_release(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr)
{
	(void)pq;
	(void)ptr;
}

/* ---- the fixture ---- */

static struct nvme_pcie_ctrlr *g_pctrlr;
static uint8_t g_completions[FZ_MAX_REQS]; /* callbacks seen, per submitted request */
static uint32_t g_submitted;

static void
fz_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	uintptr_t i = (uintptr_t)cb_arg;

	(void)cpl;
	FZ_CHECK(i < g_submitted, "completion of request %zu never submitted", (size_t)i);
	FZ_CHECK(g_completions[i] == 0, "request %zu completed twice", (size_t)i);
	g_completions[i]++;
}

static void
fz_setup(void)
{
	static int done;

	if (done) {
		return;
	}
	done = 1;
	FZ_CHECK(fz_env_init() == 0, "env init failed");
	g_pctrlr = calloc(1, sizeof(*g_pctrlr));
	FZ_CHECK(g_pctrlr != NULL, "out of memory");
	g_pctrlr->bar_size = 0x2000;
	g_pctrlr->bar = calloc(1, g_pctrlr->bar_size);
	FZ_CHECK(g_pctrlr->bar != NULL, "out of memory");
	g_pctrlr->doorbell_stride = 4;
	g_pctrlr->ctrlr.transport = &g_nvme_pcie_transport;
	g_pctrlr->ctrlr.recovery = &g_fz_recovery;
	g_pctrlr->ctrlr.page_size = 4096;
	g_pctrlr->ctrlr.ticks_hz = 1000;
	g_pctrlr->ctrlr.max_xfer_size = 128 * 1024;
	/* The admin queue: reclaiming quarantined CIDs neuters its pending Aborts. */
	g_pctrlr->ctrlr.opts.admin_queue_size = FZ_ENTRIES;
	FZ_CHECK(pcie_qpair_create(&g_pctrlr->ctrlr, 0, NULL, &g_pctrlr->ctrlr.adminq) == 0,
		 "admin qpair create failed");
}

static struct nvp_nvme_qpair *
fz_qpair(void)
{
	struct nvp_nvme_io_qpair_opts opts;
	struct nvp_nvme_qpair *q = NULL;

	memset(&opts, 0, sizeof(opts));
	opts.io_queue_size = FZ_ENTRIES;
	opts.io_queue_requests = 2 * FZ_ENTRIES;
	FZ_CHECK(pcie_qpair_create(&g_pctrlr->ctrlr, 1, &opts, &q) == 0, "qpair create failed");
	q->timeout_ticks = 100;
	return q;
}

static void
fz_submit(struct nvp_nvme_qpair *q, uint8_t opc)
{
	struct nvme_request *req;

	if (g_submitted == FZ_MAX_REQS) {
		return;
	}
	req = nvme_qpair_alloc_request(q);
	if (req == NULL) {
		return;
	}
	nvme_request_init(req, fz_cb, (void *)(uintptr_t)g_submitted);
	req->cmd.opc = opc;
	g_completions[g_submitted] = 0;
	if (nvme_qpair_submit_request(q, req) == 0) {
		g_submitted++;
	}
}

/* A CQE the device might post: @cid, status and SQ head from the input, phase chosen. */
static void
fz_post(struct nvme_pcie_qpair *pq, const uint8_t *b, bool right_phase)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = (uint16_t)(b[0] % (pq->qpair.num_trackers + 2));
	cpl.sqid = b[1] & 1 ? pq->qpair.id : b[1];
	cpl.sqhd = b[2];
	cpl.status.sc = b[3] & 0x80 ? b[3] : 0;
	cpl.status.sct = b[3] & 0x80 ? b[3] & 7 : 0;
	cpl.status.dnr = b[3] & 1;
	cpl.status.p = right_phase ? pq->phase : !pq->phase;
	memcpy((void *)&pq->cq[pq->cq_head], &cpl, sizeof(cpl));
}

/* One action of the script; \return bytes consumed (0: input exhausted). */
static size_t
fz_step(struct nvp_nvme_qpair *q, const uint8_t *p, size_t n)
{
	struct nvme_pcie_qpair *pq = to_pcie_qpair(q);
	struct nvme_cpl cpl;

	if (n < 6) {
		return 0;
	}
	switch (p[0] % 9) {
	case 0:
		fz_submit(q, p[1]);
		break;
	case 1: /* any 16 bytes anywhere in the CQ (needs 18 bytes) */
		if (n < 18) {
			return 0;
		}
		memcpy((void *)&pq->cq[p[1] % q->num_entries], p + 2, 16);
		return 18;
	case 2:
	case 3:
		fz_post(pq, p + 1, p[0] % 9 == 2 || (p[5] & 1));
		break;
	case 4:
		(void)nvp_nvme_qpair_process_completions(q, p[1] % 4);
		break;
	case 5:
		g_now += p[1];
		break;
	case 6: /* the Abort sent for a timed-out command completes */
		if (g_abort.cb != NULL) {
			nvp_nvme_cmd_cb cb = g_abort.cb;

			memset(&cpl, 0, sizeof(cpl));
			cpl.cdw0 = p[1] & 1;
			cpl.status.sc = p[2] & 1 ? p[2] : 0;
			g_abort.cb = NULL;
			cb(g_abort.cb_arg, &cpl);
		}
		g_abort.rc = p[3] & 1 ? -EBUSY : 0;
		break;
	case 7: /* a controller reset: the owner takes back what was lost at its next poll */
		atomic_fetch_add(&q->ctrlr->reset_gen, 1);
		break;
	default: /* re-creating the queues (reclaim of quarantined CIDs) fails or not; the
		  * controller is found dead at the next health check or not */
		g_connect_rc = p[1] == 0xff ? -EIO : 0;
		g_ctrlr_dead = p[2] == 0xff;
		break;
	}
	return 6;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvp_nvme_qpair *q;
	size_t off = 0, used;
	uint32_t i;

	fz_setup();
	g_now = 0;
	g_submitted = 0;
	memset(&g_abort, 0, sizeof(g_abort));
	g_connect_rc = 0;
	g_ctrlr_dead = false;
	atomic_store(&g_pctrlr->ctrlr.is_failed, false);
	q = fz_qpair();
	while ((used = fz_step(q, data + off, size - off)) != 0) {
		off += used;
	}
	/* Teardown: whatever the device never finished is completed by the host, once. */
	if (g_abort.cb != NULL) {
		memset(&g_abort, 0, sizeof(g_abort));
	}
	nvme_qpair_abort_all(q, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, true);
	for (i = 0; i < g_submitted; i++) {
		FZ_CHECK(g_completions[i] == 1, "request %u completed %u times", i,
			 g_completions[i]);
	}
	pcie_qpair_destroy(q);
	return 0;
}
