/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/bdev_channel.c: channel options, statistics aggregated over
 * live and destroyed channels, accounting on/off, a concurrent reader seeing consistent
 * counters (seqcount), poll groups polling all their channels, and the poll hook.
 */
#include "ut_bdev.h"

static void
test_channel_opts(void)
{
	struct nvp_bdev_channel_opts o;
	struct nvp_bdev_channel *ch = NULL;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;

	bdev = ut_stub_register("co", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("co", false, ut_event_cb, &ev, &desc), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.io_pool_size, BDEV_IO_POOL_DEFAULT);
	o.io_pool_size = 1;
	CU_ASSERT_EQUAL(nvp_bdev_channel_create(desc, &o, &ch), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "io_pool_size") != NULL);
	o.io_pool_size = 8;
	o.opts_size = 0;
	CU_ASSERT_EQUAL(nvp_bdev_channel_create(desc, &o, &ch), -EINVAL);
	CU_ASSERT_PTR_NULL(ch);
	CU_ASSERT_EQUAL(g_stub.channels, 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

static struct nvp_bdev_stats g_stats = { .info_size = sizeof(struct nvp_bdev_stats) };

static void
do_reads(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, int n, uint64_t blocks)
{
	struct ut_done done = { 0 };
	static char buf[8 * 512];
	int i;

	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, blocks, ut_done_cb, &done),
				0);
		nvp_bdev_channel_poll(ch);
	}
	CU_ASSERT_EQUAL(done.calls, (uint32_t)n);
}

static void
test_stats_aggregation(void)
{
	struct nvp_bdev_channel *ch1, *ch2;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	char buf[512];

	bdev = ut_stub_register("sa", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("sa", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch1), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch2), 0);
	do_reads(desc, ch1, 5, 1);
	do_reads(desc, ch2, 3, 2);
	g_stub.fail_index = (int)g_stub.submitted;
	g_stub.fail_status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch2, buf, 0, 1, 0, ut_done_cb, &done), 0);
	nvp_bdev_channel_poll(ch2);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_TRUE(nvme_cpl_is_error(&done.cpl));
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch1, buf, 0, 1, ut_done_cb, &done), 0);

	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.num_channels, 2);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 8);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].bytes, (5 + 6) * 512);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 1);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_WRITE].ios, 1);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_WRITE].errors, 1);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 8);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].queued), 8);
	CU_ASSERT(g_stats.op[NVP_BDEV_IO_READ].busy_ticks > 0);
	CU_ASSERT(g_stats.ticks_hz > 0);

	/* a destroyed channel's totals stay with the bdev */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch2), 0);
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.num_channels, 1);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 9);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_WRITE].errors, 1);

	/* accounting off: counted, not timed */
	g_stub.auto_complete = true;
	nvp_bdev_set_accounting(bdev, false);
	nvp_bdev_channel_poll(ch1);
	do_reads(desc, ch1, 4, 1);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 13);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 9);
	nvp_bdev_set_accounting(bdev, true);
	nvp_bdev_channel_poll(ch1);
	do_reads(desc, ch1, 1, 1);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 10);

	CU_ASSERT_EQUAL(nvp_bdev_get_stats(NULL, &g_stats), -EINVAL);
	CU_ASSERT_EQUAL(g_stats.info_size, sizeof(g_stats)); /* left as the caller set it */
	g_stats.info_size = sizeof(size_t);                  /* too small: nothing filled */
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), -EINVAL);
	g_stats.info_size = sizeof(g_stats);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch1), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/*
 * The channel reads the clock inline where the ticks are the TSC, and through a call
 * (the completion's out-of-line path) where not: both must time every I/O. At depth 1
 * with one type, every busy period is one I/O's device time, so the busy time equals
 * the sum of the device latencies.
 */
