/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_posix/posix_memory.c: DMA allocation, alignment, the registry
 * behind nvp_env_vtophys() / nvp_env_iova_to_vaddr(), guard pages, the memory cap, and
 * lookups from several threads while another allocates and frees.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env_posix/posix_memory.c"

#include "../../util/ut_main.h"

/* ---- stubs for the rest of env_posix ---- */

static bool g_initialized;

bool
nvp_env_is_initialized(void)
{
	return g_initialized;
}

static int g_errors_logged;

static void
count_log(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)component;
	(void)msg;
	if (level <= NVP_LOG_WARN) {
		__atomic_add_fetch(&g_errors_logged, 1, __ATOMIC_RELAXED);
	}
}

#define PS 4096u

static void
test_before_init(void)
{
	g_initialized = false;
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(4096, 0, NULL));
	g_initialized = true;
}

static void
test_alignment(void)
{
	static const size_t aligns[] = { 0, 1, 8, 64, 512, 4096, 8192, 65536, 1u << 21, 1u << 22 };
	size_t i;

	for (i = 0; i < NVP_COUNTOF(aligns); i++) {
		size_t want = aligns[i] ? aligns[i] : 64;
		uint64_t iova = 0;
		uint8_t *p = nvp_env_dma_malloc(10000, aligns[i], &iova);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL((uintptr_t)p % want, 0);
		CU_ASSERT_EQUAL((uintptr_t)p % PS, 0);         /* always page aligned */
		CU_ASSERT_EQUAL(iova, (uint64_t)(uintptr_t)p); /* IOVA = VA */
		memset(p, 0x5a, 10000);
		nvp_env_dma_free(p);
	}
}

static void
test_bad_requests(void)
{
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(4096, 3, NULL));
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(4096, 4096 + 64, NULL));
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(4096, (size_t)1 << 31, NULL)); /* over 1 GiB */
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(0, 64, NULL));
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(SIZE_MAX, 64, NULL));
	CU_ASSERT_EQUAL(g_nregions, 0);
}

static void
test_zmalloc(void)
{
	uint64_t iova;
	uint8_t *p = nvp_env_dma_zmalloc(3 * PS + 5, PS, &iova);
	size_t i, nonzero = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (i = 0; i < 3 * PS + 5; i++) {
		nonzero += p[i] != 0;
	}
	CU_ASSERT_EQUAL(nonzero, 0);
	nvp_env_dma_free(p);
}

static void
test_vtophys(void)
{
	uint8_t *p = nvp_env_dma_malloc(5000, 0, NULL); /* one page rounds to two */
	int on_stack = 0;
	void *heap = malloc(64);
	uint64_t size;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(nvp_env_vtophys(p, NULL), (uintptr_t)p);
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 4999, NULL), (uintptr_t)p + 4999);
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 2 * PS - 1, NULL), (uintptr_t)p + 2 * PS - 1);
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 2 * PS, NULL), NVP_ENV_BAD_IOVA); /* guard page */
	CU_ASSERT_EQUAL(nvp_env_vtophys(p - 1, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(&on_stack, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(heap, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(NULL, NULL), NVP_ENV_BAD_IOVA);

	/* @size is lowered to what is left of the buffer, never raised. */
	size = 1 << 20;
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 100, &size), (uintptr_t)p + 100);
	CU_ASSERT_EQUAL(size, 2 * PS - 100);
	size = 10;
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 100, &size), (uintptr_t)p + 100);
	CU_ASSERT_EQUAL(size, 10);
	size = 77;
	CU_ASSERT_EQUAL(nvp_env_vtophys(&on_stack, &size), NVP_ENV_BAD_IOVA);
	free(heap);
	nvp_env_dma_free(p);
}

