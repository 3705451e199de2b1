/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * The bdev layer for the people who extend it: modules (a kind of block device), the
 * pipeline stages (admission = writeback throttle, scheduling = I/O schedulers) and the
 * poll hook (how a poll group waits: the hybrid poller). Everything here is reachable
 * from outside lib/bdev: a module, a scheduler or a throttle is written against this
 * header alone (examples/bdev_passthru builds against the installed headers only).
 *
 * The life of an I/O (each arrow a function call on the channel's thread):
 *
 *     nvp_bdev_write()  validate, take a bdev_io from the channel's pool, split if larger
 *        |              than the module's max transfer (each child goes down alone)
 *     admission.admit() -> GO, or DEFER: the core parks it on the channel's deferred
 *        |                 list and asks again from the poll loop (oldest first)
 *     scheduler.submit() -> the scheduler holds it until scheduler.dispatch() hands it
 *        |                  back (called after each submit and completion while it
 *        |                  holds I/O of the channel, and from the poll loop)
 *     module.submit()   the device
 *     ... nvp_bdev_channel_poll() -> module.poll() -> nvp_bdev_io_complete()
 *                                    (or nvp_bdev_io_complete_list())
 *     scheduler.complete(), admission.complete()   latency feedback
 *     accounting, then the caller's callback (the parent's, once, after all children)
 *
 * Threads: a channel and everything per-channel (module channel context, stage channel
 * context, the bdev_io) belong to the channel's thread; stages share device-wide state
 * between channels (a throttle's scale step, kyber's tokens) through atomics, never a
 * lock on the I/O path.
 */
#ifndef NVPOLL_BDEV_MODULE_H
#define NVPOLL_BDEV_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nvpoll/bdev.h"
#include "nvpoll/nvme_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * The request
 * ------------------------------------------------------------------------------------- */

/** Data segments a bdev_io carries inline (a split child's slice of the parent's iovs). */
#define NVP_BDEV_IO_NUM_IOVS 16

/**
 * One request as modules and stages see it. Allocated by the core from the channel's
 * pool (never by a module); the module's per-I/O context (spec.io_ctx_size bytes) follows
 * it in driver_ctx.
 */
struct nvp_bdev_io {
	/* ---- hot: set by the core, read-only for stages and modules ---- */
	uint8_t type;   /**< enum nvp_bdev_io_type */
	uint8_t tenant; /**< the descriptor's tenant (nvp_bdev_desc_set_tenant()), for
			 * schedulers that share the device between tenants: set when
			 * the I/O goes down the stages (admission, scheduler) or past a
			 * poll hook, undefined for a module on a channel without them */
	uint8_t rsvd1[2];
	uint32_t flags; /**< write flags (NVP_BDEV_WRITE_*), 0 for other types */
	uint64_t offset_blocks;
	uint64_t num_blocks;
	struct iovec *iovs; /**< data of read, write, compare; NULL otherwise */
	int iovcnt;
	uint32_t rsvd2;
	struct nvp_bdev *bdev;
	struct nvp_bdev_channel *ch;
	void *module_ch;      /**< the module's context of this channel */
	uint64_t submit_tick; /**< when the caller submitted; set only when a stage, the
			       * poll hook or accounting needs time (else 0). Inside a poll
			       * (callbacks resubmitting) it is the poll's one clock read */

	/* ---- for the stage holding the I/O (deferred list, scheduler queues) ---- */
	struct nvp_bdev_io *stage_next; /**< free for the holder's singly linked lists */
	struct nvp_bdev_io *stage_prev; /**< ... or doubly linked ones */
	uint64_t stage_data[2];         /**< e.g. a deadline, a token domain */

	/* ---- cold: the core's; modules and stages do not touch ---- */
	struct {
		nvp_bdev_io_cb cb;
		void *cb_arg;
		struct nvp_bdev_io *parent; /**< split children: their parent */
		struct nvp_bdev_io *next;   /**< pool free list, core lists */
		uint64_t dev_tick;          /**< sent to the module */
		struct nvme_cpl cpl;        /**< status (parent: first error) */
		uint64_t split_next;        /**< parent: next block to send */
		uint64_t split_iov_off;     /**< parent: byte offset of split_next in iovs */
		uint32_t split_outstanding; /**< parent: children in flight */
		uint8_t state;
		uint8_t rsvd[3];
		struct iovec iov[NVP_BDEV_IO_NUM_IOVS]; /**< own buffer / a child's slice */
	} internal;

