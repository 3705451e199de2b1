/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_model.c: the latency distributions (with a fixed seed, so the
 * empirical figures are the same every run), their parser, determinism, and the write
 * cache / program / read interference model driven with explicit times: read priority,
 * program suspend and its limit, reads holding their channel, indirection units, and a
 * cache that fills and then runs at the program rate. Presets: emu_preset_ut.c.
 */
#include "emu_ut_sim.h"

#define N_SAMPLES 200000u

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sample @d N_SAMPLES times: mean, p50, p99 (ns). */
static void
stats_of(const struct emu_dist *d, uint64_t seed, double *mean, double *p50, double *p99)
{
	double *v = malloc(N_SAMPLES * sizeof(*v));
	double sum = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	for (uint32_t i = 0; i < N_SAMPLES; i++) {
		v[i] = emu_dist_sample(d, &seed);
		sum += v[i];
	}
	qsort(v, N_SAMPLES, sizeof(*v), cmp_double);
	*mean = sum / N_SAMPLES;
	*p50 = v[N_SAMPLES / 2];
	*p99 = v[N_SAMPLES / 100 * 99];
	free(v);
}

static bool
near(double got, double want, double tol)
{
	return got >= want * (1 - tol) && got <= want * (1 + tol);
}

static void
test_parse(void)
{
	struct emu_dist d;

	CU_ASSERT_EQUAL(emu_dist_parse("80us", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_FIXED && d.a == 80000);
	CU_ASSERT_EQUAL(emu_dist_parse("fixed:2ms", &d), 0);
	CU_ASSERT(d.a == 2e6);
	CU_ASSERT_EQUAL(emu_dist_parse("uniform:50:150", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_UNIFORM && d.a == 50000 && d.b == 150000);
	CU_ASSERT_EQUAL(emu_dist_parse("exp:500ns", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_EXP && d.a == 500);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:400us", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_LOGNORMAL && d.a == 80000 && d.b == 400000);
	CU_ASSERT_EQUAL(emu_dist_parse("bimodal:80us:2ms:1%", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_BIMODAL && d.b == 2e6 && d.c == 0.01);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:100us:150us", &d), 0);
	CU_ASSERT(d.kind == EMU_DIST_LOGNORMAL && d.a == 80000 && d.b == 100000 && d.c == 150000);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:100us", &d), 0);
	CU_ASSERT(d.c == 0);

	CU_ASSERT_EQUAL(emu_dist_parse("", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:400us:80us", &d), -EINVAL); /* p99 < p50 */
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:0:80us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("uniform:5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("gauss:5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("fixed:5parsecs", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("bimodal:1:2:150%", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("-5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("exp:1:2:3:4:5", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:100us:90us", &d), -EINVAL); /* p99.9<p99 */
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:100us:1%", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("uniform:1us:2us:3us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:80us:100us:150us:200us", &d), -EINVAL);
}

static void
test_distributions(void)
{
	struct emu_dist d;
	double mean, p50, p99;

	emu_dist_parse("uniform:50us:150us", &d);
	stats_of(&d, 7, &mean, &p50, &p99);
	CU_ASSERT(near(mean, 100000, 0.01));
	CU_ASSERT(near(p99, 149000, 0.01));

	emu_dist_parse("exp:80us", &d);
	stats_of(&d, 7, &mean, &p50, &p99);
	CU_ASSERT(near(mean, 80000, 0.02));
	CU_ASSERT(near(p50, 80000 * 0.693147, 0.02)); /* median of exp: mean ln 2 */
	CU_ASSERT(near(p99, 80000 * 4.60517, 0.05));  /* mean ln 100 */

	emu_dist_parse("lognormal:80us:400us", &d);
	stats_of(&d, 7, &mean, &p50, &p99);
	CU_ASSERT(near(p50, 80000, 0.02));
	CU_ASSERT(near(p99, 400000, 0.05));
	CU_ASSERT(near(mean, emu_dist_mean(&d), 0.03));

	emu_dist_parse("bimodal:80us:2ms:1%", &d);
	stats_of(&d, 7, &mean, &p50, &p99);
	CU_ASSERT(p50 == 80000);
	CU_ASSERT(near(mean, 80000 * 0.99 + 2e6 * 0.01, 0.05));
	/* the 1 % slow ones: p99 sits at the edge, p99.5 would be slow */
	CU_ASSERT(p99 == 80000 || p99 == 2e6);
}

static void
test_seed_determinism(void)
{
	struct emu_dist d;
	uint64_t a = 42, b = 42, c = 43;
	bool differs = false;

	emu_dist_parse("lognormal:80us:400us", &d);
	for (int i = 0; i < 1000; i++) {
		double x = emu_dist_sample(&d, &a), y = emu_dist_sample(&d, &b);
		double z = emu_dist_sample(&d, &c);

		CU_ASSERT(x == y);
		differs |= x != z;
	}
	CU_ASSERT(differs);
}

static void
test_presets_and_opts(void)
{
	struct nvp_emu_opts o;
	char err[256];

	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.seed, 1);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "preset=tlc channels=8", err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(o.preset, "tlc");
	CU_ASSERT_EQUAL(o.channels, 8); /* later keys override */
	CU_ASSERT(o.wcache_mb > 0 && o.prog_mbps > 0);
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "preset=hdd", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "scm, tlc or qlc"));
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "read_lat=lognormal:9:3", err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "read_lat"));
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "seed=123456789012", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.seed, 123456789012ull);
	nvp_emu_opts_init(&o, sizeof(o));
	o.wcache_mb = 4;
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), -EINVAL);
	for (const char *p = "scm"; p != NULL; p = strcmp(p, "scm") == 0 ? "tlc" :
						   strcmp(p, "tlc") == 0 ? "qlc" :
									   NULL) {
		CU_ASSERT_PTR_NOT_NULL(emu_preset_find(p));
	}
}

