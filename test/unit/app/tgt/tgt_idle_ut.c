/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/tgt/tgt_idle.c, nvp_tgt's spin-or-wait policy, fed idle gaps as a
 * poll thread would measure them: a thread whose hosts' commands come within the spin
 * keeps spinning; one whose commands come later stops after a window of misses, and
 * starts again once gaps are short again; a mix with enough hits keeps spinning.
 */
#include <CUnit/Basic.h>

#include "tgt_idle.c" /* app/tgt, by -I: the mutation map sees the path */

#define SPIN 1000u /* ticks */

/* feed @n gaps of @gap ticks */
static void
feed(struct tgt_idle *p, uint32_t n, uint64_t gap)
{
	while (n-- > 0) {
		tgt_idle_end(p, gap);
	}
}

static void
test_short_gaps_spin(void)
{
	struct tgt_idle p;

	tgt_idle_init(&p, SPIN);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN); /* nothing seen yet */
	feed(&p, 100, SPIN / 10);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
	feed(&p, 100, SPIN); /* exactly the spin: caught */
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
}

static void
test_long_gaps_wait(void)
{
	struct tgt_idle p;
	uint32_t i;

	tgt_idle_init(&p, SPIN);
	/* misses until fewer than TGT_IDLE_MIN_HITS periods could still be hits */
	for (i = 0; i < TGT_IDLE_WINDOW - TGT_IDLE_MIN_HITS; i++) {
		CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
		tgt_idle_end(&p, SPIN + 1);
	}
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
	tgt_idle_end(&p, SPIN + 1);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), 0);
	feed(&p, 1000, 50 * SPIN);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), 0);
}

static void
test_back_to_spinning(void)
{
	struct tgt_idle p;
	uint32_t i;

	tgt_idle_init(&p, SPIN);
	feed(&p, 3 * TGT_IDLE_WINDOW, 10 * SPIN);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), 0);
	/* a sleeping thread still measures: short gaps come back, it spins again after
	 * TGT_IDLE_MIN_HITS of them, not before */
	for (i = 0; i + 1 < TGT_IDLE_MIN_HITS; i++) {
		tgt_idle_end(&p, SPIN / 2);
		CU_ASSERT_EQUAL(tgt_idle_budget(&p), 0);
	}
	tgt_idle_end(&p, SPIN / 2);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
	/* and the old misses leave the window: they are forgotten */
	feed(&p, TGT_IDLE_WINDOW, SPIN / 2);
	feed(&p, TGT_IDLE_WINDOW - TGT_IDLE_MIN_HITS, 10 * SPIN);
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
}

static void
test_mixed(void)
{
	struct tgt_idle p;
	uint32_t i;

	/* one hit in three: more than TGT_IDLE_MIN_HITS in any window, spinning pays */
	tgt_idle_init(&p, SPIN);
	for (i = 0; i < 200; i++) {
		tgt_idle_end(&p, i % 3 == 0 ? SPIN / 4 : 3 * SPIN);
		CU_ASSERT_EQUAL(tgt_idle_budget(&p), SPIN);
	}
	/* one in eight: at most 2 per window, it waits */
	for (i = 0; i < 200; i++) {
		tgt_idle_end(&p, i % 8 == 0 ? SPIN / 4 : 3 * SPIN);
	}
	CU_ASSERT_EQUAL(tgt_idle_budget(&p), 0);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("tgt_idle", NULL, NULL);
	CU_add_test(suite, "short gaps: spin", test_short_gaps_spin);
	CU_add_test(suite, "long gaps: wait at once", test_long_gaps_wait);
	CU_add_test(suite, "back to spinning", test_back_to_spinning);
	CU_add_test(suite, "mixed gaps", test_mixed);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
