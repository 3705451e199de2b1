/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Channels and poll groups: a channel is one thread's I/O context on one descriptor —
 * a preallocated pool of bdev_ios (no allocation on the I/O path; an empty pool is
 * -ENOMEM plus an io_wait queue, never a hang), the module's per-thread context, the
 * stages' per-thread contexts, and its accounting. A poll group polls its thread's
 * channels with one call and is where a thread waits (the poll hook).
 *
 * Statistics: the owner thread updates its channel's counters of an operation type
 * between two increments of that type's sequence count (odd = update in progress);
 * nvp_bdev_get_stats() copies them and retries if the count moved, so the I/O path takes
 * no lock and no atomic RMW.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bdev/bdev_internal.h"

#define NUM_HIST (NVP_BDEV_NUM_IO_TYPES * 2)

void
nvp_bdev_channel_opts_init(struct nvp_bdev_channel_opts *opts, size_t opts_size)
{
	struct nvp_bdev_channel_opts d = {
		.opts_size = opts_size,
		.io_pool_size = BDEV_IO_POOL_DEFAULT,
	};

	if (opts == NULL) {
		return;
	}
	memset(opts, 0, opts_size);
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

/* Channel options, from @user (may be NULL, may be an older, shorter struct). */
static int
channel_opts_get(const struct nvp_bdev_channel_opts *user, struct nvp_bdev_channel_opts *o)
{
	nvp_bdev_channel_opts_init(o, sizeof(*o));
	if (user != NULL) {
		if (user->opts_size == 0 || user->opts_size > sizeof(*o)) {
			NVP_ERRLOG("channel opts: opts_size %zu: use nvp_bdev_channel_opts_init()",
				   user->opts_size);
			return -EINVAL;
		}
		memcpy(o, user, user->opts_size);
	}
	if (o->io_pool_size < 2 || o->io_pool_size > BDEV_IO_POOL_MAX) {
		NVP_ERRLOG("channel opts: io_pool_size %u: must be 2 .. %u", o->io_pool_size,
			   BDEV_IO_POOL_MAX);
		return -EINVAL;
	}
	return 0;
}

static int
channel_pool_alloc(struct nvp_bdev_channel *ch, uint32_t size)
{
	struct nvp_bdev_io *io;
	uint32_t i;

	ch->io_size = NVP_ALIGN_UP(sizeof(struct nvp_bdev_io) + ch->bdev->io_ctx_size, (size_t)64);
	ch->pool_mem = aligned_alloc(64, ch->io_size * size);
	if (ch->pool_mem == NULL) {
		return -ENOMEM;
	}
	memset(ch->pool_mem, 0, ch->io_size * size);
	ch->pool_size = size;
	/* Push in reverse so the first I/O uses the first object (cache friendliness). */
	for (i = size; i-- > 0;) {
		io = (struct nvp_bdev_io *)((char *)ch->pool_mem + i * ch->io_size);
		io->bdev = ch->bdev;
		io->ch = ch;
		io->internal.next = ch->free_ios;
		ch->free_ios = io;
	}
	return 0;
}

/* Each bdev_io carries the module's context of its channel (modules may read it). */
static void
pool_set_module_ch(struct nvp_bdev_channel *ch)
{
	uint32_t i;

	for (i = 0; i < ch->pool_size; i++) {
		((struct nvp_bdev_io *)((char *)ch->pool_mem + i * ch->io_size))->module_ch =
			ch->module_ch;
	}
}

static int
channel_hist_alloc(struct nvp_bdev_channel *ch)
{
	int i;

	ch->hist = calloc(NUM_HIST, sizeof(*ch->hist));
	if (ch->hist == NULL) {
		return -ENOMEM;
	}
	for (i = 0; i < NUM_HIST; i++) {
		nvp_histogram_init(&ch->hist[i]);
	}
	for (i = 0; i < NVP_BDEV_NUM_IO_TYPES; i++) {
		ch->op[i].hist = &ch->hist[i * 2];
	}
	return 0;
}

/* The operation types @ch may send: what the bdev supports, minus writes on a read-only
 * descriptor; none once the bdev is removed. */
uint16_t
bdev_channel_allowed(const struct nvp_bdev_channel *ch)
{
	uint16_t mask = 0;
	int t;

	if (ch->bdev->removed) {
		return 0;
	}
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (ch->bdev->supported[t] && (ch->desc->write || !io_type_writes((uint8_t)t))) {
			mask |= (uint16_t)(1u << t);
		}
	}
	return mask;
}

