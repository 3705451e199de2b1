/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/perf/perf_job.c: a --job string's keys, each bad key or value refused
 * with a message naming it, the keys not given taken from the flags, the mode's keys
 * checked against the mode, r= matching a -r, and where a sequential job starts per core.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>

#include "../../../../app/perf/perf_opts.c"
#include "../../../../app/perf/perf_bdev_opts.c"
#include "../../../../app/perf/perf_msg.c"
#include "../../../../app/perf/perf_job.c"

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

/* "trtype:T name:N traddr:A": enough of lib/nvme's parser for r= to match. */
int
nvp_nvme_transport_id_parse(struct nvp_nvme_transport_id *trid, const char *str)
{
	const char *p;

	memset(trid, 0, sizeof(*trid));
	if (strncmp(str, "trtype:", 7) != 0) {
		return -EINVAL;
	}
	p = strstr(str, "name:");
	if (p != NULL) {
		snprintf(trid->name, sizeof(trid->name), "%.*s", (int)strcspn(p + 5, " "), p + 5);
	}
	p = strstr(str, "traddr:");
	if (p != NULL) {
		snprintf(trid->traddr, sizeof(trid->traddr), "%.*s", (int)strcspn(p + 7, " "),
			 p + 7);
	}
	return 0;
}

static struct perf_opts g_o;

/* Parse @line (words split at spaces; a word in '' may hold spaces). */
static int
parse(const char *line)
{
	static char buf[1024];
	char *argv[64], *p;
	int argc = 0;

	snprintf(buf, sizeof(buf), "nvp_perf %s", line);
	for (p = buf; *p != '\0' && argc < 63;) {
		char end = ' ';

		if (*p == '\'') {
			end = '\'';
			p++;
		}
		argv[argc++] = p;
		while (*p != '\0' && *p != end) {
			p++;
		}
		if (*p == end && end == '\'') {
			*p++ = '\0';
		}
		while (*p == ' ') {
			*p++ = '\0';
		}
	}
	argv[argc] = NULL;
	return perf_opts_parse(&g_o, argc, argv);
}

/* Did the last parse fail with a message holding @what? */
static bool
refused_naming(int rc, const char *what)
{
	char buf[PERF_MSG_MAX];

	if (rc != -EINVAL || perf_msg_usage(buf, sizeof(buf)) == NULL ||
	    strstr(buf, what) == NULL) {
		fprintf(stderr, "  rc %d, message '%s', expected one naming '%s'\n", rc,
			perf_msg_usage(buf, sizeof(buf)) != NULL ? buf : "", what);
		return false;
	}
	return true;
}

static void
test_keys(void)
{
	const struct perf_job *j;

	CU_ASSERT_EQUAL_FATAL(parse("--job name=r,w=randrw,q=3,o=8k,M=70,core=1"), 0);
	CU_ASSERT_EQUAL(g_o.num_jobs, 1);
	j = &g_o.jobs[0];
	CU_ASSERT_STRING_EQUAL(j->name, "r");
	CU_ASSERT(j->named && j->from_flag);
	CU_ASSERT_STRING_EQUAL(j->workload, "randrw");
	CU_ASSERT(j->random);
	CU_ASSERT_EQUAL(j->read_pct, 70);
	CU_ASSERT_EQUAL(j->queue_depth, 3);
	CU_ASSERT_EQUAL(j->io_size, 8192);
	CU_ASSERT_EQUAL(j->core_mask, 2);
	CU_ASSERT_EQUAL(g_o.run_mask, 2);
	CU_ASSERT_EQUAL(parse("--bdev-config x --job b=m0,tenant=2:4,class=background,hint=long"),
			0);
	j = &g_o.jobs[0];
	CU_ASSERT_STRING_EQUAL(j->bdev, "m0");
	CU_ASSERT_EQUAL(j->tenant, 2);
	CU_ASSERT_EQUAL(j->weight, 4);
	CU_ASSERT_EQUAL(perf_job_write_flags(j),
			nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, NVP_NVME_WRITE_HINT_LONG));
	CU_ASSERT_EQUAL(parse("--bdev-config x --job tenant=1,weight=9"), 0);
	CU_ASSERT_EQUAL(g_o.jobs[0].weight, 9);
	/* an empty job: all the flags' values */
	CU_ASSERT_EQUAL(parse("--job ''"), 0);
	CU_ASSERT_EQUAL(g_o.num_jobs, 1);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[0].name, "job0");
}

