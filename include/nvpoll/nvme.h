/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * The NVMe driver: probe and attach controllers, the admin command set, namespaces,
 * and lock-free per-thread I/O queue pairs whose completions are found by polling.
 *
 * Threads: a qpair belongs to the thread that allocated it; only that thread may submit
 * on it or process its completions (debug builds check and return -EPERM). The admin
 * queue is shared and serialised by a mutex held only to submit a command or to poll
 * once, never while a *_sync helper waits: the helpers may be called from any thread, and
 * a slow or unanswered admin command holds up no other thread's admin command.
 *
 * A qpair's poll never blocks and never waits for the admin mutex: work that needs admin
 * commands (re-creating its queues after a reset, or to reclaim command identifiers
 * after lost completions) is done a step per poll, the poll returning 0 meanwhile and
 * submissions waiting on the qpair's queued list.
 *
 * Timeouts (qpair opts.timeout_us, counted from the submit call): when a request passes
 * its deadline the driver first checks for a missed completion, as Linux's
 * nvme_timeout() does. If the qpair's CQ is stuck -- the controller posted an entry past
 * one the host cannot consume (PCIe: the entry at the head carries the previous pass's
 * phase tag while a later one, past any more such, carries this pass's) -- no completion
 * on it will be seen again, and neither waiting nor Abort helps: the qpair re-makes its
 * queues at once (qpair stats cq_stalls counts it). The same check runs with the health
 * check below (nothing completed for a second, or half the timeout), so a stuck CQ is
 * usually found while the requests behind it are within their deadlines and can be sent
 * again. The admin queue is looked at the same way while admin commands are outstanding
 * and nothing completes (a second, or half admin_timeout_ms): a stuck admin CQ cannot be
 * re-made with admin commands, so the controller is reset (as nvp_nvme_ctrlr_reset()),
 * which rebuilds it, by the next synchronous command's wait or
 * nvp_nvme_ctrlr_process_admin_completions() call; the admin commands outstanding
 * complete with ABORTED SQ DELETION.
 * Otherwise the driver sends Abort (SQID, CID): "aborted" means the command's own
 * completion follows; "not aborted" (CQE dword 0 bit 0 = 1: the command left the SQ),
 * a failed Abort or no answer within admin_timeout_ms complete the request with ABORTED
 * BY HOST (SCT path, DNR clear), and its command identifier stays out of use until the
 * device's late completion arrives. (A qpair created with opts.timeout_no_abort skips the
 * Abort: its expired request is reported to the timeout callback once and stays
 * outstanding until its completion, a controller reset or the qpair's free, for a caller
 * that recovers by itself.) While any is kept out of use, every poll checks
 * the CQ again: when the stuck entry was the last one the device wrote, the next
 * completion it posts behind it (the next request's) gives the stall away, and the
 * queues are re-made. So are they when kept identifiers leave no usable one.
 *
 * Buffers the device may still use: a request completed with ABORTED BY HOST whose CQE
 * cid is not 0xffff (0xffff: it expired on the queued list, was never sent, and its
 * buffers are the caller's at once; not so for a request the driver split, whose cid is
 * its last part's) was handed back while the device may still hold the command. Until its late completion arrives or its SQ is deleted the device may still
 * read its payload and metadata (a write) or write into them (a read: with the blocks'
 * content at that later time). The driver signals neither (the late completion is
 * swallowed and logged, a re-making of the queues is silent), so the caller must not
 * free, reuse or change those buffers before a point it does see: nvp_nvme_ctrlr_reset()
 * returned 0 (the controller was disabled and holds no command of before), or
 * nvp_nvme_ctrlr_free_io_qpair() of that qpair returned 0 (its Delete I/O SQ succeeded:
 * every command of the SQ ended). Resending a write with the same, unchanged buffer
 * meanwhile is harmless. The same holds for the requests of a failed controller or of a
 * qpair whose queues could not be re-made (ABORTED_SQ_DELETION while the poll returns
 * -ENXIO): nothing stopped the device; a reset that returns 0 does.
 *
 * Re-making a qpair's queues (Delete I/O SQ and CQ, Create I/O CQ and SQ) takes admin
 * commands the owner's polls move along without waiting; submissions meanwhile wait on
 * the queued list. Once the old SQ is deleted, every request the device had is handled
 * by the reset contract (nvp_nvme_ctrlr_reset()): sent again, ahead of anything queued,
 * while its retry budget (opts.io_retry_count) lasts and its deadline has not passed,
 * else completed with ABORTED_SQ_DELETION (DNR clear); queued requests stay queued. Each
 * completes exactly once. If the controller refuses a step or does not answer it in
 * admin_timeout_ms, the qpair fails (-ENXIO, its requests complete with
 * ABORTED_SQ_DELETION) until a controller reset. The admin queue is not re-made this
 * way: its commands time out, and nvp_nvme_ctrlr_reset() brings it back.
 *
 * A vanished or dead controller: while requests are outstanding and nothing completes,
 * the owner's poll reads CSTS once a second (NVME_HEALTH_CHECK_MS), or every half request
 * timeout if that is shorter; all-ones (device removed) or CFS marks the controller
 * failed, and so does RDY clear on a ready controller that no reset of ours explains:
 * removed if config space no longer answers (a vanished function's BAR may read zeros),
 * else disabled behind the driver's back. Request timeouts and admin timeouts look at
 * CSTS too. From then on every call returns -ENXIO and every request outstanding
 * completes with an error status, once: ABORTED_SQ_DELETION with DNR clear (a reset may
 * bring the controller back), or Host Pathing Error with DNR set if the device is gone.
 *
 * Do Not Retry: a status the device posts is passed on as it is. A status the driver
 * makes up has DNR set only when the same command cannot succeed if sent again: the
 * device is removed, the application freed the qpair or detached, or the request is
 * invalid. A request the driver gave up on (timeout), took back in a reset, or failed
 * with a controller or connection a reset may bring back has DNR clear: an application
 * that resubmits every request completed with an error and DNR clear (after
 * nvp_nvme_ctrlr_reset() when the poll returned -ENXIO) loses none of them. (One that
 * timed out may still run late on the device: resending the same data is harmless.)
 *
 * Errors: every call returns 0 (or a count) or a negative errno. The NVMe status of a
 * command reaches the caller only through its completion (callback, or the @cpl out
 * parameter of a sync helper).
 */
#ifndef NVPOLL_NVME_H
#define NVPOLL_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpoll/nvme_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvp_nvme_ctrlr;
struct nvp_nvme_ns;
struct nvp_nvme_qpair;

/* ---------------------------------------------------------------------------------------
 * Transport IDs
 * ------------------------------------------------------------------------------------- */

enum nvp_nvme_transport_type {
	NVP_NVME_TRANSPORT_PCIE = 1, /**< a PCI function env offers (real or virtual) */
	NVP_NVME_TRANSPORT_VDEV = 2, /**< a virtual device made on demand by an env provider
				      * ("emu"), then driven through the PCIe transport */
	NVP_NVME_TRANSPORT_TCP = 3,  /**< NVMe/TCP: traddr, trsvcid, subnqn, hostnqn... */
};

#define NVP_NVME_TRSTRING_MAX 16
#define NVP_NVME_TRADDR_MAX 64
#define NVP_NVME_TRNAME_MAX 32
#define NVP_NVME_TRARGS_MAX 512

/**
 * Which controller to attach, in SPDK's form: "trtype:PCIe traddr:0000:01:00.0",
 * "trtype:emu name:emu0 nn:2 lba:512/4096". Keys and values are separated by ':' or '='
 * and pairs by spaces or tabs. Known keys: trtype, traddr, name, ns (a namespace id,
 * kept for tools), subnqn. Other pairs are kept in @args for a virtual device provider
 * or the transport. NVMe/TCP: "trtype:TCP adrfam:IPv6 traddr:::1 trsvcid:4420
 * subnqn:..." (a value is split from its key at the first ':', so an IPv6 traddr needs
 * no quoting); adrfam IPv4 or IPv6, by default the family traddr is written in;
 * kato:<ms> the keep-alive timeout (doc/nvme_tcp.md).
 */
struct nvp_nvme_transport_id {
	enum nvp_nvme_transport_type trtype;
	char trstring[NVP_NVME_TRSTRING_MAX]; /**< trtype as written ("PCIe", "emu") */
	char traddr[NVP_NVME_TRADDR_MAX];     /**< PCI address for PCIe */
	char name[NVP_NVME_TRNAME_MAX];       /**< device name for a virtual provider */
	uint32_t nsid;                        /**< "ns:N", 0 if absent */
	char subnqn[224];
	char args[NVP_NVME_TRARGS_MAX]; /**< remaining "key=value key=value" pairs */
};

/**
 * Parse a transport ID string.
 * \return 0; -EINVAL for a malformed pair, a missing or unknown trtype, a PCIe traddr
 * that is not a PCI address, a TCP traddr that is not a numeric address of its adrfam
 * (or an adrfam other than IPv4 and IPv6, a trsvcid that is not a port), or a string
 * that does not fit (message logged).
 */
int nvp_nvme_transport_id_parse(struct nvp_nvme_transport_id *trid, const char *str);

/**
 * The value of @key among @trid's other pairs (@trid->args, "key=value" pairs between
 * spaces, as nvp_nvme_transport_id_parse() keeps them), copied into @value (@len bytes
 * with the NUL). Keys are matched without regard to case; there is no quoting (a value
 * holds no space).
 * \return 0; -ENOENT if @key is not there; -EINVAL (message logged) for a NULL
 * argument, a malformed pair, @key given twice or with an empty value; -ENOSPC (message
 * logged) for a value longer than @len - 1.
 */
int nvp_nvme_transport_id_get_arg(const struct nvp_nvme_transport_id *trid, const char *key,
				  char *value, size_t len);

/** Format back to the string form. \return 0 or -ENOSPC. */
int nvp_nvme_transport_id_fmt(char *buf, size_t len, const struct nvp_nvme_transport_id *trid);

/* ---------------------------------------------------------------------------------------
 * Discovery (NVMe over Fabrics)
 * ------------------------------------------------------------------------------------- */

/** One record of a discovery log page (NVMe-oF 1.1 section 5.3). */
struct nvp_nvme_discovery_entry {
	struct nvp_nvme_transport_id trid; /**< ready for nvp_nvme_connect() (TCP records) */
	uint8_t trtype;                    /**< 1 RDMA, 2 FC, 3 TCP, 254 loop */
	uint8_t adrfam;                    /**< 1 IPv4, 2 IPv6 */
	uint8_t subtype;                   /**< 1 referral, 2 NVM subsystem, 3 this discovery */
	uint16_t portid;
	uint16_t cntlid;
	char trsvcid[33];
	char traddr[257];
	char subnqn[257];
};

typedef void (*nvp_nvme_discover_cb)(void *cb_arg, const struct nvp_nvme_discovery_entry *entry);

/**
 * Connect to the discovery controller at @trid ("trtype:TCP traddr:... trsvcid:8009";
 * subnqn defaults to nqn.2014-08.org.nvmexpress.discovery), read its discovery log page
 * and call @cb once per record. env must be initialised.
 * \return the number of records; -EINVAL bad trid; -ENODEV nothing listening; -EIO the
 * controller refused (message logged); -ETIMEDOUT; -ENOMEM.
 */
int nvp_nvme_discover(const struct nvp_nvme_transport_id *trid, nvp_nvme_discover_cb cb,
		      void *cb_arg);

/* ---------------------------------------------------------------------------------------
 * Controllers
 * ------------------------------------------------------------------------------------- */

/** Controller options. Initialise with nvp_nvme_ctrlr_opts_init(). */
struct nvp_nvme_ctrlr_opts {
	size_t opts_size;
	uint32_t num_io_queues;     /**< I/O queue pairs to request (Set Features); 64 */
	uint32_t io_queue_size;     /**< default entries per I/O queue; 256 */
	uint32_t io_queue_requests; /**< default request objects per qpair; 4 x entries */
	uint32_t admin_queue_size;  /**< admin queue entries; 32 */
	uint32_t admin_timeout_ms;  /**< sync admin command timeout; 10000 */
	uint64_t io_timeout_us;     /**< default per-request timeout, 0 = none; 30 s. It
				     * bounds submit call to completion: time waiting on the
				     * queued list for a slot counts */
	uint32_t max_io_size;       /**< largest single command in bytes, further limited
				     * by MDTS; 2 MiB */
	bool no_shn_notification;   /**< detach without CC.SHN (abrupt) */
	uint32_t io_retry_count;    /**< times an I/O request the device lost to a controller
				     * reset is sent again before it completes with
				     * ABORTED_SQ_DELETION; 0 = never; 4 (SPDK's
				     * transport_retry_count) */
	/**
	 * Reconnect without the application (SPDK's names and meaning; NVMe/TCP). When a
	 * connection of the controller is lost, the controller is "reconnecting" instead of
	 * failed: the admin poll (nvp_nvme_ctrlr_process_admin_completions()), or any I/O
	 * qpair's poll when the admin lock is free (so an application need not poll the
	 * admin queue), tries a reset every reconnect_delay_sec (the first at once) until
	 * one succeeds or ctrlr_loss_timeout_sec has passed since the loss; then the
	 * controller is failed for good (as removed: requests complete with HOST PATHING
	 * ERROR, DNR set; the remove callback runs). Meanwhile each I/O qpair's owner takes
	 * back the requests its lost connection had (sent again after the reconnect, every
	 * one completing exactly once), new submissions wait on its queued list, and its
	 * polls re-create its connection without blocking once the controller is back.
	 * -1 = try forever; 0 = no reconnect (a lost connection fails the controller; the
	 * default).
	 */
	int32_t ctrlr_loss_timeout_sec;
	/** Seconds between reconnect attempts; 0 with ctrlr_loss_timeout_sec 0, else 1.. */
	uint32_t reconnect_delay_sec;
	/**
	 * Seconds after the loss from which waiting and new I/O completes with NVMe PATH
	 * RELATED / HOST PATHING ERROR (sct 3h, sc 70h, DNR clear: retry it) instead of
	 * waiting for the reconnect; 0 = wait until ctrlr_loss_timeout_sec. At least
	 * reconnect_delay_sec and at most ctrlr_loss_timeout_sec (when that is positive).
	 */
	uint32_t fast_io_fail_timeout_sec;
};

void nvp_nvme_ctrlr_opts_init(struct nvp_nvme_ctrlr_opts *opts, size_t opts_size);

/** Return true to attach to the controller at @trid; may adjust @opts. */
typedef bool (*nvp_nvme_probe_cb)(void *cb_ctx, const struct nvp_nvme_transport_id *trid,
				  struct nvp_nvme_ctrlr_opts *opts);

/** Called once per attached controller. */
typedef void (*nvp_nvme_attach_cb)(void *cb_ctx, const struct nvp_nvme_transport_id *trid,
				   struct nvp_nvme_ctrlr *ctrlr,
				   const struct nvp_nvme_ctrlr_opts *opts);

/**
 * Probe: with @trid NULL or a PCIe trid without traddr, every unclaimed NVMe function env
 * offers (class 0x010802, real or virtual); otherwise the one @trid names. @probe_cb may
 * be NULL (attach to all). env must be initialised.
 * \return 0 if every chosen controller attached; -ENODEV if none was found; the first
 * -errno of a failed attach otherwise (the others still attach).
 */
int nvp_nvme_probe(const struct nvp_nvme_transport_id *trid, void *cb_ctx,
		   nvp_nvme_probe_cb probe_cb, nvp_nvme_attach_cb attach_cb);

/**
 * Attach to one controller synchronously.
 * \return 0 and *@ctrlr; -EINVAL bad trid or options; -ENODEV no such function;
 * -EBUSY already attached; -ETIMEDOUT or -EIO if initialisation failed (the log names
 * the init state, CAP/VS/CC/CSTS and the likely cause); -ENOMEM. NVMe/TCP: what the
 * socket's connect() said, e.g. -ECONNREFUSED (nothing listens at traddr:trsvcid),
 * -ENETUNREACH, -EHOSTUNREACH, or -ETIMEDOUT (the log names address and port).
 */
int nvp_nvme_connect(const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts, struct nvp_nvme_ctrlr **ctrlr);

/**
 * Shut down (CC.SHN normal, wait for SHST complete) and release the controller; a
 * virtual device created for the trid is destroyed. I/O qpairs still allocated are
 * freed. \return 0, or -ETIMEDOUT if shutdown did not complete (resources are released
 * anyway).
 */
int nvp_nvme_detach(struct nvp_nvme_ctrlr *ctrlr);

/**
 * Reset the controller (CC.EN 1 -> 0 -> 1) and bring it back: admin queue, number of
 * queues, namespaces, AERs. Any thread may call it, at any time, also from a completion
 * callback; owner threads need not park their qpairs.
 *
 * The contract, as SPDK's: the reset marks every I/O qpair (a new reset generation) and
 * waits only for owner threads already inside a poll to leave it (the driver never
 * blocks a poll, so this is the rest of one poll); it never touches a qpair. Each owner,
 * at its next nvp_nvme_qpair_process_completions() after the controller is READY again,
 * takes back what the device had and re-creates its own queues (admin commands it does
 * not wait for; the poll returns 0 until they are there). Requests the device had are
 * sent again, ahead of anything queued, up to opts.io_retry_count times each (default
 * 4), unless their timeout passed; past that they complete with ABORTED_SQ_DELETION
 * (DNR clear: the caller may retry). Requests still on a qpair's queued list never
 * reached the device: they stay queued and go out once the queues exist (as SPDK's
 * queued requests do; their timeout keeps running from their submit call), and
 * nvp_nvme_qpair_get_num_outstanding() counts them all along. Every request completes
 * exactly once. Submissions during the reset are accepted (queued). A qpair whose queues
 * cannot be re-created fails (-ENXIO, its requests complete with ABORTED_SQ_DELETION,
 * DNR clear) until the next successful reset.
 * \return 0; -EINVAL @ctrlr NULL; -ETIMEDOUT or -EIO: the controller is then failed,
 * unless it is reconnecting (opts.ctrlr_loss_timeout_sec): then it stays so and the admin
 * poll tries again.
 */
int nvp_nvme_ctrlr_reset(struct nvp_nvme_ctrlr *ctrlr);

const struct nvme_ctrlr_data *nvp_nvme_ctrlr_get_data(const struct nvp_nvme_ctrlr *ctrlr);
const struct nvp_nvme_transport_id *
nvp_nvme_ctrlr_get_transport_id(const struct nvp_nvme_ctrlr *ctrlr);
union nvme_cap_register nvp_nvme_ctrlr_get_regs_cap(const struct nvp_nvme_ctrlr *ctrlr);
union nvme_vs_register nvp_nvme_ctrlr_get_regs_vs(const struct nvp_nvme_ctrlr *ctrlr);
/** Reads CSTS from the device now. */
union nvme_csts_register nvp_nvme_ctrlr_get_regs_csts(struct nvp_nvme_ctrlr *ctrlr);
/** I/O queue pairs the controller granted. */
uint32_t nvp_nvme_ctrlr_get_num_io_queues(const struct nvp_nvme_ctrlr *ctrlr);
/** Largest transfer of one command in bytes (MDTS and opts.max_io_size). */
uint32_t nvp_nvme_ctrlr_get_max_xfer_size(const struct nvp_nvme_ctrlr *ctrlr);
/** True once the controller failed (CFS, all-ones registers, failed reset). */
bool nvp_nvme_ctrlr_is_failed(const struct nvp_nvme_ctrlr *ctrlr);
/**
 * True while the controller has lost its connection and tries to get it back
 * (opts.ctrlr_loss_timeout_sec); false once it is back or failed for good.
 */
bool nvp_nvme_ctrlr_is_reconnecting(const struct nvp_nvme_ctrlr *ctrlr);

/** NN from identify: the highest namespace id. */
uint32_t nvp_nvme_ctrlr_get_num_ns(const struct nvp_nvme_ctrlr *ctrlr);
/** First active namespace id, 0 if none. */
uint32_t nvp_nvme_ctrlr_get_first_active_ns(const struct nvp_nvme_ctrlr *ctrlr);
/** Next active namespace id after @prev_nsid, 0 at the end. */
uint32_t nvp_nvme_ctrlr_get_next_active_ns(const struct nvp_nvme_ctrlr *ctrlr, uint32_t prev_nsid);
bool nvp_nvme_ctrlr_is_active_ns(const struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid);
/** The namespace object for an active @nsid, else NULL. */
struct nvp_nvme_ns *nvp_nvme_ctrlr_get_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid);

/* ---------------------------------------------------------------------------------------
 * Commands and completions
 * ------------------------------------------------------------------------------------- */

/** The one completion callback type of every submit call. */
typedef void (*nvp_nvme_cmd_cb)(void *cb_arg, const struct nvme_cpl *cpl);

/** Scattered payloads, as SPDK: rewind to byte @offset of the payload. */
typedef void (*nvp_nvme_req_reset_sgl_cb)(void *cb_arg, uint32_t offset);
/** Next element: its virtual address (DMA memory) and length. \return 0 or -errno. */
typedef int (*nvp_nvme_req_next_sge_cb)(void *cb_arg, void **address, uint32_t *length);

/** Name of a status ("Invalid Field in Command"); "Unknown" for codes not known. */
const char *nvp_nvme_status_string(uint8_t sct, uint8_t sc);
/**
 * Name of a status a command to a Fabrics controller completed with: the Fabrics command
 * specific codes by their Fabrics meaning ("Connect Invalid Parameters", "Connect
 * Invalid Host" for @fctype Connect (1); "Discovery Restart", "Authentication Required"
 * for any), every other status as nvp_nvme_status_string() names it. @fctype: the
 * Fabrics command type (opcode 7Fh), or 0xff for a command that is not a Fabrics one.
 */
const char *nvp_nvme_fabrics_status_string(uint8_t fctype, uint8_t sct, uint8_t sc);
/** Name of a status code type ("Generic Command Status"). */
const char *nvp_nvme_sct_string(uint8_t sct);
/** "Invalid Field in Command (sct 0x0, sc 0x2)" into @buf. \return @buf. */
char *nvp_nvme_cpl_fmt(char *buf, size_t len, const struct nvme_cpl *cpl);

/* ---- admin ---- */

/**
 * Submit an admin command. @buf (may be NULL) must be DMA memory of @len bytes; the PRPs
 * are built by the driver, the CID is assigned by the driver. @cb runs from
 * nvp_nvme_ctrlr_process_admin_completions() on whichever thread calls it.
 * \return 0, -EINVAL, -EFAULT (buffer not DMA memory), -ENOMEM, -ENXIO (failed ctrlr).
 */
int nvp_nvme_ctrlr_cmd_admin_raw(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd,
				 void *buf, uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg);

/**
 * Process admin completions (and AERs); with opts.ctrlr_loss_timeout_sec set, also drive
 * the reconnect of a controller that lost its connection (an attempt is a reset: it runs
 * on the calling thread, bounded by admin_timeout_ms). The polls of the controller's I/O
 * qpairs drive it as well, taking the admin lock only when it is free, so an application
 * that never calls this still reconnects. \return completions processed (0 while
 * reconnecting) or -ENXIO (failed controller).
 * NVMe/TCP: an application need not call it to keep the controller alive; the polls of
 * its I/O queues send the Keep Alive when the admin queue is free, and then run the
 * admin callbacks (AERs) that came on the polling thread (doc/nvme_tcp.md).
 */
int32_t nvp_nvme_ctrlr_process_admin_completions(struct nvp_nvme_ctrlr *ctrlr);

/**
 * Run an admin command and wait for it, up to opts.admin_timeout_ms. @buf is any memory
 * (the driver copies through a DMA bounce buffer). Thread-safe.
 * \return 0 if it completed successfully; -EIO if it completed with an error status
 * (in *@cpl when @cpl is not NULL); -ETIMEDOUT (the command is aborted); -ENXIO;
 * -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd,
				  void *buf, uint32_t len, struct nvme_cpl *cpl);

/*
 * Sync helpers; errors as nvp_nvme_ctrlr_cmd_admin_sync(). @cpl may be NULL.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_identify(struct nvp_nvme_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf,
			    uint32_t len, struct nvme_cpl *cpl);
int nvp_nvme_ctrlr_get_log_page(struct nvp_nvme_ctrlr *ctrlr, uint8_t lid, uint32_t nsid, void *buf,
				uint32_t len, uint64_t offset, struct nvme_cpl *cpl);
/**
 * @result receives completion DW0. @buf/@len for features with a data structure.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_get_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint8_t sel,
			       uint32_t cdw11, uint32_t nsid, uint32_t *result, void *buf,
			       uint32_t len, struct nvme_cpl *cpl);
/** As get_feature; @save sets SV. \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM. */
int nvp_nvme_ctrlr_set_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint32_t cdw11,
			       uint32_t cdw12, uint32_t nsid, bool save, uint32_t *result,
			       void *buf, uint32_t len, struct nvme_cpl *cpl);
/**
 * Format namespace @nsid (NVME_GLOBAL_NS_TAG for all); namespace data is re-read.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_format(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid,
			  union nvme_format_cdw10 format, struct nvme_cpl *cpl);
/**
 * Download a firmware image in chunks (FWUG and max transfer size respected).
 * \return 0; -EINVAL no image or a size not a multiple of 4; otherwise as above.
 */
int nvp_nvme_ctrlr_fw_download(struct nvp_nvme_ctrlr *ctrlr, const void *image, size_t size,
			       struct nvme_cpl *cpl);
/** Firmware Commit of @slot with @action. \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM. */
int nvp_nvme_ctrlr_fw_commit(struct nvp_nvme_ctrlr *ctrlr, uint8_t slot,
			     enum nvme_fw_commit_action action, struct nvme_cpl *cpl);

#define NVME_GLOBAL_NS_TAG 0xffffffffu

/** Asynchronous events: @cb runs with each AER completion (the driver re-arms it). */
void nvp_nvme_ctrlr_register_aer_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_cmd_cb cb,
					  void *cb_arg);

