/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build/bin/nvp_perf as a user runs it, against the software controller: short runs
 * with --json whose numbers must agree with each other (parsed with json-c, not grepped),
 * --plot writes an SVG, every flag with a bad value exits 2 with a message and the
 * --help hint, an attach failure exits 1. The program is found relative to this test's
 * own binary (build/test/functional/ -> build/bin/).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <json.h>

#include "subproc.h"

static char g_prog[PATH_MAX];
static char g_dir[PATH_MAX - 64];
static char g_out[65536];

static int
find_program(void)
{
	return fx_find_program("../../bin/nvp_perf", g_prog, sizeof(g_prog));
}

/* Run nvp_perf with @args (shell-quoted); stdout+stderr into g_out. \return exit status. */
static int
run(const char *args)
{
	return fx_run_capture(g_prog, args, g_out, sizeof(g_out));
}

static double
num(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  JSON: no \"%s\"\n", key);
		CU_FAIL("missing JSON key");
		return NAN;
	}
	return json_object_get_double(v);
}

static json_object *
obj(json_object *o, const char *key)
{
	json_object *v = NULL;

	CU_ASSERT_FATAL(json_object_object_get_ex(o, key, &v));
	return v;
}

/* min <= p50 <= p90 <= ... <= max and min <= mean <= max. */
static void
check_latency(json_object *lat)
{
	static const char *const order[] = { "min", "p50", "p90", "p99", "p99_9", "p99_99", "max" };
	double prev = -1, v;
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		v = num(lat, order[i]);
		CU_ASSERT(v >= prev);
		if (v < prev) {
			fprintf(stderr, "  latency %s = %f < previous %f\n", order[i], v, prev);
		}
		prev = v;
	}
	CU_ASSERT(num(lat, "min") > 0);
	CU_ASSERT(num(lat, "mean") >= num(lat, "min"));
	CU_ASSERT(num(lat, "mean") <= num(lat, "max"));
}

/* Histogram counts add up to the I/Os; cumulative % rises to 100. */
static void
check_histogram(json_object *hist, double ios)
{
	size_t i, n = json_object_array_length(hist);
	double sum = 0, prev = 0;

	CU_ASSERT(n > 0);
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(hist, i);

		sum += num(b, "count");
		CU_ASSERT(num(b, "cumulative_pct") >= prev);
		CU_ASSERT(num(b, "high_us") > num(b, "low_us"));
		prev = num(b, "cumulative_pct");
	}
	CU_ASSERT_DOUBLE_EQUAL(sum, ios, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(prev, 100.0, 1e-6);
}

static json_object *
load_json(const char *path)
{
	json_object *root = json_object_from_file(path);

	if (root == NULL) {
		fprintf(stderr, "  %s: not JSON: %s\n", path, json_util_get_last_err());
	}
	return root;
}

