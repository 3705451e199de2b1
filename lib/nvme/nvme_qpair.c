/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs, transport independent: request objects, trackers (slots and command
 * identifiers), the queued list, per-request deadlines and timeout recovery.
 *
 * Life of a request: taken from the free list by a submit call; if a tracker is free and
 * nobody is queued ahead of it, the transport writes it into the SQ at once, otherwise it
 * waits on the queued list and goes out when a completion frees a slot. Its completion
 * frees the tracker and the request, then calls the callback, exactly once.
 *
 * Timeouts (qpair opts.timeout_us): trackers sit on the outstanding list in submission
 * order, so only the head needs looking at. An expired tracker moves to the recovery
 * list and an Abort (SQID, CID) goes to the admin queue. The Abort's callback may run on
 * any thread; it only stores its verdict in the tracker's atomic abort_result. The owner
 * reads it on its next poll: "aborted" means the command's own completion (ABORTED BY
 * REQUEST) follows; "not aborted", a failed Abort, or no answer in time mean the driver
 * completes the request itself (PATH / ABORTED BY HOST, DNR) and quarantines the CID until
 * the device's late completion arrives (it is swallowed) or a reset.
 *
 * CIDs and SQ slots are counted apart: a qpair has num_entries - 1 slots and a few more
 * trackers (spare CIDs). "Not aborted" means the command has left the SQ, so its slot is
 * given back while its CID stays quarantined. Should quarantined CIDs ever take every
 * usable tracker, the qpair deletes and re-creates its queues, which ends every command
 * of the old SQ and frees them all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_pcie_internal.h"

void
nvme_cpl_set_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc, bool dnr)
{
	cpl->status_raw = 0;
	cpl->status.sct = sct;
	cpl->status.sc = sc;
	cpl->status.dnr = dnr ? 1 : 0;
}

/* ---------------------------------------------------------------------------------------
 * Set-up
 * ------------------------------------------------------------------------------------- */

/*
 * Pages for dataset management ranges, made here so that a DSM command never needs memory
 * from anywhere at submission time.
 */
static int
init_dsm_pool(struct nvp_nvme_qpair *qpair, uint32_t num_requests)
{
	uint32_t n = NVP_MIN(num_requests, NVME_DSM_POOL_PAGES);
	uint32_t i;

	qpair->dsm_pages = nvp_env_dma_zmalloc((size_t)n * NVME_DSM_PAGE_SIZE, NVME_DSM_PAGE_SIZE,
					       NULL);
	qpair->dsm_free = calloc(n, sizeof(*qpair->dsm_free));
	if (qpair->dsm_pages == NULL || qpair->dsm_free == NULL) {
		NVP_ERRLOG("qpair %u: cannot allocate %zu KiB of DMA memory for dataset "
			   "management ranges",
			   qpair->id, (size_t)n * NVME_DSM_PAGE_SIZE / 1024);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		qpair->dsm_free[i] = (uint8_t *)qpair->dsm_pages + (size_t)i * NVME_DSM_PAGE_SIZE;
	}
	qpair->dsm_free_count = n;
	return 0;
}

/* Zeroed, cache line aligned (requests and trackers are laid out by cache line). */
static void *
aligned_calloc(size_t n, size_t size)
{
	void *p = NULL;

	if (n > SIZE_MAX / size || posix_memalign(&p, 64, n * size) != 0) {
		return NULL;
	}
	memset(p, 0, n * size);
	return p;
}

static int
init_requests(struct nvp_nvme_qpair *qpair, uint32_t num_requests, bool with_dma_pages)
{
	uint32_t i;

	qpair->reqs = aligned_calloc(num_requests, sizeof(*qpair->reqs));
	if (qpair->reqs == NULL) {
		return -ENOMEM;
	}
	qpair->num_requests = num_requests;
	for (i = 0; i < num_requests; i++) {
		STAILQ_INSERT_TAIL(&qpair->free_req, &qpair->reqs[i], link);
	}
	return with_dma_pages ? init_dsm_pool(qpair, num_requests) : 0;
}

