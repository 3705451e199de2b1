/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedulers through their ops tables, with requests made by hand and a clock the
 * test moves: deadline's batches, starvation limit, expiry and depth; kyber's domains,
 * tokens, and depth changes from synthetic latencies, then its loop through its feedback
 * on a simulated device (seeded lognormal latencies, reads slowed by writes); fair's
 * shares, eligibility, no idling and no banked credit; parameters. Nothing here is timed.
 */
#include "../bdev/ut_bdev.h"

#include "sched/sched.c"
#include "sched/deadline.c"
#include "sched/kyber.c"
#include "sched/fair.c"

#include "../ut_lat.h"

#define MAX_IOS 4096

static struct nvp_bdev_io g_ios[MAX_IOS];
static uint32_t g_nios;
static struct nvp_bdev *g_bdev;
static uint64_t g_hz, g_t0;

static struct nvp_bdev_io *
mkio(uint8_t type, uint8_t tenant, uint64_t blocks)
{
	struct nvp_bdev_io *io = &g_ios[g_nios++ % MAX_IOS];

	memset(io, 0, sizeof(*io));
	io->type = type;
	io->tenant = tenant;
	io->num_blocks = blocks;
	io->offset_blocks = g_nios;
	io->bdev = g_bdev;
	return io;
}

static uint64_t
ms(double v)
{
	return (uint64_t)(v * (double)g_hz / 1000.0);
}

static void
setup_bdev(void)
{
	if (g_bdev == NULL) {
		g_bdev = ut_stub_register("s0", 1u << 20, 0, 0);
		g_hz = nvp_env_get_ticks_hz();
	}
	g_t0 = nvp_env_get_ticks();
}

struct sched_run {
	const struct nvp_bdev_sched_ops *ops;
	void *bctx;
	void *ch[4];
};

static void
start(struct sched_run *r, const struct nvp_bdev_sched_ops *ops, const char *params,
      unsigned int channels)
{
	unsigned int i;

	setup_bdev();
	r->ops = ops;
	CU_ASSERT_EQUAL_FATAL(ops->init(g_bdev, params, &r->bctx), 0);
	for (i = 0; i < channels; i++) {
		CU_ASSERT_EQUAL_FATAL(ops->channel_init(r->bctx, NULL, &r->ch[i]), 0);
	}
}

static void
stop(struct sched_run *r, unsigned int channels)
{
	unsigned int i;

	for (i = 0; i < channels; i++) {
		r->ops->channel_fini(r->ch[i]);
	}
	r->ops->fini(r->bctx);
}

/* Dispatch everything that may go now from channel 0, letters into @seq. */
static uint32_t
drain(struct sched_run *r, void *ch, uint64_t now, char *seq, bool complete)
{
	struct nvp_bdev_io *io;
	uint32_t n = 0;

	while ((io = r->ops->dispatch(ch, now)) != NULL) {
		seq[n++] = io->type == NVP_BDEV_IO_READ ? 'R' : 'W';
		if (complete) {
			r->ops->complete(ch, io, 1, now);
		}
	}
	seq[n] = '\0';
	return n;
}

static void
test_deadline_batches_and_starvation(void)
{
	struct sched_run r;
	char seq[64];
	int i;

	start(&r, &g_sched_deadline_ops, "fifo_batch=2 writes_starved=1", 1);
	for (i = 0; i < 10; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	}
	for (i = 0; i < 4; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	}
	drain(&r, r.ch[0], g_t0, seq, true);
	/* read batches of 2; after one read batch (writes_starved=1) a write batch */
	CU_ASSERT_STRING_EQUAL(seq, "RRWWRRWWRRRRRR");
	stop(&r, 1);
}

static void
test_deadline_expiry(void)
{
	struct sched_run r;
	struct nvp_sched_info info = { .info_size = sizeof(info) };
	char seq[64];
	int i;

	start(&r, &g_sched_deadline_ops, "write_expire_ms=10 fifo_batch=4 writes_starved=100", 1);
	for (i = 0; i < 3; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	}
	for (i = 0; i < 8; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	}
	/* before expiry reads win, one at a time here */
	CU_ASSERT_EQUAL(r.ops->dispatch(r.ch[0], g_t0)->type, NVP_BDEV_IO_READ);
	CU_ASSERT_EQUAL(r.ops->dispatch(r.ch[0], g_t0 + ms(5))->type, NVP_BDEV_IO_READ);
	/* the writes' deadline passes mid-batch: they go next */
	drain(&r, r.ch[0], g_t0 + ms(11), seq, true);
	CU_ASSERT_EQUAL(strncmp(seq, "WWW", 3), 0);
	CU_ASSERT_STRING_EQUAL(seq + 3, "RRRRRR");
	CU_ASSERT_EQUAL(g_sched_deadline_ops.has_work(r.ch[0], &(uint64_t){ 0 }), false);
	((struct dl_bdev *)r.bctx)->common.get_info(r.bctx, &info);
	CU_ASSERT(info.expired >= 1);
	stop(&r, 1);
}

static void
test_deadline_depth(void)
{
	struct sched_run r;
	struct nvp_bdev_io *a, *b;
	uint64_t next;

	start(&r, &g_sched_deadline_ops, "depth=2", 2);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	a = r.ops->dispatch(r.ch[0], g_t0);
	b = r.ops->dispatch(r.ch[0], g_t0);
	CU_ASSERT_PTR_NOT_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(b);
	/* the depth is device-wide: the other channel waits too */
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1], g_t0));
	CU_ASSERT_TRUE(r.ops->has_work(r.ch[1], &next));
	r.ops->complete(r.ch[0], a, 1, g_t0);
	CU_ASSERT_PTR_NOT_NULL(r.ops->dispatch(r.ch[1], g_t0));
	r.ops->complete(r.ch[0], b, 1, g_t0);
	stop(&r, 2);
}

