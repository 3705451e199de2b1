/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log-linear histogram (include/nvpoll/histogram.h). Recording is inline in the header;
 * this file holds what runs once per report: bucket bounds, merge, percentiles, walks.
 */
#include <string.h>

#include "nvpoll/histogram.h"

void
nvp_histogram_init(struct nvp_histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t
nvp_histogram_bucket_low(uint32_t index)
{
	uint32_t range = index >> NVP_HISTOGRAM_SUB_BITS;
	uint64_t sub = index & (NVP_HISTOGRAM_SUB_COUNT - 1);

	if (range == 0) {
		return sub;
	}
	/* range r covers [2^(r+5), 2^(r+6)) in buckets of 2^(r-1) */
	return (NVP_HISTOGRAM_SUB_COUNT + sub) << (range - 1);
}

uint64_t
nvp_histogram_bucket_high(uint32_t index)
{
	uint32_t range = index >> NVP_HISTOGRAM_SUB_BITS;

	if (index >= NVP_HISTOGRAM_NUM_BUCKETS - 1) {
		return UINT64_MAX;
	}
	if (range == 0) {
		return index;
	}
	return nvp_histogram_bucket_low(index) + ((uint64_t)1 << (range - 1)) - 1;
}

void
nvp_histogram_merge(struct nvp_histogram *dst, const struct nvp_histogram *src)
{
	uint64_t lo;
	uint32_t i;

	if (src->count == 0) {
		return;
	}
	for (i = 0; i < NVP_HISTOGRAM_NUM_BUCKETS; i++) {
		dst->buckets[i] += src->buckets[i];
	}
	dst->count += src->count;
	lo = dst->sum_lo + src->sum_lo;
	dst->sum_hi += src->sum_hi + (lo < src->sum_lo);
	dst->sum_lo = lo;
	if (src->min < dst->min) {
		dst->min = src->min;
	}
	if (src->max > dst->max) {
		dst->max = src->max;
	}
}

uint64_t
nvp_histogram_count(const struct nvp_histogram *h)
{
	return h->count;
}

uint64_t
nvp_histogram_min(const struct nvp_histogram *h)
{
	return h->count == 0 ? 0 : h->min;
}

uint64_t
nvp_histogram_max(const struct nvp_histogram *h)
{
	return h->count == 0 ? 0 : h->max;
}

double
nvp_histogram_mean(const struct nvp_histogram *h)
{
	double sum;

	if (h->count == 0) {
		return 0.0;
	}
	sum = (double)h->sum_hi * 18446744073709551616.0 + (double)h->sum_lo;
	return sum / (double)h->count;
}

static uint64_t
clamp(const struct nvp_histogram *h, uint64_t v)
{
	if (v < h->min) {
		return h->min;
	}
	return v > h->max ? h->max : v;
}

uint64_t
nvp_histogram_value_at_percentile(const struct nvp_histogram *h, double p)
{
	uint64_t rank, seen = 0;
	double want;
	uint32_t i;

	if (h->count == 0) {
		return 0;
	}
	if (p <= 0.0) {
		return h->min;
	}
	if (p >= 100.0) {
		return h->max;
	}
	/* rank of the value wanted, 1-based: ceil(p% of count), at least 1 */
	want = p / 100.0 * (double)h->count;
	rank = (uint64_t)want;
	if ((double)rank < want) {
		rank++;
	}
	if (rank == 0) {
		rank = 1;
	}
	for (i = 0; i < NVP_HISTOGRAM_NUM_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			return clamp(h, nvp_histogram_bucket_high(i));
		}
	}
	return h->max;
}

int
nvp_histogram_iterate(const struct nvp_histogram *h, nvp_histogram_iter_cb cb, void *ctx)
{
	uint64_t seen = 0;
	uint32_t i;
	int rc;

	for (i = 0; i < NVP_HISTOGRAM_NUM_BUCKETS; i++) {
		if (h->buckets[i] == 0) {
			continue;
		}
		seen += h->buckets[i];
		rc = cb(ctx, nvp_histogram_bucket_low(i), nvp_histogram_bucket_high(i),
			h->buckets[i], seen);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}
