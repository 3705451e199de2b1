/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/hello_bdev as a user runs it: default software controller, one named in -r
 * (its bdev named after it), a RAM disk, -h; exit 2 and a message for a bad flag or
 * transport ID, exit 1 when the attach fails.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "subproc.h"

static char g_prog[PATH_MAX];
static char g_out[65536];

static int
run(const char *args)
{
	return fx_run_capture(g_prog, args, g_out, sizeof(g_out));
}

static void
test_runs(void)
{
	CU_ASSERT_EQUAL(run(""), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "read back from emu0n1: Hello world!\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "write  1 I/O, 512 bytes"));
	CU_ASSERT_EQUAL(run("-r 'trtype:emu name:emu0 lba:4096 size:8M'"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "read   1 I/O, 4096 bytes"));
	/* the bdev is named after the software controller the ID names */
	CU_ASSERT_EQUAL(run("-r 'trtype:emu name:emuX'"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "read back from emuXn1: Hello world!\n"));
	CU_ASSERT_EQUAL(run("--malloc"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "read back from malloc0: Hello world!\n"));
	CU_ASSERT_EQUAL(run("-h"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "usage"));
}

static void
test_errors(void)
{
	CU_ASSERT_EQUAL(run("-x"), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "usage"));
	CU_ASSERT_EQUAL(run("extra"), 2);
	CU_ASSERT_EQUAL(run("-r 'trtype:bogus'"), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "trtype:bogus"));
	/* a well-formed ID of a controller that is not there */
	CU_ASSERT_EQUAL(run("-r 'trtype:PCIe traddr:0000:ff:1f.7'"), 1);
	CU_ASSERT(strlen(g_out) > 0);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (fx_find_program("../../examples/hello_bdev", g_prog, sizeof(g_prog)) != 0) {
		fprintf(stderr, "hello_bdev_cli: build/examples/hello_bdev not found: run make\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("hello_bdev_cli");
	if (suite == NULL || CU_add_test(suite, "runs", test_runs) == NULL ||
	    CU_add_test(suite, "errors", test_errors) == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
