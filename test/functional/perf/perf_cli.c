/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build/bin/nvp_perf as a user runs it, against the software controller: short runs
 * with --json whose numbers must agree with each other (parsed with json-c, not grepped),
 * --plot writes an SVG, every flag with a bad value exits 2 with a message and the
 * --help hint, an attach failure exits 1. The program is found relative to this test's
 * own binary (build/test/functional/ -> build/bin/).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <json.h>

#include "subproc.h"

/* nvp_perf's line when its workers start: a signal the tests send counts from it. */
#define PERF_STARTED "Launching workers."

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

/*
 * The samples: one per 100 ms step of the window, none a sliver (the last partial step was
 * a sample of a few microseconds, which read as a drop to 0 IOPS), and together they cover
 * the window to within a step. Thread 0 kept off its core past a step takes one longer
 * sample, not two (perf_loop.c), so how many there are depends on the scheduler; but what
 * the longer samples add up to past a step each cannot exceed the time the thread was off
 * its core in the window (@off_cpu_s: its wall time less its CPU time). A period other
 * than a step on a thread that keeps its core does.
 */
static void
check_samples(json_object *samples, double elapsed, double off_cpu_s)
{
	size_t i, n = json_object_array_length(samples);
	double prev = 0, excess = 0;

	CU_ASSERT_FATAL(n > 0);
	for (i = 0; i < n; i++) {
		double t = num(json_object_array_get_idx(samples, i), "t_s");

		if (t - prev < 0.05) {
			fprintf(stderr, "  sample %zu of %zu: %.6f s after the one before\n", i, n,
				t - prev);
		}
		CU_ASSERT(t - prev >= 0.05);
		if (t - prev >= 0.15) {
			excess += t - prev - 0.1;
		}
		prev = t;
	}
	if (prev < elapsed - 0.11 || prev > elapsed + 0.01 || excess > off_cpu_s + 0.02) {
		fprintf(stderr,
			"  %zu samples, the last at %.3f s of %.3f s; %.3f s of them past a step, "
			"%.3f s off the core\n",
			n, prev, elapsed, excess, off_cpu_s);
	}
	CU_ASSERT(prev >= elapsed - 0.11 && prev <= elapsed + 0.01);
	CU_ASSERT(excess <= off_cpu_s + 0.02);
}

/* A progress line: "[ Ns]" at the start of a line, N a whole number of seconds. */
static bool
progress_line(const char *out)
{
	const char *p = out;

	while (p != NULL) {
		unsigned int secs;
		char s[2];

		if (sscanf(p, "[%u%1[s]]", &secs, s) == 2) {
			return true;
		}
		p = strchr(p, '\n');
		p = p != NULL ? p + 1 : NULL;
	}
	return false;
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
	CU_ASSERT(
		progress_line(g_out)); /* "[  1s]", or later if the thread was kept off its core */
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
	/* each completion resubmits at once, so the window closes with all 16 out: the drain
	 * completes them, and they are counted apart from the window's I/Os */
	CU_ASSERT_EQUAL(num(total, "drained"), 16);
	CU_ASSERT_EQUAL(num(row, "drained"), 16);
	CU_ASSERT_EQUAL(num(total, "drain_errors"), 0);
	/* the run lasted -t seconds, and more only by the time its thread was kept off its
	 * core (the window closes when the thread next looks); I/Os = IOPS x time */
	CU_ASSERT(elapsed >= 2.0);
	CU_ASSERT(elapsed - 2.0 <= elapsed - num(obj(total, "cpu"), "total_s") + 0.1);
	CU_ASSERT(fabs(ios - iops * elapsed) <= 0.01 * ios + 1);
	CU_ASSERT_DOUBLE_EQUAL(num(total, "mib_s"), iops * 4096 / 1048576.0, 1e-6 * iops);
	check_latency(obj(total, "latency_us"));
	check_latency(obj(row, "latency_us"));
	/* Little's law: at depth 16, mean latency ~ 16 / IOPS (generous bounds; the window's
	 * I/Os spent at most 16 x its time in flight, so the product cannot pass 16) */
	CU_ASSERT(num(obj(total, "latency_us"), "mean") * 1e-6 * iops > 8);
	CU_ASSERT(num(obj(total, "latency_us"), "mean") * 1e-6 * iops < 17);
	check_histogram(obj(root, "histogram"), ios);
	/* IOPS samples every 100 ms over the 2 s window */
	check_samples(obj(root, "samples"), elapsed, elapsed - num(obj(total, "cpu"), "total_s"));
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
	/* an IOPS curve per namespace, each in the legend, and the total; curves that
	 * coincide told apart by their dash patterns */
	CU_ASSERT(strstr(svg, ">EMU (emu1) NSID 1: mean ") != NULL);
	CU_ASSERT(strstr(svg, ">EMU (emu1) NSID 2: mean ") != NULL);
	CU_ASSERT(strstr(svg, ">total: mean ") != NULL);
	CU_ASSERT(strstr(svg, "stroke-dasharray=") != NULL);
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

/* Occurrences of @needle in @hay. */
static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay != NULL; hay = strstr(hay + 1, needle)) {
		n++;
	}
	return n;
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

