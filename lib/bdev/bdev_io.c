/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O path: the read/write/... calls, their validation (bad requests fail at the
 * call and nothing is sent), splitting above the module's max transfer or across its
 * optimal boundary (children from the same pool, recycled as they complete; the parent
 * completes once with the first error), the pipeline admission -> scheduling -> module
 * and back, and accounting.
 *
 * Fast path: with both stages "none", no poll hook and a bdev that never splits, an I/O
 * is pool pop, the fields the module reads, module submit; its completion is the
 * counters, one histogram record (accounting on), pool push, callback. Time comes from
 * the channel's clock (ch_now(): one read per poll, shared by the poll's completions and
 * what their callbacks submit), never from a clock read per I/O inside a poll.
 * Everything else — stages, the hook, splitting, deferred and retried I/O, failed
 * submissions, completions made inside module submit — is one predicted branch away, in functions kept out of
 * line (io_submit_slow, complete_slow) so that the fast ones stay small.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bdev/bdev_internal.h"

static void complete_slow(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io,
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
	if (io_type_writes(type) && !desc->write) {
		NVP_ERRLOG("%s: %s through a read-only descriptor; open it with write=true",
			   bdev->name, nvp_bdev_io_type_name(type));
		return -EBADF;
	}
	if (!bdev->supported[type]) {
		NVP_ERRLOG("%s: %s not supported by module %s", bdev->name,
			   nvp_bdev_io_type_name(type), bdev->module_name);
		return -ENOTSUP;
	}
	if (num == 0 || off >= nb || num > nb - off) {
		NVP_ERRLOG("%s: %s of %" PRIu64 " block(s) at block %" PRIu64
			   ": outside the bdev's %" PRIu64 " blocks",
			   bdev->name, nvp_bdev_io_type_name(type), num, off, nb);
		return -EINVAL;
	}
	return 0;
}

/* The channel's thread calls (always true in release builds: see bdev_check_owner()). */
static inline bool
owner_ok(const struct nvp_bdev_channel *ch)
{
#if NVP_CONFIG_DEBUG
	return pthread_equal(ch->owner, pthread_self());
#else
	(void)ch;
	return true;
#endif
}

/*
 * The quick check of a request: one combined test on the fast path. num - 1 wraps for
 * num == 0, so one compare covers empty and too long; ch->allowed holds the types the
 * channel may send now (supported, writable descriptor, bdev not removed).
 */
static inline __attribute__((always_inline)) bool
io_ok(const struct nvp_bdev_desc *desc, const struct nvp_bdev_channel *ch, uint8_t type,
      uint64_t off, uint64_t num)
{
	uint64_t nb;

	if (nvp_unlikely(ch == NULL)) {
		return false;
	}
	nb = __atomic_load_n(&ch->num_blocks, __ATOMIC_RELAXED);
	return owner_ok(ch) && ch->desc == desc && off < nb && num - 1 < nb - off &&
	       (__atomic_load_n(&ch->allowed, __ATOMIC_RELAXED) & (1u << type)) != 0;
}

/*
 * Why io_ok() said no (@args_bad: a NULL buffer or callback, or reserved flag bits): the
 * cold path of the I/O calls, out of line. \return a negative errno, never 0.
 */
static __attribute__((noinline, cold)) int
io_refused(const struct nvp_bdev_desc *desc, const struct nvp_bdev_channel *ch, bool args_bad,
	   uint64_t off, uint64_t num, uint8_t type)
{
	int rc;

	if (args_bad || ch == NULL) {
		NVP_ERRLOG("bdev I/O: NULL buffer, callback, descriptor or channel, or reserved "
			   "flag bits (hint 5-7)");
		return -EINVAL;
	}
	rc = bdev_check_owner(ch->owner, "bdev channel");
	if (rc == 0) {
		rc = io_check_slow(desc, ch, type, off, num);
	}
	if (rc == 0) {
		/* the quick check and this one disagree: a bdev changing under the call */
		NVP_ERRLOG("%s: %s refused while the bdev changed; retry", ch->bdev->name,
			   nvp_bdev_io_type_name(type));
		rc = -EAGAIN;
	}
	return rc;
}

/* Take a bdev_io from the pool (NULL: empty) and set what every I/O needs: the caller
 * sets the data. */
