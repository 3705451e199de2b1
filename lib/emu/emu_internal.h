/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the software NVMe controller. Nothing here is visible outside lib/emu.
 *
 * Threads: one controller thread per controller owns everything below the "controller
 * thread only" marker; the API thread (create/destroy/inject/get_stats) touches only the
 * fields marked as shared, through atomics or a mutex that is never taken per command.
 */
#ifndef NVP_EMU_INTERNAL_H
#define NVP_EMU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme_spec.h"
#include "nvpoll/util.h"

#ifndef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "emu"
#endif
#include "nvpoll/log.h"

/*
 * PCI identity. 0x1d1d/0x1f1f: the IDs used by the software controller of this project
 * (chosen for the emulator; a driver must not special-case them).
 */
#define EMU_PCI_VID 0x1d1du
#define EMU_PCI_DID 0x1f1fu
#define EMU_PCI_REV 0x01u
#define EMU_PCI_CFG_SIZE 256u

#define EMU_MODEL "nvpoll software NVMe controller"
#define EMU_SUBNQN_PREFIX "nqn.2026-12.io.nvpoll:emu:"
#define EMU_FW_INITIAL_REV "1.0"
#define EMU_IEEE_OUI 0x1d1d00u

#define EMU_ACL 3u   /* abort command limit, 0's based */
#define EMU_AERL 3u  /* async event request limit, 0's based */
#define EMU_ELPE 63u /* error log page entries, 0's based */
#define EMU_ERRLOG_ENTRIES (EMU_ELPE + 1u)
#define EMU_EVENT_QUEUE 16u /* async events waiting for an AER */
#define EMU_ADMIN_SLOTS 32u /* held admin completions + outstanding AERs */
#define EMU_FW_STAGING_MAX (1u << 20)
#define EMU_TEMP_KELVIN 313u                  /* composite temperature, 40 °C */
#define EMU_WCTEMP 343u                       /* 70 °C */
#define EMU_CCTEMP 358u                       /* 85 °C */
#define EMU_MAX_XFER_UNLIMITED (256ull << 20) /* MDTS 0: NLB 65536 x 4 KiB */
#define EMU_BOUNCE_SIZE (64u << 10)
#define EMU_NO_SLOT 0xffffu

/* Async event info for the error type (NVMe 1.4, figure 146). */
#define EMU_AER_INFO_INVALID_DB_REG 0x00u
#define EMU_AER_INFO_INVALID_DB_VALUE 0x01u

/*
 * Internal command status: sct << 8 | sc (the encoding of fault_arg), plus DNR in bit 15.
 * Converted to the completion's status field only when posted.
 */
#define EMU_ST(sct, sc) ((uint16_t)(((uint32_t)(sct) << 8) | (uint32_t)(sc) | 0x8000u))
#define EMU_ST_RETRY(sct, sc) ((uint16_t)(((uint32_t)(sct) << 8) | (uint32_t)(sc)))
#define EMU_ST_OK 0u
#define EMU_ST_SC(st) ((uint8_t)((st)&0xffu))
#define EMU_ST_SCT(st) ((uint8_t)(((st) >> 8) & 0x7u))
#define EMU_ST_DNR(st) (((st) >> 15) & 1u)
#define EMU_ST_IS_ERR(st) (((st)&0x7ffu) != 0)
#define EMU_ST_EQ(a, b) ((((a) ^ (b)) & 0x7ffu) == 0)

#define EMU_GEN(sc) EMU_ST(NVME_SCT_GENERIC, sc)
#define EMU_CS(sc) EMU_ST(NVME_SCT_COMMAND_SPECIFIC, sc)
#define EMU_MEDIA(sc) EMU_ST(NVME_SCT_MEDIA_ERROR, sc)

/* Relaxed single-writer counters: the controller thread writes, get_stats reads. */
#define EMU_STAT_ADD(c, field, n)                                                    \
	__atomic_store_n(&(c)->stats.field,                                          \
			 __atomic_load_n(&(c)->stats.field, __ATOMIC_RELAXED) + (n), \
			 __ATOMIC_RELAXED)

struct emu_ctrlr;
struct emu_ns;

