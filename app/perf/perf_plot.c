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

#include "nvpoll/util.h"

#include "perf.h"

#define W 1000
#define ML 90 /* plot area margins */
#define MR 40
#define PW (W - ML - MR)
#define TITLE_ROW 20   /* the title's lines (16 px bold) */
#define TITLE_CHARS 80 /* of bold 16 px text in the 910 px right of the margin */
#define TARGET_ROW 17  /* the targets' lines (13 px) */
#define TARGET_CHARS 120
#define MAX_LINES 8
#define LAT_H 330
#define LEGEND_ROW 18
#define MAX_CURVES 12 /* rows drawn; the total is always drawn */
#define IOPS_H 230
#define NINES_MAX 6.0 /* 99.9999 % */
#define CURVE_POINTS 240

static const char *const g_colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
					"#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
					"#bcbd22", "#17becf", "#393b79", "#637939" };
/*
 * Curves that coincide (two jobs alike, two namespaces of one device) must all stay in
 * sight: each has its own dash pattern as well as its colour, so the one drawn first shows
 * through the gaps of those drawn over it, and its own marker shape, placed at points the
 * other curves leave free; the legend shows each pattern and marker.
 */
static const char *const g_dashes[] = { "",     "9,5",     "3,4", "12,4,3,4", "6,6", "2,6",
					"14,6", "9,3,3,3", "4,8", "1,3",      "7,2", "16,8" };

#define LAT_MARK_EVERY (CURVE_POINTS / 12) /* a latency curve's markers: every 20th point */

/* Curve @k's marker at (@x, @y): a circle, square, triangle, diamond, cross or bar. */
static void
marker(FILE *f, int k, double x, double y)
{
	const char *c = g_colors[k % MAX_CURVES];

	switch (k % 6) {
	case 0:
		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'/>\n", x, y, c);
		break;
	case 1:
		fprintf(f, "<rect x='%.1f' y='%.1f' width='7' height='7' fill='%s'/>\n", x - 3.5,
			y - 3.5, c);
		break;
	case 2:
		fprintf(f, "<path d='M%.1f %.1fl4 7h-8z' fill='%s'/>\n", x, y - 4.5, c);
		break;
	case 3:
		fprintf(f, "<path d='M%.1f %.1fl4 4.5l-4 4.5l-4 -4.5z' fill='%s'/>\n", x, y - 4.5,
			c);
		break;
	case 4:
		fprintf(f, "<path d='M%.1f %.1fl8 8m0 -8l-8 8' stroke='%s' stroke-width='2'/>\n",
			x - 4, y - 4, c);
		break;
	default:
		fprintf(f, "<rect x='%.1f' y='%.1f' width='3' height='10' fill='%s'/>\n", x - 1.5,
			y - 5, c);
	}
}

/* Does curve @k mark its point @i, marking every @every-th from a phase of its own (so
 * that coinciding curves' markers take turns)? */
static bool
marks(int k, int i, int every)
{
	return k >= 0 && i % every == k % every;
}

/* Where each part of the file goes: the title and targets take as many lines as needed. */
struct layout {
	int title_lines, target_lines;
	int lat_top, legend_top, iops_top, iops_legend_top, height;
};

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
	int top;               /* of the plot area */
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
	return a->top + LAT_H - (l - a->lo_log) / (a->hi_log - a->lo_log) * LAT_H;
}

/* Resolution of a histogram of @count I/Os in nines: beyond 1 - 1/count there is only max. */
static double
count_nines(uint64_t count)
{
	double n = count > 1 ? log10((double)count) : 0.0;

	return n < NINES_MAX ? n : NINES_MAX;
}

static void
lat_axes_get(const struct perf_run *run, const struct nvp_histogram *total, int top,
	     struct lat_axes *a)
{
	double min_us = perf_ticks_to_us(run, nvp_histogram_min(total));
	double max_us = perf_ticks_to_us(run, nvp_histogram_max(total));

	a->top = top;
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
		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' class='g'/>\n", x, a->top, x,
			a->top + LAT_H);
		fprintf(f, "<text x='%.1f' y='%d' class='n' text-anchor='middle'>%s</text>\n", x,
			a->top + LAT_H + 18, lbl);
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

/* A curve's stroke: colour @k's, dash pattern @k's (the total: black, solid). */
static void
stroke(FILE *f, int k, double width)
{
	if (k < 0) {
		fprintf(f, "fill='none' stroke='#000' stroke-width='%.1f'", width);
		return;
	}
	fprintf(f, "fill='none' stroke='%s' stroke-width='%.1f'", g_colors[k % MAX_CURVES], width);
	if (g_dashes[k % MAX_CURVES][0] != '\0') {
		fprintf(f, " stroke-dasharray='%s'", g_dashes[k % MAX_CURVES]);
	}
}

