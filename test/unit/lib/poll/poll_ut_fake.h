/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lib/poll unit tests' stand-ins: a fake clock in place of poll_sleep.c (time moves
 * only when a test or a fake sleep moves it; 1 tick = 1 ns), fake completion sources in
 * place of qpairs, and a CUnit runner.
 */
#ifndef POLL_UT_FAKE_H
#define POLL_UT_FAKE_H

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "poll/poll_internal.h"

static uint64_t g_now = 1000000;
static uint64_t g_sleep_late = 0; /* how late each fake sleep wakes */
static uint64_t g_calib_step = 0; /* calibration sleep i wakes 5 us + i * this late */
static uint64_t g_last_deadline;
static uint32_t g_nsleeps;
static uint32_t g_irq_blocks;

uint64_t
poll_now(void)
{
	return g_now;
}

uint64_t
poll_ticks_hz(void)
{
	return 1000000000u;
}

uint64_t
poll_sleep_until(struct nvp_poll_waiter *w, uint64_t deadline)
{
	(void)w;
	g_last_deadline = deadline;
	g_nsleeps++;
	if (deadline > g_now) {
		g_now = deadline;
	}
	g_now += g_sleep_late;
	return g_now;
}

uint64_t
poll_wake_cost_measure(uint64_t hz, uint64_t *cpu_ticks, uint64_t *late, uint32_t n)
{
	(void)hz;
	*cpu_ticks = 3000; /* a sleep uses 3 us of CPU */
	for (uint32_t i = 0; i < n; i++) {
		late[i] = 5000 + i * g_calib_step; /* and wakes 5 us late */
	}
	return 5000;
}

void
poll_timerslack_set(void)
{
}

bool
nvp_poll_waitpkg_supported(void)
{
	return false;
}

int
poll_irq_block(struct nvp_poll_waiter *w)
{
	(void)w;
	g_irq_blocks++;
	return 0;
}

int
poll_irq_add(struct nvp_poll_waiter *w, int fd)
{
	(void)w;
	(void)fd;
	return 0;
}

int
poll_epoll_create(void)
{
	return -1;
}

void
poll_epoll_close(int fd)
{
	(void)fd;
}

struct ut_test {
	const char *name;
	CU_TestFunc fn;
};

#define UT_TEST(fn)     \
	{               \
#fn, fn \
	}

static inline int
ut_run(const char *suite_name, const struct ut_test *tests, size_t count)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite(suite_name, NULL, NULL);
	for (size_t i = 0; suite != NULL && i < count; i++) {
		CU_add_test(suite, tests[i].name, tests[i].fn);
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

#endif /* POLL_UT_FAKE_H */