/**
 * Called when an I/O request passes its deadline, before the driver aborts it or, its
 * CQ being stuck, re-makes the qpair's queues (@qpair NULL for the admin queue); on the
 * qpair's owner thread, inside its poll (submit nothing, reset nothing from here: note
 * it and act after the poll). Informational; the driver handles recovery, except on a
 * qpair with opts.timeout_no_abort, where the request stays outstanding.
 */
typedef void (*nvp_nvme_timeout_cb)(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr,
				    struct nvp_nvme_qpair *qpair, uint16_t cid);
void nvp_nvme_ctrlr_register_timeout_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_timeout_cb cb,
					      void *cb_arg);

/**
 * Surprise removal: called once when the driver finds the device gone (registers read
 * all ones: a health check, a timeout, or with vfio a BAR access that env's SIGBUS
 * handler turned into all ones; or CSTS.RDY clear and config space silent; or vfio-pci
 * asking for the function back). By then the controller is failed: every call returns
 * -ENXIO and each outstanding request completes, once, with status Host Pathing Error
 * (SCT 3h, SC 70h, DNR set: no reset brings this controller back), at its owner's next
 * poll. Runs on the thread that noticed, maybe inside a poll or with the admin queue's
 * mutex held: note the event and act later (detach, free qpairs) from the application's
 * own context.
 */
