/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf --poll in bdev mode, as a user runs it: each waiting mode over an nvme bdev on
 * the software controller runs to the end and reports what the waiter did (irq mode with
 * interrupt channels: the waits and the controller's interrupts are there); a bdev whose
 * module has no interrupts (uring) in irq mode exits with a message, never hangs, and
 * malloc and null bdevs run in it. No timing.
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "subproc.h"

#define EMU_BDEV "-b emu0n1 --bdev-config 'nvme:name=emu0,trtype=emu,size=8M,read_lat=30us'"

static char g_prog[PATH_MAX];
static char g_out[65536];

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
run_mode(const char *mode, const char *target)
{
	char args[512];

	snprintf(args, sizeof(args), "-t 1 -q 2 -w randread --no-huge %s --poll %s", target, mode);
	return fx_run_capture(g_prog, args, g_out, sizeof(g_out));
}

static void
test_modes(void)
{
	static const char *const modes[] = { "classic", "hybrid", "hybrid:mean", "fixed:10",
					     "irq" };
	char line[64];

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CU_ASSERT_EQUAL(run_mode(modes[i], EMU_BDEV), 0);
		snprintf(line, sizeof(line), "Poll core 0 (--poll %s)", modes[i]);
		CU_ASSERT(has(line));
		CU_ASSERT(has("BDEV emu0n1 (nvme) from core  0"));
		CU_ASSERT(has("Device model emu0: completions posted"));
	}
	/* irq (the last run): waits happened, and the controller raised interrupts */
	CU_ASSERT(strstr(g_out, " 0 irq waits") == NULL);
	CU_ASSERT(strstr(g_out, "; 0 interrupts") == NULL);
}

/*
 * -a: the waiter's figures are the measured window's, as the I/Os and the CPU time are
 * (they counted the warm-up too, which made a 1 s window wait 3 s for completions).
 */
static void
test_window_only(void)
{
	char args[512];
	const char *p;
	double wait_s = -1.0;

	snprintf(args, sizeof(args), "-a 2 -t 1 -q 2 -w randread --no-huge %s --poll classic",
		 EMU_BDEV);
	CU_ASSERT_EQUAL(fx_run_capture(g_prog, args, g_out, sizeof(g_out)), 0);
	p = strstr(g_out, "Poll core 0: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(sscanf(p, "Poll core 0: %lf s (wall) waiting", &wait_s), 1);
	/* at most the 1 s window (and the wake-up of its last wait) */
	if (!(wait_s > 0.0 && wait_s < 1.5)) {
		printf("\n    waited %.3f s in a 1 s window", wait_s);
	}
	CU_ASSERT(wait_s > 0.0 && wait_s < 1.5);
}

/* The uring module has no interrupt: irq mode is refused with a message. malloc and
 * null signal an eventfd per channel created with interrupts: irq mode runs. */
static void
test_irq_without_interrupts(void)
{
	char path[] = "/tmp/nvp_poll_perf_cli_XXXXXX";
	char target[256];
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, 4 << 20), 0);
	close(fd);
	snprintf(target, sizeof(target), "-b u0 --bdev-config 'uring:name=u0,filename=%s'", path);
	CU_ASSERT_NOT_EQUAL(run_mode("irq", target), 0);
	unlink(path);
	CU_ASSERT(has("no interrupt"));
	CU_ASSERT(has("--poll irq"));
	CU_ASSERT_EQUAL(run_mode("irq", "-b m0 --bdev-config 'malloc:name=m0,num_blocks=4096'"), 0);
	CU_ASSERT(has("Poll core 0 (--poll irq)"));
	CU_ASSERT_EQUAL(run_mode("irq", "-b n0 --bdev-config 'null:name=n0,num_blocks=4096'"), 0);
	CU_ASSERT(has("Poll core 0 (--poll irq)"));
}

int
main(void)
{
	unsigned int failures;
	CU_pSuite suite;

	if (fx_find_program("../../bin/nvp_perf", g_prog, sizeof(g_prog)) != 0) {
		printf("SKIP: build/bin/nvp_perf not built\n");
		return 77;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = fx_add_suite("poll_perf_cli");
	if (suite == NULL || CU_add_test(suite, "modes", test_modes) == NULL ||
	    CU_add_test(suite, "window_only", test_window_only) == NULL ||
	    CU_add_test(suite, "irq_without_interrupts", test_irq_without_interrupts) == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
