/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/bdev_config.c: good configurations (every method, an SPDK
 * save_config file with what we ignore, the one-line form, the dispatcher) and bad ones
 * (malformed JSON with its line and column, unknown methods and parameters with their
 * JSON path, wrong types, missing parameters, a create call refusing) - each leaving
 * nothing behind. The nvme module is replaced by a stub that records the transport ID it
 * is given and registers a null bdev "<name>n1" in place of a namespace.
 */
#define _GNU_SOURCE
#include "ut_bdev.h"
/* each module names its own log component */
#undef NVP_LOG_COMPONENT
#include "bdev/malloc/bdev_malloc.c"
#undef NVP_LOG_COMPONENT
#include "bdev/null/bdev_null.c"
#include "bdev/uring/bdev_uring.c"
#include "bdev/bdev_config.c"
#include "bdev/bdev_config_json.c"
#include "bdev/bdev_config_text.c"
#include "bdev/malloc/bdev_malloc_config.c"
#include "bdev/null/bdev_null_config.c"
#include "bdev/uring/bdev_uring_config.c"
#include "bdev/nvme/bdev_nvme_config.c"

static char g_dir[64];
static char g_path[128];
static char g_log[8192]; /* every message of the current call */

static void
log_all(enum nvp_log_level level, const char *component, const char *msg)
{
	size_t n = strlen(g_log);

	(void)level;
	(void)component;
	snprintf(g_log + n, sizeof(g_log) - n, "%s\n", msg);
}

static bool
logged(const char *s)
{
	if (strstr(g_log, s) == NULL) {
		printf("\n    expected \"%s\" in:\n%s", s, g_log);
		return false;
	}
	return true;
}

/* Catch every message of the next call (ut_run() installs its own catcher first). */
static void
reset_log(void)
{
	nvp_log_set_callback(log_all);
	g_log[0] = '\0';
}

/* ---- the nvme module's stub ---- */

static char g_trid[1024];
static uint32_t g_attached;
static int32_t g_ctrlr_loss_timeout_sec;

int
nvp_bdev_nvme_attach(const char *trid, const struct nvp_bdev_nvme_opts *opts,
		     struct nvp_bdev **bdevs, uint32_t max_bdevs, uint32_t *count)
{
	struct nvp_bdev_null_opts no;
	char name[NVP_BDEV_NAME_MAX];
	int rc;

	(void)bdevs;
	(void)max_bdevs;
	nvp_strlcpy(g_trid, trid, sizeof(g_trid));
	g_ctrlr_loss_timeout_sec = opts->ctrlr_loss_timeout_sec;
	snprintf(name, sizeof(name), "%sn1", opts->name);
	nvp_bdev_null_opts_init(&no, sizeof(no));
	no.name = name;
	no.num_blocks = 100;
	rc = nvp_bdev_null_create(&no, NULL);
	if (rc == 0) {
		g_attached++;
		*count = 1;
	}
	return rc;
}

int
nvp_bdev_nvme_detach(const char *name)
{
	char bname[NVP_BDEV_NAME_MAX];

	snprintf(bname, sizeof(bname), "%sn1", name);
	g_attached--;
	return nvp_bdev_null_delete(bname);
}

/* multipath: one controller name at a time, its paths counted */
static char g_mp_name[64], g_mp_policy[16];
static uint32_t g_mp_paths;

int
nvp_bdev_nvme_mpath_attach(const char *name, const char *trid, const char *policy,
			   const struct nvp_nvme_ctrlr_opts *ctrlr_opts, struct nvp_bdev **bdev,
			   uint32_t *num_paths)
{
	struct nvp_bdev_null_opts no;
	char bname[NVP_BDEV_NAME_MAX];
	int rc = 0;

	(void)ctrlr_opts;
	(void)bdev;
	nvp_strlcpy(g_trid, trid, sizeof(g_trid));
	if (g_mp_paths == 0) {
		snprintf(bname, sizeof(bname), "%sn1", name);
		nvp_bdev_null_opts_init(&no, sizeof(no));
		no.name = bname;
		no.num_blocks = 100;
		rc = nvp_bdev_null_create(&no, NULL);
		nvp_strlcpy(g_mp_name, name, sizeof(g_mp_name));
		nvp_strlcpy(g_mp_policy, policy, sizeof(g_mp_policy));
	} else if (strcmp(g_mp_name, name) != 0 || strcmp(g_mp_policy, policy) != 0) {
		return -EINVAL;
	}
	if (rc == 0) {
		*num_paths = ++g_mp_paths;
	}
	return rc;
}

int
nvp_bdev_nvme_mpath_detach(const char *name)
{
	char bname[NVP_BDEV_NAME_MAX];

	if (g_mp_paths == 0 || strcmp(name, g_mp_name) != 0) {
		return -ENODEV;
	}
	g_mp_paths = 0;
	snprintf(bname, sizeof(bname), "%sn1", name);
	return nvp_bdev_null_delete(bname);
}

void
nvp_bdev_nvme_opts_init(struct nvp_bdev_nvme_opts *opts, size_t opts_size)
{
	memset(opts, 0, opts_size);
	opts->opts_size = opts_size;
}

/* ---- helpers ---- */

static int
load(const char *json)
{
	reset_log();
	return nvp_bdev_load_config_string(json);
}

static int
load_line(const char *line)
{
	reset_log();
	return nvp_bdev_load_config_line(line);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static uint32_t
count_bdevs(void)
{
	struct nvp_bdev *b;
	uint32_t n = 0;

	for (b = nvp_bdev_first(); b != NULL; b = nvp_bdev_next(b)) {
		n++;
	}
	return n;
}

static void
cleanup(void)
{
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	g_attached = 0;
}

#define WRAP(cfg) "{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":[" cfg "]}]}"
#define ATTACH(p) "{\"method\":\"bdev_nvme_attach_controller\",\"params\":{" p "}}"
#define NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"n0\",\"num_blocks\":8}},"

/* ---- good ---- */

static void
test_good_all_methods(void)
{
	char json[2048];
	struct nvp_bdev *b;

	snprintf(json, sizeof(json),
		 WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"n0\","
		      "\"num_blocks\":1000,\"block_size\":4096}},"
		      "{\"method\":\"bdev_uring_create\",\"params\":{\"name\":\"u0\","
		      "\"filename\":\"%s\",\"block_size\":512,\"iopoll\":\"off\"}},"
		      "{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":\"emu0\","
		      "\"trtype\":\"emu\",\"nn\":1,\"lba\":\"512\",\"vwc\":false}},"
		      "{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"n0\","
		      "\"scheduler\":\"none\"}},"
		      "{\"method\":\"bdev_set_accounting\",\"params\":{\"name\":\"n0\","
		      "\"enable\":false}}"),
		 g_path);
	CU_ASSERT_EQUAL_FATAL(load(json), 0);
	b = nvp_bdev_get_by_name("n0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(b), 1000);
	CU_ASSERT_FALSE(b->accounting);
	b = nvp_bdev_get_by_name("u0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(b), 64);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:emu name:emu0 nn=1 lba=512 vwc=0");
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("emu0n1"));
	CU_ASSERT_EQUAL(count_bdevs(), 3);
	cleanup();
}

