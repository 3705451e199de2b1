/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * Block devices (bdevs) for applications: one interface over an NVMe namespace, a RAM
 * disk and a null device, in SPDK's vocabulary.
 *
 * - A **bdev** is a named block device made by a module (nvme, malloc, null, ...).
 * - A **descriptor** is an open handle on it, read-only or read-write, with an event
 *   callback for removal and resize.
 * - A **channel** is the per-thread I/O context of one descriptor: its pool of bdev_io
 *   objects, the module's per-thread resources (for NVMe a qpair), its accounting. Only
 *   the thread that created a channel may use it (debug builds return -EPERM otherwise).
 * - A **poll group** is a thread's set of channels, polled together with one call. It is
 *   where a thread waits for completions (the hybrid poller plugs in here).
 *
 * Every I/O passes the pipeline admission (writeback throttle) -> scheduling -> module;
 * its completion comes back up through the same stages, then accounting, then the
 * caller's callback. Both stages are "none" (pass-through) unless chosen with
 * nvp_bdev_set_admission() / nvp_bdev_set_scheduler().
 *
 * Errors: calls return 0 or a negative errno. A request accepted (0 returned) completes
 * through its callback exactly once, from nvp_bdev_channel_poll() or
 * nvp_bdev_poll_group_poll() on the channel's thread, never from inside the submit call.
 * The device's status (NVMe status codes; other modules map theirs onto them) reaches
 * the caller only through the completion.
 */
#ifndef NVPOLL_BDEV_H
#define NVPOLL_BDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nvpoll/histogram.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvp_bdev;
struct nvp_bdev_desc;
struct nvp_bdev_channel;
struct nvp_bdev_poll_group;
struct nvp_bdev_io;

#define NVP_BDEV_NAME_MAX 64

/** Operation types, also the index of the per-type statistics. */
enum nvp_bdev_io_type {
	NVP_BDEV_IO_READ = 0,
	NVP_BDEV_IO_WRITE = 1,
	NVP_BDEV_IO_WRITE_ZEROES = 2,
	NVP_BDEV_IO_UNMAP = 3,
	NVP_BDEV_IO_FLUSH = 4,
	NVP_BDEV_IO_COMPARE = 5,
	NVP_BDEV_NUM_IO_TYPES
};

/** "read", "write", "write_zeroes", "unmap", "flush", "compare"; "unknown" otherwise. */
const char *nvp_bdev_io_type_name(enum nvp_bdev_io_type type);

/*
 * Write flags, the @flags word of the write calls (0 = a normal write, no hint).
 * Bits 0-1: the write class, read by the admission stage (writeback throttle): background
 * writes (write-back of cached data) may be deferred, sync writes (someone waits on
 * them) never are. Bits 4-6: the data's expected lifetime, mapped to NVMe streams by
 * modules that can. Bit 8: force unit access. Other bits are reserved (-EINVAL).
 */
#define NVP_BDEV_WRITE_CLASS_MASK 0x3u
#define NVP_BDEV_WRITE_NORMAL 0x0u
#define NVP_BDEV_WRITE_BACKGROUND 0x1u
#define NVP_BDEV_WRITE_SYNC 0x2u
#define NVP_BDEV_WRITE_HINT_SHIFT 4
#define NVP_BDEV_WRITE_HINT_MASK (0x7u << NVP_BDEV_WRITE_HINT_SHIFT)
#define NVP_BDEV_WRITE_FUA (1u << 8)
#define NVP_BDEV_WRITE_FLAGS_VALID \
	(NVP_BDEV_WRITE_CLASS_MASK | NVP_BDEV_WRITE_HINT_MASK | NVP_BDEV_WRITE_FUA)

/* Write lifetime hints are nvme.h's enum nvp_nvme_write_hint, in bits 4-6 of the flags. */
#ifndef __cplusplus
_Static_assert(NVP_NVME_WRITE_HINT_COUNT - 1 <=
		       (NVP_BDEV_WRITE_HINT_MASK >> NVP_BDEV_WRITE_HINT_SHIFT),
	       "every write hint fits the flags' hint bits");
#endif

/** The flags word for write class @cls and lifetime @hint. */
static inline uint32_t
nvp_bdev_write_flags(uint32_t cls, enum nvp_nvme_write_hint hint)
{
	return (cls & NVP_BDEV_WRITE_CLASS_MASK) |
	       (((uint32_t)hint << NVP_BDEV_WRITE_HINT_SHIFT) & NVP_BDEV_WRITE_HINT_MASK);
}

/**
 * Completion of every I/O call: @cpl->status is success (sct 0, sc 0; see
 * nvme_cpl_is_error()) or an NVMe status: the device's own for nvme bdevs, and for
 * failures found by the core or another module: INTERNAL_DEVICE_ERROR (module failure),
 * ABORTED_SQ_DELETION (device removed or failed), COMPARE_FAILURE (media error type),
 * LBA_OUT_OF_RANGE; an nvme bdev's I/O outstanding at a surprise removal completes with
 * HOST_PATH_ERROR (SCT 3h, the driver's removal status). @cpl is valid during the call
 * only.
 */
typedef void (*nvp_bdev_io_cb)(void *cb_arg, const struct nvme_cpl *cpl);

/* ---------------------------------------------------------------------------------------
 * Library and bdevs
 * ------------------------------------------------------------------------------------- */

