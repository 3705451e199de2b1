/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The throttle's budget shared among tenants by weight, when the scheduler weights them
 * (nvp_bdev_get_tenant_weight(); "fair" does). Without it the throttle, not the
 * scheduler, sets each tenant's pace once writes wait for the budget: writes leave the
 * deferred lists in arrival order, and two closed-loop tenants get the same share
 * whatever their weights. See doc/bdev.md, "How the stages compose".
 *
 * Virtual time, as fair's: each tenant's advances by bytes * WBT_VSCALE / weight for the
 * writes it is admitted while some tenant (itself too) has writes waiting; with none
 * waiting nobody is held, and nothing is charged. When a slot frees, the
 * write of the tenant with the least virtual time goes: a write waits while another
 * tenant, with less virtual time, has waiting writes that could take the slot (their
 * class's limit is above the writes in flight). A tenant that starts waiting, or asks
 * for a slot while others wait, is placed: behind the least waiting one, it is brought
 * up to it (what it did not ask for is not owed to it: a credit here, given at every
 * arrival, let a closed-loop tenant whose writes keep stopping and starting take twice
 * its share); ahead by more than lag, it is brought back to lag ahead (its debt is
 * bounded); idle for more than stale, it is forgotten and starts level. A waiting
 * tenant not heard of for more than stale (its thread stopped asking) holds nobody back.
 *
 * Pure logic over a clock given by the caller (unit tests drive it with a fake one).
 * Device-wide state, shared by every thread, through relaxed atomics: the outcome of a
 * race is a write going one turn early or late, never a write lost or held for good.
 * Virtual times wrap, so they are compared by their signed distance (vt_before()).
 */
#include "wbt_internal.h"

#define RLX memory_order_relaxed

static inline bool
vt_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

static inline bool
is_stale(const struct wbt_share *s, const struct wbt_share_tenant *t, uint64_t now)
{
	return (int64_t)(now - atomic_load_explicit(&t->seen, RLX)) > (int64_t)s->stale;
}

void
wbt_share_init(struct wbt_share *s, uint64_t lag_bytes, uint64_t stale_ticks)
{
	uint32_t i, c;

	atomic_store_explicit(&s->nwaiting, 0, RLX);
	atomic_store_explicit(&s->max_tenant, 0, RLX);
	s->lag = lag_bytes * WBT_VSCALE;
	s->stale = stale_ticks;
	for (i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
		atomic_store_explicit(&s->t[i].vtime, 0, RLX);
		atomic_store_explicit(&s->t[i].seen, 0, RLX);
		atomic_store_explicit(&s->t[i].nwait, 0, RLX);
		for (c = 0; c < WBT_NUM_CLASSES; c++) {
			atomic_store_explicit(&s->t[i].waiting[c], 0, RLX);
		}
	}
}

/* The least virtual time of the waiting, fresh tenants other than @self. \return false if none. */
static bool
least_waiting(const struct wbt_share *s, uint32_t self, uint64_t now, uint64_t *vmin)
{
	uint32_t n = atomic_load_explicit(&s->max_tenant, RLX), i;
	bool found = false;
	uint64_t v;

	for (i = 0; i < n; i++) {
		const struct wbt_share_tenant *u = &s->t[i];

		if (i == self || atomic_load_explicit(&u->nwait, RLX) == 0 || is_stale(s, u, now)) {
			continue;
		}
		v = atomic_load_explicit(&u->vtime, RLX);
		if (!found || vt_before(v, *vmin)) {
			*vmin = v;
			found = true;
		}
	}
	return found;
}

/* @tenant starts waiting: bring its virtual time within lag of the others'. */
static void
place(struct wbt_share *s, uint32_t tenant, uint64_t now)
{
	struct wbt_share_tenant *t = &s->t[tenant];
	uint64_t vmin = 0, v = atomic_load_explicit(&t->vtime, RLX);

	if (!least_waiting(s, tenant, now, &vmin)) {
		return;
	}
	if (is_stale(s, t, now) || vt_before(v, vmin)) {
		v = vmin;
	} else if (vt_before(vmin + s->lag, v)) {
		v = vmin + s->lag;
	}
	atomic_store_explicit(&t->vtime, v, RLX);
}

void
wbt_share_wait(struct wbt_share *s, uint32_t tenant, enum wbt_class cls, uint64_t now)
{
	struct wbt_share_tenant *t = &s->t[tenant];
	uint32_t n = atomic_load_explicit(&s->max_tenant, RLX);

	while (n <= tenant &&
	       !atomic_compare_exchange_weak_explicit(&s->max_tenant, &n, tenant + 1, RLX, RLX)) {
	}
	atomic_fetch_add_explicit(&t->waiting[cls], 1, RLX);
	if (atomic_fetch_add_explicit(&t->nwait, 1, RLX) == 0) {
		place(s, tenant, now);
		atomic_fetch_add_explicit(&s->nwaiting, 1, RLX);
	}
	atomic_store_explicit(&t->seen, now, RLX);
}

void
wbt_share_unwait(struct wbt_share *s, uint32_t tenant, enum wbt_class cls)
{
	struct wbt_share_tenant *t = &s->t[tenant];

	atomic_fetch_sub_explicit(&t->waiting[cls], 1, RLX);
	if (atomic_fetch_sub_explicit(&t->nwait, 1, RLX) == 1) {
		atomic_fetch_sub_explicit(&s->nwaiting, 1, RLX);
	}
}

/* Could a waiting write of @u take a slot now, with @inflight writes in flight? */
static bool
could_take(const struct wbt_share_tenant *u, const struct wbt_monitor *m, uint32_t inflight)
{
	int c;

	/* limits grow with the class, but a class owed a slot borrows a higher one: ask each */
	for (c = WBT_NUM_CLASSES - 1; c >= 0; c--) {
		if (atomic_load_explicit(&u->waiting[c], RLX) == 0) {
			continue;
		}
		if (inflight < wbt_monitor_class_limit(m, (enum wbt_class)c)) {
			return true;
		}
	}
	return false;
}

bool
wbt_share_may_go(struct wbt_share *s, const struct wbt_monitor *m, uint32_t tenant, uint64_t now)
{
	struct wbt_share_tenant *t = &s->t[tenant];
	uint32_t n, i, inflight;
	uint64_t v;

	if (!wbt_share_others_wait(s, tenant)) {
		return true;
	}
	if (atomic_load_explicit(&t->nwait, RLX) == 0) {
		place(s, tenant, now); /* a write of a tenant arriving: no credit banked */
	}
	atomic_store_explicit(&t->seen, now, RLX);
	v = atomic_load_explicit(&t->vtime, RLX);
	inflight = atomic_load_explicit(&m->inflight, RLX);
	n = atomic_load_explicit(&s->max_tenant, RLX);
	for (i = 0; i < n; i++) {
		const struct wbt_share_tenant *u = &s->t[i];

		if (i == tenant || atomic_load_explicit(&u->nwait, RLX) == 0 ||
		    is_stale(s, u, now)) {
			continue;
		}
		if (vt_before(atomic_load_explicit(&u->vtime, RLX), v) &&
		    could_take(u, m, inflight)) {
			return false;
		}
	}
	return true;
}

void
wbt_share_charge(struct wbt_share *s, uint32_t tenant, uint64_t bytes, uint32_t weight,
		 uint64_t now)
{
	struct wbt_share_tenant *t = &s->t[tenant];

	atomic_fetch_add_explicit(&t->vtime, bytes * (WBT_VSCALE / weight), RLX);
	atomic_store_explicit(&t->seen, now, RLX);
}
