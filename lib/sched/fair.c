/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "fair": weighted fair sharing of a device between tenants (a tenant is the id a
 * descriptor's I/O carries, nvp_bdev_desc_set_tenant()), with budgets in bytes and no
 * idling.
 *
 * Each tenant has a virtual time that advances by bytes * FAIR_VSCALE / weight as its
 * requests are dispatched. A tenant is active while it has requests queued (not yet
 * dispatched) anywhere; when it becomes active its virtual time is brought up to the
 * least of the active ones (or, when no other is active, to the highest one a tenant had when it
 * went idle), so an idle tenant banks no credit. A request may be
 * dispatched when its tenant is eligible — its virtual time within lag_kib (scaled) of
 * the least advanced active tenant, WF2Q+'s eligibility test — and a token of the
 * device-wide depth is free. A tenant that gets more than its share runs ahead and waits;
 * one that has nothing queued holds nobody back.
 *
 * Everything device-wide is an atomic: the per-tenant virtual times, weights and queue
 * counts, the tokens. Per thread: one FIFO. What costs a locked instruction is batched
 * per channel, with a bounded error, so that an I/O normally costs none:
 * - a tenant's queue count counts the channels holding its requests, changed when a
 *   channel's own count of them goes from 0 to 1 or back, not per request; and an I/O
 *   arriving at a channel that holds nothing, and allowed to go at once, is never
 *   queued at all (submit_direct);
 * - a channel adds the virtual time its dispatches cost to the tenant's in batches of at
 *   most lag / 8 (and whenever the channel goes idle or its tenant goes idle), so other
 *   threads see a tenant's virtual time at most that much behind per channel;
 * - eligibility is tested against a device-wide lower bound of the least virtual time of
 *   the active tenants (vmin_lb): passing it means passing the exact test. Only a
 *   dispatch that fails it scans the tenants (up to the highest id that queued) for the
 *   exact least one, and raises the bound. The least active virtual time never falls,
 *   except when a tenant becomes active behind it (after a stale spell, or joining below
 *   vlast): those lower the bound themselves. With no tenant queued anywhere (nactive),
 *   a request is eligible without a look at the others.
 *
 * Virtual times are 64-bit counters that wrap (at weight 1 after 16 TiB: 1.5 hours at
 * 3 GB/s), so they are compared by their distance modulo 2^64, never by value: a is at or
 * ahead of b when a - b is at most FAIR_VAHEAD (vge()). Active tenants stay within lag
 * (and what channels owe, lag / 8 each) of each other, far below it; a time further
 * "ahead" than that is behind, wrapped - a tenant idle while the others went on, which
 * then arrives at their virtual time as it should. (Idle through more than 2^64 -
 * FAIR_VAHEAD of progress, it may land within FAIR_VAHEAD ahead, 1 chance in 256, and
 * waits until the others catch up.)
 *
 * Optional latency targets per tenant (lat_us.N): completions of such a tenant are
 * averaged per window (100 ms); while one of them is over its target, tenants without a
 * target may have only half the depth in flight (io.latency's idea, as a depth cut).
 *
 * In-flight caps (inflight_cap=1, the default). A device serves what it holds roughly in
 * arrival order, so a tenant's share of it is its share of the requests in flight, which
 * virtual time does not set: it orders dispatches, it does not count what is at the
 * device. A tenant that keeps fewer requests outstanding than its weight's share of the
 * depth ("limited": outstanding / weight <= depth / the contending tenants' weights) is
 * not backlogged, and without caps a work-conserving scheduler gives its slack to those
 * that are. So while two or more tenants have requests outstanding, a tenant may have at
 * most ceil(weight * S) at the device, S the largest outstanding / weight of a limited
 * tenant: a tenant limited by its own queue depth sets the scale for the others, and some
 * of the depth stays empty while they have requests queued (BFQ's idling, in depth rather
 * than time) - at most half of it: S is at least depth / (2 x the weights), so a QD1
 * reader does not hold an equal-weight tenant beside it to one request (FAIR_CAP_FLOOR). With no tenant limited (all backlogged: the depth is the limit, and virtual
 * time shares it) or a tenant alone, there is no cap. A tenant with nothing at the device
 * may always send one, so a capped tenant waits only for its own completions; one that
 * goes idle (nothing outstanding) stops counting at its last completion. Outstanding
 * counts what the scheduler was given and has not seen complete; per tenant, one 64-bit
 * atomic (outstanding << 32 | at the device), changed on arrival, dispatch, completion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "sched_internal.h"

#define FAIR_VSCALE (1u << 20) /* virtual time units per byte at weight 1 */
#define FAIR_MAX_WEIGHT 1000u
#define FAIR_VAHEAD (1ull << 56) /* > the largest lag (1 GiB scaled: 2^50) */
#define FAIR_WINDOW_MS 100u
/*
 * inflight_cap's floor: the scale S is at least depth / (2 x the contending weights), so
 * the caps leave at least half the depth usable. A tenant that keeps fewer in flight than
 * that (a QD1 reader) is bound by its own latency, not by its share: scaling from it
 * would hold a tenant of equal weight beside it to one request at the device too.
 */
#define FAIR_CAP_FLOOR 2u

struct fair_tenant {
	_Atomic uint64_t vtime;
	_Atomic uint32_t weight;
	_Atomic uint32_t vcost;  /* FAIR_VSCALE / weight: virtual time per byte, no division */
	_Atomic uint32_t queued; /* channels holding requests of it, not yet dispatched */
	_Atomic uint64_t seen;   /* last tick a thread of it submitted or tried to dispatch */
	uint64_t lat_target;     /* ticks, 0 = none */
	_Atomic uint64_t lat_sum;
	_Atomic uint64_t lat_cnt;
	_Atomic uint64_t load; /* inflight_cap: outstanding << 32 | at the device */
};

#define LOAD_OUT (1ull << 32) /* one request outstanding, in fair_tenant.load */

struct fair_bdev {
	struct sched_common common; /* first: sched.c reads it */
	_Atomic uint32_t inflight;
	_Atomic uint32_t nactive; /* tenants with requests queued (queued != 0) */
	_Atomic uint64_t vmin_lb; /* at most the least virtual time of the active tenants */
	uint64_t vbatch;          /* virtual time a channel may owe its tenant */
	uint32_t block_size;
	uint32_t depth;
	_Atomic uint32_t cut_depth;  /* depth of tenants without a target; = depth unless cut */
	struct tok_hunger hunger;    /* a channel with nothing at the device waits its turn */
	_Atomic uint32_t max_tenant; /* highest tenant id seen + 1 */
	_Atomic uint64_t vlast;      /* highest virtual time of a tenant going idle: the
				      * system's virtual time when no other is active */
	uint64_t lag;                /* virtual time units */
	uint64_t stale;              /* ticks: a tenant not seen for this long holds nobody back */
	bool any_target;
	bool cap;                  /* inflight_cap */
	_Atomic uint32_t ncontend; /* inflight_cap: tenants with requests outstanding */
	_Atomic uint64_t win_end;
	uint64_t win;
	const char *name;
	struct fair_tenant t[NVP_BDEV_MAX_TENANTS];
};

struct fair_channel {
	struct sched_chan base; /* first */
	struct fair_bdev *f;
	struct sched_fifo fifo;
	struct tok_cache tok;
	struct tok_hunger_ch hungry; /* its side of f->hunger */
	uint32_t busy;               /* dispatched by this channel, not completed */
	uint32_t vten;               /* the tenant vowed is owed to */
	uint64_t vowed;              /* virtual time dispatched, not yet added to tenant vten's */
	uint32_t nq[NVP_BDEV_MAX_TENANTS]; /* requests of each tenant in fifo */
};

static void
set_weight(struct fair_tenant *t, uint32_t weight)
{
	atomic_store_explicit(&t->weight, weight, RLX);
	atomic_store_explicit(&t->vcost, FAIR_VSCALE / weight, RLX);
}

static uint32_t
fair_tenant_weight(void *bdev_ctx, uint32_t tenant)
{
	struct fair_bdev *f = bdev_ctx;

	return atomic_load_explicit(&f->t[tenant].weight, RLX);
}

static void
fair_get_info(void *ctx, struct nvp_sched_info *info)
{
	struct fair_bdev *f = ctx;
	uint32_t i;

	info->inflight = atomic_load_explicit(&f->inflight, RLX);
	info->depth = atomic_load_explicit(&f->cut_depth, RLX);
	for (i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
		info->tenant_weight[i] = atomic_load_explicit(&f->t[i].weight, RLX);
	}
}

/* "weights=1/2/4" and "lat_us.N=..." (the keys the numeric table does not know). */
static int
fair_param(void *ctx, const char *key, const char *value)
{
	struct fair_bdev *f = ctx;
	uint64_t v, n;
	const char *p = value;
	char *end;
	uint32_t i = 0;

	if (strcmp(key, "weights") == 0) {
		while (*p != '\0' && i < NVP_BDEV_MAX_TENANTS) {
			v = strtoull(p, &end, 10);
			if (end == p || v < 1 || v > FAIR_MAX_WEIGHT ||
			    (*end != '/' && *end != '\0')) {
				NVP_ERRLOG(
					"fair: weights='%s': expected weights 1..%u separated by '/'",
					value, FAIR_MAX_WEIGHT);
				return -EINVAL;
			}
			set_weight(&f->t[i++], (uint32_t)v);
			p = *end == '/' ? end + 1 : end;
		}
		return 0;
	}
	if (strncmp(key, "lat_us.", 7) == 0 &&
	    nvp_strtou64(key + 7, 0, NVP_BDEV_MAX_TENANTS - 1, &n) == 0 &&
	    nvp_strtou64(value, 0, 60000000, &v) == 0) {
		f->t[n].lat_target = sched_us_to_ticks(v);
		f->any_target |= v != 0;
		return 0;
	}
	NVP_ERRLOG(
		"fair: bad parameter '%s=%s' (known: weights, lag_kib, depth, stale_us, inflight_cap, lat_us.N)",
		key, value);
	return -EINVAL;
}

static int
fair_init(struct nvp_bdev *bdev, const char *params, void **bdev_ctx)
{
	uint64_t lag_kib = 512, depth = 64, stale_us = 1000, cap = 1;
	const struct nvp_kv_num table[] = {
		{ "lag_kib", &lag_kib, 4, 1048576 },
		{ "stale_us", &stale_us, 1, 10000000 },
		{ "depth", &depth, 1, 65536 },
		{ "inflight_cap", &cap, 0, 1 },
		{ NULL, NULL, 0, 0 },
	};
	struct fair_bdev *f = calloc(1, sizeof(*f));
	uint32_t i;

	if (f == NULL) {
		return -ENOMEM;
	}
	for (i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
		set_weight(&f->t[i], 1);
	}
	if (nvp_kv_parse_nums(params, table, NVP_LOG_COMPONENT, "fair", fair_param, f) != 0) {
		free(f);
		return -EINVAL;
	}
	sched_common_init(&f->common, "fair", fair_get_info);
	f->name = nvp_bdev_get_name(bdev);
	f->depth = (uint32_t)depth;
	f->cap = cap != 0;
	atomic_store_explicit(&f->cut_depth, f->depth, RLX);
	f->lag = lag_kib * 1024 * FAIR_VSCALE;
	f->vbatch = f->lag / 8;
	f->block_size = nvp_bdev_get_block_size(bdev);
	f->stale = sched_us_to_ticks(stale_us);
	f->hunger.hold = sched_us_to_ticks(SCHED_HUNGRY_US);
	f->win = sched_us_to_ticks(FAIR_WINDOW_MS * 1000);
	atomic_store_explicit(&f->win_end, nvp_env_get_ticks() + f->win, RLX);
	*bdev_ctx = f;
	return 0;
}

static void
fair_fini(void *bdev_ctx)
{
	sched_common_fini(bdev_ctx);
	free(bdev_ctx);
}

static int
fair_channel_init(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx)
{
	struct fair_channel *c = calloc(1, sizeof(*c));

	(void)ch;
	if (c == NULL) {
		return -ENOMEM;
	}
	c->f = bdev_ctx;
	sched_chan_add(&c->f->common, &c->base);
	*ch_ctx = c;
	return 0;
}

/* Virtual time @a is at or ahead of @b (they wrap: see the top of the file). */
static inline bool
vge(uint64_t a, uint64_t b)
{
	return a - b <= FAIR_VAHEAD;
}

/* @v within lag of @m, or behind it: WF2Q+'s eligibility against the least time @m. */
static inline bool
within_lag(const struct fair_bdev *f, uint64_t v, uint64_t m)
{
	return v - m <= f->lag || !vge(v, m);
}

/* Raise virtual time *@a to @v if behind it (several threads may). */
static inline void
atomic_raise(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, RLX);

	while (!vge(cur, v) && !atomic_compare_exchange_weak_explicit(a, &cur, v, RLX, RLX)) {
	}
}

/* Lower virtual time *@a to @v if ahead of it (several threads may). */
static inline void
atomic_lower(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, RLX);

	while (!vge(v, cur) && !atomic_compare_exchange_weak_explicit(a, &cur, v, RLX, RLX)) {
	}
}

/*
 * Add the virtual time channel @c owes its tenant to the tenant's. A tenant with nothing
 * queued anywhere is idle: its virtual time then becomes the system's for the next one to
 * arrive (vlast), as when it went idle.
 */
static void
vpay(struct fair_bdev *f, struct fair_channel *c)
{
	struct fair_tenant *t = &f->t[c->vten];
	uint64_t v;

	if (c->vowed == 0) {
		return;
	}
	v = atomic_fetch_add_explicit(&t->vtime, c->vowed, RLX) + c->vowed;
	c->vowed = 0;
	if (atomic_load_explicit(&t->queued, RLX) == 0) {
		atomic_raise(&f->vlast, v);
	}
}

/* @tenant's virtual time as channel @c sees it: with what @c owes it. */
static inline uint64_t
vtime_of(const struct fair_bdev *f, const struct fair_channel *c, uint32_t tenant)
{
	return atomic_load_explicit(&f->t[tenant].vtime, RLX) + (c->vten == tenant ? c->vowed : 0);
}

/* Charge @io's bytes to its tenant @t: owed by the channel, paid by the batch. */
static inline void
vcharge(struct fair_bdev *f, struct fair_channel *c, const struct nvp_bdev_io *io,
	struct fair_tenant *t)
{
	uint64_t cost = io->num_blocks * f->block_size * atomic_load_explicit(&t->vcost, RLX);

	if (nvp_unlikely(c->vten != io->tenant)) {
		vpay(f, c);
		c->vten = io->tenant;
	}
	c->vowed += cost;
	if (c->vowed >= f->vbatch) {
		vpay(f, c);
	}
}

static void
fair_channel_fini(void *ch_ctx)
{
	struct fair_channel *c = ch_ctx;

	vpay(c->f, c);
	tok_hunger_leave(&c->f->hunger, &c->hungry);
	tok_flush(&c->tok, &c->f->inflight);
	sched_chan_del(&c->f->common, &c->base);
	free(c);
}

/*
 * Not seen for f->stale ticks at @now. Another thread may have stored a tick newer than
 * @now (each reads its own clock): that is recent, not 2^64 ticks old.
 */
static inline bool
stale(const struct fair_bdev *f, uint64_t seen, uint64_t now)
{
	return (int64_t)(now - seen) > (int64_t)f->stale;
}

/*
 * The least virtual time of the tenants with requests queued, @skip left out, into *@m;
 * \return false (*@m untouched) when there is none. A tenant whose threads have not polled for f->stale ticks (descheduled, or busy
 * elsewhere) is left out too: only its own threads can dispatch its requests, and the
 * others must not idle waiting for it.
 */
static bool
vmin(struct fair_bdev *f, uint32_t skip, uint64_t now, uint64_t *m)
{
	uint32_t i, n = atomic_load_explicit(&f->max_tenant, RLX);
	bool found = false;
	uint64_t v;

	for (i = 0; i < n; i++) {
		if (i == skip || atomic_load_explicit(&f->t[i].queued, RLX) == 0 ||
		    stale(f, atomic_load_explicit(&f->t[i].seen, RLX), now)) {
			continue;
		}
		v = atomic_load_explicit(&f->t[i].vtime, RLX);
		if (!found || !vge(v, *m)) {
			*m = v;
			found = true;
		}
	}
	return found;
}

/*
 * A thread of tenant @t is here: it is not stale. Back from a stale spell, it counts
 * again in the least virtual time, which may so fall below the bound: lower the bound.
 */
static inline void
touch(struct fair_bdev *f, struct fair_tenant *t, uint64_t now)
{
	uint64_t seen = atomic_load_explicit(&t->seen, RLX);

	if ((int64_t)(now - seen) > 0) { /* another thread's may be newer than our clock read */
		if (nvp_unlikely(stale(f, seen, now))) {
			atomic_lower(&f->vmin_lb, atomic_load_explicit(&t->vtime, RLX));
		}
		atomic_store_explicit(&t->seen, now, RLX);
	}
}

/*
 * @tenant has nothing queued anywhere and a request arrives: no credit banked while idle.
 * Its virtual time is brought up to the least of the active tenants', or to vlast when
 * none is active. \return its virtual time as @c sees it.
 */
static uint64_t
arrive(struct fair_bdev *f, struct fair_channel *c, uint32_t tenant, uint64_t now)
{
	struct fair_tenant *t = &f->t[tenant];
	uint64_t v = vtime_of(f, c, tenant), m, cur;

	if (atomic_load_explicit(&f->nactive, RLX) == 0 || !vmin(f, tenant, now, &m)) {
		m = atomic_load_explicit(&f->vlast, RLX);
	}
	if (nvp_likely(vge(v, m))) {
		return v;
	}
	if (c->vten == tenant) {
		vpay(f, c);
	}
	cur = atomic_load_explicit(&t->vtime, RLX);
	if (!vge(cur, m)) {
		atomic_compare_exchange_strong_explicit(&t->vtime, &cur, m, RLX, RLX);
	}
	return vtime_of(f, c, tenant);
}

/*
 * WF2Q+'s eligibility: may a request of @tenant, at virtual time @v as this channel sees
 * it, go now? Yes when its virtual time is within lag of the least of the active
 * tenants' (others', and its own when it is queued). The bound answers most; a miss
 * scans, and raises the bound to what it found.
 */
static inline bool
eligible(struct fair_bdev *f, uint32_t tenant, uint64_t v, uint64_t now)
{
	uint64_t m = v;

	if (atomic_load_explicit(&f->nactive, RLX) == 0 ||
	    within_lag(f, v, atomic_load_explicit(&f->vmin_lb, RLX))) {
		return true; /* nobody waits, or within lag of a value at most the least */
	}
	if (vmin(f, tenant, now, &m) && !vge(v, m)) {
		m = v; /* the least is its own */
	}
	atomic_raise(&f->vmin_lb, m);
	return within_lag(f, v, m);
}

/* Tenant @tenant is in use: the scans look up to it. */
static void
see_tenant(struct fair_bdev *f, uint32_t tenant)
{
	uint32_t n = atomic_load_explicit(&f->max_tenant, RLX);

	while (tenant >= n &&
	       !atomic_compare_exchange_weak_explicit(&f->max_tenant, &n, tenant + 1, RLX, RLX)) {
	}
}

/* Channel @c holds a first request of @tenant: the tenant may become active. */
static void
queue_tenant(struct fair_bdev *f, struct fair_channel *c, uint32_t tenant, uint64_t now)
{
	struct fair_tenant *t = &f->t[tenant];

	see_tenant(f, tenant);
	if (atomic_fetch_add_explicit(&t->queued, 1, RLX) == 0) {
		/* becoming active: it must not be behind the bound the others test against */
		arrive(f, c, tenant, now);
		atomic_lower(&f->vmin_lb, atomic_load_explicit(&t->vtime, RLX));
		atomic_fetch_add_explicit(&f->nactive, 1, RLX);
	}
}

/* Channel @c holds no more requests of @tenant: the tenant may go idle. */
static void
unqueue_tenant(struct fair_bdev *f, struct fair_channel *c, uint32_t tenant)
{
	struct fair_tenant *t = &f->t[tenant];

	if (atomic_fetch_sub_explicit(&t->queued, 1, RLX) == 1) {
		atomic_fetch_sub_explicit(&f->nactive, 1, RLX);
		/* going idle: its virtual time becomes the system's for the next to arrive */
		if (c->vten == tenant) {
			vpay(f, c);
		}
		atomic_raise(&f->vlast, atomic_load_explicit(&t->vtime, RLX));
	}
}

/* inflight_cap: a request of @tenant arrives (@at_dev: 1 if it goes to the device at once). */
static inline void
cap_arrive(struct fair_bdev *f, uint32_t tenant, uint32_t at_dev)
{
	uint64_t old = atomic_fetch_add_explicit(&f->t[tenant].load, LOAD_OUT + at_dev, RLX);

	if (old < LOAD_OUT) { /* nothing outstanding before: it contends from now */
		see_tenant(f, tenant);
		atomic_fetch_add_explicit(&f->ncontend, 1, RLX);
	}
}

/*
 * inflight_cap: may @tenant have one more request at the device? The scale S is the
 * largest outstanding / weight among the limited tenants (outstanding / weight at most
 * depth / the weights of all with requests outstanding); the cap is ceil(weight * S).
 * Yes when fewer than two tenants contend, when none is limited, or when @tenant has
 * nothing at the device (it can always make progress). @arriving: 1 for a request not yet
 * counted as outstanding (the direct path counts it and its dispatch in one add).
 */
static bool
cap_allows(struct fair_bdev *f, uint32_t tenant, uint32_t arriving)
{
	uint32_t i, n = atomic_load_explicit(&f->max_tenant, RLX);
	uint64_t sum_w = 0, o, w, best_o = 0, best_w = 1, at;

	if (atomic_load_explicit(&f->ncontend, RLX) < 2) {
		return true;
	}
	at = (uint32_t)atomic_load_explicit(&f->t[tenant].load, RLX);
	if (at == 0) {
		return true;
	}
	for (i = 0; i < n; i++) {
		if (atomic_load_explicit(&f->t[i].load, RLX) >= LOAD_OUT) {
			sum_w += atomic_load_explicit(&f->t[i].weight, RLX);
		}
	}
	for (i = 0; i < n; i++) {
		o = (atomic_load_explicit(&f->t[i].load, RLX) >> 32) + (i == tenant ? arriving : 0);
		w = atomic_load_explicit(&f->t[i].weight, RLX);
		if (o != 0 && o * sum_w <= (uint64_t)f->depth * w && o * best_w > best_o * w) {
			best_o = o; /* limited, and the largest outstanding / weight so far */
			best_w = w;
		}
	}
	if (best_o == 0) {
		return true; /* all backlogged: the depth is the limit */
	}
	if (best_o * FAIR_CAP_FLOOR * sum_w < (uint64_t)f->depth * best_w) {
		best_o = f->depth; /* below the floor: S = depth / (FAIR_CAP_FLOOR x weights) */
		best_w = FAIR_CAP_FLOOR * sum_w;
	}
	w = atomic_load_explicit(&f->t[tenant].weight, RLX);
	return at < (w * best_o + best_w - 1) / best_w;
}

static void
fair_submit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct fair_channel *c = ch_ctx;
	struct fair_bdev *f = c->f;

	if (f->cap) {
		cap_arrive(f, io->tenant, 0);
	}
	touch(f, &f->t[io->tenant], now);
	if (c->nq[io->tenant]++ == 0) {
		queue_tenant(f, c, io->tenant, now);
	}
	fifo_push(&c->fifo, io);
}

