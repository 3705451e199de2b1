/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconnect without the application (opts.ctrlr_loss_timeout_sec, reconnect_delay_sec,
 * fast_io_fail_timeout_sec; SPDK's bdev_nvme names and meaning). A transport that loses a
 * connection calls nvme_ctrlr_conn_lost(): the controller is "reconnecting", not failed.
 *
 *   who:   the admin poll (nvp_nvme_ctrlr_process_admin_completions()), or the poll of
 *          any I/O qpair of the controller when an attempt is due and the admin lock is
 *          free (nvme_ctrlr_reconnect_poll_io(): an application, such as the bdev module,
 *          need not poll the admin queue), attempts a reset, the first at once, then
 *          every reconnect_delay_sec, until one succeeds or ctrlr_loss_timeout_sec has
 *          passed since the loss (then the controller is failed for good, as a removed
 *          device). An attempt makes its new connection first, a step per poll where the
 *          transport can (ctrlr_reconnect_poll: TCP's connect, ICReq/ICResp, Connect), so
 *          a silent target holds no thread, then resets the controller a step per poll
 *          too: the reset runs in a fiber (nvme_fiber.c) that the polls of the thread
 *          that began it resume, each up to the reset's next wait for an answer (a
 *          property, Identify, Set Features; each bounded by admin_timeout_ms) or its
 *          next init state. That thread holds the admin lock from the reset's first step
 *          to its last, so other threads' I/O polls pass by (trylock) and their admin
 *          calls wait, as for a reset in one call. A failed attempt leaves the controller
 *          reconnecting, not failed.
 *   owners: an I/O qpair whose connection was lost is LOST: its owner takes back what the
 *          connection had (nvme_qpair_recovery.c, sent again after the reconnect) and
 *          waits, like every other qpair, until the controller is back (resetting and
 *          reconnecting both clear); then it re-creates its queues from its own polls.
 *   fast_io_fail: once that long has passed since the loss, waiting and new requests
 *          complete with HOST PATHING ERROR, DNR clear, at the owner's next poll.
 *
 * It sits below the controller's code: failing, resetting or giving up on the controller
 * goes through the table nvme_ctrlr_construct() sets (struct nvme_ctrlr_recovery_ops), so
 * the qpairs' recovery and the transports can call in here.
 *
 * The timing decisions are pure functions of the options, the tick rate and three tick
 * values (nvme_internal.h), so a unit test can walk them on a fake clock; the options'
 * rules are checked with the others in nvme.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nvme_internal.h"

/*
 * Attached: READY, in a reset, or reconnecting; not the connect of an attach (then the
 * attach reports the loss). Read without the admin lock (the caller may be any owner):
 * a reset sets resetting before it leaves READY and clears it once READY again (or
 * failed), and the state's store is a release, so a reset that began before a state
 * load that saw it shows in the next resetting load, and one that ended there shows
 * READY in the next state load; the second round covers a reset that began and ended
 * inside the first.
 */
static bool
ctrlr_attached(const struct nvp_nvme_ctrlr *ctrlr)
{
	for (int round = 0; round < 2; round++) {
		if (atomic_load(&ctrlr->resetting) || nvme_ctrlr_is_reconnecting(ctrlr) ||
		    nvme_ctrlr_state_load(ctrlr) == NVME_CTRLR_STATE_READY) {
			return true;
		}
	}
	return false;
}

/*
 * Any thread: a connection of @ctrlr is gone. With reconnect on and the controller
 * attached, it is reconnecting; otherwise it is failed, as before.
 */
void
nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	bool attached = ctrlr_attached(ctrlr);

	if (!nvme_ctrlr_reconnect_enabled(ctrlr) || !attached) {
		ctrlr->recovery->fail(ctrlr, why);
		return;
	}
	if (atomic_exchange(&ctrlr->reconnecting, true)) {
		return;
	}
	atomic_store(&ctrlr->next_reconnect, 0);
	atomic_store(&ctrlr->loss_ticks, nvme_ticks(ctrlr));
	ctrlr->reconnect_attempts = 0;
	ctrlr->reconnect_logged = 0;
	ctrlr->reconnect_unlogged = 0;
	NVP_WARNLOG("%s: %s; reconnecting every %u s (ctrlr_loss_timeout_sec %d, "
		    "fast_io_fail_timeout_sec %u); requests wait",
		    ctrlr->name, why, ctrlr->opts.reconnect_delay_sec,
		    ctrlr->opts.ctrlr_loss_timeout_sec, ctrlr->opts.fast_io_fail_timeout_sec);
}

