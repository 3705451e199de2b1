/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O path: the read/write/... calls, their validation (bad requests fail at the
 * call and nothing is sent), splitting above the module's max transfer or across its
 * optimal boundary (children from the same pool, recycled as they complete; the parent
 * completes once with the first error), the pipeline admission -> scheduling -> module
 * and back, and accounting.
 *
 * Fast path: with both stages "none", no poll hook and the bdev not split, an I/O is
 * pool pop, a few stores, module submit; its completion is the counters, two histogram
 * records (accounting on), pool push, callback. Everything else — stages, the hook,
 * deferred and retried I/O, completions made inside module submit — is behind one
 * predicted branch on the channel's mode or its pending_work flag.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bdev/bdev_internal.h"

static void io_complete_slow(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io,
			     const struct nvme_cpl *cpl);

uint64_t
nvp_bdev_io_get_nbytes(const struct nvp_bdev_io *io)
{
	return io->num_blocks * io->bdev->block_size;
}

/* ---- validation ---- */

/* Why a request was refused; only reached when the quick check failed. */
static int
io_check_slow(const struct nvp_bdev_desc *desc, const struct nvp_bdev_channel *ch, uint8_t type,
	      uint64_t off, uint64_t num)
{
	const struct nvp_bdev *bdev = ch->bdev;
	uint64_t nb = __atomic_load_n(&bdev->num_blocks, __ATOMIC_RELAXED);

	if (ch->desc != desc) {
		NVP_ERRLOG("%s: the channel belongs to another descriptor", bdev->name);
		return -EINVAL;
	}
	if (__atomic_load_n(&bdev->removed, __ATOMIC_RELAXED)) {
		return -ENXIO;
	}
	if (!bdev->supported[type]) {
		NVP_ERRLOG("%s: %s not supported by module %s", bdev->name,
			   nvp_bdev_io_type_name(type), bdev->module_name);
		return -ENOTSUP;
	}
	if (io_type_writes(type) && !desc->write) {
		NVP_ERRLOG("%s: %s through a read-only descriptor; open it with write=true",
			   bdev->name, nvp_bdev_io_type_name(type));
		return -EBADF;
	}
	if (num == 0 || off >= nb || num > nb - off) {
		NVP_ERRLOG("%s: %s of %" PRIu64 " block(s) at block %" PRIu64
			   ": outside the bdev's %" PRIu64 " blocks",
			   bdev->name, nvp_bdev_io_type_name(type), num, off, nb);
		return -EINVAL;
	}
	return 0;
}

/*
 * Check a request and take a bdev_io for it. One combined test on the fast path; the
 * reason is worked out only when it fails.
 */
static inline __attribute__((always_inline)) int
io_get(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type, uint64_t off,
       uint64_t num, struct nvp_bdev_io **out)
{
	struct nvp_bdev *bdev = ch->bdev;
	struct nvp_bdev_io *io;
	uint64_t nb = bdev->num_blocks;
	int rc;

	rc = bdev_check_owner(ch->owner, "bdev channel");
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	/* num - 1 wraps for num == 0: one compare covers empty and too long */
	/* ch->allowed: the types this channel may send now (supported, writable, not removed) */
	if (nvp_unlikely(ch->desc != desc || off >= nb || num - 1 >= nb - off ||
			 (__atomic_load_n(&ch->allowed, __ATOMIC_RELAXED) & (1u << type)) == 0)) {
		rc = io_check_slow(desc, ch, type, off, num);
		if (rc != 0) {
			return rc;
		}
	}
	io = ch->free_ios;
	if (nvp_unlikely(io == NULL)) {
		return -ENOMEM;
	}
	ch->free_ios = io->internal.next;
	ch->num_free--;
	io->type = type;
	io->tenant = desc->tenant;
	io->flags = 0;
	io->offset_blocks = off;
	io->num_blocks = num;
	io->iovs = NULL;
	io->iovcnt = 0;
	*out = io;
	return 0;
}

/* Byte offset and length to blocks. */
static int
bytes_to_blocks(const struct nvp_bdev_desc *desc, uint64_t offset, uint64_t nbytes,
		uint64_t *off_blocks, uint64_t *num_blocks)
{
	uint32_t bs = desc->bdev->block_size;

	if (offset % bs != 0 || nbytes % bs != 0) {
		NVP_ERRLOG("%s: offset %" PRIu64 " and length %" PRIu64
			   " must be multiples of the block size %u",
			   desc->bdev->name, offset, nbytes, bs);
		return -EINVAL;
	}
	*off_blocks = offset / bs;
	*num_blocks = nbytes / bs;
	return 0;
}

