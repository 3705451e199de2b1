/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * I/O schedulers for the bdev pipeline's scheduling stage, chosen per bdev by name:
 *
 *     nvp_bdev_set_scheduler(bdev, "kyber", "read_lat_us=1000");
 *
 * - **none**: pass-through, FIFO, costs one predicted branch (the bdev core's).
 * - **deadline** (after mq-deadline): per-thread read and write FIFOs, dispatched in
 *   batches of fifo_batch from one direction; writes wait at most writes_starved read
 *   batches; a direction whose oldest request has passed its expiry (read_expire_ms,
 *   write_expire_ms) is served next, ending the current batch. No sorting by LBA: NVMe
 *   has no seek to save. At most depth requests are at the device, over all threads.
 *   Parameters: read_expire_ms (500), write_expire_ms (5000), fifo_batch (16),
 *   writes_starved (2), depth (64).
 * - **kyber** (after Kyber): four domains, read / write / discard / other, each with a
 *   device-wide token depth (at most 256 / 128 / 64 / 16). Latencies are kept per domain
 *   in 8 buckets a quarter of the domain's target wide; once a window has enough samples
 *   (500, or one second), if any domain's device latency at congest_pct (p99) is over its
 *   target the device is congested and every domain's depth is scaled by (p99 bucket +
 *   1) / 4 — shrinking domains under target, growing those over it — and cut to at most
 *   half in every domain with a looser target than a congested one; without congestion
 *   only domains over target grow. Parameters: read_lat_us (2000), write_lat_us
 *   (10000), discard_lat_us (5000000), window_ms (100), congest_pct (99; Linux: 90).
 * - **fair**: weighted fair sharing between tenants (nvp_bdev_desc_set_tenant()), with
 *   budgets in bytes: each tenant's virtual time advances by bytes / weight as its
 *   requests are dispatched, and a tenant may dispatch only while its virtual time is
 *   within lag_kib of the least advanced tenant that has work (WF2Q+'s eligibility,
 *   shared across threads through atomics; a thread adds what its dispatches cost in
 *   batches of at most lag_kib / 8, so others see it at most that far behind). A tenant that goes idle does not bank
 *   credit; none is kept waiting for another that has nothing to do (no idling), nor for
 *   one whose threads have not polled for stale_us (only a tenant's own threads can
 *   dispatch its requests). At most
 *   depth requests are at the device. A device serves what it holds about in arrival
 *   order, so while two or more tenants have requests outstanding each may have at most
 *   ceil(weight x S) at the device, S the largest outstanding / weight of the tenants
 *   that keep no more than their weight's share of the depth (a tenant limited by its
 *   own queue depth sets the scale for the others; some of the depth may then stay
 *   empty, BFQ's idling in depth); a tenant alone, or tenants all over their share, get
 *   the whole depth (inflight_cap=0: no caps). Beyond BFQ, an optional per-tenant
 *   latency target (io.latency-like, lat_us.N): while tenant N's device latency is over
 *   it, tenants without a target get half the depth. Parameters: weights
 *   (slash-separated weights of tenants 0, 1, 2, ...; 1 each), lag_kib (512), depth
 *   (64), stale_us (1000), inflight_cap (1; 0 or 1), lat_us.N (0 = none).
 *
 * Device-wide state (tokens, depths, virtual times) is shared by all threads using the
 * bdev through atomics, never a lock on the I/O path. The scheduler of a bdev changes
 * only while it has no channel (nvp_bdev_set_scheduler() returns -EBUSY otherwise), so a
 * switch always follows a drain: the channels' I/O has completed when they are
 * destroyed.
 */
#ifndef NVPOLL_SCHED_H
#define NVPOLL_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpoll/bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kyber's scheduling domains, in the order of nvp_sched_info.kyber_depth. */
enum nvp_sched_kyber_domain {
	NVP_SCHED_KYBER_READ = 0,
	NVP_SCHED_KYBER_WRITE = 1,
	NVP_SCHED_KYBER_DISCARD = 2,
	NVP_SCHED_KYBER_OTHER = 3,
	NVP_SCHED_KYBER_NUM_DOMAINS
};

/** What a bdev's scheduler is doing. Fields of other schedulers are zero. */
struct nvp_sched_info {
	size_t info_size;  /**< set by the caller: sizeof(struct nvp_sched_info) */
	char name[16];     /**< "none", "deadline", "kyber", "fair" */
	uint32_t inflight; /**< dispatched to the device, not completed, all threads */
	uint32_t depth;    /**< deadline, fair: dispatch limit now */
	uint64_t dispatched;
	/* deadline */
	uint64_t expired;        /**< dispatches made because a head had expired */
	uint64_t starved_writes; /**< write batches forced by writes_starved */
	/* kyber */
	uint32_t kyber_depth[NVP_SCHED_KYBER_NUM_DOMAINS];
	uint64_t kyber_windows;   /**< windows evaluated */
	uint64_t kyber_congested; /**< windows found congested */
	/* fair */
	uint32_t tenant_weight[NVP_BDEV_MAX_TENANTS];
	uint64_t tenant_bytes[NVP_BDEV_MAX_TENANTS]; /**< dispatched bytes per tenant */
	uint64_t tenant_ios[NVP_BDEV_MAX_TENANTS];
};

/**
 * Read the state of @bdev's scheduler. Any thread. \return 0; -EINVAL NULL or a too
 * small info_size.
 */
int nvp_bdev_sched_get_info(struct nvp_bdev *bdev, struct nvp_sched_info *info);

/**
 * Set tenant @tenant's weight (1 .. 1000) under @bdev's "fair" scheduler, while I/O runs.
 * \return 0; -ENOENT the scheduler is not "fair"; -EINVAL out of range.
 */
int nvp_bdev_sched_fair_set_weight(struct nvp_bdev *bdev, uint32_t tenant, uint32_t weight);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_SCHED_H */
