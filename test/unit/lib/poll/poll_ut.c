/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/poll/poll.c on a fake clock (1 tick = 1 ns; time moves when the fake
 * device is polled, 1 us per pass, and when the waiter sleeps): the hybrid
 * sleep decision (no statistics: spin; one request; several; too short to be worth a
 * sleep), the predictors, oversleep kept out of the statistics, the wake-cost tracking,
 * fixed and irq modes, and a mode switch with requests in flight. The predictor through
 * its feedback: seeded lognormal device times and wake-ups late by chance (ut_lat.h).
 */
#include "poll_ut_fake.h"

#include "poll/poll.c"
#include "poll/poll_opts.c"
#include "poll/poll_stats.c"

#include "../ut_lat.h"

#define US 1000u
#define SPIN_STEP (1 * US)
#define MAX_REQS 16

/* The qpair functions poll.c calls: not used here (fake sources instead). */
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

/* A device whose requests complete at fixed due times. */
struct fake_dev {
	struct nvp_poll_waiter *w;
	struct nvp_poll_req req[MAX_REQS];
	uint64_t due[MAX_REQS];
	bool busy[MAX_REQS];
	uint64_t lat; /* service time of each new request */
	uint32_t done;
	int irq_fd;
};

static int32_t
fake_poll(void *ctx)
{
	struct fake_dev *d = ctx;
	int32_t n = 0;

	for (int i = 0; i < MAX_REQS; i++) {
		if (d->busy[i] && d->due[i] <= g_now) {
			d->busy[i] = false;
			nvp_poll_req_done(d->w, &d->req[i]);
			d->done++;
			n++;
		}
	}
	g_now += SPIN_STEP; /* what a pass costs */
	return n;
}

static int
fake_irq_fd(void *ctx)
{
	return ((struct fake_dev *)ctx)->irq_fd;
}

static const struct nvp_poll_source_ops g_fake_ops = { fake_poll, fake_irq_fd, NULL };

static void
submit(struct fake_dev *d, int i, uint8_t opc, uint32_t bytes)
{
	d->busy[i] = true;
	d->due[i] = g_now + d->lat;
	nvp_poll_req_start(d->w, &d->req[i], opc, bytes);
}

static struct nvp_poll_waiter *
make(const char *mode, struct fake_dev *d)
{
	struct nvp_poll_opts o;
	struct nvp_poll_waiter *w = NULL;

	nvp_poll_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL_FATAL(nvp_poll_mode_parse(mode, &o), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_create(&o, &w), 0);
	memset(d, 0, sizeof(*d));
	d->w = w;
	d->irq_fd = 3;
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_source(w, &g_fake_ops, d), 0);
	g_nsleeps = 0;
	g_irq_blocks = 0;
	g_sleep_late = 0;
	return w;
}

/* QD1 reads until @n completed, each waited for with wait(). */
static void
run_qd1(struct fake_dev *d, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		submit(d, 0, NVME_OPC_READ, 4096);
		CU_ASSERT_EQUAL(nvp_poll_waiter_wait(d->w), 1);
	}
}

/*
 * Warm the statistics: enough samples, then cross a window boundary. A bucket predicts
 * from its min_samples-th sample on, so the waiter sleeps during the warm-up: those
 * sleeps wake as late as the calibration said (5 us), so the wake-up cost it tracks is
 * what the tests after it expect, and they are not counted in g_nsleeps.
 */
static void
warm(struct fake_dev *d)
{
	uint64_t late = g_sleep_late;

	g_sleep_late = 5 * US;
	run_qd1(d, 20);
	g_now += 100000 * US;
	CU_ASSERT_EQUAL(nvp_poll_waiter_poll(d->w), 0); /* the window rolls */
	g_sleep_late = late;
	g_nsleeps = 0;
}

