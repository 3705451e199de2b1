/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads: each thread allocates its own qpair and drives it with no lock, at the same
 * time as the others, writing and verifying its own LBA range; meanwhile other threads
 * use the shared admin queue through the synchronous helpers.
 *
 * CUnit assertions are not thread-safe: worker threads count their errors and the main
 * thread asserts on the counts after joining them.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "nvp_config.h"

#define QD 8
#define BLOCKS_PER_REQ 8
#define ROUNDS 40

struct worker {
	pthread_t thread;
	pthread_barrier_t *barrier; /* all qpairs exist before I/O starts and until it ends */
	unsigned int id;
	bool delay_doorbell;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	uint64_t first_lba; /* its own range: QD * BLOCKS_PER_REQ blocks from here */
	uint16_t qid;
	/* results */
	int alloc_rc;
	unsigned int submit_errors;
	unsigned int status_errors;
	unsigned int data_errors;
	unsigned int lost;
	unsigned int duplicates;
	uint64_t ios;
};

struct slot {
	struct fx_cpl c;
	uint8_t *buf;
};

/* One round: QD writes in flight together, then QD reads, then verify. */
static void
worker_round(struct worker *w, struct nvp_nvme_qpair *qpair, struct slot *slots, uint32_t bs,
	     unsigned int round)
{
	uint32_t tag = (w->id << 12) | round;
	unsigned int i, pass;
	int rc;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < QD; i++) {
			uint64_t lba = w->first_lba + (uint64_t)i * BLOCKS_PER_REQ;

			memset(&slots[i].c, 0, sizeof(slots[i].c));
			if (pass == 0) {
				fx_pattern_fill(slots[i].buf, lba, BLOCKS_PER_REQ, bs, tag);
				rc = nvp_nvme_ns_cmd_write(w->ns, qpair, slots[i].buf, lba,
							   BLOCKS_PER_REQ, fx_cpl_cb, &slots[i].c,
							   0);
			} else {
				memset(slots[i].buf, 0, (size_t)BLOCKS_PER_REQ * bs);
				rc = nvp_nvme_ns_cmd_read(w->ns, qpair, slots[i].buf, lba,
							  BLOCKS_PER_REQ, fx_cpl_cb, &slots[i].c,
							  0);
			}
			if (rc != 0) {
				w->submit_errors++;
				slots[i].c.calls = 1; /* nothing to wait for */
				slots[i].c.cpl.status.sc = 0xff;
			}
		}
		for (i = 0; i < QD; i++) {
			if (fx_poll_until(qpair, &slots[i].c.calls, 1, FX_WAIT_MS) != 0) {
				w->lost++;
			} else if (nvme_cpl_is_error(&slots[i].c.cpl)) {
				w->status_errors++;
			}
			w->ios++;
		}
	}
	for (i = 0; i < QD; i++) {
		uint64_t lba = w->first_lba + (uint64_t)i * BLOCKS_PER_REQ;

		if (slots[i].c.calls > 1) {
			w->duplicates++;
		}
		if (fx_pattern_check(slots[i].buf, lba, BLOCKS_PER_REQ, bs, tag) >= 0) {
			w->data_errors++;
		}
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct nvp_nvme_qpair *qpair = NULL;
	struct slot slots[QD];
	uint32_t bs = nvp_nvme_ns_get_sector_size(w->ns);
	unsigned int i, round;

	memset(slots, 0, sizeof(slots));
	/* The qpair belongs to the thread that allocates it. */
	w->alloc_rc = fx_qpair_alloc(w->ctrlr, 32, 0, 0, w->delay_doorbell, &qpair);
	pthread_barrier_wait(w->barrier);
	if (w->alloc_rc != 0) {
		pthread_barrier_wait(w->barrier);
		return NULL;
	}
	w->qid = nvp_nvme_qpair_get_id(qpair);
	for (i = 0; i < QD; i++) {
		slots[i].buf = nvp_env_dma_zmalloc((size_t)BLOCKS_PER_REQ * bs, 4096, NULL);
		if (slots[i].buf == NULL) {
			w->alloc_rc = -ENOMEM;
			goto out;
		}
	}
	for (round = 0; round < ROUNDS; round++) {
		worker_round(w, qpair, slots, bs, round);
	}
	if (nvp_nvme_qpair_get_num_outstanding(qpair) != 0) {
		w->lost++;
	}
out:
	pthread_barrier_wait(w->barrier);
	for (i = 0; i < QD; i++) {
		nvp_env_dma_free(slots[i].buf);
	}
	if (nvp_nvme_ctrlr_free_io_qpair(qpair) != 0) {
		w->submit_errors++;
	}
	return NULL;
}

