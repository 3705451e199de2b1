/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The throttle's budget shared among tenants by weight (wbt_share.c) on a fake clock:
 * charging, who may take a freed slot, where an arriving tenant is placed, a stale
 * tenant forgotten, classes that could not take the slot, virtual times that wrap. Then
 * a simulated device: tenants of different weights and request sizes keep writes
 * waiting for a small budget, completions in a seeded random order; each gets its share
 * of the bytes by weight. One tick = 1 us here.
 */
#include <CUnit/Basic.h>

#include "wbt/wbt_monitor.c"
#include "wbt/wbt_share.c"

#include "../ut_lat.h"

#define HZ 1000000ull
#define STALE 1000ull /* us */
#define LAG 128ull    /* KiB */
#define KIB 1024ull

static struct wbt_monitor g_m;
static struct wbt_share g_s;
static uint64_t g_now;

static void
setup(uint32_t depth)
{
	g_now = 1000000;
	/* a window of 1000 s: the step stays 0 (depth 16: sync 16, normal 8, background 4) */
	wbt_monitor_init(&g_m, "ut", 2000, 1000ull * HZ, depth, HZ, g_now);
	wbt_share_init(&g_s, LAG * KIB, STALE);
}

static uint64_t
vt(uint32_t t)
{
	return atomic_load(&g_s.t[t].vtime);
}

static void
set_vt(uint32_t t, uint64_t v)
{
	atomic_store(&g_s.t[t].vtime, v);
}

static void
test_charge_by_weight(void)
{
	setup(16);
	wbt_share_charge(&g_s, 3, 4096, 1, g_now);
	CU_ASSERT_EQUAL(vt(3), 4096ull * WBT_VSCALE);
	wbt_share_charge(&g_s, 5, 4096, 4, g_now + 7);
	CU_ASSERT_EQUAL(vt(5), 4096ull * (WBT_VSCALE / 4));
	CU_ASSERT_EQUAL(atomic_load(&g_s.t[5].seen), g_now + 7);
	wbt_share_charge(&g_s, 5, 8192, 4, g_now);
	CU_ASSERT_EQUAL(vt(5), 3 * 4096ull * (WBT_VSCALE / 4));
}

static void
test_wait_counts(void)
{
	setup(16);
	CU_ASSERT_FALSE(wbt_share_others_wait(&g_s, 1));
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 1, WBT_NORMAL, g_now);
	CU_ASSERT_EQUAL(atomic_load(&g_s.nwaiting), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_s.max_tenant), 2);
	CU_ASSERT_FALSE(wbt_share_others_wait(&g_s, 1)); /* only itself */
	CU_ASSERT(wbt_share_others_wait(&g_s, 2));
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 1, g_now));
	wbt_share_wait(&g_s, 6, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(atomic_load(&g_s.nwaiting), 2);
	CU_ASSERT_EQUAL(atomic_load(&g_s.max_tenant), 7);
	CU_ASSERT(wbt_share_others_wait(&g_s, 1));
	wbt_share_unwait(&g_s, 1, WBT_BACKGROUND);
	CU_ASSERT_EQUAL(atomic_load(&g_s.nwaiting), 2);
	wbt_share_unwait(&g_s, 1, WBT_NORMAL);
	CU_ASSERT_EQUAL(atomic_load(&g_s.nwaiting), 1);
	CU_ASSERT_EQUAL(atomic_load(&g_s.t[1].nwait), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_s.t[1].waiting[WBT_NORMAL]), 0);
	wbt_share_unwait(&g_s, 6, WBT_BACKGROUND);
	CU_ASSERT_EQUAL(atomic_load(&g_s.nwaiting), 0);
	CU_ASSERT_EQUAL(atomic_load(&g_s.max_tenant), 7); /* never shrinks */
}

/* The tenant with the least virtual time goes; ties let both go. */
static void
test_least_goes(void)
{
	setup(16);
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	set_vt(1, 1000);
	set_vt(2, 1000);
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 1, g_now));
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	set_vt(2, 1001);
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 1, g_now));
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	/* a new write of a tenant that waits for nothing is placed first: never seen, level
	 * with the least (a tie: it may go); seen, where it is if within lag */
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 3, g_now));
	CU_ASSERT_EQUAL(vt(3), 1000);
	set_vt(3, 1001);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 3, g_now));
	/* the one ahead goes once the other stops waiting */
	wbt_share_unwait(&g_s, 1, WBT_BACKGROUND);
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 3, g_now));
}

