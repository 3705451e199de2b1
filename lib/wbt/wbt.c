/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle as the bdev pipeline's admission stage "wbt" (see
 * include/nvpoll/wbt.h): write classes, the order in which deferred writes leave, the
 * per-channel counters, and the public calls. The budget and the latency loop are the
 * monitor's (wbt_monitor.c).
 *
 * Order: the bdev core asks admit() for every new I/O and, from the poll loop, for each
 * I/O on the channel's deferred list in list order. A new write of a class that already
 * has writes deferred on this channel is deferred too, so a class never overtakes
 * itself; classes do overtake each other (a sync write does not wait behind background
 * ones), but at most WBT_MAX_PASSES times in a row (the monitor counts, device-wide),
 * and reads are never held.
 *
 * Under a scheduler that weights tenants, the budget is shared among them by weight
 * (wbt_share.c): a write also waits while a tenant behind its share has writes waiting
 * that could take the slot. A channel carries one tenant (its descriptor's), so the
 * order within a class stays the channel's. With no such scheduler (wc->share false)
 * none of that runs: one predicted branch per write.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "nvpoll/bdev.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "nvpoll/wbt.h"
#include "wbt_internal.h"

#define RLX memory_order_relaxed
/* stage_data[0] of a write while it sits on the deferred list; [1] when it got there. */
#define WBT_DEFERRED_MARK 0x7762742d64656600ull
#define WBT_MAX_LAT_US (10ull * 1000 * 1000)
#define WBT_MAX_WINDOW_MS 10000u
#define WBT_MAX_DEPTH 65536u
#define WBT_MAX_LAG_KIB 1048576u

struct wbt_channel {
	/* ---- hot: this channel's thread ---- */
	struct wbt_bdev *wb;
	uint32_t deferred[WBT_NUM_CLASSES];   /* writes of each class on the deferred list */
	uint64_t refused_at[WBT_NUM_CLASSES]; /* @now of the last refusal of a deferred write:
					       * one poll's walk passes one @now to all, and
					       * after one refusal the rest of the class waits */
	bool share; /* the scheduler weights tenants: share the budget by weight */
	/* ---- counters: written by this thread only, read by nvp_bdev_wbt_get_info ---- */
	_Atomic uint64_t throttled;
	_Atomic uint64_t deferred_ticks;
	_Atomic uint32_t deferred_now;
	TAILQ_ENTRY(wbt_channel) link; /* under wb->lock */
};

struct wbt_bdev {
	struct wbt_monitor mon;
	struct nvp_bdev *bdev;
	uint32_t block_size;
	pthread_mutex_t lock; /* channel list and retired counters: never on the I/O path */
	TAILQ_HEAD(, wbt_channel) channels;
	uint64_t retired_throttled;
	uint64_t retired_deferred_ticks;
	char name[NVP_BDEV_NAME_MAX];
	struct wbt_share share; /* used only under a scheduler that weights tenants */
};

struct wbt_params {
	uint64_t lat_us;
	uint64_t window_ms;
	uint64_t depth;
	uint64_t lag_kib;
	uint64_t stale_us;
};

static const struct nvp_bdev_admission_ops g_wbt_ops;

static uint64_t
us_to_ticks(uint64_t us)
{
	return nvp_us_to_ticks(us, nvp_env_get_ticks_hz());
}

static uint64_t
ticks_to_us(uint64_t ticks)
{
	return nvp_ticks_to_us(ticks, nvp_env_get_ticks_hz());
}

static int
wbt_init(struct nvp_bdev *bdev, const char *params, void **bdev_ctx)
{
	struct wbt_params p = { NVP_WBT_DEFAULT_LAT_US, NVP_WBT_DEFAULT_WINDOW_MS,
				NVP_WBT_DEFAULT_DEPTH, WBT_DEFAULT_LAG_KIB, WBT_DEFAULT_STALE_US };
	const struct nvp_kv_num table[] = {
		{ "lat_us", &p.lat_us, 0, WBT_MAX_LAT_US },
		{ "window_ms", &p.window_ms, 1, WBT_MAX_WINDOW_MS },
		{ "depth", &p.depth, 1, WBT_MAX_DEPTH },
		{ "lag_kib", &p.lag_kib, 4, WBT_MAX_LAG_KIB },
		{ "stale_us", &p.stale_us, 1, WBT_MAX_LAT_US },
		{ NULL, NULL, 0, 0 },
	};
	struct wbt_bdev *wb;

	if (nvp_kv_parse_nums(params, table, NVP_LOG_COMPONENT, NULL, NULL, NULL) != 0) {
		return -EINVAL;
	}
	wb = calloc(1, sizeof(*wb));
	if (wb == NULL) {
		return -ENOMEM;
	}
	nvp_strlcpy(wb->name, nvp_bdev_get_name(bdev), sizeof(wb->name));
	wb->bdev = bdev;
	wb->block_size = nvp_bdev_get_block_size(bdev);
	wbt_share_init(&wb->share, p.lag_kib * 1024, us_to_ticks(p.stale_us));
	pthread_mutex_init(&wb->lock, NULL);
	TAILQ_INIT(&wb->channels);
	wbt_monitor_init(&wb->mon, wb->name, us_to_ticks(p.lat_us), us_to_ticks(p.window_ms * 1000),
			 (uint32_t)p.depth, nvp_env_get_ticks_hz(), nvp_env_get_ticks());
	*bdev_ctx = wb;
	return 0;
}

static void
wbt_fini(void *bdev_ctx)
{
	struct wbt_bdev *wb = bdev_ctx;

	pthread_mutex_destroy(&wb->lock);
	free(wb);
}

static int
wbt_channel_init(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx)
{
	struct wbt_bdev *wb = bdev_ctx;
	struct wbt_channel *wc = calloc(1, sizeof(*wc));

	(void)ch;
	if (wc == NULL) {
		return -ENOMEM;
	}
	wc->wb = wb;
	/* The scheduler cannot change while a channel exists: ask once. */
	wc->share = nvp_bdev_get_tenant_weight(wb->bdev, 0) != 0;
	pthread_mutex_lock(&wb->lock);
	TAILQ_INSERT_TAIL(&wb->channels, wc, link);
	pthread_mutex_unlock(&wb->lock);
	*ch_ctx = wc;
	return 0;
}

static void
wbt_channel_fini(void *ch_ctx)
{
	struct wbt_channel *wc = ch_ctx;
	struct wbt_bdev *wb = wc->wb;

	pthread_mutex_lock(&wb->lock);
	TAILQ_REMOVE(&wb->channels, wc, link);
	wb->retired_throttled += atomic_load_explicit(&wc->throttled, RLX);
	wb->retired_deferred_ticks += atomic_load_explicit(&wc->deferred_ticks, RLX);
	pthread_mutex_unlock(&wb->lock);
	free(wc);
}

/* The class a write is throttled as, or -1 for I/O the throttle does not hold. */
static int
io_class(const struct nvp_bdev_io *io)
{
	switch (io->type) {
	case NVP_BDEV_IO_WRITE:
	case NVP_BDEV_IO_WRITE_ZEROES:
		switch (io->flags & NVP_BDEV_WRITE_CLASS_MASK) {
		case NVP_BDEV_WRITE_BACKGROUND:
			return WBT_BACKGROUND;
		case NVP_BDEV_WRITE_SYNC:
			return WBT_SYNC;
		default:
			return WBT_NORMAL;
		}
	case NVP_BDEV_IO_UNMAP:
		return WBT_BACKGROUND; /* blk-wbt: discards get the background share */
	default:
		return -1;
	}
}

/* Single writer (this channel's thread): a relaxed add without a locked instruction. */
static inline void
counter_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, RLX) + v, RLX);
}

