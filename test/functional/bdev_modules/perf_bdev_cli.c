/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's bdev mode as a user runs it: malloc, null, nvme (software controller) and
 * uring (a temporary file) bdevs from the one-line form and from a JSON file, the usual
 * report with the CPU time per I/O, bdevs splitting every request at the default depth
 * without an error, and the raw mode still there; a bad combination of options, an
 * unknown bdev or a bad configuration (malformed JSON, a bdev name given twice) exits 2
 * with a message.
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

#define MCFG " --bdev-config 'malloc:name=m0,num_blocks=4096'"

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

static int
count(const char *needle)
{
	const char *p;
	int n = 0;

	for (p = strstr(g_out, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

/* The JSON file @path's "status" and "error" hold @status and @error. */
static void
check_json(const char *path, const char *status, const char *error)
{
	char text[8192] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	if (strstr(text, status) == NULL || strstr(text, error) == NULL) {
		printf("\n    expected %s and %s in:\n%s", status, error, text);
	}
	CU_ASSERT(strstr(text, status) != NULL);
	CU_ASSERT(strstr(text, error) != NULL);
}

/* A usage error in bdev mode (found once the configuration is loaded) still writes the
 * JSON, with the layer's message as the reason. */
static void
test_errors_in_json(void)
{
	char args[512], path[128];

	snprintf(path, sizeof(path), "%s/err.json", g_dir);
	snprintf(args, sizeof(args), "-t 1 --no-huge --sched bogus -b m0" MCFG " --json %s", path);
	CU_ASSERT_EQUAL(run(args), 2);
	check_json(path, "\"usage_error\"", "no scheduler 'bogus'");
	snprintf(args, sizeof(args),
		 "-t 1 --no-huge -b z --bdev-config 'null:name=z,num_blcks=64' --json %s", path);
	CU_ASSERT_EQUAL(run(args), 2);
	check_json(path, "\"usage_error\"", "num_blcks: unknown parameter");
	snprintf(args, sizeof(args), "-t 1 --no-huge -b nope" MCFG " --json %s", path);
	CU_ASSERT_EQUAL(run(args), 2);
	check_json(path, "\"usage_error\"", "no bdev 'nope'");
	unlink(path);
}

static void
test_line_modules(void)
{
	char args[512];
	FILE *f;

	CU_ASSERT_EQUAL(run("-t 1 -q 4 --no-huge -b m0 -b z0 --bdev-config "
			    "'malloc:name=m0,num_blocks=4096;null:name=z0,num_blocks=4096'"),
			0);
	CU_ASSERT(has("BDEV m0 (malloc) from core  0"));
	CU_ASSERT(has("BDEV z0 (null) from core  0"));
	CU_ASSERT(has("us per I/O"));
	CU_ASSERT_EQUAL(run("-t 1 -q 8 -w randrw --no-huge -b emu0n1 --bdev-config "
			    "'nvme:name=emu0,trtype=emu,size=8M'"),
			0);
	CU_ASSERT(has("BDEV emu0n1 (nvme)"));
	/* the descriptor's access for this run, not a property of the bdev */
	CU_ASSERT(has("BDEV emu0n1 (nvme): opened read-write for this run"));

	snprintf(args, sizeof(args), "%s/disk", g_dir);
	f = fopen(args, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(ftruncate(fileno(f), 4 << 20), 0);
	fclose(f);
	snprintf(args, sizeof(args),
		 "-t 1 -q 4 -w randwrite --no-huge --bdev-config 'uring:name=u0,filename=%s/disk'",
		 g_dir);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(has("BDEV u0 (uring)"));
	snprintf(args, sizeof(args), "%s/disk", g_dir);
	unlink(args);
}

static void
test_json_and_raw(void)
{
	char path[128], args[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/p.json", g_dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":[{\"method\":"
	      "\"bdev_null_create\",\"params\":{\"name\":\"n7\",\"num_blocks\":1024,"
	      "\"block_size\":4096}}]}]}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof(args), "-t 1 -q 2 --no-huge -b n7 --json-config %s", path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(has("BDEV n7 (null)"));
	unlink(path);
	CU_ASSERT_EQUAL(run("-t 1 -q 2 --no-huge"), 0);
	CU_ASSERT(has("EMU (emu0) NSID 1"));
	CU_ASSERT(has("us per I/O"));
}

/*
 * Bdevs that split each 128 KiB request (4 KiB blocks, a max transfer of 32 KiB, 16 KiB on
 * the software controller): at the default depth, 32, each request holds up to 5 bdev_ios
 * at once. The channel's pool was twice the depth: the refused submissions were counted as
 * I/O errors (exit 1) and their tasks dropped. The pool is sized for them now, and a
 * refusal would wait for a bdev_io, not fail.
 */
static void
test_split(void)
{
	char path[128], args[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/split.json", g_dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":["
	      "{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":\"m8\","
	      "\"num_blocks\":4096,\"block_size\":4096,\"max_xfer_blocks\":8}},"
	      "{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":\"e8\","
	      "\"trtype\":\"emu\",\"size\":\"16M\",\"lba\":4096,\"mdts\":2}}]}]}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof(args),
		 "-t 1 -o 128k -w randrw --no-huge -b m8 -b e8n1 --json-config %s", path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(has("BDEV m8 (malloc) from core  0"));
	CU_ASSERT(has("BDEV e8n1 (nvme) from core  0"));
	CU_ASSERT(strstr(g_out, "I/O errors") == NULL);
	unlink(path);
}

static void
test_bad(void)
{
	CU_ASSERT_EQUAL(run("-t 1 -b m0"), 2);
	CU_ASSERT(has("-b needs the configuration"));
	CU_ASSERT_EQUAL(run("-t 1 -b m0 --bdev-config 'malloc:name=m0,num_blocks=64' -r "
			    "'trtype:emu name:x'"),
			2);
	CU_ASSERT(has("exclude each other"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b nope --bdev-config 'null:name=z,num_blocks=64'"), 2);
	CU_ASSERT(has("nope"));
	CU_ASSERT(has("z")); /* the bdevs that exist */
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b z --bdev-config 'null:name=z,num_blcks=64'"), 2);
	CU_ASSERT(has("num_blcks: unknown parameter"));
	CU_ASSERT_EQUAL(
		run("-t 1 --no-huge -o 1000 -b z --bdev-config 'null:name=z,num_blocks=64'"), 2);
	/* a name given twice is the configuration's error too, not a failed run */
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b z --bdev-config "
			    "'null:name=z,num_blocks=64;malloc:name=z,num_blocks=64'"),
			2);
	CU_ASSERT(has("item 2 (malloc): bdev_malloc_create failed: File exists"));
}

/* A JSON file that is not RFC 8259's exits 2 with its file, line and column; so does a bdev
 * name it gives twice. */
static void
test_bad_json_file(void)
{
	char path[128], args[256], want[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.json", g_dir);
	snprintf(args, sizeof(args), "-t 1 --no-huge -b m0 --json-config %s", path);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"
	      "  {\"method\": \"bdev_malloc_create\",\n"
	      "   \"params\": {\"name\": \"m0\", \"num_blocks\": 65536,}}]}]}\n",
	      f);
	fclose(f);
	CU_ASSERT_EQUAL(run(args), 2);
	snprintf(want, sizeof(want), "%s:3:48: malformed JSON: trailing ','", path);
	CU_ASSERT(has(want));
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"
	      "  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"m0\", \"num_blocks\": 8}},\n"
	      "  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m0\", "
	      "\"num_blocks\": 8}}]}]}\n",
	      f);
	fclose(f);
	CU_ASSERT_EQUAL(run(args), 2);
	snprintf(want, sizeof(want), "%s:3:3: subsystems[0].config[1] (bdev_malloc_create)", path);
	CU_ASSERT(has(want));
	unlink(path);
}

/* The "% of bytes" the report gives tenant @t, or -1. */
static double
share_of(int t)
{
	char key[32];
	const char *p;
	double pct;

	snprintf(key, sizeof(key), "tenant %2d: weight", t);
	p = strstr(g_out, key);
	p = p != NULL ? strstr(p, "I/Os, ") : NULL;
	if (p == NULL || sscanf(p, "I/Os, %lf%%", &pct) != 1) {
		return -1;
	}
	return pct;
}

/* --sched, --wbt, --tenant, --write-hint, --write-class and the state they report. */
static void
test_stages(void)
{
	CU_ASSERT_EQUAL(run("-t 1 -q 8 -w randrw --no-huge --sched kyber:read_lat_us=1000 "
			    "--wbt 2000 --write-class background --write-hint short -b m0" MCFG),
			0);
	CU_ASSERT(has("m0: scheduler kyber, admission wbt"));
	CU_ASSERT(has("depths read/write/discard/other"));
	CU_ASSERT(has("wbt: target 2000 us"));
	CU_ASSERT(has("writes throttled"));
	CU_ASSERT(has("(bdev mode)"));
	/* one bdev, two jobs as two weighted tenants, contending for a depth of 8 */
	CU_ASSERT_EQUAL(run("-t 1 -q 16 --no-huge --sched fair:depth=8 -b m0 --tenant 1:1 -b m0 "
			    "--tenant 2:4" MCFG),
			0);
	CU_ASSERT(has("scheduler fair"));
	CU_ASSERT(has("tenant  1: weight    1"));
	CU_ASSERT(has("tenant  2: weight    4"));
	/* two tenants on one bdev: two rows, told apart */
	CU_ASSERT(has("BDEV m0 (malloc) tenant 1 from core  0"));
	CU_ASSERT(has("BDEV m0 (malloc) tenant 2 from core  0"));
	CU_ASSERT(share_of(1) > 0);
	CU_ASSERT(share_of(2) > 2 * share_of(1)); /* 4:1 asked; not a timing bound */
	CU_ASSERT_EQUAL(run("-t 1 -q 4 --no-huge --wbt off -b m0" MCFG), 0);
	CU_ASSERT(has("admission none"));
}

/* The JSON file @path, read whole. */
static const char *
read_text(const char *path)
{
	static char text[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		return "";
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The number after "@key": in @text past @from, or -1. */
static double
json_num_after(const char *text, const char *from, const char *key)
{
	const char *p = strstr(text, from);
	double v;

	p = p != NULL ? strstr(p, key) : NULL;
	if (p == NULL || sscanf(p + strlen(key), " : %lf", &v) != 1) {
		return -1;
	}
	return v;
}

/*
 * The writeback benchmark's two jobs in one run: a QD1 random reader beside a sequential
 * background writer on one bdev, under the fair scheduler and the throttle. A row each,
 * named after its job, with its own pattern's reads and writes; each job's descriptor
 * opened as it needs; the JSON records the bdev, its configuration, scheduler and
 * throttle, and each job's settings.
 */
static void
test_jobs(void)
{
	char args[512], path[128];
	const char *j;

	snprintf(path, sizeof(path), "%s/jobs.json", g_dir);
	snprintf(args, sizeof(args),
		 "-t 1 --no-huge --sched fair --wbt 2000" MCFG
		 " --job name=reader,b=m0,w=randread,q=1,o=4k"
		 " --job name=writer,b=m0,w=write,q=8,o=64k,class=background,hint=short"
		 " --json %s",
		 path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	CU_ASSERT(has("reader: BDEV m0 (malloc) from core  0"));
	CU_ASSERT(has("writer: BDEV m0 (malloc) from core  0"));
	CU_ASSERT(has("reader: BDEV m0 (malloc): opened read-only for this run"));
	CU_ASSERT(has("writer: BDEV m0 (malloc): opened read-write for this run"));
	j = read_text(path);
	CU_ASSERT(strstr(j, "\"bdevs\":[\n      \"m0\"\n    ]") != NULL);
	CU_ASSERT(strstr(j, "\"bdev_config\":\"malloc:name=m0,num_blocks=4096\"") != NULL);
	CU_ASSERT(strstr(j, "\"sched\":\"fair\"") != NULL);
	CU_ASSERT(strstr(j, "\"wbt_lat_us\":2000") != NULL);
	CU_ASSERT(strstr(j, "\"write_class\":\"background\"") != NULL);
	CU_ASSERT(strstr(j, "\"write_hint\":\"short\"") != NULL);
	/* rows in job order: the reader only reads, the writer only writes */
	CU_ASSERT(json_num_after(j, "\"job\":\"reader\"", "\"reads\"") > 0);
	CU_ASSERT(json_num_after(j, "\"job\":\"reader\"", "\"writes\"") == 0);
	CU_ASSERT(json_num_after(j, "\"job\":\"writer\"", "\"reads\"") == 0);
	CU_ASSERT(json_num_after(j, "\"job\":\"writer\"", "\"writes\"") > 0);
	unlink(path);
}

/* Two tenants weighted 1:4 doing randrw on one bdev, as two jobs: the scheduler's shares
 * follow the weights (not a timing bound: 4:1 asked, more than 2:1 checked). */
static void
test_jobs_tenants(void)
{
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --sched fair:depth=8" MCFG
			    " --job name=t1,b=m0,w=randrw,q=16,tenant=1:1"
			    " --job name=t4,b=m0,w=randrw,q=16,tenant=2,weight=4"),
			0);
	CU_ASSERT(has("t1: BDEV m0 (malloc) from core  0"));
	CU_ASSERT(has("t4: BDEV m0 (malloc) from core  0"));
	CU_ASSERT(has("tenant  1: weight    1"));
	CU_ASSERT(has("tenant  2: weight    4"));
	CU_ASSERT(share_of(1) > 0);
	CU_ASSERT(share_of(2) > 2 * share_of(1));
}

static void
test_jobs_bad(void)
{
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job b=nope"), 2);
	CU_ASSERT(has("no bdev 'nope'"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job r=emu0"), 2);
	CU_ASSERT(has("r= and ns= are for the raw mode"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job class=urgent"), 2);
	CU_ASSERT(has("class=urgent"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job hint=forever"), 2);
	CU_ASSERT(has("hint=forever"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job tenant=99"), 2);
	CU_ASSERT(has("tenant=99"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job weight=3"), 2);
	CU_ASSERT(has("weight=3 needs tenant="));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " -b m0 --job q=1"), 2);
	CU_ASSERT(has("-b and --job"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge" MCFG " --job o=1000"), 2);
	CU_ASSERT(has("o=1000"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --bdev-config 'malloc:name=m0,num_blocks=64,"
			    "block_size=4096' --job name=big,o=1m"),
			2);
	CU_ASSERT(has("--job big: o=1048576: larger than BDEV m0 (malloc)"));
}

static void
test_stages_bad(void)
{
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --sched bogus -b m0" MCFG), 2);
	CU_ASSERT(has("bogus"));
	/* what there is, not the errno's text ("No such file or directory") */
	CU_ASSERT(has("registered: "));
	CU_ASSERT(strstr(g_out, "No such file") == NULL);
	CU_ASSERT(strstr(g_out, "the run failed") == NULL);
	CU_ASSERT(count("--help") == 1);
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --sched kyber:nope=1 -b m0" MCFG), 2);
	CU_ASSERT(has("kyber:nope=1"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --wbt 2ms -b m0" MCFG), 2);
	CU_ASSERT(has("'2ms'"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge --write-hint forever -b m0" MCFG), 2);
	CU_ASSERT(has("'forever'"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b m0 --write-class urgent" MCFG), 2);
	CU_ASSERT(has("'urgent'"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b m0 --tenant 99" MCFG), 2);
	CU_ASSERT(has("'99'"));
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b m0 --tenant 1:0" MCFG), 2);
	CU_ASSERT_EQUAL(run("-t 1 --no-huge -b m0 --tenant 1:2" MCFG), 2);
	CU_ASSERT(has("needs --sched fair"));
	CU_ASSERT_EQUAL(run("-t 1 --sched kyber"), 2);
	CU_ASSERT(has("bdev mode only"));
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	unsigned int failures;
	CU_pSuite suite;

	if (fx_find_program("../../bin/nvp_perf", g_prog, sizeof(g_prog)) != 0) {
		printf("SKIP: build/bin/nvp_perf not built\n");
		return 77;
	}
	snprintf(g_dir, sizeof(g_dir), "%s/nvp_perfbdev.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL || CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("perf_bdev_cli");
	if (suite == NULL || CU_add_test(suite, "line_modules", test_line_modules) == NULL ||
	    CU_add_test(suite, "json_and_raw", test_json_and_raw) == NULL ||
	    CU_add_test(suite, "split", test_split) == NULL ||
	    CU_add_test(suite, "bad", test_bad) == NULL ||
	    CU_add_test(suite, "bad_json_file", test_bad_json_file) == NULL ||
	    CU_add_test(suite, "stages", test_stages) == NULL ||
	    CU_add_test(suite, "stages_bad", test_stages_bad) == NULL ||
	    CU_add_test(suite, "errors_in_json", test_errors_in_json) == NULL ||
	    CU_add_test(suite, "jobs", test_jobs) == NULL ||
	    CU_add_test(suite, "jobs_tenants", test_jobs_tenants) == NULL ||
	    CU_add_test(suite, "jobs_bad", test_jobs_bad) == NULL) {
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