static uint64_t
us(struct emu_ctrlr *c, double v)
{
	return (uint64_t)(v * (double)c->ticks_hz / 1e6);
}

static void
svc_in(struct emu_ctrlr *c, uint64_t svc, double lo_us, double hi_us)
{
	CU_ASSERT(svc >= us(c, lo_us) && svc <= us(c, hi_us));
}

/*
 * 4 channels, 1 MiB cache (256 KiB a channel), 40 MB/s program (10 MB/s a channel: 4 KiB
 * take 409.6 us).
 */
static void
test_write_cache_and_interference(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("channels=4 read_lat=50us write_lat=10us "
					   "wcache_mb=1 prog_mbps=40 prog_us=100");
	uint64_t now = us(c, 1000000), svc, tol;
	uint32_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	tol = us(c, 0.01);
	/* An idle channel: the read takes its latency. */
	svc = emu_model_read(c, 0, 4096, now);
	CU_ASSERT(svc >= us(c, 50) - tol && svc <= us(c, 50) + tol);
	/* Writes into the cache complete at write_lat until it is full (256 x 4 KiB). */
	do {
		svc = emu_model_write(c, (uint64_t)n * 16384, 4096, now);
		n++;
	} while (svc <= us(c, 10) + tol && n < 1000);
	CU_ASSERT_EQUAL(n, 257);
	/* The write that does not fit waits until its channel has programmed 4 KiB to make
	 * room for it, then goes into the cache: 409.6 + 10 us. */
	CU_ASSERT(svc > us(c, 419.5) && svc < us(c, 419.7));
	CU_ASSERT_EQUAL(c->stats.writes_throttled, 1);
	/* A read on a programming channel waits for the operation in progress only. */
	svc = emu_model_read(c, 16384, 4096, now + us(c, 30));
	CU_ASSERT(svc > us(c, 50) + tol && svc <= us(c, 150) + tol);
	CU_ASSERT_EQUAL(c->stats.reads_delayed, 1);
	/* On the channel where a write waits for room, the read waits behind it first. */
	svc = emu_model_read(c, 0, 4096, now + us(c, 30));
	CU_ASSERT(svc >= us(c, 409.6 - 30 + 50) && svc <= us(c, 409.6 - 30 + 150) + tol);
	CU_ASSERT_EQUAL(c->stats.reads_delayed, 2);
	/* Once that write is in, only the program in progress is in the way. */
	svc = emu_model_read(c, 0, 4096, now + us(c, 410));
	CU_ASSERT(svc <= us(c, 150) + tol);
	/* Flush: until every channel has programmed what it holds (65 x 409.6 us). */
	svc = emu_model_flush(c, now);
	CU_ASSERT(svc > us(c, 26000) && svc < us(c, 27000));
	CU_ASSERT_EQUAL(emu_model_flush(c, now + svc), 0);
	/* Drained: writes are fast again, reads do not wait. */
	CU_ASSERT(emu_model_write(c, 0, 4096, now + svc) <= us(c, 10) + tol);
	emu_ctrlr_free(c);
}

