/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle's monitor: a budget of writes in flight per bdev, split by
 * class, and the CoDel-style loop that steers it from read latency (after the Linux
 * block layer's blk-wbt.c, rebuilt for threads that poll).
 *
 * There is no timer. Every admission and completion looks at the window's end tick;
 * the first thread past it wins a compare-and-swap on it and closes the window: it
 * judges the window's statistics, moves the scale step and opens the next window. So a
 * window closes at the first I/O after its end; an idle gap of N windows is judged as N
 * windows without samples (at most WBT_MAX_IDLE_WINDOWS).
 *
 * Every field shared between threads is an atomic; ordering is relaxed throughout: the
 * budget check and the statistics are estimates by nature (a sample landing in the
 * neighbouring window, a write admitted against a limit changed a moment earlier), and
 * no other memory is published through them.
 */
#include <inttypes.h>
#include <string.h>

#include "nvpoll/util.h"
#include "wbt_internal.h"

#define RLX memory_order_relaxed

uint32_t
wbt_depth_for_step(uint32_t base, int32_t step)
{
	uint64_t depth, cap;

	if (base <= 1) {
		return 1;
	}
	if (step > 0) {
		return 1 + ((base - 1) >> NVP_MIN(step, 31));
	}
	if (step < 0) {
		cap = (uint64_t)base * WBT_BOOST_FACTOR;
		depth = 1 + ((uint64_t)(base - 1) << NVP_MIN(-step, 20));
		return (uint32_t)NVP_MIN(depth, cap);
	}
	return base;
}

static uint64_t
isqrt(uint64_t x)
{
	uint64_t r = 0, bit = 1ull << 62;

	while (bit > x) {
		bit >>= 2;
	}
	while (bit != 0) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

uint64_t
wbt_window_for_step(uint64_t win, int32_t step)
{
	/* blk-wbt: win << 4 / sqrt((step + 1) << 8), i.e. win / sqrt(step + 1) in fixed point */
	if (step <= 0) {
		return win;
	}
	return (win << 4) / isqrt(((uint64_t)step + 1) << 8);
}

static void
set_limits(struct wbt_monitor *m, int32_t step)
{
	uint32_t depth = wbt_depth_for_step(m->base_depth, step);

	if (atomic_load_explicit(&m->target, RLX) == 0) {
		atomic_store_explicit(&m->limit[WBT_SYNC], UINT32_MAX, RLX);
		atomic_store_explicit(&m->limit[WBT_NORMAL], UINT32_MAX, RLX);
		atomic_store_explicit(&m->limit[WBT_BACKGROUND], UINT32_MAX, RLX);
		return;
	}
	atomic_store_explicit(&m->limit[WBT_SYNC], depth, RLX);
	atomic_store_explicit(&m->limit[WBT_NORMAL], (depth + 1) / 2, RLX);
	atomic_store_explicit(&m->limit[WBT_BACKGROUND], (depth + 3) / 4, RLX);
}

static void
reset_window_stats(struct wbt_monitor *m)
{
	atomic_store_explicit(&m->rd_min, WBT_NO_SAMPLE, RLX);
	atomic_store_explicit(&m->rd_samples, 0, RLX);
	atomic_store_explicit(&m->wr_samples, 0, RLX);
}

void
wbt_monitor_init(struct wbt_monitor *m, const char *name, uint64_t target_ticks, uint64_t win_ticks,
		 uint32_t base_depth, uint64_t ticks_hz, uint64_t now)
{
	int32_t s;

	memset(m, 0, sizeof(*m));
	m->name = name;
	m->win = win_ticks != 0 ? win_ticks : 1;
	m->ticks_hz = ticks_hz;
	m->base_depth = base_depth != 0 ? base_depth : 1;
	for (s = 0; wbt_depth_for_step(m->base_depth, s) > 1; s++) {
	}
	m->max_step = s;
	for (s = 0; s > -32 && wbt_depth_for_step(m->base_depth, s) <
				       m->base_depth * (uint64_t)WBT_BOOST_FACTOR;
	     s--) {
	}
	m->min_step = s;
	atomic_store_explicit(&m->target, target_ticks, RLX);
	atomic_store_explicit(&m->cur_win, m->win, RLX);
	atomic_store_explicit(&m->win_end, now + m->win, RLX);
	reset_window_stats(m);
	set_limits(m, 0);
}

void
wbt_monitor_set_target(struct wbt_monitor *m, uint64_t target_ticks)
{
	atomic_store_explicit(&m->target, target_ticks, RLX);
	if (target_ticks == 0) {
		atomic_store_explicit(&m->step, 0, RLX);
		atomic_store_explicit(&m->cur_win, m->win, RLX);
	}
	set_limits(m, atomic_load_explicit(&m->step, RLX));
}

uint32_t
wbt_monitor_class_limit(const struct wbt_monitor *m, enum wbt_class cls)
{
	uint32_t lim = atomic_load_explicit(&m->limit[cls], RLX);
	uint32_t owed = atomic_load_explicit(&m->owed_lim[cls], RLX);

	return owed > lim ? owed : lim;
}

/* The limit of class @cls after the slots it leaves to owed lower classes. */
static uint32_t
limit_for(const struct wbt_monitor *m, enum wbt_class cls)
{
	uint32_t lim = wbt_monitor_class_limit(m, cls), owed;
	int l;

	for (l = 0; l < (int)cls; l++) {
		owed = atomic_load_explicit(&m->owed_lim[l], RLX);
		if (owed != 0 && owed == lim) {
			lim--; /* it borrows this class's limit: the next slot under it is its */
		}
	}
	return lim;
}

/* A write of class @cls took a slot: it was served; the lower classes waiting were passed. */
static void
count_passes(struct wbt_monitor *m, enum wbt_class cls)
{
	uint32_t lim = atomic_load_explicit(&m->limit[cls], RLX), owed;
	int l;

	if (atomic_load_explicit(&m->passed[cls], RLX) != 0) {
		atomic_store_explicit(&m->passed[cls], 0, RLX);
		atomic_store_explicit(&m->owed_lim[cls], 0, RLX);
	}
	for (l = 0; l < (int)cls; l++) {
		if (atomic_load_explicit(&m->nwait[l], RLX) == 0) {
			continue;
		}
		if (atomic_fetch_add_explicit(&m->passed[l], 1, RLX) + 1 >= WBT_MAX_PASSES) {
			owed = atomic_load_explicit(&m->owed_lim[l], RLX);
			if (lim > owed) {
				atomic_store_explicit(&m->owed_lim[l], lim, RLX);
			}
		}
	}
}

bool
wbt_monitor_try_get(struct wbt_monitor *m, enum wbt_class cls)
{
	uint32_t lim = limit_for(m, cls);
	uint32_t cur = atomic_load_explicit(&m->inflight, RLX);

	do {
		if (cur >= lim) {
			return false;
		}
	} while (!atomic_compare_exchange_weak_explicit(&m->inflight, &cur, cur + 1, RLX, RLX));
	count_passes(m, cls);
	return true;
}

void
wbt_monitor_wait(struct wbt_monitor *m, enum wbt_class cls)
{
	if (atomic_fetch_add_explicit(&m->nwait[cls], 1, RLX) == 0) {
		/* starvation is counted from when the class starts waiting */
		atomic_store_explicit(&m->passed[cls], 0, RLX);
		atomic_store_explicit(&m->owed_lim[cls], 0, RLX);
	}
}

void
wbt_monitor_unwait(struct wbt_monitor *m, enum wbt_class cls)
{
	if (atomic_fetch_sub_explicit(&m->nwait[cls], 1, RLX) == 1) {
		atomic_store_explicit(&m->owed_lim[cls], 0, RLX); /* nobody left to owe */
	}
}

void
wbt_monitor_write_done(struct wbt_monitor *m, uint64_t now)
{
	atomic_fetch_sub_explicit(&m->inflight, 1, RLX);
	atomic_fetch_add_explicit(&m->wr_samples, 1, RLX);
	wbt_monitor_tick(m, now);
}

void
wbt_monitor_read_issued(struct wbt_monitor *m, uintptr_t cookie, uint64_t now)
{
	uint64_t none = 0;

	/* Watch one read at a time: the first issued while none is watched (blk-wbt's
	 * sync_issue). Its owner clears it at completion. */
	if (atomic_load_explicit(&m->sync_issue, RLX) == 0 &&
	    atomic_compare_exchange_strong_explicit(&m->sync_issue, &none, now, RLX, RLX)) {
		atomic_store_explicit(&m->sync_cookie, cookie, RLX);
	}
	wbt_monitor_tick(m, now);
}

void
wbt_monitor_read_done(struct wbt_monitor *m, uintptr_t cookie, uint64_t lat, uint64_t now)
{
	uint64_t min = atomic_load_explicit(&m->rd_min, RLX);

	if (atomic_load_explicit(&m->sync_cookie, RLX) == cookie) {
		atomic_store_explicit(&m->sync_cookie, 0, RLX);
		atomic_store_explicit(&m->sync_issue, 0, RLX);
	}
	while (lat < min &&
	       !atomic_compare_exchange_weak_explicit(&m->rd_min, &min, lat, RLX, RLX)) {
	}
	atomic_fetch_add_explicit(&m->rd_samples, 1, RLX);
	wbt_monitor_tick(m, now);
}

/*
 * blk-wbt's latency_exceeded(), with one change: the kernel trusts a window only with at
 * least three write completions, and reads a window of suffering reads but fewer writes
 * as "writes only" (so it relaxes the throttle). A deeply throttled stream of large
 * writes completes fewer than three per shortened window, and the throttle would then
 * oscillate; here write activity (a completion or a write in flight) is enough for the
 * reads' latency to count.
 */
enum wbt_verdict
wbt_monitor_verdict(struct wbt_monitor *m, uint64_t now)
{
	uint64_t target = atomic_load_explicit(&m->target, RLX);
	uint64_t issue = atomic_load_explicit(&m->sync_issue, RLX);
	uint32_t rd = atomic_load_explicit(&m->rd_samples, RLX);
	uint32_t wr = atomic_load_explicit(&m->wr_samples, RLX);
	bool writing = wr != 0 || atomic_load_explicit(&m->inflight, RLX) != 0;

	/* A read waiting longer than a window, or over target while none completed. */
	if (issue != 0 && now > issue &&
	    (now - issue > atomic_load_explicit(&m->cur_win, RLX) ||
	     (now - issue > target && rd == 0))) {
		return WBT_LAT_EXCEEDED;
	}
	if (rd < WBT_MIN_READ_SAMPLES) {
		return writing ? WBT_LAT_UNKNOWN_WRITES : WBT_LAT_UNKNOWN;
	}
	if (!writing) {
		return WBT_LAT_UNKNOWN; /* reads alone: not writes hurting them */
	}
	return atomic_load_explicit(&m->rd_min, RLX) > target ? WBT_LAT_EXCEEDED : WBT_LAT_OK;
}

static const char *
verdict_name(enum wbt_verdict v)
{
	static const char *const names[] = { "reads under target", "read latency over target",
					     "too few samples", "writes only" };

	return names[v];
}

static void
move_step(struct wbt_monitor *m, int32_t delta, enum wbt_verdict why, uint64_t rd_min)
{
	int32_t old = atomic_load_explicit(&m->step, RLX), step = old + delta;

	if (step > m->max_step || step < m->min_step) {
		return; /* depth 1 already, or boosted as far as it goes */
	}
	atomic_store_explicit(&m->step, step, RLX);
	atomic_fetch_add_explicit(delta > 0 ? &m->steps_up : &m->steps_down, 1, RLX);
	set_limits(m, step);
	NVP_DEBUGLOG("%s: step %" PRId32 " -> %" PRId32 " (%s: min read %" PRIu64
		     " us, target %" PRIu64 " us); write depth %" PRIu32,
		     m->name, old, step, verdict_name(why),
		     rd_min == WBT_NO_SAMPLE ? 0 : nvp_ticks_to_us(rd_min, m->ticks_hz),
		     nvp_ticks_to_us(atomic_load_explicit(&m->target, RLX), m->ticks_hz),
		     wbt_depth_for_step(m->base_depth, step));
}

static void
apply_verdict(struct wbt_monitor *m, enum wbt_verdict v, uint64_t rd_min)
{
	int32_t step = atomic_load_explicit(&m->step, RLX);

	if (v != WBT_LAT_UNKNOWN) {
		m->unknown_cnt = 0;
	}
	switch (v) {
	case WBT_LAT_EXCEEDED:
		/* A boost ends at once (blk-wbt's hard throttle): back to step 0, not one up. */
		move_step(m, step < 0 ? -step : 1, v, rd_min);
		break;
	case WBT_LAT_OK:
	case WBT_LAT_UNKNOWN_WRITES:
		move_step(m, -1, v, rd_min);
		break;
	case WBT_LAT_UNKNOWN:
		if (++m->unknown_cnt < WBT_UNKNOWN_BUMP || step == 0) {
			break;
		}
		move_step(m, step > 0 ? -1 : 1, v, rd_min); /* drift back toward step 0 */
		break;
	}
}

void
wbt_monitor_close_window(struct wbt_monitor *m, uint64_t now)
{
	uint64_t end = atomic_load_explicit(&m->win_end, RLX);
	uint64_t cur = atomic_load_explicit(&m->cur_win, RLX), rd_min, idle;
	enum wbt_verdict v;

	if (now < end ||
	    !atomic_compare_exchange_strong_explicit(&m->win_end, &end, now + cur, RLX, RLX)) {
		return; /* not over, or another thread is closing it */
	}
	atomic_fetch_add_explicit(&m->windows, 1, RLX);
	if (atomic_load_explicit(&m->target, RLX) == 0) {
		reset_window_stats(m);
		return;
	}
	v = wbt_monitor_verdict(m, now);
	rd_min = atomic_load_explicit(&m->rd_min, RLX);
	if (rd_min != WBT_NO_SAMPLE) {
		atomic_store_explicit(&m->last_rd_min, rd_min, RLX);
	}
	reset_window_stats(m);
	apply_verdict(m, v, rd_min);
	/* Windows that passed with no I/O at all to close them. */
	idle = NVP_MIN((now - end) / cur, (uint64_t)WBT_MAX_IDLE_WINDOWS);
	for (; idle > 0; idle--) {
		apply_verdict(m, WBT_LAT_UNKNOWN, WBT_NO_SAMPLE);
	}
	cur = wbt_window_for_step(m->win, atomic_load_explicit(&m->step, RLX));
	atomic_store_explicit(&m->cur_win, cur, RLX);
	atomic_store_explicit(&m->win_end, now + cur, RLX);
}
