/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle's monitor on a fake clock: depth and window arithmetic, class
 * budgets, the step moving up and down with read latency, the window shrinking, idle
 * drift, writes-only boost, the watched read, and target 0 = off. One tick = 1 us here.
 * Then the loop through its feedback: a simulated drive whose read latency grows with
 * the writes the monitor lets in flight, latencies drawn from seeded lognormals.
 */
#include <CUnit/Basic.h>

#include "wbt/wbt_monitor.c"

#include "../ut_lat.h"

#define HZ 1000000ull  /* fake ticks per second: 1 tick = 1 us */
#define WIN 100000ull  /* 100 ms */
#define TARGET 2000ull /* 2 ms */

static struct wbt_monitor g_m;
static uint64_t g_now;

static void
setup(uint32_t depth)
{
	g_now = 1000;
	wbt_monitor_init(&g_m, "ut", TARGET, WIN, depth, HZ, g_now);
}

/* One window: @reads reads of @rd_lat us and @writes write completions, then close it. */
static void
window(uint32_t reads, uint64_t rd_lat, uint32_t writes)
{
	uint32_t i;

	for (i = 0; i < writes; i++) {
		CU_ASSERT_FATAL(wbt_monitor_try_get(&g_m, WBT_SYNC));
		wbt_monitor_write_done(&g_m, g_now);
	}
	for (i = 0; i < reads; i++) {
		wbt_monitor_read_issued(&g_m, 0x100 + i, g_now);
		wbt_monitor_read_done(&g_m, 0x100 + i, rd_lat + i, g_now);
	}
	g_now += atomic_load(&g_m.cur_win);
	wbt_monitor_tick(&g_m, g_now);
}

static int32_t
step(void)
{
	return atomic_load(&g_m.step);
}

static void
test_depth_arithmetic(void)
{
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 0), 64);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 1), 32);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 2), 16);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 5), 2);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 6), 1);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, 40), 1);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, -1), 127);
	CU_ASSERT_EQUAL(wbt_depth_for_step(64, -3), 256); /* capped at 4x */
	CU_ASSERT_EQUAL(wbt_depth_for_step(1, 3), 1);
	CU_ASSERT_EQUAL(wbt_window_for_step(WIN, 0), WIN);
	CU_ASSERT_EQUAL(wbt_window_for_step(WIN, -2), WIN);
	CU_ASSERT_EQUAL(wbt_window_for_step(WIN, 3), WIN / 2); /* 1 / sqrt(4) */
	CU_ASSERT_EQUAL(wbt_window_for_step(WIN, 8), WIN / 3);
	setup(64);
	CU_ASSERT_EQUAL(g_m.max_step, 6);
	CU_ASSERT_EQUAL(g_m.min_step, -3);
}

static void
test_class_budgets(void)
{
	int i;

	setup(16); /* sync 16, normal (16 + 1) / 2 = 8, background (16 + 3) / 4 = 4 */
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_SYNC]), 16);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_NORMAL]), 8);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), 4);
	for (i = 0; i < 4; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
	}
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
	for (i = 0; i < 4; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_NORMAL));
	}
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_NORMAL));
	for (i = 0; i < 8; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	}
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_SYNC));
	CU_ASSERT_EQUAL(atomic_load(&g_m.inflight), 16);
	wbt_monitor_write_done(&g_m, g_now);
	CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
}

static void
test_step_up_and_down(void)
{
	setup(64);
	window(4, TARGET + 500, 10); /* reads over target while writing */
	CU_ASSERT_EQUAL(step(), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_SYNC]), 32);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), 8);
	CU_ASSERT_EQUAL(atomic_load(&g_m.cur_win), WIN * 16 / 22); /* WIN / sqrt(2), fixed pt */
	window(4, TARGET + 500, 10);
	window(4, TARGET + 500, 10);
	CU_ASSERT_EQUAL(step(), 3);
	CU_ASSERT_EQUAL(atomic_load(&g_m.cur_win), WIN / 2);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), 2); /* depth 8 */
	CU_ASSERT_EQUAL(atomic_load(&g_m.last_rd_min), TARGET + 500);
	/* the minimum counts: one fast read among slow ones is under target */
	window(1, TARGET - 1, 10);
	CU_ASSERT_EQUAL(step(), 2);
	window(4, 100, 10);
	window(4, 100, 10);
	CU_ASSERT_EQUAL(step(), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.cur_win), WIN);
	CU_ASSERT_EQUAL(atomic_load(&g_m.steps_up), 3);
	CU_ASSERT_EQUAL(atomic_load(&g_m.steps_down), 3);
	/* never past depth 1 */
	for (int i = 0; i < 20; i++) {
		window(2, 10 * TARGET, 5);
	}
	CU_ASSERT_EQUAL(step(), g_m.max_step);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_SYNC]), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), 1);
}

