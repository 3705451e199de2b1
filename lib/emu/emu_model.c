/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device model: how long a command takes. Waiting strategies (lib/poll) and the
 * writeback throttle only mean something against service times that look like a drive's.
 *
 *  - Latency distributions per op (read_lat, write_lat): fixed, uniform, exponential,
 *    lognormal given p50 and p99, and a bimodal tail. Sampled from a seeded generator, so
 *    two runs with the same seed see the same sequence of service times.
 *  - Size: a per-channel transfer rate; the latency figures are for 4 KiB, bytes past the
 *    first 4 KiB take len / xfer_mbps more.
 *  - Media channels: 16 KiB stripes (a NAND page), stripe s on channel s % channels, so
 *    a large write keeps every channel busy, as a controller's striping does. A read uses the
 *    channel of its first byte; a write's bytes go to the channels of the stripes they
 *    cover.
 *  - Writes: a write cache of wcache_mb MiB, an equal share per channel, completes
 *    writes at write_lat while it has room; its contents are programmed per channel at
 *    prog_mbps / channels. A write whose bytes do not fit in a channel's share waits
 *    until the channel has programmed enough to take them (the program rate: backpressure
 *    the host sees as write latency); with no cache, a write is done when programmed.
 *    Flush completes when every channel has programmed what it holds.
 *  - Reads and writes on one channel: a channel takes commands in order, so a read
 *    waits behind the writes on its channel still waiting for cache room (how a write
 *    flood makes reads wait in proportion to the writes in flight), then for the program
 *    operation in progress (prog_us, no program suspend). Data already in the cache is
 *    programmed between reads and does not hold them up further.
 *
 * The model runs on the controller thread only; no locks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_internal.h"

#define MODEL_STRIPE_SHIFT 14u /* 16 KiB per channel stripe */
#define MODEL_BASE_XFER 4096u  /* latency figures include the first 4 KiB */
#define Z99 2.326347874        /* standard normal quantile of 0.99 */
#define TWO_PI 6.283185307179586

/* ---- the generator: splitmix64, tiny and good enough for service times ---- */