/* What SPDK's save_config writes, with subsystems and params that mean nothing here. */
static void
test_good_spdk_file(void)
{
	char file[160];

	snprintf(file, sizeof(file), "%s/spdk.json", g_dir);
	write_file(
		file,
		"{\n  \"subsystems\": [\n"
		"    {\"subsystem\": \"iobuf\", \"config\": [{\"method\": \"iobuf_set_options\","
		" \"params\": {\"small_pool_count\": 8192}}]},\n"
		"    {\"subsystem\": \"bdev\", \"config\": [\n"
		"      {\"method\": \"bdev_set_options\", \"params\": {\"bdev_io_pool_size\": 65535}},\n"
		"      {\"method\": \"bdev_nvme_attach_controller\", \"params\": {\"name\": \"nvme0\","
		" \"trtype\": \"PCIe\", \"traddr\": \"0000:01:00.0\", \"prchk_reftag\": false,"
		" \"hdgst\": false, \"ctrlr_loss_timeout_sec\": 0}},\n"
		"      {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"Null0\","
		" \"num_blocks\": 8, \"block_size\": 512, \"uuid\": \"5c2b-...\", \"dif_type\": 0}},\n"
		"      {\"method\": \"bdev_wait_for_examine\"}\n"
		"    ]}\n  ]\n}\n");
	reset_log();
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_load_config_file(file), 0);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:PCIe traddr:0000:01:00.0");
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("nvme0n1"));
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("Null0"));
	CU_ASSERT(logged("subsystem 'iobuf' is not the bdev layer's"));
	cleanup();
	/* the dispatcher finds the file too */
	CU_ASSERT_EQUAL(nvp_bdev_load_config(file), 0);
	CU_ASSERT_EQUAL(count_bdevs(), 2);
	cleanup();
	unlink(file);
}

/* Current SPDK writes these: methods ignored, DIF and NUMA taken at their defaults only. */
static void
test_spdk_defaults(void)
{
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_raid_set_options\",\"params\":"
			  "{\"process_window_size_kb\":1024,\"process_max_bandwidth_mb_sec\":0}},"
			  "{\"method\":\"bdev_iscsi_set_options\",\"params\":{\"timeout_sec\":30}},"
			  "{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"n0\","
			  "\"num_blocks\":8,\"dif_type\":0,\"dif_pi_format\":0}}")),
		0);
	CU_ASSERT_EQUAL(count_bdevs(), 1);
	cleanup();
	/* malloc's parameters pass; its create call then finds no DMA memory here */
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":"
				  "\"m0\",\"num_blocks\":8,\"dif_pi_format\":0,\"numa_id\":-1}}")),
			-ENOMEM);
	CU_ASSERT_EQUAL(load_line("malloc:name=m0,num_blocks=8,numa_id=-1,dif_pi_format=0"),
			-ENOMEM);
	CU_ASSERT(logged("bdev_malloc_create failed: Cannot allocate memory"));
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_malloc_create\",\"params\":{"
					"\"name\":\"m0\",\"num_blocks\":8,\"numa_id\":1}}")),
			-EINVAL);
	CU_ASSERT(logged("config[1] (bdev_malloc_create).params.numa_id: 1 is not supported: "
			 "nvpoll does not have this SPDK feature (only -1, SPDK's default"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{"
				  "\"name\":\"n1\",\"num_blocks\":8,\"dif_pi_format\":2}}")),
			-EINVAL);
	CU_ASSERT(logged("params.dif_pi_format: 2 is not supported"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{"
				  "\"name\":\"n1\",\"num_blocks\":8,\"dif_type\":1}}")),
			-EINVAL);
	CU_ASSERT(logged("params.dif_type: 1 is not supported"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{"
				  "\"name\":\"n1\",\"num_blocks\":8,\"dif_type\":\"x\"}}")),
			-EINVAL);
	CU_ASSERT(logged("params.dif_type: \"x\" is not an integer"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

static void
test_good_line(void)
{
	struct nvp_bdev *b;

	CU_ASSERT_EQUAL_FATAL(
		load_line("null:name=n0,num_blocks=64,block_size=4096; "
			  "nvme:name=nv,trtype=TCP,adrfam=IPv4,traddr=10.0.0.1,"
			  "trsvcid=4420,subnqn=nqn.x:y;accounting:name=n0,enable=off"),
		0);
	b = nvp_bdev_get_by_name("n0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(b), 64);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_FALSE(b->accounting);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:TCP traddr:10.0.0.1 adrfam:IPv4 trsvcid:4420 "
				       "subnqn:nqn.x:y");
	cleanup();
	CU_ASSERT_EQUAL(nvp_bdev_load_config("null:name=a,num_blocks=1;null:name=b,num_blocks=2"),
			0);
	CU_ASSERT_EQUAL(count_bdevs(), 2);
	cleanup();
	CU_ASSERT_EQUAL(
		nvp_bdev_load_config(" " WRAP("{\"method\":\"bdev_null_create\","
					      "\"params\":{\"name\":\"c\",\"num_blocks\":1}}")),
		0);
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("c"));
	cleanup();
}

/* ---- bad: each names the problem and its place, and leaves nothing ---- */

static void
test_bad_json_position(void)
{
	CU_ASSERT_EQUAL(
		load("{\"subsystems\": [\n  {\"subsystem\": \"bdev\",\n   \"config\": [}\n"),
		-EINVAL);
	CU_ASSERT(logged("(string):3:"));
	CU_ASSERT(logged("malformed JSON"));
	CU_ASSERT_EQUAL(load("{\"subsystems\": []} x"), -EINVAL);
	CU_ASSERT(logged("text after the end"));
	CU_ASSERT_EQUAL(load(""), -EINVAL);
	CU_ASSERT_EQUAL(load("[1,2]"), -EINVAL);
	CU_ASSERT(logged("want {\"subsystems\""));
	CU_ASSERT_EQUAL(load("{\"subsystems\": [], \"extra\": 1}"), -EINVAL);
	CU_ASSERT(logged("(top).extra: unknown key"));
	CU_ASSERT_EQUAL(load("{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": 3}]}"),
			-EINVAL);
	CU_ASSERT(logged("subsystems[0].config: not an array"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"parms\":{}}")), -EINVAL);
	CU_ASSERT(logged("subsystems[0].config[0].parms: unknown key"));
	CU_ASSERT_EQUAL(load(WRAP("{\"params\":{}}")), -EINVAL);
	CU_ASSERT(logged("subsystems[0].config[0].method: missing"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* ---- strict RFC 8259: what JSON does not have is an error at its line and column, naming
 * what was expected there; nothing is made (the bdev before it in the text neither) ---- */

static void
refused(const char *json, const char *msg)
{
	CU_ASSERT_EQUAL(load(json), -EINVAL);
	CU_ASSERT(logged(msg));
	CU_ASSERT(logged("configuration not loaded"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

static void
test_strict_trailing_comma(void)
{
	/* the issue's own: it loaded and ran */
	refused(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"n1\","
			   "\"num_blocks\": 65536,}}"),
		"(string):1:184: malformed JSON: trailing ',' before '}' (JSON has no trailing "
		"commas): expected another \"key\": value after it, or no ','");
	refused("{\"subsystems\": [\n  {\"subsystem\": \"bdev\", \"config\": []},\n]}",
		"(string):2:38: malformed JSON: trailing ',' before ']' (JSON has no trailing "
		"commas): expected another value after it, or no ','");
	refused(WRAP(NULL0), "(string):1:113: malformed JSON: trailing ',' before ']'");
	refused("{\"subsystems\": [],}", "(string):1:18: malformed JSON: trailing ','");
	/* and a comma with nothing on either side */
	refused("{\"subsystems\": [,]}",
		"(string):1:17: malformed JSON: ',': expected a value or ']'");
	refused("{,}", "(string):1:2: malformed JSON: ',': expected a \"key\" or '}'");
	refused("{\"subsystems\": [{},,{}]}",
		"(string):1:20: malformed JSON: ',': expected a value");
}

static void
test_strict_single_quote(void)
{
	/* the issue's own: it loaded as an empty configuration */
	refused("{'subsystems': []}",
		"(string):1:2: malformed JSON: a single quote (JSON strings take double quotes): "
		"expected a \"key\" or '}'");
	refused("{\"subsystems\": [{\"subsystem\": 'bdev', \"config\": []}]}",
		"(string):1:31: malformed JSON: a single quote (JSON strings take double quotes): "
		"expected a value");
	refused(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"n1\","
			   "\"num_blocks\":8,'md_size':8}}"),
		"(string):1:180: malformed JSON: a single quote (JSON strings take double quotes): "
		"expected a \"key\"");
}

static void
test_strict_comment(void)
{
	refused("// bdevs\n{\"subsystems\": []}",
		"(string):1:1: malformed JSON: a comment (JSON has none): expected a value");
	refused("{\"subsystems\": [ /* none */ ]}",
		"(string):1:18: malformed JSON: a comment (JSON has none): expected a value or ']'");
	refused("{\"subsystems\": [\n  {\"subsystem\": \"bdev\", // the bdevs\n"
		"   \"config\": []}]}",
		"(string):2:25: malformed JSON: a comment (JSON has none): expected a \"key\"");
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"a\","
		     "\"num_blocks\":1 /* ] */}}"),
		"(string):1:111: malformed JSON: a comment (JSON has none): expected ',' or '}'");
	refused("{\"subsystems\": []}\n/* end */\n",
		"(string):2:1: malformed JSON: text after the end of the document: a comment "
		"(JSON has none): expected only white space");
	refused("{\"subsystems\": []} // end",
		"(string):1:20: malformed JSON: text after the end of the document");
}

static void
test_strict_control_char(void)
{
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"a\tb\","
		     "\"num_blocks\":1}}"),
		"(string):1:94: malformed JSON: a control character (0x09) in a string: write it "
		"as an escape (\\t, \\n, \\u0009)");
	refused("{\"subsystems\": [{\"subsystem\": \"bdev\x01\"}]}",
		"(string):1:36: malformed JSON: a control character (0x01) in a string");
	/* a line break in a string is usually its missing closing quote */
	refused("{\"subsystems\": [{\"subsystem\": \"bdev}]}\n",
		"(string):1:39: malformed JSON: a control character (0x0a) in a string: write it "
		"as an escape (\\t, \\n, \\u000a), or close the string");
	refused("{\"subsystems\": [{\"subsystem\": \"bdev",
		"(string):1:31: malformed JSON: the text ends inside this string: expected its "
		"closing '\"'");
}

