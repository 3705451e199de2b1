/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "kyber", after Linux's Kyber: I/O is sorted into four domains (read, write, discard,
 * other), each with a device-wide depth of tokens; a request reaches the device only
 * with a token of its domain. The depths follow latency: completions are counted per
 * domain in 8 buckets a quarter of the domain's target wide (bucket 3 ends at the
 * target), device latency for the congestion check and total latency (queueing
 * included) for the resize. When a window has enough samples (500, or a second's worth):
 * if any domain's device latency at the congestion percentile (congest_pct, 99) is over
 * its target, the device is congested and every domain with samples is resized to
 * depth * (p99 bucket + 1) / 4 — those under target shrink, those over it grow; without
 * congestion only domains over target grow. (Kyber's rule: kyber_timer_fn() and
 * kyber_resize_domain(); it judges at p90.) Two departures, for a QD1 reader beside a
 * write flood: a tail over target is congestion (at p90 the reader's worst 1 % were never
 * seen), and a congested domain cuts every domain with a looser target to at most half,
 * whatever that domain's own latency. On a saturated device a closed-loop writer's total
 * latency is its queue depth over the device's rate, which no token count changes: the
 * rule above grew the writes (over their target by a little) while reads waited behind
 * them.
 *
 * Per thread: a FIFO per domain, dispatched round-robin in batches per domain (16 reads,
 * 8 writes, 1 discard, 1 other), and running latency counts. Device-wide: tokens and
 * depths (atomics). The first thread past the window's end closes it (a compare-and-swap
 * on its end tick) and sums the channels' counts under the scheduler's channel-list lock,
 * once a window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "sched_internal.h"

#define KY_DOMAINS NVP_SCHED_KYBER_NUM_DOMAINS
#define KY_MEASURED 3u /* read, write, discard have targets; other does not */
#define KY_BUCKETS 8u
#define KY_GOOD_BUCKETS 4u /* buckets 0..3: at or under target */
#define KY_MIN_SAMPLES 500u
#define KY_INV_SHIFT 40u /* x < 8 widths: x * inv_width < 2^43 + 8 * width, no overflow */

static const uint32_t g_max_depth[KY_DOMAINS] = { 256, 128, 64, 16 };
static const uint32_t g_batch[KY_DOMAINS] = { 16, 8, 1, 1 };

enum {
	KY_IO_LAT = 0,
	KY_TOTAL_LAT = 1
};

struct ky_bdev {
	struct sched_common common; /* first: sched.c reads it */
	_Atomic uint32_t inflight[KY_DOMAINS];
	_Atomic uint32_t depth[KY_DOMAINS];
	/* window closer only, under common.lock: counts of destroyed channels, and how much of
	 * the channels' running counts earlier windows already used */
	uint64_t retired[KY_MEASURED][2][KY_BUCKETS];
	uint64_t taken[KY_MEASURED][2][KY_BUCKETS];
	_Atomic uint64_t win_end;
	uint64_t first_sample[KY_MEASURED][2]; /* window closer only: when counting began */
	int p99_saved[KY_MEASURED];            /* window closer only: last p99 seen, -1 none */
	uint64_t target[KY_MEASURED];          /* ticks */
	uint64_t width[KY_MEASURED];           /* ticks: a bucket, a quarter of the target */
	uint64_t inv_width[KY_MEASURED];       /* 2^KY_INV_SHIFT / width, rounded down */
	uint64_t win;                          /* ticks */
	uint64_t hz;
	uint32_t congest_pct; /* the device-latency percentile judged against the target */
	struct tok_hunger hunger[KY_DOMAINS]; /* a channel with none of a domain there waits */
	_Atomic uint64_t windows;
	_Atomic uint64_t congested;
	const char *name;
};

struct ky_channel {
	struct sched_chan base; /* first */
	struct ky_bdev *k;
	/* running latency counts, written by this thread only (no locked instruction) */
	_Atomic uint64_t buckets[KY_MEASURED][2][KY_BUCKETS];
	struct sched_fifo fifo[KY_DOMAINS];
	struct tok_cache tok[KY_DOMAINS];
	uint32_t at_device[KY_DOMAINS];          /* by domain: dispatched, not completed */
	struct tok_hunger_ch hungry[KY_DOMAINS]; /* its side of each domain's hunger */
	uint32_t busy;                           /* dispatched by this channel, not completed */
	uint32_t cur;                            /* domain being served */
	uint32_t batch_left;                     /* dispatches left in its batch */
	uint32_t queued;
};

