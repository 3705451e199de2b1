/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * The writeback throttle ("wbt"): the bdev pipeline's admission stage that keeps
 * background writes from starving reads, after the Linux block layer's blk-wbt.
 *
 * Writes carry a class in their flags (NVP_BDEV_WRITE_BACKGROUND, _NORMAL, _SYNC; see
 * bdev.h). All threads writing to one bdev share one budget of writes in flight: sync
 * writes may fill it, normal writes half of it, background writes a quarter (the
 * kernel's split: depth, (depth + 1) / 2, (depth + 3) / 4). Reads, flushes and compares
 * are never throttled; unmaps count as background writes.
 *
 * The budget is steered CoDel-style: in windows (100 ms by default), the minimum latency
 * of the reads completed in the window is compared with a target (2 ms by default, for
 * flash). Over target, the scale step goes up (from below zero straight to zero, as the
 * kernel's hard throttle does) and the depth becomes 1 + ((depth - 1) >> step); the window shortens to window / sqrt(step + 1) so that
 * recovery is checked more often. Under target, the step comes back down (below zero,
 * the depth grows past its base, up to 4x, while only writes are seen). A read that has
 * waited longer than a window, or longer than the target while no read completed at
 * all, counts as over target. Windows with too few samples keep the step; five of them
 * in a row move it one step back toward zero. Every change is logged at debug level
 * with its reason.
 *
 * A write over budget is never slept on: the bdev core parks it on the channel's
 * deferred list and asks again from the poll loop. Writes of one class leave that list
 * in the order they came (a class never overtakes itself); a sync write does not wait
 * behind deferred background writes, but a waiting write is passed by at most 8 writes
 * of higher classes before its class is owed the next slot: no class starves.
 *
 * Enable it on a bdev before creating channels:
 *
 *     nvp_bdev_set_admission(bdev, "wbt", "lat_us=2000");
 *
 * Under a scheduler that weights tenants ("fair": nvp_bdev_get_tenant_weight()), the
 * budget is shared by the same weights among the tenants with writes waiting: when a
 * slot frees, the write of the tenant with the least virtual time (bytes / weight) goes.
 * See doc/bdev.md, "How the stages compose".
 *
 * Parameters ("key=value", comma or space separated): lat_us (target; 0 = throttle off,
 * like the kernel's wbt_lat_usec), window_ms (1..10000; 100), depth (the budget at step
 * 0, 1..65536; 16, the kernel's RWB_DEF_DEPTH); for the sharing between tenants, lag_kib
 * (4..1048576; 128: how far ahead of the others, in KiB at weight 1, a tenant may be when
 * it starts waiting) and stale_us (1..10000000; 1000: a tenant not heard of for longer
 * holds nobody back, and starts level when it comes back).
 */
#ifndef NVPOLL_WBT_H
#define NVPOLL_WBT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvp_bdev;

#define NVP_WBT_DEFAULT_LAT_US 2000u
#define NVP_WBT_DEFAULT_WINDOW_MS 100u
#define NVP_WBT_DEFAULT_DEPTH 16u

/** What the throttle of one bdev is doing. Times in microseconds. */
struct nvp_wbt_info {
	size_t info_size;          /**< set by the caller: sizeof(struct nvp_wbt_info) */
	uint64_t target_us;        /**< 0 = throttle off */
	uint64_t window_us;        /**< the current window (shortened while stepped up) */
	int32_t step;              /**< scale step: > 0 throttled, < 0 boosted */
	uint32_t base_depth;       /**< budget at step 0 */
	uint32_t limit_background; /**< writes in flight each class may reach now */
	uint32_t limit_normal;
	uint32_t limit_sync;
	uint32_t inflight;         /**< tracked writes in flight, all threads */
	uint64_t windows;          /**< windows evaluated */
	uint64_t steps_up;         /**< times the step went up (latency over target) */
	uint64_t steps_down;       /**< times it came down */
	uint64_t last_min_read_us; /**< minimum read latency of the last window with reads */
	uint64_t throttled;        /**< writes deferred at least once, all channels */
	uint64_t deferred_us;      /**< time those writes spent deferred, summed */
	uint32_t deferred_now;     /**< writes waiting on deferred lists now */
};

/**
 * Read the state of @bdev's throttle. Any thread; no lock the I/O path takes.
 * \return 0; -ENOENT the bdev's admission stage is not "wbt"; -EINVAL NULL or a too
 * small info_size.
 */
int nvp_bdev_wbt_get_info(struct nvp_bdev *bdev, struct nvp_wbt_info *info);

/**
 * Change the latency target while I/O runs (0 turns throttling off, and every limit is
 * lifted at once). \return 0; -ENOENT the stage is not "wbt"; -EINVAL over 10 s.
 */
int nvp_bdev_wbt_set_target(struct nvp_bdev *bdev, uint64_t lat_us);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_WBT_H */
