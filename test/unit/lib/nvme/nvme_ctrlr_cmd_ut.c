/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of admin commands (nvme_ctrlr_cmd.c) over a fake admin queue: the
 * synchronous helper (bounce buffer both ways, error status, timeout -> orphan + Abort,
 * failed controller), the encoding of identify, features, log pages, queue creation,
 * firmware download in chunks (FWUG, max transfer) and commit, Abort's non-blocking
 * path; and, over the same queue, asynchronous events (nvme_aer.c: arm, callback,
 * re-arm, stop).
 */
/* The driver runs on this test's clock (see nvme_ticks()). */
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_ctrlr_cmd.c"
#include "nvme/nvme_ctrlr_lock.c"
#include "nvme/nvme_aer.c"
#include "nvme/nvme_fiber.c"

#include "ut_nvme.h"

/* ---- fake clock ---- */

static uint64_t g_now, g_autotick;

static uint64_t
ut_ticks(void)
{
	g_now += g_autotick;
	return g_now;
}

/* ---- a fake admin queue: records commands, completes them when polled ---- */

#define MAX_CMDS 64

static struct nvme_cmd g_cmds[MAX_CMDS]; /* every command submitted */
static uint32_t g_num_cmds;
static struct nvme_request *g_pending[MAX_CMDS];
static uint32_t g_num_pending;
static uint8_t g_seen[64];  /* first bytes of the last host-to-controller payload */
static uint8_t g_fill;      /* controller-to-host payloads are filled with this */
static uint8_t g_status_sc; /* status of the next completions */
static uint32_t g_cdw0;
static bool g_hang;            /* nothing completes */
static bool g_stick;           /* the next poll finds the admin CQ stuck */
static uint32_t g_reset_calls; /* nvp_nvme_ctrlr_reset() */
static bool g_fire_aer;        /* AERs complete too (else they are held) */

/* Reconnect is off in these tests: never called. */
void
nvme_ctrlr_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

static uint32_t g_aer_cdw0;
static int g_submit_rc;
static uint32_t g_refuse_aec; /* Set Features (AEC) with any of these bits: Invalid Field */

int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (g_submit_rc != 0) {
		nvme_qpair_free_request(qpair, req);
		return g_submit_rc;
	}
	g_cmds[g_num_cmds++ % MAX_CMDS] = req->cmd;
	if (req->payload.type == NVME_PAYLOAD_CONTIG &&
	    (nvme_opc_get_data_transfer((uint8_t)req->cmd.opc) & NVME_DATA_HOST_TO_CONTROLLER)) {
		memcpy(g_seen, req->payload.buf, NVP_MIN(req->payload.size, sizeof(g_seen)));
	}
	g_pending[g_num_pending++] = req;
	qpair->num_outstanding++;
	return 0;
}

static void
complete_pending(struct nvp_nvme_qpair *qpair, uint32_t i, const struct nvme_cpl *cpl)
{
	struct nvme_request *req = g_pending[i];
	nvp_nvme_cmd_cb cb = req->cb_fn;
	void *arg = req->cb_arg;

	g_pending[i] = g_pending[--g_num_pending];
	qpair->num_outstanding--;
	if (req->payload.type == NVME_PAYLOAD_CONTIG &&
	    (nvme_opc_get_data_transfer((uint8_t)req->cmd.opc) & NVME_DATA_CONTROLLER_TO_HOST)) {
		memset(req->payload.buf, g_fill, req->payload.size);
	}
	nvme_qpair_free_request(qpair, req);
	if (cb != NULL) {
		cb(arg, cpl);
	}
}