/*
 * Accounting switched on: a busy period that began while it was off (its start not
 * taken: 0) counts from now. So every period that ends with accounting on has a start,
 * and completions add its length without testing for one.
 */
static void
busy_join(struct nvp_bdev_channel *ch)
{
	uint64_t now = 0;
	size_t t;

	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (ch->op[t].inflight != 0 && ch->op[t].busy_start == 0) {
			now = now != 0 ? now : ch_now(ch);
			ch->op[t].busy_start = now;
		}
	}
}

/*
 * Accounting switched on: the I/Os in flight that were sent untimed (submit_tick 0) are
 * marked, so that each completes by the slow path, untimed; the fast paths then take
 * every I/O they see with accounting on as timed and test no tick for 0 (2 instructions
 * fewer per I/O at QD1, bench/bdev_overhead). In flight: the pool but its free list.
 */
static void
untimed_mark(struct nvp_bdev_channel *ch)
{
	struct nvp_bdev_io *io;
	uint32_t i;

	for (i = 0; i < ch->pool_size; i++) {
		io = (struct nvp_bdev_io *)((char *)ch->pool_mem + i * ch->io_size);
		if (io->submit_tick == 0) {
			io->internal.state |= IO_STATE_UNTIMED;
		}
	}
	for (io = ch->free_ios; io != NULL; io = io->internal.next) {
		io->internal.state &= (uint8_t)~IO_STATE_UNTIMED;
	}
}

void
bdev_channel_update_mode(struct nvp_bdev_channel *ch)
{
	uint32_t old = ch->mode, mode = 0;

	if (__atomic_load_n(&ch->bdev->accounting, __ATOMIC_RELAXED)) {
		mode |= CH_MODE_ACCT;
	}
	if (ch->admit_ops->admit != NULL || ch->sched_ops->submit != NULL) {
		mode |= CH_MODE_STAGES;
	}
	if (ch->hook != NULL && (ch->hook->io_sent != NULL || ch->hook->io_done != NULL)) {
		mode |= CH_MODE_HOOK;
	}
	if (ch->bdev->optimal_io_boundary != 0) {
		mode |= CH_MODE_SPLIT;
	}
	if (!ch->bdev->fn->submit_never_completes) {
		mode |= CH_MODE_MARK;
	}
	ch->mode = (uint8_t)mode;
	/* the fast path's one compare: 3 (QD32) to 4 (QD1) instructions fewer per I/O */
	ch->max_fast_blocks = (mode & ~CH_MODE_ACCT) != 0    ? 0 :
			      ch->bdev->max_xfer_blocks != 0 ? ch->bdev->max_xfer_blocks :
							       UINT32_MAX;
	if ((mode & CH_MODE_ACCT) != 0 && (old & CH_MODE_ACCT) == 0) {
		busy_join(ch);
		untimed_mark(ch);
	}
}

/* Per-channel state of the bdev's stages; on failure nothing is left initialised. */
static int
channel_stages_init(struct nvp_bdev_channel *ch)
{
	struct nvp_bdev *bdev = ch->bdev;
	int rc = 0;

	ch->admit_ops = bdev->admit_ops;
	ch->sched_ops = bdev->sched_ops;
	if (ch->admit_ops->channel_init != NULL) {
		rc = ch->admit_ops->channel_init(bdev->admit_ctx, ch, &ch->admit_ch);
		if (rc != 0) {
			return rc;
		}
	}
	if (ch->sched_ops->channel_init != NULL) {
		rc = ch->sched_ops->channel_init(bdev->sched_ctx, ch, &ch->sched_ch);
		if (rc != 0 && ch->admit_ops->channel_fini != NULL) {
			ch->admit_ops->channel_fini(ch->admit_ch);
		}
	}
	return rc;
}