static inline __attribute__((always_inline)) struct nvp_bdev_io *
io_take(struct nvp_bdev_channel *ch, uint8_t type, uint64_t off, uint64_t num, uint32_t flags)
{
	struct nvp_bdev_io *io = ch->free_ios;

	if (nvp_unlikely(io == NULL)) {
		return NULL;
	}
	ch->free_ios = io->internal.next;
	io->type = type;
	io->flags = flags;
	io->offset_blocks = off;
	io->num_blocks = num;
	return io;
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

/* The iovecs of a request of @num blocks: before a bdev_io is taken, so that a bad vector
 * is -EINVAL even when the pool is empty. */
static int
iov_check(const struct nvp_bdev *bdev, uint64_t num, const struct iovec *iov, int iovcnt)
{
	uint64_t total = 0;
	int i;

	if (iov == NULL || iovcnt <= 0) {
		NVP_ERRLOG("%s: no iovec given", bdev->name);
		return -EINVAL;
	}
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_base == NULL && iov[i].iov_len != 0) {
			NVP_ERRLOG("%s: iovec %d has a NULL base", bdev->name, i);
			return -EINVAL;
		}
		if (__builtin_add_overflow(total, iov[i].iov_len, &total)) {
			NVP_ERRLOG("%s: iovec lengths add up past 2^64 bytes", bdev->name);
			return -EINVAL;
		}
	}
	if (total != num * bdev->block_size) {
		NVP_ERRLOG("%s: iovecs hold %" PRIu64 " bytes, the request is %" PRIu64, bdev->name,
			   total, num * bdev->block_size);
		return -EINVAL;
	}
	return 0;
}

/* ---- the pipeline ---- */

