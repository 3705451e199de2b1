/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reset and admin-queue contract of nvme.h, from the outside:
 *  - Resets from another thread while an owner thread keeps verified I/O going on its own
 *    qpair, without parking it: every request completes exactly once (none lost, none
 *    twice), every successful write reads back intact, and the qpair carries on.
 *  - A synchronous admin command waiting for a controller that does not answer holds
 *    nobody up: another thread's admin command is accepted, and completes, meanwhile.
 *  - Surprise removal (registers read all ones) under I/O: the remove callback runs once,
 *    every request completes once (Host Pathing Error unless it finished before), every
 *    later call returns -ENXIO, nothing hangs.
 *  - Retryable means retryable: an application that resubmits every request completed
 *    with an error and DNR clear, through controller failures (CFS) and resets with
 *    writes outstanding, loses no write: every block reads back what was last
 *    acknowledged, no request is given up, none completes twice.
 *  - The controller refuses a qpair's Create I/O CQ or SQ during a reset: the qpair fails
 *    (-ENXIO), its requests complete once with ABORTED SQ DELETION, DNR clear; the next
 *    reset brings it back and its I/O works. Refused by fault injection, or by the
 *    device itself (a test knob makes the driver ask for too large a queue): that part
 *    runs against QEMU's controller too.
 *
 * CUnit assertions are not thread-safe: the worker counts, the main thread asserts.
 */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define QD 16
#define RESETS 8

struct io_worker {
	struct fx_ctrlr *fx;
	atomic_bool stop;
	atomic_bool ready;
	/* results */
	int alloc_rc;
	unsigned int rounds;
	unsigned int ok, errors, lost, twice, corrupted, refused;
};

/* Submit QD one-block requests (write or read) and wait for all of them. */
static void
worker_pass(struct io_worker *w, struct nvp_nvme_qpair *qpair, struct fx_cpl *c, uint8_t *buf,
	    bool write, uint32_t tag)
{
	struct nvp_nvme_ns *ns = w->fx->ns;
	unsigned int i;
	int rc;

	for (i = 0; i < QD; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		if (write) {
			fx_pattern_fill(buf + i * 4096, 100 + i, 1, 512, tag);
			rc = nvp_nvme_ns_cmd_write(ns, qpair, buf + i * 4096, 100 + i, 1, fx_cpl_cb,
						   &c[i], 0);
		} else {
			memset(buf + i * 4096, 0, 512);
			rc = nvp_nvme_ns_cmd_read(ns, qpair, buf + i * 4096, 100 + i, 1, fx_cpl_cb,
						  &c[i], 0);
		}
		if (rc != 0) {
			w->refused++;
			c[i].calls = 1; /* nothing to wait for */
			c[i].cpl.status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
		}
	}
	for (i = 0; i < QD; i++) {
		if (fx_poll_until(qpair, &c[i].calls, 1, 20000) != 0) {
			w->lost++;
		}
	}
	fx_poll_for(qpair, 2); /* a second completion would show up here */
	for (i = 0; i < QD; i++) {
		w->twice += c[i].calls > 1;
	}
}

/* Rounds of QD writes then QD reads of the same blocks, verified, until told to stop. */
static void *
io_worker_main(void *arg)
{
	struct io_worker *w = arg;
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_cpl wc[QD], rc[QD];
	uint8_t *buf = fx_dma_alloc(QD * 4096);
	unsigned int i;

	w->alloc_rc = nvp_nvme_ctrlr_alloc_io_qpair(w->fx->ctrlr, NULL, &qpair);
	atomic_store(&w->ready, true);
	if (w->alloc_rc != 0) {
		nvp_env_dma_free(buf);
		return NULL;
	}
	while (!atomic_load(&w->stop) || w->rounds < 4) {
		uint32_t tag = 0x5000 + w->rounds;

		worker_pass(w, qpair, wc, buf, true, tag);
		worker_pass(w, qpair, rc, buf, false, tag);
		for (i = 0; i < QD; i++) {
			bool w_ok = wc[i].calls == 1 && !nvme_cpl_is_error(&wc[i].cpl);
			bool r_ok = rc[i].calls == 1 && !nvme_cpl_is_error(&rc[i].cpl);

			if (!w_ok || !r_ok) {
				char b1[96], b2[96];

				fprintf(stderr, "  block %u: write %s, read %s\n", i,
					nvp_nvme_cpl_fmt(b1, sizeof(b1), &wc[i].cpl),
					nvp_nvme_cpl_fmt(b2, sizeof(b2), &rc[i].cpl));
			}
			w->ok += w_ok + r_ok;
			w->errors += !w_ok + !r_ok;
			if (w_ok && r_ok &&
			    fx_pattern_check(buf + i * 4096, 100 + i, 1, 512, tag) >= 0) {
				w->corrupted++;
			}
		}
		w->rounds++;
	}
	nvp_nvme_ctrlr_free_io_qpair(qpair);
	nvp_env_dma_free(buf);
	return NULL;
}

