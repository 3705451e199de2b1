/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * How a thread waits for its I/O: a per-thread waiter over the thread's completion
 * sources (raw qpairs, and bdev poll groups through nvp_poll_waiter_add_source()).
 *
 * Modes, after the kernel's io_poll_delay:
 *  - classic (-1): spin on the completion queues;
 *  - hybrid (0): adaptive. Completion times are kept per (opcode, log2 size) bucket, in
 *    ticks, per thread, refreshed in windows (100 ms). A request whose bucket has no
 *    statistics yet is spun for. Otherwise the thread sleeps once, until the earliest
 *    in-flight request is predicted to be near completion, minus what a sleep costs here
 *    (measured at creation, then tracked), and spins from there. No sleep when that is
 *    shorter than the cost of a sleep. Completions found at the first poll after a sleep
 *    count as oversleep and enter the statistics as what was predicted for them, never
 *    as the wake-up time: the sleeper must not feed on its own lateness (what made the
 *    kernel's 5.10 hybrid mode worse than interrupts in a VM); one request in 32 is spun
 *    for, and when it beats the prediction by a quarter the bucket is relearnt, so a
 *    device that got faster is noticed. Predictors:
 *    "hybrid:mean" sleeps to half the mean (the kernel's rule), "hybrid:pN" to the N-th
 *    percentile (default "hybrid" = hybrid:p10);
 *  - fixed:<us> (>0): sleep that long after each submission (once per request), spin;
 *  - irq: block in poll()/epoll_wait() on the sources' interrupt eventfds, at most 10 ms
 *    at a time (a lost interrupt costs a slow poll, never a hang);
 *  - umwait: hybrid, but wait with TPAUSE (WAITPKG) instead of a timer sleep; only where
 *    cpuid says the CPU has WAITPKG (nvp_poll_waitpkg_supported()).
 *
 * Use: create a waiter on the thread that owns the qpairs, add them, call
 * nvp_poll_req_start() when submitting and nvp_poll_req_done() in the completion callback
 * (the waiter sleeps only for requests it knows about), and nvp_poll_waiter_wait() where
 * the thread would otherwise spin on process_completions(). A waiter belongs to one
 * thread; nothing in it is locked, nothing allocated after creation.
 */
#ifndef NVPOLL_POLL_H
#define NVPOLL_POLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nvp_poll_mode {
	NVP_POLL_CLASSIC = 0,
	NVP_POLL_HYBRID,
	NVP_POLL_FIXED,
	NVP_POLL_IRQ,
	NVP_POLL_UMWAIT,
};

/** Options of a waiter. Initialise with nvp_poll_opts_init(). */
struct nvp_poll_opts {
	size_t opts_size;
	enum nvp_poll_mode mode;
	uint32_t fixed_us;     /**< fixed: sleep per request, µs (> 0) */
	uint32_t pct;          /**< hybrid: percentile predictor 1..99, 0 = half the mean */
	uint32_t window_ms;    /**< hybrid: statistics window (default 100) */
	uint32_t min_samples;  /**< hybrid: samples a bucket needs in a window (default 8) */
	uint32_t max_sources;  /**< sources one waiter can hold (default 64) */
	bool calibrate;        /**< measure the wake-up cost at creation (default true) */
	uint64_t wake_cost_ns; /**< used when !calibrate (and as a floor), default 0 */
};

/** Statistics of one waiter; counters only grow. */
struct nvp_poll_stats {
	size_t info_size;         /**< set by the caller: sizeof(struct nvp_poll_stats) */
	uint64_t polls;           /**< passes over the sources */
	uint64_t spins;           /**< passes that found nothing */
	uint64_t sleeps;          /**< timer sleeps (hybrid, fixed) and TPAUSE waits (umwait) */
	uint64_t sleep_ns;        /**< time asked to sleep */
	uint64_t sleep_late_ns;   /**< timer lateness: woke after the deadline by this much */
	uint64_t oversleeps;      /**< sleeps after which a completion was already there */
	uint64_t irq_waits;       /**< blocking waits for an interrupt */
	uint64_t irq_timeouts;    /**< of which none came within 10 ms (polled anyway) */
	uint64_t samples;         /**< completion times recorded */
	uint64_t samples_skipped; /**< found after a sleep (recorded as predicted) or an
				   * interrupt (left out) */
	uint64_t relearns;        /**< predictions replaced by a probe that beat them by a
				   * quarter (the device got faster) */
	uint64_t wake_cost_ns;    /**< the current estimate of what a sleep costs */
	uint64_t wake_probes;     /**< short sleeps taken only to re-measure that cost (hybrid
				   * had declined every sleep for 50 ms) */
	uint64_t wait_ns;         /**< time inside nvp_poll_waiter_wait() (first pass to last) */
	uint64_t slept_ns;        /**< of which asleep or blocked; the rest was spent polling */
	uint64_t sleep_cpu_ns;    /**< CPU time one timer sleep costs this thread (entering,
				   * leaving the kernel, the timer): the mean over one sleep in
				   * 16, measured; the calibration's figure before any. No
				   * strategy that sleeps once per request uses less CPU per
				   * request than this. */
};

/** Fill @opts with the defaults (classic). */
void nvp_poll_opts_init(struct nvp_poll_opts *opts, size_t opts_size);

/**
 * Parse a mode: "classic", "hybrid", "hybrid:mean", "hybrid:pN", "fixed:N" (µs),
 * "irq", "umwait" into @opts (other fields untouched).
 * \return 0, or -EINVAL for anything else.
 */
int nvp_poll_mode_parse(const char *str, struct nvp_poll_opts *opts);

/** "classic", "hybrid", "fixed", "irq", "umwait". */
const char *nvp_poll_mode_name(enum nvp_poll_mode mode);

/** Does this CPU have WAITPKG (umwait/tpause)? From cpuid leaf 7; never faults. */
bool nvp_poll_waitpkg_supported(void);

/**
 * A completion source: something the waiter polls and, for irq mode, whose interrupt it
 * can block on. Raw qpairs are added with nvp_poll_waiter_add_qpair(); a bdev poll group
 * supplies these two functions.
 */
struct nvp_poll_source_ops {
	/** Process completions. \return how many, or -errno (the waiter returns it). */
	int32_t (*poll)(void *ctx);
	/** The eventfd its interrupt signals, or -ENOTSUP. May be NULL (no interrupts). */
	int (*get_irq_fd)(void *ctx);
	/** Re-arm the interrupt before the waiter blocks; may be NULL (nothing to do). */
	int (*irq_unmask)(void *ctx);
};

struct nvp_poll_waiter;
struct nvp_nvme_qpair;

/**
 * Create a waiter for the calling thread. Hybrid and umwait modes measure the wake-up
 * cost here (about 2 ms) unless opts->calibrate is false; the thread's timer slack is set
 * to 1 ns (PR_SET_TIMERSLACK).
 * \return 0, -EINVAL bad options, -ENOTSUP umwait without WAITPKG, -ENOMEM.
 */
int nvp_poll_waiter_create(const struct nvp_poll_opts *opts, struct nvp_poll_waiter **waiter);

void nvp_poll_waiter_destroy(struct nvp_poll_waiter *waiter);

/**
 * Switch mode (and its parameters) now, even with requests in flight: nothing is lost,
 * statistics are kept. \return 0, -EINVAL, -ENOTSUP (umwait without WAITPKG, or irq with a
 * source that has no interrupt).
 */
int nvp_poll_waiter_set_mode(struct nvp_poll_waiter *waiter, const struct nvp_poll_opts *opts);

/**
 * Add a raw qpair (polled with nvp_nvme_qpair_process_completions()).
 * \return 0, -ENOSPC (max_sources), -ENOTSUP in irq mode when the qpair has no interrupt.
 */
int nvp_poll_waiter_add_qpair(struct nvp_poll_waiter *waiter, struct nvp_nvme_qpair *qpair);

/**
 * Add another kind of source (bdev poll groups). \return 0; -EINVAL NULL argument;
 * -ENOSPC (max_sources); -ENOTSUP in irq mode when the source has no interrupt.
 */
int nvp_poll_waiter_add_source(struct nvp_poll_waiter *waiter,
			       const struct nvp_poll_source_ops *ops, void *ctx);

struct nvp_bdev_poll_group;

/**
 * Add a bdev poll group: the waiter polls it (nvp_bdev_poll_group_poll()), blocks on its
 * channels' interrupts in irq mode (channels created with .interrupts), and learns every
 * I/O the group sends to a module through the group's poll hook, which this installs
 * (replacing any other): no nvp_poll_req_start()/done() calls for bdev I/O. The hybrid
 * statistics are the device times the bdev layer measures for each bdev_io (split
 * children count at their own size). Add the group's channels first: one added later is
 * polled and tracked, but its interrupt is not waited on. Destroy the waiter before the
 * group (destroying it removes the hook).
 * @max_inflight: I/Os of the group the waiter tracks at once (0 = 1024); past that an I/O
 * is counted but untracked, and the waiter spins until it completes.
 * \return 0, -EINVAL, -ENOSPC (max_sources, or more than 64 channels in irq mode),
 * -ENOTSUP in irq mode when a channel has no interrupt, -ENOMEM, -EPERM (foreign thread).
 */
int nvp_poll_waiter_add_bdev_group(struct nvp_poll_waiter *waiter,
				   struct nvp_bdev_poll_group *group, uint32_t max_inflight);

/** A request the waiter knows about; embed it in the caller's per-request context. */
struct nvp_poll_req {
	uint64_t start; /**< ticks at submission */
	uint64_t due;   /**< predicted wake-up target, 0 = unknown (spin for it) */
	uint16_t bucket;
	bool probe; /**< spun for, to keep the statistics honest */
	TAILQ_ENTRY(nvp_poll_req) link;
};

/** A request of opcode @opc and @bytes was submitted now. */
void nvp_poll_req_start(struct nvp_poll_waiter *waiter, struct nvp_poll_req *req, uint8_t opc,
			uint32_t bytes);

/** The request completed (call from its completion callback). */
void nvp_poll_req_done(struct nvp_poll_waiter *waiter, struct nvp_poll_req *req);

/**
 * Wait by the waiter's mode until at least one completion was processed.
 * \return completions processed (> 0), 0 if no known request is in flight (after one
 * pass over the sources), or a source's -errno (a qpair's -ENXIO: the controller
 * failed; -EPERM: not the owner thread, debug builds).
 */
int nvp_poll_waiter_wait(struct nvp_poll_waiter *waiter);

/**
 * One pass over the sources without waiting. \return completions (>= 0), or a source's
 * -errno as nvp_poll_waiter_wait() (-ENXIO, -EPERM).
 */
int nvp_poll_waiter_poll(struct nvp_poll_waiter *waiter);

/**
 * Copy the waiter's counters into @stats; the caller sets stats->info_size first.
 * The waiter's thread only. \return 0; -EINVAL NULL argument or a too small info_size.
 */
int nvp_poll_waiter_get_stats(const struct nvp_poll_waiter *waiter, struct nvp_poll_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_POLL_H */
