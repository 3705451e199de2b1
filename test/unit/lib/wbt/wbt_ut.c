/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "wbt" admission stage inside the bdev core, over the bdev tests' stub module:
 * writes over budget wait on the channel's deferred list and leave it in order within
 * their class, sync writes pass deferred background ones, reads are never held, nothing
 * is lost, parameters are checked, and the counters add up.
 */
#include "../bdev/ut_bdev.h"

#include "wbt/wbt_monitor.c"
#include "wbt/wbt_share.c"
#include "wbt/wbt.c"

/* The constructor in wbt.c registered the stage; the tests only use it. */

struct order_log {
	char seq[256];
	uint32_t n;
};

struct tagged {
	struct order_log *log;
	char tag;
	uint32_t calls;
	struct nvme_cpl cpl;
};

static void
tagged_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct tagged *t = arg;

	t->calls++;
	t->cpl = *cpl;
	if (t->log->n < sizeof(t->log->seq) - 1) {
		t->log->seq[t->log->n++] = t->tag;
	}
}

static struct nvp_bdev *g_bdev;
static struct nvp_bdev_desc *g_desc;
static struct nvp_bdev_channel *g_ch;
static struct ut_events g_ev;
static char g_buf[512 * 64];

static void
open_wbt(const char *params)
{
	g_bdev = ut_stub_register("w0", 1024, 0, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g_bdev);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_set_admission(g_bdev, "wbt", params), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("w0", true, ut_event_cb, &g_ev, &g_desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(g_desc, NULL, &g_ch), 0);
	g_stub.auto_complete = false;
}

static void
close_wbt(void)
{
	g_stub.auto_complete = true;
	while (nvp_bdev_channel_get_outstanding(g_ch) != 0) {
		nvp_bdev_channel_poll(g_ch);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(g_ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(g_bdev), 0);
}

static int
write_cls(uint32_t cls, uint64_t lba, struct tagged *t)
{
	return nvp_bdev_write_blocks(g_desc, g_ch, g_buf, lba, 1,
				     nvp_bdev_write_flags(cls, NVP_NVME_WRITE_HINT_NONE), tagged_cb,
				     t);
}

static void
test_params(void)
{
	struct nvp_bdev *bdev = ut_stub_register("p0", 64, 0, 0);

	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "bogus=1"), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bogus") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "depth=0"), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "depth") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "lat_us=abc"), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "window_ms=0"), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "lag_kib=2"), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "lag_kib") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "stale_us=0"), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "stale_us") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "stale_us=1ms"), -EINVAL);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_admission(bdev), "none");
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "lat_us=500,window_ms=50 depth=8"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "wbt", "lag_kib=64 stale_us=500"), 0);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_admission(bdev), "wbt");
	CU_ASSERT_EQUAL(nvp_bdev_wbt_set_target(bdev, 20ull * 1000 * 1000), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "none", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_wbt_set_target(bdev, 100), -ENOENT);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