static int
iov_check(const struct nvp_bdev_io *io, const struct iovec *iov, int iovcnt)
{
	uint64_t total = 0;
	int i;

	if (iov == NULL || iovcnt <= 0) {
		NVP_ERRLOG("%s: no iovec given", io->bdev->name);
		return -EINVAL;
	}
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_base == NULL && iov[i].iov_len != 0) {
			NVP_ERRLOG("%s: iovec %d has a NULL base", io->bdev->name, i);
			return -EINVAL;
		}
		total += iov[i].iov_len;
	}
	if (total != io->num_blocks * io->bdev->block_size) {
		NVP_ERRLOG("%s: iovecs hold %" PRIu64 " bytes, the request is %" PRIu64,
			   io->bdev->name, total, io->num_blocks * io->bdev->block_size);
		return -EINVAL;
	}
	return 0;
}

/* ---- the pipeline ---- */

static void
module_submit_failed(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, int rc)
{
	if (rc == -ENOMEM) {
		io_list_append(&ch->retry, io);
	} else {
		memset(&io->internal.cpl, 0, sizeof(io->internal.cpl));
		io->internal.cpl.status.sct = NVME_SCT_GENERIC;
		io->internal.cpl.status.sc = rc == -ENXIO ? NVME_SC_ABORTED_SQ_DELETION :
							    NVME_SC_INTERNAL_DEVICE_ERROR;
		io_list_append(&ch->done, io);
	}
	ch->pending_work = true;
}

static inline void
module_submit(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	int rc;

	ch->in_submit = true;
	rc = ch->mod_submit(ch->module_ch, io);
	ch->in_submit = false;
	if (nvp_unlikely(rc != 0)) {
		module_submit_failed(ch, io, rc);
	}
}

static void
to_module(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now)
{
	const struct nvp_bdev_poll_hook *hook = ch->hook;

	io->internal.dev_tick = now;
	if (hook != NULL && hook->io_sent != NULL) {
		hook->io_sent(hook->ctx, io, now);
	}
	module_submit(ch, io);
}

static void
sched_dispatch(struct nvp_bdev_channel *ch, uint64_t now)
{
	struct nvp_bdev_io *io;
	uint64_t next = 0;

	while ((io = ch->sched_ops->dispatch(ch->sched_ch, now)) != NULL) {
		to_module(ch, io, now);
	}
	if (ch->sched_ops->has_work != NULL && ch->sched_ops->has_work(ch->sched_ch, &next)) {
		ch->pending_work = true;
	}
}

static void
sched_send(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now)
{
	if (ch->sched_ops->submit == NULL) {
		to_module(ch, io, now);
		return;
	}
	ch->sched_ops->submit(ch->sched_ch, io, now);
	sched_dispatch(ch, now);
}

/* Stages or a hook: admission, then the scheduler, then the module. */
static void
pipeline_send(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	uint64_t now = nvp_env_get_ticks();

	if (ch->admit_ops->admit != NULL) {
		/* Every new I/O is asked, even while others wait: the stage keeps each class
		 * in order, and a read need not wait behind deferred writes. */
		if (ch->admit_ops->admit(ch->admit_ch, io, now) == NVP_BDEV_ADMIT_DEFER) {
			io_list_append(&ch->deferred, io);
			ch->pending_work = true;
			return;
		}
	}
	sched_send(ch, io, now);
}

/* Completion back up the stages: scheduler, admission, hook (latency feedback). */
static void
pipeline_complete(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	const struct nvp_bdev_poll_hook *hook = ch->hook;
	uint64_t now = nvp_env_get_ticks();
	uint64_t dev = now - io->internal.dev_tick;

	if (ch->sched_ops->complete != NULL) {
		ch->sched_ops->complete(ch->sched_ch, io, dev, now);
	}
	if (ch->admit_ops->complete != NULL) {
		ch->admit_ops->complete(ch->admit_ch, io, now - io->submit_tick, now);
	}
	if (hook != NULL && hook->io_done != NULL) {
		hook->io_done(hook->ctx, io, dev, now);
	}
	if (ch->sched_ops->dispatch != NULL) {
		sched_dispatch(ch, now);
	}
}