static void
test_create_errors(void)
{
	struct nvp_poll_opts o;
	struct nvp_poll_waiter *w = NULL;

	nvp_poll_opts_init(&o, sizeof(o));
	o.mode = NVP_POLL_UMWAIT; /* the fake CPU has no WAITPKG */
	CU_ASSERT_EQUAL(nvp_poll_waiter_create(&o, &w), -ENOTSUP);
	o.mode = NVP_POLL_FIXED; /* fixed:0 */
	CU_ASSERT_EQUAL(nvp_poll_waiter_create(&o, &w), -EINVAL);
	o.mode = 42;
	CU_ASSERT_EQUAL(nvp_poll_waiter_create(&o, &w), -EINVAL);
	CU_ASSERT_PTR_NULL(w);
	CU_ASSERT_EQUAL(nvp_poll_waiter_create(NULL, &w), -EINVAL);
}

/*
 * No statistics: spin, never sleep, until the bucket has min_samples (8) samples, which
 * publish its first prediction at once; then sleep once per request to the prediction.
 */
static void
test_hybrid_one_request(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	uint64_t start;

	d.lat = 100 * US;
	run_qd1(&d, 8);
	CU_ASSERT_EQUAL(g_nsleeps, 0); /* no statistics yet: spun for every one */
	/* The eighth sample published a prediction before the window's end. */
	CU_ASSERT(w->stats.b[poll_bucket_of(NVME_OPC_READ, 4096)].expect >= 100 * US);
	g_now += 100000 * US;
	nvp_poll_waiter_poll(w);
	/* Samples were 100..101 us; p10 of them is the prediction. */
	CU_ASSERT(w->stats.b[poll_bucket_of(NVME_OPC_READ, 4096)].expect >= 100 * US);
	CU_ASSERT(w->stats.b[poll_bucket_of(NVME_OPC_READ, 4096)].expect <= 101 * US);
	start = g_now;
	submit(&d, 0, NVME_OPC_READ, 4096);
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1);
	CU_ASSERT_EQUAL(g_nsleeps, 1);
	/* Slept until the prediction minus the 5 us a sleep costs. */
	CU_ASSERT(g_last_deadline >= start + 95 * US && g_last_deadline <= start + 96 * US);
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT_EQUAL(st.sleeps, 1);
	CU_ASSERT_EQUAL(st.oversleeps, 0);
	CU_ASSERT_EQUAL(st.spins > 0, true);
	/* Other buckets (a write, a 128 KiB read) have no statistics: spin. */
	submit(&d, 0, NVME_OPC_WRITE, 4096);
	nvp_poll_waiter_wait(w);
	submit(&d, 0, NVME_OPC_READ, 131072);
	nvp_poll_waiter_wait(w);
	CU_ASSERT_EQUAL(g_nsleeps, 1);
	nvp_poll_waiter_destroy(w);
}

/* The kernel's rule: half the mean. */
static void
test_hybrid_mean(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid:mean", &d);
	uint64_t start;

	d.lat = 100 * US;
	warm(&d);
	start = g_now;
	submit(&d, 0, NVME_OPC_READ, 4096);
	nvp_poll_waiter_wait(w);
	CU_ASSERT_EQUAL(g_nsleeps, 1);
	CU_ASSERT(g_last_deadline >= start + 45 * US && g_last_deadline <= start + 46 * US);
	nvp_poll_waiter_destroy(w);
}

/* Several in flight: sleep until the earliest is due; spin when one has no statistics. */
static void
test_hybrid_several(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	uint64_t start;

	d.lat = 200 * US;
	g_sleep_late = 5 * US; /* the warm-up's sleeps wake as late as calibrated (see warm()) */
	run_qd1(&d, 20);
	d.lat = 80 * US;
	for (int i = 0; i < 20; i++) {
		submit(&d, 0, NVME_OPC_WRITE, 4096);
		nvp_poll_waiter_wait(w);
	}
	g_now += 100000 * US;
	nvp_poll_waiter_poll(w);
	g_sleep_late = 0;
	g_nsleeps = 0;
	start = g_now;
	d.lat = 200 * US;
	submit(&d, 0, NVME_OPC_READ, 4096);
	g_now += 50 * US;
	d.lat = 80 * US;
	submit(&d, 1, NVME_OPC_WRITE, 4096);
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1); /* the write, at start + 130 us */
	CU_ASSERT_EQUAL(g_nsleeps, 1);
	CU_ASSERT(g_last_deadline >= start + 125 * US && g_last_deadline <= start + 126 * US);
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1); /* the read, at start + 200 us */
	CU_ASSERT_EQUAL(g_nsleeps, 2);
	CU_ASSERT(g_last_deadline >= start + 195 * US && g_last_deadline <= start + 196 * US);
	/* A request without statistics in flight: nobody sleeps. */
	submit(&d, 0, NVME_OPC_READ, 4096);
	submit(&d, 1, NVME_OPC_DATASET_MANAGEMENT, 4096);
	nvp_poll_waiter_wait(w);
	nvp_poll_waiter_wait(w);
	CU_ASSERT_EQUAL(g_nsleeps, 2);
	CU_ASSERT_EQUAL(d.done, 44);
	nvp_poll_waiter_destroy(w);
}

