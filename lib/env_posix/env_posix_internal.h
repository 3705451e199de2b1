/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the files of lib/env_posix only. */
#ifndef NVP_ENV_POSIX_INTERNAL_H
#define NVP_ENV_POSIX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "env_common/env_internal.h"

/* Cap the bytes of DMA memory allocated at once (0 = no cap); from opts.mem_size_mb. */
void env_posix_mem_set_limit(uint64_t bytes);

/* Unmap every DMA buffer still allocated (nvp_env_fini()), saying how many there were. */
void env_posix_mem_fini(void);

#endif /* NVP_ENV_POSIX_INTERNAL_H */
