/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_bench_mix: I/O jobs, one thread each, against one bdev, with the writeback throttle
 * and the scheduler chosen on the command line — the engine of bench/writeback (a QD1
 * reader against a background write flood) and bench/sched (readers against writers,
 * tenants sharing a device, the cost of each scheduler).
 *
 *   --bdev emu:OPTS | null:MIB | uring:PATH
 *                                  a software controller (options of include/nvpoll/emu.h)
 *                                  through the nvme module, a null bdev of MIB MiB, or a
 *                                  file or block device through io_uring (O_DIRECT)
 *   --wbt LAT_US|off               the admission stage
 *   --sched NAME[:PARAMS]          the scheduler (PARAMS with ',' between key=value)
 *   --job SPEC                     repeatable; SPEC is key=value,...: rw=read|randread|
 *                                  write|randwrite, bs=SIZE, qd=N, tenant=N, class=
 *                                  normal|background|sync, share=K (--one-thread only:
 *                                  use job K's descriptor and channel, as a reader and a
 *                                  writer of one thread share its queue pair; K's tenant)
 *   --seconds S, --interval-ms MS
 *   --ios N                        each job stops after N I/Os (for instruction counts);
 *                                  the run ends when every job has, or at S seconds
 *   --one-thread                   run every job as a stage of one thread (the main one),
 *                                  round robin, instead of a thread each
 *   --inline                       with --one-thread and emu: that thread also runs the
 *                                  software controller (nvp_emu_ctrlr_poll()) between its
 *                                  stages, so no other busy thread competes for a CPU and
 *                                  latency is the device model's, not the scheduler's
 *   --ramp S, --warmup S           run S seconds before measuring (0): the per-job
 *                                  figures leave them out (the intervals keep them), so
 *                                  a feedback loop (kyber, wbt) is measured settled
 *   --idle-sleep                   with --inline: when a round finds nothing to do, sleep
 *                                  until the controller's next completion is due (as a
 *                                  host waits for an interrupt), so that on a loaded
 *                                  machine the thread is woken in time rather than
 *                                  waiting for its turn among busy threads
 *
 * Output, one record a line of key=value fields (the job lines cover the run after the
 * ramp; the interval lines all of it):
 *   interval t_ms=.. j0_ios=.. j0_p99_us=.. j0_max_us=.. j0_mib=.. ... [step=.. depth=..]
 *       [kyber_read_depth=.. kyber_write_depth=..]
 *   job id=N rw=.. bs=.. qd=.. tenant=.. ios=.. iops=.. mib_s=.. mean_us=.. p50_us=..
 *       p99_us=.. p999_us=.. max_us=.. cpu_s=.. cpu_ns_per_io=..
 *   summary seconds=.. wbt=on|off throttled=.. deferred_ms=.. steps_up=.. steps_down=..
 *       sched=.. dispatched=.. inline=0|1 kyber_depth=R/W/D/O kyber_windows=..
 *       kyber_congested=..
 *   summary_emu emu_cpu_s=..       (--inline)
 * With --one-thread, a job's cpu_s is the thread's CPU time times the share of the
 * thread's time spent in that job's stage; emu_cpu_s is the inline controller's share.
 * Exit status: 0; 1 if the run failed (attach, I/O error); 2 for a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "nvpoll/bdev.h"
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/histogram.h"
#include "nvpoll/sched.h"
#include "nvpoll/util.h"
#include "nvpoll/wbt.h"

#define MAX_JOBS 8u
#define MAX_QD 256u
#define MAX_INTERVALS 4096u

struct job {
	/* spec */
	bool write;
	bool rand;
	uint64_t bs;
	uint64_t qd;
	uint64_t tenant;
	uint32_t cls;
	int32_t share; /* job whose descriptor and channel this one uses, -1 its own */
	/* results */
	int rc;
	uint64_t ios;
	uint64_t bytes;
	uint64_t cpu_ns;
	struct nvp_histogram hist; /* latency, ns */
	pthread_t thread;
};

struct interval {
	struct nvp_histogram lat[MAX_JOBS];
	_Atomic uint64_t bytes[MAX_JOBS];
	int32_t step;
	uint32_t depth;
	bool sampled;
	bool ky_sampled;
	uint32_t ky_depth[2]; /* kyber's read and write depths */
};