/* @io of tenant @t leaves channel @c for the device: charge and count it. */
static inline void
dispatched(struct fair_bdev *f, struct fair_channel *c, const struct nvp_bdev_io *io,
	   struct fair_tenant *t)
{
	c->busy++;
	vcharge(f, c, io, t);
	chan_count(&c->base.dispatched, 1);
	chan_count(&c->base.tenant_bytes[io->tenant], io->num_blocks * f->block_size);
	chan_count(&c->base.tenant_ios[io->tenant], 1);
}

static inline uint32_t
depth_of(struct fair_bdev *f, const struct fair_tenant *t)
{
	return t->lat_target != 0 ? f->depth : atomic_load_explicit(&f->cut_depth, RLX);
}

/*
 * A token of the depth for a request of @t. A channel with nothing at the device (a QD1
 * reader beside tenants that keep the depth full) would otherwise find every freed token
 * taken back by the channel whose request freed it, polled before it: it says it is
 * hungry and gets the next one (tok_get_unless_hungry(), as deadline and kyber).
 */
static inline bool
chan_tok_get(struct fair_bdev *f, struct fair_channel *c, const struct fair_tenant *t, uint64_t now)
{
	return tok_get_unless_hungry(&c->tok, &f->inflight, depth_of(f, t), &f->hunger, &c->hungry,
				     c->busy, now);
}

