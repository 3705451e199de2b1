/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the NVMe driver shared by the files of lib/nvme. Not installed.
 *
 * Layers inside the driver:
 *   nvme.c            probe/connect/detach, transport IDs, status strings, transports
 *   nvme_ctrlr.c      the init state machine, reset, shutdown, failure, I/O qpair life
 *   nvme_ctrlr_cmd.c  admin commands, the synchronous helper, AERs, aborts
 *   nvme_ns.c         namespace objects
 *   nvme_ns_cmd.c     NVM commands (validation, then a request for the qpair)
 *   nvme_ns_split.c   requests past the transfer limit or an I/O boundary: children
 *   nvme_qpair.c      requests, trackers, the queued list: submit, complete, poll
 *   nvme_qpair_recovery.c  timeouts, Abort, quarantine, the reset handshake, queue
 *                     re-creation
 *   nvme_transport.h  the one "PCIe inline, else the ops table" dispatch of the I/O path
 *   nvme_pcie_ctrlr.c the PCIe transport: BAR0, registers, queue set-up, the ops table
 *   nvme_pcie.c       its I/O path where not inline (nvme_pcie_internal.h): checks, PRP lists
 *   nvme_pcie_prp.c   PRP lists
 *   nvme_pcie_probe.c the PCI function a transport ID names; the PCIe scan
 *
 * Generic code reaches a transport only through struct nvme_transport_ops, so a later
 * NVMe/TCP transport slots in beside PCIe. Functions shared between files are prefixed
 * nvme_ (never nvp_: only the public API is exported).
 */
#ifndef NVP_NVME_INTERNAL_H
#define NVP_NVME_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "nvme_fiber.h"
#include "nvp_config.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_spec.h"
#include "nvpoll/util.h"

#ifndef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "nvme"
#endif
#include "nvpoll/log.h"

/* ---------------------------------------------------------------------------------------
 * Limits and defaults
 * ------------------------------------------------------------------------------------- */

#define NVME_MAX_LBA_COUNT 65536u /* NLB is a 16-bit 0's based field */
#define NVME_MAX_QUEUE_ENTRIES NVP_NVME_QUEUE_SIZE_MAX
#define NVME_MAX_ADMIN_ENTRIES 4096u /* AQA.ASQS/ACQS are 12-bit 0's based fields */
#define NVME_MIN_QUEUE_ENTRIES NVP_NVME_QUEUE_SIZE_MIN
#define NVME_MAX_AERS 4u /* AERs kept armed (further limited by AERL) */
#define NVME_IDENTIFY_SIZE 4096u
#define NVME_DSM_PAGE_SIZE (NVME_DSM_MAX_RANGES * sizeof(struct nvme_dsm_range))
/*
 * DMA pages for dataset management ranges per I/O qpair: enough for this many DSM commands
 * in flight at once (a DSM submit past it gets -ENOMEM, like running out of requests).
 * A page per request would cost 4 MiB of DMA memory for a default qpair.
 */
#define NVME_DSM_POOL_PAGES 32u
/*
 * Command identifiers beyond the SQ's slots, so that CIDs quarantined after a timeout
 * (see nvme_qpair.c) do not take the queue's slots with them.
 */
#define NVME_QUARANTINE_SPARE_CIDS 16u
/* Pools of chained PRP list pages are sized for this many maximum-size requests at once. */
#define NVME_PRP_POOL_MAX_REQS 4u
/* While requests are outstanding and nothing completes, CSTS is read this often (ms). */
#define NVME_HEALTH_CHECK_MS 1000u
#define NVME_RELEASE_CHECK_MS 100u /* ask the transport whether the device is wanted back */
/* Shutdown (CC.SHN) waits at least this long for SHST complete, at most the cap. */
#define NVME_SHUTDOWN_TIMEOUT_MS 5000u
#define NVME_SHUTDOWN_TIMEOUT_MAX_MS 20000u

#define NVME_DEFAULT_NUM_IO_QUEUES 64u
#define NVME_DEFAULT_IO_QUEUE_SIZE 256u
#define NVME_DEFAULT_ADMIN_QUEUE_SIZE 32u
#define NVME_DEFAULT_ADMIN_TIMEOUT_MS 10000u
#define NVME_DEFAULT_IO_TIMEOUT_US (30ull * 1000 * 1000)
#define NVME_DEFAULT_MAX_IO_SIZE (2u * 1024 * 1024)
#define NVME_DEFAULT_IO_RETRY_COUNT 4u

/* io_flags each NVM command accepts (CDW12 bits), see nvme_spec.h. */
#define NVME_IO_FLAGS_DTYPE_MASK (0xfu << NVME_IO_FLAGS_DTYPE_SHIFT)
#define NVME_IO_FLAGS_PRINFO_MASK (NVME_IO_FLAGS_PRACT | NVME_IO_FLAGS_PRCHK_MASK)
/* io_flags a read or write may carry on the fast path (no protection information). */
#define NVME_IO_FLAGS_RW_PLAIN \
	(NVME_IO_FLAGS_FORCE_UNIT_ACCESS | NVME_IO_FLAGS_LIMITED_RETRY | NVME_IO_FLAGS_DTYPE_MASK)
#define NVME_IO_FLAGS_RW_VALID                                           \
	(NVME_IO_FLAGS_FORCE_UNIT_ACCESS | NVME_IO_FLAGS_LIMITED_RETRY | \
	 NVME_IO_FLAGS_DTYPE_MASK | NVME_IO_FLAGS_PRINFO_MASK)
#define NVME_IO_FLAGS_WZ_VALID (NVME_IO_FLAGS_RW_VALID | NVME_IO_FLAGS_DEALLOCATE)

/* ---------------------------------------------------------------------------------------
 * Requests and trackers
 * ------------------------------------------------------------------------------------- */

enum nvme_payload_type {
	NVME_PAYLOAD_NONE = 0,
	NVME_PAYLOAD_CONTIG, /* one virtually contiguous DMA buffer */
	NVME_PAYLOAD_SGL,    /* reset_sgl/next_sge callbacks */
};

/* What a request transfers: enough to build the PRPs whenever it reaches a slot. */
struct nvme_payload {
	void *buf;
	uint32_t size;
	uint8_t type; /* enum nvme_payload_type */
	/* Scattered payloads only. */
	nvp_nvme_req_reset_sgl_cb reset_sgl_fn;
	nvp_nvme_req_next_sge_cb next_sge_fn;
	void *sgl_arg;
};

/*
 * A request: one command as the caller asked for it. Preallocated per qpair; lives on the
 * qpair's free list, its queued list, or in a tracker while the device has it.
 * Two cache lines for a submission: the command, then everything a contiguous payload's
 * submission and completion touch (callback, list link, buffer). The split and metadata
 * fields at the end (a fourth line) are touched only by requests that need them: they
 * are set by the code that uses them, never by nvme_request_init().
 */
struct nvme_request {
	struct nvme_cmd cmd; /* built by the submit call; CID and PRPs filled at submission */