static uint32_t
domain_of(const struct nvp_bdev_io *io)
{
	switch (io->type) {
	case NVP_BDEV_IO_READ:
		return NVP_SCHED_KYBER_READ;
	case NVP_BDEV_IO_WRITE:
	case NVP_BDEV_IO_WRITE_ZEROES:
		return NVP_SCHED_KYBER_WRITE;
	case NVP_BDEV_IO_UNMAP:
		return NVP_SCHED_KYBER_DISCARD;
	default:
		return NVP_SCHED_KYBER_OTHER;
	}
}

static void
ky_get_info(void *ctx, struct nvp_sched_info *info)
{
	struct ky_bdev *k = ctx;
	uint32_t d;

	for (d = 0; d < KY_DOMAINS; d++) {
		info->kyber_depth[d] = atomic_load_explicit(&k->depth[d], RLX);
		info->inflight += atomic_load_explicit(&k->inflight[d], RLX);
	}
	info->kyber_windows = atomic_load_explicit(&k->windows, RLX);
	info->kyber_congested = atomic_load_explicit(&k->congested, RLX);
}

static int
ky_init(struct nvp_bdev *bdev, const char *params, void **bdev_ctx)
{
	uint64_t rd = 2000, wr = 10000, dc = 5000000, win = 100, pct = 99;
	const struct nvp_kv_num table[] = {
		{ "read_lat_us", &rd, 1, 60000000 },    { "write_lat_us", &wr, 1, 60000000 },
		{ "discard_lat_us", &dc, 1, 60000000 }, { "window_ms", &win, 1, 10000 },
		{ "congest_pct", &pct, 50, 99 },        { NULL, NULL, 0, 0 },
	};
	struct ky_bdev *k;
	uint32_t d;

	if (nvp_kv_parse_nums(params, table, NVP_LOG_COMPONENT, "kyber", NULL, NULL) != 0) {
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (k == NULL) {
		return -ENOMEM;
	}
	sched_common_init(&k->common, "kyber", ky_get_info);
	k->name = nvp_bdev_get_name(bdev);
	k->hz = nvp_env_get_ticks_hz();
	k->target[NVP_SCHED_KYBER_READ] = sched_us_to_ticks(rd);
	k->target[NVP_SCHED_KYBER_WRITE] = sched_us_to_ticks(wr);
	k->target[NVP_SCHED_KYBER_DISCARD] = sched_us_to_ticks(dc);
	k->win = sched_us_to_ticks(win * 1000);
	k->congest_pct = (uint32_t)pct;
	for (d = 0; d < KY_DOMAINS; d++) {
		atomic_store_explicit(&k->depth[d], g_max_depth[d], RLX);
		k->hunger[d].hold = sched_us_to_ticks(SCHED_HUNGRY_US);
	}
	for (d = 0; d < KY_MEASURED; d++) {
		k->p99_saved[d] = -1;
		k->width[d] = NVP_MAX(k->target[d] / KY_GOOD_BUCKETS, 1);
		k->inv_width[d] = (1ull << KY_INV_SHIFT) / k->width[d];
	}
	atomic_store_explicit(&k->win_end, nvp_env_get_ticks() + k->win, RLX);
	*bdev_ctx = k;
	return 0;
}

static void
ky_fini(void *bdev_ctx)
{
	sched_common_fini(bdev_ctx);
	free(bdev_ctx);
}

static int
ky_channel_init(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx)
{
	struct ky_channel *c = calloc(1, sizeof(*c));

	(void)ch;
	if (c == NULL) {
		return -ENOMEM;
	}
	c->k = bdev_ctx;
	sched_chan_add(&c->k->common, &c->base);
	*ch_ctx = c;
	return 0;
}

static void
ky_channel_fini(void *ch_ctx)
{
	struct ky_channel *c = ch_ctx;
	uint32_t d, t, b;

	for (d = 0; d < KY_DOMAINS; d++) {
		tok_flush(&c->tok[d], &c->k->inflight[d]);
		tok_hunger_leave(&c->k->hunger[d], &c->hungry[d]);
	}
	pthread_mutex_lock(&c->k->common.lock);
	for (d = 0; d < KY_MEASURED; d++) {
		for (t = 0; t < 2; t++) {
			for (b = 0; b < KY_BUCKETS; b++) {
				c->k->retired[d][t][b] += atomic_load_explicit(&c->buckets[d][t][b],
									       RLX);
			}
		}
	}
	pthread_mutex_unlock(&c->k->common.lock);
	sched_chan_del(&c->k->common, &c->base);
	free(c);
}

static void
ky_submit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct ky_channel *c = ch_ctx;
	uint32_t d = domain_of(io);

	io->stage_data[0] = d;
	io->stage_data[1] = now; /* total latency counts from here */
	fifo_push(&c->fifo[d], io);
	c->queued++;
}