static void
test_strict_bad_escape(void)
{
	refused("{\"subsystems\": [{\"subsystem\": \"b\\dev\"}]}",
		"(string):1:33: malformed JSON: bad escape '\\d': expected one of \\\" \\\\ \\/ \\b "
		"\\f \\n \\r \\t \\uXXXX");
	refused("{\"subsystems\": [{\"subsystem\": \"\\x41\"}]}", "(string):1:32: malformed JSON: "
								  "bad escape '\\x'");
	refused("{\"subsystems\": [{\"subsystem\": \"\\u12\"}]}",
		"(string):1:32: malformed JSON: bad escape '\\u12\"}': expected \\u and four hex "
		"digits");
	/* half a UTF-16 surrogate pair is not a character */
	refused("{\"subsystems\": [{\"subsystem\": \"\\ud800x\"}]}",
		"(string):1:32: malformed JSON: \\ud800 is the first half of a UTF-16 surrogate pair: "
		"expected its second half (\\udc00 to \\udfff) after it");
	refused("{\"subsystems\": [{\"subsystem\": \"\\udc00\"}]}",
		"(string):1:32: malformed JSON: \\udc00 is the second half of a UTF-16 surrogate "
		"pair: expected its first half (\\ud800 to \\udbff) before it");
}

static void
test_strict_leading_zero(void)
{
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"a\","
		     "\"num_blocks\":010}}"),
		"(string):1:109: malformed JSON: a number with a leading zero: expected no zero "
		"before the digits (JSON numbers are decimal)");
	refused("{\"subsystems\": [-01]}", "(string):1:17: malformed JSON: a number with a "
					   "leading zero");
	refused("{\"subsystems\": [00]}", "(string):1:17: malformed JSON: a number with a "
					  "leading zero");
	/* and the hexadecimal SPDK would not take either */
	refused("{\"subsystems\": [0x10]}", "(string):1:18: malformed JSON: 'x' after the number "
					    "0: expected ',' or ']'");
}