/* ---- host memory described by PRPs, translated (emu_prp.c) ---- */

struct emu_seg {
	uint8_t *addr;
	uint64_t len;
};

struct emu_sgl {
	struct emu_seg *segs;
	uint32_t nsegs;
	uint32_t max_segs;
	uint64_t len;
};

int emu_sgl_init(struct emu_sgl *sgl, uint32_t max_segs);
void emu_sgl_fini(struct emu_sgl *sgl);
uint16_t emu_prp_map(struct emu_sgl *sgl, uint64_t prp1, uint64_t prp2, uint64_t len,
		     uint32_t page_size);
void emu_sgl_to_host(const struct emu_sgl *sgl, const void *src, uint64_t len);
void emu_sgl_from_host(const struct emu_sgl *sgl, void *dst, uint64_t len);

/* ---- backends (emu_backend.c) ---- */

struct emu_backend_ops {
	const char *name;
	int (*open)(struct emu_ctrlr *c, struct emu_ns *ns);
	void (*close)(struct emu_ns *ns);
	int (*read)(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl);
	int (*write)(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl);
	int (*read_buf)(struct emu_ns *ns, uint64_t off, void *buf, uint64_t len);
	int (*zero)(struct emu_ns *ns, uint64_t off, uint64_t len);
	int (*flush)(struct emu_ns *ns);
};

/* ---- FTL model (emu_ftl.c) ---- */

#define EMU_FTL_PAGE_SHIFT 12u
#define EMU_FTL_MAX_STREAMS 32u /* also the most streams the controller offers (MSL) */
#define EMU_FTL_MAX_PPB 65536u
#define EMU_FTL_GC_LOW 2u /* GC runs when fewer blocks than this are free */

enum emu_ftl_gc {
	EMU_FTL_GC_GREEDY = 0,
	EMU_FTL_GC_COST_BENEFIT,
};

struct emu_ftl_cfg {
	uint64_t lpages;   /* logical 4 KiB pages */
	uint32_t ppb;      /* pages per erase block */
	uint32_t op_pct;   /* over-provisioning, percent of the logical space */
	uint32_t nstreams; /* open blocks for streams 1..nstreams, besides 0 and GC's */
	enum emu_ftl_gc gc;
};

struct emu_ftl_counters {
	uint64_t host_pages; /* pages the host wrote */
	uint64_t nand_pages; /* pages programmed: host + GC */
	uint64_t gc_pages;   /* pages GC relocated */
	uint64_t erases;
	uint64_t gc_runs;
	uint64_t trimmed_pages;
	uint64_t stream_pages; /* host pages written with a stream */
	/* a snapshot, filled by emu_ftl_get_counters() */
	uint64_t valid_pages;
	uint64_t logical_pages;
	uint32_t free_blocks;
	uint32_t blocks;
	uint32_t pages_per_block;
};

struct emu_ftl;

int emu_ftl_create(const struct emu_ftl_cfg *cfg, struct emu_ftl **out);
void emu_ftl_destroy(struct emu_ftl *f);
void emu_ftl_reset(struct emu_ftl *f);
int emu_ftl_write(struct emu_ftl *f, uint64_t lpage, uint64_t npages, uint32_t stream);
void emu_ftl_trim(struct emu_ftl *f, uint64_t lpage, uint64_t npages);
void emu_ftl_get_counters(const struct emu_ftl *f, struct emu_ftl_counters *out);
const struct emu_ftl_counters *emu_ftl_counters(const struct emu_ftl *f);
uint32_t emu_ftl_open_room(const struct emu_ftl *f, uint32_t stream);
bool emu_ftl_close_stream(struct emu_ftl *f, uint32_t stream);