static void
test_stats_clock_sources(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;
	int tsc;

	bdev = ut_stub_register("cs", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("cs", false, ut_event_cb, &ev, &desc), 0);
	for (tsc = 0; tsc <= 1; tsc++) {
		if (tsc && !nvp_env_get_ticks_is_tsc()) {
			continue; /* TSC ticks would not be this env's ticks */
		}
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
		ch->ticks_tsc = tsc != 0;
		do_reads(desc, ch, 7, 1);
		CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
		CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 7);
		CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 7);
		CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].device.sum_hi, 0);
		/* one clock for submission and completion: no absurd latency */
		CU_ASSERT(nvp_histogram_max(&g_stats.op[NVP_BDEV_IO_READ].device) <
			  g_stats.ticks_hz);
		CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].busy_ticks,
				g_stats.op[NVP_BDEV_IO_READ].device.sum_lo);
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
		/* the next round counts from zero again */
		free(bdev->retired);
		bdev->retired = NULL;
	}
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/*
 * A busy period that began while accounting was off counts from the poll that switched
 * accounting on: not lost (the old rule: no start, no busy time) and not from tick 0.
 * The read sent while off is not timed; the one sent after ends the period, timed.
 */
static void
test_busy_joins_accounting(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	static char buf[512];
	uint64_t on, end, busy;

	bdev = ut_stub_register("bj", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("bj", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	g_stub.auto_complete = false;
	nvp_bdev_set_accounting(bdev, false);
	nvp_bdev_channel_poll(ch); /* a switch takes effect in the channel's next poll */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), 0);
	nvp_bdev_set_accounting(bdev, true);
	on = nvp_env_get_ticks();
	nvp_bdev_channel_poll(ch);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 1, 1, ut_done_cb, &done), 0);
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(ch); /* both complete: the untimed one, then the timed one */
	end = nvp_env_get_ticks();
	CU_ASSERT_EQUAL(done.calls, 2);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 2);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 1);
	busy = g_stats.op[NVP_BDEV_IO_READ].busy_ticks;
	CU_ASSERT(busy > 0);
	CU_ASSERT(busy <= end - on);
	CU_ASSERT(busy >= nvp_histogram_max(&g_stats.op[NVP_BDEV_IO_READ].device));
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/*
 * A timed read, then one sent while accounting was off, completed together (one list in
 * the list suite) with accounting on: the second is counted, not timed (its submit tick
 * is 0, which the list accounting tests only where a tick differs from the run's).
 */
static void
test_untimed_after_timed(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	static char buf[512];

	bdev = ut_stub_register("ut", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("ut", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), 0);
	nvp_bdev_set_accounting(bdev, false);
	nvp_bdev_channel_poll(ch); /* a switch takes effect in the channel's next poll */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 1, 1, ut_done_cb, &done), 0);
	nvp_bdev_set_accounting(bdev, true);
	nvp_bdev_channel_poll(ch);
	CU_ASSERT_EQUAL(done.calls, 0);
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(ch); /* both: the timed one first */
	CU_ASSERT_EQUAL(done.calls, 2);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 2);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 1);
	CU_ASSERT(nvp_histogram_max(&g_stats.op[NVP_BDEV_IO_READ].device) < g_stats.ticks_hz);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/* A callback that destroys the channel it completes on, and polls it first (nested). */
struct destroy_in_cb {
	struct nvp_bdev_channel *ch;
	bool nested_poll;
	int rc;
	uint32_t calls;
};

static void
destroy_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct destroy_in_cb *d = arg;

	(void)cpl;
	d->calls++;
	if (d->nested_poll) {
		nvp_bdev_channel_poll(d->ch); /* nothing to find: returns to this callback */
	}
	d->rc = nvp_bdev_channel_destroy(d->ch);
}

/*
 * Destroying a channel from inside its own poll (a completion callback, also after a
 * poll nested in it) would free what the poll uses when the callback returns: -EBUSY
 * with a message, and the channel works on; destroyed after the poll, it goes. Under
 * ASan the old behaviour (destroyed, then used) is a heap-use-after-free.
 */