static void
test_strict_nan(void)
{
	refused("{\"subsystems\": [NaN]}",
		"(string):1:17: malformed JSON: 'NaN' is not a JSON value: expected a number, a "
		"string, true, false or null");
	refused("{\"subsystems\": [Infinity]}", "(string):1:17: malformed JSON: 'Infinity' is "
						"not a JSON value");
	refused("{\"subsystems\": [-Infinity]}",
		"(string):1:18: malformed JSON: 'I' after '-': expected a digit");
	refused("{\"subsystems\": [TRUE]}", "(string):1:17: malformed JSON: 'TRUE' is not a "
					    "JSON value");
	refused("{\"subsystems\": [nul]}", "(string):1:17: malformed JSON: 'nul' is not");
	refused("{\"subsystems\": [+1]}", "(string):1:17: malformed JSON: '+': expected a value");
	refused("{\"subsystems\": [.5]}", "(string):1:17: malformed JSON: '.': expected a value");
	refused("{\"subsystems\": [1.]}",
		"(string):1:19: malformed JSON: ']' after '.': expected a digit");
	refused("{\"subsystems\": [1e]}",
		"(string):1:19: malformed JSON: ']' in an exponent: expected a digit");
	refused("{\"subsystems\": [1e+]}", "(string):1:20: malformed JSON: ']' in an exponent");
}

static void
test_strict_trailing_garbage(void)
{
	refused("{\"subsystems\": []} x",
		"(string):1:20: malformed JSON: text after the end of the document: 'x': expected "
		"only white space");
	refused("{\"subsystems\": []}\n\n{\"subsystems\": []}\n",
		"(string):3:1: malformed JSON: text after the end of the document: '{'");
	refused("{\"subsystems\": []},", "(string):1:19: malformed JSON: text after the end");
	refused("{\"subsystems\": []}]", "(string):1:19: malformed JSON: text after the end");
}

static void
test_strict_empty(void)
{
	char file[160];

	refused("", "(string):1:1: malformed JSON: the document is empty: expected a JSON object "
		    "({\"subsystems\": [...]})");
	refused(" \n\t", "(string):2:2: malformed JSON: the document is empty");
	snprintf(file, sizeof(file), "%s/empty.json", g_dir);
	write_file(file, "");
	reset_log();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(file), -EINVAL);
	CU_ASSERT(logged("empty.json:1:1: malformed JSON: the document is empty"));
	CU_ASSERT_EQUAL(nvp_bdev_load_config(file), -EINVAL);
	unlink(file);
}

/* JSON text is UTF-8 (RFC 8259 section 8.1): other bytes and a byte order mark are refused. */
static void
test_strict_utf8(void)
{
	refused("{\"subsystems\": [{\"subsystem\": \"b\xff\"}]}",
		"(string):1:33: malformed JSON: byte 0xff is not UTF-8: expected UTF-8 text");
	refused("{\"subsystems\": [{\"subsystem\": \"\xc0\xaf\"}]}",
		"(string):1:32: malformed JSON: byte 0xc0 is not UTF-8");
	refused("{\"subsystems\": [{\"subsystem\": \"\xed\xa0\x80\"}]}",
		"(string):1:32: malformed JSON: byte 0xed is not UTF-8");
	refused("{\"subsystems\": [{\"subsystem\": \"\xf4\x90\x80\x80\"}]}",
		"(string):1:32: malformed JSON: byte 0xf4 is not UTF-8");
	refused("\xef\xbb\xbf{\"subsystems\": []}",
		"(string):1:1: malformed JSON: a byte order mark (U+FEFF): expected a value (save "
		"the file as UTF-8 without one)");
	refused("{\"subsystems\": [\xc3\xa9]}", "(string):1:17: malformed JSON: byte 0xc3");
}

/* @arrays nested in params of a skipped subsystem's entry, 6 levels deep: 6 + @arrays. */
static void
nested(char *json, size_t len, int arrays)
{
	size_t n;
	int i;

	n = (size_t)snprintf(json, len,
			     "{\"subsystems\": [{\"subsystem\": \"accel\", \"config\": "
			     "[{\"method\": \"x\", \"params\": {\"a\": ");
	for (i = 0; i < arrays && n + 2 < len; i++) {
		json[n++] = '[';
	}
	for (i = 0; i < arrays && n + 2 < len; i++) {
		json[n++] = ']';
	}
	snprintf(json + n, len - n, "}}]}]}");
}

/* As deep as json-c is made to parse (32 levels of objects and arrays) loads; deeper is
 * refused with its place too. */
static void
test_strict_depth(void)
{
	char json[512];

	nested(json, sizeof(json), 26);
	CU_ASSERT_EQUAL(load(json), 0);
	nested(json, sizeof(json), 27);
	refused(json, "(string):1:109: malformed JSON: objects and arrays nested deeper than 32 "
		      "levels");
}

/* What RFC 8259 allows still loads: nested empty arrays and objects, every escape and
 * Unicode beyond the BMP, numbers with fractions and exponents where an integer is wanted
 * (when they are one), white space of all four kinds between every token. */
static void
test_good_rfc8259(void)
{
	struct nvp_bdev *b;
	char json[2048];

	CU_ASSERT_EQUAL_FATAL(
		load(" \t\r\n{ \t\r\n\"subsystems\" \t\r\n: \t\r\n[ \t\r\n"
		     "{\"subsystem\":\"accel\",\"config\":[{\"method\":\"x\",\"params\":"
		     "{\"a\":[[],{},[[{}]],{\"b\":{\"c\":[]}}],\"d\":-0.5e-3,\"e\":1E+2,"
		     "\"f\":[true,false,null,0,-0,1.5]}}]}, \t\r\n"
		     "{\"subsystem\":\"bdev\",\"config\":[]}, \t\r\n"
		     "{ \t\r\n\"subsystem\" \t\r\n: \t\r\n\"bdev\" \t\r\n, \t\r\n\"config\" \t\r\n: "
		     "\t\r\n[ \t\r\n{ \t\r\n\"method\" \t\r\n: \t\r\n\"bdev_null_create\" \t\r\n, "
		     "\t\r\n\"params\" \t\r\n: \t\r\n{ \t\r\n\"nam\\u0065\" \t\r\n: \t\r\n"
		     "\"n\\u00e9\\ud83d\\ude00\" \t\r\n, \t\r\n\"num_blocks\" \t\r\n: \t\r\n"
		     "6.5536e4 \t\r\n, \t\r\n\"block_size\" : 5.12E+2, \"uuid\": "
		     "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\uFFFF \\u20AC\" \t\r\n} \t\r\n"
		     "} \t\r\n] \t\r\n} \t\r\n] \t\r\n} \t\r\n"),
		0);
	b = nvp_bdev_get_by_name("n\xc3\xa9\xf0\x9f\x98\x80");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(b), 65536);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 512);
	cleanup();
	/* integers written with a fraction or an exponent; emu options too */
	snprintf(json, sizeof(json), "%s",
		 WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"z\","
		      "\"num_blocks\":1e3,\"block_size\":4096.0}},"
		      "{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":\"e0\","
		      "\"trtype\":\"emu\",\"nn\":2e0,\"read_us\":1.5E1,"
		      "\"io_queue_size\":0.64e2}}"));
	CU_ASSERT_EQUAL_FATAL(load(json), 0);
	b = nvp_bdev_get_by_name("z");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(b), 1000);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:emu name:e0 nn=2 read_us=15");
	cleanup();
	/* but not a fraction, a negative count, or one past the type */
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"z\","
		     "\"num_blocks\":1.5e0}}"),
		"params.num_blocks: 1.5e0 is not an unsigned integer");
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"z\","
		     "\"num_blocks\":-1e2}}"),
		"params.num_blocks: -1e2 is not an unsigned integer");
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"z\","
		     "\"num_blocks\":1,\"block_size\":1e10}}"),
		"params.block_size: 1e10 is not an unsigned integer");
	refused(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":\"z\","
		     "\"num_blocks\":1e400}}"),
		"params.num_blocks: 1e400 is not an unsigned integer");
	refused(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\",\"nn\":2.5")),
		"params.nn: 2.5 is not an integer, a string or a boolean");
}

