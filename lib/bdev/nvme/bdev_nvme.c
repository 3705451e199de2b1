/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nvme module: a controller attached by transport ID becomes one bdev per active
 * namespace, "<name>n<nsid>". Each channel owns an I/O qpair created on its thread with
 * delayed doorbells: submissions only write entries, and the channel's poll
 * (process_completions) rings the SQ tail once for all of them and the CQ head once for
 * all completions. The completions go to the core at the end of the driver's poll, still
 * inside it (nvp_nvme_qpair_set_batch_end()), so what the user callbacks submit is rung
 * with the poll's one doorbell write at its end. The device's completion entry goes up
 * unchanged, so the caller sees the NVMe status.
 *
 * Failure: when a qpair reports the controller failed (CSTS.CFS, registers reading all
 * ones), the driver completes its outstanding requests with an error status. A
 * controller that is still there (CFS, a controller that stopped answering) is reset by
 * the channel that found it, as SPDK's bdev_nvme and the kernel's PCIe driver do:
 * nvp_nvme_ctrlr_reset() brings every channel's qpair back at that channel's next poll,
 * and the bdevs stay. A qpair that failed by itself on a controller that did not (an
 * NVMe/TCP connection closed on a malformed PDU) is brought back the same way: its
 * channel resets the controller (nvme_enxio_again()). A failure, the resets after it and a failure after a successful
 * reset but before the controller completed any command again are one episode. With
 * SPDK's defaults (ctrlr_loss_timeout_sec 0) an episode gets one reset; with a loss
 * timeout the polling channels try again every reconnect_delay_sec until it runs out
 * (-1: forever). A removed device, or an episode out of tries: this module hot-removes
 * every bdev of the controller, so each descriptor gets NVP_BDEV_EVENT_REMOVE and new
 * I/O fails at the call. A surprise removal found anywhere else (an admin command's
 * timeout, the driver's remove callback) does the same, so descriptors hear of it even
 * with no channel polling. The controller stays attached
 * (its resources are released) until nvp_bdev_nvme_detach() or nvp_bdev_fini().
 *
 * NVMe/TCP reconnect: the loss timeout, reconnect delay and fast_io_fail_timeout_sec go
 * to the controller (attach_ctrlr_opts()), so a lost connection is the driver's to mend:
 * its qpairs keep their requests, the channels' polls return 0 and step the reconnect
 * (the driver's I/O poll does; this module never polls the admin queue), waiting I/O
 * completes with HOST PATHING ERROR past fast_io_fail_timeout_sec, and when the loss
 * timeout runs out the driver's remove callback removes the bdevs. Meanwhile this
 * module resets nothing itself (a reconnecting controller is not failed, and a timeout's
 * reset waits for the reconnect), so every request completes once, from its qpair.
 *
 * Request timeouts (timeout_us, action_on_timeout, as SPDK's): the channels' qpairs get
 * the deadline, so the driver's timer is the only one and an I/O pays nothing for it.
 * abort is the driver's own path; none and reset make the qpair timeout_no_abort, the
 * driver only calling nvme_timeout_cb(), which counts and, for reset, marks the channel,
 * whose poll resets the controller after the driver's poll returns. A channel destroyed
 * with I/O outstanding gives it up (nvme_channel_abort()): its queues are deleted on the
 * device before each I/O completes with an error.
 *
 * Write lifetime hints: each namespace is set up for them at attach
 * (nvp_nvme_ns_hints_setup); a write whose flags carry a hint goes out through the
 * driver's _hint calls, which pick the namespace's stream or FDP placement identifier
 * or, with no placement, send a plain write and count the hint as dropped. Each channel
 * counts its writes per hint (its thread only, no locked instruction); a channel's counts
 * are folded into its namespace's when it is destroyed.
 *
 * Uses only the public nvme.h, env.h (ticks) and bdev_module.h.
 */
#undef NVP_LOG_COMPONENT /* when a unit test includes the core first */
#define NVP_LOG_COMPONENT "bdev_nvme"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/env.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#include "bdev_nvme_oncs.h"

#define NVME_CTRLR_NAME_MAX 32
#define NVME_MAX_LBA_COUNT 65536u

struct nvme_ns_bdev;

struct nvme_ctrlr_entry {
	char name[NVME_CTRLR_NAME_MAX];
	struct nvp_nvme_ctrlr *ctrlr;
	uint32_t io_queue_size;
	bool failed;            /* atomic: hot removal done */
	bool resetting;         /* atomic: a channel's thread is resetting the controller */
	int32_t loss_timeout_s; /* SPDK's ctrlr_loss_timeout_sec: -1 forever, 0 one reset */
	uint32_t reconnect_delay_s;
	/* the failure episode, under resetting (nvp_env_get_ticks()) */
	uint64_t episode_start; /* 0: none */
	uint64_t last_reset;    /* when the last reset ended */
	uint32_t episode_resets;
	bool last_reset_ok;
	bool watching;      /* atomic: the last reset succeeded and nothing has completed since */
	uint32_t resets;    /* resets that brought the controller back */
	uint32_t reset_gen; /* atomic: resets tried, whatever came of them */
	/* request timeouts (nvme_timeout_cb()): the attach's options and the counters */
	uint64_t timeout_us; /* 0: the controller's io_timeout_us, the driver's Abort */
	enum nvp_bdev_nvme_timeout_action timeout_action;
	uint64_t timeouts;           /* atomic */
	uint64_t timeout_resets;     /* under resetting */
	uint64_t aborted_at_destroy; /* atomic */
	TAILQ_HEAD(, nvme_ns_bdev) bdevs;
	TAILQ_ENTRY(nvme_ctrlr_entry) link;
};

struct nvme_channel {
	struct nvme_ns_bdev *nb;
	struct nvp_nvme_qpair *qpair;
	/* nb's namespace and controller entry, fixed for the channel's life: one load
	 * fewer per I/O and per poll */
	struct nvp_nvme_ns *ns;
	struct nvme_ctrlr_entry *c;
	/* what the driver completed, handed to the core at the end of the poll (one list:
	 * one clock read, one accounting pass); failed is set when one of them failed */
	struct nvp_bdev_io_list done;
	bool failed;
	/* a request of this channel timed out with action_on_timeout reset: the poll resets
	 * the controller after the driver's poll returns (failed stays set meanwhile, so the
	 * poll's one existing check finds it) */
	bool reset_wanted;
	uint64_t hint_writes[NVP_BDEV_NUM_HINTS]; /* written by the channel's thread only */
	TAILQ_ENTRY(nvme_channel) link;
	/* Cold: the qpair's options, for a new one when destroy gives up its I/O */
	struct nvp_nvme_io_qpair_opts qo;
	/* the last -ENXIO its poll saw on a controller not failed: c->reset_gen then */
	bool enxio_seen;
	uint32_t enxio_gen;
};

struct nvme_ns_bdev {
	struct nvme_ctrlr_entry *c;
	struct nvp_nvme_ns *ns;
	struct nvp_bdev *bdev; /* NULL once destructed */
	uint32_t nsid;
	pthread_mutex_t ch_mutex; /* a leaf lock: channels and hint_writes */
	TAILQ_HEAD(, nvme_channel) channels;
	uint64_t hint_writes[NVP_BDEV_NUM_HINTS]; /* of destroyed channels */
	TAILQ_ENTRY(nvme_ns_bdev) link;
};

/* Scatter-list cursor of a readv/writev (the driver walks it to build PRPs); the status
 * of a failed completion until the channel's poll hands it over. */
struct nvme_io {
	int iov_idx;
	uint32_t iov_off;
	struct nvme_cpl cpl;
};

static pthread_mutex_t g_nvme_mutex = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, nvme_ctrlr_entry) g_ctrlrs = TAILQ_HEAD_INITIALIZER(g_ctrlrs);

/* ---- I/O ---- */

/*
 * The driver completed a request: onto the channel's list, whatever the thread is doing
 * (inside the qpair poll, or inside a submission the driver failed at once), so the core
 * hears of it from the poll, in completion order. A failure keeps its status aside.
 */
static void
nvme_io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct nvp_bdev_io *io = arg;
	struct nvme_channel *ch = io->module_ch;

	if (nvp_unlikely(nvme_cpl_is_error(cpl))) {
		((struct nvme_io *)io->driver_ctx)->cpl = *cpl;
		ch->failed = true;
	}
	nvp_bdev_io_list_append(&ch->done, io);
}

/* The driver's SGL callbacks get the same argument as the completion: the bdev_io. */
static void
nvme_reset_sgl(void *arg, uint32_t offset)
{
	struct nvp_bdev_io *io = arg;
	struct nvme_io *nio = (struct nvme_io *)io->driver_ctx;

	nio->iov_idx = 0;
	while (nio->iov_idx < io->iovcnt && offset >= io->iovs[nio->iov_idx].iov_len) {
		offset -= (uint32_t)io->iovs[nio->iov_idx].iov_len;
		nio->iov_idx++;
	}
	nio->iov_off = offset;
}

static int
nvme_next_sge(void *arg, void **address, uint32_t *length)
{
	struct nvp_bdev_io *io = arg;
	struct nvme_io *nio = (struct nvme_io *)io->driver_ctx;
	const struct iovec *iov;

	if (nio->iov_idx >= io->iovcnt) {
		return -EINVAL;
	}
	iov = &io->iovs[nio->iov_idx];
	*address = (char *)iov->iov_base + nio->iov_off;
	*length = (uint32_t)(iov->iov_len - nio->iov_off);
	nio->iov_idx++;
	nio->iov_off = 0;
	return 0;
}

/* A write: with a hint through the driver's _hint calls, counted per hint once sent. */
static int
nvme_submit_write(struct nvme_channel *ch, struct nvp_bdev_io *io)
{
	struct nvp_nvme_ns *ns = ch->nb->ns;
	uint32_t n = (uint32_t)io->num_blocks;
	uint32_t flags = (io->flags & NVP_BDEV_WRITE_FUA) ? NVME_IO_FLAGS_FORCE_UNIT_ACCESS : 0;
	uint32_t hint = (io->flags & NVP_BDEV_WRITE_HINT_MASK) >> NVP_BDEV_WRITE_HINT_SHIFT;
	int rc;

	if (nvp_unlikely(hint >= NVP_BDEV_NUM_HINTS)) {
		return -EINVAL;
	}
	if (hint == NVP_NVME_WRITE_HINT_NONE) {
		rc = io->iovcnt == 1 ?
			     nvp_nvme_ns_cmd_write(ns, ch->qpair, io->iovs[0].iov_base,
						   io->offset_blocks, n, nvme_io_done, io, flags) :
			     nvp_nvme_ns_cmd_writev(ns, ch->qpair, io->offset_blocks, n,
						    nvme_io_done, io, flags, nvme_reset_sgl,
						    nvme_next_sge);
	} else if (io->iovcnt == 1) {
		rc = nvp_nvme_ns_cmd_write_hint(ns, ch->qpair, io->iovs[0].iov_base,
						io->offset_blocks, n, nvme_io_done, io, flags,
						(enum nvp_nvme_write_hint)hint);
	} else {
		rc = nvp_nvme_ns_cmd_writev_hint(ns, ch->qpair, io->offset_blocks, n, nvme_io_done,
						 io, flags, (enum nvp_nvme_write_hint)hint,
						 nvme_reset_sgl, nvme_next_sge);
	}
	if (rc == 0) {
		/* a plain load and store: only this thread writes it; readers load it whole */
		__atomic_store_n(&ch->hint_writes[hint], ch->hint_writes[hint] + 1,
				 __ATOMIC_RELAXED);
	}
	return rc;
}

static int
nvme_submit_rw(struct nvme_channel *ch, struct nvp_bdev_io *io)
{
	struct nvp_nvme_ns *ns = ch->nb->ns;
	uint32_t n = (uint32_t)io->num_blocks;

	if (io->type == NVP_BDEV_IO_WRITE) {
		return nvme_submit_write(ch, io);
	}
	if (io->iovcnt == 1) {
		return nvp_nvme_ns_cmd_read(ns, ch->qpair, io->iovs[0].iov_base, io->offset_blocks,
					    n, nvme_io_done, io, 0);
	}
	return nvp_nvme_ns_cmd_readv(ns, ch->qpair, io->offset_blocks, n, nvme_io_done, io, 0,
				     nvme_reset_sgl, nvme_next_sge);
}

/* Every request but the one nvme_submit_request() sends itself (out of line: that path
 * keeps a small frame). */
static __attribute__((noinline)) int
nvme_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct nvme_channel *ch = ch_ctx;
	struct nvp_nvme_ns *ns = ch->nb->ns;
	struct nvme_dsm_range range;
	uint32_t n = (uint32_t)io->num_blocks;

	switch (io->type) {
	case NVP_BDEV_IO_READ:
	case NVP_BDEV_IO_WRITE:
		return nvme_submit_rw(ch, io);
	case NVP_BDEV_IO_WRITE_ZEROES:
		return nvp_nvme_ns_cmd_write_zeroes(ns, ch->qpair, io->offset_blocks, n,
						    nvme_io_done, io, 0);
	case NVP_BDEV_IO_UNMAP:
		memset(&range, 0, sizeof(range));
		range.starting_lba = io->offset_blocks;
		range.length = n;
		return nvp_nvme_ns_cmd_dataset_management(ns, ch->qpair, NVME_DSM_ATTR_DEALLOCATE,
							  &range, 1, nvme_io_done, io);
	case NVP_BDEV_IO_FLUSH:
		return nvp_nvme_ns_cmd_flush(ns, ch->qpair, nvme_io_done, io);
	case NVP_BDEV_IO_COMPARE:
		return nvp_nvme_ns_cmd_compare(ns, ch->qpair, io->iovs[0].iov_base,
					       io->offset_blocks, n, nvme_io_done, io, 0);
	default:
		return -ENOTSUP;
	}
}