/*
 * A sleep is taken when its deadline (the prediction minus the lateness) is ahead and the
 * time asleep, about the prediction, exceeds the CPU a sleep uses; not otherwise.
 */
static void
test_hybrid_too_short(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);

	d.lat = 5 * US; /* not more than the 5 us a sleep wakes late: no deadline ahead */
	warm(&d);
	run_qd1(&d, 10);
	CU_ASSERT_EQUAL(g_nsleeps, 0);
	nvp_poll_waiter_destroy(w);

	w = make("hybrid", &d);
	d.lat = 8 * US; /* asleep about 7 us, for 3 us of CPU: worth it */
	warm(&d);
	run_qd1(&d, 10);
	CU_ASSERT(g_nsleeps >= 9);
	nvp_poll_waiter_destroy(w);

	w = make("hybrid", &d);
	d.lat = 20 * US; /* a deadline ahead, but sleeping costs 20 us of CPU here */
	warm(&d);
	w->sleep_cpu = 20 * US;
	run_qd1(&d, 10);
	CU_ASSERT_EQUAL(g_nsleeps, 0);
	d.lat = 40 * US; /* asleep about 39 us for 20: worth it */
	warm(&d);
	warm(&d); /* a window of 40 us samples only */
	g_nsleeps = 0;
	run_qd1(&d, 10);
	CU_ASSERT(g_nsleeps >= 9);
	nvp_poll_waiter_destroy(w);
}

/* Oversleep: counted, left out of the statistics, and the cost estimate learns it. */
static void
test_oversleep_not_in_stats(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);
	struct nvp_poll_stats st0 = { .info_size = sizeof(st0) };
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	uint64_t before, cost0;

	d.lat = 100 * US;
	warm(&d);
	before = w->stats.b[b].expect;
	cost0 = w->wake_cost;
	nvp_poll_waiter_get_stats(w, &st0); /* the warm-up's sleeps woke 5 us late */
	g_sleep_late = 60 * US;             /* every sleep wakes 60 us late: after the completion */
	run_qd1(&d, 40);
	nvp_poll_waiter_get_stats(w, &st);
	st.sleeps -= st0.sleeps;
	st.oversleeps -= st0.oversleeps;
	st.samples_skipped -= st0.samples_skipped;
	st.sleep_late_ns -= st0.sleep_late_ns;
	CU_ASSERT(st.sleeps > 0);
	CU_ASSERT(st.oversleeps > 0 && st.oversleeps <= st.sleeps);
	CU_ASSERT(st.samples_skipped >= st.oversleeps);
	CU_ASSERT(st.sleep_late_ns >= st.sleeps * 60 * US);
	CU_ASSERT(w->wake_cost > cost0); /* it learns that sleeps cost more here */
	g_now += 100000 * US;
	nvp_poll_waiter_poll(w);
	/* The oversleeps did not inflate what the bucket predicts. */
	CU_ASSERT(w->stats.b[b].expect <= before + 1 * US);
	nvp_poll_waiter_destroy(w);
}

/* The device gets faster while every request completes during the sleep: probes see it,
 * and the first one that does becomes the prediction. */