static void
test_destroy_inside_poll(void)
{
	struct destroy_in_cb d = { 0 };
	struct ut_done done;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;
	static char buf[512];
	int nested;

	bdev = ut_stub_register("dp", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("dp", false, ut_event_cb, &ev, &desc), 0);
	for (nested = 0; nested <= 1; nested++) {
		memset(&d, 0, sizeof(d));
		d.nested_poll = nested != 0;
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &d.ch), 0);
		g_stub.auto_complete = true;
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, d.ch, buf, 0, 1, destroy_cb, &d), 0);
		g_ut_last_log[0] = '\0';
		CU_ASSERT_EQUAL(nvp_bdev_channel_poll(d.ch), 1);
		CU_ASSERT_EQUAL(d.calls, 1);
		CU_ASSERT_EQUAL(d.rc, -EBUSY);
		CU_ASSERT(strstr(g_ut_last_log, "inside its own poll") != NULL);
		/* still a channel: it does I/O, and goes when destroyed outside its poll */
		d.nested_poll = false;
		memset(&done, 0, sizeof(done));
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, d.ch, buf, 1, 1, ut_done_cb, &done), 0);
		CU_ASSERT_EQUAL(nvp_bdev_channel_poll(d.ch), 1);
		CU_ASSERT_EQUAL(done.calls, 1);
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(d.ch), 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/* A reader thread while the owner does I/O: each snapshot must be consistent. */
struct reader {
	struct nvp_bdev *bdev;
	volatile bool stop;
	uint32_t snapshots;
	uint32_t bad;
};

static struct nvp_bdev_stats g_rstats = { .info_size = sizeof(struct nvp_bdev_stats) };

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t last = 0;

	while (!r->stop) {
		nvp_bdev_get_stats(r->bdev, &g_rstats);
		/* every read is 2 blocks: bytes and ios come from the same update */
		if (g_rstats.op[0].bytes != g_rstats.op[0].ios * 1024 ||
		    g_rstats.op[0].ios < last) {
			r->bad++;
		}
		last = g_rstats.op[0].ios;
		__atomic_add_fetch(&r->snapshots, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_stats_concurrent_reader(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct reader r;
	pthread_t t;
	int i;

	memset(&r, 0, sizeof(r));
	r.bdev = ut_stub_register("cr", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("cr", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, reader_main, &r), 0);
	/* keep the counters moving until the reader has looked often enough */
	for (i = 0; i < 100000 && __atomic_load_n(&r.snapshots, __ATOMIC_RELAXED) < 50; i++) {
		do_reads(desc, ch, 100, 2);
	}
	r.stop = true;
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(r.bad, 0);
	CU_ASSERT(r.snapshots > 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(r.bdev), 0);
}

/*
 * Many I/Os completing in one poll (in the second suite, lists of the stub: a failure in
 * the middle cuts the list in three): each callback once, in submission order; an
 * io_wait entry called as soon as the first I/O is free (after its callback, which
 * could have taken it); a callback's new submission completing on the next poll; the statistics those of I/Os completed one by one.
 */
struct batch_ctx {
	uint32_t order[16];
	uint32_t n;
	uint32_t waiter_at; /* callbacks delivered when the io_wait entry ran */
	uint32_t waiter_calls;
	uint32_t errors;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct ut_done resubmitted;
	char buf[512];
};

struct batch_io {
	struct batch_ctx *b;
	uint32_t idx;
};

static void
batch_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct batch_io *bi = arg;
	struct batch_ctx *b = bi->b;

	b->order[b->n++] = bi->idx;
	b->errors += nvme_cpl_is_error(cpl);
	if (bi->idx == 1) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(b->desc, b->ch, b->buf, 9, 1, ut_done_cb,
						     &b->resubmitted),
				0);
	}
}

