/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll threads' spin-or-wait policy (tgt_idle.h says why and how). */
#include "tgt_idle.h"

#define WINDOW_MASK ((1u << TGT_IDLE_WINDOW) - 1u)

void
tgt_idle_init(struct tgt_idle *p, uint64_t spin_ticks)
{
	p->spin_ticks = spin_ticks;
	p->hits = 0;
	p->periods = 0;
}

uint64_t
tgt_idle_budget(const struct tgt_idle *p)
{
	/* until the window is full, a period not seen yet counts as a hit */
	uint32_t hits = (uint32_t)__builtin_popcount(p->hits) + (TGT_IDLE_WINDOW - p->periods);

	return hits >= TGT_IDLE_MIN_HITS ? p->spin_ticks : 0;
}

void
tgt_idle_end(struct tgt_idle *p, uint64_t gap_ticks)
{
	p->hits = ((p->hits << 1) | (gap_ticks <= p->spin_ticks ? 1u : 0u)) & WINDOW_MASK;
	if (p->periods < TGT_IDLE_WINDOW) {
		p->periods++;
	}
}