/*
 * --json and --plot paths are checked before the run: exit 2 at once, nothing run. When
 * --plot's is the bad one, the --json file says so (a usage error writes its JSON).
 */
static void
test_bad_output_paths(void)
{
	char args[PATH_MAX * 2 + 128];
	json_object *root;

	snprintf(args, sizeof(args), "-t 30 --json '%s/no/such/dir/x.json'", g_dir);
	CU_ASSERT_EQUAL(run(args), 2);
	CU_ASSERT(strstr(g_out, "cannot create") != NULL);
	CU_ASSERT(strstr(g_out, "Launching workers") == NULL);
	snprintf(args, sizeof(args), "-t 30 --json '%s/ok.json' --plot '%s/no/such/dir/x.svg'",
		 g_dir, g_dir);
	CU_ASSERT_EQUAL(run(args), 2);
	CU_ASSERT(strstr(g_out, "cannot create") != NULL);
	CU_ASSERT(strstr(g_out, "Launching workers") == NULL);
	snprintf(args, sizeof(args), "%s/ok.json", g_dir);
	root = load_json(args);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "usage_error");
	CU_ASSERT(strstr(json_object_get_string(obj(root, "error")), "--plot") != NULL);
	json_object_put(root);
	unlink(args);
}

/* @text as one JSON value and nothing else but white space, or NULL (said why). */
static json_object *
parse_whole_json(const char *text)
{
	json_tokener *tok = json_tokener_new();
	size_t len = strlen(text), used;
	json_object *root;

	root = json_tokener_parse_ex(tok, text, (int)len);
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (root == NULL) {
		fprintf(stderr, "  standard output is not JSON: \"%.80s\"\n", text);
		return NULL;
	}
	while (used < len && (text[used] == ' ' || text[used] == '\n')) {
		used++;
	}
	if (used != len) {
		fprintf(stderr, "  standard output has more than JSON: \"%.80s\"\n", text + used);
		json_object_put(root);
		return NULL;
	}
	return root;
}

/*
 * --json -: standard output is the JSON alone (the report goes to standard error), in the
 * raw and in the bdev mode (whose banner was printed before the JSON).
 */
static void
test_json_stdout(void)
{
	static const char *const modes[] = {
		"-q 4 -t 1",
		"-q 4 -t 1 --no-huge -b m0 --bdev-config malloc:name=m0,num_blocks=4096",
		"-q 4 -t 1 --no-huge -b emu0n1 --bdev-config nvme:name=emu0,trtype=emu,size=8M",
	};
	static char json[4 << 20]; /* the whole report, histogram included */
	char args[PATH_MAX + 256];
	json_object *root;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(args, sizeof(args), "-c '\"$0\" %s --json - 2>/dev/null' '%s'", modes[i],
			 g_prog);
		CU_ASSERT_EQUAL_FATAL(fx_run_capture("/bin/sh", args, json, sizeof(json)), 0);
		root = parse_whole_json(json);
		CU_ASSERT_PTR_NOT_NULL_FATAL(root);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "ok");
		CU_ASSERT(num(obj(root, "total"), "iops") > 0);
		json_object_put(root);
	}
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

		CU_ASSERT_EQUAL(fx_run_signal_ready(g_prog, argv, PERF_STARTED, 2, SIGINT, g_out,
						    sizeof(g_out)),
				0);
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
		 "-q 4 -t 1 --io-timeout 3000 -r 'trtype:emu name:emu0 fault:drop_cpl' "
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
	/* the request times out (3 s) after the 1 s window: an error of the drain, which
	 * fails the run but is no result of the window */
	CU_ASSERT_EQUAL(num(total, "errors"), 0);
	CU_ASSERT_EQUAL(num(total, "drain_errors"), 1);
	CU_ASSERT_EQUAL(num(row, "drain_errors"), 1);
	/* a window that took in the drain would last the request timeout at least (3 s):
	 * what is below that is the window, however late a loaded machine ran the loop */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 2.9);
	CU_ASSERT(num(total, "iops") * num(row, "elapsed_s") <= num(total, "ios") + 1);
	json_object_put(root);
	unlink(json_path);
}