static struct {
	const char *bdev_spec;
	int64_t wbt_lat_us; /* -1 = off */
	const char *sched;
	double seconds;
	uint64_t interval_ms;
	bool one_thread;
	bool inline_emu;
	bool idle_sleep;
	double ramp;
	uint64_t ios; /* per job, 0 = until the time is up */
} g_o = { "emu:size:1G channels:8 read_us:80 write_us:1000",
	  -1,
	  "none",
	  10,
	  100,
	  false,
	  false,
	  false,
	  0,
	  0 };

static struct job g_jobs[MAX_JOBS];
static uint32_t g_num_jobs;
static struct interval *g_iv;
static uint32_t g_num_iv;
static uint64_t g_t0, g_hz, g_ramp_end;
static atomic_bool g_stop;
static _Atomic uint32_t g_finished; /* job threads done (--ios) */
static const char *g_bdev_name;
static struct nvp_emu_ctrlr *g_emu; /* --inline: the controller this thread runs */
static uint64_t g_emu_cpu_ns;

static void
usage(FILE *f)
{
	fprintf(f, "usage: nvp_bench_mix [--bdev emu:OPTS|null:MIB|uring:PATH] [--wbt LAT_US|off]\n"
		   "  [--sched NAME[:k=v,...]] --job rw=RW,bs=SIZE,qd=N[,tenant=N][,class=C] ...\n"
		   "  [--seconds S] [--interval-ms MS] [--one-thread [--inline [--idle-sleep]]]\n"
		   "  [--ramp|--warmup S] [--ios N]   (--one-thread jobs may also have share=K)\n"
		   "Runs each job on its own thread (or all as stages of one thread) against one\n"
		   "bdev for S seconds and prints per-interval and per-job figures (see\n"
		   "bench/prog/mix/mix.c).\n");
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t
interval_of(uint64_t tick)
{
	uint64_t i = (tick - g_t0) * 1000 / g_hz / g_o.interval_ms;

	return (uint32_t)NVP_MIN(i, (uint64_t)g_num_iv - 1);
}

static int
job_kv(void *ctx, const char *key, const char *value)
{
	struct job *j = ctx;
	uint64_t v;

	if (strcmp(key, "rw") == 0) {
		j->write = strstr(value, "write") != NULL;
		j->rand = strncmp(value, "rand", 4) == 0;
		return strcmp(value + (j->rand ? 4 : 0), j->write ? "write" : "read") == 0 ?
			       0 :
			       -EINVAL;
	}
	if (strcmp(key, "bs") == 0) {
		return nvp_parse_size(value, &j->bs) != 0 || j->bs == 0 ? -EINVAL : 0;
	}
	if (strcmp(key, "qd") == 0) {
		return nvp_strtou64(value, 1, MAX_QD, &j->qd);
	}
	if (strcmp(key, "share") == 0) {
		/* an earlier job that shares no other's: this one's index is g_num_jobs - 1 */
		if (nvp_strtou64(value, 0, g_num_jobs - 1, &v) != 0 || v + 1 == g_num_jobs ||
		    g_jobs[v].share >= 0) {
			return -EINVAL;
		}
		j->share = (int32_t)v;
		return 0;
	}
	if (strcmp(key, "tenant") == 0) {
		return nvp_strtou64(value, 0, NVP_BDEV_MAX_TENANTS - 1, &j->tenant);
	}
	if (strcmp(key, "class") == 0) {
		j->cls = strcmp(value, "background") == 0 ? NVP_BDEV_WRITE_BACKGROUND :
			 strcmp(value, "sync") == 0       ? NVP_BDEV_WRITE_SYNC :
							    NVP_BDEV_WRITE_NORMAL;
		return strcmp(value, "background") == 0 || strcmp(value, "sync") == 0 ||
				       strcmp(value, "normal") == 0 ?
			       0 :
			       -EINVAL;
	}
	return -EINVAL;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bdev", required_argument, NULL, 'b' },
		{ "wbt", required_argument, NULL, 'w' },
		{ "sched", required_argument, NULL, 's' },
		{ "job", required_argument, NULL, 'j' },
		{ "seconds", required_argument, NULL, 't' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "one-thread", no_argument, NULL, '1' },
		{ "inline", no_argument, NULL, 'I' },
		{ "idle-sleep", no_argument, NULL, 'S' },
		{ "ramp", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'r' },
		{ "ios", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct job *j;
	uint64_t v;
	char *end;
	int c, rc = 0;

	while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
			g_o.bdev_spec = optarg;
			rc = strncmp(optarg, "emu:", 4) == 0 || strncmp(optarg, "null:", 5) == 0 ||
					     strncmp(optarg, "uring:", 6) == 0 ?
				     0 :
				     -EINVAL;
			break;
		case 'w':
			if (strcmp(optarg, "off") == 0) {
				g_o.wbt_lat_us = -1;
			} else if ((rc = nvp_strtou64(optarg, 0, 10000000, &v)) == 0) {
				g_o.wbt_lat_us = (int64_t)v;
			}
			break;
		case 's':
			g_o.sched = optarg;
			break;
		case 'j':
			if (g_num_jobs == MAX_JOBS) {
				rc = -E2BIG;
				break;
			}
			j = &g_jobs[g_num_jobs++];
			*j = (struct job){ .bs = 4096, .qd = 1, .share = -1 };
			rc = nvp_kv_parse(optarg, job_kv, j);
			break;
		case 't':
			g_o.seconds = strtod(optarg, &end);
			rc = *end != '\0' || g_o.seconds <= 0 || g_o.seconds > 3600 ? -EINVAL : 0;
			break;
		case 'i':
			rc = nvp_strtou64(optarg, 10, 10000, &g_o.interval_ms);
			break;
		case '1':
			g_o.one_thread = true;
			break;
		case 'I':
			g_o.inline_emu = true;
			break;
		case 'S':
			g_o.idle_sleep = true;
			break;
		case 'r':
			g_o.ramp = strtod(optarg, &end);
			rc = *end != '\0' || !(g_o.ramp >= 0) || g_o.ramp > 3600 ? -EINVAL : 0;
			break;
		case 'n':
			rc = nvp_strtou64(optarg, 1, UINT64_MAX, &g_o.ios);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
		if (rc != 0) {
			fprintf(stderr, "nvp_bench_mix: bad value '%s'\n", optarg);
		}
	}
	if (rc == 0 && (optind != argc || g_num_jobs == 0)) {
		fprintf(stderr, "nvp_bench_mix: at least one --job; no positional arguments\n");
		rc = -EINVAL;
	}
	if (rc == 0 && g_o.inline_emu &&
	    (!g_o.one_thread || strncmp(g_o.bdev_spec, "emu:", 4) != 0)) {
		fprintf(stderr, "nvp_bench_mix: --inline needs --one-thread and an emu bdev\n");
		rc = -EINVAL;
	}
	if (rc == 0 && g_o.ramp >= g_o.seconds) {
		fprintf(stderr, "nvp_bench_mix: --ramp/--warmup must be shorter than --seconds\n");
		rc = -EINVAL;
	}
	if (rc == 0 && g_o.idle_sleep && !g_o.inline_emu) {
		fprintf(stderr, "nvp_bench_mix: --idle-sleep needs --inline\n");
		rc = -EINVAL;
	}
	for (c = 0; rc == 0 && c < (int)g_num_jobs; c++) {
		if (g_jobs[c].share >= 0 && !g_o.one_thread) {
			fprintf(stderr, "nvp_bench_mix: share= needs --one-thread\n");
			rc = -EINVAL;
		}
	}
	return rc;
}

static void
on_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
	atomic_store(&g_stop, true);
}

