/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedulers' public calls (state, fair weights) and what they share: the unit
 * conversion (their parameters are parsed by nvp_kv_parse_nums()). The schedulers
 * register themselves by name from constructors in their own files.
 */
#include <errno.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "sched_internal.h"

void
sched_common_init(struct sched_common *c, const char *name,
		  void (*get_info)(void *bdev_ctx, struct nvp_sched_info *info))
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->get_info = get_info;
	pthread_mutex_init(&c->lock, NULL);
	TAILQ_INIT(&c->chans);
}

void
sched_common_fini(struct sched_common *c)
{
	pthread_mutex_destroy(&c->lock);
}

void
sched_chan_add(struct sched_common *c, struct sched_chan *ch)
{
	pthread_mutex_lock(&c->lock);
	TAILQ_INSERT_TAIL(&c->chans, ch, link);
	pthread_mutex_unlock(&c->lock);
}

static void
chan_sum(struct sched_chan *dst, const struct sched_chan *src)
{
	uint32_t i;

	chan_count(&dst->dispatched, atomic_load_explicit(&src->dispatched, RLX));
	for (i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
		chan_count(&dst->tenant_bytes[i], atomic_load_explicit(&src->tenant_bytes[i], RLX));
		chan_count(&dst->tenant_ios[i], atomic_load_explicit(&src->tenant_ios[i], RLX));
	}
}

void
sched_chan_del(struct sched_common *c, struct sched_chan *ch)
{
	pthread_mutex_lock(&c->lock);
	TAILQ_REMOVE(&c->chans, ch, link);
	chan_sum(&c->retired, ch);
	pthread_mutex_unlock(&c->lock);
}

uint64_t
sched_us_to_ticks(uint64_t us)
{
	return nvp_us_to_ticks(us, nvp_env_get_ticks_hz());
}

static struct sched_common *
get_common(struct nvp_bdev *bdev)
{
	static const struct nvp_bdev_sched_ops *const all[] = { &g_sched_deadline_ops,
								&g_sched_kyber_ops,
								&g_sched_fair_ops };
	void *ctx;
	size_t i;

	for (i = 0; i < NVP_COUNTOF(all); i++) {
		ctx = nvp_bdev_get_scheduler_ctx(bdev, all[i]);
		if (ctx != NULL) {
			return ctx;
		}
	}
	return NULL;
}

int
nvp_bdev_sched_get_info(struct nvp_bdev *bdev, struct nvp_sched_info *info)
{
	struct sched_common *c;

	if (bdev == NULL || info == NULL || info->info_size < sizeof(*info)) {
		return -EINVAL;
	}
	memset((char *)info + sizeof(info->info_size), 0, sizeof(*info) - sizeof(info->info_size));
	nvp_strlcpy(info->name, nvp_bdev_get_scheduler(bdev), sizeof(info->name));
	c = get_common(bdev);
	if (c != NULL) {
		struct sched_chan sum, *ch;
		uint32_t i;

		memset(&sum, 0, sizeof(sum));
		pthread_mutex_lock(&c->lock);
		chan_sum(&sum, &c->retired);
		TAILQ_FOREACH (ch, &c->chans, link) {
			chan_sum(&sum, ch);
		}
		pthread_mutex_unlock(&c->lock);
		info->dispatched = sum.dispatched;
		for (i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
			info->tenant_bytes[i] = sum.tenant_bytes[i];
			info->tenant_ios[i] = sum.tenant_ios[i];
		}
		c->get_info(c, info);
	}
	return 0;
}
