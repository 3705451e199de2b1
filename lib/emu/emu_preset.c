/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device model presets: each one a list of model keys (emu_model.c) set to the published
 * figures of a class of real drive, so that a benchmark runs against a device that looks
 * real rather than against an idealised one. doc/emu_presets.md gives every figure with
 * its source, marks the model's own guesses, and says what the model leaves out.
 *
 * A preset sets every model key, so "preset=qlc preset=tlc" is "preset=tlc" and a preset
 * undoes the model keys given before it; keys given after it override it.
 *
 * How the figures map to keys (the doc has the sources):
 *  - read_lat: QD1 4 KiB random read p50:p99:p99.9 on an idle drive;
 *  - write_lat: a 4 KiB write into the power-protected write cache;
 *  - channels with read_busy=1: the parallel units a read occupies, chosen so that the
 *    random read IOPS at a deep queue (at most channels / mean read latency) is the
 *    drive's;
 *  - prog_mbps: steady-state 4 KiB random write bandwidth (the drive preconditioned, as
 *    datasheets measure it), with iu_kb the unit a write programs at least;
 *  - prog_us, suspend_us, suspend_max: the NAND's program time and the controller's
 *    program suspend, on as on current TLC/QLC datacenter drives (read_prio too).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "emu_internal.h"

/* Every preset lists every one of these keys (emu_preset_ut checks it). */
#define EMU_PRESET_KEYS                                                                            \
	"read_lat write_lat channels slots xfer_mbps wcache_mb prog_mbps prog_us iu_kb read_prio " \
	"prog_suspend suspend_us suspend_max read_busy"

static const struct emu_preset g_presets[] = {
	{ "scm", "Optane SSD class (3D XPoint; Intel Optane SSD DC P4800X figures)",
	  "read_lat=lognormal:9us:10us:17us write_lat=lognormal:10us:12us:28us channels=7 "
	  "slots=256 xfer_mbps=340 wcache_mb=0 prog_mbps=0 prog_us=0 iu_kb=0 read_prio=0 "
	  "prog_suspend=0 suspend_us=0 suspend_max=0 read_busy=1" },
	{ "tlc", "PCIe 4 datacenter TLC, 7.68 TB, 1 DWPD (Samsung PM9A3, Intel D7-P5500/P5510)",
	  "read_lat=lognormal:80us:100us:150us write_lat=lognormal:18us:30us:60us channels=80 "
	  "slots=1024 xfer_mbps=2000 wcache_mb=64 prog_mbps=800 prog_us=700 iu_kb=4 read_prio=1 "
	  "prog_suspend=1 suspend_us=30 suspend_max=4 read_busy=1" },
	{ "qlc", "PCIe 4 datacenter QLC, 64 KiB indirection unit (Solidigm D5-P5316 class)",
	  "read_lat=lognormal:120us:160us:300us write_lat=lognormal:20us:35us:80us channels=112 "
	  "slots=1024 xfer_mbps=2000 wcache_mb=64 prog_mbps=1000 prog_us=2000 iu_kb=64 "
	  "read_prio=1 prog_suspend=1 suspend_us=50 suspend_max=4 read_busy=1" },
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

/* The @i-th preset, NULL past the last: for usage and tests. */
const struct emu_preset *
emu_preset_get(uint32_t i)
{
	return i < NVP_COUNTOF(g_presets) ? &g_presets[i] : NULL;
}

/* For messages: the names a preset= key accepts. */
const char *
emu_preset_names(void)
{
	return "scm, tlc or qlc";
}

/* The keys every preset sets (a space-separated list). */
const char *
emu_preset_keys(void)
{
	return EMU_PRESET_KEYS;
}

/* @s folded at spaces into lines of at most @width characters, each after @indent. */
static void
print_folded(FILE *f, const char *s, int indent, int width)
{
	int col = 0;

	while (*s != '\0') {
		int n = (int)strcspn(s, " ");

		if (col > 0 && col + 1 + n > width) {
			fputc('\n', f);
			col = 0;
		}
		if (col == 0) {
			fprintf(f, "%*s", indent, "");
		} else {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", n, s);
		col += n;
		s += n;
		s += *s == ' ';
	}
	fputc('\n', f);
}

void
emu_presets_usage(FILE *f)
{
	fprintf(f, "Presets (preset=NAME sets every model key; later keys override; figures and "
		   "sources: doc/emu_presets.md):\n");
	for (uint32_t i = 0; i < NVP_COUNTOF(g_presets); i++) {
		fprintf(f, "  %-4s %s\n", g_presets[i].name, g_presets[i].drive);
		print_folded(f, g_presets[i].opts, 7, 80);
	}
}