	/* Hot: the second line. */
	nvp_nvme_cmd_cb cb_fn;
	void *cb_arg;
	union { /* on one list at a time: queued (link) or the free stack (free_link) */
		STAILQ_ENTRY(nvme_request) link;
		SLIST_ENTRY(nvme_request) free_link;
	};
	bool dptr_built; /* the transport filled cmd.dptr when it checked the request (it
			  * was queued): its submission does not walk the payload again */
	uint8_t retries; /* times sent again after a controller reset lost it */
	struct nvme_payload payload;

	/* Cold: only dataset management uses it. */
	void *dma_page; /* a page of the qpair's DSM pool while the request holds one */

	/* Cold: set while the request waits on the queued list (its deadline counts from
	 * here: a user's timeout bounds submit to completion, the wait included). */
	uint64_t accept_ticks;

	/* Cold: split requests and separate metadata (nvme_ns_split.c). */
	struct nvme_request *parent;  /* a child: the request it is a part of */
	struct nvp_nvme_qpair *qpair; /* a parent: the qpair its children go to */
	const struct nvp_nvme_ns *ns; /* a parent: its namespace (limits, formats) */
	void *md_buf;                 /* a parent: separate metadata of its whole range */
	uint64_t split_lba;           /* a parent: first LBA not sent yet */
	uint32_t split_left;          /* a parent: LBAs not sent yet */
	uint32_t split_offset;        /* parent: payload bytes sent; child: its payload's
				      * offset in the parent's payload */
	uint16_t num_children;        /* a parent: children accepted, not completed */
	uint16_t split_status;        /* a parent: first error (status_raw), 0 = none */
} __attribute__((aligned(64)));

/*
 * Whether a qpair's queues exist on the device. Anything but CONNECTED means the owner's
 * polls drive a small state machine that deletes and/or creates them with admin commands
 * it never waits for (nvme_qpair.c); submissions meanwhile wait on the queued list.
 */
enum nvme_qpair_conn_state {
	NVME_QP_CONNECTED = 0,
	NVME_QP_DELETING, /* reclaiming quarantined CIDs, or a stuck CQ: Delete I/O SQ/CQ in
			   * flight */
	NVME_QP_CREATING, /* after a reset or a reclaim: Create I/O CQ/SQ in flight */
	NVME_QP_LOST,     /* its connection was lost and the controller is reconnecting
			   * (opts.ctrlr_loss_timeout_sec): requests wait for the reset */
};

enum nvme_tracker_state {
	NVME_TR_FREE = 0,
	NVME_TR_ACTIVE,       /* on the outstanding list, deadline armed */
	NVME_TR_ABORT_WANTED, /* expired; Abort not sent yet (admin queue was busy) */
	NVME_TR_ABORT_SENT,   /* Abort submitted; see abort_result */
	NVME_TR_TIMED_OUT,    /* expired on a timeout_no_abort qpair: reported, left to
			       * its completion, a reset or the qpair's free */
	NVME_TR_QUARANTINED,  /* request completed by the driver; the CID stays out of use
			       * until the device's late completion and the Abort's own
			       * completion have arrived, or a reset */
};

/* Written by the Abort's callback (any thread), read by the qpair's owner. */
enum nvme_abort_result {
	NVME_ABORT_NONE = 0,
	NVME_ABORT_INFLIGHT,     /* Abort submitted, not completed */
	NVME_ABORT_DONE_ABORTED, /* the controller aborted the command: its completion follows */
	NVME_ABORT_DONE_NOT_ABORTED, /* "not aborted" (DW0 bit 0): the controller has fetched
				      * it (a command still in the SQ can be aborted) */
	NVME_ABORT_DONE_FAILED,      /* the Abort itself failed (error status) */
};

/*
 * A tracker: a command identifier and, while the command may still sit in the SQ, one of
 * its slots. Preallocated per qpair, one cache line each. The CID is the tracker's index
 * in its low bits and a generation above them (qpair->cid_idx_mask), advanced each time
 * the tracker is freed: a completion posted twice, or late for a command since ended,
 * names an earlier generation and matches no live command (as Linux's genctr does).
 */
struct nvme_tracker {
	struct nvme_request *req;            /* NULL once the request has been completed */
	uint64_t deadline;                   /* ticks; 0 = none */
	TAILQ_ENTRY(nvme_tracker) link;      /* outstanding, recovery or reset lists */
	SLIST_ENTRY(nvme_tracker) free_link; /* the free stack */
	uint16_t cid;   /* of its current (or next) command: index | generation */
	bool xport_res; /* the transport gave this submission resources of its own
			 * (PCIe: chained PRP list pages): release_tracker on free */
	uint8_t rsvd1;
	/* The next four bytes are written together at submission: one store, not three
	 * (2 instructions fewer per I/O, bench/driver_cost). */
	uint8_t state;    /* enum nvme_tracker_state */
	bool cpl_pending; /* the device owes a completion for this CID */
	bool holds_slot;  /* counted in qpair->slots_used */
	uint8_t rsvd2;

	/* Cold: timeout recovery. */
	_Atomic int abort_result; /* enum nvme_abort_result */
	uint64_t abort_deadline;
} __attribute__((aligned(64)));

/* ---------------------------------------------------------------------------------------
 * Queue pairs
 * ------------------------------------------------------------------------------------- */

struct nvme_transport_ops;
TAILQ_HEAD(nvme_tracker_list, nvme_tracker);

/* A scan's report of one controller (see scan in struct nvme_transport_ops). */
typedef int (*nvme_transport_found_cb)(void *ctx, const struct nvp_nvme_transport_id *trid);

/*
 * The generic part of a queue pair. A transport embeds it first in its own qpair
 * structure (struct nvme_pcie_qpair) and places its ring state after it.
 */
