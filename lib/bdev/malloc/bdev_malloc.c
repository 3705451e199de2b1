/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The malloc module: a RAM disk in DMA memory (so its buffers could be handed to a
 * device), of any size, with 512 or 4096-byte blocks, or 520 / 4104 with 8 bytes of
 * interleaved metadata per block. The copy happens at submit; the completion is
 * delivered on the channel's next poll, like a device's; a channel created with
 * .interrupts has an eventfd signalled when completions are ready, for an irq-mode waiter.
 *
 * Written against bdev_module.h only.
 */
#undef NVP_LOG_COMPONENT /* when a unit test includes the core first */
#define NVP_LOG_COMPONENT "bdev_malloc"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/env.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

struct malloc_bdev {
	struct nvp_bdev *bdev;
	uint8_t *data;
	uint32_t block_size;
};

struct malloc_io {
	struct nvme_cpl cpl;
};

/* The I/Os done since the last poll, in order, on the list the core completes in one
 * call; failed: one of them carries an error status (a compare that differed). */
struct malloc_channel {
	struct malloc_bdev *mb;
	struct nvp_bdev_io_list done;
	bool failed;
	struct nvp_bdev_channel_irq irq; /* .interrupts: signalled when done gets its first I/O */
};

static inline struct malloc_io *
malloc_io_ctx(struct nvp_bdev_io *io)
{
	return (struct malloc_io *)io->driver_ctx;
}

static bool
malloc_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	(void)ctx;
	(void)type;
	return true;
}

static int
malloc_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct malloc_channel *ch;
	int rc;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		return -ENOMEM;
	}
	ch->mb = ctx;
	nvp_bdev_io_list_init(&ch->done);
	rc = nvp_bdev_channel_irq_open(&ch->irq, opts);
	if (rc != 0) {
		free(ch);
		return rc;
	}
	*ch_ctx = ch;
	return 0;
}

static void
malloc_channel_destroy(void *ctx, void *ch_ctx)
{
	struct malloc_channel *ch = ch_ctx;

	(void)ctx;
	nvp_bdev_channel_irq_close(&ch->irq);
	free(ch);
}

/* Wake an irq-mode waiter (channel made with .interrupts). Out of line in the module:
 * its submit then keeps nothing in registers for it (5 instructions less per I/O,
 * measured with the null module, than calling the core's helper from there). */
static __attribute__((noinline)) void
malloc_irq_notify(struct malloc_channel *ch)
{
	nvp_bdev_channel_irq_signal(&ch->irq, &ch->done);
}

/* For a waiter in irq mode (lib/poll): the completions wait for the next poll. */
static int
malloc_get_irq_fd(void *ch_ctx)
{
	return nvp_bdev_channel_irq_get_fd(&((struct malloc_channel *)ch_ctx)->irq);
}

/* Copy between the disk at @disk and the iovecs; @to_disk says which way. */
static void
malloc_copy(uint8_t *disk, struct nvp_bdev_io *io, bool to_disk)
{
	int i;

	for (i = 0; i < io->iovcnt; i++) {
		if (to_disk) {
			memcpy(disk, io->iovs[i].iov_base, io->iovs[i].iov_len);
		} else {
			memcpy(io->iovs[i].iov_base, disk, io->iovs[i].iov_len);
		}
		disk += io->iovs[i].iov_len;
	}
}

static bool
malloc_compare(const uint8_t *disk, const struct nvp_bdev_io *io)
{
	int i;

	for (i = 0; i < io->iovcnt; i++) {
		if (memcmp(disk, io->iovs[i].iov_base, io->iovs[i].iov_len) != 0) {
			return false;
		}
		disk += io->iovs[i].iov_len;
	}
	return true;
}

