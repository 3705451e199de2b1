/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the generic queue pair (nvme_qpair.c) over a fake transport in RAM and
 * a fake clock: submission, queue full -> queued -> submitted (in order, also at a
 * fixed depth over the SQ's against out-of-order completions), doorbell batching,
 * timeouts -> Abort -> completion exactly once, quarantined CIDs, a stuck CQ whose
 * queues are re-made, controller failure, reset, orphaned requests, the owner-thread
 * check.
 */
#include "nvp_config.h"
/* Exercise the debug-build owner check whatever the configuration. */
#undef NVP_CONFIG_DEBUG
#define NVP_CONFIG_DEBUG 1

/* The driver runs on this test's clock (see nvme_ticks()). */
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_qpair.c"
#include "nvme/nvme_qpair_recovery.c"
#include "nvme/nvme_cpl.h"

#include "ut_nvme.h"

#include "../ut_lat.h"

/* ---- fake clock ---- */

static uint64_t g_now;

static uint64_t
ut_ticks(void)
{
	return g_now;
}

/* ---- fake transport ---- */

#define FAKE_MAX 256

static struct {
	struct nvme_cmd sq[FAKE_MAX]; /* every command submitted, in order */
	uint32_t num_submitted;
	int submit_rc; /* returned by submit when not 0 */
	int check_rc;
	uint32_t doorbells;
	struct nvme_cpl cq[FAKE_MAX]; /* completions the "device" will post */
	uint32_t cq_head, cq_tail;
	uint32_t resets;
	uint32_t connects, disconnects;
	int connect_rc;
} g_fake;

static int
fake_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, struct nvme_request *req)
{
	(void)qpair;
	if (g_fake.submit_rc != 0) {
		return g_fake.submit_rc;
	}
	req->cmd.cid = tr->cid;
	g_fake.sq[g_fake.num_submitted++ % FAKE_MAX] = req->cmd;
	return 0;
}

static int
fake_check(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	(void)qpair;
	(void)req;
	return g_fake.check_rc;
}

static void
fake_ring(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_fake.doorbells++;
}

static int32_t
fake_process(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	int32_t n = 0;

	while (g_fake.cq_head != g_fake.cq_tail && (max == 0 || (uint32_t)n < max)) {
		struct nvme_cpl cpl = g_fake.cq[g_fake.cq_head++ % FAKE_MAX];

		n++;
		nvme_qpair_complete_cpl(qpair, &cpl);
	}
	return n;
}

static void
fake_release(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	(void)qpair;
	(void)tr;
}

/* The PCIe transport the generic code dispatches to directly: never used here (the
 * qpairs of this test have the fake transport). */
const struct nvme_transport_ops g_nvme_pcie_transport = { .name = "PCIe" };

int
nvme_pcie_qpair_build_list(struct nvme_pcie_qpair *pq, struct nvme_tracker *tr,
			   struct nvme_request *req)
{
	(void)pq;
	(void)tr;
	(void)req;
	CU_FAIL("PCIe transport called");
	return -ENOSYS;
}

int
nvme_pcie_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	(void)qpair;
	(void)req;
	CU_FAIL("PCIe transport called");
	return -ENOSYS;
}

void
nvme_pcie_qpair_idle_look(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	CU_FAIL("PCIe transport called");
}

static void
fake_reset(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_fake.resets++;
}

static int
fake_connect(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_fake.connects++;
	return g_fake.connect_rc;
}

static int
fake_disconnect(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_fake.disconnects++;
	return 0;
}

static bool g_release_wanted;
static uint32_t g_release_asked, g_removed;

static bool
fake_release_requested(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_release_asked++;
	return g_release_wanted;
}

static const struct nvme_transport_ops g_fake_ops = {
	.name = "fake",
	.ctrlr_release_requested = fake_release_requested,
	.qpair_submit = fake_submit,
	.qpair_check_request = fake_check,
	.qpair_ring_doorbell = fake_ring,
	.qpair_process_completions = fake_process,
	.qpair_release_tracker = fake_release,
	.qpair_reset = fake_reset,
	.qpair_connect = fake_connect,
	.qpair_disconnect = fake_disconnect,
};

/* The same transport with the non-blocking re-creation's commands. */
static int
fake_conn_cmd(struct nvp_nvme_qpair *qpair, bool create, uint32_t step, struct nvme_cmd *cmd)
{
	static const uint8_t opc[2][2] = {
		{ NVME_OPC_DELETE_IO_SQ, NVME_OPC_DELETE_IO_CQ },
		{ NVME_OPC_CREATE_IO_CQ, NVME_OPC_CREATE_IO_SQ },
	};

	if (step >= 2) {
		return -ENOENT;
	}
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc[create][step];
	cmd->cdw10 = qpair->id;
	return 0;
}

static const struct nvme_transport_ops g_fake_async_ops = {
	.name = "fake-async",
	.qpair_submit = fake_submit,
	.qpair_check_request = fake_check,
	.qpair_ring_doorbell = fake_ring,
	.qpair_process_completions = fake_process,
	.qpair_release_tracker = fake_release,
	.qpair_reset = fake_reset,
	.qpair_connect = fake_connect,
	.qpair_disconnect = fake_disconnect,
	.qpair_conn_cmd = fake_conn_cmd,
};

/* The same with the missed-completion check, whose answer the test sets. */
static bool g_cq_stalled;
static uint32_t g_cq_stall_checks;

static bool
fake_cq_stalled(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_cq_stall_checks++;
	return g_cq_stalled;
}

static const struct nvme_transport_ops g_fake_stall_ops = {
	.name = "fake-stall",
	.qpair_submit = fake_submit,
	.qpair_check_request = fake_check,
	.qpair_ring_doorbell = fake_ring,
	.qpair_process_completions = fake_process,
	.qpair_release_tracker = fake_release,
	.qpair_reset = fake_reset,
	.qpair_connect = fake_connect,
	.qpair_disconnect = fake_disconnect,
	.qpair_conn_cmd = fake_conn_cmd,
	.qpair_cq_stalled = fake_cq_stalled,
};

/* The device completes command @cid with @sct/@sc. */
static void
device_complete(uint16_t cid, uint8_t sct, uint8_t sc)
{
	struct nvme_cpl *cpl = &g_fake.cq[g_fake.cq_tail++ % FAKE_MAX];

	memset(cpl, 0, sizeof(*cpl));
	cpl->cid = cid;
	cpl->sqid = 1;
	cpl->status.sct = sct;
	cpl->status.sc = sc;
}

/* ---- stubs of the neighbours ---- */

static struct {
	uint32_t calls;
	uint16_t sqid, cid;
	nvp_nvme_cmd_cb cb;
	void *cb_arg;
	int rc;
} g_abort;
static uint32_t g_admin_polls;
static bool g_health_failed;
static uint32_t g_health_checks;

/* An Abort the recovery code sent: kept for the test to complete. */
static int
ut_abort(const struct nvme_cmd *cmd, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	if (g_abort.rc != 0) {
		return g_abort.rc;
	}
	g_abort.calls++;
	g_abort.sqid = (uint16_t)(cmd->cdw10 & 0xffffu);
	g_abort.cid = (uint16_t)(cmd->cdw10 >> 16);
	g_abort.cb = cb;
	g_abort.cb_arg = cb_arg;
	return 0;
}

int32_t
nvme_ctrlr_process_admin_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_admin_polls++;
	return 0;
}

static uint32_t g_locks;

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_locks++;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	CU_ASSERT(g_locks > 0);
	g_locks--;
}

static uint32_t g_trylock_busy; /* trylocks that fail before one succeeds */

bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	if (g_trylock_busy > 0) {
		g_trylock_busy--;
		return false;
	}
	g_locks++;
	return true;
}

/* Admin commands of the non-blocking queue re-creation: kept for the test to complete. */
static struct {
	uint32_t calls;
	struct nvme_cmd cmd[8];
	nvp_nvme_cmd_cb cb;
	void *cb_arg;
	int rc;
} g_admin_cmds;

