/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_fault_matrix: one cell of bench/fault_matrix — a fault injected into the software
 * controller in the middle of a workload — in its own process, so that a crash or a hang
 * is counted by the script instead of ending the matrix.
 *
 *   nvp_fault_matrix --fault NAME --workload randread|randwrite|mixed|admin
 *                    [--threads N] [--mode raw|bdev|stages] [--sched NAME]
 *                    [--transport emu|tcp] [--seconds S] [--inject-ms M] [--timeout-ms T]
 *   nvp_fault_matrix --soak S [--seed N] [--bdevs B] [--threads N]   (bench/soak)
 *
 * Modes: raw qpairs; bdev channels with every stage off; bdev channels with the
 * writeback throttle, a scheduler (--sched none|deadline|kyber|fair; each thread its own
 * tenant) and hybrid waiting on, the stages where deferred and queued I/O could be lost.
 * Transports: the software controller reached directly (emu), or served on loopback by
 * the tests' NVMe/TCP target and reached over NVMe/TCP (tcp): the fault is then the
 * target's device's, and recovering a failed device (a reset) is the target operator's.
 * Over tcp the target itself may fail too: every connection dropped (conn_reset), no
 * listener for a while (restart), nothing read or answered for a while, the connections
 * open (stall), a PDU with a wrong header or data digest (bad_hdgst, bad_ddgst; the
 * target's faults' cells ask for both digests). Raw tcp cells set the controller's
 * reconnect options (ctrlr_loss_timeout_sec 30, reconnect_delay_sec 1,
 * fast_io_fail_timeout_sec 5): the driver reconnects by itself while the main thread
 * polls the admin queue; bdev tcp cells keep the bdev module's resets.
 *
 * The application side does what nvme.h asks of an application: every thread polls its
 * own qpair (or bdev channel); a controller that failed (CFS, a reset that never got
 * ready) is reset by the main thread with the I/O threads parked, after the fault has
 * been switched off, as an operator's retry would. A removed or powered-off device is not
 * reset: its requests must fail, not hang. Prints one line:
 *   cell fault=.. workload=.. threads=.. mode=.. issued=N ok=N err=N lost=N dup=N
 *   corrupted=N verified=N refused=N resets=N recover_ms=X failed=0|1 gone=0|1
 *   flushes=N unread=N
 * lost: requests never completed; corrupted: blocks read back (during the run and once
 * more at the end on a working controller) that hold neither their last acknowledged
 * write nor a failed write after it. Writers flush every FM_FLUSH_EVERY acknowledged
 * writes; after a power cut the controller is powered on again (destroyed and created on
 * its files) and every block is read back: it must hold what was acknowledged before the
 * last Flush that succeeded was sent, or a write sent later (unread: blocks that could
 * not be read then). gone: the fault takes the device away for good (no recovery due). recover_ms: from the injection to the last thread's
 * first good completion after its last error (-1: never; 0: no error was seen).
 * Exit 0 when the cell ran, 1 set-up failure, 2 usage, 3 a thread did not stop (hang).
 *
 * --soak S: one long run instead of one fault. B namespaces of one software controller,
 * a bdev each with every stage on (the throttle; deadline, kyber, fair, none in turn;
 * hybrid waiting), the threads spread over them, mixed verified I/O. Faults come at
 * random times from the seed (printed): dropped completions, error statuses, slow
 * commands, CFS, a reset that never gets ready, a reset the application asks for; each
 * runs its course (the main thread resets what fails) before the next. Near the end,
 * at a random time, a power cut: the controller is powered on again and every block read
 * back. RSS is sampled after the warm-up and before the power cut. Also prints:
 *   soak seed=N seconds=S events=N rss_warm_kib=N rss_end_kib=N rss_max_kib=N <fault>=N..
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fm.h"
#include "nvme_tcp_tgt.h"
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

enum fm_recovery {
	FM_REC_NONE = 0,
	FM_REC_RESET,
	FM_REC_GONE
};

/* A fault of the NVMe/TCP target itself (the connection, not its device): tcp only. */
enum fm_tcp_fault {
	FM_TCP_NONE = 0,
	FM_TCP_RESET,   /* every connection dropped (the host must reconnect) */
	FM_TCP_RESTART, /* the same, and nobody listens for a while */
	FM_TCP_STALL,   /* the target reads and answers nothing for a while */
	FM_TCP_PDU      /* the target's next I/O answer is the PDU fault pdu */
};

struct fm_fault {
	const char *name;
	enum nvp_emu_fault_type type;
	uint32_t count;
	uint32_t arg; /* for slow: multiples of the timeout, in percent */
	enum fm_recovery rec;
	const char *what;
};

/* What a fault of g_faults named here does to the target instead of its device. */
struct fm_tcp_def {
	const char *name;
	enum fm_tcp_fault kind;
	uint32_t ms;            /* restart, stall: how long */
	enum tcp_tgt_fault pdu; /* FM_TCP_PDU */
};

