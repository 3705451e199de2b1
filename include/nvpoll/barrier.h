/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * Memory ordering, MMIO and the tick counter for the hot path: the only place barriers
 * are spelled out. Each says which ordering it enforces, against whom, and why it costs
 * what it costs on each architecture.
 *
 * The driver talks to a device through two kinds of memory: DMA memory (ordinary
 * write-back cacheable memory the device reads and writes coherently: SQ and CQ rings,
 * data buffers) and MMIO (BAR0, mapped uncached: registers and doorbells). Two orderings
 * matter on the I/O path:
 *  - submission: the SQ entry (DMA memory) must be visible to the device before the
 *    doorbell write (MMIO) that tells it to fetch the entry: nvp_dma_wmb();
 *  - completion: the rest of a CQ entry must not be read before its phase tag has been
 *    seen to change (the device writes the tag with, or after, the rest): nvp_dma_rmb();
 *    and every read of the entries must be done before the CQ head doorbell hands their
 *    slots back to the device: nvp_dma_rwmb().
 * Linux names the arm64 ones dma_rmb()/dma_wmb() (dmb oshld/oshst): the device is in the
 * outer shareable domain, so an inner shareable dmb ish is not enough, and a full dsb is
 * more than needed.
 */
#ifndef NVPOLL_BARRIER_H
#define NVPOLL_BARRIER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Compiler barrier: stops the compiler reordering, costs nothing at run time. */
#define nvp_compiler_barrier() __asm__ volatile("" ::: "memory")

#if defined(__x86_64__) || defined(__i386__)
/*
 * x86 (SDM vol. 3, 8.2.2): loads are not reordered with other loads, stores are not
 * reordered with other stores (a store to uncached MMIO included) nor with older loads.
 * DMA memory is write-back and snooped by the device. So all three DMA orderings need
 * only the compiler not to move the accesses: no fence instruction on the I/O path.
 */
#define nvp_dma_rmb() nvp_compiler_barrier()
#define nvp_dma_wmb() nvp_compiler_barrier()
#define nvp_dma_rwmb() nvp_compiler_barrier()
/*
 * Fences for what the above do not cover: write-combining mappings (a controller memory
 * buffer mapped WC: stores may pass each other until sfence), non-temporal stores.
 */
#define nvp_wmb() __asm__ volatile("sfence" ::: "memory")
#define nvp_rmb() __asm__ volatile("lfence" ::: "memory")
#define nvp_mb() __asm__ volatile("mfence" ::: "memory")
/* Between CPUs (TSO): only the compiler can reorder these. */
#define nvp_smp_wmb() nvp_compiler_barrier()
#define nvp_smp_rmb() nvp_compiler_barrier()
#define nvp_pause() __asm__ volatile("pause")
#elif defined(__aarch64__)
/* Loads before later loads, as seen with the device (outer shareable): dma_rmb(). */
#define nvp_dma_rmb() __asm__ volatile("dmb oshld" ::: "memory")
/* Stores to DMA memory before a later store (the doorbell): dma_wmb(). */
#define nvp_dma_wmb() __asm__ volatile("dmb oshst" ::: "memory")
/* Loads and stores before a later store (CQ entries read before the head doorbell). */
#define nvp_dma_rwmb() __asm__ volatile("dmb osh" ::: "memory")
#define nvp_wmb() __asm__ volatile("dsb st" ::: "memory")
#define nvp_rmb() __asm__ volatile("dsb ld" ::: "memory")
#define nvp_mb() __asm__ volatile("dsb sy" ::: "memory")
#define nvp_smp_wmb() __asm__ volatile("dmb ishst" ::: "memory")
#define nvp_smp_rmb() __asm__ volatile("dmb ishld" ::: "memory")
#define nvp_pause() __asm__ volatile("yield" ::: "memory")
#else
/* Anything else: the strongest the compiler offers. */
#define nvp_dma_rmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_dma_wmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_dma_rwmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_wmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_rmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define nvp_smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define nvp_smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define nvp_pause() nvp_compiler_barrier()
#endif

/** Read-prefetch of a cache line the next step will need (the next CQ entry). */
#define nvp_prefetch(addr) __builtin_prefetch((addr), 0, 3)

/**
 * The CPU's time-stamp counter, read inline. Meaningful only where nvp_env_get_ticks()
 * says it is the TSC (nvp_env_get_ticks_is_tsc()); 0 elsewhere.
 */
static inline uint64_t
nvp_tsc_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/**
 * Add 1 to a count that only the calling thread writes and other threads read (the
 * writer side of a sequence count: odd while the data it guards changes). Not locked: no
 * other writer. x86: one add to memory, saving 4 instructions per bdev I/O at QD1
 * (measured against a relaxed atomic store of count + 1, which GCC makes a load, an add
 * and a store); elsewhere that relaxed store. Order it against the data with
 * nvp_smp_wmb().
 */
static inline void
nvp_seq_inc_local(uint32_t *count)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("addl $1, %0" : "+m"(*count)::"memory");
#else
	__atomic_store_n(count, *count + 1, __ATOMIC_RELAXED);
#endif
}

static inline uint32_t
nvp_mmio_read4(const volatile uint32_t *addr)
{
	return *addr;
}

static inline void
nvp_mmio_write4(volatile uint32_t *addr, uint32_t val)
{
	*addr = val;
}

/* 64-bit registers (CAP, ASQ, ACQ) are accessed as two dwords, low first: some
 * controllers and bridges do not support 8-byte MMIO. */
static inline uint64_t
nvp_mmio_read8(const volatile uint64_t *addr)
{
	const volatile uint32_t *p = (const volatile uint32_t *)addr;
	uint32_t lo = p[0];
	uint32_t hi = p[1];

	return ((uint64_t)hi << 32) | lo;
}

static inline void
nvp_mmio_write8(volatile uint64_t *addr, uint64_t val)
{
	volatile uint32_t *p = (volatile uint32_t *)addr;

	p[0] = (uint32_t)val;
	p[1] = (uint32_t)(val >> 32);
}

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_BARRIER_H */
