/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of reconnect without the application (nvme_ctrlr_reconnect.c and its
 * decisions in nvme_internal.h) on a fake clock: when an attempt is due, when the
 * controller is given up (ctrlr_loss_timeout_sec, -1 never), when waiting I/O starts to
 * fail (fast_io_fail_timeout_sec, 0 never), a loss stamped after the owner's poll
 * started, and the attempt loop with a reset that fails, then succeeds, driven by the
 * admin poll or by an I/O poll.
 */
/* The driver runs on this test's clock (see nvme_ticks()). */
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_ctrlr_reconnect.c"
#include "nvme/nvme_fiber.c"

#include "ut_nvme.h"

#define HZ 1000u /* fake ticks per second */

static uint64_t g_now;

static uint64_t
ut_ticks(void)
{
	return g_now;
}

/* ---- neighbours ---- */

static unsigned int g_fails, g_removes, g_resets;
static int g_reset_rc;                /* what the next reset returns */
static unsigned int g_reset_waits;    /* answers the next reset waits for (it yields) */
static unsigned int g_reset_finished; /* resets that ran to their end */

static void
fake_fail(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	(void)why;
	g_fails++;
	atomic_store(&ctrlr->is_failed, true);
}

static void
fake_removed(struct nvp_nvme_ctrlr *ctrlr)
{
	g_removes++;
	atomic_store(&ctrlr->removed, true);
	atomic_store(&ctrlr->is_failed, true);
}

/* As the real one: success clears reconnecting; a failure leaves it set. */
static int
fake_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	g_resets++;
	atomic_store(&ctrlr->resetting, true); /* as the real one, for its length */
	for (unsigned int i = 0; i < g_reset_waits; i++) {
		(void)nvme_fiber_yield(); /* as the admin helper's wait does */
	}
	atomic_store(&ctrlr->resetting, false);
	g_reset_finished++;
	if (g_reset_rc == 0) {
		atomic_store(&ctrlr->reconnecting, false);
	}
	return g_reset_rc;
}

/* The admin lock, for the I/O poll's step: held elsewhere while g_lock_busy. */
static bool g_lock_busy;
static unsigned int g_trylocks, g_locked;

bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_trylocks++;
	if (g_lock_busy) {
		return false;
	}
	g_locked++;
	return true;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	CU_ASSERT(g_locked > 0);
	g_locked--;
}

/* The transport's step-by-step connection of an attempt: what each step returns next
 * (g_conn_rcs[g_conn_calls], 1 = connected past the end). */
static int g_conn_rcs[8];
static unsigned int g_conn_calls, g_conn_n;

static int
ut_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return g_conn_calls < g_conn_n ? g_conn_rcs[g_conn_calls++] : (g_conn_calls++, 1);
}

static const struct nvme_transport_ops g_ut_transport = {
	.name = "ut",
	.ctrlr_reconnect_poll = ut_reconnect_poll,
};

/* The controller's table, as nvme_ctrlr_construct() sets it. */
static const struct nvme_ctrlr_recovery_ops g_fake_recovery = {
	.removed = fake_removed,
	.fail = fake_fail,
	.reset = fake_reset,
};

static void
ctrlr_init(struct nvp_nvme_ctrlr *ctrlr, int32_t loss, uint32_t delay, uint32_t fast)
{
	memset(ctrlr, 0, sizeof(*ctrlr));
	snprintf(ctrlr->name, sizeof(ctrlr->name), "ut");
	ctrlr->ticks_hz = HZ;
	ctrlr->transport = &g_ut_transport;
	ctrlr->recovery = &g_fake_recovery;
	ctrlr->state = NVME_CTRLR_STATE_READY;
	ctrlr->opts.ctrlr_loss_timeout_sec = loss;
	ctrlr->opts.reconnect_delay_sec = delay;
	ctrlr->opts.fast_io_fail_timeout_sec = fast;
	g_fails = g_removes = g_resets = 0;
	g_reset_rc = 0;
	g_reset_waits = g_reset_finished = 0;
	g_lock_busy = false;
	g_trylocks = g_locked = 0;
	g_conn_calls = g_conn_n = 0;
}