struct nvp_nvme_qpair {
	/* Hot: every submission and completion. */
	const struct nvme_transport_ops *transport;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvme_tracker *trackers;        /* indexed by CID & cid_idx_mask */
	SLIST_HEAD(, nvme_tracker) free_tr;   /* a stack: the last freed is warm in cache */
	struct nvme_tracker_list outstanding; /* submission order: the head expires first */
	STAILQ_HEAD(, nvme_request) queued;   /* waiting for a slot (or PRP list pages) */
	/* A stack, as free_tr: a tail queue's pop and push also test for empty and fix its
	 * tail pointer (4 instructions per I/O more, measured). */
	SLIST_HEAD(, nvme_request) free_req;
	uint64_t timeout_ticks;   /* per-request deadline, 0 = none */
	uint32_t num_outstanding; /* accepted, not yet completed (submitted + queued) */
	uint32_t num_entries;
	uint32_t num_slots;    /* num_entries - 1: a full SQ holds one entry less */
	uint32_t slots_used;   /* trackers holding a slot: never above num_slots */
	uint32_t num_trackers; /* num_slots + spare CIDs for quarantine */
	/* A CID's index bits; trackers has cid_idx_mask + 1 entries (those past num_trackers
	 * are never used), so a CID from the device indexes it without a bound test. */
	uint16_t cid_idx_mask;
	uint16_t cid_gen_step; /* cid_idx_mask + 1; 0 when the index takes all 16 bits */
	uint16_t id;
	bool is_admin;
	bool sq_dirty; /* entries written since the last SQ doorbell */
	union {
		struct {
			bool delay_doorbell;
			bool in_batch; /* inside a poll (callbacks) or submitting the queued
					* list: the doorbell is rung once at the end */
		};
		/* either: a submission leaves the doorbell to later (one load, one test:
		 * 2 instructions fewer per I/O, bench/driver_cost) */
		uint16_t ring_later;
	};
	union {
		struct {
			bool failed;        /* everything completed, nothing accepted */
			uint8_t conn_state; /* enum nvme_qpair_conn_state: CONNECTED (0) on
					     * the fast path */
			bool deleting;      /* being freed */
			uint8_t unused_;
		};
		uint32_t not_ready; /* the three as one word: submit tests them with one load */
	};
	uint32_t reset_gen; /* the controller's reset generation the queues were made in */
	/* Nonzero while the owner may write this qpair's doorbells (a poll, a doorbell
	 * call): a reset waits for it to drop before it disables the controller, so no
	 * doorbell of a queue the device no longer has is ever written. */
	_Atomic uint32_t db_window;
	struct nvp_nvme_qpair_stats stats; /* a few adds per poll or I/O */
	uint64_t poll_ticks;               /* when the current (or last) poll started */
	void (*batch_end_fn)(void *arg, uint64_t poll_ticks); /* nvp_nvme_qpair_set_batch_end() */
	void *batch_end_arg;

	/* Cold: recovery, reset, bookkeeping. */
	struct nvme_tracker_list recovery; /* expired, aborting or quarantined */
	uint64_t conn_deadline;            /* the step's admin command times out */
	_Atomic uint32_t conn_status;      /* written by conn_cb (any thread) */
	uint8_t conn_step;                 /* admin command of the current phase */
	bool conn_inflight;                /* that command is on the admin queue */
	bool cq_stuck; /* admin queue: its CQ was found stuck; whoever holds the admin lock
			* outside a poll resets the controller (nvme_ctrlr_cmd.c) */
	/* The last completion or health check: CSTS is read, and the CQ looked at, when
	 * nothing completes for a while after it. */
	uint64_t health_base;
	uint64_t next_release_tick; /* ask whether the device is wanted back */
	pthread_t owner;
	struct nvp_nvme_io_qpair_opts opts;
	struct nvme_request *reqs;
	uint32_t num_requests;
	void *dsm_pages; /* NVME_DSM_PAGE_SIZE * dsm_pool_size bytes of DMA memory */
	void **dsm_free; /* stack of free pages from dsm_pages */
	uint32_t dsm_free_count;
	TAILQ_ENTRY(nvp_nvme_qpair) link; /* the controller's list of I/O qpairs */
};

/* ---------------------------------------------------------------------------------------
 * Transports
 * ------------------------------------------------------------------------------------- */

/*
 * What a transport provides. Generic code never looks behind these: PCIe registers,
 * doorbells and PRPs live in nvme_pcie*.c (state in nvme_pcie_internal.h); a TCP
 * transport implements the same and registers itself with nvme_transport_register().
 * PCIe's submit, doorbell and completion entries are also called directly, through the
 * one dispatch in nvme_transport.h, as SPDK does: no indirect call on its I/O path.
 * Register offsets are those of the NVMe register file (NVME_REG_*).
 */
struct nvme_transport_ops {
	const char *name; /* "PCIe" */
	enum nvp_nvme_transport_type type;

	/*
	 * Optional: offer every controller reachable without an address to @found (PCIe:
	 * the unclaimed NVMe functions env knows). \return 0, -ENODEV if there is none, the
	 * first -errno of @found, or -errno.
	 */
	int (*scan)(void *ctx, nvme_transport_found_cb found);
	/*
	 * Optional: reject at parse time a transport ID this transport could never use
	 * (PCIe: a traddr that is not a PCI address). \return 0 or -EINVAL (logged).
	 */
	int (*trid_check)(const struct nvp_nvme_transport_id *trid);
	/*
	 * Create a controller for @trid (PCIe: find the function at traddr, or have the
	 * provider named by trtype make one, and claim it). The init state machine runs
	 * afterwards; ctrlr_destruct() undoes this, the device made for it included.
	 */
	int (*ctrlr_construct)(const struct nvp_nvme_transport_id *trid,
			       const struct nvp_nvme_ctrlr_opts *opts,
			       struct nvp_nvme_ctrlr **ctrlr);
	/* Release everything ctrlr_construct() set up (admin qpair included). */
	void (*ctrlr_destruct)(struct nvp_nvme_ctrlr *ctrlr);
	int (*ctrlr_get_reg_4)(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t *value);
	int (*ctrlr_set_reg_4)(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t value);
	/* Reset the admin qpair's rings and tell the controller where they are (AQA/ASQ/ACQ). */
	int (*ctrlr_enable_admin_queue)(struct nvp_nvme_ctrlr *ctrlr);
	/*
	 * Optional: a reset brought the controller back to READY; restore controller-wide
	 * state of the transport before the I/O qpairs re-create their queues (PCIe: shadow
	 * doorbells). Called by the resetting thread, admin lock held.
	 */
	void (*ctrlr_reset_done)(struct nvp_nvme_ctrlr *ctrlr);
	/*
	 * Optional: a reconnect attempt's new admin connection, one step per call without
	 * blocking, admin lock held (TCP: connect(), ICReq/ICResp, the Fabrics Connect).
	 * \return 0 under way (call again at a later poll), 1 connected (the reset that
	 * follows keeps it), or -errno: the attempt failed, the connection is closed.
	 */
	int (*ctrlr_reconnect_poll)(struct nvp_nvme_ctrlr *ctrlr);
	/*
	 * Optional: true once whoever lent the device asks for it back (PCIe: the kernel
	 * unbinding the function from vfio-pci). Any thread; called every
	 * NVME_RELEASE_CHECK_MS by a qpair with requests outstanding.
	 */
	bool (*ctrlr_release_requested)(struct nvp_nvme_ctrlr *ctrlr);
	/*
	 * Optional: false once the device is known to be gone (PCIe: config space no longer
	 * answers). Asked only by the health check, when CSTS.RDY reads clear on a ready
	 * controller: a removed function's BAR may read zeros rather than all ones.
	 */
	bool (*ctrlr_is_present)(struct nvp_nvme_ctrlr *ctrlr);
	/* I/O queues the transport can address (PCIe: doorbells inside BAR0). */
	uint32_t (*ctrlr_get_max_io_queues)(struct nvp_nvme_ctrlr *ctrlr);
	/*
	 * Optional: why the registers read all ones, for the init and health check messages
	 * (PCIe: the device is gone or BAR0 is not mapped; a fabric: the property reads
	 * have no connection). Without it the message says only that they do.
	 */
	const char *(*ctrlr_all_ones_cause)(const struct nvp_nvme_ctrlr *ctrlr);