static void
channel_stages_fini(struct nvp_bdev_channel *ch)
{
	if (ch->sched_ops->channel_fini != NULL) {
		ch->sched_ops->channel_fini(ch->sched_ch);
	}
	if (ch->admit_ops->channel_fini != NULL) {
		ch->admit_ops->channel_fini(ch->admit_ch);
	}
}

static void
channel_free(struct nvp_bdev_channel *ch)
{
	free(ch->pool_mem);
	free(ch->hist);
	free(ch);
}

/* Module and stage contexts; called with the bdev lock held (stages stay put). */
static int
channel_attach(struct nvp_bdev_channel *ch, const struct nvp_bdev_channel_opts *o)
{
	struct nvp_bdev *bdev = ch->bdev;
	int rc;

	if (bdev->removed) {
		NVP_ERRLOG("channel: bdev '%s' was removed", bdev->name);
		return -ENXIO;
	}
	rc = channel_stages_init(ch);
	if (rc != 0) {
		return rc;
	}
	if (bdev->fn->channel_create != NULL) {
		rc = bdev->fn->channel_create(bdev->ctx, o, &ch->module_ch);
		if (rc != 0) {
			NVP_ERRLOG("channel on '%s': module %s: %s", bdev->name, bdev->module_name,
				   strerror(-rc));
			channel_stages_fini(ch);
			return rc;
		}
	}
	ch->allowed = bdev_channel_allowed(ch);
	ch->num_blocks = bdev->num_blocks; /* a resize updates it under the lock */
	pool_set_module_ch(ch);
	TAILQ_INSERT_TAIL(&bdev->channels, ch, bdev_link);
	bdev->num_channels++;
	ch->desc->num_channels++;
	return 0;
}

int
nvp_bdev_channel_create(struct nvp_bdev_desc *desc, const struct nvp_bdev_channel_opts *opts,
			struct nvp_bdev_channel **out)
{
	struct nvp_bdev_channel_opts o;
	struct nvp_bdev_channel *ch;
	int rc;

	if (desc == NULL || out == NULL) {
		return -EINVAL;
	}
	rc = channel_opts_get(opts, &o);
	if (rc != 0) {
		return rc;
	}
	ch = aligned_alloc(64, sizeof(*ch)); /* its hot fields are one cache line */
	if (ch == NULL) {
		return -ENOMEM;
	}
	memset(ch, 0, sizeof(*ch));
	ch->desc = desc;
	ch->bdev = desc->bdev;
	ch->block_size = ch->bdev->block_size;
	ch->owner = pthread_self();
	ch->ticks_tsc = nvp_env_get_ticks_is_tsc();
	ch->mod_submit = ch->bdev->fn->submit;
	ch->mod_poll = ch->bdev->fn->poll;
	rc = channel_pool_alloc(ch, o.io_pool_size);
	if (rc == 0) {
		rc = channel_hist_alloc(ch);
	}
	if (rc == 0) {
		bdev_lock();
		rc = channel_attach(ch, &o);
		bdev_unlock();
	}
	if (rc != 0) {
		channel_free(ch);
		return rc;
	}
	bdev_channel_update_mode(ch);
	if (o.group != NULL) {
		rc = nvp_bdev_poll_group_add(o.group, ch);
		if (rc != 0) {
			nvp_bdev_channel_destroy(ch);
			return rc;
		}
	}
	*out = ch;
	return 0;
}

/*
 * Destroyed with I/O outstanding, on a module that can give it up: the module completes
 * what it holds with an error status, and polls hand that over (each callback once).
 * What the callbacks or the core's own stages send goes to the module again and is
 * given up the same way, a few rounds at most; destroy refuses if any is left.
 */