/* A token of domain @d, unless a channel with none of @d at the device waits for one
 * (tok_get_unless_hungry(): at a depth of 1 or 2, the channel that completes would take
 * each freed token before another is polled). */
static inline bool
ky_take_token(struct ky_channel *c, uint32_t d, uint64_t now)
{
	struct ky_bdev *k = c->k;

	return tok_get_unless_hungry(&c->tok[d], &k->inflight[d],
				     atomic_load_explicit(&k->depth[d], RLX), &k->hunger[d],
				     &c->hungry[d], c->at_device[d], now);
}

static struct nvp_bdev_io *
ky_dispatch(void *ch_ctx, uint64_t now)
{
	struct ky_channel *c = ch_ctx;
	uint32_t i, d;

	if (c->queued == 0) {
		return NULL;
	}
	/* the current domain while its batch lasts, then the next ones in turn */
	for (i = 0; i < KY_DOMAINS; i++) {
		d = (c->cur + i + (c->batch_left == 0 ? 1 : 0)) % KY_DOMAINS;
		if (c->fifo[d].count == 0 || !ky_take_token(c, d, now)) {
			continue;
		}
		if (d != c->cur || c->batch_left == 0) {
			c->cur = d;
			c->batch_left = g_batch[d];
		}
		c->batch_left--;
		c->queued--;
		c->busy++;
		c->at_device[d]++;
		chan_count(&c->base.dispatched, 1);
		return fifo_pop(&c->fifo[d]);
	}
	return NULL;
}

/* Nothing of this channel is queued: ky_submit() then ky_dispatch(), without the queue. */
static bool
ky_submit_direct(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct ky_channel *c = ch_ctx;
	uint32_t d = domain_of(io);

	if (nvp_unlikely(!ky_take_token(c, d, now))) {
		ky_submit(c, io, now);
		return false;
	}
	io->stage_data[0] = d;
	io->stage_data[1] = now;
	if (d != c->cur || c->batch_left == 0) {
		c->cur = d;
		c->batch_left = g_batch[d];
	}
	c->batch_left--;
	c->busy++;
	c->at_device[d]++;
	chan_count(&c->base.dispatched, 1);
	return true;
}

/*
 * The bucket of @lat in domain @d: (lat - 1) / width, width a quarter of the target, without
 * a division per I/O: an estimate from the reciprocal (never over), then one correction.
 * Latencies of 8 widths or more all go to the last bucket.
 */
static inline uint32_t
bucket_of(const struct ky_bdev *k, uint32_t d, uint64_t lat)
{
	uint64_t x = lat - 1, w = k->width[d], b;

	if (lat == 0) {
		return 0;
	}
	if (x >= w * KY_BUCKETS) {
		return KY_BUCKETS - 1;
	}
	b = (x * k->inv_width[d]) >> KY_INV_SHIFT;
	b += (b + 1) * w <= x;
	return (uint32_t)NVP_MIN(b, (uint64_t)KY_BUCKETS - 1);
}

/*
 * The bucket holding the @pct-th percentile of domain @d's @type histogram, or -1 when
 * it has too few samples yet (under KY_MIN_SAMPLES within a second of the first). Clears
 * the histogram when it answers. Window closer only.
 */
static int
percentile(struct ky_bdev *k, uint32_t d, int type, uint32_t pct, uint64_t now)
{
	uint64_t counts[KY_BUCKETS], sums[KY_BUCKETS], samples = 0, want;
	struct sched_chan *sc;
	uint32_t b;

	for (b = 0; b < KY_BUCKETS; b++) {
		sums[b] = k->retired[d][type][b];
		TAILQ_FOREACH (sc, &k->common.chans, link) {
			sums[b] += atomic_load_explicit(
				&((struct ky_channel *)sc)->buckets[d][type][b], RLX);
		}
		counts[b] = sums[b] - k->taken[d][type][b];
		samples += counts[b];
	}
	if (samples == 0) {
		return -1;
	}
	if (k->first_sample[d][type] == 0) {
		k->first_sample[d][type] = now;
	}
	if (samples < KY_MIN_SAMPLES && now - k->first_sample[d][type] < k->hz) {
		return -1;
	}
	k->first_sample[d][type] = 0;
	want = (samples * pct + 99) / 100;
	for (b = 0; b < KY_BUCKETS - 1 && counts[b] < want; b++) {
		want -= counts[b];
	}
	memcpy(k->taken[d][type], sums, sizeof(sums)); /* used: the next window starts here */
	return (int)b;
}

