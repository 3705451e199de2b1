/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DMA allocation failure injection, for tests of every path that allocates DMA memory
 * (queue rings, PRP list pages, bounce buffers): the calling thread's next allocations
 * pass or fail as asked. Per thread, so a software controller's own thread or another
 * test thread is never hit by accident. Both backends ask env_dma_fail_injected() first.
 */
#include <stdbool.h>
#include <stdint.h>

#include "env_internal.h"
#include "nvpoll/env.h"

static __thread uint32_t t_skip;
static __thread uint32_t t_fail;
static __thread uint32_t t_failed;

void
nvp_env_dma_inject_failure(uint32_t skip, uint32_t count)
{
	t_skip = skip;
	t_fail = count;
	t_failed = 0;
}

uint32_t
nvp_env_dma_get_injected_failures(void)
{
	return t_failed;
}

bool
env_dma_fail_injected(void)
{
	if (t_fail == 0) {
		return false;
	}
	if (t_skip > 0) {
		t_skip--;
		return false;
	}
	t_fail--;
	t_failed++;
	return true;
}