/* Resets from this thread while the worker's qpair is busy; the worker is not parked. */
static void
test_reset_under_io_from_another_thread(void)
{
	struct io_worker w;
	struct fx_ctrlr fx;
	pthread_t t;
	unsigned int i, failed_resets = 0;

	if (fx_open(&fx, "size=4M,write_us=300,read_us=100") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.fx = &fx;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, io_worker_main, &w), 0);
	while (!atomic_load(&w.ready)) {
		usleep(1000);
	}
	for (i = 0; i < RESETS && w.alloc_rc == 0; i++) {
		usleep(5000 + 3000 * i);
		failed_resets += nvp_nvme_ctrlr_reset(fx.ctrlr) != 0;
	}
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	fprintf(stderr,
		"  %u resets: %u rounds, %u ok, %u errors, %u refused, %u lost, %u twice, "
		"%u corrupted\n",
		RESETS, w.rounds, w.ok, w.errors, w.refused, w.lost, w.twice, w.corrupted);
	CU_ASSERT_EQUAL(w.alloc_rc, 0);
	CU_ASSERT_EQUAL(failed_resets, 0);
	CU_ASSERT_EQUAL(w.lost, 0);
	CU_ASSERT_EQUAL(w.twice, 0);
	CU_ASSERT_EQUAL(w.corrupted, 0);
	CU_ASSERT_EQUAL(w.refused, 0);
	CU_ASSERT(w.ok > 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	fx_close(&fx);
}

struct sync_waiter {
	struct nvp_nvme_ctrlr *ctrlr;
	atomic_bool started;
	atomic_bool done;
	int rc;
};

static void *
sync_waiter_main(void *arg)
{
	struct sync_waiter *sw = arg;
	uint32_t value = 0;

	atomic_store(&sw->started, true);
	sw->rc = nvp_nvme_ctrlr_get_feature(sw->ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, 0, &value,
					    NULL, 0, NULL);
	atomic_store(&sw->done, true);
	return NULL;
}

/*
 * A thread waits in a synchronous admin command the controller does not answer (its
 * thread is stopped). Another thread's admin command is accepted meanwhile: it does not
 * wait behind the first for the admin lock. When the controller runs again both
 * complete.
 */
static void
test_sync_admin_does_not_hold_the_lock(void)
{
	struct sync_waiter sw;
	struct fx_ctrlr fx;
	struct fx_cpl c = { 0 };
	struct nvme_cmd cmd;
	pthread_t t;
	int rc;

	FX_NEEDS_EMU("stopping the controller's thread");
	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&sw, 0, sizeof(sw));
	sw.ctrlr = fx.ctrlr;
	CU_ASSERT_EQUAL_FATAL(nvp_emu_ctrlr_set_inline(fx.emu, true), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sync_waiter_main, &sw), 0);
	while (!atomic_load(&sw.started)) {
		usleep(1000);
	}
	usleep(50000); /* let it submit and start waiting (either order passes) */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_FEATURES;
	cmd.cdw10 = NVME_FEAT_ARBITRATION;
	rc = nvp_nvme_ctrlr_cmd_admin_raw(fx.ctrlr, &cmd, NULL, 0, fx_cpl_cb, &c);
	/* Had the waiter held the lock, this call would have returned only after its
	 * admin timeout (10 s): the waiter would be done by now. */
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_FALSE(atomic_load(&sw.done));
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_set_inline(fx.emu, false), 0);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &c.calls, 1, 5000), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(sw.rc, 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	fx_close(&fx);
}

