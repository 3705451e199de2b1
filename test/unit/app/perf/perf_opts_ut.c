/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/perf/perf_opts.c: defaults, every flag, suffixes, -M before or after
 * -w, -LL, and the values that must be refused (-EINVAL, which nvp_perf turns into exit 2).
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>

#include "../../../../app/perf/perf_opts.c"
#include "../../../../app/perf/perf_bdev_opts.c"
#include "../../../../app/perf/perf_msg.c"
#include "../../../../app/perf/perf_job.c"

/* The transport ID parser is lib/nvme's; the options ask whether it accepts, and the
 * trtype (its software controller options are checked): "trtype:T rest" -> T, rest. */
int
nvp_nvme_transport_id_parse(struct nvp_nvme_transport_id *trid, const char *str)
{
	const char *sp;

	memset(trid, 0, sizeof(*trid));
	if (strncmp(str, "trtype:", 7) != 0) {
		return -EINVAL;
	}
	sp = strchr(str, ' ');
	snprintf(trid->trstring, sizeof(trid->trstring), "%.*s",
		 (int)(sp != NULL ? (size_t)(sp - str - 7) : strlen(str + 7)), str + 7);
	snprintf(trid->args, sizeof(trid->args), "%s", sp != NULL ? sp + 1 : "");
	return 0;
}

/* lib/emu's option parser: "bogus..." is an unknown key. */
void
nvp_emu_opts_init(struct nvp_emu_opts *opts, size_t opts_size)
{
	memset(opts, 0, opts_size);
}

int
nvp_emu_opts_parse(struct nvp_emu_opts *opts, const char *str, char *err, size_t errlen)
{
	(void)opts;
	if (strstr(str, "bogus") != NULL) {
		snprintf(err, errlen, "emu: unknown option 'bogus'");
		return -EINVAL;
	}
	return 0;
}

/* lib/emu's table of options: --help prints it after perf's own flags. */
static int g_emu_usage_calls;

void
nvp_emu_opts_usage(FILE *f)
{
	(void)f;
	g_emu_usage_calls++;
}

static struct perf_opts g_o;

/* Parse a space-separated command line (no quoting). */
static int
parse(const char *line)
{
	static char buf[512];
	char *argv[64], *p;
	int argc = 0;

	snprintf(buf, sizeof(buf), "nvp_perf %s", line);
	for (p = buf; *p != '\0' && argc < 63;) {
		argv[argc++] = p;
		while (*p != '\0' && *p != ' ') {
			p++;
		}
		while (*p == ' ') {
			*p++ = '\0';
		}
	}
	argv[argc] = NULL;
	return perf_opts_parse(&g_o, argc, argv);
}

static void
test_defaults(void)
{
	CU_ASSERT_EQUAL(parse(""), 0);
	CU_ASSERT_EQUAL(g_o.queue_depth, 32);
	CU_ASSERT_EQUAL(g_o.io_size, 4096);
	CU_ASSERT_STRING_EQUAL(g_o.workload, "randread");
	CU_ASSERT(g_o.random);
	CU_ASSERT_EQUAL(g_o.read_pct, 100);
	CU_ASSERT_EQUAL(g_o.time_s, 5);
	CU_ASSERT_EQUAL(g_o.core_mask, 1);
	CU_ASSERT_EQUAL(g_o.qpairs_per_ns, 1);
	CU_ASSERT_EQUAL(g_o.latency_level, 0);
	CU_ASSERT_EQUAL(g_o.num_trids, 1);
	CU_ASSERT_STRING_EQUAL(g_o.trids[0], PERF_DEFAULT_TRID);
	CU_ASSERT_PTR_NULL(g_o.json_path);
	CU_ASSERT_PTR_NULL(g_o.plot_path);
	CU_ASSERT_EQUAL(g_o.warmup_s, 0);
	CU_ASSERT_EQUAL(g_o.io_timeout_ms, PERF_DEFAULT_IO_TIMEOUT_MS);
	CU_ASSERT_STRING_EQUAL(g_o.cmdline, "");
}