	/* Allocate a qpair (rings, trackers, requests); nothing is sent to the device. */
	int (*qpair_create)(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid,
			    const struct nvp_nvme_io_qpair_opts *opts,
			    struct nvp_nvme_qpair **qpair);
	void (*qpair_destroy)(struct nvp_nvme_qpair *qpair);
	/* Create the I/O queues on the device (PCIe: Create I/O CQ, then SQ). */
	int (*qpair_connect)(struct nvp_nvme_qpair *qpair);
	/*
	 * Optional: what qpair_connect does once per qpair besides creating the queues
	 * (PCIe: its interrupt vector, the controller's shadow doorbells), for a qpair whose
	 * queues the owner's polls create (opts.async_mode). Nothing waits for the device
	 * here but, on PCIe, a controller's first Doorbell Buffer Config.
	 */
	int (*qpair_connect_prepare)(struct nvp_nvme_qpair *qpair);
	/* Delete them (PCIe: Delete I/O SQ, then CQ). */
	int (*qpair_disconnect)(struct nvp_nvme_qpair *qpair);
	/* Ring indices and phase back to their initial values (empty queues). */
	void (*qpair_reset)(struct nvp_nvme_qpair *qpair);
	/*
	 * Optional, for the owner's non-blocking re-creation (after a reset or to reclaim
	 * CIDs): the admin command of step @step of creating (@create) or deleting the
	 * qpair's queues, the same commands qpair_connect/disconnect run synchronously.
	 * \return 0 and *@cmd; -ENOENT after the last step. A transport without it has its
	 * qpairs re-created with the synchronous ops from the owner's poll (which may block).
	 */
	int (*qpair_conn_cmd)(struct nvp_nvme_qpair *qpair, bool create, uint32_t step,
			      struct nvme_cmd *cmd);
	/*
	 * Optional, for a transport whose queues are connections (TCP): re-create the
	 * qpair's queues without blocking, a step per call from the owner's polls (the
	 * first call after qpair_reset starts). \return 1 connected, 0 in progress, or
	 * -errno (the connection is closed again; -ETIMEDOUT after admin_timeout_ms).
	 */
	int (*qpair_connect_poll)(struct nvp_nvme_qpair *qpair);
	/*
	 * Optional: the missed-completion check of a timeout (Linux's nvme_timeout() polls
	 * the CQ first). True if the CQ is stuck: the device has posted past an entry the
	 * host cannot consume (PCIe: the entry at the head carries the previous pass's phase
	 * tag while a later one, past any more such, carries this pass's), so no completion
	 * on this CQ will ever be seen again. Owner thread, slow paths only (timeouts,
	 * recovery).
	 */
	bool (*qpair_cq_stalled)(struct nvp_nvme_qpair *qpair);
	/* Validate a request's payload as submit would, without side effects. */
	int (*qpair_check_request)(struct nvp_nvme_qpair *qpair, struct nvme_request *req);
	/*
	 * Put @req into the queue in slot @tr. \return 0, -EAGAIN when resources other than
	 * the slot (chained PRP list pages) are short, or -errno for a bad payload.
	 */
	int (*qpair_submit)(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
			    struct nvme_request *req);
	/* Tell the device about entries written since the last doorbell. */
	void (*qpair_ring_doorbell)(struct nvp_nvme_qpair *qpair);
	/*
	 * Optional: the SQ doorbell without an MMIO write (a shadow doorbell). \return true
	 * if the controller was told; false leaves the next qpair_ring_doorbell() owing it.
	 */
	bool (*qpair_ring_shadow)(struct nvp_nvme_qpair *qpair);
	/*
	 * Consume up to @max completions (0 = all), passing each to nvme_qpair_complete_cpl();
	 * ring the CQ head doorbell once. \return completions consumed.
	 */
	int32_t (*qpair_process_completions)(struct nvp_nvme_qpair *qpair, uint32_t max);
	/*
	 * Optional: interrupts of a qpair created with opts.interrupts. qpair_get_irq_fd
	 * \return the eventfd its CQ's vector signals, or -ENOTSUP; qpair_irq_unmask
	 * re-arms that vector (0, -ENOTSUP, or env's -errno).
	 */
	int (*qpair_get_irq_fd)(const struct nvp_nvme_qpair *qpair);
	int (*qpair_irq_unmask)(struct nvp_nvme_qpair *qpair);
	/* Give back per-submission resources of @tr (tr->xport_res: chained PRP pages). */
	void (*qpair_release_tracker)(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr);
};

/* Register a transport by name (the built-in PCIe one is always there). */
int nvme_transport_register(const struct nvme_transport_ops *ops);
const struct nvme_transport_ops *nvme_transport_get(const char *name);
/* The transport that drives @trid (its trtype resolved by nvme_trid_resolve_type()). */
const struct nvme_transport_ops *nvme_transport_for(const struct nvp_nvme_transport_id *trid);
int nvme_trid_resolve_type(struct nvp_nvme_transport_id *trid);

/* ---------------------------------------------------------------------------------------
 * Controllers and namespaces
 * ------------------------------------------------------------------------------------- */

enum nvme_ctrlr_state {
	NVME_CTRLR_STATE_DISABLE = 0,              /* clear CC.EN */
	NVME_CTRLR_STATE_DISABLE_WAIT_FOR_READY_0, /* wait for CSTS.RDY = 0 */
	NVME_CTRLR_STATE_SET_ADMIN_QUEUE,          /* program AQA, ASQ, ACQ */
	NVME_CTRLR_STATE_ENABLE,                   /* write CC with EN = 1 */
	NVME_CTRLR_STATE_ENABLE_WAIT_FOR_READY_1,  /* wait for CSTS.RDY = 1 */
	NVME_CTRLR_STATE_IDENTIFY,                 /* identify controller */
	NVME_CTRLR_STATE_SET_NUM_QUEUES,           /* Set Features: number of queues */
	NVME_CTRLR_STATE_IDENTIFY_ACTIVE_NS,       /* active namespace list */
	NVME_CTRLR_STATE_IDENTIFY_NS,              /* identify each active namespace */
	NVME_CTRLR_STATE_CONFIGURE_AER,            /* async event configuration, arm AERs */
	NVME_CTRLR_STATE_READY,
	NVME_CTRLR_STATE_ERROR,
};

struct nvp_nvme_ns {
	/* Hot: validation of every NVM command. */
	struct nvp_nvme_ctrlr *ctrlr;
	uint64_t num_sectors;
	uint32_t sector_size;
	uint32_t max_io_sectors; /* max transfer / sector size, at most NVME_MAX_LBA_COUNT */
	uint32_t id;
	bool active;
	uint32_t noiob;             /* optimal I/O boundary in LBAs (0 = none): requests are split
			       * where they cross one */
	uint16_t md_size;           /* metadata bytes per LBA (LBAF.MS) */
	uint8_t pi_type;            /* DPS bits 2:0, 0 = no protection information */
	bool md_separate;           /* metadata in a separate buffer (MPTR), not interleaved */
	uint32_t data_size;         /* data bytes per LBA, without metadata */
	uint32_t plain_max_sectors; /* the most LBAs a read or write may carry on the
				     * fast path: max_io_sectors, or 0 when every request
				     * needs the general one (NOIOB, protection information,
				     * separate metadata, an inactive namespace) */

