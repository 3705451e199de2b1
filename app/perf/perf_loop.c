/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O loop both of nvp_perf's modes share: submit -q requests per target, poll until
 * the window ends (after the -a warm-up, whose statistics are discarded) or SIGINT/SIGTERM
 * stops the run, with thread 0 taking the IOPS samples and printing the progress lines,
 * then a bounded drain. What it submits and polls is a backend's business (struct
 * perf_loop_ops): raw qpairs in perf_io.c, bdev channels in perf_bdev.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "nvpoll/barrier.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "perf.h"

/* Thread 0's view of every thread's live counters, for samples and progress lines. */
struct progress {
	uint64_t next_sample, next_print;
	uint64_t sample_ios, sample_lat; /* at the last sample */
	uint64_t print_ios, print_lat;   /* at the last progress line */
	uint64_t print_bytes;
	uint64_t print_ticks;
	uint64_t sample_ticks; /* when the last sample was taken (or the window opened) */
};

/*
 * --think-ns: the work an application does with each completed I/O before it sends the
 * next, as a spin (fio's thinktime_spin, per I/O). It runs inside the completion, so it
 * is serialised with the device's work as an application's own would be; the run's CPU
 * per I/O includes it.
 */
static __attribute__((noinline)) void
think(uint64_t ticks)
{
	uint64_t end = nvp_env_get_ticks() + ticks;

	while (nvp_env_get_ticks() < end) {
		nvp_pause();
	}
}

void
perf_loop_record(struct perf_loop *l, struct perf_ns_stats *st, uint64_t lat, bool is_read,
		 bool error)
{
	/* the warm-up's I/Os (and those a stop during it drains) are not results, nor are
	 * those drained after the window, though their errors fail the run */
	if (__builtin_expect(l->measuring, 1)) {
		nvp_histogram_record(st->hist, lat);
		st->ios++;
		if (is_read) {
			st->reads++;
		} else {
			st->writes++;
		}
		if (__builtin_expect(error, 0)) {
			st->errors++;
		}
	} else if (l->thread->measured) {
		st->drain_ios++;
		st->drain_errors += error;
	}
	/* single writer: a relaxed load of its own counter is a plain read */
	atomic_store_explicit(&st->live_ios,
			      atomic_load_explicit(&st->live_ios, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	l->ios++;
	l->lat_ticks += lat;
	atomic_store_explicit(&l->thread->live_ios, l->ios, memory_order_relaxed);
	atomic_store_explicit(&l->thread->live_lat_ticks, l->lat_ticks, memory_order_relaxed);
	if (__builtin_expect(l->think_ticks != 0, 0)) {
		think(l->think_ticks);
	}
}

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

/* Bytes completed so far by every row (each job has its own I/O size). */
static uint64_t
live_bytes(const struct perf_run *run)
{
	uint64_t bytes = 0;
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		for (n = 0; n < run->threads[t].num_ns; n++) {
			const struct perf_ns_stats *st = &run->threads[t].ns_stats[n];

			bytes += atomic_load_explicit(&st->live_ios, memory_order_relaxed) *
				 st->ns->job->io_size;
		}
	}
	return bytes;
}

/* Each target's IOPS over the last @dt seconds (sample @i); the bytes of every row. */
static double
sample_rows(struct perf_run *run, uint32_t i, double dt)
{
	double bytes = 0;
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		for (n = 0; n < run->threads[t].num_ns; n++) {
			struct perf_ns_stats *st = &run->threads[t].ns_stats[n];
			uint64_t now = atomic_load_explicit(&st->live_ios, memory_order_relaxed);
			size_t k = (size_t)(st->ns - run->ns);

			run->ns_iops[k * PERF_MAX_SAMPLES + i] += (double)(now - st->sample_ios) /
								  dt;
			bytes += (double)(now - st->sample_ios) * st->ns->job->io_size;
			st->sample_ios = now;
		}
	}
	return bytes;
}