static void
batch_waiter(void *arg)
{
	struct batch_ctx *b = arg;

	b->waiter_at = b->n;
	b->waiter_calls++;
	CU_ASSERT_EQUAL(
		nvp_bdev_read_blocks(b->desc, b->ch, b->buf, 8, 1, ut_done_cb, &b->resubmitted), 0);
}

static void
test_completion_batch(void)
{
	struct nvp_bdev_io_wait_entry we;
	struct nvp_bdev_channel_opts o;
	struct ut_events ev = { 0 };
	struct batch_io bio[8];
	struct batch_ctx b;
	struct nvp_bdev *bdev;
	uint32_t i;

	memset(&b, 0, sizeof(b));
	bdev = ut_stub_register("cb", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("cb", false, ut_event_cb, &ev, &b.desc), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	o.io_pool_size = 8;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(b.desc, &o, &b.ch), 0);
	g_stub.auto_complete = false;
	g_stub.fail_index = 5;
	g_stub.fail_status.sct = NVME_SCT_GENERIC;
	g_stub.fail_status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
	for (i = 0; i < 8; i++) {
		bio[i].b = &b;
		bio[i].idx = i;
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(b.desc, b.ch, b.buf, i, 1, batch_cb, &bio[i]),
				0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(b.desc, b.ch, b.buf, 8, 1, batch_cb, &b), -ENOMEM);
	memset(&we, 0, sizeof(we));
	we.bdev = bdev;
	we.cb_fn = batch_waiter;
	we.cb_arg = &b;
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(bdev, b.ch, &we), 0);

	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(b.ch), 8);
	CU_ASSERT_EQUAL(b.n, 8);
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.order[i], i);
	}
	CU_ASSERT_EQUAL(b.errors, 1);
	CU_ASSERT_EQUAL(b.waiter_calls, 1);
	/* as soon as the first I/O freed one, before its callback could submit again */
	CU_ASSERT_EQUAL(b.waiter_at, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(b.ch), 2);
	CU_ASSERT_EQUAL(b.resubmitted.calls, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(b.ch), 2);
	CU_ASSERT_EQUAL(b.resubmitted.calls, 2);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(b.ch), 0);
	CU_ASSERT_EQUAL(ut_free_count(b.ch), 8);

	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 10);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].bytes, 10 * 512);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].errors, 1);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 10);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].queued), 10);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].device.sum_hi, 0);
	CU_ASSERT(nvp_histogram_max(&g_stats.op[NVP_BDEV_IO_READ].device) < g_stats.ticks_hz);
	/* busy from the first submission to the last completion, never longer */
	CU_ASSERT(g_stats.op[NVP_BDEV_IO_READ].busy_ticks > 0);
	CU_ASSERT(g_stats.op[NVP_BDEV_IO_READ].busy_ticks <=
		  g_stats.op[NVP_BDEV_IO_READ].device.sum_lo);

	/* again with no io_wait entry (lists of 3, 1 failed, 4 in the second suite) */
	b.n = b.errors = 0;
	g_stub.auto_complete = false;
	g_stub.fail_index = (int)g_stub.submitted + 3;
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(b.desc, b.ch, b.buf, i, 2, batch_cb, &bio[i]),
				0);
	}
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(b.ch), 8);
	CU_ASSERT_EQUAL(b.n, 8);
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.order[i], i);
	}
	CU_ASSERT_EQUAL(b.errors, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(b.ch), 1); /* idx 1's new one */
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(b.ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].ios, 19);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].bytes, (11 + 8 * 2) * 512);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].errors, 2);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(&g_stats.op[NVP_BDEV_IO_READ].device), 19);
	CU_ASSERT(g_stats.op[NVP_BDEV_IO_READ].busy_ticks <=
		  g_stats.op[NVP_BDEV_IO_READ].device.sum_lo);
	CU_ASSERT_EQUAL(ut_free_count(b.ch), 8);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(b.ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(b.desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

struct hook_counts {
	uint32_t begin, end, sent, done;
	int last_completions;
};

static void
h_begin(void *ctx, struct nvp_bdev_poll_group *g, uint32_t outstanding, uint64_t now)
{
	struct hook_counts *c = ctx;

	(void)g;
	(void)outstanding;
	(void)now;
	c->begin++;
}

static void
h_end(void *ctx, struct nvp_bdev_poll_group *g, int completions, uint64_t now)
{
	struct hook_counts *c = ctx;

	(void)g;
	(void)now;
	c->end++;
	c->last_completions = completions;
}

static void
h_sent(void *ctx, const struct nvp_bdev_io *io, uint64_t now)
{
	(void)io;
	(void)now;
	((struct hook_counts *)ctx)->sent++;
}

static void
h_done(void *ctx, const struct nvp_bdev_io *io, uint64_t dev, uint64_t now)
{
	(void)io;
	CU_ASSERT(dev <= now);
	((struct hook_counts *)ctx)->done++;
}

static void
test_poll_group_and_hook(void)
{
	struct nvp_bdev_channel_opts o;
	struct nvp_bdev_channel *ch1, *ch2;
	struct nvp_bdev_poll_group *g;
	struct hook_counts hc = { 0 };
	struct nvp_bdev_poll_hook hook = {
		.ctx = &hc,
		.poll_begin = h_begin,
		.poll_end = h_end,
		.io_sent = h_sent,
		.io_done = h_done,
	};
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	char buf[512];

	bdev = ut_stub_register("pg", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("pg", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_poll_group_create(&g), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	o.group = g;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, &o, &ch1), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_add(g, ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_add(g, ch2), -EEXIST);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_set_hook(g, &hook), 0);

	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch1, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch2, buf, 1, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_get_outstanding(g), 2);
	CU_ASSERT_EQUAL(hc.sent, 2);
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_poll(g), 2);
	CU_ASSERT_EQUAL(done.calls, 2);
	CU_ASSERT_EQUAL(hc.begin, 1);
	CU_ASSERT_EQUAL(hc.end, 1);
	CU_ASSERT_EQUAL(hc.last_completions, 2);
	CU_ASSERT_EQUAL(hc.done, 2);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_get_outstanding(g), 0);

	CU_ASSERT_EQUAL(nvp_bdev_poll_group_destroy(g), -EBUSY);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_remove(g, ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_remove(g, ch2), -ENOENT);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch1), 0); /* leaves the group itself */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_destroy(g), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/* Debug builds: a channel or poll group used from another thread is -EPERM. */
