/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bdev poll group as a source of a waiter: the waiter polls the group (every channel,
 * the pipeline's retries and the user callbacks included), blocks on the channels'
 * interrupts in irq mode, and learns every I/O the group sends to a module through the
 * group's poll hook (include/nvpoll/bdev_module.h): io_sent starts a request, io_done ends
 * it with the device time the bdev layer measured for that bdev_io (from the module
 * submit to its completion), so the statistics are the device's, not the pipeline's
 * queueing. Split children are requests of their own size.
 *
 * A hook sees a const bdev_io and has nowhere to keep state in it, so each group has a
 * preallocated array of slots (one struct nvp_poll_req each); io_done finds its slot by
 * walking the waiter's in-flight list from the oldest, which is where a completion
 * usually is. When the slots run out, an I/O is counted but untracked and the waiter
 * spins until it completes: never a sleep past an I/O it does not know.
 */
#include <errno.h>
#include <stdlib.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/nvme_spec.h"
#include "poll_internal.h"

#define POLL_BDEV_DEFAULT_SLOTS 1024u
#define POLL_BDEV_MAX_FDS 64u

struct poll_bdev_slot {
	struct nvp_poll_req req;
	const struct nvp_bdev_io *io;
	struct poll_bdev_slot *next_free;
};

struct poll_bdev {
	struct nvp_bdev_poll_hook hook;
	struct nvp_poll_waiter *w;
	struct nvp_bdev_poll_group *group;
	struct poll_bdev_slot *free;
	uint32_t used;
	uint32_t nslots;
	struct poll_bdev_slot slots[];
};

static uint8_t
io_opc(const struct nvp_bdev_io *io)
{
	switch (io->type) {
	case NVP_BDEV_IO_READ:
		return NVME_OPC_READ;
	case NVP_BDEV_IO_WRITE:
		return NVME_OPC_WRITE;
	default:
		return NVME_OPC_FLUSH; /* "other": flush, unmap, write zeroes, compare */
	}
}

static void
bdev_io_sent(void *ctx, const struct nvp_bdev_io *io, uint64_t now)
{
	struct poll_bdev *pb = ctx;
	struct poll_bdev_slot *s = pb->free;
	uint64_t bytes = nvp_bdev_io_get_nbytes(io);

	if (nvp_unlikely(s == NULL)) {
		poll_untracked_start(pb->w);
		return;
	}
	pb->free = s->next_free;
	pb->used++;
	s->io = io;
	poll_req_start_at(pb->w, &s->req, io_opc(io), (uint32_t)NVP_MIN(bytes, UINT32_MAX), now);
}

/* The slot of this group holding @io, or NULL. */
static struct poll_bdev_slot *
slot_find(struct poll_bdev *pb, const struct nvp_bdev_io *io)
{
	const struct poll_bdev_slot *lo = pb->slots, *hi = pb->slots + pb->nslots;
	struct nvp_poll_req *r;

	TAILQ_FOREACH (r, &pb->w->reqs, link) {
		/* the waiter's list also holds other sources' requests: ours are in slots[] */
		struct poll_bdev_slot *s = (struct poll_bdev_slot *)r;

		if (s >= lo && s < hi && s->io == io) {
			return s;
		}
	}
	return NULL;
}

static void
bdev_io_done(void *ctx, const struct nvp_bdev_io *io, uint64_t device_ticks, uint64_t now)
{
	struct poll_bdev *pb = ctx;
	struct poll_bdev_slot *s = slot_find(pb, io);

	(void)now;
	if (nvp_unlikely(s == NULL)) {
		poll_untracked_done(pb->w);
		return;
	}
	poll_req_done_ticks(pb->w, &s->req, device_ticks);
	s->io = NULL;
	s->next_free = pb->free;
	pb->free = s;
	pb->used--;
}

/* Every slot back to the free list (what the group sent is all accounted for). */
static void
slots_reset(struct poll_bdev *pb)
{
	pb->free = NULL;
	for (uint32_t i = pb->nslots; i-- > 0;) {
		struct poll_bdev_slot *s = &pb->slots[i];

		if (s->io != NULL) {
			TAILQ_REMOVE(&pb->w->reqs, &s->req, link);
			pb->w->inflight--;
			s->io = NULL;
		}
		s->next_free = pb->free;
		pb->free = s;
	}
	pb->used = 0;
	pb->w->need_decide = true;
}

static int32_t
group_poll(void *ctx)
{
	struct poll_bdev *pb = ctx;
	int n = nvp_bdev_poll_group_poll(pb->group);

	/*
	 * A channel removed from the group with I/O in flight takes its completions out of
	 * the hook's sight: when the group says nothing is outstanding, forget what the
	 * slots still hold, so that the waiter does not wait for it forever.
	 */
	if (nvp_unlikely(n == 0 && pb->used > 0) &&
	    nvp_bdev_poll_group_get_outstanding(pb->group) == 0) {
		slots_reset(pb);
	}
	return n;
}

static int
group_irq_unmask(void *ctx)
{
	return nvp_bdev_poll_group_irq_unmask(((struct poll_bdev *)ctx)->group);
}

static const struct nvp_poll_source_ops g_group_ops = {
	.poll = group_poll,
	.get_irq_fd = NULL, /* the fds are given at add time, one per channel */
	.irq_unmask = group_irq_unmask,
};

static void
group_release(void *ctx)
{
	struct poll_bdev *pb = ctx;

	(void)nvp_bdev_poll_group_set_hook(pb->group, NULL);
	free(pb);
}

int
nvp_poll_waiter_add_bdev_group(struct nvp_poll_waiter *w, struct nvp_bdev_poll_group *group,
			       uint32_t max_inflight)
{
	int fds[POLL_BDEV_MAX_FDS];
	struct poll_bdev *pb;
	int nfds, rc;

	if (w == NULL || group == NULL) {
		return -EINVAL;
	}
	max_inflight = max_inflight != 0 ? max_inflight : POLL_BDEV_DEFAULT_SLOTS;
	nfds = nvp_bdev_poll_group_get_irq_fds(group, fds, POLL_BDEV_MAX_FDS);
	if (nfds < 0 && w->mode == NVP_POLL_IRQ) {
		NVP_ERRLOG(
			"irq mode: a channel of the bdev poll group has no interrupt (%d): "
			"create channels with .interrupts, on a module that has them (nvme, malloc, "
			"null)",
			nfds);
		return nfds == -ENOSPC ? -ENOSPC : -ENOTSUP;
	}
	pb = calloc(1, sizeof(*pb) + (size_t)max_inflight * sizeof(pb->slots[0]));
	if (pb == NULL) {
		return -ENOMEM;
	}
	pb->w = w;
	pb->group = group;
	pb->nslots = max_inflight;
	slots_reset(pb);
	pb->hook = (struct nvp_bdev_poll_hook){ .ctx = pb,
						.io_sent = bdev_io_sent,
						.io_done = bdev_io_done };
	rc = nvp_bdev_poll_group_set_hook(group, &pb->hook);
	if (rc == 0) {
		rc = poll_waiter_add_source_fds(w, &g_group_ops, pb, fds,
						nfds > 0 ? (uint32_t)nfds : 0, group_release);
		if (rc != 0) {
			(void)nvp_bdev_poll_group_set_hook(group, NULL);
		}
	}
	if (rc != 0) {
		free(pb);
	}
	return rc;
}