static void
channel_abort_outstanding(struct nvp_bdev_channel *ch)
{
	unsigned int round;

	NVP_WARNLOG("channel on '%s': destroyed with %u I/O(s) in flight; the module "
		    "completes them with an error",
		    ch->bdev->name, ch_outstanding(ch));
	for (round = 0; round < 4 && ch_outstanding(ch) != 0; round++) {
		ch->bdev->fn->channel_abort(ch->module_ch);
		(void)nvp_bdev_channel_poll(ch);
	}
}

int
nvp_bdev_channel_destroy(struct nvp_bdev_channel *ch)
{
	struct nvp_bdev *bdev;
	bool exists;
	int rc;

	if (ch == NULL) {
		return -EINVAL;
	}
	bdev_lock();
	exists = bdev_channel_exists(ch);
	bdev_unlock();
	if (!exists) {
		NVP_ERRLOG("channel destroy: %p is not a channel (destroyed twice?)", (void *)ch);
		return -EINVAL;
	}
	rc = bdev_check_owner(ch->owner, "bdev channel");
	if (rc != 0) {
		return rc;
	}
	if (ch_outstanding(ch) != 0 && ch->poll_depth == 0 && !ch->in_fast_poll &&
	    ch->bdev->fn->channel_abort != NULL) {
		channel_abort_outstanding(ch);
	}
	if (ch_outstanding(ch) != 0) {
		NVP_ERRLOG("channel on '%s': %u I/O(s) in flight; poll until they complete, then "
			   "destroy",
			   ch->bdev->name, ch_outstanding(ch));
		return -EBUSY;
	}
	if (ch->poll_depth != 0 || ch->in_fast_poll) {
		/* its poll (and the module's) still run above this call and use it after */
		NVP_ERRLOG("channel on '%s': destroyed from inside its own poll (a completion or "
			   "io_wait callback); destroy it after the poll returns",
			   ch->bdev->name);
		return -EBUSY;
	}
	if (ch->group != NULL) {
		nvp_bdev_poll_group_remove(ch->group, ch);
	}
	bdev = ch->bdev;
	if (bdev->fn->channel_destroy != NULL) {
		bdev->fn->channel_destroy(bdev->ctx, ch->module_ch);
	}
	channel_stages_fini(ch);
	bdev_lock();
	bdev_channel_retire_stats(ch);
	TAILQ_REMOVE(&bdev->channels, ch, bdev_link);
	bdev->num_channels--;
	ch->desc->num_channels--;
	bdev_unlock();
	channel_free(ch);
	return 0;
}

uint32_t
nvp_bdev_channel_get_outstanding(const struct nvp_bdev_channel *ch)
{
	return ch_outstanding(ch);
}

uint32_t
nvp_bdev_channel_get_deferred_count(const struct nvp_bdev_channel *ch)
{
	return ch->deferred.count;
}

struct nvp_bdev *
nvp_bdev_channel_get_bdev(const struct nvp_bdev_channel *ch)
{
	return ch->bdev;
}

/* The clock read of ch_now() where the ticks are not the TSC (out of line: a call). */
uint64_t
bdev_channel_now_call(struct nvp_bdev_channel *ch)
{
	uint64_t now = nvp_env_get_ticks();

	if (ch->tick == CH_TICK_LAZY) {
		ch->tick = now;
	}
	return now;
}

/* ---- pool and io_wait ---- */

/* Whether @entry waits on @ch (one being called back is out of the list already). */
static bool
wait_entry_queued(const struct nvp_bdev_channel *ch, const struct nvp_bdev_io_wait_entry *entry)
{
	const struct nvp_bdev_io_wait_entry *e;

	for (e = ch->wait_head; e != NULL; e = e->next) {
		if (e == entry) {
			return true;
		}
	}
	return false;
}

int
nvp_bdev_queue_io_wait(struct nvp_bdev *bdev, struct nvp_bdev_channel *ch,
		       struct nvp_bdev_io_wait_entry *entry)
{
	int rc;