static void
test_params_rejected(void)
{
	void *ctx;

	setup_bdev();
	CU_ASSERT_EQUAL(g_sched_deadline_ops.init(g_bdev, "fifo_batch=0", &ctx), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "fifo_batch") != NULL);
	CU_ASSERT_EQUAL(g_sched_deadline_ops.init(g_bdev, "nosuch=1", &ctx), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "nosuch") != NULL);
	CU_ASSERT_EQUAL(g_sched_kyber_ops.init(g_bdev, "read_lat_us=x", &ctx), -EINVAL);
	CU_ASSERT_EQUAL(g_sched_fair_ops.init(g_bdev, "weights=1/0/2", &ctx), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "weights") != NULL);
	CU_ASSERT_EQUAL(g_sched_fair_ops.init(g_bdev, "lat_us.99=5", &ctx), -EINVAL);
	/* through the bdev: the scheduler is chosen by name; info and weights */
	CU_ASSERT_EQUAL(nvp_bdev_sched_fair_set_weight(g_bdev, 0, 2), -ENOENT);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(g_bdev, "fair", "weights=1/2/4 depth=8"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_sched_fair_set_weight(g_bdev, 3, 5), 0);
	CU_ASSERT_EQUAL(nvp_bdev_sched_fair_set_weight(g_bdev, 3, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_sched_fair_set_weight(g_bdev, 64, 1), -EINVAL);
	{
		struct nvp_sched_info info = { .info_size = sizeof(info) };

		CU_ASSERT_EQUAL(nvp_bdev_sched_get_info(g_bdev, &info), 0);
		CU_ASSERT_STRING_EQUAL(info.name, "fair");
		CU_ASSERT_EQUAL(info.depth, 8);
		CU_ASSERT_EQUAL(info.tenant_weight[2], 4);
		CU_ASSERT_EQUAL(info.tenant_weight[3], 5);
		CU_ASSERT_EQUAL(info.tenant_weight[4], 1);
	}
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(g_bdev, "none", NULL), 0);
}

static void
test_kyber_domains_and_tokens(void)
{
	struct sched_run r;
	uint32_t reads = 0, writes = 0, i;
	struct nvp_bdev_io *io;

	start(&r, &g_sched_kyber_ops, NULL, 1);
	for (i = 0; i < 300; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	}
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_UNMAP, 0, 1), g_t0);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_FLUSH, 0, 1), g_t0);
	while ((io = r.ops->dispatch(r.ch[0], g_t0)) != NULL) {
		reads += io->type == NVP_BDEV_IO_READ;
		writes += io->type == NVP_BDEV_IO_WRITE;
	}
	CU_ASSERT_EQUAL(reads, 256);
	CU_ASSERT_EQUAL(writes, 128);
	/* the device-wide counts hold the channel's spare tokens too: in flight = held - spare */
	CU_ASSERT_EQUAL(((struct ky_bdev *)r.bctx)->inflight[NVP_SCHED_KYBER_DISCARD] -
				((struct ky_channel *)r.ch[0])->tok[NVP_SCHED_KYBER_DISCARD].spare,
			1);
	CU_ASSERT_EQUAL(((struct ky_bdev *)r.bctx)->inflight[NVP_SCHED_KYBER_OTHER] -
				((struct ky_channel *)r.ch[0])->tok[NVP_SCHED_KYBER_OTHER].spare,
			1);
	stop(&r, 1);
}

/* Batched tokens: never over the limit across channels, none kept by an idle channel. */
static void
test_tokens_batched(void)
{
	struct tok_cache a = { 0 }, b = { 0 };
	_Atomic uint32_t held = 0;
	uint32_t in_a = 0, in_b = 0, i;

	/* 64 tokens: batches of 4; two channels take turns until the limit stops both */
	for (i = 0; i < 100; i++) {
		in_a += tok_get(&a, &held, 64);
		in_b += tok_get(&b, &held, 64);
	}
	CU_ASSERT_EQUAL(in_a + in_b, 64);
	CU_ASSERT_EQUAL(held, 64);
	/* a completes all but one: it keeps at most a batch, the rest goes back */
	while (in_a > 1) {
		tok_put(&a, &held, 64, false);
		in_a--;
	}
	CU_ASSERT(a.spare <= tok_batch(64));
	CU_ASSERT_EQUAL(held, in_a + in_b + a.spare + b.spare);
	/* b may now take what a gave back, and no more */
	for (i = 0; i < 100; i++) {
		in_b += tok_get(&b, &held, 64);
	}
	CU_ASSERT_EQUAL(in_a + in_b + a.spare + b.spare, 64);
	/* idle channels keep nothing */
	tok_put(&a, &held, 64, true);
	while (in_b > 0) {
		tok_put(&b, &held, 64, --in_b == 0);
	}
	CU_ASSERT_EQUAL(held, 0);
	CU_ASSERT_EQUAL(a.spare + b.spare, 0);
	/* under 32 tokens no spares: exact */
	CU_ASSERT(tok_get(&a, &held, 8));
	CU_ASSERT_EQUAL(held, 1);
	CU_ASSERT_EQUAL(a.spare, 0);
	tok_put(&a, &held, 8, false);
	CU_ASSERT_EQUAL(held, 0);
	/* a limit lowered under a channel's spares: they go back before it may send */
	for (i = 0; i < 3; i++) {
		CU_ASSERT(tok_get(&a, &held, 64));
	}
	CU_ASSERT_EQUAL(a.spare, 1);
	CU_ASSERT(!tok_get(&a, &held, 3));
	CU_ASSERT_EQUAL(a.spare, 0);
	CU_ASSERT_EQUAL(held, 3);
}

