/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The passthru module: a bdev on top of another, forwarding each I/O with the public
 * bdev calls and counting it. It shows what a module needs from nvpoll and gets only
 * from <nvpoll/bdev_module.h>:
 *  - a function table (channel create/destroy, submit, poll, destruct) and
 *    nvp_bdev_register() with the geometry copied from the base bdev;
 *  - per-channel state made on the channel's thread: here a channel of the base bdev;
 *  - the request (struct nvp_bdev_io: type, blocks, iovecs, write flags) and its per-I/O
 *    context (driver_ctx), completed with nvp_bdev_io_complete() from poll;
 *  - removal: the base's REMOVE event is passed on with nvp_bdev_hot_remove().
 * Counters are per bdev and shared by its channels, so they are atomics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvpoll/bdev.h>
#include <nvpoll/bdev_module.h>

#include "passthru.h"

struct pt_bdev {
	struct nvp_bdev *bdev;
	struct nvp_bdev_desc *base_desc;
	struct passthru_counts counts; /* updated with atomics */
};

struct pt_channel {
	struct pt_bdev *pt;
	struct nvp_bdev_channel *base_ch;
};

static bool
pt_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	struct pt_bdev *pt = ctx;

	return nvp_bdev_io_type_supported(nvp_bdev_desc_get_bdev(pt->base_desc), type);
}

static int
pt_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct pt_bdev *pt = ctx;
	struct nvp_bdev_channel_opts base_opts;
	struct pt_channel *ch;
	int rc;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		return -ENOMEM;
	}
	nvp_bdev_channel_opts_init(&base_opts, sizeof(base_opts));
	base_opts.io_pool_size = opts->io_pool_size;
	base_opts.module_queue_depth = opts->module_queue_depth;
	rc = nvp_bdev_channel_create(pt->base_desc, &base_opts, &ch->base_ch);
	if (rc != 0) {
		free(ch);
		return rc;
	}
	ch->pt = pt;
	*ch_ctx = ch;
	return 0;
}

static void
pt_channel_destroy(void *ctx, void *ch_ctx)
{
	struct pt_channel *ch = ch_ctx;

	(void)ctx;
	nvp_bdev_channel_destroy(ch->base_ch);
	free(ch);
}

/* The base I/O completed: count it, complete ours with the base's status. */
static void
pt_base_done(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct nvp_bdev_io *io = cb_arg;
	struct pt_bdev *pt = nvp_bdev_get_module_ctx(io->bdev);

	__atomic_fetch_add(&pt->counts.ios[io->type], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pt->counts.bytes[io->type], nvp_bdev_io_get_nbytes(io),
			   __ATOMIC_RELAXED);
	if (nvme_cpl_is_error(cpl)) {
		__atomic_fetch_add(&pt->counts.errors, 1, __ATOMIC_RELAXED);
	}
	nvp_bdev_io_complete(io, cpl);
}

static int
pt_base_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct pt_channel *ch = ch_ctx;
	struct nvp_bdev_desc *d = ch->pt->base_desc;
	struct nvp_bdev_channel *bc = ch->base_ch;
	uint64_t off = io->offset_blocks, n = io->num_blocks;

	switch (io->type) {
	case NVP_BDEV_IO_READ:
		return nvp_bdev_readv_blocks(d, bc, io->iovs, io->iovcnt, off, n, pt_base_done, io);
	case NVP_BDEV_IO_WRITE:
		return nvp_bdev_writev_blocks(d, bc, io->iovs, io->iovcnt, off, n, io->flags,
					      pt_base_done, io);
	case NVP_BDEV_IO_WRITE_ZEROES:
		return nvp_bdev_write_zeroes_blocks(d, bc, off, n, io->flags, pt_base_done, io);
	case NVP_BDEV_IO_UNMAP:
		return nvp_bdev_unmap_blocks(d, bc, off, n, pt_base_done, io);
	case NVP_BDEV_IO_FLUSH:
		return nvp_bdev_flush_blocks(d, bc, off, n, pt_base_done, io);
	case NVP_BDEV_IO_COMPARE:
		return nvp_bdev_compare_blocks(d, bc, io->iovs[0].iov_base, off, n, pt_base_done,
					       io);
	default:
		return -ENOTSUP;
	}
}

