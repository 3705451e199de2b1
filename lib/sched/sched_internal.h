/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the schedulers of lib/sched (deadline.c, kyber.c, fair.c) and sched.c (the
 * public calls): a FIFO of bdev_ios through their stage_next link, a device-wide token
 * counter, parameter parsing, and the hook each scheduler gives sched.c to report its
 * state. See include/nvpoll/sched.h for the behaviour.
 */
#ifndef NVP_SCHED_INTERNAL_H
#define NVP_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "nvpoll/bdev.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/sched.h"
#include "nvpoll/util.h"

#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "sched"
#include "nvpoll/log.h"

#define RLX memory_order_relaxed

/* A FIFO of bdev_ios linked through stage_next (the scheduler holds them). */
struct sched_fifo {
	struct nvp_bdev_io *head;
	struct nvp_bdev_io *tail;
	uint32_t count;
};

static inline void
fifo_push(struct sched_fifo *f, struct nvp_bdev_io *io)
{
	io->stage_next = NULL;
	if (f->tail != NULL) {
		f->tail->stage_next = io;
	} else {
		f->head = io;
	}
	f->tail = io;
	f->count++;
}

static inline struct nvp_bdev_io *
fifo_pop(struct sched_fifo *f)
{
	struct nvp_bdev_io *io = f->head;

	if (io != NULL) {
		f->head = io->stage_next;
		if (f->head == NULL) {
			f->tail = NULL;
		}
		f->count--;
	}
	return io;
}

/* Take one of @limit device-wide tokens. \return true if taken. */
static inline bool
tokens_get(_Atomic uint32_t *inflight, uint32_t limit)
{
	uint32_t cur = atomic_load_explicit(inflight, RLX);

	do {
		if (cur >= limit) {
			return false;
		}
	} while (!atomic_compare_exchange_weak_explicit(inflight, &cur, cur + 1, RLX, RLX));
	return true;
}

static inline void
tokens_put(_Atomic uint32_t *inflight)
{
	atomic_fetch_sub_explicit(inflight, 1, RLX);
}

/*
 * A channel's share of a device-wide token count, taken and given back in batches so that
 * an I/O of a busy channel normally costs no locked instruction. The device-wide counter
 * counts the tokens channels hold (in flight or spare), so the limit is never exceeded;
 * a channel keeps at most tok_batch(limit) spare ones, and none once it is idle (nothing
 * queued, nothing in flight), so an idle thread holds nobody back. A channel takes a
 * batch at a time, and gives back down to half a batch when it has more than one spare:
 * a channel whose completions and submissions alternate passes tokens from one to the
 * other without touching the counter. A channel's spares let it send while the limit is
 * being lowered (kyber shrinking a domain), at most a batch over the new limit until its
 * next completion. Below 32 tokens there are no spares: every token is taken and given
 * back alone, exactly.
 */
struct tok_cache {
	uint32_t spare;
};

static inline uint32_t
tok_batch(uint32_t limit)
{
	return limit >= 32 ? limit / 16 : 0; /* 0: no spares, exact */
}

/* One token of @limit for this channel. \return true if it has one. */
static inline bool
tok_get(struct tok_cache *tc, _Atomic uint32_t *held, uint32_t limit)
{
	uint32_t batch = tok_batch(limit), cur, take;

	if (nvp_likely(tc->spare != 0)) {
		if (nvp_likely(batch != 0)) {
			tc->spare--;
			return true;
		}
		atomic_fetch_sub_explicit(held, tc->spare, RLX); /* the limit fell: be exact */
		tc->spare = 0;
	}
	cur = atomic_load_explicit(held, RLX);
	do {
		if (cur >= limit) {
			return false;
		}
		take = NVP_MIN(NVP_MAX(batch, 1u), limit - cur);
	} while (!atomic_compare_exchange_weak_explicit(held, &cur, cur + take, RLX, RLX));
	tc->spare = take - 1;
	return true;
}

/*
 * Tokens are device-wide but each channel dispatches from its own poll: a channel whose
 * completions and dispatches come in the same poll takes every freed token before
 * another channel is polled, and at a small depth that one never gets one. So a channel
 * with nothing of its own at the device that finds no token says so: it is hungry
 * (counted in n; until set, refreshed on each try), and while some channel is hungry the
 * others leave freed tokens to the hungry ones. A channel held back with nothing at the
 * device is hungry too, but after those it was held back for: it waits until one of them
 * was fed (at a depth of 1 the channel whose request just completed has nothing there
 * either, and would otherwise take the token back every time). Hungry channels that stop
 * asking hold the others back SCHED_HUNGRY_US, or 4 of their polling intervals when that
 * is longer (a slow device, a sleeping waiter), at most.
 */
#define SCHED_HUNGRY_US 1000u

struct tok_hunger {
	_Atomic uint32_t n;     /* channels hungry */
	_Atomic uint32_t fed;   /* tokens taken by hungry channels */
	_Atomic uint64_t until; /* tick: the others leave tokens to them till then */
	_Atomic uint64_t asked; /* tick: a hungry channel last asked */
	uint64_t hold;          /* ticks, SCHED_HUNGRY_US */
};