/*
 * A write flood: reads wait in proportion to the writes waiting for cache room on their
 * channel, so fewer writes in flight mean shorter reads, at the same write throughput.
 * 2 channels, 1 MiB cache, 20 MB/s (64 KiB take 6.5536 ms a channel), 128 KiB writes
 * striped over both channels (64 KiB each).
 */
static uint64_t
flood_read(uint32_t depth, uint64_t *wr_bytes_per_s)
{
	struct emu_ctrlr *c = ut_ctrlr_new("channels=2 read_lat=50us write_lat=10us "
					   "wcache_mb=1 prog_mbps=20");
	uint64_t t = us(c, 1000), done[64] = { 0 }, off = 0, bytes = 0, rd;
	uint64_t t_end = t + us(c, 2000000);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* @depth writers each resubmit when their write completes, for 2 s. */
	for (;;) {
		uint32_t k = 0;

		for (uint32_t i = 1; i < depth; i++) {
			k = done[i] < done[k] ? i : k;
		}
		t = NVP_MAX(t, done[k]);
		if (t >= t_end) {
			break;
		}
		bytes += done[k] != 0 ? 131072 : 0; /* completed within the 2 s */
		done[k] = t + emu_model_write(c, off, 131072, t);
		off = (off + 131072) % (1u << 30);
	}
	*wr_bytes_per_s = bytes / 2;
	rd = emu_model_read(c, 0, 4096, t);
	emu_ctrlr_free(c);
	return rd;
}

static void
test_reads_behind_write_flood(void)
{
	uint64_t bw64, bw4, bw1, rd64, rd4, rd1;
	struct emu_ctrlr *c = ut_ctrlr_new("read_lat=50us");

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	rd64 = flood_read(64, &bw64);
	rd4 = flood_read(4, &bw4);
	rd1 = flood_read(1, &bw1);
	/* 64 writes in flight: ~63 x 64 KiB wait on each channel, 400 ms. */
	CU_ASSERT(rd64 > us(c, 300000));
	/* 4 in flight: 3 x 64 KiB at most, 20 ms; 1: nothing waits for room. */
	CU_ASSERT(rd4 < us(c, 20000) && rd4 * 10 < rd64);
	CU_ASSERT(rd1 <= us(c, 50) + us(c, 0.01));
	/* The program rate (20 MB/s, and the 1 MiB cache filled once) bounds the writer,
	 * whatever its depth. */
	CU_ASSERT(bw64 > 19000000 && bw64 < 21000000);
	CU_ASSERT(bw4 > 19000000 && bw4 < 21000000);
	CU_ASSERT(bw1 > 19000000 && bw1 < 21000000);
	emu_ctrlr_free(c);
}

/* A write's bytes go to the channels of the 16 KiB stripes it covers. */
static void
test_write_striping(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("channels=8 write_lat=10us prog_mbps=80");
	uint64_t now = us(c, 1000);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* No cache: a write is done when programmed. 96 KiB from 32 KiB: 16 KiB on each of
	 * channels 2..7, at 10 MB/s a channel: 1638.4 us. */
	svc_in(c, emu_model_write(c, 32768, 98304, now), 1648.3, 1648.5);
	for (uint32_t ch = 2; ch < 8; ch++) {
		svc_in(c, c->model.ch[ch].prog_until - now, 1638.3, 1638.5);
	}
	CU_ASSERT_EQUAL(c->model.ch[0].prog_until, 0);
	CU_ASSERT_EQUAL(c->model.ch[1].prog_until, 0);
	/* 4 KiB on idle channel 0: 409.6 us programming + 10 us. */
	svc_in(c, emu_model_write(c, 0, 4096, now), 419.5, 419.7);
	emu_ctrlr_free(c);
}

