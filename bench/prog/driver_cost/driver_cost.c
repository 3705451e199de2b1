/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_driver_cost: what one 4 KiB read costs the driver on the I/O thread.
 *
 * The software controller (null backend) is attached with its thread running, then
 * switched to inline mode: this thread runs it (nvp_emu_ctrlr_poll()) between polls of
 * the driver until it is idle, so every driver poll finds the completions of everything
 * submitted, and the controller's work happens at known points that can be left out:
 *   - under callgrind (--count), collection is switched off around the controller's
 *     poll, so the profile holds the driver (submit, completion, doorbells) and this
 *     program's small loop and callback, which bench/driver_cost subtracts by function;
 *   - timed (default), the time spent inside nvp_nvme_qpair_process_completions()
 *     (completions, callbacks and the resubmissions they make) is the driver's time,
 *     each call a bench_section (../common/bench_time.h: the TSC around it, a call a
 *     preemption stretched left out and counted at the others' mean, so that no
 *     descheduled time is counted as the driver's; drv_cut says how many); the thread's
 *     CPU time (driver, controller and loop), run-queue wait and involuntary switches
 *     over the run are printed beside it (bench/benchlib.py: was it preempted?).
 * Each completion resubmits a read at the next LBA from inside its callback, as an
 * application at queue depth @qd would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#include "../common/bench_callgrind.h"
#include "../common/bench_time.h"

#define EXIT_USAGE 2
#define IO_SIZE 4096u
#define EMU_NAME "dcost0"

struct bench {
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
	struct nvp_emu_ctrlr *emu;
	uint8_t *bufs;
	uint32_t qd;
	uint32_t sectors; /* per I/O */
	uint64_t lba_span;
	uint64_t next_lba;
	uint64_t to_submit;
	uint64_t completed;
	uint64_t errors;
	int submit_rc;
};

struct io_ctx {
	struct bench *b;
	void *buf;
};

static void io_done(void *arg, const struct nvme_cpl *cpl);

static int
submit_one(struct bench *b, struct io_ctx *io)
{
	uint64_t lba = b->next_lba;
	int rc;

	b->next_lba = lba + b->sectors < b->lba_span ? lba + b->sectors : 0;
	b->to_submit--;
	rc = nvp_nvme_ns_cmd_read(b->ns, b->qpair, io->buf, lba, b->sectors, io_done, io, 0);
	if (nvp_unlikely(rc != 0)) {
		b->submit_rc = rc;
	}
	return rc;
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct io_ctx *io = arg;
	struct bench *b = io->b;

	b->completed++;
	if (nvp_unlikely(nvme_cpl_is_error(cpl))) {
		b->errors++;
	}
	if (b->to_submit > 0) {
		submit_one(b, io);
	}
}

/* The controller until it has nothing left to do. \return TSC ticks spent in it. */
static uint64_t
run_emu(struct bench *b)
{
	uint64_t t0 = nvp_env_get_ticks();

	while (nvp_emu_ctrlr_poll(b->emu) > 0) {
	}
	return nvp_env_get_ticks() - t0;
}

struct result {
	uint64_t ios;
	uint64_t polls;
	uint64_t elapsed_ns;
	struct bench_use u0, u1;  /* the thread's CPU, run-queue wait, switches */
	struct bench_section emu; /* the controller's runs */
	/* inside process_completions: completions, callbacks, resubmissions */
	struct bench_section drv;
	struct nvp_nvme_qpair_stats st0; /* counters before the run */
};

/* @ios reads at queue depth b->qd; the first fill of the queue is not measured. */
static int
run(struct bench *b, struct io_ctx *ios, uint64_t n, bool count, struct result *r)
{
	uint64_t t0, start, hz = nvp_env_get_ticks_hz();
	uint32_t i;

	b->to_submit = n;
	b->completed = 0;
	for (i = 0; i < b->qd && b->to_submit > 0; i++) {
		if (submit_one(b, &ios[i]) != 0) {
			return b->submit_rc;
		}
	}
	nvp_nvme_qpair_ring_doorbell(b->qpair);
	memset(r, 0, sizeof(*r));
	bench_section_init(&r->emu, hz);
	bench_section_init(&r->drv, hz);
	r->st0.info_size = sizeof(r->st0);
	nvp_nvme_qpair_get_stats(b->qpair, &r->st0);
	bench_use_get(&r->u0);
	start = nvp_env_get_ticks();
	if (count) {
		CALLGRIND_START_INSTRUMENTATION;
	}
	while (b->completed < n) {
		int32_t rc;

		if (count) {
			CALLGRIND_TOGGLE_COLLECT;
		}
		bench_section_add(&r->emu, run_emu(b));
		if (count) {
			CALLGRIND_TOGGLE_COLLECT;
		}
		t0 = nvp_env_get_ticks();
		rc = nvp_nvme_qpair_process_completions(b->qpair, 0);
		bench_section_add(&r->drv, nvp_env_get_ticks() - t0);
		if (rc < 0 || b->submit_rc != 0) {
			fprintf(stderr, "driver_cost: poll %d, submit %d\n", rc, b->submit_rc);
			return rc < 0 ? rc : b->submit_rc;
		}
		r->polls++;
	}
	if (count) {
		CALLGRIND_STOP_INSTRUMENTATION;
	}
	r->elapsed_ns = (uint64_t)((double)(nvp_env_get_ticks() - start) * 1e9 / (double)hz);
	bench_use_get(&r->u1);
	r->ios = n;
	return b->errors != 0 ? -EIO : 0;
}

static void
print_result(const struct bench *b, const struct result *r, bool count)
{
	uint64_t hz = nvp_env_get_ticks_hz();
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	double drv_ns = bench_section_ns(&r->drv, hz);

	nvp_nvme_qpair_get_stats(b->qpair, &st);
	printf("qd=%u ios=%" PRIu64 " polls=%" PRIu64 " elapsed_ns=%" PRIu64 " emu_ns=%.0f"
	       " drv_ns=%.0f drv_cut=%" PRIu64 " ios_per_cpu_s=%.0f sq_doorbells=%" PRIu64
	       " cq_doorbells=%" PRIu64 " sq_shadow=%" PRIu64 " cq_shadow=%" PRIu64
	       " submitted=%" PRIu64 " tsc_hz=%" PRIu64 " mode=%s",
	       b->qd, r->ios, r->polls, r->elapsed_ns, bench_section_ns(&r->emu, hz), drv_ns,
	       r->drv.cut, drv_ns > 0 ? (double)r->ios * 1e9 / drv_ns : 0.0,
	       st.sq_doorbell_writes - r->st0.sq_doorbell_writes,
	       st.cq_doorbell_writes - r->st0.cq_doorbell_writes,
	       st.sq_shadow_updates - r->st0.sq_shadow_updates,
	       st.cq_shadow_updates - r->st0.cq_shadow_updates, st.submitted - r->st0.submitted, hz,
	       count ? "count" : "time");
	bench_use_print(stdout, &r->u0, &r->u1);
	printf("\n");
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--qd N] [--ios N] [--count]\n"
		"  --qd N     queue depth (1..1023, default 32)\n"
		"  --ios N    measured reads of 4 KiB (default 1000000)\n"
		"  --count    run under callgrind: collect only the driver's part\n",
		prog);
}