struct emu_ns {
	uint32_t nsid;
	uint8_t lbaf; /* current format: 0 = 512 B, 1 = 4 KiB, 2/3 = the same + metadata */
	uint8_t lba_shift;
	uint16_t ms;     /* metadata bytes per block of the current format */
	uint16_t ms_opt; /* metadata bytes of formats 2 and 3 (opts.ms), 0 = not offered */
	bool mset;       /* metadata interleaved (extended LBA) when ms > 0 */
	uint8_t *md;     /* metadata store: ms bytes per LBA, in RAM for every backend */
	uint64_t md_len;
	uint64_t nsze; /* logical blocks */
	uint64_t size; /* bytes; never changes, formats only change addressing */
	const struct emu_backend_ops *ops;
	uint8_t *mem; /* ram */
	int fd;       /* file */
	uint8_t nguid[16];
	uint8_t eui64[8];
	/* directives (emu_dir.c) and the FTL model */
	struct emu_ftl *ftl; /* NULL unless ftl=1 */
	bool streams_enabled;
	uint16_t streams_alloc; /* NSA */
	uint64_t streams_open;  /* bit (sid - 1) */
	struct emu_plm *plm;    /* power-loss model's undo log, or NULL (emu_plm.c) */
};

const struct emu_backend_ops *emu_backend_get(enum nvp_emu_backend type);

/* ---- power-loss model of the file backend (emu_plm.c) ---- */
struct emu_plm;
int emu_plm_init(struct emu_ctrlr *c, struct emu_ns *ns);
void emu_plm_fini(struct emu_ns *ns);
int emu_plm_record(struct emu_ns *ns, uint64_t off, uint64_t len);
void emu_plm_flushed(struct emu_ns *ns);
void emu_plm_cut(struct emu_ctrlr *c, uint64_t seed);
int emu_backend_compare(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl, uint8_t *bounce,
			uint32_t bounce_len, bool *equal);
int emu_ns_init(struct emu_ctrlr *c, struct emu_ns *ns, uint32_t nsid, uint32_t lba_size);
void emu_ns_fini(struct emu_ns *ns);
void emu_ns_set_format(struct emu_ns *ns, uint8_t lbaf);

/* ---- queues and commands (emu_queue.c) ---- */

struct emu_sq {
	struct nvme_cmd *base;
	volatile uint32_t *db;
	volatile uint32_t *shadow; /* shadow doorbell in host memory (dbbuf), or NULL */
	volatile uint32_t *ei;     /* its EventIdx */
	uint32_t size;             /* entries */
	uint32_t head;             /* next entry to fetch */
	uint32_t tail;             /* tail as last accepted from the doorbell */
	uint32_t db_last;          /* raw doorbell value last seen */
	uint32_t inflight;         /* fetched, completion not yet posted */
	uint16_t qid;
	uint16_t cqid;
	bool valid;
	bool deleting; /* Delete I/O SQ in progress: draining */
	uint8_t qprio;
	uint16_t delete_slot; /* admin slot of the Delete command, completed when drained */
	uint8_t *skip;        /* per entry: aborted while waiting, complete as such on fetch */
	uint64_t iova;
};

struct emu_cq {
	struct nvme_cpl *base;
	volatile uint32_t *db;
	volatile uint32_t *shadow;
	volatile uint32_t *ei;
	uint32_t size;
	uint32_t head; /* host's head, from the doorbell */
	uint32_t tail; /* next entry we post */
	uint32_t db_last;
	uint32_t nsq; /* SQs bound to this CQ */
	uint16_t qid;
	uint8_t phase;
	bool valid;
	bool ien; /* interrupts enabled: post signals vector iv */
	uint16_t iv;
	uint64_t iova;
	/* dup_cpl: the copy of a completion, posted again after the next one (by then the
	 * host may have sent a new command with the same CID) */
	bool dup_pending;
	uint16_t dup_sqid, dup_cid, dup_st, dup_sqhd;
	uint32_t dup_cdw0;
};

enum emu_slot_kind {
	EMU_SLOT_IO = 0,
	EMU_SLOT_ADMIN,
};

#define EMU_SLOT_F_ABORT 0x1u   /* an Abort command waiting for its completion */
#define EMU_SLOT_F_HELD 0x2u    /* on the held list (CQ was full) */
#define EMU_SLOT_F_SKIPPED 0x4u /* not executed (aborted or injected error) */
/* Completion faults (fault injection): how this slot's completion is posted wrongly. */
#define EMU_SLOT_F_BAD_CID 0x8u    /* with a command id nobody sent (0xffff) */
#define EMU_SLOT_F_DUP 0x10u       /* twice */
#define EMU_SLOT_F_WRONG_CQ 0x20u  /* on another completion queue */
#define EMU_SLOT_F_BAD_PHASE 0x40u /* with the old phase tag: the host cannot see it */
#define EMU_SLOT_F_BAD_SQHD 0x80u  /* with an SQ head pointer past the queue's end */
#define EMU_SLOT_F_MANGLE                                                                   \
	(EMU_SLOT_F_BAD_CID | EMU_SLOT_F_DUP | EMU_SLOT_F_WRONG_CQ | EMU_SLOT_F_BAD_PHASE | \
	 EMU_SLOT_F_BAD_SQHD)