/*
 * Initialise the generic part of a qpair: @num_entries queue entries give
 * num_entries - 1 slots (a full SQ holds one entry less than its size, section 4.1),
 * as many trackers plus a few spare CIDs for quarantine, and @num_requests requests.
 */
int
nvme_qpair_init(struct nvp_nvme_qpair *qpair, struct nvp_nvme_ctrlr *ctrlr, uint16_t id,
		uint32_t num_entries, uint32_t num_requests, bool with_dma_pages)
{
	uint32_t i;

	qpair->ctrlr = ctrlr;
	qpair->transport = ctrlr->transport;
	qpair->id = id;
	qpair->is_admin = id == 0;
	qpair->num_entries = num_entries;
	qpair->num_slots = num_entries - 1;
	qpair->num_trackers = qpair->num_slots +
			      NVP_MIN(NVP_MIN(qpair->num_slots, NVME_QUARANTINE_SPARE_CIDS),
				      NVME_MAX_QUEUE_ENTRIES - qpair->num_slots);
	qpair->owner = pthread_self();
	SLIST_INIT(&qpair->free_tr);
	TAILQ_INIT(&qpair->outstanding);
	TAILQ_INIT(&qpair->recovery);
	TAILQ_INIT(&qpair->reset_aborted);
	STAILQ_INIT(&qpair->queued);
	STAILQ_INIT(&qpair->free_req);
	if (num_entries < NVME_MIN_QUEUE_ENTRIES || num_requests == 0) {
		return -EINVAL;
	}
	qpair->trackers = aligned_calloc(qpair->num_trackers, sizeof(*qpair->trackers));
	if (qpair->trackers == NULL) {
		return -ENOMEM;
	}
	for (i = qpair->num_trackers; i-- > 0;) { /* CID 0 on top */
		struct nvme_tracker *tr = &qpair->trackers[i];

		tr->cid = (uint16_t)i;
		atomic_init(&tr->abort_result, NVME_ABORT_NONE);
		SLIST_INSERT_HEAD(&qpair->free_tr, tr, free_link);
	}
	return init_requests(qpair, num_requests, with_dma_pages);
}

void
nvme_qpair_fini(struct nvp_nvme_qpair *qpair)
{
	free(qpair->trackers);
	qpair->trackers = NULL;
	free(qpair->reqs);
	qpair->reqs = NULL;
	nvp_env_dma_free(qpair->dsm_pages);
	qpair->dsm_pages = NULL;
	free(qpair->dsm_free);
	qpair->dsm_free = NULL;
	qpair->dsm_free_count = 0;
}

/* ---------------------------------------------------------------------------------------
 * Submission and completion
 * ------------------------------------------------------------------------------------- */

/* PCIe directly (inline, no indirect call), other transports through their ops. */
static inline void
ring_sq(struct nvp_nvme_qpair *qpair)
{
	if (nvp_likely(nvme_qpair_is_pcie(qpair))) {
		nvme_pcie_qpair_ring_doorbell(qpair);
	} else {
		qpair->transport->qpair_ring_doorbell(qpair);
	}
	qpair->sq_dirty = false;
}

static inline __attribute__((always_inline)) int
xport_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, struct nvme_request *req)
{
	if (nvp_likely(nvme_qpair_is_pcie(qpair))) {
		return nvme_pcie_qpair_submit(qpair, tr, req);
	}
	return qpair->transport->qpair_submit(qpair, tr, req);
}

static inline int32_t
xport_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	if (nvp_likely(nvme_qpair_is_pcie(qpair))) {
		return nvme_pcie_qpair_process_completions(qpair, max);
	}
	return qpair->transport->qpair_process_completions(qpair, max);
}

/* Hand @req to the transport in slot @tr, the top of the free stack. \return 0, -EAGAIN,
 * or -errno. */
