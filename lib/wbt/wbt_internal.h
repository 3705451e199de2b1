/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle's internals: the monitor (wbt_monitor.c: budgets, windows, the
 * scale step; pure logic over a clock given by the caller, so unit tests drive it with a
 * fake one) and the admission stage over it (wbt.c: classes, deferral order, counters,
 * the public calls). See include/nvpoll/wbt.h for the behaviour.
 *
 * Shared across every thread that uses the bdev: the monitor, through atomics only.
 * Per channel: the stage's channel context, written by its thread only.
 */
#ifndef NVP_WBT_INTERNAL_H
#define NVP_WBT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "wbt"
#include "nvpoll/log.h"
#include "nvpoll/bdev.h"

enum wbt_class {
	WBT_BACKGROUND = 0,
	WBT_NORMAL = 1,
	WBT_SYNC = 2,
	WBT_NUM_CLASSES
};

/* What a window saw (blk-wbt's latency_exceeded() outcomes). */
enum wbt_verdict {
	WBT_LAT_OK = 0,         /* reads under target: step down */
	WBT_LAT_EXCEEDED,       /* over target: step up */
	WBT_LAT_UNKNOWN,        /* too few samples: keep, drift to 0 after a few */
	WBT_LAT_UNKNOWN_WRITES, /* writes but no reads: step down (may go below 0) */
};

/* Samples a window needs before its read minimum is trusted (blk-wbt: 1 read, 3 writes). */
#define WBT_MIN_READ_SAMPLES 1u
#define WBT_MIN_WRITE_SAMPLES 3u
/* Unknown windows in a row before the step drifts one back toward 0. */
#define WBT_UNKNOWN_BUMP 5u
/* Windows an idle gap may stand for at most (each one an unknown window). */
#define WBT_MAX_IDLE_WINDOWS 64u
/* Boosted (step < 0) depth is capped at this multiple of the base depth. */
#define WBT_BOOST_FACTOR 4u
#define WBT_NO_SAMPLE UINT64_MAX
/*
 * Writes of higher classes admitted, device-wide, while a write of a lower class waits,
 * before the lower class is owed the next slot (deadline's writes_starved, by count).
 */
#define WBT_MAX_PASSES 8u

struct wbt_monitor {
	/* ---- hot: every tracked write (admission, completion) ---- */
	_Atomic uint32_t inflight;
	_Atomic uint32_t limit[WBT_NUM_CLASSES];
	_Atomic uint64_t win_end; /* tick at which the current window closes */
	/* bounded passing (wbt_monitor_try_get()): by class, device-wide */
	_Atomic uint32_t nwait[WBT_NUM_CLASSES];    /* writes deferred */
	_Atomic uint32_t passed[WBT_NUM_CLASSES];   /* higher-class admissions since served */
	_Atomic uint32_t owed_lim[WBT_NUM_CLASSES]; /* 0, or the limit it borrows when owed */

	/* ---- window statistics: every completion ---- */
	_Atomic uint64_t rd_min; /* ticks, WBT_NO_SAMPLE when no read completed */
	_Atomic uint32_t rd_samples;
	_Atomic uint32_t wr_samples;
	_Atomic uint64_t sync_issue;   /* admission tick of the read being watched, 0 none */
	_Atomic uintptr_t sync_cookie; /* which read that is */

	/* ---- state, changed by the thread that closes a window ---- */
	_Atomic int32_t step;
	_Atomic uint64_t cur_win; /* ticks */
	_Atomic uint64_t target;  /* ticks; 0 = off */
	uint32_t unknown_cnt;     /* only the closing thread touches it */

	/* ---- cold: settings and counters ---- */
	uint64_t win; /* base window, ticks */
	uint64_t ticks_hz;
	uint32_t base_depth; /* budget at step 0 */
	int32_t max_step;    /* depth 1 reached */
	int32_t min_step;    /* depth WBT_BOOST_FACTOR x base reached */
	_Atomic uint64_t windows;
	_Atomic uint64_t steps_up;
	_Atomic uint64_t steps_down;
	_Atomic uint64_t last_rd_min; /* ticks */
	const char *name;             /* for messages: the bdev's */
};

/* The budget at @step for a base of @base: blk-wbt's rq_depth_calc_max_depth(). */
uint32_t wbt_depth_for_step(uint32_t base, int32_t step);
/* The window at @step: @win / sqrt(step + 1) while step > 0, else @win. */
uint64_t wbt_window_for_step(uint64_t win, int32_t step);

void wbt_monitor_init(struct wbt_monitor *m, const char *name, uint64_t target_ticks,
		      uint64_t win_ticks, uint32_t base_depth, uint64_t ticks_hz, uint64_t now);
void wbt_monitor_set_target(struct wbt_monitor *m, uint64_t target_ticks);