struct slot {
	struct job *j;
	uint64_t start;
	uint64_t bytes; /* 0 while free */
	bool done;
	bool err;
};

static void
slot_done(void *arg, const struct nvme_cpl *cpl)
{
	struct slot *s = arg;

	s->done = true;
	s->err = nvme_cpl_is_error(cpl);
}

/* Account a completed slot. \return 0 or -EIO. */
static int
reap(struct job *j, uint32_t id, struct slot *s, uint64_t now)
{
	uint64_t lat = (now - s->start) * 1000000000ull / g_hz;
	uint32_t iv = interval_of(now);

	if (s->err) {
		return -EIO;
	}
	nvp_histogram_record(&g_iv[iv].lat[id], lat);
	atomic_fetch_add_explicit(&g_iv[iv].bytes[id], s->bytes, memory_order_relaxed);
	if (now >= g_ramp_end) {
		nvp_histogram_record(&j->hist, lat);
		j->ios++;
		j->bytes += s->bytes;
	}
	s->bytes = 0;
	return 0;
}

static uint64_t
next_offset(struct job *j, uint64_t *seq, uint64_t *x, uint64_t units)
{
	if (!j->rand) {
		*seq = (*seq + 1) % units;
		return *seq * j->bs;
	}
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17; /* xorshift64 */
	return (*x % units) * j->bs;
}

