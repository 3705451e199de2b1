/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's jobs: several workloads in one run, as fio's job sections. Each
 * --job 'name=reader,b=m0,w=randread,q=1,o=4k' gives one, with the short keys of the single
 * options (w, q, o, M, b, tenant, class, hint, core or c; r and ns in the raw mode); a key
 * not given takes the flag's value (-w, -q, -o, -M, -c, --tenant, --write-class,
 * --write-hint), as fio's [global] section. Without --job the single-job flags make the
 * jobs they always made: one over every namespace (raw) or every bdev, or one per -b.
 *
 * A job runs on each core of its mask, on each of its targets: a row of the report per
 * (job, target, core). Jobs on one core share that core's I/O thread (and its poll group
 * in the bdev mode); each keeps its own requests, histogram and counters, so a job's
 * latency is measured from its own I/Os only.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/util.h"

#include "perf.h"

/* index = the class's flag value */
static const char *const g_classes[] = { "normal", "background", "sync" };

static const struct {
	const char *name;
	bool random;
	int read_pct; /* -1: a mix, from -M / M= */
} g_workloads[] = {
	{ "read", false, 100 },   { "write", false, 0 }, { "randread", true, 100 },
	{ "randwrite", true, 0 }, { "rw", false, -1 },   { "randrw", true, -1 },
};

void
perf_job_init(struct perf_job *j)
{
	memset(j, 0, sizeof(*j));
	j->mix_pct = -1;
	j->tenant = -1;
	j->weight = -1;
	j->write_hint = -1;
	j->write_class = -1;
}

int
perf_workload_lookup(const char *w, bool *random, int *read_pct)
{
	size_t i;

	for (i = 0; i < sizeof(g_workloads) / sizeof(g_workloads[0]); i++) {
		if (strcmp(w, g_workloads[i].name) == 0) {
			*random = g_workloads[i].random;
			*read_pct = g_workloads[i].read_pct;
			return (int)i;
		}
	}
	return -1;
}

const char *
perf_workload_name(int index)
{
	return g_workloads[index].name;
}

int
perf_name_lookup(const char *const *names, size_t n, const char *arg)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(names[i], arg) == 0) {
			return (int)i;
		}
	}
	return -1;
}

const char *
perf_write_hint_name(int32_t hint)
{
	const char *name = nvp_nvme_write_hint_name((enum nvp_nvme_write_hint)hint);

	return name != NULL ? name : "none";
}

const char *
perf_write_class_name(int32_t cls)
{
	return cls >= 0 && cls < 3 ? g_classes[cls] : "normal";
}

int
perf_write_hint_parse(const char *arg)
{
	enum nvp_nvme_write_hint hint;

	/* nvme.h's names, as --write-hint and hint= take them (or the hint's number) */
	return nvp_nvme_write_hint_parse(arg, &hint) == 0 ? (int)hint : -1;
}

int
perf_write_class_parse(const char *arg)
{
	return perf_name_lookup(g_classes, 3, arg);
}

int
perf_tenant_parse(const char *arg, int32_t *tenant, int32_t *weight)
{
	char buf[32], *colon;
	uint64_t t, w = 0;

	if (strlen(arg) >= sizeof(buf)) {
		return -EINVAL;
	}
	nvp_strlcpy(buf, arg, sizeof(buf));
	colon = strchr(buf, ':');
	if (colon != NULL) {
		*colon = '\0';
	}
	if (nvp_strtou64(buf, 0, NVP_BDEV_MAX_TENANTS - 1, &t) != 0 ||
	    (colon != NULL && nvp_strtou64(colon + 1, 1, 1000, &w) != 0)) {
		return -EINVAL;
	}
	*tenant = (int32_t)t;
	*weight = colon != NULL ? (int32_t)w : -1;
	return 0;
}

int
perf_core_mask_parse(const char *str, uint64_t *mask, char *accepted, size_t len)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t limit, v;

	if (ncpu < 1) {
		ncpu = 1;
	}
	limit = ncpu >= 64 ? UINT64_MAX : (1ull << ncpu) - 1;
	snprintf(accepted, len, "expected a non-zero mask of cores 0..%ld, e.g. 0x1", ncpu - 1);
	if (nvp_strtou64(str, 1, UINT64_MAX, &v) != 0 || (v & ~limit) != 0) {
		return -EINVAL;
	}
	*mask = v;
	return 0;
}