/* Failures are reported, not returned: -ENOMEM from the base (its pool is empty) makes the
 * core retry ours later. */
static int
pt_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	int rc = pt_base_submit(ch_ctx, io);

	if (rc != 0) {
		nvp_bdev_io_submit_failed(io, rc);
	}
	return 0;
}

static void
pt_poll(void *ch_ctx)
{
	struct pt_channel *ch = ch_ctx;

	(void)nvp_bdev_channel_poll(ch->base_ch);
}

static void
pt_destruct(void *ctx)
{
	struct pt_bdev *pt = ctx;

	nvp_bdev_close(pt->base_desc);
	free(pt);
}

static const struct nvp_bdev_fn_table g_pt_fn = {
	.destruct = pt_destruct,
	.io_type_supported = pt_io_type_supported,
	.channel_create = pt_channel_create,
	.channel_destroy = pt_channel_destroy,
	.submit = pt_submit,
	.poll = pt_poll,
};

/* The base went away: so does the passthru bdev (its users get REMOVE in turn). */
static void
pt_base_event(enum nvp_bdev_event_type type, struct nvp_bdev *base, void *ctx)
{
	struct pt_bdev *pt = ctx;

	(void)base;
	if (type == NVP_BDEV_EVENT_REMOVE && pt->bdev != NULL) {
		nvp_bdev_hot_remove(pt->bdev);
	} else if (type == NVP_BDEV_EVENT_RESIZE && pt->bdev != NULL) {
		nvp_bdev_notify_blockcnt_change(pt->bdev, nvp_bdev_get_num_blocks(base));
	}
}

int
passthru_create(const char *name, const char *base)
{
	struct nvp_bdev_spec spec;
	struct nvp_bdev *b;
	struct pt_bdev *pt;
	int rc;

	if (name == NULL || base == NULL) {
		return -EINVAL;
	}
	pt = calloc(1, sizeof(*pt));
	if (pt == NULL) {
		return -ENOMEM;
	}
	rc = nvp_bdev_open(base, true, pt_base_event, pt, &pt->base_desc);
	if (rc != 0) {
		free(pt);
		return rc;
	}
	b = nvp_bdev_desc_get_bdev(pt->base_desc);
	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.module_name = "passthru";
	spec.block_size = nvp_bdev_get_block_size(b);
	spec.md_size = nvp_bdev_get_md_size(b);
	spec.md_interleaved = nvp_bdev_is_md_interleaved(b);
	spec.write_cache = nvp_bdev_has_write_cache(b);
	spec.num_blocks = nvp_bdev_get_num_blocks(b);
	/* the base splits what it must; ours need not */
	spec.fn_table = &g_pt_fn;
	spec.ctx = pt;
	rc = nvp_bdev_register(&spec, &pt->bdev);
	if (rc != 0) {
		nvp_bdev_close(pt->base_desc);
		free(pt);
	}
	return rc;
}

static struct pt_bdev *
pt_find(const char *name)
{
	struct nvp_bdev *b = name != NULL ? nvp_bdev_get_by_name(name) : NULL;

	if (b == NULL || strcmp(nvp_bdev_get_module_name(b), "passthru") != 0) {
		return NULL;
	}
	return nvp_bdev_get_module_ctx(b);
}

int
passthru_delete(const char *name)
{
	struct pt_bdev *pt = pt_find(name);

	return pt != NULL ? nvp_bdev_unregister(pt->bdev) : -ENODEV;
}

int
passthru_get_counts(const char *name, struct passthru_counts *counts)
{
	struct pt_bdev *pt = pt_find(name);
	int t;

	if (pt == NULL) {
		return -ENODEV;
	}
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		counts->ios[t] = __atomic_load_n(&pt->counts.ios[t], __ATOMIC_RELAXED);
		counts->bytes[t] = __atomic_load_n(&pt->counts.bytes[t], __ATOMIC_RELAXED);
	}
	counts->errors = __atomic_load_n(&pt->counts.errors, __ATOMIC_RELAXED);
	return 0;
}