	/* Cold. */
	uint32_t max_xfer_size;
	struct nvme_ns_data data;

	/* Write lifetime hints (nvme_dir.c): set up once, read by the hinted writes. */
	enum nvp_nvme_placement placement;
	uint32_t hint_dtype;                            /* NVME_IO_FLAGS_DTYPE_* of the map */
	uint16_t num_streams;                           /* NSA granted, or placement ids */
	uint16_t hint_dspec[NVP_NVME_WRITE_HINT_COUNT]; /* 0 = no directive */
	uint64_t hints_dropped;                         /* relaxed atomic */
};

/*
 * What a qpair's recovery (nvme_qpair_recovery.c) needs from the controller above it:
 * the admin queue's lock, an admin submission and poll (Aborts, the steps of re-creating
 * queues), the health check. Recovery sits below the controller and its admin commands
 * and reaches them only through this table, which nvme_ctrlr_construct() sets: the files'
 * dependencies run one way, controller -> qpair and recovery -> transport. The admin
 * commands' synchronous helper, below the controller too, asks its health check through
 * this table when a command times out, and a stuck admin CQ's reset; the reconnect poll
 * (nvme_ctrlr_reconnect.c) fails, resets or gives up on the controller through it.
 */
struct nvme_ctrlr_recovery_ops {
	bool (*admin_trylock)(struct nvp_nvme_ctrlr *ctrlr); /* never waits: true if now held */
	void (*admin_lock)(struct nvp_nvme_ctrlr *ctrlr);
	void (*admin_unlock)(struct nvp_nvme_ctrlr *ctrlr);
	/* Queue @cmd (no payload) on the admin queue, lock held. \return 0, -ENOMEM (no
	 * request object), -errno. */
	int (*admin_submit)(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd,
			    nvp_nvme_cmd_cb cb, void *cb_arg);
	/* Process the admin queue's completions unless another thread holds it. */
	int32_t (*admin_poll)(struct nvp_nvme_ctrlr *ctrlr);
	/* nvme_ctrlr_check_health() and nvme_ctrlr_removed(). */
	bool (*check_health)(struct nvp_nvme_ctrlr *ctrlr, const char *context);
	void (*removed)(struct nvp_nvme_ctrlr *ctrlr);
	/* nvme_ctrlr_fail() and nvp_nvme_ctrlr_reset(). */
	void (*fail)(struct nvp_nvme_ctrlr *ctrlr, const char *why);
	int (*reset)(struct nvp_nvme_ctrlr *ctrlr);
};

struct nvp_nvme_ctrlr {
	/* Hot: read on the I/O path. */
	const struct nvme_transport_ops *transport;
	atomic_bool is_failed;
	_Atomic uint32_t reset_gen; /* bumped as a reset starts: qpairs made in an older one
				     * re-create their queues at their owner's next poll */
	uint32_t max_xfer_size;     /* MDTS, opts.max_io_size */
	bool ticks_tsc;             /* nvp_env_get_ticks() is the TSC: read it inline */
	bool db_fence_asym;         /* membarrier registered (nvme_qpair_recovery.c): the
				     * doorbell window's owner side needs no fence
				     * instruction (nvme_qpair.c) */
	uint64_t ticks_hz;

	/* Cold. */
	uint32_t page_size; /* CC.MPS: the memory page size the controller is enabled with */
	char name[96];      /* for messages: "emu0 at 10000:00:00.0", "0000:01:00.0" */
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts opts;
	union nvme_cap_register cap;
	union nvme_vs_register vs;
	struct nvme_ctrlr_data cdata;
	/* Written under the admin lock (__atomic stores); read there plainly, or without
	 * it only through nvme_ctrlr_state_load() */
	enum nvme_ctrlr_state state;
	uint64_t state_deadline; /* ticks; 0 = no wait in progress */
	atomic_bool resetting;   /* a reset is between disable and READY: qpairs wait */
	bool shutdown_done;

	/* The admin queue is shared: every use holds adminq_lock (recursive, so that an
	 * admin callback may issue admin commands). */
	pthread_mutex_t adminq_lock;
	struct nvp_nvme_qpair *adminq;

	uint32_t num_io_queues; /* granted by Set Features, limited by the transport */
	uint64_t *qid_bitmap;   /* bit set = qid in use; bit 0 (admin) always set */
	TAILQ_HEAD(, nvp_nvme_qpair) io_qpairs;

	uint32_t *active_ns; /* active namespace ids, increasing */
	uint32_t num_active_ns;
	struct nvp_nvme_ns **ns; /* namespace objects, one per id ever active, sorted by id;
				  * never freed before detach so callers' pointers stay valid */
	uint32_t num_ns_objs;
	uint32_t ns_objs_cap; /* slots allocated in ns */

	uint32_t num_aers;
	bool ns_changed; /* namespace attribute notice not yet acted upon */
	nvp_nvme_cmd_cb aer_cb;
	void *aer_cb_arg;
	nvp_nvme_timeout_cb timeout_cb;
	void *timeout_cb_arg;
	nvp_nvme_remove_cb remove_cb;
	void *remove_cb_arg;
	atomic_bool removed; /* registers read all ones: the device is gone */
	const struct nvme_ctrlr_recovery_ops *recovery; /* see the struct */

	/* Reconnect without the application (nvme_ctrlr_reconnect.c). */
	atomic_bool reconnecting;        /* a connection was lost; the admin poll resets */
	_Atomic uint64_t loss_ticks;     /* when it was lost (fast_io_fail, ctrlr_loss) */
	_Atomic uint64_t next_reconnect; /* ticks of the next attempt; 0 = at once */
	uint32_t reconnect_attempts;     /* of this loss, for messages */
	uint64_t reconnect_logged;       /* ticks of the last attempt's line; 0 = none yet */
	uint32_t reconnect_unlogged;     /* failed attempts since that line, not shown */
	/* An attempt's reset under way, a step per poll of the thread that began it (it holds
	 * the admin lock from its first step to its last); NULL: none. */
	struct nvme_fiber *_Atomic reset_fiber;
	int reset_fiber_rc; /* the reset's result, once the fiber is done */
};

/*
 * A queue size within NVME_MIN_QUEUE_ENTRIES .. @max? *@fitted (if not NULL) gets it
 * clamped into that range. \return 0 or -ERANGE. nvp_nvme_ctrlr_fit_io_queue_size()
 * is this with @max = CAP.MQES + 1.
 */
