/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pair recovery, transport independent: the reset handshake's fences, timeouts,
 * Abort and CID quarantine, the missed-completion check, and the non-blocking
 * re-creation of a qpair's queues (after a controller reset, to reclaim CIDs, or after a
 * stuck CQ). The I/O path (nvme_qpair.c) calls in here from its poll; nothing here calls
 * back into it: requests are completed with nvme_complete_request() (nvme_internal.h).
 * Nor does it call the controller's code above it by name: the admin queue (its lock,
 * a submission, a poll) and the health check are reached through the table the
 * controller set at construction (ctrlr->recovery, struct nvme_ctrlr_recovery_ops). The
 * Abort of a timed-out command is built and sent here.
 *
 * Timeouts (qpair opts.timeout_us): trackers sit on the outstanding list in submission
 * order, so only the head needs looking at. An expired tracker moves to the recovery
 * list and an Abort (SQID, CID) goes to the admin queue. The Abort's callback may run on
 * any thread; it only stores its verdict in the tracker's atomic abort_result. The owner
 * reads it on its next poll: "aborted" means the command's own completion (ABORTED BY
 * REQUEST) follows; "not aborted", a failed Abort, or no answer in time mean the driver
 * completes the request itself (PATH / ABORTED BY HOST, DNR clear: the host gave up, not
 * the device; sending it again may work) and quarantines the CID until the device's late
 * completion arrives (it is swallowed) or a reset. On a qpair with opts.timeout_no_abort
 * the expired tracker only moves to the recovery list (TIMED_OUT, reported once) and
 * waits there for its completion, a reset or the qpair's free.
 *
 * CIDs and SQ slots are counted apart: a qpair has num_entries - 1 slots and a few more
 * trackers (spare CIDs). "Not aborted" means the command has left the SQ, so its slot is
 * given back while its CID stays quarantined. Should quarantined CIDs ever take every
 * usable tracker, the qpair deletes and re-creates its queues, which ends every command
 * of the old SQ and frees them all.
 *
 * A stuck CQ (the device posted past an entry the host cannot see: a stale phase tag)
 * hides every later completion, so aborting one command after another only quarantines
 * CIDs until none is left. The transport's missed-completion check (qpair_cq_stalled)
 * runs before a timeout's Abort and at every poll while trackers are in recovery; when
 * it answers yes the queues are deleted and re-created as a reclaim does, and what the
 * device had is retried or completed as after a controller reset.
 *
 * A request's deadline counts from the submit call that accepted it, time on the queued
 * list included; one that expires there was never sent and completes at once.
 *
 * The I/O poll never blocks: queue deletion and creation (to reclaim CIDs, or after a
 * controller reset) are admin commands the owner submits under a trylock and whose
 * status it reads at later polls; see "Re-creating the queues" below.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvme_internal.h"

/*
 * The status of a completion the host makes up. Do Not Retry is set only when sending the
 * same command again cannot succeed: the request is invalid, the application itself
 * ended it (freed its qpair, detached), or the device is gone for good (removed). A
 * request the host gave up on (timeout), took back in a reset or a re-creation of the
 * queues, or failed with a controller that a reset may bring back has DNR clear. A
 * status the device posted is passed on as it is, DNR and all.
 */
void
nvme_cpl_set_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc, bool dnr)
{
	cpl->status_raw = 0;
	cpl->status.sct = sct;
	cpl->status.sc = sc;
	cpl->status.dnr = dnr ? 1 : 0;
}

/* ---------------------------------------------------------------------------------------
 * The reset handshake: the resetting thread's side
 * ------------------------------------------------------------------------------------- */

/*
 * The reset handshake is a Dekker pair: the owner stores to its doorbell window, then
 * loads the reset generation; the resetting thread stores the generation, then loads the
 * window. Each side needs a full barrier between its store and its load, or x86 lets the
 * load pass the store and both miss each other. The owner's side runs at every poll, so
 * its barrier is made asymmetric where the kernel allows (as userspace RCU does): the
 * owner only keeps the compiler from reordering, and the resetting thread, which runs
 * once per reset, calls membarrier(2), which runs a full barrier on every thread of the
 * process that is on a CPU (a thread that is not has passed one in the context switch).
 * So either the owner's window store came before that barrier and the reset sees it, or
 * its generation load comes after and sees the new one. Without membarrier (kernel before
 * 4.14, seccomp) or with NVP_NVME_MEMBARRIER=0 in the environment, the owner uses a
 * seq_cst read-modify-write (x86 lock xadd, arm64 ldaddal) as before.
 */
static bool g_db_fence_asym;

static void
db_fence_register(void)
{
	const char *env = getenv("NVP_NVME_MEMBARRIER");

	if (env != NULL && strcmp(env, "0") == 0) {
		return;
	}
	g_db_fence_asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
				  0) == 0;
}

bool
nvme_db_fence_asym(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, db_fence_register);
	return g_db_fence_asym;
}

void
nvme_db_fence_remote(const struct nvp_nvme_ctrlr *ctrlr)
{
	if (ctrlr->db_fence_asym &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* registered, so it does not fail; if it ever did, no owner is safe to skip */
		NVP_ERRLOG("%s: membarrier failed (%s); waiting one more time slice", ctrlr->name,
			   strerror(errno));
		nvp_env_delay_us(10000);
	}
}

/* ---------------------------------------------------------------------------------------
 * Timeouts and recovery
 * ------------------------------------------------------------------------------------- */

