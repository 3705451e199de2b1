/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test for lib/env_dpdk: starts the EAL in --no-huge mode (as root; exit 77 = skip
 * when it cannot start for lack of privileges) and checks the same memory properties as
 * the posix test - alignment, IOVA, "not DMA memory" answers, range checks at the end of
 * DPDK memory, frees of bad pointers, lookups from two threads while a third allocates -
 * plus the EAL arguments, the restored CPU affinity, ticks before init, a second process
 * running at the same time, and that the EAL refuses a second start after fini.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env_dpdk/dpdk_init.c"
#include "env_dpdk/dpdk_memory.c"
#include "env_dpdk/dpdk_time.c"
#include "env_dpdk/dpdk_pci.c"

#include "../../util/ut_main.h"

#define PS 4096u

static int g_errors_logged;
static cpu_set_t g_affinity_before;

static void
count_log(enum nvp_log_level level, const char *component, const char *msg)
{
	if (level <= NVP_LOG_WARN) {
		__atomic_add_fetch(&g_errors_logged, 1, __ATOMIC_RELAXED);
	}
	fprintf(stderr, "  [log] %s: %s\n", component, msg);
}

static bool
has_arg(const char *arg)
{
	int i;

	for (i = 0; i < g_argc; i++) {
		if (strcmp(g_argv[i], arg) == 0) {
			return true;
		}
	}
	return false;
}

static void
test_eal_args(void)
{
	CU_ASSERT_STRING_EQUAL(g_argv[0], "env_dpdk_ut");
	CU_ASSERT_TRUE(has_arg("--no-huge"));
	CU_ASSERT_TRUE(has_arg("--no-pci"));
	CU_ASSERT_TRUE(has_arg("--no-shconf"));
	CU_ASSERT_FALSE(has_arg("--in-memory")); /* DPDK refuses it with --no-huge */
	CU_ASSERT_TRUE(has_arg("--no-telemetry"));
	CU_ASSERT_TRUE(has_arg("--iova-mode=va"));
	CU_ASSERT_TRUE(has_arg("-m"));
	CU_ASSERT_TRUE(has_arg("256"));
	CU_ASSERT_TRUE(has_arg("-c"));
	CU_ASSERT_TRUE(has_arg("--file-prefix=env_dpdk_ut"));
	CU_ASSERT_EQUAL(rte_eal_iova_mode(), RTE_IOVA_VA);
	CU_ASSERT_EQUAL(rte_eal_has_hugepages(), 0);
}

static void
test_state(void)
{
	cpu_set_t now;

	CU_ASSERT_STRING_EQUAL(nvp_env_name(), "dpdk");
	CU_ASSERT_TRUE(nvp_env_is_initialized());
	CU_ASSERT_EQUAL(nvp_env_init(NULL), 0); /* idempotent */
	/* rte_eal_init() pinned this thread to one core; nvp_env_init() undid that. */
	CU_ASSERT_EQUAL(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
	CU_ASSERT_TRUE(CPU_EQUAL(&now, &g_affinity_before));
	CU_ASSERT(nvp_env_get_ticks_hz() > 0);
}

static void
test_alignment(void)
{
	static const size_t aligns[] = { 0, 8, 64, 512, 4096, 65536, 1u << 21 };
	size_t i;

	for (i = 0; i < NVP_COUNTOF(aligns); i++) {
		size_t want = aligns[i] ? aligns[i] : 64;
		uint64_t iova = 0, size = 10000;
		uint8_t *p = nvp_env_dma_malloc(10000, aligns[i], &iova);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL((uintptr_t)p % want, 0);
		CU_ASSERT_EQUAL(iova, (uint64_t)(uintptr_t)p); /* --iova-mode=va */
		CU_ASSERT_EQUAL(nvp_env_vtophys(p, &size), iova);
		CU_ASSERT_EQUAL(size, 10000); /* contiguous for the whole buffer */
		memset(p, 0x5a, 10000);
		nvp_env_dma_free(p);
	}
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(4096, 3, NULL));
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(0, 64, NULL));
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(1ull << 40, 64, NULL)); /* beyond -m 256 */
}

