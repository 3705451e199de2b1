/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the controller (nvme_ctrlr.c): the init state machine driven step by
 * step against a fake register file and a fake clock (happy path, RDY never rising,
 * CSTS.CFS, registers reading all ones, RDY never falling, missing NVM command set),
 * page size and MDTS, shutdown, health checks, reset, and I/O qpair allocation limits.
 */
/* The driver runs on this test's clock (see nvme_ticks()). */
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_ctrlr.c"
#include "nvme/nvme_fiber.c"

/* No reconnect here: nothing for a detach or a qpair free to finish. */
void
nvme_ctrlr_reconnect_finish(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

#include "ut_nvme.h"

/* ---- fake clock: 1 tick = 1 us; optionally advancing by itself ---- */

static uint64_t g_now;
static uint64_t g_autotick;

static uint64_t
ut_ticks(void)
{
	g_now += g_autotick;
	return g_now;
}

/* ---- a fake controller behind the register accessors ---- */

enum dev_mode {
	DEV_NORMAL,
	DEV_RDY_NEVER,
	DEV_CFS,
	DEV_ALL_ONES,
	DEV_ZEROS, /* QEMU after device_del: nothing answers the BAR, reads give zeros */
	DEV_STUCK_ENABLED,
	DEV_NO_SHUTDOWN
};

static struct nvme_registers g_regs;
static enum dev_mode g_mode;
static uint64_t g_en_changed; /* tick of the last CC.EN change */
static uint64_t g_rdy_delay;  /* ticks for RDY to follow EN */
static uint32_t g_admin_queue_set;
static uint32_t g_max_ioq;
static bool g_present; /* config space answers */

static uint32_t
fake_csts(void)
{
	union nvme_csts_register csts = { .raw = 0 };
	bool settled = g_now >= g_en_changed + g_rdy_delay;

	if (g_mode == DEV_ALL_ONES) {
		return UINT32_MAX;
	}
	if (g_mode == DEV_ZEROS) {
		return 0;
	}
	csts.bits.rdy = g_regs.cc.bits.en;
	if (!settled) {
		csts.bits.rdy = !g_regs.cc.bits.en;
	}
	if (g_mode == DEV_RDY_NEVER && g_regs.cc.bits.en && g_en_changed != 0) {
		csts.bits.rdy = 0;
	}
	if (g_mode == DEV_STUCK_ENABLED) {
		csts.bits.rdy = 1;
	}
	if (g_mode == DEV_CFS) {
		csts.bits.cfs = 1;
	}
	if (g_regs.cc.bits.shn == NVME_SHN_NORMAL && g_mode != DEV_NO_SHUTDOWN) {
		csts.bits.shst = NVME_SHST_COMPLETE;
	}
	return csts.raw;
}

static int
fake_get_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t *value)
{
	(void)ctrlr;
	if (offset == NVME_REG_CSTS) {
		*value = fake_csts();
	} else if (g_mode == DEV_ALL_ONES) {
		*value = UINT32_MAX;
	} else {
		memcpy(value, (uint8_t *)&g_regs + offset, 4);
	}
	return 0;
}

static bool
fake_is_present(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return g_present;
}

static int
fake_set_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t value)
{
	(void)ctrlr;
	if (offset == NVME_REG_CC) {
		union nvme_cc_register cc = { .raw = value };

		if (cc.bits.en != g_regs.cc.bits.en) {
			g_en_changed = g_now;
		}
	}
	memcpy((uint8_t *)&g_regs + offset, &value, 4);
	return 0;
}

static int
fake_enable_admin_queue(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_admin_queue_set++;
	g_regs.aqa.raw = 0x001f001f;
	return 0;
}

static uint32_t
fake_max_io_queues(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return g_max_ioq;
}

/* I/O qpairs of the fake transport. */
static uint32_t g_qp_connects, g_qp_disconnects, g_qp_destroys;
static int g_qp_connect_rc;

static int
fake_qpair_create(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid,
		  const struct nvp_nvme_io_qpair_opts *opts, struct nvp_nvme_qpair **out)
{
	struct nvp_nvme_qpair *q = calloc(1, sizeof(*q));

	q->ctrlr = ctrlr;
	q->transport = ctrlr->transport;
	q->id = qid;
	q->num_entries = opts->io_queue_size;
	q->owner = pthread_self();
	*out = q;
	return 0;
}