static void
test_iova_to_vaddr(void)
{
	uint64_t iova;
	uint8_t *p = nvp_env_dma_malloc(2 * PS, PS, &iova);
	uint8_t *q = nvp_env_dma_malloc(PS, PS, NULL);
	int on_stack = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova, 2 * PS), p);
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova + 100, 2 * PS - 100), p + 100);
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova + 2 * PS - 1, 1), p + 2 * PS - 1);
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova, 0), p);
	/* One byte past the end of the allocation, anywhere in the range: refused. */
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova, 2 * PS + 1));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova + 2 * PS - 1, 2));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova + 2 * PS, 1));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova - 1, 2));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova + 8, UINT64_MAX)); /* wraps */
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)&on_stack, 4));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(0, 1));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(UINT64_MAX, 1));
	/* A range spanning two allocations is refused even if they were adjacent. */
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)q, 2 * PS));
	nvp_env_dma_free(p);
	nvp_env_dma_free(q);
}

static void
test_free(void)
{
	uint64_t iova;
	uint8_t *p = nvp_env_dma_malloc(PS, 0, &iova);
	uint8_t *q = nvp_env_dma_malloc(PS, 0, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* Warm this thread's lookup cache, then free: the cache must not answer. */
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova, 8), p);
	nvp_env_dma_free(p);
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova, 8));
	CU_ASSERT_EQUAL(nvp_env_vtophys(p, NULL), NVP_ENV_BAD_IOVA);

	g_errors_logged = 0;
	nvp_env_dma_free(p);     /* twice */
	nvp_env_dma_free(q + 8); /* inside a buffer */
	nvp_env_dma_free(&iova); /* not DMA memory */
	nvp_env_dma_free(NULL);  /* ignored silently */
	CU_ASSERT_EQUAL(g_errors_logged, 3);
	CU_ASSERT_EQUAL(nvp_env_vtophys(q, NULL), (uintptr_t)q); /* q untouched */
	q[PS - 1] = 1;
	nvp_env_dma_free(q);
	CU_ASSERT_EQUAL(g_nregions, 0);
	CU_ASSERT_EQUAL(g_bytes, 0);
}

static void
test_guard_page(void)
{
	uint8_t *p = nvp_env_dma_malloc(PS, 0, NULL);
	int status = 0;
	pid_t pid;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		((volatile uint8_t *)p)[PS] = 1; /* one byte past the end */
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	waitpid(pid, &status, 0);
	CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	nvp_env_dma_free(p);
}