static void
test_device_gets_faster(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);
	struct nvp_poll_stats st = { .info_size = sizeof(st) };

	d.lat = 100 * US;
	warm(&d);
	CU_ASSERT(w->stats.b[b].expect >= 100 * US);
	d.lat = 30 * US;
	run_qd1(&d, 64); /* two probes among them */
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT(st.oversleeps > 0);
	CU_ASSERT(st.relearns >= 1);
	/* the probe's own time predicts at once, not spinning until the next window */
	CU_ASSERT(w->stats.b[b].expect >= 30 * US && w->stats.b[b].expect <= 31 * US);
	g_nsleeps = 0;
	run_qd1(&d, 10);
	CU_ASSERT(g_nsleeps >= 9);
	g_now += 100000 * US;
	nvp_poll_waiter_poll(w);
	CU_ASSERT(w->stats.b[b].expect >= 30 * US && w->stats.b[b].expect <= 31 * US);
	nvp_poll_waiter_destroy(w);
}

/*
 * The device got a little faster (too little for a probe to drop the prediction) and the
 * waiter wakes before the predicted time: the requests found done at the wake-up bring
 * the prediction down to the device's new time. (Recording only the prediction for them
 * kept it where it was: the true samples left were the ones that outlasted the sleep.)
 */
static void
test_prediction_comes_down(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);

	d.lat = 100 * US;
	warm(&d);
	CU_ASSERT(w->stats.b[b].expect >= 100 * US);
	w->wake_floor = 10 * US; /* what is subtracted: sleeps wake 10 us before the due time */
	d.lat = 90 * US;
	for (int k = 0; k < 4; k++) {
		run_qd1(&d, 64);
		g_now += 100000 * US;
		nvp_poll_waiter_poll(w);
	}
	CU_ASSERT(w->stats.b[b].expect >= 90 * US && w->stats.b[b].expect <= 92 * US);
	printf("(prediction %.1f us) ", (double)w->stats.b[b].expect / US);
	nvp_poll_waiter_destroy(w);
}

/*
 * The predictor through its feedback, on a loaded machine: a device whose reads take a
 * lognormal 100 us (p99 200 us), and sleeps that mostly wake 2 us late but, one in four,
 * 150 us late (the thread preempted). The kernel's rule (half the mean) sleeps about
 * 50 us; a late wake-up finds the request done and cannot tell when it finished, so
 * what is recorded for it is at most the prediction, never the wake-up: the mean the
 * waiter publishes stays at or under the device's, window after window, instead of
 * growing with the lateness of the machine (which would push the sleeps later and later).
 */
static void
test_loop_late_wakeups_not_learnt(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid:mean", &d);
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	struct ut_lat rng;
	uint64_t dev_ns = 0, n = 0, win_end;
	uint32_t windows = 0;

	ut_lat_seed(&rng, 1);
	while (windows < 8) {
		win_end = w->stats.window_start + w->stats.window_ticks;
		d.lat = ut_lat_lognormal(&rng, 100 * US, 200 * US);
		g_sleep_late = ut_lat_chance(&rng, 25) ? 150 * US : 2 * US;
		dev_ns += d.lat;
		n++;
		submit(&d, 0, NVME_OPC_READ, 4096);
		CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1);
		if (g_now >= win_end) {
			windows++;
			/* published from the window just closed: never over the device's mean */
			CU_ASSERT(w->stats.b[b].mean <= dev_ns / n + 2 * US);
		}
	}
	nvp_poll_waiter_get_stats(w, &st);
	printf("(device mean %.1f us, published %.1f us; %lu of %lu sleeps over) ",
	       (double)dev_ns / (double)n / US, (double)w->stats.b[b].mean / US,
	       (unsigned long)st.oversleeps, (unsigned long)st.sleeps);
	CU_ASSERT(st.oversleeps * 10 > st.sleeps);       /* the late ones did find requests done */
	CU_ASSERT(w->stats.b[b].mean >= dev_ns / n / 2); /* and it did not collapse either */
	g_sleep_late = 0;
	nvp_poll_waiter_destroy(w);
}

/*
 * A window that closes with requests in flight retargets them: writes sent while the
 * bucket still predicts from the last window (the device at 1 ms) get that due time;
 * when the window that saw the device slow down to 3 ms closes, their due times move to
 * the new prediction before any of them completes. (A bucket's first prediction comes at
 * its min_samples-th sample, so the first window is not where this shows.)
 */
