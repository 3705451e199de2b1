/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_hints_waf: what write lifetime hints save in NAND writes, measured on the software
 * controller's FTL model through the driver (bench/hints_waf runs the matrix).
 *
 * An LSM-like mix in 4 KiB pages over the whole namespace (the device is full):
 *   hot set   2 % of the space, 20 % of the pages written, single random pages  -> short
 *   log       6 %, 35 %, 32 KiB sequential appends in a circular region          -> medium
 *   level A  24 %, 30 %, 80 KiB files rewritten whole, a random file at a time   -> long
 *   level B  68 %, 15 %, 176 KiB files, likewise                                  -> extreme
 * Files do not divide erase blocks (64 pages by default): a block holds parts of files
 * that die at different times, even in its own stream.
 * (hints in the order of the data's lifetime: 0.1, 0.17, 0.8 and 4.5 device writes).
 * The namespace is first filled once, then the mix runs --warm device writes to reach a
 * steady state, then --measure more: write amplification = NAND pages / host pages over
 * that window, from the vendor log page C0h. One read of a random page every
 * --read-every commands measures GC interference: channels=1, so a read waits for the
 * channel time (ftl_gc_us per relocated page) of the writes ahead of it.
 *
 * --api picks the path the writes take: "driver" (the raw driver's _hint calls),
 * "bdev-flags" (the bdev layer's nvme module, the hint in each write's flags) or
 * "bdev-desc" (the bdev layer, one descriptor per hint class with its default hint set,
 * as an application would use F_SET_RW_HINT on one file per class, and plain writes).
 *
 * --fdp N makes the controller an FDP controller with N reclaim unit handles instead
 * of a Streams one: the hints then travel as placement identifiers (DTYPE 2).
 *
 * Prints one JSON object: the figures and the WAF of each sampling interval.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "nvpoll/bdev.h"
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#define EXIT_USAGE 2
#define PAGE 4096u
#define CHUNK 8u /* pages per sequential write */
#define MAX_QD 64u
#define MAX_SAMPLES 4096u

struct cls {
	const char *name;
	enum nvp_nvme_write_hint hint;
	double space, share;
	uint32_t file; /* pages per file, 0 = circular log, 1 = random pages */
	uint64_t base, npages, cursor, left;
};

static struct cls g_cls[] = {
	{ "hot", NVP_NVME_WRITE_HINT_SHORT, 0.02, 0.20, 1, 0, 0, 0, 0 },
	{ "log", NVP_NVME_WRITE_HINT_MEDIUM, 0.06, 0.35, 0, 0, 0, 0, 0 },
	{ "level_a", NVP_NVME_WRITE_HINT_LONG, 0.24, 0.30, 20, 0, 0, 0, 0 },
	{ "level_b", NVP_NVME_WRITE_HINT_EXTREME, 0.68, 0.15, 44, 0, 0, 0, 0 },
};

struct opts {
	uint32_t size_mb, op, streams, ppb, gc_us, qd, read_every, samples;
	double warm, measure;
	bool hints, cb;
	uint32_t api; /* API_* */
	uint32_t fdp; /* FDP reclaim unit handles instead of streams, 0 = none */
};

enum {
	API_DRIVER,
	API_BDEV_FLAGS,
	API_BDEV_DESC
};
static const char *const g_api_names[] = { "driver", "bdev-flags", "bdev-desc" };
static const char *const g_placement_names[] = { "none", "streams", "fdp" };
#define NUM_DESC 5 /* bdev-desc: one descriptor per hint, [0] for reads and no hint */

struct io {
	uint64_t start_ns;
	bool read;
	bool busy;
};

struct run {
	struct opts o;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qp;
	struct nvp_bdev_desc *desc[NUM_DESC]; /* bdev APIs; bdev-flags uses [0] only */
	struct nvp_bdev_channel *ch[NUM_DESC];
	void *buf;
	uint64_t lpages, rng, host_done, outstanding;
	struct io io[MAX_QD];
	bool measuring;
	uint64_t *lat; /* read latencies (ns) in the measured window */
	uint64_t nlat, maxlat;
	double series[MAX_SAMPLES][2];
	uint32_t nseries;
	int err;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/*
 * This thread's own CPU time and the time it waited runnable for a CPU, in seconds
 * (/proc/thread-self/schedstat: bench/hints_waf decides from them whether the measured
 * window was preempted). Zeros when the kernel does not say.
 */
static void
thread_use(double *cpu, double *runq)
{
	unsigned long long c = 0, q = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f != NULL) {
		if (fscanf(f, "%llu %llu", &c, &q) != 2) {
			c = q = 0;
		}
		fclose(f);
	}
	*cpu = (double)c / 1e9;
	*runq = (double)q / 1e9;
}

static uint64_t
rnd(struct run *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct io *io = arg;

	if (nvme_cpl_is_error(cpl)) {
		fprintf(stderr, "nvp_hints_waf: a command failed (sct %u sc %u)\n", cpl->status.sct,
			cpl->status.sc);
		exit(1); /* a benchmark tool, not the library: a failed I/O ends the run */
	}
	io->busy = false;
}

/* Layout of the classes over the namespace; the last takes what is left. */
static void
layout(struct run *r)
{
	uint64_t at = 0;

	for (uint32_t i = 0; i < NVP_COUNTOF(g_cls); i++) {
		struct cls *c = &g_cls[i];

		c->base = at;
		c->npages = i + 1 == NVP_COUNTOF(g_cls) ? r->lpages - at :
							  (uint64_t)(c->space * r->lpages);
		if (c->file > 1) {
			c->npages -= c->npages % c->file;
		}
		c->cursor = 0;
		c->left = 0;
		at += c->npages;
	}
}

/* The next write of class @c: its first page and length. */
static void
next_write(struct run *r, struct cls *c, uint64_t *page, uint32_t *n)
{
	if (c->file == 1) {
		*page = c->base + rnd(r) % c->npages;
		*n = 1;
		return;
	}
	if (c->file == 0) { /* circular log */
		*n = (uint32_t)NVP_MIN((uint64_t)CHUNK, c->npages - c->cursor);
		*page = c->base + c->cursor;
		c->cursor = (c->cursor + *n) % c->npages;
		return;
	}
	if (c->left == 0) { /* a new file replaces a random old one */
		c->cursor = (rnd(r) % (c->npages / c->file)) * c->file;
		c->left = c->file;
	}
	*n = (uint32_t)NVP_MIN((uint64_t)CHUNK, c->left);
	*page = c->base + c->cursor;
	c->cursor += *n;
	c->left -= *n;
}

static struct cls *
pick_class(struct run *r)
{
	static double w[NVP_COUNTOF(g_cls)];
	double sum = 0, x;

	for (uint32_t i = 0; i < NVP_COUNTOF(g_cls); i++) {
		w[i] = g_cls[i].share / (g_cls[i].file == 1 ? 1.0 : CHUNK);
		sum += w[i];
	}
	x = (double)(rnd(r) % 1000000) / 1e6 * sum;
	for (uint32_t i = 0; i < NVP_COUNTOF(g_cls); i++) {
		if (x < w[i]) {
			return &g_cls[i];
		}
		x -= w[i];
	}
	return &g_cls[NVP_COUNTOF(g_cls) - 1];
}

/* Reap completions on whatever path the run uses. */
static void
poll_once(struct run *r)
{
	if (r->o.api == API_DRIVER) {
		if (nvp_nvme_qpair_process_completions(r->qp, 0) < 0) {
			r->err = -EIO;
		}
		return;
	}
	for (uint32_t i = 0; i < NUM_DESC; i++) {
		if (r->ch[i] != NULL && nvp_bdev_channel_poll(r->ch[i]) < 0) {
			r->err = -EIO;
		}
	}
}

static struct io *
free_io(struct run *r)
{
	while (r->err == 0) {
		for (uint32_t i = 0; i < r->o.qd; i++) {
			if (!r->io[i].busy) {
				return &r->io[i];
			}
		}
		poll_once(r);
	}
	return NULL;
}

static void
record_reads(struct run *r)
{
	for (uint32_t i = 0; i < r->o.qd; i++) {
		struct io *io = &r->io[i];

		if (io->read && !io->busy && io->start_ns != 0) {
			if (r->measuring && r->nlat < r->maxlat) {
				r->lat[r->nlat++] = now_ns() - io->start_ns;
			}
			io->start_ns = 0;
		}
	}
}

/* Through the bdev layer: the hint in the flags, or the descriptor of that hint. */
static int
submit_bdev(struct run *r, struct io *io, bool read, uint64_t page, uint32_t n,
	    enum nvp_nvme_write_hint hint)
{
	uint32_t d = r->o.api == API_BDEV_DESC && !read ? (uint32_t)hint : 0;
	uint32_t flags = 0;

	if (read) {
		return nvp_bdev_read_blocks(r->desc[0], r->ch[0], r->buf, page, n, io_done, io);
	}
	if (r->o.api == API_BDEV_FLAGS) {
		flags = nvp_bdev_write_flags(0, hint);
	}
	return nvp_bdev_write_blocks(r->desc[d], r->ch[d], r->buf, page, n, flags, io_done, io);
}

static int
submit(struct run *r, bool read, uint64_t page, uint32_t n, enum nvp_nvme_write_hint hint)
{
	struct io *io = free_io(r);
	int rc;

	if (io == NULL) {
		return r->err;
	}
	record_reads(r);
	io->busy = true;
	io->read = read;
	io->start_ns = read ? now_ns() : 0;
	if (!r->o.hints) {
		hint = NVP_NVME_WRITE_HINT_NONE;
	}
	if (r->o.api != API_DRIVER) {
		rc = submit_bdev(r, io, read, page, n, hint);
	} else if (read) {
		rc = nvp_nvme_ns_cmd_read(r->ns, r->qp, r->buf, page, n, io_done, io, 0);
	} else {
		rc = nvp_nvme_ns_cmd_write_hint(r->ns, r->qp, r->buf, page, n, io_done, io, 0,
						hint);
	}
	if (rc != 0) {
		io->busy = false;
		fprintf(stderr, "submit: %s\n", strerror(-rc));
		r->err = rc;
	}
	return rc;
}

static void
drain(struct run *r)
{
	for (uint32_t i = 0; i < r->o.qd; i++) {
		while (r->io[i].busy && r->err == 0) {
			poll_once(r);
		}
	}
	record_reads(r);
}

static int
ftl_log(struct run *r, struct nvp_emu_ftl_log *l)
{
	return nvp_nvme_ctrlr_get_log_page(r->ctrlr, NVP_EMU_LOG_FTL, nvp_nvme_ns_get_id(r->ns), l,
					   sizeof(*l), 0, NULL);
}

/* Run the mix for @pages host pages; sample the interval WAF every @every pages. */
static void
run_mix(struct run *r, uint64_t pages, uint64_t every)
{
	struct nvp_emu_ftl_log prev, cur;
	uint64_t done = 0, next = every, ops = 0;

	if (ftl_log(r, &prev) != 0) {
		r->err = -EIO;
	}
	while (done < pages && r->err == 0) {
		struct cls *c = pick_class(r);
		uint64_t page;
		uint32_t n;

		if (r->o.read_every != 0 && ++ops % r->o.read_every == 0) {
			submit(r, true, rnd(r) % r->lpages, 1, NVP_NVME_WRITE_HINT_NONE);
		}
		next_write(r, c, &page, &n);
		submit(r, false, page, n, c->hint);
		done += n;
		if (done >= next && r->err == 0) {
			next += every;
			if (ftl_log(r, &cur) != 0) {
				r->err = -EIO;
				break;
			}
			if (r->nseries < MAX_SAMPLES && cur.host_pages > prev.host_pages) {
				r->series[r->nseries][0] = (double)(r->host_done + done) /
							   r->lpages;
				r->series[r->nseries][1] =
					(double)(cur.nand_pages - prev.nand_pages) /
					(double)(cur.host_pages - prev.host_pages);
				r->nseries++;
			}
			prev = cur;
		}
	}
	drain(r);
	r->host_done += done;
}

static void
fill(struct run *r)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_cls) && r->err == 0; i++) {
		struct cls *c = &g_cls[i];

		for (uint64_t p = 0; p < c->npages && r->err == 0; p += CHUNK) {
			submit(r, false, c->base + p,
			       (uint32_t)NVP_MIN((uint64_t)CHUNK, c->npages - p), c->hint);
		}
	}
	drain(r);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct_us(const struct run *r, double p)
{
	if (r->nlat == 0) {
		return 0;
	}
	return r->lat[(uint64_t)(p * (double)(r->nlat - 1))] / 1000.0;
}