static void
test_window_not_over_keeps_state(void)
{
	setup(64);
	CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	wbt_monitor_write_done(&g_m, g_now);
	wbt_monitor_read_issued(&g_m, 1, g_now);
	wbt_monitor_read_done(&g_m, 1, 10 * TARGET, g_now + WIN - 1);
	CU_ASSERT_EQUAL(step(), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.windows), 0);
	wbt_monitor_tick(&g_m, g_now + WIN);
	CU_ASSERT_EQUAL(step(), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_m.windows), 1);
}

static void
test_reads_without_writes_keep_step(void)
{
	setup(64);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 1);
	/* slow reads, but no write activity: not writes hurting them */
	window(4, 10 * TARGET, 0);
	CU_ASSERT_EQUAL(step(), 1);
	CU_ASSERT_EQUAL(wbt_monitor_verdict(&g_m, g_now), WBT_LAT_UNKNOWN);
}

static void
test_unknown_windows_drift_to_zero(void)
{
	int i;

	setup(64);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 2);
	for (i = 0; i < (int)WBT_UNKNOWN_BUMP - 1; i++) {
		window(0, 0, 0);
		CU_ASSERT_EQUAL(step(), 2);
	}
	window(0, 0, 0);
	CU_ASSERT_EQUAL(step(), 1);
	window(0, 0, 0);
	CU_ASSERT_EQUAL(step(), 0);
	window(0, 0, 0);
	CU_ASSERT_EQUAL(step(), 0); /* stays at the centre */
}

static void
test_idle_gap_counts_as_windows(void)
{
	setup(64);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 3);
	/* nothing for a long while: the first I/O after it closes the window and judges
	 * the gap as windows without samples: the step drifts back */
	g_now += 100 * WIN;
	wbt_monitor_tick(&g_m, g_now);
	CU_ASSERT_EQUAL(step(), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.cur_win), WIN);
}

static void
test_writes_only_boost(void)
{
	int i;

	setup(64);
	for (i = 0; i < 10; i++) {
		window(0, 0, 10);
	}
	CU_ASSERT_EQUAL(step(), g_m.min_step);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_SYNC]), 256);
	/* reads come back, slow: the boost ends at once (blk-wbt's hard throttle), then
	 * throttling goes on one step a window */
	window(2, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_SYNC]), 64);
	window(2, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 1);
}

static void
test_watched_read(void)
{
	setup(64);
	CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_BACKGROUND)); /* a write in flight */
	wbt_monitor_read_issued(&g_m, 7, g_now);
	/* a second read does not replace the watched one */
	wbt_monitor_read_issued(&g_m, 8, g_now + 10);
	CU_ASSERT_EQUAL(atomic_load(&g_m.sync_cookie), 7);
	/* the window ends with no read completed, the watched one waiting > target */
	g_now += WIN;
	wbt_monitor_tick(&g_m, g_now);
	CU_ASSERT_EQUAL(step(), 1);
	wbt_monitor_read_done(&g_m, 8, 50, g_now);
	CU_ASSERT_EQUAL(atomic_load(&g_m.sync_cookie), 7); /* not the watched one */
	wbt_monitor_read_done(&g_m, 7, WIN, g_now);
	CU_ASSERT_EQUAL(atomic_load(&g_m.sync_issue), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.sync_cookie), 0);
}

