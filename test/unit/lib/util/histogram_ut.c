/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/util/histogram.c: bucket bounds cover every value once with relative
 * width <= 1/64, percentiles of known distributions within that bound (and exact where
 * the buckets are exact), merge, mean, iteration, and the edges 0 and UINT64_MAX.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/histogram.c"

#include "ut_main.h"

static struct nvp_histogram g_h, g_h2;

/* True when @got is at or above @want and by less than 1/64 of @want. */
static int
within_bound(uint64_t got, uint64_t want)
{
	return got >= want && (got - want) * 64 < want + (want == 0);
}

static void
test_bucket_bounds(void)
{
	uint32_t i;

	CU_ASSERT_EQUAL(nvp_histogram_bucket_low(0), 0);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_high(NVP_HISTOGRAM_NUM_BUCKETS - 1), UINT64_MAX);
	for (i = 0; i < NVP_HISTOGRAM_NUM_BUCKETS; i++) {
		uint64_t lo = nvp_histogram_bucket_low(i), hi = nvp_histogram_bucket_high(i);

		CU_ASSERT(lo <= hi);
		/* contiguous: each bucket starts right after the previous one */
		if (i > 0) {
			CU_ASSERT_EQUAL(lo, nvp_histogram_bucket_high(i - 1) + 1);
		}
		/* both ends map back to the bucket */
		CU_ASSERT_EQUAL(nvp_histogram_bucket_index(lo), i);
		CU_ASSERT_EQUAL(nvp_histogram_bucket_index(hi), i);
		/* relative width bound: (hi - lo) < lo / 64, exact below 64 */
		if (lo < NVP_HISTOGRAM_SUB_COUNT) {
			CU_ASSERT_EQUAL(lo, hi);
		} else {
			CU_ASSERT((hi - lo) < lo / 64 + 1);
			CU_ASSERT((hi - lo + 1) * 64 <= lo);
		}
	}
}

/* The index as first written (a branch below 64, then range and sub-bucket): the
 * branchless one must agree with it everywhere. */
static uint32_t
ref_bucket_index(uint64_t value)
{
	uint32_t msb, shift;

	if (value < NVP_HISTOGRAM_SUB_COUNT) {
		return (uint32_t)value;
	}
	msb = 63u - (uint32_t)__builtin_clzll(value);
	shift = msb - NVP_HISTOGRAM_SUB_BITS;
	return ((shift + 1) << NVP_HISTOGRAM_SUB_BITS) +
	       (uint32_t)((value >> shift) - NVP_HISTOGRAM_SUB_COUNT);
}

static void
test_bucket_index_reference(void)
{
	uint64_t v, x = 0x9e3779b97f4a7c15ull;
	uint32_t bad = 0;
	int k, i;

	for (v = 0; v < 4096; v++) {
		bad += nvp_histogram_bucket_index(v) != ref_bucket_index(v);
	}
	for (k = 6; k < 64; k++) {
		v = 1ull << k;
		bad += nvp_histogram_bucket_index(v - 1) != ref_bucket_index(v - 1);
		bad += nvp_histogram_bucket_index(v) != ref_bucket_index(v);
		bad += nvp_histogram_bucket_index(v + 1) != ref_bucket_index(v + 1);
	}
	bad += nvp_histogram_bucket_index(UINT64_MAX) != ref_bucket_index(UINT64_MAX);
	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (x & 63); /* every magnitude */
		bad += nvp_histogram_bucket_index(v) != ref_bucket_index(v);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(UINT64_MAX), NVP_HISTOGRAM_NUM_BUCKETS - 1);
}

static void
test_empty(void)
{
	nvp_histogram_init(&g_h);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_h), 0);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), 0);
	CU_ASSERT_EQUAL(nvp_histogram_max(&g_h), 0);
	CU_ASSERT_EQUAL(nvp_histogram_mean(&g_h), 0.0);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 50.0), 0);
}