uint64_t
emu_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so log() is safe. */
static double
rng_unit(uint64_t *state)
{
	return ((double)(emu_rng_next(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* ---- distributions ---- */

static const char *const g_dist_names[] = {
	[EMU_DIST_FIXED] = "fixed",         [EMU_DIST_UNIFORM] = "uniform", [EMU_DIST_EXP] = "exp",
	[EMU_DIST_LOGNORMAL] = "lognormal", [EMU_DIST_BIMODAL] = "bimodal",
};

/* A duration with a unit (ns, us, ms, s; none = us) into ns. */
static int
parse_ns(const char *s, double *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0) || v > 1e12) {
		return -EINVAL;
	}
	if (*end == '\0' || strcasecmp(end, "us") == 0) {
		*ns = v * 1e3;
	} else if (strcasecmp(end, "ns") == 0) {
		*ns = v;
	} else if (strcasecmp(end, "ms") == 0) {
		*ns = v * 1e6;
	} else if (strcasecmp(end, "s") == 0) {
		*ns = v * 1e9;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int
parse_pct(const char *s, double *frac)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || (*end != '\0' && strcmp(end, "%") != 0) || !(v >= 0) || v > 100) {
		return -EINVAL;
	}
	*frac = v / 100.0;
	return 0;
}

static int
split_args(char *s, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = s;
		s = strchr(s, ':');
		if (s == NULL) {
			return n;
		}
		*s++ = '\0';
	}
	return -1;
}

static int
dist_kind(const char *name, enum emu_dist_kind *kind)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_dist_names); i++) {
		if (strcasecmp(name, g_dist_names[i]) == 0) {
			*kind = (enum emu_dist_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const int g_dist_nargs[] = { 1, 2, 1, 2, 3 };

/*
 * "fixed:80us" (or just "80us"), "uniform:50us:150us", "exp:80us" (mean),
 * "lognormal:80us:400us" (p50:p99), "bimodal:80us:2ms:1%" (fast:slow:slow fraction).
 */
int
emu_dist_parse(const char *str, struct emu_dist *d)
{
	char buf[NVP_EMU_DIST_MAX], *f[4];
	int n, rc = 0;

	if (str == NULL || strlen(str) >= sizeof(buf)) {
		return -EINVAL;
	}
	nvp_strlcpy(buf, str, sizeof(buf));
	n = split_args(buf, f, 4);
	memset(d, 0, sizeof(*d));
	if (n == 1) {
		d->kind = EMU_DIST_FIXED;
		return parse_ns(f[0], &d->a);
	}
	if (n < 2 || dist_kind(f[0], &d->kind) != 0 || n - 1 != g_dist_nargs[d->kind]) {
		return -EINVAL;
	}
	rc |= parse_ns(f[1], &d->a);
	if (n > 2) {
		rc |= parse_ns(f[2], &d->b);
	}
	if (n > 3) {
		rc |= parse_pct(f[3], &d->c);
	}
	if (rc != 0 ||
	    ((d->kind == EMU_DIST_UNIFORM || d->kind == EMU_DIST_LOGNORMAL) && d->b < d->a)) {
		return -EINVAL;
	}
	if (d->kind == EMU_DIST_LOGNORMAL && d->a <= 0) {
		return -EINVAL;
	}
	return 0;
}

/* One sample in ns. */
double
emu_dist_sample(const struct emu_dist *d, uint64_t *rng)
{
	double u, z;

	switch (d->kind) {
	case EMU_DIST_FIXED:
		return d->a;
	case EMU_DIST_UNIFORM:
		return d->a + (d->b - d->a) * rng_unit(rng);
	case EMU_DIST_EXP:
		return -d->a * log(rng_unit(rng));
	case EMU_DIST_LOGNORMAL:
		/* ln X ~ N(ln p50, sigma), sigma from the p99: Box-Muller for the normal. */
		u = rng_unit(rng);
		z = sqrt(-2.0 * log(u)) * cos(TWO_PI * rng_unit(rng));
		return d->a * exp(z * log(d->b / d->a) / Z99);
	case EMU_DIST_BIMODAL:
		return rng_unit(rng) < d->c ? d->b : d->a;
	}
	return 0;
}

/* Mean in ns (for --help and tests). */
double
emu_dist_mean(const struct emu_dist *d)
{
	double s;

	switch (d->kind) {
	case EMU_DIST_FIXED:
	case EMU_DIST_EXP:
		return d->a;
	case EMU_DIST_UNIFORM:
		return (d->a + d->b) / 2;
	case EMU_DIST_LOGNORMAL:
		s = log(d->b / d->a) / Z99;
		return d->a * exp(s * s / 2);
	case EMU_DIST_BIMODAL:
		return d->a * (1 - d->c) + d->b * d->c;
	}
	return 0;
}

/* ---- presets: published figures of three classes of drive ---- */

/*
 * scm: 3D XPoint class (Optane DC P4800X/P5800X product briefs and reviews: QD1 4 KiB read
 *      ~9 us median, ~10 us p99; writes in place, no cache to fill).
 * tlc: datacenter TLC (P4510/P5510-class briefs: 4 KiB read ~80 us typical, writes ~15-20 us
 *      into a power-protected cache, several GB/s sequential, ~1 GB/s sustained random
 *      write; TLC program ~0.7 ms).
 * qlc: datacenter QLC (D5-P5316-class: read ~120 us, cached writes ~20-30 us, sustained
 *      4 KiB random writes only a few hundred MB/s; QLC program ~2 ms).
 */
static const struct emu_preset g_presets[] = {
	{ "scm", "lognormal:9us:11us", "lognormal:10us:14us", 16, 500, 0, 0, 0 },
	{ "tlc", "lognormal:80us:160us", "lognormal:16us:40us", 32, 400, 256, 1000, 700 },
	{ "qlc", "lognormal:120us:300us", "lognormal:25us:80us", 32, 300, 128, 300, 2000 },
};

const struct emu_preset *
emu_preset_find(const char *name)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_presets); i++) {
		if (strcasecmp(name, g_presets[i].name) == 0) {
			return &g_presets[i];
		}
	}
	return NULL;
}