/**
 * Unregister every bdev (closing nothing: descriptors still open keep their bdev until
 * closed) and detach the controllers the nvme module attached. For the end of a program
 * or test; no channel may exist. \return 0 or -EBUSY (a descriptor is open; message
 * names it).
 */
int nvp_bdev_fini(void);

/** The bdev called @name, or NULL. */
struct nvp_bdev *nvp_bdev_get_by_name(const char *name);
/** First registered bdev (registration order), or NULL. */
struct nvp_bdev *nvp_bdev_first(void);
/** The bdev after @prev, or NULL. */
struct nvp_bdev *nvp_bdev_next(struct nvp_bdev *prev);

const char *nvp_bdev_get_name(const struct nvp_bdev *bdev);
/** Name of the module that made it ("nvme", "malloc", "null"). */
const char *nvp_bdev_get_module_name(const struct nvp_bdev *bdev);
/** Bytes per block, metadata included when interleaved (520 for 512 + 8). */
uint32_t nvp_bdev_get_block_size(const struct nvp_bdev *bdev);
uint64_t nvp_bdev_get_num_blocks(const struct nvp_bdev *bdev);
/** Metadata bytes per block (0 if none) and whether they sit inside each block. */
uint32_t nvp_bdev_get_md_size(const struct nvp_bdev *bdev);
bool nvp_bdev_is_md_interleaved(const struct nvp_bdev *bdev);
/** Largest transfer the module takes in one request, in blocks (0 = no limit). Larger
 * requests are split by the core. */
uint32_t nvp_bdev_get_max_xfer_blocks(const struct nvp_bdev *bdev);
/** Requests are split so no child crosses a multiple of this (blocks; 0 = none). */
uint32_t nvp_bdev_get_optimal_io_boundary(const struct nvp_bdev *bdev);
/**
 * bdev_io objects of a channel's pool that one request of up to @nbytes can hold at once,
 * wherever it starts: 1, or for a request the core splits (above the max transfer, across
 * the optimal boundary) its children in flight, at most 32, and the request itself. A
 * pool (nvp_bdev_channel_opts.io_pool_size) of this times the queue depth, for the
 * largest request, leaves no request of that depth refused with -ENOMEM. \return >= 1.
 */
uint32_t nvp_bdev_get_max_ios_per_request(const struct nvp_bdev *bdev, uint64_t nbytes);
bool nvp_bdev_has_write_cache(const struct nvp_bdev *bdev);
bool nvp_bdev_io_type_supported(const struct nvp_bdev *bdev, enum nvp_bdev_io_type type);

/**
 * Write the names of all bdevs, comma separated, into @buf ("" if none; truncated with
 * "..." if it does not fit). For messages. \return @buf.
 */
char *nvp_bdev_list_names(char *buf, size_t len);

/* ---------------------------------------------------------------------------------------
 * Descriptors
 * ------------------------------------------------------------------------------------- */

enum nvp_bdev_event_type {
	NVP_BDEV_EVENT_REMOVE = 0, /**< the device is gone or failed: outstanding I/O fails,
				    * new I/O returns -ENXIO; close the descriptor */
	NVP_BDEV_EVENT_RESIZE = 1, /**< the block count changed */
};

/**
 * Event callback of a descriptor. It may run on any thread (whichever noticed the
 * event), possibly while the descriptor's channels are in use: note the event and act
 * on it from the channels' threads (destroy them, close the descriptor).
 */
typedef void (*nvp_bdev_event_cb)(enum nvp_bdev_event_type type, struct nvp_bdev *bdev,
				  void *event_ctx);

/**
 * Open bdev @name. @event_cb is required (pass a function that ignores events if you do
 * not care). Thread-safe.
 * \return 0 and *@desc; -ENODEV no such bdev (the message lists the bdevs that exist);
 * -ENXIO the bdev is being removed; -EINVAL NULL argument; -ENOMEM.
 */
int nvp_bdev_open(const char *name, bool write, nvp_bdev_event_cb event_cb, void *event_ctx,
		  struct nvp_bdev_desc **desc);

/**
 * Close a descriptor. Its channels must have been destroyed first.
 * \return 0; -EBUSY if a channel of it still exists (the message says whether I/O is in
 * flight on it) — nothing is closed then; -EINVAL NULL, or not an open descriptor (closed
 * already).
 */
int nvp_bdev_close(struct nvp_bdev_desc *desc);

struct nvp_bdev *nvp_bdev_desc_get_bdev(const struct nvp_bdev_desc *desc);

/** Tenants a descriptor's I/O may be tagged with: ids 0 .. NVP_BDEV_MAX_TENANTS - 1. */
#define NVP_BDEV_MAX_TENANTS 64u

/**
 * Tag the I/O of @desc with tenant @tenant (default 0), for schedulers that share the
 * device between tenants: "fair" gives each tenant a share by its weight (see sched.h).
 * I/O submitted afterwards carries it. \return 0; -EINVAL @tenant out of range.
 */
int nvp_bdev_desc_set_tenant(struct nvp_bdev_desc *desc, uint32_t tenant);
uint32_t nvp_bdev_desc_get_tenant(const struct nvp_bdev_desc *desc);
bool nvp_bdev_desc_is_writable(const struct nvp_bdev_desc *desc);

