/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA memory for the POSIX environment: each buffer is its own anonymous mapping,
 * page-aligned (or more), with IOVA = virtual address, followed by a PROT_NONE guard
 * page so an overrun by a device model faults instead of corrupting a neighbour.
 *
 * The driver's translation (nvp_env_vtophys()) reads env's lock-free IOVA map, filled
 * here at each allocation. A registry of the live buffers, sorted by address, answers
 * the device side's "is this DMA memory?" (nvp_env_iova_to_vaddr()).
 * The software controller asks it for every PRP, so lookups are the hot side: a
 * per-thread cache of the last buffer hit, validated by a generation counter that every
 * free bumps, answers most of them without touching shared cache lines; misses binary
 * search under a read lock. Allocation and free take the write lock (writer preferred,
 * so a polling reader cannot starve them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NVP_LOG_COMPONENT "env"
#include "env_posix_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define DEFAULT_ALIGN 64u
/* Largest alignment accepted (hugepage-sized alignment and well beyond). */
#define MAX_ALIGN (1ull << 30)

struct region {
	uintptr_t start;
	size_t len; /* page multiple; the guard page follows */
};

static pthread_rwlock_t g_mem_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static struct region *g_regions; /* sorted by start, no overlaps */
static size_t g_nregions;
static size_t g_cap;
static uint64_t g_bytes;       /* sum of len */
static uint64_t g_limit_bytes; /* 0 = none */
/* Bumped (under the write lock) whenever a region goes away; starts at 1 so that a
 * thread cache with gen 0 never matches. */
static _Atomic uint64_t g_gen = 1;

static __thread struct {
	uint64_t gen;
	uintptr_t start;
	uintptr_t end;
} t_cache;

static size_t
page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void
env_posix_mem_set_limit(uint64_t bytes)
{
	pthread_rwlock_wrlock(&g_mem_lock);
	g_limit_bytes = bytes;
	pthread_rwlock_unlock(&g_mem_lock);
}

/* Index of the last region with start <= @addr, or -1. Caller holds the lock. */
static ssize_t
search_locked(uintptr_t addr)
{
	size_t lo = 0, hi = g_nregions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_regions[mid].start <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return (ssize_t)lo - 1;
}

/*
 * Find the buffer holding @addr: store its bounds and return true, or return false.
 */
static bool
lookup(uintptr_t addr, uintptr_t *start, uintptr_t *end)
{
	uint64_t gen = atomic_load_explicit(&g_gen, memory_order_acquire);
	bool found = false;
	ssize_t i;

	if (nvp_likely(t_cache.gen == gen && addr >= t_cache.start && addr < t_cache.end)) {
		*start = t_cache.start;
		*end = t_cache.end;
		return true;
	}
	pthread_rwlock_rdlock(&g_mem_lock);
	i = search_locked(addr);
	if (i >= 0 && addr - g_regions[i].start < g_regions[i].len) {
		*start = g_regions[i].start;
		*end = g_regions[i].start + g_regions[i].len;
		t_cache.gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
		t_cache.start = *start;
		t_cache.end = *end;
		found = true;
	}
	pthread_rwlock_unlock(&g_mem_lock);
	return found;
}

/* Insert keeping the order. Caller holds the write lock. \return 0 or -ENOMEM. */
static int
insert_locked(uintptr_t start, size_t len)
{
	ssize_t pos;

	if (g_limit_bytes != 0 && g_bytes + len > g_limit_bytes) {
		NVP_ERRLOG("DMA memory limit reached: %" PRIu64 " of %" PRIu64 " MiB used, %zu "
			   "bytes more requested; raise mem_size_mb",
			   g_bytes >> 20, g_limit_bytes >> 20, len);
		return -ENOMEM;
	}
	if (g_nregions == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 64;
		struct region *r = realloc(g_regions, cap * sizeof(*r));

		if (r == NULL) {
			return -ENOMEM;
		}
		g_regions = r;
		g_cap = cap;
	}
	pos = search_locked(start) + 1;
	memmove(&g_regions[pos + 1], &g_regions[pos],
		(g_nregions - (size_t)pos) * sizeof(*g_regions));
	g_regions[pos].start = start;
	g_regions[pos].len = len;
	g_nregions++;
	g_bytes += len;
	return 0;
}

/*
 * Map @len bytes (a page multiple) aligned to @align with a guard page after them.
 * \return the start or NULL.
 */
static void *
map_aligned(size_t len, size_t align)
{
	size_t ps = page_size();
	size_t slack = align > ps ? align - ps : 0;
	size_t map_len = len + ps + slack;
	uintptr_t base, start, map_end;
	void *p;

	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return NULL;
	}
	base = (uintptr_t)p;
	start = NVP_ALIGN_UP(base, (uintptr_t)align);
	map_end = base + map_len;
	if (start > base) {
		munmap(p, start - base);
	}
	if (map_end > start + len + ps) {
		munmap((void *)(start + len + ps), map_end - (start + len + ps));
	}
	mprotect((void *)(start + len), ps, PROT_NONE);
	/* Fault the pages in now, not in the device model's hot path (Linux >= 5.14). */
#ifdef MADV_POPULATE_WRITE
	(void)madvise((void *)start, len, MADV_POPULATE_WRITE);
#endif
	return (void *)start;
}