	/** Module's per-I/O context (spec.io_ctx_size bytes). */
	uint8_t driver_ctx[] __attribute__((aligned(16)));
};

/** Bytes the request covers. */
uint64_t nvp_bdev_io_get_nbytes(const struct nvp_bdev_io *io);

/**
 * The module reports the outcome of @io with the device's completion entry (NVMe status
 * kept as is; only the status is used). Call it on the channel's thread, from
 * module.poll() or later. Allowed from inside module.submit() too (single or list): the
 * core then defers it to the channel's next poll, which costs a list operation, so that
 * the callback never runs inside the I/O call.
 */
void nvp_bdev_io_complete(struct nvp_bdev_io *io, const struct nvme_cpl *cpl);

/**
 * From module.submit(): @io could not be started. -ENOMEM: the core sends it
 * again from the poll loop (queue full); another -errno completes it on the next poll
 * with INTERNAL_DEVICE_ERROR (-ENXIO: ABORTED_SQ_DELETION).
 */
void nvp_bdev_io_submit_failed(struct nvp_bdev_io *io, int rc);

/** Shorthand: complete with status (@sct, @sc); (0, 0) is success. */
void nvp_bdev_io_complete_status(struct nvp_bdev_io *io, uint8_t sct, uint8_t sc);

/**
 * A FIFO of bdev_ios for completing many at once (nvp_bdev_io_complete_list()). The links
 * are in the bdev_ios (a core field, free while the module holds the I/O), so a module
 * needs no storage of its own: it may keep the I/O it holds on such a list and hand the
 * list over whole, or append what its device completed and hand that over at the end of
 * its poll. Empty: head NULL, tailp &head (nvp_bdev_io_list_init()).
 */
struct nvp_bdev_io_list {
	struct nvp_bdev_io *head;
	struct nvp_bdev_io **tailp; /**< where the next I/O is linked */
};

static inline void
nvp_bdev_io_list_init(struct nvp_bdev_io_list *list)
{
	list->head = NULL;
	list->tailp = &list->head;
}

static inline bool
nvp_bdev_io_list_empty(const struct nvp_bdev_io_list *list)
{
	return list->tailp == &list->head;
}

/** Append @io (two stores: the last link is written when the list is handed over). */
static inline void
nvp_bdev_io_list_append(struct nvp_bdev_io_list *list, struct nvp_bdev_io *io)
{
	*list->tailp = io;
	list->tailp = &io->internal.next;
}

/**
 * Complete every I/O on @list, in list order, all with the status of @cpl (all zero:
 * success), and leave @list empty. The I/Os must all be of the channel being polled
 * (call it from module.poll(), on the channel's thread; from inside module.submit(), each
 * is deferred to the next poll as nvp_bdev_io_complete() is). Each I/O's callback runs once, as with nvp_bdev_io_complete(); the core reads the clock
 * once for the list and accounts its I/Os together before their callbacks run. An I/O
 * completing with another status goes through nvp_bdev_io_complete() (after the list
 * of those before it, to keep the order). The last callback is the last thing it does,
 * so the caller should do nothing after it either (a tail call).
 */
void nvp_bdev_io_complete_list(struct nvp_bdev_io_list *list, const struct nvme_cpl *cpl);

/**
 * nvp_bdev_io_complete_list() with the time the I/Os were found complete, @now, in
 * nvp_env_get_ticks() units, from a clock the module's device path reads anyway (the
 * NVMe driver reads one at the start of each poll: nvp_nvme_qpair_set_batch_end()), so
 * the core reads none of its own. @now must be no earlier than any of the I/Os'
 * submission: a time read on this thread after they were submitted, and before the
 * callbacks of the list run (what they submit is stamped with it). 0: the core reads
 * the clock, as nvp_bdev_io_complete_list().
 */
void nvp_bdev_io_complete_list_at(struct nvp_bdev_io_list *list, const struct nvme_cpl *cpl,
				  uint64_t now);