/* A busy channel whose completions and submissions alternate keeps the counter still. */
static void
test_tokens_pass_locally(void)
{
	struct tok_cache a = { 0 };
	_Atomic uint32_t held = 0;
	uint32_t i, before, batch = tok_batch(64);

	for (i = 0; i < 10; i++) {
		CU_ASSERT(tok_get(&a, &held, 64));
	}
	before = held;
	for (i = 0; i < 1000; i++) {
		tok_put(&a, &held, 64, false);
		CU_ASSERT(a.spare <= batch);
		CU_ASSERT(tok_get(&a, &held, 64));
	}
	CU_ASSERT_EQUAL(held, before);
	/* a burst of completions: back down to half a batch each time it is over one */
	for (i = 0; i < 9; i++) {
		tok_put(&a, &held, 64, false);
		CU_ASSERT(a.spare <= batch);
		CU_ASSERT_EQUAL(held, 10 - i - 1 + a.spare);
	}
	/* the last one leaves the channel idle: it keeps nothing */
	tok_put(&a, &held, 64, true);
	CU_ASSERT_EQUAL(held, 0);
	CU_ASSERT_EQUAL(a.spare, 0);
}

/*
 * submit_direct() on a channel holding nothing does what submit() then dispatch() do:
 * the same I/O goes (or waits), and the batch state and tokens end the same. Two
 * instances of each scheduler, one driven each way, through a mix of reads and writes.
 */
static void
direct_vs_queued(const struct nvp_bdev_sched_ops *ops, const char *params)
{
	struct sched_run q, d;
	struct nvp_bdev_io *iq[8], *id[8], *io;
	uint32_t i, k, n;
	bool sent;

	start(&q, ops, params, 1);
	start(&d, ops, params, 1);
	for (i = 0; i < 200; i++) {
		n = 1 + i % 5;
		for (k = 0; k < n; k++) {
			uint8_t type = (i * 7 + k * 3) % 4 == 0 ? NVP_BDEV_IO_WRITE :
								  NVP_BDEV_IO_READ;

			iq[k] = mkio(type, 0, 1);
			q.ops->submit(q.ch[0], iq[k], g_t0 + i);
			io = q.ops->dispatch(q.ch[0], g_t0 + i);
			id[k] = mkio(type, 0, 1);
			sent = d.ops->submit_direct(d.ch[0], id[k], g_t0 + i);
			CU_ASSERT_EQUAL(io == iq[k], sent);
			if (ops == &g_sched_deadline_ops) {
				struct dl_channel *a = q.ch[0], *b = d.ch[0];

				CU_ASSERT_EQUAL(a->batch_dir, b->batch_dir);
				CU_ASSERT_EQUAL(a->batch_left, b->batch_left);
				CU_ASSERT_EQUAL(a->starved, b->starved);
				CU_ASSERT_EQUAL(a->tok.spare, b->tok.spare);
			} else {
				struct ky_channel *a = q.ch[0], *b = d.ch[0];

				CU_ASSERT_EQUAL(a->cur, b->cur);
				CU_ASSERT_EQUAL(a->batch_left, b->batch_left);
			}
		}
		for (k = 0; k < n; k++) {
			q.ops->complete(q.ch[0], iq[k], 1, g_t0 + i);
			d.ops->complete(d.ch[0], id[k], 1, g_t0 + i);
		}
	}
	stop(&q, 1);
	stop(&d, 1);
}

static void
test_direct_matches_queued(void)
{
	direct_vs_queued(&g_sched_deadline_ops, "fifo_batch=3 writes_starved=1 depth=64");
	direct_vs_queued(&g_sched_kyber_ops, NULL);
}

/* At the depth, submit_direct() takes the I/O instead; dispatch() sends it later. */
static void
test_direct_at_depth(void)
{
	struct sched_run r;
	struct nvp_bdev_io *a = mkio(NVP_BDEV_IO_READ, 0, 1), *b = mkio(NVP_BDEV_IO_READ, 0, 1);

	start(&r, &g_sched_deadline_ops, "depth=1", 1);
	CU_ASSERT_TRUE(r.ops->submit_direct(r.ch[0], a, g_t0));
	CU_ASSERT_FALSE(r.ops->submit_direct(r.ch[0], b, g_t0));
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0));
	r.ops->complete(r.ch[0], a, 1, g_t0);
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0), b);
	r.ops->complete(r.ch[0], b, 1, g_t0);
	CU_ASSERT_EQUAL(((struct dl_bdev *)r.bctx)->inflight, 0);
	stop(&r, 1);
}

/*
 * fair's direct path: a tenant alone is never queued and never active; what it owes is
 * paid in batches under lag / 8 and in full when its channel goes idle; a tenant more
 * than lag ahead of a queued one is queued by submit_direct() and waits.
 */