int32_t
nvme_qpair_process(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	struct nvme_cpl cpl;
	int32_t n = 0;
	uint32_t i = 0;

	(void)max;
	memset(&cpl, 0, sizeof(cpl));
	if (g_stick) {
		/* as the health check does when it finds a stale entry with one behind it */
		g_stick = false;
		qpair->cq_stuck = true;
		return 0;
	}
	if (nvme_ctrlr_is_failed(qpair->ctrlr)) {
		cpl.status.sc = NVME_SC_ABORTED_SQ_DELETION;
		while (g_num_pending > 0) {
			complete_pending(qpair, 0, &cpl);
		}
		return -ENXIO;
	}
	while (!g_hang && i < g_num_pending) {
		bool aer = g_pending[i]->cmd.opc == NVME_OPC_ASYNC_EVENT_REQUEST;

		if (aer && !g_fire_aer) {
			i++;
			continue;
		}
		cpl.cdw0 = aer ? g_aer_cdw0 : g_cdw0;
		cpl.status.sc = aer ? 0 : g_status_sc;
		if (g_pending[i]->cmd.opc == NVME_OPC_SET_FEATURES &&
		    (g_pending[i]->cmd.cdw10 & 0xffu) == NVME_FEAT_ASYNC_EVENT_CONFIGURATION &&
		    (g_pending[i]->cmd.cdw11 & g_refuse_aec) != 0) {
			cpl.status.sc = NVME_SC_INVALID_FIELD;
		}
		g_fire_aer = aer ? false : g_fire_aer; /* one event per request */
		complete_pending(qpair, i, &cpl);
		n++;
	}
	return n;
}

bool
nvme_qpair_orphan_request(struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb, void *cb_arg,
			  nvp_nvme_cmd_cb new_cb, void *new_arg, uint16_t *cid)
{
	uint32_t i;

	(void)qpair;
	for (i = 0; i < g_num_pending; i++) {
		if (g_pending[i]->cb_fn == cb && g_pending[i]->cb_arg == cb_arg) {
			g_pending[i]->cb_fn = new_cb;
			g_pending[i]->cb_arg = new_arg;
			*cid = (uint16_t)(40 + i);
			return true;
		}
	}
	return false;
}

/* ---- stubs of the other neighbours ---- */

static bool g_health_failed;
static uint32_t g_reidentify_calls, g_active_ns_calls;
static uint32_t g_reidentify_nsid;

/* A reset ends every admin command the device had with ABORTED SQ DELETION. */
static int
fake_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cpl cpl;

	g_reset_calls++;
	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sc = NVME_SC_ABORTED_SQ_DELETION;
	while (g_num_pending > 0) {
		complete_pending(ctrlr->adminq, 0, &cpl);
	}
	return 0;
}

/* The controller's health check, as its recovery table offers it. */
static bool
fake_check_health(struct nvp_nvme_ctrlr *ctrlr, const char *context)
{
	(void)context;
	if (g_health_failed) {
		atomic_store(&ctrlr->is_failed, true);
	}
	return g_health_failed;
}

static const struct nvme_ctrlr_recovery_ops g_fake_recovery = {
	.check_health = fake_check_health,
	.reset = fake_reset,
};

int
nvme_ctrlr_identify_namespaces(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	(void)ctrlr;
	g_reidentify_calls++;
	g_reidentify_nsid = nsid;
	return 0;
}

int
nvme_ctrlr_identify_active_ns(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_active_ns_calls++;
	return 0;
}

char *
nvp_nvme_cpl_fmt(char *buf, size_t len, const struct nvme_cpl *cpl)
{
	snprintf(buf, len, "sc 0x%x", cpl->status.sc);
	return buf;
}

void
nvme_cpl_log(const char *what, const struct nvme_cpl *cpl)
{
	(void)what;
	(void)cpl;
}

/* ---- fixture ---- */

#define NUM_REQS 16

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvp_nvme_qpair g_adminq;
static struct nvme_request g_reqs[NUM_REQS];

static void
setup(void)
{
	pthread_mutexattr_t attr;
	uint32_t i;

	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&g_ctrlr.adminq_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	nvp_strlcpy(g_ctrlr.name, "fake0", sizeof(g_ctrlr.name));
	g_ctrlr.recovery = &g_fake_recovery;
	g_ctrlr.ticks_hz = 1000000;
	g_ctrlr.page_size = 4096;
	g_ctrlr.max_xfer_size = 8192;
	g_ctrlr.opts.admin_timeout_ms = 50;
	memset(&g_adminq, 0, sizeof(g_adminq));
	g_adminq.ctrlr = &g_ctrlr;
	g_adminq.is_admin = true;
	g_adminq.num_slots = 31;
	SLIST_INIT(&g_adminq.free_req);
	for (i = 0; i < NUM_REQS; i++) {
		SLIST_INSERT_HEAD(&g_adminq.free_req, &g_reqs[NUM_REQS - 1 - i], free_link);
	}
	g_ctrlr.adminq = &g_adminq;
	g_num_cmds = g_num_pending = 0;
	g_fill = 0;
	g_status_sc = 0;
	g_cdw0 = 0;
	g_hang = g_fire_aer = g_health_failed = g_stick = false;
	g_reset_calls = 0;
	g_submit_rc = 0;
	g_refuse_aec = 0;
	g_now = 1000;
	g_autotick = 0;
	g_reidentify_calls = g_active_ns_calls = 0;
	memset(g_seen, 0, sizeof(g_seen));
}