static void
test_zmalloc(void)
{
	uint8_t *p = nvp_env_dma_malloc(8192, 0, NULL);
	size_t i, nonzero = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	memset(p, 0xff, 8192);
	nvp_env_dma_free(p);
	p = nvp_env_dma_zmalloc(8192, 0, NULL); /* probably the same memory, dirty */
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (i = 0; i < 8192; i++) {
		nonzero += p[i] != 0;
	}
	CU_ASSERT_EQUAL(nonzero, 0);
	nvp_env_dma_free(p);
}

static void
test_vtophys_not_dma(void)
{
	int on_stack = 0;
	void *heap = malloc(64);
	static int in_bss;
	uint64_t size = 77;

	/* In IOVA-as-VA mode rte_mem_virt2iova() would "translate" all of these. */
	CU_ASSERT_EQUAL(nvp_env_vtophys(&on_stack, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(heap, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(&in_bss, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(NULL, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_vtophys(&on_stack, &size), NVP_ENV_BAD_IOVA);
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)&on_stack, 4));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)heap, 4));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(0, 1));
	free(heap);
}

static void
test_size_clamp_and_range_end(void)
{
	uint64_t iova, size;
	uint8_t *p = nvp_env_dma_malloc(PS, PS, &iova);
	struct rte_memseg_list *msl;
	uint8_t *end;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* A short request is left alone. */
	size = 10;
	CU_ASSERT_EQUAL(nvp_env_vtophys(p + 5, &size), iova + 5);
	CU_ASSERT_EQUAL(size, 10);
	/* A long one is lowered to what is contiguous: at least the buffer, at most asked. */
	size = 1ull << 40;
	CU_ASSERT_EQUAL(nvp_env_vtophys(p, &size), iova);
	CU_ASSERT(size >= PS && size < (1ull << 40));

	/* The last bytes of DPDK memory: ranges up to the end pass, one byte more does not. */
	msl = rte_mem_virt2memseg_list(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(msl);
	end = (uint8_t *)msl->base_va + msl->len;
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr((uintptr_t)end - 10, 10), end - 10);
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)end - 10, 11));
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr((uintptr_t)end, 1));
	size = 1 << 20;
	CU_ASSERT_EQUAL(nvp_env_vtophys(end - 10, &size), (uintptr_t)end - 10);
	CU_ASSERT_EQUAL(size, 10);
	CU_ASSERT_EQUAL(nvp_env_vtophys(end, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_PTR_EQUAL(nvp_env_iova_to_vaddr(iova, PS), p);
	CU_ASSERT_PTR_NULL(nvp_env_iova_to_vaddr(iova, UINT64_MAX));
	nvp_env_dma_free(p);
}

static void
test_free_bad_pointers(void)
{
	uint8_t *p = nvp_env_dma_malloc(PS, 0, NULL);
	int on_stack = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	g_errors_logged = 0;
	nvp_env_dma_free(p + 64);    /* inside: rte_free() would corrupt the heap */
	nvp_env_dma_free(&on_stack); /* not DPDK memory */
	nvp_env_dma_free(NULL);      /* silently ignored */
	CU_ASSERT_EQUAL(g_errors_logged, 2);
	nvp_env_dma_free(p);
	nvp_env_dma_free(p); /* twice */
	CU_ASSERT_EQUAL(g_errors_logged, 3);
	CU_ASSERT_EQUAL(g_nbufs, 0);
}

/* ---- lookups from two threads while the main thread allocates and frees ---- */

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
	int on_stack = 0;

	while (!*r->stop) {
		int i = rand_r(&seed) % STABLE;
		size_t off = (size_t)rand_r(&seed) % (2 * PS);
		uint8_t *b = r->bufs[i];
		uint64_t size = 2 * PS - off;

		if (nvp_env_iova_to_vaddr((uintptr_t)b + off, 2 * PS - off) != b + off ||
		    nvp_env_vtophys(b + off, &size) != (uintptr_t)b + off || size != 2 * PS - off ||
		    nvp_env_vtophys(&on_stack, NULL) != NVP_ENV_BAD_IOVA) {
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
	int i, round, failed = 0;

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

		if (p == NULL || nvp_env_iova_to_vaddr((uintptr_t)p, PS) != p) {
			failed++;
		}
		nvp_env_dma_free(p);
	}
	stop = true;
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
	}
	printf("  %" PRIu64 " + %" PRIu64 " lookups during 2000 alloc/free rounds\n", r[0].lookups,
	       r[1].lookups);
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT_EQUAL(r[0].wrong, 0);
	CU_ASSERT_EQUAL(r[1].wrong, 0);
	for (i = 0; i < STABLE; i++) {
		nvp_env_dma_free(stable[i]);
	}
}

