/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_fault_matrix: one cell of bench/fault_matrix — a fault injected into the software
 * controller in the middle of a workload — in its own process, so that a crash or a hang
 * is counted by the script instead of ending the matrix.
 *
 *   nvp_fault_matrix --fault NAME --workload randread|randwrite|mixed|admin
 *                    [--threads N] [--mode raw|bdev] [--seconds S] [--inject-ms M]
 *                    [--timeout-ms T]
 *
 * The application side does what nvme.h asks of an application: every thread polls its
 * own qpair (or bdev channel); a controller that failed (CFS, a reset that never got
 * ready) is reset by the main thread with the I/O threads parked, after the fault has
 * been switched off, as an operator's retry would. A removed or powered-off device is not
 * reset: its requests must fail, not hang. Prints one line:
 *   cell fault=.. workload=.. threads=.. mode=.. issued=N ok=N err=N lost=N dup=N
 *   corrupted=N verified=N refused=N resets=N recover_ms=X failed=0|1
 * lost: requests never completed; corrupted: blocks read back (during the run and once
 * more at the end on a working controller) that hold neither their last acknowledged
 * write nor a failed write after it. recover_ms: from the injection to the last thread's
 * first good completion after its last error (-1: never; 0: no error was seen).
 * Exit 0 when the cell ran, 1 set-up failure, 2 usage, 3 a thread did not stop (hang).
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
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

enum fm_recovery {
	FM_REC_NONE = 0,
	FM_REC_RESET,
	FM_REC_GONE
};

struct fm_fault {
	const char *name;
	enum nvp_emu_fault_type type;
	uint32_t count;
	uint32_t arg; /* for slow: multiples of the timeout, in percent */
	enum fm_recovery rec;
	const char *what;
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
	{ "dup_cpl", NVP_EMU_FAULT_DUP_CPL, 2, 0, FM_REC_NONE, "completion posted twice" },
	{ "wrong_cq", NVP_EMU_FAULT_WRONG_CQ, 2, 0, FM_REC_NONE, "completion on the admin CQ" },
	{ "bad_phase", NVP_EMU_FAULT_BAD_PHASE, 1, 0, FM_REC_NONE, "entry with a stale phase" },
	{ "bad_sqhd", NVP_EMU_FAULT_BAD_SQHD, 2, 0, FM_REC_NONE, "SQ head past the queue" },
	{ "power_cut", NVP_EMU_FAULT_POWER_CUT, 1, 0, FM_REC_GONE, "power cut (file, vwc)" },
};

static const struct fm_fault *g_fault;

