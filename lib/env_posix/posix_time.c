/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ticks: the TSC where it is invariant, calibrated once against CLOCK_MONOTONIC;
 * otherwise CLOCK_MONOTONIC in nanoseconds. Usable before nvp_env_init(): the source is
 * chosen on first use, the rate measured on the first nvp_env_get_ticks_hz() (or by
 * nvp_env_init()), both exactly once and thread-safe.
 */
#include <pthread.h>
#include <stdatomic.h>

#define NVP_LOG_COMPONENT "env"
#include "env_posix_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

enum tick_source {
	TICKS_UNKNOWN = 0,
	TICKS_TSC,
	TICKS_CLOCK,
};

static _Atomic int g_source = TICKS_UNKNOWN;
static _Atomic uint64_t g_hz;
static pthread_once_t g_source_once = PTHREAD_ONCE_INIT;
static pthread_once_t g_hz_once = PTHREAD_ONCE_INIT;

static void
choose_source(void)
{
	int source = env_tsc_is_usable() ? TICKS_TSC : TICKS_CLOCK;

	atomic_store(&g_source, source);
}

uint64_t
nvp_env_get_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	int source = atomic_load_explicit(&g_source, memory_order_relaxed);

	if (nvp_likely(source == TICKS_TSC)) {
		return env_rdtsc();
	}
	if (nvp_unlikely(source == TICKS_UNKNOWN)) {
		pthread_once(&g_source_once, choose_source);
		return nvp_env_get_ticks();
	}
#endif
	return env_clock_ns();
}

bool
nvp_env_get_ticks_is_tsc(void)
{
	pthread_once(&g_source_once, choose_source);
	return atomic_load(&g_source) == TICKS_TSC;
}

static void
calibrate(void)
{
	uint64_t hz = 1000000000ull;

	pthread_once(&g_source_once, choose_source);
	if (atomic_load(&g_source) == TICKS_TSC) {
		hz = env_ticks_calibrate(nvp_env_get_ticks);
	} else {
		NVP_DEBUGLOG("no invariant TSC; ticks are CLOCK_MONOTONIC nanoseconds");
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
	pthread_once(&g_hz_once, calibrate);
	return atomic_load(&g_hz);
}

void
nvp_env_delay_us(uint32_t us)
{
	env_delay_us(us, nvp_env_get_ticks, nvp_env_get_ticks_hz());
}