/* One IOPS sample (every run->sample_ticks) of the measured window, total and per target. */
static void
take_sample(struct perf_run *run, struct progress *p, uint64_t now)
{
	uint64_t ios, lat, d_ios;
	struct perf_sample *s;
	double dt, bytes;

	live_totals(run, &ios, &lat);
	if (run->num_samples >= PERF_MAX_SAMPLES) {
		return;
	}
	s = &run->samples[run->num_samples];
	d_ios = ios - p->sample_ios;
	s->t_s = (double)(now - run->start_ticks) / (double)run->ticks_hz;
	dt = s->t_s - (run->num_samples > 0 ? run->samples[run->num_samples - 1].t_s : 0.0);
	if (dt <= 0) {
		return;
	}
	bytes = sample_rows(run, run->num_samples, dt);
	s->iops = (double)d_ios / dt;
	s->mib_s = bytes / dt / (1024.0 * 1024.0);
	s->mean_us = d_ios ? perf_ticks_to_us(run, lat - p->sample_lat) / (double)d_ios : 0.0;
	run->num_samples++;
	p->sample_ios = ios;
	p->sample_lat = lat;
	p->sample_ticks = now;
}

/* The window's last step, when the window ends or a signal stops it: a sample if it is at
 * least half a period long (a few microseconds' sample is noise, not a drop to 0). */
static void
take_last_sample(struct perf_run *run, struct progress *p, uint64_t now)
{
	if (now > run->start_ticks &&
	    (run->num_samples == 0 || now - p->sample_ticks >= run->sample_ticks / 2)) {
		take_sample(run, p, now);
	}
}

/* The once-a-second progress line (warm-up seconds are marked). */
static void
print_progress(struct perf_run *run, struct progress *p, uint64_t now)
{
	uint64_t ios, lat, d_ios, bytes = live_bytes(run);
	double dt = (double)(now - p->print_ticks) / (double)run->ticks_hz, iops;

	live_totals(run, &ios, &lat);
	d_ios = ios - p->print_ios;
	iops = dt > 0 ? (double)d_ios / dt : 0.0;
	if (run->opts.time_s + run->opts.warmup_s > 1) {
		fprintf(run->out, "[%3.0fs%s] %10.0f IOPS %10.2f MiB/s  mean %8.1f us\n",
			(double)(now - run->io_start_ticks) / (double)run->ticks_hz,
			now <= run->start_ticks + run->ticks_hz / 100 ? " warm-up" : "", iops,
			dt > 0 ? (double)(bytes - p->print_bytes) / dt / (1024.0 * 1024.0) : 0.0,
			d_ios ? perf_ticks_to_us(run, lat - p->print_lat) / (double)d_ios : 0.0);
		fflush(run->out);
	}
	p->print_ios = ios;
	p->print_lat = lat;
	p->print_bytes = bytes;
	p->print_ticks = now;
}

/* This thread's context switches so far: involuntary (preempted), voluntary (slept). */
static void
ctx_switches(uint64_t *nivcsw, uint64_t *nvcsw)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0) {
		*nivcsw = *nvcsw = 0;
		return;
	}
	*nivcsw = (uint64_t)ru.ru_nivcsw;
	*nvcsw = (uint64_t)ru.ru_nvcsw;
}

/* Thread 0, as the window opens: every row's count so far is the samples' base. */
static void
sample_base(struct perf_run *run)
{
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		for (n = 0; n < run->threads[t].num_ns; n++) {
			struct perf_ns_stats *st = &run->threads[t].ns_stats[n];

			st->sample_ios = atomic_load_explicit(&st->live_ios, memory_order_relaxed);
		}
	}
}

/* The measured window opens (after the warm-up, if any): what was counted is discarded. */
static void
start_measuring(struct perf_loop *l, struct progress *p)
{
	uint32_t n;

	for (n = 0; n < l->thread->num_ns; n++) {
		struct perf_ns_stats *st = &l->thread->ns_stats[n];

		nvp_histogram_init(st->hist);
		st->ios = st->reads = st->writes = st->errors = st->submit_errors = 0;
	}
	l->measuring = true;
	l->thread->measured = true;
	l->thread->cpu_start_ns = nvp_env_thread_cpu_ns();
	ctx_switches(&l->thread->nivcsw_start, &l->thread->nvcsw_start);
	perf_poll_window_start(l->thread, l->waiter);
	if (l->ops->window != NULL) {
		l->ops->window(l, true);
	}
	if (l->thread->index == 0) {
		live_totals(l->run, &p->sample_ios, &p->sample_lat);
		sample_base(l->run);
		p->sample_ticks = l->run->start_ticks;
		p->next_sample = l->run->start_ticks + l->run->sample_ticks;
	}
}