static void
defer(struct wbt_channel *wc, struct nvp_bdev_io *io, int cls, uint64_t now)
{
	io->stage_data[0] = WBT_DEFERRED_MARK;
	io->stage_data[1] = now;
	wc->deferred[cls]++;
	wbt_monitor_wait(&wc->wb->mon, (enum wbt_class)cls);
	if (wc->share) {
		wbt_share_wait(&wc->wb->share, io->tenant, (enum wbt_class)cls, now);
	}
	counter_add(&wc->throttled, 1);
	atomic_store_explicit(&wc->deferred_now, atomic_load_explicit(&wc->deferred_now, RLX) + 1,
			      RLX);
}

static void
undefer(struct wbt_channel *wc, struct nvp_bdev_io *io, int cls, uint64_t now)
{
	io->stage_data[0] = 0;
	wc->deferred[cls]--;
	wbt_monitor_unwait(&wc->wb->mon, (enum wbt_class)cls);
	if (wc->share) {
		wbt_share_unwait(&wc->wb->share, io->tenant, (enum wbt_class)cls);
	}
	counter_add(&wc->deferred_ticks, now - io->stage_data[1]);
	atomic_store_explicit(&wc->deferred_now, atomic_load_explicit(&wc->deferred_now, RLX) - 1,
			      RLX);
}

