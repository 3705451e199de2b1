/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's bdev-mode options (-b, --json-config, --bdev-config) and the checks of how
 * they combine with the raw mode's. Apart from perf_bdev.c so that perf_opts.c's unit
 * tests link without the block layer.
 */
#include <errno.h>
#include <stdio.h>

#include "perf.h"

int
perf_bdev_opt(struct perf_opts *o, const char *prog, int opt, const char *arg)
{
	if (opt != 'b') {
		if (o->bdev_config != NULL) {
			fprintf(stderr, "%s: one of --json-config and --bdev-config, once\n", prog);
			return -EINVAL;
		}
		o->bdev_config = arg;
		return 0;
	}
	if (o->num_bdevs == PERF_MAX_TRIDS || arg[0] == '\0') {
		fprintf(stderr, "%s: -b '%s': at most %d bdev names, none empty\n", prog, arg,
			PERF_MAX_TRIDS);
		return -EINVAL;
	}
	o->bdev_names[o->num_bdevs++] = arg;
	return 0;
}

int
perf_bdev_opts_check(const struct perf_opts *o, const char *prog)
{
	const char *why = NULL;

	if (o->num_bdevs != 0 && o->bdev_config == NULL) {
		why = "-b needs the configuration that makes the bdev: --json-config FILE or "
		      "--bdev-config \"malloc:name=m0,num_blocks=65536\"";
	} else if (o->bdev_config != NULL && o->num_trids != 0) {
		why = "-r (raw NVMe mode) and a bdev configuration (bdev mode) exclude each other";
	} else if (o->bdev_config != NULL && o->qpairs_per_ns != 1) {
		why = "-P applies to the raw NVMe mode only (a bdev channel has one queue)";
	}
	if (why != NULL) {
		fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", prog, why, prog);
		return -EINVAL;
	}
	return 0;
}