struct foreign {
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_poll_group *g;
	int read_rc, poll_rc, destroy_rc, group_rc;
};

static void *
foreign_main(void *arg)
{
	struct foreign *f = arg;
	static char buf[512];

	f->read_rc = nvp_bdev_read_blocks(f->desc, f->ch, buf, 0, 1, ut_done_cb, NULL);
	f->poll_rc = nvp_bdev_channel_poll(f->ch);
	f->destroy_rc = nvp_bdev_channel_destroy(f->ch);
	f->group_rc = nvp_bdev_poll_group_poll(f->g);
	return NULL;
}

static void
test_foreign_thread(void)
{
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;
	struct foreign f;
	pthread_t t;

	memset(&f, 0, sizeof(f));
	bdev = ut_stub_register("ft", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("ft", false, ut_event_cb, &ev, &f.desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f.desc, NULL, &f.ch), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_poll_group_create(&f.g), 0);
#if NVP_CONFIG_DEBUG
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, foreign_main, &f), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(f.read_rc, -EPERM);
	CU_ASSERT_EQUAL(f.poll_rc, -EPERM);
	CU_ASSERT_EQUAL(f.destroy_rc, -EPERM);
	CU_ASSERT_EQUAL(f.group_rc, -EPERM);
	CU_ASSERT(strstr(g_ut_last_log, "does not own") != NULL);
	CU_ASSERT_EQUAL(g_stub.submitted, 0);