static void
test_window_retargets_in_flight(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	int i;

	d.lat = 1000 * US;
	for (i = 0; i < 10; i++) {
		submit(&d, 0, NVME_OPC_WRITE, 4096);
		nvp_poll_waiter_wait(w);
	}
	g_now = w->stats.window_start + w->stats.window_ticks + 1;
	CU_ASSERT_EQUAL(nvp_poll_waiter_poll(w), 0); /* 1 ms published */
	d.lat = 3000 * US;
	for (i = 0; i < 10; i++) {
		submit(&d, 0, NVME_OPC_WRITE, 4096);
		nvp_poll_waiter_wait(w);
	}
	g_now = w->stats.window_start + w->stats.window_ticks - 200 * US;
	for (i = 0; i < 4; i++) {
		submit(&d, i, NVME_OPC_WRITE, 4096);
		CU_ASSERT(d.req[i].due > d.req[i].start);
		CU_ASSERT(d.req[i].due - d.req[i].start < 2000 * US); /* the old prediction */
	}
	g_now = w->stats.window_start + w->stats.window_ticks + 1;
	CU_ASSERT_EQUAL(nvp_poll_waiter_poll(w), 0); /* the window closes, none done */
	for (i = 0; i < 4; i++) {
		CU_ASSERT(d.req[i].due - d.req[i].start > 2000 * US); /* retargeted */
	}
	while (w->inflight > 0) {
		CU_ASSERT(nvp_poll_waiter_wait(w) >= 1);
	}
	CU_ASSERT_EQUAL(d.done, 24);
	nvp_poll_waiter_destroy(w);
}

/*
 * A request submitted from a completion callback and completed in the same pass (QEMU
 * under TCG completes during the doorbell write): its sample must not wrap around.
 */
static int32_t
same_pass_poll(void *ctx)
{
	struct fake_dev *d = ctx;

	if (d->busy[0]) {
		d->busy[0] = false;
		nvp_poll_req_done(d->w, &d->req[0]);
		d->done++;
		return 1;
	}
	return 0;
}

static const struct nvp_poll_source_ops g_same_pass_ops = { same_pass_poll, NULL, NULL };

static void
test_sample_started_in_pass(void)
{
	struct nvp_poll_opts o;
	struct fake_dev d;
	struct nvp_poll_waiter *w = NULL;
	uint16_t b = poll_bucket_of(NVME_OPC_READ, 4096);

	nvp_poll_opts_init(&o, sizeof(o));
	nvp_poll_mode_parse("hybrid:mean", &o);
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_create(&o, &w), 0);
	memset(&d, 0, sizeof(d));
	d.w = w;
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_source(w, &g_same_pass_ops, &d), 0);
	for (int i = 0; i < 20; i++) {
		w->pass_now = g_now;
		g_now += 3 * US; /* submitted after the pass began ... */
		d.busy[0] = true;
		nvp_poll_req_start(w, &d.req[0], NVME_OPC_READ, 4096);
		g_now += 2 * US;
		same_pass_poll(&d); /* ... and completed within it */
	}
	g_now += 100000 * US;
	nvp_poll_waiter_poll(w);
	CU_ASSERT(w->stats.b[b].mean > 0);
	CU_ASSERT(w->stats.b[b].mean <= 2 * US); /* not ~2^64 */
	nvp_poll_waiter_destroy(w);
}

/*
 * A machine that was slow for a while: the cost estimate says sleeping is not worth it,
 * hybrid spins, but a short sleep every 50 ms (backing off while they stay slow)
 * re-measures; the first one that wakes on time again means the remembered lateness is
 * stale: hybrid sleeps again at once.
 */