static void
fake_qpair_destroy(struct nvp_nvme_qpair *q)
{
	g_qp_destroys++;
	free(q);
}

static int
fake_qpair_connect(struct nvp_nvme_qpair *q)
{
	(void)q;
	g_qp_connects++;
	return g_qp_connect_rc;
}

static int
fake_qpair_disconnect(struct nvp_nvme_qpair *q)
{
	(void)q;
	g_qp_disconnects++;
	return 0;
}

/* The transport names the cause of all-ones registers; the messages carry it. */
static const char *
fake_all_ones_cause(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return "registers read all ones: the fake transport's cause";
}

static const struct nvme_transport_ops g_fake_ops = {
	.name = "fake",
	.ctrlr_all_ones_cause = fake_all_ones_cause,
	.ctrlr_get_reg_4 = fake_get_reg_4,
	.ctrlr_set_reg_4 = fake_set_reg_4,
	.ctrlr_enable_admin_queue = fake_enable_admin_queue,
	.ctrlr_get_max_io_queues = fake_max_io_queues,
	.ctrlr_is_present = fake_is_present,
	.qpair_create = fake_qpair_create,
	.qpair_destroy = fake_qpair_destroy,
	.qpair_connect = fake_qpair_connect,
	.qpair_disconnect = fake_qpair_disconnect,
};

/* ---- stubs of the neighbours ---- */

static uint32_t g_identifies, g_granted, g_aer_configs, g_admin_aborts;
static bool g_admin_abort_dnr;
static uint8_t g_mdts;
static int g_identify_rc;

/* The admin lock, as nvme_ctrlr_cmd.c has it. */
void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_lock(&ctrlr->adminq_lock);
}

bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	return pthread_mutex_trylock(&ctrlr->adminq_lock) == 0;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_unlock(&ctrlr->adminq_lock);
}

void
nvme_ctrlr_opts_copy(struct nvp_nvme_ctrlr_opts *dst, const struct nvp_nvme_ctrlr_opts *src)
{
	*dst = *src;
}

int
nvme_ctrlr_cmd_identify_ctrlr(struct nvp_nvme_ctrlr *ctrlr)
{
	g_identifies++;
	ctrlr->cdata.mdts = g_mdts;
	return g_identify_rc;
}

int
nvme_ctrlr_cmd_set_num_queues(struct nvp_nvme_ctrlr *ctrlr, uint32_t wanted, uint32_t *granted)
{
	(void)ctrlr;
	(void)wanted;
	*granted = g_granted;
	return 0;
}

int
nvme_ctrlr_identify_active_ns(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 0;
}

int
nvme_ctrlr_identify_namespaces(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	(void)ctrlr;
	CU_ASSERT_EQUAL(nsid, NVME_GLOBAL_NS_TAG);
	return 0;
}

int
nvme_ctrlr_configure_aer(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_aer_configs++;
	return 0;
}

void
nvme_ctrlr_free_namespaces(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

/* Named in the table the qpairs' recovery reaches this controller by; not used here. */
int
nvme_ctrlr_submit_admin(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	(void)ctrlr;
	(void)cmd;
	(void)buf;
	(void)len;
	(void)cb;
	(void)cb_arg;
	return -ENOSYS;
}

int32_t
nvme_ctrlr_process_admin_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 0;
}

