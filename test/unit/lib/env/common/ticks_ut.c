/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_common/ticks.c: TSC check, calibration, delays, thread CPU
 * time. Only lower bounds and generous upper bounds on time: no timing assertions that a
 * loaded machine could break.
 */
#define _GNU_SOURCE
#include <time.h>

#include "env_common/ticks.c"

#include "../../util/ut_main.h"

static uint64_t
ns_counter(void)
{
	return env_clock_ns();
}

/* A counter at 3 GHz equivalent, derived from the clock. */
static uint64_t
fast_counter(void)
{
	return env_clock_ns() * 3;
}

static void
test_calibrate(void)
{
	uint64_t hz = env_ticks_calibrate(ns_counter);

	CU_ASSERT(hz > 990000000ull && hz < 1010000000ull);
	hz = env_ticks_calibrate(fast_counter);
	CU_ASSERT(hz > 2970000000ull && hz < 3030000000ull);
	CU_ASSERT_EQUAL(hz % 10000, 0); /* rounded to 10 kHz */
}

static void
test_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t a = env_rdtsc();
	uint64_t b = env_rdtsc();

	CU_ASSERT(b >= a);
	if (env_tsc_is_usable()) {
		uint64_t hz = env_ticks_calibrate(env_rdtsc);

		printf("  TSC %.3f MHz\n", (double)hz / 1e6);
		CU_ASSERT(hz > 100000000ull); /* any x86 with an invariant TSC */
	}
#else
	CU_ASSERT_FALSE(env_tsc_is_usable());
#endif
}

static void
test_delay(void)
{
	static const uint32_t us[] = { 0, 1, 50, 199, 200, 201, 1000, 20000 };
	size_t i;

	for (i = 0; i < NVP_COUNTOF(us); i++) {
		uint64_t t0 = env_clock_ns();
		uint64_t dt;

		env_delay_us(us[i], ns_counter, 1000000000ull);
		dt = env_clock_ns() - t0;
		CU_ASSERT(dt >= (uint64_t)us[i] * 1000);
		CU_ASSERT(dt < (uint64_t)us[i] * 1000 + 1000000000ull);
	}
}

static void
test_thread_cpu_ns(void)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 20000000 };
	volatile uint64_t sink = 0;
	uint64_t c0, c1, c2, t0;

	c0 = nvp_env_thread_cpu_ns();
	t0 = env_clock_ns();
	while (env_clock_ns() - t0 < 20000000ull) {
		sink++;
	}
	c1 = nvp_env_thread_cpu_ns();
	/* Busy for 20 ms of wall time: some CPU time was used (at least a little). */
	CU_ASSERT(c1 > c0);
	CU_ASSERT(c1 - c0 <= 20000000ull + 5000000ull + (env_clock_ns() - t0));
	nanosleep(&nap, NULL);
	c2 = nvp_env_thread_cpu_ns();
	/* Sleeping 20 ms costs far less than 20 ms of CPU. */
	CU_ASSERT(c2 - c1 < 10000000ull);
	(void)sink;
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_calibrate),
		UT_TEST(test_tsc),
		UT_TEST(test_delay),
		UT_TEST(test_thread_cpu_ns),
	};

	return ut_run("ticks", tests, NVP_COUNTOF(tests));
}
