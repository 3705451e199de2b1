/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/poll/poll_sleep.c, the real clock side: WAITPKG detection answers
 * without faulting, a sleep to a deadline never returns before it, the wake-up cost is
 * measured, and an interrupt eventfd wakes a blocked waiter (with one source and with
 * several, through epoll). No assertion depends on how long anything took.
 */
#include <CUnit/Basic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "poll/poll_sleep.c"

struct ut_test {
	const char *name;
	CU_TestFunc fn;
};

#define UT_TEST(fn)     \
	{               \
#fn, fn \
	}

static void
test_waitpkg_detect(void)
{
	bool a = nvp_poll_waitpkg_supported(), b = nvp_poll_waitpkg_supported();

	CU_ASSERT_EQUAL(a, b); /* answers, the same each time, never faults */
	printf("(WAITPKG %s) ", a ? "present" : "absent");
}

static void
test_sleep_deadline(void)
{
	struct nvp_poll_waiter w;
	uint64_t hz = poll_ticks_hz(), dl, woke;

	memset(&w, 0, sizeof(w));
	w.mode = NVP_POLL_HYBRID;
	w.ticks_hz = hz;
	poll_timerslack_set();
	for (int i = 0; i < 5; i++) {
		dl = poll_now() + hz / 20000; /* 50 us */
		woke = poll_sleep_until(&w, dl);
		CU_ASSERT(woke >= dl);
	}
	/* A deadline in the past returns at once, without sleeping. */
	dl = poll_now() - 1;
	CU_ASSERT(poll_sleep_until(&w, dl) >= dl);
	{
		uint64_t late[8], med = poll_wake_cost_measure(hz, &dl, late, 8), below = 0;

		CU_ASSERT(med < hz); /* measured, below a second */
		CU_ASSERT(dl < hz);
		for (int i = 0; i < 8; i++) {
			below += late[i] <= med;
		}
		CU_ASSERT(below >= 4); /* the median of the samples it returns */
	}
}

static int g_unmasks;

static int
count_unmask(void *ctx)
{
	(void)ctx;
	g_unmasks++;
	return 0;
}

static const struct nvp_poll_source_ops g_ops = { NULL, NULL, count_unmask };

static void
test_irq_block(void)
{
	struct nvp_poll_waiter w;
	struct poll_source src[2];
	uint64_t one = 1;
	int fd[2];

	memset(&w, 0, sizeof(w));
	fd[0] = eventfd(0, EFD_CLOEXEC);
	fd[1] = eventfd(0, EFD_CLOEXEC);
	CU_ASSERT_FATAL(fd[0] >= 0 && fd[1] >= 0);
	w.sources = src;
	w.epfd = poll_epoll_create();
	CU_ASSERT_FATAL(w.epfd >= 0);
	memset(src, 0, sizeof(src));
	src[0].ops = &g_ops;
	src[1].ops = &g_ops;
	src[0].irq_fd = fd[0];
	src[1].irq_fd = fd[1];
	/* One source: a blocking read of its eventfd. */
	w.nsources = 1;
	CU_ASSERT_EQUAL(write(fd[0], &one, sizeof(one)), 8);
	CU_ASSERT_EQUAL(poll_irq_block(&w), 0);
	/* Several: epoll, and every ready fd is cleared. */
	w.nsources = 2;
	CU_ASSERT_EQUAL(poll_irq_add(&w, fd[0]), 0);
	CU_ASSERT_EQUAL(poll_irq_add(&w, fd[1]), 0);
	CU_ASSERT_EQUAL(poll_irq_add(&w, fd[1]), 0); /* shared vector: added once */
	CU_ASSERT_EQUAL(write(fd[1], &one, sizeof(one)), 8);
	CU_ASSERT_EQUAL(poll_irq_block(&w), 0);
	CU_ASSERT_EQUAL(write(fd[0], &one, sizeof(one)), 8);
	CU_ASSERT_EQUAL(write(fd[1], &one, sizeof(one)), 8);
	CU_ASSERT_EQUAL(poll_irq_block(&w), 0);
	CU_ASSERT_EQUAL(w.st.irq_timeouts, 0);
	/* Nothing fires: back after the timeout, counted, not hung. */
	CU_ASSERT_EQUAL(poll_irq_block(&w), 0);
	CU_ASSERT_EQUAL(w.st.irq_timeouts, 1);
	w.nsources = 1;
	CU_ASSERT_EQUAL(poll_irq_block(&w), 0);
	CU_ASSERT_EQUAL(w.st.irq_timeouts, 2);
	/* every source was re-armed before each block (level interrupts masked by uio) */
	CU_ASSERT_EQUAL(g_unmasks, 1 + 2 + 2 + 2 + 1);
	poll_epoll_close(w.epfd);
	close(fd[0]);
	close(fd[1]);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_waitpkg_detect),
		UT_TEST(test_sleep_deadline),
		UT_TEST(test_irq_block),
	};
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("poll_sleep", NULL, NULL);
	for (size_t i = 0; suite != NULL && i < NVP_COUNTOF(tests); i++) {
		CU_add_test(suite, tests[i].name, tests[i].fn);
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
