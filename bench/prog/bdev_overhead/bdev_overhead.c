/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One measurement for bench/bdev_overhead: 4 KiB random reads at a fixed queue depth,
 * either through the bdev layer or on the raw path below it, and the I/O thread's CPU
 * time for them.
 *
 *   --target emu   the software controller (null backend: its fastest settings);
 *                  raw = nvp_nvme_ns_cmd_read() on a delayed-doorbell qpair polled with
 *                  process_completions(); bdev = the nvme module on the same controller
 *   --target null  bdev = the null module; raw = the same work without the layer (zero
 *                  the buffer, queue the request, complete it on the next poll through
 *                  the callback pointer the request carries, as a raw driver does)
 *
 *   --inline       (with --target emu) the controller runs on this thread, between the
 *                  polls (nvp_emu_ctrlr_poll() until it is idle), so every poll finds
 *                  what the one before it sent, and its work happens at known points:
 *                  under callgrind, collection is switched off around it. Timed, each
 *                  of its runs is a bench_section (../common/bench_time.h): the TSC
 *                  around it, a run a preemption stretched left out (emu_cut) and
 *                  counted at the others' mean, never taken as the thread's time. Their
 *                  sum (emu_ns) is taken out of the thread's CPU time (host_ns_per_io):
 *                  what the I/O thread spends on the I/O path alone, with no spinning
 *                  while another thread works (the two tick reads around each
 *                  controller run stay in, the same on both paths).
 *
 * Prints one line of key=value pairs, with the thread's CPU time, run-queue wait and
 * involuntary switches over the run (bench/benchlib.py: was it preempted?). The I/O loop
 * is the function io_loop() so that callgrind can count it alone
 * (--toggle-collect=io_loop): the software controller's thread, or with --inline its
 * polls, are not in it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvpoll/bdev.h"
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#include "../common/bench_callgrind.h"
#include "../common/bench_time.h"

#define BS 4096u
#define MAX_QD 256u

struct req {
	struct bench *b;
	uint8_t *buf;
	struct req *next;                               /* raw-null FIFO */
	void (*cb)(void *arg, const struct nvme_cpl *); /* raw-null: the completion callback */
};

struct bench {
	/* options */
	bool bdev;
	bool emu;
	bool acct;
	bool inline_emu;
	uint32_t qd;
	uint64_t ios;
	double seconds;
	const char *emu_opts;
	/* state */
	uint64_t submitted, done, errors, rng, num_blocks, stop_tick;
	struct bench_section emu_sec; /* --inline: the controller's runs */
	size_t bs;
	bool stopping;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_emu_ctrlr *emu_ctrlr; /* --inline */
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
	struct req *head, *tail; /* raw-null pending completions */
	struct req reqs[MAX_QD];
};

static void submit(struct bench *b, struct req *r);

static inline uint64_t
next_lba(struct bench *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng % b->num_blocks;
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct req *r = arg;
	struct bench *b = r->b;

	b->done++;
	b->errors += nvme_cpl_is_error(cpl);
	if (!b->stopping) {
		submit(b, r);
	}
}

static void
submit(struct bench *b, struct req *r)
{
	uint64_t lba = next_lba(b);
	int rc;

	if (b->ios != 0 && b->submitted >= b->ios) {
		b->stopping = true;
		return;
	}
	b->submitted++;
	if (b->bdev) {
		rc = nvp_bdev_read_blocks(b->desc, b->ch, r->buf, lba, 1, io_done, r);
	} else if (b->emu) {
		rc = nvp_nvme_ns_cmd_read(b->ns, b->qpair, r->buf, lba, 1, io_done, r, 0);
	} else {
		/* what the null module does, without the layer (a run-time length, as there,
		 * so the same libc memset runs rather than an inlined one) */
		memset(r->buf, 0, b->bs);
		r->cb = io_done;
		r->next = NULL;
		if (b->tail != NULL) {
			b->tail->next = r;
		} else {
			b->head = r;
		}
		b->tail = r;
		rc = 0;
	}
	if (rc != 0) {
		fprintf(stderr, "bdev_overhead: submit failed: %s\n", strerror(-rc));
		b->errors++;
		b->stopping = true;
	}
}

static void
raw_null_poll(struct bench *b)
{
	static const struct nvme_cpl ok;
	struct req *r = b->head, *next;

	b->head = b->tail = NULL;
	for (; r != NULL; r = next) {
		next = r->next;
		/* through the pointer, as the driver (and the layer) call a user's callback:
		 * a call the compiler cannot inline is part of the work without the layer */
		r->cb(r, &ok);
	}
}

/* --inline: the controller until it is idle, not counted by callgrind. */
static void
run_emu(struct bench *b)
{
	uint64_t t0;

	CALLGRIND_TOGGLE_COLLECT;
	t0 = nvp_env_get_ticks();
	while (nvp_emu_ctrlr_poll(b->emu_ctrlr) > 0) {
	}
	bench_section_add(&b->emu_sec, nvp_env_get_ticks() - t0);
	CALLGRIND_TOGGLE_COLLECT;
}

