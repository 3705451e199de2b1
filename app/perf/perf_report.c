/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's final report, laid out as spdk_nvme_perf's: a row per target per core
 * (IOPS, MiB/s, average/min/max latency in us) and a total; with several jobs a table of
 * the jobs (each one's I/Os, IOPS and percentiles from its own histogram); -L adds
 * percentiles per row, -LL the histogram buckets with cumulative percentages; then the
 * I/O threads' CPU time and how often they were preempted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const double g_pcts[] = { 1, 10, 25, 50, 75, 90, 95, 98, 99, 99.5, 99.9, 99.99, 99.999 };

double
perf_ticks_to_us(const struct perf_run *run, uint64_t ticks)
{
	return (double)ticks * 1e6 / (double)run->ticks_hz;
}

void
perf_lat_summary_get(const struct perf_run *run, const struct nvp_histogram *h,
		     struct perf_lat_summary *s)
{
	s->mean_us = nvp_histogram_mean(h) * 1e6 / (double)run->ticks_hz;
	s->min_us = perf_ticks_to_us(run, nvp_histogram_min(h));
	s->max_us = perf_ticks_to_us(run, nvp_histogram_max(h));
	s->p50_us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, 50));
	s->p90_us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, 90));
	s->p99_us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, 99));
	s->p999_us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, 99.9));
	s->p9999_us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, 99.99));
}

void
perf_total_histogram(const struct perf_run *run, struct nvp_histogram *total)
{
	uint32_t t, n;

	nvp_histogram_init(total);
	for (t = 0; t < run->num_threads; t++) {
		for (n = 0; n < run->threads[t].num_ns; n++) {
			nvp_histogram_merge(total, run->threads[t].ns_stats[n].hist);
		}
	}
}

/* Every row's errors, with (@with_window) or without those of the window: the drain's. */
static uint64_t
sum_errors(const struct perf_run *run, bool with_window)
{
	uint64_t errors = 0;
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		for (n = 0; n < run->threads[t].num_ns; n++) {
			const struct perf_ns_stats *st = &run->threads[t].ns_stats[n];

			errors += st->drain_errors + (with_window ? st->errors : 0);
		}
	}
	return errors;
}

uint64_t
perf_total_errors(const struct perf_run *run)
{
	return sum_errors(run, true);
}

static void
row_label(char *buf, size_t len, const struct perf_thread *th, const struct perf_ns_stats *st)
{
	snprintf(buf, len, "%s from core %2u", st->ns->label, th->core);
}

double
perf_row_mibs(const struct perf_run *run, const struct perf_thread *th,
	      const struct perf_ns_stats *st)
{
	return perf_row_iops(run, th, st) * st->ns->job->io_size / (1024.0 * 1024.0);
}

int
perf_job_result_get(const struct perf_run *run, uint32_t j, struct perf_job_result *r)
{
	uint32_t t, n;

	memset(r, 0, sizeof(*r));
	r->hist = malloc(sizeof(*r->hist));
	if (r->hist == NULL) {
		return -ENOMEM;
	}
	nvp_histogram_init(r->hist);
	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			const struct perf_ns_stats *st = &th->ns_stats[n];

			if (st->ns->job != &run->opts.jobs[j]) {
				continue;
			}
			nvp_histogram_merge(r->hist, st->hist);
			r->ios += st->ios;
			r->reads += st->reads;
			r->writes += st->writes;
			r->errors += st->errors;
			r->iops += perf_row_iops(run, th, st);
			r->mib_s += perf_row_mibs(run, th, st);
			r->rows++;
			r->thread_mask |= 1ull << t;
			if (r->target == NULL) {
				r->target = st->ns;
			} else if (strcmp(r->target->name, st->ns->name) != 0) {
				r->targets_differ = true;
			}
		}
	}
	return 0;
}

void
perf_job_result_free(struct perf_job_result *r)
{
	free(r->hist);
	r->hist = NULL;
}

double
perf_row_iops(const struct perf_run *run, const struct perf_thread *th,
	      const struct perf_ns_stats *st)
{
	double secs = (double)th->elapsed_ticks / (double)run->ticks_hz;

	/* over the measured window only: not the warm-up, not the drain after it */
	return secs > 0 ? (double)st->ios / secs : 0.0;
}

