/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedulers through their ops tables, with requests made by hand and a clock the
 * test moves: deadline's batches, starvation limit, expiry and depth; kyber's domains,
 * tokens, and depth changes from synthetic latencies; fair's shares, eligibility, no
 * idling and no banked credit; parameters. Then the three through their feedback on a
 * simulated device (seeded lognormal latencies, reads slowed by writes, time growing with
 * size): kyber's resizing, deadline's expiry under overload, fair's virtual time with
 * mixed sizes and a returning tenant. Nothing here is timed: the clock is the test's.
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

/*
 * Two channels of one thread, polled in turn: the first's completions and dispatches
 * come together, and it would take every freed token before the second asks. The
 * second, with nothing at the device and no token, says so: the first then leaves it the
 * next freed token; and for 1 ms at most if it stops asking.
 */
static void
test_deadline_hungry_channel_served(void)
{
	struct sched_run r;
	struct nvp_bdev_io *a, *b, *c;

	start(&r, &g_sched_deadline_ops, "depth=2", 2);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	a = r.ops->dispatch(r.ch[0], g_t0);
	b = r.ops->dispatch(r.ch[0], g_t0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1], g_t0)); /* no token: hungry */
	r.ops->complete(r.ch[0], a, 1, g_t0 + 1);
	/* channel 0, with one at the device, leaves the freed token to channel 1 */
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0 + 1));
	c = r.ops->dispatch(r.ch[1], g_t0 + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	r.ops->complete(r.ch[1], c, 1, g_t0 + 2);
	/* fed: channel 0 takes tokens again */
	a = r.ops->dispatch(r.ch[0], g_t0 + 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	/* hungry again, then silent for over 1 ms: it holds nobody back any more */
	r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0 + 2);
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1], g_t0 + 2));
	r.ops->complete(r.ch[0], a, 1, g_t0 + 3);
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0 + 3);
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0 + 3));
	a = r.ops->dispatch(r.ch[0], g_t0 + 2 + ms(1.01));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	r.ops->complete(r.ch[0], a, 1, g_t0 + 2 + ms(1.01));
	r.ops->complete(r.ch[0], b, 1, g_t0 + 2 + ms(1.01));
	c = r.ops->dispatch(r.ch[1], g_t0 + 2 + ms(1.01));
	CU_ASSERT_PTR_NOT_NULL(c);
	r.ops->complete(r.ch[1], c, 1, g_t0 + 2 + ms(1.01));
	stop(&r, 2);
}

/*
 * Kyber's tokens by domain, at a write depth of 1 (a congested window can cut it there):
 * the channel whose write completes has nothing of the domain at the device either, and
 * would take the freed token back at once, or, hungry too, before the older hungry
 * channel is polled; the older one gets it instead, and the two take turns.
 */
static void
test_kyber_hungry_channel_served(void)
{
	struct sched_run r;
	struct ky_bdev *k;
	struct nvp_bdev_io *a, *c;
	uint32_t i, holder, got[2] = { 0 }, turns = 0;

	start(&r, &g_sched_kyber_ops, NULL, 2);
	k = r.bctx;
	atomic_store(&k->depth[NVP_SCHED_KYBER_WRITE], 1);
	for (i = 0; i < 4; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
		r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_WRITE, 0, 1), g_t0);
	}
	a = r.ops->dispatch(r.ch[0], g_t0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	holder = 0;
	got[0]++;
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1], g_t0)); /* no token: hungry */
	for (i = 1; i < 8; i++) {
		/* the holder's write completes, then both are polled, the holder first and
		 * twice (the bdev core asks at its next submit and again from its poll) */
		r.ops->complete(r.ch[holder], a, 1, g_t0 + i);
		c = r.ops->dispatch(r.ch[holder], g_t0 + i);
		if (c == NULL) {
			c = r.ops->dispatch(r.ch[holder], g_t0 + i);
		}
		if (c == NULL) {
			c = r.ops->dispatch(r.ch[1 - holder], g_t0 + i);
			CU_ASSERT_PTR_NOT_NULL_FATAL(c);
			holder = 1 - holder;
			turns++;
		} else {
			CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1 - holder], g_t0 + i));
		}
		a = c;
		got[holder]++;
	}
	CU_ASSERT_EQUAL(turns, 7); /* the token changed hands every time */
	CU_ASSERT_EQUAL(got[0], 4);
	CU_ASSERT_EQUAL(got[1], 4);
	r.ops->complete(r.ch[holder], a, 1, g_t0 + 9);
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
	CU_ASSERT_EQUAL(g_sched_kyber_ops.init(g_bdev, "congest_pct=100", &ctx), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "congest_pct") != NULL);
	CU_ASSERT_EQUAL(g_sched_kyber_ops.init(g_bdev, "congest_pct=49", &ctx), -EINVAL);
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

/*
 * fair at its default depth, a QD1 reader beside a tenant that keeps the depth full, one
 * thread: the hog's channel is polled first, its completion frees a token and its next
 * dispatch would take it back, every time. The reader, with nothing at the device and no
 * token, is hungry: the hog leaves freed tokens to it, and it goes within the hog's
 * cached spares (batch 4 at depth 64) of completions, the hog dispatching nothing
 * meanwhile. The in-flight caps are off: they would hold the hog back here by
 * themselves (at 63 at the device, it is far over its cap beside the reader).
 */
