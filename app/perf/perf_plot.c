/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf --plot FILE.svg: a self-contained SVG, no external tools. Top: the latency
 * distribution of all I/Os (cumulative % over a log latency axis, p50/p99/p99.9 marked);
 * bottom: IOPS per second over the run.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define W 960
#define H 780
#define ML 90 /* plot area margins */
#define MR 40
#define PW (W - ML - MR)
#define CDF_TOP 70
#define CDF_H 270
#define IOPS_TOP 450
#define IOPS_H 250

struct axis {
	double lo, hi;
	bool log;
};

static double
axis_pos(const struct axis *a, double v, double len)
{
	double x0 = a->log ? log10(a->lo) : a->lo, x1 = a->log ? log10(a->hi) : a->hi;
	double x = a->log ? log10(v > 0 ? v : a->lo) : v;

	if (x < x0) {
		x = x0;
	}
	return (x - x0) / (x1 - x0) * len;
}

/* A round step giving about @n intervals over @range: 1, 2 or 5 times a power of ten. */
static double
nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10.0, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void
fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1e6) {
		snprintf(buf, len, "%gM", v / 1e6);
	} else if (v >= 1e3) {
		snprintf(buf, len, "%gk", v / 1e3);
	} else {
		snprintf(buf, len, "%g", v);
	}
}

static void
frame(FILE *f, int top, int h, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(f, "<text x='%d' y='%d' class='t'>%s</text>\n", ML, top - 14, title);
	fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' class='frame'/>\n", ML, top, PW, h);
	fprintf(f, "<text x='%d' y='%d' class='l' text-anchor='middle'>%s</text>\n", ML + PW / 2,
		top + h + 42, xlabel);
	fprintf(f,
		"<text x='%d' y='%d' class='l' text-anchor='middle' "
		"transform='rotate(-90 %d %d)'>%s</text>\n",
		24, top + h / 2, 24, top + h / 2, ylabel);
}

static void
log_x_ticks(FILE *f, const struct axis *a, int top, int h)
{
	double d, m;
	char lbl[32];

	for (d = a->lo; d <= a->hi * 1.0001; d *= 10) {
		for (m = 1; m < 10 && d * m <= a->hi * 1.0001; m++) {
			double x = ML + axis_pos(a, d * m, PW);

			fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' class='%s'/>\n", x,
				top, x, top + h, m == 1 ? "g" : "g2");
		}
		/* latencies in us read better in full: 1000, not 1k */
		snprintf(lbl, sizeof(lbl), "%g", d);
		fprintf(f, "<text x='%.1f' y='%d' class='n' text-anchor='middle'>%s</text>\n",
			ML + axis_pos(a, d, PW), top + h + 18, lbl);
	}
}

static void
lin_y_ticks(FILE *f, const struct axis *a, int top, int h, const char *suffix)
{
	double step = nice_step(a->hi - a->lo, 5), v;
	char lbl[32];

	for (v = a->lo; v <= a->hi * 1.0001; v += step) {
		double y = top + h - axis_pos(a, v, h);

		fmt_num(lbl, sizeof(lbl), v);
		fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' class='g'/>\n", ML, y,
			ML + PW, y);
		fprintf(f, "<text x='%d' y='%.1f' class='n' text-anchor='end'>%s%s</text>\n",
			ML - 6, y + 4, lbl, suffix);
	}
}

struct cdf_ctx {
	FILE *f;
	const struct perf_run *run;
	const struct axis *x;
	double total;
};

static int
cdf_point(void *arg, uint64_t low, uint64_t high, uint64_t count, uint64_t cumulative)
{
	struct cdf_ctx *c = arg;
	double us = perf_ticks_to_us(c->run, high + 1);
	double y = CDF_TOP + CDF_H - (double)cumulative / c->total * CDF_H;

	(void)low;
	(void)count;
	fprintf(c->f, " %.1f,%.1f", ML + axis_pos(c->x, us, PW), y);
	return 0;
}

static void
mark_percentile(FILE *f, const struct perf_run *run, const struct axis *x,
		const struct nvp_histogram *h, double p, int row)
{
	double us = perf_ticks_to_us(run, nvp_histogram_value_at_percentile(h, p));
	double px = ML + axis_pos(x, us, PW), py = CDF_TOP + CDF_H - p / 100.0 * CDF_H;

	fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' class='m'/>\n", px, py);
	fprintf(f, "<text x='%d' y='%d' class='n'>p%g = %.1f us</text>\n", ML + 12,
		CDF_TOP + 20 + 18 * row, p, us);
}

