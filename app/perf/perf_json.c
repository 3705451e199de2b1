/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf --json FILE: the whole report, machine-readable (json-c).
 *
 * {
 *   "status":  "ok" | "interrupted" (SIGINT/SIGTERM: the time that ran) | "failed" |
 *              "usage_error" | "interrupted_warmup" (nothing measured: no results),
 *   "error":   why (failed, usage_error; a failed run has no results, total, histogram),
 *   "config":  { queue_depth, io_size, workload, read_percent, time_s, warmup_s,
 *                io_timeout_ms, think_ns, core_mask, qpairs_per_ns, trids: [..],
 *                jobs: [ { name, workload, read_percent, queue_depth, io_size, cores,
 *                          targets, (bdev mode:) tenant, weight, write_class, write_hint } ],
 *                (bdev mode:) bdevs: [..], json_config | bdev_config, sched, wbt_lat_us },
 *   "results": [ { job, device, target, nsid, core, ios, reads, writes, errors, elapsed_s,
 *                  drained, drain_errors, iops, mib_s, latency_us: { mean, min, max, p50, p90, p99, p99_9,
 *                  p99_99 } } ],                                   (a job's target, a core)
 *   "jobs":    [ { name, ios, reads, writes, errors, iops, mib_s, latency_us: {..},
 *                  latency_samples, threads: [ { core, cpu_s, elapsed_s,
 *                  involuntary_ctx_switches, voluntary_ctx_switches, preempted,
 *                  jobs_on_thread } ] } ],               (each from its own I/Os only)
 *   "total":   { ios, errors, drained, drain_errors, iops, mib_s, latency_us: {..}, cpu: { total_s,
 *                per_io_us, threads: [ { core, cpu_s, elapsed_s, involuntary_ctx_switches,
 *                voluntary_ctx_switches, preempted, jobs: [..] } ] },
 *              (raw PCIe:) doorbells: { sq_writes, cq_writes, commands, rekicks, mmio_per_io } },
 *   "histogram": [ { low_us, high_us, count, cumulative_pct } ],   (all rows merged)
 *   "samples":   [ { t_s, iops, mib_s, mean_us, job_iops: [..] } ] (every 100 ms)
 *   (bdev mode:) "bdevs": [ { name, admission, wbt, scheduler, multipath, times: { read,
 *                write: { ios, device_mean_us, device_p99_us, queued_mean_us } } } ]
 *                (times: the bdev layer's own statistics, the whole run with its warm-up)
 * }
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "perf.h"

static json_object *
lat_obj(const struct perf_run *run, const struct nvp_histogram *h)
{
	json_object *o = json_object_new_object();
	struct perf_lat_summary s;

	perf_lat_summary_get(run, h, &s);
	json_object_object_add(o, "mean", json_object_new_double(s.mean_us));
	json_object_object_add(o, "min", json_object_new_double(s.min_us));
	json_object_object_add(o, "max", json_object_new_double(s.max_us));
	json_object_object_add(o, "p50", json_object_new_double(s.p50_us));
	json_object_object_add(o, "p90", json_object_new_double(s.p90_us));
	json_object_object_add(o, "p99", json_object_new_double(s.p99_us));
	json_object_object_add(o, "p99_9", json_object_new_double(s.p999_us));
	json_object_object_add(o, "p99_99", json_object_new_double(s.p9999_us));
	return o;
}

#define JADD(o, k, v) json_object_object_add((o), (k), (v))
#define JINT(v) json_object_new_int64((int64_t)(v))
#define JSTR(v) json_object_new_string(v)

/* A job's settings, every key resolved; the targets it got (none yet if attach failed). */
static json_object *
job_config(const struct perf_run *run, const struct perf_job *j)
{
	json_object *o = json_object_new_object(), *cores = json_object_new_array();
	json_object *targets = json_object_new_array();
	uint32_t c;

	JADD(o, "name", JSTR(j->name));
	JADD(o, "workload", JSTR(j->workload));
	JADD(o, "read_percent", JINT(j->read_pct));
	JADD(o, "queue_depth", JINT(j->queue_depth));
	JADD(o, "io_size", JINT(j->io_size));
	for (c = 0; c < 64; c++) {
		if ((j->core_mask >> c) & 1) {
			json_object_array_add(cores, JINT(c));
		}
	}
	JADD(o, "cores", cores);
	for (c = 0; c < run->num_ns; c++) {
		if (run->ns[c].job == j) {
			json_object_array_add(targets, JSTR(run->ns[c].name));
		}
	}
	JADD(o, "targets", targets);
	if (run->opts.bdev_config != NULL) {
		JADD(o, "tenant", j->tenant >= 0 ? JINT(j->tenant) : NULL);
		JADD(o, "weight", j->weight > 0 ? JINT(j->weight) : NULL);
		JADD(o, "write_class", JSTR(perf_write_class_name(j->write_class)));
		JADD(o, "write_hint", JSTR(perf_write_hint_name(j->write_hint)));
	}
	return o;
}

static json_object *
jobs_config(const struct perf_run *run)
{
	json_object *arr = json_object_new_array();
	uint32_t j;

	for (j = 0; j < run->opts.num_jobs; j++) {
		json_object_array_add(arr, job_config(run, &run->opts.jobs[j]));
	}
	return arr;
}

/* The bdev mode: the bdevs used, where they came from, the stages asked for. */
static void
bdev_config_obj(const struct perf_run *run, json_object *o)
{
	const struct perf_opts *op = &run->opts;
	json_object *bdevs = json_object_new_array();
	uint32_t i;

	for (i = 0; i < run->num_ns; i++) {
		const struct nvp_bdev *b = nvp_bdev_desc_get_bdev(run->ns[i].bdev_desc);
		uint32_t k;

		for (k = 0; k < i && nvp_bdev_desc_get_bdev(run->ns[k].bdev_desc) != b; k++) {
		}
		if (k == i) {
			json_object_array_add(bdevs, JSTR(nvp_bdev_get_name(b)));
		}
	}
	JADD(o, "bdevs", bdevs);
	JADD(o, op->bdev_config_is_file ? "json_config" : "bdev_config", JSTR(op->bdev_config));
	JADD(o, "sched", op->sched != NULL ? JSTR(op->sched) : NULL);
	JADD(o, "wbt_lat_us", op->wbt_set ? JINT(op->wbt_lat_us) : NULL);
}

static json_object *
config_obj(const struct perf_run *run)
{
	const struct perf_opts *op = &run->opts;
	json_object *o = json_object_new_object(), *trids = json_object_new_array();
	char mask[32];
	uint32_t i;

	snprintf(mask, sizeof(mask), "0x%lx", (unsigned long)op->core_mask);
	json_object_object_add(o, "queue_depth", json_object_new_int64(op->queue_depth));
	json_object_object_add(o, "io_size", json_object_new_int64(op->io_size));
	json_object_object_add(o, "workload", json_object_new_string(op->workload));
	json_object_object_add(o, "read_percent", json_object_new_int64(op->read_pct));
	json_object_object_add(o, "time_s", json_object_new_int64(op->time_s));
	json_object_object_add(o, "warmup_s", json_object_new_int64(op->warmup_s));
	json_object_object_add(o, "io_timeout_ms", json_object_new_int64(op->io_timeout_ms));
	json_object_object_add(o, "think_ns", json_object_new_int64(op->think_ns));
	json_object_object_add(o, "core_mask", json_object_new_string(mask));
	json_object_object_add(o, "qpairs_per_ns", json_object_new_int64(op->qpairs_per_ns));
	for (i = 0; i < op->num_trids; i++) {
		json_object_array_add(trids, json_object_new_string(op->trids[i]));
	}
	json_object_object_add(o, "trids", trids);
	json_object_object_add(o, "jobs", jobs_config(run));
	if (op->bdev_config != NULL) {
		bdev_config_obj(run, o);
	}
	return o;
}

static json_object *
row_obj(const struct perf_run *run, const struct perf_thread *th, const struct perf_ns_stats *st)
{
	json_object *o = json_object_new_object();
	double secs = (double)th->elapsed_ticks / (double)run->ticks_hz;
	double iops = perf_row_iops(run, th, st);

	json_object_object_add(o, "job", json_object_new_string(st->ns->job->name));
	json_object_object_add(o, "device", json_object_new_string(st->ns->name));
	json_object_object_add(o, "target", json_object_new_string(st->ns->label));
	json_object_object_add(o, "nsid", json_object_new_int64(st->ns->nsid));
	json_object_object_add(o, "core", json_object_new_int64(th->core));
	json_object_object_add(o, "ios", json_object_new_int64((int64_t)st->ios));
	json_object_object_add(o, "reads", json_object_new_int64((int64_t)st->reads));
	json_object_object_add(o, "writes", json_object_new_int64((int64_t)st->writes));
	json_object_object_add(o, "errors", json_object_new_int64((int64_t)st->errors));
	json_object_object_add(o, "elapsed_s", json_object_new_double(secs));
	json_object_object_add(o, "drained", json_object_new_int64((int64_t)st->drain_ios));
	json_object_object_add(o, "drain_errors", json_object_new_int64((int64_t)st->drain_errors));
	json_object_object_add(o, "iops", json_object_new_double(iops));
	json_object_object_add(o, "mib_s", json_object_new_double(perf_row_mibs(run, th, st)));
	json_object_object_add(o, "latency_us", lat_obj(run, st->hist));
	return o;
}

/* The jobs thread @th runs (a job with several targets once). */
static json_object *
thread_jobs(const struct perf_thread *th)
{
	json_object *arr = json_object_new_array();
	const struct perf_job *last = NULL;
	uint32_t n;

	for (n = 0; n < th->num_ns; n++) {
		if (th->ns_stats[n].ns->job != last) {
			last = th->ns_stats[n].ns->job;
			json_object_array_add(arr, JSTR(last->name));
		}
	}
	return arr;
}

/*
 * One I/O thread over the window: its own CPU time (CLOCK_THREAD_CPUTIME_ID) and its
 * context switches (getrusage RUSAGE_THREAD): an involuntary one is a preemption, which a
 * script may count against a figure.
 */
static json_object *
thread_obj(const struct perf_run *run, const struct perf_thread *th)
{
	json_object *to = json_object_new_object();

	JADD(to, "core", JINT(th->core));
	JADD(to, "cpu_s", json_object_new_double(th->cpu_ns / 1e9));
	JADD(to, "elapsed_s",
	     json_object_new_double((double)th->elapsed_ticks / (double)run->ticks_hz));
	JADD(to, "involuntary_ctx_switches", JINT(th->nivcsw));
	JADD(to, "voluntary_ctx_switches", JINT(th->nvcsw));
	JADD(to, "preempted", json_object_new_boolean(th->nivcsw != 0));
	return to;
}

static json_object *
cpu_obj(const struct perf_run *run, uint64_t ios)
{
	json_object *o = json_object_new_object(), *threads = json_object_new_array();
	uint64_t cpu = 0;
	uint32_t t;

	for (t = 0; t < run->num_threads; t++) {
		json_object *to = thread_obj(run, &run->threads[t]);

		JADD(to, "jobs", thread_jobs(&run->threads[t]));
		json_object_array_add(threads, to);
		cpu += run->threads[t].cpu_ns;
	}
	json_object_object_add(o, "total_s", json_object_new_double(cpu / 1e9));
	json_object_object_add(o, "per_io_us",
			       json_object_new_double(ios ? cpu / 1e3 / (double)ios : 0.0));
	json_object_object_add(o, "threads", threads);
	return o;
}

static json_object *
results_and_total(const struct perf_run *run, const struct nvp_histogram *total_h,
		  json_object **total)
{
	json_object *rows = json_object_new_array();
	double iops = 0, mibs = 0;
	uint64_t ios = 0, errors = 0, drained = 0, drain_errors = 0, dbs = 0, cqdbs = 0, subs = 0;
	uint64_t rekicks = 0;
	bool doorbells = false;
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			const struct perf_ns_stats *st = &th->ns_stats[n];

			json_object_array_add(rows, row_obj(run, th, st));
			iops += perf_row_iops(run, th, st);
			mibs += perf_row_mibs(run, th, st);
			ios += st->ios;
			errors += st->errors;
			drained += st->drain_ios;
			drain_errors += st->drain_errors;
			/* the measured window's MMIO doorbell writes (PCIe qpairs only) */
			if (st->ns->doorbells) {
				doorbells = true;
				dbs += st->sq_doorbells;
				cqdbs += st->cq_doorbells;
				rekicks += st->doorbell_rekicks;
				subs += st->submitted;
			}
		}
	}
	*total = json_object_new_object();
	json_object_object_add(*total, "ios", json_object_new_int64((int64_t)ios));
	json_object_object_add(*total, "errors", json_object_new_int64((int64_t)errors));
	json_object_object_add(*total, "drained", json_object_new_int64((int64_t)drained));
	json_object_object_add(*total, "drain_errors",
			       json_object_new_int64((int64_t)drain_errors));
	json_object_object_add(*total, "iops", json_object_new_double(iops));
	json_object_object_add(*total, "mib_s", json_object_new_double(mibs));
	json_object_object_add(*total, "latency_us", lat_obj(run, total_h));
	json_object_object_add(*total, "cpu", cpu_obj(run, ios));
	if (doorbells) {
		json_object *d = json_object_new_object();

		JADD(d, "sq_writes", JINT(dbs));
		JADD(d, "cq_writes", JINT(cqdbs));
		JADD(d, "commands", JINT(subs));
		JADD(d, "rekicks", JINT(rekicks));
		JADD(d, "mmio_per_io",
		     json_object_new_double(subs ? (double)(dbs + cqdbs) / (double)subs : 0.0));
		json_object_object_add(*total, "doorbells", d);
	}
	return rows;
}