/* The measured loop: keep qd reads in flight until the count or the time is reached. */
__attribute__((noinline)) static void
io_loop(struct bench *b)
{
	uint32_t i, polls = 0;

	for (i = 0; i < b->qd; i++) {
		submit(b, &b->reqs[i]);
	}
	while (b->done < b->submitted) {
		if (b->emu_ctrlr != NULL) {
			run_emu(b);
		}
		if (b->bdev) {
			nvp_bdev_channel_poll(b->ch);
		} else if (b->emu) {
			nvp_nvme_qpair_process_completions(b->qpair, 0);
		} else {
			raw_null_poll(b);
		}
		if (b->ios == 0 && !b->stopping && (++polls & 1023) == 0 &&
		    nvp_env_get_ticks() >= b->stop_tick) {
			b->stopping = true;
		}
	}
}

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

static int
setup_bdev(struct bench *b, const char *trid)
{
	struct nvp_bdev_channel_opts co;
	struct nvp_bdev_nvme_opts no;
	struct nvp_bdev_null_opts nu;
	const char *name = "bench0n1";
	int rc;

	if (b->emu) {
		nvp_bdev_nvme_opts_init(&no, sizeof(no));
		no.name = "bench0";
		rc = nvp_bdev_nvme_attach(trid, &no, NULL, 0, NULL);
	} else {
		nvp_bdev_null_opts_init(&nu, sizeof(nu));
		nu.name = name = "null0";
		nu.num_blocks = 1u << 18;
		nu.block_size = BS;
		rc = nvp_bdev_null_create(&nu, NULL);
	}
	if (rc == 0) {
		rc = nvp_bdev_open(name, false, ignore_event, NULL, &b->desc);
	}
	if (rc != 0) {
		return rc;
	}
	nvp_bdev_set_accounting(nvp_bdev_desc_get_bdev(b->desc), b->acct);
	nvp_bdev_channel_opts_init(&co, sizeof(co));
	co.io_pool_size = NVP_MAX(b->qd, 2u);
	co.module_queue_depth = NVP_MAX(b->qd + 1, 32u);
	b->num_blocks = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(b->desc));
	return nvp_bdev_channel_create(b->desc, &co, &b->ch);
}

static int
setup_raw_emu(struct bench *b, const char *trid_str)
{
	struct nvp_nvme_io_qpair_opts qo;
	struct nvp_nvme_transport_id trid;
	int rc;

	rc = nvp_nvme_transport_id_parse(&trid, trid_str);
	if (rc == 0) {
		rc = nvp_nvme_connect(&trid, NULL, &b->ctrlr);
	}
	if (rc != 0) {
		return rc;
	}
	b->ns = nvp_nvme_ctrlr_get_ns(b->ctrlr, nvp_nvme_ctrlr_get_first_active_ns(b->ctrlr));
	b->num_blocks = nvp_nvme_ns_get_num_sectors(b->ns);
	nvp_nvme_ctrlr_get_default_io_qpair_opts(b->ctrlr, &qo, sizeof(qo));
	qo.io_queue_size = NVP_MAX(b->qd + 1, 32u);
	qo.io_queue_requests = NVP_MAX(qo.io_queue_requests, qo.io_queue_size);
	qo.delay_doorbell = true; /* as the nvme module's qpairs */
	return nvp_nvme_ctrlr_alloc_io_qpair(b->ctrlr, &qo, &b->qpair);
}

static void
teardown(struct bench *b)
{
	if (b->emu_ctrlr != NULL) {
		nvp_emu_ctrlr_set_inline(b->emu_ctrlr, false);
	}
	if (b->ch != NULL) {
		nvp_bdev_channel_destroy(b->ch);
	}
	if (b->desc != NULL) {
		nvp_bdev_close(b->desc);
	}
	nvp_bdev_fini();
	if (b->qpair != NULL) {
		nvp_nvme_ctrlr_free_io_qpair(b->qpair);
	}
	if (b->ctrlr != NULL) {
		nvp_nvme_detach(b->ctrlr);
	}
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: bdev_overhead --target emu|null --path raw|bdev [--qd N] "
		   "[--ios N | --seconds S] [--no-acct] [--emu 'OPTS'] [--inline]\n"
		   "  4 KiB random reads at depth N (1..256; 1); prints one key=value line\n"
		   "  --inline: the software controller runs on this thread between polls "
		   "(for callgrind)\n");
}