/* Threads the application starts are not EAL lcores; they allocate and free too. */
static void *
alloc_thread(void *arg)
{
	uint64_t iova = 0;
	uint8_t *p = nvp_env_dma_zmalloc(3 * PS, PS, &iova);
	long ok = p != NULL && iova == (uintptr_t)p && nvp_env_iova_to_vaddr(iova, 3 * PS) == p;

	(void)arg;
	nvp_env_dma_free(p);
	return (void *)ok;
}

static void
test_non_eal_thread(void)
{
	pthread_t t;
	void *ok = NULL;

	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, alloc_thread, NULL), 0);
	pthread_join(t, &ok);
	CU_ASSERT_EQUAL((long)ok, 1);
}

static void
put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* A fake sysfs with one NVMe function at 0000:02:00.0 bound to @driver. */
static void
fake_nvme_fn(const char *root, const char *driver)
{
	char dev[512], drv[512];

	snprintf(dev, sizeof(dev), "%s/bus/pci/devices/0000:02:00.0", root);
	snprintf(drv, sizeof(drv), "%s/bus/pci/drivers/%s", root, driver);
	CU_ASSERT_EQUAL_FATAL(mkdir(dev, 0755) == 0 || errno == EEXIST, 1);
	CU_ASSERT_EQUAL_FATAL(mkdir(drv, 0755) == 0 || errno == EEXIST, 1);
	put_file(dev, "class", "0x010802\n");
	put_file(dev, "vendor", "0x1b36\n");
	put_file(dev, "device", "0x0010\n");
	put_file(dev, "subsystem_vendor", "0x1af4\n");
	put_file(dev, "subsystem_device", "0x1100\n");
	put_file(dev, "numa_node", "0\n");
	snprintf(drv, sizeof(drv), "../../drivers/%s", driver);
	snprintf(dev + strlen(dev), sizeof(dev) - strlen(dev), "/driver");
	unlink(dev);
	CU_ASSERT_EQUAL_FATAL(symlink(drv, dev), 0);
}

/*
 * No hugepages warns only when it matters: with an NVMe function bound to a user-space
 * driver on the host; with none (the software controller's case), an info line.
 */
static void
test_no_huge_notice(void)
{
	char root[] = "/tmp/nvp_env_dpdk_ut.XXXXXX", cmd[1200], path[512];
	struct nvp_env_opts opts;
	int before;

	nvp_env_opts_init(&opts, sizeof(opts));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/bus/pci/devices", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s/bus/pci/drivers'", path, root);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	setenv("NVP_SYSFS_ROOT", root, 1);
	before = g_errors_logged;
	no_huge_notice(&opts, 0);
	CU_ASSERT_EQUAL(g_errors_logged, before); /* no NVMe function: info only */
	fake_nvme_fn(root, "nvme");
	no_huge_notice(&opts, 0);
	CU_ASSERT_EQUAL(g_errors_logged, before); /* the kernel's: not ours to drive */
	fake_nvme_fn(root, "vfio-pci");
	no_huge_notice(&opts, 0);
	CU_ASSERT_EQUAL(g_errors_logged, before + 1);
	opts.no_pci = true; /* this process will not drive it */
	no_huge_notice(&opts, 0);
	CU_ASSERT_EQUAL(g_errors_logged, before + 1);
	g_errors_logged = before; /* expected warnings: not the test's errors */
	unsetenv("NVP_SYSFS_ROOT");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* A second process starts its own EAL while this one runs (no shared files). */