int
nvme_ctrlr_submit_admin(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	(void)ctrlr;
	(void)buf;
	(void)len;
	CU_ASSERT(g_locks > 0);
	if (g_admin_cmds.rc != 0) {
		return g_admin_cmds.rc;
	}
	g_admin_cmds.cmd[g_admin_cmds.calls++ % 8] = *cmd;
	g_admin_cmds.cb = cb;
	g_admin_cmds.cb_arg = cb_arg;
	return 0;
}

/* Reconnect is off in these tests: a lost connection fails the controller, as before. */
void
nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	(void)why;
	atomic_store(&ctrlr->is_failed, true);
}

/* The reconnect step an I/O poll takes while the controller reconnects: counted. */
static uint32_t g_reconnect_steps;
static uint64_t g_reconnect_step_ticks;

void
nvme_ctrlr_reconnect_poll_io(struct nvp_nvme_ctrlr *ctrlr, uint64_t now)
{
	(void)ctrlr;
	g_reconnect_steps++;
	g_reconnect_step_ticks = now;
}

void
nvme_ctrlr_removed(struct nvp_nvme_ctrlr *ctrlr)
{
	g_removed++;
	atomic_store(&ctrlr->removed, true);
	atomic_store(&ctrlr->is_failed, true);
}

bool
nvme_ctrlr_check_health(struct nvp_nvme_ctrlr *ctrlr, const char *context)
{
	(void)context;
	g_health_checks++;
	if (g_health_failed) {
		atomic_store(&ctrlr->is_failed, true);
	}
	return g_health_failed;
}

static int
ut_admin_submit(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, nvp_nvme_cmd_cb cb,
		void *cb_arg)
{
	CU_ASSERT(g_locks > 0);
	if (cmd->opc == NVME_OPC_ABORT) {
		return ut_abort(cmd, cb, cb_arg);
	}
	return nvme_ctrlr_submit_admin(ctrlr, cmd, NULL, 0, cb, cb_arg);
}

/* The controller's side as the recovery code sees it. */
static const struct nvme_ctrlr_recovery_ops g_ut_recovery = {
	.admin_trylock = nvme_ctrlr_trylock,
	.admin_lock = nvme_ctrlr_lock,
	.admin_unlock = nvme_ctrlr_unlock,
	.admin_submit = ut_admin_submit,
	.admin_poll = nvme_ctrlr_process_admin_trylock,
	.check_health = nvme_ctrlr_check_health,
	.removed = nvme_ctrlr_removed,
};

/* ---- fixture ---- */

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvp_nvme_qpair g_qpair;
static struct nvp_nvme_qpair g_admin; /* stand-in admin queue (Aborts are neutered on it) */

/* Completion record per request: how often its callback ran and with what. */
struct ut_cpl {
	uint32_t calls;
	struct nvme_cpl cpl;
	uint32_t order; /* global completion sequence number */
};
static uint32_t g_seq;

static void
ut_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct ut_cpl *c = arg;

	c->calls++;
	c->cpl = *cpl;
	c->order = ++g_seq;
}

static struct {
	uint32_t calls;
	struct nvp_nvme_qpair *qpair;
	uint16_t cid;
} g_timeout;

static void
ut_timeout_cb(void *arg, struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair, uint16_t cid)
{
	(void)arg;
	(void)ctrlr;
	g_timeout.calls++;
	g_timeout.qpair = qpair;
	g_timeout.cid = cid;
}

static void
setup(uint32_t entries, uint32_t requests, uint64_t timeout_ticks)
{
	memset(&g_fake, 0, sizeof(g_fake));
	memset(&g_abort, 0, sizeof(g_abort));
	memset(&g_timeout, 0, sizeof(g_timeout));
	g_admin_polls = 0;
	memset(&g_admin_cmds, 0, sizeof(g_admin_cmds));
	g_trylock_busy = 0;
	g_reconnect_steps = 0;
	g_cq_stalled = false;
	g_cq_stall_checks = 0;
	g_health_failed = false;
	g_health_checks = 0;
	g_release_wanted = false;
	g_release_asked = g_removed = 0;
	g_now = 1000;
	g_seq = 0;
	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.transport = &g_fake_ops;
	g_ctrlr.recovery = &g_ut_recovery;
	g_ctrlr.ticks_hz = 1000000; /* 1 tick = 1 us */
	g_ctrlr.opts.admin_timeout_ms = 10;
	g_ctrlr.timeout_cb = ut_timeout_cb;
	memset(&g_admin, 0, sizeof(g_admin));
	CU_ASSERT_EQUAL_FATAL(nvme_qpair_init(&g_admin, &g_ctrlr, 0, 4, 8, false), 0);
	g_ctrlr.adminq = &g_admin;
	memset(&g_qpair, 0, sizeof(g_qpair));
	CU_ASSERT_EQUAL_FATAL(nvme_qpair_init(&g_qpair, &g_ctrlr, 1, entries, requests, false), 0);
	g_qpair.timeout_ticks = timeout_ticks;
	g_qpair.opts.timeout_us = timeout_ticks;
}

static void
teardown(void)
{
	nvme_qpair_fini(&g_qpair);
	nvme_qpair_fini(&g_admin);
}

/* Submit a read tagged @tag (in CDW10) completing into @c. */
static int
submit(struct ut_cpl *c, uint32_t tag)
{
	struct nvme_request *req = nvme_qpair_alloc_request(&g_qpair);

	if (req == NULL) {
		return -ENOMEM;
	}
	nvme_request_init(req, ut_cb, c);
	req->cmd.opc = NVME_OPC_READ;
	req->cmd.cdw10 = tag;
	return nvme_qpair_submit_request(&g_qpair, req);
}

static uint32_t
count_free_trackers(void)
{
	struct nvme_tracker *tr;
	uint32_t n = 0;

	SLIST_FOREACH (tr, &g_qpair.free_tr, free_link) {
		n++;
	}
	return n;
}

/* SQ slots not held by a tracker. */
static uint32_t
free_slots(void)
{
	return g_qpair.num_slots - g_qpair.slots_used;
}

static uint32_t
count_free_requests(void)
{
	struct nvme_request *req;
	uint32_t n = 0;

	SLIST_FOREACH (req, &g_qpair.free_req, free_link) {
		n++;
	}
	return n;
}

/* ---- tests ---- */

static void
test_init_sizes(void)
{
	struct nvp_nvme_qpair q;

	setup(4, 16, 0);
	/* A full SQ of 4 entries holds 3 commands; 3 more CIDs are spare for quarantine. */
	CU_ASSERT_EQUAL(g_qpair.num_slots, 3);
	CU_ASSERT_EQUAL(g_qpair.num_trackers, 6);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	CU_ASSERT_EQUAL(g_qpair.trackers[2].cid, 2);
	teardown();
	memset(&q, 0, sizeof(q));
	CU_ASSERT_EQUAL(nvme_qpair_init(&q, &g_ctrlr, 1, 1, 16, false), -EINVAL);
	nvme_qpair_fini(&q);
}

static void
test_submit_complete(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 0);
	CU_ASSERT_EQUAL(submit(&c, 7), 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 1);
	CU_ASSERT_EQUAL(g_fake.sq[0].cdw10, 7);
	CU_ASSERT_EQUAL(g_fake.doorbells, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(c.calls, 0);
	device_complete(g_fake.sq[0].cid, NVME_SCT_GENERIC, NVME_SC_SUCCESS);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 1);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	/* A completion for a CID nobody waits for is ignored, not a crash. */
	device_complete(1, NVME_SCT_GENERIC, NVME_SC_SUCCESS);
	device_complete(200, NVME_SCT_GENERIC, NVME_SC_SUCCESS);
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 2);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_TRUE(ut_log_has("not outstanding"));
	teardown();
}

