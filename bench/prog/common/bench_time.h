/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the bench programs that time one thread share (driver_cost, bdev_overhead):
 *
 *  - bench_use: the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), the time it spent
 *    runnable but waiting for a CPU (run_delay, /proc/thread-self/schedstat) and its
 *    involuntary context switches (getrusage RUSAGE_THREAD), read before and after a
 *    run: bench/benchlib.py decides from them whether the run was preempted.
 *  - bench_section: a part of the thread's work timed with the TSC, section by section.
 *    The thread CPU clock costs about 1.7 us a read in the VMs these run in, more than a
 *    whole I/O on the raw path, so a section of a few hundred nanoseconds cannot be
 *    bracketed with it. A TSC bracket counts wall time, which is the thread's own time
 *    only while it runs: a section stretched by a preemption (or a long interrupt) is
 *    left out and counted, never taken as CPU time, and replaced by the mean of the kept
 *    ones. The sections' total is then CPU time the thread spent in that part.
 */
#ifndef NVP_BENCH_TIME_H
#define NVP_BENCH_TIME_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "nvpoll/env.h"

/* A section longer than this was not the code's own time: a preemption or an interrupt. */
#define BENCH_SECTION_MAX_US 50u

struct bench_use {
	uint64_t cpu_ns;
	uint64_t runq_ns;
	uint64_t nivcsw;
};

static inline void
bench_use_get(struct bench_use *u)
{
	unsigned long long cpu = 0, runq = 0;
	struct rusage ru;
	FILE *f;

	memset(u, 0, sizeof(*u));
	u->cpu_ns = nvp_env_thread_cpu_ns();
	f = fopen("/proc/thread-self/schedstat", "r");
	if (f != NULL) {
		if (fscanf(f, "%llu %llu", &cpu, &runq) == 2) {
			u->runq_ns = runq;
		}
		fclose(f);
	}
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		u->nivcsw = (uint64_t)ru.ru_nivcsw;
	}
}

/* " cpu_ns=.. runq_ns=.. nivcsw=.." of the run from @a to @b, for the key=value line. */
static inline void
bench_use_print(FILE *f, const struct bench_use *a, const struct bench_use *b)
{
	fprintf(f, " cpu_ns=%" PRIu64 " runq_ns=%" PRIu64 " nivcsw=%" PRIu64, b->cpu_ns - a->cpu_ns,
		b->runq_ns - a->runq_ns, b->nivcsw - a->nivcsw);
}

struct bench_section {
	uint64_t ticks;     /* of the kept sections */
	uint64_t kept;      /* sections kept */
	uint64_t cut;       /* sections left out: longer than max_ticks */
	uint64_t cut_ticks; /* their ticks (wall time, mostly not the thread's) */
	uint64_t max_ticks;
};

static inline void
bench_section_init(struct bench_section *s, uint64_t hz)
{
	memset(s, 0, sizeof(*s));
	s->max_ticks = hz / 1000000u * BENCH_SECTION_MAX_US;
}

static inline void
bench_section_add(struct bench_section *s, uint64_t ticks)
{
	if (ticks > s->max_ticks) {
		s->cut++;
		s->cut_ticks += ticks;
		return;
	}
	s->ticks += ticks;
	s->kept++;
}

/* The part's time in ns: the kept sections, and the cut ones at the kept sections' mean. */
static inline double
bench_section_ns(const struct bench_section *s, uint64_t hz)
{
	double mean = s->kept > 0 ? (double)s->ticks / (double)s->kept : 0.0;

	return ((double)s->ticks + mean * (double)s->cut) * 1e9 / (double)hz;
}

#endif /* NVP_BENCH_TIME_H */