static const struct fm_fault g_faults[] = {
	{ "none", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE, "no fault (control)" },
	{ "drop_cpl", NVP_EMU_FAULT_DROP_CPL, 4, 0, FM_REC_NONE, "4 completions dropped" },
	{ "err_generic", NVP_EMU_FAULT_ERROR, 8, 0x006, FM_REC_NONE, "Internal Error (0/06h)" },
	{ "err_cmd", NVP_EMU_FAULT_ERROR, 8, 0x180, FM_REC_NONE, "Conflicting Attributes (1/80h)" },
	{ "err_media", NVP_EMU_FAULT_ERROR, 8, 0x281, FM_REC_NONE,
	  "Unrecovered Read Error (2/81h)" },
	{ "err_path", NVP_EMU_FAULT_ERROR, 8, 0x300, FM_REC_NONE, "Internal Path Error (3/00h)" },
	{ "slow", NVP_EMU_FAULT_SLOW, 8, 150, FM_REC_NONE, "8 commands 1.5x the timeout" },
	{ "cfs", NVP_EMU_FAULT_CFS, 1, 0, FM_REC_RESET, "CSTS.CFS mid-I/O" },
	{ "removal", NVP_EMU_FAULT_ALL_ONES, 1, 0, FM_REC_GONE, "registers all ones" },
	{ "rdy_never", NVP_EMU_FAULT_RDY_NEVER, 1, 0, FM_REC_RESET, "reset, RDY never set" },
	{ "bad_cid", NVP_EMU_FAULT_BAD_CID, 2, 0, FM_REC_NONE, "cid nobody sent" },
	{ "dup_cpl", NVP_EMU_FAULT_DUP_CPL, 8, 0, FM_REC_NONE,
	  "completion posted again after the next" },
	{ "wrong_cq", NVP_EMU_FAULT_WRONG_CQ, 2, 0, FM_REC_NONE, "completion on the admin CQ" },
	{ "bad_phase", NVP_EMU_FAULT_BAD_PHASE, 1, 0, FM_REC_NONE, "entry with a stale phase" },
	{ "bad_sqhd", NVP_EMU_FAULT_BAD_SQHD, 2, 0, FM_REC_NONE, "SQ head past the queue" },
	{ "power_cut", NVP_EMU_FAULT_POWER_CUT, 1, 0, FM_REC_GONE, "power cut (file, vwc)" },
	/* the target's own faults, tcp only (g_tcp_faults): the driver reconnects by itself
	 * (raw: the controller's reconnect options; bdev: the module's resets) */
	{ "conn_reset", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE, "tcp: every connection dropped" },
	{ "restart", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE,
	  "tcp: connections dropped, none accepted for 500 ms" },
	{ "stall", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE,
	  "tcp: the target reads and answers nothing for 1 s" },
	{ "bad_hdgst", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE,
	  "tcp: a CapsuleResp with a wrong header digest" },
	{ "bad_ddgst", NVP_EMU_FAULT_NONE, 0, 0, FM_REC_NONE,
	  "tcp: a read's C2HData with a wrong data digest" },
	/* not in the matrix: a device whose Flush lies, which the read-back after a power
	 * cut must find corrupted (the slice in `make test` checks it does) */
	{ "power_cut_lie", NVP_EMU_FAULT_POWER_CUT, 1, 0, FM_REC_GONE,
	  "power cut, Flush lies (must report corrupted blocks)" },
};

static const struct fm_tcp_def g_tcp_faults[] = {
	{ "conn_reset", FM_TCP_RESET, 0, TCP_TGT_FAULT_NONE },
	{ "restart", FM_TCP_RESTART, 500, TCP_TGT_FAULT_NONE },
	{ "stall", FM_TCP_STALL, 1000, TCP_TGT_FAULT_NONE },
	{ "bad_hdgst", FM_TCP_PDU, 0, TCP_TGT_FAULT_BAD_HDGST },
	{ "bad_ddgst", FM_TCP_PDU, 0, TCP_TGT_FAULT_BAD_DDGST },
};

static const struct fm_fault *g_fault;
static const struct fm_tcp_def *g_tcp; /* g_fault is the target's own, or NULL */

/* The NVMe/TCP host's reconnect options in raw mode (the controller's; a bdev keeps the
 * module's resets): outages shorter than the fast-fail time cost no error. */
#define FM_TCP_LOSS_S 30
#define FM_TCP_FAST_FAIL_S 5

/* The soak's faults, by name in g_faults, and "reset": a reset the application asks for. */
static const char *const g_soak_faults[] = { "drop_cpl", "err_generic", "err_media", "err_path",
					     "slow",     "cfs",         "rdy_never", "bad_cid",
					     "dup_cpl",  "reset" };

static const struct fm_fault g_fault_reset = { "reset",     NVP_EMU_FAULT_NONE,
					       0,           0,
					       FM_REC_NONE, "a reset the application asks for" };

/* A fault of g_faults by name, or NULL. */
static const struct fm_fault *
find_fault(const char *name)
{
	for (size_t i = 0; i < NVP_COUNTOF(g_faults); i++) {
		if (strcmp(g_faults[i].name, name) == 0) {
			return &g_faults[i];
		}
	}
	return NULL;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: nvp_fault_matrix --fault NAME --workload randread|randwrite|mixed|"
		   "admin [--threads N] [--mode raw|bdev|stages] [--sched none|deadline|kyber|"
		   "fair] [--transport emu|tcp] [--seconds S] [--inject-ms M] [--timeout-ms T]"
		   "\nfaults:");
	for (size_t i = 0; i < NVP_COUNTOF(g_faults); i++) {
		fprintf(f, "\n  %-12s %s", g_faults[i].name, g_faults[i].what);
	}
	fprintf(f, "\n");
}

/*
 * The stages mode's scheduler parameters: small depths, so that the scheduler holds I/O
 * back (as bdev_compose's cells); NULL for an unknown scheduler.
 */
static const char *
sched_params(const char *name)
{
	static const struct {
		const char *name, *params;
	} tab[] = {
		{ "none", "" },
		{ "deadline", "depth=4 fifo_batch=4 writes_starved=1" },
		{ "kyber", "read_lat_us=200 write_lat_us=400 window_ms=20" },
		{ "fair", "depth=4 weights=1/1/4 lag_kib=16" },
	};

	for (size_t i = 0; i < NVP_COUNTOF(tab); i++) {
		if (strcmp(name, tab[i].name) == 0) {
			return tab[i].params;
		}
	}
	return NULL;
}