static void
test_queue_full_queued_submitted(void)
{
	struct ut_cpl c[10];
	uint32_t i, db;

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	for (i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(submit(&c[i], i), 0); /* never -EBUSY */
	}
	/* Three slots: three in the SQ, seven waiting. */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 10);
	CU_ASSERT_EQUAL(free_slots(), 0);
	/* Two completions free two slots: the next two queued go out, one doorbell. */
	device_complete(g_fake.sq[0].cid, 0, 0);
	device_complete(g_fake.sq[1].cid, 0, 0);
	db = g_fake.doorbells;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 2);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 5);
	CU_ASSERT_EQUAL(g_fake.sq[3].cdw10, 3);
	CU_ASSERT_EQUAL(g_fake.sq[4].cdw10, 4);
	CU_ASSERT_EQUAL(g_fake.doorbells, db + 1);
	/* Two done, eight still accepted and not completed. */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 8);
	/* Drain everything, completing in submission order. */
	for (i = 2; i < 10; i++) {
		device_complete(g_fake.sq[i].cid, 0, 0);
		CU_ASSERT(nvp_nvme_qpair_process_completions(&g_qpair, 0) >= 1);
	}
	for (i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(g_fake.sq[i].cdw10, i); /* went out in order */
		CU_ASSERT_EQUAL(c[i].order, i + 1);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	teardown();
}

/*
 * An application at a fixed depth above the SQ's (12 requests on 7 slots) resubmitting
 * from its completion callbacks, on a device that completes out of order (a seeded
 * lognormal service time, 100 us median, 300 us p99): requests reach the SQ in the order
 * the submit calls accepted them. A resubmission from a callback finds the slot its
 * completion just freed, but requests wait on the queued list: it queues behind them.
 */
#define FIXED_QD 12
#define FIXED_TOTAL 3000

static uint32_t g_fixed_tag, g_fixed_done, g_fixed_last, g_fixed_reordered, g_fixed_behind;

static void
fixed_cb(void *arg, const struct nvme_cpl *cpl)
{
	uint32_t tag = (uint32_t)(uintptr_t)arg;
	struct nvme_request *req;

	CU_ASSERT_FALSE(nvme_cpl_is_error(cpl));
	g_fixed_done++;
	g_fixed_reordered += tag < g_fixed_last;
	g_fixed_last = tag;
	if (g_fixed_tag == FIXED_TOTAL) {
		return;
	}
	g_fixed_behind += !STAILQ_EMPTY(&g_qpair.queued);
	req = nvme_qpair_alloc_request(&g_qpair);
	if (req == NULL) {
		CU_FAIL("no request object");
		return;
	}
	nvme_request_init(req, fixed_cb, (void *)(uintptr_t)g_fixed_tag);
	req->cmd.opc = NVME_OPC_READ;
	req->cmd.cdw10 = g_fixed_tag++;
	CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
}

static void
test_queued_order_at_fixed_depth(void)
{
	static uint64_t due[FIXED_TOTAL];
	struct ut_lat rng;
	struct nvme_request *req;
	uint32_t seen = 0, sent = 0, i, next;
	uint64_t first;

	setup(8, 32, 0);
	ut_lat_seed(&rng, 1);
	g_fixed_tag = g_fixed_done = g_fixed_last = g_fixed_reordered = g_fixed_behind = 0;
	for (i = 0; i < FIXED_QD; i++) {
		req = nvme_qpair_alloc_request(&g_qpair);
		if (req == NULL) {
			CU_FAIL("no request object");
			break;
		}
		nvme_request_init(req, fixed_cb, (void *)(uintptr_t)g_fixed_tag);
		req->cmd.opc = NVME_OPC_READ;
		req->cmd.cdw10 = g_fixed_tag++;
		CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
	}
	while (g_fixed_done < FIXED_TOTAL && g_now < 1000000000) {
		/* what reached the SQ since the last look: in order, and when it is done */
		for (; seen < g_fake.num_submitted; seen++) {
			CU_ASSERT_EQUAL(g_fake.sq[seen % FAKE_MAX].cdw10, seen);
			due[seen] = g_now + ut_lat_lognormal(&rng, 100, 300);
		}
		/* the device posts what is done, earliest first */
		for (;;) {
			first = UINT64_MAX;
			for (i = sent, next = seen; i < seen; i++) {
				if (due[i] != 0 && due[i] <= g_now && due[i] < first) {
					first = due[i];
					next = i;
				}
			}
			if (next == seen) {
				break;
			}
			due[next] = 0;
			device_complete(g_fake.sq[next % FAKE_MAX].cid, 0, 0);
		}
		while (sent < seen && due[sent] == 0) {
			sent++;
		}
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		g_now += 10;
	}
	CU_ASSERT_EQUAL(g_fixed_done, FIXED_TOTAL);
	CU_ASSERT_EQUAL(g_fake.num_submitted, FIXED_TOTAL);
	/* what makes the test: completions out of order, and callbacks submitting while
	 * others wait on the queued list */
	CU_ASSERT(g_fixed_reordered > FIXED_TOTAL / 10);
	CU_ASSERT(g_fixed_behind > FIXED_TOTAL / 2);
	printf("(%u completed out of order, %u resubmitted behind queued ones) ", g_fixed_reordered,
	       g_fixed_behind);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/* max_completions bounds one call. */
static void
test_max_completions(void)
{
	struct ut_cpl c[3];

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	submit(&c[0], 0);
	submit(&c[1], 1);
	submit(&c[2], 2);
	device_complete(0, 0, 0);
	device_complete(1, 0, 0);
	device_complete(2, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 2), 2);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 2), 1);
	CU_ASSERT_EQUAL(c[2].calls, 1);
	teardown();
}

static void
test_delay_doorbell(void)
{
	struct ut_cpl c[3];

	memset(c, 0, sizeof(c));
	setup(8, 16, 0);
	g_qpair.delay_doorbell = true;
	submit(&c[0], 0);
	submit(&c[1], 1);
	submit(&c[2], 2);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	CU_ASSERT_EQUAL(g_fake.doorbells, 0);
	nvp_nvme_qpair_ring_doorbell(&g_qpair);
	CU_ASSERT_EQUAL(g_fake.doorbells, 1);
	nvp_nvme_qpair_ring_doorbell(&g_qpair); /* nothing new: no MMIO */
	CU_ASSERT_EQUAL(g_fake.doorbells, 1);
	submit(&c[0], 3);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_fake.doorbells, 2); /* process_completions rings it */
	teardown();
}

/* A completion callback that resubmits, as an application at a fixed depth does. */
static struct ut_cpl g_resub[4];
static uint32_t g_resub_doorbells_seen; /* doorbells when the last resubmit returned */

static void
resubmit_cb(void *arg, const struct nvme_cpl *cpl)
{
	ut_cb(arg, cpl);
	CU_ASSERT_EQUAL(submit(&g_resub[3], 100), 0);
	g_resub_doorbells_seen = g_fake.doorbells;
}

/*
 * Even on a qpair that rings per submission, submissions from completion callbacks are
 * announced once, at the end of the poll; a poll first rings for what was submitted
 * before it; the counters say how many doorbells there were.
 */
static void
test_doorbell_batch_in_callbacks(void)
{
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct nvme_request *req;
	uint32_t i;

	memset(g_resub, 0, sizeof(g_resub));
	setup(16, 32, 0);
	CU_ASSERT_FALSE(g_qpair.delay_doorbell);
	for (i = 0; i < 3; i++) {
		req = nvme_qpair_alloc_request(&g_qpair);
		if (req == NULL) {
			CU_FAIL("no request object");
			break;
		}
		nvme_request_init(req, resubmit_cb, &g_resub[i]);
		req->cmd.opc = NVME_OPC_READ;
		CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
	}
	CU_ASSERT_EQUAL(g_fake.doorbells, 3); /* not delayed: one per submission */
	for (i = 0; i < 3; i++) {
		device_complete((uint16_t)i, 0, 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 3);
	CU_ASSERT_EQUAL(g_resub_doorbells_seen, 3); /* nothing rung inside the callbacks */
	CU_ASSERT_EQUAL(g_fake.doorbells, 4);       /* one for all three resubmissions */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 6);
	/* A delayed submission is rung by the next poll even when nothing completes. */
	g_qpair.delay_doorbell = true;
	CU_ASSERT_EQUAL(submit(&g_resub[3], 200), 0);
	CU_ASSERT_EQUAL(g_fake.doorbells, 4);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_fake.doorbells, 5);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_fake.doorbells, 5); /* nothing new: no doorbell */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(&g_qpair, &st), 0);
	CU_ASSERT_EQUAL(st.submitted, 7);
	CU_ASSERT_EQUAL(st.polls, 3);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(NULL, &st), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(&g_qpair, NULL), -EINVAL);
	CU_ASSERT_EQUAL(st.info_size, sizeof(st));
	st.info_size = sizeof(st) - 1; /* a caller that set no or a wrong size */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(&g_qpair, &st), -EINVAL);
	teardown();
}