	if (ch == NULL || entry == NULL || entry->cb_fn == NULL || bdev != ch->bdev ||
	    entry->bdev != bdev) {
		NVP_ERRLOG("queue_io_wait: the entry needs cb_fn and the channel's bdev");
		return -EINVAL;
	}
	rc = bdev_check_owner(ch->owner, "bdev channel");
	if (rc != 0) {
		return rc;
	}
	if (wait_entry_queued(ch, entry)) {
		/* linked twice, the list would loop on itself */
		NVP_ERRLOG("queue_io_wait: the entry is queued already; queue it again from its "
			   "own callback, once");
		return -EBUSY;
	}
	entry->next = NULL;
	if (ch->wait_tail != NULL) {
		ch->wait_tail->next = entry;
	} else {
		ch->wait_head = entry;
	}
	ch->wait_tail = entry;
	ch->waiters = true;
	/* the next poll runs the waiters (even if no completion frees a bdev_io first) */
	ch->pending_work = true;
	return 0;
}

/*
 * Called when bdev_ios went back to the pool: waiters in order while some are free, but
 * no more than waited when the pass began. One that queues itself again (its request
 * needs more bdev_ios than are free: a split takes two) waits at the tail for the next
 * release or poll: a pass that served it again at once would never end.
 */
void
bdev_run_io_waiters(struct nvp_bdev_channel *ch)
{
	struct nvp_bdev_io_wait_entry *e;
	size_t n = 0;

	for (e = ch->wait_head; e != NULL; e = e->next) {
		n++; /* waiters are few, and this is the slow path */
	}
	while (n-- > 0 && ch->wait_head != NULL && ch->free_ios != NULL) {
		e = ch->wait_head;
		ch->wait_head = e->next;
		if (ch->wait_head == NULL) {
			ch->wait_tail = NULL;
			ch->waiters = false;
		}
		e->cb_fn(e->cb_arg);
	}
}

/* ---- polling ---- */

/* A poll with work for the core too: deferred, retried and inline-completed I/O, the
 * scheduler, io_wait entries, a change of the accounting switch. */
int
bdev_channel_poll_full(struct nvp_bdev_channel *ch)
{
	uint64_t before = ch->completed, tick = ch->tick;

	ch->poll_depth++;
	ch->tick = CH_TICK_LAZY;
	if (ch->mode_dirty) {
		/* accounting switched on or off for the bdev */
		__atomic_store_n(&ch->mode_dirty, false, __ATOMIC_RELAXED);
		bdev_channel_update_mode(ch);
	}
	if (ch->pending_work) {
		bdev_channel_poll_slow(ch);
	}
	ch->mod_poll(ch->module_ch);
	if (nvp_unlikely(ch->wait_head != NULL)) {
		bdev_run_io_waiters(ch);
		if (ch->wait_head != NULL) {
			ch->pending_work = true; /* still waiting: look again next time */
		}
	}
	ch->poll_depth--;
	ch->tick = tick;
	return (int)(ch->completed - before);
}

int
nvp_bdev_poll_group_create(struct nvp_bdev_poll_group **out)
{
	struct nvp_bdev_poll_group *g;

	if (out == NULL) {
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		return -ENOMEM;
	}
	TAILQ_INIT(&g->channels);
	g->owner = pthread_self();
	*out = g;
	return 0;
}

int
nvp_bdev_poll_group_destroy(struct nvp_bdev_poll_group *g)
{
	int rc;

	if (g == NULL) {
		return -EINVAL;
	}
	rc = bdev_check_owner(g->owner, "bdev poll group");
	if (rc != 0) {
		return rc;
	}
	if (!TAILQ_EMPTY(&g->channels)) {
		NVP_ERRLOG("poll group: channels are still in it; destroy or remove them first");
		return -EBUSY;
	}
	free(g);
	return 0;
}