static void
test_second_process(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		/* The child inherited a started EAL it cannot use: exec a fresh copy. */
		execl("/proc/self/exe", "env_dpdk_ut", "--child", (char *)NULL);
		_exit(3);
	}
	CU_ASSERT_FATAL(pid > 0);
	waitpid(pid, &status, 0);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The --child run: start, allocate, translate, stop. */
static int
child_main(void)
{
	struct nvp_env_opts opts;
	uint64_t iova;
	void *p;

	nvp_env_opts_init(&opts, sizeof(opts));
	opts.name = "env_dpdk_ut";
	opts.no_huge = true;
	opts.quiet = true;
	if (nvp_env_init(&opts) != 0) {
		return 1;
	}
	p = nvp_env_dma_malloc(1 << 20, 1 << 21, &iova);
	if (p == NULL || nvp_env_iova_to_vaddr(iova, 1 << 20) != p) {
		return 2;
	}
	nvp_env_dma_free(p);
	nvp_env_fini();
	return 0;
}

static void
test_fini_and_no_restart(void)
{
	void *p = nvp_env_dma_malloc(PS, 0, NULL);

	CU_ASSERT_PTR_NOT_NULL(p);
	g_errors_logged = 0;
	nvp_env_fini(); /* frees p, with a warning */
	CU_ASSERT_EQUAL(g_errors_logged, 1);
	CU_ASSERT_FALSE(nvp_env_is_initialized());
	CU_ASSERT_PTR_NULL(nvp_env_dma_malloc(PS, 0, NULL));
	CU_ASSERT_EQUAL(nvp_env_vtophys(p, NULL), NVP_ENV_BAD_IOVA);
	CU_ASSERT_EQUAL(nvp_env_init(NULL), -EALREADY);
	/* Ticks keep working after the EAL is gone. */
	CU_ASSERT(nvp_env_get_ticks() > 0);
}

int
main(int argc, char **argv)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_eal_args),          UT_TEST(test_state),
		UT_TEST(test_alignment),         UT_TEST(test_zmalloc),
		UT_TEST(test_vtophys_not_dma),   UT_TEST(test_size_clamp_and_range_end),
		UT_TEST(test_free_bad_pointers), UT_TEST(test_concurrent_lookups),
		UT_TEST(test_non_eal_thread),    UT_TEST(test_second_process),
		UT_TEST(test_no_huge_notice),    UT_TEST(test_fini_and_no_restart),
	};
	struct nvp_env_opts opts;
	uint64_t t0;
	int rc;

	if (argc > 1 && strcmp(argv[1], "--child") == 0) {
		return child_main();
	}
	/* Ticks work before the environment exists. */
	t0 = nvp_env_get_ticks();
	if (t0 == 0 || nvp_env_get_ticks() < t0) {
		fprintf(stderr, "ticks before nvp_env_init() do not work\n");
		return 1;
	}
	pthread_getaffinity_np(pthread_self(), sizeof(g_affinity_before), &g_affinity_before);
	nvp_log_set_callback(count_log);
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.name = "env_dpdk_ut";
	opts.no_huge = true;
	rc = nvp_env_init(&opts);
	if (rc != 0) {
		if (geteuid() != 0) {
			printf("env_dpdk_ut: skipped: DPDK did not start (%d) and needs root\n",
			       rc);
			return 77;
		}
		fprintf(stderr, "env_dpdk_ut: nvp_env_init() failed as root: %d\n", rc);
		return 1;
	}
	return ut_run("env_dpdk", tests, NVP_COUNTOF(tests));
}