/* The batch-end function of test_batch_end: resubmits once per call, as a layer handing
 * a poll's completions on (whose callbacks resubmit) does. */
static uint32_t g_batch_calls, g_batch_doorbells_seen;
static uint64_t g_batch_deadline, g_batch_ticks;

static void
batch_end(void *arg, uint64_t poll_ticks)
{
	CU_ASSERT_PTR_EQUAL(arg, &g_batch_calls);
	g_batch_calls++;
	g_batch_ticks = poll_ticks;
	g_now += 2000; /* a stamp taken now, not the poll's, would show */
	CU_ASSERT_EQUAL(submit(&g_resub[3], 100), 0);
	g_batch_doorbells_seen = g_fake.doorbells;
	g_batch_deadline = TAILQ_LAST(&g_qpair.outstanding, nvme_tracker_list)->deadline;
}

/*
 * A batch-end function runs at the end of a poll that completed something, after the
 * callbacks, inside the batch: what it submits is stamped with the poll's time and rung
 * with the poll's one doorbell; a poll that completes nothing does not call it.
 */
static void
test_batch_end(void)
{
	uint32_t i;

	memset(g_resub, 0, sizeof(g_resub));
	setup(16, 32, 1000);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_set_batch_end(NULL, batch_end, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_set_batch_end(&g_qpair, batch_end, &g_batch_calls), 0);
	g_batch_calls = 0;
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(submit(&g_resub[i], 10), 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_batch_calls, 0); /* nothing completed */
	device_complete(0, 0, 0);
	device_complete(1, 0, 0);
	g_now = 5000;
	i = g_fake.doorbells;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 2);
	CU_ASSERT_EQUAL(g_batch_calls, 1); /* once per poll, not per completion */
	CU_ASSERT_EQUAL(g_resub[0].calls + g_resub[1].calls, 2);
	CU_ASSERT_EQUAL(g_batch_doorbells_seen, i);     /* not rung inside it */
	CU_ASSERT_EQUAL(g_fake.doorbells, i + 1);       /* rung at the end of the poll */
	CU_ASSERT_EQUAL(g_batch_deadline, 5000 + 1000); /* the poll's time */
	CU_ASSERT_EQUAL(g_batch_ticks, 5000);           /* and the function is given it */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_set_batch_end(&g_qpair, NULL, NULL), 0);
	device_complete(TAILQ_LAST(&g_qpair.outstanding, nvme_tracker_list)->cid, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 1);
	CU_ASSERT_EQUAL(g_batch_calls, 1);
	teardown();
}

static void
test_submit_errors(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 0);
	/* A bad payload is reported to the caller; the request object comes back. */
	g_fake.submit_rc = -EFAULT;
	CU_ASSERT_EQUAL(submit(&c, 0), -EFAULT);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	/* Resources short (chained PRP pages): checked, then queued. */
	g_fake.submit_rc = -EAGAIN;
	CU_ASSERT_EQUAL(submit(&c, 1), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 1);
	CU_ASSERT_FALSE(STAILQ_EMPTY(&g_qpair.queued));
	/* Queued behind it, a bad payload is still caught at submission. */
	g_fake.check_rc = -EINVAL;
	CU_ASSERT_EQUAL(submit(&c, 2), -EINVAL);
	CU_ASSERT_EQUAL(count_free_requests(), 15);
	g_fake.check_rc = 0;
	/* When the resources come back the queued one goes out. */
	g_fake.submit_rc = 0;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 1);
	CU_ASSERT_EQUAL(g_fake.sq[0].cdw10, 1);
	/* Every request object in use. */
	while (nvme_qpair_alloc_request(&g_qpair) != NULL) {
	}
	CU_ASSERT_EQUAL(submit(&c, 3), -ENOMEM);
	teardown();
}

/* The callback may submit again at once, reusing the request object just freed. */
static struct ut_cpl g_chain_cpl;
static uint32_t g_chain_left;

static void
chain_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct nvme_request *req;

	ut_cb(arg, cpl);
	if (g_chain_left-- > 0) {
		req = nvme_qpair_alloc_request(&g_qpair);
		CU_ASSERT_PTR_NOT_NULL_FATAL(req);
		nvme_request_init(req, chain_cb, arg);
		CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
	}
}

static void
test_resubmit_from_callback(void)
{
	struct nvme_request *req;
	uint32_t i;

	setup(2, 2, 0); /* one slot; as many requests as entries */
	memset(&g_chain_cpl, 0, sizeof(g_chain_cpl));
	g_chain_left = 5;
	req = nvme_qpair_alloc_request(&g_qpair);
	nvme_request_init(req, chain_cb, &g_chain_cpl);
	CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
	for (i = 0; i < 6; i++) {
		device_complete(g_fake.sq[i].cid, 0, 0);
		CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 1);
	}
	CU_ASSERT_EQUAL(g_chain_cpl.calls, 6);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 6);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * A completion posted twice, the second after the callback of the first has sent a new
 * command on the same tracker (the free list is a stack: the CID's index is reused at
 * once). The duplicate must not complete the new command: that would end a read before
 * its data came, or acknowledge a write the device has not done.
 */
static void
test_duplicate_completion_after_reuse(void)
{
	struct nvme_request *req;

	setup(2, 2, 0); /* one slot: the new command takes the same tracker */
	memset(&g_chain_cpl, 0, sizeof(g_chain_cpl));
	g_chain_left = 1;
	req = nvme_qpair_alloc_request(&g_qpair);
	nvme_request_init(req, chain_cb, &g_chain_cpl);
	CU_ASSERT_EQUAL(nvme_qpair_submit_request(&g_qpair, req), 0);
	device_complete(g_fake.sq[0].cid, 0, 0);
	device_complete(g_fake.sq[0].cid, 0, 0); /* the duplicate */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 2);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 2);
	CU_ASSERT_EQUAL(g_fake.sq[0].cid & g_qpair.cid_idx_mask,
			g_fake.sq[1].cid & g_qpair.cid_idx_mask); /* one tracker */
	CU_ASSERT_NOT_EQUAL(g_fake.sq[0].cid, g_fake.sq[1].cid);  /* two generations */
	CU_ASSERT_EQUAL(g_chain_cpl.calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 1);
	device_complete(g_fake.sq[1].cid, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 1);
	CU_ASSERT_EQUAL(g_chain_cpl.calls, 2);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/* Expire the request in slot 0 and return its CID; the Abort has been sent. */
static uint16_t
expire_one(struct ut_cpl *c)
{
	CU_ASSERT_EQUAL(submit(c, 0), 0);
	g_now += 50;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_abort.calls, 0); /* not yet expired */
	g_now += 51;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_timeout.calls, 1);
	CU_ASSERT_PTR_EQUAL(g_timeout.qpair, &g_qpair);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	CU_ASSERT_EQUAL(g_abort.sqid, 1);
	CU_ASSERT_EQUAL(g_abort.cid, g_fake.sq[0].cid);
	CU_ASSERT_EQUAL(g_timeout.cid, g_fake.sq[0].cid);
	CU_ASSERT_EQUAL(c->calls, 0); /* not completed yet: the Abort decides */
	return g_fake.sq[0].cid;
}

/* The Abort's completion, as the admin queue would deliver it. */
static void
abort_completes(uint32_t cdw0, uint8_t sc)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.cdw0 = cdw0;
	cpl.status.sc = sc;
	g_abort.cb(g_abort.cb_arg, &cpl);
}

static void
test_timeout_not_aborted(void)
{
	struct ut_cpl c = { 0 }, c2 = { 0 };
	uint16_t cid;

	setup(4, 16, 100);
	cid = expire_one(&c);
	/* "Not aborted" (DW0 bit 0): the driver completes the request itself... */
	abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 0); /* the host gave up, not the device: retryable */
	CU_ASSERT_EQUAL(c.cpl.cid, cid);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	/* ...keeps the CID out of use, but gives the SQ slot back: "not aborted" means the
	 * command has left the SQ. */
	CU_ASSERT_EQUAL(count_free_trackers(), 5);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(submit(&c2, 1), 0);
	CU_ASSERT_NOT_EQUAL(g_fake.sq[1].cid, cid);
	/* The late completion is swallowed and frees the CID. */
	device_complete(cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c2.calls, 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 5); /* c2 has one */
	device_complete(g_fake.sq[1].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c2.calls, 1);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_qpair.recovery));
	teardown();
}

