/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latencies for the unit tests of the control loops (the throttle's monitor, kyber, fair,
 * deadline, the hybrid waiter): seeded and variable, as a device's are. A loop tested
 * against one constant latency passes with bugs that a spread exposes (a minimum taken
 * for a maximum, a wake-up recorded for a prediction), so the tests draw latencies from
 * a lognormal given its median and p99 (the software controller's model of a drive,
 * lib/emu/emu_model.c) with a generator the test seeds: every run sees the same
 * sequence, and nothing here reads a clock.
 */
#ifndef UT_LAT_H
#define UT_LAT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define UT_LAT_Z99 2.326347874 /* standard normal quantile of 0.99 */

struct ut_lat {
	uint64_t state;
	double spare; /* the second normal of a Box-Muller pair */
	bool has_spare;
};

static inline void
ut_lat_seed(struct ut_lat *r, uint64_t seed)
{
	r->state = seed;
	r->spare = 0.0;
	r->has_spare = false;
}

/* splitmix64 */
static inline uint64_t
ut_lat_next(struct ut_lat *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static inline double
ut_lat_unit(struct ut_lat *r)
{
	return ((double)(ut_lat_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* True with probability @pct percent. */
static inline bool
ut_lat_chance(struct ut_lat *r, double pct)
{
	return ut_lat_unit(r) * 100.0 < pct;
}

/* A standard normal (Box-Muller). */
static inline double
ut_lat_normal(struct ut_lat *r)
{
	double u, v, m;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	u = ut_lat_unit(r);
	v = ut_lat_unit(r);
	m = sqrt(-2.0 * log(u));
	r->spare = m * sin(6.283185307179586 * v);
	r->has_spare = true;
	return m * cos(6.283185307179586 * v);
}

/* A lognormal latency with median @p50 and 99th percentile @p99 (same unit), at least 1. */
static inline uint64_t
ut_lat_lognormal(struct ut_lat *r, uint64_t p50, uint64_t p99)
{
	double sigma = p99 > p50 ? log((double)p99 / (double)p50) / UT_LAT_Z99 : 0.0;
	double v = (double)p50 * exp(sigma * ut_lat_normal(r));

	return v < 1.0 ? 1 : (uint64_t)v;
}

#endif /* UT_LAT_H */