/* A write waits only for tenants whose waiting writes could take the slot. */
static void
test_only_those_who_could_take(void)
{
	int i;

	setup(16); /* background 4, normal 8, sync 16 */
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 2, WBT_SYNC, g_now);
	set_vt(1, 10);
	set_vt(2, 20);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	for (i = 0; i < 4; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	}
	/* 4 in flight: tenant 1's background writes cannot go, tenant 2's sync one can */
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	/* tenant 1 also waits with a normal write: it could take the slot */
	wbt_share_wait(&g_s, 1, WBT_NORMAL, g_now);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	for (i = 0; i < 4; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	}
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now)); /* 8 in flight: normal full */
	wbt_monitor_write_done(&g_m, g_now);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now)); /* 7: normal fits */
}

/*
 * A class owed a slot (passed WBT_MAX_PASSES times) could take one under the limit it
 * borrows: tenant 1's background write, owed under sync's limit, holds tenant 2's sync
 * write back at 8 in flight, where tenant 1's normal write could not go.
 */
static void
test_owed_class_could_take(void)
{
	uint32_t i;

	setup(16); /* background 4, normal 8, sync 16 */
	wbt_monitor_wait(&g_m, WBT_BACKGROUND);
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 1, WBT_NORMAL, g_now);
	wbt_share_wait(&g_s, 2, WBT_SYNC, g_now);
	set_vt(1, 10);
	set_vt(2, 20);
	for (i = 0; i < 8; i++) {
		CU_ASSERT(wbt_monitor_try_get(&g_m, WBT_SYNC));
	}
	/* 8 in flight, 8 passes: background is owed sync's 16 */
	CU_ASSERT_EQUAL(wbt_monitor_class_limit(&g_m, WBT_BACKGROUND), 16);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	wbt_monitor_unwait(&g_m, WBT_BACKGROUND); /* it went: owed nothing */
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
}

/* An arriving tenant is placed: never behind the least waiting one, at most lag ahead. */
static void
test_arrival_placed_within_lag(void)
{
	const uint64_t lag = LAG * KIB * WBT_VSCALE;
	const uint64_t base = 50 * lag;

	setup(16);
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	set_vt(1, base);
	wbt_share_wait(&g_s, 4, WBT_BACKGROUND, g_now);
	set_vt(4, base + 3 * lag);
	/* never seen (stale): level with the least waiting one */
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	/* seen recently, far behind: brought up, no credit */
	set_vt(2, 3);
	g_now += STALE / 2;
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	/* seen recently, within lag: kept */
	set_vt(2, base + lag / 2);
	g_now += 1;
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base + lag / 2);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	set_vt(2, base - 1);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	set_vt(2, base + lag);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base + lag);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	/* seen recently, far ahead: one lag ahead at most */
	set_vt(2, base + 10 * lag);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base + lag);
	wbt_share_unwait(&g_s, 2, WBT_BACKGROUND);
	/* idle longer than stale, ahead: forgotten, level */
	g_now += STALE + 1;
	wbt_share_wait(&g_s, 1, WBT_NORMAL, g_now); /* keep 1 and 4 fresh */
	wbt_share_wait(&g_s, 4, WBT_NORMAL, g_now);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(2), base);
	/* alone: its virtual time is kept */
	setup(16);
	set_vt(7, 12345);
	wbt_share_wait(&g_s, 7, WBT_BACKGROUND, g_now);
	CU_ASSERT_EQUAL(vt(7), 12345);
}

/* A waiting tenant not heard of for more than stale holds nobody back. */
static void
test_stale_holds_nobody(void)
{
	setup(16);
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	set_vt(1, 0);
	set_vt(2, 100);
	g_now += STALE; /* exactly stale: still held */
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	g_now += 1;
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	/* asked again (wbt_share_seen): fresh, holds the others back again */
	wbt_share_seen(&g_s, 1, g_now);
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	/* a clock read on another thread slightly behind is not "stale" */
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now - 5));
}

/* Virtual times wrap: compared by distance, not value. */
static void
test_wrap(void)
{
	setup(16);
	wbt_share_wait(&g_s, 1, WBT_BACKGROUND, g_now);
	wbt_share_wait(&g_s, 2, WBT_BACKGROUND, g_now);
	set_vt(1, UINT64_MAX - 100);
	set_vt(2, 50); /* wrapped past 1: ahead */
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 1, g_now));
	CU_ASSERT_FALSE(wbt_share_may_go(&g_s, &g_m, 2, g_now));
	wbt_share_charge(&g_s, 1, 4096, 1, g_now);
	CU_ASSERT_EQUAL(vt(1), UINT64_MAX - 100 + 4096ull * WBT_VSCALE);
	CU_ASSERT(wbt_share_may_go(&g_s, &g_m, 2, g_now));
}