/*
 * The driver never completes a request inside this call (nvme_io_done() only queues).
 * The most common request, a read of one buffer, goes straight to the driver.
 */
static int
nvme_submit_request(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct nvme_channel *ch = ch_ctx;
	int rc;

	if (nvp_likely(io->type == NVP_BDEV_IO_READ && io->iovcnt == 1)) {
		rc = nvp_nvme_ns_cmd_read(ch->ns, ch->qpair, io->iovs[0].iov_base,
					  io->offset_blocks, (uint32_t)io->num_blocks, nvme_io_done,
					  io, 0);
	} else {
		rc = nvme_submit(ch, io);
	}
	if (nvp_unlikely(rc != 0)) {
		nvp_bdev_io_submit_failed(io, rc);
	}
	return 0;
}

/*
 * Whether the episode has a reset left at @now: \return 1 reset now, 0 not yet (the
 * reconnect delay runs), -1 no more (the bdevs go). Under resetting.
 */
static int
episode_may_reset(struct nvme_ctrlr_entry *c, uint64_t now)
{
	const uint64_t s = nvp_env_get_ticks_hz();

	if (c->episode_start != 0 && c->last_reset_ok &&
	    !__atomic_load_n(&c->watching, __ATOMIC_ACQUIRE)) {
		c->episode_start = 0; /* it worked again after its reset: that one is over */
	}
	if (c->episode_start == 0) {
		c->episode_start = now;
		c->episode_resets = 0;
		return 1;
	}
	if (c->episode_resets == 0) {
		return 1;
	}
	if (c->loss_timeout_s == 0 ||
	    (c->loss_timeout_s > 0 && now - c->episode_start >= c->loss_timeout_s * s)) {
		return -1;
	}
	return now - c->last_reset >= c->reconnect_delay_s * s ? 1 : 0;
}

