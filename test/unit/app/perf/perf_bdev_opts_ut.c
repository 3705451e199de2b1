/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/perf/perf_bdev_opts.c: -b and a configuration select the bdev mode
 * (no default controller then), -b without a configuration, a configuration given twice,
 * -r beside a configuration and -P in bdev mode are refused (nvp_perf exits 2); --sched,
 * --wbt, and the per -b --tenant, --write-hint, --write-class.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>

#include "../../../../app/perf/perf_opts.c"
#include "../../../../app/perf/perf_bdev_opts.c"
#include "../../../../app/perf/perf_msg.c"
#include "../../../../app/perf/perf_job.c"

/* lib/emu's table of options, which --help prints: not linked here. */
void
nvp_emu_opts_usage(FILE *f)
{
	(void)f;
}

void
nvp_emu_opts_init(struct nvp_emu_opts *opts, size_t opts_size)
{
	memset(opts, 0, opts_size);
}

int
nvp_emu_opts_parse(struct nvp_emu_opts *opts, const char *str, char *err, size_t errlen)
{
	(void)opts;
	(void)str;
	(void)err;
	(void)errlen;
	return 0;
}

int
nvp_nvme_transport_id_parse(struct nvp_nvme_transport_id *trid, const char *str)
{
	memset(trid, 0, sizeof(*trid));
	return strncmp(str, "trtype:", 7) == 0 ? 0 : -EINVAL;
}

static struct perf_opts g_o;

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
test_bdev_mode(void)
{
	CU_ASSERT_EQUAL(parse("-b m0 --bdev-config malloc:name=m0,num_blocks=8 -q 4"), 0);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 1);
	CU_ASSERT_EQUAL(g_o.num_jobs, 1); /* each -b is a job */
	CU_ASSERT_STRING_EQUAL(g_o.jobs[0].bdev, "m0");
	CU_ASSERT_STRING_EQUAL(g_o.bdev_config, "malloc:name=m0,num_blocks=8");
	CU_ASSERT_EQUAL(g_o.num_trids, 0); /* no default controller in bdev mode */
	CU_ASSERT_EQUAL(g_o.queue_depth, 4);

	CU_ASSERT_EQUAL(parse("--json-config c.json -b a -b b"), 0);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 2);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[1].bdev, "b");
	CU_ASSERT_STRING_EQUAL(g_o.bdev_config, "c.json");

	/* a configuration alone: every bdev it makes, one job */
	CU_ASSERT_EQUAL(parse("--json-config c.json"), 0);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 0);
	CU_ASSERT_EQUAL(g_o.num_jobs, 1);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[0].bdev, "");

	/* the raw mode is untouched */
	CU_ASSERT_EQUAL(parse("-q 2"), 0);
	CU_ASSERT_PTR_NULL(g_o.bdev_config);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 0);
	CU_ASSERT_EQUAL(g_o.num_trids, 1);
}

static void
test_bdev_bad(void)
{
	CU_ASSERT_EQUAL(parse("-b m0"), -EINVAL);
	CU_ASSERT_EQUAL(parse("-b m0 --json-config a --bdev-config b"), -EINVAL);
	CU_ASSERT_EQUAL(parse("-b m0 --json-config a -r trtype:emu"), -EINVAL);
	CU_ASSERT_EQUAL(parse("-b m0 --json-config a -P 2"), -EINVAL);
	CU_ASSERT_EQUAL(parse("-b"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--json-config"), -EINVAL);
	CU_ASSERT_EQUAL(parse("-b a -b b -b c -b d -b e -b f -b g -b h -b i -b j -b k -b l -b m "
			      "-b n -b o -b p -b q --json-config x"),
			-EINVAL);
}

#define CFG " --bdev-config malloc:name=m0,num_blocks=8"

/* --sched, --wbt; per -b options apply to the -b before them, or to every -b. */
static void
test_stage_opts(void)
{
	CU_ASSERT_EQUAL(parse("--sched kyber:read_lat_us=1000 --wbt 500 -b m0" CFG), 0);
	CU_ASSERT_STRING_EQUAL(g_o.sched, "kyber:read_lat_us=1000");
	CU_ASSERT(g_o.wbt_set);
	CU_ASSERT_EQUAL(g_o.wbt_lat_us, 500);
	CU_ASSERT_EQUAL(parse("--wbt off -b m0" CFG), 0);
	CU_ASSERT(g_o.wbt_set);
	CU_ASSERT_EQUAL(g_o.wbt_lat_us, 0);

	CU_ASSERT_EQUAL(parse("--write-class background --write-hint long -b a --tenant 1:3 -b b "
			      "--write-hint short --write-class sync --tenant 2" CFG),
			0);
	CU_ASSERT_EQUAL(g_o.job_default.write_class, NVP_BDEV_WRITE_BACKGROUND);
	CU_ASSERT_EQUAL(g_o.jobs[0].tenant, 1);
	CU_ASSERT_EQUAL(g_o.jobs[0].weight, 3);
	CU_ASSERT_EQUAL(g_o.jobs[1].tenant, 2);
	CU_ASSERT_EQUAL(g_o.jobs[1].weight, -1);
	/* a inherits both defaults; b overrides both */
	CU_ASSERT_EQUAL(perf_job_write_flags(&g_o.jobs[0]),
			nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, NVP_NVME_WRITE_HINT_LONG));
	CU_ASSERT_EQUAL(perf_job_write_flags(&g_o.jobs[1]),
			nvp_bdev_write_flags(NVP_BDEV_WRITE_SYNC, NVP_NVME_WRITE_HINT_SHORT));
	/* no -b (every bdev of the configuration): the defaults */
	CU_ASSERT_EQUAL(parse("--write-class background --write-hint long --tenant 3:2" CFG), 0);
	CU_ASSERT_EQUAL(perf_job_write_flags(&g_o.jobs[0]),
			nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, NVP_NVME_WRITE_HINT_LONG));
	CU_ASSERT_EQUAL(g_o.jobs[0].tenant, 3);
	CU_ASSERT_EQUAL(g_o.jobs[0].weight, 2);
	CU_ASSERT_EQUAL(parse("-b m0" CFG), 0);
	CU_ASSERT_EQUAL(perf_job_write_flags(&g_o.jobs[0]), 0);
}

static void
test_stage_opts_bad(void)
{
	CU_ASSERT_EQUAL(parse("--wbt 0 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--wbt 10000001 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--wbt -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--sched :x=1 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--tenant 64 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--tenant 1:1001 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--tenant 1: -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--tenant x -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--write-hint none2 -b m0" CFG), -EINVAL);
	CU_ASSERT_EQUAL(parse("--write-class Sync -b m0" CFG), -EINVAL);
	/* bdev-mode options in the raw mode */
	CU_ASSERT_EQUAL(parse("--sched kyber"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--wbt off"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--tenant 1"), -EINVAL);
	CU_ASSERT_EQUAL(parse("--write-hint short"), -EINVAL);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("perf_bdev_opts", NULL, NULL);
	CU_add_test(suite, "bdev mode", test_bdev_mode);
	CU_add_test(suite, "bad", test_bdev_bad);
	CU_add_test(suite, "stage and job options", test_stage_opts);
	CU_add_test(suite, "bad stage and job options", test_stage_opts_bad);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
