/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bdev core's private structures: the bdev, the descriptor, the channel (the hot
 * one: pool, pipeline state, accounting) and the poll group. Shared by bdev.c (registry
 * and lifetime), bdev_channel.c (channels, pools, polling, statistics) and bdev_io.c
 * (the I/O calls, splitting and the pipeline). Modules never include this file.
 */
#ifndef NVP_BDEV_INTERNAL_H
#define NVP_BDEV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "nvp_config.h"
#include "nvpoll/bdev.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/env.h"
#include "nvpoll/histogram.h"
#include "nvpoll/util.h"

#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev"
#include "nvpoll/log.h"

/* glibc's sys/queue.h lacks the _SAFE iterator (removal of the current element). */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)                                         \
	for ((var) = TAILQ_FIRST((head)); (var) && ((tvar) = TAILQ_NEXT((var), field), 1); \
	     (var) = (tvar))
#endif

#define BDEV_MODULE_NAME_MAX 32
/* Split children one parent keeps in flight at most (leaves the pool to others). */
#define BDEV_SPLIT_MAX_CHILDREN 32u
#define BDEV_IO_POOL_DEFAULT 512u
#define BDEV_IO_POOL_MAX 65536u

struct nvp_bdev {
	/* ---- read on the I/O path ---- */
	uint32_t block_size;
	uint32_t max_xfer_blocks;
	uint64_t num_blocks;
	uint32_t optimal_io_boundary;
	bool removed;    /* atomic (relaxed) flag: set once by hot remove */
	bool may_split;  /* max_xfer_blocks or optimal_io_boundary set */
	bool accounting; /* atomic (relaxed) flag */
	bool supported[NVP_BDEV_NUM_IO_TYPES];
	const struct nvp_bdev_fn_table *fn;
	void *ctx;
	uint32_t io_ctx_size;

	/* ---- cold: description ---- */
	char name[NVP_BDEV_NAME_MAX];
	char module_name[BDEV_MODULE_NAME_MAX];
	uint32_t md_size;
	bool md_interleaved;
	bool write_cache;

	/* ---- stages (changed only while no channel exists) ---- */
	const struct nvp_bdev_admission_ops *admit_ops;
	void *admit_ctx;
	char *admit_params; /* a copy of what it was given (NULL: none) */
	const struct nvp_bdev_sched_ops *sched_ops;
	void *sched_ctx;
	char *sched_params;

	/* ---- lifetime, under g_bdev_mutex ---- */
	uint32_t open_count;
	uint32_t num_channels;
	bool notifying; /* hot remove is calling event callbacks: close must not free */
	TAILQ_HEAD(, nvp_bdev_desc) descs;
	TAILQ_HEAD(, nvp_bdev_channel) channels;
	struct nvp_bdev_stats *retired; /* statistics of destroyed channels, or NULL */
	TAILQ_ENTRY(nvp_bdev) link;
};

struct nvp_bdev_desc {
	struct nvp_bdev *bdev;
	bool write;
	uint8_t tenant;      /* copied into each bdev_io */
	uint32_t write_hint; /* default hint, as write flag bits (0 = none) */
	nvp_bdev_event_cb event_cb;
	void *event_ctx;
	uint32_t num_channels; /* under g_bdev_mutex */
	TAILQ_ENTRY(nvp_bdev_desc) link;
};

/* Channel mode bits: what the I/O path must do beyond "module submit, callback". */
#define CH_MODE_ACCT 0x1u   /* accounting on: time each I/O, histograms, busy time */
#define CH_MODE_STAGES 0x2u /* an admission or scheduling stage is not "none" */
#define CH_MODE_HOOK 0x4u   /* the poll group has a hook wanting io_sent / io_done */
/* CH_MODE_SPLIT: the bdev has an optimal boundary, so every I/O is checked for a split
 * (a max transfer alone is one compare on the fast path: max_fast_blocks) */
#define CH_MODE_SPLIT 0x8u
/* CH_MODE_MARK: the module may complete inside its submit, so every call into it is
 * marked (module_submit()): it takes io_submit_slow() */
#define CH_MODE_MARK 0x10u
#define CH_MODE_SLOW (CH_MODE_STAGES | CH_MODE_HOOK)

