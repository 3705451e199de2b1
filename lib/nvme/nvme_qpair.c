/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs, transport independent: request objects, trackers (slots and command
 * identifiers), the queued list, per-request deadlines; submission, completion, polling.
 *
 * Life of a request: taken from the free list by a submit call; if a tracker is free and
 * nobody is queued ahead of it, the transport writes it into the SQ at once, otherwise it
 * waits on the queued list and goes out when a completion frees a slot. Its completion
 * frees the tracker and the request, then calls the callback, exactly once.
 *
 * Timeouts, Abort, quarantined CIDs, the reset handshake's fences and the re-creation of
 * the queues are in nvme_qpair_recovery.c; the poll here calls into it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme_qpair_internal.h"

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
	for (i = num_requests; i > 0; i--) { /* reqs[0] on top */
		SLIST_INSERT_HEAD(&qpair->free_req, &qpair->reqs[i - 1], free_link);
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
	qpair->conn_state = NVME_QP_CONNECTED;
	qpair->reset_gen = atomic_load(&ctrlr->reset_gen);
	atomic_init(&qpair->conn_status, 0);
	atomic_init(&qpair->db_window, 0);
	SLIST_INIT(&qpair->free_tr);
	TAILQ_INIT(&qpair->outstanding);
	TAILQ_INIT(&qpair->recovery);
	STAILQ_INIT(&qpair->queued);
	SLIST_INIT(&qpair->free_req);
	if (num_entries < NVME_MIN_QUEUE_ENTRIES || num_requests == 0) {
		return -EINVAL;
	}
	nvme_qpair_set_cid_bits(qpair, qpair->num_trackers);
	qpair->trackers = aligned_calloc((size_t)qpair->cid_idx_mask + 1, sizeof(*qpair->trackers));
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

static inline void
ring_sq(struct nvp_nvme_qpair *qpair)
{
	nvme_transport_qpair_ring_doorbell(qpair);
	qpair->sq_dirty = false;
}

#define reset_pending nvme_qpair_reset_pending

/*
 * The reset handshake (the fences and why: nvme_qpair_recovery.c) is a Dekker pair: the
 * owner stores to its doorbell window, then loads the reset generation; the resetting
 * thread stores the generation, then loads the window.
 */
/*
 * The doorbell window (see db_window): opened before the owner looks at the reset
 * generation, closed when it has written its last doorbell. Paired with the resetting
 * thread's generation bump and nvme_db_fence_remote() before it reads the window: either
 * the owner sees the new generation and writes no doorbell, or the reset waits for it.
 * Only the owner writes the window.
 */
static inline bool
db_window_open(struct nvp_nvme_qpair *qpair)
{
	const struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;

	if (nvp_likely(ctrlr->db_fence_asym)) {
		atomic_store_explicit(
			&qpair->db_window,
			atomic_load_explicit(&qpair->db_window, memory_order_relaxed) + 1,
			memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst); /* the compiler's half */
		return qpair->reset_gen ==
		       atomic_load_explicit(&ctrlr->reset_gen, memory_order_acquire);
	}
	atomic_fetch_add_explicit(&qpair->db_window, 1, memory_order_seq_cst);
	return qpair->reset_gen == atomic_load_explicit(&ctrlr->reset_gen, memory_order_seq_cst);
}

static inline void
db_window_close(struct nvp_nvme_qpair *qpair)
{
	/* Release: the doorbell writes are ordered before it (only the owner writes). */
	atomic_store_explicit(&qpair->db_window,
			      atomic_load_explicit(&qpair->db_window, memory_order_relaxed) - 1,
			      memory_order_release);
}

/* A doorbell outside a poll (delay_doorbell off, or the public ring call). */
void
nvme_qpair_ring_sq_guarded(struct nvp_nvme_qpair *qpair)
{
	if (qpair->is_admin) {
		ring_sq(qpair);
		return;
	}
	if (db_window_open(qpair)) {
		ring_sq(qpair);
	}
	db_window_close(qpair);
}

/* Onto the queued list (its payload checked first, so a bad buffer is still reported). */
static int
queue_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	int rc = nvme_transport_qpair_check_request(qpair, req);

	if (nvp_unlikely(rc != 0)) {
		nvme_qpair_free_request(qpair, req);
		return rc;
	}
	req->accept_ticks = 0;
	if (qpair->timeout_ticks != 0) {
		req->accept_ticks = qpair->in_batch ? qpair->poll_ticks : nvme_ticks(qpair->ctrlr);
	}
	STAILQ_INSERT_TAIL(&qpair->queued, req, link);
	qpair->num_outstanding++;
	return 0;
}

/*
 * Not the fast path: a failed controller or qpair, a qpair being freed, or one whose
 * queues are being re-created (after a reset, or to reclaim CIDs): the request waits on
 * the queued list until they are there.
 */
