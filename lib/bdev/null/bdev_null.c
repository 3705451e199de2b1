/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The null module: a bdev with no storage. Writes are discarded, reads return zeroes,
 * every I/O completes on the channel's next poll, in submission order (a channel created
 * with .interrupts has an eventfd signalled when some are ready, for an irq-mode waiter).
 * It measures the bdev layer itself (the module costs a list append and a walk) and
 * stands in for a device in tests.
 *
 * Written against bdev_module.h only, as any third-party module would be.
 */
#undef NVP_LOG_COMPONENT /* when a unit test includes the core first */
#define NVP_LOG_COMPONENT "bdev_null"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/util.h"
#include "nvpoll/log.h"

struct null_bdev {
	struct nvp_bdev *bdev;
};

/* Completed on the next poll: the I/Os submitted since the last one, in order, on the
 * list the core completes in one call (an append is two stores and no test). */
struct null_channel {
	struct nvp_bdev_io_list queue;
	struct nvp_bdev_channel_irq irq; /* .interrupts: signalled when queue gets its first I/O */
};

static bool
null_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	(void)ctx;
	return type != NVP_BDEV_IO_COMPARE;
}

static int
null_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct null_channel *ch = calloc(1, sizeof(*ch));
	int rc;

	(void)ctx;
	if (ch == NULL) {
		return -ENOMEM;
	}
	nvp_bdev_io_list_init(&ch->queue);
	rc = nvp_bdev_channel_irq_open(&ch->irq, opts);
	if (rc != 0) {
		free(ch);
		return rc;
	}
	*ch_ctx = ch;
	return 0;
}

static void
null_channel_destroy(void *ctx, void *ch_ctx)
{
	struct null_channel *ch = ch_ctx;

	(void)ctx;
	nvp_bdev_channel_irq_close(&ch->irq);
	free(ch);
}

/* Wake an irq-mode waiter (channel made with .interrupts). Out of line in the module:
 * its submit then keeps nothing in registers for it (5 instructions less per I/O,
 * measured with the null module, than calling the core's helper from there). */
static __attribute__((noinline)) void
null_irq_notify(struct null_channel *ch)
{
	nvp_bdev_channel_irq_signal(&ch->irq, &ch->queue);
}

/* For a waiter in irq mode (lib/poll): the completions wait for the next poll. */
static int
null_get_irq_fd(void *ch_ctx)
{
	return nvp_bdev_channel_irq_get_fd(&((struct null_channel *)ch_ctx)->irq);
}

/* Reads return zeroes: every segment of a vectored read. */
static __attribute__((noinline)) void
null_zero_iovs(struct nvp_bdev_io *io)
{
	int i;

	for (i = 0; i < io->iovcnt; i++) {
		memset(io->iovs[i].iov_base, 0, io->iovs[i].iov_len);
	}
}

static int
null_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct null_channel *ch = ch_ctx;

	if (nvp_unlikely(ch->irq.fd >= 0)) {
		null_irq_notify(ch);
	}
	/* queued first, so that nothing is kept across the memset call */
	nvp_bdev_io_list_append(&ch->queue, io);
	if (io->type == NVP_BDEV_IO_READ) {
		if (nvp_likely(io->iovcnt == 1)) {
			memset(io->iovs[0].iov_base, 0, io->iovs[0].iov_len);
		} else {
			null_zero_iovs(io);
		}
	}
	return 0;
}

static void
null_poll(void *ch_ctx)
{
	static const struct nvme_cpl ok; /* success */
	struct null_channel *ch = ch_ctx;

	/* the core takes the whole list first: callbacks may submit onto it again */
	if (!nvp_bdev_io_list_empty(&ch->queue)) {
		nvp_bdev_io_complete_list(&ch->queue, &ok);
	}
}

static void
null_destruct(void *ctx)
{
	free(ctx);
}