static void
teardown(void)
{
	pthread_mutex_destroy(&g_ctrlr.adminq_lock);
}

static struct nvme_cmd *
last_cmd(void)
{
	return &g_cmds[(g_num_cmds - 1) % MAX_CMDS];
}

/* ---- tests ---- */

static void
test_sync_success_and_copies(void)
{
	struct nvme_cpl cpl;
	uint32_t result = 0;
	uint8_t in[64], out[128];

	setup();
	/* Controller to host, any memory (the stack): copied back from the bounce. */
	g_fill = 0x5a;
	g_cdw0 = 0x1234;
	memset(out, 0, sizeof(out));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(&g_ctrlr, NVME_FEAT_TEMPERATURE_THRESHOLD,
						   NVME_FEAT_SEL_DEFAULT, 0x10, 0, &result, out,
						   sizeof(out), &cpl),
			0);
	CU_ASSERT_EQUAL(result, 0x1234);
	CU_ASSERT_EQUAL(cpl.cdw0, 0x1234);
	CU_ASSERT_EQUAL(out[0], 0x5a);
	CU_ASSERT_EQUAL(out[127], 0x5a);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_GET_FEATURES);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_FEAT_TEMPERATURE_THRESHOLD | (1u << 8));
	CU_ASSERT_EQUAL(last_cmd()->cdw11, 0x10);
	/* Host to controller: the device sees the caller's bytes. */
	memset(in, 0xc3, sizeof(in));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_set_feature(&g_ctrlr, NVME_FEAT_HOST_IDENTIFIER, 1, 2, 9,
						   true, NULL, in, sizeof(in), NULL),
			0);
	CU_ASSERT_EQUAL(g_seen[0], 0xc3);
	CU_ASSERT_EQUAL(g_seen[63], 0xc3);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_FEAT_HOST_IDENTIFIER | (1u << 31));
	CU_ASSERT_EQUAL(last_cmd()->cdw12, 2);
	CU_ASSERT_EQUAL(last_cmd()->nsid, 9);
	CU_ASSERT_EQUAL(g_num_pending, 0);
	teardown();
}

static void
test_sync_error_status(void)
{
	struct nvme_cpl cpl;
	uint8_t out[64];

	setup();
	g_status_sc = NVME_SC_INVALID_FIELD;
	g_fill = 0x11;
	memset(out, 0, sizeof(out));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_get_feature(&g_ctrlr, 0x7f, 0, 0, 0, NULL, out, sizeof(out), &cpl),
		-EIO);
	CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_INVALID_FIELD);
	CU_ASSERT_EQUAL(out[0], 0); /* nothing copied back on error */
	teardown();
}

static void
test_sync_bad_args(void)
{
	struct nvme_cmd cmd;
	uint8_t big[16384];

	setup();
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, NULL, 512, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, big, sizeof(big), NULL),
			-EINVAL); /* above the max transfer */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(NULL, &cmd, NULL, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, NULL, NULL, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(g_num_cmds, 0);
	/* No request object free. */
	g_submit_rc = -ENOMEM;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, NULL, 0, NULL), -ENOMEM);
	teardown();
}

static void
test_sync_timeout(void)
{
	struct nvme_cmd cmd;
	uint8_t out[512];

	setup();
	g_hang = true;
	g_autotick = 1000; /* 1 ms per look at the clock */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, out, sizeof(out), NULL),
			-ETIMEDOUT);
	CU_ASSERT_TRUE(ut_log_has("did not complete within 50 ms"));
	/* The command was orphaned (its callback no longer points at the waiter) and an
	 * Abort for it sent. */
	CU_ASSERT_EQUAL(g_num_cmds, 2);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_ABORT);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_ABORT_CDW10(0, 40));
	CU_ASSERT_PTR_EQUAL(g_pending[0]->cb_fn, orphan_cb);
	/* When it does complete, its bounce buffer is freed, nothing else happens. */
	g_hang = false;
	nvme_qpair_process(&g_adminq, 0);
	CU_ASSERT_EQUAL(g_num_pending, 0);
	teardown();
}