static int
submit_slow(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (nvme_ctrlr_is_failed(qpair->ctrlr) || qpair->deleting ||
	    (qpair->failed && !reset_pending(qpair))) {
		nvme_qpair_free_request(qpair, req);
		return -ENXIO;
	}
	return queue_request(qpair, req);
}

/*
 * Where nvme_qpair_submit_in() (nvme_qpair_internal.h) leaves @req when it cannot go into the SQ
 * at once: a qpair not ready, a failed controller, a reset pending, no free slot or
 * requests queued ahead of it. \return 0, -ENXIO, or the payload's -errno.
 */
int
nvme_qpair_submit_wait(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (qpair->not_ready != 0 || nvme_ctrlr_is_failed(qpair->ctrlr) || reset_pending(qpair)) {
		return submit_slow(qpair, req);
	}
	return queue_request(qpair, req);
}

/* The transport refused @req (@rc): queued if it was short of PRP list pages (-EAGAIN),
 * else given back. \return 0 or @rc. */
int
nvme_qpair_submit_refused(struct nvp_nvme_qpair *qpair, struct nvme_request *req, int rc)
{
	if (rc == -EAGAIN) {
		return queue_request(qpair, req);
	}
	nvme_qpair_free_request(qpair, req);
	return rc;
}

/* For every caller but the reads and writes of nvme_ns_cmd.c, which have it inline. */
int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	return nvme_qpair_submit_in(qpair, nvme_qpair_free_slot(qpair), req);
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
		int rc = nvme_qpair_submit_tracker(qpair, tr, req, req->accept_ticks);

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

/* ---------------------------------------------------------------------------------------
 * Polling
 * ------------------------------------------------------------------------------------- */

/*
 * Complete every request of a qpair whose controller failed; accept no more. A removed
 * device's requests get Host Pathing Error (as Linux's nvme_host_path_error()): the
 * path to the device is gone, which a multipath layer may want to tell from a failure.
 * DNR only then: a failed controller that is still there may come back with a reset,
 * after which its requests can be sent again.
 */
static void
fail_qpair(struct nvp_nvme_qpair *qpair)
{
	bool removed = atomic_load_explicit(&qpair->ctrlr->removed, memory_order_relaxed);

	if (!qpair->failed) {
		qpair->failed = true;
		NVP_ERRLOG("qpair %u: controller %s; completing %u outstanding requests with %s",
			   qpair->id, removed ? "removed" : "failed", qpair->num_outstanding,
			   removed ? "HOST PATHING ERROR" : "ABORTED SQ DELETION");
		if (removed) {
			nvme_qpair_abort_all(qpair, NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR, true);
		} else {
			nvme_qpair_abort_all(qpair, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION,
					     false);
		}
	}
}

/* Completions, deadlines, then queued requests into the freed slots. */
static int32_t
process_batch(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	int32_t n;

	n = nvme_transport_qpair_process_completions(qpair, max_completions);
	if (!TAILQ_EMPTY(&qpair->outstanding) || nvp_unlikely(!TAILQ_EMPTY(&qpair->recovery))) {
		nvme_qpair_check_deadlines(qpair, n);
		if (nvp_unlikely(nvme_ctrlr_is_failed(qpair->ctrlr))) {
			fail_qpair(qpair);
			return -ENXIO;
		}
	}
	if (!STAILQ_EMPTY(&qpair->queued)) {
		if (qpair->timeout_ticks != 0) {
			nvme_qpair_expire_queued(qpair, qpair->poll_ticks);
		}
		if (nvp_unlikely(qpair->conn_state != NVME_QP_CONNECTED)) {
			return n; /* a stuck CQ: the queues are being re-made, requests wait */
		}
		submit_queued(qpair);
		if (nvp_unlikely(nvme_qpair_is_stuck(qpair))) {
			nvme_qpair_reclaim_start(qpair);
			if (qpair->conn_state == NVME_QP_CONNECTED) {
				submit_queued(qpair);
			}
		}
	}
	return n;
}

/*
 * A poll while the queues are being re-created: only deadlines of what waits, and while
 * the controller reconnects, fast_io_fail_timeout_sec.
 */
static int32_t
process_unconnected(struct nvp_nvme_qpair *qpair)
{
	if (qpair->timeout_ticks != 0 && !STAILQ_EMPTY(&qpair->queued)) {
		qpair->in_batch = true;
		nvme_qpair_expire_queued(qpair, qpair->poll_ticks);
		qpair->in_batch = false;
	}
	if (!STAILQ_EMPTY(&qpair->queued) &&
	    nvme_ctrlr_fast_io_fail(qpair->ctrlr, qpair->poll_ticks)) {
		qpair->in_batch = true;
		nvme_qpair_fast_io_fail(qpair);
		qpair->in_batch = false;
	}
	return qpair->failed && !reset_pending(qpair) ? -ENXIO : 0;
}