/*
 * A device that makes no progress in the whole window (here every read takes 4 s, past
 * the 1 s window even when a loaded machine keeps the thread off its core at its end): not a 0-IOPS result with exit 0, but a failed run that says why (on a
 * starved machine the software controller's thread can do the same).
 */
static void
test_no_progress(void)
{
	CU_ASSERT_EQUAL(
		run("-q 2 -t 1 --io-timeout 10000 -r 'trtype:emu name:emu0 read_us=4000000'"), 1);
	CU_ASSERT(strstr(g_out, "no I/O completed in the") != NULL);
	CU_ASSERT(strstr(g_out, "with 2 requests out: the device made no progress") != NULL);
	CU_ASSERT(strstr(g_out, "Connection timed out") == NULL);
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
	/* the window is -t long (one that took in the warm-up would be 3 s at least); the
	 * warm-up's I/Os are not counted */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 2.9);
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
	/* nor its commands and doorbells: those of the window are its I/Os, give or take
	 * the -q 4 in flight at either end (the warm-up's made it three times as many) */
	{
		const char *p = strstr(g_out, "SQ doorbell writes:");
		unsigned long dbs = 0, cmds = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL(sscanf(p, "SQ doorbell writes: %lu for %lu commands", &dbs, &cmds),
				2);
		CU_ASSERT(cmds <= num(row, "ios") + 8);
		CU_ASSERT(cmds + 8 >= num(row, "ios"));
		/* the JSON has the same window's counts, the CQ's too, and their sum per I/O */
		{
			json_object *d = obj(obj(root, "total"), "doorbells");
			unsigned long cqdbs = 0;

			CU_ASSERT_PTR_NOT_NULL_FATAL(d);
			CU_ASSERT_EQUAL(num(d, "sq_writes"), dbs);
			CU_ASSERT_EQUAL(num(d, "commands"), cmds);
			p = strstr(g_out, "CQ doorbell writes:");
			CU_ASSERT_PTR_NOT_NULL_FATAL(p);
			CU_ASSERT_EQUAL(sscanf(p, "CQ doorbell writes: %lu", &cqdbs), 1);
			CU_ASSERT_EQUAL(num(d, "cq_writes"), cqdbs);
			CU_ASSERT(cmds > 0 && fabs(num(d, "mmio_per_io") -
						   (double)(dbs + cqdbs) / (double)cmds) < 1e-9);
		}
	}
	json_object_put(root);
	unlink(json_path);
}

/*
 * SIGINT during the warm-up (raw and bdev mode): nothing was measured, and the report
 * says so instead of a table of the warm-up's I/O; the JSON's status says so, with no
 * result rows and 0 I/Os; no plot is left.
 */