/* A reset of ours brought the controller back (under resetting). */
static void
ctrlr_back(struct nvme_ctrlr_entry *c)
{
	struct nvme_ns_bdev *nb;

	__atomic_fetch_add(&c->resets, 1, __ATOMIC_RELAXED);
	NVP_NOTICELOG("controller %s is back after a reset (%u so far); its bdevs stay", c->name,
		      c->resets);
	/* A controller may forget its enabled streams on reset: set the hints up again.
	 * (Writes racing with this go out plain, their hint counted as dropped.) */
	TAILQ_FOREACH (nb, &c->bdevs, link) {
		int hrc = nvp_nvme_ns_hints_setup(nb->ns, 0);

		if (hrc != 0) {
			NVP_WARNLOG("controller %s namespace %" PRIu32 ": write hints set-up after "
				    "the reset failed (%d); hints are dropped",
				    c->name, nb->nsid, hrc);
		}
	}
}

/*
 * A channel found the controller failed, or its own qpair failed alone (@qpair_alone):
 * reset it if it is still there and its episode allows. \return true when the bdevs
 * stay (the reset brought it back, another thread's reset is under way, the driver is
 * reconnecting it, a retry is due later, or the failure was seen late, after a reset),
 * false when they must go.
 */
static bool
nvme_ctrlr_try_reset(struct nvme_ctrlr_entry *c, bool qpair_alone)
{
	bool idle = false;
	uint64_t now;
	int rc;

	if (nvp_nvme_ctrlr_is_removed(c->ctrlr)) {
		return false;
	}
	if (!__atomic_compare_exchange_n(&c->resetting, &idle, true, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		return true; /* another channel's thread is resetting it */
	}
	if (nvp_nvme_ctrlr_is_reconnecting(c->ctrlr) ||
	    (!nvp_nvme_ctrlr_is_failed(c->ctrlr) && !qpair_alone)) {
		/* the driver reconnects it: its attempts are the resets; or a poll that began
		 * before a reset ended: its qpair comes back at the next */
		__atomic_store_n(&c->resetting, false, __ATOMIC_RELEASE);
		return true;
	}
	now = nvp_env_get_ticks();
	rc = episode_may_reset(c, now);
	if (rc <= 0) {
		if (rc < 0) {
			NVP_ERRLOG(
				"controller %s failed again, without completing a command since its "
				"last reset, after %u reset(s) in %.1f s (ctrlr_loss_timeout_sec %d)",
				c->name, c->episode_resets,
				(double)(now - c->episode_start) / (double)nvp_env_get_ticks_hz(),
				c->loss_timeout_s);
		}
		__atomic_store_n(&c->resetting, false, __ATOMIC_RELEASE);
		return rc == 0;
	}
	NVP_WARNLOG("controller %s %s: resetting it", c->name,
		    nvp_nvme_ctrlr_is_failed(c->ctrlr) ? "failed" :
							 "lost an I/O queue (its qpair failed)");
	c->episode_resets++;
	rc = nvp_nvme_ctrlr_reset(c->ctrlr);
	__atomic_fetch_add(&c->reset_gen, 1, __ATOMIC_RELEASE);
	c->last_reset = nvp_env_get_ticks();
	c->last_reset_ok = rc == 0;
	__atomic_store_n(&c->watching, rc == 0, __ATOMIC_RELEASE);
	if (rc == 0) {
		ctrlr_back(c);
	} else {
		NVP_ERRLOG("controller %s: reset failed (%s)%s", c->name, strerror(-rc),
			   c->loss_timeout_s != 0 ? "; trying again after reconnect_delay_sec" :
						    "");
	}
	__atomic_store_n(&c->resetting, false, __ATOMIC_RELEASE);
	return rc == 0 || c->loss_timeout_s != 0;
}

/*
 * action_on_timeout reset, from the poll of the channel whose request timed out, after
 * the driver's poll returned. A reset under way (another thread's, or the failure
 * path's) covers this timeout too. A failed reset leaves the controller failed: the
 * channels' next polls take the failure path above (a reset, else the bdevs go).
 */
static void
nvme_ctrlr_timeout_reset(struct nvme_ctrlr_entry *c)
{
	bool idle = false;
	int rc;

	if (__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE) ||
	    !__atomic_compare_exchange_n(&c->resetting, &idle, true, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		return;
	}
	/* reconnecting: the driver's next attempt is the reset (not one on this thread) */
	if (!nvp_nvme_ctrlr_is_failed(c->ctrlr) && !nvp_nvme_ctrlr_is_reconnecting(c->ctrlr)) {
		NVP_WARNLOG("controller %s: a request passed timeout_us %" PRIu64
			    " (action_on_timeout reset): resetting the controller",
			    c->name, c->timeout_us);
		rc = nvp_nvme_ctrlr_reset(c->ctrlr);
		__atomic_fetch_add(&c->reset_gen, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&c->timeout_resets, 1, __ATOMIC_RELAXED);
		if (rc == 0) {
			ctrlr_back(c);
		} else {
			NVP_ERRLOG("controller %s: reset after a timeout failed (%s)", c->name,
				   strerror(-rc));
		}
	}
	__atomic_store_n(&c->resetting, false, __ATOMIC_RELEASE);
}

/*
 * The driver's timeout callback: on the owner thread of @qpair, inside its poll. Counts;
 * with action_on_timeout reset marks the qpair's channel, whose poll resets once the
 * driver's poll has returned. (abort: the driver sends it; none: the request stays.)
 */
static void
nvme_timeout_cb(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair,
		uint16_t cid)
{
	struct nvme_ctrlr_entry *c = cb_arg;
	struct nvme_channel *ch;
	struct nvme_ns_bdev *nb;

	(void)ctrlr;
	if (qpair == NULL) {
		return; /* an admin command's: the sync helpers report their own */
	}
	__atomic_fetch_add(&c->timeouts, 1, __ATOMIC_RELAXED);
	NVP_WARNLOG("controller %s: I/O (CID %u) timed out; action_on_timeout %s", c->name, cid,
		    c->timeout_us == 0 ? "abort (the controller's io_timeout_us)" :
		    c->timeout_action == NVP_BDEV_NVME_TIMEOUT_NONE ? "none: it stays outstanding" :
		    c->timeout_action == NVP_BDEV_NVME_TIMEOUT_RESET ? "reset" :
								       "abort");
	if (c->timeout_us == 0 || c->timeout_action != NVP_BDEV_NVME_TIMEOUT_RESET) {
		return;
	}
	/* the list of bdevs is stable while a channel polls (see nvme_ctrlr_failed()) */
	TAILQ_FOREACH (nb, &c->bdevs, link) {
		pthread_mutex_lock(&nb->ch_mutex);
		TAILQ_FOREACH (ch, &nb->channels, link) {
			if (ch->qpair == qpair) {
				ch->reset_wanted = true;
				ch->failed = true; /* the poll's one check finds it */
			}
		}
		pthread_mutex_unlock(&nb->ch_mutex);
	}
}

/* The controller is gone for good: every bdev of it goes away (once). */
static void
nvme_ctrlr_failed(struct nvme_ctrlr_entry *c)
{
	struct nvme_ns_bdev *nb;
	struct nvp_bdev *bdev;

	if (__atomic_exchange_n(&c->failed, true, __ATOMIC_ACQ_REL)) {
		return;
	}
	NVP_ERRLOG("controller %s failed: removing its bdevs", c->name);
	/*
	 * No module lock here (hot remove may destruct, and the core's lock is taken after
	 * ours elsewhere). The list is stable: it changes only in attach and detach, and
	 * detach refuses while a bdev is open — which it is, as a channel is polling.
	 */
	TAILQ_FOREACH (nb, &c->bdevs, link) {
		bdev = __atomic_load_n(&nb->bdev, __ATOMIC_ACQUIRE);
		if (bdev != NULL) {
			nvp_bdev_hot_remove(bdev);
		}
	}
}

/* The driver's remove callback (any thread, maybe inside a poll): the same as failure. */
static void
nvme_ctrlr_remove_cb(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	nvme_ctrlr_failed(cb_arg);
}

/* The list holds failures: hand it over in runs of successes, each failure alone, all
 * found at @now (0: the core reads the clock). */
static __attribute__((noinline)) void
nvme_deliver_failed(struct nvme_channel *ch, uint64_t now)
{
	static const struct nvme_cpl ok; /* success */
	struct nvp_bdev_io_list run;
	struct nvp_bdev_io *io, *next;
	struct nvme_cpl cpl;
	struct nvme_io *nio;

	*ch->done.tailp = NULL;
	io = ch->done.head;
	nvp_bdev_io_list_init(&ch->done);
	ch->failed = ch->reset_wanted; /* the poll resets after the driver's poll */
	nvp_bdev_io_list_init(&run);
	for (; io != NULL; io = next) {
		next = io->internal.next; /* before: completing reuses the link */
		nio = (struct nvme_io *)io->driver_ctx;
		if (!nvme_cpl_is_error(&nio->cpl)) {
			nvp_bdev_io_list_append(&run, io);
			continue;
		}
		if (!nvp_bdev_io_list_empty(&run)) {
			nvp_bdev_io_complete_list_at(&run, &ok, now);
		}
		/* a copy: the callback may reuse the bdev_io, and a zero status is what the
		 * next use expects (a pool's bdev_ios start zeroed) */
		cpl = nio->cpl;
		memset(&nio->cpl, 0, sizeof(nio->cpl));
		nvp_bdev_io_list_append(&run, io);
		nvp_bdev_io_complete_list_at(&run, &cpl, now);
	}
	if (!nvp_bdev_io_list_empty(&run)) {
		nvp_bdev_io_complete_list_at(&run, &ok, now);
	}
}

/* What the poll found at @now (0: the core reads the clock), to the core: one list. */
static inline void
nvme_deliver(struct nvme_channel *ch, uint64_t now)
{
	static const struct nvme_cpl ok; /* success */

	if (nvp_unlikely(ch->failed)) {
		nvme_deliver_failed(ch, now);
	} else if (!nvp_bdev_io_list_empty(&ch->done)) {
		nvp_bdev_io_complete_list_at(&ch->done, &ok, now);
	}
}

/*
 * -ENXIO from a channel's qpair while its controller is not failed: either a reset ended
 * between the poll and now (the qpair comes back at its next poll), or the qpair failed by
 * itself (its NVMe/TCP connection closed on a malformed PDU, its queues could not be made
 * again), which only a reset brings back (nvme.h). A second -ENXIO with no reset tried in
 * between (@reset_gen, the controller's count of resets tried, unchanged) tells the two
 * apart. \return true for the second.
 */
static bool
nvme_enxio_again(struct nvme_channel *ch, uint32_t reset_gen)
{
	bool again = ch->enxio_seen && ch->enxio_gen == reset_gen;

	ch->enxio_seen = true;
	ch->enxio_gen = reset_gen;
	return again;
}

/* The qpair reported the controller failed (@rc < 0): what completed first, then the
 * failure (events, resets). Out of line: the poll keeps a small frame. */
static __attribute__((noinline, cold)) void
nvme_poll_failed(struct nvme_channel *ch, int32_t rc)
{
	struct nvme_ctrlr_entry *c = ch->nb->c;

	ch->reset_wanted = false; /* the failure path resets, if anything does */
	nvme_deliver(ch, 0);
	if (rc == -ENXIO && !__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE)) {
		bool alone = nvme_enxio_again(ch,
					      __atomic_load_n(&c->reset_gen, __ATOMIC_ACQUIRE)) &&
			     !nvp_nvme_ctrlr_is_failed(c->ctrlr);

		if (!nvme_ctrlr_try_reset(c, alone)) {
			nvme_ctrlr_failed(c);
		}
	}
	/* requests the reset or the removal failed */
	nvme_deliver(ch, 0);
}

