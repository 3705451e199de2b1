/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/poll/poll_stats.c: buckets by (opcode, log2 size), windows, the
 * minimum sample count (exactly reached, by variable samples), the mean and percentile
 * predictors, and what a bucket keeps when a window brings no samples.
 */
#include "poll_ut_fake.h"

#include "nvpoll/nvme_spec.h"
#include "poll/poll_stats.c"

#include "../ut_lat.h"

static void
test_buckets(void)
{
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, 512), 0);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, 4096), 3);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, 8191), 3);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, 8192), 4);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, 0), 0);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_WRITE, 4096), POLL_SIZE_CLASSES + 3);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_FLUSH, 0), 2 * POLL_SIZE_CLASSES);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_COMPARE, 4096), 2 * POLL_SIZE_CLASSES + 3);
	CU_ASSERT_EQUAL(poll_bucket_of(NVME_OPC_READ, UINT32_MAX), 22); /* 4 GiB - 1 >> 9 */
	CU_ASSERT(poll_bucket_of(NVME_OPC_WRITE, UINT32_MAX) < POLL_NR_BUCKETS);
}

static void
test_window_and_predictors(void)
{
	struct poll_stats_tab t;
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);

	poll_stats_init(&t, 1000, 8, 10, 0);
	for (uint64_t i = 1; i <= 7; i++) {
		poll_stats_add(&t, b, i * 100);
	}
	CU_ASSERT_FALSE(poll_stats_roll(&t, 999));
	CU_ASSERT_TRUE(poll_stats_roll(&t, 1000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 0); /* 7 < 8 samples: nothing published */
	for (uint64_t i = 1; i <= 10; i++) {
		poll_stats_add(&t, b, i * 100); /* 100 .. 1000 */
	}
	CU_ASSERT_FALSE(poll_stats_roll(&t, 1500));
	CU_ASSERT_TRUE(poll_stats_roll(&t, 2000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 100); /* p10 of 100..1000 */
	CU_ASSERT_EQUAL(t.b[b].mean, 550);
	/* A window without samples keeps what was published. */
	CU_ASSERT_TRUE(poll_stats_roll(&t, 3000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 100);
	/* Changing the predictor drops what was published for the old one. */
	poll_stats_set_pct(&t, 0);
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 0);
	for (uint64_t i = 1; i <= 10; i++) {
		poll_stats_add(&t, b, i * 100);
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 4000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 275); /* half the mean */
	poll_stats_set_pct(&t, 90);
	for (uint64_t i = 1; i <= 10; i++) {
		poll_stats_add(&t, b, i * 100);
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 5000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 900);
}

/*
 * A bucket without a prediction publishes one at its min_samples-th sample, mid-window:
 * its requests are spun for until then. Once it has one, new samples wait for the
 * window's end.
 */
static void
test_first_prediction_early(void)
{
	struct poll_stats_tab t;
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);

	poll_stats_init(&t, 1000, 8, 10, 0);
	for (uint64_t i = 1; i <= 7; i++) {
		poll_stats_add(&t, b, i * 100);
	}
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 0);
	poll_stats_add(&t, b, 800);
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 100); /* p10 of 100..800, before the roll */
	for (uint32_t i = 0; i < 20; i++) {
		poll_stats_add(&t, b, 50);
	}
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 100); /* kept until the window ends */
	CU_ASSERT_TRUE(poll_stats_roll(&t, 1000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 50); /* the whole window's p10 */
	/* A new predictor starts over, and learns as fast. */
	poll_stats_set_pct(&t, 0);
	for (uint64_t i = 1; i <= 8; i++) {
		poll_stats_add(&t, b, i * 100);
	}
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 225); /* half the mean of 100..800 */
}

/* More samples than the ring: the percentile comes from the newest POLL_RING. */
static void
test_ring_keeps_newest(void)
{
	struct poll_stats_tab t;
	uint16_t b = poll_bucket_of(NVME_OPC_WRITE, 4096);

	poll_stats_init(&t, 1000, 8, 50, 0);
	for (uint32_t i = 0; i < 1000; i++) {
		poll_stats_add(&t, b, i < 1000 - POLL_RING ? 1 : 5000);
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 1000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 5000);
	CU_ASSERT(t.b[b].mean < 5000); /* the mean sees every sample */
}

/*
 * A rarely used bucket (a 1 MiB write every 12 ms: eight in a 100 ms window, the
 * default min_samples) publishes from a window of exactly min_samples, not one fewer,
 * the first time and every time after.
 * Its samples vary as a device's do; the mean is theirs.
 */
static void
test_min_samples_exactly(void)
{
	struct poll_stats_tab t;
	uint16_t b = poll_bucket_of(NVME_OPC_WRITE, 1u << 20);
	struct ut_lat rng;
	uint64_t sum = 0, v;

	ut_lat_seed(&rng, 1);
	poll_stats_init(&t, 100000, POLL_DEFAULT_MIN_SAMPLES, 0, 0);
	for (uint32_t i = 0; i < POLL_DEFAULT_MIN_SAMPLES - 1; i++) {
		poll_stats_add(&t, b, ut_lat_lognormal(&rng, 2000, 6000));
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 100000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), 0);
	for (uint32_t i = 0; i < POLL_DEFAULT_MIN_SAMPLES; i++) {
		v = ut_lat_lognormal(&rng, 2000, 6000);
		sum += v;
		poll_stats_add(&t, b, v);
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 200000));
	CU_ASSERT_EQUAL(t.b[b].mean, sum / POLL_DEFAULT_MIN_SAMPLES);
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), sum / POLL_DEFAULT_MIN_SAMPLES / 2);
	/*
	 * That first prediction came mid-window, at the min_samples-th sample; a bucket that
	 * predicts already publishes only at a window's end, from exactly min_samples too.
	 */
	sum = 0;
	for (uint32_t i = 0; i < POLL_DEFAULT_MIN_SAMPLES; i++) {
		v = ut_lat_lognormal(&rng, 8000, 20000);
		sum += v;
		poll_stats_add(&t, b, v);
	}
	CU_ASSERT_TRUE(poll_stats_roll(&t, 300000));
	CU_ASSERT_EQUAL(poll_stats_expect(&t, b), sum / POLL_DEFAULT_MIN_SAMPLES / 2);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_buckets),
		UT_TEST(test_window_and_predictors),
		UT_TEST(test_first_prediction_early),
		UT_TEST(test_ring_keeps_newest),
		UT_TEST(test_min_samples_exactly),
	};

	return ut_run("poll_stats", tests, NVP_COUNTOF(tests));
}
