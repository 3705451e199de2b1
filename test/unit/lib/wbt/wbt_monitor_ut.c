/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle's monitor on a fake clock: depth and window arithmetic, class
 * budgets, the step moving up and down with read latency, the window shrinking, idle
 * drift, writes-only boost, the watched read, and target 0 = off. One tick = 1 us here.
 */
#include <CUnit/Basic.h>

#include "wbt/wbt_monitor.c"

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
	CU_add_test(s, "step_up_and_down", test_step_up_and_down);
	CU_add_test(s, "window_not_over_keeps_state", test_window_not_over_keeps_state);
	CU_add_test(s, "reads_without_writes_keep_step", test_reads_without_writes_keep_step);
	CU_add_test(s, "unknown_windows_drift_to_zero", test_unknown_windows_drift_to_zero);
	CU_add_test(s, "idle_gap_counts_as_windows", test_idle_gap_counts_as_windows);
	CU_add_test(s, "writes_only_boost", test_writes_only_boost);
	CU_add_test(s, "watched_read", test_watched_read);
	CU_add_test(s, "target_zero_is_off", test_target_zero_is_off);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails == 0 ? 0 : 1;
}