static inline int
nvme_queue_size_fit(uint32_t size, uint32_t max, uint32_t *fitted)
{
	if (fitted != NULL) {
		*fitted = NVP_MAX(NVP_MIN(size, max), NVME_MIN_QUEUE_ENTRIES);
	}
	return size >= NVME_MIN_QUEUE_ENTRIES && size <= max ? 0 : -ERANGE;
}

/*
 * The largest transfer MDTS allows: 2^MDTS pages of CAP.MPSMIN (4 KiB << MPSMIN), 0 = no
 * limit; a value past 31 exceeds any buffer and is no limit either. \return it, capped
 * at @cap. The device's values are untrusted input (fuzz_identify feeds them).
 */
static inline uint32_t
nvme_mdts_max_xfer(uint8_t mdts, uint32_t mpsmin, uint32_t cap)
{
	uint64_t limit;

	if (mdts == 0 || mdts >= 32) {
		return cap;
	}
	limit = (uint64_t)(1u << (12 + (mpsmin & 0xfu))) << mdts;
	return limit < cap ? (uint32_t)limit : cap;
}

/*
 * The tick counter of deadlines, read inline where it is the TSC. Unit tests run the
 * driver on a fake clock through the build: they define NVME_UT_TICKS to a static
 * function of theirs before including the .c under test.
 */
#ifdef NVME_UT_TICKS
static uint64_t NVME_UT_TICKS(void);

static inline uint64_t
nvme_ticks(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return NVME_UT_TICKS();
}
#else
static inline uint64_t
nvme_ticks(const struct nvp_nvme_ctrlr *ctrlr)
{
	if (nvp_likely(ctrlr->ticks_tsc)) {
		return nvp_tsc_read();
	}
	return nvp_env_get_ticks();
}
#endif

static inline uint64_t
nvme_ms_to_ticks(const struct nvp_nvme_ctrlr *ctrlr, uint64_t ms)
{
	return nvp_ms_to_ticks(ms, ctrlr->ticks_hz);
}

static inline uint64_t
nvme_us_to_ticks(const struct nvp_nvme_ctrlr *ctrlr, uint64_t us)
{
	return nvp_us_to_ticks(us, ctrlr->ticks_hz) + (us ? 1u : 0u);
}

static inline bool
nvme_ctrlr_is_failed(const struct nvp_nvme_ctrlr *ctrlr)
{
	return atomic_load_explicit(&ctrlr->is_failed, memory_order_relaxed);
}

/* The queues this qpair has on the device are from before the last controller reset. */
static inline bool
nvme_qpair_reset_pending(const struct nvp_nvme_qpair *qpair)
{
	return qpair->reset_gen !=
	       atomic_load_explicit(&qpair->ctrlr->reset_gen, memory_order_acquire);
}

/* nvme_qpair_recovery.c: the reset handshake's fences */
bool nvme_db_fence_asym(void);
void nvme_db_fence_remote(const struct nvp_nvme_ctrlr *ctrlr);
/* nvme_qpair_recovery.c: what nvme_qpair_complete_cpl() (nvme_cpl.h) does not do inline */
void nvme_qpair_complete_slow(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl);

/* nvme.c */
void nvme_ctrlr_opts_copy(struct nvp_nvme_ctrlr_opts *dst, const struct nvp_nvme_ctrlr_opts *src);
int nvme_ctrlr_opts_check(const struct nvp_nvme_ctrlr_opts *opts);

/* nvme_ctrlr.c */
int nvme_ctrlr_construct(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_transport_id *trid,
			 const struct nvp_nvme_ctrlr_opts *opts,
			 const struct nvme_transport_ops *transport);
void nvme_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr);
int nvme_ctrlr_set_cap_vs(struct nvp_nvme_ctrlr *ctrlr, union nvme_cap_register cap,
			  union nvme_vs_register vs);
int nvme_ctrlr_process_init(struct nvp_nvme_ctrlr *ctrlr);
int nvme_ctrlr_init(struct nvp_nvme_ctrlr *ctrlr);
const char *nvme_ctrlr_state_string(enum nvme_ctrlr_state state);
int nvme_ctrlr_shutdown(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_fail(struct nvp_nvme_ctrlr *ctrlr, const char *why);
bool nvme_ctrlr_check_health(struct nvp_nvme_ctrlr *ctrlr, const char *context);
void nvme_ctrlr_removed(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr);
bool nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_free_io_qpairs(struct nvp_nvme_ctrlr *ctrlr);

/* nvme_ctrlr_reconnect.c */
/* What the attempt poll should do at @now (a pure decision, unit tested on a fake clock). */
enum nvme_reconnect_action {
	NVME_RECONNECT_WAIT = 0, /* not yet time for an attempt */
	NVME_RECONNECT_TRY,      /* attempt a reset now */
	NVME_RECONNECT_GIVE_UP,  /* ctrlr_loss_timeout_sec has passed: failed for good */
};
/* ctrlr_loss_timeout_sec: give up, try now, or wait (@loss may be newer than @now). */
static inline enum nvme_reconnect_action
nvme_reconnect_decide(const struct nvp_nvme_ctrlr_opts *opts, uint64_t hz, uint64_t loss,
		      uint64_t next, uint64_t now)
{
	int32_t limit = opts->ctrlr_loss_timeout_sec;
	uint64_t since = now > loss ? now - loss : 0;

	if (limit > 0 && since >= (uint64_t)limit * hz) {
		return NVME_RECONNECT_GIVE_UP;
	}
	return now >= next ? NVME_RECONNECT_TRY : NVME_RECONNECT_WAIT;
}

/* A failed attempt's line is shown for the first NVME_RECONNECT_LOG_FIRST attempts of a
 * loss, then at most once per NVME_RECONNECT_LOG_EVERY_S (a controller that retries every
 * second for ever would fill a log). */
#define NVME_RECONNECT_LOG_FIRST 5u
#define NVME_RECONNECT_LOG_EVERY_S 60u
static inline bool
nvme_reconnect_log_due(uint32_t attempt, uint64_t hz, uint64_t last_logged, uint64_t now)
{
	return attempt <= NVME_RECONNECT_LOG_FIRST || last_logged == 0 ||
	       now - last_logged >= (uint64_t)NVME_RECONNECT_LOG_EVERY_S * hz;
}

/* fast_io_fail_timeout_sec (0 = never) has passed since the loss. */
static inline bool
nvme_reconnect_fast_fail_due(const struct nvp_nvme_ctrlr_opts *opts, uint64_t hz, uint64_t loss,
			     uint64_t now)
{
	uint32_t fast = opts->fast_io_fail_timeout_sec;
	uint64_t since = now > loss ? now - loss : 0;

	return fast != 0 && since >= (uint64_t)fast * hz;
}

/* The init state, read without the admin lock (a transport's thread, a health check). */
static inline enum nvme_ctrlr_state
nvme_ctrlr_state_load(const struct nvp_nvme_ctrlr *ctrlr)
{
	return __atomic_load_n(&ctrlr->state, __ATOMIC_ACQUIRE);
}

static inline bool
nvme_ctrlr_is_reconnecting(const struct nvp_nvme_ctrlr *ctrlr)
{
	return atomic_load_explicit(&ctrlr->reconnecting, memory_order_acquire);
}

/* Reconnect is on, and the device was not failed for good. */
static inline bool
nvme_ctrlr_reconnect_enabled(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->opts.ctrlr_loss_timeout_sec != 0 &&
	       !atomic_load_explicit(&ctrlr->removed, memory_order_relaxed);
}

/* An owner's poll: have waiting requests waited past fast_io_fail_timeout_sec? */
static inline bool
nvme_ctrlr_fast_io_fail(const struct nvp_nvme_ctrlr *ctrlr, uint64_t now)
{
	return nvme_ctrlr_is_reconnecting(ctrlr) &&
	       nvme_reconnect_fast_fail_due(&ctrlr->opts, ctrlr->ticks_hz,
					    atomic_load(&ctrlr->loss_ticks), now);
}

void nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why);
void nvme_ctrlr_reconnect_finish(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_reconnect_poll_io(struct nvp_nvme_ctrlr *ctrlr, uint64_t now);

/* nvme_ctrlr_cmd.c */
int nvme_ctrlr_submit_admin(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			    uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg);
int nvme_ctrlr_cmd_identify_ctrlr(struct nvp_nvme_ctrlr *ctrlr);
int nvme_ctrlr_cmd_set_num_queues(struct nvp_nvme_ctrlr *ctrlr, uint32_t wanted, uint32_t *granted);
int nvme_ctrlr_configure_aer(struct nvp_nvme_ctrlr *ctrlr);
void nvme_ctrlr_cmd_build_create_io_cq(struct nvme_cmd *cmd, uint16_t qid, int32_t iv,
				       uint32_t entries, uint64_t iova);
void nvme_ctrlr_cmd_build_create_io_sq(struct nvme_cmd *cmd, uint16_t qid, uint32_t entries,
				       uint64_t iova, uint8_t qprio);
int nvme_ctrlr_cmd_create_io_cq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, int32_t iv,
				uint32_t entries, uint64_t iova);