static void
test_wake_cost_explores(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	uint64_t slow_probes;

	d.lat = 100 * US;
	warm(&d);
	for (int i = 0; i < 40; i++) {
		poll_wake_cost_update(w, 500 * US); /* sleeps woke 500 us late */
	}
	g_nsleeps = 0;
	g_sleep_late = 500 * US; /* and still do, for 2 s */
	run_qd1(&d, 100);
	CU_ASSERT(g_nsleeps <= 1); /* not worth it now: one exploring sleep (50 ms passed) */
	for (uint64_t end = g_now + 2000000 * US; g_now < end;) {
		run_qd1(&d, 1);
	}
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT(st.wake_probes >= 3 && st.wake_probes <= 8); /* backed off: not 40 */
	CU_ASSERT(w->wake_cost >= 500 * US);
	slow_probes = st.wake_probes;
	g_sleep_late = 2 * US;               /* the machine is idle again */
	for (int i = 0; i < 40 * 500; i++) { /* 40 x 50 ms of 100 us requests */
		run_qd1(&d, 1);
	}
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT_EQUAL(st.wake_probes, slow_probes + 1);       /* one cheap probe was enough */
	CU_ASSERT(st.slept_ns > 0 && st.slept_ns < st.wait_ns); /* slept, and polled too */
	CU_ASSERT(w->wake_cost <= 2 * US);
	g_nsleeps = 0;
	run_qd1(&d, 10);
	CU_ASSERT(g_nsleeps >= 9); /* sleeping once per request (bar a probe) */
	printf("(%u sleeps, %lu wake probes) ", g_nsleeps, (unsigned long)st.wake_probes);
	g_sleep_late = 0;
	nvp_poll_waiter_destroy(w);
}

/*
 * The calibration's sleeps start the record: the cost is their median, as for the sleeps
 * that follow, and the first real sleeps replace them one by one.
 */
static void
test_wake_cost_calibrated(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w;

	g_calib_step = 1000; /* calibration sleeps 5..36 us late */
	w = make("hybrid", &d);
	g_calib_step = 0;
	CU_ASSERT_EQUAL(w->wake_cost, 20 * US); /* their median, not a high percentile */
	for (int i = 0; i < 20; i++) {
		poll_wake_cost_update(w, 1 * US);
	}
	CU_ASSERT_EQUAL(w->wake_cost, 1 * US); /* 20 of 32 sleeps say 1 us */
	nvp_poll_waiter_destroy(w);
}

static void
test_wake_cost_tracks(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("hybrid", &d);

	for (int i = 0; i < 100; i++) {
		poll_wake_cost_update(w, 20 * US);
	}
	CU_ASSERT(w->wake_cost >= 19 * US && w->wake_cost <= 21 * US);
	for (int i = 0; i < 100; i++) {
		poll_wake_cost_update(w, 2 * US);
	}
	CU_ASSERT(w->wake_cost >= 2 * US && w->wake_cost <= 3 * US);
	/* One preemption of 5 ms moves it by a bounded step, not to milliseconds. */
	poll_wake_cost_update(w, 5000 * US);
	CU_ASSERT(w->wake_cost < 10 * US);
	nvp_poll_waiter_destroy(w);
}

static void
test_fixed(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("fixed:30", &d);
	uint64_t start = g_now;

	d.lat = 100 * US;
	submit(&d, 0, NVME_OPC_READ, 4096); /* no statistics needed */
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1);
	CU_ASSERT_EQUAL(g_nsleeps, 1);
	/* fixed is the kernel's io_poll_delay: no correction for the cost of a sleep */
	CU_ASSERT_EQUAL(g_last_deadline, start + 30 * US);
	nvp_poll_waiter_destroy(w);
}

static void
test_classic_never_sleeps(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("classic", &d);
	struct nvp_poll_stats st = { .info_size = sizeof(st) };

	d.lat = 100 * US;
	warm(&d);
	run_qd1(&d, 10);
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT_EQUAL(g_nsleeps, 0);
	CU_ASSERT_EQUAL(st.sleeps, 0);
	CU_ASSERT(st.spins >= 30 * 90);
	CU_ASSERT_EQUAL(st.samples, 30);
	/* all of its waiting was polling: 30 requests of 100 us, 1 us a pass */
	CU_ASSERT_EQUAL(st.slept_ns, 0);
	CU_ASSERT(st.wait_ns >= 30 * 98 * US && st.wait_ns <= 30 * 101 * US);
	/* Nothing in flight: wait returns 0 after one pass. */
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 0);
	nvp_poll_waiter_destroy(w);
}

