/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controllers: the initialisation state machine (NVMe 1.4 section 7.6.1), failure
 * detection, reset, shutdown (section 7.6.2), and the life of I/O queue pairs.
 *
 * The state machine advances one state per call of nvme_ctrlr_process_init(), reaching
 * the device only through the transport's register accessors and time only through
 * nvme_ticks() (a fake clock in unit builds), so a unit test can drive it step by step
 * against a fake register file. Every state has a name; a failure logs the state, CAP/VS/CC/CSTS and the likely
 * cause.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme_internal.h"

#define NVME_QID_BITMAP_WORDS (65536u / 64u)

static const char *const g_state_names[] = {
	[NVME_CTRLR_STATE_DISABLE] = "DISABLE",
	[NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0] = "DISABLE_WAIT_FOR_READY_0",
	[NVME_CTRLR_STATE_SET_ADMIN_QUEUE] = "SET_ADMIN_QUEUE",
	[NVME_CTRLR_STATE_ENABLE] = "ENABLE",
	[NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1] = "ENABLE_WAIT_FOR_READY_1",
	[NVME_CTRLR_STATE_IDENTIFY] = "IDENTIFY",
	[NVME_CTRLR_STATE_SET_NUM_QUEUES] = "SET_NUM_QUEUES",
	[NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS] = "IDENTIFY_ACTIVE_NS",
	[NVME_CTRLR_STATE_IDENTIFY_NS] = "IDENTIFY_NS",
	[NVME_CTRLR_STATE_CONFIGURE_AER] = "CONFIGURE_AER",
	[NVME_CTRLR_STATE_READY] = "READY",
	[NVME_CTRLR_STATE_ERROR] = "ERROR",
};

const char *
nvme_ctrlr_state_string(enum nvme_ctrlr_state state)
{
	if ((size_t)state >= NVP_COUNTOF(g_state_names) || g_state_names[state] == NULL) {
		return "UNKNOWN";
	}
	return g_state_names[state];
}

/* ---------------------------------------------------------------------------------------
 * Construction
 * ------------------------------------------------------------------------------------- */

static int
recovery_admin_submit(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, nvp_nvme_cmd_cb cb,
		      void *cb_arg)
{
	return nvme_ctrlr_submit_admin(ctrlr, cmd, NULL, 0, cb, cb_arg);
}

/* What the qpairs' recovery may ask of this controller (see the struct). */
static const struct nvme_ctrlr_recovery_ops g_recovery_ops = {
	.admin_trylock = nvme_ctrlr_trylock,
	.admin_lock = nvme_ctrlr_lock,
	.admin_unlock = nvme_ctrlr_unlock,
	.admin_submit = recovery_admin_submit,
	.admin_poll = nvme_ctrlr_process_admin_trylock,
	.check_health = nvme_ctrlr_check_health,
	.removed = nvme_ctrlr_removed,
	.fail = nvme_ctrlr_fail,
	.reset = nvp_nvme_ctrlr_reset,
};

int
nvme_ctrlr_construct(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts,
		     const struct nvme_transport_ops *transport)
{
	pthread_mutexattr_t attr;
	int rc;

	ctrlr->transport = transport;
	ctrlr->recovery = &g_recovery_ops;
	ctrlr->trid = *trid;
	nvme_ctrlr_opts_copy(&ctrlr->opts, opts);
	ctrlr->ticks_tsc = nvp_env_get_ticks_is_tsc();
	ctrlr->ticks_hz = nvp_env_get_ticks_hz();
	ctrlr->db_fence_asym = nvme_db_fence_asym();
	ctrlr->state = NVME_CTRLR_STATE_DISABLE;
	atomic_init(&ctrlr->is_failed, false);
	atomic_init(&ctrlr->reset_gen, 0);
	atomic_init(&ctrlr->removed, false);
	atomic_init(&ctrlr->resetting, false);
	atomic_init(&ctrlr->reconnecting, false);
	TAILQ_INIT(&ctrlr->io_qpairs);
	if (ctrlr->name[0] == '\0') {
		nvp_strlcpy(ctrlr->name, trid->name[0] ? trid->name : trid->traddr,
			    sizeof(ctrlr->name));
	}
	ctrlr->qid_bitmap = calloc(NVME_QID_BITMAP_WORDS, sizeof(uint64_t));
	if (ctrlr->qid_bitmap == NULL) {
		return -ENOMEM;
	}
	ctrlr->qid_bitmap[0] = 1; /* qid 0 is the admin queue */
	/* Recursive: an admin callback (AER) may issue admin commands. */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	rc = pthread_mutex_init(&ctrlr->adminq_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	if (rc != 0) {
		free(ctrlr->qid_bitmap);
		ctrlr->qid_bitmap = NULL;
		return -rc;
	}
	return 0;
}

void
nvme_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	nvme_ctrlr_free_namespaces(ctrlr);
	free(ctrlr->qid_bitmap);
	ctrlr->qid_bitmap = NULL;
	pthread_mutex_destroy(&ctrlr->adminq_lock);
}

