/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The waiter: how one thread waits for its completions (classic, hybrid, fixed, irq,
 * umwait; see include/nvpoll/poll.h).
 *
 * The hybrid decision, after the kernel's blk_mq_poll_hybrid_sleep() but per thread and
 * for several requests at once: every known in-flight request has a target (its start +
 * what its bucket predicts; 0 when the bucket has no statistics). The thread sleeps only
 * when every request has a target, and then until the earliest target minus the cost of
 * a sleep (its lateness), and only when the time asleep exceeds the CPU time a sleep
 * uses (both measured at creation). After a
 * wake-up the target is in the past, so each request is slept for at most once; then the
 * thread spins. The decision is taken again only when the in-flight set changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvpoll/nvme.h"
#include "poll_internal.h"

/* ---- sources ---- */

static int32_t
qpair_poll(void *ctx)
{
	return nvp_nvme_qpair_process_completions(ctx, 0);
}

static int
qpair_irq_fd(void *ctx)
{
	return nvp_nvme_qpair_get_irq_fd(ctx);
}

static int
qpair_irq_unmask(void *ctx)
{
	return nvp_nvme_qpair_irq_unmask(ctx);
}

static const struct nvp_poll_source_ops g_qpair_ops = {
	.poll = qpair_poll,
	.get_irq_fd = qpair_irq_fd,
	.irq_unmask = qpair_irq_unmask,
};

/*
 * Add a source with @nfds interrupt fds given by the caller (a bdev poll group: one per
 * channel) instead of its get_irq_fd(); @release runs when the waiter is destroyed.
 */
int
poll_waiter_add_source_fds(struct nvp_poll_waiter *w, const struct nvp_poll_source_ops *ops,
			   void *ctx, const int *fds, uint32_t nfds, void (*release)(void *))
{
	struct poll_source *s;

	if (w->nsources == w->max_sources) {
		return -ENOSPC;
	}
	if (nfds == 0 && w->mode == NVP_POLL_IRQ) {
		NVP_ERRLOG("irq mode: source %u has no interrupt: use another mode", w->nsources);
		return -ENOTSUP;
	}
	for (uint32_t i = 0; i < nfds; i++) {
		if (poll_irq_add(w, fds[i]) != 0) {
			return -EIO;
		}
	}
	s = &w->sources[w->nsources++];
	s->ops = ops;
	s->ctx = ctx;
	s->irq_fd = nfds > 0 ? fds[0] : -ENOTSUP;
	s->nfds = nfds;
	s->release = release;
	return 0;
}

int
nvp_poll_waiter_add_source(struct nvp_poll_waiter *w, const struct nvp_poll_source_ops *ops,
			   void *ctx)
{
	int fd;

	if (w == NULL || ops == NULL || ops->poll == NULL) {
		return -EINVAL;
	}
	fd = ops->get_irq_fd != NULL ? ops->get_irq_fd(ctx) : -ENOTSUP;
	return poll_waiter_add_source_fds(w, ops, ctx, &fd, fd >= 0 ? 1 : 0, NULL);
}

int
nvp_poll_waiter_add_qpair(struct nvp_poll_waiter *w, struct nvp_nvme_qpair *qpair)
{
	return qpair == NULL ? -EINVAL : nvp_poll_waiter_add_source(w, &g_qpair_ops, qpair);
}

/* ---- mode ---- */

static int
check_opts(const struct nvp_poll_opts *o)
{
	if ((unsigned)o->mode > NVP_POLL_UMWAIT || o->pct > 99 ||
	    (o->mode == NVP_POLL_FIXED && o->fixed_us == 0) || o->window_ms == 0) {
		return -EINVAL;
	}
	if (o->mode == NVP_POLL_UMWAIT && !nvp_poll_waitpkg_supported()) {
		NVP_ERRLOG("umwait: this CPU has no WAITPKG (cpuid 7 ecx bit 5): use hybrid");
		return -ENOTSUP;
	}
	return 0;
}