static void
test_sigint_in_warmup(void)
{
	static const char *const bdev[] = { "--no-huge", "-b", "m0", "--bdev-config",
					    "malloc:name=m0,num_blocks=4096" };
	char json_path[PATH_MAX], svg_path[PATH_MAX];
	json_object *root;
	int mode;

	snprintf(json_path, sizeof(json_path), "%s/intwarm.json", g_dir);
	snprintf(svg_path, sizeof(svg_path), "%s/intwarm.svg", g_dir);
	for (mode = 0; mode < 2; mode++) {
		char *argv[20] = { "nvp_perf", "-q",     "4",       "-a",     "30",    "-t",
				   "5",        "--json", json_path, "--plot", svg_path };
		int argc = 11, i;

		for (i = 0; mode == 1 && i < 5; i++) {
			argv[argc++] = (char *)bdev[i];
		}
		argv[argc] = NULL;
		CU_ASSERT_EQUAL(fx_run_signal_ready(g_prog, argv, PERF_STARTED, 2, SIGINT, g_out,
						    sizeof(g_out)),
				0);
		CU_ASSERT(strstr(g_out, "Interrupted during the warm-up") != NULL);
		CU_ASSERT(strstr(g_out, "Total") == NULL);
		CU_ASSERT(strstr(g_out, "from core") == NULL);
		CU_ASSERT(strstr(g_out, "SQ doorbell") == NULL);
		root = load_json(json_path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(root);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")),
				       "interrupted_warmup");
		CU_ASSERT_EQUAL(json_object_array_length(obj(root, "results")), 0);
		CU_ASSERT_EQUAL(num(obj(root, "total"), "ios"), 0);
		json_object_put(root);
		CU_ASSERT(!file_exists(svg_path));
		unlink(json_path);
	}
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
		/* the software controller's options: usage errors as a bad trtype is */
		"-r 'trtype:emu name:emu0 bogus:1'",
		"-r 'trtype:emu name:emu0 read_us:x'",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run(bad[i]);

		CU_ASSERT_EQUAL(rc, 2);
		/* the hint once (a library's message may carry it already) */
		CU_ASSERT_EQUAL(count(g_out, "--help"), 1);
		CU_ASSERT(strstr(g_out, "the run failed") == NULL);
	}
}

/*
 * A usage error writes a JSON that says so and why when --json was given, before or after
 * the bad option, to a file or to standard output (and then nothing else there); one
 * found once the targets are known (-o against a 4 KiB sector) too, with the config.
 */
static void
test_usage_error_json(void)
{
	static const char *const lines[] = {
		"-q 0 --json '%s'",
		"--json '%s' -q 0",
		"--json '%s' --bogus",
		"--json '%s' -r 'trtype:emu name:emu0 bogus:1'",
		"-t 1 -o 512 -r 'trtype:emu name:emu0 lba:4096' --json '%s'",
	};
	static const char *const why[] = { "'0'", "'0'", "--bogus", "bogus", "-o 512" };
	char args[PATH_MAX + 256], json_path[PATH_MAX], out[4096];
	json_object *root;
	size_t i;

	snprintf(json_path, sizeof(json_path), "%s/usage.json", g_dir);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		unlink(json_path);
		snprintf(args, sizeof(args), lines[i], json_path);
		CU_ASSERT_EQUAL(run(args), 2);
		root = load_json(json_path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(root);
		CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "usage_error");
		CU_ASSERT(strstr(json_object_get_string(obj(root, "error")), why[i]) != NULL);
		json_object_put(root);
	}
	unlink(json_path);
	snprintf(args, sizeof(args), "-c '\"$0\" -q 0 --json - 2>/dev/null' '%s'", g_prog);
	CU_ASSERT_EQUAL(fx_run_capture("/bin/sh", args, out, sizeof(out)), 2);
	root = parse_whole_json(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "usage_error");
	json_object_put(root);
}

/* A free TCP port on 127.0.0.1 (nobody listens there once this returns). */
static int
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
		port = ntohs(a.sin_port);
	}
	if (fd >= 0) {
		close(fd);
	}
	return port;
}

/*
 * A failed attach's JSON says why as the driver said it ("Connection refused"), not
 * "message above"; the attach failure exits 1.
 */
static void
test_failure_reason_json(void)
{
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root;
	int port = free_port();

	CU_ASSERT_FATAL(port > 0);
	snprintf(json_path, sizeof(json_path), "%s/refused.json", g_dir);
	snprintf(args, sizeof(args),
		 "-t 1 -r 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d "
		 "subnqn:nqn.2026-01.io.nvpoll:none' --json '%s'",
		 port, json_path);
	CU_ASSERT_EQUAL(run(args), 1);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(root, "status")), "failed");
	CU_ASSERT(strstr(json_object_get_string(obj(root, "error")), "Connection refused") != NULL);
	CU_ASSERT(strstr(json_object_get_string(obj(root, "error")), "message above") == NULL);
	json_object_put(root);
	unlink(json_path);
}