/**
 * Default write lifetime hint of @desc (Linux's F_SET_RW_HINT on a file): writes and
 * vectored writes submitted afterwards through @desc whose flags carry no hint (bits 4-6
 * zero) carry @hint; a hint in the flags wins. NVP_NVME_WRITE_HINT_NONE (the default)
 * turns it off. \return 0; -EINVAL NULL @desc or @hint above NVP_NVME_WRITE_HINT_EXTREME.
 */
int nvp_bdev_desc_set_write_hint(struct nvp_bdev_desc *desc, enum nvp_nvme_write_hint hint);
enum nvp_nvme_write_hint nvp_bdev_desc_get_write_hint(const struct nvp_bdev_desc *desc);

/* ---------------------------------------------------------------------------------------
 * Channels and poll groups
 * ------------------------------------------------------------------------------------- */

/** Channel options. Initialise with nvp_bdev_channel_opts_init(). */
struct nvp_bdev_channel_opts {
	size_t opts_size;
	uint32_t io_pool_size;             /**< bdev_io objects (queue depth incl. split
					   * children), 2 .. 65536; 512 */
	uint32_t module_queue_depth;       /**< a hint for the module's queue (NVMe qpair
					   * entries: at least this many, fitted to what the
					   * controller takes, never fewer than the attach's
					   * io_queue_size), 0 = module default */
	struct nvp_bdev_poll_group *group; /**< join this poll group (same thread), or NULL */
	bool interrupts; /**< ask the module for an interrupt (nvme: an interrupt-enabled CQ),
			  * for a waiter in irq mode (lib/poll); false = polled only */
};

void nvp_bdev_channel_opts_init(struct nvp_bdev_channel_opts *opts, size_t opts_size);

/**
 * Create an I/O channel of @desc owned by the calling thread: its bdev_io pool, the
 * module's per-thread resources, its accounting; admission and scheduling state of the
 * stages selected for the bdev. @opts may be NULL for defaults.
 * \return 0 and *@ch; -EINVAL bad options; -ENXIO bdev removed; -ENOMEM; a module's
 * error (e.g. -EBUSY: no NVMe queue left).
 */
int nvp_bdev_channel_create(struct nvp_bdev_desc *desc, const struct nvp_bdev_channel_opts *opts,
			    struct nvp_bdev_channel **ch);

/**
 * Destroy a channel (leaving its poll group). Owner thread only, and not from inside the
 * channel's own poll (a completion or io_wait callback of it): destroy it after the poll
 * returns. I/O still in flight on a module that can give it up (nvme: a lost completion,
 * action_on_timeout none, a slow device) is completed first, each callback once with an
 * error status (nvme: ABORTED SQ DELETION, its queue deleted on the device so nothing
 * touches its buffers any more), inside this call.
 * \return 0; -EBUSY if I/O is in flight that the module cannot give up (poll until it
 * completes) or called from inside the channel's poll; -EINVAL NULL, or not a channel
 * (destroyed already); -EPERM foreign thread (debug builds).
 */
int nvp_bdev_channel_destroy(struct nvp_bdev_channel *ch);

/**
 * Poll one channel: retry deferred I/O, let the scheduler dispatch, find the module's
 * completions and call their callbacks. Owner thread only.
 * \return completions delivered (>= 0), -EINVAL @ch NULL, -EPERM foreign thread (debug
 * builds).
 */
int nvp_bdev_channel_poll(struct nvp_bdev_channel *ch);

/** I/Os accepted on @ch and not yet completed (split children not counted). */
uint32_t nvp_bdev_channel_get_outstanding(const struct nvp_bdev_channel *ch);

/** Create an empty poll group owned by the calling thread. \return 0 or -ENOMEM. */
int nvp_bdev_poll_group_create(struct nvp_bdev_poll_group **group);

/**
 * Destroy a poll group. \return 0; -EBUSY if channels are still in it (destroy or
 * remove them first); -EPERM foreign thread (debug builds).
 */
int nvp_bdev_poll_group_destroy(struct nvp_bdev_poll_group *group);

/** Add @ch to @group (both of this thread). \return 0, -EEXIST already in a group, -EPERM. */
int nvp_bdev_poll_group_add(struct nvp_bdev_poll_group *group, struct nvp_bdev_channel *ch);
/** Remove @ch from its group. \return 0, -ENOENT not in @group, -EPERM. */
int nvp_bdev_poll_group_remove(struct nvp_bdev_poll_group *group, struct nvp_bdev_channel *ch);

/**
 * Poll every channel of the group once (the group's poll hook, e.g. the hybrid poller,
 * may first sleep). \return completions delivered, -EINVAL @group NULL, -EPERM foreign
 * thread (debug builds).
 */
int nvp_bdev_poll_group_poll(struct nvp_bdev_poll_group *group);

/** I/Os outstanding on all channels of the group. */
uint32_t nvp_bdev_poll_group_get_outstanding(const struct nvp_bdev_poll_group *group);

/* ---------------------------------------------------------------------------------------
 * I/O
 *
 * Offsets and lengths are in blocks (the *_blocks calls) or in bytes (multiples of the
 * block size). Buffers: what the module needs — DMA memory (nvp_env_dma_malloc) for nvme
 * bdevs, any memory for malloc and null. An iovec array (readv/writev) must stay valid
 * until the completion. Common errors, with nothing sent:
 *   -EINVAL  zero length, range past the end of the bdev, byte offset or length not a
 *            multiple of the block size, iovecs whose total is not the length, NULL
 *            buffer or callback, reserved flag bits; a request the core must split
 *            (max transfer, boundary) with a block spread over more than
 *            NVP_BDEV_IO_NUM_IOVS (16) iovecs
 *   -EBADF   write-type operation through a read-only descriptor
 *   -ENOTSUP the bdev does not support the operation
 *   -ENOMEM  the channel's bdev_io pool is empty: retry from nvp_bdev_queue_io_wait()
 *   -ENXIO   the bdev was removed
 *   -EPERM   the channel belongs to another thread (debug builds)
 * ------------------------------------------------------------------------------------- */