/* The nvme module's own count of writes per hint (all of the run, fill included). */
static void
report_bdev(struct run *r)
{
	struct nvp_bdev_nvme_hint_stats hs = { .info_size = sizeof(hs) };

	if (r->o.api == API_DRIVER ||
	    nvp_bdev_nvme_get_hint_stats(nvp_bdev_desc_get_bdev(r->desc[0]), &hs) != 0) {
		return;
	}
	printf(", \"bdev_writes_by_hint\": [");
	for (uint32_t h = 0; h < NVP_BDEV_NUM_HINTS; h++) {
		printf("%s%llu", h ? ", " : "", (unsigned long long)hs.writes[h]);
	}
	printf("], \"bdev_hints_dropped\": %llu", (unsigned long long)hs.hints_dropped);
}

static void
report(struct run *r, const struct nvp_emu_ftl_log *a, const struct nvp_emu_ftl_log *b, double wall,
       double cpu, double io_cpu, double io_runq)
{
	uint64_t host = b->host_pages - a->host_pages, nand = b->nand_pages - a->nand_pages;

	qsort(r->lat, r->nlat, sizeof(r->lat[0]), cmp_u64);
	printf("{\"placement\": \"%s\", \"fdp_handles\": %u, ",
	       g_placement_names[nvp_nvme_ns_get_placement(r->ns)], r->o.fdp);
	printf("\"api\": \"%s\", \"op_pct\": %u, \"hints\": %s, \"streams_offered\": %u, \"streams_used\": %u, "
	       "\"ppb\": %u, \"gc\": \"%s\", \"size_mb\": %u, \"host_pages\": %llu, "
	       "\"nand_pages\": %llu, \"gc_pages\": %llu, \"erases\": %llu, \"waf\": %.4f, "
	       "\"hints_dropped\": %llu, \"reads\": %llu, \"read_p50_us\": %.1f, "
	       "\"read_p99_us\": %.1f, \"gc_busy_us\": %llu, \"wall_s\": %.2f, \"cpu_s\": %.2f, ",
	       g_api_names[r->o.api], r->o.op, r->o.hints ? "true" : "false", r->o.streams,
	       nvp_nvme_ns_get_num_streams(r->ns), r->o.ppb, r->o.cb ? "cb" : "greedy",
	       r->o.size_mb, (unsigned long long)host, (unsigned long long)nand,
	       (unsigned long long)(b->gc_pages - a->gc_pages),
	       (unsigned long long)(b->erases - a->erases), host ? (double)nand / host : 0.0,
	       (unsigned long long)nvp_nvme_ns_get_hints_dropped(r->ns),
	       (unsigned long long)r->nlat, pct_us(r, 0.5), pct_us(r, 0.99),
	       (unsigned long long)(b->gc_busy_us - a->gc_busy_us), wall, cpu);
	printf("\"io_cpu_s\": %.4f, \"io_runq_s\": %.4f, \"read_p999_us\": %.1f, \"series\": [",
	       io_cpu, io_runq, pct_us(r, 0.999));
	for (uint32_t i = 0; i < r->nseries; i++) {
		printf("%s[%.3f, %.3f]", i ? ", " : "", r->series[i][0], r->series[i][1]);
	}
	printf("]");
	report_bdev(r);
	printf("}\n");
}