static struct nvp_bdev_io *
fair_dispatch(void *ch_ctx, uint64_t now)
{
	struct fair_channel *c = ch_ctx;
	struct fair_bdev *f = c->f;
	struct nvp_bdev_io *io = c->fifo.head;
	struct fair_tenant *t;

	if (io == NULL) {
		return NULL;
	}
	t = &f->t[io->tenant];
	touch(f, t, now);
	if (!eligible(f, io->tenant, vtime_of(f, c, io->tenant), now)) {
		return NULL; /* ahead of its share: others first */
	}
	if (f->cap && !cap_allows(f, io->tenant, 0)) {
		return NULL; /* as many at the device as its weight's share: its own first */
	}
	if (!chan_tok_get(f, c, t, now)) {
		return NULL;
	}
	if (f->cap) {
		atomic_fetch_add_explicit(&t->load, 1, RLX);
	}
	fifo_pop(&c->fifo);
	dispatched(f, c, io, t);
	if (--c->nq[io->tenant] == 0) {
		unqueue_tenant(f, c, io->tenant);
	}
	return io;
}

/*
 * Nothing of this channel is queued: if the request may go now (its tenant arrives, or
 * is queued on another channel), it goes without being queued, and its tenant does not
 * become active; else it is queued as fair_submit() does.
 */