/* 1..1000 once each: percentile p is exactly value 10p; the report is within 1/64. */
static void
test_uniform_percentiles(void)
{
	static const double ps[] = { 1, 10, 25, 50, 90, 99, 99.9 };
	uint64_t v;
	size_t i;

	nvp_histogram_init(&g_h);
	for (v = 1000; v >= 1; v--) {
		nvp_histogram_record(&g_h, v);
	}
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_h), 1000);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), 1);
	CU_ASSERT_EQUAL(nvp_histogram_max(&g_h), 1000);
	CU_ASSERT_DOUBLE_EQUAL(nvp_histogram_mean(&g_h), 500.5, 1e-9);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = (uint64_t)ceil(ps[i] * 10.0 - 1e-9);
		uint64_t got = nvp_histogram_value_at_percentile(&g_h, ps[i]);

		CU_ASSERT(within_bound(got, want));
	}
	/* exact region: below 64 every value has its own bucket */
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 5.0), 50);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 0.1), 1);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 0.0), 1);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 100.0), 1000);
	/* the top percentile is clamped to the exact max */
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 99.95), 1000);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Random log-spread values: every percentile against the sorted truth. */
static void
test_random_percentiles(void)
{
	enum {
		N = 20000
	};
	static uint64_t vals[N];
	uint64_t x = 88172645463325252ull;
	double p;
	size_t i;

	nvp_histogram_init(&g_h);
	for (i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		vals[i] = x >> (x % 60); /* magnitudes from 2^4 to 2^64 */
		nvp_histogram_record(&g_h, vals[i]);
	}
	qsort(vals, N, sizeof(vals[0]), cmp_u64);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), vals[0]);
	CU_ASSERT_EQUAL(nvp_histogram_max(&g_h), vals[N - 1]);
	for (p = 0.5; p < 100.0; p += 0.5) {
		size_t rank = (size_t)ceil(p / 100.0 * N - 1e-9);
		uint64_t got = nvp_histogram_value_at_percentile(&g_h, p);

		CU_ASSERT(within_bound(got, vals[rank - 1]));
	}
}

/* A bimodal latency shape: 99 % at 100 us, 1 % at 5 ms (in ns ticks). */
static void
test_bimodal(void)
{
	int i;

	nvp_histogram_init(&g_h);
	for (i = 0; i < 9900; i++) {
		nvp_histogram_record(&g_h, 100000);
	}
	for (i = 0; i < 100; i++) {
		nvp_histogram_record(&g_h, 5000000);
	}
	CU_ASSERT(within_bound(nvp_histogram_value_at_percentile(&g_h, 50), 100000));
	CU_ASSERT(within_bound(nvp_histogram_value_at_percentile(&g_h, 99), 100000));
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 99.01), 5000000);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 99.99), 5000000);
	CU_ASSERT_DOUBLE_EQUAL(nvp_histogram_mean(&g_h), (9900.0 * 1e5 + 100 * 5e6) / 1e4, 1e-6);
}

static void
test_edges(void)
{
	nvp_histogram_init(&g_h);
	nvp_histogram_record(&g_h, 0);
	nvp_histogram_record(&g_h, UINT64_MAX);
	nvp_histogram_record(&g_h, UINT64_MAX);
	nvp_histogram_record(&g_h, UINT64_MAX - 1);
	CU_ASSERT_EQUAL(g_h.buckets[0], 1);
	CU_ASSERT_EQUAL(g_h.buckets[NVP_HISTOGRAM_NUM_BUCKETS - 1], 3);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), 0);
	CU_ASSERT_EQUAL(nvp_histogram_max(&g_h), UINT64_MAX);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 25), 0);
	CU_ASSERT_EQUAL(nvp_histogram_value_at_percentile(&g_h, 26), UINT64_MAX);
	/* the 128-bit sum does not wrap: mean of {0, 3 x ~2^64} is ~0.75 x 2^64 */
	CU_ASSERT_DOUBLE_EQUAL(nvp_histogram_mean(&g_h) / 18446744073709551616.0, 0.75, 1e-12);
	/* powers of two land at the start of a bucket */
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(63), 63);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(64), 64);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(127), 127);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(128), 128);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_index(129), 128);
	CU_ASSERT_EQUAL(nvp_histogram_bucket_low(nvp_histogram_bucket_index(1ull << 40)),
			1ull << 40);
}

