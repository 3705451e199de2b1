/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_preset.c: every preset parses, sets every model key and
 * gives, through the device model run in model time (emu_ut_sim.h, seeded: the same
 * figures every run, whatever the machine's load), the figures doc/emu_presets.md states:
 * the QD1 read distribution, the read IOPS at a deep queue, the sustained write rate,
 * and a QD1 reader's tail beside a write flood with the preset's read priority and
 * program suspend, and without them. The figures are printed ("model: ...") for the doc.
 */
#include "emu_ut_sim.h"

/* What doc/emu_presets.md says each preset does (published figures or the model's own). */
static const struct preset_want {
	const char *name;
	double p50, p99, p999; /* QD1 4 KiB random read, us */
	double iops_lo;        /* 4 KiB random read IOPS at QD1024: the published range */
	double iops_hi;
	double wr_lo; /* sustained 4 KiB random write IOPS at QD64 (0: no program model) */
	double wr_hi;
} g_want[] = {
	{ "scm", 9, 10, 17, 550e3, 800e3, 0, 0 },
	{ "tlc", 80, 100, 150, 850e3, 1050e3, 170e3, 210e3 },
	{ "qlc", 120, 160, 300, 800e3, 950e3, 10e3, 20e3 },
};

static bool
near(double got, double want, double tol)
{
	return got >= want * (1 - tol) && got <= want * (1 + tol);
}

static struct emu_ctrlr *
preset_ctrlr(const char *name, const char *more)
{
	char opts[160];

	snprintf(opts, sizeof(opts), "preset=%s %s", name, more);
	return ut_ctrlr_new(opts);
}

static void
test_presets_parse_and_apply(void)
{
	for (uint32_t i = 0; emu_preset_get(i) != NULL; i++) {
		const struct emu_preset *p = emu_preset_get(i);
		struct nvp_emu_opts o;
		struct emu_ctrlr *c;
		char opts[64], err[256];

		nvp_emu_opts_init(&o, sizeof(o));
		snprintf(opts, sizeof(opts), "preset=%s", p->name);
		CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, opts, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(o.preset, p->name);
		CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), 0);
		CU_ASSERT_PTR_EQUAL(emu_preset_find(p->name), p);
		c = preset_ctrlr(p->name, "");
		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		CU_ASSERT_EQUAL(c->model.nch, o.channels);
		CU_ASSERT(c->model.rd.kind == EMU_DIST_LOGNORMAL && c->model.rd.c > 0);
		emu_ctrlr_free(c);
	}
	CU_ASSERT_PTR_NOT_NULL(emu_preset_find("TLC")); /* names ignore case */
	CU_ASSERT_PTR_NULL(emu_preset_get(3));
	CU_ASSERT_EQUAL(NVP_COUNTOF(g_want), 3);
}

/* The model keys of @o, as a string, to compare two option sets. */
static void
model_keys(const struct nvp_emu_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s %u %u %u %u %u %u %u %d %d %u %u %d %s", o->read_lat,
		 o->write_lat, o->channels, o->slots, o->xfer_mbps, o->wcache_mb, o->prog_mbps,
		 o->prog_us, o->iu_kb, o->read_prio, o->prog_suspend, o->suspend_us, o->suspend_max,
		 o->read_busy, o->preset);
}

/* A preset sets every model key: what came before it does not show through. */
static void
test_presets_set_every_key(void)
{
	const char *odd = "read_lat=3us write_lat=4us channels=3 slots=5 xfer_mbps=6 "
			  "wcache_mb=7 prog_mbps=8 prog_us=9 iu_kb=10 read_prio=1 prog_suspend=1 "
			  "suspend_us=11 suspend_max=12 read_busy=1";
	char keys[256], a[512], b[512], opts[512], err[256];

	for (uint32_t i = 0; emu_preset_get(i) != NULL; i++) {
		const struct emu_preset *p = emu_preset_get(i);
		struct nvp_emu_opts x, y;

		/* every key of the list appears in the preset */
		nvp_strlcpy(keys, emu_preset_keys(), sizeof(keys));
		for (char *k = keys, *sp; k != NULL; k = sp) {
			char kv[sizeof(keys) + 2];

			sp = strchr(k, ' ');
			if (sp != NULL) {
				*sp++ = '\0';
			}
			snprintf(kv, sizeof(kv), "%s=", k);
			CU_ASSERT_PTR_NOT_NULL(strstr(p->opts, kv));
		}
		/* on the defaults, on odd values and on every other preset: the same keys */
		nvp_emu_opts_init(&x, sizeof(x));
		snprintf(opts, sizeof(opts), "preset=%s", p->name);
		CU_ASSERT_EQUAL_FATAL(nvp_emu_opts_parse(&x, opts, err, sizeof(err)), 0);
		model_keys(&x, a, sizeof(a));
		for (uint32_t j = 0; emu_preset_get(j) != NULL; j++) {
			nvp_emu_opts_init(&y, sizeof(y));
			snprintf(opts, sizeof(opts), "%s preset=%s preset=%s", odd,
				 emu_preset_get(j)->name, p->name);
			CU_ASSERT_EQUAL_FATAL(nvp_emu_opts_parse(&y, opts, err, sizeof(err)), 0);
			model_keys(&y, b, sizeof(b));
			CU_ASSERT_STRING_EQUAL(a, b);
		}
	}
}