/* A channel's side of it. */
struct tok_hunger_ch {
	bool hungry;
	bool after;        /* joined when held back: waits till one of those was fed */
	uint32_t fed_seen; /* h->fed then */
};

static inline void
tok_hunger_join(struct tok_hunger *h, struct tok_hunger_ch *hc, uint64_t now)
{
	uint64_t gap = now - atomic_load_explicit(&h->asked, RLX), hold = h->hold;

	if (gap < 16 * h->hold && 4 * gap > hold) {
		hold = 4 * gap;
	}
	atomic_store_explicit(&h->asked, now, RLX);
	atomic_store_explicit(&h->until, now + hold, RLX);
	if (!hc->hungry) {
		hc->hungry = true;
		atomic_fetch_add_explicit(&h->n, 1, RLX);
	}
}

/* The channel got a token, or goes away: it is hungry no more. */
static inline void
tok_hunger_leave(struct tok_hunger *h, struct tok_hunger_ch *hc)
{
	if (hc->hungry) {
		hc->hungry = false;
		hc->after = false;
		atomic_fetch_sub_explicit(&h->n, 1, RLX);
	}
}

/*
 * tok_get() for a channel with @at_device of its requests at the device, unless hungry
 * channels wait before it (see above).
 */
static inline bool
tok_get_unless_hungry(struct tok_cache *tc, _Atomic uint32_t *held, uint32_t limit,
		      struct tok_hunger *h, struct tok_hunger_ch *hc, uint32_t at_device,
		      uint64_t now)
{
	if (nvp_unlikely(atomic_load_explicit(&h->n, RLX) != 0) &&
	    now < atomic_load_explicit(&h->until, RLX)) {
		if (!hc->hungry) {
			if (at_device == 0) {
				tok_hunger_join(h, hc, now); /* it waits its turn too */
				hc->after = true;
				hc->fed_seen = atomic_load_explicit(&h->fed, RLX);
			}
			return false;
		}
		if (hc->after) {
			if (atomic_load_explicit(&h->fed, RLX) == hc->fed_seen) {
				return false; /* those it was held back for first */
			}
			hc->after = false;
		}
	}
	if (!tok_get(tc, held, limit)) {
		if (at_device == 0) {
			tok_hunger_join(h, hc, now);
		}
		return false;
	}
	if (nvp_unlikely(hc->hungry)) {
		atomic_fetch_add_explicit(&h->fed, 1, RLX);
		tok_hunger_leave(h, hc);
	}
	return true;
}

/* Give back a completed I/O's token; @idle: the channel has nothing else, keep none. */
static inline void
tok_put(struct tok_cache *tc, _Atomic uint32_t *held, uint32_t limit, bool idle)
{
	uint32_t batch;

	if (idle) {
		atomic_fetch_sub_explicit(held, tc->spare + 1, RLX);
		tc->spare = 0;
		return;
	}
	batch = tok_batch(limit);
	if (++tc->spare > batch) {
		atomic_fetch_sub_explicit(held, tc->spare - batch / 2, RLX);
		tc->spare = batch / 2;
	}
}

/* Give back every spare token (channel going away). */
static inline void
tok_flush(struct tok_cache *tc, _Atomic uint32_t *held)
{
	if (tc->spare != 0) {
		atomic_fetch_sub_explicit(held, tc->spare, RLX);
		tc->spare = 0;
	}
}

/* Single writer: a relaxed add without a locked instruction. */
static inline void
counter_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, RLX) + v, RLX);
}

/*
 * Every scheduler's channel context starts with this: counters its thread alone writes
 * (relaxed stores, no locked instruction on the I/O path), read by nvp_bdev_sched_get_info
 * and by window closers through the bdev's channel list.
 */
struct sched_chan {
	_Atomic uint64_t dispatched;
	_Atomic uint64_t tenant_bytes[NVP_BDEV_MAX_TENANTS];
	_Atomic uint64_t tenant_ios[NVP_BDEV_MAX_TENANTS];
	TAILQ_ENTRY(sched_chan) link; /* under sched_common.lock */
};

/* Every scheduler's bdev context starts with this, so sched.c can report on it. */
struct sched_common {
	const char *name;
	void (*get_info)(void *bdev_ctx, struct nvp_sched_info *info);
	pthread_mutex_t lock; /* the channel list and the retired counters; never per I/O */
	TAILQ_HEAD(, sched_chan) chans;
	struct sched_chan retired; /* counters of destroyed channels */
};

void sched_common_init(struct sched_common *c, const char *name,
		       void (*get_info)(void *bdev_ctx, struct nvp_sched_info *info));
void sched_common_fini(struct sched_common *c);
void sched_chan_add(struct sched_common *c, struct sched_chan *ch);
void sched_chan_del(struct sched_common *c, struct sched_chan *ch);

/* Single writer: a relaxed add without a locked instruction. */
static inline void
chan_count(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, RLX) + v, RLX);
}

extern const struct nvp_bdev_sched_ops g_sched_deadline_ops;
extern const struct nvp_bdev_sched_ops g_sched_kyber_ops;
extern const struct nvp_bdev_sched_ops g_sched_fair_ops;

uint64_t sched_us_to_ticks(uint64_t us);

#endif /* NVP_SCHED_INTERNAL_H */