static void
test_all_flags(void)
{
	CU_ASSERT_EQUAL(parse("-q 7 -o 128k -w write -t 3 -c 0x1 -P 4 -LL -s 512 --no-huge "
			      "--json a.json --plot b.svg -r trtype:emu -r trtype:PCIe"),
			0);
	CU_ASSERT_EQUAL(g_o.queue_depth, 7);
	CU_ASSERT_EQUAL(g_o.io_size, 128 * 1024);
	CU_ASSERT_STRING_EQUAL(g_o.workload, "write");
	CU_ASSERT(!g_o.random);
	CU_ASSERT_EQUAL(g_o.read_pct, 0);
	CU_ASSERT_EQUAL(g_o.time_s, 3);
	CU_ASSERT_EQUAL(g_o.qpairs_per_ns, 4);
	CU_ASSERT_EQUAL(g_o.latency_level, 2);
	CU_ASSERT_EQUAL(g_o.mem_mb, 512);
	CU_ASSERT(g_o.no_huge);
	CU_ASSERT_STRING_EQUAL(g_o.json_path, "a.json");
	CU_ASSERT_STRING_EQUAL(g_o.plot_path, "b.svg");
	CU_ASSERT_EQUAL(g_o.num_trids, 2);
	CU_ASSERT_STRING_EQUAL(g_o.trids[1], "trtype:PCIe");
	/* the plot's title: flags as typed, without -r and output paths */
	CU_ASSERT_STRING_EQUAL(g_o.cmdline, "-q 7 -o 128k -w write -t 3 -c 0x1 -P 4 -LL -s 512 "
					    "--no-huge");
	CU_ASSERT_EQUAL(parse("-o 1M"), 0);
	CU_ASSERT_EQUAL(g_o.io_size, 1024 * 1024);
	CU_ASSERT_EQUAL(parse("-a 3 --io-timeout 250 -t 2"), 0);
	CU_ASSERT_EQUAL(g_o.warmup_s, 3);
	CU_ASSERT_EQUAL(g_o.io_timeout_ms, 250);
	CU_ASSERT_EQUAL(g_o.think_ns, 0);
	CU_ASSERT_STRING_EQUAL(g_o.cmdline, "-a 3 --io-timeout 250 -t 2");
	CU_ASSERT_EQUAL(parse("--think-ns 2500"), 0);
	CU_ASSERT_EQUAL(g_o.think_ns, 2500);
	CU_ASSERT_STRING_EQUAL(g_o.cmdline, "--think-ns 2500");
	CU_ASSERT_EQUAL(parse("--think-ns x"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--think-ns 10000001"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--think-ns -1"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--json -"), 0);
	CU_ASSERT_STRING_EQUAL(g_o.json_path, "-");
}

static void
test_mix(void)
{
	CU_ASSERT_EQUAL(parse("-w randrw"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 50);
	CU_ASSERT(g_o.random);
	CU_ASSERT_EQUAL(parse("-w rw -M 70"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 70);
	CU_ASSERT(!g_o.random);
	CU_ASSERT_EQUAL(parse("-M 0 -w randrw"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 0);
	CU_ASSERT_EQUAL(parse("-M 100 -w rw"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 100);
	/* -M means nothing for pure workloads: ignored with a warning */
	CU_ASSERT_EQUAL(parse("-w randwrite -M 30"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 0);
	CU_ASSERT_EQUAL(parse("-M 30 -w read"), 0);
	CU_ASSERT_EQUAL(g_o.read_pct, 100);
}

/* Sizes are multiples of each namespace's sector size, checked against the namespaces:
 * 4160 = 8 x 520 (512 + 8 bytes of metadata) is not refused here for not dividing by 512. */
static void
test_io_size_extended(void)
{
	CU_ASSERT_EQUAL(parse("-o 4160"), 0);
	CU_ASSERT_EQUAL(g_o.io_size, 4160);
	CU_ASSERT_EQUAL(parse("-o 1m"), 0);
	CU_ASSERT_EQUAL(g_o.io_size, 1u << 20);
}

static void
test_poll(void)
{
	CU_ASSERT_EQUAL(parse(""), 0);
	CU_ASSERT_PTR_NULL(g_o.poll_mode);
	CU_ASSERT_EQUAL(parse("--poll hybrid:p5"), 0);
	CU_ASSERT_STRING_EQUAL(g_o.poll_mode, "hybrid:p5");
	CU_ASSERT_EQUAL(parse("--poll irq -q 1"), 0);
	CU_ASSERT_STRING_EQUAL(g_o.poll_mode, "irq");
}

static void
test_help(void)
{
	g_emu_usage_calls = 0;
	CU_ASSERT_EQUAL(parse("-h"), 1);
	CU_ASSERT_EQUAL(parse("--help"), 1);
	/* the software controller's options are listed too */
	CU_ASSERT_EQUAL(g_emu_usage_calls, 2);
}

static void
test_bad_values(void)
{
	static const char *const bad[] = {
		"-q 0",     "-q 65537",       "-q -1",
		"-q 1x",    "-o 0",           "-o 100",
		"-o 4096x", "-o 2G",          "-w readwrite",
		"-w",       "-M 101",         "-M x",
		"-t 0",     "-t 86401",       "-c 0",
		"-c 0x",    "-c 1x",          "-P 0",
		"-P 65",    "-s 0",           "-s x",
		"-r bogus", "--bogus",        "-Z",
		"stray",    "-a -1",          "-a 3601",
		"-a x",     "--io-timeout 0", "--io-timeout x",
		"--plot -", "--poll spin",    "--poll fixed:0",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i]);

		if (rc != -EINVAL) {
			fprintf(stderr, "  \"%s\" -> %d\n", bad[i], rc);
		}
		CU_ASSERT_EQUAL(rc, -EINVAL);
	}
}

static void
test_core_mask(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char line[64];

	CU_ASSERT_EQUAL(parse("-c 1"), 0);
	CU_ASSERT_EQUAL(g_o.core_mask, 1);
	if (ncpu < 64) {
		snprintf(line, sizeof(line), "-c 0x%llx", 1ull << ncpu);
		CU_ASSERT_EQUAL(parse(line), -EINVAL);
		snprintf(line, sizeof(line), "-c 0x%llx", (1ull << ncpu) - 1);
		CU_ASSERT_EQUAL(parse(line), 0);
		CU_ASSERT_EQUAL(g_o.core_mask, (1ull << ncpu) - 1);
	}
}

/* A bad software controller option is a usage error found while parsing (exit 2), with
 * the option named in the message the JSON keeps; other transports are not asked. */
static void
test_emu_opts_checked(void)
{
	char buf[PERF_MSG_MAX];

	CU_ASSERT_EQUAL(parse("-r trtype:emu"), 0);
	CU_ASSERT_EQUAL(parse("-r trtype:PCIe"), 0);
	CU_ASSERT_EQUAL(parse("-r trtype:emu -r trtype:emu"), 0);
	CU_ASSERT_PTR_NULL(perf_msg_usage(buf, sizeof(buf)));
	CU_ASSERT_EQUAL(parse("-q 2 -r trtype:emu bogus:1"), -EINVAL);
}

/* Every usage error is kept (the first one) for the JSON, getopt's own complaints too. */
static void
test_usage_message_kept(void)
{
	char buf[PERF_MSG_MAX];

	CU_ASSERT_EQUAL(parse("-q 0 -o 1"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(perf_msg_usage(buf, sizeof(buf)));
	CU_ASSERT(strstr(buf, "-q queue depth value '0'") != NULL);
	CU_ASSERT_EQUAL(parse("--bogus"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(perf_msg_usage(buf, sizeof(buf)));
	CU_ASSERT(strstr(buf, "unrecognized option '--bogus'") != NULL);
	CU_ASSERT_EQUAL(parse("-q"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(perf_msg_usage(buf, sizeof(buf)));
	CU_ASSERT(strstr(buf, "option '-q' requires an argument") != NULL);
	CU_ASSERT_EQUAL(parse("-Z"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(perf_msg_usage(buf, sizeof(buf)));
	CU_ASSERT(strstr(buf, "invalid option -- 'Z'") != NULL);
	CU_ASSERT_EQUAL(parse("-q 4"), 0);
	CU_ASSERT_PTR_NULL(perf_msg_usage(buf, sizeof(buf)));
}

static void
test_too_many_trids(void)
{
	char line[512] = "";
	int i;

	for (i = 0; i < PERF_MAX_TRIDS + 1; i++) {
		strncat(line, "-r trtype:emu ", sizeof(line) - strlen(line) - 1);
	}
	CU_ASSERT_EQUAL(parse(line), -EINVAL);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("perf_opts", NULL, NULL);
	CU_add_test(suite, "defaults", test_defaults);
	CU_add_test(suite, "all flags", test_all_flags);
	CU_add_test(suite, "rw mix", test_mix);
	CU_add_test(suite, "io size extended", test_io_size_extended);
	CU_add_test(suite, "help", test_help);
	CU_add_test(suite, "--poll", test_poll);
	CU_add_test(suite, "bad values", test_bad_values);
	CU_add_test(suite, "core mask", test_core_mask);
	CU_add_test(suite, "too many -r", test_too_many_trids);
	CU_add_test(suite, "emu options checked", test_emu_opts_checked);
	CU_add_test(suite, "usage message kept", test_usage_message_kept);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
