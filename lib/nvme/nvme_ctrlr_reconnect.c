/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconnect without the application (opts.ctrlr_loss_timeout_sec, reconnect_delay_sec,
 * fast_io_fail_timeout_sec; SPDK's bdev_nvme names and meaning). A transport that loses a
 * connection calls nvme_ctrlr_conn_lost(): the controller is "reconnecting", not failed.
 *
 *   who:   the admin poll (nvp_nvme_ctrlr_process_admin_completions()) attempts a reset,
 *          the first at once, then every reconnect_delay_sec, until one succeeds or
 *          ctrlr_loss_timeout_sec has passed since the loss (then the controller is
 *          failed for good, as a removed device). An attempt is a reset on the admin
 *          thread, bounded by admin_timeout_ms; a failed one leaves the controller
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

#include "nvme_internal.h"

/*
 * Any thread: a connection of @ctrlr is gone. With reconnect on and the controller
 * attached (READY, or in a reset), it is reconnecting; otherwise it is failed, as before.
 */
void
nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	bool attached = ctrlr->state == NVME_CTRLR_STATE_READY || atomic_load(&ctrlr->resetting) ||
			nvme_ctrlr_is_reconnecting(ctrlr);

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
	NVP_WARNLOG("%s: %s; reconnecting every %u s (ctrlr_loss_timeout_sec %d, "
		    "fast_io_fail_timeout_sec %u); requests wait",
		    ctrlr->name, why, ctrlr->opts.reconnect_delay_sec,
		    ctrlr->opts.ctrlr_loss_timeout_sec, ctrlr->opts.fast_io_fail_timeout_sec);
}

/* The admin poll, admin lock held: attempt a reset when it is time, or give up. */
void
nvme_ctrlr_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	uint64_t now = nvme_ticks(ctrlr), loss = atomic_load(&ctrlr->loss_ticks);
	enum nvme_reconnect_action a;

	if (!nvme_ctrlr_is_reconnecting(ctrlr) || atomic_load(&ctrlr->resetting)) {
		return;
	}
	a = nvme_reconnect_decide(&ctrlr->opts, ctrlr->ticks_hz, loss,
				  atomic_load(&ctrlr->next_reconnect), now);
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
	ctrlr->reconnect_attempts++;
	if (ctrlr->recovery->reset(ctrlr) == 0) {
		NVP_NOTICELOG("%s: reconnected (attempt %u, %.1f s after the loss)", ctrlr->name,
			      ctrlr->reconnect_attempts,
			      (double)(nvme_ticks(ctrlr) - loss) / (double)ctrlr->ticks_hz);
		return;
	}
	now = nvme_ticks(ctrlr);
	atomic_store(&ctrlr->next_reconnect,
		     now + (uint64_t)ctrlr->opts.reconnect_delay_sec * ctrlr->ticks_hz);
	NVP_WARNLOG("%s: reconnect attempt %u failed; next in %u s", ctrlr->name,
		    ctrlr->reconnect_attempts, ctrlr->opts.reconnect_delay_sec);
}

bool
nvp_nvme_ctrlr_is_reconnecting(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr != NULL && nvme_ctrlr_is_reconnecting(ctrlr);
}