typedef void (*nvp_nvme_remove_cb)(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr);
void nvp_nvme_ctrlr_register_remove_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_remove_cb cb,
					     void *cb_arg);
/** True once the device was found removed (then nvp_nvme_ctrlr_is_failed() is too). */
bool nvp_nvme_ctrlr_is_removed(const struct nvp_nvme_ctrlr *ctrlr);

/* ---- namespaces ---- */

uint32_t nvp_nvme_ns_get_id(const struct nvp_nvme_ns *ns);
struct nvp_nvme_ctrlr *nvp_nvme_ns_get_ctrlr(const struct nvp_nvme_ns *ns);
const struct nvme_ns_data *nvp_nvme_ns_get_data(const struct nvp_nvme_ns *ns);
/**
 * Bytes one logical block takes in a data buffer of the current format: the data size,
 * plus the metadata size for an extended LBA format (metadata interleaved, e.g. 520 or
 * 4104). I/O sizes are multiples of this.
 */
uint32_t nvp_nvme_ns_get_sector_size(const struct nvp_nvme_ns *ns);
uint64_t nvp_nvme_ns_get_num_sectors(const struct nvp_nvme_ns *ns);
/** Data capacity in bytes: blocks x data bytes per block (metadata not counted). */
uint64_t nvp_nvme_ns_get_size(const struct nvp_nvme_ns *ns);
/** Largest transfer of one command in bytes (larger requests are split). */
uint32_t nvp_nvme_ns_get_max_io_xfer_size(const struct nvp_nvme_ns *ns);
/** Data bytes per logical block, without metadata (512, 4096, ...). */
uint32_t nvp_nvme_ns_get_data_sector_size(const struct nvp_nvme_ns *ns);
/** Data plus metadata bytes per logical block, whether interleaved or not. */
uint32_t nvp_nvme_ns_get_extended_sector_size(const struct nvp_nvme_ns *ns);
/** Metadata bytes per logical block of the current format (0 = none). */
uint32_t nvp_nvme_ns_get_md_size(const struct nvp_nvme_ns *ns);
/** True if metadata is interleaved with the data (extended LBA format). */
bool nvp_nvme_ns_supports_extended_lba(const struct nvp_nvme_ns *ns);
/**
 * True if metadata travels in a separate buffer (metadata size > 0, extended bit clear):
 * I/O then needs the _with_md calls (or PRACT with 8-byte protection information).
 */