/* One command between fetch and completion. */
struct emu_cmd {
	struct nvme_cmd cmd;
	uint64_t due;
	uint32_t cdw0;
	uint16_t st;
	uint16_t sqid;
	uint16_t next;
	uint8_t kind;
	uint8_t flags;
};

/* What a handler tells the dispatcher. */
enum emu_exec_result {
	EMU_EXEC_DONE = 0, /* slot->st/cdw0 are final: complete it */
	EMU_EXEC_HELD,     /* the handler kept the slot (AER, pending SQ deletion) */
};

uint16_t emu_slot_alloc(struct emu_ctrlr *c, enum emu_slot_kind kind);
void emu_slot_free(struct emu_ctrlr *c, uint16_t idx);
void emu_cmd_complete(struct emu_ctrlr *c, uint16_t idx);
bool emu_cq_post(struct emu_ctrlr *c, uint16_t cqid, uint16_t sqid, uint16_t cid, uint32_t cdw0,
		 uint16_t st);
uint32_t emu_cq_free_entries(const struct emu_cq *cq);
int emu_queue_poll(struct emu_ctrlr *c, uint64_t now);
void emu_queues_reset(struct emu_ctrlr *c);
void emu_sq_list_rebuild(struct emu_ctrlr *c);
int emu_sq_abort_waiting(struct emu_ctrlr *c, uint16_t sqid, uint16_t cid);
void emu_sq_delete_start(struct emu_ctrlr *c, struct emu_sq *sq, uint16_t slot);
int emu_queues_init(struct emu_ctrlr *c);
void emu_queues_fini(struct emu_ctrlr *c);
void emu_db_scan_unused(struct emu_ctrlr *c);
uint64_t emu_next_due(const struct emu_ctrlr *c);

/* ---- registers, PCI function (emu_regs.c) ---- */

enum emu_state {
	EMU_STATE_DISABLED = 0,
	EMU_STATE_ENABLING, /* CC.EN = 1 seen, RDY rises at ready_at */
	EMU_STATE_READY,
	EMU_STATE_DISABLING, /* CC.EN = 0 seen, queues reset, RDY falls at ready_at */
	EMU_STATE_FAILED,    /* CSTS.CFS: bad configuration or injected */
};

int emu_regs_init(struct emu_ctrlr *c);
void emu_regs_fini(struct emu_ctrlr *c);
int emu_regs_poll(struct emu_ctrlr *c, uint64_t now);
void emu_regs_check_ro(struct emu_ctrlr *c);
volatile uint32_t *emu_db_ptr(const struct emu_ctrlr *c, uint32_t qid, int is_cq);
void emu_dbbuf_attach(struct emu_ctrlr *c, uint32_t qid);
void emu_csts_write(struct emu_ctrlr *c);
void emu_all_ones_set(struct emu_ctrlr *c, bool on);
void emu_pci_init(struct emu_ctrlr *c);
bool emu_pci_bus_master(struct emu_ctrlr *c);
extern const struct nvp_pci_device_ops emu_pci_ops;

/* ---- admin (emu_admin.c) and NVM (emu_io.c) command sets ---- */

enum emu_exec_result emu_admin_execute(struct emu_ctrlr *c, uint16_t idx);
uint16_t emu_io_execute(struct emu_ctrlr *c, struct emu_cmd *slot, uint64_t *service_ticks);
uint16_t emu_map_data(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint64_t len);
void emu_features_reset(struct emu_ctrlr *c);

/* ---- logs, SMART, async events (emu_log.c) ---- */

struct emu_event {
	uint8_t type;
	uint8_t info;
	uint8_t lid;
};