/*
 * The end of a driver poll that completed requests, still inside it: the core gets them
 * (and the user callbacks run) as part of the driver's batch, so what the callbacks
 * submit (an application at depth N resubmits from them) is stamped with the poll's
 * time and goes to the device with the poll's one doorbell write at its end, as with
 * the driver's own callbacks: not at the start of the next poll, which may come after
 * the thread slept (a waiter between passes) or did other work. Their time is the one
 * the driver read at the start of the poll (after they were submitted), so the core's
 * accounting reads no clock of its own: their device time runs from their submission to
 * the start of the poll that found them.
 */
static void
nvme_batch_end(void *arg, uint64_t poll_ticks)
{
	struct nvme_channel *ch = arg;
	static const struct nvme_cpl ok; /* success */

	/* Something completed: a reset the controller was watched after has served. Here
	 * rather than after the driver's poll: before the callbacks, which may reset it
	 * again, and one instruction fewer per poll (bench/bdev_overhead QD1). */
	if (nvp_unlikely(__atomic_load_n(&ch->c->watching, __ATOMIC_RELAXED))) {
		__atomic_store_n(&ch->c->watching, false, __ATOMIC_RELEASE);
	}
	/* Called only when the batch completed requests, all of them this channel's, so
	 * the list has some (and the core's list call tests for none anyway): no test of
	 * its own (3 instructions fewer per poll, bench/bdev_overhead QD1). */
	if (nvp_unlikely(ch->failed)) {
		nvme_deliver_failed(ch, poll_ticks);
	} else {
		nvp_bdev_io_complete_list_at(&ch->done, &ok, poll_ticks);
	}
}