struct removal {
	unsigned int calls;
	struct nvp_nvme_ctrlr *ctrlr;
};

static void
remove_cb(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr)
{
	struct removal *r = cb_arg;

	r->calls++;
	r->ctrlr = ctrlr;
}

static void
test_surprise_removal(void)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_qpair *qpair = NULL, *q2 = NULL;
	struct removal r = { 0 };
	struct fx_cpl c[8], a = { 0 };
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	uint8_t *buf;
	unsigned int i, done = 0, path_errors = 0;
	uint64_t deadline;
	uint32_t value;
	int32_t rc = 0;

	FX_NEEDS_EMU("fault injection (registers reading all ones)");
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_timeout_ms = 1000;
	if (fx_open_opts(&fx, "size=4M,channels=1,write_us=50000,to=2", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_remove_callback(fx.ctrlr, remove_cb, &r);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 16, 16, 0, false, &qpair), 0);
	buf = fx_dma_alloc(8 * 4096);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf + i * 4096, i, 1, fx_cpl_cb,
						      &c[i], 0),
				0);
	}
	nvp_nvme_qpair_process_completions(qpair, 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ALL_ONES, 1, 0, 0), 0);
	/* No I/O timeout: the once-a-second status check finds it. */
	deadline = fx_now_us() + 10u * 1000 * 1000;
	while (fx_now_us() < deadline && rc >= 0) {
		rc = nvp_nvme_qpair_process_completions(qpair, 0);
	}
	for (i = 0; i < 8; i++) {
		done += c[i].calls;
		CU_ASSERT_EQUAL(c[i].calls, 1);
		if (c[i].cpl.status.sct == NVME_SCT_PATH &&
		    c[i].cpl.status.sc == NVME_SC_HOST_PATH_ERROR) {
			path_errors++;
		}
	}
	fprintf(stderr, "  %u of 8 completed, %u with Host Pathing Error; remove callback %u\n",
		done, path_errors, r.calls);
	CU_ASSERT_EQUAL(rc, -ENXIO);
	CU_ASSERT(path_errors >= 7); /* the first write may have finished before */
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_PTR_EQUAL(r.ctrlr, fx.ctrlr);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_removed(fx.ctrlr));
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	/* Every later call: -ENXIO, at once. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, buf, 0, 1, fx_cpl_cb, &c[0], 0), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(fx.ctrlr, NULL, &q2), -ENXIO);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_FEATURES;
	cmd.cdw10 = NVME_FEAT_ARBITRATION;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(fx.ctrlr, &cmd, NULL, 0, fx_cpl_cb, &a),
			-ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, 0,
						   &value, NULL, 0, NULL),
			-ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_process_admin_completions(fx.ctrlr), -ENXIO);
	CU_ASSERT_EQUAL(r.calls, 1);
	nvp_nvme_ctrlr_free_io_qpair(qpair);
	nvp_nvme_ctrlr_free_io_qpair(fx.qpair);
	fx.qpair = NULL;
	nvp_nvme_detach(fx.ctrlr);
	fx.ctrlr = NULL;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ALL_ONES, 0, 0, 0), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* ---- retry on DNR clear ---- */

#define RT_SLOTS 16    /* writes in flight */
#define RT_PER_SLOT 16 /* blocks each slot owns: s, s + 16, ... */
#define RT_BLOCKS (RT_SLOTS * RT_PER_SLOT)
#define RT_WRITES 3000u /* acknowledged writes to reach */
#define RT_EVENTS 6u    /* failures (even) and plain resets (odd) */
#define RT_BUF 4096u

struct rt_app;

/* One writer: at most one write in flight, to a block no other writer touches. */
struct rt_slot {
	struct rt_app *app;
	unsigned int idx, nth; /* nth write of this slot */
	bool inflight;         /* submitted, its completion not seen yet */
	bool pending;          /* to be (re)submitted once the controller takes it */
	uint64_t lba;
	uint32_t tag;
	uint8_t *buf;
};

