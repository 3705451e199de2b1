/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ticks are DPDK's TSC cycles. The rate is fixed on first use: rte_get_tsc_hz() when the
 * EAL is already up, otherwise our own calibration, so ticks work before nvp_env_init()
 * and the rate a caller saw never changes afterwards.
 */
#include <pthread.h>
#include <stdatomic.h>

#include <rte_cycles.h>

#include "env_dpdk_internal.h"
#include "nvpoll/util.h"

static _Atomic uint64_t g_hz;
static pthread_once_t g_hz_once = PTHREAD_ONCE_INIT;

uint64_t
nvp_env_get_ticks(void)
{
	return rte_get_tsc_cycles();
}

bool
nvp_env_get_ticks_is_tsc(void)
{
	/* rte_get_tsc_cycles() is rdtsc on x86 (another counter elsewhere). */
#if defined(__x86_64__) || defined(__i386__)
	return true;
#else
	return false;
#endif
}

static void
fix_hz(void)
{
	/* 0 until rte_eal_init() has measured it. */
	uint64_t hz = rte_get_tsc_hz();

	if (hz == 0) {
		hz = env_ticks_calibrate(nvp_env_get_ticks);
	}
	atomic_store(&g_hz, hz);
}

uint64_t
nvp_env_get_ticks_hz(void)
{
	uint64_t hz = atomic_load_explicit(&g_hz, memory_order_relaxed);

	if (nvp_likely(hz != 0)) {
		return hz;
	}
	pthread_once(&g_hz_once, fix_hz);
	return atomic_load(&g_hz);
}

void
nvp_env_delay_us(uint32_t us)
{
	env_delay_us(us, nvp_env_get_ticks, nvp_env_get_ticks_hz());
}