/*
 * After the driver's poll: a reset a timeout asked for, then what completed outside a
 * batch (requests that expired while the queues were being re-made, or that the reset
 * completed), delivered here, what the callbacks send rung at once.
 */
static __attribute__((noinline)) void
nvme_poll_slow(struct nvme_channel *ch)
{
	if (nvp_unlikely(ch->reset_wanted)) {
		ch->reset_wanted = false;
		nvme_ctrlr_timeout_reset(ch->nb->c);
	}
	nvme_deliver(ch, 0);
	nvp_nvme_qpair_ring_doorbell(ch->qpair);
}

static void
nvme_poll(void *ch_ctx)
{
	struct nvme_channel *ch = ch_ctx;
	int32_t rc;

	rc = nvp_nvme_qpair_process_completions(ch->qpair, 0);
	if (nvp_unlikely(rc < 0)) {
		nvme_poll_failed(ch, rc);
		return;
	}
	if (nvp_unlikely(ch->failed || !nvp_bdev_io_list_empty(&ch->done))) {
		nvme_poll_slow(ch);
	}
}

/* ---- channels ---- */

/*
 * A channel's I/O queue entries: @base (the attach's io_queue_size, else the controller's
 * default), raised to the channel's @hint (module_queue_depth) where that is larger,
 * fitted to what the controller takes. A hint never makes the queue smaller than @base:
 * a queue fitted to QD1 (two entries) cost QEMU's controller 2-3.5x the latency of the
 * same I/O on a 256-entry queue (its CQ is full after every completion), while a larger
 * queue costs only its memory; the raw driver path keeps its default size the same way.
 */
static uint32_t
channel_queue_size(const struct nvp_nvme_ctrlr *ctrlr, uint32_t base, uint32_t hint)
{
	uint32_t size = base;

	if (hint > base) {
		(void)nvp_nvme_ctrlr_fit_io_queue_size(ctrlr, hint, &size);
	}
	return size;
}

/* A qpair for @ch by its options, its completions handed over at the end of each poll. */
static int
channel_qpair_alloc(struct nvme_channel *ch, struct nvp_nvme_qpair **out)
{
	int rc = nvp_nvme_ctrlr_alloc_io_qpair(ch->nb->c->ctrlr, &ch->qo, out);

	if (rc == 0) {
		rc = nvp_nvme_qpair_set_batch_end(*out, nvme_batch_end, ch);
		if (rc != 0) {
			nvp_nvme_ctrlr_free_io_qpair(*out);
		}
	}
	return rc;
}

static int
nvme_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct nvme_ns_bdev *nb = ctx;
	struct nvp_nvme_io_qpair_opts *qo;
	struct nvme_channel *ch;
	int rc;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		return -ENOMEM;
	}
	ch->nb = nb;
	ch->ns = nb->ns;
	ch->c = nb->c;
	nvp_bdev_io_list_init(&ch->done);
	qo = &ch->qo;
	nvp_nvme_ctrlr_get_default_io_qpair_opts(nb->c->ctrlr, qo, sizeof(*qo));
	qo->io_queue_size = channel_queue_size(
		nb->c->ctrlr, nb->c->io_queue_size != 0 ? nb->c->io_queue_size : qo->io_queue_size,
		opts->module_queue_depth);
	/* requests past the queue's slots wait in the driver, not in the bdev layer */
	qo->io_queue_requests = NVP_MAX(qo->io_queue_requests, opts->io_pool_size);
	qo->io_queue_requests = NVP_MAX(qo->io_queue_requests, qo->io_queue_size);
	qo->delay_doorbell = true;
	qo->interrupts = opts->interrupts;
	if (nb->c->timeout_us != 0) {
		qo->timeout_us = nb->c->timeout_us;
		qo->timeout_no_abort = nb->c->timeout_action != NVP_BDEV_NVME_TIMEOUT_ABORT;
	}
	rc = channel_qpair_alloc(ch, &ch->qpair);
	if (rc != 0) {
		free(ch);
		return rc;
	}
	pthread_mutex_lock(&nb->ch_mutex);
	TAILQ_INSERT_TAIL(&nb->channels, ch, link);
	pthread_mutex_unlock(&nb->ch_mutex);
	*ch_ctx = ch;
	return 0;
}

/* Take @ch off its namespace's list, its hint counts kept in the namespace's. */
static void
channel_unlink(struct nvme_ns_bdev *nb, struct nvme_channel *ch)
{
	unsigned int h;

	pthread_mutex_lock(&nb->ch_mutex);
	TAILQ_REMOVE(&nb->channels, ch, link);
	for (h = 0; h < NVP_BDEV_NUM_HINTS; h++) {
		nb->hint_writes[h] += ch->hint_writes[h];
	}
	pthread_mutex_unlock(&nb->ch_mutex);
}