void emu_log_init(struct emu_ctrlr *c);
void emu_smart_load(struct emu_ctrlr *c);
void emu_smart_save(struct emu_ctrlr *c);
void emu_log_error(struct emu_ctrlr *c, uint16_t sqid, const struct nvme_cmd *cmd, uint16_t st,
		   uint64_t cmd_specific);
uint16_t emu_log_get_page(struct emu_ctrlr *c, const struct nvme_cmd *cmd);
void emu_aen_raise(struct emu_ctrlr *c, uint8_t type, uint8_t info, uint8_t lid);
void emu_aen_deliver(struct emu_ctrlr *c);
void emu_aen_reset(struct emu_ctrlr *c);
enum emu_exec_result emu_aer_submit(struct emu_ctrlr *c, uint16_t idx);
void emu_temp_update(struct emu_ctrlr *c);
void emu_invalid_doorbell(struct emu_ctrlr *c, uint16_t qid, int is_cq, uint32_t value,
			  uint8_t info);

/* ---- directives (emu_dir.c) ---- */

uint16_t emu_dir_send(struct emu_ctrlr *c, const struct nvme_cmd *cmd);
uint16_t emu_dir_receive(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint32_t *cdw0);
uint16_t emu_dir_write_stream(struct emu_ctrlr *c, struct emu_ns *ns, const struct nvme_cmd *cmd,
			      uint32_t *stream);
int emu_ns_ftl_init(struct emu_ctrlr *c, struct emu_ns *ns);
void emu_ns_ftl_write(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t off, uint64_t len,
		      uint32_t stream, uint64_t *svc);
void emu_ns_ftl_trim(struct emu_ns *ns, uint64_t off, uint64_t len);
uint32_t emu_ftl_build_log(struct emu_ctrlr *c, uint32_t nsid, uint8_t *buf);

/* ---- Flexible Data Placement (emu_fdp.c) ---- */

#define EMU_FDP_ENDGID 1u      /* the one endurance group: every namespace */
#define EMU_FDP_MAX_EVENTS 16u /* host events kept, oldest dropped first */

struct emu_fdp {
	bool enabled;             /* Set Features FDP: FDPE (configuration 0 is the only one) */
	uint64_t base_host_bytes; /* counters when FDP was last enabled */
	uint64_t base_nand_pages;
	uint64_t base_erased_pages;
	struct nvme_fdp_event events[EMU_FDP_MAX_EVENTS]; /* ring, oldest at ev_first */
	uint32_t ev_first;
	uint32_t ev_count;
};

void emu_fdp_init(struct emu_ctrlr *c);
void emu_fdp_identify_ctrlr(const struct emu_ctrlr *c, struct nvme_ctrlr_data *cd);
void emu_fdp_identify_ns(const struct emu_ctrlr *c, struct nvme_ns_data *nd);
bool emu_fdp_dir_enabled(const struct emu_ctrlr *c);
uint16_t emu_fdp_get_feature(const struct emu_ctrlr *c, uint32_t cdw11, bool dflt, uint32_t *val);
uint16_t emu_fdp_set_feature(struct emu_ctrlr *c, uint32_t cdw11, uint32_t cdw12);
uint16_t emu_fdp_build_log(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint8_t *buf,
			   uint32_t *size);
uint16_t emu_fdp_write_pid(struct emu_ctrlr *c, struct emu_ns *ns, uint16_t pid, uint32_t *stream);
uint16_t emu_fdp_io_mgmt_recv(struct emu_ctrlr *c, const struct nvme_cmd *cmd);
uint16_t emu_fdp_io_mgmt_send(struct emu_ctrlr *c, const struct nvme_cmd *cmd);

/* ---- firmware slots (emu_fw.c) ---- */

void emu_fw_init(struct emu_ctrlr *c);
void emu_fw_fini(struct emu_ctrlr *c);
uint16_t emu_fw_download(struct emu_ctrlr *c, const struct nvme_cmd *cmd);
uint16_t emu_fw_commit(struct emu_ctrlr *c, const struct nvme_cmd *cmd);
void emu_fw_reset(struct emu_ctrlr *c);
void emu_fw_revision(const uint8_t *img, uint32_t len, char rev[8]);
void emu_fw_build_log(const struct emu_ctrlr *c, struct nvme_firmware_page *page);