/*
 * The README says to leave the software controller a core: an I/O thread on every core
 * the process may use is warned about; a mask that leaves one is not.
 */
static void
test_core_warning(void)
{
	cpu_set_t set;
	uint64_t all = 0;
	char args[64];
	int cpu;

	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof(set), &set), 0);
	for (cpu = 0; cpu < 64; cpu++) {
		if (CPU_ISSET(cpu, &set)) {
			all |= 1ull << cpu;
		}
	}
	snprintf(args, sizeof(args), "-t 1 -q 1 -c 0x%llx", (unsigned long long)all);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "leave it a core") != NULL);
	if (__builtin_popcountll(all) < 2) {
		return;
	}
	snprintf(args, sizeof(args), "-t 1 -q 1 -c 0x%llx", (unsigned long long)(all & (all - 1)));
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "leave it a core") == NULL);
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
	json_object *root, *row, *times;

	snprintf(json_path, sizeof(json_path), "%s/bwarm.json", g_dir);
	snprintf(args, sizeof(args), "-q 4 -a 2 -t 1 " BDEV_MALLOC " --json '%s'", json_path);
	CU_ASSERT_EQUAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "Warming up for 2 s") != NULL);
	CU_ASSERT(strstr(g_out, "warm-up]") != NULL || strstr(g_out, "[  1s") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	/* a window that took in the 2 s warm-up would be 3 s at least */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 2.9);
	CU_ASSERT(fabs(num(row, "ios") - num(row, "iops") * num(row, "elapsed_s")) <=
		  0.01 * num(row, "ios") + 8);
	/* 100 ms samples of the window only */
	check_samples(obj(root, "samples"), num(row, "elapsed_s"),
		      num(row, "elapsed_s") - num(obj(obj(root, "total"), "cpu"), "total_s"));
	/* the bdev layer's own view counts the warm-up's reads as well; no stage queues
	 * them (no scheduler), and its device time cannot exceed the run's worst latency */
	times = obj(obj(json_object_array_get_idx(obj(root, "bdevs"), 0), "times"), "read");
	CU_ASSERT(num(times, "ios") > num(row, "ios"));
	CU_ASSERT(num(times, "device_mean_us") > 0);
	CU_ASSERT(num(times, "device_mean_us") <= num(obj(row, "latency_us"), "max"));
	CU_ASSERT_EQUAL(num(times, "queued_mean_us"), 0);
	CU_ASSERT(strstr(g_out, "read (the bdev layer's view, warm-up included)") != NULL);
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

		CU_ASSERT_EQUAL(fx_run_signal_ready(g_prog, argv, PERF_STARTED, 2, SIGINT, g_out,
						    sizeof(g_out)),
				0);
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
		 "-q 4 -t 1 --io-timeout 3000 --no-huge -b emu0n1 --bdev-config "
		 "'nvme:name=emu0,trtype=emu,size=8M,fault=drop_cpl' --json '%s'",
		 json_path);
	CU_ASSERT_EQUAL(run(args), 1);
	CU_ASSERT(strstr(g_out, "still outstanding") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	row = json_object_array_get_idx(obj(root, "results"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(row);
	/* IOPS over the 1 s window, not the drain (which lasts the 3 s request timeout at
	 * least: a bound with room for a loaded machine that still tells the two apart) */
	CU_ASSERT(num(row, "elapsed_s") >= 1.0 && num(row, "elapsed_s") < 2.9);
	CU_ASSERT(num(row, "ios") > 0);
	json_object_put(root);
	unlink(json_path);
}

/* The element of array @arr whose @key is the string @val. */
static json_object *
find(json_object *arr, const char *key, const char *val)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;

		if (json_object_object_get_ex(o, key, &v) &&
		    strcmp(json_object_get_string(v), val) == 0) {
			return o;
		}
	}
	fprintf(stderr, "  no %s = %s\n", key, val);
	return NULL;
}

/*
 * Two jobs in one run (--job), each with its own pattern, depth and size, on one
 * namespace: a row each, named after the job, with the reads and writes of its own
 * pattern; the jobs' table; per-job JSON from each one's own I/Os. The device's writes
 * take at least 1 ms and its reads no time: had the reader's I/Os been counted in the
 * writer's histogram, the writer's minimum would be under 1 ms.
 */