/* Writes per hint so far: destroyed channels' and live ones' (read while they count). */
static void
hint_writes_sum(struct nvme_ns_bdev *nb, uint64_t *out)
{
	struct nvme_channel *ch;
	unsigned int h;

	pthread_mutex_lock(&nb->ch_mutex);
	for (h = 0; h < NVP_BDEV_NUM_HINTS; h++) {
		out[h] = nb->hint_writes[h];
		TAILQ_FOREACH (ch, &nb->channels, link) {
			out[h] += __atomic_load_n(&ch->hint_writes[h], __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&nb->ch_mutex);
}

/*
 * Destroy with I/O outstanding (a lost completion, action_on_timeout none, a device that
 * stopped answering): a new qpair first, so the channel stays usable for what the
 * callbacks send; then the old one is freed, which deletes its queues on the device (it
 * no longer touches them or the I/O's buffers) and completes each request with ABORTED
 * SQ DELETION onto the done list, which the core's next poll hands over. With no queue
 * left for a new qpair nothing is given up (destroy refuses; the message says why).
 */
static void
nvme_channel_abort(void *ch_ctx)
{
	struct nvme_channel *ch = ch_ctx;
	struct nvme_ctrlr_entry *c = ch->nb->c;
	struct nvp_nvme_qpair *fresh;
	uint32_t n;
	int rc;

	rc = channel_qpair_alloc(ch, &fresh);
	if (rc != 0) {
		NVP_ERRLOG("controller %s: cannot give up a destroyed channel's I/O: no new qpair "
			   "(%s)",
			   c->name, strerror(-rc));
		return;
	}
	n = nvp_nvme_qpair_get_num_outstanding(ch->qpair);
	(void)nvp_nvme_ctrlr_free_io_qpair(ch->qpair);
	ch->qpair = fresh;
	__atomic_fetch_add(&c->aborted_at_destroy, n, __ATOMIC_RELAXED);
	NVP_WARNLOG("controller %s: %" PRIu32 " request(s) of a destroyed channel completed "
		    "with an error (their queue was deleted)",
		    c->name, n);
}

static void
nvme_channel_destroy(void *ctx, void *ch_ctx)
{
	struct nvme_channel *ch = ch_ctx;

	nvp_nvme_ctrlr_free_io_qpair(ch->qpair);
	channel_unlink(ctx, ch);
	free(ch);
}

static int
nvme_get_irq_fd(void *ch_ctx)
{
	return nvp_nvme_qpair_get_irq_fd(((struct nvme_channel *)ch_ctx)->qpair);
}

static int
nvme_irq_unmask(void *ch_ctx)
{
	return nvp_nvme_qpair_irq_unmask(((struct nvme_channel *)ch_ctx)->qpair);
}

static bool
nvme_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	struct nvme_ns_bdev *nb = ctx;
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(nb->c->ctrlr);

	return bdev_nvme_oncs_supports(cd, type);
}

static void
nvme_destruct(void *ctx)
{
	struct nvme_ns_bdev *nb = ctx;

	/* the entry stays on its controller's list until detach frees it */
	__atomic_store_n(&nb->bdev, NULL, __ATOMIC_RELEASE);
}

static const struct nvp_bdev_fn_table g_nvme_fn = {
	.destruct = nvme_destruct,
	.io_type_supported = nvme_io_type_supported,
	.channel_create = nvme_channel_create,
	.channel_destroy = nvme_channel_destroy,
	.submit = nvme_submit_request,
	.poll = nvme_poll,
	.get_irq_fd = nvme_get_irq_fd,
	.irq_unmask = nvme_irq_unmask,
	.channel_abort = nvme_channel_abort,
	.submit_never_completes = true, /* nvme_io_done() only queues */
};

/* ---- attach and detach ---- */

void
nvp_bdev_nvme_opts_init(struct nvp_bdev_nvme_opts *opts, size_t opts_size)
{
	struct nvp_bdev_nvme_opts d;

	if (opts == NULL) {
		return;
	}
	memset(&d, 0, sizeof(d));
	d.opts_size = opts_size;
	memset(opts, 0, opts_size);
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

static struct nvme_ctrlr_entry *
ctrlr_find_locked(const char *name)
{
	struct nvme_ctrlr_entry *c;

	TAILQ_FOREACH (c, &g_ctrlrs, link) {
		if (strcmp(c->name, name) == 0) {
			return c;
		}
	}
	return NULL;
}

static void
ns_bdev_free(struct nvme_ns_bdev *nb)
{
	pthread_mutex_destroy(&nb->ch_mutex);
	free(nb);
}

static int
ns_bdev_register(struct nvme_ctrlr_entry *c, uint32_t nsid, struct nvp_bdev **out)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(c->ctrlr, nsid);
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(c->ctrlr);
	struct nvp_bdev_spec spec;
	struct nvme_ns_bdev *nb;
	char name[NVP_BDEV_NAME_MAX];
	uint32_t bs;
	int rc;

	if (ns == NULL) {
		return -ENODEV;
	}
	nb = calloc(1, sizeof(*nb));
	if (nb == NULL) {
		return -ENOMEM;
	}
	nb->c = c;
	nb->ns = ns;
	nb->nsid = nsid;
	pthread_mutex_init(&nb->ch_mutex, NULL);
	TAILQ_INIT(&nb->channels);
	rc = nvp_nvme_ns_hints_setup(ns, 0);
	if (rc != 0) {
		NVP_ERRLOG("controller %s namespace %" PRIu32 ": write hints set-up failed: %d",
			   c->name, nsid, rc);
		ns_bdev_free(nb);
		return rc;
	}
	bs = nvp_nvme_ns_get_sector_size(ns);
	snprintf(name, sizeof(name), "%sn%" PRIu32, c->name, nsid);
	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.module_name = "nvme";
	spec.block_size = bs;
	spec.num_blocks = nvp_nvme_ns_get_num_sectors(ns);
	spec.max_xfer_blocks = NVP_MIN(nvp_nvme_ns_get_max_io_xfer_size(ns) / bs,
				       NVME_MAX_LBA_COUNT);
	spec.write_cache = (cd->vwc & 1u) != 0;
	spec.io_ctx_size = sizeof(struct nvme_io);
	spec.fn_table = &g_nvme_fn;
	spec.ctx = nb;
	rc = nvp_bdev_register(&spec, &nb->bdev);
	if (rc != 0) {
		ns_bdev_free(nb);
		return rc;
	}
	TAILQ_INSERT_TAIL(&c->bdevs, nb, link);
	*out = nb->bdev;
	return 0;
}

/* Unregister every bdev of @c and free its entries. -EBUSY (nothing done) if one is open. */
static int
ctrlr_bdevs_release(struct nvme_ctrlr_entry *c)
{
	struct nvme_ns_bdev *nb;

	TAILQ_FOREACH (nb, &c->bdevs, link) {
		if (nb->bdev != NULL && nvp_bdev_get_open_count(nb->bdev) != 0) {
			NVP_ERRLOG("controller %s: bdev %s is open; close it first", c->name,
				   nvp_bdev_get_name(nb->bdev));
			return -EBUSY;
		}
	}
	while ((nb = TAILQ_FIRST(&c->bdevs)) != NULL) {
		if (nb->bdev != NULL) {
			nvp_bdev_unregister(nb->bdev);
		}
		TAILQ_REMOVE(&c->bdevs, nb, link);
		ns_bdev_free(nb);
	}
	return 0;
}

/*
 * The caller's options over the defaults: a caller built against an older, shorter
 * struct gets the defaults for the fields past its opts_size (the reconnect fields,
 * io_queue_size, the controller's options), never the bytes after its struct. The
 * controller's options are a struct of their own, checked against their own opts_size
 * by nvp_nvme_connect(). A bad opts_size copies nothing; it stays in @o for
 * attach_check() to name, as does 0 for no @user at all.
 */
static void
attach_opts_get(const struct nvp_bdev_nvme_opts *user, struct nvp_bdev_nvme_opts *o)
{
	nvp_bdev_nvme_opts_init(o, sizeof(*o));
	o->opts_size = user != NULL ? user->opts_size : 0;
	if (o->opts_size != 0 && o->opts_size <= sizeof(*o)) {
		memcpy(o, user, o->opts_size);
	}
}

static int
attach_check(const char *trid, const struct nvp_bdev_nvme_opts *opts)
{
	const char *bad = NULL;

	if (opts->opts_size == 0 || opts->opts_size > sizeof(*opts)) {
		bad = "opts (use nvp_bdev_nvme_opts_init())";
	} else if (opts->name == NULL || opts->name[0] == '\0' ||
		   strlen(opts->name) >= NVME_CTRLR_NAME_MAX - 8) {
		bad = "name (1 to 23 characters)";
	} else if (trid == NULL) {
		bad = "trid";
	} else if (opts->ctrlr_loss_timeout_sec < -1 ||
		   (opts->ctrlr_loss_timeout_sec != 0 && opts->reconnect_delay_sec == 0) ||
		   (opts->ctrlr_loss_timeout_sec > 0 &&
		    opts->reconnect_delay_sec > (uint32_t)opts->ctrlr_loss_timeout_sec)) {
		bad = "ctrlr_loss_timeout_sec / reconnect_delay_sec (-1 or more; with a loss "
		      "timeout, a delay of 1 s up to the timeout)";
	} else if (opts->fast_io_fail_timeout_sec != 0 &&
		   (opts->ctrlr_loss_timeout_sec == 0 ||
		    opts->fast_io_fail_timeout_sec < opts->reconnect_delay_sec ||
		    (opts->ctrlr_loss_timeout_sec > 0 &&
		     opts->fast_io_fail_timeout_sec > (uint32_t)opts->ctrlr_loss_timeout_sec))) {
		bad = "fast_io_fail_timeout_sec (0, or with a loss timeout from "
		      "reconnect_delay_sec up to ctrlr_loss_timeout_sec)";
	} else if ((unsigned int)opts->action_on_timeout > NVP_BDEV_NVME_TIMEOUT_ABORT) {
		bad = "action_on_timeout (none, reset or abort)";
	}
	if (bad != NULL) {
		NVP_ERRLOG("bdev_nvme_attach_controller: bad parameter %s", bad);
		return -EINVAL;
	}
	/* the controller's own limit is known once it is attached: attach_fit_queue_size() */
	if (opts->io_queue_size != 0 &&
	    nvp_nvme_ctrlr_fit_io_queue_size(NULL, opts->io_queue_size, NULL) != 0) {
		NVP_ERRLOG("bdev_nvme_attach_controller '%s': bad parameter io_queue_size %" PRIu32
			   " (0 = the default, or %u .. %u; above what the controller takes, "
			   "CAP.MQES + 1, it is lowered to that)",
			   opts->name, opts->io_queue_size, NVP_NVME_QUEUE_SIZE_MIN,
			   NVP_NVME_QUEUE_SIZE_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * io_queue_size above what the controller's queues take (CAP.MQES + 1) is lowered to
 * that, with a notice, as SPDK does with its io_queue_size at attach: one configuration
 * serves controllers of different limits, and the channels do not fail one by one.
 */
static void
attach_fit_queue_size(struct nvme_ctrlr_entry *c)
{
	uint32_t fitted;

	if (c->io_queue_size != 0 &&
	    nvp_nvme_ctrlr_fit_io_queue_size(c->ctrlr, c->io_queue_size, &fitted) != 0) {
		NVP_NOTICELOG("controller %s: io_queue_size %" PRIu32 " lowered to %" PRIu32
			      ", the most its queues take (CAP.MQES + 1)",
			      c->name, c->io_queue_size, fitted);
		c->io_queue_size = fitted;
	}
}

static int
attach_namespaces(struct nvme_ctrlr_entry *c, struct nvp_bdev **bdevs, uint32_t max,
		  uint32_t *count)
{
	struct nvp_bdev *bdev;
	uint32_t nsid, n = 0;
	int rc;

	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(c->ctrlr); nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(c->ctrlr, nsid)) {
		rc = ns_bdev_register(c, nsid, &bdev);
		if (rc != 0) {
			return rc;
		}
		if (bdevs != NULL && n < max) {
			bdevs[n] = bdev;
		}
		n++;
	}
	if (count != NULL) {
		*count = n;
	}
	if (n == 0) {
		NVP_ERRLOG("controller %s has no active namespace", c->name);
		return -ENODEV;
	}
	return 0;
}

/*
 * The controller's options: the caller's ctrlr_opts, and for NVMe/TCP with a loss timeout
 * the attach's three reconnect values in place of theirs (the driver reconnects; see the
 * top of this file). \return what nvp_nvme_connect() gets: @co, or the caller's own (a
 * bad opts_size of theirs is named by the connect).
 */
static const struct nvp_nvme_ctrlr_opts *
attach_ctrlr_opts(const struct nvp_bdev_nvme_opts *o, const struct nvp_nvme_transport_id *trid,
		  struct nvp_nvme_ctrlr_opts *co)
{
	const struct nvp_nvme_ctrlr_opts *user = o->ctrlr_opts;

	if (trid->trtype != NVP_NVME_TRANSPORT_TCP || o->ctrlr_loss_timeout_sec == 0 ||
	    (user != NULL && (user->opts_size == 0 || user->opts_size > sizeof(*co)))) {
		return user;
	}
	nvp_nvme_ctrlr_opts_init(co, sizeof(*co));
	if (user != NULL) {
		memcpy(co, user, user->opts_size);
		co->opts_size = sizeof(*co);
	}
	co->ctrlr_loss_timeout_sec = o->ctrlr_loss_timeout_sec;
	co->reconnect_delay_sec = o->reconnect_delay_sec;
	co->fast_io_fail_timeout_sec = o->fast_io_fail_timeout_sec;
	return co;
}

int
nvp_bdev_nvme_attach(const char *trid_str, const struct nvp_bdev_nvme_opts *user,
		     struct nvp_bdev **bdevs, uint32_t max_bdevs, uint32_t *count)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts co;
	struct nvp_bdev_nvme_opts o;
	struct nvme_ctrlr_entry *c;
	int rc;

	attach_opts_get(user, &o);
	rc = attach_check(trid_str, &o);
	if (rc == 0) {
		rc = nvp_nvme_transport_id_parse(&trid, trid_str);
	}
	if (rc != 0) {
		return rc;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		return -ENOMEM;
	}
	nvp_strlcpy(c->name, o.name, sizeof(c->name));
	c->io_queue_size = o.io_queue_size;
	c->loss_timeout_s = o.ctrlr_loss_timeout_sec;
	c->reconnect_delay_s = o.reconnect_delay_sec;
	c->timeout_us = o.timeout_us;
	c->timeout_action = o.action_on_timeout;
	TAILQ_INIT(&c->bdevs);
	pthread_mutex_lock(&g_nvme_mutex);
	if (ctrlr_find_locked(c->name) != NULL) {
		pthread_mutex_unlock(&g_nvme_mutex);
		NVP_ERRLOG("bdev_nvme_attach_controller: a controller '%s' exists", c->name);
		free(c);
		return -EEXIST;
	}
	rc = nvp_nvme_connect(&trid, attach_ctrlr_opts(&o, &trid, &co), &c->ctrlr);
	if (rc == 0) {
		attach_fit_queue_size(c);
		TAILQ_INSERT_TAIL(&g_ctrlrs, c, link);
		rc = attach_namespaces(c, bdevs, max_bdevs, count);
		if (rc != 0) {
			ctrlr_bdevs_release(c);
			TAILQ_REMOVE(&g_ctrlrs, c, link);
			nvp_nvme_detach(c->ctrlr);
		} else {
			nvp_nvme_ctrlr_register_remove_callback(c->ctrlr, nvme_ctrlr_remove_cb, c);
			nvp_nvme_ctrlr_register_timeout_callback(c->ctrlr, nvme_timeout_cb, c);
		}
	}
	pthread_mutex_unlock(&g_nvme_mutex);
	if (rc != 0) {
		free(c);
	}
	return rc;
}

int
nvp_bdev_nvme_detach(const char *name)
{
	struct nvme_ctrlr_entry *c;
	int rc;

	if (name == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_nvme_mutex);
	c = ctrlr_find_locked(name);
	if (c == NULL) {
		pthread_mutex_unlock(&g_nvme_mutex);
		NVP_ERRLOG("bdev_nvme_detach_controller: no controller '%s'", name);
		return -ENODEV;
	}
	rc = ctrlr_bdevs_release(c);
	if (rc == 0) {
		TAILQ_REMOVE(&g_ctrlrs, c, link);
	}
	pthread_mutex_unlock(&g_nvme_mutex);
	if (rc == 0) {
		nvp_nvme_detach(c->ctrlr);
		free(c);
	}
	return rc;
}

struct nvp_nvme_ctrlr *
nvp_bdev_nvme_get_ctrlr(struct nvp_bdev *bdev)
{
	struct nvme_ns_bdev *nb;

	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), "nvme") != 0) {
		return NULL;
	}
	nb = nvp_bdev_get_module_ctx(bdev);
	return nb->c->ctrlr;
}

