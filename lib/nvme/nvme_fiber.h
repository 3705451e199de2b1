/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fibers (nvme_fiber.c): a function run a piece per poll on a stack of its own, by the
 * thread that created it. Internal to lib/nvme; apart from nvme_internal.h so that the
 * multipath layer, which is built on the public API only, can run a path's reset in one.
 */
#ifndef NVP_NVME_FIBER_H
#define NVP_NVME_FIBER_H

#include <stdbool.h>
#include <stddef.h>

struct nvme_fiber;

/*
 * A fiber that will run @fn(@arg) on a stack of @stack_size bytes (rounded up to pages),
 * with an inaccessible guard page below it: an overflow faults instead of writing over
 * the neighbouring memory. It starts at its first nvme_fiber_resume(), on this thread.
 * \return 0; -ENOMEM (no memory or mapping for the stack).
 */
int nvme_fiber_create(void (*fn)(void *arg), void *arg, size_t stack_size, struct nvme_fiber **out);
/* Run @f until it yields or ends (its owner thread only). \return true once it ended. */
bool nvme_fiber_resume(struct nvme_fiber *f);
/* In a fiber: back to the poll that resumed it (true). Outside one: false, nothing done. */
bool nvme_fiber_yield(void);
bool nvme_fiber_is_owner(const struct nvme_fiber *f);
void nvme_fiber_destroy(struct nvme_fiber *f);

#endif /* NVP_NVME_FIBER_H */