bool nvp_nvme_ns_has_separate_md(const struct nvp_nvme_ns *ns);
/** Protection information type (DPS): 0 none, 1, 2 or 3. */
uint32_t nvp_nvme_ns_get_pi_type(const struct nvp_nvme_ns *ns);
/** Optimal I/O boundary in logical blocks (NOIOB), 0 if none: requests crossing it split. */
uint32_t nvp_nvme_ns_get_optimal_io_boundary(const struct nvp_nvme_ns *ns);

/* ---- I/O queue pairs ---- */

struct nvp_nvme_io_qpair_opts {
	size_t opts_size;
	uint32_t io_queue_size;     /**< entries (2 .. CAP.MQES + 1) */
	uint32_t io_queue_requests; /**< request objects; requests past the queue's free
				     * slots wait on its queued list */
	uint64_t timeout_us;        /**< per-request deadline, 0 = none */
	bool delay_doorbell;        /**< default true: submissions made between polls
				     * reach the device at the next process_completions()
				     * or ring_doorbell() call, one SQ doorbell write for
				     * all of them; false: each submission made outside a
				     * completion callback rings at once. Submissions made
				     * from completion callbacks always ring once, at the
				     * end of the poll. */
	uint8_t qprio;              /**< weighted round robin priority class */
	bool interrupts;            /**< create the CQ with interrupts enabled (IEN = 1), its
				     * vector delivered as an eventfd by env
				     * (nvp_nvme_qpair_get_irq_fd()); the hot path is the same */
	bool timeout_no_abort;      /**< at a request's deadline only report it (the timeout
				     * callback, once per request; a stuck CQ is still
				     * re-made): no Abort, the request stays outstanding until
				     * its completion, a controller reset or the qpair's free.
				     * For a caller that recovers by itself (a bdev's
				     * action_on_timeout none or reset); default false */
	bool async_mode;            /**< default false. true: nvp_nvme_ctrlr_alloc_io_qpair()
				     * returns once the qpair is allocated, without creating
				     * its queues on the device; the owner's
				     * nvp_nvme_qpair_process_completions() polls create them
				     * (PCIe: Create I/O CQ, then SQ; NVMe/TCP: the socket's
				     * connect, ICReq, Fabrics Connect), a step per poll, as
				     * they re-create a qpair's queues after a controller
				     * reset. Submissions meanwhile wait on the queued list,
				     * their deadlines running; nvp_nvme_qpair_is_connected()
				     * says when the queues are there. A connect that fails
				     * fails the qpair like a failed re-creation (its requests
				     * complete with ABORTED SQ DELETION, DNR clear, and its
				     * polls return -ENXIO until a controller reset), or, with
				     * the controller's reconnect options, starts a reconnect
				     * whose reset re-creates it. PCIe: the controller's first
				     * qpair may still send Doorbell Buffer Config in the call.
				     * For a thread that makes a qpair from its I/O poll
				     * (SPDK's async_mode) */
};