void
nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc, bool dnr)
{
	(void)qpair;
	CU_ASSERT_EQUAL(sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(sc, NVME_SC_ABORTED_SQ_DELETION);
	g_admin_aborts++;
	g_admin_abort_dnr = dnr;
}

void
nvme_qpair_neuter_aborts(struct nvp_nvme_qpair *adminq, struct nvp_nvme_qpair *qpair)
{
	(void)adminq;
	(void)qpair;
}

void
nvme_qpair_conn_start_create(struct nvp_nvme_qpair *qpair)
{
	qpair->conn_state = NVME_QP_CREATING;
	qpair->reset_gen = atomic_load(&qpair->ctrlr->reset_gen);
}

bool
nvme_db_fence_asym(void)
{
	return false;
}

void
nvme_db_fence_remote(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

/* ---- fixture ---- */

static struct nvp_nvme_ctrlr *g_ctrlr;
static struct nvp_nvme_qpair g_adminq;

static void
setup(enum dev_mode mode)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts opts;
	union nvme_cap_register cap = { .raw = 0 };
	union nvme_vs_register vs = { .raw = NVME_VERSION(1, 4, 0) };

	memset(&g_regs, 0, sizeof(g_regs));
	g_mode = mode;
	g_now = 100000; /* long after the last EN change: settled */
	g_autotick = 0;
	g_en_changed = 0;
	g_rdy_delay = 2000;
	g_admin_queue_set = g_identifies = g_aer_configs = 0;
	g_admin_aborts = 0;
	g_qp_connects = g_qp_disconnects = g_qp_destroys = 0;
	g_qp_connect_rc = 0;
	g_identify_rc = 0;
	g_granted = 8;
	g_max_ioq = 511;
	g_present = true;
	g_mdts = 5;
	memset(&trid, 0, sizeof(trid));
	nvp_strlcpy(trid.name, "fake0", sizeof(trid.name));
	memset(&opts, 0, sizeof(opts));
	opts.num_io_queues = 4;
	opts.io_queue_size = 256;
	opts.io_queue_requests = 1024;
	opts.max_io_size = 2 * 1024 * 1024;
	opts.admin_timeout_ms = 1000;
	g_ctrlr = calloc(1, sizeof(*g_ctrlr));
	CU_ASSERT_EQUAL_FATAL(nvme_ctrlr_construct(g_ctrlr, &trid, &opts, &g_fake_ops), 0);
	g_ctrlr->ticks_hz = 1000000;
	memset(&g_adminq, 0, sizeof(g_adminq));
	g_ctrlr->adminq = &g_adminq;
	cap.bits.mqes = 1023;
	cap.bits.to = 2; /* 1 s */
	cap.bits.css = NVME_CAP_CSS_NVM;
	g_regs.cap = cap;
	g_regs.vs = vs;
	/* Enabled and ready, as a previous user may have left it. */
	g_regs.cc.bits.en = 1;
	CU_ASSERT_EQUAL_FATAL(nvme_ctrlr_set_cap_vs(g_ctrlr, cap, vs), 0);
}

static void
teardown(void)
{
	nvme_ctrlr_destruct(g_ctrlr);
	free(g_ctrlr);
	g_ctrlr = NULL;
}

/* One step; \return the state afterwards. */
static enum nvme_ctrlr_state
step(int expect_rc)
{
	CU_ASSERT_EQUAL(nvme_ctrlr_process_init(g_ctrlr), expect_rc);
	return g_ctrlr->state;
}

/* Step until @state (at most @max steps). */
static void
step_to(enum nvme_ctrlr_state state)
{
	uint32_t i;

	for (i = 0; i < 100 && g_ctrlr->state != state; i++) {
		CU_ASSERT_EQUAL_FATAL(nvme_ctrlr_process_init(g_ctrlr), 0);
		g_now += 1000;
	}
	CU_ASSERT_EQUAL(g_ctrlr->state, state);
}

/* ---- tests ---- */

static void
test_init_happy_path(void)
{
	union nvme_cc_register cc;

	setup(DEV_NORMAL);
	CU_ASSERT_EQUAL(g_ctrlr->state, NVME_CTRLR_STATE_DISABLE);
	/* DISABLE clears CC.EN... */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0);
	CU_ASSERT_EQUAL(g_regs.cc.bits.en, 0);
	/* ...and waits while RDY is still 1. */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0);
	g_now += g_rdy_delay;
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_SET_ADMIN_QUEUE);
	CU_ASSERT_EQUAL(g_admin_queue_set, 0);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_ENABLE);
	CU_ASSERT_EQUAL(g_admin_queue_set, 1);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	cc = g_regs.cc;
	CU_ASSERT_EQUAL(cc.bits.en, 1);
	CU_ASSERT_EQUAL(cc.bits.css, 0);
	CU_ASSERT_EQUAL(cc.bits.mps, 0); /* 4 KiB host pages */
	CU_ASSERT_EQUAL(cc.bits.ams, 0);
	CU_ASSERT_EQUAL(cc.bits.shn, 0);
	CU_ASSERT_EQUAL(cc.bits.iosqes, 6);
	CU_ASSERT_EQUAL(cc.bits.iocqes, 4);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	g_now += g_rdy_delay;
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_IDENTIFY);
	CU_ASSERT_EQUAL(g_identifies, 0);
	/* The admin command states, with their commands stubbed. */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_SET_NUM_QUEUES);
	CU_ASSERT_EQUAL(g_identifies, 1);
	CU_ASSERT_EQUAL(g_ctrlr->max_xfer_size, 128 * 1024); /* MDTS 5 x 4 KiB */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS);
	CU_ASSERT_EQUAL(g_ctrlr->num_io_queues, 4); /* asked 4, granted 8 */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_IDENTIFY_NS);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_CONFIGURE_AER);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_READY);
	CU_ASSERT_EQUAL(g_aer_configs, 1);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_READY);
	CU_ASSERT_STRING_EQUAL(nvme_ctrlr_state_string(NVME_CTRLR_STATE_IDENTIFY_NS),
			       "IDENTIFY_NS");
	teardown();
}