static void
test_fair_hungry_reader_served(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *hog[64], *rd, *io;
	uint32_t i, n = 0, done = 0;

	start(&r, &g_sched_fair_ops, "inflight_cap=0", 2);
	f = r.bctx;
	for (i = 0; i < 64; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 1, 1), g_t0);
	}
	r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_WRITE, 1, 1), g_t0);
	while ((io = r.ops->dispatch(r.ch[0], g_t0)) != NULL) {
		hog[n++] = io;
	}
	CU_ASSERT_EQUAL_FATAL(n, 64); /* the depth is full; one still queued */
	rd = mkio(NVP_BDEV_IO_READ, 2, 1);
	CU_ASSERT_FALSE(r.ops->submit_direct(r.ch[1], rd, g_t0)); /* no token: queued */
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[1], g_t0 + 1));   /* still none: hungry */
	io = NULL;
	for (i = 1; i <= 8 && io != rd; i++) {
		r.ops->complete(r.ch[0], hog[done++], 1, g_t0 + 1 + i);
		/* the hog first, as the poll group polls it first */
		CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0 + 1 + i));
		io = r.ops->dispatch(r.ch[1], g_t0 + 1 + i);
	}
	CU_ASSERT_PTR_EQUAL_FATAL(io, rd);
	CU_ASSERT(i - 1 <= tok_batch(f->depth) + 1);
	/* fed: the hog takes the next freed token again */
	r.ops->complete(r.ch[0], hog[done++], 1, g_t0 + 20);
	io = r.ops->dispatch(r.ch[0], g_t0 + 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(io);
	hog[done - 1] = io;
	r.ops->complete(r.ch[1], rd, 1, g_t0 + 21);
	for (i = done - 1; i < 64; i++) {
		r.ops->complete(r.ch[0], hog[i], 1, g_t0 + 22);
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

/*
 * The fake clock of the kyber tests starts where the instance's first window does: init
 * read the real clock for its end, and a preempted test (a loaded host) would otherwise
 * feed a window that is not over yet.
 */
static uint64_t
ky_window_start(const struct ky_bdev *k)
{
	return atomic_load(&k->win_end) - k->win;
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
	g_t0 = ky_window_start(k);
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
	g_t0 = ky_window_start(k);
	now = g_t0;
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
 * Three windows of the tail case from @now: 95 % of the reads at 0.1 ms, 5 % at 8 ms, the
 * writes at @wr_lat.
 */
static void
tail_windows(struct sched_run *r, uint64_t now, uint64_t wr_lat)
{
	uint32_t w;

	for (w = 0; w < 3; w++) {
		now += ms(1);
		kyber_feed(r, NVP_BDEV_IO_READ, 570, ms(0.1), now);
		kyber_feed(r, NVP_BDEV_IO_READ, 30, ms(8), now);
		kyber_feed(r, NVP_BDEV_IO_WRITE, 600, wr_lat, now);
		now += ms(101);
		kyber_feed(r, NVP_BDEV_IO_WRITE, 1, wr_lat, now);
	}
}

/*
 * A QD1 reader's tail behind a write flood (bench/sched part (a)): 95 % of the reads fast,
 * 5 % at 4x their target (their p90 under it, their p99 over), writes a little over
 * their own target (11 ms of 10: at the device, not queued here). Congestion is judged at
 * p99 of device latency, and the congested reads cut the writes (a looser target) by
 * half each window, though the writes are over their target too. Judged at p90
 * (congest_pct=90) nothing is congested and nothing shrinks. A p99 in the first bucket
 * over the target is congestion.
 */
static void
test_kyber_tail_congestion(void)
{
	struct sched_run r;
	struct ky_bdev *k;
	uint64_t now;

	start(&r, &g_sched_kyber_ops, NULL, 1); /* read 2 ms, write 10 ms, p99 */
	k = r.bctx;
	g_t0 = ky_window_start(k);
	tail_windows(&r, g_t0, ms(11)); /* writes in bucket 4 */
	CU_ASSERT_EQUAL(k->congested, 3);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 128 / 2 / 2 / 2);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_READ], 256);
	stop(&r, 1);

	start(&r, &g_sched_kyber_ops, "congest_pct=90", 1);
	k = r.bctx;
	g_t0 = ky_window_start(k);
	atomic_store(&k->depth[NVP_SCHED_KYBER_WRITE], 64);
	tail_windows(&r, g_t0, ms(9)); /* writes in bucket 3: under target */
	CU_ASSERT_EQUAL(k->congested, 0);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 64);
	stop(&r, 1);

	/* the first bucket over target is over: p99 at 2.2 ms of 2 is congestion */
	start(&r, &g_sched_kyber_ops, NULL, 1);
	k = r.bctx;
	g_t0 = ky_window_start(k);
	now = g_t0 + ms(1);
	kyber_feed(&r, NVP_BDEV_IO_READ, 570, ms(0.1), now);
	kyber_feed(&r, NVP_BDEV_IO_READ, 30, ms(2.2), now);
	now += ms(101);
	kyber_feed(&r, NVP_BDEV_IO_READ, 1, ms(0.1), now);
	CU_ASSERT_EQUAL(k->congested, 1);
	stop(&r, 1);
}

/*
 * The schedulers through their feedback: a simulated device on the test's clock, stepped
 * every DSIM_STEP_US. Streams (a type, a tenant, a channel, a size) each keep qd requests
 * outstanding, queued in the scheduler or at the device; the scheduler dispatches what
 * it allows; each request at the device takes a seeded lognormal time (p99 twice the
 * median) whose median grows with its size and with the writes at the device (reads wait
 * behind programs). A stream's total latency is what its user sees: queueing in the
 * scheduler included.
 */
#define DSIM_STEP_US 20
#define DSIM_MAX_IOS 1024
#define DSIM_STREAMS 4
#define DSIM_HIST 20000 /* bins of ... */
#define DSIM_HIST_US 10 /* ... 10 us: up to 200 ms */

struct dsim_stream {
	uint8_t type;
	uint8_t tenant;
	uint32_t ch;     /* channel index */
	uint32_t qd;     /* requests kept outstanding */
	uint32_t blocks; /* per request (512 B) */
	/* what happened */
	uint32_t out;
	uint64_t done, bytes;
	uint64_t over; /* total latency over the simulation's target */
	uint64_t max;  /* ticks */
	uint32_t hist[DSIM_HIST];
};