/*
 * The loop: tenants with writes always waiting ask for a budget of @depth (background
 * limit), in a seeded random order, as threads would; in-flight writes complete in a
 * random order. Each admitted write is charged and replaced by a new waiting one (a
 * closed loop). \return the bytes each got into @bytes.
 */
#define SIM_T 3
static void
simulate(const uint32_t *weight, const uint64_t *size, uint32_t n, uint32_t rounds, uint64_t *bytes)
{
	struct ut_lat r;
	uint32_t inflight_t[64] = { 0 }, nin = 0, i, k, t, pick;
	uint32_t owner[64];

	ut_lat_seed(&r, 0x5eed);
	setup(16); /* background 4 */
	for (t = 0; t < n; t++) {
		bytes[t] = 0;
		wbt_share_wait(&g_s, t, WBT_BACKGROUND, g_now);
		wbt_share_wait(&g_s, t, WBT_BACKGROUND, g_now);
	}
	for (i = 0; i < rounds; i++) {
		g_now += 1 + ut_lat_next(&r) % 3;
		/* each tenant asks once per round, starting at a random one */
		pick = (uint32_t)(ut_lat_next(&r) % n);
		for (k = 0; k < n; k++) {
			t = (pick + k) % n;
			wbt_share_seen(&g_s, t, g_now);
			if (!wbt_share_may_go(&g_s, &g_m, t, g_now) ||
			    !wbt_monitor_try_get(&g_m, WBT_BACKGROUND)) {
				continue;
			}
			wbt_share_unwait(&g_s, t, WBT_BACKGROUND);
			if (atomic_load(&g_s.nwaiting) != 0) {
				wbt_share_charge(&g_s, t, size[t], weight[t], g_now);
			}
			bytes[t] += size[t];
			owner[nin++] = t;
			inflight_t[t]++;
			wbt_share_wait(&g_s, t, WBT_BACKGROUND, g_now);
		}
		/* one random in-flight write completes */
		if (nin != 0) {
			k = (uint32_t)(ut_lat_next(&r) % nin);
			inflight_t[owner[k]]--;
			owner[k] = owner[--nin];
			wbt_monitor_write_done(&g_m, g_now);
		}
	}
}

static double
share(const uint64_t *bytes, uint32_t n, uint32_t t)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		sum += bytes[i];
	}
	return 100.0 * (double)bytes[t] / (double)sum;
}

static void
test_loop_shares_by_weight(void)
{
	const uint32_t w2[2] = { 1, 4 };
	const uint64_t s2[2] = { 4096, 4096 };
	const uint32_t w3[SIM_T] = { 1, 2, 5 };
	const uint64_t s3[SIM_T] = { 16384, 4096, 8192 }; /* shares in bytes, not requests */
	uint64_t b[SIM_T];

	simulate(w2, s2, 2, 20000, b);
	printf("(1:4 -> %.1f/%.1f", share(b, 2, 0), share(b, 2, 1));
	CU_ASSERT(share(b, 2, 0) > 19.5 && share(b, 2, 0) < 20.5);
	simulate(w3, s3, SIM_T, 20000, b);
	printf(", 1:2:5 -> %.1f/%.1f/%.1f) ", share(b, 3, 0), share(b, 3, 1), share(b, 3, 2));
	CU_ASSERT(share(b, 3, 0) > 12.0 && share(b, 3, 0) < 13.0);
	CU_ASSERT(share(b, 3, 1) > 24.5 && share(b, 3, 1) < 25.5);
	CU_ASSERT(share(b, 3, 2) > 62.0 && share(b, 3, 2) < 63.0);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("wbt_share", NULL, NULL);
	CU_add_test(s, "charge_by_weight", test_charge_by_weight);
	CU_add_test(s, "wait_counts", test_wait_counts);
	CU_add_test(s, "least_goes", test_least_goes);
	CU_add_test(s, "only_those_who_could_take", test_only_those_who_could_take);
	CU_add_test(s, "owed_class_could_take", test_owed_class_could_take);
	CU_add_test(s, "arrival_placed_within_lag", test_arrival_placed_within_lag);
	CU_add_test(s, "stale_holds_nobody", test_stale_holds_nobody);
	CU_add_test(s, "wrap", test_wrap);
	CU_add_test(s, "loop_shares_by_weight", test_loop_shares_by_weight);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails == 0 ? 0 : 1;
}