static void
test_order_within_class(void)
{
	struct order_log log = { 0 };
	struct tagged bg[6], sy[2], rd[2];
	struct nvp_wbt_info info = { .info_size = sizeof(info) };
	int i;

	/* depth 4: sync 4, normal 2, background 1; a huge window keeps the step at 0 */
	open_wbt("depth=4 lat_us=2000 window_ms=10000");
	for (i = 0; i < 6; i++) {
		bg[i] = (struct tagged){ &log, (char)('a' + i), 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_BACKGROUND, (uint64_t)i, &bg[i]), 0);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 1); /* one background write in flight */
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(g_ch), 5);
	/* sync writes and reads are not stuck behind the deferred background writes */
	for (i = 0; i < 2; i++) {
		sy[i] = (struct tagged){ &log, (char)('S' + i), 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_SYNC, 100 + (uint64_t)i, &sy[i]), 0);
		rd[i] = (struct tagged){ &log, (char)('r' + i), 0, { 0 } };
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(g_desc, g_ch, g_buf, 200 + (uint64_t)i, 1,
						     tagged_cb, &rd[i]),
				0);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 5);
	CU_ASSERT_EQUAL(g_stub.rec[1].type, NVP_BDEV_IO_WRITE);
	CU_ASSERT_EQUAL(g_stub.rec[1].offset, 100);
	CU_ASSERT_EQUAL(g_stub.rec[2].type, NVP_BDEV_IO_READ);
	CU_ASSERT_EQUAL(nvp_bdev_wbt_get_info(g_bdev, &info), 0);
	CU_ASSERT_EQUAL(info.inflight, 3);
	CU_ASSERT_EQUAL(info.throttled, 5);
	CU_ASSERT_EQUAL(info.deferred_now, 5);
	CU_ASSERT_EQUAL(info.limit_background, 1);
	CU_ASSERT_EQUAL(info.limit_normal, 2);
	CU_ASSERT_EQUAL(info.limit_sync, 4);
	CU_ASSERT_EQUAL(info.target_us, 2000);
	/* drain: the background writes reach the device one at a time, oldest first */
	g_stub.auto_complete = true;
	for (i = 0; i < 20 && nvp_bdev_channel_get_outstanding(g_ch) != 0; i++) {
		nvp_bdev_channel_poll(g_ch);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(g_ch), 0);
	for (i = 0; i < 6; i++) {
		CU_ASSERT_EQUAL(bg[i].calls, 1);
		CU_ASSERT_EQUAL(g_stub.rec[i == 0 ? 0 : 4 + i].offset, (uint64_t)i);
	}
	CU_ASSERT_EQUAL(sy[0].calls + sy[1].calls + rd[0].calls + rd[1].calls, 4);
	CU_ASSERT_EQUAL(nvp_bdev_wbt_get_info(g_bdev, &info), 0);
	CU_ASSERT_EQUAL(info.inflight, 0);
	CU_ASSERT_EQUAL(info.deferred_now, 0);
	CU_ASSERT_EQUAL(info.throttled, 5);
	close_wbt();
}

/* A new write of a class with deferred writes waits behind them even when a slot is free. */
static void
test_new_write_does_not_overtake(void)
{
	struct order_log log = { 0 };
	struct tagged n[4];
	int i;

	open_wbt("depth=3 window_ms=10000"); /* normal (3 + 1) / 2 = 2 */
	for (i = 0; i < 3; i++) {
		n[i] = (struct tagged){ &log, (char)('0' + i), 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_NORMAL, (uint64_t)i, &n[i]), 0);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 2);
	/* complete one by hand without a poll of the deferred list: a slot is free now */
	stub_complete_held(&g_stub);
	n[3] = (struct tagged){ &log, '3', 0, { 0 } };
	CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_NORMAL, 3, &n[3]), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 2); /* '3' did not jump over '2' */
	g_stub.auto_complete = true;
	for (i = 0; i < 20 && nvp_bdev_channel_get_outstanding(g_ch) != 0; i++) {
		nvp_bdev_channel_poll(g_ch);
	}
	CU_ASSERT_EQUAL(g_stub.rec[2].offset, 2);
	CU_ASSERT_EQUAL(g_stub.rec[3].offset, 3);
	close_wbt();
}

/* Target 0: the stage counts but never holds anything. */
static void
test_off_holds_nothing(void)
{
	struct order_log log = { 0 };
	struct tagged t[40];
	int i;

	open_wbt("lat_us=0 depth=1");
	for (i = 0; i < 40; i++) {
		t[i] = (struct tagged){ &log, 'x', 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_BACKGROUND, (uint64_t)i, &t[i]), 0);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 40);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(g_ch), 0);
	close_wbt();
	for (i = 0; i < 40; i++) {
		CU_ASSERT_EQUAL(t[i].calls, 1);
	}
}