/* ---- the device model (emu_model.c) ---- */

enum emu_dist_kind {
	EMU_DIST_FIXED = 0,
	EMU_DIST_UNIFORM,
	EMU_DIST_EXP,
	EMU_DIST_LOGNORMAL,
	EMU_DIST_BIMODAL,
};

/* Parameters in ns: fixed a; uniform a..b; exp mean a; lognormal p50 a, p99 b and, when
 * not 0, p99.9 c (a heavier tail past the p99); bimodal a, or b with probability c. */
struct emu_dist {
	enum emu_dist_kind kind;
	double a;
	double b;
	double c;
};

/* A device model preset (emu_preset.c): a name, the class of drive it stands for, and the
 * option string it applies, which sets every model key. */
struct emu_preset {
	const char *name;
	const char *drive;
	const char *opts;
};

/* One media channel of the model, on the controller thread only. */
struct emu_chan {
	uint64_t prog_until;  /* when it has programmed all it holds */
	uint64_t stall_until; /* when its last write waiting for cache room gets it */
	uint64_t read_until;  /* read_busy: when its last read leaves it */
	uint64_t susp_end;    /* end of the program operation last suspended */
	uint32_t susp_n;      /* times that operation was suspended */
};

struct emu_model {
	struct emu_dist rd;
	struct emu_dist wr;
	uint64_t rng;
	double ticks_per_ns;
	double xfer_tpb;      /* ticks per byte on one channel, 0 = free */
	double prog_tpb;      /* ticks per byte programmed on one channel, 0 = no model */
	uint64_t prog_op;     /* ticks of one program operation */
	uint64_t cache_bytes; /* write cache size */
	uint64_t share_ticks; /* a channel's cache share, in ticks of programming */
	uint64_t suspend_op;  /* prog_suspend: ticks a read waits for the program to pause */
	uint64_t iu;          /* bytes a write programs at least (indirection unit), 0 = exact */
	struct emu_chan *ch;  /* [nch] */
	uint32_t nch;
	uint32_t suspend_max; /* suspends one program operation allows, 0 = no limit */
	bool read_prio;       /* reads go ahead of writes waiting for cache room */
	bool suspend;         /* a read suspends the program operation in progress */
	bool read_busy;       /* a read holds its channel: reads there take turns */
};

uint64_t emu_rng_next(uint64_t *state);
int emu_dist_parse(const char *str, struct emu_dist *d);
double emu_dist_sample(const struct emu_dist *d, uint64_t *rng);
double emu_dist_mean(const struct emu_dist *d);
const struct emu_preset *emu_preset_find(const char *name);
const struct emu_preset *emu_preset_get(uint32_t i);
const char *emu_preset_names(void);
const char *emu_preset_keys(void);
void emu_presets_usage(FILE *f);
int emu_model_init(struct emu_ctrlr *c);
void emu_model_fini(struct emu_ctrlr *c);
uint64_t emu_model_read(struct emu_ctrlr *c, uint64_t off, uint64_t len, uint64_t now);
uint64_t emu_model_write(struct emu_ctrlr *c, uint64_t off, uint64_t len, uint64_t now);
uint64_t emu_model_flush(struct emu_ctrlr *c, uint64_t now);
void emu_model_note_lateness(struct emu_ctrlr *c, uint64_t due, uint64_t now);

/* ---- interrupts (emu_irq.c) ---- */

struct emu_irq {
	int fd;           /* eventfd, -1 until the driver asks for it (atomic) */
	uint32_t pending; /* entries posted since the vector last fired (coalescing) */
	uint64_t first;   /* when the first of them was posted */
};

int emu_irq_init(struct emu_ctrlr *c);
void emu_irq_fini(struct emu_ctrlr *c);
int emu_irq_fd(struct emu_ctrlr *c, uint32_t vector, uint32_t *vector_out);
void emu_irq_raise(struct emu_ctrlr *c, uint16_t iv, uint64_t now);
void emu_irq_flush(struct emu_ctrlr *c, uint64_t now);