/** The fewest entries a queue may have (one slot is always left empty). */
#define NVP_NVME_QUEUE_SIZE_MIN 2u
/** The most entries any I/O queue may have: QSIZE and CAP.MQES are 16-bit, 0's based. */
#define NVP_NVME_QUEUE_SIZE_MAX 65536u

/**
 * The one check and clamp of an I/O queue size: what @ctrlr's queues take is
 * NVP_NVME_QUEUE_SIZE_MIN .. CAP.MQES + 1; with @ctrlr NULL (not attached yet) it is
 * NVP_NVME_QUEUE_SIZE_MIN .. NVP_NVME_QUEUE_SIZE_MAX. *@fitted (if not NULL) gets @size
 * clamped into that range.
 * \return 0 if @size is within it, -ERANGE if it is not.
 */
int nvp_nvme_ctrlr_fit_io_queue_size(const struct nvp_nvme_ctrlr *ctrlr, uint32_t size,
				     uint32_t *fitted);

/** Defaults from the controller's opts, clamped to what the controller supports. */
void nvp_nvme_ctrlr_get_default_io_qpair_opts(const struct nvp_nvme_ctrlr *ctrlr,
					      struct nvp_nvme_io_qpair_opts *opts,
					      size_t opts_size);

/**
 * Create an I/O qpair owned by the calling thread: CQ and SQ in DMA memory, trackers and
 * PRP list pages preallocated, queues created on the device (with opts.async_mode: by
 * the owner's later polls, the call does not wait for the device).
 * \return 0 and *@qpair; -EINVAL for a queue size of 0, 1 or above CAP.MQES + 1 (or
 * fewer requests than entries); -EBUSY if every granted queue id is in use; -ENOMEM;
 * -EIO if the controller refused (status logged); -ENXIO failed controller.
 */
int nvp_nvme_ctrlr_alloc_io_qpair(struct nvp_nvme_ctrlr *ctrlr,
				  const struct nvp_nvme_io_qpair_opts *opts,
				  struct nvp_nvme_qpair **qpair);

/**
 * Delete the queues on the device and free the qpair. Outstanding requests are completed
 * with ABORTED_SQ_DELETION first, DNR set (the application ended them). \return 0;
 * -EINVAL NULL or the admin queue; -EPERM not the owner thread (debug builds; nothing
 * freed); the Delete I/O SQ/CQ command's error (-EIO, -ETIMEDOUT, -ENXIO: resources freed
 * anyway).
 */
int nvp_nvme_ctrlr_free_io_qpair(struct nvp_nvme_qpair *qpair);

/**
 * Find completions (phase bit), call their callbacks, ring the CQ head doorbell once,
 * submit queued requests into freed slots, ring a delayed SQ doorbell, and handle
 * expired deadlines. @max_completions 0 = as many as there are.
 * \return completions processed, or -ENXIO if the controller failed (outstanding
 * requests are then completed with an error status), -EPERM from a foreign thread
 * (debug builds).
 */
int32_t nvp_nvme_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max_completions);

/**
 * Make every submission accepted so far visible to the controller: one SQ tail doorbell
 * write if anything was written since the last one, nothing otherwise. Submissions on a
 * delay_doorbell qpair (the default) wait for this call or for the next
 * nvp_nvme_qpair_process_completions(), which rings first thing; call it after a batch
 * when the thread will not poll this qpair next (it sleeps, waits on another qpair, or
 * hands control to an I/O framework, as fio's commit does). Owner thread only.
 */