/* ---- the decisions ---- */

static void
test_decide(void)
{
	struct nvp_nvme_ctrlr_opts o;

	memset(&o, 0, sizeof(o));
	o.ctrlr_loss_timeout_sec = 10;
	o.reconnect_delay_sec = 2;
	/* the first attempt at once; the next not before its time */
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 0, 5000), NVME_RECONNECT_TRY);
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 7000, 6999), NVME_RECONNECT_WAIT);
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 7000, 7000), NVME_RECONNECT_TRY);
	/* the loss timeout counts from the loss, to the tick */
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 20000, 14999), NVME_RECONNECT_WAIT);
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 0, 14999), NVME_RECONNECT_TRY);
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 0, 15000), NVME_RECONNECT_GIVE_UP);
	/* -1: never given up */
	o.ctrlr_loss_timeout_sec = -1;
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 0, UINT64_MAX / 2), NVME_RECONNECT_TRY);
	/* a loss stamped after @now (another thread) is no time at all */
	o.ctrlr_loss_timeout_sec = 1;
	CU_ASSERT_EQUAL(nvme_reconnect_decide(&o, HZ, 5000, 6000, 4000), NVME_RECONNECT_WAIT);
}

static void
test_fast_fail_due(void)
{
	struct nvp_nvme_ctrlr_opts o;

	memset(&o, 0, sizeof(o));
	o.ctrlr_loss_timeout_sec = 10;
	o.reconnect_delay_sec = 1;
	o.fast_io_fail_timeout_sec = 3;
	CU_ASSERT_FALSE(nvme_reconnect_fast_fail_due(&o, HZ, 1000, 1000));
	CU_ASSERT_FALSE(nvme_reconnect_fast_fail_due(&o, HZ, 1000, 3999));
	CU_ASSERT_TRUE(nvme_reconnect_fast_fail_due(&o, HZ, 1000, 4000));
	/* a loss newer than the poll's tick (unsigned wrap would say "long ago") */
	CU_ASSERT_FALSE(nvme_reconnect_fast_fail_due(&o, HZ, 5000, 4000));
	/* 0: waiting I/O never fails before the controller is lost */
	o.fast_io_fail_timeout_sec = 0;
	CU_ASSERT_FALSE(nvme_reconnect_fast_fail_due(&o, HZ, 1000, 1000000));
}

/* ---- the controller side ---- */

static void
test_conn_lost(void)
{
	struct nvp_nvme_ctrlr c;

	/* reconnect off: failed, as before */
	ctrlr_init(&c, 0, 0, 0);
	nvme_ctrlr_conn_lost(&c, "ut");
	CU_ASSERT_EQUAL(g_fails, 1);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	/* not attached yet (initialising): failed, attach reports it */
	ctrlr_init(&c, 5, 1, 0);
	c.state = NVME_CTRLR_STATE_DISABLE;
	nvme_ctrlr_conn_lost(&c, "ut");
	CU_ASSERT_EQUAL(g_fails, 1);
	/* on: reconnecting, stamped once (a second loss does not move the stamp) */
	ctrlr_init(&c, 5, 1, 2);
	g_now = 7000;
	nvme_ctrlr_conn_lost(&c, "ut");
	CU_ASSERT_EQUAL(g_fails, 0);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_EQUAL(atomic_load(&c.loss_ticks), 7000);
	g_now = 8000;
	nvme_ctrlr_conn_lost(&c, "ut");
	CU_ASSERT_EQUAL(atomic_load(&c.loss_ticks), 7000);
	CU_ASSERT_FALSE(nvme_ctrlr_fast_io_fail(&c, 8999));
	CU_ASSERT_TRUE(nvme_ctrlr_fast_io_fail(&c, 9000));
	/* not reconnecting: never fast-failed */
	atomic_store(&c.reconnecting, false);
	CU_ASSERT_FALSE(nvme_ctrlr_fast_io_fail(&c, 90000));
}