static void
usage(FILE *f)
{
	fprintf(f, "usage: nvp_fault_matrix --fault NAME --workload randread|randwrite|mixed|"
		   "admin [--threads N] [--mode raw|bdev] [--seconds S] [--inject-ms M] "
		   "[--timeout-ms T]\nfaults:");
	for (size_t i = 0; i < NVP_COUNTOF(g_faults); i++) {
		fprintf(f, "\n  %-12s %s", g_faults[i].name, g_faults[i].what);
	}
	fprintf(f, "\n");
}

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
			for (size_t i = 0; i < NVP_COUNTOF(g_faults); i++) {
				g_fault = strcmp(optarg, g_faults[i].name) == 0 ? &g_faults[i] :
										  g_fault;
			}
			if (g_fault == NULL) {
				fprintf(stderr, "nvp_fault_matrix: unknown fault '%s'\n", optarg);
				return -EINVAL;
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
			if (strcmp(optarg, "raw") != 0 && strcmp(optarg, "bdev") != 0) {
				fprintf(stderr, "nvp_fault_matrix: --mode raw or bdev\n");
				return -EINVAL;
			}
			c->bdev = strcmp(optarg, "bdev") == 0;
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

static int
attach(struct fm_cell *c)
{
	char eopts[256], trid[128];
	struct nvp_emu_opts eo;
	struct nvp_nvme_transport_id t;
	struct nvp_nvme_ctrlr_opts co;
	int rc;

	snprintf(eopts, sizeof(eopts),
		 "size=32M,lba=4096,channels=4,read_us=20,write_us=40,to=2%s%s%s",
		 g_fault->type == NVP_EMU_FAULT_POWER_CUT ? ",vwc=1,power_loss=1,backend=file:" :
							    "",
		 g_fault->type == NVP_EMU_FAULT_POWER_CUT ? c->dir : "",
		 g_fault->type == NVP_EMU_FAULT_POWER_CUT ? "/fm" : "");
	nvp_emu_opts_init(&eo, sizeof(eo));
	nvp_strlcpy(eo.name, "fm0", sizeof(eo.name));
	if (nvp_emu_opts_parse(&eo, eopts, trid, sizeof(trid)) != 0) {
		fprintf(stderr, "nvp_fault_matrix: %s\n", trid);
		return -EINVAL;
	}
	rc = nvp_emu_ctrlr_create(&eo, &c->emu);
	if (rc != 0) {
		return rc;
	}
	snprintf(trid, sizeof(trid), "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(c->emu));
	nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
	co.io_timeout_us = (uint64_t)c->timeout_ms * 1000;
	co.admin_timeout_ms = NVP_MAX(c->timeout_ms * 2, 1000u);
	if (c->bdev) {
		struct nvp_bdev_nvme_opts no;
		struct nvp_bdev *bdev = NULL;

		nvp_bdev_nvme_opts_init(&no, sizeof(no));
		no.name = "fm0";
		no.ctrlr_opts = &co;
		/* As an SPDK user who wants the bdev to outlive a failing controller: the module
		 * resets it every second until a reset brings it back (a removed device still
		 * goes at once). With the default (one reset) a fault held longer than the
		 * first reset removes the bdev. */
		no.ctrlr_loss_timeout_sec = -1;
		no.reconnect_delay_sec = 1;
		rc = nvp_bdev_nvme_attach(trid, &no, &bdev, 1, NULL);
		if (rc == 0) {
			rc = nvp_bdev_open("fm0n1", true, ignore_event, NULL, &c->desc);
		}
		if (rc == 0) {
			c->ctrlr = nvp_bdev_nvme_get_ctrlr(nvp_bdev_desc_get_bdev(c->desc));
			c->num_blocks = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(c->desc));
		}
		return rc;
	}
	rc = nvp_nvme_transport_id_parse(&t, trid);
	if (rc == 0) {
		rc = nvp_nvme_connect(&t, &co, &c->ctrlr);
	}
	if (rc == 0) {
		c->ns = nvp_nvme_ctrlr_get_ns(c->ctrlr,
					      nvp_nvme_ctrlr_get_first_active_ns(c->ctrlr));
		c->num_blocks = nvp_nvme_ns_get_num_sectors(c->ns);
	}
	return rc;
}

static int
thread_setup(struct fm_thread *t)
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
	if (c->bdev) {
		struct nvp_bdev_channel_opts o;

		nvp_bdev_channel_opts_init(&o, sizeof(o));
		return nvp_bdev_channel_create(c->desc, &o, &t->ch);
	} else {
		struct nvp_nvme_io_qpair_opts o;

		nvp_nvme_ctrlr_get_default_io_qpair_opts(c->ctrlr, &o, sizeof(o));
		o.io_queue_size = 32;
		o.io_queue_requests = 64;
		o.timeout_us = (uint64_t)c->timeout_ms * 1000;
		return nvp_nvme_ctrlr_alloc_io_qpair(c->ctrlr, &o, &t->qpair);
	}
}

static void
thread_teardown(struct fm_thread *t)
{
	if (t->ch != NULL) {
		nvp_bdev_channel_destroy(t->ch);
	}
	if (t->qpair != NULL) {
		nvp_nvme_ctrlr_free_io_qpair(t->qpair);
	}
	for (uint32_t i = 0; i < FM_QD; i++) {
		nvp_env_dma_free(t->slots[i].buf);
	}
	free(t->blk);
}

/* ---- the run ---- */

static void
park_all(struct fm_cell *c, bool on)
{
	atomic_store(&c->park, on);
	for (uint32_t i = 0; on && i < c->threads; i++) {
		while (!atomic_load(&c->t[i].parked) && !atomic_load(&c->stop)) {
			usleep(100);
		}
	}
}

static void
reset_parked(struct fm_cell *c)
{
	park_all(c, true);
	c->resets++;
	if (nvp_nvme_ctrlr_reset(c->ctrlr) != 0) {
		c->reset_failures++;
	}
	park_all(c, false);
}