/* A key twice in one object is refused (json-c would keep the last), at the second one, before
 * anything is made; keys compare as decoded, so other spellings of a key are the same key. */
static void
test_bad_duplicate_key(void)
{
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":"
					"\"m\",\"num_blocks\":8,\"num_blocks\":16}}")),
			-EINVAL);
	CU_ASSERT(logged("(string):1:181: subsystems[0].config[1].params: duplicate key "
			 "'num_blocks'"));
	CU_ASSERT_EQUAL(
		load(WRAP(NULL0 "{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":"
				"\"m\",\"num_blocks\":8},\"method\":\"bdev_null_create\"}")),
		-EINVAL);
	CU_ASSERT(logged("(string):1:182: subsystems[0].config[1]: duplicate key 'method'"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	CU_ASSERT_EQUAL(load("{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [" NULL0
			     "{\"method\": \"nope\"}]}],\n \"subsystems\": []}"),
			-EINVAL);
	CU_ASSERT(logged("(string):2:2: (top): duplicate key 'subsystems'"));
	CU_ASSERT_PTR_NULL(strstr(g_log, "unknown method"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":\"m\","
				  "\"nam\\u0065\":\"x\",\"num_blocks\":8}}")),
			-EINVAL);
	CU_ASSERT(logged("(string):1:98: subsystems[0].config[0].params: duplicate key 'name'"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	/* not duplicates: other keys than they look, keys of other objects */
	CU_ASSERT_EQUAL(
		load("{\"subsystems\": [{\"subsystem\": \"accel\", \"config\": [{\"method\": \"x\", "
		     "\"params\": {\"s\\\"\": 1, \"s\\\\\": 2, \"s\": 3, \"t\": {\"s\": 4}, "
		     "\"u\": [{\"s\": 5}, {\"s\": 6}]}}]},\n"
		     "  {\"subsystem\": \"bdev\", \"config\": [" NULL0
		     "{\"method\": \"bdev_null_create\", \"params\": {\"name\": \"n1\", "
		     "\n \"num_blocks\": 8}}]}]}"),
		0);
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("n1"));
	cleanup();
}

static void
test_bad_method_param_undone(void)
{
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_foo_create\",\"params\":{}}")),
			-EINVAL);
	CU_ASSERT(logged(
		"subsystems[0].config[1] (bdev_foo_create): unknown method 'bdev_foo_create'"));
	CU_ASSERT(logged("bdev_malloc_create"));
	CU_ASSERT(logged("nothing of it is left"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":"
					"\"n1\",\"num_blcks\":8}}")),
			-EINVAL);
	CU_ASSERT(logged("subsystems[0].config[1] (bdev_null_create).params.num_blcks: unknown "
			 "parameter (known: name, num_blocks, block_size"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":"
					"\"n1\",\"num_blocks\":-3}}")),
			-EINVAL);
	CU_ASSERT(logged("params.num_blocks: -3 is not an unsigned integer"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{\"name\":7,"
				  "\"num_blocks\":1}}")),
			-EINVAL);
	CU_ASSERT(logged("params.name: 7 is not a string"));
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{\"name\":"
					"\"n1\"}}")),
			-EINVAL);
	CU_ASSERT(logged("config[1] (bdev_null_create).params: missing parameter num_blocks"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\"}")), -EINVAL);
	CU_ASSERT(logged("missing parameter name"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_uring_create\",\"params\":{\"name\":\"u\","
				  "\"filename\":\"x\",\"iopoll\":\"sometimes\"}}")),
			-EINVAL);
	CU_ASSERT(logged("params.iopoll: \"sometimes\" is not auto, on or off"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* SPDK's multipath parameter: attaches of one name with "failover" or "multipath" are one
 * controller with a path each; "disable" is an ordinary attach; undone as one. */
#define MP_ATTACH(port, mp)                                                                      \
	ATTACH("\"name\":\"mp0\",\"trtype\":\"TCP\",\"traddr\":\"10.0.0.1\",\"trsvcid\":\"" port \
	       "\",\"subnqn\":\"nqn.2026-01.x:y\",\"multipath\":\"" mp "\"")

static void
test_multipath(void)
{
	CU_ASSERT_EQUAL(
		load(WRAP(MP_ATTACH("4420", "multipath") "," MP_ATTACH("4421", "multipath"))), 0);
	CU_ASSERT_EQUAL(g_mp_paths, 2);
	CU_ASSERT_EQUAL(g_attached, 0);
	CU_ASSERT_STRING_EQUAL(g_mp_policy, "multipath");
	CU_ASSERT(strstr(g_trid, "trsvcid:4421") != NULL);
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("mp0n1"));
	cleanup();
	g_mp_paths = 0;
	/* a later entry fails: the multipath controller goes, all its paths with it */
	CU_ASSERT_EQUAL(load(WRAP(MP_ATTACH("4420", "failover") "," MP_ATTACH(
				"4421", "failover") ",{\"method\":\"bdev_foo_create\"}")),
			-EINVAL);
	CU_ASSERT_EQUAL(g_mp_paths, 0);
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	/* disable: the ordinary module */
	CU_ASSERT_EQUAL(load(WRAP(MP_ATTACH("4420", "disable"))), 0);
	CU_ASSERT_EQUAL(g_attached, 1);
	CU_ASSERT_EQUAL(g_mp_paths, 0);
	cleanup();
	/* a path that asks for another policy than its controller's is refused, all undone */
	CU_ASSERT_EQUAL(
		load(WRAP(MP_ATTACH("4420", "failover") "," MP_ATTACH("4421", "multipath"))),
		-EINVAL);
	CU_ASSERT(logged("controller mp0 (multipath multipath): path"));
	CU_ASSERT_EQUAL(g_mp_paths, 0);
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

static void
test_bad_create_undone(void)
{
	char json[1024];

	/* the module refuses (its message names the parameter); all made so far goes */
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_nvme_attach_controller\",\"params\":"
					"{\"name\":\"e0\",\"trtype\":\"emu\"}},"
					"{\"method\":\"bdev_null_create\",\"params\":{\"name\":"
					"\"n2\",\"num_blocks\":8,\"block_size\":1000}}")),
			-EINVAL);
	CU_ASSERT(logged("bad parameter block_size"));
	CU_ASSERT(logged("config[2] (bdev_null_create): bdev_null_create failed"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	CU_ASSERT_EQUAL(g_attached, 0);

	CU_ASSERT_EQUAL(load(WRAP(NULL0 NULL0 "{}")), -EEXIST);
	CU_ASSERT(logged("config[1] (bdev_null_create): bdev_null_create failed: File exists"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	snprintf(json, sizeof(json),
		 WRAP(NULL0 "{\"method\":\"bdev_uring_create\",\"params\":{\"name\":\"u\","
			    "\"filename\":\"%s/none\"}}"),
		 g_dir);
	CU_ASSERT_EQUAL(load(json), -ENOENT);
	CU_ASSERT(logged("none: cannot open"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	/* nvme: params of another transport, a bad software controller option */
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":"
			  "\"x\",\"trtype\":\"PCIe\",\"traddr\":\"0000:01:00.0\",\"nn\":2}}")),
		-EINVAL);
	CU_ASSERT(logged("params.nn: unknown parameter (trtype PCIe"));
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":"
			  "\"x\",\"trtype\":\"emu\",\"bogus\":2}}")),
		-EINVAL);
	CU_ASSERT(logged("software controller option"));
	CU_ASSERT(logged("bogus"));
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_nvme_attach_controller\",\"params\":{\"name\":"
			  "\"x\",\"trtype\":\"emu\",\"lba\":\"512 4096\"}}")),
		-EINVAL);
	CU_ASSERT(logged("has a space or comma"));
	CU_ASSERT_EQUAL(g_attached, 0);
}