/*
 * The channel's clock (ch->tick): one read of the tick counter per poll, shared by every
 * completion of the poll and every I/O its callbacks submit (blk-mq's cached plug time).
 * Outside a poll each caller reads the clock: a submission made after the application
 * slept must not be stamped with the time of the poll before.
 */
#define CH_TICK_NONE 0u /* outside a poll: read the clock at each use */
#define CH_TICK_LAZY 1u /* in a poll, not read yet: the first use reads and keeps it */

/*
 * Per-operation-type counters of a channel, written by its thread only; one cache line,
 * with its own sequence count: a reader's copy (seq, the line, seq again) touches one
 * line the writer writes, so that it fits between two of the writer's updates.
 */
struct ch_op_stats {
	/* ios and blocks kept apart: side by side, GCC merges their updates into one SSE
	 * add that costs 5 instructions more per I/O (measured at QD1) */
	uint64_t ios;
	uint64_t errors;
	uint64_t blocks; /* bytes / block size: the block size is the bdev's, fixed */
	uint64_t busy_ticks;
	uint64_t inflight;
	uint64_t busy_start;        /* tick inflight went 0 -> 1 (accounting on) */
	struct nvp_histogram *hist; /* [0] queued, [1] device time (set at creation); no
				     * count kept (ch_hist_record()) */
	uint32_t seq;               /* odd while the counters above are being updated */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct ch_op_stats) == 64, "ch_op_stats: one cache line");

/*
 * bdev_io internal.state: bits saying which rare path an I/O is on. A free bdev_io and
 * one on the fast path (no stage, no hook, not split) have none, so that completion
 * tests a single byte; whoever sets a bit clears it before the I/O goes back to the pool.
 */
#define IO_STATE_STAGED 0x1u /* went down the pipeline: its completion goes back up it */
#define IO_STATE_CHILD 0x2u  /* a split child: internal.parent is valid */
#define IO_STATE_SPLIT 0x4u  /* a split parent: its children go down, not itself */
/* sent untimed (accounting off), in flight when accounting came on (untimed_mark()): its
 * completion takes the slow path, which counts it without a time */
#define IO_STATE_UNTIMED 0x8u

/* A singly linked FIFO of bdev_ios through internal.next. */
struct io_list {
	struct nvp_bdev_io *head;
	struct nvp_bdev_io *tail;
	uint32_t count;
};

struct nvp_bdev_channel {
	/* ---- hot: every I/O, one cache line ---- */
	struct nvp_bdev_io *free_ios; /* pool: LIFO stack through internal.next */
	struct nvp_bdev_desc *desc;
	uint64_t num_blocks; /* the bdev's (atomic: a resize changes it under the lock) */
	int (*mod_submit)(void *ch_ctx, struct nvp_bdev_io *io); /* the module's submit */
	void *module_ch;
	struct nvp_bdev_io_wait_entry *wait_head;
	uint64_t tick;  /* CH_TICK_NONE, CH_TICK_LAZY or this poll's tick */
	uint8_t mode;   /* CH_MODE_* */
	bool ticks_tsc; /* nvp_env_get_ticks() is the TSC: read it inline (no call) */
	union {
		struct {
			bool pending_work; /* a list below non-empty, a scheduler holds I/O, or
					    * io_wait entries wait */
			bool mode_dirty;   /* atomic: the bdev's accounting switch changed */
			bool in_fast_poll; /* nvp_bdev_channel_poll()'s fast path runs: a poll
					    * nested in its callbacks takes the full one */
			uint8_t rsvd;
		};
		uint32_t attention; /* any: one load in the poll */
	};
	uint16_t allowed; /* atomic: bit per type the channel may send (supported,
			       * writable descriptor, bdev not removed) */