/* One job's running state: its descriptor, channel, slots and offsets. */
struct run {
	struct job *j;
	uint32_t id;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct slot *slots;
	uint8_t *bufs;
	uint64_t units, seq, x;
	uint64_t submitted; /* for --ios */
	uint32_t inflight;  /* this job's own, even on a shared channel */
	uint32_t flags;
	uint64_t ticks; /* --one-thread: time spent in this stage */
	bool done;
	bool busy;     /* the last step delivered or submitted something */
	bool borrowed; /* desc and ch are another job's (share=) */
};

/* Open @j's descriptor and channel on the calling thread, or borrow @owner's (share=). */
static int
run_open(struct run *r, struct job *j, const struct run *owner)
{
	bool write = j->write;
	uint64_t size;
	uint32_t k;

	*r = (struct run){ .j = j, .id = (uint32_t)(j - g_jobs) };
	r->flags = nvp_bdev_write_flags(j->cls, NVP_NVME_WRITE_HINT_NONE);
	r->x = 88172645463325252ull + r->id;
	r->slots = calloc(j->qd, sizeof(*r->slots));
	r->bufs = nvp_env_dma_zmalloc(j->bs * j->qd, 4096, NULL);
	if (r->slots == NULL || r->bufs == NULL) {
		j->rc = -ENOMEM;
		return j->rc;
	}
	for (k = 0; k < g_num_jobs; k++) { /* the owner opens for its borrowers' writes too */
		write |= g_jobs[k].share == (int32_t)r->id && g_jobs[k].write;
	}
	if (owner != NULL) {
		r->desc = owner->desc;
		r->ch = owner->ch;
		r->borrowed = true;
		j->tenant = owner->j->tenant; /* what its I/O is accounted to */
		j->rc = owner->ch != NULL ? 0 : -ENODEV;
	} else {
		j->rc = nvp_bdev_open(g_bdev_name, write, on_event, NULL, &r->desc);
	}
	if (j->rc == 0 && owner == NULL) {
		nvp_bdev_desc_set_tenant(r->desc, (uint32_t)j->tenant);
		j->rc = nvp_bdev_channel_create(r->desc, NULL, &r->ch);
	}
	if (j->rc == 0) {
		size = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(r->desc)) *
		       nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(r->desc));
		r->units = size / j->bs;
		r->seq = r->id * (r->units / MAX_JOBS);
		j->rc = size < j->bs ? -EINVAL : 0;
	}
	return j->rc;
}

/* Poll the channel, reap, resubmit: one pass. Sets r->done once stopped and drained. */
static int
run_step(struct run *r)
{
	struct job *j = r->j;
	uint64_t now, off;
	uint32_t i;
	bool stop;
	int rc = 0;

	r->busy = nvp_bdev_channel_poll(r->ch) > 0;
	now = nvp_env_get_ticks();
	stop = atomic_load_explicit(&g_stop, memory_order_relaxed) ||
	       (g_o.ios != 0 && r->submitted == g_o.ios);
	for (i = 0; i < j->qd && rc == 0; i++) {
		struct slot *s = &r->slots[i];

		if (s->bytes != 0 && !s->done) {
			continue;
		}
		if (s->bytes != 0) {
			rc = reap(j, r->id, s, now);
			r->inflight--;
		}
		if (rc != 0 || stop) {
			continue;
		}
		*s = (struct slot){ j, now, j->bs, false, false };
		off = next_offset(j, &r->seq, &r->x, r->units);
		rc = j->write ? nvp_bdev_write(r->desc, r->ch, r->bufs + i * j->bs, off, j->bs,
					       r->flags, slot_done, s) :
				nvp_bdev_read(r->desc, r->ch, r->bufs + i * j->bs, off, j->bs,
					      slot_done, s);
		if (rc == -ENOMEM) { /* pool empty: retry from the next poll */
			s->bytes = 0;
			rc = 0;
		} else if (rc == 0) {
			r->submitted++;
			r->inflight++;
			stop = g_o.ios != 0 && r->submitted == g_o.ios;
		}
		r->busy |= s->bytes != 0;
	}
	r->done = rc != 0 || (stop && r->inflight == 0);
	return rc;
}