static void
test_limit(void)
{
	void *a, *b, *c;

	env_posix_mem_set_limit(1 << 20);
	a = nvp_env_dma_malloc(512 << 10, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(a);
	b = nvp_env_dma_malloc(600 << 10, 0, NULL);
	CU_ASSERT_PTR_NULL(b);
	c = nvp_env_dma_malloc(512 << 10, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(c);
	nvp_env_dma_free(a);
	b = nvp_env_dma_malloc(500 << 10, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(b);
	nvp_env_dma_free(b);
	nvp_env_dma_free(c);
	env_posix_mem_set_limit(0);
}

/* Many buffers in random order: the registry stays sorted and answers correctly. */
#define MANY 300

static void
test_many(void)
{
	static uint8_t *bufs[MANY];
	static size_t lens[MANY];
	unsigned int seed = 7;
	size_t i, j;

	for (i = 0; i < MANY; i++) {
		lens[i] = 1 + (size_t)rand_r(&seed) % (5 * PS);
		bufs[i] = nvp_env_dma_malloc(lens[i], 0, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(bufs[i]);
	}
	for (i = 1; i < g_nregions; i++) {
		CU_ASSERT(g_regions[i - 1].start + g_regions[i - 1].len < g_regions[i].start);
	}
	for (i = 0; i < MANY; i++) {
		CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr((uintptr_t)bufs[i], lens[i]), bufs[i]);
		CU_ASSERT_EQUAL(nvp_env_vtophys(bufs[i] + lens[i] - 1, NULL),
				(uintptr_t)bufs[i] + lens[i] - 1);
	}
	/* Free every other one in a shuffled order; the rest must still translate. */
	for (i = 0; i < MANY; i += 2) {
		j = (i * 37) % MANY & ~(size_t)1;
		if (bufs[j] != NULL) {
			nvp_env_dma_free(bufs[j]);
			bufs[j] = NULL;
		}
	}
	for (i = 0; i < MANY; i++) {
		if (bufs[i] == NULL) {
			continue;
		}
		CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr((uintptr_t)bufs[i], lens[i]), bufs[i]);
		nvp_env_dma_free(bufs[i]);
		bufs[i] = NULL;
	}
	CU_ASSERT_EQUAL(g_nregions, 0);
}

/* ---- two threads translate while the main thread allocates and frees ---- */

#define STABLE 16

struct reader {
	uint8_t **bufs;
	volatile bool *stop;
	uint64_t lookups;
	uint64_t wrong;
};

static void *
reader_thread(void *arg)
{
	struct reader *r = arg;
	unsigned int seed = (unsigned int)(uintptr_t)r;

	while (!*r->stop) {
		int i = rand_r(&seed) % STABLE;
		size_t off = (size_t)rand_r(&seed) % (2 * PS);
		uint8_t *b = r->bufs[i];
		uint64_t size = 1 << 20;

		if (nvp_env_iova_to_vaddr((uintptr_t)b + off, 2 * PS - off) != b + off ||
		    nvp_env_iova_to_vaddr((uintptr_t)b + off, 2 * PS - off + 1) != NULL ||
		    nvp_env_vtophys(b + off, &size) != (uintptr_t)b + off || size != 2 * PS - off) {
			r->wrong++;
		}
		__atomic_add_fetch(&r->lookups, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_concurrent_lookups(void)
{
	uint8_t *stable[STABLE];
	volatile bool stop = false;
	struct reader r[2] = { { stable, &stop, 0, 0 }, { stable, &stop, 0, 0 } };
	pthread_t t[2];
	int i, round, stale = 0;

	for (i = 0; i < STABLE; i++) {
		stable[i] = nvp_env_dma_malloc(2 * PS, PS, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(stable[i]);
	}
	for (i = 0; i < 2; i++) {
		pthread_create(&t[i], NULL, reader_thread, &r[i]);
	}
	/* Both readers running before the churn starts, and still running when it ends. */
	while (__atomic_load_n(&r[0].lookups, __ATOMIC_RELAXED) < 1000 ||
	       __atomic_load_n(&r[1].lookups, __ATOMIC_RELAXED) < 1000) {
		sched_yield();
	}
	for (round = 0; round < 2000; round++) {
		uint8_t *p = nvp_env_dma_malloc(PS * (1 + round % 4), 0, NULL);

		if (p == NULL) {
			stale++;
			continue;
		}
		if (nvp_env_iova_to_vaddr((uintptr_t)p, PS) != p) {
			stale++;
		}
		nvp_env_dma_free(p);
		if (nvp_env_iova_to_vaddr((uintptr_t)p, PS) != NULL) {
			stale++;
		}
	}
	stop = true;
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
	}
	printf("  %" PRIu64 " + %" PRIu64 " lookups during 2000 alloc/free rounds\n", r[0].lookups,
	       r[1].lookups);
	CU_ASSERT_EQUAL(stale, 0);
	CU_ASSERT_EQUAL(r[0].wrong, 0);
	CU_ASSERT_EQUAL(r[1].wrong, 0);
	for (i = 0; i < STABLE; i++) {
		nvp_env_dma_free(stable[i]);
	}
}

static void
test_fini_frees_everything(void)
{
	uint8_t *p = nvp_env_dma_malloc(PS, 0, NULL);
	uint8_t *q = nvp_env_dma_malloc(PS, 0, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	g_errors_logged = 0;
	env_posix_mem_fini();
	CU_ASSERT_EQUAL(g_errors_logged, 1); /* one warning naming the count */
	CU_ASSERT_EQUAL(g_nregions, 0);
	CU_ASSERT_EQUAL(nvp_env_vtophys(p, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)q, 1));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_before_init),
		UT_TEST(test_alignment),
		UT_TEST(test_bad_requests),
		UT_TEST(test_zmalloc),
		UT_TEST(test_vtophys),
		UT_TEST(test_iova_to_vaddr),
		UT_TEST(test_free),
		UT_TEST(test_guard_page),
		UT_TEST(test_limit),
		UT_TEST(test_many),
		UT_TEST(test_concurrent_lookups),
		UT_TEST(test_fini_frees_everything),
	};

	g_initialized = true;
	nvp_log_set_callback(count_log);
	return ut_run("posix_memory", tests, NVP_COUNTOF(tests));
}
