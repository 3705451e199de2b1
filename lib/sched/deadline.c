/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "deadline", after Linux's mq-deadline: read and write FIFOs per thread, dispatched in
 * batches from one direction at a time; reads are preferred, but writes wait at most
 * writes_starved read batches; and a direction whose oldest request has expired is served
 * next, whatever the batch. At most depth requests are at the device (device-wide tokens):
 * that limit is what makes the queues, and so the choice, exist.
 *
 * mq-deadline also sorts each direction by sector and uses the expiry to jump back to the
 * FIFO's head; NVMe has no seek to save, so here both directions stay in arrival order
 * and the expiry decides which direction goes next.
 *
 * The FIFOs are per thread, the tokens device-wide: without tok_get_unless_hungry() a
 * channel whose completions and dispatches come in the same poll would take every freed
 * token, and another would never get one (its requests would not even expire: an
 * expired head only changes the direction within its own channel).
 */
#include <errno.h>
#include <stdlib.h>

#include "nvpoll/env.h"
#include "sched_internal.h"

enum {
	DL_READ = 0,
	DL_WRITE = 1
};

struct dl_bdev {
	struct sched_common common; /* first: sched.c reads it */
	_Atomic uint32_t inflight;
	uint32_t depth;
	uint32_t fifo_batch;
	uint32_t writes_starved;
	uint64_t expire[2]; /* ticks */
	_Atomic uint64_t expired;
	_Atomic uint64_t starved_writes;
	struct tok_hunger hunger;
};

struct dl_channel {
	struct sched_chan base; /* first */
	struct dl_bdev *d;
	struct sched_fifo fifo[2];
	struct tok_cache tok;
	uint32_t busy;               /* dispatched by this channel, not completed */
	int batch_dir;               /* direction of the current batch, -1 none */
	uint32_t batch_left;         /* dispatches left in it */
	uint32_t starved;            /* read batches started while writes waited */
	struct tok_hunger_ch hungry; /* its side of d->hunger */
};

static int
dir_of(const struct nvp_bdev_io *io)
{
	return io->type == NVP_BDEV_IO_READ || io->type == NVP_BDEV_IO_COMPARE ? DL_READ : DL_WRITE;
}

static void
dl_get_info(void *ctx, struct nvp_sched_info *info)
{
	struct dl_bdev *d = ctx;

	info->inflight = atomic_load_explicit(&d->inflight, RLX);
	info->depth = d->depth;
	info->expired = atomic_load_explicit(&d->expired, RLX);
	info->starved_writes = atomic_load_explicit(&d->starved_writes, RLX);
}

static int
dl_init(struct nvp_bdev *bdev, const char *params, void **bdev_ctx)
{
	uint64_t rd_ms = 500, wr_ms = 5000, batch = 16, starved = 2, depth = 64;
	const struct nvp_kv_num table[] = {
		{ "read_expire_ms", &rd_ms, 1, 3600000 },
		{ "write_expire_ms", &wr_ms, 1, 3600000 },
		{ "fifo_batch", &batch, 1, 4096 },
		{ "writes_starved", &starved, 0, 1000 },
		{ "depth", &depth, 1, 65536 },
		{ NULL, NULL, 0, 0 },
	};
	struct dl_bdev *d;

	(void)bdev;
	if (nvp_kv_parse_nums(params, table, NVP_LOG_COMPONENT, "deadline", NULL, NULL) != 0) {
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		return -ENOMEM;
	}
	sched_common_init(&d->common, "deadline", dl_get_info);
	d->depth = (uint32_t)depth;
	d->fifo_batch = (uint32_t)batch;
	d->writes_starved = (uint32_t)starved;
	d->expire[DL_READ] = sched_us_to_ticks(rd_ms * 1000);
	d->expire[DL_WRITE] = sched_us_to_ticks(wr_ms * 1000);
	d->hunger.hold = sched_us_to_ticks(SCHED_HUNGRY_US);
	*bdev_ctx = d;
	return 0;
}

static void
dl_fini(void *bdev_ctx)
{
	sched_common_fini(bdev_ctx);
	free(bdev_ctx);
}

static int
dl_channel_init(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx)
{
	struct dl_channel *c = calloc(1, sizeof(*c));

	(void)ch;
	if (c == NULL) {
		return -ENOMEM;
	}
	c->d = bdev_ctx;
	c->batch_dir = -1;
	sched_chan_add(&c->d->common, &c->base);
	*ch_ctx = c;
	return 0;
}

static void
dl_channel_fini(void *ch_ctx)
{
	struct dl_channel *c = ch_ctx;

	tok_flush(&c->tok, &c->d->inflight);
	tok_hunger_leave(&c->d->hunger, &c->hungry);
	sched_chan_del(&c->d->common, &c->base);
	free(c);
}