/*
 * opts.timeout_no_abort: the deadline only reports (the timeout callback, once), no Abort
 * goes out and the request stays outstanding; its completion, when it comes, reaches the
 * caller once and the tracker is free again.
 */
static void
test_timeout_no_abort(void)
{
	struct ut_cpl c = { 0 };
	uint16_t cid;

	setup(4, 16, 100);
	g_qpair.opts.timeout_no_abort = true;
	CU_ASSERT_EQUAL(submit(&c, 0), 0);
	cid = g_fake.sq[0].cid;
	g_now += 101;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_timeout.calls, 1);
	CU_ASSERT_EQUAL(g_timeout.cid, cid);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	g_now += 1000;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_timeout.calls, 1); /* once per request */
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	CU_ASSERT_EQUAL(c.calls, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 1);
	device_complete(cid, 0, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 1);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_qpair.recovery));
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	teardown();
}

/*
 * One slot (2 entries), its completion lost: the requests queued behind still go out
 * once the Abort says "not aborted", and the queue keeps its full depth afterwards.
 */
static void
test_lost_completion_single_slot(void)
{
	struct ut_cpl c[4];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(2, 16, 100);
	CU_ASSERT_EQUAL(g_qpair.num_trackers, 2);
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0);
	/* The others are accepted later: a deadline counts from acceptance, so they have
	 * time left when the first one expires. */
	g_now += 95;
	for (i = 1; i < 4; i++) {
		CU_ASSERT_EQUAL(submit(&c[i], i), 0);
	}
	CU_ASSERT_EQUAL(g_fake.num_submitted, 1);
	g_now += 5;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	/* The next one went out on the spare CID. */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 2);
	CU_ASSERT_NOT_EQUAL(g_fake.sq[1].cid, g_fake.sq[0].cid);
	for (i = 1; i < 4; i++) {
		device_complete(g_fake.sq[i].cid, 0, 0);
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * More lost completions than spare CIDs: once every usable tracker is quarantined, the
 * qpair deletes and re-creates its queues (freeing all), and what waited goes out.
 */
static void
test_quarantine_exhausted_reclaims(void)
{
	struct nvme_tracker *tr;
	struct ut_cpl c[4];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(2, 16, 100); /* 1 slot, 1 spare CID */
	/* Both CIDs lose their completions in turn; the requests are accepted at times
	 * that let each expire only once it is in the device (deadlines count from the
	 * submit call). */
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0);
	g_now = 1150;
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0);
	for (i = 0; i < 2; i++) {
		g_now = 1200 + 200 * i;
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
		if (i == 1) {
			CU_ASSERT_EQUAL(submit(&c[2], 2), 0);
			CU_ASSERT_EQUAL(submit(&c[3], 3), 0);
		}
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	}
	/* The poll that found no usable CID reclaimed them: the queues were re-created
	 * (under the admin lock) and the third request went out. */
	CU_ASSERT_EQUAL(g_fake.disconnects, 1);
	CU_ASSERT_EQUAL(g_fake.resets, 1);
	CU_ASSERT_EQUAL(g_fake.connects, 1);
	CU_ASSERT_EQUAL(g_locks, 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_qpair.recovery));
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	CU_ASSERT_EQUAL(g_fake.sq[2].cdw10, 2);
	/* A stale completion of a reclaimed CID is not taken for the new command. */
	tr = &g_qpair.trackers[g_fake.sq[2].cid == 0 ? 1 : 0];
	CU_ASSERT_FALSE(tr->cpl_pending);
	for (i = 2; i < 4; i++) {
		device_complete(g_fake.sq[i].cid, 0, 0);
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/* The queues cannot be re-created: the qpair fails, nothing is lost. */
static void
test_reclaim_fails(void)
{
	struct ut_cpl c[3];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(2, 16, 100);
	g_fake.connect_rc = -EIO;
	submit(&c[0], 0);
	g_now = 1150;
	submit(&c[1], 1);
	for (i = 0; i < 2; i++) {
		g_now = 1200 + 200 * i;
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
		if (i == 1) {
			submit(&c[2], 2);
		}
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
	}
	CU_ASSERT_EQUAL(c[2].calls, 1);
	CU_ASSERT_EQUAL(c[2].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(c[2].cpl.status.dnr, 0); /* the next controller reset re-makes it */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(submit(&c[0], 9), -ENXIO);
	teardown();
}

static void
test_timeout_aborted(void)
{
	struct ut_cpl c = { 0 };
	uint16_t cid;

	setup(4, 16, 100);
	cid = expire_one(&c);
	/* The controller aborted it: its own completion (ABORTED BY REQUEST) follows. */
	abort_completes(0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 0);
	device_complete(cid, NVME_SCT_GENERIC, NVME_SC_ABORTED_BY_REQUEST);
	g_fake.cq[(g_fake.cq_tail - 1) % FAKE_MAX].status.dnr = 1; /* the device says DNR */
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_BY_REQUEST);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 1); /* passed on as the device said it */
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	/* Nothing more happens however long we wait. */
	g_now += 1000000;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	teardown();
}

static void
test_timeout_abort_unanswered(void)
{
	struct ut_cpl c = { 0 };
	uint16_t cid;

	setup(4, 16, 100);
	cid = expire_one(&c);
	CU_ASSERT(g_admin_polls > 0); /* the owner moves the admin queue along */
	/* No answer within the Abort's own timeout (admin_timeout_ms = 10 ms). */
	g_now += 9000;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 0);
	g_now += 2000;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 0);
	/* Nothing says the command left the SQ: its slot stays taken. */
	CU_ASSERT_EQUAL(free_slots(), 2);
	/* The late completion does not free the tracker while the Abort may still call
	 * back into it; the Abort's answer does. */
	device_complete(cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 5);
	CU_ASSERT_EQUAL(free_slots(), 2);
	abort_completes(0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(c.calls, 1);
	teardown();
}

static void
test_timeout_aborted_but_never_completes(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 100);
	expire_one(&c);
	abort_completes(0, 0);
	g_now += 11000;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 5); /* quarantined, slot and all */
	CU_ASSERT_EQUAL(free_slots(), 2);
	teardown();
}

static void
test_abort_failed_status(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 100);
	expire_one(&c);
	/* Abort Command Limit Exceeded and the like count as "not aborted". */
	abort_completes(0, NVME_SC_INVALID_FIELD);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(free_slots(), 2); /* unknown whether it left the SQ */
	teardown();
}

static void
test_abort_admin_busy(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 100);
	g_abort.rc = -EAGAIN;
	CU_ASSERT_EQUAL(submit(&c, 0), 0);
	g_now += 200;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_timeout.calls, 1);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	/* Retried on the next poll once the admin queue is free; reported only once. */
	g_abort.rc = 0;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	CU_ASSERT_EQUAL(g_timeout.calls, 1);
	abort_completes(1, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	teardown();
}

static void
test_timeouts_only_expired(void)
{
	struct ut_cpl c[3];

	memset(c, 0, sizeof(c));
	setup(4, 16, 100);
	submit(&c[0], 0);
	g_now += 60;
	submit(&c[1], 1);
	g_now += 60; /* the first expired, the second not */
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	CU_ASSERT_EQUAL(g_abort.cid, g_fake.sq[0].cid);
	/* The second completes normally. */
	device_complete(g_fake.sq[1].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_EQUAL(c[0].calls, 0);
	teardown();
}

static void
test_ctrlr_failure(void)
{
	struct ut_cpl c[5];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(4, 16, 100);
	for (i = 0; i < 5; i++) {
		submit(&c[i], i);
	}
	/* A timeout looks at CSTS first: the controller is dead. */
	g_health_failed = true;
	g_now += 200;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 0); /* a reset may bring it back */
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(submit(&c[0], 9), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	teardown();
}

/* With no deadline, CSTS is still read once nothing has completed for a second. */
static void
test_health_check_without_timeout(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 0);
	submit(&c, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	g_now += 500000;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_health_checks, 0);
	g_now += 600000;
	g_health_failed = true;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_health_checks, 1);
	CU_ASSERT_EQUAL(c.calls, 1);
	teardown();
}