/*
 * CAP and VS as read by the transport. The memory page size (CC.MPS) is the host's page
 * size clamped to [CAP.MPSMIN, CAP.MPSMAX]: PRP entries then describe host pages.
 */
int
nvme_ctrlr_set_cap_vs(struct nvp_nvme_ctrlr *ctrlr, union nvme_cap_register cap,
		      union nvme_vs_register vs)
{
	long host = sysconf(_SC_PAGESIZE);
	uint32_t min = 1u << (12 + cap.bits.mpsmin);
	uint32_t max = 1u << (12 + cap.bits.mpsmax);
	uint32_t ps = host > 0 ? (uint32_t)host : 4096u;

	ctrlr->cap = cap;
	ctrlr->vs = vs;
	if (min > max) {
		NVP_ERRLOG("%s: CAP.MPSMIN %u above CAP.MPSMAX %u", ctrlr->name, cap.bits.mpsmin,
			   cap.bits.mpsmax);
		return -EIO;
	}
	ctrlr->page_size = NVP_MIN(NVP_MAX(ps, min), max);
	/* Refined by MDTS after identify. */
	ctrlr->max_xfer_size = NVP_MAX(ctrlr->opts.max_io_size / ctrlr->page_size, 1u) *
			       ctrlr->page_size;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Registers
 * ------------------------------------------------------------------------------------- */

static uint32_t
get_reg4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset)
{
	uint32_t value = UINT32_MAX;

	if (ctrlr->transport->ctrlr_get_reg_4(ctrlr, offset, &value) != 0) {
		return UINT32_MAX;
	}
	return value;
}

static int
set_reg4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t value)
{
	return ctrlr->transport->ctrlr_set_reg_4(ctrlr, offset, value);
}

/* Log the registers that tell what a controller is doing. */
static void
log_regs(struct nvp_nvme_ctrlr *ctrlr, const char *state, const char *cause)
{
	NVP_ERRLOG("%s: %s in state %s (CAP 0x%016" PRIx64 " VS 0x%08x CC 0x%08x CSTS 0x%08x)",
		   ctrlr->name, cause, state, ctrlr->cap.raw, get_reg4(ctrlr, NVME_REG_VS),
		   get_reg4(ctrlr, NVME_REG_CC), get_reg4(ctrlr, NVME_REG_CSTS));
}

/* ---------------------------------------------------------------------------------------
 * Initialisation state machine
 * ------------------------------------------------------------------------------------- */

/* CAP.TO: worst-case time for CSTS.RDY to follow CC.EN, in 500 ms units. */
static uint64_t
ready_timeout_ms(const struct nvp_nvme_ctrlr *ctrlr)
{
	return (uint64_t)NVP_MAX(ctrlr->cap.bits.to, 1u) * 500u;
}

static void
set_state(struct nvp_nvme_ctrlr *ctrlr, enum nvme_ctrlr_state state, uint64_t timeout_ms)
{
	/* release: a thread that reads the new state without the lock sees what led to it */
	__atomic_store_n(&ctrlr->state, state, __ATOMIC_RELEASE);
	ctrlr->state_deadline = timeout_ms ?
					nvme_ticks(ctrlr) + nvme_ms_to_ticks(ctrlr, timeout_ms) :
					0;
	NVP_DEBUGLOG("%s: init state %s", ctrlr->name, nvme_ctrlr_state_string(state));
}

static int
init_error(struct nvp_nvme_ctrlr *ctrlr, int rc, const char *cause)
{
	log_regs(ctrlr, nvme_ctrlr_state_string(ctrlr->state), cause);
	__atomic_store_n(&ctrlr->state, NVME_CTRLR_STATE_ERROR, __ATOMIC_RELEASE);
	return rc;
}

/* Why CSTS reads all ones: the transport knows (a removed function, a lost connection). */
static const char *
cause_all_ones(const struct nvp_nvme_ctrlr *ctrlr)
{
	if (ctrlr->transport->ctrlr_all_ones_cause == NULL) {
		return "registers read all ones";
	}
	return ctrlr->transport->ctrlr_all_ones_cause(ctrlr);
}
#define CAUSE_CFS "CSTS.CFS set: controller fatal error"

/* DISABLE: clear CC.EN (a reset if it was set; section 7.3.2). */
static int
init_disable(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_cc_register cc = { .raw = get_reg4(ctrlr, NVME_REG_CC) };
	union nvme_csts_register csts = { .raw = get_reg4(ctrlr, NVME_REG_CSTS) };

	if (csts.raw == UINT32_MAX) {
		return init_error(ctrlr, -EIO, cause_all_ones(ctrlr));
	}
	if (cc.bits.en && !csts.bits.rdy && !csts.bits.cfs) {
		/* Still enabling: changing EN before RDY follows it is undefined. Wait up
		 * to CAP.TO for RDY, then disable anyway. */
		if (ctrlr->state_deadline == 0) {
			set_state(ctrlr, NVME_CTRLR_STATE_DISABLE, ready_timeout_ms(ctrlr));
		}
		if (nvme_ticks(ctrlr) < ctrlr->state_deadline) {
			return 0;
		}
	}
	if (cc.bits.en) {
		cc.bits.en = 0;
		if (set_reg4(ctrlr, NVME_REG_CC, cc.raw) != 0) {
			return init_error(ctrlr, -EIO, "cannot write CC");
		}
	}
	set_state(ctrlr, NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0, ready_timeout_ms(ctrlr));
	return 0;
}