/**
 * Read into @buf (or @iov).
 * \return 0 (@cb follows); -EINVAL, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_read(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		  uint64_t offset, uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_read_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
			 uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb,
			 void *cb_arg);
int nvp_bdev_readv(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, const struct iovec *iov,
		   int iovcnt, uint64_t offset, uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_readv_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
			  const struct iovec *iov, int iovcnt, uint64_t offset_blocks,
			  uint64_t num_blocks, nvp_bdev_io_cb cb, void *cb_arg);

/**
 * @flags: NVP_BDEV_WRITE_* (class, lifetime hint, FUA); 0 for a plain write.
 * \return 0 (@cb follows); -EINVAL, -EBADF, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_write(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		   uint64_t offset, uint64_t nbytes, uint32_t flags, nvp_bdev_io_cb cb,
		   void *cb_arg);
int nvp_bdev_write_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
			  uint64_t offset_blocks, uint64_t num_blocks, uint32_t flags,
			  nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_writev(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
		    const struct iovec *iov, int iovcnt, uint64_t offset, uint64_t nbytes,
		    uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_writev_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
			   const struct iovec *iov, int iovcnt, uint64_t offset_blocks,
			   uint64_t num_blocks, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg);

/**
 * Zero the range (flags as writes).
 * \return 0 (@cb follows); -EINVAL, -EBADF, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_write_zeroes(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
			  uint64_t nbytes, uint32_t flags, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_write_zeroes_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
				 uint64_t offset_blocks, uint64_t num_blocks, uint32_t flags,
				 nvp_bdev_io_cb cb, void *cb_arg);

/**
 * Deallocate the range (reads of it return zeroes on modules that say so).
 * \return 0 (@cb follows); -EINVAL, -EBADF, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_unmap(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
		   uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_unmap_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
			  uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb,
			  void *cb_arg);

/**
 * Make written data of the range durable (the whole device for NVMe). Never split.
 * \return 0 (@cb follows); -EINVAL, -EBADF, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_flush(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint64_t offset,
		   uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_flush_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
			  uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb,
			  void *cb_arg);

/**
 * Compare the range with @buf: COMPARE_FAILURE status (media error type) on mismatch.
 * \return 0 (@cb follows); -EINVAL, -ENOTSUP, -ENOMEM, -ENXIO, -EPERM as above.
 */
int nvp_bdev_compare(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
		     uint64_t offset, uint64_t nbytes, nvp_bdev_io_cb cb, void *cb_arg);
int nvp_bdev_compare_blocks(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, void *buf,
			    uint64_t offset_blocks, uint64_t num_blocks, nvp_bdev_io_cb cb,
			    void *cb_arg);

/* ---- waiting for a bdev_io (SPDK's spdk_bdev_queue_io_wait) ---- */

typedef void (*nvp_bdev_io_wait_cb)(void *cb_arg);

/**
 * Caller-owned entry for nvp_bdev_queue_io_wait(); fill bdev, cb_fn and cb_arg. The
 * link is the core's; the entry must stay valid until called back.
 */
struct nvp_bdev_io_wait_entry {
	struct nvp_bdev *bdev;
	nvp_bdev_io_wait_cb cb_fn;
	void *cb_arg;
	struct nvp_bdev_io_wait_entry *next; /* core only */
};

/**
 * After a call returned -ENOMEM: have @entry->cb_fn called (once, on the channel's
 * thread, from its poll) when a bdev_io is free again, waiters in FIFO order, before the
 * callback of the I/O that freed it (which can submit again). The callback usually
 * resubmits; refused again (a split request needs its children too), it queues the entry
 * again and is called at a later release or poll. \return 0; -EINVAL if @entry->bdev is
 * not the channel's bdev or cb_fn is NULL; -EBUSY @entry is queued already (a waiter
 * queues its own entry again only from its callback); -EPERM foreign thread (debug
 * builds).
 */
int nvp_bdev_queue_io_wait(struct nvp_bdev *bdev, struct nvp_bdev_channel *ch,
			   struct nvp_bdev_io_wait_entry *entry);

/* ---------------------------------------------------------------------------------------
 * Pipeline stages and accounting (per bdev, at run time)
 * ------------------------------------------------------------------------------------- */

/**
 * Select the admission stage (e.g. "wbt") or scheduler (e.g. "deadline", "kyber") of
 * @bdev by its registered name; "none" for pass-through (the default). @params is a
 * "key=value ..." string for the stage, or NULL. Takes effect for channels created
 * afterwards. \return 0; -ENOENT unknown name (message lists the registered ones);
 * -EBUSY channels of the bdev exist; -EINVAL the stage rejected @params; -ENOMEM.
 */