void nvp_nvme_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair);

/**
 * Have @fn(@arg, @poll_ticks) called at the end of every poll of @qpair that completed
 * requests (nvp_nvme_qpair_process_completions() about to return > 0), after their
 * callbacks and still inside the poll: what @fn submits counts as submitted from a
 * completion callback (stamped with the poll's time, announced with the poll's one SQ
 * doorbell write at its end). @poll_ticks is that time: nvp_env_get_ticks() read at the
 * start of the poll, after every request it completed was submitted, so a layer can
 * time them without a clock read of its own. For a layer that gathers the completions of
 * a poll and hands them on together, as the bdev nvme module does. @fn NULL: none.
 * Owner thread only. \return 0; -EINVAL not an I/O qpair; -EPERM foreign thread (debug
 * builds).
 */
int nvp_nvme_qpair_set_batch_end(struct nvp_nvme_qpair *qpair,
				 void (*fn)(void *arg, uint64_t poll_ticks), void *arg);

/**
 * nvp_nvme_qpair_ring_doorbell() only where it needs no MMIO write: with shadow doorbells
 * (Doorbell Buffer Config) the new SQ tail goes to the shadow doorbell, and that is enough
 * while the controller is still reading the SQ (EventIdx behind the old tail). When it
 * is not, no MMIO is written now: the next nvp_nvme_qpair_ring_doorbell() or
 * nvp_nvme_qpair_process_completions() writes it. For a caller that wants the controller
 * to start early (before its batch is complete) where that is cheap, as fio's commit does.
 * Owner thread only.
 * \return 0 the controller was told (or nothing waited); -EAGAIN an MMIO write is still
 * owed; -ENOTSUP no shadow doorbells on this qpair (the controller does not offer them,
 * refused them, the admin queue, or a transport other than PCIe; nothing written);
 * -EINVAL NULL; -EPERM not the owner thread (debug builds).
 */
int nvp_nvme_qpair_ring_doorbell_shadow(struct nvp_nvme_qpair *qpair);

/** Counters of a qpair since it was created; they only grow. */
struct nvp_nvme_qpair_stats {
	size_t info_size;            /**< set by the caller: sizeof(struct nvp_nvme_qpair_stats) */
	uint64_t submitted;          /**< commands written into the SQ */
	uint64_t polls;              /**< process_completions() calls */
	uint64_t sq_doorbell_writes; /**< MMIO writes of the SQ tail doorbell */
	uint64_t cq_doorbell_writes; /**< MMIO writes of the CQ head doorbell */
	uint64_t sq_shadow_updates;  /**< SQ tail doorbells written to the shadow doorbell
				     * only, no MMIO (Doorbell Buffer Config, EventIdx) */
	uint64_t cq_shadow_updates;  /**< the same for the CQ head doorbell */
	uint64_t cq_stalls;          /**< times the CQ was found stuck behind an entry the
				     * host cannot see, and the queues were re-made */
	uint64_t doorbell_rekicks;   /**< with shadow doorbells: times both MMIO doorbells were
				     * written again after 65536 polls found no completion
				     * with commands in the device (a controller that missed a
				     * shadow doorbell update would otherwise wait for ever) */
};

/**
 * Copy @qpair's counters into @stats; the caller sets stats->info_size first (the
 * getter convention of doc/README.md). Doorbell writes per I/O = sq_doorbell_writes / submitted.
 * Owner thread only.
 * \return 0; -EINVAL NULL argument or a too small info_size.
 */
int nvp_nvme_qpair_get_stats(const struct nvp_nvme_qpair *qpair,
			     struct nvp_nvme_qpair_stats *stats);

uint16_t nvp_nvme_qpair_get_id(const struct nvp_nvme_qpair *qpair);

/**
 * The eventfd signalled when the qpair's CQ posts (qpairs created with .interrupts).
 * Several qpairs may share one (uio_pci_generic has a single INTx line; vfio-pci functions
 * with fewer MSI-X vectors than queues). Read it (8 bytes; 4 bytes for a uio fd) to wait.
 * \return the fd, or -ENOTSUP for a polled qpair.
 */
int nvp_nvme_qpair_get_irq_fd(const struct nvp_nvme_qpair *qpair);

/**
 * Re-arm the qpair's interrupt before blocking on its fd (uio_pci_generic masks INTx each
 * time it fires; nothing to do for eventfd vectors). Not for the I/O path: a waiter calls
 * it before it blocks. \return 0; -ENOTSUP NULL, a polled qpair or a transport
 * without interrupts; the PCI function's -errno (-EIO: config space write failed).
 */
int nvp_nvme_qpair_irq_unmask(struct nvp_nvme_qpair *qpair);
/** Requests submitted to the device or queued, not yet completed. */
uint32_t nvp_nvme_qpair_get_num_outstanding(const struct nvp_nvme_qpair *qpair);
/**
 * Whether @qpair's queues exist on the device and it is not failed: false while an
 * opts.async_mode connect has not finished, while its queues are re-created (after a
 * controller reset, a lost connection, to reclaim CIDs), and once it failed. Submissions
 * are accepted either way (they wait on the queued list, or fail). Owner thread.
 */
bool nvp_nvme_qpair_is_connected(const struct nvp_nvme_qpair *qpair);
uint32_t nvp_nvme_qpair_get_size(const struct nvp_nvme_qpair *qpair);

/*
 * NVM commands. @lba_count is in logical blocks; buffers are DMA memory
 * (nvp_env_dma_malloc), dword aligned, lba_count x nvp_nvme_ns_get_sector_size() bytes.
 *
 * A request larger than the transfer limit (nvp_nvme_ns_get_max_io_xfer_size()) or
 * crossing the namespace's optimal I/O boundary is split into child commands sent as
 * the qpair's request objects allow (a few at a time per request, never allocated); it
 * completes through @cb once, with the status of the first child that failed. Write
 * zeroes of more than 65536 blocks is split likewise.
 *
 * Common errors:
 *   -EINVAL  zero count or a payload above 4 GiB, misaligned buffer, iovec elements that
 *            do not meet PRP rules (every element but the first starts on a page
 *            boundary, every element but the last ends on one); on a namespace with
 *            separate metadata, a call without a metadata buffer (see _with_md) unless
 *            PRACT is set and the metadata is 8 bytes of protection information; a
 *            metadata buffer for a namespace without separate metadata; PRACT/PRCHK
 *            flags on a namespace without protection information
 *   -ERANGE  LBA range past the end of the namespace
 *   -EFAULT  buffer is not DMA memory; metadata buffer not one IOVA-contiguous range
 *   -ENOMEM  all request objects of the qpair are in use
 *   -ENXIO   the controller failed
 * A request accepted (0 returned) always completes through @cb exactly once.
 * @io_flags: NVME_IO_FLAGS_FORCE_UNIT_ACCESS, NVME_IO_FLAGS_LIMITED_RETRY, directive
 * type, NVME_IO_FLAGS_PRACT and NVME_IO_FLAGS_PRCHK_* (protection information).
 */
int nvp_nvme_ns_cmd_read(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			 uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			 uint32_t io_flags);
int nvp_nvme_ns_cmd_write(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			  uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			  uint32_t io_flags);
int nvp_nvme_ns_cmd_readv(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			  uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			  nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
			  nvp_nvme_req_next_sge_cb next_sge_fn);
