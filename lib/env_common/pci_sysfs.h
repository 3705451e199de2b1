/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What sysfs says about a PCI function: ids, the kernel driver bound to it, its IOMMU group
 * and NUMA node. Every path starts at nvp_env_sysfs_root(): "/sys", or $NVP_SYSFS_ROOT so
 * tests can run against a fake tree. Internal to lib/env_*; what applications may ask
 * (scanning, usability, IOMMU groups: app/doctor does) is in include/nvpoll/env.h.
 */
#ifndef NVP_ENV_PCI_SYSFS_H
#define NVP_ENV_PCI_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "nvpoll/env.h"

/* True when NVP_SYSFS_ROOT points at a fake tree (then libpciaccess is not used). */
bool env_sysfs_is_fake(void);

/* True if /sys/bus/pci/devices/@bdf exists. */
bool env_pci_sysfs_exists(const char *bdf);

/*
 * Fill @info for @bdf from sysfs (ids, driver, IOMMU group, NUMA node).
 * \return 0, -ENODEV if the function is not in sysfs, -EINVAL for a bad address.
 */
int env_pci_sysfs_read(const char *bdf, struct nvp_pci_info *info);

#endif /* NVP_ENV_PCI_SYSFS_H */