static void
retarget_all(struct nvp_poll_waiter *w)
{
	struct nvp_poll_req *r;

	TAILQ_FOREACH (r, &w->reqs, link) {
		uint64_t e = w->mode == NVP_POLL_FIXED ? w->fixed_ticks :
							 poll_stats_expect(&w->stats, r->bucket);

		r->due = e != 0 ? r->start + e : 0;
	}
	w->need_decide = true;
}

int
nvp_poll_waiter_set_mode(struct nvp_poll_waiter *w, const struct nvp_poll_opts *o)
{
	int rc;

	if (w == NULL || o == NULL) {
		return -EINVAL;
	}
	rc = check_opts(o);
	if (rc != 0) {
		return rc;
	}
	if (o->mode == NVP_POLL_IRQ) {
		for (uint32_t i = 0; i < w->nsources; i++) {
			if (w->sources[i].irq_fd < 0) {
				NVP_ERRLOG("irq mode: source %u has no interrupt", i);
				return -ENOTSUP;
			}
		}
	}
	w->mode = o->mode;
	w->fixed_ticks = nvp_us_to_ticks(o->fixed_us, w->ticks_hz);
	poll_stats_set_pct(&w->stats, o->pct);
	retarget_all(w);
	return 0;
}

int
nvp_poll_waiter_create(const struct nvp_poll_opts *opts, struct nvp_poll_waiter **out)
{
	struct nvp_poll_opts o;
	struct nvp_poll_waiter *w;
	int rc;

	if (opts == NULL || out == NULL) {
		return -EINVAL;
	}
	nvp_poll_opts_init(&o, sizeof(o));
	memcpy(&o, opts, NVP_MIN(opts->opts_size, sizeof(o)));
	rc = check_opts(&o);
	if (rc != 0 || o.max_sources == 0) {
		return rc != 0 ? rc : -EINVAL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->sources = calloc(o.max_sources, sizeof(*w->sources))) == NULL) {
		free(w);
		return -ENOMEM;
	}
	w->max_sources = o.max_sources;
	w->ticks_hz = poll_ticks_hz();
	w->epfd = poll_epoll_create();
	TAILQ_INIT(&w->reqs);
	poll_stats_init(&w->stats, nvp_ms_to_ticks(o.window_ms, w->ticks_hz), o.min_samples, o.pct,
			poll_now());
	poll_timerslack_set();
	w->wake_floor = nvp_ns_to_ticks(o.wake_cost_ns, w->ticks_hz);
	w->wake_cost = w->wake_floor;
	for (uint32_t i = 0; i < POLL_LATE_RING; i++) {
		w->late_ring[i] = w->wake_cost;
	}
	if (o.calibrate) {
		/*
		 * The record of sleeps starts with the calibration's own, so the cost is their
		 * median, as it is for the sleeps that follow. (Seeding every slot with one
		 * high percentile of them made a waiter whose first estimate exceeded its
		 * requests' time decline every sleep, and then never learn otherwise.)
		 */
		poll_wake_cost_measure(w->ticks_hz, &w->sleep_cpu, w->late_ring, POLL_LATE_RING);
		poll_wake_cost_recompute(w);
	}
	w->last_sleep = poll_now();
	nvp_poll_waiter_set_mode(w, &o);
	*out = w;
	return 0;
}

void
nvp_poll_waiter_destroy(struct nvp_poll_waiter *w)
{
	if (w == NULL) {
		return;
	}
	for (uint32_t i = 0; i < w->nsources; i++) {
		if (w->sources[i].release != NULL) {
			w->sources[i].release(w->sources[i].ctx);
		}
	}
	poll_epoll_close(w->epfd);
	free(w->sources);
	free(w);
}

int
nvp_poll_waiter_get_stats(const struct nvp_poll_waiter *w, struct nvp_poll_stats *st)
{
	size_t info_size;

	if (w == NULL || st == NULL || st->info_size < sizeof(*st)) {
		return -EINVAL;
	}
	info_size = st->info_size;
	*st = w->st;
	st->info_size = info_size;
	st->wake_cost_ns = nvp_ticks_to_ns(w->wake_cost, w->ticks_hz);
	st->wait_ns = nvp_ticks_to_ns(w->wait_ticks, w->ticks_hz);
	st->slept_ns = nvp_ticks_to_ns(w->slept_ticks, w->ticks_hz);
	st->sleep_cpu_ns = w->sleep_cpu_n > 0 ? w->sleep_cpu_sum_ns / w->sleep_cpu_n :
						nvp_ticks_to_ns(w->sleep_cpu, w->ticks_hz);
	return 0;
}