struct rt_app {
	struct fx_ctrlr *fx;
	struct nvp_nvme_qpair *qpair;
	uint32_t bs;
	struct rt_slot slot[RT_SLOTS];
	uint32_t acked[RT_BLOCKS], prev[RT_BLOCKS]; /* tags: last and one before */
	uint32_t next_tag;
	unsigned int submits, completions; /* submit calls that took it; callbacks */
	unsigned int acks, retried, gave_up, duplicates, refused;
	unsigned int retried_in[2]; /* by the last event: [0] failure, [1] plain reset */
	unsigned int last_event;    /* 0 failure, 1 plain reset */
};

static void rt_submit(struct rt_slot *sl);

/* The slot's next write: its next block, a new tag, the data for them. */
static void
rt_next(struct rt_slot *sl)
{
	struct rt_app *app = sl->app;

	sl->lba = sl->idx + RT_SLOTS * (sl->nth++ % RT_PER_SLOT);
	sl->tag = ++app->next_tag;
	fx_pattern_fill(sl->buf, sl->lba, 1, app->bs, sl->tag);
	sl->pending = true;
}

/* The application's rule: an error with DNR clear is sent again, as it was. */
static void
rt_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct rt_slot *sl = arg;
	struct rt_app *app = sl->app;
	char b[96];

	app->completions++;
	if (!sl->inflight) {
		app->duplicates++;
		return;
	}
	sl->inflight = false;
	if (nvme_cpl_is_error(cpl)) {
		if (cpl->status.dnr) {
			fprintf(stderr, "  LBA %" PRIu64 " tag %u: %s: given up\n", sl->lba,
				sl->tag, nvp_nvme_cpl_fmt(b, sizeof(b), cpl));
			app->gave_up++;
			return;
		}
		app->retried++;
		app->retried_in[app->last_event]++;
		sl->pending = true;
	} else {
		app->prev[sl->lba] = app->acked[sl->lba];
		app->acked[sl->lba] = sl->tag;
		app->acks++;
		if (app->acks + RT_SLOTS > RT_WRITES) {
			return; /* enough: this writer stops */
		}
		rt_next(sl);
	}
	rt_submit(sl); /* from the callback, as applications do */
}

static void
rt_submit(struct rt_slot *sl)
{
	struct rt_app *app = sl->app;
	int rc;

	if (!sl->pending) {
		return;
	}
	rc = nvp_nvme_ns_cmd_write(app->fx->ns, app->qpair, sl->buf, sl->lba, 1, rt_cb, sl, 0);
	if (rc == 0) {
		app->submits++;
		sl->pending = false;
		sl->inflight = true;
	} else if (rc != -ENXIO && rc != -ENOMEM) {
		app->refused++; /* -ENXIO: failed controller, sent after the reset */
		sl->pending = false;
	}
}

static bool
rt_busy(const struct rt_app *app)
{
	unsigned int i;

	for (i = 0; i < RT_SLOTS; i++) {
		if (app->slot[i].inflight || app->slot[i].pending) {
			return true;
		}
	}
	return false;
}

/*
 * Writes of a verify pattern with 16 in flight; mid-run the controller is failed (CFS:
 * the poll returns -ENXIO once every outstanding request completed with an error; the
 * application resets it) or simply reset (the driver retries nothing: io_retry_count
 * 0, so every request the device had comes back to the application with an error). The
 * application resubmits each error with DNR clear, same data, and gives up on DNR set.
 *
 * What "loses nothing" means here, exactly: a writer sends a block's next version only
 * once the previous one succeeded, and the run goes on until no writer has a write in
 * flight or waiting to be resent, so nothing is outstanding when the blocks are read
 * back and each must hold exactly its last acknowledged version (tag), written whole. A
 * write that failed and was resent carries the same tag and bytes, so the device having
 * executed the failed attempt too changes nothing. Besides: no completion with DNR set,
 * no submit call refused for another reason than -ENXIO (controller failed, resent after
 * the reset) or -ENOMEM, as many callbacks as accepted submissions and none for a write
 * not in flight (twice), and both kinds of event handed back retryable errors.
 */