static void
test_target_zero_is_off(void)
{
	int i;

	g_now = 1;
	wbt_monitor_init(&g_m, "ut", 0, WIN, 4, HZ, g_now);
	for (i = 0; i < 1000; i++) {
		CU_ASSERT_FATAL(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
	}
	for (i = 0; i < 5; i++) {
		window(4, 100 * TARGET, 10);
	}
	CU_ASSERT_EQUAL(step(), 0);
	/* switched on at run time, then off again: limits follow at once */
	setup(64);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 1);
	wbt_monitor_set_target(&g_m, 0);
	CU_ASSERT_EQUAL(step(), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), UINT32_MAX);
	wbt_monitor_set_target(&g_m, TARGET);
	CU_ASSERT_EQUAL(atomic_load(&g_m.limit[WBT_BACKGROUND]), 16);
}

/* blk-wbt's test is "over": a window whose fastest read took exactly the target is under. */
static void
test_target_is_not_over(void)
{
	setup(64);
	window(4, TARGET, 10); /* reads of TARGET .. TARGET + 3 */
	CU_ASSERT_EQUAL(atomic_load(&g_m.last_rd_min), TARGET);
	CU_ASSERT_EQUAL(step(), -1);
	window(4, TARGET + 1, 10);
	CU_ASSERT_EQUAL(step(), 0);
}

/*
 * A bursty reader: bursts of slow reads among writes, each after a few windows of
 * nothing. The windows with a verdict break the runs of unknown ones, so no run reaches
 * WBT_UNKNOWN_BUMP and the step holds where the bursts put it.
 */
static void
test_unknown_run_broken_by_verdict(void)
{
	int burst, i;

	setup(64);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 2);
	for (burst = 0; burst < 4; burst++) {
		for (i = 0; i < (int)WBT_UNKNOWN_BUMP - 1; i++) {
			window(0, 0, 0);
		}
		CU_ASSERT_EQUAL(step(), 2 + burst);
		window(3, 5 * TARGET, 6);
		CU_ASSERT_EQUAL(step(), 3 + burst);
	}
}

/*
 * An idle gap is judged in the windows the step had shortened: at step 3 a window is half
 * the base one, so a gap of three base windows is six short ones: five make a bump, the
 * sixth another.
 */
static void
test_idle_gap_in_short_windows(void)
{
	uint64_t end;

	setup(64);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	window(4, 10 * TARGET, 10);
	CU_ASSERT_EQUAL(step(), 3);
	CU_ASSERT_EQUAL(atomic_load(&g_m.cur_win), WIN / 2);
	end = atomic_load(&g_m.win_end);
	/* the window after the third closes empty at its end + 5 short windows */
	g_now = end + 5 * (WIN / 2) + 10;
	wbt_monitor_tick(&g_m, g_now);
	CU_ASSERT_EQUAL(step(), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_m.windows), 4); /* judged once, with the gap in it */
}

/*
 * The loop through its feedback. A simulated drive on the fake clock, stepped every
 * SIM_STEP: a writer keeps the background budget full with writes whose service time is
 * a lognormal; a QD1 reader issues a read @rd_gap after the last one completed, whose
 * latency is a lognormal with a median that grows with the writes in flight (reads wait
 * behind program operations, a drive without program suspend). Its p99 is twice its
 * median. The writer and the reader can be paused.
 */
#define SIM_STEP 100ull /* us */
#define SIM_MAX_WRITES 512
#define SIM_MAX_WINDOWS 512

struct sim {
	struct ut_lat rng;
	uint64_t wr_p50, wr_p99;       /* write service time */
	uint64_t rd_p50, rd_per_write; /* read median: rd_p50 + rd_per_write x writes in flight */
	uint64_t rd_gap;
	bool writer, reader;
	uint64_t wr_end[SIM_MAX_WRITES];
	uint32_t nwr;
	uint64_t rd_issue, rd_end; /* the read in flight; rd_end 0: none */
	uint64_t rd_next;
	uintptr_t cookie;
	/* what happened */
	uint32_t reads, writes;
	uint32_t nwin;                     /* windows closed while the simulation ran */
	int32_t win_step[SIM_MAX_WINDOWS]; /* the step after each */
	uint32_t win_wr[SIM_MAX_WINDOWS];  /* writes completed in each */
};

