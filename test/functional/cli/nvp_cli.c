/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build/bin/nvp as a user (or a script) runs it, against software controllers. JSON
 * output is parsed with json-c and compared with what the controller was configured to
 * advertise; exit statuses are checked (0 ok, 1 device error, 2 usage error).
 *
 * A software controller made from "emu:..." lives for one nvp invocation, so state that
 * must cross invocations uses backend=file:PATH (data and SMART counters persist), and
 * a sequence on one controller (format then id-ns; fw-download, fw-commit, reset,
 * fw-log) runs as one chained invocation ("cmd ... + cmd ..."). The SMART test writes
 * through the driver in this process, then has nvp read the counters the file backend
 * kept.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fixture.h"
#include "subproc.h"

#define EMU_MODEL "nvpoll software NVMe controller"

static char g_prog[PATH_MAX];
static char g_dir[] = "/tmp/nvp_cli_test.XXXXXX";

/* Output of the last run. */
static struct {
	char *out;
	size_t out_len;
	char *err;
	int status; /* exit status; -1 if it did not exit normally */
} g_run;

static int
find_program(void)
{
	return fx_find_program("../../bin/nvp", g_prog, sizeof(g_prog));
}

/*
 * Run nvp with @args (shell words, already quoted), stdin from /dev/null. stdout and
 * stderr are kept apart in g_run. \return the exit status, -1 if killed by a signal.
 */
static int
run(const char *args)
{
	free(g_run.out);
	free(g_run.err);
	g_run.status = fx_run_split(g_prog, args, "/dev/null", &g_run.out, &g_run.out_len,
				    &g_run.err);
	return g_run.status;
}

/* Parse the JSON of the last run, starting at its first line that opens an object. */
static struct json_object *
last_json(void)
{
	const char *start = g_run.out;
	struct json_object *o;

	while (start != NULL && *start != '{') {
		start = strchr(start, '\n');
		start = start != NULL ? start + 1 : NULL;
	}
	o = start != NULL ? json_tokener_parse(start) : NULL;
	if (o == NULL) {
		fprintf(stderr, "  no JSON in the output of the last run\n");
	}
	return o;
}

/* Run and parse; asserts exit 0. */
static struct json_object *
run_json(const char *args)
{
	int rc = run(args);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return NULL;
	}
	return last_json();
}

static int64_t
jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  key '%s' missing\n", key);
		CU_FAIL("JSON key missing");
		return -1;
	}
	return json_object_get_int64(v);
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  key '%s' missing\n", key);
		CU_FAIL("JSON key missing");
		return "";
	}
	return json_object_get_string(v);
}

static struct json_object *
jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  key '%s' missing\n", key);
		CU_FAIL("JSON key missing");
		return NULL;
	}
	return v;
}