/*
 * One poll. Doorbells: whatever was submitted since the last poll goes to the device
 * first (it has waited long enough); everything submitted during the poll — from
 * completion callbacks, or queued requests moving into freed slots — is written into the
 * SQ and announced with one doorbell write at the end, however many there are. So an
 * application that resubmits from its callbacks costs one SQ doorbell per poll, not one
 * per I/O: on real hardware an uncached PCIe write, under virtualization a trap.
 * in_batch is saved and restored: an admin callback may poll the admin queue again.
 * \return completions processed (0 while the queues are being re-created after a reset),
 * or -ENXIO once the controller (or the qpair) failed.
 */
static int32_t
process_connected(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	bool outer_batch = qpair->in_batch;
	int32_t n;

	qpair->stats.polls++;
	if (qpair->sq_dirty) {
		ring_sq(qpair);
	}
	/* One tick read per poll: deadlines of what completes and what is submitted. */
	qpair->poll_ticks = nvme_ticks(qpair->ctrlr);
	qpair->in_batch = true;
	n = process_batch(qpair, max_completions);
	if (n > 0 && qpair->batch_end_fn != NULL) {
		/* still in the batch */
		qpair->batch_end_fn(qpair->batch_end_arg, qpair->poll_ticks);
	}
	qpair->in_batch = outer_batch;
	if (nvp_unlikely(n < 0)) {
		return n;
	}
	if (qpair->sq_dirty && nvp_likely(!reset_pending(qpair))) {
		ring_sq(qpair); /* not if a callback of this thread reset the controller */
	}
	return qpair->failed ? -ENXIO : n;
}

int32_t
nvme_qpair_process(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	bool usable;
	int32_t n;

	if (nvp_unlikely(nvme_ctrlr_is_failed(qpair->ctrlr))) {
		fail_qpair(qpair);
		return -ENXIO;
	}
	/* The admin queue is re-made by the resetting thread itself, under the lock. */
	usable = qpair->is_admin || db_window_open(qpair);
	if (nvp_unlikely(!usable || qpair->conn_state != NVME_QP_CONNECTED || qpair->failed)) {
		qpair->poll_ticks = nvme_ticks(qpair->ctrlr);
		if (!nvme_qpair_conn_poll(qpair)) {
			n = process_unconnected(qpair);
			goto out;
		}
	}
	n = process_connected(qpair, max_completions);
out:
	if (!qpair->is_admin) {
		db_window_close(qpair);
	}
	return n;
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
		nvme_qpair_ring_sq_guarded(qpair);
	}
}

int
nvp_nvme_qpair_set_batch_end(struct nvp_nvme_qpair *qpair,
			     void (*fn)(void *arg, uint64_t poll_ticks), void *arg)
{
	if (qpair == NULL || qpair->is_admin) {
		NVP_ERRLOG("qpair_set_batch_end: an I/O qpair is needed");
		return -EINVAL;
	}
	if (nvme_qpair_check_owner(qpair) != 0) {
		return -EPERM;
	}
	qpair->batch_end_fn = fn;
	qpair->batch_end_arg = arg;
	return 0;
}

int
nvp_nvme_qpair_ring_doorbell_shadow(struct nvp_nvme_qpair *qpair)
{
	bool told;
	int rc;

	if (qpair == NULL) {
		return -EINVAL;
	}
	rc = nvme_qpair_check_owner(qpair);
	if (rc != 0) {
		return rc;
	}
	if (qpair->is_admin || !nvme_transport_qpair_has_shadow(qpair)) {
		return -ENOTSUP;
	}
	if (!qpair->sq_dirty) {
		return 0;
	}
	told = db_window_open(qpair) && nvme_transport_qpair_ring_shadow(qpair);
	db_window_close(qpair);
	if (!told) {
		return -EAGAIN; /* sq_dirty stays: the next ring or poll writes MMIO */
	}
	qpair->sq_dirty = false;
	return 0;
}

int
nvp_nvme_qpair_get_stats(const struct nvp_nvme_qpair *qpair, struct nvp_nvme_qpair_stats *stats)
{
	size_t info_size;

	if (qpair == NULL || stats == NULL || stats->info_size < sizeof(*stats)) {
		return -EINVAL;
	}
	info_size = stats->info_size;
	*stats = qpair->stats;
	stats->info_size = info_size;
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

bool
nvp_nvme_qpair_is_connected(const struct nvp_nvme_qpair *qpair)
{
	return qpair != NULL && qpair->conn_state == NVME_QP_CONNECTED && !qpair->failed &&
	       !nvme_qpair_reset_pending(qpair) && !nvme_ctrlr_is_failed(qpair->ctrlr);
}

uint32_t
nvp_nvme_qpair_get_size(const struct nvp_nvme_qpair *qpair)
{
	return qpair->num_entries;
}
