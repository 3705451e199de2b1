/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the files of lib/env_dpdk only. */
#ifndef NVP_ENV_DPDK_INTERNAL_H
#define NVP_ENV_DPDK_INTERNAL_H

#include <stdbool.h>

#include "env_common/env_internal.h"

/* Free every DMA buffer still allocated (before rte_eal_cleanup()), saying how many. */
/* Fill env's IOVA map with DPDK's memory and follow its changes. \return 0 or -errno. */
int env_dpdk_mem_init(void);
void env_dpdk_mem_fini(void);

/*
 * Should the EAL run with --iova-mode=pa? Yes when PCI is not off, hugepages are used, we
 * are root, and the NVMe functions on the bus are bound to uio_pci_generic and none to
 * vfio-pci (a device without an IOMMU DMAs to physical addresses). Says why not when
 * uio functions are present but cannot be served.
 */
bool env_dpdk_want_iova_pa(const struct nvp_env_opts *opts, bool no_huge);
/* NVMe functions bound to vfio-pci or uio_pci_generic (user-space drivers) on this host. */
int env_dpdk_count_user_nvme(void);

#endif /* NVP_ENV_DPDK_INTERNAL_H */