/* Attempts every reconnect_delay_sec while they fail; success ends it. */
static void
test_poll_retries_then_succeeds(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, -1, 2, 0);
	g_now = 1000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_reset_rc = -EIO;
	nvme_ctrlr_reconnect_poll(&c); /* the first at once */
	CU_ASSERT_EQUAL(g_resets, 1);
	g_now = 2999;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 1);
	g_now = 3000;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 2);
	CU_ASSERT_TRUE(nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_EQUAL(g_fails + g_removes, 0);
	g_reset_rc = 0;
	g_now = 5000;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 3);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	g_now = 9000;
	nvme_ctrlr_reconnect_poll(&c); /* nothing to do any more */
	CU_ASSERT_EQUAL(g_resets, 3);
	CU_ASSERT_EQUAL(g_removes, 0);
}

/* ctrlr_loss_timeout_sec passes: failed for good, no more attempts. */
static void
test_poll_gives_up(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, 3, 1, 0);
	g_now = 10000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_reset_rc = -EIO;
	for (g_now = 10000; g_now < 12999; g_now += 100) {
		nvme_ctrlr_reconnect_poll(&c);
	}
	CU_ASSERT_EQUAL(g_resets, 3); /* at 10 s, 11 s, 12 s */
	CU_ASSERT_EQUAL(g_removes, 0);
	g_now = 13000;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_removes, 1);
	CU_ASSERT_EQUAL(g_resets, 3);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_FALSE(nvme_ctrlr_reconnect_enabled(&c));
	g_now = 20000;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 3);
	CU_ASSERT_EQUAL(g_removes, 1);
}

/*
 * An I/O poll steps the reconnect (no admin poll at all): the attempt when one is due
 * and the lock is free, never a trylock before that, the lock released; a busy lock
 * leaves the attempt to the next poll; the giving up is the same as the admin poll's.
 */
static void
test_poll_io(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, 4, 2, 0);
	g_now = 1000;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* not reconnecting: nothing, no lock */
	CU_ASSERT_EQUAL(g_trylocks + g_resets, 0);
	nvme_ctrlr_conn_lost(&c, "ut");
	g_reset_rc = -EIO;
	g_lock_busy = true; /* another thread polls the admin queue: not waited for */
	nvme_ctrlr_reconnect_poll_io(&c, g_now);
	CU_ASSERT_EQUAL(g_trylocks, 1);
	CU_ASSERT_EQUAL(g_resets, 0);
	g_lock_busy = false;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* the first attempt, at once */
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_EQUAL(g_locked, 0);
	for (g_now = 1000; g_now < 3000; g_now += 50) {
		nvme_ctrlr_reconnect_poll_io(&c, g_now); /* the delay runs: no lock taken */
	}
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_EQUAL(g_trylocks, 2);
	/* another thread is resetting: not an attempt of ours */
	atomic_store(&c.resetting, true);
	nvme_ctrlr_reconnect_poll_io(&c, 3000);
	CU_ASSERT_EQUAL(g_trylocks, 2);
	atomic_store(&c.resetting, false);
	nvme_ctrlr_reconnect_poll_io(&c, 3000);
	CU_ASSERT_EQUAL(g_resets, 2);
	/* the loss timeout passes: given up from the I/O poll, once */
	g_now = 5000;
	nvme_ctrlr_reconnect_poll_io(&c, g_now);
	CU_ASSERT_EQUAL(g_removes, 1);
	CU_ASSERT_EQUAL(g_resets, 2);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	nvme_ctrlr_reconnect_poll_io(&c, 6000);
	CU_ASSERT_EQUAL(g_removes, 1);
	CU_ASSERT_EQUAL(g_locked, 0);
	/* an attempt that succeeds ends it */
	ctrlr_init(&c, -1, 1, 0);
	g_now = 100;
	nvme_ctrlr_conn_lost(&c, "ut");
	nvme_ctrlr_reconnect_poll_io(&c, g_now);
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	nvme_ctrlr_reconnect_poll_io(&c, 100000);
	CU_ASSERT_EQUAL(g_resets, 1);
}

/*
 * An attempt's connection made a step per poll (a silent target holds no thread): no
 * reset while it is under way, nor an attempt counted; the reset once it is made; a
 * connection that fails is a failed attempt (no reset, the next after the delay).
 */