/*
 * The transport says the device is wanted back (the kernel unbinding it from vfio-pci):
 * asked at most every NVME_RELEASE_CHECK_MS while requests are outstanding; then the
 * controller is removed and the request fails instead of holding the device.
 */
static void
test_release_requested(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 0);
	submit(&c, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_release_asked, 1);
	g_release_wanted = true;
	g_now += NVME_RELEASE_CHECK_MS * 1000 / 2;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_release_asked, 1); /* not yet: once per interval */
	g_now += NVME_RELEASE_CHECK_MS * 1000;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_release_asked, 2);
	CU_ASSERT_EQUAL(g_removed, 1);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 1); /* removed: no reset will bring it back */
	teardown();
}

static void
test_reset(void)
{
	struct ut_cpl c[5];
	uint16_t old_cid;
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	for (i = 0; i < 4; i++) {
		submit(&c[i], i); /* three in slots, one queued */
	}
	old_cid = g_fake.sq[0].cid;
	atomic_fetch_add(&g_ctrlr.reset_gen, 1); /* a reset from some thread */
	/* The resetting thread touches nothing of the qpair: its owner rewinds it. */
	CU_ASSERT_EQUAL(g_fake.resets, 0);
	/* Nothing completes until the owner polls. */
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 0);
	}
	/* A stale completion from before the reset is ignored. */
	device_complete(old_cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_fake.resets, 1);
	CU_ASSERT_EQUAL(g_fake.connects, 1); /* re-created by the owner */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 0); /* may be retried */
	}
	/* The queued one was never sent: it goes to the new queue. */
	CU_ASSERT_EQUAL(c[3].calls, 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 4);
	CU_ASSERT_EQUAL(g_fake.sq[3].cdw10, 3);
	device_complete(g_fake.sq[3].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[3].calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[3].cpl));
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	teardown();
}

/* A reset frees quarantined CIDs too. */
static void
test_reset_frees_quarantine(void)
{
	struct ut_cpl c = { 0 };

	setup(4, 16, 100);
	expire_one(&c);
	abort_completes(1, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(count_free_trackers(), 5);
	atomic_fetch_add(&g_ctrlr.reset_gen, 1); /* a reset from some thread */
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	teardown();
}

static void
test_abort_all(void)
{
	struct ut_cpl c[5];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	for (i = 0; i < 5; i++) {
		submit(&c[i], i);
	}
	nvme_qpair_abort_all(&g_qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, true);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 1);
	}
	/* DNR is the caller's word: clear when a reset may bring the requests back. */
	memset(c, 0, sizeof(c));
	for (i = 0; i < 5; i++) {
		submit(&c[i], i);
	}
	nvme_qpair_abort_all(&g_qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(count_free_trackers(), 6);
	CU_ASSERT_EQUAL(free_slots(), 3);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	teardown();
}

static void
orphan_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)cpl;
	(*(uint32_t *)arg)++;
}

static void
test_orphan_request(void)
{
	struct ut_cpl c[4];
	uint32_t orphaned = 0;
	uint16_t cid = 0xffff;

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	submit(&c[0], 0);
	submit(&c[1], 1);
	submit(&c[2], 2);
	submit(&c[3], 3); /* queued */
	/* Queued: removed, never sent. */
	CU_ASSERT_FALSE(
		nvme_qpair_orphan_request(&g_qpair, ut_cb, &c[3], orphan_cb, &orphaned, &cid));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 3);
	/* In the device: its completion goes to the new callback. */
	CU_ASSERT_TRUE(
		nvme_qpair_orphan_request(&g_qpair, ut_cb, &c[1], orphan_cb, &orphaned, &cid));
	CU_ASSERT_EQUAL(cid, g_fake.sq[1].cid);
	device_complete(cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[1].calls, 0);
	CU_ASSERT_EQUAL(orphaned, 1);
	CU_ASSERT_FALSE(
		nvme_qpair_orphan_request(&g_qpair, ut_cb, &c[1], orphan_cb, &orphaned, &cid));
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3); /* the dequeued one never went out */
	teardown();
}

static void
test_neuter_aborts(void)
{
	struct nvp_nvme_qpair adminq;
	struct nvme_request *req;
	struct ut_cpl c = { 0 };

	setup(4, 16, 100);
	expire_one(&c);
	/* Put the Abort on a stand-in admin queue as the real one would hold it. */
	memset(&adminq, 0, sizeof(adminq));
	CU_ASSERT_EQUAL_FATAL(nvme_qpair_init(&adminq, &g_ctrlr, 0, 4, 8, false), 0);
	req = nvme_qpair_alloc_request(&adminq);
	nvme_request_init(req, g_abort.cb, g_abort.cb_arg);
	adminq.trackers[0].req = req;
	nvme_qpair_neuter_aborts(&adminq, &g_qpair);
	CU_ASSERT_PTR_NULL(req->cb_fn);
	nvme_qpair_fini(&adminq);
	teardown();
}

static void *
foreign_thread(void *arg)
{
	struct ut_cpl *c = arg;

	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -EPERM);
	(void)c;
	return NULL;
}

static void
test_owner_thread(void)
{
	struct ut_cpl c = { 0 };
	pthread_t t;

	setup(4, 16, 0);
	ut_log_clear();
	pthread_create(&t, NULL, foreign_thread, &c);
	pthread_join(t, NULL);
	CU_ASSERT_TRUE(ut_log_has("does not own it"));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(NULL, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_id(&g_qpair), 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_size(&g_qpair), 4);
	teardown();
}

/*
 * Requests on the queued list that end in an error: the transport refuses one when its
 * slot comes (DATA TRANSFER ERROR), the controller fails, the device is removed (HOST
 * PATHING ERROR). Each completes exactly once, none is sent.
 */
static void
test_queued_error_completions(void)
{
	struct ut_cpl c[6];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(2, 16, 0); /* one slot */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(submit(&c[i], i), 0);
	}
	g_fake.submit_rc = -EINVAL;
	device_complete(g_fake.sq[0].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	for (i = 1; i < 3; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_DATA_TRANSFER_ERROR);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 1); /* its payload is refused: invalid */
	}
	CU_ASSERT_EQUAL(g_fake.num_submitted, 1);
	g_fake.submit_rc = 0;
	/* Queued at a controller failure / a removal. */
	for (i = 3; i < 6; i++) {
		CU_ASSERT_EQUAL(submit(&c[i], i), 0);
	}
	atomic_store(&g_ctrlr.removed, true);
	atomic_store(&g_ctrlr.is_failed, true);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	for (i = 3; i < 6; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sct, NVME_SCT_PATH);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_HOST_PATH_ERROR);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 1);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(c[5].calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	teardown();
}

/* The admin queue's poller completes the last queue step with @sc (generic). */
static void
admin_step_completes(uint8_t sc)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sc = sc;
	CU_ASSERT_PTR_NOT_NULL_FATAL(g_admin_cmds.cb);
	g_admin_cmds.cb(g_admin_cmds.cb_arg, &cpl);
	g_admin_cmds.cb = NULL;
}

/* Delete SQ, Delete CQ, Create CQ, Create SQ: each step's command completes. */
static void
remake_queues(void)
{
	static const uint8_t opc[4] = { NVME_OPC_DELETE_IO_SQ, NVME_OPC_DELETE_IO_CQ,
					NVME_OPC_CREATE_IO_CQ, NVME_OPC_CREATE_IO_SQ };
	uint32_t first = g_admin_cmds.calls - 1, i;

	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(g_admin_cmds.calls, first + i + 1);
		CU_ASSERT_EQUAL(g_admin_cmds.cmd[(first + i) % 8].opc, opc[i]);
		CU_ASSERT_EQUAL(g_qpair.conn_state, i < 2 ? NVME_QP_DELETING : NVME_QP_CREATING);
		admin_step_completes(0);
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
	}
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_CONNECTED);
}