static int
bench(struct run *r)
{
	struct nvp_emu_ftl_log a, b;
	uint64_t every = NVP_MAX(r->lpages / NVP_MAX(r->o.samples, 1u), (uint64_t)CHUNK);
	double w0, c0, t0, q0, t1, q1;

	layout(r);
	fill(r);
	run_mix(r, (uint64_t)(r->o.warm * r->lpages), every);
	if (r->err != 0 || ftl_log(r, &a) != 0) {
		return r->err ? r->err : -EIO;
	}
	r->measuring = true;
	w0 = now_ns() / 1e9;
	c0 = cpu_s();
	thread_use(&t0, &q0);
	run_mix(r, (uint64_t)(r->o.measure * r->lpages), every);
	thread_use(&t1, &q1);
	if (r->err != 0 || ftl_log(r, &b) != 0) {
		return r->err ? r->err : -EIO;
	}
	report(r, &a, &b, now_ns() / 1e9 - w0, cpu_s() - c0, t1 - t0, q1 - q0);
	return 0;
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"  --size MiB        namespace size (default 256)\n"
		"  --op PCT          over-provisioning, percent (default 7)\n"
		"  --streams N       streams the controller offers, 0..32 (default 4)\n"
		"  --fdp N           FDP instead: reclaim unit handles offered, 1..32; the\n"
		"                    controller then offers no streams (default 0: no FDP)\n"
		"  --hints on|off    pass the classes' lifetime hints (default on)\n"
		"  --ppb N           pages per erase block (default 64)\n"
		"  --gc greedy|cb    GC victim policy (default greedy)\n"
		"  --gc-us N         channel time per page GC relocates, us (default 2)\n"
		"  --warm X          device writes to reach steady state (default 3)\n"
		"  --measure X       device writes measured (default 3)\n"
		"  --qd N            commands in flight, 1..64 (default 8)\n"
		"  --read-every N    one read per N writes, 0 = none (default 8)\n"
		"  --samples N       WAF samples per device write (default 8)\n"
		"  --api A           driver | bdev-flags | bdev-desc: the path of the writes\n"
		"                    and how they carry hints (default driver)\n",
		prog);
}