static void
test_preset_order_and_errors(void)
{
	struct nvp_emu_opts o;
	char err[256];

	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(
		nvp_emu_opts_parse(&o, "preset=tlc read_prio=0 prog_suspend=0", err, sizeof(err)),
		0);
	CU_ASSERT(!o.read_prio && !o.prog_suspend && o.read_busy); /* later keys override */
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "read_prio=0 preset=tlc", err, sizeof(err)), 0);
	CU_ASSERT(o.read_prio); /* the preset overrides the keys before it */
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "preset:qlc", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.iu_kb, 64);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "preset=mlc", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'preset'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "scm, tlc or qlc"));
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "preset=", err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(o.preset, "qlc"); /* a failed parse changes nothing */
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "suspend_us=100001", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "iu_kb=1025", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "prog_suspend=maybe", err, sizeof(err)), -EINVAL);
}

/* The read distribution itself: p50, p99 and p99.9 as stated. */
static void
test_preset_read_distribution(void)
{
	const uint32_t n = 400000;
	double *v = malloc(n * sizeof(*v));

	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	for (uint32_t i = 0; i < NVP_COUNTOF(g_want); i++) {
		struct emu_ctrlr *c = preset_ctrlr(g_want[i].name, "");
		uint64_t seed = 21;

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		for (uint32_t k = 0; k < n; k++) {
			v[k] = emu_dist_sample(&c->model.rd, &seed) / 1000;
		}
		CU_ASSERT(near(ut_sim_quantile(v, n, 0.5), g_want[i].p50, 0.01));
		CU_ASSERT(near(ut_sim_quantile(v, n, 0.99), g_want[i].p99, 0.02));
		CU_ASSERT(near(ut_sim_quantile(v, n, 0.999), g_want[i].p999, 0.05));
		emu_ctrlr_free(c);
	}
	free(v);
}

/* QD1 random reads on an idle device, through the whole model: the same figures. */
static void
test_preset_qd1_idle(void)
{
	const uint32_t n = 200000;

	for (uint32_t i = 0; i < NVP_COUNTOF(g_want); i++) {
		struct emu_ctrlr *c = preset_ctrlr(g_want[i].name, "");
		struct ut_sim_job r = { .qd = 1, .bs = 4096, .max_lat = n };
		double p50, p99, p999;

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		r.lat_us = malloc(n * sizeof(double));
		CU_ASSERT_PTR_NOT_NULL_FATAL(r.lat_us);
		ut_sim_run(c, &r, 1, 0, g_want[i].p50 * n / 1e6 * 1.2, 31);
		p50 = ut_sim_quantile(r.lat_us, r.nlat, 0.5);
		p99 = ut_sim_quantile(r.lat_us, r.nlat, 0.99);
		p999 = ut_sim_quantile(r.lat_us, r.nlat, 0.999);
		printf("\n  model: %s QD1 randread idle: n=%u p50 %.1f p99 %.1f p99.9 %.1f us",
		       c->opts.preset, r.nlat, p50, p99, p999);
		CU_ASSERT(r.nlat > 150000);
		CU_ASSERT(near(p50, g_want[i].p50, 0.02));
		CU_ASSERT(near(p99, g_want[i].p99, 0.03));
		CU_ASSERT(near(p999, g_want[i].p999, 0.08));
		free(r.lat_us);
		emu_ctrlr_free(c);
	}
}

/* Random read IOPS at a deep queue: channels / mean read latency, the published range. */
static void
test_preset_read_iops(void)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_want); i++) {
		struct emu_ctrlr *c = preset_ctrlr(g_want[i].name, "");
		struct ut_sim_job r = { .qd = 1024, .bs = 4096 };

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		ut_sim_run(c, &r, 1, 0.02, 0.12, 41);
		printf("\n  model: %s QD1024 randread: %.0f IOPS", c->opts.preset, r.ios * 10.0);
		CU_ASSERT(r.ios * 10.0 >= g_want[i].iops_lo && r.ios * 10.0 <= g_want[i].iops_hi);
		emu_ctrlr_free(c);
	}
}