struct dsim {
	struct sched_run r;
	struct ut_lat rng;
	uint64_t now;
	uint64_t target;               /* ticks */
	double rd_us, rd_per_write_us; /* read median: rd_us + rd_per_write_us x writes there */
	double wr_us, wr_per_write_us;
	double per_kib_us; /* and this much more per KiB past the first 4 */
	struct dsim_stream st[DSIM_STREAMS];
	uint32_t nst;
	unsigned int nch;
	/* requests */
	struct nvp_bdev_io ios[DSIM_MAX_IOS];
	uint64_t issued[DSIM_MAX_IOS], sent[DSIM_MAX_IOS], end[DSIM_MAX_IOS];
	uint32_t stream_of[DSIM_MAX_IOS];
	uint32_t dev[DSIM_MAX_IOS], ndev; /* at the device */
	uint32_t free_ids[DSIM_MAX_IOS], nfree;
	uint32_t dev_wr;
};

/*
 * \return false in the second suite (the stub module completing by lists): the
 * simulation does not use the stub, so one run is enough.
 */
static bool
dsim_start(struct dsim *s, const struct nvp_bdev_sched_ops *ops, const char *params,
	   unsigned int channels, uint64_t seed)
{
	uint32_t i;

	if (g_ut_stub_lists) {
		return false;
	}
	memset(s, 0, sizeof(*s));
	start(&s->r, ops, params, channels);
	s->nch = channels;
	ut_lat_seed(&s->rng, seed);
	s->now = g_t0;
	if (ops == &g_sched_kyber_ops) { /* the windows on this clock alone */
		atomic_store(&((struct ky_bdev *)s->r.bctx)->win_end,
			     g_t0 + ((struct ky_bdev *)s->r.bctx)->win);
	} else if (ops == &g_sched_fair_ops) {
		atomic_store(&((struct fair_bdev *)s->r.bctx)->win_end,
			     g_t0 + ((struct fair_bdev *)s->r.bctx)->win);
	}
	for (i = 0; i < DSIM_MAX_IOS; i++) {
		s->free_ids[s->nfree++] = DSIM_MAX_IOS - 1 - i;
	}
	return true;
}

/* A stream of @qd requests of @type, @blocks each, by @tenant on channel @ch. */
static struct dsim_stream *
dsim_stream(struct dsim *s, uint8_t type, uint8_t tenant, uint32_t ch, uint32_t qd, uint32_t blocks)
{
	struct dsim_stream *st = &s->st[s->nst++];

	st->type = type;
	st->tenant = tenant;
	st->ch = ch;
	st->qd = qd;
	st->blocks = blocks;
	return st;
}

static void
dsim_issue(struct dsim *s, uint32_t sid)
{
	struct dsim_stream *st = &s->st[sid];
	uint32_t id = s->free_ids[--s->nfree];
	struct nvp_bdev_io *io = &s->ios[id];

	memset(io, 0, sizeof(*io));
	io->type = st->type;
	io->tenant = st->tenant;
	io->num_blocks = st->blocks;
	io->offset_blocks = id;
	io->bdev = g_bdev;
	s->issued[id] = s->now;
	s->stream_of[id] = sid;
	st->out++;
	s->r.ops->submit(s->r.ch[st->ch], io, s->now);
}

static void
dsim_done(struct dsim *s, uint32_t id)
{
	struct dsim_stream *st = &s->st[s->stream_of[id]];
	uint64_t total = s->now - s->issued[id];

	s->r.ops->complete(s->r.ch[st->ch], &s->ios[id], s->now - s->sent[id], s->now);
	st->out--;
	st->done++;
	st->bytes += st->blocks * 512ull;
	st->over += s->target != 0 && total > s->target;
	st->max = NVP_MAX(st->max, total);
	st->hist[NVP_MIN(total / ms(DSIM_HIST_US / 1000.0), (uint64_t)DSIM_HIST - 1)]++;
	s->dev_wr -= st->type == NVP_BDEV_IO_WRITE;
	s->free_ids[s->nfree++] = id;
}

/* To the device: how long it takes there. */
static void
dsim_send(struct dsim *s, struct nvp_bdev_io *io)
{
	uint32_t id = (uint32_t)(io - s->ios);
	double p50;

	if (io->type == NVP_BDEV_IO_READ) {
		p50 = s->rd_us + s->rd_per_write_us * s->dev_wr;
	} else {
		p50 = s->wr_us + s->wr_per_write_us * s->dev_wr;
		s->dev_wr++;
	}
	if (io->num_blocks > 8) {
		p50 += s->per_kib_us * (double)(io->num_blocks - 8) / 2;
	}
	s->sent[id] = s->now;
	s->end[id] = s->now + ut_lat_lognormal(&s->rng, ms(p50 / 1000), ms(2 * p50 / 1000));
	s->dev[s->ndev++] = id;
}

static void
dsim_step(struct dsim *s)
{
	struct nvp_bdev_io *io;
	uint32_t i, c;

	for (i = 0; i < s->ndev;) {
		if (s->end[s->dev[i]] > s->now) {
			i++;
			continue;
		}
		dsim_done(s, s->dev[i]);
		s->dev[i] = s->dev[--s->ndev];
	}
	for (i = 0; i < s->nst; i++) {
		while (s->st[i].out < s->st[i].qd) {
			dsim_issue(s, i);
		}
	}
	for (c = 0; c < s->nch; c++) {
		while ((io = s->r.ops->dispatch(s->r.ch[c], s->now)) != NULL) {
			dsim_send(s, io);
		}
	}
	s->now += ms(DSIM_STEP_US / 1000.0);
}

static void
dsim_run(struct dsim *s, double run_ms)
{
	uint64_t end = s->now + ms(run_ms);

	while (s->now < end) {
		dsim_step(s);
	}
}