/* Wait for what the channel still has in flight, then free what @r owns. */
static void
run_close(struct run *r)
{
	while (r->ch != NULL && nvp_bdev_channel_get_outstanding(r->ch) != 0) {
		if (g_emu != NULL) {
			nvp_emu_ctrlr_poll(g_emu);
		}
		nvp_bdev_channel_poll(r->ch);
	}
	if (r->ch != NULL && !r->borrowed) {
		nvp_bdev_channel_destroy(r->ch);
	}
	if (r->desc != NULL && !r->borrowed) {
		nvp_bdev_close(r->desc);
	}
	nvp_env_dma_free(r->bufs);
	free(r->slots);
	if (r->j->rc != 0) {
		atomic_store(&g_stop, true);
	}
}

static void *
job_main(void *arg)
{
	struct job *j = arg;
	uint64_t cpu0 = thread_cpu_ns();
	bool ramped = false;
	struct run r;

	j->rc = run_open(&r, j, NULL);
	while (j->rc == 0 && !r.done) {
		j->rc = run_step(&r);
		if (!ramped && nvp_env_get_ticks() >= g_ramp_end) {
			cpu0 = thread_cpu_ns(); /* CPU time counts from the end of the ramp */
			ramped = true;
		}
	}
	j->cpu_ns = thread_cpu_ns() - cpu0;
	run_close(&r);
	atomic_fetch_add(&g_finished, 1);
	return NULL;
}

static int
make_bdev(struct nvp_bdev **b)
{
	struct nvp_bdev_nvme_opts no;
	struct nvp_bdev_null_opts nu;
	struct nvp_bdev_uring_opts uo;
	char trid[512];
	uint64_t mib;
	int rc;

	if (strncmp(g_o.bdev_spec, "null:", 5) == 0) {
		nvp_bdev_null_opts_init(&nu, sizeof(nu));
		if (nvp_strtou64(g_o.bdev_spec + 5, 1, 1u << 20, &mib) != 0) {
			return -EINVAL;
		}
		nu.name = g_bdev_name = "null0";
		nu.num_blocks = mib * 2048;
		return nvp_bdev_null_create(&nu, b);
	}
	if (strncmp(g_o.bdev_spec, "uring:", 6) == 0) {
		nvp_bdev_uring_opts_init(&uo, sizeof(uo));
		uo.name = g_bdev_name = "mixu0";
		uo.filename = g_o.bdev_spec + 6;
		rc = nvp_bdev_uring_create(&uo, b);
		if (rc != 0) {
			fprintf(stderr, "nvp_bench_mix: cannot open '%s': %s\n", uo.filename,
				strerror(-rc));
		}
		return rc;
	}
	nvp_bdev_nvme_opts_init(&no, sizeof(no));
	no.name = "mix0";
	g_bdev_name = "mix0n1";
	snprintf(trid, sizeof(trid), "trtype:emu name:mix0 %s", g_o.bdev_spec + 4);
	rc = nvp_bdev_nvme_attach(trid, &no, b, 1, NULL);
	if (rc != 0) {
		fprintf(stderr, "nvp_bench_mix: cannot attach '%s': %s\n", trid, strerror(-rc));
	}
	return rc;
}

static int
setup(struct nvp_bdev **b)
{
	struct nvp_env_opts eo;
	char name[32], params[256], params_buf[256], *colon;
	int rc;

	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "nvp_bench_mix";
	eo.no_pci = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc == 0) {
		rc = make_bdev(b);
	}
	if (rc == 0 && g_o.wbt_lat_us >= 0) {
		snprintf(params, sizeof(params), "lat_us=%" PRId64, g_o.wbt_lat_us);
		rc = nvp_bdev_set_admission(*b, "wbt", params);
	}
	if (rc == 0) {
		nvp_strlcpy(params_buf, g_o.sched, sizeof(params_buf));
		colon = strchr(params_buf, ':');
		if (colon != NULL) {
			*colon = '\0';
		}
		nvp_strlcpy(name, params_buf, sizeof(name));
		rc = nvp_bdev_set_scheduler(*b, name, colon != NULL ? colon + 1 : NULL);
	}
	return rc;
}