/*
 * wbt_admit() under a scheduler that weights tenants: as below, with a turn taken only
 * when wbt_share_may_go() says the tenant is not ahead of another that could take the
 * slot. Admitted writes are charged to their tenant's virtual time while a tenant
 * waits. With none waiting, wbt_admit() does not come here: a write then costs what it
 * costs without sharing, and one load.
 */
static __attribute__((noinline)) int
admit_shared(struct wbt_channel *wc, struct nvp_bdev_io *io, int cls, uint64_t now)
{
	struct wbt_bdev *wb = wc->wb;
	struct wbt_monitor *m = &wb->mon;
	uint32_t t = io->tenant, weight;
	bool waiting = io->stage_data[0] == WBT_DEFERRED_MARK;

	if (!waiting && wc->deferred[cls] != 0) {
		defer(wc, io, cls, now); /* behind older writes of its class */
		return NVP_BDEV_ADMIT_DEFER;
	}
	if (waiting) {
		wbt_share_seen(&wb->share, t, now); /* still waiting: hold the others back */
		if (wc->refused_at[cls] == now) {
			return NVP_BDEV_ADMIT_DEFER;
		}
	}
	if (!wbt_share_may_go(&wb->share, m, t, now)) {
		if (!waiting) {
			defer(wc, io, cls, now);
		}
		wc->refused_at[cls] = now;
		return NVP_BDEV_ADMIT_DEFER;
	}
	if (!wbt_monitor_try_get(m, (enum wbt_class)cls)) {
		if (!waiting) {
			defer(wc, io, cls, now);
		}
		wc->refused_at[cls] = now;
		wbt_monitor_tick(m, now);
		return NVP_BDEV_ADMIT_DEFER;
	}
	if (waiting) {
		undefer(wc, io, cls, now);
	}
	if (atomic_load_explicit(&wb->share.nwaiting, RLX) != 0 &&
	    (weight = nvp_bdev_get_tenant_weight(wb->bdev, t)) != 0) {
		wbt_share_charge(&wb->share, t, io->num_blocks * wb->block_size, weight, now);
	}
	return NVP_BDEV_ADMIT_GO;
}

static int
wbt_admit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct wbt_channel *wc = ch_ctx;
	struct wbt_monitor *m = &wc->wb->mon;
	int cls = io_class(io);
	bool waiting;

	if (cls < 0) {
		if (io->type == NVP_BDEV_IO_READ) {
			wbt_monitor_read_issued(m, (uintptr_t)io, now);
		}
		return NVP_BDEV_ADMIT_GO;
	}
	if (nvp_unlikely(wc->share) && (io->stage_data[0] == WBT_DEFERRED_MARK ||
					atomic_load_explicit(&wc->wb->share.nwaiting, RLX) != 0)) {
		return admit_shared(wc, io, cls, now); /* contended: take turns by weight */
	}
	waiting = io->stage_data[0] == WBT_DEFERRED_MARK;
	if (!waiting && wc->deferred[cls] != 0) {
		defer(wc, io, cls, now); /* behind older writes of its class */
		return NVP_BDEV_ADMIT_DEFER;
	}
	if (waiting && wc->refused_at[cls] == now) {
		return NVP_BDEV_ADMIT_DEFER; /* an older one of its class was just refused: a
					      * slot freed meanwhile by another thread is not
					      * for this one */
	}
	if (!wbt_monitor_try_get(m, (enum wbt_class)cls)) {
		if (!waiting) {
			defer(wc, io, cls, now);
		}
		wc->refused_at[cls] = now;
		wbt_monitor_tick(m, now);
		return NVP_BDEV_ADMIT_DEFER;
	}
	if (waiting) {
		undefer(wc, io, cls, now);
	}
	return NVP_BDEV_ADMIT_GO;
}