static void
test_init_rdy_never_rises(void)
{
	setup(DEV_RDY_NEVER);
	step_to(NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	/* CAP.TO = 2: one second. Not yet... */
	g_now += 900000;
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	/* ...now. */
	ut_log_clear();
	g_now += 200000;
	CU_ASSERT_EQUAL(step(-ETIMEDOUT), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("ENABLE_WAIT_FOR_READY_1"));
	CU_ASSERT_TRUE(ut_log_has("RDY never rose: controller not responding or CAP.TO too "
				  "short"));
	CU_ASSERT_TRUE(ut_log_has("CAP 0x"));
	CU_ASSERT_TRUE(ut_log_has("VS 0x00010400"));
	CU_ASSERT_TRUE(ut_log_has("CC 0x00460001"));
	CU_ASSERT_TRUE(ut_log_has("CSTS 0x00000000"));
	CU_ASSERT_TRUE(ut_log_has("fake0"));
	/* ERROR stays ERROR. */
	CU_ASSERT_EQUAL(step(-EIO), NVME_CTRLR_STATE_ERROR);
	teardown();
}

static void
test_init_cfs(void)
{
	setup(DEV_CFS);
	/* A leftover CFS does not stop the reset (disable)... */
	step_to(NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	/* ...but once enabled it is fatal. */
	ut_log_clear();
	CU_ASSERT_EQUAL(step(-EIO), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("CSTS.CFS set: controller fatal error"));
	CU_ASSERT_TRUE(ut_log_has("ENABLE_WAIT_FOR_READY_1"));
	CU_ASSERT_TRUE(ut_log_has("CSTS 0x0000000")); /* CFS bit shown */
	teardown();
}

static void
test_init_all_ones(void)
{
	setup(DEV_ALL_ONES);
	ut_log_clear();
	CU_ASSERT_EQUAL(step(-EIO), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("registers read all ones: the fake transport's cause"));
	CU_ASSERT_TRUE(ut_log_has("in state DISABLE"));
	CU_ASSERT_TRUE(ut_log_has("CSTS 0xffffffff"));
	teardown();
	/* Also while waiting for RDY. */
	setup(DEV_NORMAL);
	step_to(NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1);
	g_mode = DEV_ALL_ONES;
	CU_ASSERT_EQUAL(step(-EIO), NVME_CTRLR_STATE_ERROR);
	teardown();
}

static void
test_init_rdy_never_falls(void)
{
	setup(DEV_STUCK_ENABLED);
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0);
	g_now += 1100000;
	ut_log_clear();
	CU_ASSERT_EQUAL(step(-ETIMEDOUT), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("RDY never fell"));
	CU_ASSERT_TRUE(ut_log_has("DISABLE_WAIT_FOR_READY_0"));
	teardown();
}

/* CC.EN = 1 but RDY not yet 1: wait for RDY (up to CAP.TO) before clearing EN. */
static void
test_init_disable_while_enabling(void)
{
	setup(DEV_NORMAL);
	g_en_changed = g_now; /* EN just went to 1 */
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_DISABLE);
	CU_ASSERT_EQUAL(g_regs.cc.bits.en, 1);
	g_now += g_rdy_delay;
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0);
	CU_ASSERT_EQUAL(g_regs.cc.bits.en, 0);
	teardown();
}

static void
test_init_no_nvm_css(void)
{
	setup(DEV_NORMAL);
	g_ctrlr->cap.bits.css = 0x80; /* admin only */
	step_to(NVME_CTRLR_STATE_ENABLE);
	ut_log_clear();
	CU_ASSERT_EQUAL(step(-EIO), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("NVM command set"));
	teardown();
}