/* ---- options, lifecycle, loop (emu_opts.c, emu.c) ---- */

int emu_opts_validate(const struct nvp_emu_opts *opts, char *err, size_t errlen);
const char *emu_fault_name(enum nvp_emu_fault_type type);
int emu_ctrlr_alloc(const struct nvp_emu_opts *opts, struct emu_ctrlr **out);
void emu_ctrlr_free(struct emu_ctrlr *c);
int emu_ctrlr_poll(struct emu_ctrlr *c);
void emu_fault_sync(struct emu_ctrlr *c);
bool emu_fault_take(struct emu_ctrlr *c, struct emu_cmd *slot, uint64_t *extra_ticks);

/* ---- the controller ---- */

struct emu_features {
	uint32_t arbitration;
	uint32_t power_mgmt;
	uint16_t temp_over; /* composite temperature thresholds, kelvin */
	uint16_t temp_under;
	uint32_t err_recovery;
	uint32_t wce;
	uint32_t int_coalescing;
	uint32_t int_vector_cfg;
	uint32_t write_atomicity;
	uint32_t aec;
	uint16_t nsq; /* I/O SQs granted, 1's based */
	uint16_t ncq;
	bool nq_set; /* Set Features number of queues done since reset */
};

struct emu_smart {
	uint64_t bytes_read; /* read + compare, for data units read */
	uint64_t bytes_written;
	uint64_t read_cmds;
	uint64_t write_cmds;
	uint64_t media_errors;
	uint64_t power_cycles;
	uint64_t unsafe_shutdowns;
	uint64_t power_on_secs; /* from earlier lives (file backend) */
	uint64_t busy_ticks;
	uint8_t critical_warning;
	uint16_t temperature;
};

/* A fault request from the API thread, applied by the controller thread. */
struct emu_fault_req {
	enum nvp_emu_fault_type type;
	uint32_t count;
	uint32_t skip;
	uint32_t arg;
};

/* Pending requests, one per category, newest wins: command fault, cfs, all_ones, rdy_never. */
enum emu_fault_cat {
	EMU_FAULT_CAT_CMD = 0,
	EMU_FAULT_CAT_CFS,
	EMU_FAULT_CAT_ALL_ONES,
	EMU_FAULT_CAT_RDY_NEVER,
	EMU_FAULT_CAT_POWER_NOW, /* nvp_emu_ctrlr_power_cut() */
	EMU_FAULT_CAT_ADMIN,     /* admin_error, admin_bad_phase */
	EMU_FAULT_CAT_COUNT,
};

struct emu_ctrlr {
	/* ---- controller thread only; hot per-command fields first ---- */
	struct nvme_registers *regs;
	uint32_t db_stride;     /* bytes between doorbells: 4 << DSTRD */
	uint32_t page_size;     /* CC.MPS, latched at enable */
	uint64_t max_xfer;      /* MDTS in bytes */
	uint64_t gc_page_ticks; /* channel time per page GC relocates */
	uint64_t ticks_hz;
	uint64_t now;        /* time of the command being started, for the model */
	struct emu_irq *irq; /* [nirq]: one per vector */
	uint32_t nirq;
	uint32_t irq_waiting; /* vectors holding coalesced entries */
	struct emu_model model;
	uint32_t *dbbuf_db; /* Doorbell Buffer Config pages (host memory), NULL = none */
	uint32_t *dbbuf_ei;
	struct emu_sq *sqs; /* [max_queues + 1], index = qid */
	struct emu_cq *cqs;
	struct emu_sq **io_sqs; /* valid I/O SQs in qid order, for round robin */
	uint32_t n_io_sqs;
	uint32_t n_deleting; /* SQs draining for a Delete I/O SQ */
	uint32_t rr_next;
	uint32_t burst;        /* commands per SQ per round, from the arbitration burst */
	struct emu_cmd *slots; /* [channels + EMU_ADMIN_SLOTS] */
	uint32_t nslots;
	uint16_t io_free; /* free lists */
	uint16_t admin_free;
	uint32_t io_busy; /* channels in use */
	uint16_t *heap;   /* in-flight I/O slots ordered by due time */
	uint32_t heap_len;
	uint16_t held_head; /* completions waiting for CQ room, FIFO */
	uint16_t held_tail;
	struct emu_sgl sgl; /* host memory of the command being executed */
	uint8_t *bounce;    /* compare scratch */
	struct emu_ns ns[NVP_EMU_MAX_NS];
	uint32_t nn;

