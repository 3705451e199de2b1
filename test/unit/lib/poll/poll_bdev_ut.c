/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/poll/poll_bdev.c on the fake clock: a fake bdev poll group (its hook
 * called as the bdev layer would, from io_sent to io_done with the device time) drives
 * the waiter. Every sent I/O is tracked and found again among other sources' requests;
 * the statistics are the device times the hook reports; slots running out leave I/Os
 * untracked and the waiter spinning, never sleeping past them; a group that says nothing
 * is outstanding frees stale slots; irq mode needs the channels' interrupts; destroying
 * the waiter removes the hook.
 */
#include "poll_ut_fake.h"

#include "poll/poll.c"
#include "poll/poll_bdev.c"
#include "poll/poll_opts.c"
#include "poll/poll_stats.c"

#define US 1000u

/* ---- the qpair functions poll.c calls (not used) ---- */

int32_t
nvp_nvme_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	(void)qpair;
	(void)max;
	return -ENOTSUP;
}

int
nvp_nvme_qpair_get_irq_fd(const struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	return -ENOTSUP;
}

int
nvp_nvme_qpair_irq_unmask(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	return -ENOTSUP;
}

/* ---- a fake poll group: I/Os complete at their due time, the hook sees them ---- */

#define FG_IOS 8

struct fake_group {
	const struct nvp_bdev_poll_hook *hook;
	struct nvp_bdev_io io[FG_IOS];
	uint64_t sent[FG_IOS];
	uint64_t due[FG_IOS];
	bool busy[FG_IOS];
	uint32_t outstanding; /* what the group reports */
	int nfds;             /* get_irq_fds: > 0 fds, else this -errno */
	uint32_t unmasks;
	uint32_t polls;
};

static struct fake_group g_fg;

uint64_t
nvp_bdev_io_get_nbytes(const struct nvp_bdev_io *io)
{
	return io->num_blocks * 512;
}

int
nvp_bdev_poll_group_set_hook(struct nvp_bdev_poll_group *group,
			     const struct nvp_bdev_poll_hook *hook)
{
	CU_ASSERT_PTR_EQUAL(group, (void *)&g_fg);
	g_fg.hook = hook;
	return 0;
}

int
nvp_bdev_poll_group_get_irq_fds(const struct nvp_bdev_poll_group *group, int *fds, uint32_t max)
{
	(void)group;
	for (int i = 0; i < g_fg.nfds && (uint32_t)i < max; i++) {
		fds[i] = 10 + i;
	}
	return g_fg.nfds;
}

int
nvp_bdev_poll_group_irq_unmask(const struct nvp_bdev_poll_group *group)
{
	(void)group;
	g_fg.unmasks++;
	return 0;
}

uint32_t
nvp_bdev_poll_group_get_outstanding(const struct nvp_bdev_poll_group *group)
{
	(void)group;
	return g_fg.outstanding;
}

int
nvp_bdev_poll_group_poll(struct nvp_bdev_poll_group *group)
{
	int n = 0;

	(void)group;
	g_fg.polls++;
	for (int i = 0; i < FG_IOS; i++) {
		if (g_fg.busy[i] && g_fg.due[i] <= g_now) {
			g_fg.busy[i] = false;
			g_fg.outstanding--;
			if (g_fg.hook != NULL) {
				g_fg.hook->io_done(g_fg.hook->ctx, &g_fg.io[i],
						   g_fg.due[i] - g_fg.sent[i], g_now);
			}
			n++;
		}
	}
	g_now += 1 * US;
	return n;
}

/* The bdev layer sends I/O @i (a 4 KiB read) to its module; it takes @lat. */
static void
fg_send(int i, uint64_t lat)
{
	g_fg.io[i].type = NVP_BDEV_IO_READ;
	g_fg.io[i].num_blocks = 8;
	g_fg.busy[i] = true;
	g_fg.sent[i] = g_now;
	g_fg.due[i] = g_now + lat;
	g_fg.outstanding++;
	if (g_fg.hook != NULL) {
		g_fg.hook->io_sent(g_fg.hook->ctx, &g_fg.io[i], g_now);
	}
}

static struct nvp_poll_waiter *
make(const char *mode, uint32_t slots, int *rc)
{
	struct nvp_poll_opts o;
	struct nvp_poll_waiter *w = NULL;

	memset(&g_fg, 0, sizeof(g_fg));
	g_fg.nfds = -ENOTSUP;
	nvp_poll_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL_FATAL(nvp_poll_mode_parse(mode, &o), 0);
	o.window_ms = 1;
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_create(&o, &w), 0);
	*rc = nvp_poll_waiter_add_bdev_group(w, (struct nvp_bdev_poll_group *)&g_fg, slots);
	return w;
}

/* Run @n I/Os of @lat one after the other (QD1); \return the waits' total. */
static int
qd1(struct nvp_poll_waiter *w, int n, uint64_t lat)
{
	int total = 0;

	for (int k = 0; k < n; k++) {
		fg_send(0, lat);
		while (g_fg.busy[0]) {
			int r = nvp_poll_waiter_wait(w);

			CU_ASSERT(r >= 0);
			total += r > 0 ? r : 0;
		}
	}
	return total;
}