static void
test_init_identify_fails(void)
{
	setup(DEV_NORMAL);
	step_to(NVME_CTRLR_STATE_IDENTIFY);
	g_identify_rc = -ETIMEDOUT;
	ut_log_clear();
	CU_ASSERT_EQUAL(step(-ETIMEDOUT), NVME_CTRLR_STATE_ERROR);
	CU_ASSERT_TRUE(ut_log_has("Identify Controller failed in state IDENTIFY"));
	teardown();
}

static void
test_init_loop(void)
{
	setup(DEV_NORMAL);
	g_rdy_delay = 0;
	CU_ASSERT_EQUAL(nvme_ctrlr_init(g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_ctrlr->state, NVME_CTRLR_STATE_READY);
	teardown();
	setup(DEV_RDY_NEVER);
	g_autotick = 100000; /* the clock runs: 100 ms per look */
	CU_ASSERT_EQUAL(nvme_ctrlr_init(g_ctrlr), -ETIMEDOUT);
	teardown();
}

static void
test_page_size_and_limits(void)
{
	union nvme_cap_register cap = { .raw = 0 };
	union nvme_vs_register vs = { .raw = 0 };

	setup(DEV_NORMAL);
	/* MPSMIN 1: 8 KiB pages even on a 4 KiB host. */
	cap.bits.css = NVME_CAP_CSS_NVM;
	cap.bits.to = 2;
	cap.bits.mpsmin = 1;
	cap.bits.mpsmax = 4;
	CU_ASSERT_EQUAL(nvme_ctrlr_set_cap_vs(g_ctrlr, cap, vs), 0);
	CU_ASSERT_EQUAL(g_ctrlr->page_size, 8192);
	cap.bits.mpsmin = 0;
	cap.bits.mpsmax = 0;
	CU_ASSERT_EQUAL(nvme_ctrlr_set_cap_vs(g_ctrlr, cap, vs), 0);
	CU_ASSERT_EQUAL(g_ctrlr->page_size, 4096);
	cap.bits.mpsmin = 2;
	cap.bits.mpsmax = 1;
	CU_ASSERT_EQUAL(nvme_ctrlr_set_cap_vs(g_ctrlr, cap, vs), -EIO);
	/* MDTS 0 = no limit but opts.max_io_size; MDTS in units of MPSMIN. */
	cap.bits.mpsmin = 0;
	cap.bits.mpsmax = 4;
	nvme_ctrlr_set_cap_vs(g_ctrlr, cap, vs);
	g_ctrlr->cdata.mdts = 0;
	update_max_xfer(g_ctrlr);
	CU_ASSERT_EQUAL(g_ctrlr->max_xfer_size, 2 * 1024 * 1024);
	g_ctrlr->cdata.mdts = 3;
	update_max_xfer(g_ctrlr);
	CU_ASSERT_EQUAL(g_ctrlr->max_xfer_size, 32 * 1024);
	/* Granted queues are limited by the doorbells the transport can reach. */
	step_to(NVME_CTRLR_STATE_SET_NUM_QUEUES);
	g_max_ioq = 2;
	CU_ASSERT_EQUAL(step(0), NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS);
	CU_ASSERT_EQUAL(g_ctrlr->num_io_queues, 2);
	teardown();
}

static void
test_shutdown(void)
{
	setup(DEV_NORMAL);
	g_autotick = 1000;
	CU_ASSERT_EQUAL(nvme_ctrlr_shutdown(g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_regs.cc.bits.shn, NVME_SHN_NORMAL);
	CU_ASSERT_TRUE(g_ctrlr->shutdown_done);
	teardown();
	/* SHST never reports complete: bounded wait. */
	setup(DEV_NO_SHUTDOWN);
	g_autotick = 500000;
	CU_ASSERT_EQUAL(nvme_ctrlr_shutdown(g_ctrlr), -ETIMEDOUT);
	teardown();
	/* Abrupt detach: no notification at all. */
	setup(DEV_NORMAL);
	g_ctrlr->opts.no_shn_notification = true;
	CU_ASSERT_EQUAL(nvme_ctrlr_shutdown(g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_regs.cc.bits.shn, 0);
	teardown();
}

static void
test_health(void)
{
	setup(DEV_NORMAL);
	CU_ASSERT_FALSE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	g_mode = DEV_CFS;
	ut_log_clear();
	CU_ASSERT_TRUE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	CU_ASSERT_TRUE(ut_log_has("CSTS.CFS"));
	teardown();
	setup(DEV_NORMAL);
	g_mode = DEV_ALL_ONES;
	CU_ASSERT_TRUE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(g_ctrlr).raw, UINT32_MAX);
	teardown();
}

static void bring_up(void);

/* CSTS.RDY clear on a ready controller: removed if config space is gone, else failed. */
static void
test_health_rdy_lost(void)
{
	/* gone, with a BAR reading zeros */
	setup(DEV_NORMAL);
	bring_up();
	CU_ASSERT_FALSE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	g_mode = DEV_ZEROS;
	g_present = false;
	ut_log_clear();
	CU_ASSERT_TRUE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_removed(g_ctrlr));
	CU_ASSERT_TRUE(ut_log_has("no longer answers"));
	teardown();
	/* present: disabled behind our back, failed (a reset may bring it back), not removed */
	setup(DEV_NORMAL);
	bring_up();
	g_mode = DEV_ZEROS;
	ut_log_clear();
	CU_ASSERT_TRUE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_removed(g_ctrlr));
	CU_ASSERT_TRUE(ut_log_has("CSTS.RDY clear"));
	teardown();
	/* our own reset in progress, or not ready yet: RDY clear is expected */
	setup(DEV_NORMAL);
	bring_up();
	g_mode = DEV_ZEROS;
	g_present = false;
	atomic_store(&g_ctrlr->resetting, true);
	CU_ASSERT_FALSE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	atomic_store(&g_ctrlr->resetting, false);
	g_ctrlr->state = NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1;
	CU_ASSERT_FALSE(nvme_ctrlr_check_health(g_ctrlr, "test"));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	g_ctrlr->state = NVME_CTRLR_STATE_READY;
	teardown();
}