/* ---- one --job string ---- */

/* A job's key: its value is @val; the spec is quoted in messages. \return 0 or -EINVAL. */
struct job_key {
	const char *name;
	int (*set)(struct perf_job *j, const char *val, const char *spec, const char *key);
};

static int
key_error(const char *spec, const char *key, const char *val, const char *accepted)
{
	return perf_usage("--job '%s': %s=%s: %s", spec, key, val, accepted);
}

static int
set_name(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	size_t i, len = strlen(val);

	for (i = 0; i < len; i++) {
		char c = val[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.')) {
			break;
		}
	}
	if (len == 0 || len >= sizeof(j->name) || i != len) {
		return key_error(spec, key, val, "expected 1..31 letters, digits, '_', '-' or '.'");
	}
	nvp_strlcpy(j->name, val, sizeof(j->name));
	j->named = true;
	return 0;
}

static int
set_workload(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	int read_pct, i = perf_workload_lookup(val, &j->random, &read_pct);

	if (i < 0) {
		return key_error(spec, key, val,
				 "expected read, write, randread, randwrite, rw or randrw");
	}
	j->workload = perf_workload_name(i);
	return 0;
}

static int
set_u32(const char *spec, const char *key, const char *val, uint64_t min, uint64_t max,
	uint32_t *out)
{
	char accepted[64];
	uint64_t v;

	if (nvp_strtou64(val, min, max, &v) != 0) {
		snprintf(accepted, sizeof(accepted), "expected an integer %lu..%lu",
			 (unsigned long)min, (unsigned long)max);
		return key_error(spec, key, val, accepted);
	}
	*out = (uint32_t)v;
	return 0;
}

static int
set_depth(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	return set_u32(spec, key, val, 1, 65536, &j->queue_depth);
}

static int
set_size(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	uint64_t v;

	if (nvp_parse_size(val, &v) != 0 || v < 512 || v > (1u << 30)) {
		return key_error(spec, key, val,
				 "expected bytes with an optional k/M suffix, 512..1G, a multiple "
				 "of the sector size");
	}
	j->io_size = (uint32_t)v;
	return 0;
}

static int
set_mix(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	uint32_t v = 0;
	int rc = set_u32(spec, key, val, 0, 100, &v);

	if (rc == 0) {
		j->mix_pct = (int32_t)v;
	}
	return rc;
}

static int
set_bdev(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	if (val[0] == '\0' || strlen(val) >= sizeof(j->bdev)) {
		return key_error(spec, key, val, "expected a bdev name");
	}
	nvp_strlcpy(j->bdev, val, sizeof(j->bdev));
	return 0;
}

static int
set_tenant(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	char accepted[96];
	int32_t weight;

	if (perf_tenant_parse(val, &j->tenant, &weight) != 0) {
		snprintf(accepted, sizeof(accepted),
			 "expected TENANT[:WEIGHT], tenant 0..%d, weight 1..1000",
			 NVP_BDEV_MAX_TENANTS - 1);
		return key_error(spec, key, val, accepted);
	}
	if (weight > 0) {
		j->weight = weight;
	}
	return 0;
}

static int
set_weight(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	uint32_t v = 0;
	int rc = set_u32(spec, key, val, 1, 1000, &v);

	if (rc == 0) {
		j->weight = (int32_t)v;
	}
	return rc;
}

static int
set_class(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	j->write_class = perf_write_class_parse(val);
	return j->write_class < 0 ?
		       key_error(spec, key, val, "expected background, normal or sync") :
		       0;
}

static int
set_hint(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	j->write_hint = perf_write_hint_parse(val);
	return j->write_hint < 0 ?
		       key_error(spec, key, val, "expected none, short, medium, long or extreme") :
		       0;
}

static int
set_core(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	char accepted[96];
	uint32_t core = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (strcmp(key, "c") == 0) {
		return perf_core_mask_parse(val, &j->core_mask, accepted, sizeof(accepted)) != 0 ?
			       key_error(spec, key, val, accepted) :
			       0;
	}
	if (set_u32(spec, key, val, 0, (uint64_t)NVP_MIN(ncpu < 1 ? 1 : ncpu, 64) - 1, &core) !=
	    0) {
		return -EINVAL;
	}
	j->core_mask = 1ull << core;
	return 0;
}

