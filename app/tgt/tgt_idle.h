/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How long a poll thread with nothing to do spins before it waits in poll(2).
 *
 * Spinning pays when the next command comes within the spin: the thread answers it at
 * once instead of after a wake-up. A host whose commands come further apart (QD1 over a
 * slow link, an initiator that shares the target's CPUs, as in a VM) makes it spin for
 * nothing every time, and on a shared CPU that spin is time taken from the threads it
 * is waiting for. So the policy watches the gaps: each idle period ends with the time
 * from its start to the next work, and that gap says whether a full spin would have
 * caught it (a hit) or not (a miss), whether the thread spun or slept. Over the last
 * TGT_IDLE_WINDOW periods, fewer than TGT_IDLE_MIN_HITS hits: the thread waits in
 * poll(2) at once; more: it spins the full time again. A thread that sleeps still
 * measures its gaps, so it finds out when spinning would pay again (a gap it measures
 * includes its wake-up, which makes a borderline hit look like a miss: sleeping is
 * favoured where wake-ups are slow, which is where spinning costs most).
 */
#ifndef NVP_TGT_IDLE_H
#define NVP_TGT_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#define TGT_IDLE_WINDOW 16u  /* idle periods remembered */
#define TGT_IDLE_MIN_HITS 4u /* of them caught by a full spin, to keep spinning */

struct tgt_idle {
	uint64_t spin_ticks; /* the full spin */
	uint32_t hits;       /* bit i: the i-th latest period was a hit */
	uint32_t periods;    /* periods seen, up to TGT_IDLE_WINDOW */
};

/* A policy that spins @spin_ticks until it has seen TGT_IDLE_WINDOW misses. */
void tgt_idle_init(struct tgt_idle *p, uint64_t spin_ticks);

/* How long to spin in the idle period starting now: the full spin, or 0 (wait at once). */
uint64_t tgt_idle_budget(const struct tgt_idle *p);

/* An idle period ended with work @gap_ticks after it began. */
void tgt_idle_end(struct tgt_idle *p, uint64_t gap_ticks);

#endif