static int
hist_bucket(void *ctx, uint64_t low, uint64_t high, uint64_t count, uint64_t cumulative)
{
	void **args = ctx;
	const struct perf_run *run = args[0];
	json_object *arr = args[1];
	const struct nvp_histogram *h = args[2];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "low_us", json_object_new_double(perf_ticks_to_us(run, low)));
	json_object_object_add(o, "high_us",
			       json_object_new_double(perf_ticks_to_us(run, high + 1)));
	json_object_object_add(o, "count", json_object_new_int64((int64_t)count));
	json_object_object_add(o, "cumulative_pct",
			       json_object_new_double(100.0 * (double)cumulative /
						      (double)nvp_histogram_count(h)));
	json_object_array_add(arr, o);
	return 0;
}

/* Sample @i's IOPS of each job: the sum of its targets'. */
static json_object *
sample_jobs(const struct perf_run *run, uint32_t i)
{
	json_object *arr = json_object_new_array();
	uint32_t j, n;

	for (j = 0; j < run->opts.num_jobs; j++) {
		double iops = 0;

		for (n = 0; n < run->num_ns; n++) {
			if (run->ns[n].job == &run->opts.jobs[j]) {
				iops += run->ns_iops[(size_t)n * PERF_MAX_SAMPLES + i];
			}
		}
		json_object_array_add(arr, json_object_new_double(iops));
	}
	return arr;
}