/* ---- requests ---- */

void
poll_req_start_at(struct nvp_poll_waiter *w, struct nvp_poll_req *r, uint8_t opc, uint32_t bytes,
		  uint64_t now)
{
	uint64_t e;

	r->start = now;
	r->bucket = poll_bucket_of(opc, bytes);
	e = w->mode == NVP_POLL_FIXED ? w->fixed_ticks : poll_stats_expect(&w->stats, r->bucket);
	/*
	 * One request in POLL_PROBE_EVERY is spun for: a true sample even when every other
	 * one completes during a sleep (a device that got faster is noticed).
	 */
	r->probe = w->mode != NVP_POLL_FIXED && ++w->probe_ctr % POLL_PROBE_EVERY == 0;
	if (r->probe) {
		e = 0;
	}
	r->due = e != 0 ? r->start + e : 0;
	TAILQ_INSERT_TAIL(&w->reqs, r, link);
	w->inflight++;
	w->need_decide = true;
}

void
nvp_poll_req_start(struct nvp_poll_waiter *w, struct nvp_poll_req *r, uint8_t opc, uint32_t bytes)
{
	poll_req_start_at(w, r, opc, bytes, poll_now());
}

/* A request the waiter has no nvp_poll_req for: it only counts, and forbids sleeping. */
void
poll_untracked_start(struct nvp_poll_waiter *w)
{
	w->untracked++;
	w->inflight++;
	w->need_decide = true;
}

void
poll_untracked_done(struct nvp_poll_waiter *w)
{
	if (w->untracked > 0) { /* else: sent before the waiter knew the source */
		w->untracked--;
		w->inflight--;
		w->need_decide = true;
	}
}

/* The request completed @ticks after its start. */
void
poll_req_done_ticks(struct nvp_poll_waiter *w, struct nvp_poll_req *r, uint64_t ticks)
{
	TAILQ_REMOVE(&w->reqs, r, link);
	w->inflight--;
	w->need_decide = true;
	if (nvp_unlikely(w->skip_samples)) {
		/*
		 * Found after a sleep or an interrupt: it completed before the wake-up, when
		 * exactly is unknown. Recording the wake-up time would feed oversleep into the
		 * statistics (the kernel's 5.10 failure); recording nothing would keep only
		 * the requests that outlasted the sleep (a bias upward). Record what was
		 * predicted for it, or the wake-up when that came first: the request was done
		 * by then, so a prediction that has grown too long comes down (with only the
		 * prediction recorded it could only grow: the true samples are the ones that
		 * outlasted the sleep). Never more than predicted, so oversleep cannot feed
		 * it. Interrupt-mode completions are left out.
		 */
		w->st.samples_skipped++;
		w->found_after_sleep = true;
		if (w->mode != NVP_POLL_IRQ && r->due > r->start) {
			poll_stats_add(&w->stats, r->bucket, NVP_MIN(r->due - r->start, ticks));
		}
		return;
	}
	poll_stats_add(&w->stats, r->bucket, ticks);
	w->st.samples++;
	if (nvp_unlikely(r->probe) && poll_stats_probe(&w->stats, r->bucket, ticks)) {
		w->st.relearns++;
	}
}

void
nvp_poll_req_done(struct nvp_poll_waiter *w, struct nvp_poll_req *r)
{
	/*
	 * A request submitted from a completion callback of this pass may complete in the
	 * same pass (a device that completes during the doorbell write, as QEMU's can under
	 * TCG): it started after pass_now, so read the clock rather than wrap around.
	 */
	uint64_t end = nvp_likely(w->pass_now >= r->start) ? w->pass_now : poll_now();

	poll_req_done_ticks(w, r, end - r->start);
}

/* ---- waiting ---- */