static void
test_retry_on_dnr_clear(void)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct rt_app *app;
	struct fx_ctrlr fx;
	unsigned int i, events = 0, failures = 0, resets = 0, failed_resets = 0;
	unsigned int lost = 0, corrupted = 0, unwritten = 0;
	bool failing = false;
	uint8_t *rbuf;
	uint64_t deadline;
	struct nvme_cpl cpl;
	unsigned int tries;
	char b[96];
	int32_t rc;

	FX_NEEDS_EMU("fault injection (controller fatal status)");
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.io_retry_count = 0; /* every lost request reaches the application */
	if (fx_open_opts(&fx, "size=4M,write_us=300", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	app = calloc(1, sizeof(*app));
	CU_ASSERT_PTR_NOT_NULL_FATAL(app);
	app->fx = &fx;
	app->bs = nvp_nvme_ns_get_sector_size(fx.ns);
	/* a deadline makes the status check run every 500 ms rather than every second */
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 64, 0, 1000000, false, &app->qpair), 0);
	for (i = 0; i < RT_SLOTS; i++) {
		app->slot[i].app = app;
		app->slot[i].idx = i;
		app->slot[i].buf = fx_dma_alloc(RT_BUF);
		rt_next(&app->slot[i]);
		rt_submit(&app->slot[i]);
	}
	deadline = fx_now_us() + 60u * 1000 * 1000;
	while (rt_busy(app) && fx_now_us() < deadline) {
		rc = nvp_nvme_qpair_process_completions(app->qpair, 0);
		if (rc == -ENXIO) {
			/* Failed: every request it had has completed by now. Bring it back. */
			CU_ASSERT_EQUAL(
				nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_CFS, 0, 0, 0), 0);
			failed_resets += nvp_nvme_ctrlr_reset(fx.ctrlr) != 0;
			failing = false;
		} else if (!failing && events < RT_EVENTS &&
			   app->acks >= (events + 1) * RT_WRITES / (RT_EVENTS + 1)) {
			app->last_event = events % 2;
			if (events % 2 == 0) {
				CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(
							fx.emu, NVP_EMU_FAULT_CFS, 1, 0, 0),
						0);
				failing = true;
				failures++;
			} else {
				failed_resets += nvp_nvme_ctrlr_reset(fx.ctrlr) != 0;
				resets++;
			}
			events++;
		}
		for (i = 0; i < RT_SLOTS; i++) {
			rt_submit(&app->slot[i]);
		}
	}
	fx_poll_for(app->qpair, 20); /* a second completion would show up here */
	/* Read every block back: its last acknowledged write; the one before it is "lost",
	 * anything else "corrupted". */
	rbuf = fx_dma_alloc(RT_BUF);
	for (i = 0; i < RT_BLOCKS; i++) {
		if (app->acked[i] == 0) {
			unwritten++;
			continue;
		}
		/* the application's rule for reads too: an error with DNR clear is resent */
		for (tries = 0; tries < 4; tries++) {
			memset(rbuf, 0, app->bs);
			memset(&cpl, 0, sizeof(cpl));
			rc = fx_io(fx.ns, app->qpair, FX_READ, rbuf, i, 1, 0, &cpl);
			if (rc == 0 || (rc == -EIO && cpl.status.dnr)) {
				break;
			}
			fprintf(stderr, "  read of LBA %u: %d, %s: resent\n", i, rc,
				nvp_nvme_cpl_fmt(b, sizeof(b), &cpl));
		}
		CU_ASSERT_EQUAL(rc, 0);
		if (fx_pattern_check(rbuf, i, 1, app->bs, app->acked[i]) < 0) {
			continue;
		}
		if (app->prev[i] != 0 && fx_pattern_check(rbuf, i, 1, app->bs, app->prev[i]) < 0) {
			lost++;
		} else {
			corrupted++;
		}
	}
	fprintf(stderr,
		"  %u failures, %u resets: %u writes acknowledged, %u resubmitted on DNR clear, "
		"(%u after a failure, %u after a reset), %u given up on DNR, %u refused, "
		"%u submitted, %u completions (%u unexpected); %u blocks: %u lost, "
		"%u corrupted, %u unwritten\n",
		failures, resets, app->acks, app->retried, app->retried_in[0], app->retried_in[1],
		app->gave_up, app->refused, app->submits, app->completions, app->duplicates,
		RT_BLOCKS, lost, corrupted, unwritten);
	CU_ASSERT_FALSE(rt_busy(app)); /* nothing left hanging */
	CU_ASSERT_EQUAL(events, RT_EVENTS);
	CU_ASSERT_EQUAL(failed_resets, 0);
	/* the errors came, from both kinds of event, and were retryable */
	CU_ASSERT_TRUE(app->retried_in[0] > 0);
	CU_ASSERT_TRUE(app->retried_in[1] > 0);
	CU_ASSERT_EQUAL(app->completions, app->submits); /* each exactly once */
	CU_ASSERT_EQUAL(app->gave_up, 0);
	CU_ASSERT_EQUAL(app->refused, 0);
	CU_ASSERT_EQUAL(app->duplicates, 0);
	CU_ASSERT_EQUAL(lost, 0);
	CU_ASSERT_EQUAL(corrupted, 0);
	CU_ASSERT_EQUAL(unwritten, 0);
	CU_ASSERT_TRUE(app->acks + RT_SLOTS > RT_WRITES);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(app->qpair), 0);
	for (i = 0; i < RT_SLOTS; i++) {
		nvp_env_dma_free(app->slot[i].buf);
	}
	nvp_env_dma_free(rbuf);
	free(app);
	fx_close(&fx);
}