static void
inject(struct fm_cell *c)
{
	const struct fm_fault *f = g_fault;
	uint32_t arg = f->arg;

	c->t_inject = nvp_env_get_ticks();
	if (f->type == NVP_EMU_FAULT_NONE) {
		return;
	}
	if (f->type == NVP_EMU_FAULT_SLOW) {
		arg = c->timeout_ms * 10 * f->arg; /* percent of the timeout, in us */
	}
	nvp_emu_ctrlr_inject_fault(c->emu, f->type, f->count, 0, arg);
	if (f->type == NVP_EMU_FAULT_RDY_NEVER) {
		reset_parked(c); /* fails: the controller never becomes ready */
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
		if (g_fault->rec == FM_REC_RESET && nvp_nvme_ctrlr_is_failed(c->ctrlr) &&
		    now > c->t_inject + hz / 5) {
			nvp_emu_ctrlr_inject_fault(c->emu, g_fault->type, 0, 0, 0);
			reset_parked(c);
		}
		/* A thread's qpair failed on a live controller: what nvme.h says to do. */
		if (atomic_exchange(&c->want_reset, false) && !nvp_nvme_ctrlr_is_failed(c->ctrlr)) {
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

	fm_thread_main(t);
	/* Read everything back on a working controller, once every request is back. */
	if (c->workload != FM_RANDREAD && fm_thread_outstanding(t) == 0 &&
	    !nvp_nvme_ctrlr_is_failed(c->ctrlr)) {
		uint64_t ok = t->ok, err = t->err;

		fm_verify_all(t);
		t->ok = ok; /* the run's figures, not the read-back's */
		t->err = err;
	}
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

static void
report(struct fm_cell *c, uint64_t lost)
{
	static const char *const wl[] = { "randread", "randwrite", "mixed", "admin" };
	uint64_t issued = 0, ok = 0, err = 0, dup = 0, corr = 0, ver = 0, ref = 0;

	for (uint32_t i = 0; i < c->threads; i++) {
		issued += c->t[i].issued;
		ok += c->t[i].ok;
		err += c->t[i].err;
		dup += c->t[i].dup;
		corr += c->t[i].corrupted;
		ver += c->t[i].verified;
		ref += c->t[i].refused;
	}
	printf("cell fault=%s workload=%s threads=%u mode=%s issued=%" PRIu64 " ok=%" PRIu64
	       " err=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64 " corrupted=%" PRIu64
	       " verified=%" PRIu64 " refused=%" PRIu64 " resets=%u reset_failures=%u"
	       " admin_ok=%u admin_err=%u recover_ms=%.1f failed=%d\n",
	       g_fault->name, wl[c->workload], c->threads, c->bdev ? "bdev" : "raw", issued, ok,
	       err, lost, dup, corr, ver, ref, c->resets, c->reset_failures, c->admin_ok,
	       c->admin_err, recover_ms(c), nvp_nvme_ctrlr_is_failed(c->ctrlr) ? 1 : 0);
	fflush(stdout);
}

/* Threads set up, prefilled and started by the caller; run, stop, count, verify. */
static int
run(struct fm_cell *c)
{
	uint64_t hz = nvp_env_get_ticks_hz(), lost = 0;

	atomic_store(&c->running, c->threads);
	for (uint32_t i = 0; i < c->threads; i++) {
		if (pthread_create(&c->t[i].tid, NULL, thread_run, &c->t[i]) != 0) {
			return -EAGAIN;
		}
	}
	supervise(c, nvp_env_get_ticks() + hz * c->inject_ms / 1000);
	inject(c);
	supervise(c, c->t_inject + (uint64_t)(c->seconds * (double)hz));
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
	report(c, lost);
	return 0;
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
	int rc;

	c.threads = 1;
	c.seconds = 2;
	c.inject_ms = 300;
	c.timeout_ms = 200;
	if (parse_args(&c, argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
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
		rc = thread_setup(&c.t[i]);
		if (rc == 0) {
			rc = fm_prefill(&c.t[i]);
		}
	}
	if (rc == 0) {
		rc = run(&c);
	}
	if (rc != 0) {
		fprintf(stderr, "nvp_fault_matrix: set-up failed: %s\n", strerror(-rc));
	}
	for (uint32_t i = 0; i < c.threads; i++) {
		if (c.t[i].cell != NULL) {
			thread_teardown(&c.t[i]);
		}
	}
	if (c.desc != NULL) {
		nvp_bdev_close(c.desc);
	}
	nvp_bdev_fini();
	if (!c.bdev && c.ctrlr != NULL) {
		nvp_nvme_detach(c.ctrlr);
	}
	if (c.emu != NULL) {
		nvp_emu_ctrlr_destroy(c.emu);
	}
	nvp_env_fini();
	remove_dir(c.dir);
	return rc == 0 ? 0 : 1;
}