/* The earliest target of the in-flight requests; 0 when one has none (spin for it). */
static uint64_t
earliest_due(const struct nvp_poll_waiter *w)
{
	const struct nvp_poll_req *r;
	uint64_t first = UINT64_MAX;

	if (w->inflight == 0 || w->untracked > 0) {
		return 0;
	}
	TAILQ_FOREACH (r, &w->reqs, link) {
		if (r->due == 0) {
			return 0; /* no statistics for it: spin */
		}
		first = NVP_MIN(first, r->due);
	}
	return first;
}

/*
 * When to wake up, or 0 to spin: the earliest target minus the cost of a sleep (its
 * typical lateness), if every in-flight request has a target, that deadline is still ahead,
 * and the sleep saves CPU. The thread is off the CPU from now until it wakes, about the
 * earliest target (the deadline plus the lateness); spinning instead would burn all of that,
 * so a sleep pays when it is longer than the CPU a sleep uses (a quarter more, for the
 * spread). The lateness is not counted a second time: it is part of the time asleep.
 */
uint64_t
poll_hybrid_deadline(struct nvp_poll_waiter *w, uint64_t now)
{
	uint64_t first = earliest_due(w);

	if (first == 0) {
		return 0;
	}
	if (w->mode == NVP_POLL_FIXED) {
		return first > now ? first : 0; /* the kernel's io_poll_delay > 0: no correction */
	}
	if (first <= now + w->wake_cost ||
	    first - now <= NVP_MAX(w->sleep_cpu + w->sleep_cpu / 4, w->wake_cost / 4)) {
		return 0;
	}
	return first - w->wake_cost;
}

/*
 * A waiter that declines every sleep because sleeps cost too much here would never see
 * them get cheaper (the cost is only measured by sleeping): a machine loaded for a few
 * seconds would turn hybrid into classic for good. So when it has not slept for
 * POLL_EXPLORE_MS, it takes one short sleep (as the calibration does) if the earliest
 * request is due later than twice that: a fresh sample of the wake-up cost, at the risk
 * of one late completion per interval. The interval doubles (up to 32 times) while the
 * probes find sleeping still too dear, so a machine that stays loaded pays little for
 * them. \return the deadline, or 0.
 */
uint64_t
poll_explore_deadline(struct nvp_poll_waiter *w, uint64_t now)
{
	uint64_t first, nap = nvp_us_to_ticks(POLL_EXPLORE_SLEEP_US, w->ticks_hz);

	if (w->mode != NVP_POLL_HYBRID ||
	    now - w->last_sleep < nvp_ms_to_ticks(POLL_EXPLORE_MS, w->ticks_hz)
					  << w->explore_backoff) {
		return 0;
	}
	first = earliest_due(w);
	if (first == 0 || first <= now + 2 * nap) {
		return 0;
	}
	w->st.wake_probes++;
	w->explore_backoff = NVP_MIN(w->explore_backoff + 1, POLL_EXPLORE_MAX_SHIFT);
	return now + nap;
}