static __attribute__((noinline)) void
module_submit_failed(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, int rc)
{
	if (rc >= 0) {
		NVP_ERRLOG("%s: module %s reported a failed submission without an errno (%d)",
			   ch->bdev->name, ch->bdev->module_name, rc);
		rc = -EIO;
	}
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

void
nvp_bdev_io_submit_failed(struct nvp_bdev_io *io, int rc)
{
	module_submit_failed(io->ch, io, rc);
}

/*
 * A call into the module's submit marks the channel (ch->in_submit) for its length: a
 * completion arriving meanwhile, single or list, is kept on the done list for the next
 * poll (complete_slow()), so that no callback runs inside the I/O call. Only the fast
 * path (io_submit()) calls without the mark, and only a module that says it never
 * completes there (submit_never_completes).
 */
static inline void
module_submit(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	ch->in_submit = true;
	(void)ch->mod_submit(ch->module_ch, io);
	ch->in_submit = false;
}

static inline __attribute__((always_inline)) void
to_module(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now)
{
	const struct nvp_bdev_poll_hook *hook = ch->hook;

	io->internal.dev_tick = now;
	if (hook != NULL && hook->io_sent != NULL) {
		hook->io_sent(hook->ctx, io, now);
	}
	module_submit(ch, io);
}

/*
 * Send what the scheduler gives. It is asked only while it holds I/O of this channel
 * (sched_held: taken by submit, not yet returned by dispatch), so a scheduler that
 * passes everything straight on costs one dispatch call per I/O and no has_work call.
 * If it keeps some back, the channel polls it again (poll_sched).
 */
static void
sched_dispatch(struct nvp_bdev_channel *ch, uint64_t now)
{
	struct nvp_bdev_io *(*dispatch)(void *, uint64_t) = ch->sched_ops->dispatch;
	struct nvp_bdev_io *io;

	while ((io = dispatch(ch->sched_ch, now)) != NULL) {
		ch->sched_held--;
		to_module(ch, io, now);
		if (ch->sched_held == 0) {
			return;
		}
	}
	ch->pending_work = true;
}

/*
 * Into the scheduler, and out to the module what it lets go. While it holds nothing of
 * this channel, submit_direct() (when it has one) does both in one call without
 * queueing: the common case of a scheduler that is not holding anything back.
 */
static inline void
sched_send(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now)
{
	const struct nvp_bdev_sched_ops *ops = ch->sched_ops;

	if (ops->submit == NULL) {
		to_module(ch, io, now);
		return;
	}
	if (ch->sched_held == 0 && ops->submit_direct != NULL) {
		if (nvp_likely(ops->submit_direct(ch->sched_ch, io, now))) {
			to_module(ch, io, now);
			return;
		}
		ch->sched_held = 1; /* it took it: nothing else of ours to send before it */
		ch->pending_work = true;
		return;
	}
	ops->submit(ch->sched_ch, io, now);
	ch->sched_held++;
	sched_dispatch(ch, now);
}

/* Stages or a hook: admission, then the scheduler, then the module. */
static inline void
pipeline_send(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now)
{
	/* set here, for the stages and the hook (its only readers), not by every I/O call:
	 * 2 instructions fewer per I/O without them (bench/bdev_overhead) */
	io->tenant = ch->desc->tenant;
	io->internal.state |= IO_STATE_STAGED;
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
static inline void
pipeline_complete(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	const struct nvp_bdev_poll_hook *hook = ch->hook;
	uint64_t now = ch_now(ch);
	uint64_t dev = now - io->internal.dev_tick;

	io->internal.state &= (uint8_t)~IO_STATE_STAGED;
	if (ch->sched_ops->complete != NULL) {
		ch->sched_ops->complete(ch->sched_ch, io, dev, now);
	}
	if (ch->admit_ops->complete != NULL) {
		ch->admit_ops->complete(ch->admit_ch, io, now - io->submit_tick, now);
	}
	if (hook != NULL && hook->io_done != NULL) {
		hook->io_done(hook->ctx, io, dev, now);
	}
	if (ch->sched_held != 0) {
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
		pipeline_send(ch, io, io->submit_tick != 0 ? io->submit_tick : ch_now(ch));
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
	child->internal.state = IO_STATE_CHILD;
	child->submit_tick = parent->submit_tick != 0 ? ch_now(ch) : 0;
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
	parent->internal.cpl.status_raw = 0;
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
		child->tenant = parent->tenant;
		if (!split_issue(ch, parent, child)) {
			child->internal.state = 0;
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
	child->internal.state = 0;
	bdev_io_release(ch, child);
	if (parent->internal.split_outstanding == 0) {
		complete_slow(ch, parent, &parent->internal.cpl);
	} else if (ch->wait_head != NULL) {
		bdev_run_io_waiters(ch);
	}
}

/* ---- submission ---- */

/* Accepted: counted in flight (and the start of a busy period of its type). */
static inline __attribute__((always_inline)) void
io_accept(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint8_t type, uint64_t now)
{
	struct ch_op_stats *op = &ch->op[type];

	io->submit_tick = now;
	if (op->inflight == 0) {
		op->busy_start = now;
	}
	op->inflight++; /* an add to memory: no copy of the old count kept for the test */
}

/*
 * Whether every piece a split can make of @io's vector fits a child's
 * NVP_BDEV_IO_NUM_IOVS segments. Pieces start at block boundaries, so it fails exactly
 * when one block is spread over more segments than that.
 */
static bool
split_iovs_fit(const struct nvp_bdev_io *io, uint32_t bs)
{
	uint64_t in_blk = 0; /* bytes of the current block the segments so far cover */
	uint32_t segs = 0;   /* segments the current block is spread over */
	int i;

	for (i = 0; i < io->iovcnt; i++) {
		uint64_t len = io->iovs[i].iov_len;

		if (len == 0) {
			continue;
		}
		if (++segs > NVP_BDEV_IO_NUM_IOVS) {
			return false;
		}
		if (in_blk + len >= bs) {
			in_blk = (in_blk + len) % bs;
			segs = in_blk != 0; /* this segment goes on into the next block */
		} else {
			in_blk += len;
		}
	}
	return true;
}

/* A request to split: its children go down the pipeline, not itself. */
static __attribute__((noinline)) int
io_submit_split(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	if (io->iovcnt > NVP_BDEV_IO_NUM_IOVS && !split_iovs_fit(io, ch->block_size)) {
		NVP_ERRLOG("%s: a block of the request spans more than %u iovecs, and the request "
			   "must be split (max transfer or boundary); nothing sent",
			   ch->bdev->name, NVP_BDEV_IO_NUM_IOVS);
		bdev_io_release(ch, io);
		return -EINVAL;
	}
	if (nvp_unlikely(ch->free_ios == NULL)) {
		bdev_io_release(ch, io);
		return -ENOMEM;
	}
	io_accept(ch, io, io->type,
		  (ch->mode & (CH_MODE_ACCT | CH_MODE_SLOW)) != 0 ? ch_now(ch) : 0);
	split_start(ch, io);
	return 0;
}

/*
 * Splitting, stages or a hook: everything but the straight path to the module. A staged
 * request's time is the one its accounting took (stages always want one).
 */
static __attribute__((noinline)) int
io_submit_slow(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	uint32_t mode = ch->mode;
	uint64_t now;

	if (needs_split(ch->bdev, io)) {
		return io_submit_split(ch, io);
	}
	now = (mode & (CH_MODE_ACCT | CH_MODE_SLOW)) != 0 ? ch_now(ch) : 0;
	io_accept(ch, io, io->type, now);
	if (nvp_likely((mode & CH_MODE_SLOW) != 0)) {
		pipeline_send(ch, io, now);
	} else {
		io->internal.dev_tick = now;
		module_submit(ch, io);
	}
	return 0;
}

/*
 * Straight to the module: no stage, no hook, no split, a module that never completes
 * inside its submit; timed if accounting is on (the poll's clock inside a poll, else the
 * TSC read inline; a clock behind a call goes to io_submit_slow). The module's submit is
 * the last thing, its 0 the call's result.
 */
static inline __attribute__((always_inline)) int
io_submit(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint8_t type, nvp_bdev_io_cb cb,
	  void *cb_arg)
{
	uint64_t now = 0;

	io->internal.cb = cb;
	io->internal.cb_arg = cb_arg;
	/* 0 while the mode has more than accounting (counts are at least 1: io_ok()) */
	if (nvp_unlikely(io->num_blocks > ch->max_fast_blocks)) {
		return io_submit_slow(ch, io);
	}
	if (ch->mode != 0) {
		now = ch->tick;
		if (nvp_unlikely(now <= CH_TICK_LAZY)) {
			if (nvp_unlikely(!ch->ticks_tsc)) {
				return io_submit_slow(ch, io);
			}
			now = nvp_tsc_read();
			if (ch->tick == CH_TICK_LAZY) {
				ch->tick = now;
			}
		}
	}
	io_accept(ch, io, type, now);
	/* unmarked: the module never completes inside its submit (else CH_MODE_MARK sends the
	 * I/O to io_submit_slow()): 2 instructions fewer per I/O (bench/bdev_overhead) */
	return ch->mod_submit(ch->module_ch, io);
}

/* Reserved flag bits, or a lifetime hint past the last one (5..7 fit the bits). */
static inline bool
flags_bad(uint32_t flags)
{
	return (flags & ~NVP_BDEV_WRITE_FLAGS_VALID) != 0 ||
	       (flags & NVP_BDEV_WRITE_HINT_MASK) >
		       ((uint32_t)NVP_NVME_WRITE_HINT_EXTREME << NVP_BDEV_WRITE_HINT_SHIFT);
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

	/* a NULL desc fails the channel's descriptor check */
	if (nvp_unlikely(buf == NULL || cb == NULL || flags_bad(flags) ||
			 !io_ok(desc, ch, type, off, num))) {
		return io_refused(desc, ch, buf == NULL || cb == NULL || flags_bad(flags), off, num,
				  type);
	}
	io = io_take(ch, type, off, num, write_flags(desc, type, flags));
	if (nvp_unlikely(io == NULL)) {
		return -ENOMEM;
	}
	io->internal.iov[0].iov_base = buf;
	io->internal.iov[0].iov_len = num * ch->block_size;
	io->iovs = io->internal.iov;
	io->iovcnt = 1;
	return io_submit(ch, io, type, cb, cb_arg);
}

static int
vector_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type,
	  const struct iovec *iov, int iovcnt, uint64_t off, uint64_t num, uint32_t flags,
	  nvp_bdev_io_cb cb, void *cb_arg)
{
	struct nvp_bdev_io *io;
	int rc;

	if (nvp_unlikely(cb == NULL || flags_bad(flags) || !io_ok(desc, ch, type, off, num))) {
		return io_refused(desc, ch, cb == NULL || flags_bad(flags), off, num, type);
	}
	rc = iov_check(ch->bdev, num, iov, iovcnt);
	if (rc != 0) {
		return rc;
	}
	io = io_take(ch, type, off, num, write_flags(desc, type, flags));
	if (nvp_unlikely(io == NULL)) {
		return -ENOMEM;
	}
	io->iovs = (struct iovec *)iov;
	io->iovcnt = iovcnt;
	return io_submit(ch, io, type, cb, cb_arg);
}

static int
nodata_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t type, uint64_t off,
	  uint64_t num, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg)
{
	struct nvp_bdev_io *io;

	if (nvp_unlikely(cb == NULL || flags_bad(flags) || !io_ok(desc, ch, type, off, num))) {
		return io_refused(desc, ch, cb == NULL || flags_bad(flags), off, num, type);
	}
	io = io_take(ch, type, off, num, flags);
	if (nvp_unlikely(io == NULL)) {
		return -ENOMEM;
	}
	io->iovs = NULL;
	io->iovcnt = 0;
	return io_submit(ch, io, type, cb, cb_arg);
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

/* ---- completion ----
 *
 * Which function completes an I/O, and when:
 *  - nvp_bdev_io_complete(): a module completes one I/O. One that went straight to the
 *    module finishes there (io_finish()); any other goes to complete_slow().
 *  - nvp_bdev_io_complete_list[_at]() (complete_list()): a module's poll hands over a
 *    list. A list of one straight I/O finishes there; a longer one goes to
 *    list_complete(), one that needs more than accounting to list_complete_each().
 *  - complete_slow(): completed inside module submit (kept for the next poll), staged,
 *    a split child or parent, io_wait entries waiting, or a clock read through a call;
 *    also what the poll finds on the channel's done list (bdev_channel_poll_slow()).
 */

/* Accounting of a finished user I/O, sent to the module at @dev_tick; @now is 0 when it
 * is not timed (accounting off, or off when it was submitted). */
static inline __attribute__((always_inline)) void
io_account(struct nvp_bdev_channel *ch, const struct nvp_bdev_io *io, bool err, uint64_t dev_tick,
	   uint64_t now)
{
	struct ch_op_stats *op = &ch->op[(size_t)io->type];
	uint64_t start = io->submit_tick;

	op_stats_begin(op);
	op->blocks += io->num_blocks;
	if (nvp_unlikely(err)) {
		op->errors++;
	}
	op->ios++;
	if (--op->inflight == 0 && now != 0) { /* the period has a start: busy_join() */
		op->busy_ticks += now - op->busy_start;
	}
	op_stats_end(op);
	if (now != 0) {
		/* Without stages the queued time is 0 by construction: not recorded here,
		 * nvp_bdev_get_stats() adds those zeroes (device count - queued count). */
		if (nvp_unlikely(dev_tick != start)) {
			ch_hist_record(&op->hist[0], dev_tick - start);
		}
		ch_hist_record(&op->hist[1], now - dev_tick);
	}
}

/*
 * The end of every user I/O: account it (@err: @cpl is an error), free it, then call
 * back (the callback may reuse the bdev_io, so @cpl must not point into it). @waiters:
 * io_wait entries run between the free and the callback, so the bdev_io just freed goes
 * to the oldest waiter first, not to what the callback submits (refused then, it waits
 * behind them), as in SPDK, where freeing a bdev_io runs them; else a callback that
 * submits again would take every bdev_io freed, and the waiters starve.
 */
static inline __attribute__((always_inline)) void
io_finish(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl, bool err,
	  uint64_t dev_tick, uint64_t now, bool waiters)
{
	nvp_bdev_io_cb cb;
	void *cb_arg;

	io_account(ch, io, err, dev_tick, now);
	ch->completed++;
	cb = io->internal.cb;
	cb_arg = io->internal.cb_arg;
	bdev_io_release(ch, io);
	if (waiters) {
		bdev_run_io_waiters(ch);
	}
	cb(cb_arg, cpl);
}

/* Everything but the fast path (see the list at the top of this section). */
static __attribute__((noinline)) void
complete_slow(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	struct nvme_cpl copy;
	uint8_t state = io->internal.state;
	uint64_t dev = io->internal.dev_tick;
	uint64_t now;

	if (ch->in_submit) {
		/* inside the module's submit: its caller is on the stack */
		io->internal.cpl = *cpl;
		io_list_append(&ch->done, io);
		ch->pending_work = true;
		return;
	}
	copy = *cpl; /* may be io->internal.cpl, which the callback may reuse */
	if ((state & IO_STATE_STAGED) != 0) {
		pipeline_complete(ch, io);
	}
	if ((state & IO_STATE_CHILD) != 0) {
		child_done(ch, io, &copy);
		return;
	}
	/* a straight I/O (also one completed from the done list) was sent when submitted;
	 * a parent none of whose children was sent, too */
	if ((state & (IO_STATE_STAGED | IO_STATE_SPLIT)) == 0 || dev == 0) {
		dev = io->submit_tick;
	}
	now = io->submit_tick != 0 && (ch->mode & CH_MODE_ACCT) != 0 ? ch_now(ch) : 0;
	io->internal.state = 0;
	io_finish(ch, io, &copy, nvme_cpl_is_error(&copy), dev, now, ch->wait_head != NULL);
	if (ch->wait_head != NULL) {
		bdev_run_io_waiters(ch);
	}
}

void
nvp_bdev_io_complete(struct nvp_bdev_io *io, const struct nvme_cpl *cpl)
{
	struct nvp_bdev_channel *ch = io->ch;
	uint64_t now = 0;

	if (nvp_unlikely((ch->cpl_slow | io->internal.state) != 0)) {
		complete_slow(ch, io, cpl);
		return;
	}
	/* The fast path: it went straight to the module, so its device time starts at its
	 * submission (timed: one sent untimed is IO_STATE_UNTIMED); the TSC is read inline,
	 * another clock through complete_slow(). */
	if ((ch->mode & CH_MODE_ACCT) != 0) {
		now = ch->tick;
		if (nvp_unlikely(now <= CH_TICK_LAZY)) {
			if (nvp_unlikely(!ch->ticks_tsc)) {
				complete_slow(ch, io, cpl);
				return;
			}
			now = nvp_tsc_read();
			if (ch->tick == CH_TICK_LAZY) {
				ch->tick = now;
			}
		}
	}
	io_finish(ch, io, cpl, nvme_cpl_is_error(cpl), io->submit_tick, now, false);
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

/* ---- completion of a list ---- */

/*
 * The list paths run inside a poll: they set the channel's clock (ch->tick) to the
 * list's time, for what the callbacks submit, and the poll puts it back afterwards.
 */

/*
 * A list one I/O at a time from @io: those before @unaccounted were accounted by
 * list_account() and only get freed (the waiters run, as in io_finish()) and their
 * callbacks; from @unaccounted on, each is completed by nvp_bdev_io_complete(). @at: the
 * module's time for the list (0: a clock read when one is needed).
 */
static __attribute__((noinline)) void
list_complete_each(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io,
		   struct nvp_bdev_io *unaccounted, const struct nvme_cpl *cpl, uint64_t at)
{
	struct nvp_bdev_io *next;
	nvp_bdev_io_cb cb;
	void *cb_arg;

	if (ch->in_submit) {
		/* inside the module's submit: each to the done list, the clock untouched */
	} else if (at != 0 && ch->tick <= CH_TICK_LAZY) {
		ch->tick = at;
	} else if (ch->tick == CH_TICK_NONE) {
		ch->tick = CH_TICK_LAZY;
	}
	for (; io != unaccounted; io = next) {
		next = io->internal.next; /* before: the completion may reuse the link */
		cb = io->internal.cb;
		cb_arg = io->internal.cb_arg;
		bdev_io_release(ch, io);
		ch->completed++;
		if (nvp_unlikely(ch->wait_head != NULL)) {
			bdev_run_io_waiters(ch);
		}
		cb(cb_arg, cpl);
	}
	for (; io != NULL; io = next) {
		next = io->internal.next;
		nvp_bdev_io_complete(io, cpl);
	}
}

/*
 * @k I/Os of a list with the same device time @v: one bucket update for all of them.
 * The channel's clock is read once per poll, so what one poll's callbacks submit carries
 * one submit tick, and the next poll finds it done at one time: a list is mostly such
 * runs (one per poll that submitted its I/Os).
 */
static inline __attribute__((always_inline)) void
list_hist_run(uint64_t *buckets, uint64_t v, uint64_t k, uint64_t *sum, uint64_t *min,
	      uint64_t *max)
{
	buckets[nvp_histogram_bucket_index64(v)] += k;
	*sum += k * v; /* 64-bit: see list_account() */
	*min = v < *min ? v : *min;
	*max = v > *max ? v : *max;
}

/*
 * Account the successful I/Os from @io on, up to the first not on the fast path (staged,
 * split: its completion goes back up the pipeline; sent untimed: IO_STATE_UNTIMED, so
 * that with @timed every I/O here has a submit tick); \return that one, or NULL. All before any callback runs, so the
 * stats are what completing them one by one would leave (the callbacks' submissions are
 * stamped with the same @now). Same-type runs are added at once: counts and the device
 * time's sum, min and max kept in registers, and the histogram's bucket counted once per
 * run of I/Os with one submit tick (list_hist_run(): 13 instructions fewer per I/O at
 * QD32). The run's sum is 64-bit: a run is at most one pool, BDEV_IO_POOL_MAX = 2^16
 * I/Os, so it would need a mean device time of 2^48 ticks, over 15 hours at 5 GHz,
 * every I/O of it; the histogram's own sum stays 128-bit. In flight reaches 0 (a busy
 * period ends) only at a run's last I/O, as one by one. A reader of the statistics sees a
 * run's counters all or none.
 */
_Static_assert(BDEV_IO_POOL_MAX <= 65536u, "list_account(): a run's 64-bit sum");

static inline __attribute__((always_inline)) struct nvp_bdev_io *
list_account(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, uint64_t now, bool timed)
{
	struct ch_op_stats *op;
	struct nvp_histogram *h;
	uint64_t n, blocks, sum, min, max, tick, run_from;
	uint8_t type;

	for (;;) {
		type = io->type;
		op = &ch->op[(size_t)type];
		h = &op->hist[1];
		n = blocks = sum = max = run_from = 0;
		min = UINT64_MAX;
		tick = io->submit_tick; /* the current run's */
		for (; io != NULL; io = io->internal.next) {
			if (nvp_unlikely(io->internal.state != 0 || io->type != type)) {
				break;
			}
			if (timed && io->submit_tick != tick) {
				list_hist_run(h->buckets, now - tick, n - run_from, &sum, &min,
					      &max);
				tick = io->submit_tick;
				run_from = n;
			}
			n++;
			blocks += io->num_blocks;
		}
		if (n != 0) {
			op_stats_begin(op);
			op->blocks += blocks;
			op->ios += n;
			op->inflight -= n;
			if (op->inflight == 0 && timed) {
				op->busy_ticks += now - op->busy_start;
			}
			op_stats_end(op);
		}
		if (n != 0 && timed) {
			list_hist_run(h->buckets, now - tick, n - run_from, &sum, &min, &max);
			h->sum_hi += __builtin_add_overflow(h->sum_lo, sum, &h->sum_lo); /* carry */
			h->min = min < h->min ? min : h->min;
			h->max = max > h->max ? max : h->max;
		}
		if (io == NULL || io->type == type) {
			return io; /* the end, or one not on the fast path */
		}
	}
}

/* A list of more than one I/O, or of one not on the fast path, finished at @at (0: read
 * the clock): account all, then the callbacks in order; with an error status, one by one
 * (each error counted). */
static __attribute__((noinline)) void
list_complete(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io, const struct nvme_cpl *cpl,
	      uint64_t at)
{
	struct nvp_bdev_io *next;
	nvp_bdev_io_cb cb;
	void *cb_arg;
	uint64_t now;

	if (nvp_unlikely(nvme_cpl_is_error(cpl))) {
		list_complete_each(ch, io, io, cpl, at);
		return;
	}
	if ((ch->mode & CH_MODE_ACCT) != 0) {
		now = at != 0 ? at : ch_now_read(ch, CH_TICK_NONE);
		ch->tick = now;
		next = list_account(ch, io, now, true);
	} else {
		if (ch->tick == CH_TICK_NONE) {
			ch->tick = CH_TICK_LAZY; /* stages and the hook may want a time */
		}
		next = list_account(ch, io, 0, false);
	}
	if (nvp_unlikely(next != NULL)) {
		list_complete_each(ch, io, next, cpl, 0);
		return;
	}
	for (;;) {
		next = io->internal.next;
		cb = io->internal.cb;
		cb_arg = io->internal.cb_arg;
		bdev_io_release(ch, io);
		ch->completed++;
		if (next == NULL) {
			cb(cb_arg, cpl);
			return;
		}
		cb(cb_arg, cpl);
		io = next;
		if (nvp_unlikely(ch->wait_head != NULL)) {
			/* a callback queued a waiter: the rest (accounted already) one at a
			 * time, each freed bdev_io to the waiters before its callback */
			list_complete_each(ch, io, NULL, cpl, 0);
			return;
		}
	}
}

/*
 * A list of one straight I/O (depth 1) finishes here as nvp_bdev_io_complete()'s fast
 * path does, with the module's time (@at) or the TSC read inline. Longer lists (an error
 * status among them: list_complete() tests it once per list), an error status, io_wait
 * entries or a clock behind a call go to the functions above. The status is tested
 * apart, after the list's length: a branch, not a bit or-ed into the first test (2
 * instructions fewer per I/O at QD1, bench/bdev_overhead).
 */
static inline __attribute__((always_inline)) void
complete_list(struct nvp_bdev_io_list *list, const struct nvme_cpl *cpl, uint64_t at)
{
	struct nvp_bdev_io *io = list->head;
	struct nvp_bdev_channel *ch;
	uint64_t now = 0;

	*list->tailp = NULL;
	nvp_bdev_io_list_init(list);
	if (nvp_unlikely(io == NULL)) {
		return;
	}
	ch = io->ch;
	if (nvp_unlikely(ch->cpl_slow != 0)) {
		/* from inside module submit (each goes to the done list), or io_wait entries
		 * to run as each I/O is freed */
		list_complete_each(ch, io, io, cpl, at);
		return;
	}
	if (nvp_unlikely(((uintptr_t)io->internal.next | io->internal.state) != 0)) {
		list_complete(ch, io, cpl, at);
		return;
	}
	if (nvp_unlikely(nvme_cpl_is_error(cpl))) {
		list_complete_each(ch, io, io, cpl, at); /* an error to count */
		return;
	}
	if ((ch->mode & CH_MODE_ACCT) != 0) {
		if (at != 0) {
			now = at;
		} else if (nvp_likely(ch->ticks_tsc)) {
			now = nvp_tsc_read();
		} else {
			list_complete(ch, io, cpl, 0); /* the clock is a call */
			return;
		}
		ch->tick = now;
	}
	io_finish(ch, io, cpl, false, io->submit_tick, now, false); /* timed: see UNTIMED */
}

void
nvp_bdev_io_complete_list(struct nvp_bdev_io_list *list, const struct nvme_cpl *cpl)
{
	complete_list(list, cpl, 0);
}

void
nvp_bdev_io_complete_list_at(struct nvp_bdev_io_list *list, const struct nvme_cpl *cpl,
			     uint64_t now)
{
	complete_list(list, cpl, now);
}

/* ---- polling ----
 * The fast part is here, beside the completion it runs, so that a request's path from the
 * call to its callback stays in this file and the module's; the rest is bdev_channel.c's
 * bdev_channel_poll_full() and bdev_channel_poll_slow() below. */

/*
 * One poll: whatever needs the time during it (accounting, stages, the hook) shares one
 * read of the clock (ch->tick): it starts CH_TICK_LAZY, so that the first use reads it;
 * a module completing by lists sets it to the list's time. A poll that finds nothing
 * reads none. Afterwards the channel reads the clock at each use again. A poll nested in
 * one of its callbacks finds in_fast_poll set and takes bdev_channel_poll_full(), which
 * counts the polls running (poll_depth) and keeps the outer poll's clock; so the fast
 * one keeps its start count in the channel (poll_from), not in a register saved across
 * the module's poll (3 instructions fewer per poll, bench/bdev_overhead QD1), and
 * nvp_bdev_channel_destroy() knows it runs from in_fast_poll. The count is the
 * channel's (user callbacks delivered): a split child is not one.
 */
int
nvp_bdev_channel_poll(struct nvp_bdev_channel *ch)
{
	int rc;

	if (nvp_unlikely(ch == NULL)) {
		return -EINVAL;
	}
	rc = bdev_check_owner(ch->owner, "bdev channel");
	if (rc != 0) {
		return rc;
	}
	if (nvp_unlikely(__atomic_load_n(&ch->attention, __ATOMIC_RELAXED) != 0)) {
		return bdev_channel_poll_full(ch); /* bdev_channel.c */
	}
	ch->poll_from = ch->completed;
	ch->in_fast_poll = true;
	ch->tick = CH_TICK_LAZY;
	ch->mod_poll(ch->module_ch);
	ch->in_fast_poll = false;
	ch->tick = CH_TICK_NONE;
	return (int)(ch->completed - ch->poll_from);
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

/*
 * The scheduler keeps I/O back (tokens, fairness): ask it again once its next_tick has
 * come, and learn the next one only when it still holds some.
 */
static void
poll_sched(struct nvp_bdev_channel *ch, uint64_t now)
{
	uint64_t next = 0;

	if (ch->sched_next > now) {
		return;
	}
	sched_dispatch(ch, now);
	if (ch->sched_held != 0 && ch->sched_ops->has_work != NULL &&
	    ch->sched_ops->has_work(ch->sched_ch, &next)) {
		ch->sched_next = next;
	} else {
		ch->sched_next = 0;
	}
}

/* Inline completions, module retries, deferred I/O, scheduler work. */
int
bdev_channel_poll_slow(struct nvp_bdev_channel *ch)
{
	struct io_list done = ch->done;
	struct nvp_bdev_io *io;
	uint64_t now = ch_now(ch);

	ch->pending_work = false;
	memset(&ch->done, 0, sizeof(ch->done));
	while ((io = io_list_pop(&done)) != NULL) {
		complete_slow(ch, io, &io->internal.cpl);
	}
	if (ch->retry.count != 0) {
		poll_retry(ch);
	}
	if (ch->deferred.count != 0) {
		poll_deferred(ch, now);
	}
	if (ch->sched_held != 0) {
		poll_sched(ch, now);
	}
	if (ch->done.count != 0 || ch->retry.count != 0 || ch->deferred.count != 0 ||
	    ch->sched_held != 0) {
		ch->pending_work = true;
	}
	return 0;
}