/* Point @i of a curve of CURVE_POINTS up to @end nines: its nines, and its latency. */
static double
lat_nines(double end, int i)
{
	return end * i / CURVE_POINTS;
}

static double
lat_point(const struct perf_run *run, const struct nvp_histogram *h, double end, int i)
{
	double pct = 100.0 * (1.0 - pow(10.0, -lat_nines(end, i)));
	uint64_t v = i == CURVE_POINTS ? nvp_histogram_max(h) :
					 nvp_histogram_value_at_percentile(h, pct);

	return perf_ticks_to_us(run, v);
}

/* One curve: latency at CURVE_POINTS percentiles up to the histogram's resolution. */
static void
lat_curve(FILE *f, const struct perf_run *run, const struct lat_axes *a,
	  const struct nvp_histogram *h, int k, double width)
{
	double end = count_nines(nvp_histogram_count(h));
	int i;

	if (nvp_histogram_count(h) == 0) {
		return;
	}
	if (end > a->nines) {
		end = a->nines;
	}
	fprintf(f, "<polyline ");
	stroke(f, k, width);
	fprintf(f, " points='");
	for (i = 0; i <= CURVE_POINTS; i++) {
		fprintf(f, " %.1f,%.1f", x_of(a, lat_nines(end, i)),
			y_of(a, lat_point(run, h, end, i)));
	}
	fprintf(f, "'/>\n");
	for (i = 0; i <= CURVE_POINTS; i++) {
		if (marks(k, i, LAT_MARK_EVERY)) {
			marker(f, k, x_of(a, lat_nines(end, i)),
			       y_of(a, lat_point(run, h, end, i)));
		}
	}
}

/* A legend line's sample of curve @k's stroke and its label, at @y. */
static void
legend_key(FILE *f, int y, int k, const char *label)
{
	fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' ", ML, y - 4, ML + 40, y - 4);
	stroke(f, k, 3);
	fprintf(f, "/>\n");
	if (k >= 0) {
		marker(f, k, ML + 20, y - 4);
	}
	fprintf(f, "<text x='%d' y='%d' class='n'>", ML + 48, y);
	put_text(f, label);
}

/* A legend line: the curve's stroke, label, and the figures the curve shows. */
static void
legend_entry(FILE *f, const struct perf_run *run, int y, int k, const char *label,
	     const struct nvp_histogram *h)
{
	struct perf_lat_summary s;

	perf_lat_summary_get(run, h, &s);
	legend_key(f, y, k, label);
	fprintf(f, ": p50 %.1f, p99 %.1f, p99.9 %.1f, p99.99 %.1f, max %.1f us (%lu I/Os)</text>\n",
		s.p50_us, s.p99_us, s.p999_us, s.p9999_us, s.max_us,
		(unsigned long)nvp_histogram_count(h));
}

/* Rows drawn (at most MAX_CURVES) and the total. */
static void
plot_latency(FILE *f, const struct perf_run *run, const struct nvp_histogram *total,
	     const struct layout *lo)
{
	struct lat_axes a;
	char label[256];
	uint32_t t, n;
	int rows = 0, skipped = 0;

	lat_axes_get(run, total, lo->lat_top, &a);
	frame(f, lo->lat_top, LAT_H, "Latency by percentile (per job target and core, and total)",
	      "percentile (nines: 90%, 99%, 99.9% ... evenly spaced)", "latency (us, log scale)");
	lat_grid(f, &a);
	if (nvp_histogram_count(total) == 0) {
		fprintf(f, "<text x='%d' y='%d' class='n'>no I/O completed</text>\n", ML + 12,
			lo->lat_top + 24);
		return;
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
			lat_curve(f, run, &a, st->hist, rows, 2);
			legend_entry(f, run, lo->legend_top + (rows + 1) * LEGEND_ROW, rows, label,
				     st->hist);
			rows++;
		}
	}
	lat_curve(f, run, &a, total, -1, rows > 1 ? 2.5 : 1);
	legend_entry(f, run, lo->legend_top, -1, "total", total);
	if (skipped > 0) {
		fprintf(f,
			"<text x='%d' y='%d' class='n'>%d more rows not drawn (see --json)</text>\n",
			ML + 48, lo->legend_top + (rows + 1) * LEGEND_ROW, skipped);
	}
}

/* ---- IOPS over time ------------------------------------------------------------------- */

static void
iops_axes(FILE *f, int top, double xmax, double ymax)
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
}

/* IOPS curves of their own: one per target of a job, when there is more than one. */
static uint32_t
iops_series(const struct perf_run *run)
{
	return run->num_ns > 1 ? NVP_MIN(run->num_ns, (uint32_t)MAX_CURVES) : 0;
}