static void
test_jobs(void)
{
	char args[PATH_MAX * 2 + 512], json_path[PATH_MAX], svg_path[PATH_MAX];
	json_object *root, *rows, *jobs, *r, *w, *th;
	char *svg;

	snprintf(json_path, sizeof(json_path), "%s/jobs.json", g_dir);
	snprintf(svg_path, sizeof(svg_path), "%s/jobs.svg", g_dir);
	snprintf(args, sizeof(args),
		 "-t 1 -r 'trtype:emu name:emu0 write_us:1000 channels:8' "
		 "--job name=reader,w=randread,q=1 --job name=writer,w=write,q=4,o=8k "
		 "--json '%s' --plot '%s'",
		 json_path, svg_path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	CU_ASSERT(strstr(g_out, "reader: EMU (emu0) NSID 1 from core  0") != NULL);
	CU_ASSERT(strstr(g_out, "writer: EMU (emu0) NSID 1 from core  0") != NULL);
	CU_ASSERT(strstr(g_out, "Job ") != NULL);
	CU_ASSERT(strstr(g_out, "jobs reader, writer") != NULL);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	rows = obj(root, "results");
	CU_ASSERT_EQUAL(json_object_array_length(rows), 2);
	r = find(rows, "job", "reader");
	w = find(rows, "job", "writer");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT(num(r, "reads") > 0 && num(r, "writes") == 0);
	CU_ASSERT(num(w, "writes") > 0 && num(w, "reads") == 0);
	CU_ASSERT_DOUBLE_EQUAL(num(w, "mib_s"), num(w, "iops") * 8192 / 1048576.0,
			       1e-6 * num(w, "iops") + 1e-9);
	jobs = obj(root, "jobs");
	CU_ASSERT_EQUAL(json_object_array_length(jobs), 2);
	r = find(jobs, "name", "reader");
	w = find(jobs, "name", "writer");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT(num(obj(w, "latency_us"), "min") >= 1000.0);
	CU_ASSERT_EQUAL(num(r, "latency_samples"), num(r, "ios"));
	CU_ASSERT_EQUAL(num(w, "latency_samples"), num(w, "writes"));
	check_latency(obj(r, "latency_us"));
	th = json_object_array_get_idx(obj(r, "threads"), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(th);
	CU_ASSERT(num(th, "cpu_s") > 0);
	CU_ASSERT(num(th, "involuntary_ctx_switches") >= 0);
	CU_ASSERT(json_object_is_type(obj(th, "preempted"), json_type_boolean));
	CU_ASSERT_EQUAL(num(th, "jobs_on_thread"), 2);
	w = find(obj(obj(root, "config"), "jobs"), "name", "writer");
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(num(w, "io_size"), 8192);
	CU_ASSERT_EQUAL(num(w, "queue_depth"), 4);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(obj(w, "workload")), "write");
	CU_ASSERT_EQUAL(json_object_array_length(obj(
				json_object_array_get_idx(obj(root, "samples"), 0), "job_iops")),
			2);
	json_object_put(root);
	svg = read_file(svg_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT(strstr(svg, ">reader: EMU (emu0) NSID 1, core 0: p50") != NULL);
	CU_ASSERT(strstr(svg, ">reader: EMU (emu0) NSID 1: mean ") != NULL);
	CU_ASSERT(strstr(svg, ">writer: EMU (emu0) NSID 1: mean ") != NULL);
	unlink(json_path);
	unlink(svg_path);
}

/* A job's keys not given take the flags' values; r= and ns= pick its targets. */
static void
test_jobs_defaults_and_targets(void)
{
	char args[PATH_MAX + 256], json_path[PATH_MAX];
	json_object *root, *jobs, *rows;

	snprintf(json_path, sizeof(json_path), "%s/jobs2.json", g_dir);
	snprintf(args, sizeof(args),
		 "-t 1 -q 2 -o 8k -w randrw -M 30 -r 'trtype:emu name:emu1 nn:2' "
		 "--job name=a --job name=b,q=3,ns=2,r=emu1,M=90 --json '%s'",
		 json_path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	root = load_json(json_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	jobs = obj(obj(root, "config"), "jobs");
	CU_ASSERT_EQUAL(num(json_object_array_get_idx(jobs, 0), "queue_depth"), 2);
	CU_ASSERT_EQUAL(num(json_object_array_get_idx(jobs, 0), "io_size"), 8192);
	CU_ASSERT_EQUAL(num(json_object_array_get_idx(jobs, 0), "read_percent"), 30);
	CU_ASSERT_EQUAL(num(json_object_array_get_idx(jobs, 1), "queue_depth"), 3);
	CU_ASSERT_EQUAL(num(json_object_array_get_idx(jobs, 1), "read_percent"), 90);
	/* a: both namespaces; b: namespace 2 only */
	rows = obj(root, "results");
	CU_ASSERT_EQUAL(json_object_array_length(rows), 3);
	CU_ASSERT(strstr(g_out, "a: EMU (emu1) NSID 1 from core") != NULL);
	CU_ASSERT(strstr(g_out, "a: EMU (emu1) NSID 2 from core") != NULL);
	CU_ASSERT(strstr(g_out, "b: EMU (emu1) NSID 2 from core") != NULL);
	CU_ASSERT(strstr(g_out, "b: EMU (emu1) NSID 1") == NULL);
	json_object_put(root);
	unlink(json_path);
}

/* A bad --job exits 2 with a message that names the key (and the hint once). */
static void
test_jobs_bad(void)
{
	static const struct {
		const char *args, *names;
	} bad[] = {
		{ "--job q=0", "q=0" },
		{ "--job 'name=x,bogus=1'", "'bogus'" },
		{ "--job w=readwrite", "w=readwrite" },
		{ "--job 'q=1,q=2'", "'q' given twice" },
		{ "--job q", "'q'" },
		{ "--job 'name=x y'", "name=x y" },
		{ "--job o=1000", "o=1000" },
		{ "--job c=0", "c=0" },
		{ "--job core=999", "core=999" },
		{ "--job 'w=read,M=30'", "M=30" },
		{ "--job name=a --job name=a", "two jobs" },
		{ "--job b=m0", "b=" },
		{ "--job tenant=1", "tenant=" },
		{ "--job r=nope", "r=nope" },
		{ "--job ns=9", "ns=9" },
		{ "--job 'name=big,o=1m' -r 'trtype:emu name:emu0 size=512k'", "o=1048576" },
		{ "--job 'name=odd,o=4608' -r 'trtype:emu name:emu0 lba:4096'", "try o=8192" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char args[256];
		int rc;

		snprintf(args, sizeof(args), "-t 1 %s", bad[i].args);
		rc = run(args);
		CU_ASSERT_EQUAL(rc, 2);
		CU_ASSERT(strstr(g_out, bad[i].names) != NULL);
		CU_ASSERT_EQUAL(count(g_out, "--help"), 1);
	}
}

/* The title lines of @svg ("<text ... class='t'>"): each at most @width characters,
 * together @want. */
static void
check_title(const char *svg, const char *want, size_t width)
{
	char joined[2048] = "";
	const char *p;
	int lines = 0;

	for (p = strstr(svg, "class='t'>"); p != NULL; p = strstr(p + 1, "class='t'>")) {
		const char *text = p + strlen("class='t'>");
		size_t len = strcspn(text, "<");

		if (strncmp(text, "Latency by", 10) == 0 || strncmp(text, "IOPS over", 9) == 0) {
			continue; /* the plots' own titles */
		}
		CU_ASSERT(len <= width);
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%.*s",
			 lines++ ? " " : "", (int)len, text);
	}
	if (strcmp(joined, want) != 0) {
		fprintf(stderr, "  title \"%s\"\n  wanted \"%s\"\n", joined, want);
	}
	CU_ASSERT_STRING_EQUAL(joined, want);
	CU_ASSERT(lines > 1);
}

/*
 * The plot of a long bdev-mode command line: the title wrapped into lines that fit, none
 * cut off; the target line names the bdev, its configuration and the stages (it was empty
 * in bdev mode); an IOPS curve per job.
 */
static void
test_plot_long_title_bdev(void)
{
	char args[PATH_MAX + 512], svg_path[PATH_MAX];
	char *svg;

	snprintf(svg_path, sizeof(svg_path), "%s/long.svg", g_dir);
	snprintf(args, sizeof(args),
		 "-t 1 --no-huge --io-timeout 5000 --sched fair --wbt 2000 "
		 "--bdev-config malloc:name=m0,num_blocks=4096 "
		 "--job name=a_reader_with_a_long_name,b=m0,w=randread,q=1 "
		 "--job name=a_writer_with_a_long_name,b=m0,w=write,q=4,o=8k,class=background "
		 "--plot '%s'",
		 svg_path);
	CU_ASSERT_EQUAL_FATAL(run(args), 0);
	svg = read_file(svg_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	check_title(svg,
		    "nvp_perf -t 1 --no-huge --io-timeout 5000 --sched fair --wbt 2000 "
		    "--bdev-config malloc:name=m0,num_blocks=4096 "
		    "--job name=a_reader_with_a_long_name,b=m0,w=randread,q=1 "
		    "--job name=a_writer_with_a_long_name,b=m0,w=write,q=4,o=8k,class=background",
		    80);
	CU_ASSERT(strstr(svg,
			 "target: bdev m0 (malloc) from --bdev-config "
			 "malloc:name=m0,num_blocks=4096; --sched fair; --wbt 2000 us") != NULL);
	CU_ASSERT(strstr(svg, ">a_reader_with_a_long_name: BDEV m0 (malloc): mean ") != NULL);
	CU_ASSERT(strstr(svg, ">a_writer_with_a_long_name: BDEV m0 (malloc): mean ") != NULL);
	unlink(svg_path);
}

static const struct {
	const char *name;
	void (*fn)(void);
} g_tests[] = {
	{ "randread --json --plot", test_randread_json },
	{ "randrw two namespaces", test_randrw_two_ns },
	{ "preset device: read/write interference", test_preset_interference },
	{ "I/O errors exit 1", test_io_errors_exit_1 },
	{ "-o 1m above the transfer limit", test_large_io_split },
	{ "metadata formats", test_metadata_formats },
	{ "help", test_help },
	{ "bad flags exit 2", test_bad_flags },
	{ "attach failure exit 1", test_attach_failure },
	{ "failed start: no zero results", test_failed_start },
	{ "bad --json/--plot paths exit 2 first", test_bad_output_paths },
	{ "--json - is stdout", test_json_stdout },
	{ "SIGINT reports the time that ran", test_sigint },
	{ "SIGINT during the warm-up", test_sigint_in_warmup },
	{ "lost completion: not silent, bounded", test_lost_completion },
	{ "no progress in the window: a failure, not 0 IOPS", test_no_progress },
	{ "-a warm-up", test_warmup },
	{ "--think-ns, raw and bdev mode", test_think },
	{ "bdev mode: -a warm-up", test_bdev_warmup },
	{ "bdev mode: SIGINT", test_bdev_sigint },
	{ "bdev mode: bounded drain", test_bdev_drain },
	{ "usage error JSON", test_usage_error_json },
	{ "failure reason in the JSON", test_failure_reason_json },
	{ "-c without a core for the software controller", test_core_warning },
	{ "jobs: two patterns, two rows", test_jobs },
	{ "jobs: defaults and targets", test_jobs_defaults_and_targets },
	{ "jobs: bad --job exits 2", test_jobs_bad },
	{ "plot: long title, bdev target", test_plot_long_title_bdev },
};

/* perf_cli [SUBSTRING...]: the tests whose names contain one of them (default: all). */
static bool
selected(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strstr(name, argv[i]) != NULL) {
			return true;
		}
	}
	return argc < 2;
}

int
main(int argc, char **argv)
{
	unsigned int failures;
	CU_pSuite suite;
	const char *tmp = getenv("TMPDIR");
	int rc = find_program();
	size_t i;

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
	suite = fx_add_suite("nvp_perf");
	for (i = 0; i < sizeof(g_tests) / sizeof(g_tests[0]); i++) {
		if (selected(argc, argv, g_tests[i].name)) {
			CU_add_test(suite, g_tests[i].name, g_tests[i].fn);
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	rmdir(g_dir);
	return failures == 0 ? 0 : 1;
}