/**
 * A channel's wake-up for an irq-mode waiter (lib/poll), for a module whose device has no
 * interrupt of its own (malloc, null): an eventfd written when the first I/O of a batch is
 * ready for the next poll. fd is -1 when closed (a channel made without .interrupts).
 */
struct nvp_bdev_channel_irq {
	int fd;
};

/**
 * Open @irq's eventfd when @opts asks for .interrupts, else leave it closed (fd -1).
 * \return 0, or -errno from eventfd(2) (-EMFILE/-ENFILE: out of file descriptors,
 * -ENOMEM), logged with what to do.
 */
int nvp_bdev_channel_irq_open(struct nvp_bdev_channel_irq *irq,
			      const struct nvp_bdev_channel_opts *opts);

/** Close @irq's eventfd, if open. */
void nvp_bdev_channel_irq_close(struct nvp_bdev_channel_irq *irq);

/** For fn_table.get_irq_fd: the eventfd, or -ENOTSUP when @irq is closed. */
int nvp_bdev_channel_irq_get_fd(const struct nvp_bdev_channel_irq *irq);

/** The out-of-line part of nvp_bdev_channel_irq_notify() (@irq open): write the eventfd
 * if @ready is empty. */
void nvp_bdev_channel_irq_signal(const struct nvp_bdev_channel_irq *irq,
				 const struct nvp_bdev_io_list *ready);

/**
 * Before appending an I/O to @ready (what the next poll completes): wake the waiter if
 * @irq is open and @ready is empty, once per batch rather than per I/O (a wake-up the
 * waiter does not need costs it one poll). Only the open test is inline.
 */
static inline void
nvp_bdev_channel_irq_notify(const struct nvp_bdev_channel_irq *irq,
			    const struct nvp_bdev_io_list *ready)
{
	if (__builtin_expect(irq->fd >= 0, 0)) {
		nvp_bdev_channel_irq_signal(irq, ready);
	}
}

/* ---------------------------------------------------------------------------------------
 * Modules
 * ------------------------------------------------------------------------------------- */

/** What a module does for its bdevs. @ctx is the spec's ctx. */
struct nvp_bdev_fn_table {
	/** The bdev is gone (unregistered and its last descriptor closed): free @ctx. */
	void (*destruct)(void *ctx);
	/** Which operations the bdev does (NULL: read and write only). */
	bool (*io_type_supported)(void *ctx, enum nvp_bdev_io_type type);
	/** On the thread of a new channel: make its per-thread resources (a qpair).
	 * \return 0 and *@ch_ctx, or -errno (the channel is not created). */
	int (*channel_create)(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx);
	/** The channel is destroyed (no I/O of it in the module). */
	void (*channel_destroy)(void *ctx, void *ch_ctx);
	/**
	 * Start @io: its range is valid and within max_xfer_blocks and the boundary. If it
	 * cannot be started, say so with nvp_bdev_io_submit_failed(@io, -errno) before
	 * returning (-ENOMEM: the core sends it again from the poll loop). It may complete
	 * @io (or another I/O of the channel) from inside this call: the core defers that
	 * completion to the channel's next poll (a list operation), so the callback never
	 * runs inside the I/O call; the usual place is poll(). \return 0, which the I/O call
	 * returns.
	 */
	int (*submit)(void *ch_ctx, struct nvp_bdev_io *io);
	/** Find completions: nvp_bdev_io_complete() for each, or nvp_bdev_io_complete_list()
	 * for a batch (one clock read and one accounting pass for all of it). */
	void (*poll)(void *ch_ctx);
	/** The eventfd the channel's interrupt signals (channels created with .interrupts),
	 * or -ENOTSUP. NULL: the module has no interrupts. */
	int (*get_irq_fd)(void *ch_ctx);
	/** Re-arm a level interrupt masked when it fired (uio INTx) before a waiter blocks.
	 * NULL: nothing to do. */
	int (*irq_unmask)(void *ch_ctx);
	/**
	 * The channel is being destroyed with I/O of it in the module (a lost completion, a
	 * device that stopped answering): on the owner thread, outside the channel's poll,
	 * make sure the device no longer touches that I/O's memory and complete each such
	 * I/O with an error status (at the channel's next poll, which the core runs at
	 * once). The channel must stay usable (its callbacks may submit). NULL: destroy
	 * refuses while I/O is in flight.
	 */
	void (*channel_abort)(void *ch_ctx);
	/**
	 * true: submit() never completes an I/O from inside the call (its completions come
	 * from poll() or channel_abort() only), so the core need not mark the channel around
	 * it to defer such completions. false (the zeroed default): it may.
	 */
	bool submit_never_completes;
};