static void
test_irq(void)
{
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("irq", &d);
	struct nvp_poll_opts o;
	struct fake_dev d2;
	struct nvp_poll_stats st = { .info_size = sizeof(st) };

	d.lat = 100 * US;
	submit(&d, 0, NVME_OPC_READ, 4096);
	/* the fake block does not move time; the fake poll does, 1 us a pass */
	CU_ASSERT_EQUAL(nvp_poll_waiter_wait(w), 1);
	CU_ASSERT(g_irq_blocks >= 1);
	nvp_poll_waiter_get_stats(w, &st);
	CU_ASSERT_EQUAL(st.irq_waits, g_irq_blocks);
	CU_ASSERT_EQUAL(st.oversleeps, 0);
	CU_ASSERT_EQUAL(st.samples, 0); /* found after an interrupt: not a sample */
	/* A source without an interrupt cannot join an irq waiter. */
	memset(&d2, 0, sizeof(d2));
	d2.irq_fd = -ENOTSUP;
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_source(w, &g_fake_ops, &d2), -ENOTSUP);
	nvp_poll_waiter_destroy(w);
	/* ... nor can a waiter holding one switch to irq. */
	w = make("classic", &d);
	d.irq_fd = -ENOTSUP;
	CU_ASSERT_EQUAL(nvp_poll_waiter_add_source(w, &g_fake_ops, &d2), 0);
	nvp_poll_opts_init(&o, sizeof(o));
	o.mode = NVP_POLL_IRQ;
	CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(w, &o), -ENOTSUP);
	CU_ASSERT_EQUAL(w->mode, NVP_POLL_CLASSIC);
	nvp_poll_waiter_destroy(w);
}

/* Switch modes with 8 requests in flight, again and again: every one completes. */
static void
test_mode_switch_under_load(void)
{
	static const char *const modes[] = { "classic", "hybrid",      "fixed:20",
					     "irq",     "hybrid:mean", "classic" };
	struct fake_dev d;
	struct nvp_poll_waiter *w = make("classic", &d);
	struct nvp_poll_opts o;
	uint32_t submitted = 0;

	d.lat = 50 * US;
	for (int i = 0; i < 8; i++) {
		submit(&d, i, NVME_OPC_READ, 4096);
		submitted++;
	}
	for (int round = 0; round < 600; round++) {
		nvp_poll_opts_init(&o, sizeof(o));
		CU_ASSERT_EQUAL(nvp_poll_mode_parse(modes[round % 6], &o), 0);
		CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(w, &o), 0);
		CU_ASSERT(nvp_poll_waiter_wait(w) > 0);
		for (int i = 0; i < 8; i++) {
			if (!d.busy[i]) {
				d.lat = (uint64_t)(20 + (round * 7 + i * 13) % 90) * US;
				submit(&d, i, NVME_OPC_READ, 4096);
				submitted++;
			}
		}
		if (round % 50 == 0) {
			g_now += 100000 * US; /* windows roll now and then */
		}
	}
	while (w->inflight > 0) {
		CU_ASSERT(nvp_poll_waiter_wait(w) > 0);
	}
	CU_ASSERT_EQUAL(d.done, submitted);
	CU_ASSERT(TAILQ_EMPTY(&w->reqs));
	nvp_poll_waiter_destroy(w);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_create_errors),
		UT_TEST(test_hybrid_one_request),
		UT_TEST(test_hybrid_mean),
		UT_TEST(test_hybrid_several),
		UT_TEST(test_hybrid_too_short),
		UT_TEST(test_oversleep_not_in_stats),
		UT_TEST(test_device_gets_faster),
		UT_TEST(test_prediction_comes_down),
		UT_TEST(test_loop_late_wakeups_not_learnt),
		UT_TEST(test_window_retargets_in_flight),
		UT_TEST(test_sample_started_in_pass),
		UT_TEST(test_wake_cost_calibrated),
		UT_TEST(test_wake_cost_tracks),
		UT_TEST(test_wake_cost_explores),
		UT_TEST(test_fixed),
		UT_TEST(test_classic_never_sleeps),
		UT_TEST(test_irq),
		UT_TEST(test_mode_switch_under_load),
	};

	return ut_run("poll", tests, NVP_COUNTOF(tests));
}