static void
sim_init(struct sim *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	ut_lat_seed(&s->rng, seed);
	s->writer = true;
	s->reader = true;
	s->rd_gap = 500;
}

static void
sim_one_step(struct sim *s)
{
	uint64_t p50, lat;
	uint32_t i;

	for (i = 0; i < s->nwr;) {
		if (s->wr_end[i] <= g_now) {
			s->wr_end[i] = s->wr_end[--s->nwr];
			s->writes++;
			wbt_monitor_write_done(&g_m, g_now);
		} else {
			i++;
		}
	}
	if (s->rd_end != 0 && s->rd_end <= g_now) {
		wbt_monitor_read_done(&g_m, s->cookie, s->rd_end - s->rd_issue, g_now);
		s->rd_end = 0;
		s->rd_next = g_now + s->rd_gap;
		s->reads++;
	}
	while (s->writer && s->nwr < SIM_MAX_WRITES && wbt_monitor_try_get(&g_m, WBT_BACKGROUND)) {
		s->wr_end[s->nwr++] = g_now + ut_lat_lognormal(&s->rng, s->wr_p50, s->wr_p99);
	}
	if (s->reader && s->rd_end == 0 && g_now >= s->rd_next) {
		p50 = s->rd_p50 + s->rd_per_write * s->nwr;
		lat = ut_lat_lognormal(&s->rng, p50, 2 * p50);
		s->rd_issue = g_now;
		s->rd_end = g_now + lat;
		wbt_monitor_read_issued(&g_m, ++s->cookie, g_now);
	}
	wbt_monitor_tick(&g_m, g_now);
}

/* Run for @us; record the step after each window that closes. */
static void
sim_run(struct sim *s, uint64_t us)
{
	uint64_t end = g_now + us, win = atomic_load(&g_m.windows), wr = s->writes;

	while (g_now < end) {
		sim_one_step(s);
		if (atomic_load(&g_m.windows) != win) {
			win = atomic_load(&g_m.windows);
			if (s->nwin < SIM_MAX_WINDOWS) {
				s->win_wr[s->nwin] = s->writes - wr;
				s->win_step[s->nwin++] = step();
			}
			wr = s->writes;
		}
		g_now += SIM_STEP;
	}
}

/*
 * Large writes to a drive whose cache is full: each takes 200-900 ms, so most windows
 * see writes in flight but none complete, while every read waits behind them. Those
 * windows are "writing" (the kernel's rule wants three write completions; a throttled
 * stream of large writes would then never be judged): the first window steps up, and the
 * throttle holds at depth 1. With the reader gone, the same windows (writes in flight,
 * no reads) are "writes only": the budget opens below step 0.
 */
static void
test_loop_slow_writes_in_flight(void)
{
	struct sim s;
	uint32_t i, quiet = 0;

	setup(4); /* background budget 1 at step 0; depth 1 at step 2 */
	sim_init(&s, 1);
	s.wr_p50 = 400000;
	s.wr_p99 = 900000;
	s.rd_p50 = 300;
	s.rd_per_write = 6000;
	sim_run(&s, 3000000);
	CU_ASSERT(s.nwin >= 40);
	CU_ASSERT(s.writes >= 3);
	CU_ASSERT(s.reads >= 300);
	for (i = 0; i < s.nwin; i++) {
		quiet += s.win_wr[i] == 0;
	}
	CU_ASSERT(quiet * 10 >= s.nwin * 8); /* most windows: no write completed */
	CU_ASSERT_EQUAL(s.win_wr[0], 0);
	CU_ASSERT_EQUAL(s.win_step[0], 1); /* over target with writes in flight only */
	CU_ASSERT_EQUAL(s.win_step[1], g_m.max_step);
	for (i = 1; i < s.nwin; i++) {
		CU_ASSERT_EQUAL(s.win_step[i], g_m.max_step);
	}
	CU_ASSERT_EQUAL(atomic_load(&g_m.steps_down), 0);
	/* the reader stops; the writes go on, none completing in most windows */
	s.reader = false;
	s.nwin = 0;
	sim_run(&s, 1000000);
	CU_ASSERT(s.nwin >= 8);
	/* after the last read's window, one step down a window though no write completed */
	for (i = 1; i < 5; i++) {
		CU_ASSERT_EQUAL(s.win_wr[i], 0);
		CU_ASSERT_EQUAL(s.win_step[i], s.win_step[i - 1] - 1);
	}
	CU_ASSERT(s.win_step[4] < 0);
	CU_ASSERT_EQUAL(step(), g_m.min_step); /* and on, as far as the boost goes */
	printf("(%u windows, %u writes, %u reads) ", s.nwin, s.writes, s.reads);
}