static json_object *
samples_arr(const struct perf_run *run)
{
	json_object *arr = json_object_new_array();
	uint32_t i;

	for (i = 0; i < run->num_samples; i++) {
		const struct perf_sample *s = &run->samples[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "t_s", json_object_new_double(s->t_s));
		json_object_object_add(o, "iops", json_object_new_double(s->iops));
		json_object_object_add(o, "mib_s", json_object_new_double(s->mib_s));
		json_object_object_add(o, "mean_us", json_object_new_double(s->mean_us));
		json_object_object_add(o, "job_iops", sample_jobs(run, i));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* One job's result: its own I/Os, latency from its own histogram, its threads. */
static json_object *
job_obj(const struct perf_run *run, uint32_t j)
{
	json_object *o = json_object_new_object(), *threads = json_object_new_array();
	struct perf_job_result r;
	uint32_t t;

	if (perf_job_result_get(run, j, &r) != 0) {
		json_object_put(o);
		json_object_put(threads);
		return NULL;
	}
	JADD(o, "name", JSTR(run->opts.jobs[j].name));
	JADD(o, "ios", JINT(r.ios));
	JADD(o, "reads", JINT(r.reads));
	JADD(o, "writes", JINT(r.writes));
	JADD(o, "errors", JINT(r.errors));
	JADD(o, "iops", json_object_new_double(r.iops));
	JADD(o, "mib_s", json_object_new_double(r.mib_s));
	JADD(o, "latency_us", lat_obj(run, r.hist));
	JADD(o, "latency_samples", JINT(nvp_histogram_count(r.hist)));
	for (t = 0; t < run->num_threads; t++) {
		if ((r.thread_mask >> t) & 1) {
			json_object *to = thread_obj(run, &run->threads[t]);

			json_object *names = thread_jobs(&run->threads[t]);

			JADD(to, "jobs_on_thread", JINT(json_object_array_length(names)));
			json_object_put(names);
			json_object_array_add(threads, to);
		}
	}
	JADD(o, "threads", threads);
	perf_job_result_free(&r);
	return o;
}

static json_object *
jobs_arr(const struct perf_run *run)
{
	json_object *arr = json_object_new_array();
	uint32_t j;

	for (j = 0; j < run->opts.num_jobs; j++) {
		json_object_array_add(arr, job_obj(run, j));
	}
	return arr;
}

static const char *
status_name(enum perf_status s)
{
	switch (s) {
	case PERF_STATUS_OK:
		return "ok";
	case PERF_STATUS_INTERRUPTED:
		return "interrupted";
	case PERF_STATUS_INTERRUPTED_WARMUP:
		return "interrupted_warmup";
	case PERF_STATUS_USAGE:
		return "usage_error";
	default:
		return "failed";
	}
}

static int
put(FILE *f, const char *path, json_object *root)
{
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);

	if (fputs(text, f) == EOF || fputc('\n', f) == EOF) {
		fprintf(stderr, "--json %s: cannot write: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/*
 * No numbers that could be taken for results: the status, why, and what was asked. A run
 * stopped during its warm-up measured nothing: empty results, a total of 0 I/Os.
 */
static int
write_failed(const struct perf_run *run)
{
	json_object *root = json_object_new_object();
	int rc;

	json_object_object_add(root, "status", json_object_new_string(status_name(run->status)));
	json_object_object_add(root, "error", json_object_new_string(run->error));
	json_object_object_add(root, "config", config_obj(run));
	if (run->status == PERF_STATUS_INTERRUPTED_WARMUP) {
		json_object *total = json_object_new_object();

		json_object_object_add(root, "results", json_object_new_array());
		json_object_object_add(total, "ios", json_object_new_int64(0));
		json_object_object_add(total, "iops", json_object_new_double(0.0));
		json_object_object_add(root, "total", total);
	}
	rc = put(run->json_f, run->opts.json_path, root);
	json_object_put(root);
	return rc;
}

int
perf_json_write_usage(const char *path, const char *msg)
{
	bool to_stdout = path != NULL && strcmp(path, "-") == 0;
	json_object *root;
	FILE *f;
	int rc;

	if (path == NULL) {
		return 0;
	}
	f = to_stdout ? stdout : fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "--json %s: cannot create: %s\n", path, strerror(errno));
		return -errno;
	}
	root = json_object_new_object();
	json_object_object_add(root, "status", json_object_new_string("usage_error"));
	json_object_object_add(root, "error", json_object_new_string(msg));
	rc = put(f, path, root);
	json_object_put(root);
	if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) {
		fprintf(stderr, "--json %s: write failed: %s\n", path, strerror(errno));
		rc = -EIO;
	}
	return rc;
}

int
perf_json_write(const struct perf_run *run)
{
	struct nvp_histogram *h;
	json_object *root, *total, *hist;
	void *args[3];
	int rc = 0;

	if (run->status == PERF_STATUS_FAILED || run->status == PERF_STATUS_USAGE ||
	    run->status == PERF_STATUS_INTERRUPTED_WARMUP) {
		return write_failed(run);
	}
	h = malloc(sizeof(*h));
	if (h == NULL) {
		return -ENOMEM;
	}
	perf_total_histogram(run, h);
	root = json_object_new_object();
	hist = json_object_new_array();
	json_object_object_add(root, "status", json_object_new_string(status_name(run->status)));
	if (run->error[0] != '\0') {
		/* the run ended early (a controller failed): results up to then */
		json_object_object_add(root, "error", json_object_new_string(run->error));
	}
	json_object_object_add(root, "config", config_obj(run));
	json_object_object_add(root, "results", results_and_total(run, h, &total));
	json_object_object_add(root, "jobs", jobs_arr(run));
	json_object_object_add(root, "total", total);
	args[0] = (void *)run;
	args[1] = hist;
	args[2] = h;
	nvp_histogram_iterate(h, hist_bucket, args);
	json_object_object_add(root, "histogram", hist);
	json_object_object_add(root, "samples", samples_arr(run));
	if (run->opts.bdev_config != NULL) {
		json_object_object_add(root, "bdevs", perf_bdev_json(run));
	}
	rc = put(run->json_f, run->opts.json_path, root);
	json_object_put(root);
	free(h);
	return rc;
}