/*
 * A deadline passes while the CQ is stuck behind an entry the host cannot see: no Abort
 * (the completions are there, hidden), the queues are re-made at once. Once the SQ is
 * deleted, the expired request completes with ABORTED SQ DELETION, the one still within
 * its deadline is sent again ahead of what was queued meanwhile; each completes once.
 */
static void
test_cq_stall_remakes_queues(void)
{
	struct ut_cpl c[3];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(8, 16, 100);
	g_qpair.transport = &g_fake_stall_ops;
	g_ctrlr.opts.io_retry_count = 4;
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0); /* deadline 1100 */
	g_now = 1050;
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0); /* deadline 1150 */
	/* Polls while nothing expired do not look (the fast path stays as it was). */
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_cq_stall_checks, 0);
	g_cq_stalled = true;
	g_now = 1100;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_cq_stall_checks, 1);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	CU_ASSERT_EQUAL(g_timeout.calls, 1);
	CU_ASSERT_EQUAL(g_timeout.cid, g_fake.sq[0].cid);
	CU_ASSERT_EQUAL(g_qpair.stats.cq_stalls, 1);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_DELETING);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 1);
	/* Submissions wait meanwhile. */
	CU_ASSERT_EQUAL(submit(&c[2], 2), 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 2);
	g_cq_stalled = false; /* the new queues are empty */
	remake_queues();
	CU_ASSERT_EQUAL(g_fake.resets, 1);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[0].cpl.status.sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(c[1].calls, 0);
	/* Sent again: c[1] first, then the queued c[2]. */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 4);
	CU_ASSERT_EQUAL(g_fake.sq[2].cdw10, 1);
	CU_ASSERT_EQUAL(g_fake.sq[3].cdw10, 2);
	for (i = 2; i < 4; i++) {
		device_complete(g_fake.sq[i].cid, 0, 0);
	}
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
	}
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[1].cpl));
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[2].cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(g_qpair.stats.cq_stalls, 1);
	CU_ASSERT_EQUAL(g_locks, 0);
	teardown();
}

/*
 * Without a deadline (or a long one), the once-a-second look when nothing completes finds
 * the stuck CQ: the requests behind it are sent again, none fails.
 */
static void
test_cq_stall_found_without_deadline(void)
{
	struct ut_cpl c[2];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(8, 16, 0);
	g_qpair.transport = &g_fake_stall_ops;
	g_ctrlr.opts.io_retry_count = 4;
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0);
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0); /* arms the health check */
	g_cq_stalled = true;
	g_now += 999999;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_cq_stall_checks, 0); /* not a second yet */
	g_now += 1;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_health_checks, 1);
	CU_ASSERT_EQUAL(g_cq_stall_checks, 1);
	CU_ASSERT_EQUAL(g_qpair.stats.cq_stalls, 1);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	g_cq_stalled = false;
	remake_queues();
	CU_ASSERT_EQUAL(g_fake.num_submitted, 4);
	for (i = 2; i < 4; i++) {
		CU_ASSERT_EQUAL(g_fake.sq[i].cdw10, i - 2);
		device_complete(g_fake.sq[i].cid, 0, 0);
	}
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * The stuck entry is the last the device posted (nothing after it to give it away): the
 * deadline sends an Abort, "not aborted" completes the request (its CID quarantined). The
 * next request's completion lands behind the stuck entry: a later poll sees the stall
 * while the quarantine lasts and re-makes the queues; that request is sent again and
 * completes once, the quarantined CID is free again.
 */
static void
test_cq_stall_after_not_aborted(void)
{
	struct ut_cpl c[2];

	memset(c, 0, sizeof(c));
	setup(8, 16, 100);
	g_qpair.transport = &g_fake_stall_ops;
	g_ctrlr.opts.io_retry_count = 4;
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0);
	g_now = 1100;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_FALSE(TAILQ_EMPTY(&g_qpair.recovery)); /* quarantined */
	g_now = 1110;
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_CONNECTED);
	g_cq_stalled = true; /* c[1] completed behind the stuck entry */
	g_now = 1120;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_DELETING);
	CU_ASSERT_EQUAL(g_qpair.stats.cq_stalls, 1);
	g_cq_stalled = false;
	remake_queues();
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_qpair.recovery));
	CU_ASSERT_EQUAL(c[1].calls, 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	CU_ASSERT_EQUAL(g_fake.sq[2].cdw10, 1);
	device_complete(g_fake.sq[2].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[1].cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * A reset with the retry policy: requests the device had are sent again (ahead of the
 * queued one, in their order) until the budget is spent, then complete with ABORTED SQ
 * DELETION; never twice, never lost.
 */
static void
test_reset_retries(void)
{
	struct ut_cpl c[4];
	uint32_t i, round;

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	g_ctrlr.opts.io_retry_count = 2;
	for (i = 0; i < 4; i++) {
		submit(&c[i], i); /* three in slots, one queued */
	}
	for (round = 0; round < 2; round++) {
		atomic_fetch_add(&g_ctrlr.reset_gen, 1);
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		for (i = 0; i < 4; i++) {
			CU_ASSERT_EQUAL(c[i].calls, 0);
		}
		/* Sent again in their order: 0, 1, 2 (the queued 3 waits for a slot). */
		CU_ASSERT_EQUAL(g_fake.num_submitted, 3 * (round + 2));
		for (i = 0; i < 3; i++) {
			CU_ASSERT_EQUAL(g_fake.sq[3 * (round + 1) + i].cdw10, i);
		}
		CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 4);
	}
	/* A third reset: their budget (2) is spent. */
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_EQUAL(c[i].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
		CU_ASSERT_EQUAL(c[i].cpl.status.dnr, 0);
	}
	/* The queued one went out into a freed slot and completes normally. */
	CU_ASSERT_EQUAL(c[3].calls, 0);
	CU_ASSERT_EQUAL(g_fake.sq[g_fake.num_submitted - 1].cdw10, 3);
	device_complete(g_fake.sq[g_fake.num_submitted - 1].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[3].calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[3].cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(count_free_requests(), 16);
	teardown();
}

/*
 * A reset after a request's deadline passed: it is not sent again (that would give it a
 * new life past the user's timeout) but completes at once with ABORTED SQ DELETION, DNR
 * clear, as nvp_nvme_ctrlr_reset() says; one still within its deadline is sent again.
 */
static void
test_reset_expired_not_retried(void)
{
	struct ut_cpl c[2];

	memset(c, 0, sizeof(c));
	setup(4, 16, 100);
	g_ctrlr.opts.io_retry_count = 4;
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0); /* deadline 1100 */
	g_now = 1080;
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0); /* deadline 1180 */
	g_now = 1150;
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[0].cpl.status.sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(c[0].cpl.status.dnr, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 0);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	CU_ASSERT_EQUAL(g_fake.sq[2].cdw10, 1);
	device_complete(g_fake.sq[2].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[1].cpl));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * A deadline counts from the submit call: a request that waits on the queued list past
 * it completes without ever being sent (it would otherwise get a whole new timeout).
 */
static void
test_deadline_counts_from_submit(void)
{
	struct ut_cpl c[3];

	memset(c, 0, sizeof(c));
	setup(2, 16, 100); /* one slot */
	CU_ASSERT_EQUAL(submit(&c[0], 0), 0);
	CU_ASSERT_EQUAL(submit(&c[1], 1), 0); /* queued at t = 1000 */
	g_now += 60;
	CU_ASSERT_EQUAL(submit(&c[2], 2), 0); /* queued at t = 1060 */
	/* c[0] completes late, at t = 1099: c[1] goes out with 1 tick left. */
	g_now += 39;
	device_complete(g_fake.sq[0].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 2);
	/* t = 1100: c[1] expired in the device (Abort), c[2] is still queued with time. */
	g_now += 1;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_abort.calls, 1);
	CU_ASSERT_EQUAL(c[2].calls, 0);
	/* t = 1160: c[2] expired on the queued list: completed, never sent. */
	g_now += 60;
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[2].calls, 1);
	CU_ASSERT_EQUAL(c[2].cpl.status.sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(c[2].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(c[2].cpl.status.dnr, 0); /* never sent: retryable */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 2);
	abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	teardown();
}