/* DISABLE_WAIT_FOR_READY_0 and ENABLE_WAIT_FOR_READY_1: CSTS.RDY follows CC.EN. */
static int
init_wait_ready(struct nvp_nvme_ctrlr *ctrlr, uint32_t want)
{
	union nvme_csts_register csts = { .raw = get_reg4(ctrlr, NVME_REG_CSTS) };

	if (csts.raw == UINT32_MAX) {
		return init_error(ctrlr, -EIO, cause_all_ones(ctrlr));
	}
	/* While disabling, CFS may be left over from before: the reset clears it. */
	if (want == 1 && csts.bits.cfs) {
		return init_error(ctrlr, -EIO, CAUSE_CFS);
	}
	if (csts.bits.rdy == want) {
		set_state(ctrlr,
			  want ? NVME_CTRLR_STATE_IDENTIFY : NVME_CTRLR_STATE_SET_ADMIN_QUEUE, 0);
		return 0;
	}
	if (nvme_ticks(ctrlr) >= ctrlr->state_deadline) {
		return init_error(ctrlr, -ETIMEDOUT,
				  want ? "timeout: RDY never rose: controller not responding or "
					 "CAP.TO too short" :
					 "timeout: RDY never fell after CC.EN = 0: controller "
					 "hung or CAP.TO too short");
	}
	return 0;
}

/* SET_ADMIN_QUEUE: AQA, ASQ, ACQ (the transport knows where the rings are). */
static int
init_set_admin_queue(struct nvp_nvme_ctrlr *ctrlr)
{
	if (ctrlr->transport->ctrlr_enable_admin_queue(ctrlr) != 0) {
		return init_error(ctrlr, -EIO, "cannot program the admin queue registers");
	}
	set_state(ctrlr, NVME_CTRLR_STATE_ENABLE, 0);
	return 0;
}

/* ENABLE: CC with the NVM command set, our page size, 64/16-byte entries, EN = 1. */
static int
init_enable(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_cc_register cc = { .raw = 0 };

	if ((ctrlr->cap.bits.css & NVME_CAP_CSS_NVM) == 0) {
		return init_error(ctrlr, -EIO, "CAP.CSS: the NVM command set is not supported");
	}
	cc.bits.en = 1;
	cc.bits.css = 0; /* NVM command set */
	cc.bits.mps = (uint32_t)__builtin_ctz(ctrlr->page_size) - 12;
	cc.bits.ams = 0; /* round robin */
	cc.bits.shn = NVME_SHN_NONE;
	cc.bits.iosqes = 6; /* 64-byte commands */
	cc.bits.iocqes = 4; /* 16-byte completions */
	if (set_reg4(ctrlr, NVME_REG_CC, cc.raw) != 0) {
		return init_error(ctrlr, -EIO, "cannot write CC");
	}
	set_state(ctrlr, NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1, ready_timeout_ms(ctrlr));
	return 0;
}

/* MDTS is in units of the minimum memory page size (CAP.MPSMIN), 0 = no limit. */
static void
update_max_xfer(struct nvp_nvme_ctrlr *ctrlr)
{
	ctrlr->max_xfer_size = nvme_mdts_max_xfer(ctrlr->cdata.mdts, ctrlr->cap.bits.mpsmin,
						  ctrlr->max_xfer_size);
}

static int
init_identify(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc = nvme_ctrlr_cmd_identify_ctrlr(ctrlr);

	if (rc != 0) {
		return init_error(ctrlr, rc, "Identify Controller failed");
	}
	update_max_xfer(ctrlr);
	set_state(ctrlr, NVME_CTRLR_STATE_SET_NUM_QUEUES, 0);
	return 0;
}

static int
init_set_num_queues(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t addressable = ctrlr->transport->ctrlr_get_max_io_queues(ctrlr);
	uint32_t wanted = NVP_MIN(NVP_MAX(ctrlr->opts.num_io_queues, 1u), 65535u);
	uint32_t granted = 0;
	int rc;

	rc = nvme_ctrlr_cmd_set_num_queues(ctrlr, wanted, &granted);
	if (rc != 0) {
		return init_error(ctrlr, rc, "Set Features (Number of Queues) failed");
	}
	granted = NVP_MIN(granted, wanted);
	if (granted > addressable) {
		NVP_WARNLOG("%s: %u I/O queues granted but BAR0 has doorbells for %u; using %u",
			    ctrlr->name, granted, addressable, addressable);
		granted = addressable;
	}
	ctrlr->num_io_queues = granted;
	set_state(ctrlr, NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS, 0);
	return 0;
}