/* The hook tracks each I/O; its device time is the sample; hybrid then sleeps. */
static void
test_tracks_and_learns(void)
{
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	struct nvp_poll_waiter *w;
	int rc;

	w = make("hybrid", 4, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL(g_fg.hook);
	fg_send(0, 100 * US);
	CU_ASSERT_EQUAL(w->inflight, 1);
	CU_ASSERT_EQUAL(w->untracked, 0);
	CU_ASSERT_EQUAL(qd1(w, 0, 0), 0);
	while (g_fg.busy[0]) {
		nvp_poll_waiter_wait(w);
	}
	CU_ASSERT_EQUAL(w->inflight, 0);
	g_nsleeps = 0;
	CU_ASSERT_EQUAL(qd1(w, 200, 100 * US), 200);
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT(st.samples > 0);
	CU_ASSERT(g_nsleeps > 0); /* a prediction was published and used */
	CU_ASSERT_EQUAL(w->stats.b[poll_bucket_of(NVME_OPC_READ, 4096)].expect, 100 * US);
	nvp_poll_waiter_destroy(w);
	CU_ASSERT_PTR_NULL(g_fg.hook); /* destroy removed the hook */
}

/* Another source's requests sit in the same in-flight list: ours are still found. */
static void
test_found_among_others(void)
{
	struct nvp_poll_req other[2];
	struct nvp_poll_waiter *w;
	int rc;

	w = make("classic", 4, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	nvp_poll_req_start(w, &other[0], NVME_OPC_WRITE, 4096);
	fg_send(1, 10 * US);
	nvp_poll_req_start(w, &other[1], NVME_OPC_WRITE, 4096);
	fg_send(2, 5 * US);
	CU_ASSERT_EQUAL(w->inflight, 4);
	while (g_fg.busy[1] || g_fg.busy[2]) {
		CU_ASSERT(nvp_poll_waiter_wait(w) >= 0);
	}
	CU_ASSERT_EQUAL(w->inflight, 2);
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&w->reqs), &other[0]);
	CU_ASSERT_PTR_EQUAL(TAILQ_LAST(&w->reqs, poll_req_list), &other[1]);
	nvp_poll_req_done(w, &other[0]);
	nvp_poll_req_done(w, &other[1]);
	CU_ASSERT_EQUAL(w->inflight, 0);
	nvp_poll_waiter_destroy(w);
}

/* More I/Os than slots: the rest are counted, untracked, and the waiter never sleeps. */
static void
test_out_of_slots(void)
{
	struct nvp_poll_waiter *w;
	int rc;

	w = make("hybrid", 1, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(qd1(w, 100, 100 * US), 100); /* learn: hybrid would sleep now */
	fg_send(0, 100 * US);
	fg_send(1, 100 * US);
	CU_ASSERT_EQUAL(w->inflight, 2);
	CU_ASSERT_EQUAL(w->untracked, 1);
	g_nsleeps = 0;
	while (g_fg.busy[0] || g_fg.busy[1]) {
		CU_ASSERT(nvp_poll_waiter_wait(w) >= 0);
	}
	CU_ASSERT_EQUAL(g_nsleeps, 0);
	CU_ASSERT_EQUAL(w->inflight, 0);
	CU_ASSERT_EQUAL(w->untracked, 0);
	/* an io_done nobody sent through the hook (hook installed late) underflows nothing */
	g_fg.hook->io_done(g_fg.hook->ctx, &g_fg.io[5], 1, g_now);
	CU_ASSERT_EQUAL(w->inflight, 0);
	nvp_poll_waiter_destroy(w);
}

/* Slots whose I/O left the group's sight are freed once the group has nothing out. */
static void
test_stale_slots_reset(void)
{
	struct nvp_poll_waiter *w;
	int rc;

	w = make("classic", 4, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	fg_send(3, 10 * US);
	g_fg.busy[3] = false; /* its channel left the group: no io_done will come */
	g_fg.outstanding = 0;
	CU_ASSERT_EQUAL(w->inflight, 1);
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 0); /* returns, does not spin forever */
	CU_ASSERT_EQUAL(w->inflight, 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&w->reqs));
	nvp_poll_waiter_destroy(w);
}

/* irq: the channels' fds are the source's; none means irq is refused. */
static void
test_irq(void)
{
	struct nvp_poll_waiter *w;
	struct nvp_poll_opts o;
	int rc;

	w = make("irq", 4, &rc);
	CU_ASSERT_EQUAL(rc, -ENOTSUP);
	CU_ASSERT_PTR_NULL(g_fg.hook);
	CU_ASSERT_EQUAL(w->nsources, 0);
	nvp_poll_waiter_destroy(w);

	w = make("classic", 4, &rc);
	CU_ASSERT_EQUAL(rc, 0);
	nvp_poll_opts_init(&o, sizeof(o));
	o.mode = NVP_POLL_IRQ;
	CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(w, &o), -ENOTSUP);
	nvp_poll_waiter_destroy(w);

	memset(&g_fg, 0, sizeof(g_fg));
	g_fg.nfds = 2;
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_create(&o, &w), 0);
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_bdev_group(w, (struct nvp_bdev_poll_group *)&g_fg, 0),
			0);
	CU_ASSERT_EQUAL(w->sources[0].nfds, 2);
	CU_ASSERT_EQUAL(w->sources[0].irq_fd, 10);
	g_irq_blocks = 0;
	fg_send(0, 30 * US);
	while (g_fg.busy[0]) {
		CU_ASSERT(nvp_poll_waiter_wait(w) >= 0);
	}
	CU_ASSERT(g_irq_blocks > 0);
	nvp_poll_waiter_destroy(w);
}

static void
test_bad_args(void)
{
	struct nvp_poll_waiter *w;
	int rc;

	w = make("classic", 4, &rc);
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_bdev_group(NULL, (void *)&g_fg, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_bdev_group(w, NULL, 0), -EINVAL);
	nvp_poll_waiter_destroy(w);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_tracks_and_learns),
		UT_TEST(test_found_among_others),
		UT_TEST(test_out_of_slots),
		UT_TEST(test_stale_slots_reset),
		UT_TEST(test_irq),
		UT_TEST(test_bad_args),
	};

	return ut_run("poll_bdev", tests, NVP_COUNTOF(tests));
}