/** A bdev to register. Zero it, then fill it. */
struct nvp_bdev_spec {
	const char *name;        /**< unique; up to NVP_BDEV_NAME_MAX - 1 characters */
	const char *module_name; /**< "malloc", "nvme", your module's name */
	uint32_t block_size;     /**< bytes per block, interleaved metadata included */
	uint32_t md_size;        /**< metadata bytes per block, 0 if none */
	bool md_interleaved;     /**< metadata inside each block (the only kind for now) */
	bool write_cache;        /**< volatile write cache: flush matters */
	uint64_t num_blocks;
	uint32_t max_xfer_blocks;     /**< largest request the module takes, 0 = any */
	uint32_t optimal_io_boundary; /**< split requests crossing multiples of it, 0 = no */
	uint32_t io_ctx_size;         /**< bytes of driver_ctx per bdev_io */
	const struct nvp_bdev_fn_table *fn_table;
	void *ctx; /**< passed to every fn_table call */
};

/**
 * Register a bdev (thread-safe). \return 0 and *@bdev; -EEXIST the name is taken;
 * -EINVAL a bad field of @spec (named in the message); -ENOMEM.
 */
int nvp_bdev_register(const struct nvp_bdev_spec *spec, struct nvp_bdev **bdev);

/**
 * Unregister a bdev nobody has open; fn_table.destruct runs before it returns.
 * \return 0; -EBUSY descriptors are open (message names the bdev and how many).
 */
int nvp_bdev_unregister(struct nvp_bdev *bdev);

/**
 * The device went away or failed: every descriptor gets NVP_BDEV_EVENT_REMOVE (on this
 * thread), new I/O fails with -ENXIO, and the bdev is destructed when its last
 * descriptor closes (now if none is open). The module must complete the I/O it holds
 * (with an error status). Any thread; idempotent.
 */
void nvp_bdev_hot_remove(struct nvp_bdev *bdev);

/**
 * The block count changed: update it and tell every descriptor (RESIZE).
 * \return 0; -EINVAL @bdev NULL or @num_blocks 0.
 */
int nvp_bdev_notify_blockcnt_change(struct nvp_bdev *bdev, uint64_t num_blocks);

/** The spec's ctx of @bdev. */
void *nvp_bdev_get_module_ctx(const struct nvp_bdev *bdev);
/** True once nvp_bdev_hot_remove() ran. */
bool nvp_bdev_is_removed(const struct nvp_bdev *bdev);
/** Descriptors open on @bdev. */
uint32_t nvp_bdev_get_open_count(const struct nvp_bdev *bdev);

/**
 * A module with library-wide state registers itself (usually from a constructor) so
 * that nvp_bdev_fini() can tear it down: @fini runs after every bdev is unregistered.
 */
struct nvp_bdev_module {
	const char *name;
	void (*fini)(void);
	struct nvp_bdev_module *next; /* core only */
};

void nvp_bdev_module_register(struct nvp_bdev_module *module);

/* ---------------------------------------------------------------------------------------
 * Pipeline stage: admission (the writeback throttle)
 *
 * Chosen per bdev with nvp_bdev_set_admission(bdev, name, params). init() runs then, with
 * the device-wide state shared by all channels of the bdev; channel_init() on each new
 * channel's thread. A NULL admit means pass-through ("none" has every hook NULL and
 * costs one predicted branch per I/O).
 * ------------------------------------------------------------------------------------- */

enum nvp_bdev_admit_result {
	NVP_BDEV_ADMIT_GO = 0,    /**< pass on to the scheduler now */
	NVP_BDEV_ADMIT_DEFER = 1, /**< park on the channel's deferred list; ask again later */
};