static inline void
io_send(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	if (nvp_likely((ch->mode & CH_MODE_SLOW) == 0)) {
		io->internal.dev_tick = io->submit_tick;
		module_submit(ch, io);
	} else {
		pipeline_send(ch, io);
	}
}

/* ---- splitting ---- */

static inline bool
needs_split(const struct nvp_bdev *bdev, const struct nvp_bdev_io *io)
{
	uint32_t b = bdev->optimal_io_boundary;

	if (nvp_likely(!bdev->may_split) || io->type == NVP_BDEV_IO_FLUSH) {
		return false;
	}
	if (bdev->max_xfer_blocks != 0 && io->num_blocks > bdev->max_xfer_blocks) {
		return true;
	}
	return b != 0 && io->offset_blocks / b != (io->offset_blocks + io->num_blocks - 1) / b;
}

/* Blocks of the next child of @parent starting at @off. */
static uint64_t
split_len(const struct nvp_bdev *bdev, uint64_t off, uint64_t end)
{
	uint64_t len = end - off;
	uint32_t b = bdev->optimal_io_boundary;
	uint64_t next_b;

	if (bdev->max_xfer_blocks != 0 && len > bdev->max_xfer_blocks) {
		len = bdev->max_xfer_blocks;
	}
	if (b != 0) {
		next_b = (off / b + 1) * b;
		if (off + len > next_b) {
			len = next_b - off;
		}
	}
	return len;
}

/*
 * Point @child's iovs at @len blocks of the parent's data from byte @pos. A slice needing
 * more than NVP_BDEV_IO_NUM_IOVS segments is cut at the last whole block that fits.
 * \return blocks covered (0: a single block needs too many segments).
 */
static uint64_t
split_iovs(struct nvp_bdev_io *child, const struct nvp_bdev_io *parent, uint64_t pos, uint64_t len)
{
	uint32_t bs = parent->bdev->block_size;
	uint64_t want = len * bs, got = 0, skip = pos, seg;
	int i, n = 0;

	for (i = 0; i < parent->iovcnt && got < want; i++) {
		if (skip >= parent->iovs[i].iov_len) {
			skip -= parent->iovs[i].iov_len;
			continue;
		}
		if (n == NVP_BDEV_IO_NUM_IOVS) {
			break;
		}
		seg = NVP_MIN(parent->iovs[i].iov_len - skip, want - got);
		child->internal.iov[n].iov_base = (char *)parent->iovs[i].iov_base + skip;
		child->internal.iov[n].iov_len = seg;
		got += seg;
		skip = 0;
		n++;
	}
	if (got < want) {
		/* trim to whole blocks */
		want = got / bs * bs;
		for (got = 0, i = 0; i < n; i++) {
			if (got + child->internal.iov[i].iov_len >= want) {
				child->internal.iov[i].iov_len = want - got;
				n = want == got ? i : i + 1;
				break;
			}
			got += child->internal.iov[i].iov_len;
		}
	}
	child->iovs = child->internal.iov;
	child->iovcnt = n;
	return want / bs;
}

/* Send the next piece of @parent on @child. \return false if nothing could be sent. */
static bool
split_issue(struct nvp_bdev_channel *ch, struct nvp_bdev_io *parent, struct nvp_bdev_io *child)
{
	uint64_t end = parent->offset_blocks + parent->num_blocks;
	uint64_t off = parent->internal.split_next;
	uint64_t len = split_len(ch->bdev, off, end);

	child->type = parent->type;
	child->flags = parent->flags;
	child->offset_blocks = off;
	child->iovs = NULL;
	child->iovcnt = 0;
	if (parent->iovs != NULL) {
		len = split_iovs(child, parent, parent->internal.split_iov_off, len);
		if (len == 0) {
			NVP_ERRLOG("%s: a block spans more than %u iovecs; cannot split",
				   ch->bdev->name, NVP_BDEV_IO_NUM_IOVS);
			parent->internal.cpl.status.sct = NVME_SCT_GENERIC;
			parent->internal.cpl.status.sc = NVME_SC_INVALID_FIELD;
			return false;
		}
	}
	child->num_blocks = len;
	child->internal.parent = parent;
	child->internal.state = IO_STATE_SINGLE;
	child->submit_tick = parent->submit_tick != 0 ? nvp_env_get_ticks() : 0;
	parent->internal.split_next += len;
	parent->internal.split_iov_off += len * ch->bdev->block_size;
	parent->internal.split_outstanding++;
	io_send(ch, child);
	return true;
}