static inline __attribute__((always_inline)) int
submit_tracker(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, struct nvme_request *req)
{
	int rc = xport_submit(qpair, tr, req);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	SLIST_REMOVE_HEAD(&qpair->free_tr, free_link); /* @tr is its first */
	qpair->slots_used++;
	tr->holds_slot = true;
	tr->req = req;
	tr->cpl_pending = true;
	tr->state = NVME_TR_ACTIVE;
	if (qpair->timeout_ticks != 0) {
		/* Inside a poll (callbacks) the poll's own timestamp is fresh enough. */
		tr->deadline = (qpair->in_batch ? qpair->poll_ticks : nvme_ticks(qpair->ctrlr)) +
			       qpair->timeout_ticks;
	} else {
		tr->deadline = 0;
	}
	TAILQ_INSERT_TAIL(&qpair->outstanding, tr, link);
	qpair->sq_dirty = true;
	qpair->stats.submitted++;
	return 0;
}

/*
 * Accept @req: into the SQ now if a slot is free and nobody waits ahead of it, else onto
 * the queued list (after checking its payload, so a bad buffer is still reported to the
 * caller). On error the request object is given back.
 * \return 0, -ENXIO (failed controller or qpair being deleted), or the payload's -errno.
 */
int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	struct nvme_tracker *tr = SLIST_FIRST(&qpair->free_tr);
	int rc;

	if (nvp_unlikely(qpair->failed || qpair->deleting || nvme_ctrlr_is_failed(qpair->ctrlr))) {
		nvme_qpair_free_request(qpair, req);
		return -ENXIO;
	}
	if (nvp_likely(tr != NULL && qpair->slots_used < qpair->num_slots &&
		       STAILQ_EMPTY(&qpair->queued))) {
		rc = submit_tracker(qpair, tr, req);
		if (nvp_likely(rc == 0)) {
			qpair->num_outstanding++;
			if (!qpair->delay_doorbell && !qpair->in_batch) {
				ring_sq(qpair);
			}
			return 0;
		}
		if (rc != -EAGAIN) {
			nvme_qpair_free_request(qpair, req);
			return rc;
		}
	}
	rc = nvme_qpair_is_pcie(qpair) ? nvme_pcie_qpair_check_request(qpair, req) :
					 qpair->transport->qpair_check_request(qpair, req);
	if (nvp_unlikely(rc != 0)) {
		nvme_qpair_free_request(qpair, req);
		return rc;
	}
	STAILQ_INSERT_TAIL(&qpair->queued, req, link);
	qpair->num_outstanding++;
	return 0;
}

/* Move queued requests into free slots (the caller rings once for the whole batch). */
static void
submit_queued(struct nvp_nvme_qpair *qpair)
{
	struct nvme_request *req;
	struct nvme_tracker *tr;
	struct nvme_cpl cpl;

	while (qpair->slots_used < qpair->num_slots &&
	       (req = STAILQ_FIRST(&qpair->queued)) != NULL &&
	       (tr = SLIST_FIRST(&qpair->free_tr)) != NULL) {
		int rc = submit_tracker(qpair, tr, req);

		if (rc == -EAGAIN) {
			break; /* chained PRP list pages short: retry after more completions */
		}
		STAILQ_REMOVE_HEAD(&qpair->queued, link);
		if (nvp_unlikely(rc != 0)) {
			/* The payload passed the check when queued; its SGL callbacks now
			 * disagree. Complete it with an error rather than lose it. */
			memset(&cpl, 0, sizeof(cpl));
			cpl.sqid = qpair->id;
			nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR,
					    true);
			nvme_complete_request(qpair, req, &cpl);
		}
	}
}

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
		/* Outstanding at a controller reset: the owner completes it at its next poll
		 * (nvme_qpair_abort_reset_requests()); a stale completion must not. */
		return;
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

	if (cpl->cid >= qpair->num_trackers || !qpair->trackers[cpl->cid].cpl_pending) {
		NVP_ERRLOG("qpair %u: completion for CID %u, which is not outstanding (sqhd %u, "
			   "status 0x%04x); ignored",
			   qpair->id, cpl->cid, cpl->sqhd, cpl->status_raw);
		return;
	}
	tr = &qpair->trackers[cpl->cid];
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