int nvp_nvme_ns_cmd_writev(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			   uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			   nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
			   nvp_nvme_req_next_sge_cb next_sge_fn);
int nvp_nvme_ns_cmd_compare(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			    uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			    uint32_t io_flags);
/**
 * Read and write with separate metadata (as SPDK's ..._with_md): @md_buf is DMA memory,
 * one IOVA-contiguous range of lba_count x nvp_nvme_ns_get_md_size() bytes, dword
 * aligned; its bus address goes in MPTR. May be NULL only where a plain call is allowed.
 * @apptag_mask and @apptag go in CDW15 (protection information application tag); the
 * reference tag (CDW14) is the starting LBA for protection information types 1 and 2.
 * \return 0; -EINVAL, -ERANGE, -EFAULT, -ENOMEM, -ENXIO as the common errors above.
 */
int nvp_nvme_ns_cmd_read_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				 void *md_buf, uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
				 void *cb_arg, uint32_t io_flags, uint16_t apptag_mask,
				 uint16_t apptag);
int nvp_nvme_ns_cmd_write_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				  void *md_buf, uint64_t lba, uint32_t lba_count,
				  nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
				  uint16_t apptag_mask, uint16_t apptag);
int nvp_nvme_ns_cmd_readv_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				  uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
				  void *cb_arg, uint32_t io_flags,
				  nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				  nvp_nvme_req_next_sge_cb next_sge_fn, void *md_buf,
				  uint16_t apptag_mask, uint16_t apptag);
int nvp_nvme_ns_cmd_writev_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				   uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
				   void *cb_arg, uint32_t io_flags,
				   nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				   nvp_nvme_req_next_sge_cb next_sge_fn, void *md_buf,
				   uint16_t apptag_mask, uint16_t apptag);
/**
 * @io_flags may add NVME_IO_FLAGS_DEALLOCATE.
 * \return 0; -EINVAL, -ERANGE, -ENOMEM, -ENXIO as the common errors above.
 */
int nvp_nvme_ns_cmd_write_zeroes(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
				 uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				 uint32_t io_flags);
/**
 * Dataset management over 1..256 @ranges (any memory; copied into one of the qpair's
 * 32 DMA pages for ranges). @attributes: NVME_DSM_ATTR_DEALLOCATE etc. -ENOMEM also when
 * 32 DSM commands of the qpair are in flight.
 */
int nvp_nvme_ns_cmd_dataset_management(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				       uint32_t attributes, const struct nvme_dsm_range *ranges,
				       uint16_t num_ranges, nvp_nvme_cmd_cb cb, void *cb_arg);
int nvp_nvme_ns_cmd_flush(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb,
			  void *cb_arg);

/* ---------------------------------------------------------------------------------------
 * Directives and write lifetime hints (NVMe 1.4 section 9)
 * ------------------------------------------------------------------------------------- */

/**
 * A write with a directive: @io_flags carries its type (NVME_IO_FLAGS_DTYPE_STREAMS,
 * NVME_IO_FLAGS_DTYPE_PLACEMENT) besides the usual flags, @dspec its directive specific
 * value (stream identifier) for CDW13 31:16. Most callers want
 * nvp_nvme_ns_cmd_write_hint(). \return as nvp_nvme_ns_cmd_write(): 0; -EINVAL,
 * -ERANGE, -EFAULT, -ENOMEM, -ENXIO.
 */
int nvp_nvme_ns_cmd_write_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				    uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
				    void *cb_arg, uint32_t io_flags, uint16_t dspec);
int nvp_nvme_ns_cmd_writev_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				     uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
				     void *cb_arg, uint32_t io_flags, uint16_t dspec,
				     nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				     nvp_nvme_req_next_sge_cb next_sge_fn);

/**
 * Directive Send (@send true) or Receive, synchronously: CDW10 NUMD from @len (a
 * multiple of 4, may be 0), CDW11 from @doper/@dtype/@dspec, @cdw12 as given.
 * @result receives DW0 (may be NULL). Errors as nvp_nvme_ctrlr_cmd_admin_sync(), and
 * -EINVAL for a @len that is not a multiple of 4.
 */
int nvp_nvme_ctrlr_directive(struct nvp_nvme_ctrlr *ctrlr, bool send, uint32_t nsid, uint8_t dtype,
			     uint8_t doper, uint16_t dspec, uint32_t cdw12, void *buf, uint32_t len,
			     uint32_t *result, struct nvme_cpl *cpl);

/** Identify directive, Return Parameters for @ns. \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM. */
int nvp_nvme_ns_identify_directives(struct nvp_nvme_ns *ns, struct nvme_dir_identify_params *out,
				    struct nvme_cpl *cpl);
/** Enable (or disable) the Streams directive on @ns. \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM. */
int nvp_nvme_ns_streams_enable(struct nvp_nvme_ns *ns, bool enable, struct nvme_cpl *cpl);
/** Streams Return Parameters (MSL, NSSA, NSSO, SWS, SGS, NSA, NSO). \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM. */
int nvp_nvme_ns_streams_get_params(struct nvp_nvme_ns *ns, struct nvme_dir_streams_params *out,
				   struct nvme_cpl *cpl);
/**
 * Streams Allocate Resources: ask for @nsr streams, *@nsa receives what was granted.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ns_streams_allocate(struct nvp_nvme_ns *ns, uint16_t nsr, uint16_t *nsa,
				 struct nvme_cpl *cpl);

/** Write lifetime hints, as Linux's RWH_WRITE_LIFE_* (F_SET_RW_HINT). */
enum nvp_nvme_write_hint {
	NVP_NVME_WRITE_HINT_NONE = 0,
	NVP_NVME_WRITE_HINT_SHORT,
	NVP_NVME_WRITE_HINT_MEDIUM,
	NVP_NVME_WRITE_HINT_LONG,
	NVP_NVME_WRITE_HINT_EXTREME,
	NVP_NVME_WRITE_HINT_COUNT,
};

/** How a namespace carries hints. */
enum nvp_nvme_placement {
	NVP_NVME_PLACEMENT_NONE = 0, /**< hints are dropped (and counted) */
	NVP_NVME_PLACEMENT_STREAMS,  /**< hints choose NVMe streams */
	NVP_NVME_PLACEMENT_FDP,      /**< hints choose FDP placement identifiers (DTYPE 2) */
};

/** "none", "short", "medium", "long", "extreme"; NULL for a bad value. */
const char *nvp_nvme_write_hint_name(enum nvp_nvme_write_hint hint);
/** Parse a hint name (or its number 0..4). \return 0 or -EINVAL. */
int nvp_nvme_write_hint_parse(const char *str, enum nvp_nvme_write_hint *hint);