static void
split_start(struct nvp_bdev_channel *ch, struct nvp_bdev_io *parent)
{
	uint64_t end = parent->offset_blocks + parent->num_blocks;
	struct nvp_bdev_io *child;
	uint32_t n;

	parent->internal.state = IO_STATE_SPLIT;
	parent->internal.split_next = parent->offset_blocks;
	parent->internal.split_iov_off = 0;
	parent->internal.split_outstanding = 0;
	parent->internal.dev_tick = 0;
	for (n = 0; n < BDEV_SPLIT_MAX_CHILDREN && parent->internal.split_next < end; n++) {
		child = ch->free_ios;
		if (child == NULL) {
			break;
		}
		ch->free_ios = child->internal.next;
		ch->num_free--;
		if (!split_issue(ch, parent, child)) {
			bdev_io_release(ch, child);
			break;
		}
	}
	if (parent->internal.split_outstanding == 0) {
		/* nothing could be sent (error above): complete from the next poll */
		io_list_append(&ch->done, parent);
		ch->pending_work = true;
	}
}

/* A child completed: recycle it for the next piece, or finish the parent. */
static void
child_done(struct nvp_bdev_channel *ch, struct nvp_bdev_io *child, const struct nvme_cpl *cpl)
{
	struct nvp_bdev_io *parent = child->internal.parent;
	uint64_t end = parent->offset_blocks + parent->num_blocks;

	parent->internal.split_outstanding--;
	if (parent->internal.dev_tick == 0 ||
	    child->internal.dev_tick < parent->internal.dev_tick) {
		parent->internal.dev_tick = child->internal.dev_tick;
	}
	if (nvme_cpl_is_error(cpl) && !nvme_cpl_is_error(&parent->internal.cpl)) {
		parent->internal.cpl = *cpl;
	}
	if (!nvme_cpl_is_error(&parent->internal.cpl) && parent->internal.split_next < end &&
	    split_issue(ch, parent, child)) {
		return;
	}
	child->internal.parent = NULL;
	bdev_io_release(ch, child);
	if (parent->internal.split_outstanding == 0) {
		io_complete_slow(ch, parent, &parent->internal.cpl);
	} else if (ch->wait_head != NULL) {
		bdev_run_io_waiters(ch);
	}
}

/* ---- submission ---- */

static inline __attribute__((always_inline)) int
io_submit(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, nvp_bdev_io_cb cb, void *cb_arg)
{
	struct ch_op_stats *op = &ch->op[io->type];
	bool split = needs_split(ch->bdev, io);

	if (nvp_unlikely(split && ch->free_ios == NULL)) {
		bdev_io_release(ch, io);
		return -ENOMEM;
	}
	io->internal.cb = cb;
	io->internal.cb_arg = cb_arg;
	io->internal.parent = NULL;
	io->internal.state = IO_STATE_SINGLE;
	io->internal.cpl.status_raw = 0;
	io->submit_tick = 0;
	if (ch->mode != 0) {
		io->submit_tick = nvp_env_get_ticks();
	}
	ch->outstanding++;
	if (op->inflight++ == 0) {
		op->busy_start = io->submit_tick;
	}
	if (nvp_unlikely(split)) {
		split_start(ch, io);
	} else {
		io_send(ch, io);
	}
	return 0;
}

/* Reserved flag bits, or a lifetime hint past the last one (5..7 fit the bits). */
static inline bool
flags_bad(uint32_t flags)
{
	return (flags & ~NVP_BDEV_WRITE_FLAGS_VALID) != 0 ||
	       (flags & NVP_BDEV_WRITE_HINT_MASK) >
		       ((uint32_t)NVP_BDEV_HINT_EXTREME << NVP_BDEV_WRITE_HINT_SHIFT);
}

/* The descriptor's default lifetime hint goes on writes whose flags carry none. */
static inline uint32_t
write_flags(const struct nvp_bdev_desc *desc, uint8_t type, uint32_t flags)
{
	if (type == NVP_BDEV_IO_WRITE && (flags & NVP_BDEV_WRITE_HINT_MASK) == 0) {
		flags |= desc->write_hint;
	}
	return flags;
}