/* A tracker in recovery goes back to the free list once nothing refers to it. */
static bool
recovery_try_release(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	if (tr->req != NULL || tr->cpl_pending ||
	    atomic_load_explicit(&tr->abort_result, memory_order_acquire) == NVME_ABORT_INFLIGHT) {
		return false;
	}
	TAILQ_REMOVE(&qpair->recovery, tr, link);
	atomic_store_explicit(&tr->abort_result, NVME_ABORT_NONE, memory_order_relaxed);
	nvme_tracker_free(qpair, tr);
	return true;
}

/* The device completed a command whose tracker is in recovery. */
static void
complete_recovering(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
		    const struct nvme_cpl *cpl)
{
	struct nvme_request *req = tr->req;

	if (tr->state == NVME_TR_FREE) {
		return; /* defensive: a free tracker owes nothing */
	}
	if (req != NULL) {
		/* Completed after all (perhaps ABORTED BY REQUEST): pass its status on. */
		tr->req = NULL;
		tr->state = NVME_TR_QUARANTINED;
		nvme_complete_request(qpair, req, cpl);
	} else {
		NVP_NOTICELOG("qpair %u: late completion of CID %u, already completed by the "
			      "driver after its timeout; swallowed",
			      qpair->id, tr->cid);
	}
	recovery_try_release(qpair, tr);
}

/*
 * A completion nvme_qpair_complete_cpl() does not handle inline: an unknown or idle CID
 * (logged, ignored) or a tracker in recovery.
 */
void
nvme_qpair_complete_slow(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl)
{
	struct nvme_tracker *tr;

	tr = &qpair->trackers[cpl->cid & qpair->cid_idx_mask];
	if (!tr->cpl_pending || tr->cid != cpl->cid) {
		NVP_ERRLOG("qpair %u: completion for CID %u, which is not outstanding%s (sqhd %u, "
			   "status 0x%04x); ignored",
			   qpair->id, cpl->cid,
			   tr->cpl_pending ||
					   (uint16_t)(tr->cid - qpair->cid_gen_step) == cpl->cid ?
				   ": a duplicate, or late for a command since ended" :
				   "",
			   cpl->sqhd, cpl->status_raw);
		return;
	}
	tr->cpl_pending = false;
	complete_recovering(qpair, tr, cpl);
}

/* ---------------------------------------------------------------------------------------
 * Timeouts and recovery
 * ------------------------------------------------------------------------------------- */

/* The Abort's completion: may run on any thread; talks to the owner only through the
 * tracker's atomic. */
static void
abort_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct nvme_tracker *tr = cb_arg;
	int result = NVME_ABORT_DONE_FAILED;

	if (!nvme_cpl_is_error(cpl)) {
		result = (cpl->cdw0 & NVME_ABORT_CPL_NOT_ABORTED) ? NVME_ABORT_DONE_NOT_ABORTED :
								    NVME_ABORT_DONE_ABORTED;
	}
	atomic_store_explicit(&tr->abort_result, result, memory_order_release);
}

/*
 * Send Abort (SQID, CID) for @tr without waiting for the admin lock. \return 0, -EAGAIN
 * when the lock is busy or no admin request object is free (try at the next poll), -errno.
 */
static int
abort_submit(struct nvp_nvme_ctrlr *ctrlr, uint16_t sqid, uint16_t cid, struct nvme_tracker *tr)
{
	struct nvme_cmd cmd;
	int rc;

	if (!ctrlr->recovery->admin_trylock(ctrlr)) {
		return -EAGAIN;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_ABORT;
	cmd.cdw10 = NVME_ABORT_CDW10(sqid, cid);
	rc = ctrlr->recovery->admin_submit(ctrlr, &cmd, abort_cb, tr);
	ctrlr->recovery->admin_unlock(ctrlr);
	return rc == -ENOMEM ? -EAGAIN : rc;
}

static void
send_abort(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, uint64_t now)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int rc;

	atomic_store_explicit(&tr->abort_result, NVME_ABORT_INFLIGHT, memory_order_relaxed);
	rc = abort_submit(ctrlr, qpair->id, tr->cid, tr);
	if (rc == -EAGAIN) {
		/* The admin queue is busy (another thread holds it): try on the next poll. */
		atomic_store_explicit(&tr->abort_result, NVME_ABORT_NONE, memory_order_relaxed);
		return;
	}
	if (rc != 0) {
		atomic_store_explicit(&tr->abort_result, NVME_ABORT_DONE_FAILED,
				      memory_order_relaxed);
	}
	tr->state = NVME_TR_ABORT_SENT;
	tr->abort_deadline = now + nvme_ms_to_ticks(ctrlr, ctrlr->opts.admin_timeout_ms);
}

/*
 * The controller will not complete @tr's command: complete it here and keep the CID out
 * of use. With @fetched (the Abort said "not aborted": the command has left the SQ) its
 * SQ slot is given back, so a queue of few entries is not blocked by lost completions.
 */
static void
complete_by_host(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, const char *why,
		 bool fetched)
{
	struct nvme_request *req = tr->req;
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	cpl.cid = tr->cid;
	nvme_cpl_set_status(&cpl, NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST, false);
	NVP_ERRLOG("qpair %u: CID %u (opcode 0x%02x) %s; completed by the driver with "
		   "ABORTED BY HOST, CID quarantined until its completion arrives or a reset",
		   qpair->id, tr->cid, req->cmd.opc, why);
	tr->req = NULL;
	tr->state = NVME_TR_QUARANTINED;
	if (fetched) {
		nvme_tracker_release_slot(qpair, tr);
	}
	nvme_complete_request(qpair, req, &cpl);
	recovery_try_release(qpair, tr);
}