/* Stop every stream and let everything outstanding complete (within 10 s). */
static void
dsim_stop(struct dsim *s)
{
	uint64_t end = s->now + ms(10000);
	uint32_t i, out;

	do {
		for (i = 0, out = 0; i < s->nst; i++) {
			s->st[i].qd = 0;
			out += s->st[i].out;
		}
		dsim_step(s);
	} while (out != 0 && s->now < end);
	CU_ASSERT_EQUAL(out, 0); /* else the scheduler holds them for good */
	stop(&s->r, s->nch);
}

static void
dsim_reset_counts(struct dsim *s)
{
	for (uint32_t i = 0; i < s->nst; i++) {
		struct dsim_stream *st = &s->st[i];

		st->done = st->bytes = st->over = st->max = 0;
		memset(st->hist, 0, sizeof(st->hist));
	}
}

/* The @pct-th percentile of @st's total latency since the last reset, in us. */
static uint32_t
dsim_pct(const struct dsim_stream *st, uint32_t pct)
{
	uint64_t want = (st->done * pct + 99) / 100, n = 0;
	uint32_t b;

	for (b = 0; b < DSIM_HIST - 1; b++) {
		n += st->hist[b];
		if (n >= want) {
			break;
		}
	}
	return (b + 1) * DSIM_HIST_US;
}

static struct ky_bdev *
dsim_kyber(struct dsim *s)
{
	return s->r.bctx;
}

/*
 * Reads queued in kyber count: resizing uses total latency. Writes over their target at
 * the device congest it while reads there are fast, so every congested window cuts the
 * read depth, until reads wait in kyber long enough that their total latency is over
 * target, which grows it again: the read depth settles where 32 reads outstanding just
 * meet the target. When the writes stop and more reads come, they wait in kyber at the
 * depth the writes left, over their target, and the depth grows until they do not.
 */
static void
test_kyber_loop_resizes_on_total_latency(void)
{
	static struct dsim s;
	struct dsim_stream *rd, *wr;
	struct ky_bdev *k;
	uint32_t depth1;

	if (!dsim_start(&s, &g_sched_kyber_ops, "read_lat_us=1000 write_lat_us=10000", 1, 1)) {
		return;
	}
	k = dsim_kyber(&s);
	s.target = k->target[NVP_SCHED_KYBER_READ];
	s.rd_us = 100;   /* reads are fast at the device throughout */
	s.wr_us = 15000; /* writes at 1.5x their target: congested */
	rd = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 32, 8);
	wr = dsim_stream(&s, NVP_BDEV_IO_WRITE, 0, 0, 64, 8);
	dsim_run(&s, 2000);
	depth1 = k->depth[NVP_SCHED_KYBER_READ];
	CU_ASSERT(k->congested >= 5);
	CU_ASSERT(depth1 < 256); /* cut by congestion ... */
	CU_ASSERT(depth1 >= 4);  /* ... not below what the reads need */
	dsim_reset_counts(&s);
	dsim_run(&s, 1000);
	CU_ASSERT(rd->over * 10 < rd->done); /* the target met for 90 % of reads */
	wr->qd = 0;
	rd->qd = 128;
	dsim_run(&s, 1000);
	dsim_reset_counts(&s);
	dsim_run(&s, 1000);
	printf("(read depth %u, then %u; %lu of %lu reads over target) ", depth1,
	       k->depth[NVP_SCHED_KYBER_READ], (unsigned long)rd->over, (unsigned long)rd->done);
	CU_ASSERT(k->depth[NVP_SCHED_KYBER_READ] > depth1);
	CU_ASSERT(rd->over * 100 < rd->done);
	dsim_stop(&s);
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
	static struct dsim s;
	struct dsim_stream *rd, *wr;
	struct ky_bdev *k;

	if (!dsim_start(&s, &g_sched_kyber_ops, "read_lat_us=1000", 1, 2)) {
		return;
	}
	k = dsim_kyber(&s);
	s.rd_us = 100;
	s.rd_per_write_us = 30;
	s.wr_us = 300;
	s.wr_per_write_us = 10; /* 1.6 ms at 128: well under the writes' 10 ms */
	rd = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 1, 8);
	wr = dsim_stream(&s, NVP_BDEV_IO_WRITE, 0, 0, 128, 8);
	dsim_run(&s, 1150);
	CU_ASSERT(rd->done < 400);
	CU_ASSERT_EQUAL(k->congested, 1);
	CU_ASSERT(k->depth[NVP_SCHED_KYBER_WRITE] < 128);
	dsim_run(&s, 4000);
	dsim_reset_counts(&s);
	dsim_run(&s, 1000);
	printf("(write depth %u, %lu reads, p90 %u us) ", k->depth[NVP_SCHED_KYBER_WRITE],
	       (unsigned long)rd->done, dsim_pct(rd, 90));
	CU_ASSERT(dsim_pct(rd, 90) <= 1000);
	CU_ASSERT(wr->done > 10000); /* and the writes go on */
	dsim_stop(&s);
}

/*
 * Reads just over their target at the device: their p90 in the first bucket past it
 * (1 to 1.25 ms of 1 ms) is congestion, and the writes that slow them are cut until the
 * reads' p90 is under target.
 */
static void
test_kyber_loop_reads_just_over(void)
{
	static struct dsim s;
	struct dsim_stream *rd;
	struct ky_bdev *k;

	if (!dsim_start(&s, &g_sched_kyber_ops, "read_lat_us=1000", 1, 3)) {
		return;
	}
	k = dsim_kyber(&s);
	s.rd_us = 500;
	s.rd_per_write_us = 5; /* p90 1.2 ms with 64 writes at the device, 0.97 with 32 */
	s.wr_us = 1000;
	rd = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 16, 8);
	dsim_stream(&s, NVP_BDEV_IO_WRITE, 0, 0, 64, 8);
	dsim_run(&s, 3000);
	dsim_reset_counts(&s);
	dsim_run(&s, 1000);
	printf("(write depth %u, read p90 %u us) ", k->depth[NVP_SCHED_KYBER_WRITE],
	       dsim_pct(rd, 90));
	CU_ASSERT(k->congested >= 1);
	CU_ASSERT(k->depth[NVP_SCHED_KYBER_WRITE] < 64);
	CU_ASSERT(dsim_pct(rd, 90) <= 1000);
	dsim_stop(&s);
}