/* Thread 0's bookkeeping: samples of the window, progress lines. */
static void
thread0_tick(struct perf_loop *l, struct progress *p, uint64_t now)
{
	struct perf_run *run = l->run;

	if (l->measuring && now >= p->next_sample) {
		/*
		 * A sample per step of the grid, each at least half a step long: thread 0 kept
		 * off its core past a step takes one longer sample, not a second one
		 * microseconds after it (a sliver reads as a drop to 0 IOPS).
		 */
		if (now - p->sample_ticks >= run->sample_ticks / 2) {
			take_sample(run, p, now);
		}
		while (p->next_sample <= now) {
			p->next_sample += run->sample_ticks;
		}
	}
	if (now >= p->next_print) {
		print_progress(run, p, now);
		p->next_print += run->ticks_hz;
	}
}

/* Keep -q requests in flight until the window ends or a signal stops the run. */
static int
io_loop(struct perf_loop *l, struct progress *p)
{
	struct perf_run *run = l->run;
	uint64_t end = run->start_ticks + run->ticks_hz * run->opts.time_s, now;
	int rc;

	l->ops->start_all(l);
	rc = l->ops->outstanding(l) > 0 ? 0 : -EIO;
	now = nvp_env_get_ticks();
	/*
	 * A thread kept off its core from before the window opened until after it was due to
	 * close would measure nothing and report 0 IOPS: it measures -t seconds from when it
	 * runs again instead (the window then also holds the time it was away, as a sample
	 * and in elapsed_s, so that IOPS x elapsed is still the I/Os), and says so.
	 */
	while (rc == 0 && (now < end || !l->measuring)) {
		if (!l->measuring && now >= run->start_ticks) {
			start_measuring(l, p);
			if (now - run->start_ticks > run->sample_ticks) {
				fprintf(run->out,
					"core %u: the I/O thread was not running for the first %.0f ms "
					"of the window; it measures %u s from now\n",
					l->thread->core,
					(double)(now - run->start_ticks) * 1e3 /
						(double)run->ticks_hz,
					run->opts.time_s);
				end = NVP_MAX(end, now + run->ticks_hz * run->opts.time_s);
			}
		}
		rc = l->ops->poll(l);
		now = nvp_env_get_ticks();
		if (l->thread->index == 0) {
			thread0_tick(l, p, now);
		}
		if (rc == 0 && l->ops->outstanding(l) == 0) {
			rc = -EIO; /* every submission failed: nothing left to wait for */
		}
		if (atomic_load_explicit(&run->stop, memory_order_relaxed)) {
			break;
		}
	}
	/* stopped during the warm-up: no window at all (the run says so, and reports none) */
	if (l->measuring && l->thread->index == 0) {
		take_last_sample(run, p, now);
	}
	return rc;
}

static void
drain_note(struct perf_loop *l, uint64_t t0, uint64_t now, bool giving_up)
{
	struct perf_run *run = l->run;
	uint32_t out = l->ops->outstanding(l);
	double s = (double)(now - t0) / (double)run->ticks_hz;

	if (giving_up) {
		fprintf(run->out, "core %u: giving up on %u I/O%s after %.1f s; %s\n",
			l->thread->core, out, out == 1 ? "" : "s", s, l->ops->give_up_note);
	} else {
		fprintf(run->out,
			"core %u: %u I/O%s still outstanding %.1f s after the run ended; %s\n",
			l->thread->core, out, out == 1 ? "" : "s", s, l->ops->drain_note);
	}
	fflush(run->out);
}

/*
 * The window is over: wait for the requests still out, saying so when they do not come
 * back at once, for at most the backend's drain_limit_ms. \return the I/O still out.
 */