static const struct nvp_bdev_fn_table g_null_fn = {
	.destruct = null_destruct,
	.io_type_supported = null_io_type_supported,
	.channel_create = null_channel_create,
	.channel_destroy = null_channel_destroy,
	.submit = null_submit,
	.poll = null_poll,
	.get_irq_fd = null_get_irq_fd,
	.submit_never_completes = true, /* queued, completed by the poll */
};

void
nvp_bdev_null_opts_init(struct nvp_bdev_null_opts *opts, size_t opts_size)
{
	struct nvp_bdev_null_opts d = { .opts_size = opts_size, .block_size = 512 };

	if (opts == NULL) {
		return;
	}
	memset(opts, 0, opts_size);
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

/*
 * The caller's options over the defaults: a caller built against an older, shorter struct
 * gets the defaults for the fields past its opts_size, never the bytes after its struct.
 * A bad opts_size copies nothing; it stays in @o for null_opts_check() to name.
 */
static void
null_opts_get(const struct nvp_bdev_null_opts *user, struct nvp_bdev_null_opts *o)
{
	nvp_bdev_null_opts_init(o, sizeof(*o));
	if (user->opts_size != 0 && user->opts_size <= sizeof(*o)) {
		memcpy(o, user, user->opts_size);
	}
	o->opts_size = user->opts_size;
}

static int
null_opts_check(const struct nvp_bdev_null_opts *o)
{
	uint32_t data = o->block_size - o->md_size; /* used once md_size < block_size */
	const char *bad = NULL;

	if (o->opts_size == 0 || o->opts_size > sizeof(*o)) {
		bad = "opts_size (use nvp_bdev_null_opts_init())";
	} else if (o->name == NULL || o->name[0] == '\0' || strlen(o->name) >= NVP_BDEV_NAME_MAX) {
		bad = "name (1 to 63 characters)";
	} else if (o->num_blocks == 0) {
		bad = "num_blocks (>= 1)";
	} else if (o->md_size != 0 && o->md_size >= o->block_size) {
		bad = "md_size (interleaved: less than block_size, which includes it)";
	} else if (data < 512 || data > 65536 || !NVP_IS_POW2(data)) {
		bad = "block_size (512 .. 65536, a power of two, plus md_size)";
	}
	if (bad != NULL) {
		NVP_ERRLOG("bdev_null_create '%s': bad parameter %s",
			   o->name != NULL ? o->name : "(null)", bad);
		return -EINVAL;
	}
	return 0;
}

int
nvp_bdev_null_create(const struct nvp_bdev_null_opts *user, struct nvp_bdev **out)
{
	struct nvp_bdev_null_opts o;
	struct nvp_bdev_spec spec;
	struct null_bdev *nb;
	int rc;

	if (user == NULL) {
		return -EINVAL;
	}
	null_opts_get(user, &o);
	rc = null_opts_check(&o);
	if (rc != 0) {
		return rc;
	}
	nb = calloc(1, sizeof(*nb));
	if (nb == NULL) {
		return -ENOMEM;
	}
	memset(&spec, 0, sizeof(spec));
	spec.name = o.name;
	spec.module_name = "null";
	spec.block_size = o.block_size;
	spec.md_size = o.md_size;
	spec.md_interleaved = o.md_size != 0;
	spec.num_blocks = o.num_blocks;
	spec.max_xfer_blocks = o.max_xfer_blocks;
	spec.fn_table = &g_null_fn;
	spec.ctx = nb;
	rc = nvp_bdev_register(&spec, &nb->bdev);
	if (rc != 0) {
		free(nb);
		return rc;
	}
	if (out != NULL) {
		*out = nb->bdev;
	}
	return 0;
}

int
nvp_bdev_null_delete(const char *name)
{
	struct nvp_bdev *bdev = nvp_bdev_get_by_name(name);

	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), "null") != 0) {
		NVP_ERRLOG("bdev_null_delete: no null bdev '%s'", name != NULL ? name : "(null)");
		return -ENODEV;
	}
	return nvp_bdev_unregister(bdev);
}