static void
test_randread_json(void)
{
	char args[PATH_MAX * 2 + 128], json_path[PATH_MAX], svg_path[PATH_MAX];
	json_object *root, *total, *rows, *row, *cpu;
	double ios, iops, elapsed;
	char head[6] = "";
	FILE *f;

	snprintf(json_path, sizeof(json_path), "%s/perf.json", g_dir);
	snprintf(svg_path, sizeof(svg_path), "%s/perf.svg", g_dir);
	snprintf(args, sizeof(args), "-q 16 -o 4k -w randread -t 2 -L --json '%s' --plot '%s'",
		 json_path, svg_path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	/* human output: progress lines, the table, percentiles, CPU */
	CU_ASSERT(strstr(g_out, "[  1s]") != NULL);
	CU_ASSERT(strstr(g_out, "EMU (emu0) NSID 1 from core") != NULL);
	CU_ASSERT(strstr(g_out, "Total") != NULL);
	CU_ASSERT(strstr(g_out, "99.90000%") != NULL);
	CU_ASSERT(strstr(g_out, "CPU time of I/O threads") != NULL);

	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	total = obj(root, "total");
	rows = obj(root, "results");
	CU_ASSERT_EQUAL(json_object_array_length(rows), 1);
	row = json_object_array_get_idx(rows, 0);
	ios = num(total, "ios");
	iops = num(total, "iops");
	elapsed = num(row, "elapsed_s");
	CU_ASSERT(iops > 0);
	CU_ASSERT(num(total, "errors") == 0);
	CU_ASSERT(num(row, "reads") == ios && num(row, "writes") == 0);
	/* the run lasted about -t seconds; I/Os = IOPS x time */
	CU_ASSERT(elapsed >= 2.0 && elapsed < 3.0);
	CU_ASSERT(fabs(ios - iops * elapsed) <= 0.01 * ios + 1);
	CU_ASSERT_DOUBLE_EQUAL(num(total, "mib_s"), iops * 4096 / 1048576.0, 1e-6 * iops);
	check_latency(obj(total, "latency_us"));
	check_latency(obj(row, "latency_us"));
	/* Little's law: at depth 16, mean latency ~ 16 / IOPS (generous bounds) */
	CU_ASSERT(num(obj(total, "latency_us"), "mean") * 1e-6 * iops > 8);
	CU_ASSERT(num(obj(total, "latency_us"), "mean") * 1e-6 * iops < 17);
	check_histogram(obj(root, "histogram"), ios);
	/* IOPS samples every 100 ms over the 2 s window */
	CU_ASSERT(json_object_array_length(obj(root, "samples")) >= 15);
	cpu = obj(total, "cpu");
	CU_ASSERT(num(cpu, "total_s") > 0 && num(cpu, "total_s") < 2 * elapsed + 1);
	CU_ASSERT(num(cpu, "per_io_us") > 0);
	CU_ASSERT_EQUAL(num(obj(root, "config"), "queue_depth"), 16);
	json_object_put(root);

	f = fopen(svg_path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT(fread(head, 1, 4, f) == 4);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(head, "<svg");
	unlink(json_path);
	unlink(svg_path);
}

static char *
read_file(const char *path)
{
	static char buf[1 << 20];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * The plot: the title is what the user typed (not defaults such as -M 100) and the
 * targets; one labelled latency curve per device and core plus the total; the x axis in
 * nines.
 */
static void
check_plot(const char *svg_path)
{
	char *svg = read_file(svg_path);

	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT(strstr(svg, ">nvp_perf -q 8 -o 8192 -w randrw -M 70 -P 2 -t 1 -LL</text>") !=
		  NULL);
	CU_ASSERT(strstr(svg, "target: trtype:emu name:emu1 nn:2") != NULL);
	CU_ASSERT(strstr(svg, "EMU (emu1) NSID 1, core 0: p50") != NULL);
	CU_ASSERT(strstr(svg, "EMU (emu1) NSID 2, core 0: p50") != NULL);
	CU_ASSERT(strstr(svg, ">total: p50") != NULL);
	CU_ASSERT(strstr(svg, ">90%<") != NULL);
	CU_ASSERT(strstr(svg, ">99.9%<") != NULL);
	CU_ASSERT(strstr(svg, "100 ms steps") != NULL);
}

/* A 70/30 read/write mix on a device with two namespaces and two qpairs each. */
static void
test_randrw_two_ns(void)
{
	char args[PATH_MAX * 2 + 256], json_path[PATH_MAX], svg_path[PATH_MAX];
	json_object *root, *rows;
	double reads = 0, writes = 0;
	size_t i;

	snprintf(json_path, sizeof(json_path), "%s/perf_rw.json", g_dir);
	snprintf(svg_path, sizeof(svg_path), "%s/perf_rw.svg", g_dir);
	snprintf(args, sizeof(args),
		 "-q 8 -o 8192 -w randrw -M 70 -P 2 -t 1 -LL -r 'trtype:emu name:emu1 nn:2' "
		 "--json '%s' --plot '%s'",
		 json_path, svg_path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "Latency histogram for") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	rows = obj(root, "results");
	CU_ASSERT_EQUAL(json_object_array_length(rows), 2);
	for (i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		CU_ASSERT(num(row, "ios") > 0);
		CU_ASSERT(num(row, "errors") == 0);
		CU_ASSERT_EQUAL(num(row, "nsid"), i + 1);
		reads += num(row, "reads");
		writes += num(row, "writes");
	}
	/* binomial: within 4 standard deviations of 70 % (a slow sanitizer run does fewer) */
	CU_ASSERT(reads + writes > 0);
	CU_ASSERT(fabs(reads / (reads + writes) - 0.7) < 4 * sqrt(0.21 / (reads + writes)) + 0.01);
	json_object_put(root);
	check_plot(svg_path);
	unlink(json_path);
	unlink(svg_path);
}

/*
 * A preset device with its programs slowed so that every channel is busy: the reads meet
 * programs and suspend them, and nvp_perf says so under the device model's line.
 */
static void
test_preset_interference(void)
{
	unsigned long delayed = 0, reads = 0, suspended = 0;
	const char *p;

	CU_ASSERT_EQUAL_FATAL(run("-q 8 -o 65536 -w randrw -M 50 -t 1 "
				  "-r 'trtype:emu name:emu2 size:64M preset:tlc prog_mbps:50'"),
			      0);
	p = strstr(g_out, "Device model emu2: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	p = strstr(p + 1, "Device model emu2: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(sscanf(p,
			       "Device model emu2: %lu of %lu reads waited behind writes (%lu "
			       "suspended",
			       &delayed, &reads, &suspended),
			3);
	CU_ASSERT(suspended > 0 && suspended <= delayed && delayed <= reads);
}

/* I/O errors are counted and make the exit status 1. */
static void
test_io_errors_exit_1(void)
{
	CU_ASSERT_EQUAL(run("-q 4 -t 1 -r 'trtype:emu name:emu0 fault:error fault_count:3 "
			    "fault_arg:0x2'"),
			1);
	CU_ASSERT(strstr(g_out, "I/O errors") != NULL);
}

/* Larger than the controller's transfer limit (mdts=5: 128 KiB): split, not refused. */
static void
test_large_io_split(void)
{
	CU_ASSERT_EQUAL(run("-q 4 -o 1m -w randrw -t 1 -r 'trtype:emu name:emu0 mdts:5'"), 0);
	CU_ASSERT(strstr(g_out, "maximum transfer") == NULL);
	CU_ASSERT(strstr(g_out, "Total") != NULL);
	CU_ASSERT(strstr(g_out, "I/O errors") == NULL);
}

/* Extended LBAs (520 bytes): -o is a multiple of 520 (the hint perf gives works);
 * separate metadata is refused up front rather than failing every I/O. */
static void
test_metadata_formats(void)
{
	CU_ASSERT_EQUAL(run("-o 4096 -t 1 -r 'trtype:emu name:emu0 ms:8 mset:1'"), 2);
	CU_ASSERT(strstr(g_out, "try -o 4160") != NULL);
	CU_ASSERT_EQUAL(run("-q 4 -o 4160 -w randrw -t 1 -r 'trtype:emu name:emu0 ms:8 mset:1'"),
			0);
	CU_ASSERT(strstr(g_out, "Total") != NULL);
	CU_ASSERT_EQUAL(run("-o 4096 -t 1 -r 'trtype:emu name:emu0 ms:8'"), 1);
	CU_ASSERT(strstr(g_out, "separate metadata") != NULL);
	CU_ASSERT(strstr(g_out, "I/O errors") == NULL);
}

static void
test_help(void)
{
	CU_ASSERT_EQUAL(run("-h"), 0);
	CU_ASSERT(strstr(g_out, "Usage:") != NULL);
	CU_ASSERT(strstr(g_out, "--json") != NULL);
	/* the software controller's options, for -r "trtype:emu ..." */
	CU_ASSERT(strstr(g_out, "fault_arg=") != NULL);
	CU_ASSERT(strstr(g_out, "read_us=") != NULL);
}

static bool
file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * A run that cannot start (-P 64 queues of 65536 entries: no DMA memory) prints no table of
 * zeros, writes a JSON that says it failed and why, and leaves no plot.
 */
static void
test_failed_start(void)
{
	char args[PATH_MAX * 2 + 128], json_path[PATH_MAX], svg_path[PATH_MAX];
	json_object *root, *v;

	snprintf(json_path, sizeof(json_path), "%s/failed.json", g_dir);
	snprintf(svg_path, sizeof(svg_path), "%s/failed.svg", g_dir);
	snprintf(args, sizeof(args), "-q 65536 -P 64 -t 1 --json '%s' --plot '%s'", json_path,
		 svg_path);
	CU_ASSERT_EQUAL(run(args), 1);
	CU_ASSERT(strstr(g_out, "the run failed") != NULL);
	CU_ASSERT(strstr(g_out, "Total") == NULL);
	CU_ASSERT(strstr(g_out, "IOPS") == NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "failed");
	CU_ASSERT(strlen(json_object_get_string(obj(root, "error"))) > 0);
	CU_ASSERT(!json_object_object_get_ex(root, "total", &v));
	CU_ASSERT(!json_object_object_get_ex(root, "results", &v));
	json_object_put(root);
	CU_ASSERT(!file_exists(svg_path));
	unlink(json_path);
}

/* --json and --plot paths are checked before the run: exit 2 at once, nothing run. */
static void
test_bad_output_paths(void)
{
	char args[PATH_MAX * 2 + 128];

	snprintf(args, sizeof(args), "-t 30 --json '%s/no/such/dir/x.json'", g_dir);
	CU_ASSERT_EQUAL(run(args), 2);
	CU_ASSERT(strstr(g_out, "cannot create") != NULL);
	CU_ASSERT(strstr(g_out, "Launching workers") == NULL);
	snprintf(args, sizeof(args), "-t 30 --json '%s/ok.json' --plot '%s/no/such/dir/x.svg'",
		 g_dir, g_dir);
	CU_ASSERT_EQUAL(run(args), 2);
	CU_ASSERT(strstr(g_out, "cannot create") != NULL);
	CU_ASSERT(strstr(g_out, "Launching workers") == NULL);
	/* the --json file made before the --plot check failed is not left behind */
	snprintf(args, sizeof(args), "%s/ok.json", g_dir);
	CU_ASSERT(!file_exists(args));
}

/* --json -: standard output is the JSON alone (the report goes to standard error). */
static void
test_json_stdout(void)
{
	static char json[4 << 20]; /* the whole report, histogram included */
	char args[PATH_MAX + 128];
	json_object *root;

	snprintf(args, sizeof(args), "-c '\"$0\" -q 4 -t 1 --json - 2>/dev/null' '%s'", g_prog);
	CU_ASSERT_EQUAL_FATAL(fx_run_capture("/bin/sh", args, json, sizeof(json)), 0);
	root = json_tokener_parse(json);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "ok");
	CU_ASSERT(num(obj(root, "total"), "iops") > 0);
	json_object_put(root);
}

/* SIGINT ends a 30 s run early; the summary and JSON cover the time that ran. */
static void
test_sigint(void)
{
	char json_path[PATH_MAX];
	json_object *root, *row;

	snprintf(json_path, sizeof(json_path), "%s/int.json", g_dir);
	{
		char *const argv[] = {
			"nvp_perf", "-q", "4", "-t", "30", "--json", json_path, NULL
		};

		CU_ASSERT_EQUAL(fx_run_signal(g_prog, argv, 2, SIGINT, g_out, sizeof(g_out)), 0);
	}
	CU_ASSERT(strstr(g_out, "Interrupted") != NULL);
	CU_ASSERT(strstr(g_out, "Total") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "interrupted");
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT(num(row, "elapsed_s") > 0 && num(row, "elapsed_s") < 25);
	CU_ASSERT(num(row, "ios") > 0);
	json_object_put(root);
	unlink(json_path);
}

/*
 * A completion that never arrives: perf says I/O is outstanding and what the driver does,
 * the request timeout (--io-timeout) ends it, and IOPS are over the 1 s window, not the
 * drain.
 */
static void
test_lost_completion(void)
{
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root, *row, *total;

	snprintf(json_path, sizeof(json_path), "%s/drop.json", g_dir);
	snprintf(args, sizeof(args),
		 "-q 4 -t 1 --io-timeout 2000 -r 'trtype:emu name:emu0 fault:drop_cpl' "
		 "--json '%s'",
		 json_path);
	CU_ASSERT_EQUAL(run(args), 1); /* the lost request completes as an error */
	CU_ASSERT(strstr(g_out, "still outstanding") != NULL);
	CU_ASSERT(strstr(g_out, "--io-timeout") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	total = obj(root, "total");
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT_EQUAL(num(total, "errors"), 1);
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 1.9);
	CU_ASSERT(num(total, "iops") * num(row, "elapsed_s") <= num(total, "ios") + 1);
	json_object_put(root);
	unlink(json_path);
}

/* -a: a warm-up before the measured window, announced, and not in the results. */
static void
test_warmup(void)
{
	char args[PATH_MAX + 128], json_path[PATH_MAX];
	json_object *root, *row;

	snprintf(json_path, sizeof(json_path), "%s/warm.json", g_dir);
	/* a warm-up twice the window: its CPU, if counted, would show as a busy thread using
	 * more CPU than the window lasted */
	snprintf(args, sizeof(args), "-q 4 -a 2 -t 1 --json '%s'", json_path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "Warming up for 2 s") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_EQUAL(num(obj(root, "config"), "warmup_s"), 2);
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	/* the window is -t long; the warm-up's I/Os are not counted */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 1.9);
	CU_ASSERT(fabs(num(row, "ios") - num(row, "iops") * num(row, "elapsed_s")) <=
		  0.01 * num(row, "ios") + 8);
	CU_ASSERT(num(obj(root, "total"), "ios") == num(row, "ios"));
	/* nor its CPU time: a thread cannot use more CPU than the window lasted (the
	 * warm-up's CPU was counted once, which made the I/O thread "142 %" busy) */
	{
		json_object *th = json_object_array_get_idx(
			obj(obj(obj(root, "total"), "cpu"), "threads"), 0);

		CU_ASSERT_PTR_NOT_NULL_FATAL(th);
		CU_ASSERT(num(th, "cpu_s") <= num(th, "elapsed_s") * 1.05 + 0.02);
	}
	json_object_put(root);
	unlink(json_path);
}

/*
 * --think-ns: each completion spins that long before the next submit, in raw and in bdev
 * mode. At QD1 an I/O then takes at least the think time, so IOPS stay under its
 * inverse - a bound that holds on any machine, and that the software controller's
 * 100,000+ IOPS at QD1 without it would break.
 */
static void
test_think(void)
{
	static const char *const modes[] = {
		"",
		"--no-huge -b emu0n1 --bdev-config 'nvme:name=emu0,trtype=emu,size=8M'",
	};
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root;
	size_t i;

	snprintf(json_path, sizeof(json_path), "%s/think.json", g_dir);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(args, sizeof(args), "-q 1 -t 1 --think-ns 500000 %s --json '%s'", modes[i],
			 json_path);
		CU_ASSERT_EQUAL(run(args), 0);
		root = load_json(json_path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(root);
		CU_ASSERT_EQUAL(num(obj(root, "config"), "think_ns"), 500000);
		CU_ASSERT(num(obj(root, "total"), "ios") > 0);
		CU_ASSERT(num(obj(root, "total"), "iops") <= 2000.0);
		json_object_put(root);
	}
	unlink(json_path);
}

static void
test_bad_flags(void)
{
	static const char *const bad[] = {
		"-q 0",
		"-q x",
		"-o 1000",
		"-o 0",
		"-o 4q",
		"-w readwrite",
		"-M 101",
		"-M -1",
		"-t 0",
		"-t 1s",
		"-c 0",
		"-c 0x10000000000",
		"-c zz",
		"-P 0",
		"-s 0",
		"-r bogus",
		"-r 'trtype:nope'",
		"--json",
		"--bogus",
		"-x",
		"stray",
		"-o 512 -r 'trtype:emu name:emu0 lba:4096'",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run(bad[i]);

		if (rc != 2 || strstr(g_out, "--help") == NULL) {
			fprintf(stderr, "  nvp_perf %s: exit %d, output:\n%s\n", bad[i], rc, g_out);
		}
		CU_ASSERT_EQUAL(rc, 2);
		CU_ASSERT(strstr(g_out, "--help") != NULL);
	}
}

static void
test_attach_failure(void)
{
	CU_ASSERT_EQUAL(run("-t 1 -r 'trtype:PCIe traddr:0000:99:00.0'"), 1);
	CU_ASSERT(strstr(g_out, "cannot attach") != NULL);
}

#define BDEV_MALLOC "--no-huge -b m0 --bdev-config 'malloc:name=m0,num_blocks=4096'"

/* bdev mode, -a: the shared loop's warm-up, announced, not in the results. */
static void
test_bdev_warmup(void)
{
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root, *row;

	snprintf(json_path, sizeof(json_path), "%s/bwarm.json", g_dir);
	snprintf(args, sizeof(args), "-q 4 -a 1 -t 1 " BDEV_MALLOC " --json '%s'", json_path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "Warming up for 1 s") != NULL);
	CU_ASSERT(strstr(g_out, "warm-up]") != NULL || strstr(g_out, "[  1s") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 1.9);
	CU_ASSERT(fabs(num(row, "ios") - num(row, "iops") * num(row, "elapsed_s")) <=
		  0.01 * num(row, "ios") + 8);
	/* 100 ms samples of the window only */
	CU_ASSERT(json_object_array_length(obj(root, "samples")) >= 5);
	json_object_put(root);
	unlink(json_path);
}

/* bdev mode, SIGINT: ends a 30 s run early, results cover the time that ran. */
static void
test_bdev_sigint(void)
{
	char json_path[PATH_MAX];
	json_object *root, *row;

	snprintf(json_path, sizeof(json_path), "%s/bint.json", g_dir);
	{
		char *const argv[] = { "nvp_perf",
				       "-q",
				       "4",
				       "-t",
				       "30",
				       "--no-huge",
				       "-b",
				       "m0",
				       "--bdev-config",
				       "malloc:name=m0,num_blocks=4096",
				       "--json",
				       json_path,
				       NULL };

		CU_ASSERT_EQUAL(fx_run_signal(g_prog, argv, 2, SIGINT, g_out, sizeof(g_out)), 0);
	}
	CU_ASSERT(strstr(g_out, "Interrupted") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "interrupted");
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	CU_ASSERT(num(row, "elapsed_s") > 0 && num(row, "elapsed_s") < 25);
	CU_ASSERT(num(row, "ios") > 0);
	json_object_put(root);
	unlink(json_path);
}

/* bdev mode, a completion that never arrives: said, bounded by --io-timeout, exit 1. */
static void
test_bdev_drain(void)
{
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root, *row;

	snprintf(json_path, sizeof(json_path), "%s/bdrop.json", g_dir);
	snprintf(args, sizeof(args),
		 "-q 4 -t 1 --io-timeout 1000 --no-huge -b emu0n1 --bdev-config "
		 "'nvme:name=emu0,trtype=emu,size=8M,fault=drop_cpl' --json '%s'",
		 json_path);
	CU_ASSERT_EQUAL(run(args), 1);
	CU_ASSERT(strstr(g_out, "still outstanding") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	/* IOPS over the 1 s window, not the drain */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 1.9);
	CU_ASSERT(num(row, "ios") > 0);
	json_object_put(root);
	unlink(json_path);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;
	const char *tmp = getenv("TMPDIR");
	int rc = find_program();

	if (rc != 0) {
		fprintf(stderr, "perf_cli: build/bin/nvp_perf not found (%s): skipped\n",
			strerror(-rc));
		return 77;
	}
	snprintf(g_dir, sizeof(g_dir), "%s/nvp_perf_test.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("nvp_perf", NULL, NULL);
	CU_add_test(suite, "randread --json --plot", test_randread_json);
	CU_add_test(suite, "randrw two namespaces", test_randrw_two_ns);
	CU_add_test(suite, "preset device: read/write interference", test_preset_interference);
	CU_add_test(suite, "I/O errors exit 1", test_io_errors_exit_1);
	CU_add_test(suite, "-o 1m above the transfer limit", test_large_io_split);
	CU_add_test(suite, "metadata formats", test_metadata_formats);
	CU_add_test(suite, "help", test_help);
	CU_add_test(suite, "bad flags exit 2", test_bad_flags);
	CU_add_test(suite, "attach failure exit 1", test_attach_failure);
	CU_add_test(suite, "failed start: no zero results", test_failed_start);
	CU_add_test(suite, "bad --json/--plot paths exit 2 first", test_bad_output_paths);
	CU_add_test(suite, "--json - is stdout", test_json_stdout);
	CU_add_test(suite, "SIGINT reports the time that ran", test_sigint);
	CU_add_test(suite, "lost completion: not silent, bounded", test_lost_completion);
	CU_add_test(suite, "-a warm-up", test_warmup);
	CU_add_test(suite, "--think-ns, raw and bdev mode", test_think);
	CU_add_test(suite, "bdev mode: -a warm-up", test_bdev_warmup);
	CU_add_test(suite, "bdev mode: SIGINT", test_bdev_sigint);
	CU_add_test(suite, "bdev mode: bounded drain", test_bdev_drain);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	rmdir(g_dir);
	return failures == 0 ? 0 : 1;
}
