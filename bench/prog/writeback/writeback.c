/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback challenge, one run: a reader thread does QD1 random reads while a writer
 * thread floods sequential background writes, both through one bdev over a software
 * controller, with the writeback throttle on (--wbt LAT_US) or off (--wbt off).
 *
 * Output (stdout, one record a line, "key=value" fields, for bench/writeback):
 *   interval t_ms=.. rd_ios=.. rd_p99_us=.. rd_max_us=.. wr_mib=.. step=.. depth=..
 *   summary mode=.. rd_ios=.. rd_iops=.. rd_p50_us=.. rd_p99_us=.. rd_p999_us=..
 *           rd_max_us=.. rd_mean_us=.. rd_cpu_s=.. wr_mib_s=.. wr_cpu_s=.. throttled=..
 *           deferred_ms=.. steps_up=.. steps_down=.. seconds=..
 * Exit status: 0; 1 if the run failed (I/O error, attach failure); 2 for a bad command
 * line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvpoll/bdev.h"
#include "nvpoll/env.h"
#include "nvpoll/histogram.h"
#include "nvpoll/util.h"
#include "nvpoll/wbt.h"

#define MAX_INTERVALS 4096u
#define MAX_QD 256u

struct opts {
	const char *emu;
	double seconds;
	int64_t wbt_lat_us; /* -1 = off */
	uint64_t depth;
	uint64_t reader_bs;
	uint64_t writer_bs;
	uint64_t writer_qd;
	uint64_t interval_ms;
};

struct interval {
	struct nvp_histogram rd; /* reader latency, ns */
	_Atomic uint64_t wr_bytes;
	int32_t step;
	uint32_t depth;
	bool sampled; /* step and depth were read in this interval */
};

static struct opts g_o = {
	.emu = "size:1G channels:4 read_us:80 write_us:400",
	.seconds = 30,
	.wbt_lat_us = NVP_WBT_DEFAULT_LAT_US,
	.depth = NVP_WBT_DEFAULT_DEPTH,
	.reader_bs = 4096,
	.writer_bs = 128 * 1024,
	.writer_qd = 64,
	.interval_ms = 100,
};
static struct interval *g_iv;
static uint32_t g_num_iv;
static uint64_t g_t0, g_hz;
static atomic_bool g_stop;
static atomic_int g_failed;
static const char *g_bdev = "wb0n1";

static void
usage(FILE *f)
{
	fprintf(f, "usage: nvp_bench_writeback [--wbt LAT_US|off] [--seconds S] [--emu OPTS]\n"
		   "  [--depth N] [--reader-bs SIZE] [--writer-bs SIZE] [--writer-qd N]\n"
		   "  [--interval-ms MS]\n"
		   "One writeback-challenge run: a QD1 random reader against a flood of\n"
		   "sequential background writes, through the bdev layer over a software\n"
		   "controller (options as in include/nvpoll/emu.h; default '%s').\n",
		g_o.emu);
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

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
	atomic_store(&g_failed, 1);
	atomic_store(&g_stop, true);
}

struct io_ctx {
	uint64_t start;
	bool done;
	bool err;
	uint64_t bytes;
};

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct io_ctx *c = arg;

	c->done = true;
	c->err = nvme_cpl_is_error(cpl);
}

struct thread_out {
	int rc;
	uint64_t cpu_ns;
	uint64_t ios;
	uint64_t bytes;
	struct nvp_histogram *hist;
};

static int
open_channel(bool write, struct nvp_bdev_desc **desc, struct nvp_bdev_channel **ch)
{
	int rc = nvp_bdev_open(g_bdev, write, ignore_event, NULL, desc);

	if (rc == 0 && (rc = nvp_bdev_channel_create(*desc, NULL, ch)) != 0) {
		nvp_bdev_close(*desc);
	}
	return rc;
}