/*
 * A domain without samples in a congested window is resized by the p99 it had before,
 * once (kyber's domain_p99): a writer that paused while reads are slow for reasons of the
 * device's own (garbage collection) has its depth cut once, not again every window.
 */
static void
test_kyber_loop_quiet_domain_once(void)
{
	static struct dsim s;
	struct dsim_stream *wr;
	struct ky_bdev *k;
	int saved;

	if (!dsim_start(&s, &g_sched_kyber_ops, "read_lat_us=1000", 1, 4)) {
		return;
	}
	k = dsim_kyber(&s);
	s.rd_us = 100;
	s.wr_us = 2000; /* 4 ms p99 of 10: no resize, nothing congested */
	dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 16, 8);
	wr = dsim_stream(&s, NVP_BDEV_IO_WRITE, 0, 0, 32, 8);
	dsim_run(&s, 1000);
	saved = k->p99_saved[NVP_SCHED_KYBER_WRITE];
	CU_ASSERT(saved >= 0 && saved < 4);
	CU_ASSERT_EQUAL(k->congested, 0);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 128);
	wr->qd = 0;
	s.rd_us = 3000;
	dsim_run(&s, 1000);
	CU_ASSERT(k->congested >= 5);
	CU_ASSERT_EQUAL(k->depth[NVP_SCHED_KYBER_WRITE], 128 * (uint32_t)(saved + 1) / 4);
	dsim_stop(&s);
}

/*
 * Both directions' oldest requests have expired: the one whose deadline came first goes
 * first (mq-deadline's rule), whichever direction it is in.
 */
static void
test_deadline_expired_older_first(void)
{
	struct sched_run r;
	struct nvp_bdev_io *w, *rd;

	start(&r, &g_sched_deadline_ops,
	      "read_expire_ms=10 write_expire_ms=20 fifo_batch=1 writes_starved=100", 1);
	/* the write's deadline (t0 + 20) comes before the read's (t0 + 15 + 10) */
	w = mkio(NVP_BDEV_IO_WRITE, 0, 1);
	rd = mkio(NVP_BDEV_IO_READ, 0, 1);
	r.ops->submit(r.ch[0], w, g_t0);
	r.ops->submit(r.ch[0], rd, g_t0 + ms(15));
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0 + ms(30)), w);
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0 + ms(30)), rd);
	/* the read's (t0 + 10) before the write's (t0 + 5 + 20) */
	rd = mkio(NVP_BDEV_IO_READ, 0, 1);
	w = mkio(NVP_BDEV_IO_WRITE, 0, 1);
	r.ops->submit(r.ch[0], rd, g_t0);
	r.ops->submit(r.ch[0], w, g_t0 + ms(5));
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0 + ms(30)), rd);
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0 + ms(30)), w);
	r.ops->complete(r.ch[0], rd, 1, g_t0 + ms(30));
	r.ops->complete(r.ch[0], w, 1, g_t0 + ms(30));
	stop(&r, 1);
}

/*
 * deadline on an overloaded device: reads and writes each keep 64 outstanding against a
 * depth of 4, so every request waits past its expiry. Expiry then serves the two
 * directions in deadline order: both complete I/O in every 100 ms, a request waits about
 * as long past its deadline whichever its direction (within a few batches), and none
 * much longer than the others of its direction.
 */
static void
test_deadline_loop_overloaded(void)
{
	static struct dsim s;
	struct dsim_stream *rd, *wr;
	uint64_t rd_before, wr_before;
	uint32_t slice, starved = 0;
	int late_rd, late_wr;

	if (!dsim_start(
		    &s, &g_sched_deadline_ops,
		    "read_expire_ms=20 write_expire_ms=40 fifo_batch=8 writes_starved=2 depth=4", 1,
		    5)) {
		return;
	}
	s.rd_us = 800;
	s.wr_us = 1500;
	s.rd_per_write_us = 100;
	rd = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 64, 8);
	wr = dsim_stream(&s, NVP_BDEV_IO_WRITE, 0, 0, 64, 8);
	dsim_run(&s, 500);
	dsim_reset_counts(&s);
	for (slice = 0; slice < 20; slice++) {
		rd_before = rd->done;
		wr_before = wr->done;
		dsim_run(&s, 100);
		starved += rd->done == rd_before || wr->done == wr_before;
	}
	printf("(reads p50 %u max %lu us, writes p50 %u max %lu us) ", dsim_pct(rd, 50),
	       (unsigned long)(rd->max * 1000000 / g_hz), dsim_pct(wr, 50),
	       (unsigned long)(wr->max * 1000000 / g_hz));
	CU_ASSERT_EQUAL(starved, 0);
	CU_ASSERT(dsim_pct(rd, 50) > 20000 && dsim_pct(wr, 50) > 40000); /* all expire */
	late_rd = (int)dsim_pct(rd, 50) - 20000;
	late_wr = (int)dsim_pct(wr, 50) - 40000;
	CU_ASSERT(abs(late_rd - late_wr) < 4000);
	CU_ASSERT(rd->max < 2 * ms(dsim_pct(rd, 99) / 1000.0));
	CU_ASSERT(wr->max < 2 * ms(dsim_pct(wr, 99) / 1000.0));
	dsim_stop(&s);
}

/*
 * fair's virtual time is in bytes: tenant 0 (weight 1) reads 4 KiB at a time, tenant 1
 * (weight 4) writes 64 KiB at a time, each from its own thread, on a device whose time
 * grows with size. With the depth the limit, they share the bytes 20 / 80.
 */