int nvp_bdev_set_admission(struct nvp_bdev *bdev, const char *name, const char *params);
int nvp_bdev_set_scheduler(struct nvp_bdev *bdev, const char *name, const char *params);
const char *nvp_bdev_get_admission(const struct nvp_bdev *bdev);
const char *nvp_bdev_get_scheduler(const struct nvp_bdev *bdev);
/** The @params the current stage was set with (valid until it is set again), or NULL. */
const char *nvp_bdev_get_admission_params(const struct nvp_bdev *bdev);
const char *nvp_bdev_get_scheduler_params(const struct nvp_bdev *bdev);

/**
 * Accounting on (default) or off for @bdev. Channels see the change at their next poll.
 * On, each I/O is timed with the channel's clock (one clock read per poll shared by
 * the I/Os it completes and its callbacks submit; one per submission made outside a
 * poll) and recorded in the histograms; off saves that. Counters of I/Os, bytes and
 * errors are kept either way.
 */
void nvp_bdev_set_accounting(struct nvp_bdev *bdev, bool enable);
/** Whether accounting is on for @bdev (nvp_bdev_set_accounting()). */
bool nvp_bdev_get_accounting(const struct nvp_bdev *bdev);

/** Statistics of one operation type. Times are in ticks (see ticks_hz). */
struct nvp_bdev_op_stats {
	uint64_t ios;                /**< completed (split children not counted) */
	uint64_t bytes;              /**< completed bytes */
	uint64_t errors;             /**< completed with an error status */
	uint64_t inflight;           /**< accepted, not yet completed, at the time of the call */
	uint64_t busy_ticks;         /**< time with >= 1 I/O of this type in flight, summed over
				* channels */
	struct nvp_histogram queued; /**< time from the call to the module (admission
				      * and scheduler queues); accounting on only */
	struct nvp_histogram device; /**< time in the module/device, to the poll that
				      * completed it (that poll's one clock read) */
};

struct nvp_bdev_stats {
	size_t info_size;      /**< set by the caller: sizeof(struct nvp_bdev_stats) */
	uint64_t ticks_hz;     /**< nvp_env_get_ticks_hz() */
	uint32_t num_channels; /**< channels alive now (retired ones are included in the
				* totals) */
	struct nvp_bdev_op_stats op[NVP_BDEV_NUM_IO_TYPES];
};

/**
 * Sum the statistics of every channel of @bdev, alive or destroyed. Any thread; takes
 * no lock the I/O path takes: each channel's counters are read under its seqcount, its
 * histograms bucket by bucket (an I/O completing meanwhile may be missing from them).
 * @stats is large (~400 KiB): allocate it; the caller sets stats->info_size first.
 * \return 0; -EINVAL NULL argument or a too small info_size.
 */
int nvp_bdev_get_stats(struct nvp_bdev *bdev, struct nvp_bdev_stats *stats);

/* ---------------------------------------------------------------------------------------
 * Built-in modules
 * ------------------------------------------------------------------------------------- */

/** malloc: a RAM disk in DMA memory. Initialise with nvp_bdev_malloc_opts_init(). */
struct nvp_bdev_malloc_opts {
	size_t opts_size;
	const char *name;             /**< required */
	uint64_t num_blocks;          /**< required, >= 1 */
	uint32_t block_size;          /**< 512, 4096, or 520 / 4104 with md_size 8; 512 */
	uint32_t md_size;             /**< 0 or 8 (interleaved: included in block_size); 0 */
	uint32_t max_xfer_blocks;     /**< split above this (0 = no limit); 0 */
	uint32_t optimal_io_boundary; /**< split at multiples of this (0 = none); 0 */
};

void nvp_bdev_malloc_opts_init(struct nvp_bdev_malloc_opts *opts, size_t opts_size);

/**
 * Create a malloc bdev, zero filled. \return 0 and *@bdev (may be NULL);
 * -EINVAL a bad option (the message names it and says what is allowed); -EEXIST the name
 * is taken; -ENOMEM not enough DMA memory.
 */
int nvp_bdev_malloc_create(const struct nvp_bdev_malloc_opts *opts, struct nvp_bdev **bdev);
/** \return 0, -ENODEV no such malloc bdev, -EBUSY open descriptors. */
int nvp_bdev_malloc_delete(const char *name);

/** null: writes are discarded, reads return zeroes, every I/O completes on the next poll. */
struct nvp_bdev_null_opts {
	size_t opts_size;
	const char *name;         /**< required */
	uint64_t num_blocks;      /**< required, >= 1 */
	uint32_t block_size;      /**< 512 .. 65536, power of two (or + md_size); 512 */
	uint32_t md_size;         /**< interleaved metadata bytes per block; 0 */
	uint32_t max_xfer_blocks; /**< 0 = no limit */
};

void nvp_bdev_null_opts_init(struct nvp_bdev_null_opts *opts, size_t opts_size);
/** \return 0 and *@bdev (may be NULL); -EINVAL (parameter named), -EEXIST, -ENOMEM. */
int nvp_bdev_null_create(const struct nvp_bdev_null_opts *opts, struct nvp_bdev **bdev);
/** \return 0, -ENODEV, -EBUSY. */
int nvp_bdev_null_delete(const char *name);

/** nvme: one bdev per active namespace of a controller, named "<name>n<nsid>". */
/**
 * A request of an nvme bdev that passes its timeout_us (SPDK's action_on_timeout). Each
 * one is logged and counted (nvp_bdev_nvme_get_ctrlr_stats()) first. The I/O's callback
 * runs once in every case.
 */