static int
malloc_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct malloc_channel *ch = ch_ctx;
	struct malloc_io *mio = malloc_io_ctx(io);
	uint8_t *disk = ch->mb->data + io->offset_blocks * ch->mb->block_size;
	size_t len = (size_t)io->num_blocks * ch->mb->block_size;

	memset(&mio->cpl, 0, sizeof(mio->cpl));
	switch (io->type) {
	case NVP_BDEV_IO_READ:
		malloc_copy(disk, io, false);
		break;
	case NVP_BDEV_IO_WRITE:
		malloc_copy(disk, io, true);
		break;
	case NVP_BDEV_IO_WRITE_ZEROES:
	case NVP_BDEV_IO_UNMAP:
		memset(disk, 0, len);
		break;
	case NVP_BDEV_IO_COMPARE:
		if (!malloc_compare(disk, io)) {
			mio->cpl.status.sct = NVME_SCT_MEDIA_ERROR;
			mio->cpl.status.sc = NVME_SC_COMPARE_FAILURE;
			ch->failed = true;
		}
		break;
	default: /* flush: RAM is as durable as it gets */
		break;
	}
	if (nvp_unlikely(ch->irq.fd >= 0)) {
		malloc_irq_notify(ch);
	}
	nvp_bdev_io_list_append(&ch->done, io);
	return 0;
}

/* A miscompare among them: one at a time, each with its own status (a copy: the
 * callback may reuse the bdev_io). */
static __attribute__((noinline)) void
malloc_deliver_each(struct malloc_channel *ch)
{
	struct nvp_bdev_io *io, *next;
	struct nvme_cpl cpl;

	*ch->done.tailp = NULL;
	io = ch->done.head;
	nvp_bdev_io_list_init(&ch->done);
	ch->failed = false;
	for (; io != NULL; io = next) {
		next = io->internal.next; /* before: completing reuses the link */
		cpl = malloc_io_ctx(io)->cpl;
		nvp_bdev_io_complete(io, &cpl);
	}
}

static void
malloc_poll(void *ch_ctx)
{
	static const struct nvme_cpl ok; /* success */
	struct malloc_channel *ch = ch_ctx;

	/* the core takes the whole list first: callbacks may submit onto it again */
	if (nvp_unlikely(ch->failed)) {
		malloc_deliver_each(ch);
	} else if (!nvp_bdev_io_list_empty(&ch->done)) {
		nvp_bdev_io_complete_list(&ch->done, &ok);
	}
}

static void
malloc_destruct(void *ctx)
{
	struct malloc_bdev *mb = ctx;

	nvp_env_dma_free(mb->data);
	free(mb);
}

static const struct nvp_bdev_fn_table g_malloc_fn = {
	.destruct = malloc_destruct,
	.io_type_supported = malloc_io_type_supported,
	.channel_create = malloc_channel_create,
	.channel_destroy = malloc_channel_destroy,
	.submit = malloc_submit, /* never fails, completes from the poll */
	.poll = malloc_poll,
	.get_irq_fd = malloc_get_irq_fd,
	.submit_never_completes = true, /* done list, completed by the poll */
};