/* What a poll at @now should do (lock-free reads: a hint, checked again under the lock). */
static enum nvme_reconnect_action
reconnect_action(struct nvp_nvme_ctrlr *ctrlr, uint64_t now)
{
	if (!nvme_ctrlr_is_reconnecting(ctrlr) || atomic_load(&ctrlr->resetting)) {
		return NVME_RECONNECT_WAIT;
	}
	return nvme_reconnect_decide(&ctrlr->opts, ctrlr->ticks_hz, atomic_load(&ctrlr->loss_ticks),
				     atomic_load(&ctrlr->next_reconnect), now);
}

/*
 * An attempt's new connection, where the transport makes it step by step without
 * blocking (TCP: connect(), ICReq/ICResp, Connect). \return 1 made (or nothing to make
 * first), 0 under way (the next poll goes on with it), -errno failed.
 */
static int
connect_step(struct nvp_nvme_ctrlr *ctrlr)
{
	if (ctrlr->transport->ctrlr_reconnect_poll == NULL) {
		return 1;
	}
	return ctrlr->transport->ctrlr_reconnect_poll(ctrlr);
}

/*
 * A failed attempt's one line (@why: the connection's errno, or the reset's), with the
 * attempt's number, when the next is due and how long until the controller is given up;
 * shown for the first attempts of a loss, then once a minute (nvme_reconnect_log_due()).
 */
static void
attempt_failed_log(struct nvp_nvme_ctrlr *ctrlr, int why, bool connected, uint64_t now)
{
	int32_t limit = ctrlr->opts.ctrlr_loss_timeout_sec;
	uint64_t since = now - NVP_MIN(now, atomic_load(&ctrlr->loss_ticks));
	char left[48], hidden[64] = "";

	if (!nvme_reconnect_log_due(ctrlr->reconnect_attempts, ctrlr->ticks_hz,
				    ctrlr->reconnect_logged, now)) {
		ctrlr->reconnect_unlogged++;
		return;
	}
	if (limit < 0) {
		snprintf(left, sizeof(left), "no limit (ctrlr_loss_timeout_sec -1)");
	} else {
		double s = (double)limit - (double)since / (double)ctrlr->ticks_hz;

		snprintf(left, sizeof(left), "gives up in %.0f s", s > 0 ? s : 0.0);
	}
	if (ctrlr->reconnect_unlogged != 0) {
		snprintf(hidden, sizeof(hidden), "; %u failed attempts before it not shown",
			 ctrlr->reconnect_unlogged);
	}
	NVP_WARNLOG("%s: reconnect attempt %u failed: %s%s; next in %u s, %s%s", ctrlr->name,
		    ctrlr->reconnect_attempts, connected ? "reset: " : "",
		    strerror(why < 0 ? -why : EIO), ctrlr->opts.reconnect_delay_sec, left, hidden);
	ctrlr->reconnect_logged = now;
	ctrlr->reconnect_unlogged = 0;
}

/* What the attempt's reset came to (@rc), @connected: it had its connection. */
static void
attempt_end(struct nvp_nvme_ctrlr *ctrlr, int rc, bool connected)
{
	uint64_t now = nvme_ticks(ctrlr), loss = atomic_load(&ctrlr->loss_ticks);

	if (rc == 0) {
		NVP_NOTICELOG("%s: reconnected (attempt %u, %.1f s after the loss)", ctrlr->name,
			      ctrlr->reconnect_attempts,
			      (double)(now - loss) / (double)ctrlr->ticks_hz);
		return;
	}
	atomic_store(&ctrlr->next_reconnect,
		     now + (uint64_t)ctrlr->opts.reconnect_delay_sec * ctrlr->ticks_hz);
	attempt_failed_log(ctrlr, rc, connected, now);
}

/* The reset, inside the attempt's fiber: the synchronous one, whose waits yield. */
static void
reset_in_fiber(void *arg)
{
	struct nvp_nvme_ctrlr *ctrlr = arg;

	ctrlr->reset_fiber_rc = ctrlr->recovery->reset(ctrlr);
}

/* Its frames: the init state machine, the admin helper, a log line or two. */
#define RESET_FIBER_STACK (256u * 1024u)

/*
 * One step of the attempt's reset (admin lock held, on the thread that began it): up to
 * its next wait for an answer; once it has ended, what it came to.
 */
