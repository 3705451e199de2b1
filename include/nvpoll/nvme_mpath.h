/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * NVMe multipath with Asymmetric Namespace Access (ANA): one namespace of one NVM
 * subsystem reached through several controllers, one per transport ID (a path each), as
 * SPDK's bdev_nvme multipath (one nvme_bdev over several nvme_ctrlrs) and Linux's native
 * multipath (an ns_head over controllers) do it.
 *
 * Policies (SPDK's names): "failover" sends every I/O down one path and keeps it until
 * that path fails or stops being the best kind there is (an optimized path is preferred to
 * a non-optimized one); "multipath" spreads I/O round-robin over the optimized paths, or
 * the non-optimized ones when no optimized path is usable. A path is usable while its
 * controller is connected and its ANA state (for the namespace's group, read from the ANA
 * log page, log id 0Ch, at attach, after a reconnect and on an ANA change notice) is
 * optimized or non-optimized; inaccessible, persistent loss and change paths are skipped.
 * A controller without ANA reporting (CMIC bit 3 clear) counts as optimized.
 *
 * Path errors: an I/O completing with a path-related status (SCT 3h, DNR clear: ANA
 * Persistent Loss / Inaccessible / Transition, Host Pathing Error, Aborted by Host), or
 * ABORTED SQ DELETION (DNR clear) from a controller that lost its connection, is sent
 * again on another usable path at the end of the nvp_nvme_mpath_io_process_completions()
 * that found it; the caller sees one completion per request, never two. An ANA status
 * also marks the path with that state at once and has its log re-read. While no path is
 * usable a request waits (opts.no_path_timeout_ms, then it completes with the last error
 * it got); one that meets path errors twice as often as there are paths (on paths that
 * stay usable) completes with its last one.
 *
 * Reconnect: the path controllers run with the driver's own reconnect off
 * (ctrlr_loss_timeout_sec 0) so that the requests of a lost connection come back at once
 * and go to another path; nvp_nvme_mpath_process_admin_completions() resets a failed path
 * every opts.reconnect_delay_ms until it is back, then reads its ANA log again.
 *
 * Threads: the admin poll (nvp_nvme_mpath_process_admin_completions()) runs on one thread
 * at a time, any; it never waits for an admin command: a path's reset and its ANA log
 * reads go a step per admin poll of the thread that began them (up to their next wait for
 * an answer), and other threads' admin polls pass that path by until they end. A thread
 * that begins one must go on calling the admin poll, or free its I/O handle or detach
 * (both run the thread's unfinished steps to their end, each bounded by the path's
 * admin_timeout_ms). An I/O handle
 * (nvp_nvme_mpath_io) belongs to the thread that allocated it, like a qpair: it holds one
 * I/O qpair per path. The path controllers' asynchronous event callbacks belong to this
 * layer (nvp_nvme_ctrlr_register_aer_callback() on them replaces it).
 */
#ifndef NVPOLL_NVME_MPATH_H
#define NVPOLL_NVME_MPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpoll/nvme.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvp_nvme_mpath;
struct nvp_nvme_mpath_io;

/** Most paths one multipath controller has. */
#define NVP_NVME_MPATH_MAX_PATHS 8u

enum nvp_nvme_mpath_policy {
	NVP_NVME_MPATH_FAILOVER = 0, /**< one active path, another on its failure */
	NVP_NVME_MPATH_MULTIPATH,    /**< round-robin over the optimized paths */
};

/** Options; initialise with nvp_nvme_mpath_opts_init(). */
struct nvp_nvme_mpath_opts {
	size_t opts_size;
	enum nvp_nvme_mpath_policy policy; /**< failover */
	uint32_t nsid;                     /**< the namespace; 0 = the first active one */
	uint32_t reconnect_delay_ms;       /**< between resets of a failed path; 1000 */
	uint32_t no_path_timeout_ms;       /**< a request waits this long for a usable path,
					    * then completes with its last error; 30000 */
};

void nvp_nvme_mpath_opts_init(struct nvp_nvme_mpath_opts *opts, size_t opts_size);

/** "failover" or "multipath" into *@policy. \return 0; -EINVAL anything else. */
int nvp_nvme_mpath_policy_parse(const char *str, enum nvp_nvme_mpath_policy *policy);
const char *nvp_nvme_mpath_policy_name(enum nvp_nvme_mpath_policy policy);
/** "optimized", "non-optimized", "inaccessible", "persistent-loss", "change", "unknown". */
const char *nvp_nvme_ana_state_name(uint8_t state);

/**
 * The ANA state (enum nvme_ana_state) of namespace @nsid through @ctrlr, from a fresh
 * read of its ANA log page (which also clears a pending ANA change notice). Any
 * controller, multipath or not. \return 0; -EINVAL not an active namespace or @state
 * NULL; -ENOTSUP the controller does not report ANA (CMIC bit 3); -ENOENT the log does
 * not list the namespace or its group; the errors of nvp_nvme_ctrlr_get_log_page().
 */
int nvp_nvme_ctrlr_get_ana_state(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, uint8_t *state);

/**
 * Connect one controller per transport ID (@ctrlr_opts for each, NULL = defaults; its
 * ctrlr_loss_timeout_sec is taken as 0, see above), check that they are one subsystem
 * (Identify Controller SUBNQN) and one namespace (NGUID and EUI64 when reported, size and
 * block size), read their ANA logs, and make the multipath controller.
 * \return 0; -EINVAL @trids NULL, @num_trids 0 or above NVP_NVME_MPATH_MAX_PATHS, bad
 * options, controllers of different subsystems or namespaces that differ (the log names
 * which and what to do); -ENODEV the namespace is not active on a path; -ENOMEM; any
 * error of nvp_nvme_connect() for a path (the ones already connected are detached).
 */
int nvp_nvme_mpath_connect(const struct nvp_nvme_transport_id *trids, uint32_t num_trids,
			   const struct nvp_nvme_ctrlr_opts *ctrlr_opts,
			   const struct nvp_nvme_mpath_opts *opts, struct nvp_nvme_mpath **mpath);

/**
 * Add a path to a multipath controller (SPDK's bdev_nvme_attach_controller with the
 * same name and multipath set): connected, checked against path 0 as
 * nvp_nvme_mpath_connect() does, its ANA log read, then published; I/O handles make its
 * qpair at their next poll. Any thread; waits for the admin poll to finish.
 * \return 0; -EINVAL; -ENOSPC already NVP_NVME_MPATH_MAX_PATHS paths; the errors of
 * nvp_nvme_mpath_connect() for the path (it is then detached, nothing else changes).
 */
int nvp_nvme_mpath_add_path(struct nvp_nvme_mpath *mpath, const struct nvp_nvme_transport_id *trid,
			    const struct nvp_nvme_ctrlr_opts *ctrlr_opts);

/**
 * Detach every path (a reset or ANA read this thread began is run to its end first).
 * \return 0; -EINVAL NULL; -EBUSY I/O handles still allocated, or another thread's reset or
 * ANA read of a path is under way (poll there until it ends).
 */
int nvp_nvme_mpath_detach(struct nvp_nvme_mpath *mpath);

/**
 * The admin poll of every path: their admin completions (keep alive, events), the ANA
 * log re-read an ANA change notice or an ANA status asked for, and a reset of each failed
 * path when its reconnect delay has passed. Never waits for an answer: a reset or a log
 * read goes on at this thread's next call, a step per call. \return completions
 * processed (>= 0); -EINVAL NULL; -EBUSY another thread is in it.
 */
int32_t nvp_nvme_mpath_process_admin_completions(struct nvp_nvme_mpath *mpath);

uint32_t nvp_nvme_mpath_get_num_paths(const struct nvp_nvme_mpath *mpath);
enum nvp_nvme_mpath_policy nvp_nvme_mpath_get_policy(const struct nvp_nvme_mpath *mpath);
uint32_t nvp_nvme_mpath_get_nsid(const struct nvp_nvme_mpath *mpath);
/** The namespace as path @idx's controller sees it (geometry: the same on every path). */
struct nvp_nvme_ns *nvp_nvme_mpath_get_ns(const struct nvp_nvme_mpath *mpath, uint32_t idx);

/** One path, as nvp_nvme_mpath_get_path_info() sees it now. */
struct nvp_nvme_mpath_path_info {
	size_t info_size; /**< set by the caller: sizeof(struct nvp_nvme_mpath_path_info) */
	struct nvp_nvme_ctrlr *ctrlr;
	const struct nvp_nvme_transport_id *trid;
	bool ana_reporting;  /**< the controller reports ANA (CMIC bit 3) */
	uint8_t ana_state;   /**< enum nvme_ana_state (optimized without ANA reporting) */
	uint32_t anagrpid;   /**< the namespace's ANA group; 0 without ANA reporting */
	bool connected;      /**< not failed, not being reconnected */
	uint32_t reconnects; /**< successful resets of this path after a failure */
	uint64_t ios;        /**< commands sent down it by the I/O handles freed so far (a live
			      * handle's own: nvp_nvme_mpath_io_get_stats()) */
};

/** \return 0; -EINVAL NULL, @idx out of range or @info->info_size too small. */
int nvp_nvme_mpath_get_path_info(const struct nvp_nvme_mpath *mpath, uint32_t idx,
				 struct nvp_nvme_mpath_path_info *info);

/**
 * An I/O handle for the calling thread: an I/O qpair on every path (@qpair_opts, NULL =
 * each controller's defaults) and a request pool of @qpair_opts->io_queue_requests (or
 * path 0's default). A path that is down, or whose qpair cannot be made now, gets it at a
 * later poll of the handle (tried again every reconnect_delay_ms). \return 0; -EINVAL;
 * -ENOMEM; the first error of nvp_nvme_ctrlr_alloc_io_qpair() when no path got a qpair.
 */
int nvp_nvme_mpath_io_alloc(struct nvp_nvme_mpath *mpath,
			    const struct nvp_nvme_io_qpair_opts *qpair_opts,
			    struct nvp_nvme_mpath_io **io);
/**
 * Free an I/O handle, on its thread; a path's reset or ANA read this thread began in the
 * admin poll is run to its end first. \return 0; -EINVAL NULL; -EBUSY requests outstanding.
 */
int nvp_nvme_mpath_io_free(struct nvp_nvme_mpath_io *io);

/**
 * Read or write through the path the policy picks. Buffers as nvp_nvme_ns_cmd_read().
 * \return 0 (the completion follows, once); -EINVAL bad arguments; -ENOMEM no free request
 * (the handle's pool); the path's error for a request it refused as invalid.
 */
int nvp_nvme_mpath_cmd_read(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba,
			    uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			    uint32_t io_flags);
int nvp_nvme_mpath_cmd_write(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba,
			     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			     uint32_t io_flags);
/** Vectored, as nvp_nvme_ns_cmd_readv(): the SGL callbacks get @cb_arg. */
int nvp_nvme_mpath_cmd_readv(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
			     nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			     nvp_nvme_req_reset_sgl_cb reset_sgl,
			     nvp_nvme_req_next_sge_cb next_sge);
int nvp_nvme_mpath_cmd_writev(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
			      nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			      nvp_nvme_req_reset_sgl_cb reset_sgl,
			      nvp_nvme_req_next_sge_cb next_sge);
int nvp_nvme_mpath_cmd_flush(struct nvp_nvme_mpath_io *io, nvp_nvme_cmd_cb cb, void *cb_arg);
/** As nvp_nvme_ns_cmd_write_zeroes() (@io_flags may add NVME_IO_FLAGS_DEALLOCATE). */
int nvp_nvme_mpath_cmd_write_zeroes(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
				    nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags);
/** As nvp_nvme_ns_cmd_compare(): @buf holds the data to compare with. */
int nvp_nvme_mpath_cmd_compare(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba,
			       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			       uint32_t io_flags);
/**
 * Dataset management (unmap: NVME_DSM_ATTR_DEALLOCATE) over 1..256 @ranges, as
 * nvp_nvme_ns_cmd_dataset_management(). Unlike there, @ranges must stay valid until the
 * completion: a request that meets a path error is sent again on another path from them.
 * \return 0; -EINVAL no or more than 256 ranges; -ENOMEM no free request, or 32 DSM
 * commands in flight on the path's qpair.
 */
int nvp_nvme_mpath_cmd_dataset_management(struct nvp_nvme_mpath_io *io, uint32_t attributes,
					  const struct nvme_dsm_range *ranges, uint16_t num_ranges,
					  nvp_nvme_cmd_cb cb, void *cb_arg);

/**
 * Poll every path's qpair, then send again what came back with a path error and what
 * waits for a path. \return completions handed to the caller (>= 0); -EINVAL NULL.
 */
int32_t nvp_nvme_mpath_io_process_completions(struct nvp_nvme_mpath_io *io);

/** Requests of the handle not yet completed to the caller. */
uint32_t nvp_nvme_mpath_io_get_num_outstanding(const struct nvp_nvme_mpath_io *io);

struct nvp_nvme_mpath_io_stats {
	size_t info_size;                            /**< set by the caller */
	uint64_t path_ios[NVP_NVME_MPATH_MAX_PATHS]; /**< commands sent down each path */
	uint64_t path_errors;                        /**< completions with a path error */
	uint64_t retries;                            /**< of those, sent again */
	uint64_t no_path_waits;                      /**< times a request found no usable path */
	/* since the qpairs made from polls */
	uint64_t qpairs_made;      /**< qpairs made by the I/O poll for a path that was down
				    * when the handle was made (or whose qpair failed); made
				    * with opts.async_mode: the poll does not wait for them */
	uint32_t paths_connecting; /**< paths whose qpair made so is not connected yet: no
				    * request is sent there until it is */
};

/** \return 0; -EINVAL NULL or info_size too small (smaller than the fields up to
 * no_path_waits: the later ones are filled when info_size has room for them). */
int nvp_nvme_mpath_io_get_stats(const struct nvp_nvme_mpath_io *io,
				struct nvp_nvme_mpath_io_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_NVME_MPATH_H */