void
emu_preset_apply(const struct emu_preset *p, struct nvp_emu_opts *o)
{
	nvp_strlcpy(o->preset, p->name, sizeof(o->preset));
	nvp_strlcpy(o->read_lat, p->read_lat, sizeof(o->read_lat));
	nvp_strlcpy(o->write_lat, p->write_lat, sizeof(o->write_lat));
	o->channels = p->channels;
	o->xfer_mbps = p->xfer_mbps;
	o->wcache_mb = p->wcache_mb;
	o->prog_mbps = p->prog_mbps;
	o->prog_us = p->prog_us;
}

void
emu_presets_usage(FILE *f)
{
	fprintf(f, "Presets (preset=NAME sets these; later keys override):\n");
	for (uint32_t i = 0; i < NVP_COUNTOF(g_presets); i++) {
		const struct emu_preset *p = &g_presets[i];

		fprintf(f,
			"  %-4s read_lat=%s write_lat=%s channels=%u xfer_mbps=%u wcache_mb=%u "
			"prog_mbps=%u prog_us=%u\n",
			p->name, p->read_lat, p->write_lat, p->channels, p->xfer_mbps, p->wcache_mb,
			p->prog_mbps, p->prog_us);
	}
}

/* ---- the model on the controller thread ---- */

static int
dist_from_opts(const char *str, uint32_t legacy_us, struct emu_dist *d)
{
	if (str[0] == '\0') {
		memset(d, 0, sizeof(*d));
		d->kind = EMU_DIST_FIXED;
		d->a = (double)legacy_us * 1e3;
		return 0;
	}
	return emu_dist_parse(str, d);
}

int
emu_model_init(struct emu_ctrlr *c)
{
	struct emu_model *m = &c->model;
	const struct nvp_emu_opts *o = &c->opts;
	double hz = (double)c->ticks_hz;

	memset(m, 0, sizeof(*m));
	if (dist_from_opts(o->read_lat, o->read_us, &m->rd) != 0 ||
	    dist_from_opts(o->write_lat, o->write_us, &m->wr) != 0) {
		return -EINVAL;
	}
	m->rng = o->seed;
	m->ticks_per_ns = hz / 1e9;
	m->nch = o->channels;
	m->xfer_tpb = o->xfer_mbps ? hz / ((double)o->xfer_mbps * 1e6) : 0;
	m->prog_tpb = o->prog_mbps ? hz * m->nch / ((double)o->prog_mbps * 1e6) : 0;
	m->prog_op = emu_us_to_ticks(c, o->prog_us);
	m->cache_bytes = (uint64_t)o->wcache_mb << 20;
	m->share_ticks = (uint64_t)((double)(m->cache_bytes / m->nch) * m->prog_tpb);
	m->prog_until = calloc(2 * (size_t)m->nch, sizeof(*m->prog_until));
	m->stall_until = m->prog_until == NULL ? NULL : m->prog_until + m->nch;
	return m->prog_until == NULL ? -ENOMEM : 0;
}

void
emu_model_fini(struct emu_ctrlr *c)
{
	free(c->model.prog_until);
	c->model.prog_until = NULL;
	c->model.stall_until = NULL;
}

static inline uint32_t
model_channel(const struct emu_model *m, uint64_t off)
{
	return (uint32_t)((off >> MODEL_STRIPE_SHIFT) % m->nch);
}

static inline uint64_t
xfer_ticks(const struct emu_model *m, uint64_t len)
{
	return len > MODEL_BASE_XFER ? (uint64_t)((double)(len - MODEL_BASE_XFER) * m->xfer_tpb) :
				       0;
}