/*
 * A poll finds the admin CQ stuck: the waiter resets the controller once (the admin queue
 * is rebuilt), and its command ends with the reset's ABORTED SQ DELETION, not a timeout.
 * The same through the application's admin poll.
 */
static void
test_admin_cq_stuck_resets(void)
{
	struct nvme_cpl cpl;
	struct nvme_cmd cmd;

	setup();
	g_hang = true;
	g_stick = true;
	g_autotick = 1000;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_FEATURES;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(g_reset_calls, 1);
	CU_ASSERT_FALSE(g_adminq.cq_stuck);
	CU_ASSERT_EQUAL(g_num_cmds, 1); /* no Abort: nothing timed out */

	g_stick = true;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_process_admin_completions(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_reset_calls, 2);
	CU_ASSERT_FALSE(g_adminq.cq_stuck);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_process_admin_completions(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_reset_calls, 2); /* once per stuck CQ */
	teardown();
}

static void
test_sync_failed_ctrlr(void)
{
	struct nvme_cmd cmd;

	setup();
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_FEATURES;
	/* Failing while we wait. */
	g_hang = true;
	g_autotick = 1000;
	g_health_failed = true;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, NULL, 0, NULL), -ENXIO);
	CU_ASSERT_EQUAL(g_num_pending, 0);
	/* Already failed. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(&g_ctrlr, &cmd, NULL, 0, NULL), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(&g_ctrlr, &cmd, NULL, 0, NULL, NULL), -ENXIO);
	teardown();
}

static void
test_identify(void)
{
	struct nvme_cpl cpl;
	uint8_t small[100];

	setup();
	g_fill = 0x77;
	memset(small, 0, sizeof(small));
	/* A short buffer still gets a whole 4 KiB transfer underneath. */
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(&g_ctrlr, NVME_IDENTIFY_NS, 4, small, sizeof(small), &cpl),
		0);
	CU_ASSERT_EQUAL(small[99], 0x77);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_IDENTIFY);
	CU_ASSERT_EQUAL(last_cmd()->nsid, 4);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_IDENTIFY_NS);
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_identify_ctrlr(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_ctrlr.cdata.vs[1023], 0x77);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_IDENTIFY_CTRLR);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(&g_ctrlr, 1, 0, small, 5000, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_identify(&g_ctrlr, 1, 0, NULL, 64, NULL), -EINVAL);
	teardown();
}

static void
test_log_page(void)
{
	uint8_t buf[512];

	setup();
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(&g_ctrlr, NVME_LOG_HEALTH_INFORMATION,
						    NVME_GLOBAL_NS_TAG, buf, sizeof(buf),
						    0x100000008ull, NULL),
			0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_GET_LOG_PAGE);
	CU_ASSERT_EQUAL(last_cmd()->nsid, NVME_GLOBAL_NS_TAG);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, (127u << 16) | NVME_LOG_HEALTH_INFORMATION);
	CU_ASSERT_EQUAL(last_cmd()->cdw11, 0);
	CU_ASSERT_EQUAL(last_cmd()->cdw12, 8);
	CU_ASSERT_EQUAL(last_cmd()->cdw13, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(&g_ctrlr, 1, 0, buf, 510, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(&g_ctrlr, 1, 0, buf, 0, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(&g_ctrlr, 1, 0, buf, 512, 2, NULL), -EINVAL);
	teardown();
}

static void
test_queue_commands(void)
{
	setup();
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_create_io_cq(&g_ctrlr, 3, -1, 256, 0xabc000), 0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_CREATE_IO_CQ);
	CU_ASSERT_EQUAL(last_cmd()->dptr.prp.prp1, 0xabc000); /* the ring, kept */
	CU_ASSERT_EQUAL(last_cmd()->cdw10, (255u << 16) | 3);
	CU_ASSERT_EQUAL(last_cmd()->cdw11, NVME_CREATE_IO_CQ_PC); /* no interrupts */
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_create_io_cq(&g_ctrlr, 3, 5, 256, 0xabc000), 0);
	CU_ASSERT_EQUAL(last_cmd()->cdw11,
			NVME_CREATE_IO_CQ_PC | NVME_CREATE_IO_CQ_IEN | (5u << 16)); /* IV 5 */
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_create_io_sq(&g_ctrlr, 3, 256, 0xdef000, 2), 0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_CREATE_IO_SQ);
	CU_ASSERT_EQUAL(last_cmd()->dptr.prp.prp1, 0xdef000);
	CU_ASSERT_EQUAL(last_cmd()->cdw11, (3u << 16) | (2u << 1) | NVME_CREATE_IO_SQ_PC);
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_delete_io_queue(&g_ctrlr, NVME_OPC_DELETE_IO_SQ, 3), 0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_DELETE_IO_SQ);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, 3);
	/* A refusal is -EIO and logged with the status. */
	g_status_sc = NVME_SC_INVALID_FIELD;
	ut_log_clear();
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_create_io_cq(&g_ctrlr, 3, -1, 256, 0xabc000), -EIO);
	CU_ASSERT_TRUE(ut_log_has("Create I/O CQ 3 failed"));
	teardown();
}