/**
 * Make @ns carry write lifetime hints. On an FDP controller (CTRATT.FDPS) whose
 * namespace is in an endurance group with FDP enabled, the hints go to placement
 * identifiers (see the FDP section below), spread as streams are (placement handle 0
 * playing the part of "no directive"); nothing else is tried there. Without the
 * Directives capability (OACS bit 5) and FDPS
 * nothing is sent to the device; otherwise Identify directive, and where Streams are
 * supported: enable them, read their parameters and allocate up to @max_streams (0 = one
 * per hint class) of them. The hint classes are then spread over the n streams granted
 * and the device's default stream (writes without a directive): class h of 4 goes to
 * group (h - 1)(n + 1) / 4, groups 0..n-1 being streams 1..n and group n no directive;
 * so 1 stream: short, medium -> 1, long, extreme -> none; 2: short, medium -> 1, long
 * -> 2, extreme -> none; 3: one each, extreme -> none. A controller that refuses any step leaves the
 * namespace at NVP_NVME_PLACEMENT_NONE. Call once per namespace, before the writes, and
 * again after nvp_nvme_ctrlr_reset() (a controller may forget enabled streams on reset;
 * the software controller keeps them); not thread-safe against hinted writes on @ns.
 * \return 0 (placement chosen, possibly none); -ENXIO, -ETIMEDOUT, -ENOMEM from the
 * admin queue; -EINVAL.
 */
int nvp_nvme_ns_hints_setup(struct nvp_nvme_ns *ns, uint16_t max_streams);

enum nvp_nvme_placement nvp_nvme_ns_get_placement(const struct nvp_nvme_ns *ns);
/** Streams (or FDP placement identifiers) granted to the hints of @ns (0 without). */
uint16_t nvp_nvme_ns_get_num_streams(const struct nvp_nvme_ns *ns);
/** The stream (or placement identifier) a hint goes to, 0 = written without a directive. */
uint16_t nvp_nvme_ns_get_hint_stream(const struct nvp_nvme_ns *ns, enum nvp_nvme_write_hint hint);
/** Hinted writes that went out without a directive because @ns has no placement. */
uint64_t nvp_nvme_ns_get_hints_dropped(const struct nvp_nvme_ns *ns);

/**
 * Write with a lifetime hint: on a namespace set up with streams, the write carries the
 * hint's stream; otherwise it is a plain write and the hint is counted as dropped.
 * Errors as nvp_nvme_ns_cmd_write(), and -EINVAL for a hint out of range or DTYPE bits
 * already in @io_flags.
 */
int nvp_nvme_ns_cmd_write_hint(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			       uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			       uint32_t io_flags, enum nvp_nvme_write_hint hint);
int nvp_nvme_ns_cmd_writev_hint(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
				uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				uint32_t io_flags, enum nvp_nvme_write_hint hint,
				nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				nvp_nvme_req_next_sge_cb next_sge_fn);

/*
 * Flexible Data Placement (NVMe 2.0 TP4146). Errors as nvp_nvme_ctrlr_cmd_admin_sync()
 * (-EIO: the device refused, status in *@cpl), and -EINVAL for bad arguments.
 */

/** CTRATT bit 19: the controller supports FDP. */
bool nvp_nvme_ctrlr_fdp_supported(const struct nvp_nvme_ctrlr *ctrlr);
/** Identify Namespace ENDGID: the endurance group of @ns (0 = none reported). */
uint16_t nvp_nvme_ns_get_endgid(const struct nvp_nvme_ns *ns);
/**
 * Get Log Page @lid (NVME_LOG_FDP_*) of endurance group @endgid (LSI), @lsp in CDW10
 * 11:8 (FDP events: 0 host, 1 controller); @len a multiple of 4.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_fdp_get_log(struct nvp_nvme_ctrlr *ctrlr, uint8_t lid, uint16_t endgid,
			       uint8_t lsp, void *buf, uint32_t len, struct nvme_cpl *cpl);
/**
 * Get Features FDP of @endgid: enabled, and with which configuration (may be NULL).
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_fdp_get_feature(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, bool *enabled,
				   uint8_t *cfg_idx, struct nvme_cpl *cpl);
/**
 * Set Features FDP: enable configuration @cfg_idx on @endgid, or disable FDP. A device
 * may refuse while the endurance group holds namespaces. Hints already set up keep
 * their map until nvp_nvme_ns_hints_setup() runs again.
 * \return 0; -EIO error status (in *@cpl); -ETIMEDOUT; -ENXIO; -EINVAL; -ENOMEM.
 */
int nvp_nvme_ctrlr_fdp_set_feature(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, bool enable,
				   uint8_t cfg_idx, struct nvme_cpl *cpl);
/**
 * Find configuration @idx in an FDP Configurations log of @len bytes (what was read of
 * it): copied to *@desc (descriptors need not be aligned in the page), its byte offset
 * in @log to *@offset (may be NULL); its NRUH handle descriptors follow it there.
 * \return 0; -ENOENT no such configuration; -EINVAL truncated or inconsistent sizes.
 */
int nvp_nvme_fdp_config_find(const void *log, size_t len, uint16_t idx,
			     struct nvme_fdp_config_desc *desc, size_t *offset);
/**
 * Read the configurations log of @endgid and copy out configuration @idx's header.
 * \return 0; -ENOENT no such configuration; -EINVAL bad argument or a truncated log;
 * -EIO, -ETIMEDOUT, -ENXIO, -ENOMEM as nvp_nvme_ctrlr_cmd_admin_sync().
 */
int nvp_nvme_ctrlr_fdp_get_config(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint16_t idx,
				  struct nvme_fdp_config_desc *out, struct nvme_cpl *cpl);

/** Most placement identifiers one nvp_nvme_ns_fdp_ruh_update() takes. */
#define NVP_NVME_FDP_MAX_UPDATE 128

/**
 * I/O Management Receive, Reclaim Unit Handle Status of @ns into @buf (struct
 * nvme_fdp_ruh_status, then its descriptors), synchronously on @qpair, which must
 * belong to the calling thread and be polled by nobody else meanwhile, and the call
 * waits as long as its requests' deadline (timeout_us; none: as long as the device
 * takes); NULL = on a two-entry qpair with a 10 s deadline created and freed here
 * (-EBUSY if no queue id is free).
 * \return 0; -EINVAL bad argument (@len below the header or not a multiple of 4);
 * -EIO error status (in *@cpl) or no completion before the deadline; -ENOMEM; -EBUSY;
 * -ENXIO failed controller; -EPERM @qpair not the caller's (debug builds).
 */
int nvp_nvme_ns_fdp_ruh_status(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			       uint32_t len, struct nvme_cpl *cpl);
/**
 * I/O Management Send, Reclaim Unit Handle Update of @npids identifiers, as above.
 * \return as nvp_nvme_ns_fdp_ruh_status(): 0; -EINVAL (also @npids 0 or above
 * NVP_NVME_FDP_MAX_UPDATE); -EIO; -ENOMEM; -EBUSY; -ENXIO; -EPERM.
 */
int nvp_nvme_ns_fdp_ruh_update(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
			       const uint16_t *pids, uint32_t npids, struct nvme_cpl *cpl);

/**
 * Submit any I/O command as given (no LBA checks: for tools and tests that want to see
 * the device's own status). The CID and data pointer are filled by the driver.
 * \return 0; -EINVAL NULL argument or a buffer the PRP rules refuse; -EFAULT buffer not
 * DMA memory; -ENOMEM no free request; -ENXIO failed controller; -EPERM not the owner
 * thread (debug builds).
 */
int nvp_nvme_ctrlr_cmd_io_raw(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair,
			      const struct nvme_cmd *cmd, void *buf, uint32_t len,
			      nvp_nvme_cmd_cb cb, void *cb_arg);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_NVME_H */