/*
 * Classes come first, for a while: with depth 8 (background 2, normal 4, sync 8) and
 * normal writes keeping 4 in flight, a waiting background write is passed by exactly
 * WBT_MAX_PASSES normal writes; then the next slot is its, under normal's limit (normal
 * writes leave it free), and once it went the count starts again. A sync write passing
 * an owed class raises what it borrows to the sync limit. Nobody waiting: nothing owed.
 */
static void
test_bounded_passing(void)
{
	uint32_t i;

	setup(8);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_FATAL(wbt_monitor_try_get(&g_m, WBT_NORMAL));
	}
	wbt_monitor_wait(&g_m, WBT_BACKGROUND);
	for (i = 0; i < WBT_MAX_PASSES; i++) {
		/* a normal write completes, the background write is refused, a normal one goes */
		wbt_monitor_write_done(&g_m, g_now);
		CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
		CU_ASSERT_EQUAL(wbt_monitor_class_limit(&g_m, WBT_BACKGROUND), 2);
		CU_ASSERT_TRUE(wbt_monitor_try_get(&g_m, WBT_NORMAL));
	}
	CU_ASSERT_EQUAL(wbt_monitor_class_limit(&g_m, WBT_BACKGROUND), 4);
	wbt_monitor_write_done(&g_m, g_now);
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_NORMAL)); /* the slot is owed */
	CU_ASSERT_TRUE(wbt_monitor_try_get(&g_m, WBT_SYNC));    /* sync's limit is above it */
	CU_ASSERT_EQUAL(wbt_monitor_class_limit(&g_m, WBT_BACKGROUND), 8);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_TRUE(wbt_monitor_try_get(&g_m, WBT_SYNC));
	}
	CU_ASSERT_FALSE(wbt_monitor_try_get(&g_m, WBT_SYNC)); /* 7 in flight: the 8th is owed */
	CU_ASSERT_TRUE(wbt_monitor_try_get(&g_m, WBT_BACKGROUND));
	wbt_monitor_unwait(&g_m, WBT_BACKGROUND);
	CU_ASSERT_EQUAL(wbt_monitor_class_limit(&g_m, WBT_BACKGROUND), 2);
	CU_ASSERT_EQUAL(atomic_load(&g_m.passed[WBT_BACKGROUND]), 0);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("wbt_monitor", NULL, NULL);
	CU_add_test(s, "depth_arithmetic", test_depth_arithmetic);
	CU_add_test(s, "class_budgets", test_class_budgets);
	CU_add_test(s, "bounded_passing", test_bounded_passing);
	CU_add_test(s, "step_up_and_down", test_step_up_and_down);
	CU_add_test(s, "window_not_over_keeps_state", test_window_not_over_keeps_state);
	CU_add_test(s, "reads_without_writes_keep_step", test_reads_without_writes_keep_step);
	CU_add_test(s, "unknown_windows_drift_to_zero", test_unknown_windows_drift_to_zero);
	CU_add_test(s, "idle_gap_counts_as_windows", test_idle_gap_counts_as_windows);
	CU_add_test(s, "writes_only_boost", test_writes_only_boost);
	CU_add_test(s, "watched_read", test_watched_read);
	CU_add_test(s, "target_zero_is_off", test_target_zero_is_off);
	CU_add_test(s, "target_is_not_over", test_target_is_not_over);
	CU_add_test(s, "unknown_run_broken_by_verdict", test_unknown_run_broken_by_verdict);
	CU_add_test(s, "idle_gap_in_short_windows", test_idle_gap_in_short_windows);
	CU_add_test(s, "loop_slow_writes_in_flight", test_loop_slow_writes_in_flight);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails == 0 ? 0 : 1;
}