/* The wbt stage's and kyber's state into @now's interval. */
static void
sample(struct nvp_bdev *b, uint64_t now)
{
	struct nvp_wbt_info wi = { .info_size = sizeof(wi) };
	struct nvp_sched_info si = { .info_size = sizeof(si) };
	uint32_t iv = interval_of(now);

	if (nvp_bdev_wbt_get_info(b, &wi) == 0) {
		g_iv[iv].step = wi.step;
		g_iv[iv].depth = wi.limit_background;
		g_iv[iv].sampled = true;
	}
	if (nvp_bdev_sched_get_info(b, &si) == 0 && strcmp(si.name, "kyber") == 0) {
		g_iv[iv].ky_depth[0] = si.kyber_depth[NVP_SCHED_KYBER_READ];
		g_iv[iv].ky_depth[1] = si.kyber_depth[NVP_SCHED_KYBER_WRITE];
		g_iv[iv].ky_sampled = true;
	}
}

static void
sample_until_done(struct nvp_bdev *b)
{
	uint64_t end = g_t0 + (uint64_t)(g_o.seconds * (double)g_hz), now;

	while ((now = nvp_env_get_ticks()) < end && !atomic_load(&g_stop) &&
	       atomic_load(&g_finished) < g_num_jobs) {
		sample(b, now);
		nvp_env_delay_us((uint32_t)g_o.interval_ms * 250); /* four samples an interval */
	}
	atomic_store(&g_stop, true);
}

/* --inline: this thread runs the controller from now on. */
static int
inline_on(void)
{
	int rc;

	g_emu = nvp_emu_ctrlr_find("mix0");
	rc = g_emu == NULL ? -ENODEV : nvp_emu_ctrlr_set_inline(g_emu, true);
	if (rc != 0) {
		fprintf(stderr, "nvp_bench_mix: cannot run the controller inline: %s\n",
			strerror(-rc));
		g_emu = NULL;
	}
	return rc;
}

/*
 * One round: the controller (--inline), then each live stage. \return stages live;
 * *@busy: whether the controller or a stage did anything.
 */
static uint32_t
stages_round(struct run *runs, uint64_t *emu_ticks, bool *busy)
{
	uint64_t t = nvp_env_get_ticks(), t2;
	uint32_t k, live = 0;

	*busy = false;
	if (g_emu != NULL) {
		while (nvp_emu_ctrlr_poll(g_emu) > 0) {
			*busy = true;
		}
		t2 = nvp_env_get_ticks();
		*emu_ticks += t2 - t;
		t = t2;
	}
	for (k = 0; k < g_num_jobs; k++) {
		if (runs[k].done) {
			continue;
		}
		g_jobs[k].rc = run_step(&runs[k]);
		t2 = nvp_env_get_ticks();
		runs[k].ticks += t2 - t;
		t = t2;
		*busy |= runs[k].busy;
		live += g_jobs[k].rc == 0 && !runs[k].done;
		if (g_jobs[k].rc != 0) {
			atomic_store(&g_stop, true);
		}
	}
	return live;
}

/*
 * --idle-sleep: nothing to do until the controller's next completion (or @limit). With
 * none in service, poll on: a submission may not have reached the controller yet.
 */
static void
idle_sleep(uint64_t limit)
{
	uint64_t now = nvp_env_get_ticks(), due = nvp_emu_ctrlr_next_due(g_emu);
	uint64_t margin = g_hz / 100000; /* wake 10 us early, then poll */
	struct timespec ts;
	uint64_t ns;

	due = NVP_MIN(due, limit);
	if (nvp_emu_ctrlr_next_due(g_emu) == UINT64_MAX || due <= now + 2 * margin) {
		return;
	}
	ns = (due - now - margin) * 1000000000ull / g_hz;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	nanosleep(&ts, NULL);
}