static int
init_identify_active_ns(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc = nvme_ctrlr_identify_active_ns(ctrlr);

	if (rc != 0) {
		return init_error(ctrlr, rc, "Identify (active namespace list) failed");
	}
	set_state(ctrlr, NVME_CTRLR_STATE_IDENTIFY_NS, 0);
	return 0;
}

static int
init_identify_ns(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc = nvme_ctrlr_identify_namespaces(ctrlr, NVME_GLOBAL_NS_TAG);

	if (rc != 0) {
		return init_error(ctrlr, rc, "Identify Namespace failed");
	}
	set_state(ctrlr, NVME_CTRLR_STATE_CONFIGURE_AER, 0);
	return 0;
}

static int
init_configure_aer(struct nvp_nvme_ctrlr *ctrlr)
{
	/* Not fatal: a controller without AERs still moves data. */
	(void)nvme_ctrlr_configure_aer(ctrlr);
	set_state(ctrlr, NVME_CTRLR_STATE_READY, 0);
	return 0;
}

/*
 * Advance the state machine by one state, or look once more at a register it waits on.
 * \return 0 (moved on, or still waiting: compare ctrlr->state), or -errno once the state
 * is ERROR.
 */
int
nvme_ctrlr_process_init(struct nvp_nvme_ctrlr *ctrlr)
{
	switch (ctrlr->state) {
	case NVME_CTRLR_STATE_DISABLE:
		return init_disable(ctrlr);
	case NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0:
		return init_wait_ready(ctrlr, 0);
	case NVME_CTRLR_STATE_SET_ADMIN_QUEUE:
		return init_set_admin_queue(ctrlr);
	case NVME_CTRLR_STATE_ENABLE:
		return init_enable(ctrlr);
	case NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1:
		return init_wait_ready(ctrlr, 1);
	case NVME_CTRLR_STATE_IDENTIFY:
		return init_identify(ctrlr);
	case NVME_CTRLR_STATE_SET_NUM_QUEUES:
		return init_set_num_queues(ctrlr);
	case NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS:
		return init_identify_active_ns(ctrlr);
	case NVME_CTRLR_STATE_IDENTIFY_NS:
		return init_identify_ns(ctrlr);
	case NVME_CTRLR_STATE_CONFIGURE_AER:
		return init_configure_aer(ctrlr);
	case NVME_CTRLR_STATE_READY:
		return 0;
	case NVME_CTRLR_STATE_ERROR:
	default:
		return -EIO;
	}
}

/* Run the state machine until @until (or READY). */
static int
run_init(struct nvp_nvme_ctrlr *ctrlr, enum nvme_ctrlr_state until)
{
	while (ctrlr->state != until && ctrlr->state != NVME_CTRLR_STATE_READY) {
		enum nvme_ctrlr_state prev = ctrlr->state;
		int rc = nvme_ctrlr_process_init(ctrlr);

		if (rc != 0) {
			return rc;
		}
		if (nvme_fiber_yield()) {
			continue; /* a reconnect's reset: a state per poll of its thread */
		}
		if (ctrlr->state == prev) {
			nvp_env_delay_us(100); /* waiting on CSTS */
		}
	}
	return 0;
}

/* Bring the controller from whatever state to READY. */
int
nvme_ctrlr_init(struct nvp_nvme_ctrlr *ctrlr)
{
	set_state(ctrlr, NVME_CTRLR_STATE_DISABLE, 0);
	return run_init(ctrlr, NVME_CTRLR_STATE_READY);
}

/* ---------------------------------------------------------------------------------------
 * Failure, shutdown, reset
 * ------------------------------------------------------------------------------------- */

void
nvme_ctrlr_fail(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	if (!atomic_exchange(&ctrlr->is_failed, true)) {
		NVP_ERRLOG("%s: controller marked failed: %s; every request completes with an "
			   "error; nvp_nvme_ctrlr_reset() may bring it back",
			   ctrlr->name, why);
	}
}

/*
 * CSTS.RDY read clear (in reset generation \p gen) although the controller is READY. Not
 * a reset of ours if no reset ran around the read. A device that is gone but whose BAR
 * reads zeros rather than ones (QEMU after device_del: nothing answers the address) shows
 * this: the transport tells by config space. Otherwise the controller was disabled or
 * reset behind the driver's back (another process, a subsystem reset): it is failed, and
 * nvp_nvme_ctrlr_reset() may bring it back. \return true if the controller is now failed.
 */