static int
set_ctrlr(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	if (val[0] == '\0' || strlen(val) >= sizeof(j->ctrlr)) {
		return key_error(spec, key, val,
				 "expected a -r of this command line: its name (emu0), its "
				 "traddr or the whole transport ID");
	}
	nvp_strlcpy(j->ctrlr, val, sizeof(j->ctrlr));
	return 0;
}

static int
set_nsid(struct perf_job *j, const char *val, const char *spec, const char *key)
{
	return set_u32(spec, key, val, 1, UINT32_MAX - 1, &j->nsid);
}

static const struct job_key g_keys[] = {
	{ "name", set_name },     { "w", set_workload },    { "q", set_depth },
	{ "o", set_size },        { "M", set_mix },         { "b", set_bdev },
	{ "tenant", set_tenant }, { "weight", set_weight }, { "class", set_class },
	{ "hint", set_hint },     { "core", set_core },     { "c", set_core },
	{ "r", set_ctrlr },       { "ns", set_nsid },
};
#define NUM_KEYS (sizeof(g_keys) / sizeof(g_keys[0]))

struct job_parse {
	struct perf_job *j;
	const char *spec;
	uint32_t given; /* the keys seen so far */
};

#define JOB_KEYS "name, w, q, o, M, b, tenant, weight, class, hint, core, c, r, ns"

/* A pair without '=' or key, or an empty one ("q=1,"). */
static int
job_malformed(void *arg, const char *pair)
{
	const struct job_parse *p = arg;

	return perf_usage("--job '%s': '%s': expected key=value (keys: " JOB_KEYS ")", p->spec,
			  pair);
}

/* One "key=value" of the spec. */
static int
job_item(void *arg, const char *key, const char *value)
{
	struct job_parse *p = arg;
	size_t k;

	for (k = 0; k < NUM_KEYS; k++) {
		if (strcmp(key, g_keys[k].name) == 0) {
			break;
		}
	}
	if (k == NUM_KEYS) {
		return perf_usage("--job '%s': unknown key '%s' (keys: " JOB_KEYS ")", p->spec,
				  key);
	}
	/* core and c name one thing: either once */
	if ((p->given & (1u << k)) != 0 ||
	    ((strcmp(key, "core") == 0 || strcmp(key, "c") == 0) && p->j->core_mask != 0)) {
		return perf_usage("--job '%s': key '%s' given twice", p->spec, key);
	}
	p->given |= 1u << k;
	return g_keys[k].set(p->j, value, p->spec, key);
}

int
perf_job_parse(struct perf_job *j, const char *spec)
{
	/* commas only (r= may hold a whole transport ID), '=' in every pair, no empty one */
	static const struct nvp_kv_syntax syn = {
		.seps = ",",
		.assign = "=",
		.need_assign = true,
		.no_empty = true,
		.malformed = job_malformed,
	};
	struct job_parse p = { j, spec, 0 };

	perf_job_init(j);
	j->from_flag = true;
	if (strlen(spec) >= PERF_JOB_SPEC_MAX) {
		return perf_usage("--job '%.40s...': longer than %d characters", spec,
				  PERF_JOB_SPEC_MAX - 1);
	}
	/* --job '': a job of the flags' values */
	return nvp_kv_parse_ext(spec, &syn, job_item, &p);
}

/* ---- the whole command line ---- */

void
perf_job_size_flag(const struct perf_job *j, char *buf, size_t len)
{
	if (j->from_flag) {
		snprintf(buf, len, "--job %s: o=%u", j->name, j->io_size);
	} else {
		snprintf(buf, len, "-o %u", j->io_size);
	}
}

uint32_t
perf_job_write_flags(const struct perf_job *j)
{
	return nvp_bdev_write_flags((uint32_t)NVP_MAX(j->write_class, 0),
				    (enum nvp_nvme_write_hint)NVP_MAX(j->write_hint, 0));
}

bool
perf_job_ctrlr_matches(const char *trid_str, const char *want)
{
	struct nvp_nvme_transport_id trid;

	if (strcmp(trid_str, want) == 0) {
		return true;
	}
	if (nvp_nvme_transport_id_parse(&trid, trid_str) != 0) {
		return false;
	}
	return (trid.name[0] != '\0' && strcmp(trid.name, want) == 0) ||
	       (trid.traddr[0] != '\0' && strcmp(trid.traddr, want) == 0);
}