/* --one-thread: every job is a stage of this thread (and the controller with --inline). */
static void
stages_run(struct nvp_bdev *b)
{
	struct run runs[MAX_JOBS];
	uint64_t cpu, cpu0, end, now, next = 0, emu_ticks = 0, total;
	uint32_t k, opened = 0;
	bool busy, ramped = false;
	int rc = 0;

	if (g_o.idle_sleep) {
		prctl(PR_SET_TIMERSLACK, 1UL); /* wake when asked, not up to 50 us later */
	}
	for (; opened < g_num_jobs && rc == 0; opened++) {
		rc = run_open(&runs[opened], &g_jobs[opened],
			      g_jobs[opened].share >= 0 ? &runs[g_jobs[opened].share] : NULL);
	}
	if (rc == 0 && g_o.inline_emu) {
		rc = inline_on();
		g_jobs[0].rc = rc;
	}
	g_t0 = nvp_env_get_ticks();
	g_ramp_end = g_t0 + (uint64_t)(g_o.ramp * (double)g_hz);
	end = g_t0 + (uint64_t)(g_o.seconds * (double)g_hz);
	cpu0 = thread_cpu_ns();
	while (rc == 0) {
		now = nvp_env_get_ticks();
		if (now >= end) {
			atomic_store(&g_stop, true);
		}
		if (!ramped && now >= g_ramp_end) {
			cpu0 = thread_cpu_ns(); /* CPU time counts from the end of the ramp */
			emu_ticks = 0;
			for (k = 0; k < opened; k++) {
				runs[k].ticks = 0;
			}
			ramped = true;
		}
		if (now >= next) {
			sample(b, now);
			next = now + g_o.interval_ms * g_hz / 4000; /* four samples an interval */
		}
		if (stages_round(runs, &emu_ticks, &busy) == 0) {
			break;
		}
		if (g_o.idle_sleep && !busy) {
			idle_sleep(NVP_MIN(next, end));
		}
	}
	cpu = thread_cpu_ns() - cpu0;
	total = emu_ticks;
	for (k = 0; k < opened; k++) {
		total += runs[k].ticks;
	}
	for (k = 0; k < opened && total != 0; k++) {
		g_jobs[k].cpu_ns = (uint64_t)((double)cpu * (double)runs[k].ticks / (double)total);
	}
	g_emu_cpu_ns = total != 0 ? (uint64_t)((double)cpu * (double)emu_ticks / (double)total) : 0;
	atomic_store(&g_stop, true);
	for (k = 0; k < opened; k++) {
		while (runs[k].ch != NULL && !runs[k].done && run_step(&runs[k]) == 0) {
			if (g_emu != NULL) {
				nvp_emu_ctrlr_poll(g_emu);
			}
		}
	}
	if (g_emu != NULL) {
		nvp_emu_ctrlr_set_inline(g_emu, false); /* closing channels needs the admin queue */
		g_emu = NULL;
	}
	for (k = opened; k-- > 0;) { /* borrowers before their owners */
		run_close(&runs[k]);
	}
}

static const char *
rw_name(const struct job *j)
{
	return j->write ? (j->rand ? "randwrite" : "write") : (j->rand ? "randread" : "read");
}