static void
plot_cdf(FILE *f, const struct perf_run *run, const struct nvp_histogram *h)
{
	struct axis x = { .log = true }, y = { 0, 100, false };
	double min_us = perf_ticks_to_us(run, nvp_histogram_min(h));
	double max_us = perf_ticks_to_us(run, nvp_histogram_max(h));
	struct cdf_ctx c = { f, run, &x, (double)nvp_histogram_count(h) };

	x.lo = pow(10.0, floor(log10(min_us > 0.01 ? min_us : 0.01)));
	x.hi = pow(10.0, ceil(log10(max_us > x.lo ? max_us : x.lo * 10)));
	if (x.hi <= x.lo) {
		x.hi = x.lo * 10;
	}
	frame(f, CDF_TOP, CDF_H, "Latency distribution (all I/Os)", "latency (us, log scale)",
	      "I/Os completed within (%)");
	log_x_ticks(f, &x, CDF_TOP, CDF_H);
	lin_y_ticks(f, &y, CDF_TOP, CDF_H, "%");
	if (c.total == 0) {
		return;
	}
	fprintf(f, "<polyline class='c' points='%.1f,%d", ML + axis_pos(&x, min_us, PW),
		CDF_TOP + CDF_H);
	nvp_histogram_iterate(h, cdf_point, &c);
	fprintf(f, "'/>\n");
	mark_percentile(f, run, &x, h, 50, 0);
	mark_percentile(f, run, &x, h, 99, 1);
	mark_percentile(f, run, &x, h, 99.9, 2);
}

static void
plot_iops(FILE *f, const struct perf_run *run)
{
	struct axis x = { 0, run->opts.time_s, false }, y = { 0, 1, false };
	double step;
	char lbl[32];
	uint32_t i;

	for (i = 0; i < run->num_samples; i++) {
		y.hi = run->samples[i].iops > y.hi ? run->samples[i].iops : y.hi;
		x.hi = run->samples[i].t_s > x.hi ? run->samples[i].t_s : x.hi;
	}
	step = nice_step(y.hi * 1.1, 5);
	y.hi = ceil(y.hi * 1.1 / step) * step;
	frame(f, IOPS_TOP, IOPS_H, "IOPS over time (all I/O threads, per second)", "time (s)",
	      "IOPS");
	lin_y_ticks(f, &y, IOPS_TOP, IOPS_H, "");
	step = nice_step(x.hi, 8);
	for (double t = 0; t <= x.hi * 1.0001; t += step) {
		fmt_num(lbl, sizeof(lbl), t);
		fprintf(f, "<text x='%.1f' y='%d' class='n' text-anchor='middle'>%s</text>\n",
			ML + axis_pos(&x, t, PW), IOPS_TOP + IOPS_H + 18, lbl);
	}
	if (run->num_samples == 0) {
		fprintf(f, "<text x='%d' y='%d' class='n'>no per-second samples</text>\n", ML + 12,
			IOPS_TOP + 24);
		return;
	}
	fprintf(f, "<polyline class='c' points='");
	for (i = 0; i < run->num_samples; i++) {
		fprintf(f, " %.1f,%.1f", ML + axis_pos(&x, run->samples[i].t_s, PW),
			IOPS_TOP + IOPS_H - axis_pos(&y, run->samples[i].iops, IOPS_H));
	}
	fprintf(f, "'/>\n");
	for (i = 0; i < run->num_samples; i++) {
		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' class='m'/>\n",
			ML + axis_pos(&x, run->samples[i].t_s, PW),
			IOPS_TOP + IOPS_H - axis_pos(&y, run->samples[i].iops, IOPS_H));
	}
}

static void
header(FILE *f, const struct perf_run *run)
{
	const struct perf_opts *o = &run->opts;

	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n",
		W, H, W, H);
	fprintf(f, "<style>.t{font-size:16px;font-weight:bold}.l{font-size:13px}"
		   ".n{font-size:12px}.frame{fill:none;stroke:#333}.g{stroke:#ccc}"
		   ".g2{stroke:#eee}.c{fill:none;stroke:#1f77b4;stroke-width:2}"
		   ".m{fill:#d62728}</style>\n");
	fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
	fprintf(f,
		"<text x='%d' y='28' class='t'>nvp_perf -q %u -o %u -w %s -M %u -t %u -c 0x%lx "
		"-P %u</text>\n",
		ML, o->queue_depth, o->io_size, o->workload, o->read_pct, o->time_s,
		(unsigned long)o->core_mask, o->qpairs_per_ns);
}

int
perf_plot_write(const struct perf_run *run)
{
	struct nvp_histogram *h = malloc(sizeof(*h));
	FILE *f = run->plot_f;

	if (h == NULL) {
		return -ENOMEM;
	}
	perf_total_histogram(run, h);
	header(f, run);
	plot_cdf(f, run, h);
	plot_iops(f, run);
	fprintf(f, "</svg>\n");
	free(h);
	return 0;
}