/* Sustained random writes once the cache is full: the drive's steady-state rate. */
static void
test_preset_write_rate(void)
{
	struct emu_ctrlr *c;

	for (uint32_t i = 0; i < NVP_COUNTOF(g_want); i++) {
		struct ut_sim_job w = { .write = true, .qd = 64, .bs = 4096, .span = 64ull << 30 };

		if (g_want[i].wr_hi == 0) {
			continue;
		}
		c = preset_ctrlr(g_want[i].name, "");
		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		ut_sim_run(c, &w, 1, 0.5, 1.5, 51);
		printf("\n  model: %s QD64 4k randwrite sustained: %.0f IOPS (%.0f MB/s)",
		       c->opts.preset, (double)w.ios, (double)w.bytes / 1e6);
		CU_ASSERT(w.ios >= g_want[i].wr_lo && w.ios <= g_want[i].wr_hi);
		CU_ASSERT(c->stats.writes_throttled > 0); /* the cache filled */
		emu_ctrlr_free(c);
	}
	/* qlc: whole 64 KiB units are not amplified: 128 KiB sequential at prog_mbps */
	c = preset_ctrlr("qlc", "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	{
		struct ut_sim_job w = { .write = true, .qd = 32, .bs = 131072, .seq = true };

		ut_sim_run(c, &w, 1, 0.5, 1.5, 52);
		printf("\n  model: qlc QD32 128k seqwrite sustained: %.0f MB/s",
		       (double)w.bytes / 1e6);
		CU_ASSERT(near((double)w.bytes, 1000e6, 0.02));
	}
	emu_ctrlr_free(c);
}

/*
 * A QD1 4 KiB random reader beside a QD32 4 KiB random write flood (6 s, the first one
 * left out): its percentiles into @lat (p50, p99, p99.9, us); \return writes a second.
 */
static double
read_beside_flood(const char *name, const char *more, double lat[3])
{
	struct emu_ctrlr *c = preset_ctrlr(name, more);
	struct ut_sim_job j[2] = {
		{ .qd = 1, .bs = 4096, .span = 64ull << 30, .max_lat = 200000 },
		{ .write = true, .qd = 32, .bs = 4096, .span = 64ull << 30 },
	};

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	j[0].lat_us = malloc(j[0].max_lat * sizeof(double));
	CU_ASSERT_PTR_NOT_NULL_FATAL(j[0].lat_us);
	ut_sim_run(c, j, 2, 1.0, 6.0, 61);
	lat[0] = ut_sim_quantile(j[0].lat_us, j[0].nlat, 0.5);
	lat[1] = ut_sim_quantile(j[0].lat_us, j[0].nlat, 0.99);
	lat[2] = ut_sim_quantile(j[0].lat_us, j[0].nlat, 0.999);
	printf("\n  model: %s %s QD1 randread beside QD32 4k randwrite: n=%u p50 %.0f p99 %.0f "
	       "p99.9 %.0f us, writes %.0f/s, %lu suspends",
	       name, more[0] != '\0' ? more : "(preset)", j[0].nlat, lat[0], lat[1], lat[2],
	       (double)j[1].ios / 5, (unsigned long)c->stats.reads_suspended);
	CU_ASSERT(j[0].nlat > 1000); /* 1000 reads: p99.9 is the worst one or two */
	free(j[0].lat_us);
	emu_ctrlr_free(c);
	return (double)j[1].ios / 5;
}

/*
 * Read priority and program suspend, as the tlc and qlc drives have them, keep a reader's
 * tail within its idle tail plus a suspend; without them it waits behind the writes.
 */
static void
test_preset_read_beside_write_flood(void)
{
	for (uint32_t i = 1; i < NVP_COUNTOF(g_want); i++) {
		const struct preset_want *w = &g_want[i];
		double on[3], off[3], wr_on, wr_off;
		struct emu_ctrlr *c = preset_ctrlr(w->name, "");
		double sus;

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		sus = (double)c->opts.suspend_us;
		emu_ctrlr_free(c);
		wr_on = read_beside_flood(w->name, "", on);
		wr_off = read_beside_flood(w->name, "read_prio=0 prog_suspend=0", off);
		CU_ASSERT(on[0] < w->p50 + sus && on[2] <= (w->p999 + sus) * 1.1);
		CU_ASSERT(off[1] > 4 * on[1] && off[2] > 4 * on[2]);
		/* the reads cost the writer little: suspends steal only their own time */
		CU_ASSERT(wr_on > 0.95 * wr_off && wr_on >= w->wr_lo * 0.95);
	}
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_presets_parse_and_apply), UT_TEST(test_presets_set_every_key),
		UT_TEST(test_preset_order_and_errors), UT_TEST(test_preset_read_distribution),
		UT_TEST(test_preset_qd1_idle),         UT_TEST(test_preset_read_iops),
		UT_TEST(test_preset_write_rate),       UT_TEST(test_preset_read_beside_write_flood),
	};
	int rc = ut_run("emu_preset", tests, NVP_COUNTOF(tests));

	printf("\n");
	return rc;
}