static void
test_num_queues(void)
{
	uint32_t granted = 0;

	setup();
	g_cdw0 = (7u << 16) | 15u; /* 8 CQs, 16 SQs */
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_set_num_queues(&g_ctrlr, 64, &granted), 0);
	CU_ASSERT_EQUAL(granted, 8);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, NVME_FEAT_NUMBER_OF_QUEUES);
	CU_ASSERT_EQUAL(last_cmd()->cdw11, (63u << 16) | 63u);
	teardown();
}

static void
test_fw_download(void)
{
	static uint8_t image[20480];
	uint32_t i;

	setup();
	for (i = 0; i < sizeof(image); i++) {
		image[i] = (uint8_t)(i / 4096);
	}
	/* Max transfer 8 KiB, FWUG 4 KiB: chunks of 8 KiB, the last 4 KiB. */
	g_ctrlr.cdata.fwug = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, sizeof(image), NULL), 0);
	CU_ASSERT_EQUAL(g_num_cmds, 3);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(g_cmds[i].opc, NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD);
		CU_ASSERT_EQUAL(g_cmds[i].cdw11, i * 8192 / 4);
	}
	CU_ASSERT_EQUAL(g_cmds[0].cdw10, 8192 / 4 - 1);
	CU_ASSERT_EQUAL(g_cmds[2].cdw10, 4096 / 4 - 1);
	CU_ASSERT_EQUAL(g_seen[0], 4); /* the last chunk's bytes reached the device */
	/* FWUG 3 x 4 KiB (12 KiB) above the 8 KiB max transfer: cannot be honoured. */
	g_ctrlr.cdata.fwug = 3;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, sizeof(image), NULL), -EINVAL);
	/* FWUG 0xff: no restriction. */
	g_ctrlr.cdata.fwug = 0xff;
	g_num_cmds = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, 10000, NULL), 0);
	CU_ASSERT_EQUAL(g_num_cmds, 2);
	CU_ASSERT_EQUAL(g_cmds[1].cdw10, (10000 - 8192) / 4 - 1);
	/* Sizes that are not whole dwords, nothing to send. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, 10, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, 0, NULL), -EINVAL);
	/* A failing chunk stops the download. */
	g_status_sc = NVME_SC_INVALID_FIELD;
	g_num_cmds = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_download(&g_ctrlr, image, sizeof(image), NULL), -EIO);
	CU_ASSERT_EQUAL(g_num_cmds, 1);
	teardown();
}

static void
test_fw_commit(void)
{
	union nvme_fw_commit_cdw10 c;

	setup();
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_fw_commit(&g_ctrlr, 2, NVME_FW_COMMIT_REPLACE_AND_ENABLE, NULL), 0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_FIRMWARE_COMMIT);
	c.raw = last_cmd()->cdw10;
	CU_ASSERT_EQUAL(c.bits.fs, 2);
	CU_ASSERT_EQUAL(c.bits.ca, NVME_FW_COMMIT_REPLACE_AND_ENABLE);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fw_commit(&g_ctrlr, 8, 0, NULL), -EINVAL);
	teardown();
}