int
nvp_bdev_poll_group_add(struct nvp_bdev_poll_group *g, struct nvp_bdev_channel *ch)
{
	int rc;

	if (g == NULL || ch == NULL) {
		return -EINVAL;
	}
	rc = bdev_check_owner(g->owner, "bdev poll group");
	if (rc == 0) {
		rc = bdev_check_owner(ch->owner, "bdev channel");
	}
	if (rc != 0) {
		return rc;
	}
	if (ch->group != NULL) {
		return -EEXIST;
	}
	TAILQ_INSERT_TAIL(&g->channels, ch, group_link);
	ch->group = g;
	ch->hook = g->hook;
	bdev_channel_update_mode(ch);
	return 0;
}

int
nvp_bdev_poll_group_remove(struct nvp_bdev_poll_group *g, struct nvp_bdev_channel *ch)
{
	int rc;

	if (g == NULL || ch == NULL) {
		return -EINVAL;
	}
	rc = bdev_check_owner(g->owner, "bdev poll group");
	if (rc != 0) {
		return rc;
	}
	if (ch->group != g) {
		return -ENOENT;
	}
	TAILQ_REMOVE(&g->channels, ch, group_link);
	ch->group = NULL;
	ch->hook = NULL;
	bdev_channel_update_mode(ch);
	return 0;
}

int
nvp_bdev_poll_group_set_hook(struct nvp_bdev_poll_group *g, const struct nvp_bdev_poll_hook *hook)
{
	struct nvp_bdev_channel *ch;
	int rc;

	if (g == NULL) {
		return -EINVAL;
	}
	rc = bdev_check_owner(g->owner, "bdev poll group");
	if (rc != 0) {
		return rc;
	}
	g->hook = hook;
	TAILQ_FOREACH (ch, &g->channels, group_link) {
		ch->hook = hook;
		bdev_channel_update_mode(ch);
	}
	return 0;
}

/*
 * Poll every channel once. The hook's poll_begin is the waiting point: the hybrid
 * poller sleeps there for part of the expected completion time of what is outstanding.
 */
int
nvp_bdev_poll_group_poll(struct nvp_bdev_poll_group *g)
{
	const struct nvp_bdev_poll_hook *hook;
	struct nvp_bdev_channel *ch;
	uint64_t before = 0, after = 0;
	int rc, n;

	if (g == NULL) {
		return -EINVAL;
	}
	rc = bdev_check_owner(g->owner, "bdev poll group");
	if (rc != 0) {
		return rc;
	}
	hook = g->hook;
	if (nvp_unlikely(hook != NULL && hook->poll_begin != NULL)) {
		hook->poll_begin(hook->ctx, g, nvp_bdev_poll_group_get_outstanding(g),
				 nvp_env_get_ticks());
	}
	/* count by the channels' totals: a callback may complete I/O of another channel */
	TAILQ_FOREACH (ch, &g->channels, group_link) {
		before += ch->completed;
	}
	TAILQ_FOREACH (ch, &g->channels, group_link) {
		nvp_bdev_channel_poll(ch);
		after += ch->completed;
	}
	n = (int)(after - before);
	if (nvp_unlikely(hook != NULL && hook->poll_end != NULL)) {
		hook->poll_end(hook->ctx, g, n, nvp_env_get_ticks());
	}
	return n;
}

int
nvp_bdev_poll_group_get_irq_fds(const struct nvp_bdev_poll_group *g, int *fds, uint32_t max)
{
	const struct nvp_bdev_channel *ch;
	uint32_t n = 0;
	int fd;

	if (g == NULL || (fds == NULL && max > 0)) {
		return -EINVAL;
	}
	TAILQ_FOREACH (ch, &g->channels, group_link) {
		fd = ch->bdev->fn->get_irq_fd != NULL ? ch->bdev->fn->get_irq_fd(ch->module_ch) :
							-ENOTSUP;
		if (fd < 0) {
			return -ENOTSUP;
		}
		if (n == max) {
			return -ENOSPC;
		}
		fds[n++] = fd;
	}
	return (int)n;
}

/* ---- a module channel's eventfd (malloc, null) ---- */

