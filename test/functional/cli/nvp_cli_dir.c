/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp dir-receive and nvp waf against software controllers: the JSON they print is
 * what the controller was configured with (streams, FTL geometry), and the exit status
 * says when the controller has no directives (1), no FTL page (1), or the command line
 * is wrong (2). nvp fdp likewise: the FDP logs, feature and handle status of a software
 * controller made with fdp=N, and its refusals.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fixture.h"
#include "subproc.h"

static char g_prog[PATH_MAX];
static char g_out[65536];

/* Run nvp with @args; \return its exit status. Output (stdout + stderr) in g_out. */
static int
nvp(const char *args)
{
	return fx_run_capture(g_prog, args, g_out, sizeof(g_out));
}

/* Run and parse the JSON object of the output (asserts exit 0). */
static struct json_object *
nvp_json(const char *args)
{
	const char *start;

	CU_ASSERT_EQUAL_FATAL(nvp(args), 0);
	start = strchr(g_out, '{');
	CU_ASSERT_PTR_NOT_NULL_FATAL(start);
	return json_tokener_parse(start);
}

static int64_t
jint(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  no '%s' in the JSON\n", key);
		return -1;
	}
	return json_object_get_int64(v);
}

static bool
jbool(struct json_object *o, const char *obj, const char *key)
{
	struct json_object *sub = NULL, *v = NULL;

	return o != NULL && json_object_object_get_ex(o, obj, &sub) &&
	       json_object_object_get_ex(sub, key, &v) && json_object_get_boolean(v);
}

static void
test_dir_receive(void)
{
	struct json_object *o;

	o = nvp_json("dir-receive -o json emu:streams=4");
	CU_ASSERT_EQUAL(jint(o, "type"), 0);
	CU_ASSERT_EQUAL(jint(o, "operation"), 1);
	CU_ASSERT_EQUAL(jint(o, "nsid"), 1);
	CU_ASSERT(jbool(o, "supported", "Identify"));
	CU_ASSERT(jbool(o, "supported", "Stream"));
	CU_ASSERT(!jbool(o, "supported", "Data Placement"));
	CU_ASSERT(jbool(o, "enabled", "Identify"));
	CU_ASSERT(!jbool(o, "enabled", "Stream"));
	json_object_put(o);

	o = nvp_json("dir-receive -D 1 -O 1 -o json emu:streams=8,lba=4096,ftl_ppb=32");
	CU_ASSERT_EQUAL(jint(o, "msl"), 8);
	CU_ASSERT_EQUAL(jint(o, "nssa"), 8);
	CU_ASSERT_EQUAL(jint(o, "sws"), 1);
	CU_ASSERT_EQUAL(jint(o, "sgs"), 32);
	CU_ASSERT_EQUAL(jint(o, "nsa"), 0);
	json_object_put(o);

	/* normal output names the fields as nvme-cli does */
	CU_ASSERT_EQUAL(nvp("dir-receive -D 1 -O 1 emu:streams=2"), 0);
	CU_ASSERT(strstr(g_out, "Max Streams Limit") != NULL);
	CU_ASSERT(strstr(g_out, "(MSL): 2") != NULL);

	/* the device refuses: streams not enabled; no directives at all */
	CU_ASSERT_EQUAL(nvp("dir-receive -D 1 -O 3 -r 2 emu:streams=2"), 1);
	CU_ASSERT(strstr(g_out, "Invalid Field") != NULL);
	CU_ASSERT_EQUAL(nvp("dir-receive emu:"), 1);
	CU_ASSERT(strstr(g_out, "Invalid Command Opcode") != NULL);
	/* usage errors */
	CU_ASSERT_EQUAL(nvp("dir-receive -D 2 emu:streams=2"), 2);
	CU_ASSERT_EQUAL(nvp("dir-receive -D 0 -O 3 emu:streams=2"), 2);
	CU_ASSERT_EQUAL(nvp("dir-receive -O 9 emu:streams=2"), 2);
	CU_ASSERT_EQUAL(nvp("dir-receive"), 2);
}

