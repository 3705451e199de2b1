/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main() every util/env unit test program shares: register a table of tests as one
 * CUnit suite, run it verbosely, exit 0 only if every assertion held.
 */
#ifndef NVP_UT_MAIN_H
#define NVP_UT_MAIN_H

#include <stdio.h>

#include <CUnit/Basic.h>

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
	size_t i;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return CU_get_error();
	}
	suite = CU_add_suite(suite_name, NULL, NULL);
	if (suite == NULL) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	for (i = 0; i < count; i++) {
		if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL) {
			CU_cleanup_registry();
			return CU_get_error();
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

#endif /* NVP_UT_MAIN_H */