static void
dl_submit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct dl_channel *c = ch_ctx;
	int dir = dir_of(io);

	io->stage_data[0] = now + c->d->expire[dir]; /* its deadline */
	fifo_push(&c->fifo[dir], io);
}

static bool
head_expired(const struct dl_channel *c, int dir, uint64_t now)
{
	return c->fifo[dir].head != NULL && now >= c->fifo[dir].head->stage_data[0];
}

/* mq-deadline's choice of direction, with expiry deciding first. */
static int
choose_dir(struct dl_channel *c, uint64_t now)
{
	bool reads = c->fifo[DL_READ].count != 0, writes = c->fifo[DL_WRITE].count != 0;
	int other = c->batch_dir == DL_READ ? DL_WRITE : DL_READ;

	if (c->batch_dir >= 0 && c->batch_left > 0 && c->fifo[c->batch_dir].count != 0 &&
	    !head_expired(c, other, now)) {
		return c->batch_dir; /* carry on with the batch */
	}
	if (head_expired(c, DL_WRITE, now) &&
	    (!head_expired(c, DL_READ, now) ||
	     c->fifo[DL_WRITE].head->stage_data[0] < c->fifo[DL_READ].head->stage_data[0])) {
		atomic_fetch_add_explicit(&c->d->expired, 1, RLX);
		c->starved = 0;
		return DL_WRITE;
	}
	if (head_expired(c, DL_READ, now)) {
		atomic_fetch_add_explicit(&c->d->expired, 1, RLX);
		return DL_READ;
	}
	if (reads) {
		if (writes && c->starved++ >= c->d->writes_starved) {
			atomic_fetch_add_explicit(&c->d->starved_writes, 1, RLX);
			c->starved = 0;
			return DL_WRITE;
		}
		return DL_READ;
	}
	if (writes) {
		c->starved = 0;
		return DL_WRITE;
	}
	return -1;
}

/* A token for this channel's next request, unless a channel with none at the device is
 * waiting for one (see the top of the file). \return true if it has one. */
static bool
take_token(struct dl_channel *c, uint64_t now)
{
	return tok_get_unless_hungry(&c->tok, &c->d->inflight, c->d->depth, &c->d->hunger,
				     &c->hungry, c->busy, now);
}

static struct nvp_bdev_io *
dl_dispatch(void *ch_ctx, uint64_t now)
{
	struct dl_channel *c = ch_ctx;
	int dir;

	if (c->fifo[DL_READ].count + c->fifo[DL_WRITE].count == 0 || !take_token(c, now)) {
		return NULL;
	}
	c->busy++;
	dir = choose_dir(c, now);
	if (dir != c->batch_dir || c->batch_left == 0) {
		c->batch_dir = dir;
		c->batch_left = c->d->fifo_batch;
	}
	c->batch_left--;
	chan_count(&c->base.dispatched, 1);
	return fifo_pop(&c->fifo[dir]);
}

/*
 * Nothing of this channel is queued: no expiry or starvation to weigh (a new request has
 * not expired), only the depth — what dl_submit() then dl_dispatch() would do, without
 * the queue.
 */
static bool
dl_submit_direct(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	struct dl_channel *c = ch_ctx;
	int dir = dir_of(io);

	if (nvp_unlikely(!take_token(c, now))) {
		dl_submit(c, io, now);
		return false;
	}
	c->busy++;
	if (dir != c->batch_dir || c->batch_left == 0) {
		if (dir == DL_WRITE) {
			c->starved = 0; /* choose_dir() with writes alone queued */
		}
		c->batch_dir = dir;
		c->batch_left = c->d->fifo_batch;
	}
	c->batch_left--;
	chan_count(&c->base.dispatched, 1);
	return true;
}

static void
dl_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	struct dl_channel *c = ch_ctx;

	(void)io;
	(void)latency;
	(void)now;
	c->busy--;
	tok_put(&c->tok, &c->d->inflight, c->d->depth,
		c->busy == 0 && c->fifo[DL_READ].count + c->fifo[DL_WRITE].count == 0);
}

static bool
dl_has_work(void *ch_ctx, uint64_t *next_tick)
{
	struct dl_channel *c = ch_ctx;

	*next_tick = 0;
	return c->fifo[DL_READ].count + c->fifo[DL_WRITE].count != 0;
}

const struct nvp_bdev_sched_ops g_sched_deadline_ops = {
	.name = "deadline",
	.init = dl_init,
	.fini = dl_fini,
	.channel_init = dl_channel_init,
	.channel_fini = dl_channel_fini,
	.submit = dl_submit,
	.dispatch = dl_dispatch,
	.complete = dl_complete,
	.has_work = dl_has_work,
	.submit_direct = dl_submit_direct,
};

NVP_BDEV_SCHEDULER_REGISTER(g_sched_deadline_ops)