static int
parse_u32(const char *v, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t x;

	if (nvp_strtou64(v, min, max, &x) != 0) {
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

static int
parse_double(const char *v, double *out)
{
	char *end;

	*out = strtod(v, &end);
	return (end == v || *end != '\0' || *out < 0 || *out > 100) ? -EINVAL : 0;
}

static int
parse_opt(struct opts *o, int c, const char *v)
{
	switch (c) {
	case 's':
		return parse_u32(v, 16, 65536, &o->size_mb);
	case 'o':
		return parse_u32(v, 1, 400, &o->op);
	case 'S':
		return parse_u32(v, 0, 32, &o->streams);
	case 'F':
		return parse_u32(v, 1, 32, &o->fdp);
	case 'H':
		return nvp_parse_bool(v, &o->hints);
	case 'p':
		return parse_u32(v, 2, 65536, &o->ppb);
	case 'g':
		o->cb = strcmp(v, "cb") == 0;
		return o->cb || strcmp(v, "greedy") == 0 ? 0 : -EINVAL;
	case 'G':
		return parse_u32(v, 0, 100000, &o->gc_us);
	case 'w':
		return parse_double(v, &o->warm);
	case 'm':
		return parse_double(v, &o->measure);
	case 'q':
		return parse_u32(v, 1, MAX_QD, &o->qd);
	case 'r':
		return parse_u32(v, 0, 1000000, &o->read_every);
	case 'n':
		return parse_u32(v, 1, 64, &o->samples);
	case 'a':
		for (uint32_t i = 0; i < NVP_COUNTOF(g_api_names); i++) {
			if (strcmp(v, g_api_names[i]) == 0) {
				o->api = i;
				return 0;
			}
		}
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "size", 1, NULL, 's' },       { "op", 1, NULL, 'o' },
		{ "streams", 1, NULL, 'S' },    { "hints", 1, NULL, 'H' },
		{ "ppb", 1, NULL, 'p' },        { "gc", 1, NULL, 'g' },
		{ "gc-us", 1, NULL, 'G' },      { "warm", 1, NULL, 'w' },
		{ "measure", 1, NULL, 'm' },    { "qd", 1, NULL, 'q' },
		{ "read-every", 1, NULL, 'r' }, { "samples", 1, NULL, 'n' },
		{ "api", 1, NULL, 'a' },        { "help", 0, NULL, 'h' },
		{ "fdp", 1, NULL, 'F' },        { NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ 256, 7, 4, 64, 2, 8, 8, 8, 3.0, 3.0, true, false, API_DRIVER, 0 };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, argv[0]);
			exit(0);
		}
		if (c == '?' || parse_opt(o, c, optarg) != 0) {
			if (c != '?') {
				fprintf(stderr, "%s: bad value '%s' for an option\n", argv[0],
					optarg);
			}
			usage(stderr, argv[0]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void
event_ignore(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

/*
 * Through the bdev layer: the nvme module attaches the controller (and sets the hints
 * up); bdev-desc opens one descriptor (and channel) per hint, its default hint set.
 */
static int
attach_bdev(struct run *r, const char *trid)
{
	struct nvp_bdev_nvme_opts o;
	struct nvp_bdev *bdev = NULL;
	uint32_t n = r->o.api == API_BDEV_DESC ? NUM_DESC : 1;
	int rc;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = "hints_waf";
	rc = nvp_bdev_nvme_attach(trid, &o, &bdev, 1, NULL);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		rc = nvp_bdev_open(nvp_bdev_get_name(bdev), true, event_ignore, NULL, &r->desc[i]);
		if (rc == 0) {
			rc = nvp_bdev_desc_set_write_hint(r->desc[i], (enum nvp_nvme_write_hint)i);
		}
		if (rc == 0) {
			rc = nvp_bdev_channel_create(r->desc[i], NULL, &r->ch[i]);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "cannot open the bdev of \"%s\": %s\n", trid, strerror(-rc));
		return rc;
	}
	r->ctrlr = nvp_bdev_nvme_get_ctrlr(bdev);
	r->ns = nvp_nvme_ctrlr_get_ns(r->ctrlr, 1);
	r->lpages = nvp_bdev_get_num_blocks(bdev);
	return 0;
}

static void
detach(struct run *r)
{
	if (r->o.api == API_DRIVER) {
		if (r->qp != NULL) {
			nvp_nvme_ctrlr_free_io_qpair(r->qp);
		}
		if (r->ctrlr != NULL) {
			nvp_nvme_detach(r->ctrlr);
		}
		return;
	}
	for (uint32_t i = 0; i < NUM_DESC; i++) {
		if (r->ch[i] != NULL) {
			nvp_bdev_channel_destroy(r->ch[i]);
		}
		if (r->desc[i] != NULL) {
			nvp_bdev_close(r->desc[i]);
		}
	}
	nvp_bdev_fini();
}

static int
attach(struct run *r)
{
	struct nvp_nvme_transport_id trid;
	char s[NVP_NVME_TRARGS_MAX];
	int rc;

	snprintf(s, sizeof(s),
		 "trtype:emu name:hints_waf size=%uM lba=4096 backend=null streams=%u fdp=%u ftl=1 "
		 "ftl_ppb=%u ftl_op=%u ftl_gc=%s ftl_gc_us=%u channels=1 queues=%u",
		 r->o.size_mb, r->o.fdp != 0 ? 0 : r->o.streams, r->o.fdp, r->o.ppb, r->o.op,
		 r->o.cb ? "cb" : "greedy", r->o.gc_us, NUM_DESC + 1);
	if (r->o.api != API_DRIVER) {
		return attach_bdev(r, s);
	}
	rc = nvp_nvme_transport_id_parse(&trid, s);
	if (rc == 0) {
		rc = nvp_nvme_connect(&trid, NULL, &r->ctrlr);
	}
	if (rc != 0) {
		fprintf(stderr, "cannot make the software controller \"%s\": %s\n", s,
			strerror(-rc));
		return rc;
	}
	r->ns = nvp_nvme_ctrlr_get_ns(r->ctrlr, 1);
	r->lpages = nvp_nvme_ns_get_num_sectors(r->ns);
	if (r->o.hints) {
		rc = nvp_nvme_ns_hints_setup(r->ns, 0);
	}
	if (rc == 0) {
		rc = nvp_nvme_ctrlr_alloc_io_qpair(r->ctrlr, NULL, &r->qp);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static struct run r;
	struct nvp_env_opts eo;
	int rc;

	if (parse_args(argc, argv, &r.o) != 0) {
		return EXIT_USAGE;
	}
	r.rng = 0x9e3779b97f4a7c15ull;
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "nvp_hints_waf";
	eo.no_pci = true;
	eo.no_huge = true;
	eo.quiet = true;
	if (nvp_env_init(&eo) != 0) {
		fprintf(stderr, "cannot initialise the environment\n");
		return 1;
	}
	rc = attach(&r);
	r.buf = nvp_env_dma_zmalloc(CHUNK * PAGE, PAGE, NULL);
	r.maxlat = 1u << 20;
	r.lat = calloc(r.maxlat, sizeof(uint64_t));
	if (rc == 0 && (r.buf == NULL || r.lat == NULL)) {
		rc = -ENOMEM;
	}
	if (rc == 0) {
		rc = bench(&r);
	}
	if (rc != 0) {
		fprintf(stderr, "nvp_hints_waf: %s\n", strerror(-rc));
	}
	detach(&r);
	nvp_env_dma_free(r.buf);
	free(r.lat);
	nvp_env_fini();
	return rc == 0 ? 0 : 1;
}