static int
cmp_late(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Track what a sleep costs: the POLL_WAKE_PCT-th percentile of the timer's lateness over
 * the last POLL_LATE_RING sleeps. A percentile, not a mean: a thread preempted for
 * milliseconds now and then must not stop the waiter from sleeping (the tail is left to
 * the few requests it hits), while a machine that really got slower moves it within a
 * ring's worth of sleeps. The median, not a high percentile: what is subtracted is spun
 * away on every sleep that wakes on time, while a sleep that wakes later than the median
 * overshoots a target that is itself early (the p10 of the device's time), so the
 * request is usually not there yet. Measured side by side at 100 us (bench/poll_modes,
 * three pairs): the median took 0.34-0.41 of classic's CPU where p90 took 0.37-0.66, for
 * +2.5 % mean latency instead of +1.3 %. poll_wake_cost_recompute() takes it from the
 * record as it stands (the calibration fills it first), poll_wake_cost_update() adds a
 * sleep to it.
 */
void
poll_wake_cost_recompute(struct nvp_poll_waiter *w)
{
	uint64_t v[POLL_LATE_RING];

	memcpy(v, w->late_ring, sizeof(v));
	qsort(v, POLL_LATE_RING, sizeof(v[0]), cmp_late);
	w->wake_cost = NVP_MAX(w->wake_floor, v[(POLL_LATE_RING - 1) * POLL_WAKE_PCT / 100]);
}

void
poll_wake_cost_update(struct nvp_poll_waiter *w, uint64_t late)
{
	w->late_ring[w->late_n++ % POLL_LATE_RING] = late;
	poll_wake_cost_recompute(w);
}

int
nvp_poll_waiter_poll(struct nvp_poll_waiter *w)
{
	int32_t n, total = 0;

	w->pass_now = poll_now();
	w->st.polls++;
	for (uint32_t i = 0; i < w->nsources; i++) {
		struct poll_source *s = &w->sources[i];

		n = s->ops->poll(s->ctx);
		if (nvp_unlikely(n < 0)) {
			return n;
		}
		total += n;
	}
	if (nvp_unlikely(poll_stats_roll(&w->stats, w->pass_now))) {
		retarget_all(w);
	}
	return total;
}

static void
sleep_once(struct nvp_poll_waiter *w, uint64_t now)
{
	uint64_t dl = poll_hybrid_deadline(w, now), woke, late;
	bool probe = false;

	if (dl != 0) {
		w->explore_backoff = 0; /* sleeping is worth it again */
	} else if ((dl = poll_explore_deadline(w, now)) != 0) {
		probe = true;
	} else {
		return;
	}
	woke = poll_sleep_until(w, dl);
	late = woke > dl ? woke - dl : 0;
	w->last_sleep = woke;
	w->slept_ticks += woke - now;
	w->st.sleeps++;
	w->st.sleep_ns += nvp_ticks_to_ns(dl - now, w->ticks_hz);
	w->st.sleep_late_ns += nvp_ticks_to_ns(late, w->ticks_hz);
	/*
	 * A probe that found sleeping cheap again: the lateness the waiter remembers is from
	 * before it stopped sleeping, at least POLL_EXPLORE_MS ago. Start the record over
	 * from this sleep, so hybrid sleeps again at once rather than after a probe per
	 * half a ring (about a second); if the machine is still slow, the next sleeps say
	 * so within half a ring.
	 */
	if (probe && late < w->wake_cost / 2) {
		w->explore_backoff = 0;
		for (uint32_t i = 0; i < POLL_LATE_RING; i++) {
			w->late_ring[i] = late;
		}
	}
	poll_wake_cost_update(w, late);
	w->skip_samples = true;
	w->found_after_sleep = false;
}

/* After a pass: what the mode does before the next one. \return 0 or -errno. */
static int
between_passes(struct nvp_poll_waiter *w)
{
	int rc;

	switch (w->mode) {
	case NVP_POLL_CLASSIC:
		return 0;
	case NVP_POLL_IRQ:
		w->st.irq_waits++;
		w->slept_ticks -= poll_now();
		rc = poll_irq_block(w);
		w->slept_ticks += poll_now();
		w->skip_samples = true;
		w->found_after_sleep = false;
		return rc;
	default:
		if (w->need_decide) {
			w->need_decide = false;
			sleep_once(w, w->pass_now);
		}
		return 0;
	}
}

int
nvp_poll_waiter_wait(struct nvp_poll_waiter *w)
{
	uint64_t t0 = 0;
	int n, rc;

	for (;;) {
		n = nvp_poll_waiter_poll(w);
		if (t0 == 0) {
			t0 = w->pass_now;
		}
		if (w->skip_samples) {
			w->skip_samples = false;
			if (w->found_after_sleep && w->mode != NVP_POLL_IRQ) {
				w->st.oversleeps++;
			}
			w->found_after_sleep = false;
		}
		if (n != 0 || w->inflight == 0) {
			w->wait_ticks += w->pass_now - t0; /* where the thread's time went: */
			return n;                          /* this minus slept_ticks is spin */
		}
		w->st.spins++;
		rc = between_passes(w);
		if (nvp_unlikely(rc != 0)) {
			return rc;
		}
	}
}