static void
check_worker(const struct worker *w)
{
	if (w->alloc_rc != 0 || w->submit_errors || w->status_errors || w->data_errors || w->lost ||
	    w->duplicates) {
		fprintf(stderr,
			"  worker %u (qid %u): alloc %d, submit errors %u, status errors %u, "
			"data errors %u, lost %u, duplicates %u\n",
			w->id, w->qid, w->alloc_rc, w->submit_errors, w->status_errors,
			w->data_errors, w->lost, w->duplicates);
	}
	CU_ASSERT_EQUAL(w->alloc_rc, 0);
	CU_ASSERT_EQUAL(w->submit_errors, 0);
	CU_ASSERT_EQUAL(w->status_errors, 0);
	CU_ASSERT_EQUAL(w->data_errors, 0);
	CU_ASSERT_EQUAL(w->lost, 0);
	CU_ASSERT_EQUAL(w->duplicates, 0);
	CU_ASSERT_EQUAL(w->ios, (uint64_t)ROUNDS * QD * 2);
}

static void
run_workers_opts(struct fx_ctrlr *fx, unsigned int n, bool delay_doorbell)
{
	pthread_barrier_t barrier;
	struct worker w[4];
	unsigned int i, j;

	CU_ASSERT_FATAL(n <= 4);
	memset(w, 0, sizeof(w));
	CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&barrier, NULL, n), 0);
	for (i = 0; i < n; i++) {
		w[i].barrier = &barrier;
		w[i].delay_doorbell = delay_doorbell;
		w[i].id = i + 1;
		w[i].ctrlr = fx->ctrlr;
		w[i].ns = fx->ns;
		/* Neighbouring ranges: an off-by-one LBA would land in another's range. */
		w[i].first_lba = (uint64_t)i * QD * BLOCKS_PER_REQ;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
	}
	pthread_barrier_destroy(&barrier);
	for (i = 0; i < n; i++) {
		check_worker(&w[i]);
		for (j = 0; j < i; j++) {
			CU_ASSERT_NOT_EQUAL(w[i].qid, w[j].qid);
		}
		CU_ASSERT(w[i].qid != 0);
	}
}

static void
run_workers(struct fx_ctrlr *fx, unsigned int n)
{
	run_workers_opts(fx, n, false);
}

static void
test_two_threads_delay_doorbell(void)
{
	struct fx_ctrlr fx;

	if (fx_open(&fx, "size=8M,lba=512,channels=2") != 0) {
		fx_close(&fx);
		return;
	}
	run_workers_opts(&fx, 2, true);
	fx_close(&fx);
}