static void
recover_tracker(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, uint64_t now)
{
	int result;

	switch (tr->state) {
	case NVME_TR_ABORT_WANTED:
		send_abort(qpair, tr, now);
		break;
	case NVME_TR_ABORT_SENT:
		result = atomic_load_explicit(&tr->abort_result, memory_order_acquire);
		if (result == NVME_ABORT_DONE_NOT_ABORTED) {
			complete_by_host(qpair, tr, "was not aborted by the controller", true);
		} else if (result == NVME_ABORT_DONE_FAILED) {
			complete_by_host(qpair, tr, "could not be aborted (Abort failed)", false);
		} else if (now >= tr->abort_deadline) {
			complete_by_host(qpair, tr,
					 result == NVME_ABORT_INFLIGHT ?
						 "has an Abort that did not complete in time" :
						 "was reported aborted but never completed",
					 false);
		}
		break;
	case NVME_TR_QUARANTINED:
		recovery_try_release(qpair, tr);
		break;
	default:
		break;
	}
}

static void conn_start(struct nvp_nvme_qpair *qpair, enum nvme_qpair_conn_state state);

/*
 * The missed-completion check: is the CQ stuck behind an entry the host cannot see (a
 * completion written with a stale phase tag)? Then no completion of this qpair will be
 * seen again, and neither waiting nor aborting helps. Not for the admin queue, which
 * cannot be re-made with admin commands: see admin_cq_stall_check().
 */
static bool
cq_stalled(struct nvp_nvme_qpair *qpair)
{
	return !qpair->is_admin && qpair->conn_state == NVME_QP_CONNECTED &&
	       qpair->transport->qpair_cq_stalled != NULL &&
	       qpair->transport->qpair_cq_stalled(qpair);
}

/*
 * Re-make a stuck qpair's queues as a reclaim does: Delete I/O SQ and CQ, then create
 * them, admin commands the owner's polls move along without waiting. Once the SQ is
 * deleted, what the device had is retried or completed as after a controller reset
 * (reclaim_done()). Entries written into the SQ but not announced yet stay unannounced:
 * they are sent again with the rest.
 */
static void
cq_stall_recover(struct nvp_nvme_qpair *qpair)
{
	NVP_ERRLOG("qpair %u: its completion queue is stuck behind an entry with a stale "
		   "phase tag (the controller posted past it); re-creating the queues (%u "
		   "requests outstanding are retried or failed)",
		   qpair->id, qpair->num_outstanding);
	qpair->stats.cq_stalls++;
	qpair->sq_dirty = false;
	conn_start(qpair, NVME_QP_DELETING);
	(void)nvme_qpair_conn_poll(qpair);
}

/*
 * The same check on the admin queue (its health check: admin commands are outstanding and
 * nothing completed for a while). A stuck admin CQ hides every admin completion from now
 * on, Aborts' and queue re-creations' included, and only a controller reset re-makes the
 * admin queue (AQA, ASQ, ACQ). This runs inside a poll of the admin queue, where a reset
 * cannot run: the queue is marked, and whoever holds the admin lock outside a poll resets
 * (nvme_ctrlr_cmd.c). Its commands then complete with ABORTED SQ DELETION.
 */
static void
admin_cq_stall_check(struct nvp_nvme_qpair *qpair)
{
	if (qpair->cq_stuck || qpair->conn_state != NVME_QP_CONNECTED ||
	    qpair->transport->qpair_cq_stalled == NULL ||
	    !qpair->transport->qpair_cq_stalled(qpair)) {
		return;
	}
	NVP_ERRLOG("%s: the admin completion queue is stuck behind an entry with a stale "
		   "phase tag (the controller posted past it); the controller is reset to "
		   "rebuild the admin queue (%u admin commands outstanding, event requests "
		   "included, end with ABORTED SQ DELETION)",
		   qpair->ctrlr->name, qpair->num_outstanding);
	qpair->stats.cq_stalls++;
	qpair->cq_stuck = true;
}

static void
process_recovery(struct nvp_nvme_qpair *qpair, uint64_t now)
{
	struct nvme_tracker *tr, *tmp;

	/* Nobody else may be polling the admin queue: move the Aborts along. */
	if (!qpair->is_admin) {
		qpair->ctrlr->recovery->admin_poll(qpair->ctrlr);
	}
	for (tr = TAILQ_FIRST(&qpair->recovery); tr != NULL; tr = tmp) {
		tmp = TAILQ_NEXT(tr, link); /* @tr may leave the list */
		recover_tracker(qpair, tr, now);
	}
	/* A command the Abort found gone ("not aborted") whose completion does not show
	 * up, or a later one's, may sit behind a stuck entry: look again at every poll
	 * while recovery lasts (two loads behind a call). */
	if (!TAILQ_EMPTY(&qpair->recovery) && cq_stalled(qpair)) {
		cq_stall_recover(qpair);
	}
}

