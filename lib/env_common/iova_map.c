/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IOVA map: virtual page -> bus address, for nvp_env_vtophys() on the I/O path.
 *
 * A two-level table over the 48-bit user address space in 4 KiB pages, as SPDK's mem
 * map does (there in 2 MiB pages): level 1 has an entry per 1 GiB of virtual address,
 * pointing to a level-2 table of one 64-bit entry per 4 KiB page (IOVA | VALID, 0 = not
 * DMA memory). A translation is two dependent loads, no lock, no call into DPDK. The
 * backends fill it when DMA memory appears (env_posix: each nvp_env_dma_malloc(); env_dpdk:
 * every memory segment at start and DPDK's memory events after) and clear it when the
 * memory goes away.
 *
 * Writers serialise on a mutex; readers never block. A level-2 table, once published,
 * lives until nvp_env_fini(), so a reader never follows a pointer to freed memory.
 * Entries are single 64-bit words, read and written atomically (relaxed: a reader racing
 * with the free of the very buffer it translates has a bug of its own). The layout is
 * public (nvpoll/env.h) so that a hot path can translate inline.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define MAP_VA_BITS NVP_ENV_IOVA_MAP_VA_BITS
#define MAP_L2_SHIFT NVP_ENV_IOVA_MAP_L1_SHIFT /* a level-1 entry covers 1 GiB */
#define MAP_L1_ENTRIES (1ull << (MAP_VA_BITS - MAP_L2_SHIFT))
#define MAP_L2_ENTRIES (1ull << (MAP_L2_SHIFT - ENV_IOVA_MAP_PAGE_SHIFT))
#define MAP_VALID NVP_ENV_IOVA_MAP_VALID

/* Accessed with __atomic builtins only (readers are lock-free, see nvpoll/env.h). */
static uint64_t *g_l1[MAP_L1_ENTRIES];
static pthread_mutex_t g_map_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t *
l2_of(uint64_t va)
{
	return __atomic_load_n(&g_l1[va >> MAP_L2_SHIFT], __ATOMIC_ACQUIRE);
}

static inline uint64_t
entry_of(uint64_t va)
{
	uint64_t *l2;

	if (nvp_unlikely(va >> MAP_VA_BITS)) {
		return 0;
	}
	l2 = l2_of(va);
	if (nvp_unlikely(l2 == NULL)) {
		return 0;
	}
	return __atomic_load_n(&l2[(va >> ENV_IOVA_MAP_PAGE_SHIFT) & (MAP_L2_ENTRIES - 1)],
			       __ATOMIC_RELAXED);
}

uint64_t *const *
nvp_env_iova_map(void)
{
	return g_l1;
}

/* The level-2 table for @va, made on first use. Caller holds g_map_lock. */
static uint64_t *
l2_get_locked(uint64_t va)
{
	uint64_t *l2 = l2_of(va);
	void *p;

	if (l2 != NULL) {
		return l2;
	}
	/* 2 MiB of zeroes that cost nothing until touched. */
	p = mmap(NULL, MAP_L2_ENTRIES * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return NULL;
	}
	l2 = p;
	__atomic_store_n(&g_l1[va >> MAP_L2_SHIFT], l2, __ATOMIC_RELEASE);
	return l2;
}

static int
map_range(uint64_t va, uint64_t iova, uint64_t len, bool set)
{
	uint64_t ps = ENV_IOVA_MAP_PAGE_SIZE;
	uint64_t off;
	int rc = 0;

	if (((va | iova | len) & (ps - 1)) != 0 || len == 0 || va + len < va ||
	    (va + len - 1) >> MAP_VA_BITS) {
		NVP_ERRLOG("IOVA map: range 0x%llx+0x%llx (IOVA 0x%llx) is not page aligned or "
			   "beyond 48-bit addresses",
			   (unsigned long long)va, (unsigned long long)len,
			   (unsigned long long)iova);
		return -EINVAL;
	}
	pthread_mutex_lock(&g_map_lock);
	for (off = 0; off < len; off += ps) {
		uint64_t pva = va + off;
		uint64_t *l2 = set ? l2_get_locked(pva) : l2_of(pva);

		if (l2 == NULL) {
			if (set) {
				rc = -ENOMEM;
				break;
			}
			continue;
		}
		__atomic_store_n(&l2[(pva >> ENV_IOVA_MAP_PAGE_SHIFT) & (MAP_L2_ENTRIES - 1)],
				 set ? (iova + off) | MAP_VALID : 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&g_map_lock);
	if (rc != 0) {
		NVP_ERRLOG("IOVA map: out of memory for a translation table");
		map_range(va, 0, off, false);
	}
	return rc;
}

int
env_iova_map_set(uint64_t va, uint64_t iova, uint64_t len)
{
	return map_range(va, iova, len, true);
}

void
env_iova_map_clear(uint64_t va, uint64_t len)
{
	(void)map_range(va, 0, len, false);
}

void
env_iova_map_fini(void)
{
	uint64_t i;

	pthread_mutex_lock(&g_map_lock);
	for (i = 0; i < MAP_L1_ENTRIES; i++) {
		uint64_t *l2 = __atomic_load_n(&g_l1[i], __ATOMIC_RELAXED);

		if (l2 != NULL) {
			__atomic_store_n(&g_l1[i], NULL, __ATOMIC_RELAXED);
			munmap((void *)l2, MAP_L2_ENTRIES * sizeof(uint64_t));
		}
	}
	pthread_mutex_unlock(&g_map_lock);
}

/*
 * The I/O path's translation. The common case (a buffer inside one page, or the caller
 * wants no more than the rest of the page) costs the two loads of one lookup; longer
 * ranges look at each further page until the IOVA stops following on or @size is met.
 */
uint64_t
nvp_env_vtophys(const void *vaddr, uint64_t *size)
{
	uint64_t va = (uint64_t)(uintptr_t)vaddr;
	uint64_t iova = nvp_env_iova_map_translate(g_l1, vaddr);
	uint64_t have, want;

	if (iova == NVP_ENV_BAD_IOVA || size == NULL) {
		return iova;
	}
	want = *size;
	have = ENV_IOVA_MAP_PAGE_SIZE - (va & (ENV_IOVA_MAP_PAGE_SIZE - 1));
	while (have < want) {
		uint64_t next = entry_of(va + have);

		if (!(next & MAP_VALID) || (next & ~(ENV_IOVA_MAP_PAGE_SIZE - 1)) != iova + have) {
			break;
		}
		have += ENV_IOVA_MAP_PAGE_SIZE;
	}
	if (want > have) {
		*size = have;
	}
	return iova;
}