static void
test_two_threads(void)
{
	struct fx_ctrlr fx;

	if (fx_open(&fx, "size=8M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	run_workers(&fx, 2);
	fx_close(&fx);
}

static void
test_two_threads_4k_slow_device(void)
{
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("service times and channels (read_us, write_us, channels)");
	/* Service times make requests of both threads overlap inside the device. */
	if (fx_open(&fx, "size=8M,lba=4096,read_us=20,write_us=30,channels=2") != 0) {
		fx_close(&fx);
		return;
	}
	run_workers(&fx, 2);
	fx_close(&fx);
}

static void
test_four_threads(void)
{
	struct fx_ctrlr fx;

	if (fx_open(&fx, "size=8M,lba=512,queues=8") != 0) {
		fx_close(&fx);
		return;
	}
	run_workers(&fx, 4);
	fx_close(&fx);
}

/* The synchronous admin helpers from several threads at once, while I/O runs. */
struct admin_worker {
	pthread_t thread;
	struct nvp_nvme_ctrlr *ctrlr;
	unsigned int errors;
	unsigned int done;
};

static void *
admin_main(void *arg)
{
	struct admin_worker *a = arg;
	struct nvme_health_information_page health;
	struct nvme_ctrlr_data cdata;
	uint32_t result;
	unsigned int i;

	for (i = 0; i < 50; i++) {
		if (nvp_nvme_ctrlr_get_log_page(a->ctrlr, NVME_LOG_HEALTH_INFORMATION,
						NVME_GLOBAL_NS_TAG, &health, sizeof(health), 0,
						NULL) != 0) {
			a->errors++;
		}
		if (nvp_nvme_ctrlr_identify(a->ctrlr, NVME_IDENTIFY_CTRLR, 0, &cdata, sizeof(cdata),
					    NULL) != 0 ||
		    memcmp(&cdata, nvp_nvme_ctrlr_get_data(a->ctrlr), sizeof(cdata)) != 0) {
			a->errors++;
		}
		if (nvp_nvme_ctrlr_get_feature(a->ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, 0,
					       &result, NULL, 0, NULL) != 0) {
			a->errors++;
		}
		a->done++;
	}
	return NULL;
}

/* Somebody else polling the admin queue meanwhile (callbacks run on whichever thread
 * calls process_admin_completions). */
struct admin_poller {
	pthread_t thread;
	struct nvp_nvme_ctrlr *ctrlr;
	volatile bool stop;
	int errors;
};

static void *
admin_poller_main(void *arg)
{
	struct admin_poller *p = arg;

	while (!p->stop) {
		if (nvp_nvme_ctrlr_process_admin_completions(p->ctrlr) < 0) {
			p->errors++;
		}
	}
	return NULL;
}

static void
test_admin_from_threads(void)
{
	struct admin_worker a[2];
	struct admin_poller poller;
	struct fx_ctrlr fx;
	unsigned int i;

	if (fx_open(&fx, "size=8M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	memset(a, 0, sizeof(a));
	memset(&poller, 0, sizeof(poller));
	poller.ctrlr = fx.ctrlr;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&poller.thread, NULL, admin_poller_main, &poller), 0);
	for (i = 0; i < 2; i++) {
		a[i].ctrlr = fx.ctrlr;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&a[i].thread, NULL, admin_main, &a[i]), 0);
	}
	/* Two I/O threads at the same time. */
	run_workers(&fx, 2);
	for (i = 0; i < 2; i++) {
		pthread_join(a[i].thread, NULL);
		CU_ASSERT_EQUAL(a[i].errors, 0);
		CU_ASSERT_EQUAL(a[i].done, 50);
	}
	poller.stop = true;
	pthread_join(poller.thread, NULL);
	CU_ASSERT_EQUAL(poller.errors, 0);
	fx_close(&fx);
}

/* A qpair used from a thread that does not own it: debug builds refuse with -EPERM. */
struct foreign {
	struct fx_ctrlr *fx;
	struct nvp_nvme_qpair *qpair;
	uint8_t *buf;
	int submit_rc;
	int32_t poll_rc;
};

static void *
foreign_main(void *arg)
{
	struct foreign *f = arg;
	struct fx_cpl c = { 0 };

	f->submit_rc = nvp_nvme_ns_cmd_read(f->fx->ns, f->qpair, f->buf, 0, 1, fx_cpl_cb, &c, 0);
	f->poll_rc = nvp_nvme_qpair_process_completions(f->qpair, 0);
	return NULL;
}

static void
test_foreign_thread(void)
{
	struct fx_ctrlr fx;
	struct foreign f;
	pthread_t t;

	if (!NVP_CONFIG_DEBUG) {
		/* Release builds do not check (the check costs on the I/O path). */
		return;
	}
	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.fx = &fx;
	f.qpair = fx.qpair;
	f.buf = fx_dma_alloc(4096);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, foreign_main, &f), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(f.submit_rc, -EPERM);
	CU_ASSERT_EQUAL(f.poll_rc, -EPERM);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx.qpair), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, f.buf, 0, 1, 0, NULL), 0);
	nvp_env_dma_free(f.buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "two_threads", test_two_threads },
		{ "two_threads_4k_slow_device", test_two_threads_4k_slow_device },
		{ "two_threads_delay_doorbell", test_two_threads_delay_doorbell },
		{ "four_threads", test_four_threads },
		{ "admin_from_threads", test_admin_from_threads },
		{ "foreign_thread", test_foreign_thread },
	};

	return fx_main(argc, argv, "nvme_qpair_threads", tests, NVP_COUNTOF(tests));
}