/* The nvme bdev behind @bdev, or NULL for another module's. */
static struct nvme_ns_bdev *
ns_bdev_get(struct nvp_bdev *bdev)
{
	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), "nvme") != 0) {
		return NULL;
	}
	return nvp_bdev_get_module_ctx(bdev);
}

int
nvp_bdev_nvme_get_hint_stats(struct nvp_bdev *bdev, struct nvp_bdev_nvme_hint_stats *stats)
{
	struct nvme_ns_bdev *nb = ns_bdev_get(bdev);
	unsigned int h;

	if (nb == NULL || stats == NULL || stats->info_size < sizeof(*stats)) {
		NVP_ERRLOG("nvme hint stats: NULL argument, info_size too small or not an nvme "
			   "bdev");
		return -EINVAL;
	}
	memset((char *)stats + sizeof(stats->info_size), 0,
	       sizeof(*stats) - sizeof(stats->info_size));
	stats->placement = (uint32_t)nvp_nvme_ns_get_placement(nb->ns);
	stats->num_streams = nvp_nvme_ns_get_num_streams(nb->ns);
	stats->hints_dropped = nvp_nvme_ns_get_hints_dropped(nb->ns);
	for (h = 0; h < NVP_BDEV_NUM_HINTS; h++) {
		stats->stream[h] = nvp_nvme_ns_get_hint_stream(nb->ns, (enum nvp_nvme_write_hint)h);
	}
	hint_writes_sum(nb, stats->writes);
	return 0;
}

