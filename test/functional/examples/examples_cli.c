/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every example program does with its command line, as a user of the other tools
 * expects: -h and --help print the usage and exit 0; an unknown option, short or long, or
 * an unexpected argument exits 2 with the usage. bdev_passthru, which loads a configuration,
 * exits 2 for an error in it (malformed JSON placed by file, line and column; a bdev name
 * given twice), as nvp_perf and nvp bdev-list do. The programs are in build/examples, found
 * relative to this test's own binary (build/test/functional/).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "nvpoll/util.h"
#include "subproc.h"

static const char *const g_examples[] = { "hello_world", "hello_bdev", "bdev_passthru" };
static char g_out[65536];
static char g_dir[64];

static bool
has(const char *s)
{
	if (strstr(g_out, s) == NULL) {
		printf("\n    expected \"%s\" in the output of the last run", s);
		return false;
	}
	return true;
}

/* Run example @name with @args (shell words); output into g_out. \return its exit status. */
static int
run(const char *name, const char *args)
{
	char rel[64], prog[PATH_MAX];

	snprintf(rel, sizeof(rel), "../../examples/%s", name);
	if (fx_find_program(rel, prog, sizeof(prog)) != 0) {
		printf("\n    %s not found: build the examples first\n", prog);
		return -1;
	}
	return fx_run_capture(prog, args, g_out, sizeof(g_out));
}

static void
test_help(void)
{
	size_t i;

	for (i = 0; i < NVP_COUNTOF(g_examples); i++) {
		CU_ASSERT_EQUAL(run(g_examples[i], "--help"), 0);
		CU_ASSERT(has("sage: ")); /* "Usage: " or "usage: " */
		CU_ASSERT(has("--help"));
		CU_ASSERT_EQUAL(run(g_examples[i], "-h"), 0);
		CU_ASSERT(has("sage: "));
	}
}

static void
test_bad_options(void)
{
	size_t i;

	for (i = 0; i < NVP_COUNTOF(g_examples); i++) {
		CU_ASSERT_EQUAL(run(g_examples[i], "--bogus"), 2);
		CU_ASSERT(has("sage: "));
		CU_ASSERT_EQUAL(run(g_examples[i], "-Z"), 2);
		CU_ASSERT(has("sage: "));
		CU_ASSERT_EQUAL(run(g_examples[i], "extra"), 2);
	}
}

/* Write @text to @path (in g_dir). */
static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void
test_passthru_config_errors(void)
{
	char path[128], args[256], want[320];

	snprintf(path, sizeof(path), "%s/bad.json", g_dir);
	snprintf(args, sizeof(args), "-c %s", path);
	write_file(path, "{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"
			 "  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m0\", "
			 "\"num_blocks\": 4096,}}]}]}\n");
	CU_ASSERT_EQUAL(run("bdev_passthru", args), 2);
	snprintf(want, sizeof(want), "%s:2:79: malformed JSON: trailing ','", path);
	CU_ASSERT(has(want));
	write_file(path, "{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"
			 "  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m0\", "
			 "\"num_blocks\": 4096}},\n"
			 "  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"m0\", "
			 "\"num_blocks\": 4096}}]}]}\n");
	CU_ASSERT_EQUAL(run("bdev_passthru", args), 2);
	snprintf(want, sizeof(want), "%s:3:3: subsystems[0].config[1] (bdev_null_create)", path);
	CU_ASSERT(has(want));
	CU_ASSERT_EQUAL(run("bdev_passthru", "-c 'null:name=z,num_blcks=64'"), 2);
	CU_ASSERT(has("num_blcks: unknown parameter"));
	unlink(path);
	/* and a configuration that loads still runs */
	CU_ASSERT_EQUAL(run("bdev_passthru", "-c 'malloc:name=m0,num_blocks=4096' -n 8"), 0);
}

int
main(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
		{ "help", test_help },
		{ "bad_options", test_bad_options },
		{ "passthru_config_errors", test_passthru_config_errors },
	};
	const char *tmp = getenv("TMPDIR");
	CU_pSuite suite;
	unsigned int failures;
	size_t i;

	snprintf(g_dir, sizeof(g_dir), "%s/nvp_examples.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL || CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("examples_cli");
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
	rmdir(g_dir);
	return failures == 0 ? 0 : 1;
}
