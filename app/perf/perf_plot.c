/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf --plot FILE.svg: a self-contained SVG, no external tools.
 *
 * Top: latency by percentile, HdrHistogram style. The x axis is in "nines": x =
 * log10(1 / (1 - p)), so 90 %, 99 %, 99.9 %, 99.99 % are evenly spaced and the tail gets
 * as much room as the median (on a linear 0-100 % axis it is squeezed into the top pixel
 * row). The y axis is latency on a log scale, so an 80 us device and a 2 us one both
 * read. One labelled curve per device and core (a row of the report) and the total; each
 * curve stops where its I/O count runs out of resolution (p = 1 - 1/count).
 * Bottom: IOPS of all I/O threads over the measured window, one point per 100 ms sample.
 * The title is the command line as typed (only the flags the user passed) and the targets.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define W 1000
#define ML 90 /* plot area margins */
#define MR 40
#define PW (W - ML - MR)
#define LAT_TOP 110
#define LAT_H 330
#define LEGEND_TOP (LAT_TOP + LAT_H + 56)
#define LEGEND_ROW 18
#define MAX_CURVES 12 /* rows drawn; the total is always drawn */
#define IOPS_H 230
#define NINES_MAX 6.0 /* 99.9999 % */
#define CURVE_POINTS 240

static const char *const g_colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
					"#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
					"#bcbd22", "#17becf", "#393b79", "#637939" };

/* Text into SVG: the XML specials escaped (transport IDs may hold any of them). */
static void
put_text(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
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
	fprintf(f, "<text x='%d' y='%d' class='t'>%s</text>\n", ML, top - 12, title);
	fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' class='frame'/>\n", ML, top, PW, h);
	fprintf(f, "<text x='%d' y='%d' class='l' text-anchor='middle'>%s</text>\n", ML + PW / 2,
		top + h + 38, xlabel);
	fprintf(f,
		"<text x='%d' y='%d' class='l' text-anchor='middle' "
		"transform='rotate(-90 %d %d)'>%s</text>\n",
		24, top + h / 2, 24, top + h / 2, ylabel);
}

/* ---- latency by percentile ------------------------------------------------------------ */

struct lat_axes {
	double nines;          /* x axis: 0 .. nines */
	double lo_log, hi_log; /* y axis: log10(us) */
};

static double
x_of(const struct lat_axes *a, double nines)
{
	return ML + (nines > a->nines ? a->nines : nines) / a->nines * PW;
}

static double
y_of(const struct lat_axes *a, double us)
{
	double l = log10(us > 0 ? us : pow(10.0, a->lo_log));

	if (l < a->lo_log) {
		l = a->lo_log;
	}
	return LAT_TOP + LAT_H - (l - a->lo_log) / (a->hi_log - a->lo_log) * LAT_H;
}

/* Resolution of a histogram of @count I/Os in nines: beyond 1 - 1/count there is only max. */
static double
count_nines(uint64_t count)
{
	double n = count > 1 ? log10((double)count) : 0.0;

	return n < NINES_MAX ? n : NINES_MAX;
}

static void
lat_axes_get(const struct perf_run *run, const struct nvp_histogram *total, struct lat_axes *a)
{
	double min_us = perf_ticks_to_us(run, nvp_histogram_min(total));
	double max_us = perf_ticks_to_us(run, nvp_histogram_max(total));

	a->nines = ceil(count_nines(nvp_histogram_count(total)));
	if (a->nines < 2) {
		a->nines = 2;
	}
	a->lo_log = floor(log10(min_us > 0.01 ? min_us : 0.01));
	a->hi_log = ceil(log10(max_us > 0.01 ? max_us : 0.01));
	if (a->hi_log <= a->lo_log) {
		a->hi_log = a->lo_log + 1;
	}
}

static void
lat_grid(FILE *f, const struct lat_axes *a)
{
	char lbl[32];
	double d, m;
	int n;

	for (n = 0; n <= (int)a->nines; n++) {
		double x = x_of(a, n);

		/* 0 -> "0%", 1 -> "90%", 2 -> "99%", 3 -> "99.9%" ... */
		if (n == 0) {
			snprintf(lbl, sizeof(lbl), "0%%");
		} else {
			snprintf(lbl, sizeof(lbl), "%.*f%%", n > 2 ? n - 2 : 0,
				 100.0 - pow(10, 2 - n));
		}
		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' class='g'/>\n", x, LAT_TOP, x,
			LAT_TOP + LAT_H);
		fprintf(f, "<text x='%.1f' y='%d' class='n' text-anchor='middle'>%s</text>\n", x,
			LAT_TOP + LAT_H + 18, lbl);
	}
	for (d = pow(10, a->lo_log); d <= pow(10, a->hi_log) * 1.0001; d *= 10) {
		for (m = 1; m < 10 && d * m <= pow(10, a->hi_log) * 1.0001; m++) {
			double y = y_of(a, d * m);

			fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' class='%s'/>\n", ML,
				y, ML + PW, y, m == 1 ? "g" : "g2");
		}
		/* latencies in us read better in full: 1000, not 1k or 1e+03 */
		snprintf(lbl, sizeof(lbl), d >= 1 ? "%.0f" : "%g", d);
		fprintf(f, "<text x='%d' y='%.1f' class='n' text-anchor='end'>%s</text>\n", ML - 6,
			y_of(a, d) + 4, lbl);
	}
}