static void *
reader_main(void *arg)
{
	struct thread_out *out = arg;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct io_ctx c;
	uint64_t nblk, bs, x = 88172645463325252ull, now, cpu0 = thread_cpu_ns();
	void *buf = NULL;

	out->rc = open_channel(false, &desc, &ch);
	if (out->rc != 0) {
		return NULL;
	}
	bs = nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(desc));
	nblk = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(desc)) / (g_o.reader_bs / bs);
	buf = nvp_env_dma_malloc(g_o.reader_bs, 4096, NULL);
	out->rc = buf == NULL ? -ENOMEM : 0;
	while (out->rc == 0 && !atomic_load_explicit(&g_stop, memory_order_relaxed)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		c = (struct io_ctx){nvp_env_get_ticks(), false, false, 0};
		out->rc = nvp_bdev_read(desc, ch, buf, (x % nblk) * g_o.reader_bs, g_o.reader_bs,
					io_done, &c);
		while (out->rc == 0 && !c.done) {
			nvp_bdev_channel_poll(ch);
		}
		now = nvp_env_get_ticks();
		if (c.err) {
			out->rc = -EIO;
			break;
		}
		nvp_histogram_record(out->hist, (now - c.start) * 1000000000ull / g_hz);
		nvp_histogram_record(&g_iv[interval_of(now)].rd, (now - c.start) * 1000000000ull / g_hz);
		out->ios++;
	}
	out->cpu_ns = thread_cpu_ns() - cpu0;
	nvp_bdev_channel_destroy(ch);
	nvp_bdev_close(desc);
	nvp_env_dma_free(buf);
	return NULL;
}

static void *
writer_main(void *arg)
{
	struct thread_out *out = arg;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct io_ctx ctx[MAX_QD];
	uint32_t flags = nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, NVP_BDEV_HINT_NONE);
	uint64_t size, off = 0, cpu0 = thread_cpu_ns(), now;
	uint8_t *bufs;
	uint32_t i, inflight = 0;

	out->rc = open_channel(true, &desc, &ch);
	if (out->rc != 0) {
		return NULL;
	}
	size = nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(desc)) *
	       nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(desc));
	size -= size % g_o.writer_bs;
	bufs = nvp_env_dma_zmalloc(g_o.writer_bs * g_o.writer_qd, 4096, NULL);
	out->rc = bufs == NULL ? -ENOMEM : 0;
	for (i = 0; i < g_o.writer_qd; i++) {
		ctx[i].done = true;
		ctx[i].err = false;
	}
	while (out->rc == 0 && (!atomic_load_explicit(&g_stop, memory_order_relaxed) || inflight)) {
		nvp_bdev_channel_poll(ch);
		now = nvp_env_get_ticks();
		for (i = 0; i < g_o.writer_qd && out->rc == 0; i++) {
			if (!ctx[i].done) {
				continue;
			}
			if (ctx[i].bytes != 0) { /* one of ours just completed */
				out->rc = ctx[i].err ? -EIO : 0;
				atomic_fetch_add_explicit(&g_iv[interval_of(now)].wr_bytes,
							  ctx[i].bytes, memory_order_relaxed);
				out->bytes += ctx[i].bytes;
				out->ios++;
				ctx[i].bytes = 0;
				inflight--;
			}
			if (atomic_load_explicit(&g_stop, memory_order_relaxed)) {
				continue;
			}
			ctx[i] = (struct io_ctx){now, false, false, g_o.writer_bs};
			out->rc = nvp_bdev_write(desc, ch, bufs + i * g_o.writer_bs, off, g_o.writer_bs,
						 flags, io_done, &ctx[i]);
			inflight += out->rc == 0;
			off = (off + g_o.writer_bs) % size;
		}
	}
	while (nvp_bdev_channel_get_outstanding(ch) != 0) {
		nvp_bdev_channel_poll(ch);
	}
	out->cpu_ns = thread_cpu_ns() - cpu0;
	nvp_bdev_channel_destroy(ch);
	nvp_bdev_close(desc);
	nvp_env_dma_free(bufs);
	return NULL;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{"wbt", required_argument, NULL, 'w'},       {"seconds", required_argument, NULL, 't'},
		{"emu", required_argument, NULL, 'e'},       {"depth", required_argument, NULL, 'd'},
		{"reader-bs", required_argument, NULL, 'r'}, {"writer-bs", required_argument, NULL, 'b'},
		{"writer-qd", required_argument, NULL, 'q'}, {"interval-ms", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, rc = 0;
	char *end;

	while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (strcmp(optarg, "off") == 0) {
				g_o.wbt_lat_us = -1;
			} else if ((rc = nvp_strtou64(optarg, 0, 10000000, &v)) == 0) {
				g_o.wbt_lat_us = (int64_t)v;
			}
			break;
		case 't':
			g_o.seconds = strtod(optarg, &end);
			rc = *end != '\0' || g_o.seconds <= 0 || g_o.seconds > 3600 ? -EINVAL : 0;
			break;
		case 'e':
			g_o.emu = optarg;
			break;
		case 'd':
			rc = nvp_strtou64(optarg, 1, 65536, &g_o.depth);
			break;
		case 'r':
			rc = nvp_parse_size(optarg, &g_o.reader_bs);
			break;
		case 'b':
			rc = nvp_parse_size(optarg, &g_o.writer_bs);
			break;
		case 'q':
			rc = nvp_strtou64(optarg, 1, MAX_QD, &g_o.writer_qd);
			break;
		case 'i':
			rc = nvp_strtou64(optarg, 10, 10000, &g_o.interval_ms);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
		if (rc != 0) {
			fprintf(stderr, "nvp_bench_writeback: bad value '%s' for --%s\n", optarg,
				lo[optind > 0 ? 0 : 0].name);
		}
	}
	if (rc == 0 && (optind != argc || g_o.reader_bs == 0 || g_o.writer_bs == 0 ||
			g_o.reader_bs % 512 != 0 || g_o.writer_bs % 512 != 0)) {
		fprintf(stderr, "nvp_bench_writeback: sizes must be multiples of 512; no "
				"positional arguments\n");
		rc = -EINVAL;
	}
	return rc;
}