/*
 * The controller reconnects and nobody polls the admin queue: each poll of a waiting I/O
 * qpair steps the reconnect (at the poll's tick) and returns at once, its requests kept;
 * a connected qpair's poll never does.
 */
static void
test_reconnect_stepped_by_io_poll(void)
{
	struct ut_cpl c;

	memset(&c, 0, sizeof(c));
	setup(4, 16, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_reconnect_steps, 0);
	CU_ASSERT_EQUAL(submit(&c, 3), 0);
	g_ctrlr.opts.ctrlr_loss_timeout_sec = -1; /* reconnect on: the request waits */
	g_ctrlr.opts.reconnect_delay_sec = 1;
	atomic_store(&g_ctrlr.reconnecting, true);
	g_qpair.conn_state = NVME_QP_LOST;
	g_now = 777;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_reconnect_steps, 1);
	CU_ASSERT_EQUAL(g_reconnect_step_ticks, 777);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_reconnect_steps, 2);
	CU_ASSERT_EQUAL(c.calls, 0); /* it waits for the reconnect */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 1);
	atomic_store(&g_ctrlr.reconnecting, false);
	g_ctrlr.opts.ctrlr_loss_timeout_sec = 0;
	g_ctrlr.opts.reconnect_delay_sec = 0;
	teardown();
}

/*
 * After a reset the owner re-creates its queues without waiting: each step an admin
 * command under a trylock, its status read at later polls; the poll returns at once,
 * submissions wait on the queued list meanwhile.
 */
static void
test_reconnect_does_not_block(void)
{
	struct ut_cpl c[2];

	memset(c, 0, sizeof(c));
	setup(4, 16, 0);
	g_qpair.transport = &g_fake_async_ops;
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	atomic_store(&g_ctrlr.resetting, true); /* still resetting: the owner waits */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_fake.resets, 0);
	atomic_store(&g_ctrlr.resetting, false);
	g_trylock_busy = 1; /* another thread holds the admin lock: try again later */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 1);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[0].opc, NVME_OPC_CREATE_IO_CQ);
	CU_ASSERT_EQUAL(submit(&c[0], 7), 0); /* accepted, waits */
	CU_ASSERT_EQUAL(g_fake.num_submitted, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 1); /* CQ not created yet */
	admin_step_completes(0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 2);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[1].opc, NVME_OPC_CREATE_IO_SQ);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 0);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_CONNECTED);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 1);
	CU_ASSERT_EQUAL(g_fake.sq[0].cdw10, 7);
	CU_ASSERT_EQUAL(g_fake.connects, 0); /* never the synchronous op */
	CU_ASSERT_EQUAL(g_locks, 0);
	device_complete(g_fake.sq[0].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);

	/* Re-creation refused by the controller: the qpair fails, nothing is lost, and
	 * the next reset brings it back. */
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(submit(&c[1], 8), 0);
	admin_step_completes(NVME_SC_INVALID_QUEUE_IDENTIFIER);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(c[1].calls, 1);
	CU_ASSERT_EQUAL(c[1].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(submit(&c[1], 9), -ENXIO);
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_CONNECTED);
	CU_ASSERT_FALSE(g_qpair.failed);

	/* A step that never completes: failed after the admin timeout, its request no
	 * longer pointing at the qpair. */
	atomic_fetch_add(&g_ctrlr.reset_gen, 1);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), 0);
	g_now += 10 * 1000 + 1;
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(&g_qpair, 0), -ENXIO);
	CU_ASSERT_TRUE(g_qpair.failed);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(&g_qpair), 0);
	CU_ASSERT_EQUAL(g_locks, 0);
	teardown();
}

/* Reclaiming quarantined CIDs with the non-blocking steps: delete, then create. */
static void
test_reclaim_does_not_block(void)
{
	struct ut_cpl c[3];
	uint32_t i;

	memset(c, 0, sizeof(c));
	setup(2, 16, 100);
	g_qpair.transport = &g_fake_async_ops;
	submit(&c[0], 0);
	g_now = 1150;
	submit(&c[1], 1);
	for (i = 0; i < 2; i++) {
		g_now = 1200 + 200 * i;
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
		abort_completes(NVME_ABORT_CPL_NOT_ABORTED, 0);
		if (i == 1) {
			submit(&c[2], 2);
		}
		nvp_nvme_qpair_process_completions(&g_qpair, 0);
	}
	/* Stuck: Delete I/O SQ went out; the poll did not wait for it. */
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_DELETING);
	CU_ASSERT_EQUAL(g_admin_cmds.calls, 1);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[0].opc, NVME_OPC_DELETE_IO_SQ);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[1].opc, NVME_OPC_DELETE_IO_CQ);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[2].opc, NVME_OPC_CREATE_IO_CQ);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_qpair.recovery)); /* quarantine freed */
	CU_ASSERT_EQUAL(g_fake.resets, 1);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_admin_cmds.cmd[3].opc, NVME_OPC_CREATE_IO_SQ);
	admin_step_completes(0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(g_qpair.conn_state, NVME_QP_CONNECTED);
	CU_ASSERT_EQUAL(g_fake.num_submitted, 3);
	device_complete(g_fake.sq[2].cid, 0, 0);
	nvp_nvme_qpair_process_completions(&g_qpair, 0);
	CU_ASSERT_EQUAL(c[2].calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c[2].cpl));
	CU_ASSERT_EQUAL(g_fake.disconnects + g_fake.connects, 0);
	teardown();
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_qpair", NULL, NULL);
	CU_ADD_TEST(s, test_init_sizes);
	CU_ADD_TEST(s, test_submit_complete);
	CU_ADD_TEST(s, test_queue_full_queued_submitted);
	CU_ADD_TEST(s, test_queued_order_at_fixed_depth);
	CU_ADD_TEST(s, test_max_completions);
	CU_ADD_TEST(s, test_delay_doorbell);
	CU_ADD_TEST(s, test_doorbell_batch_in_callbacks);
	CU_ADD_TEST(s, test_batch_end);
	CU_ADD_TEST(s, test_submit_errors);
	CU_ADD_TEST(s, test_resubmit_from_callback);
	CU_ADD_TEST(s, test_duplicate_completion_after_reuse);
	CU_ADD_TEST(s, test_timeout_not_aborted);
	CU_ADD_TEST(s, test_timeout_no_abort);
	CU_ADD_TEST(s, test_lost_completion_single_slot);
	CU_ADD_TEST(s, test_quarantine_exhausted_reclaims);
	CU_ADD_TEST(s, test_reclaim_fails);
	CU_ADD_TEST(s, test_reset_retries);
	CU_ADD_TEST(s, test_reset_expired_not_retried);
	CU_ADD_TEST(s, test_queued_error_completions);
	CU_ADD_TEST(s, test_deadline_counts_from_submit);
	CU_ADD_TEST(s, test_reconnect_does_not_block);
	CU_ADD_TEST(s, test_reconnect_stepped_by_io_poll);
	CU_ADD_TEST(s, test_reclaim_does_not_block);
	CU_ADD_TEST(s, test_cq_stall_remakes_queues);
	CU_ADD_TEST(s, test_cq_stall_after_not_aborted);
	CU_ADD_TEST(s, test_cq_stall_found_without_deadline);
	CU_ADD_TEST(s, test_timeout_aborted);
	CU_ADD_TEST(s, test_timeout_abort_unanswered);
	CU_ADD_TEST(s, test_timeout_aborted_but_never_completes);
	CU_ADD_TEST(s, test_abort_failed_status);
	CU_ADD_TEST(s, test_abort_admin_busy);
	CU_ADD_TEST(s, test_timeouts_only_expired);
	CU_ADD_TEST(s, test_ctrlr_failure);
	CU_ADD_TEST(s, test_health_check_without_timeout);
	CU_ADD_TEST(s, test_release_requested);
	CU_ADD_TEST(s, test_reset);
	CU_ADD_TEST(s, test_reset_frees_quarantine);
	CU_ADD_TEST(s, test_abort_all);
	CU_ADD_TEST(s, test_orphan_request);
	CU_ADD_TEST(s, test_neuter_aborts);
	CU_ADD_TEST(s, test_owner_thread);
	return ut_run();
}
