/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/hello_world as a user runs it: default software controller, -r with a
 * transport ID, -h; exit 2 and a message for a bad flag or a bad transport ID, exit 1
 * and a message when the attach fails. The program is build/examples/hello_world, found
 * relative to this test's own binary (build/test/functional/).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "nvpoll/util.h"

static char g_prog[PATH_MAX];

static int
find_program(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		return -errno;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL) {
		return -EINVAL;
	}
	*slash = '\0';
	if (snprintf(g_prog, sizeof(g_prog), "%.*s/../../examples/hello_world",
		     (int)(sizeof(g_prog) - 64), self) >= (int)sizeof(g_prog)) {
		return -ENAMETOOLONG;
	}
	return access(g_prog, X_OK) == 0 ? 0 : -errno;
}

/* Run hello_world with @args (already shell-quoted); its output (stdout and stderr) goes
 * to @out. \return its exit status, or -1. */
static int
run(const char *args, char *out, size_t outlen)
{
	char cmd[PATH_MAX + 512];
	size_t used = 0;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 </dev/null", g_prog, args);
	p = popen(cmd, "r");
	if (p == NULL) {
		return -1;
	}
	while (used + 1 < outlen) {
		size_t n = fread(out + used, 1, outlen - 1 - used, p);

		if (n == 0) {
			break;
		}
		used += n;
	}
	out[used] = '\0';
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status)) {
		fprintf(stderr, "  hello_world %s: did not exit normally (%d)\n", args, status);
		return -1;
	}
	return WEXITSTATUS(status);
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
	suite = CU_add_suite("hello_world_cli", NULL, NULL);
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