static void
test_waf(void)
{
	struct json_object *o;

	o = nvp_json("waf -o json emu:size=8M,ftl=1,ftl_op=28,ftl_ppb=32,streams=3,ftl_gc=cb");
	CU_ASSERT_EQUAL(jint(o, "namespaces"), 1);
	CU_ASSERT_EQUAL(jint(o, "page_size"), 4096);
	CU_ASSERT_EQUAL(jint(o, "pages_per_block"), 32);
	CU_ASSERT_EQUAL(jint(o, "op_pct"), 28);
	CU_ASSERT_EQUAL(jint(o, "streams"), 3);
	CU_ASSERT_EQUAL(jint(o, "logical_pages"), 2048);
	CU_ASSERT_EQUAL(jint(o, "blocks"), (2048 + 574 + 31) / 32);
	CU_ASSERT_EQUAL(jint(o, "host_pages"), 0);
	CU_ASSERT_EQUAL(jint(o, "nand_pages"), 0);
	json_object_put(o);

	o = nvp_json("waf -n 2 -o json emu:nn=2,size=4M,ftl=1,ftl_op=50,ftl_ppb=16");
	CU_ASSERT_EQUAL(jint(o, "namespaces"), 1);
	CU_ASSERT_EQUAL(jint(o, "logical_pages"), 1024);
	json_object_put(o);

	CU_ASSERT_EQUAL(nvp("waf emu:ftl=1"), 0);
	CU_ASSERT(strstr(g_out, "write amplification") != NULL);
	CU_ASSERT_EQUAL(nvp("waf emu:"), 1); /* FTL model off */
	CU_ASSERT(strstr(g_out, "ftl=1") != NULL);
	CU_ASSERT_EQUAL(nvp("waf -n 3 emu:ftl=1"), 1);
	CU_ASSERT_EQUAL(nvp("waf -o binary emu:ftl=1"), 2);
	CU_ASSERT_EQUAL(nvp("waf emu:ftl=1,ftl_op=1,size=1M"), 1); /* geometry refused */
}

#define FDP_EMU "emu:fdp=4,ftl=1,ftl_ppb=16,ftl_op=100,size=1M,lba=4096"

/* The RUAMW of placement identifier @i in an "fdp status -o json" object. */
static int64_t
ruamw(struct json_object *o, size_t i)
{
	struct json_object *arr = NULL;

	if (o == NULL || !json_object_object_get_ex(o, "ruhss", &arr) ||
	    json_object_array_length(arr) <= i) {
		return -1;
	}
	return jint(json_object_array_get_idx(arr, i), "ruamw");
}

static void
test_fdp(void)
{
	struct json_object *o;

	o = nvp_json("fdp configs -o json " FDP_EMU);
	CU_ASSERT_EQUAL(jint(o, "endgid"), 1);
	CU_ASSERT_EQUAL(jint(o, "numfdpc"), 1);
	CU_ASSERT(strstr(g_out, "\"nruh\":4") != NULL);
	CU_ASSERT(strstr(g_out, "\"runs\":65536") != NULL);
	json_object_put(o);
	o = nvp_json("fdp-status -o json " FDP_EMU);
	CU_ASSERT_EQUAL(jint(o, "nruhsd"), 4);
	CU_ASSERT_EQUAL(ruamw(o, 3), 16);
	json_object_put(o);
	o = nvp_json("fdp usage -o json " FDP_EMU);
	CU_ASSERT_EQUAL(jint(o, "nruh"), 4);
	json_object_put(o);
	o = nvp_json("fdp stats -o json " FDP_EMU);
	CU_ASSERT_EQUAL(jint(o, "hbmw"), 0);
	CU_ASSERT_EQUAL(jint(o, "mbe"), 0);
	json_object_put(o);
	/* chained on one controller: disable, read back, enable again */
	CU_ASSERT_EQUAL(nvp("fdp feature -d " FDP_EMU " + fdp feature " FDP_EMU), 0);
	CU_ASSERT(strstr(g_out, "FDP enabled (FDPE)                  : 0") != NULL);
	CU_ASSERT_EQUAL(nvp("fdp feature -E 1 " FDP_EMU), 1); /* no configuration 1 */
	CU_ASSERT_EQUAL(nvp("fdp update -p 1,2 " FDP_EMU), 0);
	CU_ASSERT_EQUAL(nvp("fdp update -p 7 " FDP_EMU), 1);
	CU_ASSERT_EQUAL(nvp("fdp events " FDP_EMU), 0);
	CU_ASSERT(strstr(g_out, "host events") != NULL);
	/* no FDP: refused before any command; command line errors: 2 */
	CU_ASSERT_EQUAL(nvp("fdp configs emu:"), 1);
	CU_ASSERT(strstr(g_out, "fdp=N") != NULL);
	CU_ASSERT_EQUAL(nvp("fdp update " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp update -p 1,,2 " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp update -p 65536 " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp feature -d -E 0 " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp stats -o binary " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp nothing " FDP_EMU), 2);
	CU_ASSERT_EQUAL(nvp("fdp"), 2);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "dir_receive", test_dir_receive },
		{ "waf", test_waf },
		{ "fdp", test_fdp },
	};

	if (fx_find_program("../../bin/nvp", g_prog, sizeof(g_prog)) != 0) {
		fprintf(stderr, "nvp_cli_dir: %s not found: build the apps first (make)\n", g_prog);
		return 1;
	}
	return fx_main(argc, argv, "nvp_cli_dir", tests, NVP_COUNTOF(tests));
}
