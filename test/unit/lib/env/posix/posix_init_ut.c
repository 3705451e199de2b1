/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/env_posix/posix_init.c: init options, idempotence, fini, name. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "env_posix/posix_init.c"

#include "../../util/ut_main.h"

/* ---- stubs for the rest of env_posix ---- */

static uint64_t g_limit = 12345;
static int g_limit_calls;
static int g_mem_fini_calls;

void
env_posix_mem_set_limit(uint64_t bytes)
{
	g_limit = bytes;
	g_limit_calls++;
}

void
env_posix_mem_fini(void)
{
	g_mem_fini_calls++;
}

uint64_t
nvp_env_get_ticks_hz(void)
{
	return 1000000000ull;
}

static void
test_name(void)
{
	CU_ASSERT_STRING_EQUAL(nvp_env_name(), "posix");
}

static void
test_init_defaults_and_idempotence(void)
{
	struct nvp_env_opts opts;

	CU_ASSERT_FALSE(nvp_env_is_initialized());
	CU_ASSERT_EQUAL(nvp_env_init(NULL), 0);
	CU_ASSERT_TRUE(nvp_env_is_initialized());
	CU_ASSERT_EQUAL(g_limit, 0); /* no cap by default */
	CU_ASSERT_EQUAL(g_limit_calls, 1);

	/* Again, even with other options: a no-op returning 0. */
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.mem_size_mb = 8;
	CU_ASSERT_EQUAL(nvp_env_init(&opts), 0);
	CU_ASSERT_EQUAL(g_limit_calls, 1);
	CU_ASSERT_EQUAL(g_limit, 0);

	nvp_env_fini();
	CU_ASSERT_FALSE(nvp_env_is_initialized());
	CU_ASSERT_EQUAL(g_mem_fini_calls, 1);
	nvp_env_fini(); /* twice is harmless */
	CU_ASSERT_EQUAL(g_mem_fini_calls, 1);
}

static void
test_init_options(void)
{
	struct nvp_env_opts opts;

	/* posix can start again after fini (unlike DPDK). */
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.mem_size_mb = 16;
	opts.quiet = true;
	opts.no_huge = true;
	CU_ASSERT_EQUAL(nvp_env_init(&opts), 0);
	CU_ASSERT_EQUAL(g_limit, 16ull << 20);
	nvp_env_fini();
}

static void
test_init_bad_options(void)
{
	struct nvp_env_opts opts;

	nvp_env_opts_init(&opts, sizeof(opts));
	opts.core_mask = "zz";
	CU_ASSERT_EQUAL(nvp_env_init(&opts), -EINVAL);
	opts.core_mask = "0";
	CU_ASSERT_EQUAL(nvp_env_init(&opts), -EINVAL);
	opts.core_mask = "0x3";
	opts.mem_size_mb = SIZE_MAX;
	CU_ASSERT_EQUAL(nvp_env_init(&opts), -EINVAL);
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.opts_size = 0;
	CU_ASSERT_EQUAL(nvp_env_init(&opts), -EINVAL);
	CU_ASSERT_FALSE(nvp_env_is_initialized());
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_name),
		UT_TEST(test_init_defaults_and_idempotence),
		UT_TEST(test_init_options),
		UT_TEST(test_init_bad_options),
	};

	nvp_log_set_level(NVP_LOG_DISABLED);
	return ut_run("posix_init", tests, NVP_COUNTOF(tests));
}
