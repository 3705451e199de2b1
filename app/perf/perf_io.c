/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nvp_perf I/O thread. It pins itself to its core, makes its own qpairs (a qpair
 * belongs to the thread that allocates it) and a preallocated task per outstanding
 * request, waits for every thread at the start barrier, then keeps -q requests in flight
 * per namespace until the run time is up, and drains. The I/O path takes no lock and
 * allocates nothing: latency goes into this thread's own histogram, progress counters
 * are single-writer atomics thread 0 reads once a second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "perf.h"

struct ns_worker;

/* One request slot: it is either in flight or (after a failure or at the end) idle. */
struct task {
	struct ns_worker *nw;
	struct nvp_nvme_qpair *qpair;
	void *buf;
	uint64_t submit_ticks;
	bool is_read;
	struct nvp_poll_req preq; /* --poll: the waiter's view of it */
};

/* This thread's view of one namespace. */
/* A namespace worker's qpair counters (nvp_nvme_qpair_stats), summed over its qpairs. */
struct qp_counters {
	uint64_t sq_doorbells;
	uint64_t cq_doorbells;
	uint64_t rekicks;
	uint64_t submitted;
};

struct ns_worker {
	struct perf_ns_stats *stats;
	struct perf_thread *thread;
	struct nvp_nvme_qpair **qpairs;
	struct task *tasks;
	uint64_t seq_next; /* sequential workloads: next I/O slot */
	uint32_t outstanding;
	struct qp_counters base; /* its qpairs' counters as the measured window opened */
};

/* Per-thread state the completion path needs; the shared loop's state first. */
struct io_ctx {
	struct perf_loop loop;
	struct ns_worker *nws;
	uint64_t rng;
};

static struct perf_run *g_run;
static __thread struct io_ctx *t_ctx;

void
perf_io_set_run(struct perf_run *run)
{
	g_run = run;
}

static void io_done(void *arg, const struct nvme_cpl *cpl);

static int
submit(struct io_ctx *ctx, struct task *t)
{
	struct ns_worker *nw = t->nw;
	const struct perf_ns *ns = nw->stats->ns;
	const struct perf_job *o = ns->job;
	uint64_t slot, lba;
	int rc;

	if (o->random) {
		slot = perf_rng_below(&ctx->rng, ns->num_ios);
	} else {
		slot = nw->seq_next++;
		if (nw->seq_next >= ns->num_ios) {
			nw->seq_next = 0;
		}
	}
	lba = slot * ns->lbas_per_io;
	t->is_read = o->read_pct == 100 ||
		     (o->read_pct != 0 && perf_rng_below(&ctx->rng, 100) < o->read_pct);
	t->submit_ticks = nvp_env_get_ticks();
	if (t->is_read) {
		rc = nvp_nvme_ns_cmd_read(ns->ns, t->qpair, t->buf, lba, ns->lbas_per_io, io_done,
					  t, 0);
	} else {
		rc = nvp_nvme_ns_cmd_write(ns->ns, t->qpair, t->buf, lba, ns->lbas_per_io, io_done,
					   t, 0);
	}
	if (__builtin_expect(rc != 0, 0)) {
		nw->stats->errors++;
		nw->stats->submit_errors++;
		return rc;
	}
	nw->outstanding++;
	if (ctx->loop.waiter != NULL) {
		nvp_poll_req_start(ctx->loop.waiter, &t->preq,
				   t->is_read ? NVME_OPC_READ : NVME_OPC_WRITE, o->io_size);
	}
	return 0;
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct task *t = arg;
	struct ns_worker *nw = t->nw;
	struct perf_ns_stats *st = nw->stats;
	struct io_ctx *ctx = t_ctx;
	uint64_t lat = nvp_env_get_ticks() - t->submit_ticks;

	nw->outstanding--;
	if (ctx->loop.waiter != NULL) {
		nvp_poll_req_done(ctx->loop.waiter, &t->preq);
	}
	perf_loop_record(&ctx->loop, st, lat, t->is_read, nvme_cpl_is_error(cpl));
	if (!ctx->loop.draining) {
		submit(ctx, t);
	}
}

static int
pin_to_core(uint32_t core)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int
alloc_qpairs(struct ns_worker *nw, uint32_t count, uint32_t depth)
{
	struct nvp_nvme_ctrlr *ctrlr = nw->stats->ns->ctrlr;
	struct nvp_nvme_io_qpair_opts qo;
	uint32_t i, per_qp = (depth + count - 1) / count;
	int rc;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &qo, sizeof(qo));
	qo.timeout_us = (uint64_t)g_run->opts.io_timeout_ms * 1000;
	qo.interrupts = perf_poll_wants_irq(&g_run->opts);
	/* one slot more than the requests, so the SQ never looks full */
	if (qo.io_queue_size < per_qp + 1) {
		(void)nvp_nvme_ctrlr_fit_io_queue_size(ctrlr, per_qp + 1, &qo.io_queue_size);
	}
	if (qo.io_queue_requests < NVP_MAX(per_qp, qo.io_queue_size)) {
		qo.io_queue_requests = NVP_MAX(per_qp, qo.io_queue_size);
	}
	for (i = 0; i < count; i++) {
		rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &qo, &nw->qpairs[i]);
		if (rc != 0) {
			perf_fail("core %u: cannot allocate I/O qpair %u for %s: %s%s",
				  nw->thread->core, i, nw->stats->ns->name, strerror(-rc),
				  rc == -ENOMEM ?
					  " (DMA memory: pass a larger -s, or lower -q or -P)" :
					  "");
			return rc;
		}
	}
	return 0;
}