static void
test_transfer_rate(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("read_lat=20us xfer_mbps=1000");
	uint64_t small, big;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	small = emu_model_read(c, 0, 4096, 1);
	big = emu_model_read(c, 0, 131072, 1);
	/* 124 KiB more at 1000 MB/s: 126.976 us */
	CU_ASSERT(big - small >= us(c, 126.9) && big - small <= us(c, 127.1));
	emu_ctrlr_free(c);
}

/* Same seed, same sequence of service times through a whole controller. */
static void
test_ctrlr_seed(void)
{
	struct emu_ctrlr *a = ut_ctrlr_new("read_lat=exp:80us seed=9");
	struct emu_ctrlr *b = ut_ctrlr_new("read_lat=exp:80us seed=9");

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (int i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(emu_model_read(a, 0, 4096, 1), emu_model_read(b, 0, 4096, 1));
	}
	emu_ctrlr_free(a);
	emu_ctrlr_free(b);
}

/* lognormal:P50:P99:P99.9: the three quantiles where they are asked for, and its mean. */
static void
test_lognormal_tail(void)
{
	double *v = malloc(N_SAMPLES * sizeof(*v)), sum = 0;
	struct emu_dist d;
	uint64_t seed = 11;

	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL_FATAL(emu_dist_parse("lognormal:80us:100us:200us", &d), 0);
	for (uint32_t i = 0; i < N_SAMPLES; i++) {
		v[i] = emu_dist_sample(&d, &seed);
		sum += v[i];
	}
	CU_ASSERT(near(ut_sim_quantile(v, N_SAMPLES, 0.5), 80000, 0.01));
	CU_ASSERT(near(ut_sim_quantile(v, N_SAMPLES, 0.99), 100000, 0.01));
	CU_ASSERT(near(ut_sim_quantile(v, N_SAMPLES, 0.999), 200000, 0.05));
	/* past the p99.9 the tail keeps its p99..p99.9 slope: p99.99 near 2^(1.39/0.76) */
	CU_ASSERT(ut_sim_quantile(v, N_SAMPLES, 0.9999) > 300000);
	CU_ASSERT(near(sum / N_SAMPLES, emu_dist_mean(&d), 0.01));
	/* The same body as the two-figure form (same seed, same samples up to the p99), and a
	 * heavier tail past it. */
	free(v);
	v = NULL;
	{
		struct emu_dist d2;
		uint64_t s2 = 11, s3 = 11;
		uint32_t tail = 0;

		CU_ASSERT_EQUAL_FATAL(emu_dist_parse("lognormal:80us:100us", &d2), 0);
		for (uint32_t i = 0; i < 100000; i++) {
			double x2 = emu_dist_sample(&d2, &s2), x3 = emu_dist_sample(&d, &s3);

			CU_ASSERT_FATAL(x2 <= 100000 ? x3 == x2 : x3 > x2);
			tail += x2 > 100000;
		}
		CU_ASSERT(tail > 900 && tail < 1100);
	}
	free(v);
}

/* A controller whose one channel programs at 4 MB/s (4 KiB in 1024 us), in 1 ms operations. */
#define ONE_CHANNEL "channels=1 read_lat=50us write_lat=10us wcache_mb=1 prog_mbps=4 prog_us=1000 "