static inline __attribute__((always_inline)) int
data_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type, void *buf,
	uint64_t off, uint64_t num, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	struct nvp_bdev_io *io;
	int rc;

	/* a NULL desc fails the channel's descriptor check in io_get() */
	if (nvp_unlikely(buf == NULL || flags_bad(flags) || ch == NULL)) {
		NVP_ERRLOG(
			"bdev I/O: NULL buffer, descriptor or channel, or reserved flag bits (hint 5-7)");
		return -EINVAL;
	}
	rc = io_get(desc, ch, type, off, num, &io);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	io->flags = write_flags(desc, type, flags);
	io->internal.iov[0].iov_base = buf;
	io->internal.iov[0].iov_len = num * ch->bdev->block_size;
	io->iovs = io->internal.iov;
	io->iovcnt = 1;
	return io_submit(ch, io, cb, cb_arg);
}

static int
vector_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type,
	  const struct iovec *iov, int iovcnt, uint64_t off, uint64_t num, uint32_t flags,
	  nvp_bdev_io_cb cb, void *cb_arg)
{
	struct nvp_bdev_io *io;
	int rc;

	if (desc == NULL || ch == NULL || flags_bad(flags)) {
		NVP_ERRLOG(
			"bdev I/O: NULL descriptor or channel, or reserved flag bits (hint 5-7)");
		return -EINVAL;
	}
	rc = io_get(desc, ch, type, off, num, &io);
	if (rc != 0) {
		return rc;
	}
	rc = iov_check(io, iov, iovcnt);
	if (rc != 0) {
		bdev_io_release(ch, io);
		return rc;
	}
	io->flags = write_flags(desc, type, flags);
	io->iovs = (struct iovec *)iov;
	io->iovcnt = iovcnt;
	return io_submit(ch, io, cb, cb_arg);
}

static int
nodata_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type, uint64_t off,
	  uint64_t num, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	struct nvp_bdev_io *io;
	int rc;

	if (desc == NULL || ch == NULL || flags_bad(flags)) {
		NVP_ERRLOG(
			"bdev I/O: NULL descriptor or channel, or reserved flag bits (hint 5-7)");
		return -EINVAL;
	}
	rc = io_get(desc, ch, type, off, num, &io);
	if (rc != 0) {
		return rc;
	}
	io->flags = flags;
	return io_submit(ch, io, cb, cb_arg);
}

int
nvp_bdev_read_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		     uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb, void *cb_arg)
{
	return data_io(desc, ch, NVP_BDEV_IO_READ, buf, offset_blocks, num_blocks, 0, cb, cb_arg);
}

int
nvp_bdev_write_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		      uint64_t offset_blocks, uint64_t num_blocks, uint32_t flags,
		      nvp_bdev_io_cb cb, void *cb_arg)
{
	return data_io(desc, ch, NVP_BDEV_IO_WRITE, buf, offset_blocks, num_blocks, flags, cb,
		       cb_arg);
}

int
nvp_bdev_compare_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
			uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb,
			void *cb_arg)
{
	return data_io(desc, ch, NVP_BDEV_IO_COMPARE, buf, offset_blocks, num_blocks, 0, cb,
		       cb_arg);
}

int
nvp_bdev_readv_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
		      const struct iovec *iov, int iovcnt, uint64_t offset_blocks,
		      uint64_t num_blocks, nvp_bdev_io_cb cb, void *cb_arg)
{
	return vector_io(desc, ch, NVP_BDEV_IO_READ, iov, iovcnt, offset_blocks, num_blocks, 0, cb,
			 cb_arg);
}

int
nvp_bdev_writev_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
		       const struct iovec *iov, int iovcnt, uint64_t offset_blocks,
		       uint64_t num_blocks, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	return vector_io(desc, ch, NVP_BDEV_IO_WRITE, iov, iovcnt, offset_blocks, num_blocks, flags,
			 cb, cb_arg);
}

int
nvp_bdev_write_zeroes_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
			     uint64_t offset_blocks, uint64_t num_blocks, uint32_t flags,
			     nvp_bdev_io_cb cb, void *cb_arg)
{
	return nodata_io(desc, ch, NVP_BDEV_IO_WRITE_ZEROES, offset_blocks, num_blocks, flags, cb,
			 cb_arg);
}