struct nvp_bdev_admission_ops {
	const char *name;
	/** Device-wide state for @bdev. @params "key=value ..." or NULL. \return 0 or
	 * -EINVAL (log the bad key). */
	int (*init)(struct nvp_bdev *bdev, const char *params, void **bdev_ctx);
	void (*fini)(void *bdev_ctx);
	int (*channel_init)(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx);
	void (*channel_fini)(void *ch_ctx);
	/**
	 * Every new I/O (even while others are deferred: a read may pass deferred
	 * background writes; keep order yourself with nvp_bdev_channel_get_deferred_count()
	 * if you want it), and the head of the deferred list on each poll until it answers
	 * DEFER. @now in ticks. \return NVP_BDEV_ADMIT_GO or NVP_BDEV_ADMIT_DEFER (an int,
	 * not the enum, so that the symbol map generator does not take it for a function).
	 */
	int (*admit)(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now);
	/** Completion of an admitted I/O; @latency = now - io->submit_tick, in ticks. */
	void (*complete)(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now);
};

/** Make @ops selectable by name. \return 0; -EEXIST name taken; -EINVAL no name. */
int nvp_bdev_admission_register(const struct nvp_bdev_admission_ops *ops);

/**
 * The device-wide context init() made for @bdev, if @bdev's admission stage is @ops; else
 * NULL. For a stage's own public calls (state, settings). Valid until the stage of the
 * bdev is changed (which cannot happen while channels exist).
 */
void *nvp_bdev_get_admission_ctx(const struct nvp_bdev *bdev,
				 const struct nvp_bdev_admission_ops *ops);

/** I/Os on @ch's deferred list (for an admission stage keeping order). */
uint32_t nvp_bdev_channel_get_deferred_count(const struct nvp_bdev_channel *ch);

/* ---------------------------------------------------------------------------------------
 * Pipeline stage: scheduling (none, deadline, kyber, fair)
 *
 * Chosen per bdev with nvp_bdev_set_scheduler(). A NULL submit means pass-through
 * ("none"). Otherwise the scheduler owns each I/O from submit() until dispatch() returns
 * it; the core sends what dispatch() returns to the module. The core counts the I/Os the
 * scheduler holds (submitted, not yet dispatched) and asks only while there are some:
 * after every submit() and complete() it calls dispatch() until it returns NULL or has
 * returned them all; when some stay held, it calls dispatch() again from its polls once
 * *next_tick of has_work() (asked then, 0 = now) has come. A scheduler holding nothing is
 * not called at all, so dispatch() must not rely on being called to do other work. An
 * I/O arriving while the scheduler holds none of the channel's goes to submit_direct()
 * instead, when the scheduler has one: submit() and dispatch() in one call, no queue.
 *
 * Times (@now) come from the channel's clock: one read per poll shared by everything
 * the poll completes and submits, a fresh read for a submission outside a poll. A stage
 * wanting an exact time may read nvp_env_get_ticks() itself.
 * ------------------------------------------------------------------------------------- */

struct nvp_bdev_sched_ops {
	const char *name;
	int (*init)(struct nvp_bdev *bdev, const char *params, void **bdev_ctx);
	void (*fini)(void *bdev_ctx);
	int (*channel_init)(void *bdev_ctx, struct nvp_bdev_channel *ch, void **ch_ctx);
	void (*channel_fini)(void *ch_ctx);
	/** Take @io (queue it; use io->stage_next/stage_prev/stage_data). */
	void (*submit)(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now);
	/** The next I/O to send to the device now, or NULL. */
	struct nvp_bdev_io *(*dispatch)(void *ch_ctx, uint64_t now);
	/** An I/O it dispatched completed; @latency = device time in ticks. */
	void (*complete)(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now);
	/** "I have work later": true while it holds I/O; *@next_tick = earliest tick at
	 * which dispatch() may return one (0 = now). Called only after dispatch() returned
	 * NULL while the scheduler held I/O. */
	bool (*has_work)(void *ch_ctx, uint64_t *next_tick);
	/** Optional. @io arrives while the scheduler holds no I/O of this channel: either
	 * let it go now — return true, with the same effect as submit() then a dispatch()
	 * returning @io — or take it as submit() does and return false. */
	bool (*submit_direct)(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now);
	/** Optional, for a scheduler that shares the device between tenants by weight: the
	 * weight of @tenant (1 or more), which the admission stage uses to share its own
	 * budget the same way (see nvp_bdev_get_tenant_weight()). Any thread. Last, so
	 * that initialisers written before it stay valid. */
	uint32_t (*tenant_weight)(void *bdev_ctx, uint32_t tenant);
};