/* One curve: latency at CURVE_POINTS percentiles up to the histogram's resolution. */
static void
lat_curve(FILE *f, const struct perf_run *run, const struct lat_axes *a,
	  const struct nvp_histogram *h, const char *color, double width)
{
	double end = count_nines(nvp_histogram_count(h));
	int i;

	if (nvp_histogram_count(h) == 0) {
		return;
	}
	if (end > a->nines) {
		end = a->nines;
	}
	fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%.1f' points='", color, width);
	for (i = 0; i <= CURVE_POINTS; i++) {
		double n = end * i / CURVE_POINTS, pct = 100.0 * (1.0 - pow(10.0, -n));
		uint64_t v = i == CURVE_POINTS ? nvp_histogram_max(h) :
						 nvp_histogram_value_at_percentile(h, pct);

		fprintf(f, " %.1f,%.1f", x_of(a, n), y_of(a, perf_ticks_to_us(run, v)));
	}
	fprintf(f, "'/>\n");
}

/* A legend line: colour, label, and the figures the curve shows. */
static void
legend_entry(FILE *f, const struct perf_run *run, int row, const char *color, const char *label,
	     const struct nvp_histogram *h)
{
	struct perf_lat_summary s;
	int y = LEGEND_TOP + row * LEGEND_ROW;

	perf_lat_summary_get(run, h, &s);
	fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>\n", ML,
		y - 4, ML + 24, y - 4, color);
	fprintf(f, "<text x='%d' y='%d' class='n'>", ML + 32, y);
	put_text(f, label);
	fprintf(f, ": p50 %.1f, p99 %.1f, p99.9 %.1f, p99.99 %.1f, max %.1f us (%lu I/Os)</text>\n",
		s.p50_us, s.p99_us, s.p999_us, s.p9999_us, s.max_us,
		(unsigned long)nvp_histogram_count(h));
}

/* Rows drawn (at most MAX_CURVES) and the total. \return the legend's line count. */
static int
plot_latency(FILE *f, const struct perf_run *run, const struct nvp_histogram *total)
{
	struct lat_axes a;
	char label[256];
	uint32_t t, n;
	int rows = 0, skipped = 0;

	lat_axes_get(run, total, &a);
	frame(f, LAT_TOP, LAT_H, "Latency by percentile (per device and core, and total)",
	      "percentile (nines: 90%, 99%, 99.9% ... evenly spaced)", "latency (us, log scale)");
	lat_grid(f, &a);
	if (nvp_histogram_count(total) == 0) {
		fprintf(f, "<text x='%d' y='%d' class='n'>no I/O completed</text>\n", ML + 12,
			LAT_TOP + 24);
		return 0;
	}
	for (t = 0; t < run->num_threads; t++) {
		const struct perf_thread *th = &run->threads[t];

		for (n = 0; n < th->num_ns; n++) {
			const struct perf_ns_stats *st = &th->ns_stats[n];

			if (rows == MAX_CURVES) {
				skipped++;
				continue;
			}
			snprintf(label, sizeof(label), "%s, core %u", st->ns->label, th->core);
			lat_curve(f, run, &a, st->hist, g_colors[rows], 2);
			legend_entry(f, run, rows + 1, g_colors[rows], label, st->hist);
			rows++;
		}
	}
	lat_curve(f, run, &a, total, "#000", rows > 1 ? 2.5 : 1);
	legend_entry(f, run, 0, "#000", "total", total);
	if (skipped > 0) {
		fprintf(f,
			"<text x='%d' y='%d' class='n'>%d more device/core rows not drawn "
			"(see --json)</text>\n",
			ML + 32, LEGEND_TOP + (rows + 1) * LEGEND_ROW, skipped);
		rows++;
	}
	return rows + 1;
}

/* ---- IOPS over time ------------------------------------------------------------------- */