static void
test_fair_loop_mixed_sizes(void)
{
	static struct dsim s;
	struct dsim_stream *a, *b;
	double share;

	if (!dsim_start(&s, &g_sched_fair_ops, "weights=1/4 depth=8", 2, 6)) {
		return;
	}
	s.rd_us = 80;
	s.wr_us = 30;
	s.per_kib_us = 1.5;
	a = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 32, 8);
	b = dsim_stream(&s, NVP_BDEV_IO_WRITE, 1, 1, 16, 128);
	dsim_run(&s, 200);
	dsim_reset_counts(&s);
	dsim_run(&s, 2000);
	share = (double)b->bytes / (double)(a->bytes + b->bytes);
	printf("(tenant 1: %.1f %% of the bytes) ", 100 * share);
	CU_ASSERT(share > 0.77 && share < 0.83);
	CU_ASSERT(a->done > 1000 && b->done > 1000);
	dsim_stop(&s);
}

/*
 * A tenant that was idle comes back: it starts at the others' virtual time, so it gets
 * its share at once but banks nothing from its idle spell: the other tenant keeps its own
 * share in the first 100 ms after the return, not only after a catch-up.
 */
static void
test_fair_loop_tenant_returns(void)
{
	static struct dsim s;
	struct dsim_stream *a, *b;
	double share;

	if (!dsim_start(&s, &g_sched_fair_ops, "depth=8", 2, 7)) {
		return;
	}
	s.rd_us = 100;
	a = dsim_stream(&s, NVP_BDEV_IO_READ, 0, 0, 32, 8);
	b = dsim_stream(&s, NVP_BDEV_IO_READ, 1, 1, 32, 8);
	dsim_run(&s, 300);
	b->qd = 0;
	dsim_run(&s, 1000); /* tenant 0 alone: 80,000 requests ahead */
	b->qd = 32;
	dsim_reset_counts(&s);
	dsim_run(&s, 100);
	share = (double)a->bytes / (double)(a->bytes + b->bytes);
	printf("(tenant 0: %.1f %% after the return) ", 100 * share);
	CU_ASSERT(share > 0.45 && share < 0.55);
	dsim_stop(&s);
}

/* Requests of @tenant at the device, as inflight_cap counts them. */
static uint32_t
fair_at_dev(const struct fair_bdev *f, uint32_t tenant)
{
	return (uint32_t)atomic_load(&f->t[tenant].load);
}

/* Dispatch from @ch until it gives nothing, into @out; \return how many. */
static uint32_t
fair_take(struct sched_run *r, void *ch, struct nvp_bdev_io **out)
{
	struct nvp_bdev_io *io;
	uint32_t n = 0;

	while ((io = r->ops->dispatch(ch, g_t0)) != NULL) {
		out[n++] = io;
	}
	return n;
}

/*
 * inflight_cap's floor: a QD1 reader beside a tenant of equal weight is limited by its
 * own latency; scaling from it (1 outstanding / weight 1) would hold the other to one
 * request at the device. The scale is at least depth / (2 x weights): 64 / 4, 16.
 */
static void
test_fair_inflight_cap_floor(void)
{
	struct sched_run r;
	struct fair_bdev *f;
	struct nvp_bdev_io *rd, *d[64];
	uint32_t i, n;

	start(&r, &g_sched_fair_ops, NULL, 2);
	f = r.bctx;
	rd = mkio(NVP_BDEV_IO_READ, 0, 1);
	CU_ASSERT_TRUE(r.ops->submit_direct(r.ch[0], rd, g_t0));
	for (i = 0; i < 40; i++) {
		r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 1), g_t0);
	}
	n = fair_take(&r, r.ch[1], d);
	CU_ASSERT_EQUAL(f->ncontend, 2);
	CU_ASSERT_EQUAL(n, 16);
	CU_ASSERT_EQUAL(fair_at_dev(f, 1), 16);
	/* the reader completes and goes idle: the other is alone, no cap */
	r.ops->complete(r.ch[0], rd, 1, g_t0);
	CU_ASSERT_EQUAL(f->ncontend, 1);
	n += fair_take(&r, r.ch[1], d + n);
	CU_ASSERT_EQUAL(n, 40);
	for (i = 0; i < n; i++) {
		r.ops->complete(r.ch[1], d[i], 1, g_t0);
	}
	CU_ASSERT_EQUAL(f->inflight, 0);
	stop(&r, 2);
}

/*
 * inflight_cap by hand, weights 1/2/4 at depth 64, one channel per tenant. Tenant 2 keeps
 * 32 outstanding, all at the device (it is limited by its own queue depth: 32 / 4 is
 * within 64 / 7): tenants 0 and 1, with 32 each queued, get 8 and 16 at the device while
 * 8 tokens stay free. Tenant 2 keeping fewer lowers their caps; tenant 2 gone, tenant 1
 * (32 / 2 within 64 / 3) sets tenant 0's cap at 16; tenant 1 gone, tenant 0 has the whole
 * depth. A tenant with nothing at the device may always send one.
 */