static void
report(struct nvp_bdev *b, double secs, double measured)
{
	struct nvp_wbt_info wi = { .info_size = sizeof(wi) };
	struct nvp_sched_info si = { .info_size = sizeof(si) };
	const struct nvp_histogram *h;
	uint32_t i, k, n = (uint32_t)NVP_MIN(secs * 1000 / g_o.interval_ms, (double)g_num_iv);
	bool wbt = nvp_bdev_wbt_get_info(b, &wi) == 0;

	for (i = 0; i < n; i++) {
		printf("interval t_ms=%" PRIu64, (uint64_t)(i + 1) * g_o.interval_ms);
		for (k = 0; k < g_num_jobs; k++) {
			h = &g_iv[i].lat[k];
			printf(" j%u_ios=%" PRIu64 " j%u_p99_us=%.1f j%u_max_us=%.1f j%u_mib=%.3f",
			       k, nvp_histogram_count(h), k,
			       nvp_histogram_value_at_percentile(h, 99) / 1e3, k,
			       nvp_histogram_max(h) / 1e3, k,
			       atomic_load(&g_iv[i].bytes[k]) / 1048576.0);
		}
		if (wbt && g_iv[i].sampled) {
			printf(" step=%d depth=%u", g_iv[i].step, g_iv[i].depth);
		}
		if (g_iv[i].ky_sampled) {
			printf(" kyber_read_depth=%u kyber_write_depth=%u", g_iv[i].ky_depth[0],
			       g_iv[i].ky_depth[1]);
		}
		printf("\n");
	}
	for (k = 0; k < g_num_jobs; k++) {
		struct job *j = &g_jobs[k];

		h = &j->hist;
		printf("job id=%u rw=%s bs=%" PRIu64 " qd=%" PRIu64 " tenant=%" PRIu64
		       " ios=%" PRIu64 " iops=%.0f mib_s=%.2f mean_us=%.1f p50_us=%.1f p99_us=%.1f "
		       "p999_us=%.1f max_us=%.1f cpu_s=%.3f cpu_ns_per_io=%.0f\n",
		       k, rw_name(j), j->bs, j->qd, j->tenant, j->ios, j->ios / measured,
		       j->bytes / 1048576.0 / measured, nvp_histogram_mean(h) / 1e3,
		       nvp_histogram_value_at_percentile(h, 50) / 1e3,
		       nvp_histogram_value_at_percentile(h, 99) / 1e3,
		       nvp_histogram_value_at_percentile(h, 99.9) / 1e3, nvp_histogram_max(h) / 1e3,
		       j->cpu_ns / 1e9, j->ios != 0 ? (double)j->cpu_ns / (double)j->ios : 0.0);
	}
	nvp_bdev_sched_get_info(b, &si);
	printf("summary seconds=%.3f wbt=%s throttled=%" PRIu64 " deferred_ms=%" PRIu64
	       " steps_up=%" PRIu64 " steps_down=%" PRIu64 " sched=%s dispatched=%" PRIu64,
	       secs, wbt ? "on" : "off", wbt ? wi.throttled : 0, wbt ? wi.deferred_us / 1000 : 0,
	       wbt ? wi.steps_up : 0, wbt ? wi.steps_down : 0, si.name, si.dispatched);
	printf(" inline=%d kyber_depth=%u/%u/%u/%u kyber_windows=%" PRIu64
	       " kyber_congested=%" PRIu64 "\n",
	       g_o.inline_emu, si.kyber_depth[0], si.kyber_depth[1], si.kyber_depth[2],
	       si.kyber_depth[3], si.kyber_windows, si.kyber_congested);
	if (g_o.inline_emu) {
		printf("summary_emu emu_cpu_s=%.3f\n", g_emu_cpu_ns / 1e9);
	}
}

int
main(int argc, char **argv)
{
	struct nvp_bdev *b = NULL;
	uint32_t i, k;
	double secs;
	int rc;

	if (parse_args(argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
	g_num_iv = (uint32_t)NVP_MIN(g_o.seconds * 1000 / g_o.interval_ms + 2, MAX_INTERVALS);
	g_iv = calloc(g_num_iv, sizeof(*g_iv));
	if (g_iv == NULL) {
		return 1;
	}
	for (i = 0; i < g_num_iv; i++) {
		for (k = 0; k < MAX_JOBS; k++) {
			nvp_histogram_init(&g_iv[i].lat[k]);
		}
	}
	rc = setup(&b);
	if (rc != 0) {
		fprintf(stderr, "nvp_bench_mix: set-up failed: %s\n", strerror(-rc));
		nvp_bdev_fini();
		free(g_iv);
		return rc == -EINVAL ? 2 : 1;
	}
	g_hz = nvp_env_get_ticks_hz();
	g_t0 = nvp_env_get_ticks();
	g_ramp_end = g_t0 + (uint64_t)(g_o.ramp * (double)g_hz);
	for (k = 0; k < g_num_jobs; k++) {
		nvp_histogram_init(&g_jobs[k].hist);
		if (!g_o.one_thread) {
			pthread_create(&g_jobs[k].thread, NULL, job_main, &g_jobs[k]);
		}
	}
	if (g_o.one_thread) {
		stages_run(b);
	} else {
		sample_until_done(b);
	}
	for (k = 0; k < g_num_jobs; k++) {
		if (!g_o.one_thread) {
			pthread_join(g_jobs[k].thread, NULL);
		}
		if (g_jobs[k].rc != 0) {
			fprintf(stderr, "nvp_bench_mix: job %u failed: %s\n", k,
				strerror(-g_jobs[k].rc));
			rc = 1;
		}
	}
	secs = (nvp_env_get_ticks() - g_t0) / (double)g_hz;
	if (rc == 0) {
		report(b, secs, NVP_MAX(secs - g_o.ramp, 1e-9));
	}
	nvp_bdev_fini();
	nvp_env_fini();
	free(g_iv);
	return rc;
}
