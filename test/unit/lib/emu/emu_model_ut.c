/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_model.c: the latency distributions (with a fixed seed, so the
 * empirical figures are the same every run), their parser, the presets, determinism, and
 * the write cache / program / read interference model driven with explicit times.
 */
#include "emu_ut_helpers.h"

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

	CU_ASSERT_EQUAL(emu_dist_parse("", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:400us:80us", &d), -EINVAL); /* p99 < p50 */
	CU_ASSERT_EQUAL(emu_dist_parse("lognormal:0:80us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("uniform:5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("gauss:5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("fixed:5parsecs", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("bimodal:1:2:150%", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("-5us", &d), -EINVAL);
	CU_ASSERT_EQUAL(emu_dist_parse("exp:1:2:3:4:5", &d), -EINVAL);
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
		svc_in(c, c->model.prog_until[ch] - now, 1638.3, 1638.5);
	}
	CU_ASSERT_EQUAL(c->model.prog_until[0], 0);
	CU_ASSERT_EQUAL(c->model.prog_until[1], 0);
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
	};

	return ut_run("emu_model", tests, NVP_COUNTOF(tests));
}