static int
setup(void)
{
	struct nvp_env_opts eo;
	struct nvp_bdev_nvme_opts no;
	struct nvp_bdev *b;
	char trid[512], params[64];
	int rc;

	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "nvp_bench_writeback";
	eo.no_pci = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc != 0) {
		return rc;
	}
	nvp_bdev_nvme_opts_init(&no, sizeof(no));
	no.name = "wb0";
	snprintf(trid, sizeof(trid), "trtype:emu name:wb0 %s", g_o.emu);
	rc = nvp_bdev_nvme_attach(trid, &no, &b, 1, NULL);
	if (rc != 0) {
		fprintf(stderr, "nvp_bench_writeback: cannot attach '%s': %s\n", trid, strerror(-rc));
		return rc;
	}
	if (g_o.wbt_lat_us >= 0) {
		snprintf(params, sizeof(params), "lat_us=%" PRId64 " depth=%" PRIu64, g_o.wbt_lat_us,
			 g_o.depth);
		rc = nvp_bdev_set_admission(b, "wbt", params);
	}
	return rc;
}

static void
sample_until_done(struct nvp_bdev *b)
{
	struct nvp_wbt_info wi = {.info_size = sizeof(wi)};
	uint64_t end = g_t0 + (uint64_t)(g_o.seconds * (double)g_hz), now;
	uint32_t iv;

	while ((now = nvp_env_get_ticks()) < end && !atomic_load(&g_stop)) {
		iv = interval_of(now);
		if (nvp_bdev_wbt_get_info(b, &wi) == 0) {
			g_iv[iv].step = wi.step;
			g_iv[iv].depth = wi.limit_background;
			g_iv[iv].sampled = true;
		}
		nvp_env_delay_us(g_o.interval_ms * 250); /* four samples an interval */
	}
	atomic_store(&g_stop, true);
}