static inline uint64_t
sample_ticks(struct emu_model *m, const struct emu_dist *d)
{
	return (uint64_t)(emu_dist_sample(d, &m->rng) * m->ticks_per_ns + 0.5);
}

uint64_t
emu_model_read(struct emu_ctrlr *c, uint64_t off, uint64_t len, uint64_t now)
{
	struct emu_model *m = &c->model;
	uint64_t svc = sample_ticks(m, &m->rd) + xfer_ticks(m, len);
	uint32_t ch = model_channel(m, off);
	uint64_t start = NVP_MAX(now, m->stall_until[ch]), until = m->prog_until[ch], left;
	bool delayed = start > now;

	/* Behind the writes on this channel still waiting for cache room. */
	svc += start - now;
	if (until > start && m->prog_op > 0) {
		/* The program operation in progress finishes first (no suspend). */
		left = (until - start) % m->prog_op;
		svc += left == 0 ? m->prog_op : left;
		delayed = true;
	}
	if (delayed) {
		EMU_STAT_ADD(c, reads_delayed, 1);
	}
	return svc;
}

/*
 * @bytes to program on channel @ch, handed over at @now. \return when the channel's cache
 * share has room for them: once what is queued ahead of them fits in the share.
 */
static uint64_t
channel_take(struct emu_model *m, uint32_t ch, uint64_t bytes, uint64_t now)
{
	uint64_t *until = &m->prog_until[ch], accept;

	*until = NVP_MAX(*until, now) + (uint64_t)((double)bytes * m->prog_tpb);
	accept = *until > m->share_ticks ? *until - m->share_ticks : 0;
	if (accept <= now) {
		return now;
	}
	m->stall_until[ch] = NVP_MAX(m->stall_until[ch], accept);
	return accept;
}

uint64_t
emu_model_write(struct emu_ctrlr *c, uint64_t off, uint64_t len, uint64_t now)
{
	struct emu_model *m = &c->model;
	uint64_t svc = sample_ticks(m, &m->wr) + xfer_ticks(m, len);
	uint64_t stripe = 1ull << MODEL_STRIPE_SHIFT, end = off + len, accept = now, next, at;

	if (m->prog_tpb == 0) {
		return svc; /* no program model: writes cost their latency only */
	}
	for (; off < end; off = next) {
		next = NVP_MIN(end, (off & ~(stripe - 1)) + stripe);
		at = channel_take(m, model_channel(m, off), next - off, now);
		accept = NVP_MAX(accept, at);
	}
	if (accept > now) {
		EMU_STAT_ADD(c, writes_throttled, 1);
		svc += accept - now; /* into the cache once it has room */
	}
	return svc;
}

/* Flush: done when every channel has programmed what the cache holds. */
uint64_t
emu_model_flush(struct emu_ctrlr *c, uint64_t now)
{
	struct emu_model *m = &c->model;
	uint64_t last = now;

	if (m->prog_tpb == 0) {
		return 0;
	}
	for (uint32_t i = 0; i < m->nch; i++) {
		last = NVP_MAX(last, m->prog_until[i]);
	}
	return last - now;
}

/* A completion posted at @now that was due at @due: the controller's own lateness. */
void
emu_model_note_lateness(struct emu_ctrlr *c, uint64_t due, uint64_t now)
{
	uint64_t late_ns = now > due ? (now - due) * 1000000000ull / c->ticks_hz : 0;

	EMU_STAT_ADD(c, timed_cpls, 1);
	EMU_STAT_ADD(c, late_ns_sum, late_ns);
	if (late_ns > c->stats.late_ns_max) {
		__atomic_store_n(&c->stats.late_ns_max, late_ns, __ATOMIC_RELAXED);
	}
	if (late_ns > 10000) {
		EMU_STAT_ADD(c, late_over_10us, 1);
	}
}