static void
test_fair_inflight_cap(void)
{
	static struct nvp_bdev_io *d0[128], *d1[64], *d2[64];
	struct sched_run r;
	struct fair_bdev *f;
	uint32_t i, n0 = 0, n1, n2 = 0, c0 = 0;

	start(&r, &g_sched_fair_ops, "weights=1/2/4 depth=64", 3);
	f = r.bctx;
	CU_ASSERT_TRUE(f->cap); /* the default */
	for (i = 0; i < 32; i++) {
		d2[n2] = mkio(NVP_BDEV_IO_READ, 2, 8);
		CU_ASSERT_TRUE(r.ops->submit_direct(r.ch[2], d2[n2], g_t0)); /* alone: no cap */
		n2++;
	}
	for (i = 0; i < 64; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	n0 = fair_take(&r, r.ch[0], d0);
	CU_ASSERT_EQUAL(n0, 8); /* 1 x 32 / 4 */
	for (i = 0; i < 32; i++) {
		r.ops->submit(r.ch[1], mkio(NVP_BDEV_IO_READ, 1, 8), g_t0);
	}
	n1 = fair_take(&r, r.ch[1], d1);
	CU_ASSERT_EQUAL(n1, 16); /* 2 x 32 / 4 */
	CU_ASSERT_EQUAL(f->inflight, 56);
	CU_ASSERT_EQUAL(fair_at_dev(f, 0), 8);
	CU_ASSERT_EQUAL(fair_at_dev(f, 1), 16);
	CU_ASSERT_EQUAL(fair_at_dev(f, 2), 32);
	CU_ASSERT_EQUAL(f->ncontend, 3);
	/* tenant 0's own completion lets one more of it go, no more */
	r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
	CU_ASSERT_EQUAL(fair_take(&r, r.ch[0], d0 + n0), 1);
	n0++;
	/* tenant 2 keeps 30: tenant 0's cap is ceil(7.5), still 8 */
	for (i = 0; i < 2; i++) {
		r.ops->complete(r.ch[2], d2[--n2], 1, g_t0);
	}
	r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
	CU_ASSERT_EQUAL(fair_take(&r, r.ch[0], d0 + n0), 1);
	n0++;
	/* tenant 2 keeps 28: tenant 0's cap falls to 7 */
	for (i = 0; i < 2; i++) {
		r.ops->complete(r.ch[2], d2[--n2], 1, g_t0);
	}
	r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
	CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0)); /* 7 there: at its cap */
	r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
	n0 += fair_take(&r, r.ch[0], d0 + n0);
	CU_ASSERT_EQUAL(fair_at_dev(f, 0), 7);
	/* tenant 2 keeps one, below the floor (a latency-bound tenant): the scale is
	 * 64 / (2 x 7), so that half the depth stays usable, not 1 / 4 */
	while (n2 > 1) {
		r.ops->complete(r.ch[2], d2[--n2], 1, g_t0);
	}
	while (c0 < n0) {
		r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
	}
	n0 += fair_take(&r, r.ch[0], d0 + n0);
	CU_ASSERT_EQUAL(fair_at_dev(f, 0), 5); /* ceil(1 x 64 / 14) */
	/* tenant 2 goes idle: tenant 1 (32 outstanding, weight 2, within 64 x 2 / 3) is
	 * limited; tenant 0 (50 or so) is not: its cap is 16 */
	r.ops->complete(r.ch[2], d2[--n2], 1, g_t0);
	CU_ASSERT_EQUAL(f->ncontend, 2);
	n0 += fair_take(&r, r.ch[0], d0 + n0);
	n1 += fair_take(&r, r.ch[1], d1 + n1);
	CU_ASSERT_EQUAL(fair_at_dev(f, 0), 16);
	CU_ASSERT_EQUAL(fair_at_dev(f, 1), 32);
	/* tenant 1 goes idle: tenant 0 alone, the whole depth for what it has left */
	for (i = 0; i < n1; i++) {
		r.ops->complete(r.ch[1], d1[i], 1, g_t0);
	}
	CU_ASSERT_EQUAL(f->ncontend, 1);
	for (i = 0; i < 50; i++) {
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	n0 += fair_take(&r, r.ch[0], d0 + n0);
	CU_ASSERT((f->t[0].load >> 32) > 64);
	CU_ASSERT_EQUAL(fair_at_dev(f, 0), 64);
	CU_ASSERT_EQUAL(f->inflight, 64);
	while (c0 < n0) {
		r.ops->complete(r.ch[0], d0[c0++], 1, g_t0);
		n0 += fair_take(&r, r.ch[0], d0 + n0);
	}
	CU_ASSERT_EQUAL(n0, 64 + 50); /* every request went */
	CU_ASSERT_EQUAL(f->ncontend, 0);
	CU_ASSERT_EQUAL(f->inflight, 0);
	CU_ASSERT_EQUAL(f->t[0].load, 0);
	stop(&r, 3);
}

/*
 * The direct path is capped too. Beside tenant 1's 32 (weight 4), tenant 0's requests
 * go while it has at most 12 outstanding (limited itself: within 64 / 5, it sets the
 * scale); its 13th is queued, and waits until fewer than 8 (1 x 32 / 4) are at the device.
 */
static void
test_fair_inflight_cap_direct(void)
{
	static struct nvp_bdev_io *d[64];
	struct nvp_bdev_io *io;
	struct sched_run r;
	uint32_t i, n = 0;

	start(&r, &g_sched_fair_ops, "weights=1/4 depth=64", 2);
	for (i = 0; i < 32; i++) {
		d[i] = mkio(NVP_BDEV_IO_READ, 1, 8);
		CU_ASSERT_TRUE(r.ops->submit_direct(r.ch[1], d[i], g_t0));
	}
	for (i = 32; i < 64; i++) {
		d[i] = mkio(NVP_BDEV_IO_READ, 0, 8);
		if (!r.ops->submit_direct(r.ch[0], d[i], g_t0)) {
			break;
		}
		n++;
	}
	CU_ASSERT_EQUAL(n, 12);
	/* a closed loop: each completion brings a new request, 13 outstanding */
	for (i = 32; i < 32 + 4; i++) {
		r.ops->complete(r.ch[0], d[i], 1, g_t0);
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
		CU_ASSERT_PTR_NULL(r.ops->dispatch(r.ch[0], g_t0)); /* 11 .. 8 there */
	}
	r.ops->complete(r.ch[0], d[i++], 1, g_t0);
	CU_ASSERT_PTR_EQUAL(r.ops->dispatch(r.ch[0], g_t0), d[32 + n]); /* 7 there */
	for (; i < 32 + n; i++) {
		r.ops->complete(r.ch[0], d[i], 1, g_t0);
	}
	while ((io = r.ops->dispatch(r.ch[0], g_t0)) != NULL) {
		r.ops->complete(r.ch[0], io, 1, g_t0);
	}
	for (i = 0; i < 32; i++) {
		r.ops->complete(r.ch[1], d[i], 1, g_t0);
	}
	r.ops->complete(r.ch[0], d[32 + n], 1, g_t0);
	CU_ASSERT_EQUAL(((struct fair_bdev *)r.bctx)->ncontend, 0);
	stop(&r, 2);
}

