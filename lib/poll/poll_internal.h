/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the waiter (lib/poll). poll.c is the waiter and its modes, poll_stats.c
 * the per-bucket completion-time statistics, poll_sleep.c everything that touches the
 * clock, timers, TPAUSE and interrupt fds (unit tests replace it with a fake clock).
 */
#ifndef NVP_POLL_INTERNAL_H
#define NVP_POLL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "nvpoll/poll.h"
#include "nvpoll/util.h"

#ifndef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "poll"
#endif
#include "nvpoll/log.h"

#define POLL_OPC_CLASSES 3u   /* read, write, other */
#define POLL_SIZE_CLASSES 24u /* log2(bytes / 512), 512 B .. 4 GiB */
#define POLL_NR_BUCKETS (POLL_OPC_CLASSES * POLL_SIZE_CLASSES)
#define POLL_RING 64u /* samples a bucket keeps per window for its percentile */
#define POLL_MAX_EVENTS 16
#define POLL_IRQ_TIMEOUT_MS 10 /* irq: poll anyway after this long without an interrupt */
#define POLL_PROBE_EVERY 32u   /* hybrid: one request in this many is spun for */
#define POLL_LATE_RING 32u     /* sleeps whose lateness make the wake-up cost */
#define POLL_WAKE_PCT 50u      /* the wake-up cost: this percentile of their lateness */
#define POLL_EXPLORE_MS 50u    /* hybrid without a sleep this long: take a short one */
#define POLL_EXPLORE_SLEEP_US 20u
#define POLL_EXPLORE_MAX_SHIFT 5u /* explore at least every 50 ms << 5 = 1.6 s */

/* Defaults (poll_opts.c) */
#define POLL_DEFAULT_WINDOW_MS 100u
#define POLL_DEFAULT_MIN_SAMPLES 8u
#define POLL_DEFAULT_PCT 10u
#define POLL_DEFAULT_MAX_SOURCES 64u

/* ---- statistics (poll_stats.c) ---- */

struct poll_bucket {
	uint64_t expect; /* published: ticks to sleep toward from submission, 0 = none */
	uint64_t mean;   /* published mean, ticks */
	uint32_t n;      /* current window */
	uint64_t sum;
	uint64_t ring[POLL_RING];
};

struct poll_stats_tab {
	uint64_t window_start;
	uint64_t window_ticks;
	uint32_t min_samples;
	uint32_t pct; /* 0 = half the mean */
	struct poll_bucket b[POLL_NR_BUCKETS];
};

uint16_t poll_bucket_of(uint8_t opc, uint32_t bytes);
void poll_stats_init(struct poll_stats_tab *t, uint64_t window_ticks, uint32_t min_samples,
		     uint32_t pct, uint64_t now);
void poll_stats_add(struct poll_stats_tab *t, uint16_t bucket, uint64_t ticks);
bool poll_stats_roll(struct poll_stats_tab *t, uint64_t now);
void poll_stats_set_pct(struct poll_stats_tab *t, uint32_t pct);
bool poll_stats_probe(struct poll_stats_tab *t, uint16_t bucket, uint64_t ticks);

static inline uint64_t
poll_stats_expect(const struct poll_stats_tab *t, uint16_t bucket)
{
	return t->b[bucket].expect;
}

/* ---- the waiter (poll.c) ---- */

struct poll_source {
	const struct nvp_poll_source_ops *ops;
	void *ctx;
	int irq_fd;                 /* the first of its interrupt fds, or -errno */
	uint32_t nfds;              /* how many (a bdev poll group: one per channel) */
	void (*release)(void *ctx); /* at waiter destruction, or NULL */
};

TAILQ_HEAD(poll_req_list, nvp_poll_req);

struct nvp_poll_waiter {
	/* ---- hot ---- */
	enum nvp_poll_mode mode;
	uint32_t nsources;
	struct poll_source *sources;
	uint64_t pass_now; /* ticks at the start of the current pass */
	bool skip_samples; /* this pass follows a sleep or an interrupt */
	bool need_decide;  /* in-flight set changed since the last sleep decision */
	bool found_after_sleep;
	uint32_t inflight;
	uint32_t untracked; /* in flight without a nvp_poll_req (a bdev source out of slots):
			     * the waiter spins while any is out */
	uint32_t probe_ctr;
	struct poll_req_list reqs;
	uint64_t fixed_ticks;
	uint64_t wake_cost; /* ticks: what a sleep costs beyond its deadline */
	uint64_t sleep_cpu; /* ticks of CPU one sleep uses: shorter sleeps save nothing */
	struct nvp_poll_stats st;
	uint64_t wait_ticks;  /* inside nvp_poll_waiter_wait(), from its first pass to its last */
	uint64_t slept_ticks; /* of which asleep (timer, TPAUSE) or blocked on an interrupt */

	/* ---- cold ---- */
	uint64_t ticks_hz;
	uint64_t late_ring[POLL_LATE_RING]; /* timer lateness of the last sleeps, ticks */
	uint32_t late_n;
	uint64_t last_sleep;      /* ticks at the last wake-up (hybrid: explore after a while) */
	uint32_t explore_backoff; /* the explore interval is POLL_EXPLORE_MS << this */
	uint64_t wake_floor;
	uint64_t sleep_cpu_sum_ns; /* CPU time of the sampled timer sleeps */
	uint64_t sleep_cpu_n;      /* sleeps sampled */
	uint32_t max_sources;
	int epfd;
	struct poll_stats_tab stats;
};

uint64_t poll_hybrid_deadline(struct nvp_poll_waiter *w, uint64_t now);
uint64_t poll_explore_deadline(struct nvp_poll_waiter *w, uint64_t now);
int poll_waiter_add_source_fds(struct nvp_poll_waiter *w, const struct nvp_poll_source_ops *ops,
			       void *ctx, const int *fds, uint32_t nfds, void (*release)(void *));
void poll_req_start_at(struct nvp_poll_waiter *w, struct nvp_poll_req *r, uint8_t opc,
		       uint32_t bytes, uint64_t now);
void poll_req_done_ticks(struct nvp_poll_waiter *w, struct nvp_poll_req *r, uint64_t ticks);
void poll_untracked_start(struct nvp_poll_waiter *w);
void poll_untracked_done(struct nvp_poll_waiter *w);
void poll_wake_cost_update(struct nvp_poll_waiter *w, uint64_t late);
void poll_wake_cost_recompute(struct nvp_poll_waiter *w);

/* ---- clock, sleep, interrupts (poll_sleep.c; faked by unit tests) ---- */

uint64_t poll_now(void);
uint64_t poll_ticks_hz(void);
/* Sleep (timer or TPAUSE by @w->mode) until @deadline ticks. \return ticks at wake-up. */
uint64_t poll_sleep_until(struct nvp_poll_waiter *w, uint64_t deadline);
/* Measure what a short sleep costs: @n sleeps' lateness in @late (ticks), their median
 * returned, and the CPU one uses in *@cpu_ticks. */
uint64_t poll_wake_cost_measure(uint64_t hz, uint64_t *cpu_ticks, uint64_t *late, uint32_t n);
void poll_timerslack_set(void);
/* Block until a source's interrupt fires; clears it. \return 0 or -errno. */
int poll_irq_block(struct nvp_poll_waiter *w);
int poll_irq_add(struct nvp_poll_waiter *w, int fd);
int poll_epoll_create(void);
void poll_epoll_close(int fd);

#endif /* NVP_POLL_INTERNAL_H */
