/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/perf/perf_bdev_opts.c: -b and a configuration select the bdev mode
 * (no default controller then), -b without a configuration, a configuration given twice,
 * -r beside a configuration and -P in bdev mode are refused (nvp_perf exits 2).
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>

#include "../../../../app/perf/perf_opts.c"
#include "../../../../app/perf/perf_bdev_opts.c"

/* lib/emu's table of options, which --help prints: not linked here. */
void
nvp_emu_opts_usage(FILE *f)
{
	(void)f;
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
	CU_ASSERT_STRING_EQUAL(g_o.bdev_names[0], "m0");
	CU_ASSERT_STRING_EQUAL(g_o.bdev_config, "malloc:name=m0,num_blocks=8");
	CU_ASSERT_EQUAL(g_o.num_trids, 0); /* no default controller in bdev mode */
	CU_ASSERT_EQUAL(g_o.queue_depth, 4);

	CU_ASSERT_EQUAL(parse("--json-config c.json -b a -b b"), 0);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 2);
	CU_ASSERT_STRING_EQUAL(g_o.bdev_names[1], "b");
	CU_ASSERT_STRING_EQUAL(g_o.bdev_config, "c.json");

	/* a configuration alone: every bdev it makes */
	CU_ASSERT_EQUAL(parse("--json-config c.json"), 0);
	CU_ASSERT_EQUAL(g_o.num_bdevs, 0);

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
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
