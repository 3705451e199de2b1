/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/hello_world as a user runs it: default software controller, -r with a
 * transport ID, -h; exit 2 and a message for a bad flag or a bad transport ID, exit 1
 * and a message when the attach fails. The program is build/examples/hello_world, found
 * relative to this test's own binary (build/test/functional/).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "nvpoll/util.h"
#include "subproc.h"

static char g_prog[PATH_MAX];

static int
find_program(void)
{
	return fx_find_program("../../examples/hello_world", g_prog, sizeof(g_prog));
}

/* Run hello_world with @args (already shell-quoted); stdout and stderr go to @out. */
static int
run(const char *args, char *out, size_t outlen)
{
	return fx_run_capture(g_prog, args, out, outlen);
}

static char g_out[65536];

static void
test_default(void)
{
	CU_ASSERT_EQUAL(run("", g_out, sizeof(g_out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Hello world!\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Namespace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Model"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Serial"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Firmware"));
}

static void
test_trid(void)
{
	CU_ASSERT_EQUAL(
		run("-r 'trtype:emu name:hw2 nn:2 lba:512/4096 size:8M'", g_out, sizeof(g_out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Hello world!\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "4096"));
	CU_ASSERT_EQUAL(run("-r 'trtype:emu name:hw3 lba:4096'", g_out, sizeof(g_out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Hello world!\n"));
}

static void
test_help(void)
{
	CU_ASSERT_EQUAL(run("-h", g_out, sizeof(g_out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "Usage"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "-r"));
}

static void
test_usage_errors(void)
{
	CU_ASSERT_EQUAL(run("-x", g_out, sizeof(g_out)), 2);
	CU_ASSERT(strlen(g_out) > 0);
	CU_ASSERT_EQUAL(run("-r", g_out, sizeof(g_out)), 2);
	CU_ASSERT_EQUAL(run("extra", g_out, sizeof(g_out)), 2);
	CU_ASSERT_EQUAL(run("-r 'trtype:bogus'", g_out, sizeof(g_out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "trtype:bogus"));
	CU_ASSERT_EQUAL(run("-r 'trtype:PCIe traddr:not-an-address'", g_out, sizeof(g_out)), 2);
}

static void
test_attach_failure(void)
{
	CU_ASSERT_EQUAL(run("-r 'trtype:PCIe traddr:10fff:00:1f.7'", g_out, sizeof(g_out)), 1);
	CU_ASSERT(strlen(g_out) > 0);
	CU_ASSERT_EQUAL(run("-r 'trtype:emu name:hw4 nn:0'", g_out, sizeof(g_out)), 1);
	CU_ASSERT(strlen(g_out) > 0);
	CU_ASSERT_PTR_NULL(strstr(g_out, "Hello world test passed"));
}

/*
 * A completion that never arrives: hello_world waits for the driver's 30 s request
 * timeout, but says so within a few seconds instead of sitting silent (killed at 6 s).
 */
static void
test_lost_completion_not_silent(void)
{
	char *const argv[] = { "hello_world", "-r", "trtype:emu name:hw5 fault:drop_cpl", NULL };

	CU_ASSERT_EQUAL(fx_run_signal(g_prog, argv, 6, SIGKILL, g_out, sizeof(g_out)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "write: no completion after"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_out, "the driver aborts the request"));
}

int
main(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
		{ "default", test_default },
		{ "trid", test_trid },
		{ "help", test_help },
		{ "usage_errors", test_usage_errors },
		{ "attach_failure", test_attach_failure },
		{ "lost_completion_not_silent", test_lost_completion_not_silent },
	};
	CU_pSuite suite;
	unsigned int failures;
	size_t i;

	if (find_program() != 0) {
		fprintf(stderr, "hello_world_cli: %s not found: build the examples first\n",
			g_prog);
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("hello_world_cli");
	for (i = 0; suite != NULL && i < NVP_COUNTOF(tests); i++) {
		if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL) {
			suite = NULL;
		}
	}
	if (suite == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