void *
nvp_env_dma_malloc(size_t size, size_t align, uint64_t *iova)
{
	size_t ps = page_size();
	size_t len;
	void *buf;
	int rc;

	if (!nvp_env_is_initialized()) {
		NVP_ERRLOG("nvp_env_dma_malloc(%zu) before nvp_env_init(): initialise the "
			   "environment first",
			   size);
		return NULL;
	}
	if (nvp_unlikely(env_dma_fail_injected())) {
		return NULL; /* a test asked for it: as if memory ran out */
	}
	if (align == 0) {
		align = DEFAULT_ALIGN;
	}
	if (!NVP_IS_POW2(align) || align > MAX_ALIGN || size == 0 || size > SIZE_MAX / 2) {
		NVP_ERRLOG("nvp_env_dma_malloc: bad size %zu or alignment %zu (a power of two up "
			   "to 1 GiB)",
			   size, align);
		return NULL;
	}
	len = NVP_ALIGN_UP(size, ps);
	buf = map_aligned(len, align);
	if (buf == NULL) {
		NVP_ERRLOG("nvp_env_dma_malloc: mmap of %zu bytes failed", len);
		return NULL;
	}
	pthread_rwlock_wrlock(&g_mem_lock);
	rc = insert_locked((uintptr_t)buf, len);
	pthread_rwlock_unlock(&g_mem_lock);
	if (rc == 0) {
		/* A vfio container (if a device is attached) maps it at IOVA = VA, and so
		 * does the driver's translation. */
		rc = env_dma_register(buf, (uint64_t)(uintptr_t)buf, len);
		if (rc == 0) {
			rc = env_iova_map_set((uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)buf,
					      len);
		}
		if (rc != 0) {
			nvp_env_dma_free(buf);
			return NULL;
		}
	}
	if (rc != 0) {
		munmap(buf, len + ps);
		return NULL;
	}
	if (iova != NULL) {
		*iova = (uint64_t)(uintptr_t)buf;
	}
	return buf;
}

void *
nvp_env_dma_zmalloc(size_t size, size_t align, uint64_t *iova)
{
	/* A fresh anonymous mapping is already zero filled. */
	return nvp_env_dma_malloc(size, align, iova);
}

void
nvp_env_dma_free(void *buf)
{
	uintptr_t addr = (uintptr_t)buf;
	size_t len = 0;
	ssize_t i;

	if (buf == NULL) {
		return;
	}
	pthread_rwlock_wrlock(&g_mem_lock);
	i = search_locked(addr);
	if (i >= 0 && g_regions[i].start == addr) {
		len = g_regions[i].len;
		memmove(&g_regions[i], &g_regions[i + 1],
			(g_nregions - (size_t)i - 1) * sizeof(*g_regions));
		g_nregions--;
		g_bytes -= len;
		atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
	}
	pthread_rwlock_unlock(&g_mem_lock);
	if (len == 0) {
		NVP_ERRLOG("nvp_env_dma_free(%p): not a buffer from nvp_env_dma_malloc() (freed "
			   "twice, or an address inside a buffer?); ignored",
			   buf);
		return;
	}
	env_iova_map_clear((uint64_t)addr, len);
	env_dma_unregister(buf);
	munmap(buf, len + page_size());
}

void *
nvp_env_iova_to_vaddr(uint64_t iova, uint64_t len)
{
	uintptr_t start, end;

	if (iova > UINTPTR_MAX || !lookup((uintptr_t)iova, &start, &end)) {
		return NULL;
	}
	if (len > end - (uintptr_t)iova) {
		return NULL;
	}
	return (void *)(uintptr_t)iova;
}

void
env_posix_mem_fini(void)
{
	size_t i, n;
	uint64_t bytes;

	pthread_rwlock_wrlock(&g_mem_lock);
	n = g_nregions;
	bytes = g_bytes;
	for (i = 0; i < g_nregions; i++) {
		env_iova_map_clear(g_regions[i].start, g_regions[i].len);
		env_dma_unregister((void *)g_regions[i].start);
		munmap((void *)g_regions[i].start, g_regions[i].len + page_size());
	}
	free(g_regions);
	g_regions = NULL;
	g_nregions = 0;
	g_cap = 0;
	g_bytes = 0;
	g_limit_bytes = 0;
	atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
	pthread_rwlock_unlock(&g_mem_lock);
	if (n > 0) {
		NVP_WARNLOG("nvp_env_fini: %zu DMA buffers (%" PRIu64 " KiB) were still allocated; "
			    "freed them",
			    n, bytes >> 10);
	}
}