enum nvp_bdev_nvme_timeout_action {
	/** report only: the I/O stays outstanding until the device completes it, a reset
	 * (another cause's), or the channel's destruction completes it with an error */
	NVP_BDEV_NVME_TIMEOUT_NONE = 0,
	/** reset the controller (from the channel's poll that found it): the device's
	 * requests are sent again or, those past their deadline, completed with ABORTED SQ
	 * DELETION; the bdevs and channels stay and go on */
	NVP_BDEV_NVME_TIMEOUT_RESET = 1,
	/** Abort the command (the driver's path): it completes with the device's status
	 * (ABORTED BY REQUEST) or, not aborted or the Abort unanswered, with ABORTED BY HOST */
	NVP_BDEV_NVME_TIMEOUT_ABORT = 2,
};

struct nvp_bdev_nvme_opts {
	size_t opts_size;
	const char *name; /**< controller name, required ("nvme0", "emu0") */
	/**
	 * The controller's options, a struct of its own with its own opts_size (so either
	 * struct can grow), read during nvp_bdev_nvme_attach() only; NULL (the default) =
	 * nvp_nvme_ctrlr_opts_init() defaults.
	 */
	const struct nvp_nvme_ctrlr_opts *ctrlr_opts;
	/** entries of each channel's qpair, 2 .. 65536 (0 = default); lowered, with a notice,
	 * to the controller's limit (CAP.MQES + 1), as SPDK does */
	uint32_t io_queue_size;
	/**
	 * SPDK's names and meaning. A failed controller that is still present is reset by
	 * the channel that finds it: 0 = one reset, then its bdevs are removed (default);
	 * N > 0 = resets every reconnect_delay_sec until N seconds after the failure; -1 =
	 * for ever. A removed device's bdevs go at once. NVMe/TCP: the three values also go
	 * to the controller (its ctrlr_opts' own are replaced when this is not 0), so a lost
	 * connection is the driver's reconnect: the bdevs stay, their I/O waits (up to
	 * fast_io_fail_timeout_sec), every reconnect_delay_sec the channels' polls attempt a
	 * reconnect (nobody need poll the admin queue), and once ctrlr_loss_timeout_sec has
	 * passed since the loss the bdevs are removed (NVP_BDEV_EVENT_REMOVE, once).
	 */
	int32_t ctrlr_loss_timeout_sec;
	uint32_t reconnect_delay_sec; /**< 1 .. ctrlr_loss_timeout_sec when that is not 0 */
	/**
	 * Per-request timeout of the channels' I/O in microseconds, counted from the submit
	 * call (SPDK's timeout_us). 0 (default) = off: the module adds none, and the
	 * controller's own io_timeout_us (ctrlr_opts, default 30 s) still bounds each
	 * request, handled by the driver with Abort as action_on_timeout abort is.
	 */
	uint64_t timeout_us;
	/** What a request past timeout_us gets (SPDK's action_on_timeout); default none. */
	enum nvp_bdev_nvme_timeout_action action_on_timeout;
	/**
	 * NVMe/TCP, while the controller reconnects (ctrlr_loss_timeout_sec): from this many
	 * seconds after the loss, waiting and new I/O completes with PATH RELATED / HOST
	 * PATHING ERROR (sct 3h, sc 70h, DNR clear: retry it) instead of waiting. 0 (default)
	 * = wait until the controller is back or lost. 0, or reconnect_delay_sec ..
	 * ctrlr_loss_timeout_sec (SPDK's rule). Other transports: checked, not used (their
	 * failed I/O completes at once).
	 */
	uint32_t fast_io_fail_timeout_sec;
};

void nvp_bdev_nvme_opts_init(struct nvp_bdev_nvme_opts *opts, size_t opts_size);

/**
 * Attach the controller at @trid ("trtype:PCIe traddr:0000:01:00.0" or a software
 * controller "trtype:emu name:emu0 ...") and register its namespaces as bdevs.
 * @names (may be NULL) receives up to @max_names bdev pointers, *@count how many were
 * made (may be NULL). \return 0; -EINVAL bad trid or option (named); -EEXIST a
 * controller or bdev of that name exists; the error of nvp_nvme_connect(); -ENODEV the
 * controller has no active namespace.
 */
int nvp_bdev_nvme_attach(const char *trid, const struct nvp_bdev_nvme_opts *opts,
			 struct nvp_bdev **bdevs, uint32_t max_bdevs, uint32_t *count);

/**
 * Unregister the controller's bdevs and detach it. \return 0; -ENODEV no such
 * controller; -EBUSY a bdev of it is open.
 */
int nvp_bdev_nvme_detach(const char *name);

/** The controller behind an nvme bdev, or NULL for other bdevs (admin commands, tools). */
struct nvp_nvme_ctrlr *nvp_bdev_nvme_get_ctrlr(struct nvp_bdev *bdev);

/**
 * nvme multipath (SPDK's bdev_nvme_attach_controller with "multipath": "failover" or
 * "multipath"; include/nvpoll/nvme_mpath.h): the first call for @name connects @trid and
 * registers its namespace (the transport ID's ns:, else the first active one) as the bdev
 * "<name>n<nsid>", module "nvme_mpath"; each later call for @name adds @trid as another
 * path of the same subsystem and namespace. @policy: "failover" or "multipath" (the same
 * in every call for a name). @bdev (may be NULL) gets the bdev, @num_paths (may be NULL)
 * the paths it now has. \return 0; -EINVAL bad argument or policy, a path of another
 * subsystem or namespace (named in the log); -EEXIST the bdev name is taken; -ENOSPC too
 * many paths; the errors of nvp_nvme_mpath_connect() / nvp_nvme_mpath_add_path().
 */