static void
resize(struct ky_bdev *k, uint32_t d, int p99)
{
	uint32_t old = atomic_load_explicit(&k->depth[d], RLX);
	uint32_t depth = (uint32_t)(((uint64_t)old * (uint32_t)(p99 + 1)) / KY_GOOD_BUCKETS);

	depth = NVP_MAX(1u, NVP_MIN(depth, g_max_depth[d]));
	if (depth != old) {
		atomic_store_explicit(&k->depth[d], depth, RLX);
		NVP_DEBUGLOG("%s: kyber %s depth %u -> %u (p99 bucket %d of 8)", k->name,
			     d == 0 ? "read" :
			     d == 1 ? "write" :
				      "discard",
			     old, depth, p99);
	}
}

/*
 * kyber_timer_fn(): congestion from device latency at congest_pct, resize from the p99
 * of total latency; a congested domain cuts the domains with looser targets.
 */
static void
ky_close_window(struct ky_bdev *k, uint64_t now)
{
	uint64_t end = atomic_load_explicit(&k->win_end, RLX);
	bool bad = false, cong[KY_MEASURED];
	uint32_t d, e;
	int p;

	if (now < end ||
	    !atomic_compare_exchange_strong_explicit(&k->win_end, &end, now + k->win, RLX, RLX)) {
		return;
	}
	atomic_fetch_add_explicit(&k->windows, 1, RLX);
	pthread_mutex_lock(&k->common.lock);
	for (d = 0; d < KY_MEASURED; d++) {
		p = percentile(k, d, KY_IO_LAT, k->congest_pct, now);
		cong[d] = p >= (int)KY_GOOD_BUCKETS;
		bad |= cong[d];
	}
	if (bad) {
		atomic_fetch_add_explicit(&k->congested, 1, RLX);
	}
	for (d = 0; d < KY_MEASURED; d++) {
		p = percentile(k, d, KY_TOTAL_LAT, 99, now);
		/* a domain may lack samples in the window that sees congestion: use its last p99,
		 * once (kyber's domain_p99) */
		if (bad) {
			if (p < 0) {
				p = k->p99_saved[d];
			}
			k->p99_saved[d] = -1;
		} else if (p >= 0) {
			k->p99_saved[d] = p;
		}
		for (e = 0; bad && p > 1 && e < KY_MEASURED; e++) {
			if (cong[e] && k->target[e] < k->target[d]) {
				p = 1; /* a tighter domain suffers: this one gives up half */
			}
		}
		if (p >= 0 && (bad || p >= (int)KY_GOOD_BUCKETS)) {
			resize(k, d, p);
		}
	}
	pthread_mutex_unlock(&k->common.lock);
}

static void
ky_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	struct ky_channel *c = ch_ctx;
	struct ky_bdev *k = c->k;
	uint32_t d = (uint32_t)io->stage_data[0];

	c->busy--;
	c->at_device[d]--;
	tok_put(&c->tok[d], &k->inflight[d], atomic_load_explicit(&k->depth[d], RLX),
		c->busy == 0 && c->queued == 0);
	if (d < KY_MEASURED) {
		uint64_t total = now - io->stage_data[1];
		uint32_t b = bucket_of(k, d, latency);

		chan_count(&c->buckets[d][KY_IO_LAT][b], 1);
		/* sent when submitted (no queueing): the total is the device time */
		chan_count(
			&c->buckets[d][KY_TOTAL_LAT][total == latency ? b : bucket_of(k, d, total)],
			1);
	}
	if (now >= atomic_load_explicit(&k->win_end, RLX)) {
		ky_close_window(k, now);
	}
}

static bool
ky_has_work(void *ch_ctx, uint64_t *next_tick)
{
	struct ky_channel *c = ch_ctx;

	*next_tick = 0;
	return c->queued != 0;
}

const struct nvp_bdev_sched_ops g_sched_kyber_ops = {
	.name = "kyber",
	.init = ky_init,
	.fini = ky_fini,
	.channel_init = ky_channel_init,
	.channel_fini = ky_channel_fini,
	.submit = ky_submit,
	.dispatch = ky_dispatch,
	.complete = ky_complete,
	.has_work = ky_has_work,
	.submit_direct = ky_submit_direct,
};

NVP_BDEV_SCHEDULER_REGISTER(g_sched_kyber_ops)
