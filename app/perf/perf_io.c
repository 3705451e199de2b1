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
struct ns_worker {
	struct perf_ns_stats *stats;
	struct perf_thread *thread;
	struct nvp_nvme_qpair **qpairs;
	struct task *tasks;
	uint64_t seq_next; /* sequential workloads: next I/O slot */
	uint32_t outstanding;
};

/* Per-thread state the completion path needs. */
struct io_ctx {
	struct perf_run *run;
	struct perf_thread *thread;
	struct ns_worker *nws;
	uint64_t rng;
	bool measuring; /* past the warm-up: statistics count */
	bool draining;
	struct nvp_poll_waiter *waiter; /* --poll, else NULL */
	uint64_t ios;                   /* mirrors of the live counters, stored relaxed */
	uint64_t lat_ticks;
};

static struct perf_run *g_run;
static __thread struct io_ctx *t_ctx;

void
perf_io_set_run(struct perf_run *run)
{
	g_run = run;
}

/* xorshift64*: fast, per thread, good enough to spread offsets. */
static inline uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n) without a division: the high half of a 64x64 product. */
static inline uint64_t
rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

static void io_done(void *arg, const struct nvme_cpl *cpl);

static int
submit(struct io_ctx *ctx, struct task *t)
{
	struct ns_worker *nw = t->nw;
	const struct perf_ns *ns = nw->stats->ns;
	const struct perf_opts *o = &ctx->run->opts;
	uint64_t slot, lba;
	int rc;

	if (o->random) {
		slot = rng_below(&ctx->rng, ns->num_ios);
	} else {
		slot = nw->seq_next++;
		if (nw->seq_next >= ns->num_ios) {
			nw->seq_next = 0;
		}
	}
	lba = slot * ns->lbas_per_io;
	t->is_read = o->read_pct == 100 ||
		     (o->read_pct != 0 && rng_below(&ctx->rng, 100) < o->read_pct);
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
	if (ctx->waiter != NULL) {
		nvp_poll_req_start(ctx->waiter, &t->preq,
				   t->is_read ? NVME_OPC_READ : NVME_OPC_WRITE,
				   ctx->run->opts.io_size);
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
	if (ctx->waiter != NULL) {
		nvp_poll_req_done(ctx->waiter, &t->preq);
	}
	nvp_histogram_record(st->hist, lat);
	st->ios++;
	if (t->is_read) {
		st->reads++;
	} else {
		st->writes++;
	}
	if (__builtin_expect(nvme_cpl_is_error(cpl), 0)) {
		st->errors++;
	}
	ctx->ios++;
	ctx->lat_ticks += lat;
	atomic_store_explicit(&ctx->thread->live_ios, ctx->ios, memory_order_relaxed);
	atomic_store_explicit(&ctx->thread->live_lat_ticks, ctx->lat_ticks, memory_order_relaxed);
	if (!ctx->draining) {
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
	uint32_t max_entries = (uint32_t)nvp_nvme_ctrlr_get_regs_cap(ctrlr).bits.mqes + 1;
	int rc;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &qo, sizeof(qo));
	qo.timeout_us = (uint64_t)g_run->opts.io_timeout_ms * 1000;
	qo.interrupts = perf_poll_wants_irq(&g_run->opts);
	/* one slot more than the requests, so the SQ never looks full */
	if (qo.io_queue_size < per_qp + 1) {
		qo.io_queue_size = NVP_MIN(per_qp + 1, max_entries);
	}
	if (qo.io_queue_requests < NVP_MAX(per_qp, qo.io_queue_size)) {
		qo.io_queue_requests = NVP_MAX(per_qp, qo.io_queue_size);
	}
	for (i = 0; i < count; i++) {
		rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &qo, &nw->qpairs[i]);
		if (rc != 0) {
			fprintf(stderr, "core %u: cannot allocate I/O qpair %u for %s: %s%s\n",
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
	const struct perf_opts *o = &ctx->run->opts;
	uint32_t i;
	int rc;

	nw->stats = st;
	nw->thread = ctx->thread;
	nw->qpairs = calloc(o->qpairs_per_ns, sizeof(*nw->qpairs));
	nw->tasks = calloc(o->queue_depth, sizeof(*nw->tasks));
	if (nw->qpairs == NULL || nw->tasks == NULL) {
		return -ENOMEM;
	}
	rc = alloc_qpairs(nw, o->qpairs_per_ns, o->queue_depth);
	if (rc != 0) {
		return rc;
	}
	for (i = 0; i < o->queue_depth; i++) {
		struct task *t = &nw->tasks[i];

		t->nw = nw;
		t->qpair = nw->qpairs[i % o->qpairs_per_ns];
		t->buf = nvp_env_dma_malloc(o->io_size, 4096, NULL);
		if (t->buf == NULL) {
			fprintf(stderr,
				"core %u: out of DMA memory (%u buffers of %u bytes per "
				"namespace): pass a larger -s\n",
				ctx->thread->core, o->queue_depth, o->io_size);
			return -ENOMEM;
		}
		memset(t->buf, 0x5a ^ (int)i, o->io_size);
	}
	/* spread sequential streams of different threads over the namespace */
	nw->seq_next = st->ns->num_ios / ctx->run->num_threads * ctx->thread->index;
	return 0;
}

static void
teardown_ns_worker(struct ns_worker *nw, uint32_t depth, uint32_t nqp)
{
	uint32_t i;

	if (nw->qpairs != NULL) {
		for (i = 0; i < nqp; i++) {
			struct nvp_nvme_qpair_stats qs;

			if (nw->qpairs[i] != NULL &&
			    nvp_nvme_qpair_get_stats(nw->qpairs[i], &qs, sizeof(qs)) == 0) {
				nw->stats->sq_doorbells += qs.sq_doorbell_writes;
				nw->stats->submitted += qs.submitted;
			}
			if (nw->qpairs[i] != NULL) {
				nvp_nvme_ctrlr_free_io_qpair(nw->qpairs[i]);
			}
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
poll_all(struct io_ctx *ctx)
{
	uint32_t n, q, nqp = ctx->run->opts.qpairs_per_ns;

	if (ctx->waiter != NULL) {
		int rc = nvp_poll_waiter_wait(ctx->waiter);

		return rc < 0 ? rc : 0;
	}
	for (n = 0; n < ctx->thread->num_ns; n++) {
		struct ns_worker *nw = &ctx->nws[n];

		for (q = 0; q < nqp; q++) {
			int32_t rc = nvp_nvme_qpair_process_completions(nw->qpairs[q], 0);

			if (__builtin_expect(rc < 0, 0)) {
				fprintf(stderr, "core %u: %s: qpair failed: %s\n",
					ctx->thread->core, nw->stats->ns->name, strerror(-rc));
				return rc;
			}
		}
	}
	return 0;
}

static uint32_t
outstanding(const struct io_ctx *ctx)
{
	uint32_t n, sum = 0;

	for (n = 0; n < ctx->thread->num_ns; n++) {
		sum += ctx->nws[n].outstanding;
	}
	return sum;
}

/* Thread 0's view of every thread's live counters, for samples and progress lines. */
struct progress {
	uint64_t next_sample, next_print;
	uint64_t sample_ios, sample_lat; /* at the last sample */
	uint64_t print_ios, print_lat;   /* at the last progress line */
	uint64_t print_ticks;
};

static void
live_totals(const struct perf_run *run, uint64_t *ios, uint64_t *lat)
{
	uint32_t i;

	*ios = 0;
	*lat = 0;
	for (i = 0; i < run->num_threads; i++) {
		*ios += atomic_load_explicit(&run->threads[i].live_ios, memory_order_relaxed);
		*lat += atomic_load_explicit(&run->threads[i].live_lat_ticks, memory_order_relaxed);
	}
}

/* One IOPS sample (every run->sample_ticks) of the measured window. */
static void
take_sample(struct perf_run *run, struct progress *p, uint64_t now)
{
	uint64_t ios, lat, d_ios;
	struct perf_sample *s;
	double dt;

	live_totals(run, &ios, &lat);
	if (run->num_samples >= PERF_MAX_SAMPLES) {
		return;
	}
	s = &run->samples[run->num_samples];
	d_ios = ios - p->sample_ios;
	s->t_s = (double)(now - run->start_ticks) / (double)run->ticks_hz;
	dt = s->t_s - (run->num_samples > 0 ? run->samples[run->num_samples - 1].t_s : 0.0);
	s->iops = dt > 0 ? (double)d_ios / dt : 0.0;
	s->mib_s = s->iops * run->opts.io_size / (1024.0 * 1024.0);
	s->mean_us = d_ios ? perf_ticks_to_us(run, lat - p->sample_lat) / (double)d_ios : 0.0;
	run->num_samples++;
	p->sample_ios = ios;
	p->sample_lat = lat;
}

/*
 * A sample for the bdev mode's loop (perf_bdev.c), which keeps its own previous totals.
 * It samples once a second and has no warm-up yet.
 */
void
perf_take_sample(struct perf_run *run, uint64_t now, uint64_t *prev_ios, uint64_t *prev_lat)
{
	struct progress p = { .sample_ios = *prev_ios, .sample_lat = *prev_lat };

	take_sample(run, &p, now);
	*prev_ios = p.sample_ios;
	*prev_lat = p.sample_lat;
}

/* The once-a-second progress line (warm-up seconds are marked). */
static void
print_progress(struct perf_run *run, struct progress *p, uint64_t now)
{
	uint64_t ios, lat, d_ios;
	double dt = (double)(now - p->print_ticks) / (double)run->ticks_hz, iops;

	live_totals(run, &ios, &lat);
	d_ios = ios - p->print_ios;
	iops = dt > 0 ? (double)d_ios / dt : 0.0;
	if (run->opts.time_s + run->opts.warmup_s > 1) {
		fprintf(run->out, "[%3.0fs%s] %10.0f IOPS %10.2f MiB/s  mean %8.1f us\n",
			(double)(now - run->io_start_ticks) / (double)run->ticks_hz,
			now <= run->start_ticks + run->ticks_hz / 100 ? " warm-up" : "", iops,
			iops * run->opts.io_size / (1024.0 * 1024.0),
			d_ios ? perf_ticks_to_us(run, lat - p->print_lat) / (double)d_ios : 0.0);
		fflush(run->out);
	}
	p->print_ios = ios;
	p->print_lat = lat;
	p->print_ticks = now;
}

static int
start_all(struct io_ctx *ctx)
{
	uint32_t n, i;

	for (n = 0; n < ctx->thread->num_ns; n++) {
		for (i = 0; i < ctx->run->opts.queue_depth; i++) {
			submit(ctx, &ctx->nws[n].tasks[i]);
		}
	}
	return outstanding(ctx) > 0 ? 0 : -EIO;
}

/* The warm-up is over: what this thread counted so far is discarded. */
static void
start_measuring(struct io_ctx *ctx, struct progress *p)
{
	uint32_t n;

	for (n = 0; n < ctx->thread->num_ns; n++) {
		struct perf_ns_stats *st = ctx->nws[n].stats;

		nvp_histogram_init(st->hist);
		st->ios = st->reads = st->writes = st->errors = st->submit_errors = 0;
	}
	ctx->measuring = true;
	if (ctx->thread->index == 0) {
		live_totals(ctx->run, &p->sample_ios, &p->sample_lat);
		p->next_sample = ctx->run->start_ticks + ctx->run->sample_ticks;
	}
}

/* Thread 0's bookkeeping: samples of the window, progress lines. */
static void
thread0_tick(struct io_ctx *ctx, struct progress *p, uint64_t now)
{
	struct perf_run *run = ctx->run;

	if (ctx->measuring && now >= p->next_sample) {
		take_sample(run, p, now);
		p->next_sample += run->sample_ticks;
	}
	if (now >= p->next_print) {
		print_progress(run, p, now);
		p->next_print += run->ticks_hz;
	}
}

/* Keep -q requests in flight until the window ends or a signal stops the run. */
static int
io_loop(struct io_ctx *ctx, struct progress *p)
{
	struct perf_run *run = ctx->run;
	uint64_t end = run->start_ticks + run->ticks_hz * run->opts.time_s, now;
	int rc = start_all(ctx);

	now = nvp_env_get_ticks();
	while (rc == 0 && now < end) {
		if (!ctx->measuring && now >= run->start_ticks) {
			start_measuring(ctx, p);
		}
		rc = poll_all(ctx);
		now = nvp_env_get_ticks();
		if (ctx->thread->index == 0) {
			thread0_tick(ctx, p, now);
		}
		if (outstanding(ctx) == 0) {
			rc = -EIO; /* every submission failed: nothing left to wait for */
		}
		if (atomic_load_explicit(&run->stop, memory_order_relaxed)) {
			break;
		}
	}
	if (!ctx->measuring) {
		start_measuring(ctx, p); /* stopped during the warm-up: an empty window */
	}
	if (ctx->thread->index == 0 && (now >= end || run->num_samples == 0) &&
	    now > run->start_ticks) {
		take_sample(run, p, now); /* the last part of the window */
	}
	return rc;
}

/*
 * The window is over: wait for the requests still out, saying so when they do not come
 * back at once. A lost completion ends with the driver's request timeout (an Abort, and
 * the request completed as aborted); the wait is bounded by that timeout, the Abort's
 * own admin timeout and a second, after which the qpair's deletion completes the rest.
 */
static void
drain(struct io_ctx *ctx)
{
	struct perf_run *run = ctx->run;
	uint64_t hz = run->ticks_hz, t0 = nvp_env_get_ticks(), now = t0, next_note = t0 + hz / 2;
	struct nvp_nvme_ctrlr_opts copts;
	uint64_t limit;

	nvp_nvme_ctrlr_opts_init(&copts, sizeof(copts)); /* the Abort's timeout: admin's */
	limit = t0 +
		hz * ((uint64_t)run->opts.io_timeout_ms + copts.admin_timeout_ms + 1000) / 1000;
	ctx->draining = true;
	while (outstanding(ctx) > 0 && poll_all(ctx) == 0) {
		now = nvp_env_get_ticks();
		if (now >= next_note) {
			fprintf(run->out,
				"core %u: %u I/O%s still outstanding %.1f s after the run ended; "
				"the driver aborts a request once it is %u ms old (--io-timeout) and "
				"completes it as aborted if the controller does not\n",
				ctx->thread->core, outstanding(ctx),
				outstanding(ctx) == 1 ? "" : "s", (double)(now - t0) / (double)hz,
				run->opts.io_timeout_ms);
			fflush(run->out);
			next_note = now + 5 * hz;
		}
		if (now >= limit) {
			fprintf(run->out,
				"core %u: giving up on %u I/O%s after %.1f s; deleting the queue "
				"completes them as aborted\n",
				ctx->thread->core, outstanding(ctx),
				outstanding(ctx) == 1 ? "" : "s", (double)(now - t0) / (double)hz);
			break;
		}
	}
}

static void
end_window(struct io_ctx *ctx)
{
	uint64_t now = nvp_env_get_ticks();
	uint32_t n;

	for (n = 0; n < ctx->thread->num_ns; n++) {
		ctx->nws[n].stats->window_ios = ctx->nws[n].stats->ios;
	}

	ctx->thread->elapsed_ticks = now > ctx->run->start_ticks ? now - ctx->run->start_ticks : 0;
}

/* Submit, poll until the time is up, then drain. */
static int
run_loop(struct io_ctx *ctx)
{
	struct perf_run *run = ctx->run;
	struct progress p = { 0 };
	int rc;

	p.next_print = run->io_start_ticks + run->ticks_hz;
	p.print_ticks = run->io_start_ticks;
	p.next_sample = run->start_ticks + run->sample_ticks;
	rc = io_loop(ctx, &p);
	end_window(ctx);
	drain(ctx);
	return rc;
}

static int
thread_setup(struct io_ctx *ctx)
{
	struct perf_thread *th = ctx->thread;
	uint32_t n;
	int rc;

	rc = pin_to_core(th->core);
	if (rc != 0) {
		fprintf(stderr, "cannot pin the I/O thread to core %u: %s\n", th->core,
			strerror(-rc));
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
	for (n = 0; n < th->num_ns && ctx->run->opts.poll_mode != NULL; n++) {
		if (n == 0) {
			rc = perf_poll_setup(th, &ctx->run->opts, NULL, 0, &ctx->waiter);
		}
		for (uint32_t q = 0; rc == 0 && q < ctx->run->opts.qpairs_per_ns; q++) {
			rc = nvp_poll_waiter_add_qpair(ctx->waiter, ctx->nws[n].qpairs[q]);
		}
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

static bool
any_setup_failed(const struct perf_run *run)
{
	uint32_t i;

	for (i = 0; i < run->num_threads; i++) {
		if (run->threads[i].setup_rc != 0) {
			return true;
		}
	}
	return false;
}

void *
perf_thread_main(void *arg)
{
	struct perf_thread *th = arg;
	struct perf_run *run = g_run;
	struct io_ctx ctx = { .run = run, .thread = th };
	uint64_t cpu0;
	int setup_rc;
	uint32_t n;

	t_ctx = &ctx;
	ctx.measuring = run->opts.warmup_s == 0;
	ctx.rng = 0x9E3779B97F4A7C15ull * (th->core + 1) ^ nvp_env_get_ticks();
	if (ctx.rng == 0) {
		ctx.rng = 1;
	}
	setup_rc = thread_setup(&ctx);
	th->setup_rc = setup_rc;
	/* Everybody waits here, set up or not, so nobody waits forever. */
	pthread_barrier_wait(&run->start_barrier);
	if (th->index == 0) {
		run->io_start_ticks = nvp_env_get_ticks();
		run->start_ticks = run->io_start_ticks + run->ticks_hz * run->opts.warmup_s;
	}
	pthread_barrier_wait(&run->start_barrier);
	th->rc = setup_rc;
	/* The barrier published every thread's setup_rc: if one cannot run, none does. */
	if (!any_setup_failed(run)) {
		cpu0 = nvp_env_thread_cpu_ns();
		th->rc = run_loop(&ctx);
		th->cpu_ns = nvp_env_thread_cpu_ns() - cpu0;
	}
	perf_poll_teardown(th, ctx.waiter);
	if (ctx.nws != NULL) {
		for (n = 0; n < th->num_ns; n++) {
			teardown_ns_worker(&ctx.nws[n], run->opts.queue_depth,
					   run->opts.qpairs_per_ns);
		}
	}
	free(ctx.nws);
	t_ctx = NULL;
	return NULL;
}