/* Unmap takes the background share; write zeroes its class's; flush is never held. */
static void
test_other_types(void)
{
	struct order_log log = { 0 };
	struct tagged a = { &log, 'a', 0, { 0 } }, b = { &log, 'b', 0, { 0 } },
		      c = { &log, 'c', 0, { 0 } };
	struct ut_done d = { 0 };

	open_wbt("depth=2 window_ms=10000"); /* background (2 + 3) / 4 = 1 */
	CU_ASSERT_EQUAL(nvp_bdev_unmap_blocks(g_desc, g_ch, 0, 8, tagged_cb, &a), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unmap_blocks(g_desc, g_ch, 8, 8, tagged_cb, &b), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	CU_ASSERT_EQUAL(nvp_bdev_flush_blocks(g_desc, g_ch, 0, 1024, tagged_cb, &c), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_zeroes_blocks(g_desc, g_ch, 16, 4,
						     nvp_bdev_write_flags(NVP_BDEV_WRITE_SYNC, 0),
						     ut_done_cb, &d),
			0);
	CU_ASSERT_EQUAL(g_stub.submitted, 3);
	close_wbt();
	CU_ASSERT_EQUAL(a.calls + b.calls + c.calls + d.calls, 4);
}

/* Deferred writes of a bdev that goes away still complete, once each. */
static void
test_remove_with_deferred(void)
{
	struct order_log log = { 0 };
	struct tagged t[8];
	int i;

	open_wbt("depth=1 window_ms=10000");
	for (i = 0; i < 8; i++) {
		t[i] = (struct tagged){ &log, 'x', 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_BACKGROUND, (uint64_t)i, &t[i]), 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(g_ch), 7);
	/* with I/O deferred the channel cannot go: nothing is dropped silently */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(g_ch), -EBUSY);
	nvp_bdev_hot_remove(g_bdev);
	CU_ASSERT_EQUAL(g_ev.remove, 1);
	g_stub.auto_complete = true;
	for (i = 0; i < 50 && nvp_bdev_channel_get_outstanding(g_ch) != 0; i++) {
		nvp_bdev_channel_poll(g_ch);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(g_ch), 0);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(t[i].calls, 1);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(g_ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	g_ev.remove = 0;
}

/* Complete the oldest I/O the stub holds, as a device that finishes in order. */
static void
complete_oldest(void)
{
	static const struct nvme_cpl ok;
	struct nvp_bdev_io *io;

	CU_ASSERT_FATAL(g_stub.num_held > 0);
	io = g_stub.held[0];
	g_stub.num_held--;
	memmove(&g_stub.held[0], &g_stub.held[1], g_stub.num_held * sizeof(g_stub.held[0]));
	nvp_bdev_io_complete(io, &ok);
}

static uint32_t g_loop_left;

static void loop_cb(void *arg, const struct nvme_cpl *cpl);

static int
loop_write(uint32_t *done)
{
	return nvp_bdev_write_blocks(
		g_desc, g_ch, g_buf, 500, 1,
		nvp_bdev_write_flags(NVP_BDEV_WRITE_NORMAL, NVP_NVME_WRITE_HINT_NONE), loop_cb,
		done);
}

/* A closed-loop writer of normal writes: each completion sends the next. */
static void
loop_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)cpl;
	(*(uint32_t *)arg)++;
	if (g_loop_left > 0) {
		g_loop_left--;
		CU_ASSERT_EQUAL(loop_write(arg), 0);
	}
}

/*
 * Normal writes that keep the writes in flight at their limit (depth 8: normal 4,
 * background 2) do not starve a background write: it is passed by exactly
 * WBT_MAX_PASSES of them, then takes the next slot; the normal writes go on after it.
 */