int nvme_ctrlr_cmd_create_io_sq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, uint32_t entries,
				uint64_t iova, uint8_t qprio);
int nvme_ctrlr_cmd_doorbell_buffer_config(struct nvp_nvme_ctrlr *ctrlr, uint64_t db_iova,
					  uint64_t ei_iova);
int nvme_ctrlr_cmd_delete_io_queue(struct nvp_nvme_ctrlr *ctrlr, uint8_t opc, uint16_t qid);
int nvme_ctrlr_cmd_abort(struct nvp_nvme_ctrlr *ctrlr, uint16_t sqid, uint16_t cid,
			 nvp_nvme_cmd_cb cb, void *cb_arg, bool trylock);
int32_t nvme_ctrlr_process_admin_trylock(struct nvp_nvme_ctrlr *ctrlr);
/* A poll found the admin CQ stuck (stale phase tags): reset, which rebuilds the admin queue.
 * Admin lock held, outside any poll of the admin queue. */
void nvme_admin_cq_stuck_reset(struct nvp_nvme_ctrlr *ctrlr);
void nvme_cpl_log(const char *what, const struct nvme_cpl *cpl);

/* nvme_ns.c */
int nvme_ctrlr_identify_active_ns(struct nvp_nvme_ctrlr *ctrlr);
int nvme_ctrlr_identify_namespaces(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid);
void nvme_ctrlr_free_namespaces(struct nvp_nvme_ctrlr *ctrlr);

/* nvme_ns_split.c */
int nvme_md_iova(const void *md_buf, uint32_t len, uint64_t *iova);
int nvme_split_submit(struct nvp_nvme_qpair *qpair, struct nvme_request *parent);

/* nvme_qpair_recovery.c: timeouts, Abort, quarantine, re-creating the queues */
void nvme_qpair_check_deadlines(struct nvp_nvme_qpair *qpair, int32_t completed);
bool nvme_qpair_conn_poll(struct nvp_nvme_qpair *qpair);
void nvme_qpair_conn_start_create(struct nvp_nvme_qpair *qpair);
bool nvme_qpair_is_stuck(struct nvp_nvme_qpair *qpair);
void nvme_qpair_reclaim_start(struct nvp_nvme_qpair *qpair);
void nvme_qpair_expire_queued(struct nvp_nvme_qpair *qpair, uint64_t now);
void nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc, bool dnr);
bool nvme_qpair_gone_for_good(const struct nvp_nvme_qpair *qpair);
bool nvme_qpair_orphan_request(struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb, void *cb_arg,
			       nvp_nvme_cmd_cb new_cb, void *new_arg, uint16_t *cid);
void nvme_qpair_neuter_aborts(struct nvp_nvme_qpair *adminq, struct nvp_nvme_qpair *qpair);
void nvme_cpl_set_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc, bool dnr);
void nvme_qpair_conn_lost(struct nvp_nvme_qpair *qpair, const char *why);
void nvme_qpair_fast_io_fail(struct nvp_nvme_qpair *qpair);

/* nvme_qpair.c */
int nvme_qpair_init(struct nvp_nvme_qpair *qpair, struct nvp_nvme_ctrlr *ctrlr, uint16_t id,
		    uint32_t num_entries, uint32_t num_requests, bool with_dma_pages);
void nvme_qpair_fini(struct nvp_nvme_qpair *qpair);
int nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req);
int32_t nvme_qpair_process(struct nvp_nvme_qpair *qpair, uint32_t max_completions);

/* Take a request object; NULL when all are in use. */
static inline struct nvme_request *
nvme_qpair_alloc_request(struct nvp_nvme_qpair *qpair)
{
	struct nvme_request *req = SLIST_FIRST(&qpair->free_req);

	if (nvp_unlikely(req == NULL)) {
		return NULL;
	}
	SLIST_REMOVE_HEAD(&qpair->free_req, free_link);
	return req;
}

/* Give a request object back, with the DSM page it may hold. */
static inline void
nvme_qpair_free_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (nvp_unlikely(req->dma_page != NULL)) {
		qpair->dsm_free[qpair->dsm_free_count++] = req->dma_page;
		req->dma_page = NULL;
	}
	SLIST_INSERT_HEAD(&qpair->free_req, req, free_link);
}

/* Take a page for DSM ranges from the qpair's pool. \return it or NULL. */
static inline void *
nvme_qpair_get_dsm_page(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (qpair->dsm_free_count == 0) {
		return NULL;
	}
	req->dma_page = qpair->dsm_free[--qpair->dsm_free_count];
	return req->dma_page;
}

/* The hot completion path, inline so that a transport's CQ loop has no call per entry. */
static inline void
nvme_tracker_release_slot(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	if (tr->holds_slot) {
		tr->holds_slot = false;
		qpair->slots_used--;
	}
}

/* Set a qpair's CID split for @num_trackers: the index bits are the smallest power of two
 * past every index (all 16 bits, and no generation, for the largest queues). */