static void
report(struct nvp_bdev *b, const struct thread_out *rd, const struct thread_out *wr,
       double secs)
{
	struct nvp_wbt_info wi = {.info_size = sizeof(wi)};
	const struct nvp_histogram *h;
	uint32_t i, n = NVP_MIN(interval_of(nvp_env_get_ticks()) + 1, g_num_iv);
	bool on = nvp_bdev_wbt_get_info(b, &wi) == 0;

	for (i = 0; i < n && (i + 1) * g_o.interval_ms <= secs * 1000 + 1; i++) {
		h = &g_iv[i].rd;
		printf("interval t_ms=%" PRIu64 " rd_ios=%" PRIu64 " rd_p99_us=%.1f rd_max_us=%.1f "
		       "wr_mib=%.3f",
		       (uint64_t)(i + 1) * g_o.interval_ms, nvp_histogram_count(h),
		       nvp_histogram_value_at_percentile(h, 99) / 1e3, nvp_histogram_max(h) / 1e3,
		       atomic_load(&g_iv[i].wr_bytes) / 1048576.0);
		if (on && g_iv[i].sampled) {
			printf(" step=%d depth=%u", g_iv[i].step, g_iv[i].depth);
		}
		printf("\n");
	}
	h = rd->hist;
	printf("summary mode=%s rd_ios=%" PRIu64 " rd_iops=%.0f rd_mean_us=%.1f rd_p50_us=%.1f "
	       "rd_p99_us=%.1f rd_p999_us=%.1f rd_max_us=%.1f rd_cpu_s=%.3f wr_mib_s=%.1f "
	       "wr_cpu_s=%.3f throttled=%" PRIu64 " deferred_ms=%" PRIu64 " steps_up=%" PRIu64
	       " steps_down=%" PRIu64 " seconds=%.3f\n",
	       on ? "on" : "off", rd->ios, rd->ios / secs, nvp_histogram_mean(h) / 1e3,
	       nvp_histogram_value_at_percentile(h, 50) / 1e3,
	       nvp_histogram_value_at_percentile(h, 99) / 1e3,
	       nvp_histogram_value_at_percentile(h, 99.9) / 1e3, nvp_histogram_max(h) / 1e3,
	       rd->cpu_ns / 1e9, wr->bytes / 1048576.0 / secs, wr->cpu_ns / 1e9,
	       on ? wi.throttled : 0, on ? wi.deferred_us / 1000 : 0, on ? wi.steps_up : 0,
	       on ? wi.steps_down : 0, secs);
}

int
main(int argc, char **argv)
{
	static struct nvp_histogram rd_hist;
	struct thread_out rd = {.hist = &rd_hist}, wr = {0};
	pthread_t rt, wt;
	struct nvp_bdev *b;
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
	for (uint32_t i = 0; i < g_num_iv; i++) {
		nvp_histogram_init(&g_iv[i].rd);
	}
	nvp_histogram_init(&rd_hist);
	rc = setup();
	if (rc != 0) {
		free(g_iv);
		return 1;
	}
	b = nvp_bdev_get_by_name(g_bdev);
	g_hz = nvp_env_get_ticks_hz();
	g_t0 = nvp_env_get_ticks();
	pthread_create(&rt, NULL, reader_main, &rd);
	pthread_create(&wt, NULL, writer_main, &wr);
	sample_until_done(b);
	pthread_join(rt, NULL);
	pthread_join(wt, NULL);
	secs = (nvp_env_get_ticks() - g_t0) / (double)g_hz;
	if (rd.rc != 0 || wr.rc != 0 || atomic_load(&g_failed)) {
		fprintf(stderr, "nvp_bench_writeback: run failed: reader %s, writer %s\n",
			strerror(-rd.rc), strerror(-wr.rc));
		rc = 1;
	} else {
		report(b, &rd, &wr, secs);
	}
	nvp_bdev_fini();
	nvp_env_fini();
	free(g_iv);
	return rc;
}