int
nvp_bdev_nvme_get_ctrlr_stats(struct nvp_bdev *bdev, struct nvp_bdev_nvme_ctrlr_stats *stats)
{
	struct nvme_ns_bdev *nb = ns_bdev_get(bdev);
	struct nvme_ctrlr_entry *c;

	if (nb == NULL || stats == NULL || stats->info_size < sizeof(*stats)) {
		NVP_ERRLOG("nvme controller stats: NULL argument, info_size too small or not an "
			   "nvme bdev");
		return -EINVAL;
	}
	c = nb->c;
	memset((char *)stats + sizeof(stats->info_size), 0,
	       sizeof(*stats) - sizeof(stats->info_size));
	stats->timeouts = __atomic_load_n(&c->timeouts, __ATOMIC_RELAXED);
	stats->aborted_at_destroy = __atomic_load_n(&c->aborted_at_destroy, __ATOMIC_RELAXED);
	/* written under resetting by one thread at a time: a plain read may be one behind */
	stats->timeout_resets = __atomic_load_n(&c->timeout_resets, __ATOMIC_RELAXED);
	stats->resets = __atomic_load_n(&c->resets, __ATOMIC_RELAXED);
	return 0;
}

/* nvp_bdev_fini(): detach every controller (no bdev is open by then). */
static void
nvme_module_fini(void)
{
	struct nvme_ctrlr_entry *c;

	pthread_mutex_lock(&g_nvme_mutex);
	while ((c = TAILQ_FIRST(&g_ctrlrs)) != NULL) {
		ctrlr_bdevs_release(c);
		TAILQ_REMOVE(&g_ctrlrs, c, link);
		nvp_nvme_detach(c->ctrlr);
		free(c);
	}
	pthread_mutex_unlock(&g_nvme_mutex);
}

static struct nvp_bdev_module g_nvme_module = {
	.name = "nvme",
	.fini = nvme_module_fini,
};

__attribute__((constructor)) static void
nvme_module_register(void)
{
	nvp_bdev_module_register(&g_nvme_module);
}