static bool
rdy_lost(struct nvp_nvme_ctrlr *ctrlr, uint32_t gen, const char *context)
{
	if (nvme_ctrlr_state_load(ctrlr) != NVME_CTRLR_STATE_READY ||
	    atomic_load(&ctrlr->resetting) || atomic_load(&ctrlr->reset_gen) != gen) {
		return false;
	}
	if (ctrlr->transport->ctrlr_is_present != NULL &&
	    !ctrlr->transport->ctrlr_is_present(ctrlr)) {
		NVP_ERRLOG("%s: CSTS.RDY clear and the device no longer answers: device removed "
			   "(%s); requests complete with Host Pathing Error",
			   ctrlr->name, context);
		nvme_ctrlr_removed(ctrlr);
		return true;
	}
	log_regs(ctrlr, context, "CSTS.RDY clear: the controller was disabled behind the driver");
	nvme_ctrlr_fail(ctrlr, "controller not ready");
	return true;
}

/*
 * Look at CSTS (only on timeout paths: an MMIO read is expensive). \return true if the
 * controller is (now) failed: CSTS.CFS set or registers reading all ones.
 */
bool
nvme_ctrlr_check_health(struct nvp_nvme_ctrlr *ctrlr, const char *context)
{
	union nvme_csts_register csts;
	const char *why;
	uint32_t gen;

	if (nvme_ctrlr_is_failed(ctrlr)) {
		return true;
	}
	if (nvme_ctrlr_is_reconnecting(ctrlr)) {
		return false; /* no registers to read until the connection is back */
	}
	gen = atomic_load(&ctrlr->reset_gen);
	csts.raw = get_reg4(ctrlr, NVME_REG_CSTS);
	if (csts.raw == UINT32_MAX && nvme_ctrlr_is_reconnecting(ctrlr)) {
		return false; /* the read itself found the connection gone */
	}
	if (csts.raw == UINT32_MAX) {
		NVP_ERRLOG("%s: %s (%s); requests complete with Host Pathing Error", ctrlr->name,
			   cause_all_ones(ctrlr), context);
		nvme_ctrlr_removed(ctrlr);
		return true;
	}
	if (!csts.bits.cfs) {
		return !csts.bits.rdy && rdy_lost(ctrlr, gen, context);
	}
	why = CAUSE_CFS;
	log_regs(ctrlr, context, why);
	nvme_ctrlr_fail(ctrlr, why);
	return true;
}

/*
 * The device is gone: failed (every call -ENXIO, requests completed with Host Pathing
 * Error), and the application told once through its remove callback.
 */
void
nvme_ctrlr_removed(struct nvp_nvme_ctrlr *ctrlr)
{
	nvp_nvme_remove_cb cb;
	void *arg;

	if (atomic_exchange(&ctrlr->removed, true)) {
		return;
	}
	nvme_ctrlr_fail(ctrlr, "device removed");
	nvme_ctrlr_lock(ctrlr);
	cb = ctrlr->remove_cb;
	arg = ctrlr->remove_cb_arg;
	nvme_ctrlr_unlock(ctrlr);
	if (cb != NULL) {
		cb(arg, ctrlr);
	}
}

void
nvp_nvme_ctrlr_register_remove_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_remove_cb cb,
					void *cb_arg)
{
	if (ctrlr == NULL) {
		return;
	}
	nvme_ctrlr_lock(ctrlr);
	ctrlr->remove_cb = cb;
	ctrlr->remove_cb_arg = cb_arg;
	nvme_ctrlr_unlock(ctrlr);
}

bool
nvp_nvme_ctrlr_is_removed(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr != NULL && atomic_load(&ctrlr->removed);
}

/* RTD3E (µs) says how long the controller may take; bounded to a few seconds. */
static uint64_t
shutdown_timeout_ms(const struct nvp_nvme_ctrlr *ctrlr)
{
	uint64_t ms = ctrlr->cdata.rtd3e / 1000u;

	return NVP_MIN(NVP_MAX(ms, (uint64_t)NVME_SHUTDOWN_TIMEOUT_MS),
		       (uint64_t)NVME_SHUTDOWN_TIMEOUT_MAX_MS);
}

/*
 * Normal shutdown (section 7.6.2): CC.SHN = 01b, then wait for CSTS.SHST = 10b.
 * \return 0, -ETIMEDOUT, -EIO (device gone).
 */
int
nvme_ctrlr_shutdown(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_cc_register cc;
	union nvme_csts_register csts;
	uint64_t deadline;

	if (nvme_ctrlr_is_failed(ctrlr) || ctrlr->opts.no_shn_notification) {
		return 0;
	}
	cc.raw = get_reg4(ctrlr, NVME_REG_CC);
	if (cc.raw == UINT32_MAX) {
		return -EIO;
	}
	cc.bits.shn = NVME_SHN_NORMAL;
	if (set_reg4(ctrlr, NVME_REG_CC, cc.raw) != 0) {
		return -EIO;
	}
	deadline = nvme_ticks(ctrlr) + nvme_ms_to_ticks(ctrlr, shutdown_timeout_ms(ctrlr));
	for (;;) {
		csts.raw = get_reg4(ctrlr, NVME_REG_CSTS);
		if (csts.raw == UINT32_MAX) {
			return -EIO;
		}
		if (csts.bits.shst == NVME_SHST_COMPLETE) {
			ctrlr->shutdown_done = true;
			return 0;
		}
		if (nvme_ticks(ctrlr) >= deadline) {
			NVP_WARNLOG("%s: shutdown did not complete within %" PRIu64 " ms (CSTS "
				    "0x%08x); detaching anyway",
				    ctrlr->name, shutdown_timeout_ms(ctrlr), csts.raw);
			return -ETIMEDOUT;
		}
		nvp_env_delay_us(1000);
	}
}