static void
test_admin_raw(void)
{
	struct nvme_cmd cmd;
	uint8_t *dma = nvp_env_dma_zmalloc(4096, 4096, NULL);

	setup();
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.dptr.prp.prp1 = 0x1111;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(&g_ctrlr, &cmd, dma, 4096, NULL, NULL), 0);
	CU_ASSERT_EQUAL(last_cmd()->dptr.prp.prp1, 0); /* the driver owns the data pointer */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(&g_ctrlr, &cmd, dma + 1, 64, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(&g_ctrlr, &cmd, NULL, 64, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(&g_ctrlr, &cmd, dma, 16384, NULL, NULL),
			-EINVAL);
	CU_ASSERT(nvp_nvme_ctrlr_process_admin_completions(&g_ctrlr) >= 1);
	nvp_env_dma_free(dma);
	teardown();
}

static void *
lock_holder(void *arg)
{
	volatile int *state = arg;

	nvme_ctrlr_lock(&g_ctrlr);
	*state = 1;
	while (*state == 1) {
		nvp_pause();
	}
	nvme_ctrlr_unlock(&g_ctrlr);
	return NULL;
}

static void
test_abort_trylock(void)
{
	volatile int state = 0;
	pthread_t t;

	setup();
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_abort(&g_ctrlr, 3, 17, NULL, NULL, true), 0);
	CU_ASSERT_EQUAL(last_cmd()->opc, NVME_OPC_ABORT);
	CU_ASSERT_EQUAL(last_cmd()->cdw10, (17u << 16) | 3u);
	/* Another thread holds the admin queue: the I/O path does not wait. */
	pthread_create(&t, NULL, lock_holder, (void *)&state);
	while (state == 0) {
		nvp_pause();
	}
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_abort(&g_ctrlr, 3, 18, NULL, NULL, true), -EAGAIN);
	CU_ASSERT_EQUAL(nvme_ctrlr_process_admin_trylock(&g_ctrlr), 0);
	state = 2;
	pthread_join(t, NULL);
	/* No request object: also "try again". */
	g_submit_rc = -ENOMEM;
	CU_ASSERT_EQUAL(nvme_ctrlr_cmd_abort(&g_ctrlr, 3, 18, NULL, NULL, true), -EAGAIN);
	teardown();
}

static struct {
	uint32_t calls;
	uint32_t cdw0;
} g_user_aer;

static void
user_aer_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	g_user_aer.calls++;
	g_user_aer.cdw0 = cpl->cdw0;
}

static uint32_t
pending_aers(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < g_num_pending; i++) {
		n += g_pending[i]->cmd.opc == NVME_OPC_ASYNC_EVENT_REQUEST;
	}
	return n;
}