static bool
fair_submit_direct(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct fair_channel *c = ch_ctx;
	struct fair_bdev *f = c->f;
	struct fair_tenant *t = &f->t[io->tenant];
	uint32_t active = atomic_load_explicit(&f->nactive, RLX);
	uint64_t v = vtime_of(f, c, io->tenant);

	if (nvp_likely(atomic_load_explicit(&t->queued, RLX) == 0)) {
		/* arriving: behind nobody active (none is), nor behind vlast? */
		if (nvp_unlikely(active != 0 || !vge(v, atomic_load_explicit(&f->vlast, RLX)))) {
			v = arrive(f, c, io->tenant, now);
		}
	} else {
		touch(f, t, now);
	}
	if (nvp_unlikely((active != 0 && !eligible(f, io->tenant, v, now)) ||
			 (f->cap && !cap_allows(f, io->tenant, 1)) ||
			 !chan_tok_get(f, c, t, now))) {
		fair_submit(c, io, now);
		return false;
	}
	if (f->cap) {
		cap_arrive(f, io->tenant, 1); /* outstanding and at the device: one add */
	}
	dispatched(f, c, io, t);
	return true;
}

/* io.latency-like: cut the depth of untargeted tenants while a targeted one suffers. */
static void
fair_close_window(struct fair_bdev *f, uint64_t now)
{
	uint64_t end = atomic_load_explicit(&f->win_end, RLX), sum, cnt;
	uint32_t i, n = atomic_load_explicit(&f->max_tenant, RLX);
	bool over = false;

	if (now < end ||
	    !atomic_compare_exchange_strong_explicit(&f->win_end, &end, now + f->win, RLX, RLX)) {
		return;
	}
	for (i = 0; i < n; i++) {
		if (f->t[i].lat_target == 0) {
			continue;
		}
		sum = atomic_exchange_explicit(&f->t[i].lat_sum, 0, RLX);
		cnt = atomic_exchange_explicit(&f->t[i].lat_cnt, 0, RLX);
		over |= cnt != 0 && sum / cnt > f->t[i].lat_target;
	}
	if (over != (atomic_load_explicit(&f->cut_depth, RLX) != f->depth)) {
		NVP_DEBUGLOG(
			"%s: fair: %s", f->name,
			over ? "a tenant is over its latency target: halving the others' depth" :
			       "latency targets met: full depth for all");
	}
	atomic_store_explicit(&f->cut_depth, over ? NVP_MAX(f->depth / 2, 1u) : f->depth, RLX);
}

