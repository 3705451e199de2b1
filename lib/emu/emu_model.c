/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device model: how long a command takes. Waiting strategies (lib/poll) and the
 * writeback throttle only mean something against service times that look like a drive's.
 *
 *  - Latency distributions per op (read_lat, write_lat): fixed, uniform, exponential,
 *    lognormal given p50 and p99 (and p99.9: a heavier tail past the p99, as drives show),
 *    and a bimodal tail. Sampled from a seeded generator, so two runs with the same seed
 *    see the same sequence of service times.
 *  - Size: a per-channel transfer rate; the latency figures are for 4 KiB, bytes past the
 *    first 4 KiB take len / xfer_mbps more.
 *  - Media channels: 16 KiB stripes (a NAND page), stripe s on channel s % channels, so
 *    a large write keeps every channel busy, as a controller's striping does. A read uses the
 *    channel of its first byte; a write's bytes go to the channels of the stripes they
 *    cover, rounded out to whole indirection units (iu_kb: a partial unit is rewritten).
 *  - Writes: a write cache of wcache_mb MiB, an equal share per channel, completes
 *    writes at write_lat while it has room; its contents are programmed per channel at
 *    prog_mbps / channels. A write whose bytes do not fit in a channel's share waits
 *    until the channel has programmed enough to take them (the program rate: backpressure
 *    the host sees as write latency); with no cache, a write is done when programmed.
 *    Flush completes when every channel has programmed what it holds.
 *  - Reads and writes on one channel: a channel takes commands in order, so a read
 *    waits behind the writes on its channel still waiting for cache room (how a write
 *    flood makes reads wait in proportion to the writes in flight) unless read_prio puts
 *    it ahead of them; then it meets the program operation in progress (prog_us): it waits
 *    for the rest of it, or with prog_suspend it waits suspend_us while the operation
 *    pauses (at most suspend_max times per operation), and the operation resumes after
 *    the read. Data already in the cache is programmed between reads.
 *  - read_busy: a read holds its channel for its service time, so reads on one channel
 *    take turns and the channel's programs finish that much later; channels then bound
 *    the read IOPS as a drive's dies do. Without it reads never wait for each other.
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
#define Z999 3.090232306       /* and of 0.999 */
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

static bool
nargs_ok(enum emu_dist_kind kind, int n)
{
	return n == g_dist_nargs[kind] || (kind == EMU_DIST_LOGNORMAL && n == 3);
}

/*
 * "fixed:80us" (or just "80us"), "uniform:50us:150us", "exp:80us" (mean),
 * "lognormal:80us:400us" (p50:p99), "lognormal:80us:100us:150us" (p50:p99:p99.9),
 * "bimodal:80us:2ms:1%" (fast:slow:slow fraction).
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
	if (n < 2 || dist_kind(f[0], &d->kind) != 0 || !nargs_ok(d->kind, n - 1)) {
		return -EINVAL;
	}
	rc |= parse_ns(f[1], &d->a);
	if (n > 2) {
		rc |= parse_ns(f[2], &d->b);
	}
	if (n > 3) {
		rc |= d->kind == EMU_DIST_BIMODAL ? parse_pct(f[3], &d->c) : parse_ns(f[3], &d->c);
	}
	if (rc != 0 ||
	    ((d->kind == EMU_DIST_UNIFORM || d->kind == EMU_DIST_LOGNORMAL) && d->b < d->a) ||
	    (d->kind == EMU_DIST_LOGNORMAL && n > 3 && d->c < d->b)) {
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
		/* ln X ~ N(ln p50, sigma), sigma from the p99: Box-Muller for the normal. Past
		 * the p99, with a p99.9 given, a second sigma from the p99 to the p99.9. */
		u = rng_unit(rng);
		z = sqrt(-2.0 * log(u)) * cos(TWO_PI * rng_unit(rng));
		if (d->c > 0 && z > Z99) {
			return d->b * exp((z - Z99) * log(d->c / d->b) / (Z999 - Z99));
		}
		return d->a * exp(z * log(d->b / d->a) / Z99);
	case EMU_DIST_BIMODAL:
		return rng_unit(rng) < d->c ? d->b : d->a;
	}
	return 0;
}

/* Standard normal distribution function. */
static double
phi_cdf(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

/* Mean of the lognormal with a second sigma past the p99 (ns). */
static double
lognormal3_mean(const struct emu_dist *d)
{
	double s1 = log(d->b / d->a) / Z99, s2 = log(d->c / d->b) / (Z999 - Z99);

	return d->a * exp(s1 * s1 / 2) * phi_cdf(Z99 - s1) +
	       d->b * exp(s2 * s2 / 2 - s2 * Z99) * (1 - phi_cdf(Z99 - s2));
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
		if (d->c > 0) {
			return lognormal3_mean(d);
		}
		s = log(d->b / d->a) / Z99;
		return d->a * exp(s * s / 2);
	case EMU_DIST_BIMODAL:
		return d->a * (1 - d->c) + d->b * d->c;
	}
	return 0;
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
	m->suspend_op = emu_us_to_ticks(c, o->suspend_us);
	m->iu = (uint64_t)o->iu_kb << 10;
	m->suspend_max = o->suspend_max;
	m->read_prio = o->read_prio;
	m->suspend = o->prog_suspend;
	m->read_busy = o->read_busy;
	m->ch = calloc(m->nch, sizeof(*m->ch));
	return m->ch == NULL ? -ENOMEM : 0;
}