void
nvp_bdev_malloc_opts_init(struct nvp_bdev_malloc_opts *opts, size_t opts_size)
{
	struct nvp_bdev_malloc_opts d = { .opts_size = opts_size, .block_size = 512 };

	if (opts == NULL) {
		return;
	}
	memset(opts, 0, opts_size);
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

/*
 * The caller's options over the defaults: a caller built against an older, shorter struct
 * gets the defaults for the fields past its opts_size, never the bytes after its struct.
 * A bad opts_size copies nothing; it stays in @o for malloc_opts_check() to name.
 */
static void
malloc_opts_get(const struct nvp_bdev_malloc_opts *user, struct nvp_bdev_malloc_opts *o)
{
	nvp_bdev_malloc_opts_init(o, sizeof(*o));
	if (user->opts_size != 0 && user->opts_size <= sizeof(*o)) {
		memcpy(o, user, user->opts_size);
	}
	o->opts_size = user->opts_size;
}

/* Check the options; a 520 / 4104 block without md_size means 8 bytes of metadata. */
static int
malloc_opts_check(const struct nvp_bdev_malloc_opts *o, uint32_t *md_size)
{
	const char *bad = NULL;

	*md_size = o->md_size;
	if ((o->block_size == 520 || o->block_size == 4104) && o->md_size == 0) {
		*md_size = 8;
	}
	if (o->opts_size == 0 || o->opts_size > sizeof(*o)) {
		bad = "opts_size (use nvp_bdev_malloc_opts_init())";
	} else if (o->name == NULL || o->name[0] == '\0' || strlen(o->name) >= NVP_BDEV_NAME_MAX) {
		bad = "name (1 to 63 characters)";
	} else if (o->block_size != 512 && o->block_size != 4096 && o->block_size != 520 &&
		   o->block_size != 4104) {
		bad = "block_size (512, 4096, or 520 / 4104 with 8 bytes of metadata)";
	} else if (o->num_blocks == 0 || o->num_blocks > (UINT64_C(1) << 40) / o->block_size) {
		/* block_size is known good (not 0) by now */
		bad = "num_blocks (1 .. 1 TiB worth)";
	} else if (*md_size != o->block_size % 512 && !(o->block_size == 4104 && *md_size == 8)) {
		bad = "md_size (0 for 512 / 4096 blocks, 8 for 520 / 4104)";
	}
	if (bad != NULL) {
		NVP_ERRLOG("bdev_malloc_create '%s': bad parameter %s",
			   o->name != NULL ? o->name : "(null)", bad);
		return -EINVAL;
	}
	return 0;
}

static int
malloc_register(struct malloc_bdev *mb, const struct nvp_bdev_malloc_opts *opts, uint32_t md_size)
{
	struct nvp_bdev_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.name = opts->name;
	spec.module_name = "malloc";
	spec.block_size = opts->block_size;
	spec.md_size = md_size;
	spec.md_interleaved = md_size != 0;
	spec.num_blocks = opts->num_blocks;
	spec.max_xfer_blocks = opts->max_xfer_blocks;
	spec.optimal_io_boundary = opts->optimal_io_boundary;
	spec.io_ctx_size = sizeof(struct malloc_io);
	spec.fn_table = &g_malloc_fn;
	spec.ctx = mb;
	return nvp_bdev_register(&spec, &mb->bdev);
}

int
nvp_bdev_malloc_create(const struct nvp_bdev_malloc_opts *user, struct nvp_bdev **out)
{
	struct nvp_bdev_malloc_opts o;
	struct malloc_bdev *mb;
	uint32_t md_size;
	size_t size;
	int rc;

	if (user == NULL) {
		return -EINVAL;
	}
	malloc_opts_get(user, &o);
	rc = malloc_opts_check(&o, &md_size);
	if (rc != 0) {
		return rc;
	}
	if (nvp_bdev_get_by_name(o.name) != NULL) {
		NVP_ERRLOG("bdev_malloc_create: a bdev '%s' exists; choose another name", o.name);
		return -EEXIST;
	}
	mb = calloc(1, sizeof(*mb));
	if (mb == NULL) {
		return -ENOMEM;
	}
	size = (size_t)o.num_blocks * o.block_size;
	mb->block_size = o.block_size;
	mb->data = nvp_env_dma_zmalloc(size, 4096, NULL);
	if (mb->data == NULL) {
		NVP_ERRLOG("bdev_malloc_create '%s': cannot get %zu bytes of DMA memory (is env "
			   "initialised? enough hugepages?)",
			   o.name, size);
		free(mb);
		return -ENOMEM;
	}
	rc = malloc_register(mb, &o, md_size);
	if (rc != 0) {
		malloc_destruct(mb);
		return rc;
	}
	if (out != NULL) {
		*out = mb->bdev;
	}
	return 0;
}

int
nvp_bdev_malloc_delete(const char *name)
{
	struct nvp_bdev *bdev = nvp_bdev_get_by_name(name);

	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), "malloc") != 0) {
		NVP_ERRLOG("bdev_malloc_delete: no malloc bdev '%s'",
			   name != NULL ? name : "(null)");
		return -ENODEV;
	}
	return nvp_bdev_unregister(bdev);
}