/* A value with white space would add transport ID pairs of its own: refused. */
static void
test_bad_trid_injection(void)
{
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"nvme0\",\"trtype\":\"PCIe\","
					 "\"traddr\":\"0000:01:00.0 trtype:emu name:zz\""))),
			-EINVAL);
	CU_ASSERT(logged("(string):1:46: subsystems[0].config[0] "
			 "(bdev_nvme_attach_controller).params.traddr: '0000:01:00.0 trtype:emu "
			 "name:zz' is empty or has white space"));
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\","
					 "\"subnqn\":\"x nn:4\""))),
			-EINVAL);
	CU_ASSERT(logged("params.subnqn: 'x nn:4' is empty"));
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\\tns:2\",\"trtype\":\"emu\""))), -EINVAL);
	CU_ASSERT(logged("params.name: 'e0\tns:2' is empty"));
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"\""))), -EINVAL);
	CU_ASSERT(logged("params.trtype: '' is empty"));
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\","
					 "\"lba\":\"512\\n4096\""))),
			-EINVAL);
	CU_ASSERT(logged("params.lba: '512\n4096' has a space or comma"));
	CU_ASSERT_EQUAL(load_line("nvme:name=e0,trtype=TCP,traddr=1.2.3.4,"
				  "hostnqn=h\tsubnqn:x"),
			-EINVAL);
	CU_ASSERT(logged("item 1 (nvme).params.hostnqn:"));
	CU_ASSERT_EQUAL(g_attached, 0);
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* trtype is matched in any case, as the transport ID parser does (SPDK too). */
static void
test_good_trtype_case(void)
{
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"EMU\",\"nn\":2"))), 0);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:EMU name:e0 nn=2");
	cleanup();
	CU_ASSERT_EQUAL(load_line("nvme:name=e1,trtype=Emu,read_us=3"), 0);
	CU_ASSERT_STRING_EQUAL(g_trid, "trtype:Emu name:e1 read_us=3");
	cleanup();
}

/* "\u0000" would cut a C string short: refused, not truncated. */
static void
test_bad_nul_in_string(void)
{
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{"
				  "\"name\":\"m\\u0000x\",\"num_blocks\":8}}")),
			-EINVAL);
	CU_ASSERT(logged("(string):1:46: subsystems[0].config[0] (bdev_null_create).params.name: "
			 "the string has a NUL character"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\",\"params\":{"
				  "\"name\":\"m\",\"num_blocks\":\"8\\u00009\"}}")),
			-EINVAL);
	CU_ASSERT(logged("params.num_blocks: the string has a NUL"));
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\","
					 "\"lba\":\"512\\u0000 nn=4\""))),
			-EINVAL);
	CU_ASSERT(logged("params.lba: the string has a NUL"));
	CU_ASSERT_EQUAL(load(WRAP("{\"method\":\"bdev_null_create\\u0000x\",\"params\":{"
				  "\"name\":\"m\",\"num_blocks\":8}}")),
			-EINVAL);
	CU_ASSERT(logged("config[0].method: missing, not a string, or with a NUL"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* Numbers may be strings: -1 too, in the one-line form and in JSON. */
static void
test_good_minus1_string(void)
{
	CU_ASSERT_EQUAL(load_line("nvme:name=e0,trtype=emu,ctrlr_loss_timeout_sec=-1"), 0);
	CU_ASSERT_EQUAL(g_ctrlr_loss_timeout_sec, -1);
	cleanup();
	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\","
					 "\"ctrlr_loss_timeout_sec\":\"-1\""))),
			0);
	CU_ASSERT_EQUAL(g_ctrlr_loss_timeout_sec, -1);
	cleanup();
	CU_ASSERT_EQUAL(load_line("nvme:name=e0,trtype=emu,ctrlr_loss_timeout_sec=-2"), -EINVAL);
	CU_ASSERT(logged("params.ctrlr_loss_timeout_sec: \"-2\" is not -1 or an unsigned integer"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* Messages that say what is wrong: an integer wanted, a value too long and its limit. */
static void
test_bad_nvme_messages(void)
{
	char line[1200], nqn[1001];

	CU_ASSERT_EQUAL(load(WRAP(ATTACH("\"name\":\"e0\",\"trtype\":\"emu\",\"read_us\":1.5"))),
			-EINVAL);
	CU_ASSERT(logged("params.read_us: 1.5 is not an integer, a string or a boolean (a "
			 "software controller option must be an integer)"));
	memset(nqn, 'q', sizeof(nqn) - 1);
	nqn[sizeof(nqn) - 1] = '\0';
	snprintf(line, sizeof(line), "nvme:name=e0,trtype=emu,subnqn=%s", nqn);
	CU_ASSERT_EQUAL(load_line(line), -EINVAL);
	CU_ASSERT(logged("item 1 (nvme).params.subnqn: 'qqqq"));
	CU_ASSERT(logged("...' is 1000 characters long; at most 223"));
	snprintf(line, sizeof(line), "nvme:name=%s,trtype=PCIe,traddr=0000:01:00.0", nqn);
	CU_ASSERT_EQUAL(load_line(line), -EINVAL);
	CU_ASSERT(logged("item 1 (nvme).params.name: 'qqqq"));
	CU_ASSERT(logged("at most 52"));
	CU_ASSERT_EQUAL(g_attached, 0);
}

/* A stage choice on a bdev the file did not make is put back on failure. */
static void
test_bad_stage_restored(void)
{
	struct nvp_bdev_null_opts o;
	struct nvp_bdev *b = NULL;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	o.name = "keep";
	o.num_blocks = 8;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, &b), 0);
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"keep\","
			  "\"scheduler\":\"none\"}},"
			  "{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"keep\","
			  "\"scheduler\":\"no-such\"}}")),
		-ENOENT);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(b), "none");
	CU_ASSERT_PTR_EQUAL(nvp_bdev_get_by_name("keep"), b);
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_set_admission\",\"params\":{\"name\":\"nope\","
			  "\"admission\":\"none\"}}")),
		-ENODEV);
	CU_ASSERT(logged("params.name: no bdev 'nope' (bdevs: keep)"));
	CU_ASSERT_EQUAL(count_bdevs(), 1);
	cleanup();
}