/* ---- queue re-creation refused during a reset ---- */

#define RC_REQS 8u

struct rc_req {
	unsigned int calls;
	struct nvme_cpl cpl;
};

static void
rc_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct rc_req *r = arg;

	r->calls++;
	r->cpl = *cpl;
}

/* Poll until the poll returns -ENXIO or all @n completed. \return that -errno, or 0. */
static int32_t
rc_poll(struct nvp_nvme_qpair *qpair, const struct rc_req *r, unsigned int n)
{
	uint64_t deadline = fx_now_us() + 10u * 1000 * 1000; /* a hang guard only */
	int32_t rc = 0;
	unsigned int i, done;

	do {
		rc = nvp_nvme_qpair_process_completions(qpair, 0);
		for (i = 0, done = 0; i < n; i++) {
			done += r[i].calls > 0;
		}
	} while (rc >= 0 && done < n && fx_now_us() < deadline);
	return rc < 0 ? rc : 0;
}

/*
 * A controller reset with writes in flight, and the controller refuses the qpair's Create
 * I/O CQ: the qpair fails, its poll and submissions return -ENXIO, each request completes
 * once with ABORTED SQ DELETION and DNR clear (the next reset brings the qpair back). The
 * next reset does: the same writes sent again succeed and read back. Then the same with
 * Create I/O SQ refused. The refusal is injected (emu fault admin_error), or, with
 * @by_device, the device's own: the driver's test knob NVP_NVME_TEST_REFUSE_RECREATE
 * makes it ask for a queue larger than any controller with CAP.MQES below 65535 allows
 * (Invalid Queue Size, with DNR set on QEMU's), on any controller.
 */