	/* ---- hot: every I/O or poll, second line ---- */
	union {
		struct {
			bool in_submit; /* inside module submit: completions go to the done
					 * list */
			bool waiters;   /* io_wait entries wait (wait_head not NULL) */
		};
		uint16_t cpl_slow; /* either: completions take the slow paths (one load:
				    * 1 instruction fewer per I/O at QD1, bench/bdev_overhead) */
	};
	uint64_t completed;       /* user callbacks delivered */
	uint32_t sched_held;      /* I/Os the scheduler took and has not dispatched yet */
	uint32_t block_size;      /* the bdev's */
	uint32_t poll_depth;      /* polls of this channel running (nested in callbacks: > 1) */
	uint32_t max_fast_blocks; /* the bdev's max transfer (none: UINT32_MAX), 0 while
				   * the mode has more than CH_MODE_ACCT: a longer I/O takes
				   * io_submit_slow() (bdev_channel_update_mode() sets it) */
	void (*mod_poll)(void *ch_ctx); /* the module's poll */
	struct nvp_bdev *bdev;
	uint64_t poll_from; /* completed when the fast poll running began */

	/* ---- accounting (writer: this thread; readers: nvp_bdev_get_stats) ---- */
	struct ch_op_stats op[NVP_BDEV_NUM_IO_TYPES] __attribute__((aligned(64)));
	struct nvp_histogram *hist; /* [type * 2 + 0] queued, [type * 2 + 1] device */

	/* ---- pipeline (stages, hook) ---- */
	const struct nvp_bdev_admission_ops *admit_ops;
	void *admit_ch;
	const struct nvp_bdev_sched_ops *sched_ops;
	void *sched_ch;
	uint64_t sched_next; /* has_work()'s next_tick while the scheduler holds I/O */
	const struct nvp_bdev_poll_hook *hook;
	struct io_list deferred; /* admission said DEFER */
	struct io_list retry;    /* module said -ENOMEM */
	struct io_list done;     /* completed inside or failed in module submit, or a split
				  * sending nothing */
	struct nvp_bdev_io_wait_entry *wait_tail;

	/* ---- cold ---- */
	pthread_t owner;
	struct nvp_bdev_poll_group *group;
	TAILQ_ENTRY(nvp_bdev_channel) group_link;
	TAILQ_ENTRY(nvp_bdev_channel) bdev_link;
	void *pool_mem;
	uint32_t pool_size;
	size_t io_size;
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct nvp_bdev_channel, op) == 128, "nvp_bdev_channel: two hot lines");
_Static_assert(NVP_BDEV_NUM_IO_TYPES <= 16, "nvp_bdev_channel: allowed, a bit per type");

struct nvp_bdev_poll_group {
	TAILQ_HEAD(, nvp_bdev_channel) channels;
	const struct nvp_bdev_poll_hook *hook;
	pthread_t owner;
};

/* bdev.c */
void bdev_lock(void);
void bdev_unlock(void);
bool bdev_desc_is_open(const struct nvp_bdev_desc *desc);
bool bdev_channel_exists(const struct nvp_bdev_channel *ch);
const struct nvp_bdev_admission_ops *bdev_admission_none(void);
const struct nvp_bdev_sched_ops *bdev_sched_none(void);

/* bdev_channel.c */
uint64_t bdev_channel_now_call(struct nvp_bdev_channel *ch);
uint16_t bdev_channel_allowed(const struct nvp_bdev_channel *ch);
void bdev_channel_retire_stats(struct nvp_bdev_channel *ch);
void bdev_channel_update_mode(struct nvp_bdev_channel *ch);
void bdev_run_io_waiters(struct nvp_bdev_channel *ch);
/* A poll with work for the core too (deferred, retried, waiters, the mode); never
 * inlined into the fast poll, which is bdev_io.c's nvp_bdev_channel_poll(). */
int bdev_channel_poll_full(struct nvp_bdev_channel *ch);

/* bdev_io.c */
int bdev_channel_poll_slow(struct nvp_bdev_channel *ch);

/* A channel belongs to the thread that created it (checked in debug builds only: the
 * check is a TLS read and a compare per call). */
static inline int
bdev_check_owner(pthread_t owner, const char *what)
{
#if NVP_CONFIG_DEBUG
	if (nvp_unlikely(!pthread_equal(owner, pthread_self()))) {
		NVP_ERRLOG("%s used from a thread that does not own it; a channel or poll group "
			   "belongs to the thread that created it",
			   what);
		return -EPERM;
	}
#else
	(void)owner;
	(void)what;
#endif
	return 0;
}