static void
wbt_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	struct wbt_channel *wc = ch_ctx;

	if (io_class(io) >= 0) {
		wbt_monitor_write_done(&wc->wb->mon, now);
	} else if (io->type == NVP_BDEV_IO_READ) {
		wbt_monitor_read_done(&wc->wb->mon, (uintptr_t)io, latency, now);
	}
}

static const struct nvp_bdev_admission_ops g_wbt_ops = {
	.name = "wbt",
	.init = wbt_init,
	.fini = wbt_fini,
	.channel_init = wbt_channel_init,
	.channel_fini = wbt_channel_fini,
	.admit = wbt_admit,
	.complete = wbt_complete,
};

NVP_BDEV_ADMISSION_REGISTER(g_wbt_ops)

static struct wbt_bdev *
get_wbt(struct nvp_bdev *bdev)
{
	return bdev == NULL ? NULL : nvp_bdev_get_admission_ctx(bdev, &g_wbt_ops);
}

int
nvp_bdev_wbt_get_info(struct nvp_bdev *bdev, struct nvp_wbt_info *info)
{
	struct wbt_bdev *wb;
	struct wbt_monitor *m;
	struct wbt_channel *wc;

	if (bdev == NULL || info == NULL || info->info_size < sizeof(*info)) {
		return -EINVAL;
	}
	wb = get_wbt(bdev);
	if (wb == NULL) {
		return -ENOENT;
	}
	m = &wb->mon;
	memset((char *)info + sizeof(info->info_size), 0, sizeof(*info) - sizeof(info->info_size));
	info->target_us = ticks_to_us(atomic_load_explicit(&m->target, RLX));
	info->window_us = ticks_to_us(atomic_load_explicit(&m->cur_win, RLX));
	info->step = atomic_load_explicit(&m->step, RLX);
	info->base_depth = m->base_depth;
	info->limit_background = atomic_load_explicit(&m->limit[WBT_BACKGROUND], RLX);
	info->limit_normal = atomic_load_explicit(&m->limit[WBT_NORMAL], RLX);
	info->limit_sync = atomic_load_explicit(&m->limit[WBT_SYNC], RLX);
	info->inflight = atomic_load_explicit(&m->inflight, RLX);
	info->windows = atomic_load_explicit(&m->windows, RLX);
	info->steps_up = atomic_load_explicit(&m->steps_up, RLX);
	info->steps_down = atomic_load_explicit(&m->steps_down, RLX);
	info->last_min_read_us = ticks_to_us(atomic_load_explicit(&m->last_rd_min, RLX));
	pthread_mutex_lock(&wb->lock);
	info->throttled = wb->retired_throttled;
	info->deferred_us = wb->retired_deferred_ticks;
	TAILQ_FOREACH (wc, &wb->channels, link) {
		info->throttled += atomic_load_explicit(&wc->throttled, RLX);
		info->deferred_us += atomic_load_explicit(&wc->deferred_ticks, RLX);
		info->deferred_now += atomic_load_explicit(&wc->deferred_now, RLX);
	}
	pthread_mutex_unlock(&wb->lock);
	info->deferred_us = ticks_to_us(info->deferred_us);
	return 0;
}

int
nvp_bdev_wbt_set_target(struct nvp_bdev *bdev, uint64_t lat_us)
{
	struct wbt_bdev *wb = get_wbt(bdev);

	if (wb == NULL) {
		return -ENOENT;
	}
	if (lat_us > WBT_MAX_LAT_US) {
		NVP_ERRLOG("%s: latency target %llu us is over the maximum of 10 s", wb->name,
			   (unsigned long long)lat_us);
		return -EINVAL;
	}
	wbt_monitor_set_target(&wb->mon, us_to_ticks(lat_us));
	NVP_INFOLOG("%s: latency target %llu us%s", wb->name, (unsigned long long)lat_us,
		    lat_us == 0 ? " (throttling off)" : "");
	return 0;
}