static void
test_fair_direct(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct fair_channel *c0;
	struct nvp_bdev_io *io[64], *q;
	uint64_t cost, total = 0;
	uint32_t i, n;

	start(&r, &g_sched_fair_ops, "lag_kib=64 depth=64", 2);
	f = r.bctx;
	c0 = r.ch[0];
	cost = 8ull * nvp_bdev_get_block_size(g_bdev) * FAIR_VSCALE; /* weight 1 */
	CU_ASSERT_EQUAL(f->vbatch, 8ull * 1024 * FAIR_VSCALE);
	for (i = 0; i < 40; i++) {
		io[i] = mkio(NVP_BDEV_IO_READ, 0, 8);
		CU_ASSERT_TRUE_FATAL(r.ops->submit_direct(r.ch[0], io[i], g_t0));
		total += cost;
		/* others see it at most a batch behind */
		CU_ASSERT(c0->vowed < f->vbatch);
		CU_ASSERT_EQUAL(f->t[0].vtime + c0->vowed, total);
	}
	CU_ASSERT_EQUAL(f->nactive, 0);
	CU_ASSERT_EQUAL(f->t[0].queued, 0);
	for (i = 0; i < 40; i++) {
		r.ops->complete(r.ch[0], io[i], 1, g_t0);
	}
	/* idle: paid in full, and its time is the system's for the next to arrive */
	CU_ASSERT_EQUAL(c0->vowed, 0);
	CU_ASSERT_EQUAL(f->t[0].vtime, total);
	CU_ASSERT_EQUAL(f->vlast, total);
	/* tenant 1 arrives queued on channel 1 (its thread does not dispatch yet): it
	 * starts at tenant 0's time, and tenant 0 may run lag (16 x 4 KiB) ahead, no more */
	q = mkio(NVP_BDEV_IO_READ, 1, 8);
	r.ops->submit(r.ch[1], q, g_t0);
	CU_ASSERT_EQUAL(f->nactive, 1);
	CU_ASSERT_EQUAL(f->t[1].vtime, total);
	for (n = 0; n < 64; n++) {
		io[n] = mkio(NVP_BDEV_IO_READ, 0, 8);
		if (!r.ops->submit_direct(r.ch[0], io[n], g_t0)) {
			break;
		}
	}
	CU_ASSERT_EQUAL(n, 17); /* 0 .. 64 KiB ahead: eligible; then not */
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0));
	/* tenant 1 is served and goes idle: tenant 0's queued request may go */
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[1], g_t0), q);
	CU_ASSERT_EQUAL(f->nactive, 1); /* tenant 0 is queued now */
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0), io[n]);
	CU_ASSERT_EQUAL(f->nactive, 0);
	r.ops->complete(r.ch[1], q, 1, g_t0);
	for (i = 0; i <= n; i++) {
		r.ops->complete(r.ch[0], io[i], 1, g_t0);
	}
	CU_ASSERT_EQUAL(f->inflight, 0);
	stop(&r, 2);
}

/* The bucket by reciprocal is the bucket by division, boundaries included. */
static void
test_kyber_buckets(void)
{
	struct sched_run r;
	struct ky_bdev *k;
	uint64_t lat, w, want;
	uint32_t d;

	start(&r, &g_sched_kyber_ops, "read_lat_us=1000 write_lat_us=7 discard_lat_us=60000000", 1);
	k = r.bctx;
	for (d = 0; d < KY_MEASURED; d++) {
		w = k->width[d];
		for (lat = 0; lat < 9 * w + 3;
		     lat += (lat % w < 3 || w - lat % w < 3) ? 1 : w / 7 + 1) {
			want = lat == 0 ? 0 : NVP_MIN((lat - 1) / w, (uint64_t)KY_BUCKETS - 1);
			CU_ASSERT_EQUAL(bucket_of(k, d, lat), want);
		}
		CU_ASSERT_EQUAL(bucket_of(k, d, UINT64_MAX / 2), KY_BUCKETS - 1);
	}
	stop(&r, 1);
}

/* @n completions of domain-@type I/O with device latency @lat, at @now. */
static void
kyber_feed(struct sched_run *r, uint8_t type, uint32_t n, uint64_t lat, uint64_t now)
{
	struct nvp_bdev_io *io;
	uint32_t i;

	for (i = 0; i < n; i++) {
		r->ops->submit(r->ch[0], mkio(type, 0, 1), now - lat);
		io = r->ops->dispatch(r->ch[0], now - lat);
		CU_ASSERT_PTR_NOT_NULL_FATAL(io);
		r->ops->complete(r->ch[0], io, lat, now);
	}
}

static void
test_kyber_resize(void)
{
	struct sched_run r;
	struct ky_bdev *k;
	uint64_t now;

	start(&r, &g_sched_kyber_ops, "read_lat_us=1000 write_lat_us=4000 window_ms=100", 1);
	k = r.bctx;
	/* reads fast (bucket 0), writes at 3x their target (bucket 7): congested */
	now = g_t0 + ms(1);
	kyber_feed(&r, NVP_BDEV_IO_READ, 600, ms(0.1), now);
	kyber_feed(&r, NVP_BDEV_IO_WRITE, 600, ms(12), now);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 256); /* window not over yet */
	now = g_t0 + ms(101);
	kyber_feed(&r, NVP_BDEV_IO_READ, 1, ms(0.1), now);
	/* reads: 256 * (0 + 1) / 4; writes: 128 * 8 / 4, held at their maximum 128 */
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 64);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 128);
	CU_ASSERT_EQUAL(k->congested, 1);
	/* not congested, reads comfortably under target: no change */
	kyber_feed(&r, NVP_BDEV_IO_READ, 600, ms(0.3), now + ms(1));
	kyber_feed(&r, NVP_BDEV_IO_WRITE, 600, ms(1), now + ms(1));
	kyber_feed(&r, NVP_BDEV_IO_READ, 1, ms(0.3), now + ms(102));
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 64);
	/* reads over target (1.6x: bucket 6), no other congestion signal needed: they grow
	 * by (6 + 1) / 4 */
	now += ms(200);
	kyber_feed(&r, NVP_BDEV_IO_READ, 600, ms(1.6), now);
	kyber_feed(&r, NVP_BDEV_IO_READ, 1, ms(1.6), now + ms(101));
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 64 * 7 / 4);
	stop(&r, 1);
}

/*
 * bench/sched's case: reads over their target at the device (congestion) while writes,
 * queueing included, stay well under theirs: the write depth is cut by (p99 bucket + 1) / 4
 * each congested window; reads, over target, are not throttled.
 */
