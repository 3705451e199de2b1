/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for util.h's tick conversions: rounding down, exact, and no overflow. */
#include <stdint.h>

#include "nvpoll/util.h"

#include "ut_main.h"

static void
test_round_down(void)
{
	/* 3 ticks per us: 1 tick is 0 us; at 2.4 GHz 2999 ns is 7197 ticks (7197.6) */
	CU_ASSERT_EQUAL(nvp_us_to_ticks(7, 3000000u), 21);
	CU_ASSERT_EQUAL(nvp_ticks_to_us(1, 3000000u), 0);
	CU_ASSERT_EQUAL(nvp_ticks_to_us(5, 3000000u), 1);
	CU_ASSERT_EQUAL(nvp_ns_to_ticks(2999, 2400000000u), 7197);
	CU_ASSERT_EQUAL(nvp_ns_to_ticks(333, 1000000u), 0);
	CU_ASSERT_EQUAL(nvp_ticks_to_ns(7, 3000000000u), 2);
	CU_ASSERT_EQUAL(nvp_ms_to_ticks(3, 1001u), 3);
	CU_ASSERT_EQUAL(nvp_ticks_to_ms(2002, 1001u), 2000);
	CU_ASSERT_EQUAL(nvp_ticks_to_ms(1000, 1001u), 999);
	CU_ASSERT_EQUAL(nvp_us_to_ticks(0, 2400000000u), 0);
	CU_ASSERT_EQUAL(nvp_ticks_to_ns(0, 2400000000u), 0);
}

static void
test_exact_as_product(void)
{
	/* Where v * num fits, the result is v * num / den to the tick. */
	const uint64_t hz[] = { 1000000000u, 2399987000u, 3000000u, 1001u, 19200000u };
	uint64_t v;
	uint32_t i;

	for (i = 0; i < NVP_COUNTOF(hz); i++) {
		for (v = 0; v < 5000000u; v += 999983u / 7u) {
			CU_ASSERT_EQUAL(nvp_us_to_ticks(v, hz[i]), v * hz[i] / 1000000u);
			CU_ASSERT_EQUAL(nvp_ms_to_ticks(v, hz[i]), v * hz[i] / 1000u);
			CU_ASSERT_EQUAL(nvp_ns_to_ticks(v, hz[i]), v * hz[i] / 1000000000u);
			CU_ASSERT_EQUAL(nvp_ticks_to_us(v, hz[i]), v * 1000000u / hz[i]);
			CU_ASSERT_EQUAL(nvp_ticks_to_ms(v, hz[i]), v * 1000u / hz[i]);
			CU_ASSERT_EQUAL(nvp_ticks_to_ns(v, hz[i]), v * 1000000000u / hz[i]);
		}
	}
}

static void
test_no_overflow(void)
{
	/* A day of a 3 GHz counter in ns: ticks * 10^9 would overflow 64 bits. */
	const uint64_t hz = 3000000000u, day = 86400u * hz;

	CU_ASSERT_EQUAL(nvp_ticks_to_ns(day, hz), 86400000000000ull);
	CU_ASSERT_EQUAL(nvp_ticks_to_ns(day + 2, hz), 86400000000000ull);
	CU_ASSERT_EQUAL(nvp_ticks_to_ns(day + 3, hz), 86400000000001ull);
	CU_ASSERT_EQUAL(nvp_ticks_to_us(day, hz), 86400000000ull);
	/* A day in us to ticks: us * hz would overflow too. */
	CU_ASSERT_EQUAL(nvp_us_to_ticks(86400000000ull, hz), day);
	CU_ASSERT_EQUAL(nvp_ns_to_ticks(86400000000000ull + 1, hz), day + 3);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_round_down),
		UT_TEST(test_exact_as_product),
		UT_TEST(test_no_overflow),
	};

	return ut_run("time", tests, NVP_COUNTOF(tests));
}