int
nvp_bdev_channel_irq_open(struct nvp_bdev_channel_irq *irq,
			  const struct nvp_bdev_channel_opts *opts)
{
	int rc;

	irq->fd = -1;
	if (opts == NULL || !opts->interrupts) {
		return 0;
	}
	irq->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (irq->fd < 0) {
		rc = -errno;
		NVP_ERRLOG("channel interrupt: eventfd failed (%d): raise the open file "
			   "limit (ulimit -n) or create the channel without .interrupts",
			   rc);
		return rc;
	}
	return 0;
}

void
nvp_bdev_channel_irq_close(struct nvp_bdev_channel_irq *irq)
{
	if (irq->fd >= 0) {
		close(irq->fd);
		irq->fd = -1;
	}
}

int
nvp_bdev_channel_irq_get_fd(const struct nvp_bdev_channel_irq *irq)
{
	return irq->fd >= 0 ? irq->fd : -ENOTSUP;
}

void
nvp_bdev_channel_irq_signal(const struct nvp_bdev_channel_irq *irq,
			    const struct nvp_bdev_io_list *ready)
{
	uint64_t one = 1;

	if (nvp_bdev_io_list_empty(ready)) {
		(void)!write(irq->fd, &one, sizeof(one));
	}
}

int
nvp_bdev_poll_group_irq_unmask(const struct nvp_bdev_poll_group *g)
{
	const struct nvp_bdev_channel *ch;

	TAILQ_FOREACH (ch, &g->channels, group_link) {
		if (ch->bdev->fn->irq_unmask != NULL) {
			(void)ch->bdev->fn->irq_unmask(ch->module_ch);
		}
	}
	return 0;
}

uint32_t
nvp_bdev_poll_group_get_outstanding(const struct nvp_bdev_poll_group *g)
{
	const struct nvp_bdev_channel *ch;
	uint32_t n = 0;

	TAILQ_FOREACH (ch, &g->channels, group_link) {
		n += ch_outstanding(ch);
	}
	return n;
}

/* ---- statistics ---- */

/*
 * Add a channel's histogram @src into @dst. The I/O path keeps no count in it
 * (ch_hist_record()): its count is the sum of its buckets, taken here, bucket by bucket
 * as they are copied. \return that count.
 */
static uint64_t
ch_hist_fold(struct nvp_histogram *dst, const struct nvp_histogram *src)
{
	uint64_t n = 0, b;
	uint32_t i;

	for (i = 0; i < NVP_HISTOGRAM_NUM_BUCKETS; i++) {
		b = __atomic_load_n(&src->buckets[i], __ATOMIC_RELAXED);
		dst->buckets[i] += b;
		n += b;
	}
	if (n == 0) {
		return 0;
	}
	dst->count += n;
	dst->sum_hi += src->sum_hi + __builtin_add_overflow(dst->sum_lo, src->sum_lo, &dst->sum_lo);
	dst->min = NVP_MIN(dst->min, src->min);
	dst->max = NVP_MAX(dst->max, src->max);
	return n;
}

/*
 * The I/O path records a queued time only when it is not 0 (no stage held the I/O): the
 * device histogram counts every timed I/O, so the difference are zeroes.
 */
static void
hist_add_zeroes(struct nvp_histogram *h, uint64_t n)
{
	if (n == 0 || n > UINT64_MAX / 2) {
		return; /* none, or a reader racing the writer saw device before queued */
	}
	h->buckets[0] += n;
	h->count += n;
	h->min = 0;
}

/*
 * Copy @ch's counters, each type's consistently (seqcount read side). A count found odd
 * means the writer is inside an update: usually for a few instructions, but a writer
 * preempted there keeps it odd for a scheduler time slice, so the reader waits (pausing,
 * then yielding the CPU), up to about a second for a writer that never comes back. A
 * count that keeps moving is a writer updating faster than the copy: after 1000 tries
 * the copy is taken as it is rather than spin (one cache line: that takes a writer
 * updating every few nanoseconds).
 */