static void
send_abort(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, uint64_t now)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int rc;

	atomic_store_explicit(&tr->abort_result, NVME_ABORT_INFLIGHT, memory_order_relaxed);
	rc = nvme_ctrlr_cmd_abort(ctrlr, qpair->id, tr->cid, abort_cb, tr, true);
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
	nvme_cpl_set_status(&cpl, NVME_SCT_PATH, NVME_SC_ABORTED_BY_HOST, true);
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

static void
process_recovery(struct nvp_nvme_qpair *qpair, uint64_t now)
{
	struct nvme_tracker *tr, *tmp;

	/* Nobody else may be polling the admin queue: move the Aborts along. */
	if (!qpair->is_admin) {
		nvme_ctrlr_process_admin_trylock(qpair->ctrlr);
	}
	for (tr = TAILQ_FIRST(&qpair->recovery); tr != NULL; tr = tmp) {
		tmp = TAILQ_NEXT(tr, link); /* @tr may leave the list */
		recover_tracker(qpair, tr, now);
	}
}

/* Move expired trackers from the head of the outstanding list into recovery. */
static void
handle_expired(struct nvp_nvme_qpair *qpair, uint64_t now)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	struct nvme_tracker *tr;

	/* A dead controller explains every timeout at once: look before aborting. */
	if (nvme_ctrlr_check_health(ctrlr, "request timeout")) {
		return;
	}
	while ((tr = TAILQ_FIRST(&qpair->outstanding)) != NULL && now >= tr->deadline) {
		TAILQ_REMOVE(&qpair->outstanding, tr, link);
		TAILQ_INSERT_TAIL(&qpair->recovery, tr, link);
		tr->state = NVME_TR_ABORT_WANTED;
		NVP_ERRLOG("qpair %u: CID %u (opcode 0x%02x) timed out after %" PRIu64 " us; "
			   "sending Abort",
			   qpair->id, tr->cid, tr->req->cmd.opc, qpair->opts.timeout_us);
		if (ctrlr->timeout_cb != NULL) {
			ctrlr->timeout_cb(ctrlr->timeout_cb_arg, ctrlr,
					  qpair->is_admin ? NULL : qpair, tr->cid);
		}
		send_abort(qpair, tr, now);
	}
}

