/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * The software NVMe controller: a complete NVMe controller implemented in software,
 * running on its own thread, offered to drivers as a virtual PCI function (class
 * 0x010802, BAR0 = its register page). A driver reaches it only through that register
 * page (CAP, VS, CC, CSTS, AQA, ASQ, ACQ, doorbells) and DMA memory, exactly as it
 * reaches a real device; every address the controller is given is checked against env's
 * DMA memory the way an IOMMU would check it.
 *
 * Two ways to make one:
 *  - nvp_emu_ctrlr_create() with options, then attach with
 *    "trtype:PCIe traddr:<nvp_emu_ctrlr_get_traddr()>";
 *  - a transport ID "trtype:emu name:emu0 nn:2 lba:512/4096 …": the driver asks env's
 *    virtual device provider "emu" (registered by this library) to create it, attaches,
 *    and destroys it on detach.
 *
 * Options (key=value, separated by commas or spaces; "key:value" also accepted):
 *   name=emu0          device name, unique; default "emuN"
 *   nn=1               number of namespaces, 1..16
 *   size=64M           capacity of each namespace in bytes (k/M/G/T suffixes)
 *   lba=512            LBA data size: 512 or 4096; a '/'-separated list gives one per
 *                      namespace ("lba=512/4096"); every namespace offers both formats
 *   backend=ram        ram | null | file:PATH (file data survives a restart: one file
 *                      per namespace, PATH.nsN, created at the namespace size, and
 *                      PATH.smart keeping SMART counters across restarts)
 *   mqes=1023          CAP.MQES, 0's based max queue entries (1..65535)
 *   dstrd=0            CAP.DSTRD doorbell stride (0..15)
 *   to=20              CAP.TO, ready timeout in 500 ms units (1..255)
 *   mpsmax=4           CAP.MPSMAX (MPSMIN is 0: 4 KiB pages)
 *   rdy_delay_ms=0     delay between CC.EN changing and CSTS.RDY following it
 *   queues=64          I/O queue pairs the controller supports (1..1024)
 *   mdts=5             MDTS (2^mdts pages per command, 0 = unlimited)
 *   read_us=0          service time of a read, µs
 *   write_us=0         service time of a write, µs
 *   channels=4         internal parallelism: commands serviced at once (1..256); also
 *                      the media channels of the device model
 *   slots=0            commands the controller holds at once (fetched, not yet
 *                      completed), 1..4096; 0 = as many as channels. A drive's command
 *                      queue is deeper than its media parallelism: with slots > channels,
 *                      commands wait inside the device, on their channel
 *
 * Device model (doc/emu_presets.md: the presets, their figures and where each comes from):
 *   preset=NAME        sets every model key below to a real drive's figures; later keys
 *                      override, earlier ones are replaced:
 *                      scm  Optane SSD DC P4800X: read 9/10/17 us (p50/p99/p99.9), write
 *                           10 us in place (no cache), 7 channels (~770K read IOPS)
 *                      tlc  PCIe 4 datacenter TLC, 7.68 TB (PM9A3, D7-P5500/P5510): read
 *                           80/100/150 us, write 18 us into a 64 MiB cache drained at
 *                           800 MB/s (200K 4 KiB random writes), 700 us programs, 80
 *                           channels (~960K read IOPS), program suspend 30 us (at most 4
 *                           per program), read priority
 *                      qlc  datacenter QLC, D5-P5316 class: read 120/160/300 us, 64 KiB
 *                           indirection unit, 1000 MB/s of whole units (4 KiB random:
 *                           15K IOPS), 2 ms programs, 112 channels, suspend 50 us (at
 *                           most 4), read priority
 *                      which figures are published, derived or guessed, and what the model
 *                      leaves out: doc/emu_presets.md
 *   read_lat=DIST      read latency distribution (default: read_us fixed); DIST is
 *                      "80us" or "fixed:80us", "uniform:50us:150us", "exp:80us" (mean),
 *                      "lognormal:80us:400us" (p50:p99), "lognormal:80us:100us:150us"
 *                      (p50:p99:p99.9, a heavier tail past the p99), "bimodal:80us:2ms:1%"
 *                      (fast:slow:fraction slow); units ns, us (default), ms, s
 *   write_lat=DIST     write latency (into the write cache when there is one)
 *   xfer_mbps=0        per-channel transfer rate, MB/s: bytes past the first 4 KiB take
 *                      len / rate more (0 = size does not matter)
 *   wcache_mb=0        write cache, MiB, a share per channel: writes complete at write_lat
 *                      while their channel's share has room, else once it has programmed
 *                      enough to take them (0: when programmed); flush drains it
 *   prog_mbps=0        program rate of the whole device, MB/s (0 = no program model)
 *   prog_us=0          one program operation; a read on a channel waits behind the
 *                      writes there still waiting for cache room, then for the program
 *                      operation in progress (read/write interference)
 *   iu_kb=0            indirection unit, KiB: a write programs every unit it touches in
 *                      full (a partial unit is read, merged and rewritten); 0 = exact
 *   read_prio=0        1: reads on a channel go ahead of the writes waiting there for
 *                      cache room (they still meet the program operation in progress)
 *   prog_suspend=0     1: a read arriving during a program operation suspends it: it waits
 *                      suspend_us instead of the rest of the operation, which resumes after
 *                      the read (and ends that much later)
 *   suspend_us=0       prog_suspend: how long a program operation takes to pause
 *   suspend_max=0      prog_suspend: suspends one program operation allows before reads
 *                      wait for it again (0 = no limit)
 *   read_busy=0        1: a read holds its channel for its service time (reads on one
 *                      channel take turns, and delay that channel's programs): channels
 *                      then bound read IOPS as a drive's dies do
 *   seed=1             seed of the service-time generator: same seed, same sequence
 *   vwc=1              volatile write cache present
 *   power_loss=0       file backend with vwc=1: 1 = model the cache a power cut loses:
 *                      writes not yet flushed may be lost or torn at a block boundary by
 *                      fault=power_cut / nvp_emu_ctrlr_power_cut(), flushed ones stay
 *                      (the undo log holds wcache_mb MiB, 64 when 0); 2 = the same with
 *                      a Flush that lies, to prove a power-loss test catches it
 *   fw_slots=3         firmware slots (1..7); slot 1 is read-only
 *   fault=TYPE         inject a fault from the start: drop_cpl, error, slow, cfs,
 *                      all_ones, rdy_never, power_cut (when the command after
 *                      fault_skip arrives; fault_arg seeds the loss), and completions
 *                      posted wrongly: bad_cid, dup_cpl, wrong_cq, bad_phase, bad_sqhd;
 *                      admin commands: admin_error, admin_bad_phase
 *   fault_count=1      commands the fault applies to (command faults)
 *   fault_skip=0       I/O commands to let pass before the fault applies
 *   fault_arg=0        error: status (sct << 8 | sc); slow: extra µs
 *   file=PATH          the same as backend=file:PATH, spelled without a ':'
 *   prefault=1         ram backend: fault the memory in at creation (with transparent
 *                      huge pages where allowed), so a benchmark's first pass does not
 *                      run at page-fault speed; a namespace larger than a quarter of
 *                      the available memory stays sparse. 0: always sparse
 *   streams=0          NVMe Streams the controller offers (MSL, 0..32); 0 = no Directives
 *                      support at all (OACS bit 5 clear, Directive commands refused)
 *   ftl=0              put the FTL model behind every namespace: write amplification of
 *                      4 KiB pages in erase blocks, counted in the vendor log page C0h
 *                      (struct nvp_emu_ftl_log) and in nvp_emu_stats (ftl_* fields)
 *   ftl_ppb=64         pages (4 KiB) per erase block (2..65536)
 *   ftl_op=7           over-provisioning, percent of the namespace size (1..400); the
 *                      spare blocks must hold an open block per stream and one for GC
 *                      per stream (2 x (streams + 1)) plus 2, or creation fails (EINVAL)
 *   ftl_gc=greedy      victim choice: greedy (fewest valid pages) | cb (cost-benefit)
 *   ftl_gc_us=0        channel time charged per page GC relocates: added to the service
 *                      time of the write that triggered the collection
 *   ms=0               metadata bytes per logical block (0..256): with ms > 0 every
 *                      namespace offers the LBA formats 512, 4096, 512+ms and 4096+ms
 *                      (indexes 0..3) and is formatted with the one of its lba= size
 *                      plus metadata; Format NVM may switch between them
 *   mset=0             with ms > 0: 1 = metadata interleaved with the data (extended
 *                      LBA, e.g. 520-byte blocks), 0 = metadata in a separate buffer
 *                      the command's MPTR points at. MPTR is checked like a PRP: not
 *                      dword aligned is Invalid Field, not DMA memory (0 included) is
 *                      Data Transfer Error counted in dma_rejects. Metadata is kept
 *                      in RAM whatever the backend. No protection information (DPS 0).
 *   dbbuf=1            offer shadow doorbells (Doorbell Buffer Config, NVMe 1.3)
 *   fdp=0              Flexible Data Placement (NVMe 2.0 TP4146) with this many reclaim
 *                      unit handles (1..32), enabled from creation: CTRATT.FDPS, one
 *                      endurance group (ENDGID 1) holding every namespace, one FDP
 *                      configuration (one reclaim group, RGIF 0, reclaim unit = one FTL
 *                      erase block), FDP log pages 20h-23h, Set/Get Features 1Dh, I/O
 *                      Management Receive/Send (RUH Status, RUH Update); every namespace
 *                      has placement handles 0..fdp-1 -> RUH 0..fdp-1, each an open erase
 *                      block of the FTL model. Excludes streams (FDP and Streams cannot be
 *                      enabled together)
 */
#ifndef NVPOLL_EMU_H
#define NVPOLL_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nvpoll/env.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVP_EMU_MAX_NS 16
#define NVP_EMU_NAME_MAX 32
#define NVP_EMU_DIST_MAX 48 /**< a latency distribution string */

enum nvp_emu_backend {
	NVP_EMU_BACKEND_RAM = 0,
	NVP_EMU_BACKEND_NULL, /**< reads return zeroes, writes are dropped */
	NVP_EMU_BACKEND_FILE,
};

enum nvp_emu_fault_type {
	NVP_EMU_FAULT_NONE = 0,
	NVP_EMU_FAULT_DROP_CPL,  /**< execute the I/O command but never post its completion */
	NVP_EMU_FAULT_ERROR,     /**< complete the I/O command with status arg (sct<<8|sc) */
	NVP_EMU_FAULT_SLOW,      /**< add arg µs to the I/O command's service time */
	NVP_EMU_FAULT_CFS,       /**< set CSTS.CFS (controller fatal status) now */
	NVP_EMU_FAULT_ALL_ONES,  /**< every register reads as all ones (surprise removal) */
	NVP_EMU_FAULT_RDY_NEVER, /**< CSTS.RDY never rises after CC.EN = 1 */
	NVP_EMU_FAULT_POWER_CUT, /**< cut the power when the fault's command arrives (after
				  * skip I/O commands): unflushed writes may be lost or torn
				  * (power_loss=1), then every register reads all ones; arg
				  * seeds the loss (0 = from the seed option) */
	/* Completions posted wrongly: what a broken or hostile device does. */
	NVP_EMU_FAULT_BAD_CID,         /**< the completion carries command id 0xffff instead */
	NVP_EMU_FAULT_DUP_CPL,         /**< the completion is posted again after the next one */
	NVP_EMU_FAULT_WRONG_CQ,        /**< the completion goes to the admin queue (I/O) or the
				  * first I/O queue (admin) instead */
	NVP_EMU_FAULT_BAD_PHASE,       /**< the entry is written with the old phase tag: the host
				  * cannot see it nor anything after it in that queue */
	NVP_EMU_FAULT_BAD_SQHD,        /**< the entry's SQ head pointer is past the queue's end */
	NVP_EMU_FAULT_ADMIN_ERROR,     /**< complete admin commands of opcode arg >> 16 with
				    * status arg & 0x7ff (sct<<8|sc), DNR clear */
	NVP_EMU_FAULT_ADMIN_BAD_PHASE, /**< execute admin commands of opcode arg >> 16 and
					* write their completions with the old phase tag:
					* the admin CQ is stuck behind them */
};

/** Options of a software controller. Initialise with nvp_emu_opts_init(). */
struct nvp_emu_opts {
	size_t opts_size;
	char name[NVP_EMU_NAME_MAX];
	uint32_t nn;
	uint64_t ns_size;                  /**< bytes per namespace */
	uint32_t lba_size[NVP_EMU_MAX_NS]; /**< per namespace: 512 or 4096 */
	enum nvp_emu_backend backend;
	char backend_path[256]; /**< file backend path prefix */
	uint32_t mqes;
	uint32_t dstrd;
	uint32_t to;
	uint32_t mpsmax;
	uint32_t rdy_delay_ms;
	uint32_t max_queues;
	uint32_t mdts;
	uint32_t read_us;
	uint32_t write_us;
	uint32_t channels;
	bool vwc;
	uint32_t fw_slots;
	enum nvp_emu_fault_type fault;
	uint32_t fault_count;
	uint32_t fault_skip;
	uint32_t fault_arg;
	bool prefault;      /**< ram: populate the backing memory at creation; default true */
	uint32_t streams;   /**< streams offered (MSL); 0 = no directives */
	bool ftl;           /**< FTL model behind each namespace */
	uint32_t ftl_ppb;   /**< pages per erase block */
	uint32_t ftl_op;    /**< over-provisioning percent */
	uint32_t ftl_gc;    /**< 0 greedy, 1 cost-benefit */
	uint32_t ftl_gc_us; /**< channel time per relocated page, µs */
	/* device model (emu_model.c) */
	char preset[8];
	char read_lat[NVP_EMU_DIST_MAX];
	char write_lat[NVP_EMU_DIST_MAX];
	uint32_t xfer_mbps;
	uint32_t wcache_mb;
	uint32_t prog_mbps;
	uint32_t prog_us;
	uint64_t seed;
	uint32_t ms;         /**< metadata bytes per block (LBA formats 2 and 3), 0 = none */
	bool mset;           /**< metadata interleaved (extended LBA) rather than separate */
	bool dbbuf;          /**< Doorbell Buffer Config (shadow doorbells, OACS bit 8) offered */
	uint32_t power_loss; /**< file backend: 1 = a power cut can lose unflushed writes,
			      * 2 = the same with a Flush that lies (to test the tests) */
	uint32_t slots;      /**< commands held at once; 0 = channels */
	uint32_t fdp;        /**< Flexible Data Placement: reclaim unit handles, 0 = no FDP */
	/* device model, continued (emu_model.c) */
	uint32_t iu_kb;       /**< indirection unit: writes program whole units, 0 = exact */
	bool read_prio;       /**< reads go ahead of writes waiting for cache room */
	bool prog_suspend;    /**< a read suspends the program operation in progress */
	bool read_busy;       /**< a read holds its channel for its service time */
	uint32_t suspend_us;  /**< prog_suspend: time for a program operation to pause */
	uint32_t suspend_max; /**< prog_suspend: suspends per program operation, 0 = any */
};

/** Fill @opts with the defaults listed above. */
void nvp_emu_opts_init(struct nvp_emu_opts *opts, size_t opts_size);

/**
 * Apply an options string on top of @opts. On error, a message naming the key, the
 * value and the accepted range is written to @err.
 * \return 0, or -EINVAL for an unknown key or a bad value.
 */
int nvp_emu_opts_parse(struct nvp_emu_opts *opts, const char *str, char *err, size_t errlen);

/** Print the option list (the table above) to @f, for --help of tools. */
void nvp_emu_opts_usage(FILE *f);

struct nvp_emu_ctrlr;

/**
 * Create a controller, start its thread and register its virtual PCI function.
 * env must be initialised (nvp_env_init()).
 * \return 0, -EINVAL bad options, -EEXIST name taken, -ENOMEM, -EIO backend file error
 * (message logged).
 */
int nvp_emu_ctrlr_create(const struct nvp_emu_opts *opts, struct nvp_emu_ctrlr **ctrlr);

/**
 * Stop the controller thread, unregister its function and free it. The file backend is
 * synced and closed so a new controller on the same path sees the data.
 * \return 0, or -EBUSY while a driver still has the function claimed.
 */
int nvp_emu_ctrlr_destroy(struct nvp_emu_ctrlr *ctrlr);

/** Find a controller by name. \return it or NULL. */
struct nvp_emu_ctrlr *nvp_emu_ctrlr_find(const char *name);

const char *nvp_emu_ctrlr_get_name(const struct nvp_emu_ctrlr *ctrlr);
const struct nvp_pci_addr *nvp_emu_ctrlr_get_pci_addr(const struct nvp_emu_ctrlr *ctrlr);

/** The PCI address as a string ("10000:00:00.0") for a PCIe transport ID. */
const char *nvp_emu_ctrlr_get_traddr(const struct nvp_emu_ctrlr *ctrlr);

/**
 * Inject a fault while running. Command faults (drop_cpl, error, slow) apply to the next
 * @count I/O commands after @skip more have passed; controller faults (cfs, all_ones,
 * rdy_never) switch on with @count != 0 and off with @count == 0. CFS is fatal, as on a
 * device: switched off, CSTS.CFS stays set and no queue runs until the host resets the
 * controller (CC.EN 1 -> 0). admin_error fails the next @count admin commands of opcode
 * @arg >> 16, after @skip more of that opcode have passed, with status @arg & 0x7ff (not
 * executed; a controller reset keeps the fault). admin_bad_phase picks its commands the
 * same way, executes them and writes their completions with the old phase tag. One admin
 * fault at a time: either replaces the other.
 * \return 0 or -EINVAL.
 */
int nvp_emu_ctrlr_inject_fault(struct nvp_emu_ctrlr *ctrlr, enum nvp_emu_fault_type type,
			       uint32_t count, uint32_t skip, uint32_t arg);

/**
 * Cut the power now: with power_loss=1 the writes not yet flushed are lost, torn at a
 * block boundary or kept (chosen by @seed, 0 = from the seed option); flushed data stays.
 * Then every register reads all ones and nothing more completes, as after a power
 * failure. Detach, destroy and create the controller again on the same backend files to
 * "power it back on". Without power_loss=1 nothing is lost (data was written through).
 * \return 0 or -EINVAL.
 */
int nvp_emu_ctrlr_power_cut(struct nvp_emu_ctrlr *ctrlr, uint32_t seed);

/**
 * Stop (@on) or restart the controller's own thread. While it is stopped the controller
 * only runs when the caller calls nvp_emu_ctrlr_poll(): for benchmarks that count the
 * driver's work alone on one thread. Attach with the thread running (the driver waits
 * for the controller while it initialises it).
 * \return 0, -EINVAL (NULL), or -errno if the thread cannot be restarted.
 */
int nvp_emu_ctrlr_set_inline(struct nvp_emu_ctrlr *ctrlr, bool on);

/**
 * Run the controller once (doorbells, commands, completions) from the calling thread.
 * \return work done (0 = idle), or -EINVAL if its own thread is running.
 */
int nvp_emu_ctrlr_poll(struct nvp_emu_ctrlr *ctrlr);

/**
 * Inline mode: the tick (nvp_env_get_ticks()) at which the earliest command in service
 * completes, UINT64_MAX if none is. A caller with nothing else to do may sleep until then
 * (as a host would wait for an interrupt) instead of polling.
 * \return the tick, or UINT64_MAX also if @ctrlr is NULL or its own thread is running.
 */
uint64_t nvp_emu_ctrlr_next_due(struct nvp_emu_ctrlr *ctrlr);

/** What the controller saw; counters only grow. */
struct nvp_emu_stats {
	size_t info_size; /**< set by the caller: sizeof(struct nvp_emu_stats) */
	uint64_t admin_cmds;
	uint64_t io_cmds;
	uint64_t read_cmds;
	uint64_t write_cmds;
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t dma_rejects;       /**< addresses that were not DMA memory */
	uint64_t invalid_doorbells; /**< doorbell writes for bad queues or out-of-range values */
	uint64_t aborted_cmds;
	uint64_t dropped_cpls;
	uint64_t resets;            /**< CC.EN 1 -> 0 transitions */
	uint64_t max_sq_depth_seen; /**< most commands seen outstanding in one SQ */
	/* FTL model (ftl=1), summed over namespaces; 4 KiB pages */
	uint64_t ftl_host_pages; /**< pages the host wrote */
	uint64_t ftl_nand_pages; /**< pages programmed (host + GC): WAF = nand / host */
	uint64_t ftl_gc_pages;   /**< pages garbage collection relocated */
	uint64_t ftl_erases;
	uint64_t ftl_gc_busy_us; /**< channel time GC took (gc pages x ftl_gc_us) */
	uint64_t stream_writes;  /**< write commands that carried a stream directive */
	/* The controller thread's own timing: how long after its due time each completion
	 * with a service time was posted. */
	uint64_t timed_cpls;       /**< completions that had a due time */
	uint64_t late_ns_sum;      /**< sum of their lateness, ns */
	uint64_t late_ns_max;      /**< worst lateness, ns */
	uint64_t late_over_10us;   /**< completions posted more than 10 us late */
	uint64_t reads_delayed;    /**< reads that waited behind writes: for cache room, or
				    * for a program operation (suspended or not) */
	uint64_t writes_throttled; /**< writes that found the write cache full */
	uint64_t interrupts;       /**< interrupts signalled (eventfd writes) */
	/* power-loss model (power_loss=1): unflushed writes at power cuts */
	uint64_t power_cuts;
	uint64_t plm_lost_writes;  /**< written back to their pre-image */
	uint64_t plm_torn_writes;  /**< lost from a block boundary on */
	uint64_t plm_kept_writes;  /**< reached the media after all */
	uint64_t placement_writes; /**< writes that carried a Data Placement directive (FDP) */
	uint64_t reads_suspended;  /**< reads that suspended a program operation */
};

/**
 * Copy the controller's counters into @stats; the caller sets stats->info_size first.
 * Any thread. \return 0; -EINVAL NULL argument or a too small info_size.
 */
int nvp_emu_ctrlr_get_stats(const struct nvp_emu_ctrlr *ctrlr, struct nvp_emu_stats *stats);

/** Vendor specific log page of the software controller: the FTL model's counters. */
#define NVP_EMU_LOG_FTL 0xc0
#define NVP_EMU_FTL_LOG_SIGNATURE "NVPF"

/**
 * Log page C0h, 512 bytes, little endian. NSID selects one namespace; 0 or FFFFFFFFh
 * sums every namespace (nsid_count says how many). Pages are 4 KiB. Counters only grow,
 * except valid_pages and free_blocks, which are a snapshot. Without ftl=1 the page reads
 * as all zero counters with pages_per_block 0.
 */
struct nvp_emu_ftl_log {
	char signature[4]; /**< "NVPF" */
	uint16_t version;  /**< 1 */
	uint16_t nsid_count;
	uint32_t page_size;
	uint32_t pages_per_block;
	uint32_t op_pct;
	uint32_t gc_policy; /**< 0 greedy, 1 cost-benefit */
	uint32_t streams;   /**< streams the controller offers */
	uint32_t free_blocks;
	uint64_t blocks;
	uint64_t logical_pages;
	uint64_t valid_pages;
	uint64_t host_pages;
	uint64_t nand_pages;
	uint64_t gc_pages;
	uint64_t erases;
	uint64_t gc_runs;
	uint64_t trimmed_pages;
	uint64_t stream_pages; /**< host pages written with a stream */
	uint64_t gc_busy_us;
	uint8_t rsvd120[392];
};

_Static_assert(sizeof(struct nvp_emu_ftl_log) == 512, "struct nvp_emu_ftl_log is 512 bytes");
_Static_assert(offsetof(struct nvp_emu_ftl_log, blocks) == 32, "nvp_emu_ftl_log.blocks");

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_EMU_H */