static void
test_connect_steps(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, -1, 2, 0);
	g_now = 1000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_conn_rcs[0] = 0;
	g_conn_rcs[1] = 0;
	g_conn_rcs[2] = -ECONNREFUSED;
	g_conn_rcs[3] = 0;
	g_conn_n = 4;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* connect() under way */
	g_now = 1001;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* ICReq sent, no answer yet */
	CU_ASSERT_EQUAL(g_conn_calls, 2);
	CU_ASSERT_EQUAL(g_resets, 0);
	CU_ASSERT_EQUAL(c.reconnect_attempts, 0);
	CU_ASSERT_EQUAL(g_locked, 0);
	g_now = 1002;
	nvme_ctrlr_reconnect_poll(&c); /* the admin poll goes on with it: it fails */
	CU_ASSERT_EQUAL(g_conn_calls, 3);
	CU_ASSERT_EQUAL(g_resets, 0);
	CU_ASSERT_EQUAL(c.reconnect_attempts, 1);
	CU_ASSERT_TRUE(nvme_ctrlr_is_reconnecting(&c));
	for (g_now = 1002; g_now < 3002; g_now += 100) {
		nvme_ctrlr_reconnect_poll_io(&c, g_now); /* the delay runs */
	}
	CU_ASSERT_EQUAL(g_conn_calls, 3);
	nvme_ctrlr_reconnect_poll_io(&c, 3002); /* the next attempt: a step */
	CU_ASSERT_EQUAL(g_conn_calls, 4);
	CU_ASSERT_EQUAL(g_resets, 0);
	g_now = 3003;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* connected: the reset, which succeeds */
	CU_ASSERT_EQUAL(g_conn_calls, 5);
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_EQUAL(c.reconnect_attempts, 2);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_EQUAL(g_locked, 0);
}

/* Lines of the log since ut_log_clear() that contain @s. */
static unsigned int
log_count(const char *s)
{
	unsigned int n = 0;

	for (const char *p = strstr(g_ut_log, s); p != NULL; p = strstr(p + 1, s)) {
		n++;
	}
	return n;
}

/*
 * A target that refuses every connection, for ever (ctrlr_loss_timeout_sec -1): each
 * failed attempt of the first five says so in one line (its number, why, the next
 * attempt's delay, no limit), and nothing else is logged per attempt; after those, one
 * line a minute, counting the attempts it did not show; a new loss starts again.
 */
static void
test_attempt_lines(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, -1, 1, 0);
	g_now = 1000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_conn_rcs[0] = -ECONNREFUSED;
	g_conn_n = 1;
	ut_log_clear();
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(c.reconnect_attempts, 1);
	CU_ASSERT(ut_log_has("ut: reconnect attempt 1 failed: Connection refused; next in 1 s, "
			     "no limit"));
	CU_ASSERT_EQUAL(log_count("\n"), 1);
	for (unsigned int i = 1; i < 30; i++) { /* attempts 2..30, refused, a second apart */
		g_now = 1000 + i * HZ;
		g_conn_calls = 0;
		nvme_ctrlr_reconnect_poll(&c);
	}
	CU_ASSERT_EQUAL(c.reconnect_attempts, 30);
	CU_ASSERT_EQUAL(g_resets, 0);
	CU_ASSERT_EQUAL(log_count("reconnect attempt"), NVME_RECONNECT_LOG_FIRST);
	CU_ASSERT_EQUAL(log_count("\n"), NVME_RECONNECT_LOG_FIRST);
	CU_ASSERT(ut_log_has("reconnect attempt 5 failed"));
	CU_ASSERT_FALSE(ut_log_has("reconnect attempt 6 failed"));
	/* a minute after the fifth line: the next attempt's line, with the count */
	for (unsigned int i = 30; i <= 65; i++) {
		g_now = 1000 + i * HZ;
		g_conn_calls = 0;
		nvme_ctrlr_reconnect_poll(&c);
	}
	CU_ASSERT_EQUAL(c.reconnect_attempts, 66);
	CU_ASSERT_EQUAL(log_count("reconnect attempt"), NVME_RECONNECT_LOG_FIRST + 1);
	CU_ASSERT(ut_log_has("reconnect attempt 65 failed: Connection refused; next in 1 s, no "
			     "limit (ctrlr_loss_timeout_sec -1); 59 failed attempts before it not "
			     "shown"));
	/* connected, and the reset fails: said as the reset's */
	g_now += HZ;
	g_conn_calls = g_conn_n = 0;
	g_reset_rc = -EIO;
	atomic_store(&c.reconnecting, false);
	nvme_ctrlr_conn_lost(&c, "ut"); /* a new loss: its first lines are shown again */
	ut_log_clear();
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT(ut_log_has("reconnect attempt 1 failed: reset: Input/output error; next in 1 s"));
}