/* Deadlines, recovery, and a look at CSTS when nothing completes for a while. */
static void
check_deadlines(struct nvp_nvme_qpair *qpair, int32_t completed)
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
	if (completed > 0 || qpair->next_health_tick == 0) {
		qpair->next_health_tick = now + nvme_ms_to_ticks(ctrlr, NVME_HEALTH_CHECK_MS);
	} else if (now >= qpair->next_health_tick) {
		qpair->next_health_tick = now + nvme_ms_to_ticks(ctrlr, NVME_HEALTH_CHECK_MS);
		nvme_ctrlr_check_health(ctrlr, "no completion for a while");
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
static bool
qpair_is_stuck(struct nvp_nvme_qpair *qpair)
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

/*
 * Delete and re-create the qpair's queues on the device. Once Delete I/O SQ completes,
 * every command of that SQ is completed or implicitly completed (NVMe 1.4 section 5.6):
 * no late completion can come for a quarantined CID any more, so all are freed.
 */
static void
reclaim_quarantined(struct nvp_nvme_qpair *qpair)
{
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	struct nvme_cpl cpl;
	int rc;

	NVP_WARNLOG("qpair %u: every usable command identifier is quarantined after lost "
		    "completions; deleting and re-creating the queues to reclaim them",
		    qpair->id);
	nvme_ctrlr_lock(ctrlr);
	rc = qpair->transport->qpair_disconnect(qpair);
	if (rc != 0) {
		nvme_ctrlr_unlock(ctrlr);
		NVP_ERRLOG("qpair %u: cannot delete its queues (%d); reset the controller",
			   qpair->id, rc);
		return;
	}
	nvme_qpair_neuter_aborts(ctrlr->adminq, qpair);
	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
	abort_tracker_list(qpair, &qpair->recovery, &cpl);
	qpair->transport->qpair_reset(qpair);
	rc = qpair->transport->qpair_connect(qpair);
	nvme_ctrlr_unlock(ctrlr);
	if (rc != 0) {
		NVP_ERRLOG("qpair %u: cannot re-create its queues (%d); failing it", qpair->id, rc);
		qpair->failed = true;
		nvme_qpair_abort_all(qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	}
}

/* ---------------------------------------------------------------------------------------
 * Polling
 * ------------------------------------------------------------------------------------- */

/* Complete every request of a qpair whose controller failed; accept no more. */
static void
fail_qpair(struct nvp_nvme_qpair *qpair)
{
	if (!qpair->failed) {
		qpair->failed = true;
		NVP_ERRLOG("qpair %u: controller failed; completing %u outstanding requests "
			   "with ABORTED SQ DELETION",
			   qpair->id, qpair->num_outstanding);
		nvme_qpair_abort_all(qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	}
}

/* Completions, deadlines, then queued requests into the freed slots. */
static int32_t
process_batch(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	int32_t n;

	if (nvp_unlikely(!TAILQ_EMPTY(&qpair->reset_aborted))) {
		nvme_qpair_abort_reset_requests(qpair);
	}
	n = xport_process_completions(qpair, max_completions);
	if (!TAILQ_EMPTY(&qpair->outstanding) || nvp_unlikely(!TAILQ_EMPTY(&qpair->recovery))) {
		check_deadlines(qpair, n);
		if (nvp_unlikely(nvme_ctrlr_is_failed(qpair->ctrlr))) {
			fail_qpair(qpair);
			return -ENXIO;
		}
	}
	if (!STAILQ_EMPTY(&qpair->queued)) {
		submit_queued(qpair);
		if (nvp_unlikely(qpair_is_stuck(qpair))) {
			reclaim_quarantined(qpair);
			submit_queued(qpair);
		}
	}
	return n;
}

/*
 * One poll. Doorbells: whatever was submitted since the last poll goes to the device
 * first (it has waited long enough); everything submitted during the poll — from
 * completion callbacks, or queued requests moving into freed slots — is written into the
 * SQ and announced with one doorbell write at the end, however many there are. So an
 * application that resubmits from its callbacks costs one SQ doorbell per poll, not one
 * per I/O: on real hardware an uncached PCIe write, under virtualization a trap.
 * in_batch is saved and restored: an admin callback may poll the admin queue again.
 * \return completions processed, or -ENXIO once the controller failed.
 */
int32_t
nvme_qpair_process(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	bool outer_batch = qpair->in_batch;
	int32_t n;

	if (nvp_unlikely(qpair->failed || nvme_ctrlr_is_failed(qpair->ctrlr))) {
		fail_qpair(qpair);
		return -ENXIO;
	}
	qpair->stats.polls++;
	if (qpair->sq_dirty) {
		ring_sq(qpair);
	}
	/* One tick read per poll: deadlines of what completes and what is submitted. */
	qpair->poll_ticks = nvme_ticks(qpair->ctrlr);
	qpair->in_batch = true;
	n = process_batch(qpair, max_completions);
	qpair->in_batch = outer_batch;
	if (nvp_unlikely(n < 0)) {
		return n;
	}
	if (qpair->sq_dirty) {
		ring_sq(qpair);
	}
	return qpair->failed ? -ENXIO : n;
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
 * Complete everything outstanding or queued on @qpair with status @sct/@sc (DNR set).
 * Used when the controller failed and when the qpair is freed.
 */
void
nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc)
{
	struct nvme_request *req;
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	nvme_cpl_set_status(&cpl, sct, sc, true);
	abort_tracker_list(qpair, &qpair->outstanding, &cpl);
	abort_tracker_list(qpair, &qpair->recovery, &cpl);
	abort_tracker_list(qpair, &qpair->reset_aborted, &cpl);
	while ((req = STAILQ_FIRST(&qpair->queued)) != NULL) {
		STAILQ_REMOVE_HEAD(&qpair->queued, link);
		cpl.cid = 0xffff;
		nvme_complete_request(qpair, req, &cpl);
	}
}

/*
 * Controller reset, called with the admin lock held while no thread is inside a call on
 * @qpair: every request the device had is forgotten by it. Park their trackers for the
 * owner (it completes them at its next poll) and rewind the rings.
 */
void
nvme_qpair_prepare_reset(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tracker *tr;

	while ((tr = TAILQ_FIRST(&qpair->outstanding)) != NULL) {
		TAILQ_REMOVE(&qpair->outstanding, tr, link);
		TAILQ_INSERT_TAIL(&qpair->reset_aborted, tr, link);
		tr->state = NVME_TR_FREE; /* not ACTIVE: a stray completion is ignored */
	}
	while ((tr = TAILQ_FIRST(&qpair->recovery)) != NULL) {
		TAILQ_REMOVE(&qpair->recovery, tr, link);
		TAILQ_INSERT_TAIL(&qpair->reset_aborted, tr, link);
		tr->state = NVME_TR_FREE;
	}
	TAILQ_FOREACH (tr, &qpair->reset_aborted, link) {
		tr->cpl_pending = false;
	}
	qpair->failed = false;
	qpair->transport->qpair_reset(qpair);
}

/* The owner's side of a reset: complete what the device forgot (retry allowed). */
void
nvme_qpair_abort_reset_requests(struct nvp_nvme_qpair *qpair)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, false);
	abort_tracker_list(qpair, &qpair->reset_aborted, &cpl);
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

/* True if @req is an Abort sent for one of @qpair's trackers. */
static bool
is_abort_for(const struct nvme_request *req, const struct nvp_nvme_qpair *qpair)
{
	const struct nvme_tracker *tr = req->cb_arg;

	return req->cb_fn == abort_cb && tr >= qpair->trackers &&
	       tr < qpair->trackers + qpair->num_trackers;
}

/*
 * @qpair is going away: Aborts on the admin queue that point at its trackers must not
 * call back into freed memory. Called with the admin lock held.
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

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

int32_t
nvp_nvme_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	int rc;

	if (nvp_unlikely(qpair == NULL)) {
		return -EINVAL;
	}
	rc = nvme_qpair_check_owner(qpair);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	return nvme_qpair_process(qpair, max_completions);
}

void
nvp_nvme_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	if (qpair == NULL || nvme_qpair_check_owner(qpair) != 0) {
		return;
	}
	if (qpair->sq_dirty) {
		ring_sq(qpair);
	}
}

int
nvp_nvme_qpair_get_stats(const struct nvp_nvme_qpair *qpair, struct nvp_nvme_qpair_stats *stats,
			 size_t stats_size)
{
	if (qpair == NULL || stats == NULL) {
		return -EINVAL;
	}
	memcpy(stats, &qpair->stats, NVP_MIN(stats_size, sizeof(qpair->stats)));
	return 0;
}

uint16_t
nvp_nvme_qpair_get_id(const struct nvp_nvme_qpair *qpair)
{
	return qpair->id;
}

uint32_t
nvp_nvme_qpair_get_num_outstanding(const struct nvp_nvme_qpair *qpair)
{
	return qpair->num_outstanding;
}

uint32_t
nvp_nvme_qpair_get_size(const struct nvp_nvme_qpair *qpair)
{
	return qpair->num_entries;
}