static uint32_t
drain(struct perf_loop *l)
{
	uint64_t hz = l->run->ticks_hz, t0 = nvp_env_get_ticks(), now = t0, next_note = t0 + hz / 2;
	uint64_t limit = t0 + nvp_ms_to_ticks(l->drain_limit_ms, hz);

	l->draining = true;
	while (l->ops->outstanding(l) > 0 && l->ops->poll(l) == 0 && l->ops->outstanding(l) > 0) {
		now = nvp_env_get_ticks();
		if (now >= next_note) {
			drain_note(l, t0, now, false);
			next_note = now + 5 * hz;
		}
		if (now >= limit) {
			drain_note(l, t0, now, true);
			break;
		}
	}
	return l->ops->outstanding(l);
}

static void
end_window(struct perf_loop *l)
{
	uint64_t now = nvp_env_get_ticks();

	if (!l->measuring) {
		return; /* stopped during the warm-up: nothing was measured */
	}
	if (l->ops->window != NULL) {
		l->ops->window(l, false);
	}
	l->measuring = false; /* what the drain completes is not a result */
	l->thread->elapsed_ticks = now > l->run->start_ticks ? now - l->run->start_ticks : 0;
	/* CPU over the same window as the I/Os and the time: not the warm-up, not the drain
	 * (which after a failure can last the request timeout) */
	l->thread->cpu_ns = nvp_env_thread_cpu_ns() - l->thread->cpu_start_ns;
	ctx_switches(&l->thread->nivcsw, &l->thread->nvcsw);
	l->thread->nivcsw -= l->thread->nivcsw_start;
	l->thread->nvcsw -= l->thread->nvcsw_start;
	perf_poll_window_end(l->thread, l->waiter);
}

/*
 * The window is over and not one I/O completed in it, though requests were out (a thread
 * whose every submission failed has stopped already): the device made no progress while
 * the thread ran (a software controller whose thread got no CPU, a hung device): the run
 * fails and says why, instead of reporting 0 IOPS.
 * A window cut short by a signal is not judged.
 */
static bool
nothing_completed(struct perf_loop *l)
{
	struct perf_run *run = l->run;
	uint64_t ios = 0;
	uint32_t n;

	if (!l->thread->measured || l->thread->num_ns == 0 ||
	    atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		return false;
	}
	for (n = 0; n < l->thread->num_ns; n++) {
		ios += l->thread->ns_stats[n].ios;
	}
	if (ios != 0) {
		return false;
	}
	perf_fail("core %u: no I/O completed in the %.3f s window, with %u request%s out: the "
		  "device made no progress (a software controller's thread that got no CPU, or a "
		  "hung device)",
		  l->thread->core, (double)l->thread->elapsed_ticks / (double)run->ticks_hz,
		  l->ops->outstanding(l), l->ops->outstanding(l) == 1 ? "" : "s");
	return true;
}

int
perf_loop_run(struct perf_loop *l)
{
	struct perf_run *run = l->run;
	struct progress p = { 0 };
	int rc;

	l->think_ticks = nvp_ns_to_ticks(run->opts.think_ns, run->ticks_hz);
	if (run->opts.think_ns != 0 && l->think_ticks == 0) {
		l->think_ticks = 1;
	}
	p.next_print = run->io_start_ticks + run->ticks_hz;
	p.print_ticks = run->io_start_ticks;
	if (run->opts.warmup_s == 0) {
		start_measuring(l, &p);
	}
	rc = io_loop(l, &p);
	end_window(l);
	if (rc == 0 && nothing_completed(l)) {
		rc = -ETIMEDOUT; /* a window of no I/O measured nothing: not a 0-IOPS result */
	}
	if (drain(l) != 0 && rc == 0) {
		rc = -ETIMEDOUT; /* I/O that never came back: the run did not end well */
	}
	return rc;
}

bool
perf_any_setup_failed(const struct perf_run *run)
{
	uint32_t i;

	for (i = 0; i < run->num_threads; i++) {
		if (run->threads[i].setup_rc != 0) {
			return true;
		}
	}
	return false;
}

/* Wait for every thread at the start barrier; thread 0 sets the clock. */
void
perf_loop_start_barrier(struct perf_run *run, struct perf_thread *th)
{
	pthread_barrier_wait(&run->start_barrier);
	if (th->index == 0) {
		run->io_start_ticks = nvp_env_get_ticks();
		run->start_ticks = run->io_start_ticks + run->ticks_hz * run->opts.warmup_s;
	}
	pthread_barrier_wait(&run->start_barrier);
}