static void
bring_up(void)
{
	g_rdy_delay = 0;
	CU_ASSERT_EQUAL_FATAL(nvme_ctrlr_init(g_ctrlr), 0);
}

static void
test_alloc_io_qpair(void)
{
	struct nvp_nvme_io_qpair_opts opts;
	struct nvp_nvme_qpair *q[3];

	setup(DEV_NORMAL);
	g_granted = 2;
	bring_up();
	nvp_nvme_ctrlr_get_default_io_qpair_opts(g_ctrlr, &opts, sizeof(opts));
	CU_ASSERT_EQUAL(opts.io_queue_size, 256);
	CU_ASSERT_EQUAL(opts.io_queue_requests, 1024);
	/* The one check and clamp: 2 .. MQES + 1 (1024 here), or 2 .. 65536 unattached. */
	{
		uint32_t fitted = 0;

		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(g_ctrlr, 1024, &fitted), 0);
		CU_ASSERT_EQUAL(fitted, 1024);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(g_ctrlr, 1025, &fitted), -ERANGE);
		CU_ASSERT_EQUAL(fitted, 1024);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(g_ctrlr, 1, &fitted), -ERANGE);
		CU_ASSERT_EQUAL(fitted, 2);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(g_ctrlr, 2, NULL), 0);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(NULL, 65536, &fitted), 0);
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_fit_io_queue_size(NULL, 65537, &fitted), -ERANGE);
		CU_ASSERT_EQUAL(fitted, 65536);
	}
	/* Depth limits: 2 .. MQES + 1, requests >= entries. */
	opts.io_queue_size = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[0]), -EINVAL);
	opts.io_queue_size = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[0]), -EINVAL);
	opts.io_queue_size = 1025;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[0]), -EINVAL);
	opts.io_queue_size = 1024;
	opts.io_queue_requests = 1023;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[0]), -EINVAL);
	opts.io_queue_requests = 1024;
	/* Two queue ids granted: the third is -EBUSY. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[0]), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[1]), 0);
	CU_ASSERT_EQUAL(q[0]->id, 1);
	CU_ASSERT_EQUAL(q[1]->id, 2);
	CU_ASSERT_EQUAL(q[1]->num_entries, 256);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[2]), -EBUSY);
	CU_ASSERT_EQUAL(g_qp_connects, 2);
	/* Freeing gives the id back. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[0]), 0);
	CU_ASSERT_EQUAL(g_qp_disconnects, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[2]), 0);
	CU_ASSERT_EQUAL(q[2]->id, 1);
	/* The device refuses: -EIO, nothing left behind. */
	nvp_nvme_ctrlr_free_io_qpair(q[2]);
	g_qp_connect_rc = -EIO;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[2]), -EIO);
	g_qp_connect_rc = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[2]), 0);
	CU_ASSERT_EQUAL(q[2]->id, 1);
	/* async_mode: allocated, nothing sent; the owner's polls create the queues. Freed
	 * before any poll, nothing is deleted either. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[2]), 0);
	opts.async_mode = true;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, &opts, &q[2]), 0);
	CU_ASSERT_EQUAL(g_qp_connects, 5);
	CU_ASSERT_EQUAL(q[2]->conn_state, NVME_QP_CREATING);
	CU_ASSERT_TRUE(q[2]->opts.async_mode);
	CU_ASSERT_EQUAL(g_qp_disconnects, 3);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[2]), 0);
	CU_ASSERT_EQUAL(g_qp_disconnects, 3);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[2]), 0);
	CU_ASSERT_EQUAL(q[2]->conn_state, NVME_QP_CONNECTED);
	/* A failed controller. */
	atomic_store(&g_ctrlr->is_failed, true);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q[0]), -ENXIO);
	nvme_ctrlr_free_io_qpairs(g_ctrlr);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_ctrlr->io_qpairs));
	teardown();
}

