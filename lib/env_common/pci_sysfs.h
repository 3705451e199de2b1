/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What sysfs says about a PCI function: ids, the kernel driver bound to it, its IOMMU group
 * and NUMA node, and whether an IOMMU group is viable for vfio. Every path starts at
 * env_sysfs_root(): "/sys", or $NVP_SYSFS_ROOT so tests (and app/doctor) can run against a
 * fake tree. Internal to lib/env_* and app/doctor (which links the static library).
 */
#ifndef NVP_ENV_PCI_SYSFS_H
#define NVP_ENV_PCI_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "nvpoll/env.h"

struct env_pci_info {
	struct nvp_pci_addr addr;
	char bdf[NVP_PCI_ADDR_STRLEN];
	struct nvp_pci_id id;
	char driver[32]; /* "" when no driver is bound */
	int iommu_group; /* -1 when the function has none (no IOMMU) */
	int numa_node;   /* -1 when unknown */
};

/* "/sys" or $NVP_SYSFS_ROOT. */
const char *env_sysfs_root(void);

/* True when NVP_SYSFS_ROOT points at a fake tree (then libpciaccess is not used). */
bool env_sysfs_is_fake(void);

/* True if /sys/bus/pci/devices/@bdf exists. */
bool env_pci_sysfs_exists(const char *bdf);

/*
 * Fill @info for @bdf from sysfs (ids, driver, IOMMU group, NUMA node).
 * \return 0, -ENODEV if the function is not in sysfs, -EINVAL for a bad address.
 */
int env_pci_sysfs_read(const char *bdf, struct env_pci_info *info);

/*
 * Call @cb for every PCI function of class @class_id (0 = any), in address order: found
 * with libpciaccess (class match, mask 0xffffff) on the real /sys, by reading the fake tree
 * when NVP_SYSFS_ROOT is set. Stops on a non-zero return and passes it back.
 * \return 0, @cb's value, or -errno when the bus cannot be scanned.
 */
int env_pci_scan(uint32_t class_id, int (*cb)(void *ctx, const struct env_pci_info *info),
		 void *ctx);

/* True if /sys/kernel/iommu_groups has at least one group: an IOMMU is on. */
bool env_iommu_present(void);

/*
 * Is IOMMU group @group viable for vfio (every function in it bound to vfio-pci,
 * pci-stub, pcieport or nothing)? If not, a sentence for people naming the function in
 * the way and what to do goes into @why. \return 0 (viable), -EPERM (not viable),
 * -ENOENT (no such group).
 */
int env_iommu_group_viable(int group, char *why, size_t whylen);

/*
 * Why a userspace driver cannot use function @info (bound to nvme, no driver, ...), or
 * "" if it can (bound to vfio-pci or uio_pci_generic). \return 0 if usable, else -errno
 * matching the sentence (-EBUSY bound to a kernel driver, -ENODEV no driver).
 */
int env_pci_usable(const struct env_pci_info *info, char *why, size_t whylen);

#endif /* NVP_ENV_PCI_SYSFS_H */