/*
 * Reset, admin lock held: the device forgets every queue when CC.EN goes to 0. I/O qpairs
 * are not touched here: bumping the reset generation tells each owner thread to take its
 * requests back and re-create its queues at its next poll (nvme_qpair.c), once
 * ctrlr->resetting is clear again.
 */
/*
 * The handshake: after the generation bump (a full barrier, and with the asymmetric
 * fence a membarrier(2) that is one in every other thread too), wait for every other
 * thread's qpair to close its doorbell window; from then on its owner sees the new
 * generation before it writes a doorbell. Owners are never blocked by the driver, so the
 * wait is the rest of one poll (its callbacks included); bounded anyway. The caller's
 * own qpairs are skipped: it may be inside one of their callbacks.
 */
static void
wait_doorbell_windows(struct nvp_nvme_ctrlr *ctrlr)
{
	uint64_t deadline = nvme_ticks(ctrlr) +
			    nvme_ms_to_ticks(ctrlr, ctrlr->opts.admin_timeout_ms);
	struct nvp_nvme_qpair *qpair;

	nvme_db_fence_remote(ctrlr);
	TAILQ_FOREACH (qpair, &ctrlr->io_qpairs, link) {
		if (pthread_equal(qpair->owner, pthread_self())) {
			continue;
		}
		while (atomic_load_explicit(&qpair->db_window, memory_order_seq_cst) != 0) {
			if (nvme_ticks(ctrlr) >= deadline) {
				NVP_WARNLOG("%s: qpair %u stayed in a poll for %u ms (a blocking "
					    "completion callback?); resetting anyway",
					    ctrlr->name, qpair->id, ctrlr->opts.admin_timeout_ms);
				break;
			}
			if (!nvme_fiber_yield()) {
				nvp_pause();
			}
		}
	}
}