static const char *const g_soak_scheds[] = { "deadline", "kyber", "fair", "none" };

/* The throttle in the stages mode: a latency target the device misses under the cell's
 * load, so that writes are deferred and released while the fault hits. */
#define FM_WBT_PARAMS "lat_us=100 window_ms=10 depth=8"

static int
parse_workload(const char *s, enum fm_workload *w)
{
	static const char *const names[] = { "randread", "randwrite", "mixed", "admin" };

	for (int i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*w = (enum fm_workload)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int
parse_args(struct fm_cell *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fault", required_argument, NULL, 'f' },
		{ "workload", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' },
		{ "sched", required_argument, NULL, 'S' },
		{ "transport", required_argument, NULL, 'x' },
		{ "soak", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 'e' },
		{ "bdevs", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 's' },
		{ "inject-ms", required_argument, NULL, 'i' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'f':
			g_fault = find_fault(optarg);
			if (g_fault == NULL) {
				fprintf(stderr, "nvp_fault_matrix: unknown fault '%s'\n", optarg);
				return -EINVAL;
			}
			g_tcp = NULL;
			for (size_t i = 0; i < NVP_COUNTOF(g_tcp_faults); i++) {
				if (strcmp(g_tcp_faults[i].name, optarg) == 0) {
					g_tcp = &g_tcp_faults[i];
				}
			}
			break;
		case 'w':
			if (parse_workload(optarg, &c->workload) != 0) {
				fprintf(stderr, "nvp_fault_matrix: unknown workload '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 't':
			c->threads = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			if (strcmp(optarg, "raw") == 0) {
				c->mode = FM_MODE_RAW;
			} else if (strcmp(optarg, "bdev") == 0) {
				c->mode = FM_MODE_BDEV;
			} else if (strcmp(optarg, "stages") == 0) {
				c->mode = FM_MODE_STAGES;
			} else {
				fprintf(stderr, "nvp_fault_matrix: --mode raw, bdev or stages\n");
				return -EINVAL;
			}
			c->bdev = c->mode != FM_MODE_RAW;
			break;
		case 'S':
			if (sched_params(optarg) == NULL) {
				fprintf(stderr,
					"nvp_fault_matrix: --sched none, deadline, kyber or "
					"fair\n");
				return -EINVAL;
			}
			c->sched = optarg;
			break;
		case 'k':
			c->soak_s = strtod(optarg, NULL);
			if (!(c->soak_s >= 5 && c->soak_s <= 86400)) {
				fprintf(stderr,
					"nvp_fault_matrix: --soak takes 5 to 86400 seconds\n");
				return -EINVAL;
			}
			break;
		case 'e':
			c->seed = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			c->bdevs = (uint32_t)strtoul(optarg, NULL, 10);
			if (c->bdevs < 1 || c->bdevs > 4) {
				fprintf(stderr, "nvp_fault_matrix: --bdevs 1 to 4\n");
				return -EINVAL;
			}
			break;
		case 'x':
			if (strcmp(optarg, "emu") != 0 && strcmp(optarg, "tcp") != 0) {
				fprintf(stderr, "nvp_fault_matrix: --transport emu or tcp\n");
				return -EINVAL;
			}
			c->tcp = strcmp(optarg, "tcp") == 0;
			break;
		case 's':
			c->seconds = strtod(optarg, NULL);
			break;
		case 'i':
			c->inject_ms = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'T':
			c->timeout_ms = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		default:
			return -EINVAL;
		}
	}
	if (c->soak_s > 0) {
		if (g_fault != NULL || c->tcp) {
			fprintf(stderr, "nvp_fault_matrix: --soak picks its own faults\n");
			return -EINVAL;
		}
		/* the last fault is the power cut; every stage on; mixed verified I/O */
		g_fault = find_fault("power_cut");
		c->mode = FM_MODE_STAGES;
		c->bdev = true;
		c->workload = FM_MIXED;
	}
	if (g_tcp != NULL && !c->tcp) {
		fprintf(stderr,
			"nvp_fault_matrix: --fault %s is the NVMe/TCP target's: it needs "
			"--transport tcp\n",
			g_fault->name);
		return -EINVAL;
	}
	if (g_fault == NULL || c->threads < 1 || c->threads > FM_MAX_THREADS || c->seconds <= 0 ||
	    c->seconds > 600 || c->timeout_ms < 10 || optind != argc) {
		fprintf(stderr,
			"nvp_fault_matrix: --fault is required; --threads 1..%u, "
			"--seconds (0, 600], --timeout-ms >= 10\n",
			FM_MAX_THREADS);
		return -EINVAL;
	}
	return 0;
}

/* ---- set-up ---- */

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

/* The software controller, created on c->dir's files (again after a power cut). */
static int
emu_create(struct fm_cell *c, bool power_loss, char *trid, size_t len)
{
	char eopts[256];
	struct nvp_emu_opts eo;
	bool cut = g_fault->type == NVP_EMU_FAULT_POWER_CUT;
	int rc;

	snprintf(eopts, sizeof(eopts),
		 "size=32M,lba=4096,channels=4,read_us=20,write_us=40,to=2,nn=%u%s%s%s%s", c->bdevs,
		 cut ? ",vwc=1,backend=file:" : "", cut ? c->dir : "", cut ? "/fm" : "",
		 !cut || !power_loss                         ? "" :
		 strcmp(g_fault->name, "power_cut_lie") == 0 ? ",power_loss=2" :
							       ",power_loss=1");
	nvp_emu_opts_init(&eo, sizeof(eo));
	nvp_strlcpy(eo.name, "fm0", sizeof(eo.name));
	if (nvp_emu_opts_parse(&eo, eopts, trid, len) != 0) {
		fprintf(stderr, "nvp_fault_matrix: %s\n", trid);
		return -EINVAL;
	}
	rc = nvp_emu_ctrlr_create(&eo, &c->emu);
	if (rc == 0) {
		snprintf(trid, len, "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(c->emu));
	}
	return rc;
}

static int
connect_raw(const char *trid, const struct nvp_nvme_ctrlr_opts *co, struct nvp_nvme_ctrlr **ctrlr)
{
	struct nvp_nvme_transport_id t;
	int rc = nvp_nvme_transport_id_parse(&t, trid);

	return rc != 0 ? rc : nvp_nvme_connect(&t, co, ctrlr);
}

static int
attach(struct fm_cell *c)
{
	char trid[256];
	struct nvp_nvme_ctrlr_opts co;
	int rc;

	rc = emu_create(c, true, trid, sizeof(trid));
	if (rc != 0) {
		return rc;
	}
	nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
	co.io_timeout_us = (uint64_t)c->timeout_ms * 1000;
	co.admin_timeout_ms = NVP_MAX(c->timeout_ms * 2, 1000u);
	if (c->tcp) {
		struct tcp_tgt_opts to;

		/* The target's device, with the cell's timeouts: the target's own qpairs give
		 * up on a dropped completion, as nvmet's block device would return an error. */
		rc = connect_raw(trid, &co, &c->backend);
		if (rc == 0) {
			tcp_tgt_opts_init(&to);
			rc = tcp_tgt_start(c->backend, &to, &c->tgt);
		}
		if (rc != 0) {
			return rc;
		}
		/* The target's own faults: with both digests (which bad_hdgst and bad_ddgst
		 * need); the driver reconnects by itself within fast_io_fail_timeout_sec. */
		tcp_tgt_trid(c->tgt, g_tcp != NULL ? "hdgst:1 ddgst:1" : NULL, trid, sizeof(trid));
		/* The target serves one command at a time per connection: a host request
		 * waits behind the others of its queue, and behind the target's own timeout. */
		co.io_timeout_us *= 2 * FM_QD;
		co.admin_timeout_ms *= 4;
		if (!c->bdev) {
			co.ctrlr_loss_timeout_sec = FM_TCP_LOSS_S;
			co.reconnect_delay_sec = 1;
			co.fast_io_fail_timeout_sec = FM_TCP_FAST_FAIL_S;
		}
	}
	if (c->bdev) {
		struct nvp_bdev_nvme_opts no;

		nvp_bdev_nvme_opts_init(&no, sizeof(no));
		no.name = "fm0";
		no.ctrlr_opts = &co;
		/* As an SPDK user who wants the bdev to outlive a failing controller: the module
		 * resets it every second until a reset brings it back (a removed device still
		 * goes at once). With the default (one reset) a fault held longer than the
		 * first reset removes the bdev. */
		no.ctrlr_loss_timeout_sec = -1;
		no.reconnect_delay_sec = 1;
		struct nvp_bdev *bdevs[4] = { NULL };
		uint32_t n = 0;

		rc = nvp_bdev_nvme_attach(trid, &no, bdevs, 4, &n);
		for (uint32_t i = 0; rc == 0 && c->mode == FM_MODE_STAGES && i < n; i++) {
			/* the soak's bdevs take the schedulers in turn */
			const char *sched = c->soak_s > 0 ? g_soak_scheds[i % 4] : c->sched;

			rc = nvp_bdev_set_admission(bdevs[i], "wbt", FM_WBT_PARAMS);
			if (rc == 0) {
				rc = nvp_bdev_set_scheduler(bdevs[i], sched, sched_params(sched));
			}
		}
		if (rc == 0 && n != c->bdevs) {
			fprintf(stderr, "nvp_fault_matrix: %u bdevs, not %u\n", n, c->bdevs);
			rc = -ENODEV;
		}
		if (rc == 0) {
			rc = nvp_bdev_open("fm0n1", true, ignore_event, NULL, &c->desc);
		}
		if (rc == 0) {
			c->ctrlr = nvp_bdev_nvme_get_ctrlr(nvp_bdev_desc_get_bdev(c->desc));
			c->num_blocks = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(c->desc));
		}
		return rc;
	}
	rc = connect_raw(trid, &co, &c->ctrlr);
	if (rc == 0) {
		c->ns = nvp_nvme_ctrlr_get_ns(c->ctrlr,
					      nvp_nvme_ctrlr_get_first_active_ns(c->ctrlr));
		c->num_blocks = nvp_nvme_ns_get_num_sectors(c->ns);
	}
	return rc;
}

/* The thread's memory (the main thread's: it outlives the I/O objects). */
static int
thread_alloc(struct fm_thread *t)
{
	struct fm_cell *c = t->cell;

	t->nblk = (uint32_t)NVP_MIN(c->num_blocks / c->threads, 256u);
	t->base = t->idx * (uint32_t)(c->num_blocks / c->threads);
	t->rng = 0x2545f4914f6cdd1dull * (t->idx + 1);
	t->blk = calloc(t->nblk, sizeof(*t->blk));
	if (t->blk == NULL) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < FM_QD; i++) {
		t->slots[i].t = t;
		t->slots[i].buf = nvp_env_dma_zmalloc(FM_MAX_BLKS * FM_BS, 4096, NULL);
		if (t->slots[i].buf == NULL) {
			return -ENOMEM;
		}
	}
	return 0;
}

static void
thread_free(struct fm_thread *t)
{
	for (uint32_t i = 0; i < FM_QD; i++) {
		nvp_env_dma_free(t->slots[i].buf);
	}
	free(t->blk);
}

/* The thread's I/O objects, made on the thread that uses them (they belong to it). */
static int
thread_setup(struct fm_thread *t)
{
	struct fm_cell *c = t->cell;
	struct nvp_bdev_channel_opts o;
	struct nvp_poll_opts po;
	int rc;

	if (!c->bdev) {
		struct nvp_nvme_io_qpair_opts qo;

		nvp_nvme_ctrlr_get_default_io_qpair_opts(c->ctrlr, &qo, sizeof(qo));
		qo.io_queue_size = 32;
		qo.io_queue_requests = 64;
		qo.timeout_us = c->tcp ? 0 : (uint64_t)c->timeout_ms * 1000;
		return nvp_nvme_ctrlr_alloc_io_qpair(c->ctrlr, &qo, &t->qpair);
	}
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	t->desc = c->desc;
	if (c->mode == FM_MODE_STAGES) {
		/* its own descriptor: each thread a tenant (fair weighs 1 and 4); the soak's
		 * threads spread over its bdevs */
		char name[16];

		snprintf(name, sizeof(name), "fm0n%u", 1 + t->idx % c->bdevs);
		rc = nvp_bdev_open(name, true, ignore_event, NULL, &t->desc);
		if (rc == 0) {
			rc = nvp_bdev_desc_set_tenant(t->desc, 1 + (t->idx / c->bdevs) % 2);
		}
		if (rc == 0) {
			rc = nvp_bdev_poll_group_create(&t->group);
		}
		if (rc != 0) {
			return rc;
		}
		o.group = t->group;
	}
	rc = nvp_bdev_channel_create(t->desc, &o, &t->ch);
	if (rc != 0 || c->mode != FM_MODE_STAGES) {
		return rc;
	}
	nvp_poll_opts_init(&po, sizeof(po));
	rc = nvp_poll_mode_parse("hybrid", &po);
	if (rc == 0) {
		rc = nvp_poll_waiter_create(&po, &t->waiter);
	}
	return rc != 0 ? rc : nvp_poll_waiter_add_bdev_group(t->waiter, t->group, 0);
}

/* On the thread again. A channel with a lost request stays (it cannot be destroyed). */
static void
thread_teardown(struct fm_thread *t)
{
	struct fm_cell *c = t->cell;

	if (t->waiter != NULL) {
		nvp_poll_waiter_destroy(t->waiter);
	}
	if (t->ch != NULL && nvp_bdev_channel_destroy(t->ch) == 0 && t->group != NULL) {
		nvp_bdev_poll_group_destroy(t->group);
	}
	if (t->desc != NULL && t->desc != c->desc && fm_thread_outstanding(t) == 0) {
		nvp_bdev_close(t->desc);
	}
	if (t->qpair != NULL) {
		nvp_nvme_ctrlr_free_io_qpair(t->qpair);
	}
}

/* ---- the run ---- */

static void
park_all(struct fm_cell *c, bool on)
{
	atomic_store(&c->park, on);
	for (uint32_t i = 0; on && i < c->threads; i++) {
		while (!atomic_load(&c->t[i].parked) && atomic_load(&c->t[i].live)) {
			usleep(100);
		}
	}
}

/* Reset the failed controller (the target's, over TCP) with the I/O threads parked. */
static void
reset_parked(struct fm_cell *c)
{
	struct nvp_nvme_ctrlr *ctrlr = c->ctrlr;

	if (c->backend != NULL && !nvp_nvme_ctrlr_is_failed(c->ctrlr)) {
		ctrlr = c->backend;
	}
	park_all(c, true);
	c->resets++;
	if (nvp_nvme_ctrlr_reset(ctrlr) != 0) {
		c->reset_failures++;
	}
	park_all(c, false);
}

static void supervise(struct fm_cell *c, uint64_t end);

/* One of the target's own faults: the connection misbehaves, not the device behind it. */
static void
inject_tcp(struct fm_cell *c, const struct fm_tcp_def *f)
{
	switch (f->kind) {
	case FM_TCP_RESET:
		tcp_tgt_drop_conns(c->tgt);
		break;
	case FM_TCP_RESTART:
		/* the supervisor goes on meanwhile: its admin poll drives the reconnect */
		(void)tcp_tgt_set_listening(c->tgt, false);
		tcp_tgt_drop_conns(c->tgt);
		supervise(c, c->t_inject + nvp_env_get_ticks_hz() * f->ms / 1000);
		(void)tcp_tgt_set_listening(c->tgt, true);
		break;
	case FM_TCP_STALL:
		tcp_tgt_stall(c->tgt, f->ms);
		break;
	case FM_TCP_PDU:
		tcp_tgt_set_fault(c->tgt, f->pdu);
		break;
	case FM_TCP_NONE:
		break;
	}
}

static void
inject(struct fm_cell *c)
{
	const struct fm_fault *f = g_fault;
	uint32_t arg = f->arg;

	c->t_inject = nvp_env_get_ticks();
	if (g_tcp != NULL) {
		inject_tcp(c, g_tcp);
		return;
	}
	if (f->type == NVP_EMU_FAULT_NONE) {
		return;
	}
	if (f->type == NVP_EMU_FAULT_SLOW) {
		arg = c->timeout_ms * 10 * f->arg; /* percent of the timeout, in us */
	}
	nvp_emu_ctrlr_inject_fault(c->emu, f->type, f->count, 0, arg);
	if (f->type == NVP_EMU_FAULT_RDY_NEVER) {
		/* a reset of the device that fails: the controller never becomes ready */
		struct nvp_nvme_ctrlr *saved = c->ctrlr;

		if (c->backend != NULL) {
			c->ctrlr = c->backend;
		}
		reset_parked(c);
		c->ctrlr = saved;
	}
}

/* Main thread while the I/O threads run: admin traffic, health, recovery. */
static void
supervise(struct fm_cell *c, uint64_t end)
{
	uint64_t hz = nvp_env_get_ticks_hz(), next_admin = 0;
	uint8_t buf[512];

	while (nvp_env_get_ticks() < end && atomic_load(&c->running) > 0) {
		uint64_t now = nvp_env_get_ticks();

		nvp_nvme_ctrlr_process_admin_completions(c->ctrlr);
		if (c->workload == FM_ADMIN && now >= next_admin) {
			next_admin = now + hz / 100;
			if (nvp_nvme_ctrlr_get_log_page(c->ctrlr, 0x02, NVME_GLOBAL_NS_TAG, buf,
							sizeof(buf), 0, NULL) == 0) {
				c->admin_ok++;
			} else {
				c->admin_err++;
			}
		}
		if (g_fault->rec == FM_REC_RESET && fm_failed(c) && now > c->t_inject + hz / 5) {
			nvp_emu_ctrlr_inject_fault(c->emu, g_fault->type, 0, 0, 0);
			reset_parked(c);
		}
		/* A thread's qpair failed on a live controller: what nvme.h says to do. */
		if (atomic_exchange(&c->want_reset, false) && !fm_failed(c)) {
			reset_parked(c);
		}
		usleep(1000);
	}
}

static void *
thread_run(void *arg)
{
	struct fm_thread *t = arg;
	struct fm_cell *c = t->cell;
	int rc = thread_setup(t);
	uint64_t until;

	if (rc == 0) {
		rc = fm_prefill(t);
	}
	t->setup_rc = rc;
	atomic_fetch_add(&c->ready, 1);
	while (!atomic_load(&c->go) && !atomic_load(&c->stop)) {
		usleep(200);
	}
	if (rc == 0 && atomic_load(&c->go)) {
		fm_thread_main(t);
		/* The supervisor is resetting a failed controller, or (the target's own faults)
		 * the driver or the bdev module brings it back from the polls: the read-back
		 * waits for it, polling, as an application would (bounded). */
		until = nvp_env_get_ticks() + nvp_env_get_ticks_hz() * 10;
		while ((c->recoverable || g_tcp != NULL) && fm_failed(c) &&
		       nvp_env_get_ticks() < until) {
			fm_park_point(t);
			if (g_tcp != NULL) {
				(void)fm_poll(t);
			}
			usleep(1000);
		}
		/* Read everything back on a working controller, once every request is back
		 * (after random reads too: the read-back's first good completion is what shows
		 * that the I/O came back after a fault late in the run). */
		if (g_fault->rec == FM_REC_GONE) {
			/* nothing to read back on: a power cut is read back after power-on */
		} else if (fm_thread_outstanding(t) != 0 || fm_failed(c)) {
			fprintf(stderr, "fault_matrix: thread %u: no read-back (%s)\n", t->idx,
				fm_failed(c) ? "the controller failed" : "requests outstanding");
		} else {
			uint64_t ok = t->ok, err = t->err;

			fm_verify_all(t);
			t->ok = ok; /* the run's figures, not the read-back's */
			t->err = err;
		}
	}
	thread_teardown(t);
	atomic_store(&t->live, false);
	atomic_fetch_sub(&c->running, 1);
	return NULL;
}

static double
recover_ms(const struct fm_cell *c)
{
	double worst = 0, hz = (double)nvp_env_get_ticks_hz();

	for (uint32_t i = 0; i < c->threads; i++) {
		const struct fm_thread *t = &c->t[i];

		if (t->t_last_err == 0) {
			continue;
		}
		if (t->waiting_ok) {
			return -1;
		}
		worst = NVP_MAX(worst, (double)(t->t_ok_after_err - c->t_inject) * 1e3 / hz);
	}
	return worst;
}

static const char *
mode_name(const struct fm_cell *c)
{
	static char buf[32];

	if (c->soak_s > 0) {
		return "stages-soak"; /* the schedulers in turn over the bdevs */
	}
	if (c->mode == FM_MODE_STAGES) {
		snprintf(buf, sizeof(buf), "stages-%s", c->sched);
		return buf;
	}
	return c->mode == FM_MODE_BDEV ? "bdev" : "raw";
}

static void
report(struct fm_cell *c, uint64_t lost, bool was_failed)
{
	static const char *const wl[] = { "randread", "randwrite", "mixed", "admin" };
	uint64_t issued = 0, ok = 0, err = 0, dup = 0, corr = 0, ver = 0, ref = 0, fl = 0;
	uint64_t unread = 0;

	for (uint32_t i = 0; i < c->threads; i++) {
		issued += c->t[i].issued;
		ok += c->t[i].ok;
		err += c->t[i].err;
		dup += c->t[i].dup;
		corr += c->t[i].corrupted;
		ver += c->t[i].verified;
		ref += c->t[i].refused;
		fl += c->t[i].flushes;
		unread += c->t[i].unread;
	}
	printf("cell fault=%s workload=%s threads=%u mode=%s transport=%s issued=%" PRIu64
	       " ok=%" PRIu64 " err=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64 " corrupted=%" PRIu64
	       " verified=%" PRIu64 " refused=%" PRIu64 " flushes=%" PRIu64 " unread=%" PRIu64
	       " resets=%u reset_failures=%u admin_ok=%u admin_err=%u"
	       " recover_ms=%.1f failed=%d gone=%d\n",
	       g_fault->name, wl[c->workload], c->threads, mode_name(c), c->tcp ? "tcp" : "emu",
	       issued, ok, err, lost, dup, corr, ver, ref, fl, unread, c->resets, c->reset_failures,
	       c->admin_ok, c->admin_err, recover_ms(c), was_failed ? 1 : 0,
	       g_fault->rec == FM_REC_GONE ? 1 : 0);
	fflush(stdout);
}

/* ---- the soak ---- */

static struct {
	uint32_t events, by_fault[NVP_COUNTOF(g_soak_faults)];
	uint64_t rss_warm_kib, rss_end_kib, rss_max_kib;
} g_soak;

static uint64_t
rss_kib(void)
{
	char line[128];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1) {
			break;
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	return kib;
}

static double
u01(uint64_t *rng)
{
	return (double)(fm_rand(rng) >> 11) / (double)(1ull << 53);
}

/*
 * Faults at random times (gaps of 0.5 to 2.5 s), each after the last has run its course
 * (nothing failed any more), until a random time in the last fifth of the run: then the
 * power cut. The supervisor's loop in between keeps admin traffic and recovery going.
 */
static void
soak(struct fm_cell *c)
{
	const struct fm_fault *cut = g_fault;
	uint64_t hz = nvp_env_get_ticks_hz(), t0 = nvp_env_get_ticks(), rng = c->seed | 1;
	uint64_t span = (uint64_t)(c->soak_s * (double)hz), now = t0;
	uint64_t t_cut = t0 + span * 4 / 5 + (uint64_t)(u01(&rng) * (double)(span / 5));
	uint64_t warm = t0 + span / 5, next = t0 + hz / 2;

	printf("soak seed=%" PRIu64 " seconds=%.0f cut_at_s=%.1f\n", c->seed, c->soak_s,
	       (double)(t_cut - t0) / (double)hz);
	fflush(stdout);
	g_fault = &g_fault_reset;
	while (now < t_cut && atomic_load(&c->running) > 0) {
		supervise(c, NVP_MIN(next, t_cut));
		now = nvp_env_get_ticks();
		g_soak.rss_max_kib = NVP_MAX(g_soak.rss_max_kib, rss_kib());
		if (g_soak.rss_warm_kib == 0 && now >= warm) {
			g_soak.rss_warm_kib = rss_kib();
		}
		if (now < next || now >= t_cut) {
			continue;
		}
		if (fm_failed(c)) {
			next = now + hz / 10; /* the last fault has not run its course */
			continue;
		}
		uint32_t k = (uint32_t)(fm_rand(&rng) % NVP_COUNTOF(g_soak_faults));

		g_fault = find_fault(g_soak_faults[k]);
		g_fault = g_fault != NULL ? g_fault : &g_fault_reset;
		c->recoverable = g_fault->rec == FM_REC_RESET;
		if (g_fault == &g_fault_reset) {
			reset_parked(c);
		} else {
			inject(c);
		}
		g_soak.events++;
		g_soak.by_fault[k]++;
		next = nvp_env_get_ticks() + hz / 2 + (uint64_t)(u01(&rng) * 2.0 * (double)hz);
	}
	g_soak.rss_end_kib = rss_kib();
	/* the cut: what was flushed must be there when the power comes back */
	g_fault = cut;
	c->recoverable = false;
	c->t_inject = nvp_env_get_ticks();
	nvp_emu_ctrlr_inject_fault(c->emu, NVP_EMU_FAULT_POWER_CUT, 1, 0, (uint32_t)c->seed);
	supervise(c, nvp_env_get_ticks() + hz / 2);
}

static void
soak_report(const struct fm_cell *c)
{
	printf("soak seed=%" PRIu64 " seconds=%.0f events=%u rss_warm_kib=%" PRIu64
	       " rss_end_kib=%" PRIu64 " rss_max_kib=%" PRIu64,
	       c->seed, c->soak_s, g_soak.events, g_soak.rss_warm_kib, g_soak.rss_end_kib,
	       g_soak.rss_max_kib);
	for (size_t i = 0; i < NVP_COUNTOF(g_soak_faults); i++) {
		printf(" %s=%u", g_soak_faults[i], g_soak.by_fault[i]);
	}
	printf("\n");
	fflush(stdout);
}

/* Threads started; set up, prefilled; run, stop, count. \return lost requests, or -errno. */
static int64_t
run(struct fm_cell *c)
{
	uint64_t hz = nvp_env_get_ticks_hz(), lost = 0, until;

	atomic_store(&c->running, c->threads);
	for (uint32_t i = 0; i < c->threads; i++) {
		atomic_store(&c->t[i].live, true);
		if (pthread_create(&c->t[i].tid, NULL, thread_run, &c->t[i]) != 0) {
			atomic_store(&c->t[i].live, false);
			atomic_store(&c->running, i);
			atomic_store(&c->stop, true);
			for (uint32_t j = 0; j < i; j++) {
				pthread_join(c->t[j].tid, NULL);
			}
			return -EAGAIN;
		}
	}
	until = nvp_env_get_ticks() + hz * 60;
	while (atomic_load(&c->ready) < c->threads && nvp_env_get_ticks() < until) {
		usleep(1000);
	}
	for (uint32_t i = 0; i < c->threads; i++) {
		if (atomic_load(&c->ready) < c->threads || c->t[i].setup_rc != 0) {
			int rc = atomic_load(&c->ready) < c->threads ? -ETIMEDOUT :
								       c->t[i].setup_rc;

			/* the others end at the gate: wait for them before anything is freed */
			atomic_store(&c->stop, true);
			until = nvp_env_get_ticks() + hz * 30;
			while (atomic_load(&c->running) > 0 && nvp_env_get_ticks() < until) {
				usleep(1000);
			}
			if (atomic_load(&c->running) > 0) {
				printf("cell fault=%s hang=1 (set-up did not end)\n",
				       g_fault->name);
				fflush(stdout);
				_exit(3);
			}
			for (uint32_t j = 0; j < c->threads; j++) {
				pthread_join(c->t[j].tid, NULL);
			}
			return rc;
		}
	}
	atomic_store(&c->go, true);
	if (c->soak_s > 0) {
		soak(c);
	} else {
		supervise(c, nvp_env_get_ticks() + hz * c->inject_ms / 1000);
		inject(c);
		supervise(c, c->t_inject + (uint64_t)(c->seconds * (double)hz));
	}
	atomic_store(&c->stop, true);
	/* Drain and read-back: still supervised (a qpair may need a reset to come back). */
	supervise(c, nvp_env_get_ticks() + hz * (30 + 4ull * c->timeout_ms / 1000));
	if (atomic_load(&c->running) > 0) {
		printf("cell fault=%s hang=1 (%u thread(s) did not stop)\n", g_fault->name,
		       atomic_load(&c->running));
		fflush(stdout);
		_exit(3);
	}
	for (uint32_t i = 0; i < c->threads; i++) {
		pthread_join(c->t[i].tid, NULL);
		lost += fm_thread_outstanding(&c->t[i]);
	}
	return (int64_t)lost;
}

/*
 * Power the device on again after a power cut (destroy it, create it on the same files)
 * and read every block of every thread back on a qpair of the main thread's.
 */
static int
power_restart(struct fm_cell *c)
{
	struct nvp_nvme_io_qpair_opts qo;
	struct nvp_nvme_ctrlr_opts co;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_nvme_ns *ns;
	char trid[256];
	int rc;

	nvp_emu_ctrlr_destroy(c->emu);
	c->emu = NULL;
	rc = emu_create(c, false, trid, sizeof(trid));
	if (rc == 0) {
		nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
		rc = connect_raw(trid, &co, &ctrlr);
	}
	if (rc == 0) {
		nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &qo, sizeof(qo));
		rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &qo, &qpair);
	}
	if (rc == 0) {
		for (uint32_t i = 0; i < c->threads; i++) {
			ns = nvp_nvme_ctrlr_get_ns(ctrlr, 1 + i % c->bdevs); /* the thread's bdev */
			if (ns == NULL) {
				rc = -ENODEV;
				break;
			}
			fm_verify_after_power_cut(&c->t[i], ns, qpair);
		}
		nvp_nvme_ctrlr_free_io_qpair(qpair);
	}
	if (ctrlr != NULL) {
		nvp_nvme_detach(ctrlr);
	}
	if (rc != 0) {
		fprintf(stderr, "nvp_fault_matrix: power on again: %s\n", strerror(-rc));
	}
	return rc;
}

/* The power-cut cell's namespace file, then its directory. */
static void
remove_dir(const char *dir)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/fm.ns1", dir);
	unlink(path);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	static struct fm_cell c;
	struct nvp_env_opts eo;
	int64_t lost = 0;
	bool was_failed = false;
	int rc;

	c.threads = 1;
	c.seconds = 2;
	c.inject_ms = 300;
	c.timeout_ms = 200;
	c.sched = "none";
	c.bdevs = 1;
	if (parse_args(&c, argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
	c.recoverable = g_fault->rec == FM_REC_RESET;
	snprintf(c.dir, sizeof(c.dir), "/tmp/nvp_fm_XXXXXX");
	if (mkdtemp(c.dir) == NULL) {
		perror("nvp_fault_matrix: mkdtemp");
		return 1;
	}
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "fault_matrix";
	eo.no_pci = true;
	eo.no_huge = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc == 0) {
		rc = attach(&c);
	}
	for (uint32_t i = 0; rc == 0 && i < c.threads; i++) {
		c.t[i].cell = &c;
		c.t[i].idx = i;
		rc = thread_alloc(&c.t[i]);
	}
	if (rc == 0) {
		lost = run(&c);
		rc = lost < 0 ? (int)lost : 0;
		was_failed = rc == 0 && fm_failed(&c);
	}
	if (rc != 0) {
		fprintf(stderr, "nvp_fault_matrix: set-up failed: %s\n", strerror(-rc));
	}
	if (c.desc != NULL) {
		nvp_bdev_close(c.desc);
	}
	nvp_bdev_fini();
	if (!c.bdev && c.ctrlr != NULL) {
		nvp_nvme_detach(c.ctrlr);
	}
	if (c.tgt != NULL) {
		tcp_tgt_stop(c.tgt);
	}
	if (c.backend != NULL) {
		nvp_nvme_detach(c.backend);
	}
	if (rc == 0 && g_fault->type == NVP_EMU_FAULT_POWER_CUT) {
		rc = power_restart(&c);
	}
	if (rc == 0) {
		report(&c, (uint64_t)lost, was_failed);
	}
	if (rc == 0 && c.soak_s > 0) {
		soak_report(&c);
	}
	for (uint32_t i = 0; i < c.threads; i++) {
		if (c.t[i].cell != NULL) {
			thread_free(&c.t[i]);
		}
	}
	if (c.emu != NULL) {
		nvp_emu_ctrlr_destroy(c.emu);
	}
	nvp_env_fini();
	remove_dir(c.dir);
	return rc == 0 ? 0 : 1;
}
