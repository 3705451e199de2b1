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
 * with the free of the very buffer it translates has a bug of its own).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define MAP_VA_BITS 48
#define MAP_L2_SHIFT 30 /* a level-1 entry covers 1 GiB */
#define MAP_L1_ENTRIES (1ull << (MAP_VA_BITS - MAP_L2_SHIFT))
#define MAP_L2_ENTRIES (1ull << (MAP_L2_SHIFT - ENV_IOVA_MAP_PAGE_SHIFT))
#define MAP_VALID 1ull

typedef _Atomic uint64_t map_entry;

static _Atomic(map_entry *) g_l1[MAP_L1_ENTRIES];
static pthread_mutex_t g_map_lock = PTHREAD_MUTEX_INITIALIZER;

static inline map_entry *
l2_of(uint64_t va)
{
	return atomic_load_explicit(&g_l1[va >> MAP_L2_SHIFT], memory_order_acquire);
}

static inline uint64_t
entry_of(uint64_t va)
{
	map_entry *l2;

	if (nvp_unlikely(va >> MAP_VA_BITS)) {
		return 0;
	}
	l2 = l2_of(va);
	if (nvp_unlikely(l2 == NULL)) {
		return 0;
	}
	return atomic_load_explicit(&l2[(va >> ENV_IOVA_MAP_PAGE_SHIFT) & (MAP_L2_ENTRIES - 1)],
				    memory_order_relaxed);
}

/* The level-2 table for @va, made on first use. Caller holds g_map_lock. */
static map_entry *
l2_get_locked(uint64_t va)
{
	map_entry *l2 = l2_of(va);
	void *p;

	if (l2 != NULL) {
		return l2;
	}
	/* 2 MiB of zeroes that cost nothing until touched. */
	p = mmap(NULL, MAP_L2_ENTRIES * sizeof(map_entry), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return NULL;
	}
	l2 = p;
	atomic_store_explicit(&g_l1[va >> MAP_L2_SHIFT], l2, memory_order_release);
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
		map_entry *l2 = set ? l2_get_locked(pva) : l2_of(pva);

		if (l2 == NULL) {
			if (set) {
				rc = -ENOMEM;
				break;
			}
			continue;
		}
		atomic_store_explicit(&l2[(pva >> ENV_IOVA_MAP_PAGE_SHIFT) & (MAP_L2_ENTRIES - 1)],
				      set ? (iova + off) | MAP_VALID : 0, memory_order_relaxed);
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
		map_entry *l2 = atomic_load_explicit(&g_l1[i], memory_order_relaxed);

		if (l2 != NULL) {
			atomic_store_explicit(&g_l1[i], NULL, memory_order_relaxed);
			munmap((void *)l2, MAP_L2_ENTRIES * sizeof(map_entry));
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
	uint64_t e = entry_of(va);
	uint64_t off = va & (ENV_IOVA_MAP_PAGE_SIZE - 1);
	uint64_t iova, have, want;

	if (nvp_unlikely(!(e & MAP_VALID))) {
		return NVP_ENV_BAD_IOVA;
	}
	iova = (e & ~(ENV_IOVA_MAP_PAGE_SIZE - 1)) + off;
	if (size == NULL) {
		return iova;
	}
	want = *size;
	have = ENV_IOVA_MAP_PAGE_SIZE - off;
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