static void
test_id_ctrl(void)
{
	struct json_object *o = run_json("id-ctrl emu:nn=3,size=1M,mdts=4 -o json");

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	/* nvme-cli 2.3 keeps the spec's space padding of sn / mn / fr */
	CU_ASSERT_EQUAL(strlen(jstr(o, "mn")), 40);
	CU_ASSERT_EQUAL(strncmp(jstr(o, "mn"), EMU_MODEL, strlen(EMU_MODEL)), 0);
	CU_ASSERT_STRING_EQUAL(jstr(o, "fr"), "1.0     ");
	CU_ASSERT_EQUAL(strlen(jstr(o, "sn")), 20);
	/* keys nvme-cli 2.x prints that we once missed, and its 128-bit values as strings */
	CU_ASSERT_EQUAL(jint(o, "icsvscc"), 0);
	CU_ASSERT_EQUAL(jint(o, "ioccsz"), 0);
	CU_ASSERT_TRUE(json_object_is_type(jget(o, "tnvmcap"), json_type_string));
	CU_ASSERT_EQUAL(strlen(jstr(o, "fguid")), 36);
	CU_ASSERT_EQUAL(jint(o, "nn"), 3);
	CU_ASSERT_EQUAL(jint(o, "mdts"), 4);
	CU_ASSERT_EQUAL(jint(o, "ver"), 0x10400);
	CU_ASSERT_EQUAL(jint(o, "oacs") & (NVME_OACS_FORMAT | NVME_OACS_FIRMWARE),
			NVME_OACS_FORMAT | NVME_OACS_FIRMWARE);
	CU_ASSERT_EQUAL(jint(o, "sqes"), 0x66);
	CU_ASSERT_EQUAL(jint(o, "cqes"), 0x44);
	CU_ASSERT(strlen(jstr(o, "sn")) > 0);
	CU_ASSERT(json_object_array_length(jget(o, "psds")) == (size_t)jint(o, "npss") + 1);
	json_object_put(o);

	/* registers: CAP as the emu options set it */
	o = run_json("show-regs emu:size=1M,mqes=63,dstrd=2,to=7 -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(jint(o, "cap") & 0xffff, 63);
	CU_ASSERT_EQUAL((jint(o, "cap") >> 24) & 0xff, 7);
	CU_ASSERT_EQUAL((jint(o, "cap") >> 32) & 0xf, 2);
	CU_ASSERT_EQUAL(jint(o, "vs"), 0x10400);
	CU_ASSERT_EQUAL(jint(o, "csts") & 1, 1);
	json_object_put(o);

	/* normal and -H output, and binary: the 4096 bytes of the structure */
	CU_ASSERT_EQUAL(run("id-ctrl emu:size=1M -H"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "mn        : " EMU_MODEL));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "Format NVM Supported"));
	CU_ASSERT_EQUAL(run("id-ctrl emu:size=1M -o binary"), 0);
	CU_ASSERT_EQUAL(g_run.out_len, sizeof(struct nvme_ctrlr_data));
	CU_ASSERT(g_run.out_len >= 64 && memcmp(g_run.out + 24, EMU_MODEL, strlen(EMU_MODEL)) == 0);
}