static void
print_table(const struct perf_run *run, FILE *f)
{
	double tot_iops = 0, tot_mibs = 0, tot_lat = 0, tot_min = 0, tot_max = 0;
	uint64_t tot_ios = 0;
	char label[256];
	uint32_t t, n;

	fprintf(f, "========================================================\n");
	fprintf(f, "%*s\n", 103, "Latency(us)");
	fprintf(f, "%-55s: %10s %10s %10s %10s %10s\n", "Device Information", "IOPS", "MiB/s",
		"Average", "min", "max");
	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			const struct perf_ns_stats *st = &th->ns_stats[n];
			struct perf_lat_summary s;
			double iops = perf_row_iops(run, th, st);
			double mibs = perf_row_mibs(run, th, st);

			perf_lat_summary_get(run, st->hist, &s);
			row_label(label, sizeof(label), th, st);
			fprintf(f, "%-55s: %10.2f %10.2f %10.2f %10.2f %10.2f\n", label, iops, mibs,
				s.mean_us, s.min_us, s.max_us);
			if (st->ios == 0) {
				continue;
			}
			tot_lat += s.mean_us * (double)st->ios;
			tot_min = tot_ios == 0 || s.min_us < tot_min ? s.min_us : tot_min;
			tot_max = s.max_us > tot_max ? s.max_us : tot_max;
			tot_iops += iops;
			tot_mibs += mibs;
			tot_ios += st->ios;
		}
	}
	fprintf(f, "========================================================\n");
	fprintf(f, "%-55s: %10.2f %10.2f %10.2f %10.2f %10.2f\n", "Total", tot_iops, tot_mibs,
		tot_ios ? tot_lat / (double)tot_ios : 0.0, tot_min, tot_max);
	fprintf(f, "\n");
}

static void
print_percentiles(const struct perf_run *run, FILE *f, const char *label,
		  const struct nvp_histogram *h)
{
	size_t i;

	fprintf(f, "Summary latency data for %s:\n", label);
	fprintf(f, "=================================================================="
		   "===============\n");
	for (i = 0; i < sizeof(g_pcts) / sizeof(g_pcts[0]); i++) {
		fprintf(f, "%10.5f%% : %12.3fus\n", g_pcts[i],
			perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, g_pcts[i])));
	}
	fprintf(f, "%10s  : %12.3fus\n", "max", perf_ticks_to_us(run, nvp_histogram_max(h)));
	fprintf(f, "\n");
}

struct hist_print {
	const struct perf_run *run;
	FILE *f;
	uint64_t total;
};

static int
hist_bucket(void *ctx, uint64_t low, uint64_t high, uint64_t count, uint64_t cumulative)
{
	struct hist_print *hp = ctx;

	fprintf(hp->f, "%12.3f - %12.3f: %9.4f%%  (%9lu)\n", perf_ticks_to_us(hp->run, low),
		perf_ticks_to_us(hp->run, high + 1), 100.0 * (double)cumulative / (double)hp->total,
		(unsigned long)count);
	return 0;
}

static void
print_histogram(const struct perf_run *run, FILE *f, const char *label,
		const struct nvp_histogram *h)
{
	struct hist_print hp = { .run = run, .f = f, .total = nvp_histogram_count(h) };

	fprintf(f, "Latency histogram for %s:\n", label);
	fprintf(f, "=================================================================="
		   "============\n");
	fprintf(f, "%27s  %11s  %11s\n", "Range in us", "Cumulative", "IO count");
	if (hp.total != 0) {
		nvp_histogram_iterate(h, hist_bucket, &hp);
	}
	fprintf(f, "\n");
}

static void
print_latency_details(const struct perf_run *run, FILE *f)
{
	char label[256];
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			row_label(label, sizeof(label), th, &th->ns_stats[n]);
			print_percentiles(run, f, label, th->ns_stats[n].hist);
		}
	}
	if (run->opts.latency_level < 2) {
		return;
	}
	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			row_label(label, sizeof(label), th, &th->ns_stats[n]);
			print_histogram(run, f, label, th->ns_stats[n].hist);
		}
	}
}

/* ", jobs reader, writer": the jobs thread @th runs (when the run has several). */
static void
thread_jobs(const struct perf_run *run, const struct perf_thread *th, FILE *f)
{
	const struct perf_job *last = NULL;
	uint32_t n;

	if (run->opts.num_jobs < 2) {
		return;
	}
	for (n = 0; n < th->num_ns; n++) {
		if (th->ns_stats[n].ns->job != last) {
			fprintf(f, "%s%s", last == NULL ? "; jobs " : ", ",
				th->ns_stats[n].ns->job->name);
			last = th->ns_stats[n].ns->job;
		}
	}
}