/*
 * Take a slot for a write of class @cls if its limit allows. \return true if taken.
 * Classes come first, but a deferred write is passed by at most WBT_MAX_PASSES writes
 * of higher classes: then its class is owed the next slot, under the highest limit of
 * the classes that passed it, and those classes leave that slot free for it.
 */
bool wbt_monitor_try_get(struct wbt_monitor *m, enum wbt_class cls);
/* A write of class @cls starts / stops waiting for a slot (any channel). */
void wbt_monitor_wait(struct wbt_monitor *m, enum wbt_class cls);
void wbt_monitor_unwait(struct wbt_monitor *m, enum wbt_class cls);
/* The limit a waiting write of class @cls may go under now: its own, or one it is owed. */
uint32_t wbt_monitor_class_limit(const struct wbt_monitor *m, enum wbt_class cls);
/* A tracked write completed: give its slot back and count the sample. */
void wbt_monitor_write_done(struct wbt_monitor *m, uint64_t now);
/* A read was admitted / completed after @lat ticks. @cookie names it. */
void wbt_monitor_read_issued(struct wbt_monitor *m, uintptr_t cookie, uint64_t now);
void wbt_monitor_read_done(struct wbt_monitor *m, uintptr_t cookie, uint64_t lat, uint64_t now);

/* Judge the window that has ended, move the step, open the next window. */
void wbt_monitor_close_window(struct wbt_monitor *m, uint64_t now);

/* Close the window if it is over (cheap when it is not: one load and a compare). */
static inline void
wbt_monitor_tick(struct wbt_monitor *m, uint64_t now)
{
	if (now >= atomic_load_explicit(&m->win_end, memory_order_relaxed)) {
		wbt_monitor_close_window(m, now);
	}
}

/* ---- the budget shared among tenants by weight (wbt_share.c) ---- */

#define WBT_VSCALE (1u << 16) /* virtual time units per byte at weight 1 */
#define WBT_MAX_WEIGHT 1000u  /* fair's: WBT_VSCALE / weight stays exact enough */
#define WBT_DEFAULT_LAG_KIB 128u
#define WBT_DEFAULT_STALE_US 1000u

struct wbt_share_tenant {
	_Atomic uint64_t vtime;                    /* bytes * WBT_VSCALE / weight admitted */
	_Atomic uint64_t seen;                     /* last tick it waited, asked or was charged */
	_Atomic uint32_t nwait;                    /* its writes waiting, all channels */
	_Atomic uint32_t waiting[WBT_NUM_CLASSES]; /* the same by class */
};

struct wbt_share {
	_Atomic uint32_t nwaiting;   /* tenants with writes waiting (nwait != 0) */
	_Atomic uint32_t max_tenant; /* highest tenant id that waited + 1 */
	uint64_t lag;                /* virtual time units */
	uint64_t stale;              /* ticks */
	struct wbt_share_tenant t[NVP_BDEV_MAX_TENANTS];
};

void wbt_share_init(struct wbt_share *s, uint64_t lag_bytes, uint64_t stale_ticks);
/* A write of @tenant, class @cls, starts / stops waiting for the budget. */
void wbt_share_wait(struct wbt_share *s, uint32_t tenant, enum wbt_class cls, uint64_t now);
void wbt_share_unwait(struct wbt_share *s, uint32_t tenant, enum wbt_class cls);
/* May a write of @tenant take a free slot now (no tenant before it could)? */
bool wbt_share_may_go(struct wbt_share *s, const struct wbt_monitor *m, uint32_t tenant,
		      uint64_t now);
/* A write of @bytes was admitted for @tenant of @weight (1..WBT_MAX_WEIGHT). */
void wbt_share_charge(struct wbt_share *s, uint32_t tenant, uint64_t bytes, uint32_t weight,
		      uint64_t now);

/* A waiting write of @tenant was asked again at @now: it is not stale. */
static inline void
wbt_share_seen(struct wbt_share *s, uint32_t tenant, uint64_t now)
{
	atomic_store_explicit(&s->t[tenant].seen, now, memory_order_relaxed);
}

/* Has a tenant other than @tenant writes waiting? (One load while none waits.) */
static inline bool
wbt_share_others_wait(const struct wbt_share *s, uint32_t tenant)
{
	uint32_t n = atomic_load_explicit(&s->nwaiting, memory_order_relaxed);

	return n > (atomic_load_explicit(&s->t[tenant].nwait, memory_order_relaxed) != 0);
}

/* Exposed for the unit tests: judge the window's statistics (does not reset them). */
enum wbt_verdict wbt_monitor_verdict(struct wbt_monitor *m, uint64_t now);

#endif /* NVP_WBT_INTERNAL_H */