static int
parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "path", required_argument, NULL, 'p' },
		{ "qd", required_argument, NULL, 'q' },
		{ "ios", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "no-acct", no_argument, NULL, 'A' },
		{ "emu", required_argument, NULL, 'e' },
		{ "inline", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (strcmp(optarg, "emu") != 0 && strcmp(optarg, "null") != 0) {
				fprintf(stderr, "bdev_overhead: --target %s: emu or null\n",
					optarg);
				return -EINVAL;
			}
			b->emu = strcmp(optarg, "emu") == 0;
			break;
		case 'p':
			if (strcmp(optarg, "raw") != 0 && strcmp(optarg, "bdev") != 0) {
				fprintf(stderr, "bdev_overhead: --path %s: raw or bdev\n", optarg);
				return -EINVAL;
			}
			b->bdev = strcmp(optarg, "bdev") == 0;
			break;
		case 'q':
			if (nvp_strtou64(optarg, 1, MAX_QD, &v) != 0) {
				fprintf(stderr, "bdev_overhead: --qd %s: 1..%u\n", optarg, MAX_QD);
				return -EINVAL;
			}
			b->qd = (uint32_t)v;
			break;
		case 'n':
			if (nvp_strtou64(optarg, 1, UINT64_MAX, &b->ios) != 0) {
				fprintf(stderr, "bdev_overhead: --ios %s: a positive count\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 's':
			b->seconds = strtod(optarg, NULL);
			if (b->seconds <= 0 || b->seconds > 3600) {
				fprintf(stderr, "bdev_overhead: --seconds %s: 0 < S <= 3600\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'A':
			b->acct = false;
			break;
		case 'e':
			b->emu_opts = optarg;
			break;
		case 'i':
			b->inline_emu = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (b->inline_emu && !b->emu) {
		fprintf(stderr, "bdev_overhead: --inline needs --target emu\n");
		return -EINVAL;
	}
	return optind == argc ? 0 : -EINVAL;
}

static int
run(struct bench *b)
{
	char trid[512];
	struct bench_use u0, u1;
	uint64_t t0, t1, hz;
	double emu_ns, host_ns;
	uint32_t i;
	int rc;

	snprintf(trid, sizeof(trid), "trtype:emu name:bench0 backend:null size:4G lba:4096 %s",
		 b->emu_opts != NULL ? b->emu_opts : "");
	rc = b->bdev ? setup_bdev(b, trid) : b->emu ? setup_raw_emu(b, trid) : 0;
	if (rc != 0) {
		fprintf(stderr, "bdev_overhead: setup failed: %s\n", strerror(-rc));
		return rc;
	}
	if (!b->bdev && !b->emu) {
		b->num_blocks = 1u << 18;
	}
	if (b->inline_emu) {
		b->emu_ctrlr = nvp_emu_ctrlr_find("bench0");
		rc = b->emu_ctrlr != NULL ? nvp_emu_ctrlr_set_inline(b->emu_ctrlr, true) : -ENODEV;
		if (rc != 0) {
			b->emu_ctrlr = NULL;
			fprintf(stderr, "bdev_overhead: --inline: %s\n", strerror(-rc));
			return rc;
		}
	}
	for (i = 0; i < b->qd; i++) {
		b->reqs[i].b = b;
		b->reqs[i].buf = nvp_env_dma_zmalloc(BS, BS, NULL);
		if (b->reqs[i].buf == NULL) {
			return -ENOMEM;
		}
	}
	hz = nvp_env_get_ticks_hz();
	bench_section_init(&b->emu_sec, hz);
	bench_use_get(&u0);
	t0 = nvp_env_get_ticks();
	b->stop_tick = t0 + (uint64_t)(b->seconds * (double)hz);
	io_loop(b);
	t1 = nvp_env_get_ticks();
	bench_use_get(&u1);
	emu_ns = bench_section_ns(&b->emu_sec, hz);
	host_ns = (double)(u1.cpu_ns - u0.cpu_ns) - emu_ns;
	printf("target=%s path=%s qd=%u acct=%d inline=%d ios=%" PRIu64 " errors=%" PRIu64
	       " elapsed_ns=%.0f cpu_ns_per_io=%.1f emu_ns=%.0f emu_cut=%" PRIu64
	       " host_ns_per_io=%.1f iops=%.0f",
	       b->emu ? "emu" : "null", b->bdev ? "bdev" : "raw", b->qd, b->acct, b->inline_emu,
	       b->done, b->errors, (double)(t1 - t0) * 1e9 / (double)hz,
	       b->done ? (double)(u1.cpu_ns - u0.cpu_ns) / (double)b->done : 0.0, emu_ns,
	       b->emu_sec.cut, b->done ? host_ns / (double)b->done : 0.0,
	       (double)b->done * (double)hz / (double)(t1 - t0));
	bench_use_print(stdout, &u0, &u1);
	printf("\n");
	for (i = 0; i < b->qd; i++) {
		nvp_env_dma_free(b->reqs[i].buf);
	}
	return b->errors != 0 ? -EIO : 0;
}

int
main(int argc, char **argv)
{
	static struct bench b;
	struct nvp_env_opts eo;
	int rc;

	b.qd = 1;
	b.bs = BS;
	b.acct = true;
	b.seconds = 1.0;
	b.rng = 0x9e3779b97f4a7c15ull;
	if (parse_args(&b, argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "bdev_overhead";
	eo.no_pci = true;
	eo.no_huge = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc != 0) {
		fprintf(stderr, "bdev_overhead: env init failed: %s\n", strerror(-rc));
		return 1;
	}
	rc = run(&b);
	teardown(&b);
	nvp_env_fini();
	return rc == 0 ? 0 : 1;
}