/* The longest and shortest wait of 300 reads every 37 us into 16 ms of programming. */
static void
waits_behind_program(struct emu_ctrlr *c, double *min_us, double *max_us, uint64_t *flush)
{
	uint64_t t = us(c, 1000), svc;

	*min_us = 1e9;
	*max_us = 0;
	emu_model_write(c, 0, 65536, t); /* 16 x 1024 us of programming */
	for (uint32_t i = 0; i < 300; i++) {
		svc = emu_model_read(c, 0, 4096, t + us(c, 37.0 * i));
		*min_us = NVP_MIN(*min_us, (double)svc * 1e6 / (double)c->ticks_hz - 50);
		*max_us = NVP_MAX(*max_us, (double)svc * 1e6 / (double)c->ticks_hz - 50);
	}
	*flush = emu_model_flush(c, t);
}

/* Without suspend a read waits up to a whole program operation; with it, suspend_us. */
static void
test_prog_suspend_bounds_wait(void)
{
	struct emu_ctrlr *a = ut_ctrlr_new(ONE_CHANNEL);
	struct emu_ctrlr *b = ut_ctrlr_new(ONE_CHANNEL "prog_suspend=1 suspend_us=20");
	double lo, hi;
	uint64_t fa, fb;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	waits_behind_program(a, &lo, &hi, &fa);
	CU_ASSERT(lo > 0 && hi <= 1000.01 && hi > 950); /* the rest of the operation */
	CU_ASSERT_EQUAL(a->stats.reads_delayed, 300);
	CU_ASSERT_EQUAL(a->stats.reads_suspended, 0);
	waits_behind_program(b, &lo, &hi, &fb);
	CU_ASSERT(lo > 19.99 && hi < 20.01); /* every read: the suspend latency, no more */
	CU_ASSERT_EQUAL(b->stats.reads_suspended, 300);
	CU_ASSERT_EQUAL(b->stats.reads_delayed, 300);
	/* The programs resume after each read: 300 x (20 + 50) us later. Reads every 37 us
	 * keep one operation suspended throughout: why controllers limit suspends. */
	CU_ASSERT(fa >= us(a, 16384 - 0.01) && fa <= us(a, 16384 + 0.01));
	CU_ASSERT(fb >= us(b, 16384 + 21000 - 0.5) && fb <= us(b, 16384 + 21000 + 0.5)); /* ticks */
	emu_ctrlr_free(a);
	emu_ctrlr_free(b);
}

/* suspend_max: an operation suspended that many times makes the next read wait for it. */
static void
test_suspend_max(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new(ONE_CHANNEL
					   "prog_suspend=1 suspend_us=20 suspend_max=2");
	uint64_t t, svc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	t = us(c, 1000);
	emu_model_write(c, 0, 65536, t); /* programs until t + 16384: an operation ends at +384 */
	svc_in(c, emu_model_read(c, 0, 4096, t + us(c, 100)), 69.99, 70.01);
	svc_in(c, emu_model_read(c, 0, 4096, t + us(c, 110)), 69.99, 70.01);
	/* third read in the same operation (now ending at +384 + 2 x 70): it waits it out */
	svc = emu_model_read(c, 0, 4096, t + us(c, 120));
	svc_in(c, svc, 524 - 120 + 50 - 0.01, 524 - 120 + 50 + 0.01);
	CU_ASSERT_EQUAL(c->stats.reads_suspended, 2);
	/* the next operation may be suspended again */
	svc_in(c, emu_model_read(c, 0, 4096, t + us(c, 600)), 69.99, 70.01);
	CU_ASSERT_EQUAL(c->stats.reads_suspended, 3);
	emu_ctrlr_free(c);
}

/* A suspend that would take longer than the rest of the operation is not worth it. */
static void
test_suspend_not_longer_than_rest(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new(ONE_CHANNEL "prog_suspend=1 suspend_us=300");
	uint64_t t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	t = us(c, 1000);
	emu_model_write(c, 0, 65536, t);
	svc_in(c, emu_model_read(c, 0, 4096, t + us(c, 284)), 149.99, 150.01); /* 100 left */
	CU_ASSERT_EQUAL(c->stats.reads_suspended, 0);
	svc_in(c, emu_model_read(c, 0, 4096, t + us(c, 400)), 349.99, 350.01); /* 984 left */
	CU_ASSERT_EQUAL(c->stats.reads_suspended, 1);
	emu_ctrlr_free(c);
}