int nvp_bdev_nvme_mpath_attach(const char *name, const char *trid, const char *policy,
			       const struct nvp_nvme_ctrlr_opts *ctrlr_opts, struct nvp_bdev **bdev,
			       uint32_t *num_paths);
/** Unregister the bdev and detach every path. \return 0; -ENODEV; -EBUSY it is open. */
int nvp_bdev_nvme_mpath_detach(const char *name);
struct nvp_nvme_mpath;
/** The multipath controller behind an nvme_mpath bdev (its paths, their ANA states), or
 * NULL for other bdevs. */
struct nvp_nvme_mpath *nvp_bdev_nvme_get_mpath(struct nvp_bdev *bdev);

/*
 * Write lifetime hints on nvme bdevs: at attach the module asks each namespace for
 * streams (nvp_nvme_ns_hints_setup(ns, 0)); a write's hint (flags bits 4-6, or its
 * descriptor's default) then picks the namespace's stream for that hint. A controller
 * without directives gets plain writes, the hints counted as dropped. Other modules
 * ignore hints. (Hints 5-7, which fit the flag bits, are refused at the call: -EINVAL.)
 * The module sets them up again after a reset it made itself (a failed controller that is
 * still present); whoever else calls nvp_nvme_ctrlr_reset() on the controller of
 * nvp_bdev_nvme_get_ctrlr() must set the hints up again.
 */
#define NVP_BDEV_NUM_HINTS NVP_NVME_WRITE_HINT_COUNT

struct nvp_bdev_nvme_hint_stats {
	size_t info_size;     /**< set by the caller: sizeof(struct nvp_bdev_nvme_hint_stats) */
	uint32_t placement;   /**< enum nvp_nvme_placement of the namespace */
	uint16_t num_streams; /**< streams (FDP: placement ids) granted to the hints (0: none) */
	uint16_t stream[NVP_BDEV_NUM_HINTS]; /**< stream (FDP: placement id) of each hint, 0 =
					      * no directive */
	uint64_t writes[NVP_BDEV_NUM_HINTS]; /**< write commands sent, by hint ([0]: none) */
	uint64_t hints_dropped;              /**< hinted writes sent without a directive as
						  the namespace has no placement (driver's) */
};

/**
 * The hint counters of an nvme bdev (writes counted when the module submits them, split
 * I/O counting each child); the caller sets stats->info_size first. \return 0; -EINVAL
 * NULL argument, a too small info_size, or not an nvme bdev.
 */
int nvp_bdev_nvme_get_hint_stats(struct nvp_bdev *bdev, struct nvp_bdev_nvme_hint_stats *stats);

/** Counters of the controller behind an nvme bdev. */
struct nvp_bdev_nvme_ctrlr_stats {
	size_t info_size;        /**< set by the caller: sizeof(struct nvp_bdev_nvme_ctrlr_stats) */
	uint64_t timeouts;       /**< requests of its channels past their deadline (timeout_us,
				  * else the controller's io_timeout_us), whatever the action */
	uint64_t timeout_resets; /**< controller resets action_on_timeout reset made */
	uint64_t resets;         /**< resets that brought the controller back (any cause) */
	uint64_t aborted_at_destroy; /**< I/Os completed with an error because their channel
				      * was destroyed with them outstanding */
};

/**
 * The counters of the controller behind @bdev; the caller sets stats->info_size first.
 * \return 0; -EINVAL NULL argument, a too small info_size, or not an nvme bdev.
 */
int nvp_bdev_nvme_get_ctrlr_stats(struct nvp_bdev *bdev, struct nvp_bdev_nvme_ctrlr_stats *stats);

/** uring: whether a uring bdev polls its completions (IORING_SETUP_IOPOLL). */
enum nvp_bdev_uring_iopoll {
	NVP_BDEV_URING_IOPOLL_AUTO = 0, /**< when the file allows it (probed at create) */
	NVP_BDEV_URING_IOPOLL_ON = 1,   /**< required: create fails with -EOPNOTSUPP if not */
	NVP_BDEV_URING_IOPOLL_OFF = 2,  /**< interrupt-driven completions */
};

/**
 * uring: a Linux regular file or block device through io_uring, opened with O_DIRECT
 * (buffers and offsets aligned to the block size), one ring per channel, completions
 * found by the channel's poll. With IORING_SETUP_IOPOLL (block devices with polled queues,
 * files on them) the kernel polls the device too. Initialise with
 * nvp_bdev_uring_opts_init().
 */
struct nvp_bdev_uring_opts {
	size_t opts_size;
	const char *name;                  /**< required */
	const char *filename;              /**< required: an existing file or block device */
	uint32_t block_size;               /**< 0 = detect (logical block size of a block
					   * device; 512 for a file); 512 .. 65536, power of 2 */
	enum nvp_bdev_uring_iopoll iopoll; /**< AUTO */
};

void nvp_bdev_uring_opts_init(struct nvp_bdev_uring_opts *opts, size_t opts_size);

/**
 * Create a uring bdev of every whole block of @opts->filename (at least one). Says at
 * NOTICE level whether it polls (IOPOLL) and why not, and when the file system refused
 * O_DIRECT (then the page cache is used). \return 0 and *@bdev (may be NULL); -EINVAL a
 * bad option (named in the message); -EEXIST the name is taken; -ENOENT, -EACCES, ...
 * the file could not be opened; -EOPNOTSUPP IOPOLL_ON and the file does not allow it;
 * -ENOMEM.
 */