static void
iops_axes(FILE *f, const struct perf_run *run, int top, double xmax, double ymax)
{
	double step = nice_step(ymax, 5), v;
	char lbl[32];

	for (v = 0; v <= ymax * 1.0001; v += step) {
		double y = top + IOPS_H - v / ymax * IOPS_H;

		fmt_num(lbl, sizeof(lbl), v);
		fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' class='g'/>\n", ML, y,
			ML + PW, y);
		fprintf(f, "<text x='%d' y='%.1f' class='n' text-anchor='end'>%s</text>\n", ML - 6,
			y + 4, lbl);
	}
	step = nice_step(xmax, 8);
	for (v = 0; v <= xmax * 1.0001; v += step) {
		fmt_num(lbl, sizeof(lbl), v);
		fprintf(f, "<text x='%.1f' y='%d' class='n' text-anchor='middle'>%s</text>\n",
			ML + v / xmax * PW, top + IOPS_H + 18, lbl);
	}
	(void)run;
}

static void
plot_iops(FILE *f, const struct perf_run *run, int top)
{
	double xmax = run->opts.time_s, ymax = 1, step;
	char title[128];
	uint32_t i;

	for (i = 0; i < run->num_samples; i++) {
		ymax = run->samples[i].iops > ymax ? run->samples[i].iops : ymax;
		xmax = run->samples[i].t_s > xmax ? run->samples[i].t_s : xmax;
	}
	step = nice_step(ymax * 1.1, 5);
	ymax = ceil(ymax * 1.1 / step) * step;
	snprintf(title, sizeof(title), "IOPS over time (all I/O threads, %.0f ms steps%s)",
		 (double)run->sample_ticks * 1e3 / (double)run->ticks_hz,
		 run->opts.warmup_s ? ", after the warm-up" : "");
	frame(f, top, IOPS_H, title, "time (s)", "IOPS");
	iops_axes(f, run, top, xmax, ymax);
	if (run->num_samples == 0) {
		fprintf(f, "<text x='%d' y='%d' class='n'>no samples</text>\n", ML + 12, top + 24);
		return;
	}
	fprintf(f, "<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='");
	for (i = 0; i < run->num_samples; i++) {
		fprintf(f, " %.1f,%.1f", ML + run->samples[i].t_s / xmax * PW,
			top + IOPS_H - run->samples[i].iops / ymax * IOPS_H);
	}
	fprintf(f, "'/>\n");
}

/* ---- the file ------------------------------------------------------------------------- */

void
perf_plot_title(const struct perf_run *run, char *buf, size_t len)
{
	snprintf(buf, len, "nvp_perf%s%s", run->opts.cmdline[0] ? " " : "", run->opts.cmdline);
}

static void
header(FILE *f, const struct perf_run *run, int height)
{
	char title[600];
	uint32_t i;

	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n",
		W, height, W, height);
	fprintf(f, "<style>.t{font-size:16px;font-weight:bold}.l{font-size:13px}"
		   ".n{font-size:12px}.frame{fill:none;stroke:#333}.g{stroke:#ccc}"
		   ".g2{stroke:#eee}</style>\n");
	fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
	perf_plot_title(run, title, sizeof(title));
	fprintf(f, "<text x='%d' y='28' class='t'>", ML);
	put_text(f, title);
	fprintf(f, "</text>\n<text x='%d' y='50' class='l'>target%s: ", ML,
		run->opts.num_trids > 1 ? "s" : "");
	for (i = 0; i < run->opts.num_trids; i++) {
		fputs(i ? "; " : "", f);
		put_text(f, run->opts.trids[i]);
	}
	fprintf(f, "</text>\n");
}

static int
legend_lines(const struct perf_run *run)
{
	uint32_t rows = 0, t;

	for (t = 0; t < run->num_threads; t++) {
		rows += run->threads[t].num_ns;
	}
	return (rows > MAX_CURVES ? MAX_CURVES + 1 : (int)rows) + 1;
}

int
perf_plot_write(const struct perf_run *run)
{
	struct nvp_histogram *h = malloc(sizeof(*h));
	FILE *f = run->plot_f;
	int iops_top, height;

	if (h == NULL) {
		return -ENOMEM;
	}
	iops_top = LEGEND_TOP + legend_lines(run) * LEGEND_ROW + 50;
	height = iops_top + IOPS_H + 60;
	perf_total_histogram(run, h);
	header(f, run, height);
	plot_latency(f, run, h);
	plot_iops(f, run, iops_top);
	fprintf(f, "</svg>\n");
	free(h);
	return 0;
}