static void
test_background_not_starved(void)
{
	struct order_log log = { 0 };
	struct tagged bg = { &log, 'b', 0, { 0 } };
	uint32_t done = 0, i, bg_at = UINT32_MAX, normals_before = 0;

	open_wbt("depth=8 lat_us=2000 window_ms=10000");
	g_loop_left = 40;
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(loop_write(&done), 0);
	}
	CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_BACKGROUND, 7, &bg), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 4);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(g_ch), 1);
	for (i = 0; i < 30 && bg_at == UINT32_MAX; i++) {
		complete_oldest();
		nvp_bdev_channel_poll(g_ch);
		if (g_stub.rec[g_stub.submitted - 1].offset == 7) {
			bg_at = g_stub.submitted - 1;
		} else if (g_stub.num_held > 0 && g_stub.rec[g_stub.submitted - 2].offset == 7) {
			bg_at = g_stub.submitted - 2;
		}
	}
	CU_ASSERT_FATAL(bg_at != UINT32_MAX);
	for (i = 4; i < bg_at; i++) {
		normals_before += g_stub.rec[i].offset == 500;
	}
	CU_ASSERT_EQUAL(normals_before, WBT_MAX_PASSES);
	/* the normal writes go on, and everything completes once */
	g_stub.auto_complete = true;
	for (i = 0; i < 200 && nvp_bdev_channel_get_outstanding(g_ch) != 0; i++) {
		nvp_bdev_channel_poll(g_ch);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(g_ch), 0);
	CU_ASSERT_EQUAL(bg.calls, 1);
	CU_ASSERT_EQUAL(done, 44);
	close_wbt();
}

/* A pass-through scheduler that only weights tenants: 1 has weight 1, 2 weight 4. */
static uint32_t
ut_tenant_weight(void *bdev_ctx, uint32_t tenant)
{
	(void)bdev_ctx;
	return tenant == 2 ? 4 : 1;
}

static const struct nvp_bdev_sched_ops g_ut_weights = {
	.name = "ut_weights",
	.tenant_weight = ut_tenant_weight,
};

NVP_BDEV_SCHEDULER_REGISTER(g_ut_weights)

/*
 * Under a scheduler that weights tenants, two tenants 1:4 with background writes waiting
 * on one channel (depth 4: one background slot) share the slot by weight, not by
 * arrival: after the first few, tenant 2 gets four writes for each of tenant 1's, and each tenant's own writes keep their order. Without the weights
 * (test_order_within_class) the same writes leave in arrival order.
 */