static void
test_reset(void)
{
	struct nvp_nvme_qpair *q;
	uint32_t gen;

	setup(DEV_NORMAL);
	bring_up();
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(g_ctrlr, NULL, &q), 0);
	g_admin_queue_set = g_qp_connects = g_aer_configs = 0;
	gen = atomic_load(&g_ctrlr->reset_gen);
	CU_ASSERT_EQUAL(q->reset_gen, gen);
	atomic_store(&g_ctrlr->is_failed, true);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(g_ctrlr), 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	CU_ASSERT_EQUAL(g_admin_aborts, 1); /* admin requests completed */
	CU_ASSERT_FALSE(g_admin_abort_dnr); /* ...retryable: the controller is coming back */
	CU_ASSERT_EQUAL(g_admin_queue_set, 1);
	/* The I/O qpair is its owner's business: marked (a new generation), not touched by
	 * the resetting thread; its owner re-creates it at its next poll. */
	CU_ASSERT_EQUAL(atomic_load(&g_ctrlr->reset_gen), gen + 1);
	CU_ASSERT_EQUAL(g_ctrlr->adminq->reset_gen, gen + 1);
	CU_ASSERT_EQUAL(q->reset_gen, gen);
	CU_ASSERT_EQUAL(g_qp_connects, 0);
	CU_ASSERT_FALSE(atomic_load(&g_ctrlr->resetting));
	CU_ASSERT_EQUAL(g_aer_configs, 1);
	CU_ASSERT_EQUAL(g_ctrlr->state, NVME_CTRLR_STATE_READY);
	/* A controller that does not come back: failed. */
	g_mode = DEV_RDY_NEVER;
	g_autotick = 100000;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(g_ctrlr), -ETIMEDOUT);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(g_ctrlr));
	nvme_ctrlr_free_io_qpairs(g_ctrlr);
	teardown();
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_ctrlr", (CU_InitializeFunc)ut_env_init, NULL);
	CU_ADD_TEST(s, test_init_happy_path);
	CU_ADD_TEST(s, test_init_rdy_never_rises);
	CU_ADD_TEST(s, test_init_cfs);
	CU_ADD_TEST(s, test_init_all_ones);
	CU_ADD_TEST(s, test_init_rdy_never_falls);
	CU_ADD_TEST(s, test_init_disable_while_enabling);
	CU_ADD_TEST(s, test_init_no_nvm_css);
	CU_ADD_TEST(s, test_init_identify_fails);
	CU_ADD_TEST(s, test_init_loop);
	CU_ADD_TEST(s, test_page_size_and_limits);
	CU_ADD_TEST(s, test_shutdown);
	CU_ADD_TEST(s, test_health);
	CU_ADD_TEST(s, test_health_rdy_lost);
	CU_ADD_TEST(s, test_alloc_io_qpair);
	CU_ADD_TEST(s, test_reset);
	return ut_run();
}
