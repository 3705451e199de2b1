/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface between lib/env_common (shared by both environments) and the
 * backends lib/env_posix and lib/env_dpdk. Not installed; nothing outside lib/env_* may
 * include it. Names here start with env_ so the linker map keeps them private.
 *
 * Dependency direction: the backends call into env_common, never the reverse, so the
 * static archives link in the order  env_<backend> env_common util.
 */
#ifndef NVP_ENV_INTERNAL_H
#define NVP_ENV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nvpoll/barrier.h"
#include "nvpoll/env.h"

/* ---- options ---- */

/*
 * Copy the caller's options into @dst, starting from nvp_env_opts_init() defaults and
 * taking only the first @src->opts_size bytes (an older caller knows fewer fields).
 * @src may be NULL (all defaults). \return 0 or -EINVAL (opts_size too small).
 */
/* dma_fault.c: true if this allocation must fail (nvp_env_dma_inject_failure()). */
bool env_dma_fail_injected(void);

int env_opts_copy(struct nvp_env_opts *dst, const struct nvp_env_opts *src);

/*
 * The options the environment was started with, for the parts of env that run later
 * (real PCI enumeration honours no_pci). The backend records them in nvp_env_init();
 * the strings are copied. Before that, env_opts_get() returns the defaults.
 */
void env_opts_set(const struct nvp_env_opts *opts);
const struct nvp_env_opts *env_opts_get(void);

/* ---- backend hooks (lib/env_common/init.c calls them under its init lock) ---- */

/*
 * Check the backend's own options, start it (DPDK: the EAL; posix: the memory cap) and,
 * unless opts->quiet, say what started. Called by nvp_env_init() after the common checks;
 * on success nvp_env_init() records @opts (env_opts_get()) and calibrates the ticks.
 * \return 0 or -errno (nvp_env_init() returns it).
 */
int env_backend_start(const struct nvp_env_opts *opts);

/* Undo env_backend_start() (nvp_env_fini()). */
void env_backend_stop(void);
/* Stop the virtual devices' threads before memory goes (nvp_env_fini). */
void env_vdev_quiesce_all(void);

/* ---- PCI ---- */

/*
 * Real PCI enumeration, called by nvp_pci_enumerate() after the virtual functions,
 * without the registry lock held. Calls @cb for each real function of class @class_id
 * (0 = any) and stops on a non-zero return, which it passes back.
 *
 * lib/env_common/pci_real.c: rescans the bus (libpciaccess; $NVP_SYSFS_ROOT for a fake
 * tree) unless env was started with no_pci, and offers the NVMe functions bound to vfio-pci
 * or uio_pci_generic; the others are skipped with an info message saying why.
 */
/* Real NVMe functions found but not offered, with the reason (pci_real.c). \return count. */
int env_pci_skipped_real(uint32_t class_id,
			 void (*cb)(void *ctx, const struct nvp_pci_addr *addr, const char *reason),
			 void *ctx);
int env_pci_enumerate_real(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev),
			   void *ctx);

/*
 * Find a real function by address; nvp_pci_device_find() asks it when no virtual
 * function has the address. \return the device (bound to any driver: attaching to one the
 * kernel still owns fails with a message saying so) or NULL.
 */
struct nvp_pci_device *env_pci_device_find_real(const struct nvp_pci_addr *addr);

/* ---- DMA for real devices: backend hooks and the generic VFIO container ---- */

/*
 * Open the vfio device fd of @bdf (IOMMU group @group) with the backend's DMA memory mapped
 * into the same container. env_posix uses env_vfio_generic_open(); env_dpdk lets DPDK's
 * default container hold the group (rte_vfio_setup_device()), where DPDK maps its memory.
 * \return 0 or -errno (message logged).
 */
int env_backend_vfio_open(const char *bdf, int group, int *device_fd);
void env_backend_vfio_close(const char *bdf, int group, int device_fd);

/*
 * True if nvp_env_vtophys() answers physical addresses, as a device without an IOMMU
 * (uio_pci_generic) needs. If not, a sentence for people saying why goes into @why.
 */
bool env_backend_iova_is_phys(char *why, size_t whylen);

/*
 * A VFIO container of our own (/dev/vfio/vfio, type1 IOMMU) for backends whose memory
 * DPDK does not manage: the group joins it, then every DMA region registered with
 * env_dma_register() is mapped at IOVA = @iova. \return 0 or -errno (message logged).
 */
int env_vfio_generic_open(const char *bdf, int group, int *device_fd);
void env_vfio_generic_close(const char *bdf, int group, int device_fd);

/*
 * A backend tells env about each DMA buffer (IOVA = @iova) so that a VFIO container opened
 * now or later maps it (VFIO_IOMMU_MAP_DMA), and unmaps it on free.
 * \return 0 or -errno (the container refused the mapping: memlock limit).
 */
int env_dma_register(void *vaddr, uint64_t iova, uint64_t len);
void env_dma_unregister(void *vaddr);

/* ---- the IOVA map (iova_map.c): nvp_env_vtophys() reads it, lock-free ---- */

#define ENV_IOVA_MAP_PAGE_SHIFT NVP_ENV_IOVA_MAP_PAGE_SHIFT
#define ENV_IOVA_MAP_PAGE_SIZE (1ull << ENV_IOVA_MAP_PAGE_SHIFT)

/*
 * Make [@va, @va + @len) DMA memory at IOVA @iova onwards (all three 4 KiB aligned), or
 * forget it. Backends call these when DMA memory appears and goes away.
 * \return 0, -EINVAL (misaligned, beyond 48-bit addresses) or -ENOMEM (nothing set).
 */
int env_iova_map_set(uint64_t va, uint64_t iova, uint64_t len);
void env_iova_map_clear(uint64_t va, uint64_t len);
/* Drop every translation and table (nvp_env_fini(), after the backend stopped). */
void env_iova_map_fini(void);

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t
env_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
/* The TSC as a function (a counter to hand to env_ticks_calibrate()); the read itself is
 * barrier.h's, the one place that reads it. */
static inline uint64_t
env_rdtsc(void)
{
	return nvp_tsc_read();
}
#endif

/*
 * True if the TSC ticks at a constant rate in every power state and on every CPU
 * (CPUID invariant TSC, or "constant_tsc" and "nonstop_tsc" in /proc/cpuinfo, which a
 * hypervisor may report without the CPUID bit). Always false off x86.
 */
bool env_tsc_is_usable(void);

/*
 * Measure the rate of @read_counter against CLOCK_MONOTONIC (about 10 ms, once; may
 * sleep). \return counts per second, never 0.
 */
uint64_t env_ticks_calibrate(uint64_t (*read_counter)(void));

/* Busy-wait @us microseconds on @read_counter running at @hz, then return. Long waits
 * sleep in nanosleep() first and spin only the last stretch. */
void env_delay_us(uint32_t us, uint64_t (*read_counter)(void), uint64_t hz);

#endif /* NVP_ENV_INTERNAL_H */