/*
 * read_prio: a read goes ahead of the writes waiting on its channel for cache room. One
 * channel, 1 MiB of cache, 10 MB/s: a 2 MiB write leaves 1 MiB waiting for room, 105 ms.
 */
static void
test_read_prio(void)
{
	const char *base = "channels=1 read_lat=50us write_lat=10us wcache_mb=1 prog_mbps=10 "
			   "prog_us=100 ";
	double wait_us[2];
	char opts[160];

	for (int p = 0; p < 2; p++) {
		struct emu_ctrlr *c;
		uint64_t t;

		snprintf(opts, sizeof(opts), "%sread_prio=%d", base, p);
		c = ut_ctrlr_new(opts);
		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		t = us(c, 1000);
		emu_model_write(c, 0, 2u << 20, t);
		wait_us[p] = (double)emu_model_read(c, 0, 4096, t + us(c, 1000)) * 1e6 /
				     (double)c->ticks_hz -
			     50;
		CU_ASSERT_EQUAL(c->stats.reads_delayed, 1);
		emu_ctrlr_free(c);
	}
	/* FIFO: behind 1 MiB at 10 MB/s (104.9 ms from the write), then an operation */
	CU_ASSERT(wait_us[0] > 104857.6 - 1000 - 0.1 && wait_us[0] < 104857.6 - 1000 + 100.1);
	/* read priority: only the operation in progress */
	CU_ASSERT(wait_us[1] > 0 && wait_us[1] <= 100.01);
}

/* read_busy: reads on one channel take turns; on another they do not wait. */
static void
test_read_busy(void)
{
	struct emu_ctrlr *a = ut_ctrlr_new("channels=2 read_lat=50us read_busy=1");
	struct emu_ctrlr *b = ut_ctrlr_new("channels=2 read_lat=50us");
	uint64_t t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	t = us(a, 1000);
	svc_in(a, emu_model_read(a, 0, 4096, t), 49.99, 50.01);
	svc_in(a, emu_model_read(a, 4096, 4096, t), 99.99, 100.01);
	svc_in(a, emu_model_read(a, 8192, 4096, t + us(a, 10)), 139.99, 140.01);
	svc_in(a, emu_model_read(a, 16384, 4096, t), 49.99, 50.01);          /* channel 1 */
	svc_in(a, emu_model_read(a, 0, 4096, t + us(a, 500)), 49.99, 50.01); /* idle again */
	for (int i = 0; i < 3; i++) {
		svc_in(b, emu_model_read(b, 0, 4096, t), 49.99, 50.01);
	}
	emu_ctrlr_free(a);
	emu_ctrlr_free(b);
}

