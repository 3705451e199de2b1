/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `nvp bdev-list` as a user runs it: the bdevs of a JSON file and of the one-line form,
 * in a table and in JSON; a bad command line, and a configuration that is wrong (malformed
 * JSON, a bdev name given twice) or cannot be read, exit 2 with the library's message naming
 * the parameter and its place.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "subproc.h"

static char g_prog[PATH_MAX];
static char g_out[65536];
static char g_dir[64];

static int
run(const char *args)
{
	return fx_run_capture(g_prog, args, g_out, sizeof(g_out));
}

static bool
has(const char *s)
{
	if (strstr(g_out, s) == NULL) {
		printf("\n    expected \"%s\" in the output of the last run", s);
		return false;
	}
	return true;
}

static void
test_line_table(void)
{
	CU_ASSERT_EQUAL(
		run("bdev-list -c 'nvme:name=emu7,trtype=emu,nn=2,lba=512/4096,size=8M;"
		    "malloc:name=m0,num_blocks=2048,block_size=4096;null:name=z,num_blocks=9'"),
		0);
	CU_ASSERT(has("Name"));
	CU_ASSERT(has("emu7n1"));
	CU_ASSERT(has("emu7n2"));
	CU_ASSERT(has("m0               malloc         4096           2048"));
	CU_ASSERT(has("z                null            512              9"));
}

static void
test_file_json(void)
{
	char path[128], args[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/c.json", g_dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":[{\"method\":"
	      "\"bdev_null_create\",\"params\":{\"name\":\"n9\",\"num_blocks\":77}}]}]}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof(args), "bdev-list --json-config %s -o json", path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(has("\"name\":\"n9\""));
	CU_ASSERT(has("\"num_blocks\":77"));
	CU_ASSERT(has("\"module\":\"null\""));
	unlink(path);
}

static void
test_bad(void)
{
	CU_ASSERT_EQUAL(run("bdev-list -c 'null:name=n0,num_blocks=1;null:name=n1,size=3'"), 2);
	CU_ASSERT(has("item 2 (null).params.size: unknown parameter"));
	CU_ASSERT(has("nothing of it is left"));
	CU_ASSERT_EQUAL(run("bdev-list --json-config /nonexistent/x.json"), 2);
	CU_ASSERT(has("x.json: cannot open the configuration"));
	CU_ASSERT_EQUAL(run("bdev-list --json-config ."), 2);
	CU_ASSERT(has("cannot read the configuration: Is a directory"));
	CU_ASSERT_EQUAL(run("bdev-list -c 'nvme:name=e0,trtype=emu,ctrlr_loss_timeout_sec=-1,"
			    "reconnect_delay_sec=1'"),
			0);
	CU_ASSERT_EQUAL(run("bdev-list -c 'nvme:name=e0,trtype=EMU,nn=2'"), 0);
	CU_ASSERT(has("e0n2"));
	CU_ASSERT_EQUAL(run("bdev-list"), 2);
	CU_ASSERT(has("a configuration is required"));
	CU_ASSERT_EQUAL(run("bdev-list -c a -c b"), 2);
	CU_ASSERT_EQUAL(run("bdev-list -c x -o yaml"), 2);
	CU_ASSERT_EQUAL(run("bdev-list -c x extra"), 2);
	CU_ASSERT_EQUAL(run("bdev-list -h"), 0);
	CU_ASSERT(has("usage: nvp bdev-list"));
	/* a name given twice is the configuration's error, not a failure of the run */
	CU_ASSERT_EQUAL(run("bdev-list -c 'null:name=n0,num_blocks=1;malloc:name=n0,num_blocks=8'"),
			2);
	CU_ASSERT(has("item 2 (malloc): bdev_malloc_create failed: File exists"));
}

/* JSON that is not RFC 8259's (which json-c alone would take) exits 2, placed by file, line
 * and column with what was expected there; a bdev name given twice in a file exits 2 too. */
static void
test_bad_json_file(void)
{
	char path[128], args[256], want[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.json", g_dir);
	snprintf(args, sizeof(args), "bdev-list --json-config %s", path);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{'subsystems': []}\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(run(args), 2);
	snprintf(want, sizeof(want),
		 "%s:1:2: malformed JSON: a single quote (JSON strings take double quotes): "
		 "expected a \"key\" or '}'",
		 path);
	CU_ASSERT(has(want));
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"
	      "  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"n0\", "
	      "\"num_blocks\": 8}},\n"
	      "  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"n0\", "
	      "\"num_blocks\": 8}}]}]}\n",
	      f);
	fclose(f);
	CU_ASSERT_EQUAL(run(args), 2);
	snprintf(want, sizeof(want), "%s:3:3: subsystems[0].config[1] (bdev_null_create)", path);
	CU_ASSERT(has(want));
	unlink(path);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	unsigned int failures;
	CU_pSuite suite;

	if (fx_find_program("../../bin/nvp", g_prog, sizeof(g_prog)) != 0) {
		printf("SKIP: build/bin/nvp not built\n");
		return 77;
	}
	snprintf(g_dir, sizeof(g_dir), "%s/nvp_bdevlist.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL || CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("bdev_list_cli");
	if (suite == NULL || CU_add_test(suite, "line_table", test_line_table) == NULL ||
	    CU_add_test(suite, "file_json", test_file_json) == NULL ||
	    CU_add_test(suite, "bad", test_bad) == NULL ||
	    CU_add_test(suite, "bad_json_file", test_bad_json_file) == NULL) {
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
