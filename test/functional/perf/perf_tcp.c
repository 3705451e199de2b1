/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf against an NVMe/TCP target (the tests' own, serving a software controller from
 * this process): its rows name the target (address, port and subsystem), not "TCP ()",
 * and it reports no SQ doorbell writes (they are PCIe's; a TCP queue has none).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "fixture.h"
#include "subproc.h"
#include "nvme_tcp_tgt.h"

static char g_prog[PATH_MAX];
static char g_out[65536];

static void
test_tcp_rows(void)
{
	struct tcp_tgt_opts o;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	char trid[512], args[1024], row[256];

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	CU_ASSERT_EQUAL_FATAL(fx_open(&backend, "size=4M,lba=512"), 0);
	tcp_tgt_opts_init(&o);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &tgt), 0);
	tcp_tgt_trid(tgt, "", trid, sizeof(trid));
	snprintf(args, sizeof(args), "--no-huge -t 1 -q 4 -r '%s'", trid);
	CU_ASSERT_EQUAL(fx_run_capture(g_prog, args, g_out, sizeof(g_out)), 0);
	snprintf(row, sizeof(row), "TCP (127.0.0.1:%u %s) NSID 1 from core  0", tcp_tgt_port(tgt),
		 o.subnqn);
	if (strstr(g_out, row) == NULL) {
		printf("\n    expected \"%s\" in the output of the last run", row);
	}
	CU_ASSERT(strstr(g_out, row) != NULL);
	CU_ASSERT(strstr(g_out, "TCP ()") == NULL);
	CU_ASSERT(strstr(g_out, "SQ doorbell") == NULL);
	CU_ASSERT(strstr(g_out, "us per I/O") != NULL);
	tcp_tgt_stop(tgt);
	fx_close(&backend);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "tcp_rows", test_tcp_rows },
	};

	if (fx_find_program("../../bin/nvp_perf", g_prog, sizeof(g_prog)) != 0) {
		printf("SKIP: build/bin/nvp_perf not built\n");
		return 77;
	}
	return fx_main(argc, argv, "perf_tcp", tests, sizeof(tests) / sizeof(tests[0]));
}