static void
fair_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	struct fair_channel *c = ch_ctx;
	struct fair_bdev *f = c->f;
	struct fair_tenant *t = &f->t[io->tenant];

	c->busy--;
	if (f->cap && atomic_fetch_sub_explicit(&t->load, LOAD_OUT + 1, RLX) >> 32 == 1) {
		atomic_fetch_sub_explicit(&f->ncontend, 1, RLX); /* nothing outstanding: idle */
	}
	if (c->busy == 0 && c->fifo.count == 0) {
		/* idle: keep no tokens, and owe the tenant nothing */
		tok_put(&c->tok, &f->inflight, f->depth, true);
		vpay(f, c);
	} else {
		tok_put(&c->tok, &f->inflight, f->depth, false);
	}
	if (nvp_unlikely(f->any_target)) {
		if (t->lat_target != 0) {
			atomic_fetch_add_explicit(&t->lat_sum, latency, RLX);
			atomic_fetch_add_explicit(&t->lat_cnt, 1, RLX);
		}
		if (now >= atomic_load_explicit(&f->win_end, RLX)) {
			fair_close_window(f, now);
		}
	}
}

static bool
fair_has_work(void *ch_ctx, uint64_t *next_tick)
{
	struct fair_channel *c = ch_ctx;

	*next_tick = 0;
	return c->fifo.count != 0;
}