static void
test_kyber_throttles_writes_for_reads(void)
{
	struct sched_run r;
	struct ky_bdev *k;
	uint64_t now = g_t0;
	uint32_t w;

	start(&r, &g_sched_kyber_ops, NULL, 1); /* read 2 ms, write 10 ms */
	k = r.bctx;
	for (w = 0; w < 3; w++) {
		now += ms(1);
		kyber_feed(&r, NVP_BDEV_IO_READ, 600, ms(4), now);  /* bucket 7 */
		kyber_feed(&r, NVP_BDEV_IO_WRITE, 600, ms(4), now); /* 4 ms of 10: bucket 1 */
		now += ms(101);
		kyber_feed(&r, NVP_BDEV_IO_WRITE, 1, ms(4), now);
	}
	CU_ASSERT_EQUAL(k->congested, 3);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 128 / 2 / 2 / 2);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 256);
	stop(&r, 1);
}

/*
 * kyber through its feedback: a simulated device on the test's clock, stepped every
 * KSIM_STEP_US. A workload keeps rd_qd reads and wr_qd writes outstanding (queued in
 * kyber or at the device); kyber dispatches what its tokens allow; each request at the
 * device takes a lognormal time whose median grows with the writes there (reads wait
 * behind programs), p99 twice the median. Total latency is what the workload sees:
 * queueing in kyber included.
 */
#define KSIM_STEP_US 20
#define KSIM_MAX_IOS 1024
#define KSIM_HIST 2000  /* bins of ... */
#define KSIM_HIST_US 10 /* ... 10 us: up to 20 ms */

struct ksim {
	struct sched_run r;
	struct ky_bdev *k;
	struct ut_lat rng;
	uint64_t now;
	uint32_t rd_qd, wr_qd;
	double rd_us, rd_per_write_us; /* read median: rd_us + rd_per_write_us x writes there */
	double wr_us, wr_per_write_us;
	/* requests */
	struct nvp_bdev_io ios[KSIM_MAX_IOS];
	uint64_t issued[KSIM_MAX_IOS], sent[KSIM_MAX_IOS], end[KSIM_MAX_IOS];
	uint32_t dev[KSIM_MAX_IOS], ndev; /* at the device */
	uint32_t free_ids[KSIM_MAX_IOS], nfree;
	uint32_t rd_out, wr_out, dev_wr;
	/* what happened */
	uint64_t rd_done, wr_done;
	uint64_t rd_total_over;      /* reads whose total latency was over the read target */
	uint32_t rd_hist[KSIM_HIST]; /* reads' total latency in KSIM_HIST_US bins */
};

static void
ksim_start(struct ksim *s, const char *params, uint64_t seed)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	start(&s->r, &g_sched_kyber_ops, params, 1);
	s->k = s->r.bctx;
	ut_lat_seed(&s->rng, seed);
	s->now = g_t0;
	atomic_store(&s->k->win_end, g_t0 + s->k->win); /* the windows on this clock alone */
	for (i = 0; i < KSIM_MAX_IOS; i++) {
		s->free_ids[s->nfree++] = KSIM_MAX_IOS - 1 - i;
	}
}

static void
ksim_issue(struct ksim *s, uint8_t type)
{
	uint32_t id = s->free_ids[--s->nfree];
	struct nvp_bdev_io *io = &s->ios[id];

	memset(io, 0, sizeof(*io));
	io->type = type;
	io->num_blocks = 8;
	io->bdev = g_bdev;
	s->issued[id] = s->now;
	s->r.ops->submit(s->r.ch[0], io, s->now);
}

static void
ksim_step(struct ksim *s)
{
	struct nvp_bdev_io *io;
	uint32_t i, id;
	double p50;

	for (i = 0; i < s->ndev;) {
		id = s->dev[i];
		if (s->end[id] > s->now) {
			i++;
			continue;
		}
		io = &s->ios[id];
		s->dev[i] = s->dev[--s->ndev];
		s->r.ops->complete(s->r.ch[0], io, s->now - s->sent[id], s->now);
		if (io->type == NVP_BDEV_IO_READ) {
			s->rd_out--;
			s->rd_done++;
			s->rd_total_over += s->now - s->issued[id] >
					    s->k->target[NVP_SCHED_KYBER_READ];
			s->rd_hist[NVP_MIN((s->now - s->issued[id]) / ms(KSIM_HIST_US / 1000.0),
					   (uint64_t)KSIM_HIST - 1)]++;
		} else {
			s->wr_out--;
			s->wr_done++;
			s->dev_wr--;
		}
		s->free_ids[s->nfree++] = id;
	}
	while (s->rd_out < s->rd_qd) {
		ksim_issue(s, NVP_BDEV_IO_READ);
		s->rd_out++;
	}
	while (s->wr_out < s->wr_qd) {
		ksim_issue(s, NVP_BDEV_IO_WRITE);
		s->wr_out++;
	}
	while ((io = s->r.ops->dispatch(s->r.ch[0], s->now)) != NULL) {
		id = (uint32_t)(io - s->ios);
		if (io->type == NVP_BDEV_IO_READ) {
			p50 = s->rd_us + s->rd_per_write_us * s->dev_wr;
		} else {
			p50 = s->wr_us + s->wr_per_write_us * s->dev_wr;
			s->dev_wr++;
		}
		s->sent[id] = s->now;
		s->end[id] = s->now + ut_lat_lognormal(&s->rng, ms(p50 / 1000), ms(2 * p50 / 1000));
		s->dev[s->ndev++] = id;
	}
	s->now += ms(KSIM_STEP_US / 1000.0);
}

static void
ksim_run(struct ksim *s, double run_ms)
{
	uint64_t end = s->now + ms(run_ms);

	while (s->now < end) {
		ksim_step(s);
	}
}

/* Stop the workload and let everything in flight complete. */
static void
ksim_stop(struct ksim *s)
{
	s->rd_qd = 0;
	s->wr_qd = 0;
	while (s->rd_out + s->wr_out != 0) {
		ksim_step(s);
	}
	stop(&s->r, 1);
}