int nvp_bdev_uring_create(const struct nvp_bdev_uring_opts *opts, struct nvp_bdev **bdev);
/** \return 0, -ENODEV no such uring bdev, -EBUSY open descriptors. */
int nvp_bdev_uring_delete(const char *name);
/** Whether uring bdev @bdev polls (IOPOLL) and uses O_DIRECT; false for other bdevs. */
bool nvp_bdev_uring_is_iopoll(const struct nvp_bdev *bdev);
bool nvp_bdev_uring_is_direct(const struct nvp_bdev *bdev);

/* ---------------------------------------------------------------------------------------
 * Configuration (SPDK's JSON shape, or one line for tools)
 * ------------------------------------------------------------------------------------- */

/**
 * Create the bdevs a configuration describes, in SPDK's JSON shape:
 *
 *     {"subsystems": [{"subsystem": "bdev", "config": [
 *         {"method": "bdev_nvme_attach_controller",
 *          "params": {"name": "nvme0", "trtype": "PCIe", "traddr": "0000:01:00.0"}},
 *         {"method": "bdev_malloc_create",
 *          "params": {"name": "m0", "num_blocks": 2048, "block_size": 512}}]}]}
 *
 * Methods (run in order) and their params:
 *  - bdev_nvme_attach_controller: name, trtype, traddr, adrfam, trsvcid, subnqn (SPDK's),
 *    io_queue_size; bdevs "<name>n<nsid>". With "trtype": "emu" a software controller is
 *    made, its options (nvpoll/emu.h: nn, size, lba, read_us, ...) as further params.
 *  - bdev_malloc_create: name, num_blocks, block_size, md_size, optimal_io_boundary,
 *    max_xfer_blocks. bdev_null_create: name, num_blocks, block_size, md_size,
 *    max_xfer_blocks. bdev_uring_create: name, filename, block_size, iopoll (auto/on/off).
 *  - nvpoll's own: bdev_set_scheduler {name, scheduler, params}, bdev_set_admission
 *    {name, admission, params}, bdev_set_accounting {name, enable} (see
 *    nvp_bdev_set_scheduler() and friends).
 * SPDK-only params (uuid, hdgst, ...) and methods (bdev_set_options,
 * bdev_nvme_set_options, bdev_nvme_set_hotplug, bdev_wait_for_examine) are ignored, and
 * subsystems other than "bdev" skipped, so a file from SPDK's save_config loads.
 *
 * The text is JSON as RFC 8259 has it, strictly: a comment, a trailing comma, a string in
 * single quotes, a control character in a string, a bad escape, a leading zero, NaN, text
 * after the document or an empty text is malformed. Numbers and booleans may also be given
 * as strings ("1024", "true"); an integer may be written 1e3 or 1024.0.
 *
 * \return 0; -EINVAL malformed JSON (message: file:line:column and what was expected
 * there, e.g. "bdev.json:3:40: malformed JSON: trailing ',' before '}' ..."), an unknown
 * method or parameter, a wrong type or a missing parameter (message: the entry's file:line:column
 * and the JSON path, e.g. "bdev.json:7:5: subsystems[0].config[1] (bdev_malloc_create)
 * .params.num_blcks: unknown parameter (known: ...)"); the error of a
 * create call (-EEXIST, -ENOMEM, ...); -ENOENT etc. the file cannot be read. On any error
 * everything the call had made is deleted again and stage choices are put back.
 */
int nvp_bdev_load_config_file(const char *path);
/**
 * As nvp_bdev_load_config_file() with the JSON text itself. \return 0; -EINVAL
 * malformed JSON, unknown method or parameter, bad value; a create call's error
 * (-EEXIST, -ENOMEM, ...).
 */
int nvp_bdev_load_config_string(const char *json);

/**
 * The one-line form for tools: items separated by ';', each "KIND:key=value,key=value"
 * with KIND nvme, malloc, null, uring, scheduler, admission or accounting (the methods
 * above) and the same params, e.g.
 * "malloc:name=m0,num_blocks=2048;nvme:name=emu0,trtype=emu,nn=2,read_us=10".
 * \return as nvp_bdev_load_config_string() (0; -EINVAL, the item named by its number;
 * a create call's error such as -EEXIST or -ENOMEM).
 */
int nvp_bdev_load_config_line(const char *line);

/**
 * For a tool's option: @arg is a JSON text (starts with '{'), an existing file (JSON),
 * or the one-line form. \return as the call it picks: 0; -EINVAL; a create call's
 * error (-EEXIST, -ENOMEM, ...); -ENOENT etc. for a file that cannot be read.
 */
int nvp_bdev_load_config(const char *arg);

/**
 * Whether @rc, an error a nvp_bdev_load_config*() call returned, lies in the configuration
 * itself, for its author to fix: malformed JSON, an unknown method or parameter or a bad
 * value (-EINVAL), a name a bdev or controller already has (-EEXIST), a file that cannot
 * be read (-ENOENT, -EACCES, -EISDIR, ...). Tools exit with status 2 for these, as for a
 * bad command line; other errors (-ENOMEM, a controller that does not answer) are failures
 * of the run.
 */
bool nvp_bdev_config_error_is_usage(int rc);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_BDEV_H */