static void
test_merge(void)
{
	uint64_t v;

	nvp_histogram_init(&g_h);
	nvp_histogram_init(&g_h2);
	for (v = 1; v <= 500; v++) {
		nvp_histogram_record(&g_h, v);
	}
	for (v = 501; v <= 1000; v++) {
		nvp_histogram_record(&g_h2, v);
	}
	nvp_histogram_merge(&g_h, &g_h2);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_h), 1000);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_h2), 500);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), 1);
	CU_ASSERT_EQUAL(nvp_histogram_max(&g_h), 1000);
	CU_ASSERT_DOUBLE_EQUAL(nvp_histogram_mean(&g_h), 500.5, 1e-9);
	CU_ASSERT(within_bound(nvp_histogram_value_at_percentile(&g_h, 75), 750));
	/* merging an empty histogram changes nothing, into an empty one copies */
	nvp_histogram_init(&g_h2);
	nvp_histogram_merge(&g_h, &g_h2);
	CU_ASSERT_EQUAL(nvp_histogram_min(&g_h), 1);
	nvp_histogram_merge(&g_h2, &g_h);
	CU_ASSERT_EQUAL(memcmp(&g_h, &g_h2, sizeof(g_h)), 0);
	/* sum carry across the merge */
	nvp_histogram_init(&g_h);
	nvp_histogram_init(&g_h2);
	nvp_histogram_record(&g_h, UINT64_MAX);
	nvp_histogram_record(&g_h2, UINT64_MAX);
	nvp_histogram_merge(&g_h, &g_h2);
	CU_ASSERT_EQUAL(g_h.sum_hi, 1);
	CU_ASSERT_EQUAL(g_h.sum_lo, UINT64_MAX - 1);
}

struct walk {
	uint64_t buckets, total, last_high, last_cum;
	int bad;
	int stop_after;
};

static int
walk_cb(void *ctx, uint64_t low, uint64_t high, uint64_t count, uint64_t cumulative)
{
	struct walk *w = ctx;

	if (w->buckets > 0 && low <= w->last_high) {
		w->bad = 1;
	}
	if (cumulative != w->last_cum + count || count == 0) {
		w->bad = 1;
	}
	w->buckets++;
	w->total += count;
	w->last_high = high;
	w->last_cum = cumulative;
	return w->stop_after != 0 && (int)w->buckets == w->stop_after ? 7 : 0;
}

static void
test_iterate(void)
{
	struct walk w;
	uint64_t v;

	nvp_histogram_init(&g_h);
	for (v = 0; v < 64; v++) {
		nvp_histogram_record(&g_h, v);
	}
	for (v = 0; v < 10; v++) {
		nvp_histogram_record(&g_h, 1000000);
	}
	memset(&w, 0, sizeof(w));
	CU_ASSERT_EQUAL(nvp_histogram_iterate(&g_h, walk_cb, &w), 0);
	CU_ASSERT_EQUAL(w.buckets, 65);
	CU_ASSERT_EQUAL(w.total, 74);
	CU_ASSERT_EQUAL(w.last_cum, 74);
	CU_ASSERT_EQUAL(w.bad, 0);
	CU_ASSERT(w.last_high >= 1000000 && w.last_high - 1000000 < 1000000 / 64);

	memset(&w, 0, sizeof(w));
	w.stop_after = 3;
	CU_ASSERT_EQUAL(nvp_histogram_iterate(&g_h, walk_cb, &w), 7);
	CU_ASSERT_EQUAL(w.buckets, 3);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_bucket_bounds),
		UT_TEST(test_bucket_index_reference),
		UT_TEST(test_empty),
		UT_TEST(test_uniform_percentiles),
		UT_TEST(test_random_percentiles),
		UT_TEST(test_bimodal),
		UT_TEST(test_edges),
		UT_TEST(test_merge),
		UT_TEST(test_iterate),
	};

	return ut_run("histogram", tests, sizeof(tests) / sizeof(tests[0]));
}