#else
	(void)t;
	(void)foreign_main;
	printf("release build: the owner check is compiled out (debug builds only)\n");
#endif
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_destroy(f.g), 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(f.ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(f.desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/* The callback of test_completion_at: resubmits once. */
struct at_ctx {
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	uint32_t calls, resubmit;
	char buf[512];
};

static void
at_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct at_ctx *a = arg;

	(void)cpl;
	a->calls++;
	if (a->resubmit > 0) {
		a->resubmit--;
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(a->desc, a->ch, a->buf, 1, 1, at_cb, a), 0);
	}
}

/*
 * A module that gives the time its I/Os completed (nvp_bdev_io_complete_list_at(), as
 * the nvme module does with the driver's poll time) has them timed with it: device time
 * = that time - submission, what the callbacks submit is stamped with it, the busy time
 * ends at it, and a failure in the list is timed the same. The core reads no clock for
 * them, so a time far ahead of the clock shows in every figure.
 */
static void
test_completion_at(void)
{
	const uint64_t ahead = 1000000000ull, step = 5000;
	const struct nvp_histogram *dev;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;
	struct at_ctx a;
	uint64_t t0, t1, at, v, first;

	if (!g_ut_stub_lists) {
		return; /* a module completing one by one gives no time: the other suite */
	}
	memset(&a, 0, sizeof(a));
	bdev = ut_stub_register("at", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("at", false, ut_event_cb, &ev, &a.desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(a.desc, NULL, &a.ch), 0);
	dev = &g_stats.op[NVP_BDEV_IO_READ].device;

	/* one I/O, stamped by the clock at its submission, found complete far ahead */
	g_stub.auto_complete = false;
	t0 = nvp_env_get_ticks();
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(a.desc, a.ch, a.buf, 0, 1, at_cb, &a), 0);
	t1 = nvp_env_get_ticks();
	at = t1 + ahead;
	g_stub.complete_at = at;
	g_stub.auto_complete = true;
	a.resubmit = 1;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(a.ch), 1);
	CU_ASSERT_EQUAL(a.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(dev), 1);
	v = first = nvp_histogram_max(dev);
	CU_ASSERT(v >= at - t1 && v <= at - t0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].busy_ticks, v);

	/* its callback's resubmission is stamped with that time: exactly @step later */
	g_stub.complete_at = at + step;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(a.ch), 1);
	CU_ASSERT_EQUAL(a.calls, 2);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(nvp_histogram_count(dev), 2);
	CU_ASSERT_EQUAL(nvp_histogram_min(dev), step);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].busy_ticks, v + step);

	/* a list of three, the second failing: all timed with the module's time */
	g_stub.auto_complete = false;
	g_stub.fail_index = (int)g_stub.submitted + 1;
	g_stub.fail_status.sct = NVME_SCT_GENERIC;
	g_stub.fail_status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
	t0 = nvp_env_get_ticks();
	for (v = 0; v < 3; v++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(a.desc, a.ch, a.buf, v, 1, at_cb, &a), 0);
	}
	t1 = nvp_env_get_ticks();
	at = t1 + ahead;
	g_stub.complete_at = at;
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(a.ch), 3);
	CU_ASSERT_EQUAL(a.calls, 5);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].errors, 1);
	CU_ASSERT_EQUAL(nvp_histogram_count(dev), 5);
	CU_ASSERT_EQUAL(nvp_histogram_min(dev), step);
	/* the maximum is of all five: the first I/O's time can be the longest (the thread
	 * was descheduled between its submission and t1 of the first part) */
	CU_ASSERT(nvp_histogram_max(dev) >= at - t1 &&
		  nvp_histogram_max(dev) <= NVP_MAX(first, at - t0));
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);

	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(a.ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(a.desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/*
 * A list whose I/Os carry different submit ticks (runs of one tick: what one poll's
 * callbacks submitted; single ones: submitted outside a poll, each with its own clock
 * read) is accounted exactly as one by one: the device histogram equals one built with
 * a record per I/O of its completion time - its submit tick.
 */
static void
test_completion_at_runs(void)
{
	static struct nvp_histogram want;
	const uint64_t ahead = 1000000000ull, step = 5000;
	const struct nvp_histogram *dev;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;
	struct at_ctx a;
	uint64_t at;
	uint32_t i;

	if (!g_ut_stub_lists) {
		return; /* a module completing one by one gives no time: the other suite */
	}
	memset(&a, 0, sizeof(a));
	nvp_histogram_init(&want);
	bdev = ut_stub_register("runs", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("runs", false, ut_event_cb, &ev, &a.desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(a.desc, NULL, &a.ch), 0);

	/* three outside a poll (a tick each: three runs), completed at @at: the first two
	 * callbacks each submit one more, both stamped @at */
	g_stub.auto_complete = false;
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(a.desc, a.ch, a.buf, i, 1, at_cb, &a), 0);
	}
	at = nvp_env_get_ticks() + ahead;
	CU_ASSERT_EQUAL_FATAL(g_stub.num_held, 3);
	for (i = 0; i < g_stub.num_held; i++) {
		nvp_histogram_record(&want, at - g_stub.held[i]->submit_tick);
	}
	a.resubmit = 2;
	g_stub.complete_at = at;
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(a.ch), 3);

	/* then one more outside a poll: the list is a run of two and a run of one */
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(a.desc, a.ch, a.buf, 3, 1, at_cb, &a), 0);
	CU_ASSERT_EQUAL_FATAL(g_stub.num_held, 3);
	CU_ASSERT_EQUAL(g_stub.held[0]->submit_tick, at);
	CU_ASSERT_EQUAL(g_stub.held[1]->submit_tick, at);
	for (i = 0; i < g_stub.num_held; i++) {
		nvp_histogram_record(&want, at + step - g_stub.held[i]->submit_tick);
	}
	g_stub.complete_at = at + step;
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(a.ch), 3);

	CU_ASSERT_EQUAL(nvp_bdev_get_stats(bdev, &g_stats), 0);
	dev = &g_stats.op[NVP_BDEV_IO_READ].device;
	CU_ASSERT_EQUAL(nvp_histogram_count(dev), 6);
	CU_ASSERT_EQUAL(dev->count, want.count);
	CU_ASSERT_EQUAL(dev->min, want.min);
	CU_ASSERT_EQUAL(dev->max, want.max);
	CU_ASSERT_EQUAL(dev->sum_lo, want.sum_lo);
	CU_ASSERT_EQUAL(dev->sum_hi, want.sum_hi);
	CU_ASSERT_EQUAL(memcmp(dev->buckets, want.buckets, sizeof(want.buckets)), 0);
	CU_ASSERT_EQUAL(dev->buckets[nvp_histogram_bucket_index(step)], 2);
	CU_ASSERT_EQUAL(g_stats.op[NVP_BDEV_IO_READ].inflight, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(a.ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(a.desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_channel_opts),        UT_TEST(test_stats_aggregation),
		UT_TEST(test_stats_clock_sources), UT_TEST(test_stats_concurrent_reader),
		UT_TEST(test_poll_group_and_hook), UT_TEST(test_foreign_thread),
		UT_TEST(test_completion_batch),    UT_TEST(test_busy_joins_accounting),
		UT_TEST(test_untimed_after_timed), UT_TEST(test_destroy_inside_poll),
		UT_TEST(test_completion_at),       UT_TEST(test_completion_at_runs),
	};

	return ut_run("bdev_channel", tests, sizeof(tests) / sizeof(tests[0]));
}