/* Sample @i of curve @k (-1: the total). */
static double
iops_at(const struct perf_run *run, int k, uint32_t i)
{
	return k < 0 ? run->samples[i].iops : run->ns_iops[(size_t)k * PERF_MAX_SAMPLES + i];
}

static void
iops_curve(FILE *f, const struct perf_run *run, int k, int top, double xmax, double ymax)
{
	/* about 8 markers a curve, a turn for each curve */
	int every = (int)NVP_MAX(iops_series(run) + 1, run->num_samples / 8);
	uint32_t i;

	fprintf(f, "<polyline ");
	stroke(f, k, k < 0 ? 1.5 : 2);
	fprintf(f, " points='");
	for (i = 0; i < run->num_samples; i++) {
		fprintf(f, " %.1f,%.1f", ML + run->samples[i].t_s / xmax * PW,
			top + IOPS_H - iops_at(run, k, i) / ymax * IOPS_H);
	}
	fprintf(f, "'/>\n");
	for (i = 0; i < run->num_samples; i++) {
		if (marks(k, (int)i, every)) {
			marker(f, k, ML + run->samples[i].t_s / xmax * PW,
			       top + IOPS_H - iops_at(run, k, i) / ymax * IOPS_H);
		}
	}
}

/* The IOPS legend: each curve's stroke, its target and its mean over the samples. */
static void
iops_legend(FILE *f, const struct perf_run *run, const struct layout *lo)
{
	uint32_t n = iops_series(run), i;
	int k;

	for (k = -1; k < (int)n; k++) {
		double sum = 0;

		for (i = 0; i < run->num_samples; i++) {
			sum += iops_at(run, k, i);
		}
		legend_key(f, lo->iops_legend_top + (k + 1) * LEGEND_ROW, k,
			   k < 0 ? "total" : run->ns[k].label);
		fprintf(f, ": mean %.0f IOPS</text>\n", sum / (double)run->num_samples);
	}
	if (run->num_ns > n && n > 0) {
		fprintf(f,
			"<text x='%d' y='%d' class='n'>%u more targets not drawn (see --json)</text>\n",
			ML + 48, lo->iops_legend_top + (int)(n + 1) * LEGEND_ROW, run->num_ns - n);
	}
}

static void
plot_iops(FILE *f, const struct perf_run *run, const struct layout *lo)
{
	double xmax = run->opts.time_s, ymax = 1, step;
	uint32_t n = iops_series(run), i;
	char title[128];
	int k;

	for (i = 0; i < run->num_samples; i++) {
		ymax = run->samples[i].iops > ymax ? run->samples[i].iops : ymax;
		xmax = run->samples[i].t_s > xmax ? run->samples[i].t_s : xmax;
	}
	step = nice_step(ymax * 1.1, 5);
	ymax = ceil(ymax * 1.1 / step) * step;
	snprintf(title, sizeof(title), "IOPS over time (%s, %.0f ms steps%s)",
		 n > 0 ? "per job target and total" : "all I/O threads",
		 (double)run->sample_ticks * 1e3 / (double)run->ticks_hz,
		 run->opts.warmup_s ? ", after the warm-up" : "");
	frame(f, lo->iops_top, IOPS_H, title, "time (s)", "IOPS");
	iops_axes(f, lo->iops_top, xmax, ymax);
	if (run->num_samples == 0) {
		fprintf(f, "<text x='%d' y='%d' class='n'>no samples</text>\n", ML + 12,
			lo->iops_top + 24);
		return;
	}
	for (k = 0; k < (int)n; k++) {
		iops_curve(f, run, k, lo->iops_top, xmax, ymax);
	}
	iops_curve(f, run, -1, lo->iops_top, xmax, ymax);
	iops_legend(f, run, lo);
}

/* ---- the file ------------------------------------------------------------------------- */

void
perf_plot_title(const struct perf_run *run, char *buf, size_t len)
{
	snprintf(buf, len, "nvp_perf%s%s", run->opts.cmdline[0] ? " " : "", run->opts.cmdline);
}

/*
 * @text in lines of at most @width characters, broken at the last space that fits (a word
 * longer than a line is broken where it must): nothing is cut off. A text that needs more than MAX_LINES ends in "...".
 * \return the number of lines.
 */
static int
wrap(const char *text, size_t width, char lines[MAX_LINES][160])
{
	size_t len = strlen(text), pos = 0;
	int n = 0;

	while (pos < len && n < MAX_LINES) {
		size_t take = len - pos, cut;

		while (text[pos] == ' ') {
			pos++;
		}
		take = len - pos;
		if (take > width) {
			for (cut = width; cut > 0 && text[pos + cut] != ' '; cut--) {
			}
			take = cut > 0 ? cut : width; /* a word longer than a line: split */
		}
		snprintf(lines[n++], 160, "%.*s", (int)take, text + pos);
		pos += take;
	}
	if (pos < len) {
		snprintf(lines[n - 1] + NVP_MIN(strlen(lines[n - 1]), width - 3), 4, "...");
	}
	return n;
}