static inline void
nvme_qpair_set_cid_bits(struct nvp_nvme_qpair *qpair, uint32_t num_trackers)
{
	uint32_t n = 1;

	while (n <= num_trackers && n < 0x10000u) {
		n <<= 1;
	}
	qpair->cid_idx_mask = (uint16_t)(n - 1);
	qpair->cid_gen_step = (uint16_t)(n & 0xffffu); /* 0 when n = 65536 */
}

/* The tracker's index (its CID without the generation). */
static inline uint16_t
nvme_tracker_idx(const struct nvp_nvme_qpair *qpair, const struct nvme_tracker *tr)
{
	return (uint16_t)(tr->cid & qpair->cid_idx_mask);
}

static inline __attribute__((always_inline)) void
tracker_put(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	if (nvp_unlikely(tr->xport_res)) {
		qpair->transport->qpair_release_tracker(qpair, tr);
		tr->xport_res = false;
	}
	tr->req = NULL;
	tr->state = NVME_TR_FREE;
	tr->cid = (uint16_t)(tr->cid + qpair->cid_gen_step); /* the next command's */
	SLIST_INSERT_HEAD(&qpair->free_tr, tr, free_link);
}

static inline void
nvme_tracker_free(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	nvme_tracker_release_slot(qpair, tr);
	tracker_put(qpair, tr);
}

/* Free the request, then call back: the callback may reuse the request object. */
static inline void
nvme_complete_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req,
		      const struct nvme_cpl *cpl)
{
	nvp_nvme_cmd_cb cb = req->cb_fn;
	void *cb_arg = req->cb_arg;

	qpair->num_outstanding--;
	nvme_qpair_free_request(qpair, req);
	if (cb != NULL) {
		cb(cb_arg, cpl);
	}
}

/*
 * Start a request: a zeroed command (64 bytes: four vector stores), the callback, no
 * payload. Not a memset of the whole object: the fields past these are set by whoever
 * uses them (payload setters, the DSM page) or reset when the request is freed.
 */
static inline void
nvme_request_init(struct nvme_request *req, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	__builtin_memset(&req->cmd, 0, sizeof(req->cmd));
	req->cb_fn = cb;
	req->cb_arg = cb_arg;
	req->payload.type = NVME_PAYLOAD_NONE;
	req->payload.size = 0;
	req->payload.buf = NULL;
	req->dptr_built = false;
}

static inline void
nvme_request_set_contig(struct nvme_request *req, void *buf, uint32_t len)
{
	req->payload.buf = buf;
	req->payload.size = len;
	req->payload.type = (buf != NULL && len != 0) ? NVME_PAYLOAD_CONTIG : NVME_PAYLOAD_NONE;
}

/*
 * A qpair belongs to the thread that created it. Debug builds check every call from the
 * outside; release builds trust the caller (the check would cost a TLS read per call).
 */
static inline int
nvme_qpair_check_owner(const struct nvp_nvme_qpair *qpair)
{
#if NVP_CONFIG_DEBUG
	if (nvp_unlikely(!qpair->is_admin && !pthread_equal(qpair->owner, pthread_self()))) {
		NVP_ERRLOG("qpair %u: used from a thread that does not own it; a qpair belongs "
			   "to the thread that allocated it",
			   qpair->id);
		return -EPERM;
	}
#else
	(void)qpair;
#endif
	return 0;
}

/*
 * Bytes one LBA takes in the host's data buffer: data, plus the metadata when it is
 * interleaved (extended LBA), except that with PRACT and 8 bytes of metadata (protection
 * information only) the controller inserts or strips it and the host moves data only
 * (NVMe 1.4 section 8.3.1).
 */
static inline uint32_t
nvme_ns_host_lba_size(const struct nvp_nvme_ns *ns, uint32_t io_flags)
{
	if (nvp_unlikely(ns->md_size == 8 && !ns->md_separate && ns->pi_type != 0 &&
			 (io_flags & NVME_IO_FLAGS_PRACT) != 0)) {
		return ns->data_size;
	}
	return ns->sector_size;
}

/*
 * Split arithmetic: LBAs of the next piece of a request at @lba with @left to go, at
 * most @max_sectors and not crossing a multiple of @boundary (0 = none; NOIOB need not
 * be a power of two).
 */
static inline uint32_t
nvme_split_count(uint64_t lba, uint32_t left, uint32_t max_sectors, uint32_t boundary)
{
	uint32_t n = NVP_MIN(left, max_sectors);

	if (boundary != 0) {
		uint32_t to_boundary = boundary - (uint32_t)(lba % boundary);

		n = NVP_MIN(n, to_boundary);
	}
	return n;
}

/* True if @lba_count LBAs at @lba do not go as one command. */
static inline bool
nvme_split_needed(uint64_t lba, uint32_t lba_count, uint32_t max_sectors, uint32_t boundary)
{
	return nvme_split_count(lba, lba_count, max_sectors, boundary) < lba_count;
}

/* Write hints (nvme_dir.c) over streams or FDP placement identifiers (nvme_fdp.c). */
/*
 * Spread hint classes 1..4 over @n streams (@ids NULL: identifiers 1..n) or FDP
 * placement identifiers @ids[0..n-1]. The device keeps writes without a directive
 * apart too (its default stream, FDP's placement handle 0), so there are n + 1 groups:
 * class h goes to group (h - 1)(n + 1) / 4, groups 0..n-1 are the n identifiers, and
 * the longest-lived group, n, goes without a directive. With 4 or more identifiers
 * every class has its own. Inline here: both nvme_dir.c (streams) and nvme_fdp.c
 * (placement identifiers) build the map.
 */
static inline void
nvme_hint_map_build(struct nvp_nvme_ns *ns, uint16_t n, const uint16_t *ids,
		    enum nvp_nvme_placement kind)
{
	const uint32_t classes = NVP_NVME_WRITE_HINT_COUNT - 1;

	__builtin_memset(ns->hint_dspec, 0, sizeof(ns->hint_dspec));
	for (uint32_t h = 1; n != 0 && h <= classes; h++) {
		uint32_t g = n >= classes ? h - 1 : (h - 1) * (n + 1u) / classes;

		if (g < n) {
			ns->hint_dspec[h] = ids != NULL ? ids[g] : (uint16_t)(g + 1);
		}
	}
	ns->num_streams = n;
	ns->placement = n != 0 ? kind : NVP_NVME_PLACEMENT_NONE;
	ns->hint_dtype = kind == NVP_NVME_PLACEMENT_FDP ? NVME_IO_FLAGS_DTYPE_PLACEMENT :
							  NVME_IO_FLAGS_DTYPE_STREAMS;
}

int nvme_fdp_hints_setup(struct nvp_nvme_ns *ns, uint16_t max_ids);
uint32_t nvme_fdp_hint_pids(const void *ruhs, uint32_t len, uint8_t rgif, uint16_t *pids,
			    uint32_t max);

#endif /* NVP_NVME_INTERNAL_H */