static void
ksim_reset_counts(struct ksim *s)
{
	s->rd_done = s->wr_done = s->rd_total_over = 0;
	memset(s->rd_hist, 0, sizeof(s->rd_hist));
}

/* The @pct-th percentile of the reads' total latency since the last reset, in us. */
static uint32_t
ksim_rd_pct(const struct ksim *s, uint32_t pct)
{
	uint64_t want = (s->rd_done * pct + 99) / 100, n = 0;
	uint32_t b;

	for (b = 0; b < KSIM_HIST - 1; b++) {
		n += s->rd_hist[b];
		if (n >= want) {
			break;
		}
	}
	return (b + 1) * KSIM_HIST_US;
}

/*
 * Reads queued in kyber count: resizing uses total latency. Writes over their target at
 * the device congest it while reads there are fast, so every congested window cuts the
 * read depth, until reads wait in kyber long enough that their total latency is over
 * target, which grows it again: the read depth settles where 32 reads outstanding just
 * meet the target. When the writes stop, the device is not congested, and reads that
 * still wait in kyber over target grow the depth until they do not.
 */
static void
test_kyber_loop_resizes_on_total_latency(void)
{
	static struct ksim s;
	uint32_t rd_depth;

	ksim_start(&s, "read_lat_us=1000 write_lat_us=10000", 1);
	s.rd_qd = 32;
	s.rd_us = 100;
	s.rd_per_write_us = 0; /* reads are fast at the device throughout */
	s.wr_qd = 64;
	s.wr_us = 15000; /* writes at 1.5x their target: congested */
	ksim_run(&s, 2000);
	rd_depth = s.k->depth[NVP_SCHED_KYBER_READ];
	printf("(read depth %u, %lu congested) ", rd_depth, (unsigned long)s.k->congested);
	CU_ASSERT(s.k->congested >= 5);
	CU_ASSERT(rd_depth < 256); /* cut by congestion ... */
	CU_ASSERT(rd_depth >= 4);  /* ... but not below what the reads need */
	ksim_reset_counts(&s);
	ksim_run(&s, 1000);
	printf("(read depth %u, reads over target %lu of %lu) ", s.k->depth[NVP_SCHED_KYBER_READ],
	       (unsigned long)s.rd_total_over, (unsigned long)s.rd_done);
	CU_ASSERT(s.rd_total_over * 10 < s.rd_done); /* the target met for 90 % of reads */
	/* the writes stop and more reads come: at the depth the writes left, they wait in
	 * kyber over their target, and the depth grows until they do not */
	s.wr_qd = 0;
	s.rd_qd = 128;
	ksim_run(&s, 1000);
	ksim_reset_counts(&s);
	ksim_run(&s, 1000);
	printf("(read depth %u, reads over target %lu of %lu) ", s.k->depth[NVP_SCHED_KYBER_READ],
	       (unsigned long)s.rd_total_over, (unsigned long)s.rd_done);
	CU_ASSERT(s.rd_total_over * 100 < s.rd_done);
	CU_ASSERT(s.k->depth[NVP_SCHED_KYBER_READ] > rd_depth);
	ksim_stop(&s);
}

/*
 * A QD1 reader among a flood of writes: its reads wait behind the writes at the device
 * (4 ms against a 1 ms target) and come too slowly to make kyber's 500 samples a window.
 * A second's worth is enough: the device is then found congested and the write depth
 * cut, and so on each second until the reads are fast enough to be judged every window.
 */
static void
test_kyber_loop_qd1_reader(void)
{
	static struct ksim s;

	ksim_start(&s, "read_lat_us=1000", 2);
	s.rd_qd = 1;
	s.rd_us = 100;
	s.rd_per_write_us = 30;
	s.wr_qd = 128;
	s.wr_us = 300;
	s.wr_per_write_us = 10; /* 1.6 ms at 128: well under the writes' 10 ms */
	ksim_run(&s, 1150);
	CU_ASSERT(s.rd_done < 400);
	CU_ASSERT_EQUAL(s.k->congested, 1);
	CU_ASSERT(s.k->depth[NVP_SCHED_KYBER_WRITE] < 128);
	ksim_run(&s, 4000);
	ksim_reset_counts(&s);
	ksim_run(&s, 1000);
	printf("(write depth %u, %lu reads, p50 %u us, p90 %u us) ",
	       s.k->depth[NVP_SCHED_KYBER_WRITE], (unsigned long)s.rd_done, ksim_rd_pct(&s, 50),
	       ksim_rd_pct(&s, 90));
	CU_ASSERT(ksim_rd_pct(&s, 90) <= 1000);
	CU_ASSERT(s.wr_done > 10000); /* and the writes go on */
	ksim_stop(&s);
}

/*
 * Reads just over their target at the device: their p90 in the first bucket past it
 * (1 to 1.25 ms of 1 ms) is congestion, and the writes that slow them are cut until the
 * reads' p90 is under target.
 */
static void
test_kyber_loop_reads_just_over(void)
{
	static struct ksim s;

	ksim_start(&s, "read_lat_us=1000", 3);
	s.rd_qd = 16;
	s.rd_us = 500;
	s.rd_per_write_us = 5; /* p90 1.2 ms with 64 writes at the device, 0.97 with 32 */
	s.wr_qd = 64;
	s.wr_us = 1000;
	ksim_run(&s, 3000);
	ksim_reset_counts(&s);
	ksim_run(&s, 1000);
	printf("(write depth %u, read p90 %u us) ", s.k->depth[NVP_SCHED_KYBER_WRITE],
	       ksim_rd_pct(&s, 90));
	CU_ASSERT(s.k->congested >= 1);
	CU_ASSERT(s.k->depth[NVP_SCHED_KYBER_WRITE] < 64);
	CU_ASSERT(ksim_rd_pct(&s, 90) <= 1000);
	ksim_stop(&s);
}