static void
test_shared_by_weight(void)
{
	struct order_log log = { 0 };
	struct tagged w[2][12];
	struct nvp_bdev_desc *d2;
	struct nvp_bdev_channel *ch2;
	struct nvp_wbt_info info = { .info_size = sizeof(info) };
	uint32_t got[3] = { 0 }, last[3] = { 0 }, i, k, ordered = 1;

	g_bdev = ut_stub_register("w0", 1024, 0, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g_bdev);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_set_scheduler(g_bdev, "ut_weights", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_tenant_weight(g_bdev, 2), 4);
	CU_ASSERT_EQUAL(nvp_bdev_get_tenant_weight(g_bdev, NVP_BDEV_MAX_TENANTS), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_set_admission(g_bdev, "wbt",
						     "depth=4 lat_us=2000 window_ms=10000 "
						     "lag_kib=4 stale_us=10000000"),
			      0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("w0", true, ut_event_cb, &g_ev, &g_desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("w0", true, ut_event_cb, &g_ev, &d2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(g_desc, 1), 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(d2, 2), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(g_desc, NULL, &g_ch), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(d2, NULL, &ch2), 0);
	g_stub.auto_complete = false;
	/* interleaved arrivals: tenant 1 first each time */
	for (i = 0; i < 12; i++) {
		for (k = 0; k < 2; k++) {
			w[k][i] = (struct tagged){
				&log, (char)(k == 0 ? 'a' + i : 'A' + i), 0, { 0 }
			};
			CU_ASSERT_EQUAL(nvp_bdev_write_blocks(
						k == 0 ? g_desc : d2, k == 0 ? g_ch : ch2, g_buf,
						100 * k + i, 8,
						nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, 0),
						tagged_cb, &w[k][i]),
					0);
		}
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(g_ch) +
				nvp_bdev_channel_get_deferred_count(ch2),
			23);
	/* one completion, one poll of each channel at a time (the channels take turns
	 * at being polled first): the freed slot goes to one write */
	for (i = 0;
	     i < 60 &&
	     nvp_bdev_channel_get_outstanding(g_ch) + nvp_bdev_channel_get_outstanding(ch2) != 0;
	     i++) {
		stub_complete_held(&g_stub);
		nvp_bdev_channel_poll(i % 2 == 0 ? g_ch : ch2);
		nvp_bdev_channel_poll(i % 2 == 0 ? ch2 : g_ch);
		CU_ASSERT(g_stub.num_held <= 1);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(g_ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch2), 0);
	log.seq[log.n] = '\0';
	/* past the start, 1:4 */
	for (i = 5; i < 15; i++) {
		got[g_stub.rec[i].offset >= 100 ? 2 : 1]++;
	}
	for (i = 0; i < 24; i++) {
		k = g_stub.rec[i].offset >= 100 ? 2 : 1;
		ordered &= g_stub.rec[i].offset % 100 >= last[k];
		last[k] = (uint32_t)(g_stub.rec[i].offset % 100);
	}
	printf("(%s) ", log.seq);
	CU_ASSERT_EQUAL(got[1], 2);
	CU_ASSERT_EQUAL(got[2], 8);
	CU_ASSERT_EQUAL(ordered, 1);
	CU_ASSERT_EQUAL(g_stub.submitted, 24);
	CU_ASSERT_EQUAL(nvp_bdev_wbt_get_info(g_bdev, &info), 0);
	CU_ASSERT_EQUAL(info.deferred_now, 0);
	CU_ASSERT_EQUAL(info.inflight, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(g_ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(d2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(g_bdev), 0);
}

/*
 * Under weights, the order is kept per tenant: a new write of a tenant with nothing
 * deferred, whose turn it is, takes a free slot at once even while another tenant's
 * writes of its class wait (as a sync write passes background ones without weights).
 */
static void
test_shared_new_write_of_other_tenant(void)
{
	struct order_log log = { 0 };
	struct tagged a[3], b;
	struct nvp_bdev_desc *d2;
	struct nvp_bdev_channel *ch2;
	int i;

	g_bdev = ut_stub_register("w0", 1024, 0, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g_bdev);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_set_scheduler(g_bdev, "ut_weights", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(
		nvp_bdev_set_admission(g_bdev, "wbt", "depth=4 window_ms=10000 stale_us=10000000"),
		0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("w0", true, ut_event_cb, &g_ev, &g_desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("w0", true, ut_event_cb, &g_ev, &d2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(g_desc, 1), 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(d2, 2), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(g_desc, NULL, &g_ch), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(d2, NULL, &ch2), 0);
	g_stub.auto_complete = false;
	for (i = 0; i < 3; i++) {
		a[i] = (struct tagged){ &log, (char)('a' + i), 0, { 0 } };
		CU_ASSERT_EQUAL(write_cls(NVP_BDEV_WRITE_BACKGROUND, (uint64_t)i, &a[i]), 0);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 1); /* one background slot */
	stub_complete_held(&g_stub);          /* the slot is free; no poll of the list yet */
	b = (struct tagged){ &log, 'B', 0, { 0 } };
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(d2, ch2, g_buf, 100, 1,
					      nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, 0),
					      tagged_cb, &b),
			0);
	CU_ASSERT_EQUAL(g_stub.submitted, 2); /* tenant 2, level with 1, went at once */
	CU_ASSERT_EQUAL(g_stub.rec[1].offset, 100);
	g_stub.auto_complete = true;
	for (i = 0;
	     i < 20 &&
	     nvp_bdev_channel_get_outstanding(g_ch) + nvp_bdev_channel_get_outstanding(ch2) != 0;
	     i++) {
		nvp_bdev_channel_poll(g_ch);
		nvp_bdev_channel_poll(ch2);
	}
	CU_ASSERT_EQUAL(g_stub.submitted, 4);
	CU_ASSERT_EQUAL(b.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(g_ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(d2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(g_bdev), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_params),
		UT_TEST(test_order_within_class),
		UT_TEST(test_new_write_does_not_overtake),
		UT_TEST(test_off_holds_nothing),
		UT_TEST(test_other_types),
		UT_TEST(test_remove_with_deferred),
		UT_TEST(test_background_not_starved),
		UT_TEST(test_shared_by_weight),
		UT_TEST(test_shared_new_write_of_other_tenant),
	};

	return ut_run("wbt", tests, sizeof(tests) / sizeof(tests[0]));
}