static void
recreate_refused(uint8_t opc, bool by_device)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_qpair *qpair = NULL;
	struct rc_req r[RC_REQS];
	struct fx_ctrlr fx;
	uint8_t *buf[RC_REQS], *rbuf;
	uint32_t bs;
	unsigned int i, once = 0, status_ok = 0, dnr = 0;
	int32_t rc;

	if (!by_device) {
		FX_NEEDS_EMU("fault injection (admin command refused)");
	}
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	if (fx_open_opts(&fx, "size=4M,write_us=20000", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, 0, false, &qpair), 0);
	memset(r, 0, sizeof(r));
	for (i = 0; i < RC_REQS; i++) {
		buf[i] = fx_dma_alloc(bs);
		fx_pattern_fill(buf[i], i, 1, bs, 0x7700 + opc);
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf[i], i, 1, rc_cb, &r[i], 0),
				0);
	}
	if (by_device) {
		/* The next Create I/O CQ (or SQ) asks for too large a queue. */
		CU_ASSERT_EQUAL(setenv("NVP_NVME_TEST_REFUSE_RECREATE",
				       opc == NVME_OPC_CREATE_IO_CQ ? "cq" : "sq", 1),
				0);
	} else {
		/* The next Create I/O CQ (or SQ) is refused, with a status a host may retry. */
		CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ADMIN_ERROR, 1, 0,
							   (uint32_t)opc << 16 |
								   NVME_SC_INTERNAL_DEVICE_ERROR),
				0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	rc = rc_poll(qpair, r, RC_REQS);
	unsetenv("NVP_NVME_TEST_REFUSE_RECREATE");
	CU_ASSERT_EQUAL(rc, -ENXIO);
	fx_poll_for(qpair, 20); /* a second completion would show up here */
	for (i = 0; i < RC_REQS; i++) {
		once += r[i].calls == 1;
		status_ok += r[i].cpl.status.sct == NVME_SCT_GENERIC &&
			     r[i].cpl.status.sc == NVME_SC_ABORTED_SQ_DELETION;
		dnr += r[i].cpl.status.dnr;
	}
	fprintf(stderr,
		"  opcode 0x%02x refused: poll %d; %u of %u completed once, %u with ABORTED SQ "
		"DELETION, %u with DNR\n",
		opc, rc, once, RC_REQS, status_ok, dnr);
	CU_ASSERT_EQUAL(once, RC_REQS);
	CU_ASSERT_EQUAL(status_ok, RC_REQS);
	CU_ASSERT_EQUAL(dnr, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf[0], 0, 1, rc_cb, &r[0], 0), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(qpair, 0), -ENXIO);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr)); /* the qpair failed, not it */

	/* The next reset brings the qpair back: the writes, sent again, succeed. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	memset(r, 0, sizeof(r));
	for (i = 0; i < RC_REQS; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf[i], i, 1, rc_cb, &r[i], 0),
				0);
	}
	CU_ASSERT_EQUAL(rc_poll(qpair, r, RC_REQS), 0);
	for (i = 0; i < RC_REQS; i++) {
		CU_ASSERT_EQUAL(r[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&r[i].cpl));
	}
	rbuf = fx_dma_alloc(bs);
	for (i = 0; i < RC_REQS; i++) {
		memset(rbuf, 0, bs);
		CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_READ, rbuf, i, 1, 0, NULL), 0);
		CU_ASSERT_EQUAL(fx_pattern_check(rbuf, i, 1, bs, 0x7700 + opc), -1);
		nvp_env_dma_free(buf[i]);
	}
	nvp_env_dma_free(rbuf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

static void
test_recreate_cq_refused(void)
{
	recreate_refused(NVME_OPC_CREATE_IO_CQ, false);
}

static void
test_recreate_sq_refused(void)
{
	recreate_refused(NVME_OPC_CREATE_IO_SQ, false);
}

static void
test_recreate_cq_refused_by_device(void)
{
	recreate_refused(NVME_OPC_CREATE_IO_CQ, true);
}

static void
test_recreate_sq_refused_by_device(void)
{
	recreate_refused(NVME_OPC_CREATE_IO_SQ, true);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "reset_under_io_from_another_thread", test_reset_under_io_from_another_thread },
		{ "sync_admin_does_not_hold_the_lock", test_sync_admin_does_not_hold_the_lock },
		{ "surprise_removal", test_surprise_removal },
		{ "retry_on_dnr_clear", test_retry_on_dnr_clear },
		{ "recreate_cq_refused", test_recreate_cq_refused },
		{ "recreate_sq_refused", test_recreate_sq_refused },
		{ "recreate_cq_refused_by_device", test_recreate_cq_refused_by_device },
		{ "recreate_sq_refused_by_device", test_recreate_sq_refused_by_device },
	};

	return fx_main(argc, argv, "nvme_reset_contract", tests, NVP_COUNTOF(tests));
}