static void
reset_step(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_fiber *f = atomic_load(&ctrlr->reset_fiber);

	if (!nvme_fiber_is_owner(f) || !nvme_fiber_resume(f)) {
		return;
	}
	atomic_store(&ctrlr->reset_fiber, NULL);
	nvme_fiber_destroy(f);
	attempt_end(ctrlr, ctrlr->reset_fiber_rc, true);
}

/* The attempt is connected: its reset begins, a step per poll from now on (or, with no
 * memory for the fiber's stack, as one call). */
static void
reset_begin(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_fiber *f;

	if (nvme_fiber_create(reset_in_fiber, ctrlr, RESET_FIBER_STACK, &f) != 0) {
		attempt_end(ctrlr, ctrlr->recovery->reset(ctrlr), true);
		return;
	}
	atomic_store(&ctrlr->reset_fiber, f);
	reset_step(ctrlr);
}

/*
 * Admin lock held: a step of the attempt when it is time (its connection a step per poll,
 * then its reset a step per poll), or give up.
 */
void
nvme_ctrlr_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	uint64_t now = nvme_ticks(ctrlr);
	enum nvme_reconnect_action a;
	int rc;

	if (atomic_load(&ctrlr->reset_fiber) != NULL) {
		reset_step(ctrlr);
		return;
	}
	a = reconnect_action(ctrlr, now);

	if (a == NVME_RECONNECT_GIVE_UP) {
		NVP_ERRLOG("%s: not reconnected within ctrlr_loss_timeout_sec (%d s, %u "
			   "attempts); the controller is failed for good",
			   ctrlr->name, ctrlr->opts.ctrlr_loss_timeout_sec,
			   ctrlr->reconnect_attempts);
		ctrlr->recovery->removed(ctrlr);
		atomic_store(&ctrlr->reconnecting, false);
		return;
	}
	if (a == NVME_RECONNECT_WAIT) {
		return;
	}
	rc = connect_step(ctrlr);
	if (rc == 0) {
		return;
	}
	ctrlr->reconnect_attempts++;
	if (rc > 0) {
		reset_begin(ctrlr);
		return;
	}
	attempt_end(ctrlr, rc, false);
}

/*
 * The owner thread, before it frees a qpair of @ctrlr or detaches it: an attempt's reset
 * it began is run to its end (each step is bounded by admin_timeout_ms), so that no
 * fiber holds the admin lock for a thread that will not poll again.
 */
void
nvme_ctrlr_reconnect_finish(struct nvp_nvme_ctrlr *ctrlr)
{
	if (atomic_load(&ctrlr->reset_fiber) == NULL || !nvme_ctrlr_trylock(ctrlr)) {
		return;
	}
	while (nvme_fiber_is_owner(atomic_load(&ctrlr->reset_fiber))) {
		reset_step(ctrlr);
	}
	nvme_ctrlr_unlock(ctrlr);
}

/*
 * The poll of an I/O qpair that waits for the reconnect, on its owner's thread, at the
 * poll's tick @now: the attempt (or the giving up) that is due, when the admin lock is
 * free. It never waits for the lock: a thread holding it is polling the admin queue or
 * resetting, and so drives the reconnect itself; the next poll asks again. Until an
 * attempt is due this costs a few loads, no lock.
 */
void
nvme_ctrlr_reconnect_poll_io(struct nvp_nvme_ctrlr *ctrlr, uint64_t now)
{
	/* An attempt's reset under way holds the admin lock on the thread that began it:
	 * there the trylock succeeds (the lock is recursive) and the poll does a step; any
	 * other thread's fails, and it goes on. */
	if (atomic_load_explicit(&ctrlr->reset_fiber, memory_order_relaxed) != NULL) {
		if (nvme_ctrlr_trylock(ctrlr)) {
			nvme_ctrlr_reconnect_poll(ctrlr);
			nvme_ctrlr_unlock(ctrlr);
		}
		return;
	}
	if (reconnect_action(ctrlr, now) == NVME_RECONNECT_WAIT || !nvme_ctrlr_trylock(ctrlr)) {
		return;
	}
	nvme_ctrlr_reconnect_poll(ctrlr); /* decides again, under the lock */
	nvme_ctrlr_unlock(ctrlr);
}

bool
nvp_nvme_ctrlr_is_reconnecting(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr != NULL && nvme_ctrlr_is_reconnecting(ctrlr);
}