/*
 * The attempt's reset goes a step per poll: a reset that waits for three answers takes
 * four polls (I/O or admin), each returning between them with the controller still
 * reconnecting; the attempt counts once; an I/O poll of another thread (the lock held
 * by the reset's) does nothing; a reset that fails leaves the next attempt to the delay.
 */
static void
test_reset_a_step_per_poll(void)
{
	struct nvp_nvme_ctrlr c;

	ctrlr_init(&c, -1, 1, 0);
	g_now = 1000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_reset_waits = 3;
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* connected at once: the reset's first step */
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_EQUAL(g_reset_finished, 0);
	CU_ASSERT_PTR_NOT_NULL(atomic_load(&c.reset_fiber));
	CU_ASSERT_TRUE(nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_EQUAL(g_locked, 0);
	g_lock_busy = true; /* another thread's poll: the reset's lock is not its */
	nvme_ctrlr_reconnect_poll_io(&c, g_now);
	CU_ASSERT_EQUAL(g_reset_finished, 0);
	g_lock_busy = false;
	nvme_ctrlr_reconnect_poll_io(&c, g_now);
	nvme_ctrlr_reconnect_poll(&c); /* the admin poll steps it too */
	CU_ASSERT_EQUAL(g_reset_finished, 0);
	CU_ASSERT_TRUE(nvme_ctrlr_is_reconnecting(&c));
	nvme_ctrlr_reconnect_poll_io(&c, g_now); /* the last answer: done */
	CU_ASSERT_EQUAL(g_reset_finished, 1);
	CU_ASSERT_EQUAL(g_resets, 1);
	CU_ASSERT_EQUAL(c.reconnect_attempts, 1);
	CU_ASSERT_PTR_NULL(atomic_load(&c.reset_fiber));
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
	CU_ASSERT_EQUAL(g_locked, 0);
	/* a reset that fails, a step per poll too: the next attempt after the delay */
	g_now = 5000;
	nvme_ctrlr_conn_lost(&c, "ut");
	g_reset_rc = -EIO;
	g_reset_waits = 1;
	g_conn_calls = 0;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 2);
	CU_ASSERT_EQUAL(g_reset_finished, 1);
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_reset_finished, 2);
	CU_ASSERT_TRUE(nvme_ctrlr_is_reconnecting(&c));
	g_now = 5999;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 2);
	g_now = 6000;
	g_reset_rc = 0;
	g_reset_waits = 0;
	nvme_ctrlr_reconnect_poll(&c);
	CU_ASSERT_EQUAL(g_resets, 3);
	CU_ASSERT_FALSE(nvme_ctrlr_is_reconnecting(&c));
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_ctrlr_reconnect", NULL, NULL);
	CU_add_test(s, "decide", test_decide);
	CU_add_test(s, "fast_fail_due", test_fast_fail_due);
	CU_add_test(s, "conn_lost", test_conn_lost);
	CU_add_test(s, "poll_retries_then_succeeds", test_poll_retries_then_succeeds);
	CU_add_test(s, "poll_gives_up", test_poll_gives_up);
	CU_add_test(s, "poll_io", test_poll_io);
	CU_add_test(s, "connect_steps", test_connect_steps);
	CU_add_test(s, "attempt_lines", test_attempt_lines);
	CU_add_test(s, "reset_a_step_per_poll", test_reset_a_step_per_poll);
	return ut_run();
}