/* What was measured: the -r targets, or the bdevs, their configuration and stages. */
static void
targets_text(const struct perf_run *run, char *buf, size_t len)
{
	const struct perf_opts *o = &run->opts;
	size_t used = 0;
	uint32_t i, k;

	if (o->bdev_config == NULL) {
		used += (size_t)snprintf(buf, len, "target%s:", o->num_trids > 1 ? "s" : "");
		for (i = 0; i < o->num_trids && used < len; i++) {
			used += (size_t)snprintf(buf + used, len - used, "%s %s", i ? ";" : "",
						 o->trids[i]);
		}
		return;
	}
	used += (size_t)snprintf(buf, len, "target: bdev");
	for (i = 0; i < run->num_ns && used < len; i++) {
		for (k = 0; k < i && strcmp(run->ns[k].name, run->ns[i].name) != 0; k++) {
		}
		if (k == i) {
			used += (size_t)snprintf(
				buf + used, len - used, "%s %s", i ? "," : "",
				run->ns[i].name +
					(strncmp(run->ns[i].name, "BDEV ", 5) == 0 ? 5 : 0));
		}
	}
	if (used < len) {
		char wbt[32];

		if (o->wbt_set && o->wbt_lat_us != 0) {
			snprintf(wbt, sizeof(wbt), "%u us", o->wbt_lat_us);
		} else {
			snprintf(wbt, sizeof(wbt), "%s", o->wbt_set ? "off" : "(the bdev's)");
		}
		snprintf(buf + used, len - used, " from %s %s; --sched %s; --wbt %s",
			 o->bdev_config_is_file ? "--json-config" : "--bdev-config", o->bdev_config,
			 o->sched != NULL ? o->sched : "(the bdev's)", wbt);
	}
}

static void
text_lines(FILE *f, int y, int row, const char *cls, char lines[MAX_LINES][160], int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fprintf(f, "<text x='%d' y='%d' class='%s'>", ML, y + i * row, cls);
		put_text(f, lines[i]);
		fprintf(f, "</text>\n");
	}
}

/* The rows of the latency legend: the total, each row drawn, a line for the rest. */
static int
legend_lines(const struct perf_run *run)
{
	uint32_t rows = 0, t;

	for (t = 0; t < run->num_threads; t++) {
		rows += run->threads[t].num_ns;
	}
	return (rows > MAX_CURVES ? MAX_CURVES + 1 : (int)rows) + 1;
}

static void
layout_get(const struct perf_run *run, int title_lines, int target_lines, struct layout *lo)
{
	int series = (int)iops_series(run) + (run->num_ns > MAX_CURVES ? 1 : 0);

	lo->title_lines = title_lines;
	lo->target_lines = target_lines;
	lo->lat_top = 28 + title_lines * TITLE_ROW + target_lines * TARGET_ROW + 40;
	lo->legend_top = lo->lat_top + LAT_H + 56;
	lo->iops_top = lo->legend_top + legend_lines(run) * LEGEND_ROW + 50;
	lo->iops_legend_top = lo->iops_top + IOPS_H + 56;
	lo->height = lo->iops_legend_top + (series + 1) * LEGEND_ROW + 20;
}

int
perf_plot_write(const struct perf_run *run)
{
	static char title[MAX_LINES][160], targets[MAX_LINES][160];
	struct nvp_histogram *h = malloc(sizeof(*h));
	char text[2048];
	FILE *f = run->plot_f;
	struct layout lo;
	int nt, ng;

	if (h == NULL) {
		return -ENOMEM;
	}
	perf_plot_title(run, text, sizeof(text));
	nt = wrap(text, TITLE_CHARS, title);
	targets_text(run, text, sizeof(text));
	ng = wrap(text, TARGET_CHARS, targets);
	layout_get(run, nt, ng, &lo);
	perf_total_histogram(run, h);
	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n",
		W, lo.height, W, lo.height);
	fprintf(f, "<style>.t{font-size:16px;font-weight:bold}.l{font-size:13px}"
		   ".n{font-size:12px}.frame{fill:none;stroke:#333}.g{stroke:#ccc}"
		   ".g2{stroke:#eee}</style>\n");
	fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
	text_lines(f, 28, TITLE_ROW, "t", title, nt);
	text_lines(f, 28 + nt * TITLE_ROW + 4, TARGET_ROW, "l", targets, ng);
	plot_latency(f, run, h, &lo);
	plot_iops(f, run, &lo);
	fprintf(f, "</svg>\n");
	free(h);
	return 0;
}