static int
setup_ns_worker(struct io_ctx *ctx, struct ns_worker *nw, struct perf_ns_stats *st)
{
	const struct perf_job *j = st->ns->job;
	uint32_t i, nqp = ctx->loop.run->opts.qpairs_per_ns;
	int rc;

	nw->stats = st;
	nw->thread = ctx->loop.thread;
	nw->qpairs = calloc(nqp, sizeof(*nw->qpairs));
	nw->tasks = calloc(j->queue_depth, sizeof(*nw->tasks));
	if (nw->qpairs == NULL || nw->tasks == NULL) {
		return -ENOMEM;
	}
	rc = alloc_qpairs(nw, nqp, j->queue_depth);
	if (rc != 0) {
		return rc;
	}
	for (i = 0; i < j->queue_depth; i++) {
		struct task *t = &nw->tasks[i];

		t->nw = nw;
		t->qpair = nw->qpairs[i % nqp];
		t->buf = nvp_env_dma_malloc(j->io_size, 4096, NULL);
		if (t->buf == NULL) {
			perf_fail("core %u: out of DMA memory (%u buffers of %u bytes for %s): "
				  "pass a larger -s",
				  ctx->loop.thread->core, j->queue_depth, j->io_size,
				  st->ns->label);
			return -ENOMEM;
		}
		memset(t->buf, 0x5a ^ (int)i, j->io_size);
	}
	/* spread sequential streams of the job's threads over the namespace */
	nw->seq_next = perf_job_seq_start(j, ctx->loop.thread->core, st->ns->num_ios);
	return 0;
}

/* The SQ and CQ doorbell writes, rekicks and commands of @nw's qpairs so far. */
static void
qpair_counters(const struct ns_worker *nw, uint32_t nqp, struct qp_counters *c)
{
	struct nvp_nvme_qpair_stats qs = { .info_size = sizeof(qs) };
	uint32_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < nqp; i++) {
		if (nvp_nvme_qpair_get_stats(nw->qpairs[i], &qs) == 0) {
			c->sq_doorbells += qs.sq_doorbell_writes;
			c->cq_doorbells += qs.cq_doorbell_writes;
			c->rekicks += qs.doorbell_rekicks;
			c->submitted += qs.submitted;
		}
	}
}

/* The doorbells of the measured window only, as its I/Os: not the warm-up's, not the
 * drain's. */
static void
window(struct perf_loop *l, bool open)
{
	struct io_ctx *ctx = (struct io_ctx *)l;
	uint32_t n, nqp = l->run->opts.qpairs_per_ns;
	struct qp_counters now;

	for (n = 0; n < l->thread->num_ns; n++) {
		struct ns_worker *nw = &ctx->nws[n];

		qpair_counters(nw, nqp, &now);
		if (open) {
			nw->base = now;
		} else {
			nw->stats->sq_doorbells = now.sq_doorbells - nw->base.sq_doorbells;
			nw->stats->cq_doorbells = now.cq_doorbells - nw->base.cq_doorbells;
			nw->stats->doorbell_rekicks = now.rekicks - nw->base.rekicks;
			nw->stats->submitted = now.submitted - nw->base.submitted;
		}
	}
}

static void
teardown_ns_worker(struct ns_worker *nw, uint32_t depth, uint32_t nqp)
{
	uint32_t i;

	for (i = 0; nw->qpairs != NULL && i < nqp; i++) {
		if (nw->qpairs[i] != NULL) {
			nvp_nvme_ctrlr_free_io_qpair(nw->qpairs[i]);
		}
	}
	if (nw->tasks != NULL) {
		for (i = 0; i < depth; i++) {
			nvp_env_dma_free(nw->tasks[i].buf);
		}
	}
	free(nw->qpairs);
	free(nw->tasks);
}