int
nvp_bdev_unmap_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
		      uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb, void *cb_arg)
{
	return nodata_io(desc, ch, NVP_BDEV_IO_UNMAP, offset_blocks, num_blocks, 0, cb, cb_arg);
}

int
nvp_bdev_flush_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
		      uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb, void *cb_arg)
{
	return nodata_io(desc, ch, NVP_BDEV_IO_FLUSH, offset_blocks, num_blocks, 0, cb, cb_arg);
}

/* The byte forms: offsets and lengths in bytes, multiples of the block size. */
#define BYTES_TO_BLOCKS(desc, offset, nbytes)                          \
	uint64_t ob_, nb_;                                             \
	int rc_;                                                       \
	if ((desc) == NULL) {                                          \
		return -EINVAL;                                        \
	}                                                              \
	rc_ = bytes_to_blocks((desc), (offset), (nbytes), &ob_, &nb_); \
	if (rc_ != 0) {                                                \
		return rc_;                                            \
	}

int
nvp_bdev_read(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf, uint64_t offset,
	      uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_read_blocks(desc, ch, buf, ob_, nb_, cb, cb_arg);
}

int
nvp_bdev_readv(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, const struct iovec *iov,
	       int iovcnt, uint64_t offset, uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_readv_blocks(desc, ch, iov, iovcnt, ob_, nb_, cb, cb_arg);
}

int
nvp_bdev_write(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf, uint64_t offset,
	       uint64_t nbytes, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_write_blocks(desc, ch, buf, ob_, nb_, flags, cb, cb_arg);
}

int
nvp_bdev_writev(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, const struct iovec *iov,
		int iovcnt, uint64_t offset, uint64_t nbytes, uint32_t flags, nvp_bdev_io_cb cb,
		void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_writev_blocks(desc, ch, iov, iovcnt, ob_, nb_, flags, cb, cb_arg);
}

int
nvp_bdev_write_zeroes(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
		      uint64_t nbytes, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_write_zeroes_blocks(desc, ch, ob_, nb_, flags, cb, cb_arg);
}

int
nvp_bdev_unmap(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
	       uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_unmap_blocks(desc, ch, ob_, nb_, cb, cb_arg);
}

int
nvp_bdev_flush(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
	       uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_flush_blocks(desc, ch, ob_, nb_, cb, cb_arg);
}

int
nvp_bdev_compare(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		 uint64_t offset, uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg)
{
	BYTES_TO_BLOCKS(desc, offset, nbytes);
	return nvp_bdev_compare_blocks(desc, ch, buf, ob_, nb_, cb, cb_arg);
}

/* ---- completion ---- */

/* Accounting of a finished user I/O. */
static inline __attribute__((always_inline)) void
io_account(struct nvp_bdev_channel *ch, const struct nvp_bdev_io *io, bool err)
{
	struct ch_op_stats *op = &ch->op[io->type];
	bool timed = (ch->mode & CH_MODE_ACCT) != 0 && io->submit_tick != 0;
	uint64_t now = timed ? nvp_env_get_ticks() : 0;

	ch_stats_begin(ch);
	op->ios++;
	op->bytes += io->num_blocks * ch->bdev->block_size;
	op->errors += err;
	if (--op->inflight == 0 && op->busy_start != 0 && timed) {
		op->busy_ticks += now - op->busy_start;
	}
	ch_stats_end(ch);
	if (timed) {
		/* Without stages the queued time is 0 by construction: not recorded here,
		 * nvp_bdev_get_stats() adds those zeroes (device count - queued count). */
		if (nvp_unlikely(io->internal.dev_tick != io->submit_tick)) {
			nvp_histogram_record(&ch->hist[io->type * 2],
					     io->internal.dev_tick - io->submit_tick);
		}
		nvp_histogram_record(&ch->hist[io->type * 2 + 1], now - io->internal.dev_tick);
	}
}