/* With read_busy, channels bound the read IOPS: channels / latency at a deep queue. */
static void
test_read_busy_bounds_iops(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("channels=8 read_lat=100us read_busy=1");
	struct ut_sim_job r = { .qd = 256, .bs = 4096 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	ut_sim_run(c, &r, 1, 0.1, 1.1, 5);
	CU_ASSERT(r.ios > 79000 && r.ios <= 80000); /* 8 / 100 us = 80 K a second */
	emu_ctrlr_free(c);
}

/* A read that holds its channel delays the programs there by its own time. */
static void
test_read_busy_delays_programs(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new(ONE_CHANNEL "read_busy=1");
	uint64_t t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	t = us(c, 1000);
	emu_model_write(c, 0, 65536, t);
	emu_model_read(c, 0, 4096, t + us(c, 100)); /* after the operation in progress */
	svc_in(c, emu_model_flush(c, t), 16384 + 50 - 0.01, 16384 + 50 + 0.01);
	emu_ctrlr_free(c);
}

/*
 * iu_kb: a write programs every indirection unit it touches, whole. 4 channels at
 * 10 MB/s each, no cache: a write is done when programmed.
 */
static void
test_indirection_unit(void)
{
	struct emu_ctrlr *a = ut_ctrlr_new("channels=4 write_lat=10us prog_mbps=40 iu_kb=64");
	struct emu_ctrlr *b = ut_ctrlr_new("channels=4 write_lat=10us prog_mbps=40");
	uint64_t t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	t = us(a, 1000);
	/* 4 KiB inside unit 0: 64 KiB programmed, 16 KiB on each channel: 1638.4 us */
	svc_in(a, emu_model_write(a, 4096, 4096, t), 1648.39, 1648.41);
	svc_in(b, emu_model_write(b, 4096, 4096, t), 419.59, 419.61); /* 4 KiB: 409.6 us */
	/* 8 KiB across units 1 and 2: 128 KiB, 32 KiB a channel, behind the first 16 KiB */
	svc_in(a, emu_model_write(a, 3 * 65536 - 4096, 8192, t), 4925.19, 4925.21);
	/* a whole aligned unit costs what it is */
	svc_in(a, emu_model_write(a, 8 * 65536, 65536, t + us(a, 100000)), 1648.39, 1648.41);
	emu_ctrlr_free(a);
	emu_ctrlr_free(b);
}

/*
 * A cache that fills, then the program rate: writes at QD8 complete at write_lat until
 * the 4 MiB cache is full, then the writer gets 40 MB/s, the program rate, whatever its
 * depth.
 */
static void
test_cache_fills_then_program_rate(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("channels=4 write_lat=10us wcache_mb=4 prog_mbps=40");
	struct ut_sim_job w = { .write = true, .qd = 8, .bs = 65536, .seq = true };
	uint64_t t, svc, taken = 0;
	uint32_t fast = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* Into the cache at write latency while it has room: 64 x 64 KiB, a few more drained. */
	t = us(c, 1000);
	for (uint32_t i = 0; i < 80; i++) {
		svc = emu_model_write(c, (uint64_t)i * 65536, 65536, t + us(c, 10.0 * i));
		fast += svc <= us(c, 10.01);
		taken += svc <= us(c, 10.01) ? 65536 : 0;
	}
	CU_ASSERT(fast >= 64 && fast <= 65);
	CU_ASSERT(taken >= 4u << 20 && taken <= (4u << 20) + 65536);
	CU_ASSERT_EQUAL(c->stats.writes_throttled, 80 - fast);
	emu_ctrlr_free(c);
	/* Sustained: the program rate (1 s after a 1 s start). */
	c = ut_ctrlr_new("channels=4 write_lat=10us wcache_mb=4 prog_mbps=40");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	ut_sim_run(c, &w, 1, 1.0, 2.0, 3);
	CU_ASSERT(w.bytes > 39500000 && w.bytes < 40500000);
	emu_ctrlr_free(c);
}

static void
test_lateness(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("read_lat=10us");

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	emu_model_note_lateness(c, 100, 100);
	emu_model_note_lateness(c, 100, 100 + us(c, 20));
	CU_ASSERT_EQUAL(c->stats.timed_cpls, 2);
	CU_ASSERT(c->stats.late_ns_max >= 19990 && c->stats.late_ns_max <= 20010);
	CU_ASSERT_EQUAL(c->stats.late_over_10us, 1);
	CU_ASSERT_EQUAL(c->stats.late_ns_sum, c->stats.late_ns_max);
	emu_ctrlr_free(c);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_parse),
		UT_TEST(test_distributions),
		UT_TEST(test_seed_determinism),
		UT_TEST(test_presets_and_opts),
		UT_TEST(test_write_cache_and_interference),
		UT_TEST(test_reads_behind_write_flood),
		UT_TEST(test_write_striping),
		UT_TEST(test_transfer_rate),
		UT_TEST(test_ctrlr_seed),
		UT_TEST(test_lateness),
		UT_TEST(test_lognormal_tail),
		UT_TEST(test_prog_suspend_bounds_wait),
		UT_TEST(test_suspend_max),
		UT_TEST(test_suspend_not_longer_than_rest),
		UT_TEST(test_read_prio),
		UT_TEST(test_read_busy),
		UT_TEST(test_read_busy_bounds_iops),
		UT_TEST(test_read_busy_delays_programs),
		UT_TEST(test_indirection_unit),
		UT_TEST(test_cache_fills_then_program_rate),
	};

	return ut_run("emu_model", tests, NVP_COUNTOF(tests));
}
