/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_posix/posix_time.c: ticks before any init, a rate that matches
 * CLOCK_MONOTONIC, fixed once, the same from racing threads, and delays. Generous bounds:
 * no assertion a loaded machine could break.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include "env_posix/posix_time.c"

#include "../../util/ut_main.h"

static void
test_ticks_before_anything(void)
{
	/* First call in the process: picks the source lazily. */
	uint64_t a = nvp_env_get_ticks();
	uint64_t b = nvp_env_get_ticks();

	CU_ASSERT(a > 0);
	CU_ASSERT(b >= a);
	CU_ASSERT_NOT_EQUAL(atomic_load(&g_source), TICKS_UNKNOWN);
	printf("  source: %s\n", atomic_load(&g_source) == TICKS_TSC ? "TSC" : "clock");
}

static uint64_t g_hz_seen[4];

static void *
hz_thread(void *arg)
{
	*(uint64_t *)arg = nvp_env_get_ticks_hz();
	return NULL;
}

static void
test_hz_once_from_racing_threads(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, hz_thread, &g_hz_seen[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
	}
	CU_ASSERT(g_hz_seen[0] > 0);
	for (i = 1; i < 4; i++) {
		CU_ASSERT_EQUAL(g_hz_seen[i], g_hz_seen[0]);
	}
	CU_ASSERT_EQUAL(nvp_env_get_ticks_hz(), g_hz_seen[0]);
}

static void
test_rate_matches_clock(void)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 50000000 };
	uint64_t hz = nvp_env_get_ticks_hz();
	uint64_t t0 = env_clock_ns(), k0 = nvp_env_get_ticks();
	uint64_t t1, k1;
	double measured;

	nanosleep(&nap, NULL);
	k1 = nvp_env_get_ticks();
	t1 = env_clock_ns();
	measured = (double)(k1 - k0) * 1e9 / (double)(t1 - t0);
	printf("  %" PRIu64 " Hz calibrated, %.0f Hz measured\n", hz, measured);
	CU_ASSERT(measured > (double)hz * 0.95 && measured < (double)hz * 1.05);
}

static void
test_delay(void)
{
	static const uint32_t us[] = { 0, 10, 100, 500, 5000 };
	size_t i;

	for (i = 0; i < NVP_COUNTOF(us); i++) {
		uint64_t t0 = env_clock_ns();

		nvp_env_delay_us(us[i]);
		/* The tick rate is rounded to 10 kHz: allow that much short. */
		CU_ASSERT(env_clock_ns() - t0 >= (uint64_t)us[i] * 999);
	}
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_ticks_before_anything),
		UT_TEST(test_hz_once_from_racing_threads),
		UT_TEST(test_rate_matches_clock),
		UT_TEST(test_delay),
	};

	return ut_run("posix_time", tests, NVP_COUNTOF(tests));
}