	/* command fault (controller thread's copy) */
	enum nvp_emu_fault_type cfault;
	uint32_t cfault_count;
	uint32_t cfault_skip;
	uint32_t cfault_arg;
	/* admin command fault (admin_error, admin_bad_phase), controller thread's copy */
	enum nvp_emu_fault_type afault_type;
	uint32_t afault_count;
	uint32_t afault_skip;
	uint32_t afault_arg;

	struct nvp_emu_stats stats; /* written here, read by get_stats (relaxed atomics) */

	/* ---- cold: controller state ---- */
	enum emu_state state;
	uint64_t state_at; /* when RDY follows CC.EN */
	uint32_t cc;       /* last CC value acted on */
	union nvme_csts_register csts;
	bool fault_cfs;
	bool fault_all_ones;
	bool powered_off; /* a power cut: dark until destroyed */
	bool fault_rdy_never;
	bool bm_warned;
	uint8_t saved_regs[0x40]; /* register values hidden by all_ones */
	uint32_t poll_count;
	uint16_t aborts_outstanding;

	struct emu_features feat;
	struct emu_smart smart;
	struct emu_fdp fdp;

	/* async events */
	uint16_t aer_slots[EMU_AERL + 1];
	uint32_t naer;
	struct emu_event events[EMU_EVENT_QUEUE];
	uint32_t nevents;
	uint8_t aen_masked; /* bit per event type: reported, log page not yet read */

	/* error log, newest at errlog_next - 1 */
	struct nvme_error_information_entry errlog[EMU_ERRLOG_ENTRIES];
	uint32_t errlog_next;
	uint64_t err_count;

	/* firmware */
	char fw_rev[7][8]; /* per slot, space padded; all zero = empty */
	uint8_t fw_active; /* 1-based slot */
	uint8_t fw_next;   /* slot activated at the next reset, 0 = none */
	uint8_t *fw_staging;
	uint32_t fw_staged; /* bytes downloaded so far */

	/* ---- identity, PCI function ---- */
	struct nvp_emu_opts opts;
	uint16_t cntlid;
	size_t regs_size;
	uint64_t create_ticks;
	struct nvp_pci_device pci;
	bool pci_registered;
	char traddr[NVP_PCI_ADDR_STRLEN];
	pthread_mutex_t cfg_lock; /* config space: driver thread vs API */
	uint8_t cfg[EMU_PCI_CFG_SIZE];
	uint8_t cfg_wmask[EMU_PCI_CFG_SIZE];
	uint16_t cfg_command; /* shadow of the command register, atomically read */

	/* ---- shared with the API thread ---- */
	pthread_t thread;
	bool thread_started;
	bool stop; /* atomic */
	pthread_mutex_t fault_lock;
	uint32_t fault_pending; /* atomic: bit per emu_fault_cat waiting in fault_req */
	struct emu_fault_req fault_req[EMU_FAULT_CAT_COUNT];

	TAILQ_ENTRY(emu_ctrlr) link;
};

static inline struct emu_ctrlr *
emu_ctrlr_from_pub(const struct nvp_emu_ctrlr *pub)
{
	return (struct emu_ctrlr *)(uintptr_t)pub;
}

static inline uint64_t
emu_us_to_ticks(const struct emu_ctrlr *c, uint64_t us)
{
	return nvp_us_to_ticks(us, c->ticks_hz);
}

/* I/O command slots: the commands the controller holds at once. */
static inline uint32_t
emu_io_slots(const struct emu_ctrlr *c)
{
	return c->opts.slots != 0 ? c->opts.slots : c->opts.channels;
}

/* The running state: queues are processed only here. */
static inline bool
emu_ctrlr_running(const struct emu_ctrlr *c)
{
	return c->state == EMU_STATE_READY && !c->fault_cfs && !c->fault_all_ones;
}

#endif /* NVP_EMU_INTERNAL_H */