static void
print_cpu(const struct perf_run *run, FILE *f)
{
	uint64_t cpu = 0, ios = 0, dbs = 0, cqdbs = 0, subs = 0;
	bool doorbells = false;
	uint32_t t, n;

	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];
		double secs = (double)th->elapsed_ticks / (double)run->ticks_hz;

		for (n = 0; n < th->num_ns; n++) {
			const struct perf_ns_stats *st = &th->ns_stats[n];

			ios += st->ios;
			/* doorbells are PCIe's: a TCP qpair has none to count */
			doorbells |= st->ns->doorbells;
			dbs += st->ns->doorbells ? st->sq_doorbells : 0;
			cqdbs += st->ns->doorbells ? st->cq_doorbells : 0;
			subs += st->ns->doorbells ? st->submitted : 0;
		}
		fprintf(f,
			"CPU time of I/O thread on core %2u: %8.3f s of %8.3f s elapsed (%5.1f%%), "
			"%" PRIu64 " involuntary context switches",
			th->core, (double)th->cpu_ns / 1e9, secs,
			secs > 0 ? 100.0 * ((double)th->cpu_ns / 1e9) / secs : 0.0, th->nivcsw);
		thread_jobs(run, th, f);
		fprintf(f, "\n");
		cpu += th->cpu_ns;
	}
	fprintf(f, "CPU time of I/O threads (%s mode): %.3f s total, %.3f us per I/O\n",
		run->opts.bdev_config != NULL ? "bdev" : "raw NVMe", (double)cpu / 1e9,
		ios ? (double)cpu / 1e3 / (double)ios : 0.0);
	/* the bdev layer's queues are the module's: no doorbell counts there */
	if (doorbells) {
		fprintf(f,
			"SQ doorbell writes: %" PRIu64 " for %" PRIu64 " commands, %.3f per I/O\n"
			"CQ doorbell writes: %" PRIu64 ", %.3f per I/O; MMIO writes %.3f per I/O\n",
			dbs, subs, subs ? (double)dbs / (double)subs : 0.0, cqdbs,
			subs ? (double)cqdbs / (double)subs : 0.0,
			subs ? (double)(dbs + cqdbs) / (double)subs : 0.0);
	}
}

/* "BDEV m0 (malloc)", or "3 targets" for a job on several. */
static void
job_target(const struct perf_job_result *r, char *buf, size_t len)
{
	if (r->target == NULL) {
		snprintf(buf, len, "-");
	} else if (r->targets_differ) {
		snprintf(buf, len, "several targets");
	} else {
		snprintf(buf, len, "%s", r->target->name);
	}
}

/* The jobs (when there are several): each one's I/Os and latency from its own histogram. */
static void
print_jobs(const struct perf_run *run, FILE *f)
{
	struct perf_job_result r;
	char target[200], size[16];
	uint32_t j;

	fprintf(f, "%-14s %-24s %-9s %5s %6s %11s %9s %10s %10s %9s %9s %9s\n", "Job", "Target",
		"Pattern", "QD", "Size", "IOPS", "MiB/s", "Reads", "Writes", "p50 us", "p99 us",
		"p99.9 us");
	for (j = 0; j < run->opts.num_jobs; j++) {
		const struct perf_job *job = &run->opts.jobs[j];
		struct perf_lat_summary s;

		if (perf_job_result_get(run, j, &r) != 0) {
			return;
		}
		perf_lat_summary_get(run, r.hist, &s);
		job_target(&r, target, sizeof(target));
		if (job->io_size % 1024 == 0) {
			snprintf(size, sizeof(size), "%uk", job->io_size / 1024);
		} else {
			snprintf(size, sizeof(size), "%u", job->io_size);
		}
		fprintf(f,
			"%-14s %-24.24s %-9s %5u %6s %11.2f %9.2f %10" PRIu64 " %10" PRIu64
			" %9.1f %9.1f %9.1f\n",
			job->name, target, job->workload, job->queue_depth, size, r.iops, r.mib_s,
			r.reads, r.writes, s.p50_us, s.p99_us, s.p999_us);
		perf_job_result_free(&r);
	}
	fprintf(f, "\n");
}

void
perf_report_print(const struct perf_run *run, FILE *f)
{
	uint64_t errors = perf_total_errors(run);

	fprintf(f, "\n");
	print_table(run, f);
	if (run->opts.num_jobs > 1) {
		print_jobs(run, f);
	}
	if (run->opts.latency_level > 0) {
		print_latency_details(run, f);
	}
	print_cpu(run, f);
	perf_poll_report(run, f);
	perf_emu_lateness_report(run, f);
	if (run->opts.bdev_config != NULL) {
		perf_bdev_report(run, f);
	}
	if (errors != 0) {
		uint64_t drain_errors = sum_errors(run, false);

		fprintf(f, "I/O errors: %lu", (unsigned long)errors);
		if (drain_errors != 0) {
			fprintf(f, " (%lu of them completed after the window, while draining)",
				(unsigned long)drain_errors);
		}
		fprintf(f, "\n");
	}
}