static int
parse_args(int argc, char **argv, uint32_t *qd, uint64_t *n, bool *count)
{
	static const struct option longopts[] = {
		{ "qd", required_argument, NULL, 'q' },
		{ "ios", required_argument, NULL, 'n' },
		{ "count", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			if (nvp_strtou64(optarg, 1, 1023, &v) != 0) {
				fprintf(stderr, "%s: --qd '%s': expected 1..1023\n", argv[0],
					optarg);
				return EXIT_USAGE;
			}
			*qd = (uint32_t)v;
			break;
		case 'n':
			if (nvp_strtou64(optarg, 1, UINT64_MAX, &v) != 0) {
				fprintf(stderr, "%s: --ios '%s': expected a positive count\n",
					argv[0], optarg);
				return EXIT_USAGE;
			}
			*n = v;
			break;
		case 'c':
			*count = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

static int
setup(struct bench *b, struct nvp_nvme_ctrlr **ctrlr)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_io_qpair_opts qopts;
	uint32_t qsize = b->qd < 255 ? 256 : 1024;
	int rc;

	rc = nvp_nvme_transport_id_parse(&trid, "trtype:emu name:" EMU_NAME
						" backend:null channels:256 size:1G lba:4096");
	if (rc == 0) {
		rc = nvp_nvme_connect(&trid, NULL, ctrlr);
	}
	if (rc != 0) {
		fprintf(stderr, "driver_cost: cannot attach the software controller: %s\n",
			strerror(-rc));
		return rc;
	}
	b->emu = nvp_emu_ctrlr_find(EMU_NAME);
	b->ns = nvp_nvme_ctrlr_get_ns(*ctrlr, 1);
	nvp_nvme_ctrlr_get_default_io_qpair_opts(*ctrlr, &qopts, sizeof(qopts));
	qopts.io_queue_size = qsize;
	qopts.io_queue_requests = qsize;
	rc = nvp_nvme_ctrlr_alloc_io_qpair(*ctrlr, &qopts, &b->qpair);
	if (rc != 0 || b->emu == NULL || b->ns == NULL) {
		fprintf(stderr, "driver_cost: cannot create a qpair: %s\n", strerror(-rc));
		return rc != 0 ? rc : -ENODEV;
	}
	b->sectors = IO_SIZE / nvp_nvme_ns_get_sector_size(b->ns);
	b->lba_span = nvp_nvme_ns_get_num_sectors(b->ns);
	b->bufs = nvp_env_dma_zmalloc((size_t)b->qd * IO_SIZE, IO_SIZE, NULL);
	if (b->bufs == NULL) {
		return -ENOMEM;
	}
	return nvp_emu_ctrlr_set_inline(b->emu, true);
}

int
main(int argc, char **argv)
{
	struct nvp_env_opts env_opts;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct bench b;
	struct io_ctx *ios = NULL;
	struct result r;
	uint64_t n = 1000000;
	bool count = false;
	uint32_t i;
	int rc;

	memset(&b, 0, sizeof(b));
	b.qd = 32;
	rc = parse_args(argc, argv, &b.qd, &n, &count);
	if (rc != 0) {
		return rc;
	}
	nvp_env_opts_init(&env_opts, sizeof(env_opts));
	env_opts.name = "driver_cost";
	env_opts.no_pci = true;
	env_opts.quiet = true;
	rc = nvp_env_init(&env_opts);
	if (rc != 0) {
		fprintf(stderr, "driver_cost: cannot initialise the environment: %s\n",
			strerror(-rc));
		return 1;
	}
	rc = setup(&b, &ctrlr);
	ios = calloc(b.qd, sizeof(*ios));
	for (i = 0; rc == 0 && ios != NULL && i < b.qd; i++) {
		ios[i].b = &b;
		ios[i].buf = b.bufs + (size_t)i * IO_SIZE;
	}
	if (rc == 0 && ios != NULL) {
		/* Warm-up: caches, branch predictors and the map are as in steady state. */
		rc = run(&b, ios, NVP_MAX(n / 10, (uint64_t)b.qd * 4), false, &r);
	}
	if (rc == 0 && ios != NULL) {
		rc = run(&b, ios, n, count, &r);
	}
	if (rc == 0 && ios != NULL) {
		print_result(&b, &r, count);
	} else {
		fprintf(stderr, "driver_cost: run failed: %s\n", strerror(rc ? -rc : ENOMEM));
	}
	if (b.emu != NULL) {
		nvp_emu_ctrlr_set_inline(b.emu, false);
	}
	if (b.qpair != NULL) {
		nvp_nvme_ctrlr_free_io_qpair(b.qpair);
	}
	nvp_env_dma_free(b.bufs);
	free(ios);
	if (ctrlr != NULL) {
		nvp_nvme_detach(ctrlr);
	}
	nvp_env_fini();
	return rc == 0 ? 0 : 1;
}