static void
op_read_counters(const struct ch_op_stats *src, struct ch_op_stats *dst)
{
	uint32_t seq0, seq1, tries = 0, waits = 0;

	for (;;) {
		seq0 = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE);
		if ((seq0 & 1u) != 0) {
			if (++waits > (1u << 22)) {
				break; /* the writer never left its update: take what is there */
			}
			if ((waits & 63u) == 0) {
				sched_yield();
			} else {
				nvp_pause();
			}
			continue;
		}
		memcpy(dst, src, sizeof(*dst));
		nvp_smp_rmb();
		seq1 = __atomic_load_n(&src->seq, __ATOMIC_RELAXED);
		if (seq0 == seq1 || ++tries > 1000) {
			return;
		}
	}
	memcpy(dst, src, sizeof(*dst));
}

static void
channel_read_counters(const struct nvp_bdev_channel *ch, struct ch_op_stats *op)
{
	int t;

	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		op_read_counters(&ch->op[t], &op[t]);
	}
}

static void
stats_add_channel(struct nvp_bdev_stats *s, const struct nvp_bdev_channel *ch)
{
	struct ch_op_stats op[NVP_BDEV_NUM_IO_TYPES];
	uint64_t queued, device;
	int t;

	channel_read_counters(ch, op);
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		s->op[t].ios += op[t].ios;
		s->op[t].bytes += op[t].blocks * ch->bdev->block_size;
		s->op[t].errors += op[t].errors;
		s->op[t].inflight += op[t].inflight;
		s->op[t].busy_ticks += op[t].busy_ticks;
		queued = ch_hist_fold(&s->op[t].queued, &ch->hist[t * 2]);
		device = ch_hist_fold(&s->op[t].device, &ch->hist[t * 2 + 1]);
		hist_add_zeroes(&s->op[t].queued, device - queued);
	}
}

static void
stats_init(struct nvp_bdev_stats *s)
{
	int t;

	memset(s, 0, sizeof(*s));
	s->ticks_hz = nvp_env_get_ticks_hz();
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		nvp_histogram_init(&s->op[t].queued);
		nvp_histogram_init(&s->op[t].device);
	}
}

static void
stats_add(struct nvp_bdev_stats *dst, const struct nvp_bdev_stats *src)
{
	int t;

	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		dst->op[t].ios += src->op[t].ios;
		dst->op[t].bytes += src->op[t].bytes;
		dst->op[t].errors += src->op[t].errors;
		dst->op[t].busy_ticks += src->op[t].busy_ticks;
		nvp_histogram_merge(&dst->op[t].queued, &src->op[t].queued);
		nvp_histogram_merge(&dst->op[t].device, &src->op[t].device);
	}
}

/* A channel going away leaves its totals with the bdev. Bdev lock held. */
void
bdev_channel_retire_stats(struct nvp_bdev_channel *ch)
{
	struct nvp_bdev *bdev = ch->bdev;

	if (bdev->retired == NULL) {
		bdev->retired = malloc(sizeof(*bdev->retired));
		if (bdev->retired == NULL) {
			NVP_WARNLOG("bdev '%s': no memory to keep a closed channel's statistics",
				    bdev->name);
			return;
		}
		stats_init(bdev->retired);
	}
	stats_add_channel(bdev->retired, ch);
}

int
nvp_bdev_get_stats(struct nvp_bdev *bdev, struct nvp_bdev_stats *stats)
{
	struct nvp_bdev_channel *ch;
	size_t info_size;

	if (bdev == NULL || stats == NULL || stats->info_size < sizeof(*stats)) {
		return -EINVAL;
	}
	info_size = stats->info_size;
	stats_init(stats);
	stats->info_size = info_size;
	bdev_lock();
	if (bdev->retired != NULL) {
		stats_add(stats, bdev->retired);
	}
	TAILQ_FOREACH (ch, &bdev->channels, bdev_link) {
		stats_add_channel(stats, ch);
		stats->num_channels++;
	}
	bdev_unlock();
	return 0;
}
