/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of the waiter: defaults and the mode parser ("classic", "hybrid[:mean|:pN]",
 * "fixed:US", "irq", "umwait"), apart from the waiter so that tools can check a
 * command line without linking the driver.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "poll_internal.h"

static const char *const g_mode_names[] = {
	[NVP_POLL_CLASSIC] = "classic", [NVP_POLL_HYBRID] = "hybrid", [NVP_POLL_FIXED] = "fixed",
	[NVP_POLL_IRQ] = "irq",         [NVP_POLL_UMWAIT] = "umwait",
};

void
nvp_poll_opts_init(struct nvp_poll_opts *opts, size_t opts_size)
{
	struct nvp_poll_opts d;

	memset(&d, 0, sizeof(d));
	d.opts_size = NVP_MIN(opts_size, sizeof(d));
	d.mode = NVP_POLL_CLASSIC;
	d.pct = POLL_DEFAULT_PCT;
	d.window_ms = POLL_DEFAULT_WINDOW_MS;
	d.min_samples = POLL_DEFAULT_MIN_SAMPLES;
	d.max_sources = POLL_DEFAULT_MAX_SOURCES;
	d.calibrate = true;
	if (opts != NULL) {
		memcpy(opts, &d, d.opts_size);
	}
}

const char *
nvp_poll_mode_name(enum nvp_poll_mode mode)
{
	return (unsigned)mode < NVP_COUNTOF(g_mode_names) ? g_mode_names[mode] : "unknown";
}

static int
parse_hybrid(const char *arg, struct nvp_poll_opts *o)
{
	uint64_t v;

	if (arg == NULL) {
		o->pct = POLL_DEFAULT_PCT;
	} else if (strcasecmp(arg, "mean") == 0) {
		o->pct = 0;
	} else if ((arg[0] == 'p' || arg[0] == 'P') && nvp_strtou64(arg + 1, 1, 99, &v) == 0) {
		o->pct = (uint32_t)v;
	} else {
		return -EINVAL;
	}
	o->mode = NVP_POLL_HYBRID;
	return 0;
}

int
nvp_poll_mode_parse(const char *str, struct nvp_poll_opts *o)
{
	const char *colon, *arg;
	size_t len;
	uint64_t v;

	if (str == NULL || o == NULL) {
		return -EINVAL;
	}
	colon = strchr(str, ':');
	len = colon != NULL ? (size_t)(colon - str) : strlen(str);
	arg = colon != NULL ? colon + 1 : NULL;
	if (len == 6 && strncasecmp(str, "hybrid", 6) == 0) {
		return parse_hybrid(arg, o);
	}
	if (len == 5 && strncasecmp(str, "fixed", 5) == 0) {
		if (arg == NULL || nvp_strtou64(arg, 1, 10000000, &v) != 0) {
			return -EINVAL;
		}
		o->mode = NVP_POLL_FIXED;
		o->fixed_us = (uint32_t)v;
		return 0;
	}
	for (uint32_t i = 0; arg == NULL && i < NVP_COUNTOF(g_mode_names); i++) {
		if (i != NVP_POLL_FIXED && i != NVP_POLL_HYBRID &&
		    strcasecmp(str, g_mode_names[i]) == 0) {
			o->mode = (enum nvp_poll_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}
