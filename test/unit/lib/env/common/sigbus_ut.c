/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_common/sigbus.c: a registered mapping whose backing goes away
 * (a memfd truncated under a shared mapping raises SIGBUS, as a removed device's BAR does)
 * is replaced by memory reading all ones and the process carries on; the opt-out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env_common/opts.c"
#include "env_common/sigbus.c"

#include "../../util/ut_main.h"

#define MAP_LEN 8192u

static void
test_bad_args(void)
{
	CU_ASSERT_EQUAL(nvp_env_sigbus_register(NULL, 4096), -EINVAL);
	CU_ASSERT_EQUAL(nvp_env_sigbus_register(&g_remaps, 0), -EINVAL);
}

/* A "BAR" whose device vanishes: the access that faults reads all ones instead. */
static void
test_fault_becomes_all_ones(void)
{
	volatile uint32_t *reg;
	uint64_t before = nvp_env_sigbus_get_remaps();
	void *map;
	int fd;

	fd = memfd_create("nvp_sigbus_ut", 0); /* a file no other process sees */
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(ftruncate(fd, MAP_LEN), 0);
	map = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CU_ASSERT_FATAL(map != MAP_FAILED);
	reg = map;
	reg[0] = 0x12345678;
	CU_ASSERT_EQUAL(reg[0], 0x12345678);
	CU_ASSERT_EQUAL(nvp_env_sigbus_register(map, MAP_LEN), 0);
	/* The device goes: every page of the mapping is gone. */
	CU_ASSERT_EQUAL_FATAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(reg[0], UINT32_MAX); /* SIGBUS, handled */
	CU_ASSERT_EQUAL(reg[MAP_LEN / 4 - 1], UINT32_MAX);
	CU_ASSERT_EQUAL(nvp_env_sigbus_get_remaps(), before + 1);
	reg[1] = 0; /* writes land in the dummy memory */
	nvp_env_sigbus_unregister(map);
	munmap(map, MAP_LEN);
	close(fd);
}

static void
test_opt_out(void)
{
	struct nvp_env_opts o;

	nvp_env_opts_init(&o, sizeof(o));
	CU_ASSERT_FALSE(o.no_sigbus_handler);
	o.no_sigbus_handler = true;
	env_opts_set(&o);
	CU_ASSERT_EQUAL(nvp_env_sigbus_register(&g_remaps, 64), -ENOTSUP);
	env_opts_set(NULL);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_bad_args),
		UT_TEST(test_fault_becomes_all_ones),
		UT_TEST(test_opt_out),
	};

	return ut_run("sigbus", tests, NVP_COUNTOF(tests));
}