/* A scheduler that takes any params (only its choice and params are looked at here). */
static int
ut_sched_init(struct nvp_bdev *bdev, const char *params, void **ctx)
{
	(void)bdev;
	(void)params;
	*ctx = NULL;
	return 0;
}

static const struct nvp_bdev_sched_ops g_ut_sched = {
	.name = "ut_sched",
	.init = ut_sched_init,
};

/* What a failed load changed on a bdev it did not make is put back whole: the stage with
 * the params it had, and the accounting switch. */
static void
test_bad_load_restores_settings(void)
{
	struct nvp_bdev_null_opts o;
	struct nvp_bdev *b = NULL;
	int rc;

	rc = nvp_bdev_scheduler_register(&g_ut_sched);
	CU_ASSERT(rc == 0 || rc == -EEXIST);
	nvp_bdev_null_opts_init(&o, sizeof(o));
	o.name = "keep";
	o.num_blocks = 8;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(b, "ut_sched", "depth=7"), 0);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler_params(b), "depth=7");
	nvp_bdev_set_accounting(b, false);
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"keep\","
			  "\"scheduler\":\"ut_sched\",\"params\":\"depth=9\"}},"
			  "{\"method\":\"bdev_set_accounting\",\"params\":{\"name\":\"keep\","
			  "\"enable\":true}},"
			  "{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"keep\","
			  "\"scheduler\":\"no-such\"}}")),
		-ENOENT);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(b), "ut_sched");
	CU_ASSERT_PTR_NOT_NULL_FATAL(nvp_bdev_get_scheduler_params(b));
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler_params(b), "depth=7");
	CU_ASSERT_FALSE(nvp_bdev_get_accounting(b));
	/* and a load that succeeds keeps what it set */
	CU_ASSERT_EQUAL(
		load(WRAP("{\"method\":\"bdev_set_scheduler\",\"params\":{\"name\":\"keep\","
			  "\"scheduler\":\"ut_sched\",\"params\":\"depth=9\"}},"
			  "{\"method\":\"bdev_set_accounting\",\"params\":{\"name\":\"keep\","
			  "\"enable\":true}}")),
		0);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler_params(b), "depth=9");
	CU_ASSERT_TRUE(nvp_bdev_get_accounting(b));
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(b, "none", NULL), 0);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_scheduler_params(b));
	cleanup();
}

static void
test_bad_line_and_file(void)
{
	char missing[160];

	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks=8;null:name"), -EINVAL);
	CU_ASSERT(logged("item 2 (null): 'name' is not key=value"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks=8;disk:name=d"), -EINVAL);
	CU_ASSERT(logged("item 2 (disk): unknown method 'disk' (known: nvme, malloc, null, uring"));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks=eight"), -EINVAL);
	CU_ASSERT(logged("item 1 (null).params.num_blocks: \"eight\" is not an unsigned integer"));
	CU_ASSERT_EQUAL(load_line("null:name=n0,name=n1,num_blocks=1"), -EINVAL);
	CU_ASSERT(logged("given twice"));
	CU_ASSERT_EQUAL(load_line(";;"), -EINVAL);
	CU_ASSERT(logged("empty"));
	/* The pairs: an unknown key, an empty key, ':' for '=', an empty value, an overflow. */
	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks=8,bogus=1"), -EINVAL);
	CU_ASSERT(logged("item 1 (null).params.bogus: unknown parameter (known: name,"));
	CU_ASSERT_EQUAL(load_line("null:=5,name=n0"), -EINVAL);
	CU_ASSERT(logged("item 1 (null): '=5' is not key=value"));
	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks:8"), -EINVAL);
	CU_ASSERT(logged("item 1 (null): 'num_blocks:8' is not key=value"));
	CU_ASSERT_EQUAL(load_line("null:name=,num_blocks=8"), -EINVAL);
	CU_ASSERT(logged("bdev_null_create '': bad parameter name"));
	CU_ASSERT_EQUAL(load_line("null:name=n0,num_blocks=99999999999999999999999"), -EINVAL);
	CU_ASSERT(logged("params.num_blocks: \"99999999999999999999999\" is not an unsigned "
			 "integer"));
	/* Empty pairs between commas are skipped, as ever. */
	CU_ASSERT_EQUAL(load_line("null:name=n0,,num_blocks=8,"), 0);
	CU_ASSERT_EQUAL(count_bdevs(), 1);
	cleanup();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_line(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_string(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_load_config(""), -EINVAL);

	/* a directory: the read error, not "malformed JSON" */
	reset_log();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(g_dir), -EISDIR);
	CU_ASSERT(logged("cannot read the configuration: Is a directory"));
	CU_ASSERT_EQUAL(nvp_bdev_load_config(g_dir), -EISDIR);

	snprintf(missing, sizeof(missing), "%s/none.json", g_dir);
	reset_log();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(missing), -ENOENT);
	CU_ASSERT(logged("none.json: cannot open the configuration"));
	CU_ASSERT_EQUAL(nvp_bdev_load_config(missing), -ENOENT);
	write_file(missing, "{\"subsystems\": [\n{\"subsystem\": \"bdev\" \"config\": []}]}\n");
	reset_log();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(missing), -EINVAL);
	CU_ASSERT(logged("none.json:2:"));
	unlink(missing);
	CU_ASSERT_EQUAL(count_bdevs(), 0);

	/* a semantic error is placed by its entry's line and column too */
	write_file(missing,
		   "{\"subsystems\": [\n"
		   "  {\"subsystem\": \"accel\", \"config\": [{\"method\": \"x\", \"params\": "
		   "{\"s\": \"]}\\\"\"}}]},\n"
		   "  {\"subsystem\": \"bdev\", \"config\": [\n"
		   "    {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"a\", "
		   "\"num_blocks\": 1}},\n"
		   "      {\"method\": \"bdev_null_create\", \"params\": {\"nme\": \"b\"}}\n"
		   "  ]}]}\n");
	reset_log();
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(missing), -EINVAL);
	CU_ASSERT(logged("none.json:5:7: subsystems[1].config[1] (bdev_null_create).params.nme: "
			 "unknown parameter"));
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"nope\"}")), -EINVAL);
	CU_ASSERT(logged("(string):1:"));
	unlink(missing);
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