void
emu_model_fini(struct emu_ctrlr *c)
{
	free(c->model.ch);
	c->model.ch = NULL;
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

/* The channel's programs, and the writes waiting for them, finish @d later from @at. */
static void
channel_delay(struct emu_chan *k, uint64_t at, uint64_t d)
{
	k->prog_until += d;
	if (k->stall_until > at) {
		k->stall_until += d;
	}
}

/* May the program operation ending at @end be suspended once more? */
static bool
may_suspend(const struct emu_model *m, const struct emu_chan *k, uint64_t end)
{
	return m->suspend &&
	       (m->suspend_max == 0 || k->susp_end != end || k->susp_n < m->suspend_max);
}

/*
 * A read taking @svc of channel @k from @start meets the program operation in progress
 * there. \return how long it waits for it: the rest of the operation, or with program
 * suspend the time it takes to pause (never longer than the rest). The read's time on
 * the channel comes out of the programs' time when it suspends one or holds the channel.
 */
static uint64_t
meet_program(struct emu_ctrlr *c, struct emu_chan *k, uint64_t start, uint64_t svc)
{
	struct emu_model *m = &c->model;
	uint64_t left, end, wait;

	if (k->prog_until <= start || m->prog_op == 0) {
		return 0;
	}
	if (k->susp_end > start) {
		end = k->susp_end; /* the operation suspended before, stretched by its reads */
	} else {
		/* operations of prog_op each, back to back up to prog_until */
		left = (k->prog_until - start) % m->prog_op;
		end = start + (left == 0 ? m->prog_op : left);
	}
	left = end - start;
	if (m->suspend_op < left && may_suspend(m, k, end)) {
		wait = m->suspend_op;
		k->susp_n = k->susp_end == end ? k->susp_n + 1 : 1;
		k->susp_end = end + wait + svc; /* it resumes after the read */
		channel_delay(k, start, wait + svc);
		EMU_STAT_ADD(c, reads_suspended, 1);
		return wait;
	}
	if (m->read_busy) {
		channel_delay(k, start, svc); /* the next operation waits for the read */
	}
	return left;
}

uint64_t
emu_model_read(struct emu_ctrlr *c, uint64_t off, uint64_t len, uint64_t now)
{
	struct emu_model *m = &c->model;
	uint64_t svc = sample_ticks(m, &m->rd) + xfer_ticks(m, len);
	struct emu_chan *k = &m->ch[model_channel(m, off)];
	uint64_t start = m->read_busy ? NVP_MAX(now, k->read_until) : now, behind = 0, wait;

	if (!m->read_prio && k->stall_until > start) {
		/* Behind the writes on this channel still waiting for cache room. */
		behind = k->stall_until - start;
		start = k->stall_until;
	}
	wait = meet_program(c, k, start, svc);
	if (behind > 0 || wait > 0) {
		EMU_STAT_ADD(c, reads_delayed, 1);
	}
	start += wait;
	if (m->read_busy) {
		k->read_until = start + svc;
	}
	return start + svc - now;
}

/*
 * @bytes to program on channel @k, handed over at @now. \return when the channel's cache
 * share has room for them: once what is queued ahead of them fits in the share.
 */
static uint64_t
channel_take(struct emu_model *m, struct emu_chan *k, uint64_t bytes, uint64_t now)
{
	uint64_t accept;

	k->prog_until = NVP_MAX(k->prog_until, now) + (uint64_t)((double)bytes * m->prog_tpb);
	accept = k->prog_until > m->share_ticks ? k->prog_until - m->share_ticks : 0;
	if (accept <= now) {
		return now;
	}
	k->stall_until = NVP_MAX(k->stall_until, accept);
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
	if (m->iu > 0) {
		/* Every unit touched is programmed whole: a partial one is merged and rewritten. */
		off -= off % m->iu;
		end += (m->iu - end % m->iu) % m->iu;
	}
	for (; off < end; off = next) {
		next = NVP_MIN(end, (off & ~(stripe - 1)) + stripe);
		at = channel_take(m, &m->ch[model_channel(m, off)], next - off, now);
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
		last = NVP_MAX(last, m->ch[i].prog_until);
	}
	return last - now;
}

/* A completion posted at @now that was due at @due: the controller's own lateness. */
void
emu_model_note_lateness(struct emu_ctrlr *c, uint64_t due, uint64_t now)
{
	uint64_t late_ns = now > due ? nvp_ticks_to_ns(now - due, c->ticks_hz) : 0;

	EMU_STAT_ADD(c, timed_cpls, 1);
	EMU_STAT_ADD(c, late_ns_sum, late_ns);
	if (late_ns > c->stats.late_ns_max) {
		__atomic_store_n(&c->stats.late_ns_max, late_ns, __ATOMIC_RELAXED);
	}
	if (late_ns > 10000) {
		EMU_STAT_ADD(c, late_over_10us, 1);
	}
}