/* Operation types that change data (need a writable descriptor). */
static inline bool
io_type_writes(uint8_t type)
{
	return type == NVP_BDEV_IO_WRITE || type == NVP_BDEV_IO_WRITE_ZEROES ||
	       type == NVP_BDEV_IO_UNMAP || type == NVP_BDEV_IO_FLUSH;
}

/*
 * User I/Os (parents) accepted: each is counted in flight of its type when accepted and
 * moves to that type's ios when accounted, so the sum is the count with no counter of
 * its own (1 instruction fewer per I/O, bench/bdev_overhead). Relaxed loads: another
 * thread may read it (nvp_bdev_close()'s message).
 */
static inline uint64_t
ch_accepted(const struct nvp_bdev_channel *ch)
{
	uint64_t n = 0;
	size_t t;

	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		n += __atomic_load_n(&ch->op[t].ios, __ATOMIC_RELAXED) +
		     __atomic_load_n(&ch->op[t].inflight, __ATOMIC_RELAXED);
	}
	return n;
}

/* User I/Os accepted and not completed yet (callback not run). */
static inline uint32_t
ch_outstanding(const struct nvp_bdev_channel *ch)
{
	return (uint32_t)(ch_accepted(ch) - __atomic_load_n(&ch->completed, __ATOMIC_RELAXED));
}

static inline void
bdev_io_release(struct nvp_bdev_channel *ch, struct nvp_bdev_io *io)
{
	io->internal.next = ch->free_ios;
	ch->free_ios = io;
}

static inline void
io_list_append(struct io_list *l, struct nvp_bdev_io *io)
{
	io->internal.next = NULL;
	if (l->tail != NULL) {
		l->tail->internal.next = io;
	} else {
		l->head = io;
	}
	l->tail = io;
	l->count++;
}

static inline struct nvp_bdev_io *
io_list_pop(struct io_list *l)
{
	struct nvp_bdev_io *io = l->head;

	if (io != NULL) {
		l->head = io->internal.next;
		if (l->head == NULL) {
			l->tail = NULL;
		}
		l->count--;
	}
	return io;
}

/*
 * The read of the clock behind ch_now(): outside a poll every time, in a poll once.
 * Inline (one rdtsc) where the ticks are the TSC; another clock is a call.
 */
static inline uint64_t
ch_now_read(struct nvp_bdev_channel *ch, uint64_t state)
{
	uint64_t now;

	if (nvp_unlikely(!ch->ticks_tsc)) {
		return bdev_channel_now_call(ch);
	}
	now = nvp_tsc_read();
	if (state == CH_TICK_LAZY) {
		ch->tick = now;
	}
	return now;
}

/* The time for whoever on the channel needs one (see CH_TICK_NONE). */
static inline uint64_t
ch_now(struct nvp_bdev_channel *ch)
{
	uint64_t t = ch->tick;

	if (nvp_likely(t > CH_TICK_LAZY)) {
		return t;
	}
	return ch_now_read(ch, t);
}

/*
 * Count one @value in a channel's histogram: nvp_histogram_record() without the count,
 * which the buckets hold already and the reader sums (ch_hist_fold(), bdev_channel.c):
 * 1 instruction fewer per I/O (bench/bdev_overhead). A channel's histograms never have
 * a count of their own; a reader also sees count and buckets agree.
 */
static inline void
ch_hist_record(struct nvp_histogram *h, uint64_t value)
{
	h->sum_hi += __builtin_add_overflow(h->sum_lo, value, &h->sum_lo); /* carry */
	h->buckets[nvp_histogram_bucket_index64(value)]++;
	if (value < h->min) {
		h->min = value;
	}
	if (value > h->max) {
		h->max = value;
	}
}

/* Seqcount writer side: the counters change between begin and end (readers copy them
 * and retry while the count is odd or has moved). */
static inline void
op_stats_begin(struct ch_op_stats *op)
{
	nvp_seq_inc_local(&op->seq);
	nvp_smp_wmb();
}

static inline void
op_stats_end(struct ch_op_stats *op)
{
	nvp_smp_wmb();
	nvp_seq_inc_local(&op->seq);
}

#endif /* NVP_BDEV_INTERNAL_H */