const struct nvp_bdev_sched_ops g_sched_fair_ops = {
	.name = "fair",
	.init = fair_init,
	.fini = fair_fini,
	.channel_init = fair_channel_init,
	.channel_fini = fair_channel_fini,
	.submit = fair_submit,
	.dispatch = fair_dispatch,
	.complete = fair_complete,
	.has_work = fair_has_work,
	.submit_direct = fair_submit_direct,
	.tenant_weight = fair_tenant_weight,
};

NVP_BDEV_SCHEDULER_REGISTER(g_sched_fair_ops)

int
nvp_bdev_sched_fair_set_weight(struct nvp_bdev *bdev, uint32_t tenant, uint32_t weight)
{
	struct fair_bdev *f = bdev == NULL ? NULL :
					     nvp_bdev_get_scheduler_ctx(bdev, &g_sched_fair_ops);

	if (f == NULL) {
		return -ENOENT;
	}
	if (tenant >= NVP_BDEV_MAX_TENANTS || weight < 1 || weight > FAIR_MAX_WEIGHT) {
		NVP_ERRLOG("%s: fair: tenant %u weight %u: tenants 0..%u, weights 1..%u", f->name,
			   tenant, weight, NVP_BDEV_MAX_TENANTS - 1, FAIR_MAX_WEIGHT);
		return -EINVAL;
	}
	set_weight(&f->t[tenant], weight);
	return 0;
}