/* Keys not given take the flags' values; -M only for a mix. */
static void
test_defaults(void)
{
	CU_ASSERT_EQUAL_FATAL(parse("-q 7 -o 16k -w rw -M 20 -c 0x1 --job name=a --job "
				    "name=b,w=randread --job w=randrw"),
			      0);
	CU_ASSERT_EQUAL(g_o.num_jobs, 3);
	CU_ASSERT_EQUAL(g_o.jobs[0].queue_depth, 7);
	CU_ASSERT_EQUAL(g_o.jobs[0].io_size, 16384);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[0].workload, "rw");
	CU_ASSERT_EQUAL(g_o.jobs[0].read_pct, 20);
	CU_ASSERT_EQUAL(g_o.jobs[0].core_mask, 1);
	CU_ASSERT_EQUAL(g_o.jobs[1].read_pct, 100);
	CU_ASSERT_EQUAL(g_o.jobs[2].read_pct, 20);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[2].name, "job2");
	CU_ASSERT(!g_o.jobs[2].named);
	/* without --job: one job of the flags, as before */
	CU_ASSERT_EQUAL(parse("-q 5 -w randwrite"), 0);
	CU_ASSERT_EQUAL(g_o.num_jobs, 1);
	CU_ASSERT_EQUAL(g_o.jobs[0].queue_depth, 5);
	CU_ASSERT_EQUAL(g_o.jobs[0].read_pct, 0);
	CU_ASSERT(!g_o.jobs[0].from_flag);
	/* the bdev options before any -b are every job's */
	CU_ASSERT_EQUAL(parse("--bdev-config x --tenant 3:2 --write-class sync --job b=a --job "
			      "b=b,tenant=4"),
			0);
	CU_ASSERT_EQUAL(g_o.jobs[0].tenant, 3);
	CU_ASSERT_EQUAL(g_o.jobs[0].weight, 2);
	CU_ASSERT_EQUAL(g_o.jobs[1].tenant, 4);
	CU_ASSERT_EQUAL(g_o.jobs[1].weight, -1);
	CU_ASSERT_EQUAL(g_o.jobs[1].write_class, NVP_BDEV_WRITE_SYNC);
}

static void
test_bad(void)
{
	static const struct {
		const char *line, *names;
	} bad[] = {
		{ "--job q=0", "q=0" },
		{ "--job q=x", "q=x" },
		{ "--job o=100", "o=100" },
		{ "--job w=readwrite", "w=readwrite" },
		{ "--job M=101,w=rw", "M=101" },
		{ "--job w=read,M=30", "M=30" },
		{ "--job bogus=1", "'bogus'" },
		{ "--job q", "'q'" },
		{ "--job q=1,", "''" },
		{ "--job q=1,,o=4k", "''" },
		{ "--job ,q=1", "''" },
		{ "--job =5", "'=5': expected key=value" },
		{ "--job name:a", "'name:a': expected key=value" },
		{ "--job q=99999999999999999999", "q=99999999999999999999" },
		{ "--job q=", "q=" },
		{ "--job q=1,q=2", "'q' given twice" },
		{ "--job core=0,c=0x1", "given twice" },
		{ "--job name=", "name=" },
		{ "--job name=a/b", "name=a/b" },
		{ "--job name=a --job name=a", "two jobs" },
		{ "--job c=0", "c=0" },
		{ "--job b=m0", "b=" },
		{ "--job hint=short", "hint=" },
		{ "--job r=emu9", "r=emu9" },
		{ "--bdev-config x --job r=emu0", "r= and ns=" },
		{ "--bdev-config x --job ns=1", "r= and ns=" },
		{ "--bdev-config x --job tenant=64", "tenant=64" },
		{ "--bdev-config x --job class=urgent", "class=urgent" },
		{ "--bdev-config x --job weight=2", "weight=2 needs tenant=" },
		{ "--bdev-config x --job weight=0,tenant=1", "weight=0" },
		{ "--bdev-config x -b m0 --job q=1", "-b and --job" },
		{ "--bdev-config x --job q=1 -b m0", "-b and --job" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool ok = refused_naming(parse(bad[i].line), bad[i].names);

		if (!ok) {
			fprintf(stderr, "  for \"%s\"\n", bad[i].line);
		}
		CU_ASSERT(ok);
	}
}

/* r= names a -r by its name:, its traddr: or its whole text. */
static void
test_ctrlr_match(void)
{
	CU_ASSERT(perf_job_ctrlr_matches("trtype:emu name:emu1 nn:2", "emu1"));
	CU_ASSERT(perf_job_ctrlr_matches("trtype:emu name:emu1 nn:2", "trtype:emu name:emu1 nn:2"));
	CU_ASSERT(perf_job_ctrlr_matches("trtype:PCIe traddr:0000:01:00.0", "0000:01:00.0"));
	CU_ASSERT(!perf_job_ctrlr_matches("trtype:emu name:emu1", "emu"));
	CU_ASSERT_EQUAL(parse("-r 'trtype:emu name:e1' -r 'trtype:emu name:e2' --job r=e2,ns=1"),
			0);
	CU_ASSERT_STRING_EQUAL(g_o.jobs[0].ctrlr, "e2");
	CU_ASSERT_EQUAL(g_o.jobs[0].nsid, 1);
}

/* A sequential job's cores start at evenly spread slots; its only core at 0. */
static void
test_seq_start(void)
{
	struct perf_job j;

	perf_job_init(&j);
	j.core_mask = 0x16; /* cores 1, 2, 4 */
	CU_ASSERT_EQUAL(perf_job_seq_start(&j, 1, 300), 0);
	CU_ASSERT_EQUAL(perf_job_seq_start(&j, 2, 300), 100);
	CU_ASSERT_EQUAL(perf_job_seq_start(&j, 4, 300), 200);
	j.core_mask = 1;
	CU_ASSERT_EQUAL(perf_job_seq_start(&j, 0, 300), 0);
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite("perf_job", NULL, NULL);
	CU_add_test(suite, "keys", test_keys);
	CU_add_test(suite, "defaults from the flags", test_defaults);
	CU_add_test(suite, "bad keys and values", test_bad);
	CU_add_test(suite, "r= matches a -r", test_ctrlr_match);
	CU_add_test(suite, "sequential start per core", test_seq_start);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