static int
reset_locked(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t gen;
	int rc;

	atomic_store(&ctrlr->resetting, true);
	gen = atomic_fetch_add(&ctrlr->reset_gen, 1) + 1;
	ctrlr->adminq->reset_gen = gen; /* the admin queue is re-made here, under the lock */
	wait_doorbell_windows(ctrlr);
	set_state(ctrlr, NVME_CTRLR_STATE_DISABLE, 0);
	rc = run_init(ctrlr, NVME_CTRLR_STATE_SET_ADMIN_QUEUE);
	if (rc != 0) {
		return rc;
	}
	/* Disabled: nothing the device had will complete. Admin requests (AERs, aborts,
	 * orphans, other threads' queue steps) complete here; I/O requests at their owner's
	 * next poll. */
	atomic_store(&ctrlr->is_failed, false);
	nvme_qpair_abort_all(ctrlr->adminq, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
	ctrlr->adminq->failed = false;
	ctrlr->adminq->cq_stuck = false;
	ctrlr->num_aers = 0;
	rc = run_init(ctrlr, NVME_CTRLR_STATE_READY);
	if (rc != 0) {
		return rc;
	}
	if (ctrlr->transport->ctrlr_reset_done != NULL) {
		ctrlr->transport->ctrlr_reset_done(ctrlr);
	}
	return 0;
}

int
nvp_nvme_ctrlr_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	nvme_ctrlr_lock(ctrlr);
	NVP_NOTICELOG("%s: resetting", ctrlr->name);
	rc = reset_locked(ctrlr);
	if (rc == 0) {
		atomic_store(&ctrlr->reconnecting, false); /* owners may re-create their queues */
	} else if (!nvme_ctrlr_is_reconnecting(ctrlr)) {
		nvme_ctrlr_fail(ctrlr, "reset failed");
	}
	if (rc != 0) {
		rc = rc == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
	}
	atomic_store(&ctrlr->resetting, false);
	nvme_ctrlr_unlock(ctrlr);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * I/O queue pairs
 * ------------------------------------------------------------------------------------- */

static uint16_t
qid_alloc(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t qid;

	for (qid = 1; qid <= ctrlr->num_io_queues; qid++) {
		uint64_t bit = 1ull << (qid % 64);

		if ((ctrlr->qid_bitmap[qid / 64] & bit) == 0) {
			ctrlr->qid_bitmap[qid / 64] |= bit;
			return (uint16_t)qid;
		}
	}
	return 0;
}

static void
qid_free(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid)
{
	ctrlr->qid_bitmap[qid / 64] &= ~(1ull << (qid % 64));
}

int
nvp_nvme_ctrlr_fit_io_queue_size(const struct nvp_nvme_ctrlr *ctrlr, uint32_t size,
				 uint32_t *fitted)
{
	uint32_t max = ctrlr != NULL ? ctrlr->cap.bits.mqes + 1u : NVME_MAX_QUEUE_ENTRIES;

	return nvme_queue_size_fit(size, max, fitted);
}

void
nvp_nvme_ctrlr_get_default_io_qpair_opts(const struct nvp_nvme_ctrlr *ctrlr,
					 struct nvp_nvme_io_qpair_opts *opts, size_t opts_size)
{
	struct nvp_nvme_io_qpair_opts d;

	if (opts == NULL) {
		return;
	}
	memset(&d, 0, sizeof(d));
	d.opts_size = NVP_MIN(opts_size, sizeof(d));
	(void)nvp_nvme_ctrlr_fit_io_queue_size(ctrlr, ctrlr->opts.io_queue_size, &d.io_queue_size);
	d.io_queue_requests = NVP_MAX(ctrlr->opts.io_queue_requests, d.io_queue_size);
	d.timeout_us = ctrlr->opts.io_timeout_us;
	d.delay_doorbell = true; /* one SQ doorbell per poll: see nvme_qpair.c */
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

int
nvp_nvme_qpair_get_irq_fd(const struct nvp_nvme_qpair *qpair)
{
	if (qpair == NULL || qpair->transport->qpair_get_irq_fd == NULL) {
		return -ENOTSUP;
	}
	return qpair->transport->qpair_get_irq_fd(qpair);
}

int
nvp_nvme_qpair_irq_unmask(struct nvp_nvme_qpair *qpair)
{
	if (qpair == NULL || qpair->transport->qpair_irq_unmask == NULL) {
		return -ENOTSUP;
	}
	return qpair->transport->qpair_irq_unmask(qpair);
}

static int
qpair_opts_check(const struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_io_qpair_opts *o)
{
	if (nvp_nvme_ctrlr_fit_io_queue_size(ctrlr, o->io_queue_size, NULL) != 0) {
		NVP_ERRLOG("%s: I/O queue size %u out of range: %u .. %u (CAP.MQES + 1)",
			   ctrlr->name, o->io_queue_size, NVME_MIN_QUEUE_ENTRIES,
			   ctrlr->cap.bits.mqes + 1u);
		return -EINVAL;
	}
	if (o->io_queue_requests < o->io_queue_size) {
		NVP_ERRLOG("%s: %u requests for a queue of %u entries: need at least as many "
			   "requests as entries",
			   ctrlr->name, o->io_queue_requests, o->io_queue_size);
		return -EINVAL;
	}
	return 0;
}

/*
 * Allocate, then create on the device (opts.async_mode: leave that to the owner's polls).
 * The admin lock is held for the qid and the list, not across the queue commands (each
 * takes it to submit and to poll).
 */
static int
qpair_create(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_io_qpair_opts *opts,
	     struct nvp_nvme_qpair **out)
{
	struct nvp_nvme_qpair *qpair = NULL;
	uint16_t qid;
	int rc;

	nvme_ctrlr_lock(ctrlr);
	qid = qid_alloc(ctrlr);
	nvme_ctrlr_unlock(ctrlr);
	if (qid == 0) {
		NVP_ERRLOG("%s: all %u granted I/O queues are in use; free a qpair or ask for "
			   "more (opts.num_io_queues)",
			   ctrlr->name, ctrlr->num_io_queues);
		return -EBUSY;
	}
	rc = ctrlr->transport->qpair_create(ctrlr, qid, opts, &qpair);
	if (rc != 0) {
		nvme_ctrlr_lock(ctrlr);
		qid_free(ctrlr, qid);
		nvme_ctrlr_unlock(ctrlr);
		return rc;
	}
	qpair->opts = *opts;
	qpair->delay_doorbell = opts->delay_doorbell;
	qpair->timeout_ticks = nvme_us_to_ticks(ctrlr, opts->timeout_us);
	if (opts->async_mode) {
		/* the owner's polls create the queues (nvme_qpair_recovery.c) */
		rc = qpair->transport->qpair_connect_prepare != NULL ?
			     qpair->transport->qpair_connect_prepare(qpair) :
			     0;
		if (rc == 0) {
			nvme_qpair_conn_start_create(qpair);
		}
	} else {
		rc = qpair->transport->qpair_connect(qpair);
	}
	nvme_ctrlr_lock(ctrlr);
	if (rc != 0) {
		qid_free(ctrlr, qid);
		nvme_ctrlr_unlock(ctrlr);
		qpair->transport->qpair_destroy(qpair);
		return rc == -ENXIO || rc == -ENOMEM ? rc : -EIO;
	}
	TAILQ_INSERT_TAIL(&ctrlr->io_qpairs, qpair, link);
	nvme_ctrlr_unlock(ctrlr);
	*out = qpair;
	return 0;
}

int
nvp_nvme_ctrlr_alloc_io_qpair(struct nvp_nvme_ctrlr *ctrlr,
			      const struct nvp_nvme_io_qpair_opts *user_opts,
			      struct nvp_nvme_qpair **qpair)
{
	struct nvp_nvme_io_qpair_opts opts;
	int rc;

	if (ctrlr == NULL || qpair == NULL) {
		return -EINVAL;
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &opts, sizeof(opts));
	if (user_opts != NULL) {
		memcpy(&opts, user_opts, NVP_MIN(user_opts->opts_size, sizeof(opts)));
		opts.opts_size = sizeof(opts);
	}
	rc = qpair_opts_check(ctrlr, &opts);
	if (rc != 0) {
		return rc;
	}
	if (nvme_ctrlr_is_failed(ctrlr)) {
		return -ENXIO;
	}
	return qpair_create(ctrlr, &opts, qpair);
}

/*
 * Delete on the device, complete what is left, free. Any thread (detach uses it). The
 * queue commands run without the admin lock held around them.
 */
static int
qpair_free(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	bool exists = qpair->conn_state == NVME_QP_CONNECTED && !qpair->failed &&
		      qpair->reset_gen == atomic_load(&ctrlr->reset_gen);
	/* queues being created whose first step was not sent (an async_mode qpair not
	 * polled yet): the device has nothing of it (a connection is closed by destroy) */
	bool none = qpair->conn_state == NVME_QP_CREATING && qpair->conn_step == 0 &&
		    !qpair->conn_inflight && !nvme_qpair_reset_pending(qpair);
	int rc = 0;

	qpair->deleting = true;
	if (!nvme_ctrlr_is_failed(ctrlr) && !none) {
		rc = qpair->transport->qpair_disconnect(qpair);
		if (!exists) {
			rc = 0; /* its queues were gone or half made (reset, reclaim) */
		}
	}
	nvme_ctrlr_lock(ctrlr);
	/* Aborts still queued or in flight for this qpair's trackers must not call back
	 * into freed memory; admin callbacks run under this lock, so none is running. */
	nvme_qpair_neuter_aborts(ctrlr->adminq, qpair);
	TAILQ_REMOVE(&ctrlr->io_qpairs, qpair, link);
	qid_free(ctrlr, qpair->id);
	nvme_ctrlr_unlock(ctrlr);

	/* the application frees it: what is left is not to be sent again (DNR) */
	nvme_qpair_abort_all(qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, true);
	qpair->transport->qpair_destroy(qpair);
	return rc;
}

int
nvp_nvme_ctrlr_free_io_qpair(struct nvp_nvme_qpair *qpair)
{
	int rc;

	if (qpair == NULL || qpair->is_admin) {
		return -EINVAL;
	}
	rc = nvme_qpair_check_owner(qpair);
	if (rc != 0) {
		return rc;
	}
	nvme_ctrlr_reconnect_finish(qpair->ctrlr); /* a reset this thread steps */
	return qpair_free(qpair);
}

void
nvme_ctrlr_free_io_qpairs(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvp_nvme_qpair *qpair;

	while ((qpair = TAILQ_FIRST(&ctrlr->io_qpairs)) != NULL) {
		(void)qpair_free(qpair);
	}
}

/* ---------------------------------------------------------------------------------------
 * Getters and callbacks
 * ------------------------------------------------------------------------------------- */

const struct nvme_ctrlr_data *
nvp_nvme_ctrlr_get_data(const struct nvp_nvme_ctrlr *ctrlr)
{
	return &ctrlr->cdata;
}

const struct nvp_nvme_transport_id *
nvp_nvme_ctrlr_get_transport_id(const struct nvp_nvme_ctrlr *ctrlr)
{
	return &ctrlr->trid;
}

union nvme_cap_register
nvp_nvme_ctrlr_get_regs_cap(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->cap;
}

union nvme_vs_register
nvp_nvme_ctrlr_get_regs_vs(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->vs;
}

union nvme_csts_register
nvp_nvme_ctrlr_get_regs_csts(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_csts_register csts = { .raw = get_reg4(ctrlr, NVME_REG_CSTS) };

	return csts;
}

uint32_t
nvp_nvme_ctrlr_get_num_io_queues(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->num_io_queues;
}

uint32_t
nvp_nvme_ctrlr_get_max_xfer_size(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->max_xfer_size;
}

bool
nvp_nvme_ctrlr_is_failed(const struct nvp_nvme_ctrlr *ctrlr)
{
	return nvme_ctrlr_is_failed(ctrlr);
}

void
nvp_nvme_ctrlr_register_timeout_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_timeout_cb cb,
					 void *cb_arg)
{
	nvme_ctrlr_lock(ctrlr);
	ctrlr->timeout_cb = cb;
	ctrlr->timeout_cb_arg = cb_arg;
	nvme_ctrlr_unlock(ctrlr);
}
