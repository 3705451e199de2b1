/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * A log-linear histogram of 64-bit values (latencies in ticks, sizes), in the manner of
 * HdrHistogram and SPDK's histogram_data.h: constant memory, O(1) recording (one clz),
 * bounded relative error.
 *
 * Layout: values 0..63 have a bucket each (exact). Above that, every power of two
 * [2^k, 2^(k+1)) for k = 6..63 is split into NVP_HISTOGRAM_SUB_COUNT (64) equal buckets of
 * width 2^(k-6). A bucket's width is at most 1/64 of its lowest value, so any value
 * reported for a bucket (its highest value, clamped to the recorded min/max) is within
 * 1/64 (1.6 %) of every value counted in it, relative to that value.
 *
 * A histogram is not thread-safe: give each thread its own and merge them afterwards.
 * The structure is public so it can be embedded; it is about 30 KiB.
 */
#ifndef NVPOLL_HISTOGRAM_H
#define NVPOLL_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVP_HISTOGRAM_SUB_BITS 6
#define NVP_HISTOGRAM_SUB_COUNT (1u << NVP_HISTOGRAM_SUB_BITS)
/* Range 0 holds 0..63 exactly; ranges 1..58 hold [2^(r+5), 2^(r+6)). */
#define NVP_HISTOGRAM_NUM_RANGES (64 - NVP_HISTOGRAM_SUB_BITS + 1)
#define NVP_HISTOGRAM_NUM_BUCKETS (NVP_HISTOGRAM_NUM_RANGES * NVP_HISTOGRAM_SUB_COUNT)

struct nvp_histogram {
	uint64_t count;
	uint64_t min; /**< UINT64_MAX while empty */
	uint64_t max;
	uint64_t sum_lo; /**< 128-bit sum of the values, for the mean */
	uint64_t sum_hi;
	uint64_t buckets[NVP_HISTOGRAM_NUM_BUCKETS];
};

/** Empty @h (also what a fresh histogram needs before its first record). */
void nvp_histogram_init(struct nvp_histogram *h);

/**
 * Index of the bucket counting @value (0 .. NVP_HISTOGRAM_NUM_BUCKETS - 1). Without a
 * branch: with s = max(0, msb(@value) - SUB_BITS), the index is s * SUB_COUNT +
 * (@value >> s) — for values below SUB_COUNT s is 0 (the OR makes msb SUB_BITS), and
 * above, (@value >> s) is SUB_COUNT plus the sub-bucket, which steps over range 0.
 */
static inline uint64_t
nvp_histogram_bucket_index64(uint64_t value)
{
	/* msb = 63 - clz = 63 ^ clz (clz is 0..63): written so, compilers use the bit scan's
	 * result as it is (one instruction, not three) */
	unsigned int shift = (63u ^
			      (unsigned int)__builtin_clzll(value | NVP_HISTOGRAM_SUB_COUNT)) -
			     NVP_HISTOGRAM_SUB_BITS;

	return ((uint64_t)shift << NVP_HISTOGRAM_SUB_BITS) + (value >> shift);
}

static inline uint32_t
nvp_histogram_bucket_index(uint64_t value)
{
	return (uint32_t)nvp_histogram_bucket_index64(value);
}

/** Count one @value. O(1), no allocation. */
static inline void
nvp_histogram_record(struct nvp_histogram *h, uint64_t value)
{
	h->sum_hi += __builtin_add_overflow(h->sum_lo, value, &h->sum_lo); /* carry */
	h->buckets[nvp_histogram_bucket_index64(value)]++;
	h->count++;
	if (value < h->min) {
		h->min = value;
	}
	if (value > h->max) {
		h->max = value;
	}
}

/** Lowest value counted by bucket @index. */
uint64_t nvp_histogram_bucket_low(uint32_t index);

/** Highest value counted by bucket @index. */
uint64_t nvp_histogram_bucket_high(uint32_t index);

/** Add the counts of @src into @dst (@src unchanged). */
void nvp_histogram_merge(struct nvp_histogram *dst, const struct nvp_histogram *src);

/** Values recorded. */
uint64_t nvp_histogram_count(const struct nvp_histogram *h);

/** Smallest / largest value recorded (exact); 0 when empty. */
uint64_t nvp_histogram_min(const struct nvp_histogram *h);
uint64_t nvp_histogram_max(const struct nvp_histogram *h);

/** Mean of the values recorded (exact sum, rounded to double); 0 when empty. */
double nvp_histogram_mean(const struct nvp_histogram *h);

/**
 * The value at percentile @p (0..100): the highest value of the bucket holding the
 * ceil(p/100 * count)-th smallest value (at least the first), clamped to [min, max]. It
 * is >= the true percentile value and exceeds it by less than 1/64 of it. p <= 0 gives
 * min, p >= 100 gives max; 0 when empty.
 */
uint64_t nvp_histogram_value_at_percentile(const struct nvp_histogram *h, double p);

/**
 * Called for each non-empty bucket, lowest first: its value range [@low, @high], its
 * count, and the count of values in it and all buckets below (@cumulative). Return
 * non-zero to stop the walk.
 */
typedef int (*nvp_histogram_iter_cb)(void *ctx, uint64_t low, uint64_t high, uint64_t count,
				     uint64_t cumulative);

/**
 * Walk the non-empty buckets. \return 0, or the first non-zero value @cb returned (no
 * errno of its own).
 */
int nvp_histogram_iterate(const struct nvp_histogram *h, nvp_histogram_iter_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_HISTOGRAM_H */