/* inflight_cap=0: the depth is the only limit, tenant 0 takes the tokens tenant 2 left. */
static void
test_fair_inflight_cap_off(void)
{
	static struct nvp_bdev_io *d[128];
	struct sched_run r;
	uint32_t i, n;

	start(&r, &g_sched_fair_ops, "weights=1/2/4 depth=64 inflight_cap=0", 3);
	for (i = 0; i < 32; i++) {
		d[i] = mkio(NVP_BDEV_IO_READ, 2, 8);
		CU_ASSERT_TRUE(r.ops->submit_direct(r.ch[2], d[i], g_t0));
		r.ops->submit(r.ch[0], mkio(NVP_BDEV_IO_READ, 0, 8), g_t0);
	}
	n = fair_take(&r, r.ch[0], d + 32);
	CU_ASSERT_EQUAL(n, 32);
	CU_ASSERT_EQUAL(((struct fair_bdev *)r.bctx)->t[0].load, 0); /* not counted */
	for (i = 0; i < 64; i++) {
		r.ops->complete(r.ch[i < 32 ? 2 : 0], d[i], 1, g_t0);
	}
	stop(&r, 3);
}

/*
 * Three tenants 1:2:4, QD32 reads each from its own thread, at fair's default depth 64,
 * on a device whose latency does not grow with what it holds (each request's share of
 * the device is its share of what is in flight). Tenant 2 cannot keep more than its 32
 * at the device: with inflight_cap the others are held to 8 and 16 and the shares are
 * 1:2:4 within 5 %; without it they take its slack (about 1:2:3).
 */
static double
fair_loop_err(const char *params, uint64_t seed, double *total)
{
	static struct dsim s;
	struct dsim_stream *st[3];
	double want[3] = { 1.0 / 7, 2.0 / 7, 4.0 / 7 }, err = 0, all = 0;
	uint32_t i;

	if (!dsim_start(&s, &g_sched_fair_ops, params, 3, seed)) {
		return -1;
	}
	s.rd_us = 100;
	for (i = 0; i < 3; i++) {
		st[i] = dsim_stream(&s, NVP_BDEV_IO_READ, (uint8_t)i, i, 32, 8);
	}
	dsim_run(&s, 100);
	dsim_reset_counts(&s);
	dsim_run(&s, 1000);
	for (i = 0; i < 3; i++) {
		all += (double)st[i]->bytes;
	}
	for (i = 0; i < 3; i++) {
		double d = (double)st[i]->bytes / all - want[i];

		err = NVP_MAX(err, (d < 0 ? -d : d) / want[i]);
	}
	*total = all;
	printf("(%s: %.1f / %.1f / %.1f %%) ", params, 100 * (double)st[0]->bytes / all,
	       100 * (double)st[1]->bytes / all, 100 * (double)st[2]->bytes / all);
	dsim_stop(&s);
	return err;
}

static void
test_fair_loop_inflight_cap(void)
{
	double err_on, err_off, all_on, all_off;

	err_on = fair_loop_err("weights=1/2/4", 8, &all_on);
	if (err_on < 0) {
		return;
	}
	err_off = fair_loop_err("weights=1/2/4 inflight_cap=0", 8, &all_off);
	CU_ASSERT(err_on < 0.05);
	CU_ASSERT(err_off > 0.10); /* the goal needs the caps */
	/* 56 of the 64 in flight: about 7 / 8 of the bytes */
	CU_ASSERT(all_on > 0.82 * all_off && all_on < 0.92 * all_off);
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
		UT_TEST(test_deadline_hungry_channel_served),
		UT_TEST(test_kyber_hungry_channel_served),
		UT_TEST(test_fair_hungry_reader_served),
		UT_TEST(test_fair_inflight_cap_floor),
		UT_TEST(test_params_rejected),
		UT_TEST(test_kyber_domains_and_tokens),
		UT_TEST(test_kyber_resize),
		UT_TEST(test_fair_shares),
		UT_TEST(test_fair_no_idling_no_banking),
		UT_TEST(test_fair_stale_tenant),
		UT_TEST(test_fair_vtime_wraps),
		UT_TEST(test_fair_seen_by_a_newer_clock),
		UT_TEST(test_fair_latency_target_cuts_others),
		UT_TEST(test_fair_inflight_cap),
		UT_TEST(test_fair_inflight_cap_off),
		UT_TEST(test_fair_inflight_cap_direct),
		UT_TEST(test_tokens_batched),
		UT_TEST(test_kyber_buckets),
		UT_TEST(test_kyber_throttles_writes_for_reads),
		UT_TEST(test_kyber_tail_congestion),
		UT_TEST(test_kyber_loop_resizes_on_total_latency),
		UT_TEST(test_kyber_loop_qd1_reader),
		UT_TEST(test_kyber_loop_reads_just_over),
		UT_TEST(test_kyber_loop_quiet_domain_once),
		UT_TEST(test_deadline_expired_older_first),
		UT_TEST(test_deadline_loop_overloaded),
		UT_TEST(test_fair_loop_mixed_sizes),
		UT_TEST(test_fair_loop_tenant_returns),
		UT_TEST(test_fair_loop_inflight_cap),
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