/** Make @ops selectable by name. \return 0; -EEXIST; -EINVAL. */
int nvp_bdev_scheduler_register(const struct nvp_bdev_sched_ops *ops);

/**
 * The weight @bdev's scheduler gives @tenant, for an admission stage that must share its
 * budget as the scheduler shares the device (wbt does: see doc/bdev.md, "How the stages
 * compose"). Any thread. \return 1..1000; 0 when the scheduler does not weight tenants
 * (it has no tenant_weight op) or @tenant is out of range.
 */
uint32_t nvp_bdev_get_tenant_weight(const struct nvp_bdev *bdev, uint32_t tenant);

/** As nvp_bdev_get_admission_ctx(), for the scheduler. */
void *nvp_bdev_get_scheduler_ctx(const struct nvp_bdev *bdev, const struct nvp_bdev_sched_ops *ops);

/* Register a stage from a constructor: NVP_BDEV_SCHEDULER_REGISTER(kyber_ops); */
#define NVP_BDEV_SCHEDULER_REGISTER(ops)                                             \
	__attribute__((constructor)) static void nvp_bdev_sched_register_##ops(void) \
	{                                                                            \
		(void)nvp_bdev_scheduler_register(&(ops));                           \
	}
#define NVP_BDEV_ADMISSION_REGISTER(ops)                                                 \
	__attribute__((constructor)) static void nvp_bdev_admission_register_##ops(void) \
	{                                                                                \
		(void)nvp_bdev_admission_register(&(ops));                               \
	}

/** The bdev, and the module's channel context, of a channel. */
struct nvp_bdev *nvp_bdev_channel_get_bdev(const struct nvp_bdev_channel *ch);

/* ---------------------------------------------------------------------------------------
 * Poll hook: how a poll group waits (the hybrid poller plugs in here)
 * ------------------------------------------------------------------------------------- */

struct nvp_bdev_poll_hook {
	void *ctx;
	/**
	 * Start of every nvp_bdev_poll_group_poll(), before any channel is polled: may sleep
	 * (hybrid: about half the expected completion time of what is outstanding). NULL ok.
	 */
	void (*poll_begin)(void *ctx, struct nvp_bdev_poll_group *group, uint32_t outstanding,
			   uint64_t now);
	/** End of it, with the completions it delivered. NULL ok. */
	void (*poll_end)(void *ctx, struct nvp_bdev_poll_group *group, int completions,
			 uint64_t now);
	/** An I/O of a channel in the group was sent to its module. NULL ok. */
	void (*io_sent)(void *ctx, const struct nvp_bdev_io *io, uint64_t now);
	/** It completed: @device_ticks from sent to completion (statistics by size). */
	void (*io_done)(void *ctx, const struct nvp_bdev_io *io, uint64_t device_ticks,
			uint64_t now);
};

/**
 * Install @hook on @group (NULL removes it); the structure must outlive the group or the
 * next call. Channels added later get it too. \return 0, -EPERM foreign thread.
 */
int nvp_bdev_poll_group_set_hook(struct nvp_bdev_poll_group *group,
				 const struct nvp_bdev_poll_hook *hook);

/**
 * The interrupt eventfds of the group's channels (for a waiter in irq mode), at most @max
 * into @fds. \return how many; -ENOTSUP if a channel has none (its module has no
 * interrupts, or it was created without .interrupts); -ENOSPC more than @max.
 */
int nvp_bdev_poll_group_get_irq_fds(const struct nvp_bdev_poll_group *group, int *fds,
				    uint32_t max);

/**
 * Re-arm every channel's interrupt before blocking on it (uio INTx). \return 0 (a
 * channel whose re-arm fails is polled anyway; no error is returned).
 */
int nvp_bdev_poll_group_irq_unmask(const struct nvp_bdev_poll_group *group);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_BDEV_MODULE_H */