/* The keys of one mode given to a job of the other. */
static int
check_mode(const struct perf_opts *o, const struct perf_job *j)
{
	uint32_t i, matches = 0;

	if (o->bdev_config != NULL) {
		if (j->ctrlr[0] != '\0' || j->nsid != 0) {
			return perf_usage("--job %s: r= and ns= are for the raw mode (-r); in the "
					  "bdev mode give b=NAME",
					  j->name);
		}
		return 0;
	}
	if (j->bdev[0] != '\0' || j->tenant >= 0 || j->weight >= 0 || j->write_hint >= 0 ||
	    j->write_class >= 0) {
		return perf_usage("--job %s: b=, tenant=, weight=, class= and hint= are for the "
				  "bdev mode (--bdev-config or --json-config)",
				  j->name);
	}
	for (i = 0; j->ctrlr[0] != '\0' && i < o->num_trids; i++) {
		matches += perf_job_ctrlr_matches(o->trids[i], j->ctrlr);
	}
	if (j->ctrlr[0] != '\0' && matches == 0) {
		return perf_usage("--job %s: r=%s: no -r of this command line is that (give its "
				  "name, e.g. emu0, its traddr or its whole text)",
				  j->name, j->ctrlr);
	}
	return 0;
}

/* @j's unset keys from the flags: -w, -M, -q, -o, -c and the bdev options' defaults. */
static int
resolve_one(struct perf_opts *o, struct perf_job *j, uint32_t index)
{
	const struct perf_job *d = &o->job_default;
	int read_pct;

	if (!j->named) {
		snprintf(j->name, sizeof(j->name), "job%u", index);
	}
	if (j->workload == NULL) {
		j->workload = o->workload;
	}
	perf_workload_lookup(j->workload, &j->random, &read_pct);
	if (read_pct >= 0 && j->mix_pct >= 0) {
		return perf_usage("--job %s: M=%d applies to w=rw and w=randrw, not w=%s", j->name,
				  j->mix_pct, j->workload);
	}
	j->read_pct = read_pct >= 0   ? (uint32_t)read_pct :
		      j->mix_pct >= 0 ? (uint32_t)j->mix_pct :
					o->mix_pct;
	j->queue_depth = j->queue_depth != 0 ? j->queue_depth : o->queue_depth;
	j->io_size = j->io_size != 0 ? j->io_size : o->io_size;
	j->core_mask = j->core_mask != 0 ? j->core_mask : o->core_mask;
	if (j->tenant < 0 && j->weight > 0) {
		return perf_usage("--job %s: weight=%d needs tenant=N (the tenant it weighs)",
				  j->name, j->weight);
	}
	if (j->tenant < 0) {
		j->tenant = d->tenant;
		j->weight = d->weight;
	}
	j->write_hint = j->write_hint >= 0 ? j->write_hint : d->write_hint;
	j->write_class = j->write_class >= 0 ? j->write_class : d->write_class;
	return check_mode(o, j);
}

uint64_t
perf_job_seq_start(const struct perf_job *j, uint32_t core, uint64_t num_ios)
{
	uint64_t below = core == 0 ? 0 : j->core_mask & ((1ull << core) - 1);
	uint32_t rank = (uint32_t)__builtin_popcountll(below);

	return num_ios / (uint64_t)__builtin_popcountll(j->core_mask) * rank;
}

int
perf_jobs_resolve(struct perf_opts *o)
{
	uint32_t i, k;
	int rc;

	if (o->num_jobs == 0) {
		perf_job_init(&o->jobs[0]); /* the single-job flags: one job */
		o->num_jobs = 1;
	}
	o->run_mask = 0;
	for (i = 0; i < o->num_jobs; i++) {
		rc = resolve_one(o, &o->jobs[i], i);
		if (rc != 0) {
			return rc;
		}
		for (k = 0; k < i; k++) {
			if (strcmp(o->jobs[k].name, o->jobs[i].name) == 0) {
				return perf_usage("--job name=%s: two jobs of that name",
						  o->jobs[i].name);
			}
		}
		o->run_mask |= o->jobs[i].core_mask;
	}
	return 0;
}
