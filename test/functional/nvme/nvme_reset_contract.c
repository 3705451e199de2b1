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
 *
 * CUnit assertions are not thread-safe: the worker counts, the main thread asserts.
 */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
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

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "reset_under_io_from_another_thread", test_reset_under_io_from_another_thread },
		{ "sync_admin_does_not_hold_the_lock", test_sync_admin_does_not_hold_the_lock },
		{ "surprise_removal", test_surprise_removal },
	};

	return fx_main(argc, argv, "nvme_reset_contract", tests, NVP_COUNTOF(tests));
}