/* Move expired trackers from the head of the outstanding list into recovery. */
static void
handle_expired(struct nvp_nvme_qpair *qpair, uint64_t now)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	struct nvme_tracker *tr;

	/* A dead controller explains every timeout at once: look before aborting. */
	if (ctrlr->recovery->check_health(ctrlr, "request timeout")) {
		return;
	}
	/* So does a stuck CQ: the completions are there, the host cannot see them. */
	if (cq_stalled(qpair)) {
		tr = TAILQ_FIRST(&qpair->outstanding);
		if (ctrlr->timeout_cb != NULL) {
			ctrlr->timeout_cb(ctrlr->timeout_cb_arg, ctrlr, qpair, tr->cid);
		}
		cq_stall_recover(qpair);
		return;
	}
	while ((tr = TAILQ_FIRST(&qpair->outstanding)) != NULL && now >= tr->deadline) {
		TAILQ_REMOVE(&qpair->outstanding, tr, link);
		TAILQ_INSERT_TAIL(&qpair->recovery, tr, link);
		tr->state = qpair->opts.timeout_no_abort ? NVME_TR_TIMED_OUT : NVME_TR_ABORT_WANTED;
		NVP_ERRLOG("qpair %u: CID %u (opcode 0x%02x) timed out after %" PRIu64 " us; %s",
			   qpair->id, tr->cid, tr->req->cmd.opc, qpair->opts.timeout_us,
			   tr->state == NVME_TR_TIMED_OUT ? "left outstanding (no Abort asked)" :
							    "sending Abort");
		if (ctrlr->timeout_cb != NULL) {
			ctrlr->timeout_cb(ctrlr->timeout_cb_arg, ctrlr,
					  qpair->is_admin ? NULL : qpair, tr->cid);
		}
		if (tr->state == NVME_TR_ABORT_WANTED) {
			send_abort(qpair, tr, now);
		}
	}
}

/*
 * How long requests may be outstanding with nothing completing before the poll reads
 * CSTS and looks for a stuck CQ: NVME_HEALTH_CHECK_MS, or half the request timeout if
 * that is shorter, so that a stuck CQ is found while what waits behind it can still be
 * sent again rather than failed (the admin queue: half the admin timeout, so that a
 * synchronous command waiting behind a stuck entry learns of it before it gives up).
 */
static inline uint64_t
health_interval(const struct nvp_nvme_qpair *qpair)
{
	uint64_t t = nvme_ms_to_ticks(qpair->ctrlr, NVME_HEALTH_CHECK_MS);
	uint64_t half = qpair->timeout_ticks / 2;

	if (qpair->is_admin) {
		half = nvme_ms_to_ticks(qpair->ctrlr, qpair->ctrlr->opts.admin_timeout_ms) / 2;
	}

	return half != 0 && half < t ? half : t;
}

/* Deadlines, recovery, and a look at CSTS when nothing completes for a while. */
void
nvme_qpair_check_deadlines(struct nvp_nvme_qpair *qpair, int32_t completed)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	struct nvme_tracker *tr = TAILQ_FIRST(&qpair->outstanding);
	uint64_t now = qpair->poll_ticks;

	if (qpair->timeout_ticks != 0 && tr != NULL && now >= tr->deadline) {
		handle_expired(qpair, now);
	}
	if (!TAILQ_EMPTY(&qpair->recovery)) {
		process_recovery(qpair, now);
	}
	if (nvp_unlikely(now >= qpair->next_release_tick)) {
		qpair->next_release_tick = now + nvme_ms_to_ticks(ctrlr, NVME_RELEASE_CHECK_MS);
		if (ctrlr->transport->ctrlr_release_requested != NULL &&
		    ctrlr->transport->ctrlr_release_requested(ctrlr)) {
			/* as if removed: every request fails, the application detaches, and
			 * the unbind waiting for the device can go on */
			ctrlr->recovery->removed(ctrlr);
		}
	}
	if (completed > 0 || qpair->health_base == 0) {
		qpair->health_base = now; /* a store: the interval is worked out when idle */
	} else if (now - qpair->health_base >= health_interval(qpair)) {
		qpair->health_base = now;
		/* Nothing completed for a while: a dead controller, or a stuck CQ, which is
		 * best re-made while the requests behind it are still within their deadlines
		 * (sent again, not failed). */
		if (ctrlr->recovery->check_health(ctrlr, "no completion for a while")) {
			return;
		}
		if (qpair->is_admin) {
			admin_cq_stall_check(qpair);
		} else if (cq_stalled(qpair)) {
			cq_stall_recover(qpair);
		}
	}
}

static void abort_tracker_list(struct nvp_nvme_qpair *qpair, struct nvme_tracker_list *list,
			       struct nvme_cpl *cpl);

/* ---------------------------------------------------------------------------------------
 * Reclaiming quarantined CIDs
 * ------------------------------------------------------------------------------------- */

/*
 * Requests wait, yet nothing can go out and nothing will come back: every tracker in use
 * is quarantined (lost completions took all spare CIDs, or all slots).
 */
