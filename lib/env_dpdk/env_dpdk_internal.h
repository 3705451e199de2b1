/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the files of lib/env_dpdk only. */
#ifndef NVP_ENV_DPDK_INTERNAL_H
#define NVP_ENV_DPDK_INTERNAL_H

#include "env_common/env_internal.h"

/* Free every DMA buffer still allocated (before rte_eal_cleanup()), saying how many. */
void env_dpdk_mem_fini(void);

#endif /* NVP_ENV_DPDK_INTERNAL_H */