/*
 * A domain without samples in a congested window is resized by the p99 it had before,
 * once (kyber's domain_p99): a writer that paused while reads are slow for reasons of the
 * device's own (garbage collection) has its depth cut once, not again every window.
 */
static void
test_kyber_loop_quiet_domain_once(void)
{
	static struct ksim s;
	int saved;

	ksim_start(&s, "read_lat_us=1000", 4);
	s.rd_qd = 16;
	s.rd_us = 100;
	s.wr_qd = 32;
	s.wr_us = 2000; /* 4 ms p99 of 10: no resize, nothing congested */
	ksim_run(&s, 1000);
	saved = s.k->p99_saved[NVP_SCHED_KYBER_WRITE];
	CU_ASSERT(saved >= 0 && saved < 4);
	CU_ASSERT_EQUAL(s.k->congested, 0);
	CU_ASSERT_EQUAL(s.k->depth[NVP_SCHED_KYBER_WRITE], 128);
	s.wr_qd = 0;
	s.rd_us = 3000;
	ksim_run(&s, 1000);
	CU_ASSERT(s.k->congested >= 5);
	CU_ASSERT_EQUAL(s.k->depth[NVP_SCHED_KYBER_WRITE], 128 * (uint32_t)(saved + 1) / 4);
	ksim_stop(&s);
}

/* Two channels, one tenant each, kept backlogged; each dispatch completes at once. */
static void
fair_run(struct sched_run *r, uint32_t rounds, uint64_t bytes_out[2])
{
	struct nvp_bdev_io *io;
	uint32_t i, c;

	for (c = 0; c < 2; c++) {
		for (i = 0; i < 8; i++) {
			r->ops->submit(r->ch[c], mkio(NVP_BDEV_IO_READ, (uint8_t)c, 8), g_t0);
		}
	}
	for (i = 0; i < rounds; i++) {
		for (c = 0; c < 2; c++) {
			io = r->ops->dispatch(r->ch[c], g_t0);
			if (io == NULL) {
				continue;
			}
			bytes_out[c] += nvp_bdev_io_get_nbytes(io);
			r->ops->complete(r->ch[c], io, 1, g_t0);
			r->ops->submit(r->ch[c], mkio(NVP_BDEV_IO_READ, (uint8_t)c, 8), g_t0);
		}
	}
}

static void
test_fair_shares(void)
{
	struct sched_run r;
	uint64_t bytes[2] = { 0, 0 };
	double ratio;

	start(&r, &g_sched_fair_ops, "weights=1/3 lag_kib=16 depth=4", 2);
	fair_run(&r, 4000, bytes);
	ratio = (double)bytes[1] / (double)bytes[0];
	CU_ASSERT(ratio > 2.7 && ratio < 3.3);
	printf("fair 1:3 -> %.3f ", ratio);
	stop(&r, 2);
}

static void
test_fair_no_idling_no_banking(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *io;
	uint64_t bytes[2] = { 0, 0 };
	uint32_t i, n = 0;

	start(&r, &g_sched_fair_ops, "lag_kib=16 depth=4", 2);
	f = r.bctx;
	/* tenant 0 alone: nobody to wait for, far past the lag */
	for (i = 0; i < 200; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
		io = r.ops->dispatch(r.ch[0], g_t0);
		n += io != NULL;
		if (io != NULL) {
			r.ops->complete(r.ch[0], io, 1, g_t0);
		}
	}
	CU_ASSERT_EQUAL(n, 200);
	/* tenant 1 arrives: it starts at tenant 0's virtual time, not 800 KiB behind */
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 8), g_t0);
	CU_ASSERT(f->t[1].vtime + f->lag >= f->t[0].vtime);
	io = r.ops->dispatch(r.ch[1], g_t0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(io);
	r.ops->complete(r.ch[1], io, 1, g_t0);
	/* from here on equal weights share equally */
	fair_run(&r, 2000, bytes);
	CU_ASSERT(bytes[1] > bytes[0] * 9 / 10 && bytes[1] < bytes[0] * 11 / 10);
	stop(&r, 2);
}

/* Virtual times start just below 2^64: the 64-bit counters wrap during the run. */
static void
fair_set_vtimes(struct fair_bdev *f, uint64_t v)
{
	for (uint32_t i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
		atomic_store(&f->t[i].vtime, v);
	}
	atomic_store(&f->vlast, v);
	atomic_store(&f->vmin_lb, v);
}

/*
 * A virtual time is bytes * 2^20 / weight in 64 bits: at weight 1 it wraps after 16 TiB
 * (1.5 hours at 3 GB/s). Shares hold across the wrap, and a tenant idle since before it
 * arrives at the others' virtual time, not "ahead" of them and starved.
 */
