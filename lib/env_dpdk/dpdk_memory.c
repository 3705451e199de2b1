/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA memory from DPDK's heap and its IOVA translation.
 *
 * The EAL runs with --iova-mode=va, where rte_mem_virt2iova() answers "IOVA = VA" for
 * any address at all, DPDK memory or not. So every translation here first asks which
 * memory segment holds the address (rte_mem_virt2memseg_list(), then the segment index
 * and whether it is in use) and only then computes the IOVA. rte_mem_iova2virt() walks
 * every segment (65536 of them for 256 MiB of --no-huge memory), far too slow for a
 * device model that translates each PRP, so it is used only when IOVA is not VA.
 *
 * The driver's translation, nvp_env_vtophys(), does none of this: it reads env's lock-free
 * IOVA map (lib/env_common/iova_map.c), which gets every memory segment at start and
 * follows DPDK's memory events (heap growing or shrinking) afterwards.
 *
 * A small sorted list of the buffers handed out lets nvp_env_dma_free() refuse pointers
 * rte_free() would corrupt the heap with (DPDK's own check exists only in debug builds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fbarray.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#define NVP_LOG_COMPONENT "env"
#include "env_dpdk_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define DEFAULT_ALIGN 64u

static pthread_mutex_t g_buf_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *g_bufs; /* sorted starts of live buffers */
static size_t g_nbufs;
static size_t g_cap;

/* Index where @addr is or would go. Caller holds g_buf_lock. */
static size_t
buf_search(uintptr_t addr)
{
	size_t lo = 0, hi = g_nbufs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_bufs[mid] < addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static int
buf_add(uintptr_t addr)
{
	size_t pos;
	int rc = 0;

	pthread_mutex_lock(&g_buf_lock);
	if (g_nbufs == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 64;
		uintptr_t *b = realloc(g_bufs, cap * sizeof(*b));

		if (b == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		g_bufs = b;
		g_cap = cap;
	}
	pos = buf_search(addr);
	memmove(&g_bufs[pos + 1], &g_bufs[pos], (g_nbufs - pos) * sizeof(*g_bufs));
	g_bufs[pos] = addr;
	g_nbufs++;
out:
	pthread_mutex_unlock(&g_buf_lock);
	return rc;
}

static bool
buf_remove(uintptr_t addr)
{
	bool found = false;
	size_t pos;

	pthread_mutex_lock(&g_buf_lock);
	pos = buf_search(addr);
	if (pos < g_nbufs && g_bufs[pos] == addr) {
		memmove(&g_bufs[pos], &g_bufs[pos + 1], (g_nbufs - pos - 1) * sizeof(*g_bufs));
		g_nbufs--;
		found = true;
	}
	pthread_mutex_unlock(&g_buf_lock);
	return found;
}

/*
 * The in-use memory segment holding @va, or NULL if @va is not DPDK memory. @pmsl gets
 * its list. rte_mem_virt2memseg() alone also returns unused slots of a list.
 */
static const struct rte_memseg *
used_memseg(const void *va, struct rte_memseg_list **pmsl)
{
	struct rte_memseg_list *msl = rte_mem_virt2memseg_list(va);
	const struct rte_memseg *ms;
	int idx;

	if (msl == NULL || msl->page_sz == 0) {
		return NULL;
	}
	ms = rte_mem_virt2memseg(va, msl);
	if (ms == NULL) {
		return NULL;
	}
	/* With every slot in use (--no-huge) skip the per-slot check and its lock. */
	if (msl->memseg_arr.count != msl->memseg_arr.len) {
		idx = rte_fbarray_find_idx(&msl->memseg_arr, ms);
		if (idx < 0 || rte_fbarray_is_used(&msl->memseg_arr, (unsigned int)idx) != 1) {
			return NULL;
		}
	}
	if (ms->iova == RTE_BAD_IOVA) {
		return NULL;
	}
	*pmsl = msl;
	return ms;
}

/*
 * Bytes from @va that are DPDK memory and contiguous in both VA and IOVA, looking no
 * further than @want (the result may exceed it by less than a page). 0 if @va is not
 * DPDK memory. Stores the IOVA of @va.
 */
static uint64_t
contig_len(const void *va, uint64_t want, uint64_t *iova)
{
	struct rte_memseg_list *msl;
	const struct rte_memseg *ms = used_memseg(va, &msl);
	uint64_t off, have;

	if (ms == NULL) {
		return 0;
	}
	off = (uintptr_t)va - (uintptr_t)ms->addr;
	*iova = ms->iova + off;
	/* Every segment of the list in use (always so with --no-huge, whose 4 KiB segments
	 * would make the walk below long) and IOVA = VA: contiguous to the end of the list. */
	if (msl->memseg_arr.count == msl->memseg_arr.len && rte_eal_iova_mode() == RTE_IOVA_VA) {
		return (uintptr_t)msl->base_va + msl->len - (uintptr_t)va;
	}
	have = ms->len - off;
	while (have < want) {
		const void *next_va = (const char *)va + have;
		const struct rte_memseg *next = used_memseg(next_va, &msl);

		if (next == NULL || next->addr != next_va || next->iova != *iova + have) {
			break;
		}
		have += next->len;
	}
	return have;
}

void *
nvp_env_dma_malloc(size_t size, size_t align, uint64_t *iova)
{
	void *buf;

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
	if (!NVP_IS_POW2(align) || align > UINT32_MAX || size == 0) {
		NVP_ERRLOG("nvp_env_dma_malloc: bad size %zu or alignment %zu (a power of two)",
			   size, align);
		return NULL;
	}
	buf = rte_malloc_socket("nvpoll", size, (unsigned int)align, SOCKET_ID_ANY);
	if (buf == NULL) {
		NVP_ERRLOG("nvp_env_dma_malloc: DPDK is out of DMA memory for %zu bytes; raise "
			   "mem_size_mb or reserve more hugepages",
			   size);
		return NULL;
	}
	if (buf_add((uintptr_t)buf) != 0) {
		rte_free(buf);
		return NULL;
	}
	if (iova != NULL) {
		*iova = rte_malloc_virt2iova(buf);
	}
	return buf;
}

void *
nvp_env_dma_zmalloc(size_t size, size_t align, uint64_t *iova)
{
	void *buf = nvp_env_dma_malloc(size, align, iova);

	if (buf != NULL) {
		memset(buf, 0, size);
	}
	return buf;
}

void
nvp_env_dma_free(void *buf)
{
	if (buf == NULL) {
		return;
	}
	if (!buf_remove((uintptr_t)buf)) {
		NVP_ERRLOG("nvp_env_dma_free(%p): not a buffer from nvp_env_dma_malloc() (freed "
			   "twice, or an address inside a buffer?); ignored",
			   buf);
		return;
	}
	rte_free(buf);
}

/* ---- the IOVA map: every in-use memory segment, kept current through memory events ---- */

#define MEM_EVENT_NAME "nvpoll-iova-map"

/* A segment's pages into env's IOVA map (4 KiB pages of a hugepage follow its IOVA). */
static int
map_segment(const struct rte_memseg *ms)
{
	if (ms->addr == NULL || ms->iova == RTE_BAD_IOVA || ms->len == 0) {
		return 0;
	}
	return env_iova_map_set((uint64_t)(uintptr_t)ms->addr, ms->iova, ms->len);
}

static int
walk_map_cb(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	(void)msl;
	(void)arg;
	return map_segment(ms) != 0 ? -1 : 0;
}

/*
 * DPDK grew or shrank its heap (dynamic memory mode): add or drop the segments of
 * [@addr, @addr + @len). Runs under DPDK's memory hotplug lock, so the thread-unsafe
 * lookups are the ones to use.
 */
static void
mem_event_cb(enum rte_mem_event type, const void *addr, size_t len, void *arg)
{
	const char *va = addr;
	const char *end = va + len;

	(void)arg;
	if (type == RTE_MEM_EVENT_FREE) {
		env_iova_map_clear((uint64_t)(uintptr_t)addr, len);
		return;
	}
	while (va < end) {
		const struct rte_memseg *ms = rte_mem_virt2memseg(va, rte_mem_virt2memseg_list(va));

		if (ms == NULL || map_segment(ms) != 0) {
			NVP_ERRLOG("IOVA map: cannot map new DPDK memory at %p; I/O from it will "
				   "be refused (-EFAULT)",
				   (const void *)va);
			return;
		}
		va = (const char *)ms->addr + ms->len;
	}
}

int
env_dpdk_mem_init(void)
{
	int rc;

	if (rte_memseg_walk(walk_map_cb, NULL) != 0) {
		NVP_ERRLOG("IOVA map: cannot record DPDK's memory segments (out of memory)");
		return -ENOMEM;
	}
	rc = rte_mem_event_callback_register(MEM_EVENT_NAME, mem_event_cb, NULL);
	if (rc != 0 && rte_errno != ENOTSUP) {
		/* ENOTSUP: legacy memory, which never changes after start. */
		NVP_ERRLOG("IOVA map: cannot follow DPDK's memory events: %s",
			   rte_strerror(rte_errno));
		return -EIO;
	}
	return 0;
}

void *
nvp_env_iova_to_vaddr(uint64_t iova, uint64_t len)
{
	uint64_t start_iova = 0;
	void *va;

	if (!nvp_env_is_initialized()) {
		return NULL;
	}
	if (rte_eal_iova_mode() == RTE_IOVA_VA) {
		va = (void *)(uintptr_t)iova;
	} else {
		va = rte_mem_iova2virt(iova);
	}
	if (va == NULL) {
		return NULL;
	}
	/* The whole range must be DPDK memory, contiguous in VA and IOVA from @va. */
	if (contig_len(va, len, &start_iova) < NVP_MAX(len, 1) || start_iova != iova) {
		return NULL;
	}
	return va;
}

void
env_dpdk_mem_fini(void)
{
	size_t i, n;

	(void)rte_mem_event_callback_unregister(MEM_EVENT_NAME, NULL);
	pthread_mutex_lock(&g_buf_lock);
	n = g_nbufs;
	for (i = 0; i < g_nbufs; i++) {
		rte_free((void *)g_bufs[i]);
	}
	free(g_bufs);
	g_bufs = NULL;
	g_nbufs = 0;
	g_cap = 0;
	pthread_mutex_unlock(&g_buf_lock);
	if (n > 0) {
		NVP_WARNLOG("nvp_env_fini: %zu DMA buffers were still allocated; freed them", n);
	}
}
