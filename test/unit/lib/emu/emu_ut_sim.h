/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A closed-loop workload run against the device model alone, in model time: each job
 * keeps its queue depth of I/Os outstanding and issues a new one at the instant one
 * completes, as fio or nvp_perf would on a host with no overhead. Completion times come
 * from emu_model_read()/emu_model_write() and are processed in time order (a heap), so
 * the figures are those of the model, deterministic for a seed, and independent of how
 * loaded the machine running the test is. For emu_model_ut and emu_preset_ut.
 */
#ifndef EMU_UT_SIM_H
#define EMU_UT_SIM_H

#include "emu_ut_helpers.h"

#define UT_SIM_MAX_JOBS 4u
#define UT_SIM_MAX_QD 1024u

struct ut_sim_job {
	/* what the job does */
	bool write;
	uint32_t qd;
	uint64_t bs;
	bool seq;      /* sequential from offset 0, else random bs-aligned offsets */
	uint64_t span; /* offsets stay below this; 0: 1 GiB */
	/* what it got (completions at or after the warm-up) */
	uint64_t ios;
	uint64_t bytes;
	double *lat_us; /* latencies in us when not NULL, up to max_lat of them */
	uint32_t max_lat;
	uint32_t nlat;
	/* state */
	uint64_t next_off;
	uint64_t sub[UT_SIM_MAX_QD];
};

struct ut_sim_ev {
	uint64_t due;
	uint32_t job;
	uint32_t slot;
};

static inline void
ut_sim_sift_down(struct ut_sim_ev *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct ut_sim_ev t;

		if (l < n && h[l].due < h[m].due) {
			m = l;
		}
		if (l + 1 < n && h[l + 1].due < h[m].due) {
			m = l + 1;
		}
		if (m == i) {
			return;
		}
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static inline uint64_t
ut_sim_off(struct ut_sim_job *j, uint64_t *rng)
{
	uint64_t span = j->span != 0 ? j->span : 1ull << 30, off;

	if (j->seq) {
		off = j->next_off;
		j->next_off = (j->next_off + j->bs) % span;
		return off;
	}
	return emu_rng_next(rng) % (span / j->bs) * j->bs;
}

/* Issue job @e->job's next I/O at @t in @e's slot; @e->due becomes its completion. */
static inline void
ut_sim_issue(struct emu_ctrlr *c, struct ut_sim_job *jobs, struct ut_sim_ev *e, uint64_t t,
	     uint64_t *rng)
{
	struct ut_sim_job *j = &jobs[e->job];
	uint64_t off = ut_sim_off(j, rng);

	j->sub[e->slot] = t;
	e->due = t +
		 (j->write ? emu_model_write(c, off, j->bs, t) : emu_model_read(c, off, j->bs, t));
}

/*
 * Run @n jobs on @c's model for @secs seconds of model time from one second in; count
 * what completes after @warm seconds. Offsets come from @seed.
 */
static inline void
ut_sim_run(struct emu_ctrlr *c, struct ut_sim_job *jobs, uint32_t n, double warm, double secs,
	   uint64_t seed)
{
	static struct ut_sim_ev heap[UT_SIM_MAX_JOBS * UT_SIM_MAX_QD];
	uint64_t hz = c->ticks_hz, t0 = hz, t_warm = t0 + (uint64_t)(warm * (double)hz);
	uint64_t t_end = t0 + (uint64_t)(secs * (double)hz);
	uint32_t len = 0;

	for (uint32_t k = 0; k < n && k < UT_SIM_MAX_JOBS; k++) {
		for (uint32_t s = 0; s < jobs[k].qd && s < UT_SIM_MAX_QD; s++) {
			heap[len] = (struct ut_sim_ev){ 0, k, s };
			ut_sim_issue(c, jobs, &heap[len++], t0, &seed);
		}
	}
	for (uint32_t i = len / 2; i-- > 0;) {
		ut_sim_sift_down(heap, len, i);
	}
	while (len > 0 && heap[0].due < t_end) {
		struct ut_sim_job *j = &jobs[heap[0].job];
		uint64_t t = heap[0].due;

		if (t >= t_warm) {
			j->ios++;
			j->bytes += j->bs;
			if (j->lat_us != NULL && j->nlat < j->max_lat) {
				j->lat_us[j->nlat++] = (double)(t - j->sub[heap[0].slot]) * 1e6 /
						       (double)hz;
			}
		}
		ut_sim_issue(c, jobs, &heap[0], t, &seed);
		ut_sim_sift_down(heap, len, 0);
	}
}

static inline int
ut_sim_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @q quantile (0..1) of @n values, sorting them. */
static inline double
ut_sim_quantile(double *v, uint32_t n, double q)
{
	uint32_t i;

	if (n == 0) {
		return 0;
	}
	qsort(v, n, sizeof(*v), ut_sim_cmp_double);
	i = (uint32_t)(q * (double)n);
	return v[i < n ? i : n - 1];
}

#endif /* EMU_UT_SIM_H */