static void
test_fair_vtime_wraps(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *io;
	uint64_t bytes[2] = { 0, 0 }, start_v = UINT64_MAX - (1ull << 40);
	double ratio;
	uint32_t i;

	start(&r, &g_sched_fair_ops, "weights=1/3 lag_kib=16 depth=4", 2);
	f = r.bctx;
	fair_set_vtimes(f, start_v);
	fair_run(&r, 4000, bytes);
	CU_ASSERT(atomic_load(&f->t[0].vtime) < start_v); /* it did wrap */
	ratio = (double)bytes[1] / (double)bytes[0];
	CU_ASSERT(ratio > 2.7 && ratio < 3.3);
	stop(&r, 2);

	start(&r, &g_sched_fair_ops, "lag_kib=16 depth=4", 2);
	f = r.bctx;
	fair_set_vtimes(f, start_v);
	/* tenant 0 alone, past the wrap (2^32 per 4 KiB at weight 1) */
	for (i = 0; i < 400; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
		io = r.ops->dispatch(r.ch[0], g_t0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(io);
		r.ops->complete(r.ch[0], io, 1, g_t0);
	}
	CU_ASSERT(atomic_load(&f->t[0].vtime) < start_v);
	/* tenant 0 stays busy; tenant 1, idle since before the wrap, arrives */
	for (i = 0; i < 8; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 8), g_t0);
	CU_ASSERT(atomic_load(&f->t[1].vtime) - atomic_load(&f->t[0].vtime) <= f->lag ||
		  atomic_load(&f->t[0].vtime) - atomic_load(&f->t[1].vtime) <= f->lag);
	io = r.ops->dispatch(r.ch[1], g_t0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(io);
	r.ops->complete(r.ch[1], io, 1, g_t0);
	bytes[0] = bytes[1] = 0;
	fair_run(&r, 2000, bytes);
	CU_ASSERT(bytes[1] > bytes[0] * 9 / 10 && bytes[1] < bytes[0] * 11 / 10);
	stop(&r, 2);
}

/* Tenant 1 has work queued but its thread stopped polling: after stale_us it holds
 * tenant 0 back no longer. */
static void
test_fair_stale_tenant(void)
{
	struct sched_run r;
	struct nvp_bdev_io *io;
	uint32_t i, early = 0, late = 0;

	start(&r, &g_sched_fair_ops, "lag_kib=16 stale_us=1000 depth=64", 2);
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 8), g_t0);
	for (i = 0; i < 50; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	while ((io = r.ops->dispatch(r.ch[0], g_t0 + ms(0.5))) != NULL) {
		early++;
		r.ops->complete(r.ch[0], io, 1, g_t0 + ms(0.5));
	}
	/* 16 KiB of lag in 4 KiB requests: a handful, then tenant 1 must go first */
	CU_ASSERT(early >= 4 && early <= 6);
	while ((io = r.ops->dispatch(r.ch[0], g_t0 + ms(2))) != NULL) {
		late++;
		r.ops->complete(r.ch[0], io, 1, g_t0 + ms(2));
	}
	CU_ASSERT_EQUAL(early + late, 50);
	io = r.ops->dispatch(r.ch[1], g_t0 + ms(2));
	CU_ASSERT_PTR_NOT_NULL(io);
	stop(&r, 2);
}

/* Tenant 1's thread read its clock later than tenant 0's: its "seen" is newer than
 * tenant 0's now, which is recent, not stale (the difference must not wrap). */
static void
test_fair_seen_by_a_newer_clock(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *io;
	uint32_t i, n = 0;

	start(&r, &g_sched_fair_ops, "lag_kib=16 stale_us=1000 depth=64", 2);
	f = r.bctx;
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 8), g_t0 + ms(0.5));
	for (i = 0; i < 50; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	while ((io = r.ops->dispatch(r.ch[0], g_t0)) != NULL) {
		n++;
		r.ops->complete(r.ch[0], io, 1, g_t0);
	}
	/* held back by tenant 1 after the lag, as in test_fair_stale_tenant's early part */
	CU_ASSERT(n >= 4 && n <= 6);
	CU_ASSERT_EQUAL(atomic_load(&f->t[1].seen), g_t0 + ms(0.5)); /* not moved back */
	io = r.ops->dispatch(r.ch[1], g_t0 + ms(0.5));
	CU_ASSERT_PTR_NOT_NULL(io);
	stop(&r, 2);
}

static void
test_fair_latency_target_cuts_others(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *io;
	uint32_t i, n = 0;

	start(&r, &g_sched_fair_ops, "depth=8 lat_us.1=100", 2);
	f = r.bctx;
	/* tenant 1's completions at 1 ms against a 100 us target */
	for (i = 0; i < 10; i++) {
		r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 1), g_t0);
		io = r.ops->dispatch(r.ch[1], g_t0);
		r.ops->complete(r.ch[1], io, ms(1), g_t0 + ms(1));
	}
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 1), g_t0);
	io = r.ops->dispatch(r.ch[1], g_t0);
	r.ops->complete(r.ch[1], io, ms(1), g_t0 + ms(150)); /* closes the window */
	CU_ASSERT_EQUAL(f->cut_depth, 4);
	/* tenant 0 (no target) may now have only 4 in flight */
	for (i = 0; i < 8; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 1), g_t0);
	}
	while (r.ops->dispatch(r.ch[0], g_t0 + ms(151)) != NULL) {
		n++;
	}
	CU_ASSERT_EQUAL(n, 4);
	stop(&r, 2);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_deadline_batches_and_starvation),
		UT_TEST(test_deadline_expiry),
		UT_TEST(test_deadline_depth),
		UT_TEST(test_params_rejected),
		UT_TEST(test_kyber_domains_and_tokens),
		UT_TEST(test_kyber_resize),
		UT_TEST(test_fair_shares),
		UT_TEST(test_fair_no_idling_no_banking),
		UT_TEST(test_fair_stale_tenant),
		UT_TEST(test_fair_vtime_wraps),
		UT_TEST(test_fair_seen_by_a_newer_clock),
		UT_TEST(test_fair_latency_target_cuts_others),
		UT_TEST(test_tokens_batched),
		UT_TEST(test_kyber_buckets),
		UT_TEST(test_kyber_throttles_writes_for_reads),
		UT_TEST(test_kyber_loop_resizes_on_total_latency),
		UT_TEST(test_kyber_loop_qd1_reader),
		UT_TEST(test_kyber_loop_reads_just_over),
		UT_TEST(test_kyber_loop_quiet_domain_once),
		UT_TEST(test_tokens_pass_locally),
		UT_TEST(test_direct_matches_queued),
		UT_TEST(test_direct_at_depth),
		UT_TEST(test_fair_direct),
	};
	struct ut_done unused = { 0 };

	(void)unused;
	(void)ut_done_cb;
	(void)ut_event_cb;
	return ut_run("sched", tests, sizeof(tests) / sizeof(tests[0]));
}
