/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion-time statistics of the hybrid waiter: one bucket per (opcode class, log2
 * size), in ticks, per thread. Samples go into the current window; when the window ends
 * (100 ms by default, as the kernel's blk_stat) every bucket with enough samples
 * publishes what to sleep toward: half its mean (the kernel's rule) or a low percentile
 * of the window's last POLL_RING samples. A bucket without enough samples keeps what it
 * published before; one that never had enough publishes nothing, and its requests are
 * spun for. A bucket with no prediction publishes its first as soon as it has enough
 * samples, without waiting for the window's end.
 */
#include <stdlib.h>
#include <string.h>

#include "poll_internal.h"
#include "nvpoll/nvme_spec.h"

uint16_t
poll_bucket_of(uint8_t opc, uint32_t bytes)
{
	uint32_t cls = opc == NVME_OPC_READ ? 0 : opc == NVME_OPC_WRITE ? 1 : 2;
	uint32_t sz = 0;

	bytes >>= 9;
	while (bytes > 1 && sz < POLL_SIZE_CLASSES - 1) {
		bytes >>= 1;
		sz++;
	}
	return (uint16_t)(cls * POLL_SIZE_CLASSES + sz);
}

void
poll_stats_init(struct poll_stats_tab *t, uint64_t window_ticks, uint32_t min_samples, uint32_t pct,
		uint64_t now)
{
	memset(t, 0, sizeof(*t));
	t->window_start = now;
	t->window_ticks = window_ticks;
	t->min_samples = min_samples;
	t->pct = pct;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
bucket_publish(struct poll_bucket *b, uint32_t pct)
{
	uint64_t v[POLL_RING];
	uint32_t n = NVP_MIN(b->n, POLL_RING);

	b->mean = b->sum / b->n;
	if (pct == 0) {
		b->expect = b->mean / 2;
		return;
	}
	memcpy(v, b->ring, n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_u64);
	b->expect = v[(uint64_t)(n - 1) * pct / 100];
}

/*
 * A bucket that has no prediction yet publishes as soon as it has enough samples, not at
 * the end of the window: until then every request of it is spun for, which was the whole
 * first window of every run (100 ms: at 100 us a request, a thousand requests spun for,
 * 2 % of a 5 s run's and 10 % of a 1 s run's, at full CPU) and again after a change of
 * predictor. Its first prediction comes from the first min_samples samples (at p10 of 8,
 * their least: an early wake-up, which costs CPU, not latency); the window's end
 * publishes from all of them as usual.
 */
void
poll_stats_add(struct poll_stats_tab *t, uint16_t bucket, uint64_t ticks)
{
	struct poll_bucket *b = &t->b[bucket];

	b->ring[b->n % POLL_RING] = ticks;
	b->n++;
	b->sum += ticks;
	if (nvp_unlikely(b->expect == 0) && b->n == t->min_samples) {
		bucket_publish(b, t->pct);
	}
}

/*
 * End the window if it is over. \return true when it ended (expectations may have
 * changed).
 */
bool
poll_stats_roll(struct poll_stats_tab *t, uint64_t now)
{
	if (nvp_likely(now - t->window_start < t->window_ticks)) {
		return false;
	}
	for (uint32_t i = 0; i < POLL_NR_BUCKETS; i++) {
		struct poll_bucket *b = &t->b[i];

		if (b->n >= t->min_samples && b->n > 0) {
			bucket_publish(b, t->pct);
		}
		b->n = 0;
		b->sum = 0;
	}
	t->window_start = now;
	return true;
}

/* A new predictor: what was published must be recomputed, so start over. */
void
poll_stats_set_pct(struct poll_stats_tab *t, uint32_t pct)
{
	if (t->pct == pct) {
		return;
	}
	t->pct = pct;
	for (uint32_t i = 0; i < POLL_NR_BUCKETS; i++) {
		t->b[i].expect = 0;
		t->b[i].mean = 0;
	}
}

/*
 * A probe (a request spun for) that completed well before the prediction: the device got
 * faster (or was slow for a while and is back), and the requests that were slept for
 * cannot show it (they completed during the sleep). Predict from the probe itself until
 * the next window publishes: it is a true sample of the device as it is now. (Dropping
 * the prediction instead left the bucket spun for until then, up to a whole window: at
 * 100 us, the requests of two relearns in a 3 s run were 7 % of all.) A probe that was
 * itself fast by chance only makes the next sleeps short, which costs CPU, not latency.
 * \return true when relearnt.
 */
bool
poll_stats_probe(struct poll_stats_tab *t, uint16_t bucket, uint64_t ticks)
{
	struct poll_bucket *b = &t->b[bucket];

	if (b->expect == 0 || ticks * 4 >= b->expect * 3) {
		return false;
	}
	b->expect = t->pct == 0 ? ticks / 2 : ticks; /* what the predictor would say of it */
	return true;
}