static void
test_aer(void)
{
	union nvme_async_event_completion ev = { .raw = 0 };
	struct nvme_cpl cpl;

	setup();
	memset(&g_user_aer, 0, sizeof(g_user_aer));
	g_ctrlr.cdata.aerl = 7; /* 8 allowed: we keep 4 */
	g_adminq.num_slots = 3; /* but no more than half the admin slots */
	CU_ASSERT_EQUAL(nvme_ctrlr_configure_aer(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(pending_aers(), 1);
	teardown();
	setup();
	g_ctrlr.cdata.aerl = 7;
	g_ctrlr.cdata.oaes = 1u << 8;
	nvp_nvme_ctrlr_register_aer_callback(&g_ctrlr, user_aer_cb, NULL);
	CU_ASSERT_EQUAL(nvme_ctrlr_configure_aer(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_cmds[0].opc, NVME_OPC_SET_FEATURES);
	CU_ASSERT_EQUAL(g_cmds[0].cdw10, NVME_FEAT_ASYNC_EVENT_CONFIGURATION);
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 0xffu | (1u << 8));
	CU_ASSERT_EQUAL(pending_aers(), 4);
	/* AERs are held while other commands complete. */
	nvme_qpair_process(&g_adminq, 0);
	CU_ASSERT_EQUAL(pending_aers(), 4);
	/* An event: the user hears of it, the request is re-armed. */
	ev.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_SMART;
	ev.bits.async_event_info = NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD;
	g_aer_cdw0 = ev.raw;
	g_fire_aer = true;
	nvp_nvme_ctrlr_process_admin_completions(&g_ctrlr);
	CU_ASSERT_EQUAL(g_user_aer.calls, 1);
	CU_ASSERT_EQUAL(g_user_aer.cdw0, ev.raw);
	CU_ASSERT_EQUAL(pending_aers(), 4);
	/* A namespace change: the driver reads the changed list and re-identifies. */
	ev.raw = 0;
	ev.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_NOTICE;
	ev.bits.async_event_info = NVME_ASYNC_EVENT_NS_ATTR_CHANGED;
	g_aer_cdw0 = ev.raw;
	g_fire_aer = true;
	nvp_nvme_ctrlr_process_admin_completions(&g_ctrlr);
	CU_ASSERT_EQUAL(g_user_aer.calls, 2);
	CU_ASSERT_EQUAL(g_active_ns_calls, 1);
	CU_ASSERT_EQUAL(g_reidentify_calls, 1);
	CU_ASSERT_EQUAL(pending_aers(), 4);
	/* Deleted with the queue (reset, detach): neither reported nor re-armed. */
	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sc = NVME_SC_ABORTED_SQ_DELETION;
	complete_pending(&g_adminq, 0, &cpl);
	CU_ASSERT_EQUAL(g_user_aer.calls, 2);
	CU_ASSERT_EQUAL(pending_aers(), 3);
	/* Refused (limit exceeded): not re-armed. */
	cpl.status.sct = NVME_SCT_COMMAND_SPECIFIC;
	cpl.status.sc = NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED;
	complete_pending(&g_adminq, 0, &cpl);
	CU_ASSERT_EQUAL(pending_aers(), 2);
	CU_ASSERT_EQUAL(g_user_aer.calls, 2);
	teardown();
}

/* A controller that takes only the notices OAES lists (the kernel's nvmet refuses the
 * critical warning bits): the driver asks again for those alone, and still arms AERs. */
static void
test_aer_config_fallback(void)
{
	setup();
	g_ctrlr.cdata.aerl = 3;
	g_ctrlr.cdata.oaes = 1u << 8;
	g_refuse_aec = 0xffu;
	CU_ASSERT_EQUAL(nvme_ctrlr_configure_aer(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 0xffu | (1u << 8));
	CU_ASSERT_EQUAL(g_cmds[1].opc, NVME_OPC_SET_FEATURES);
	CU_ASSERT_EQUAL(g_cmds[1].cdw10, NVME_FEAT_ASYNC_EVENT_CONFIGURATION);
	CU_ASSERT_EQUAL(g_cmds[1].cdw11, 1u << 8);
	CU_ASSERT_EQUAL(pending_aers(), 4);
	teardown();
	/* Without an OAES notice there is nothing to fall back to: one try. */
	setup();
	g_ctrlr.cdata.aerl = 3;
	g_refuse_aec = 0xffu;
	CU_ASSERT_EQUAL(nvme_ctrlr_configure_aer(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_cmds[0].cdw11, 0xffu);
	CU_ASSERT_EQUAL(g_cmds[1].opc, NVME_OPC_ASYNC_EVENT_REQUEST);
	CU_ASSERT_EQUAL(pending_aers(), 4);
	teardown();
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_ctrlr_cmd", (CU_InitializeFunc)ut_env_init, NULL);
	CU_ADD_TEST(s, test_sync_success_and_copies);
	CU_ADD_TEST(s, test_sync_error_status);
	CU_ADD_TEST(s, test_sync_bad_args);
	CU_ADD_TEST(s, test_sync_timeout);
	CU_ADD_TEST(s, test_sync_failed_ctrlr);
	CU_ADD_TEST(s, test_admin_cq_stuck_resets);
	CU_ADD_TEST(s, test_identify);
	CU_ADD_TEST(s, test_log_page);
	CU_ADD_TEST(s, test_queue_commands);
	CU_ADD_TEST(s, test_num_queues);
	CU_ADD_TEST(s, test_aer_config_fallback);
	CU_ADD_TEST(s, test_fw_download);
	CU_ADD_TEST(s, test_fw_commit);
	CU_ADD_TEST(s, test_admin_raw);
	CU_ADD_TEST(s, test_abort_trylock);
	CU_ADD_TEST(s, test_aer);
	return ut_run();
}