bool
nvme_qpair_is_stuck(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tracker *tr;

	if (STAILQ_EMPTY(&qpair->queued) || !TAILQ_EMPTY(&qpair->outstanding) ||
	    TAILQ_EMPTY(&qpair->recovery)) {
		return false;
	}
	if (!SLIST_EMPTY(&qpair->free_tr) && qpair->slots_used < qpair->num_slots) {
		return false;
	}
	TAILQ_FOREACH (tr, &qpair->recovery, link) {
		if (tr->state != NVME_TR_QUARANTINED) {
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Re-creating the queues without blocking: after a controller reset, to reclaim CIDs
 *
 * A reset (from any thread) only bumps the controller's reset generation; it never
 * touches a qpair. The owner notices at its next poll (or submission), takes back what
 * the device forgot (retried, or completed with ABORTED SQ DELETION) and re-creates its
 * queues; reclaiming quarantined CIDs deletes them first. Each step is one admin command
 * submitted under a trylock and finished by whoever polls the admin queue; the owner's
 * polls only look at its status. Submissions meanwhile wait on the queued list, their
 * deadlines running.
 * ------------------------------------------------------------------------------------- */

#define NVME_CONN_PENDING UINT32_MAX

/* Any thread (the admin queue's poller): store the step's status for the owner. */
static void
conn_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct nvp_nvme_qpair *qpair = cb_arg;
	uint32_t st = (uint32_t)cpl->status.sct << 8 | cpl->status.sc;

	atomic_store_explicit(&qpair->conn_status, st, memory_order_release);
}

static void
conn_start(struct nvp_nvme_qpair *qpair, enum nvme_qpair_conn_state state)
{
	qpair->conn_state = (uint8_t)state;
	qpair->conn_step = 0;
	qpair->conn_inflight = false;
}

/*
 * Test only: with NVP_NVME_TEST_REFUSE_RECREATE=cq (or sq) in the environment, the Create
 * I/O CQ (SQ) that re-creates a qpair's queues (after a reset, or to re-make them) asks
 * for 65536 entries, which a controller must refuse unless its CAP.MQES is 65535 (Invalid
 * Queue Size). So the refusal path is driven by a device's own status on a controller
 * whose refusals cannot be injected (QEMU's: test/qemu/tests.list). Looked up at each
 * re-creation, so a test can unset it before the next reset.
 */
static void
test_refuse_recreate(struct nvme_cmd *cmd)
{
	const char *env = getenv("NVP_NVME_TEST_REFUSE_RECREATE");

	if (nvp_likely(env == NULL)) {
		return;
	}
	if ((cmd->opc == NVME_OPC_CREATE_IO_CQ && strcmp(env, "cq") == 0) ||
	    (cmd->opc == NVME_OPC_CREATE_IO_SQ && strcmp(env, "sq") == 0)) {
		cmd->cdw10 |= 0xffffu << 16; /* QSIZE, 0's based */
	}
}

/* Submit the current step's command. \return 0, 1 after the last step, -EAGAIN, -errno. */
static int
conn_submit_step(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	struct nvme_cmd cmd;
	int rc;

	rc = qpair->transport->qpair_conn_cmd(qpair, qpair->conn_state == NVME_QP_CREATING,
					      qpair->conn_step, &cmd);
	if (rc != 0) {
		return rc == -ENOENT ? 1 : rc;
	}
	if (qpair->conn_state == NVME_QP_CREATING) {
		test_refuse_recreate(&cmd);
	}
	if (!ctrlr->recovery->admin_trylock(ctrlr)) {
		return -EAGAIN;
	}
	atomic_store_explicit(&qpair->conn_status, NVME_CONN_PENDING, memory_order_relaxed);
	rc = ctrlr->recovery->admin_submit(ctrlr, &cmd, conn_cb, qpair);
	ctrlr->recovery->admin_unlock(ctrlr);
	if (rc == 0) {
		qpair->conn_inflight = true;
		qpair->conn_deadline = qpair->poll_ticks +
				       nvme_ms_to_ticks(ctrlr, ctrlr->opts.admin_timeout_ms);
	}
	return rc == -ENOMEM ? -EAGAIN : rc;
}

/*
 * Move the steps along as far as they go without waiting.
 * \return 1 when all are done, -EAGAIN while one is in flight, -ETIMEDOUT, -EIO (the
 * controller refused a step), or another -errno.
 */
static int
conn_advance(struct nvp_nvme_qpair *qpair)
{
	uint32_t st;
	int rc;

	for (;;) {
		if (qpair->conn_inflight) {
			st = atomic_load_explicit(&qpair->conn_status, memory_order_acquire);
			if (st == NVME_CONN_PENDING) {
				qpair->ctrlr->recovery->admin_poll(qpair->ctrlr);
				st = atomic_load_explicit(&qpair->conn_status,
							  memory_order_acquire);
			}
			if (st == NVME_CONN_PENDING) {
				return qpair->poll_ticks >= qpair->conn_deadline ? -ETIMEDOUT :
										   -EAGAIN;
			}
			qpair->conn_inflight = false;
			if (st != 0) {
				NVP_ERRLOG("qpair %u: %s its queues: step %u failed (sct 0x%x, sc "
					   "0x%02x)",
					   qpair->id,
					   qpair->conn_state == NVME_QP_CREATING ? "re-creating" :
										   "deleting",
					   qpair->conn_step, st >> 8, st & 0xffu);
				return -EIO;
			}
			qpair->conn_step++;
		}
		rc = conn_submit_step(qpair);
		if (rc != 0) {
			return rc;
		}
	}
}

/* A transport without qpair_conn_cmd: the synchronous ops (they may block the poll). */
static int
conn_sync(struct nvp_nvme_qpair *qpair)
{
	int rc;

	qpair->ctrlr->recovery->admin_lock(qpair->ctrlr);
	rc = qpair->conn_state == NVME_QP_CREATING ? qpair->transport->qpair_connect(qpair) :
						     qpair->transport->qpair_disconnect(qpair);
	qpair->ctrlr->recovery->admin_unlock(qpair->ctrlr);
	return rc == 0 ? 1 : rc;
}

/*
 * Nothing on the admin queue may call back into this qpair's trackers or itself any more
 * (Aborts, a step that timed out). \return false if the admin lock was busy: try later.
 */
static bool
conn_neuter(struct nvp_nvme_qpair *qpair)
{
	if (!qpair->ctrlr->recovery->admin_trylock(qpair->ctrlr)) {
		return false;
	}
	nvme_qpair_neuter_aborts(qpair->ctrlr->adminq, qpair);
	qpair->ctrlr->recovery->admin_unlock(qpair->ctrlr);
	qpair->conn_inflight = false;
	return true;
}

static void
complete_lost(struct nvp_nvme_qpair *qpair, struct nvme_request *req, uint16_t cid)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	cpl.cid = cid;
	nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
	nvme_complete_request(qpair, req, &cpl);
}

/*
 * The requests of @lost (the device forgot them in a reset, or its SQ was deleted): sent
 * again ahead of the queued list while their retry budget lasts and they had not timed
 * out, else completed with ABORTED SQ DELETION (DNR clear). Each exactly once: the
 * trackers are freed first.
 */
static void
retry_or_complete(struct nvp_nvme_qpair *qpair, struct nvme_tracker_list *lost)
{
	STAILQ_HEAD(, nvme_request) retry = STAILQ_HEAD_INITIALIZER(retry);
	/* With reconnect on, a lost request waits for the reconnect like a queued one:
	 * only its deadline, fast_io_fail_timeout_sec or the loss of the controller end it. */
	uint32_t budget = nvme_ctrlr_reconnect_enabled(qpair->ctrlr) ?
				  UINT32_MAX :
				  qpair->ctrlr->opts.io_retry_count;
	uint64_t now = qpair->poll_ticks;
	struct nvme_tracker *tr;

	while ((tr = TAILQ_FIRST(lost)) != NULL) {
		struct nvme_request *req = tr->req;
		bool active = tr->state == NVME_TR_ACTIVE;
		uint64_t deadline = tr->deadline;

		TAILQ_REMOVE(lost, tr, link);
		tr->cpl_pending = false;
		atomic_store_explicit(&tr->abort_result, NVME_ABORT_NONE, memory_order_relaxed);
		nvme_tracker_free(qpair, tr);
		if (req == NULL) {
			continue; /* quarantined: already completed */
		}
		if (active && req->retries < budget && !qpair->is_admin &&
		    (deadline == 0 || now < deadline)) {
			req->retries++;
			req->dptr_built = false; /* its PRP list pages went with the tracker */
			req->accept_ticks = deadline != 0 ? deadline - qpair->timeout_ticks : 0;
			STAILQ_INSERT_TAIL(&retry, req, link);
		} else {
			complete_lost(qpair, req, tr->cid);
		}
	}
	STAILQ_CONCAT(&retry, &qpair->queued);
	STAILQ_CONCAT(&qpair->queued, &retry);
}

/*
 * The owner's side of a controller reset: take back every command the device had, rewind
 * the rings, start re-creating the queues. \return false if the admin lock was busy.
 */
static bool
owner_reset(struct nvp_nvme_qpair *qpair, uint32_t gen)
{
	struct nvme_tracker_list lost = TAILQ_HEAD_INITIALIZER(lost);

	if (!conn_neuter(qpair)) {
		return false;
	}
	NVP_NOTICELOG("qpair %u: controller was reset; re-creating its queues (%u requests "
		      "outstanding)",
		      qpair->id, qpair->num_outstanding);
	qpair->reset_gen = gen;
	qpair->failed = false;
	TAILQ_CONCAT(&lost, &qpair->outstanding, link);
	TAILQ_CONCAT(&lost, &qpair->recovery, link);
	qpair->transport->qpair_reset(qpair);
	conn_start(qpair, NVME_QP_CREATING); /* callbacks' submissions now queue */
	retry_or_complete(qpair, &lost);
	return true;
}

/*
 * The old SQ is deleted: every command of it is completed or implicitly completed
 * (NVMe 1.4 section 5.6), no late completion can come for a quarantined CID any more.
 * What the device had is handled as after a controller reset: requests still in their
 * deadline are sent again (retry budget), the others complete with an error status (a
 * reclaim has none outstanding; a stuck CQ has those whose completions it hid).
 */
static bool
reclaim_done(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tracker_list lost = TAILQ_HEAD_INITIALIZER(lost);

	if (!conn_neuter(qpair)) {
		return false;
	}
	TAILQ_CONCAT(&lost, &qpair->outstanding, link);
	TAILQ_CONCAT(&lost, &qpair->recovery, link);
	qpair->transport->qpair_reset(qpair);
	conn_start(qpair, NVME_QP_CREATING);
	retry_or_complete(qpair, &lost);
	return true;
}

/*
 * The controller is reconnecting: take back every command the lost connection (or the
 * queues a reset is about to forget) had, close it, and wait as LOST. The requests are
 * sent again after the reconnect, each completing once. \return false if the admin lock
 * was busy: try at the next poll.
 */
static bool
owner_lose(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tracker_list lost = TAILQ_HEAD_INITIALIZER(lost);

	if (!conn_neuter(qpair)) {
		return false;
	}
	if (qpair->conn_state != NVME_QP_LOST || !TAILQ_EMPTY(&qpair->outstanding)) {
		NVP_NOTICELOG("qpair %u: connection lost; %u requests wait for the controller "
			      "to reconnect",
			      qpair->id, qpair->num_outstanding);
	}
	TAILQ_CONCAT(&lost, &qpair->outstanding, link);
	TAILQ_CONCAT(&lost, &qpair->recovery, link);
	qpair->transport->qpair_reset(qpair);
	qpair->conn_state = NVME_QP_LOST;
	qpair->failed = false;
	retry_or_complete(qpair, &lost);
	return true;
}

/* The transport, on the owner's thread: the qpair's connection is gone. */
void
nvme_qpair_conn_lost(struct nvp_nvme_qpair *qpair, const char *why)
{
	if (qpair->conn_state == NVME_QP_CONNECTED) {
		qpair->conn_state = NVME_QP_LOST;
	}
	nvme_ctrlr_conn_lost(qpair->ctrlr, why);
}

/*
 * fast_io_fail_timeout_sec has passed while reconnecting: what waits completes with HOST
 * PATHING ERROR, DNR clear (the caller may send it again: after the reconnect it goes
 * out). Requests its callbacks submit wait for the next poll.
 */
void
nvme_qpair_fast_io_fail(struct nvp_nvme_qpair *qpair)
{
	STAILQ_HEAD(, nvme_request) fail = STAILQ_HEAD_INITIALIZER(fail);
	struct nvme_request *req;
	struct nvme_cpl cpl;

	STAILQ_CONCAT(&fail, &qpair->queued);
	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	cpl.cid = 0xffff;
	nvme_cpl_set_status(&cpl, NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR, false);
	while ((req = STAILQ_FIRST(&fail)) != NULL) {
		STAILQ_REMOVE_HEAD(&fail, link);
		nvme_complete_request(qpair, req, &cpl);
	}
}

/* A step failed for good: fail the qpair (a controller reset brings it back). */
static void
conn_fail(struct nvp_nvme_qpair *qpair, int rc)
{
	NVP_ERRLOG("qpair %u: cannot %s its queues (%d); failing it: its requests complete "
		   "with ABORTED SQ DELETION until a controller reset",
		   qpair->id, qpair->conn_state == NVME_QP_CREATING ? "create" : "delete", rc);
	qpair->conn_state = NVME_QP_CONNECTED;
	qpair->failed = true;
	nvme_qpair_abort_all(qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
}

/* Re-create the queues: a connection made without blocking (TCP), admin commands
 * (PCIe), or the synchronous op. */
static int
conn_run(struct nvp_nvme_qpair *qpair)
{
	const struct nvme_transport_ops *t = qpair->transport;
	int rc;

	if (qpair->conn_state == NVME_QP_CREATING && t->qpair_connect_poll != NULL) {
		rc = t->qpair_connect_poll(qpair);
		return rc == 0 ? -EAGAIN : rc;
	}
	return t->qpair_conn_cmd != NULL ? conn_advance(qpair) : conn_sync(qpair);
}

/* One move of the machine. \return true once the queues are usable. */
static bool
conn_move(struct nvp_nvme_qpair *qpair)
{
	int rc = conn_run(qpair);

	if (rc == -EAGAIN) {
		return false;
	}
	if (rc == 1 && qpair->conn_state == NVME_QP_DELETING) {
		return reclaim_done(qpair) && conn_move(qpair);
	}
	if (rc == 1) {
		qpair->conn_state = NVME_QP_CONNECTED;
		NVP_NOTICELOG("qpair %u: queues created", qpair->id);
		return true;
	}
	if ((rc == -ETIMEDOUT && !conn_neuter(qpair)) || nvme_qpair_reset_pending(qpair)) {
		return false; /* try again at the next poll; a new reset restarts it all */
	}
	if (qpair->conn_state == NVME_QP_CREATING && nvme_ctrlr_reconnect_enabled(qpair->ctrlr)) {
		qpair->transport->qpair_reset(qpair);
		nvme_qpair_conn_lost(qpair, "an I/O queue could not connect");
		qpair->conn_state = NVME_QP_LOST;
		return false;
	}
	conn_fail(qpair, rc);
	return false;
}

/*
 * The slow part of a poll: a reset to catch up with, or queues being re-created.
 * \return true once the queues are usable (the poll goes on as usual).
 */
bool
nvme_qpair_conn_poll(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	uint32_t gen = atomic_load_explicit(&ctrlr->reset_gen, memory_order_acquire);

	if (nvp_unlikely(!qpair->is_admin && nvme_ctrlr_is_reconnecting(ctrlr))) {
		if (qpair->conn_state != NVME_QP_LOST || !TAILQ_EMPTY(&qpair->outstanding) ||
		    !TAILQ_EMPTY(&qpair->recovery)) {
			(void)owner_lose(qpair);
		}
		/* nobody need poll the admin queue: an I/O poll steps the reconnect too */
		nvme_ctrlr_reconnect_poll_io(ctrlr, qpair->poll_ticks);
		return false;
	}
	if (qpair->reset_gen != gen) {
		/* Wait until the resetting thread has the controller READY again. */
		if (atomic_load_explicit(&ctrlr->resetting, memory_order_acquire) ||
		    !owner_reset(qpair, gen)) {
			return false;
		}
	}
	if (qpair->conn_state == NVME_QP_CONNECTED) {
		return !qpair->failed;
	}
	if (qpair->conn_state == NVME_QP_LOST) {
		/* no reset since the loss, and no reconnect any more */
		conn_fail(qpair, -ENXIO);
		return false;
	}
	return conn_move(qpair);
}

/*
 * A new qpair (opts.async_mode) whose queues do not exist yet: the owner's polls create
 * them as they re-create them after a reset, and a failure ends the same way. Its
 * transport state is that of a qpair_reset (nothing open, rings empty). Made while a
 * reset runs (the generation read before the flag: a reset sets the flag first), it
 * takes an older generation, so that its first polls wait for the reset to end as any
 * qpair does (an I/O queue's Connect names the admin queue's controller, which the
 * reset is re-making).
 */
void
nvme_qpair_conn_start_create(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	uint32_t gen = atomic_load(&ctrlr->reset_gen);

	qpair->reset_gen = atomic_load(&ctrlr->resetting) ? gen - 1u : gen;
	conn_start(qpair, NVME_QP_CREATING);
}

/*
 * Requests wait, yet nothing can go out and nothing will come back: every tracker in use
 * is quarantined (lost completions took all spare CIDs, or all slots). Delete and
 * re-create the queues, without waiting for the admin queue.
 */
void
nvme_qpair_reclaim_start(struct nvp_nvme_qpair *qpair)
{
	NVP_WARNLOG("qpair %u: every usable command identifier is quarantined after lost "
		    "completions; deleting and re-creating the queues to reclaim them",
		    qpair->id);
	conn_start(qpair, NVME_QP_DELETING);
	(void)nvme_qpair_conn_poll(qpair);
}

/* Requests that waited on the queued list past their deadline: never sent, completed. */
void
nvme_qpair_expire_queued(struct nvp_nvme_qpair *qpair, uint64_t now)
{
	struct nvme_request *req;
	struct nvme_cpl cpl;

	while ((req = STAILQ_FIRST(&qpair->queued)) != NULL &&
	       now >= req->accept_ticks + qpair->timeout_ticks) {
		STAILQ_REMOVE_HEAD(&qpair->queued, link);
		NVP_ERRLOG("qpair %u: a request (opcode 0x%02x) timed out after %" PRIu64
			   " us before it could be sent; completed with ABORTED BY HOST",
			   qpair->id, req->cmd.opc, qpair->opts.timeout_us);
		memset(&cpl, 0, sizeof(cpl));
		cpl.sqid = qpair->id;
		cpl.cid = 0xffff;
		nvme_cpl_set_status(&cpl, NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST, false);
		nvme_complete_request(qpair, req, &cpl);
	}
}

/* ---------------------------------------------------------------------------------------
 * Mass completion: failure, deletion, reset
 * ------------------------------------------------------------------------------------- */

/* Complete the requests of every tracker on @list with @cpl's status; free the trackers. */
static void
abort_tracker_list(struct nvp_nvme_qpair *qpair, struct nvme_tracker_list *list,
		   struct nvme_cpl *cpl)
{
	struct nvme_tracker *tr;

	while ((tr = TAILQ_FIRST(list)) != NULL) {
		struct nvme_request *req = tr->req;

		TAILQ_REMOVE(list, tr, link);
		tr->cpl_pending = false;
		atomic_store_explicit(&tr->abort_result, NVME_ABORT_NONE, memory_order_relaxed);
		nvme_tracker_free(qpair, tr);
		if (req != NULL) {
			cpl->cid = tr->cid;
			nvme_complete_request(qpair, req, cpl);
		}
	}
}

/*
 * Complete everything outstanding or queued on @qpair with status @sct/@sc, DNR as @dnr:
 * set only if sending them again cannot succeed (the device is removed, the application
 * frees the qpair or detaches); clear when a reset may bring the controller back (see
 * nvme_cpl_set_status()).
 */
void
nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc, bool dnr)
{
	struct nvme_request *req;
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	nvme_cpl_set_status(&cpl, sct, sc, dnr);
	abort_tracker_list(qpair, &qpair->outstanding, &cpl);
	abort_tracker_list(qpair, &qpair->recovery, &cpl);
	while ((req = STAILQ_FIRST(&qpair->queued)) != NULL) {
		STAILQ_REMOVE_HEAD(&qpair->queued, link);
		cpl.cid = 0xffff;
		nvme_complete_request(qpair, req, &cpl);
	}
}

/* No retry can help @qpair's requests: its device is removed, or the qpair is being freed. */
bool
nvme_qpair_gone_for_good(const struct nvp_nvme_qpair *qpair)
{
	return qpair->deleting ||
	       atomic_load_explicit(&qpair->ctrlr->removed, memory_order_relaxed);
}

/*
 * A waiter gives up on its request (a sync admin command timed out): the request whose
 * callback is @cb with @cb_arg gets @new_cb/@new_arg instead, so a late completion no
 * longer touches the waiter. A request still on the queued list is removed and given
 * back instead (it was never sent). \return true and its CID in *@cid if the device has
 * it; false if it was dequeued or is not there.
 */
bool
nvme_qpair_orphan_request(struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb, void *cb_arg,
			  nvp_nvme_cmd_cb new_cb, void *new_arg, uint16_t *cid)
{
	struct nvme_request *req;
	uint32_t i;

	STAILQ_FOREACH (req, &qpair->queued, link) {
		if (req->cb_fn == cb && req->cb_arg == cb_arg) {
			STAILQ_REMOVE(&qpair->queued, req, nvme_request, link);
			qpair->num_outstanding--;
			nvme_qpair_free_request(qpair, req);
			return false;
		}
	}
	for (i = 0; i < qpair->num_trackers; i++) {
		req = qpair->trackers[i].req;
		if (req != NULL && req->cb_fn == cb && req->cb_arg == cb_arg) {
			req->cb_fn = new_cb;
			req->cb_arg = new_arg;
			*cid = qpair->trackers[i].cid;
			return true;
		}
	}
	return false;
}

/* True if @req is an Abort sent for one of @qpair's trackers, or a step of re-creating
 * its queues. */
static bool
is_abort_for(const struct nvme_request *req, const struct nvp_nvme_qpair *qpair)
{
	const struct nvme_tracker *tr = req->cb_arg;

	if (req->cb_fn == conn_cb) {
		return req->cb_arg == qpair;
	}
	return req->cb_fn == abort_cb && tr >= qpair->trackers &&
	       tr < qpair->trackers + qpair->num_trackers;
}

/*
 * @qpair is going away (or its trackers are being reused after a reset): Aborts and
 * queue commands on the admin queue that point at it must not call back into it. Called
 * with the admin lock held.
 */
void
nvme_qpair_neuter_aborts(struct nvp_nvme_qpair *adminq, struct nvp_nvme_qpair *qpair)
{
	struct nvme_request *req;
	uint32_t i;

	for (i = 0; i < adminq->num_trackers; i++) {
		req = adminq->trackers[i].req;
		if (req != NULL && is_abort_for(req, qpair)) {
			req->cb_fn = NULL;
		}
	}
	STAILQ_FOREACH (req, &adminq->queued, link) {
		if (is_abort_for(req, qpair)) {
			req->cb_fn = NULL;
		}
	}
}