/* A user I/O is done: account, free it, then call back (the callback may reuse it). */
static inline __attribute__((always_inline)) void
io_finish(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	nvp_bdev_io_cb cb = io->internal.cb;
	void *cb_arg = io->internal.cb_arg;
	struct nvme_cpl copy;

	io_account(ch, io, nvme_cpl_is_error(cpl));
	if (cpl == &io->internal.cpl) {
		copy = *cpl;
		cpl = &copy;
	}
	ch->outstanding--;
	ch->completed++;
	bdev_io_release(ch, io);
	cb(cb_arg, cpl);
	if (nvp_unlikely(ch->wait_head != NULL)) {
		bdev_run_io_waiters(ch);
	}
}

static inline __attribute__((always_inline)) void
io_complete(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	/* a split parent never went down the pipeline: its children did */
	if (nvp_unlikely((ch->mode & CH_MODE_SLOW) != 0) && io->internal.state != IO_STATE_SPLIT) {
		pipeline_complete(ch, io);
	}
	if (nvp_unlikely(io->internal.parent != NULL)) {
		child_done(ch, io, cpl);
		return;
	}
	io_finish(ch, io, cpl);
}

/* The same, out of line: for split parents and deferred completions. */
static void
io_complete_slow(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	io_complete(ch, io, cpl);
}

void
nvp_bdev_io_complete(struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	struct nvp_bdev_channel *ch = io->ch;

	if (nvp_unlikely(ch->in_submit)) {
		io->internal.cpl = *cpl;
		io_list_append(&ch->done, io);
		ch->pending_work = true;
		return;
	}
	io_complete(ch, io, cpl);
}

void
nvp_bdev_io_complete_status(struct nvp_bdev_io *io, uint8_t sct, uint8_t sc)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sct = sct;
	cpl.status.sc = sc;
	nvp_bdev_io_complete(io, &cpl);
}

/* ---- the slow part of polling ---- */

static void
poll_retry(struct nvp_bdev_channel *ch)
{
	uint32_t n = ch->retry.count;
	struct nvp_bdev_io *io;

	while (n-- > 0 && (io = io_list_pop(&ch->retry)) != NULL) {
		module_submit(ch, io);
		if (ch->retry.tail == io) {
			break; /* still full: the rest waits for the next poll */
		}
	}
}

/*
 * Ask again for every deferred I/O, oldest first, and send those admitted now. The whole
 * list is walked, not just its head: the stage may hold one class (background writes)
 * while letting another (sync writes) go. The admitted ones are unlinked first and sent
 * after the walk, so that a completion inside a send cannot change the list under it.
 */
static void
poll_deferred(struct nvp_bdev_channel *ch, uint64_t now)
{
	struct io_list go = { 0 };
	struct nvp_bdev_io *io, *prev = NULL, *next;

	for (io = ch->deferred.head; io != NULL; io = next) {
		next = io->internal.next;
		if (ch->admit_ops->admit(ch->admit_ch, io, now) == NVP_BDEV_ADMIT_DEFER) {
			prev = io;
			continue;
		}
		if (prev != NULL) {
			prev->internal.next = next;
		} else {
			ch->deferred.head = next;
		}
		if (ch->deferred.tail == io) {
			ch->deferred.tail = prev;
		}
		ch->deferred.count--;
		io_list_append(&go, io);
	}
	while ((io = io_list_pop(&go)) != NULL) {
		sched_send(ch, io, now);
	}
}

/* Inline completions, module retries, deferred I/O, scheduler work. */
int
bdev_channel_poll_slow(struct nvp_bdev_channel *ch)
{
	const struct nvp_bdev_sched_ops *sched = ch->sched_ops;
	struct io_list done = ch->done;
	struct nvp_bdev_io *io;
	uint64_t now = nvp_env_get_ticks(), next = 0;
	bool sched_work = false;

	ch->pending_work = false;
	memset(&ch->done, 0, sizeof(ch->done));
	while ((io = io_list_pop(&done)) != NULL) {
		io_complete_slow(ch, io, &io->internal.cpl);
	}
	if (ch->retry.count != 0) {
		poll_retry(ch);
	}
	if (ch->deferred.count != 0) {
		poll_deferred(ch, now);
	}
	if (sched->has_work != NULL && sched->has_work(ch->sched_ch, &next)) {
		if (next <= now) {
			sched_dispatch(ch, now);
		}
		sched_work = sched->has_work(ch->sched_ch, &next);
	}
	if (ch->done.count != 0 || ch->retry.count != 0 || ch->deferred.count != 0 || sched_work) {
		ch->pending_work = true;
	}
	return 0;
}