/* A JSON number read as an integer from its text, exactly: to the last digit of UINT64_MAX,
 * where a double would round. */
static void
test_number_exact(void)
{
	static const struct {
		const char *num;
		uint64_t max;
		int rc;
		uint64_t v;
	} cases[] = {
		{ "1e3", UINT64_MAX, 0, 1000 },
		{ "6.5536e4", UINT64_MAX, 0, 65536 },
		{ "4096.0", UINT64_MAX, 0, 4096 },
		{ "0.64e2", UINT64_MAX, 0, 64 },
		{ "12.340e2", UINT64_MAX, 0, 1234 },
		{ "12.340e1", UINT64_MAX, -EINVAL, 0 },
		{ "1000e-3", UINT64_MAX, 0, 1 },
		{ "-0.0e5", UINT64_MAX, 0, 0 },
		{ "1.8446744073709551615e19", UINT64_MAX, 0, UINT64_MAX },
		{ "9007199254740993.0", UINT64_MAX, 0, 9007199254740993ull }, /* 2^53 + 1 */
		{ "1.8446744073709551616e19", UINT64_MAX, -EINVAL, 0 },
		{ "4.294967296e9", UINT32_MAX, -EINVAL, 0 },
		{ "1.5e0", UINT64_MAX, -EINVAL, 0 },
		{ "100e-3", UINT64_MAX, -EINVAL, 0 },
		{ "-1e2", UINT64_MAX, -EINVAL, 0 },
		{ "1e999999999999", UINT64_MAX, -EINVAL, 0 },
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < NVP_COUNTOF(cases); i++) {
		v = 0;
		CU_ASSERT_EQUAL(bdev_config_json_number_u64(cases[i].num, cases[i].max, &v),
				cases[i].rc);
		if (cases[i].rc == 0 && v != cases[i].v) {
			printf("\n    %s: %" PRIu64 ", want %" PRIu64 "\n", cases[i].num, v,
			       cases[i].v);
			CU_FAIL("bdev_config_json_number_u64");
		}
	}
}

/* Which errors of a load are the configuration's (tools exit 2): what a load returns for a
 * malformed text, an unknown parameter, a name given twice, a file it cannot read. */
static void
test_error_is_usage(void)
{
	CU_ASSERT_EQUAL(load("{\"subsystems\": [],}"), -EINVAL);
	CU_ASSERT_TRUE(nvp_bdev_config_error_is_usage(-EINVAL));
	CU_ASSERT_EQUAL(load(WRAP(NULL0 "{\"method\":\"bdev_null_create\",\"params\":{"
					"\"name\":\"n0\",\"num_blocks\":8}}")),
			-EEXIST);
	CU_ASSERT_TRUE(nvp_bdev_config_error_is_usage(-EEXIST));
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(g_dir), -EISDIR);
	CU_ASSERT_TRUE(nvp_bdev_config_error_is_usage(-EISDIR));
	CU_ASSERT_TRUE(nvp_bdev_config_error_is_usage(-ENOENT));
	CU_ASSERT_TRUE(nvp_bdev_config_error_is_usage(-EACCES));
	/* carrying it out failed: the run's failure */
	CU_ASSERT_FALSE(nvp_bdev_config_error_is_usage(-ENOMEM));
	CU_ASSERT_FALSE(nvp_bdev_config_error_is_usage(-ECONNREFUSED));
	CU_ASSERT_FALSE(nvp_bdev_config_error_is_usage(-ENODEV));
	CU_ASSERT_FALSE(nvp_bdev_config_error_is_usage(0));
	CU_ASSERT_EQUAL(count_bdevs(), 0);
}

int
main(void)
{
	(void)ut_event_cb;
	(void)ut_done_cb;
	static const struct ut_test tests[] = {
		UT_TEST(test_good_all_methods),
		UT_TEST(test_good_spdk_file),
		UT_TEST(test_spdk_defaults),
		UT_TEST(test_good_line),
		UT_TEST(test_bad_json_position),
		UT_TEST(test_strict_trailing_comma),
		UT_TEST(test_strict_single_quote),
		UT_TEST(test_strict_comment),
		UT_TEST(test_strict_control_char),
		UT_TEST(test_strict_bad_escape),
		UT_TEST(test_strict_leading_zero),
		UT_TEST(test_strict_nan),
		UT_TEST(test_strict_trailing_garbage),
		UT_TEST(test_strict_empty),
		UT_TEST(test_strict_utf8),
		UT_TEST(test_strict_depth),
		UT_TEST(test_good_rfc8259),
		UT_TEST(test_number_exact),
		UT_TEST(test_bad_duplicate_key),
		UT_TEST(test_bad_method_param_undone),
		UT_TEST(test_bad_create_undone),
		UT_TEST(test_multipath),
		UT_TEST(test_bad_trid_injection),
		UT_TEST(test_bad_load_restores_settings),
		UT_TEST(test_good_trtype_case),
		UT_TEST(test_bad_nul_in_string),
		UT_TEST(test_good_minus1_string),
		UT_TEST(test_bad_nvme_messages),
		UT_TEST(test_bad_stage_restored),
		UT_TEST(test_bad_line_and_file),
		UT_TEST(test_error_is_usage),
	};
	const char *tmp = getenv("TMPDIR");
	int rc, fd;

	snprintf(g_dir, sizeof(g_dir), "%s/nvp_config_ut.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(g_path, sizeof(g_path), "%s/disk", g_dir);
	fd = open(g_path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 64 * 512) != 0) {
		perror(g_path);
		return 1;
	}
	close(fd);
	rc = ut_run("bdev_config", tests, sizeof(tests) / sizeof(tests[0]));
	unlink(g_path);
	rmdir(g_dir);
	return rc;
}
