/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_common/iova_map.c: the two-level virtual page -> IOVA map behind
 * nvp_env_vtophys(): lookups, contiguity, clearing, bad ranges, tables made on demand.
 */
#include <pthread.h>

#include "env_common/iova_map.c"

#include "../../util/ut_main.h"

#define PS ENV_IOVA_MAP_PAGE_SIZE
#define VA0 0x7f0000000000ull /* a level-2 table of its own */

static void
test_translate(void)
{
	uint64_t size;

	CU_ASSERT_EQUAL(env_iova_map_set(VA0, 0x100000, 4 * PS), 0);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)VA0, NULL), 0x100000);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + PS + 12), NULL),
			0x100000 + PS + 12);
	/* Asking for less than the page holds: the size is left alone. */
	size = 100;
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + 8), &size), 0x100008);
	CU_ASSERT_EQUAL(size, 100);
	/* Contiguous to the end of the range, not beyond. */
	size = 1 << 20;
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + 8), &size), 0x100008);
	CU_ASSERT_EQUAL(size, 4 * PS - 8);
	/* Not mapped: below, after, and in a gigabyte without a table. */
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 - 1), NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + 4 * PS), NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + (1ull << 31)), NULL),
			NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(NULL, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(1ull << 50), NULL), NVP_ENV_BAD_IOVA);
	env_iova_map_fini();
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)VA0, NULL), NVP_ENV_BAD_IOVA);
}

/* Neighbouring pages whose IOVAs do not follow on end a contiguous run. */
static void
test_discontiguous(void)
{
	uint64_t size = 3 * PS;

	CU_ASSERT_EQUAL(env_iova_map_set(VA0, 0x200000, PS), 0);
	CU_ASSERT_EQUAL(env_iova_map_set(VA0 + PS, 0x900000, 2 * PS), 0);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)VA0, &size), 0x200000);
	CU_ASSERT_EQUAL(size, PS);
	size = 3 * PS;
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + PS), &size), 0x900000);
	CU_ASSERT_EQUAL(size, 2 * PS);
	/* A range across a level-2 boundary (1 GiB) stays contiguous. */
	CU_ASSERT_EQUAL(env_iova_map_set(VA0 + (1ull << 30) - PS, 0x400000, 2 * PS), 0);
	size = 2 * PS;
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + (1ull << 30) - PS), &size),
			0x400000);
	CU_ASSERT_EQUAL(size, 2 * PS);
	env_iova_map_fini();
}

static void
test_clear_and_bad_ranges(void)
{
	CU_ASSERT_EQUAL(env_iova_map_set(VA0, VA0, 3 * PS), 0);
	env_iova_map_clear(VA0 + PS, PS);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)VA0, NULL), VA0);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + PS), NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys((void *)(uintptr_t)(VA0 + 2 * PS), NULL), VA0 + 2 * PS);
	/* Clearing where no table exists is harmless. */
	env_iova_map_clear(0x1000000000ull, PS);
	CU_ASSERT_EQUAL(env_iova_map_set(VA0 + 1, VA0, PS), -EINVAL);
	CU_ASSERT_EQUAL(env_iova_map_set(VA0, VA0 + 8, PS), -EINVAL);
	CU_ASSERT_EQUAL(env_iova_map_set(VA0, VA0, PS + 1), -EINVAL);
	CU_ASSERT_EQUAL(env_iova_map_set(VA0, VA0, 0), -EINVAL);
	CU_ASSERT_EQUAL(env_iova_map_set((1ull << 48) - PS, 0, 2 * PS), -EINVAL);
	CU_ASSERT_EQUAL(env_iova_map_set(UINT64_MAX - PS + 1, 0, PS), -EINVAL);
	env_iova_map_fini();
}

/* Readers on another thread while the map changes: never a torn or invented IOVA. */
static volatile bool g_stop;

static void *
reader(void *arg)
{
	uint64_t bad = 0;

	(void)arg;
	while (!g_stop) {
		uint64_t iova = nvp_env_vtophys((void *)(uintptr_t)(VA0 + PS), NULL);

		if (iova != NVP_ENV_BAD_IOVA && iova != 0x300000 + PS) {
			bad++;
		}
	}
	return (void *)(uintptr_t)bad;
}

static void
test_concurrent_readers(void)
{
	pthread_t t;
	void *bad = NULL;
	int i;

	g_stop = false;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, reader, NULL), 0);
	for (i = 0; i < 20000; i++) {
		CU_ASSERT_EQUAL(env_iova_map_set(VA0, 0x300000, 2 * PS), 0);
		env_iova_map_clear(VA0, 2 * PS);
	}
	g_stop = true;
	pthread_join(t, &bad);
	CU_ASSERT_EQUAL((uintptr_t)bad, 0);
	env_iova_map_fini();
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_translate),
		UT_TEST(test_discontiguous),
		UT_TEST(test_clear_and_bad_ranges),
		UT_TEST(test_concurrent_readers),
	};

	return ut_run("iova_map", tests, NVP_COUNTOF(tests));
}