static void
test_id_ns(void)
{
	struct json_object *o, *lbafs;

	o = run_json("id-ns emu:size=2M,nn=2,lba=512/4096 -n 2 -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(jint(o, "nsze"), (2 << 20) / 4096);
	CU_ASSERT_EQUAL(jint(o, "ncap"), (2 << 20) / 4096);
	lbafs = jget(o, "lbafs");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(lbafs), (size_t)jint(o, "nlbaf") + 1);
	CU_ASSERT_EQUAL(jint(json_object_array_get_idx(lbafs, jint(o, "flbas") & 0xf), "ds"), 12);
	json_object_put(o);

	o = run_json("id-ns 'trtype:emu name:t1 size:1M' -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(jint(o, "nsze"), (1 << 20) / 512);
	json_object_put(o);

	/* a namespace that does not exist: the device says so, exit 1 */
	CU_ASSERT_EQUAL(run("id-ns emu:size=1M -n 5"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: "));
}

static void
test_list(void)
{
	struct json_object *o, *devs;

	o = run_json("list emu:nn=2,size=1M -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	devs = jget(o, "Devices");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(devs), 2);
	CU_ASSERT_EQUAL(jint(json_object_array_get_idx(devs, 1), "NameSpace"), 2);
	CU_ASSERT_STRING_EQUAL(jstr(json_object_array_get_idx(devs, 0), "ModelNumber"), EMU_MODEL);
	CU_ASSERT_EQUAL(jint(json_object_array_get_idx(devs, 0), "SectorSize"), 512);
	CU_ASSERT_EQUAL(jint(json_object_array_get_idx(devs, 0), "PhysicalSize"), 1 << 20);
	json_object_put(o);

	/* Without a device: whatever env offers (no NVMe here: an empty list), never an
	 * error. */
	o = run_json("list -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE(json_object_is_type(jget(o, "Devices"), json_type_array));
	json_object_put(o);

	o = run_json("list-ns emu:nn=3,size=1M -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_object_array_length(jget(o, "nsid_list")), 3);
	json_object_put(o);
}

/* Write through the driver with a file backend, then read the counters with nvp. */
/*
 * nvp list on a machine whose NVMe functions cannot all be taken (the fake sysfs of
 * test/common/fake_sysfs.sh: one bound to nvme, one in a non-viable IOMMU group, one with
 * no driver): each is named with its reason on stderr and under "Skipped" in JSON.
 */
static void
test_list_skipped(void)
{
	char src[PATH_MAX], root[sizeof(g_dir) + 8], cmd[2 * PATH_MAX];
	struct json_object *o, *sk;

	snprintf(src, sizeof(src), "%s", __FILE__);
	snprintf(root, sizeof(root), "%s/sys", g_dir);
	snprintf(cmd, sizeof(cmd), "bash '%s/../../common/fake_sysfs.sh' '%s'", dirname(src), root);
	CU_ASSERT_EQUAL_FATAL(fx_run_shell(cmd), 0);
	setenv("NVP_SYSFS_ROOT", root, 1);
	o = run_json("list -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "Skipped", &sk));
	CU_ASSERT_EQUAL(json_object_array_length(sk), 3);
	CU_ASSERT_STRING_EQUAL(jstr(json_object_array_get_idx(sk, 0), "Address"), "0000:01:00.0");
	CU_ASSERT_STRING_EQUAL(jstr(json_object_array_get_idx(sk, 0), "Reason"),
			       "bound to nvme (kernel driver): run scripts/setup.sh config");
	json_object_put(o);
	CU_ASSERT_EQUAL(run("list"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(
		g_run.err,
		"0000:01:00.0: bound to nvme (kernel driver): run scripts/setup.sh config\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "0000:05:00.0: IOMMU group 5 is not viable"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "0000:06:00.0: no driver bound"));
	unsetenv("NVP_SYSFS_ROOT");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CU_ASSERT_EQUAL(fx_run_shell(cmd), 0);
}

static void
test_smart_log(void)
{
	char opts[PATH_MAX + 64], args[PATH_MAX + 128];
	struct json_object *o, *o2;
	struct fx_ctrlr fx;
	void *buf;

	snprintf(opts, sizeof(opts), "size=1M,backend=file:%s/smart", g_dir);
	CU_ASSERT_EQUAL_FATAL(fx_open(&fx, opts), 0);
	buf = fx_dma_alloc(4096);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, (uint64_t)i * 8, 8, 0, NULL),
				0);
	}
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 8, 0, NULL), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);

	snprintf(args, sizeof(args), "smart-log emu:%s -o json", opts);
	o = run_json(args);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(jint(o, "host_write_commands"), 5);
	CU_ASSERT_EQUAL(jint(o, "host_read_commands"), 1);
	CU_ASSERT_EQUAL(jint(o, "data_units_written"), 1); /* 20 KiB: one unit, rounded up */
	CU_ASSERT_EQUAL(jint(o, "critical_warning"), 0);
	CU_ASSERT_EQUAL(jint(o, "avail_spare"), 100);
	CU_ASSERT(jint(o, "temperature") > 273);
	CU_ASSERT_EQUAL(jint(o, "media_errors"), 0);
	CU_ASSERT_TRUE(json_object_object_get_ex(o, "num_err_log_entries", NULL));
	CU_ASSERT_TRUE(json_object_object_get_ex(o, "power_on_hours", NULL));
	/* each nvp run is a power cycle of the controller the file describes */
	o2 = run_json(args);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o2);
	CU_ASSERT_EQUAL(jint(o2, "power_cycles"), jint(o, "power_cycles") + 1);
	CU_ASSERT_EQUAL(jint(o2, "host_write_commands"), 5);
	json_object_put(o);
	json_object_put(o2);
}

static void
test_error_log_and_features(void)
{
	struct json_object *o;

	o = run_json("error-log emu:size=1M -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_object_array_length(jget(o, "errors")), 64); /* ELPE + 1 */
	CU_ASSERT_EQUAL(jint(json_object_array_get_idx(jget(o, "errors"), 0), "error_count"), 0);
	json_object_put(o);

	o = run_json("set-feature emu:size=1M -f 6 -v 0 + get-feature emu:size=1M -f 6 -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(jint(o, "feature_id"), 6);
	CU_ASSERT_EQUAL(jint(o, "value"), 0);
	json_object_put(o);
	CU_ASSERT_EQUAL(run("get-feature emu:size=1M -f 6 -H"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "Volatile Write Cache Enable (WCE): Enabled"));

	/* no -f: every supported feature, one nvme-cli line each, the unsupported skipped */
	CU_ASSERT_EQUAL(run("get-feature emu:size=1M"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "get-feature:0x06 (Volatile Write Cache), "
						 "Current value:0x00000001"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "get-feature:0x07 (Number of Queues)"));
	CU_ASSERT_PTR_NULL(strstr(g_run.out, "get-feature:0x42"));
	CU_ASSERT_STRING_EQUAL(g_run.err, "");

	/* an unsupported feature: the NVMe status, by name, exit 1 */
	CU_ASSERT_EQUAL(run("get-feature emu:size=1M -f 0x42"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: Invalid Field in Command (0x2)"));
}

static void
test_format(void)
{
	struct json_object *o;

	o = run_json("format emu:size=1M --lbaf 1 --force + id-ns emu:size=1M -o json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "Success formatting namespace:1"));
	CU_ASSERT_EQUAL(jint(o, "flbas") & 0xf, 1);
	CU_ASSERT_EQUAL(jint(o, "nsze"), (1 << 20) / 4096);
	json_object_put(o);

	/* No --force and no terminal: refused, exit 1, nothing after it runs. */
	CU_ASSERT_EQUAL(run("format emu:size=1M --lbaf 1 + id-ns emu:size=1M -o json"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "--force"));
	CU_ASSERT_EQUAL(g_run.out_len, 0);

	/* Formats the controller does not offer: its status by name. */
	CU_ASSERT_EQUAL(run("format emu:size=1M --lbaf 5 --force"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: Invalid Format (0x10a)"));
	CU_ASSERT_EQUAL(run("format emu:size=1M --ses 2 --force"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: Invalid Field in Command"));
}

static void
test_firmware(void)
{
	char path[PATH_MAX], args[3 * PATH_MAX];
	struct json_object *o, *slots = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fw.bin", g_dir);
	f = fopen(path, "wb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("NVPT-2.0", f); /* the revision: the image's first 8 bytes */
	for (int i = 0; i < 4088; i++) {
		fputc(i & 0xff, f);
	}
	fclose(f);

	snprintf(args, sizeof(args),
		 "fw-download emu:size=1M --fw '%s' + fw-commit emu:size=1M --slot 2 --action 1 "
		 "+ reset emu:size=1M + fw-log emu:size=1M -o json",
		 path);
	o = run_json(args);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	json_object_object_foreach(o, key, val)
	{
		(void)key;
		slots = val;
	}
	CU_ASSERT_EQUAL(jint(slots, "Active Firmware Slot (afi)") & 7, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(jstr(slots, "Firmware Rev Slot 2"), "(NVPT-2.0)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(jstr(slots, "Firmware Rev Slot 1"), "(1.0.....)"));
	json_object_put(o);

	/* action 3 on a controller that needs a reset: committed, says so, exit 0; FR of
	 * id-ctrl changes after the reset */
	snprintf(args, sizeof(args),
		 "fw-download emu:size=1M -f '%s' + fw-commit emu:size=1M -s 3 -a 3 + reset "
		 "emu:size=1M + id-ctrl emu:size=1M -o json",
		 path);
	o = run_json(args);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "requires a reset"));
	CU_ASSERT_STRING_EQUAL(jstr(o, "fr"), "NVPT-2.0");
	json_object_put(o);

	/* slot 1 is read-only; commit with nothing downloaded; a missing file */
	CU_ASSERT_EQUAL(run("fw-commit emu:size=1M -s 1 -a 1"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: Invalid Firmware Slot (0x106)"));
	CU_ASSERT_EQUAL(run("fw-commit emu:size=1M -s 2 -a 1"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "NVMe status: Invalid Firmware Image (0x107)"));
	CU_ASSERT_EQUAL(run("fw-download emu:size=1M --fw /nonexistent/fw.bin"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "/nonexistent/fw.bin"));
	/* a directory: say so, not just "cannot read" */
	CU_ASSERT_EQUAL(run("fw-download emu:size=1M --fw /"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "'/' is a directory"));
}

/* Every bad flag or value: exit 2, a message and the hint, nothing on stdout. */
static void
test_usage_errors(void)
{
	static const char *const bad[] = {
		"",
		"bogus",
		"id-ctrl",
		"id-ctrl emu: --bogus",
		"id-ctrl emu: -z",
		"id-ctrl emu: -o xml",
		"id-ctrl emu: -o",
		"id-ctrl emu: extra",
		"id-ctrl emu: --lbaf 1",
		"id-ctrl emu:bogus=1",
		"id-ctrl emu:nn=99",
		"id-ctrl not-a-device",
		"id-ctrl 'trtype:bogus'",
		"id-ns emu: -n",
		"id-ns emu: -n abc",
		"id-ns emu: -n 0",
		"id-ns emu: -n 4294967296",
		"id-ns emu: -H=1",
		"smart-log emu: -n -1",
		"error-log emu: -e 0",
		"error-log emu: -e 1000",
		"get-feature emu: -f 256",
		"get-feature emu: -b",
		"get-feature emu: -f 6 -s 9",
		"get-feature emu: -f 6 --cdw11 x",
		"set-feature emu: -f 6",
		"set-feature emu: -f 6 -v 0x100000000",
		"format emu: --lbaf 16",
		"format emu: --lbaf",
		"format emu: --ses 3",
		"format emu: --force=yes",
		"fw-download emu:",
		"fw-download emu: --fw",
		"fw-commit emu: --slot 8",
		"fw-commit emu: --action 4",
		"fw-commit emu: --action x",
		"reset emu: -o json",
		"list -o binary",
		"show-regs emu: -o binary",
		"show-regs",
		"list emu: extra",
		"help nope",
		"version x",
		"id-ctrl emu: +",
		"+ id-ctrl emu:",
		"id-ctrl emu: + bogus",
	};

	for (size_t i = 0; i < NVP_COUNTOF(bad); i++) {
		int rc = run(bad[i]);

		if (rc != 2 || strstr(g_run.err, "nvp help") == NULL || g_run.out_len != 0) {
			fprintf(stderr, "  nvp %s: exit %d, stderr '%s', %zu bytes on stdout\n",
				bad[i], rc, g_run.err, g_run.out_len);
		}
		CU_ASSERT_EQUAL(rc, 2);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "nvp help"));
		CU_ASSERT_EQUAL(g_run.out_len, 0);
	}
}

static void
test_help_and_attach_failure(void)
{
	CU_ASSERT_EQUAL(run("help"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "id-ctrl"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "\n  serve           serve "));
	CU_ASSERT_EQUAL(run("--help"), 0);
	CU_ASSERT_EQUAL(run("help format"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "--lbaf"));
	CU_ASSERT_EQUAL(run("format --help"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "--force"));
	CU_ASSERT_EQUAL(run("help emu"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "backend"));
	/* every command 'nvp help' lists has its help, bdev-list's too */
	CU_ASSERT_EQUAL(run("help bdev-list"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "--json-config"));
	CU_ASSERT_EQUAL(run("version"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.out, "nvp version"));
	/* well-formed but absent: exit 1 with a message */
	CU_ASSERT_EQUAL(run("id-ctrl 10fff:00:1f.7"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "cannot attach"));
}

static int
cleanup_dir(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "id_ctrl", test_id_ctrl },
		{ "id_ns", test_id_ns },
		{ "list", test_list },
		{ "list_skipped", test_list_skipped },
		{ "smart_log", test_smart_log },
		{ "error_log_and_features", test_error_log_and_features },
		{ "format", test_format },
		{ "firmware", test_firmware },
		{ "usage_errors", test_usage_errors },
		{ "help_and_attach_failure", test_help_and_attach_failure },
	};
	int rc;

	if (find_program() != 0) {
		fprintf(stderr, "nvp_cli: %s not found: build the apps first (make)\n", g_prog);
		return 1;
	}
	if (mkdtemp(g_dir) == NULL) {
		fprintf(stderr, "nvp_cli: mkdtemp %s: %s\n", g_dir, strerror(errno));
		return 1;
	}
	rc = fx_main(argc, argv, "nvp_cli", tests, NVP_COUNTOF(tests));
	free(g_run.out);
	free(g_run.err);
	if (cleanup_dir() != 0) {
		fprintf(stderr, "nvp_cli: could not remove %s\n", g_dir);
	}
	return rc;
}
