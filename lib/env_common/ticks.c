/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time helpers shared by both backends: is the TSC usable, how fast does a counter tick,
 * precise short delays, and per-thread CPU time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "env_internal.h"
#include "nvpoll/util.h"

/* Calibration window: long enough that clock read jitter is a few ppm of it. */
#define CALIBRATE_NS 10000000ull
/* Delays at most this long spin; longer ones sleep first. */
#define DELAY_SPIN_US 200u

#if defined(__x86_64__) || defined(__i386__)
static bool
cpuinfo_has_flags(const char *a, const char *b)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (f == NULL) {
		return false;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "flags", 5) == 0) {
			found = strstr(line, a) != NULL && strstr(line, b) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}
#endif

bool
env_tsc_is_usable(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;

	/* CPUID 8000_0007h EDX bit 8: invariant TSC (Intel SDM vol. 3, 17.17.1). */
	if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) && (edx & (1u << 8)) != 0) {
		return true;
	}
	return cpuinfo_has_flags(" constant_tsc", " nonstop_tsc");
#else
	return false;
#endif
}

/*
 * Read @read_counter and CLOCK_MONOTONIC as close together as possible: the pair with
 * the tightest bracket out of a few tries, so a preemption between them does not skew
 * the calibration.
 */
static void
read_pair(uint64_t (*read_counter)(void), uint64_t *counter, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t c0 = read_counter();
		uint64_t t = env_clock_ns();
		uint64_t c1 = read_counter();

		if (c1 - c0 < best) {
			best = c1 - c0;
			*counter = c0 + (c1 - c0) / 2;
			*ns = t;
		}
	}
}

uint64_t
env_ticks_calibrate(uint64_t (*read_counter)(void))
{
	struct timespec req = { .tv_sec = 0, .tv_nsec = (long)CALIBRATE_NS };
	uint64_t c0 = 0, c1 = 0, t0 = 0, t1 = 0;
	unsigned __int128 hz;

	read_pair(read_counter, &c0, &t0);
	while (nanosleep(&req, &req) != 0 && errno == EINTR) {
	}
	read_pair(read_counter, &c1, &t1);
	if (t1 <= t0 || c1 <= c0) {
		return 1000000000ull; /* cannot happen with a monotonic counter */
	}
	hz = (unsigned __int128)(c1 - c0) * 1000000000ull / (t1 - t0);
	/* Round to 10 kHz: the measurement is not better than that. */
	hz = (hz + 5000) / 10000 * 10000;
	return hz != 0 ? (uint64_t)hz : 1;
}

void
env_delay_us(uint32_t us, uint64_t (*read_counter)(void), uint64_t hz)
{
	uint64_t start = read_counter();
	uint64_t wait = nvp_us_to_ticks(us, hz);

	if (us > DELAY_SPIN_US) {
		uint64_t sleep_ns = (uint64_t)(us - DELAY_SPIN_US / 2) * 1000u;
		struct timespec req = {
			.tv_sec = (time_t)(sleep_ns / 1000000000u),
			.tv_nsec = (long)(sleep_ns % 1000000000u),
		};

		while (nanosleep(&req, &req) != 0 && errno == EINTR) {
		}
	}
	while (read_counter() - start < wait) {
		nvp_pause();
	}
}

uint64_t
nvp_env_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
		return 0;
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