/* Poll every qpair once. \return -ENXIO if a controller failed, else 0. */
static int
poll_all(struct perf_loop *l)
{
	struct io_ctx *ctx = (struct io_ctx *)l;
	uint32_t n, q, nqp = l->run->opts.qpairs_per_ns;

	if (ctx->loop.waiter != NULL) {
		int rc = nvp_poll_waiter_wait(ctx->loop.waiter);

		return rc < 0 ? rc : 0;
	}
	for (n = 0; n < l->thread->num_ns; n++) {
		struct ns_worker *nw = &ctx->nws[n];

		for (q = 0; q < nqp; q++) {
			int32_t rc = nvp_nvme_qpair_process_completions(nw->qpairs[q], 0);

			if (__builtin_expect(rc < 0, 0)) {
				fprintf(stderr, "core %u: %s: qpair failed: %s\n", l->thread->core,
					nw->stats->ns->name, strerror(-rc));
				perf_fail("core %u: %s: qpair failed: %s", l->thread->core,
					  nw->stats->ns->name, strerror(-rc));
				return rc;
			}
		}
	}
	return 0;
}

static uint32_t
outstanding(const struct perf_loop *l)
{
	const struct io_ctx *ctx = (const struct io_ctx *)l;
	uint32_t n, sum = 0;

	for (n = 0; n < l->thread->num_ns; n++) {
		sum += ctx->nws[n].outstanding;
	}
	return sum;
}

static void
start_all(struct perf_loop *l)
{
	struct io_ctx *ctx = (struct io_ctx *)l;
	uint32_t n, i;

	for (n = 0; n < l->thread->num_ns; n++) {
		for (i = 0; i < l->thread->ns_stats[n].ns->job->queue_depth; i++) {
			submit(ctx, &ctx->nws[n].tasks[i]);
		}
	}
}

/*
 * A lost completion ends with the driver's request timeout (an Abort, and the request
 * completed as aborted); the drain is bounded by that timeout, the Abort's own admin
 * timeout and a second, after which the qpair's deletion completes the rest.
 */
static const struct perf_loop_ops g_raw_ops = {
	.start_all = start_all,
	.poll = poll_all,
	.outstanding = outstanding,
	.window = window,
	.drain_note = "the driver aborts a request once it is --io-timeout old and completes "
		      "it as aborted if the controller does not",
	.give_up_note = "deleting the queue completes them as aborted",
};

static uint64_t
raw_drain_limit_ms(const struct perf_opts *o)
{
	struct nvp_nvme_ctrlr_opts copts;

	nvp_nvme_ctrlr_opts_init(&copts, sizeof(copts)); /* the Abort's timeout: admin's */
	return (uint64_t)o->io_timeout_ms + copts.admin_timeout_ms + 1000;
}

static int
thread_setup(struct io_ctx *ctx)
{
	struct perf_thread *th = ctx->loop.thread;
	uint32_t n;
	int rc;

	rc = pin_to_core(th->core);
	if (rc != 0) {
		perf_fail("cannot pin the I/O thread to core %u: %s", th->core, strerror(-rc));
		return rc;
	}
	ctx->nws = calloc(th->num_ns, sizeof(*ctx->nws));
	if (ctx->nws == NULL) {
		return -ENOMEM;
	}
	for (n = 0; n < th->num_ns; n++) {
		rc = setup_ns_worker(ctx, &ctx->nws[n], &th->ns_stats[n]);
		if (rc != 0) {
			return rc;
		}
	}
	for (n = 0; n < th->num_ns && ctx->loop.run->opts.poll_mode != NULL; n++) {
		if (n == 0) {
			rc = perf_poll_setup(th, &ctx->loop.run->opts, NULL, 0, &ctx->loop.waiter);
		}
		for (uint32_t q = 0; rc == 0 && q < ctx->loop.run->opts.qpairs_per_ns; q++) {
			rc = nvp_poll_waiter_add_qpair(ctx->loop.waiter, ctx->nws[n].qpairs[q]);
		}
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

void *
perf_thread_main(void *arg)
{
	struct perf_thread *th = arg;
	struct perf_run *run = g_run;
	struct io_ctx ctx = { .loop = { .run = run, .thread = th, .ops = &g_raw_ops } };
	int setup_rc;
	uint32_t n;

	t_ctx = &ctx;
	ctx.loop.drain_limit_ms = raw_drain_limit_ms(&run->opts);
	ctx.rng = 0x9E3779B97F4A7C15ull * (th->core + 1) ^ nvp_env_get_ticks();
	if (ctx.rng == 0) {
		ctx.rng = 1;
	}
	setup_rc = thread_setup(&ctx);
	th->setup_rc = setup_rc;
	/* Everybody waits here, set up or not, so nobody waits forever. */
	perf_loop_start_barrier(run, th);
	th->rc = setup_rc;
	/* The barrier published every thread's setup_rc: if one cannot run, none does. */
	if (!perf_any_setup_failed(run)) {
		th->rc = perf_loop_run(&ctx.loop);
	}
	perf_poll_teardown(ctx.loop.waiter);
	if (ctx.nws != NULL) {
		for (n = 0; n < th->num_ns; n++) {
			teardown_ns_worker(&ctx.nws[n], th->ns_stats[n].ns->job->queue_depth,
					   run->opts.qpairs_per_ns);
		}
	}
	free(ctx.nws);
	t_ctx = NULL;
	return NULL;
}
