/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's bdev-mode options (-b, --json-config, --bdev-config) and the checks of how
 * they combine with the raw mode's. Apart from perf_bdev.c so that perf_opts.c's unit
 * tests link without the block layer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/util.h"

#include "perf.h"

static int
bad_value(const char *prog, const char *flag, const char *arg, const char *accepted)
{
	(void)prog;
	return perf_usage("%s '%s': %s", flag, arg, accepted);
}

/* The job a per -b option applies to: the last -b's, or every job's before any -b. */
static struct perf_job *
cur_job(struct perf_opts *o)
{
	return o->num_bdevs == 0 ? &o->job_default : &o->jobs[o->num_jobs - 1];
}

/* --tenant N[:WEIGHT] */
static int
parse_tenant(struct perf_opts *o, const char *prog, const char *arg)
{
	struct perf_job *job = cur_job(o);

	if (perf_tenant_parse(arg, &job->tenant, &job->weight) != 0) {
		char accepted[96];

		snprintf(accepted, sizeof(accepted),
			 "expected TENANT[:WEIGHT], tenant 0..%d, weight 1..1000",
			 NVP_BDEV_MAX_TENANTS - 1);
		return bad_value(prog, "--tenant", arg, accepted);
	}
	return 0;
}

static int
parse_wbt(struct perf_opts *o, const char *prog, const char *arg)
{
	uint64_t v;

	if (strcmp(arg, "off") == 0) {
		v = 0;
	} else if (nvp_strtou64(arg, 1, 10000000, &v) != 0) {
		return bad_value(prog, "--wbt", arg,
				 "expected a read latency target in us, 1..10000000, or off");
	}
	o->wbt_set = true;
	o->wbt_lat_us = (uint32_t)v;
	return 0;
}

static int
parse_sched(struct perf_opts *o, const char *prog, const char *arg)
{
	if (arg[0] == '\0' || arg[0] == ':' || strlen(arg) > 480) {
		return bad_value(prog, "--sched", arg,
				 "expected NAME[:key=value,...], e.g. kyber:read_lat_us=1000");
	}
	o->sched = arg;
	return 0;
}

static int
parse_job_opt(struct perf_opts *o, const char *prog, int opt, const char *arg)
{
	int v;

	if (opt == PERF_OPT_TENANT) {
		return parse_tenant(o, prog, arg);
	}
	if (opt == PERF_OPT_WRITE_HINT) {
		v = perf_write_hint_parse(arg);
		if (v < 0) {
			return bad_value(prog, "--write-hint", arg,
					 "expected none, short, medium, long or extreme");
		}
		cur_job(o)->write_hint = v;
		return 0;
	}
	v = perf_write_class_parse(arg);
	if (v < 0) {
		return bad_value(prog, "--write-class", arg, "expected background, normal or sync");
	}
	cur_job(o)->write_class = v;
	return 0;
}

void
perf_bdev_opts_init(struct perf_opts *o)
{
	perf_job_init(&o->job_default);
}

int
perf_bdev_opt(struct perf_opts *o, const char *prog, int opt, const char *arg)
{
	switch (opt) {
	case PERF_OPT_SCHED:
		return parse_sched(o, prog, arg);
	case PERF_OPT_WBT:
		return parse_wbt(o, prog, arg);
	case PERF_OPT_TENANT:
	case PERF_OPT_WRITE_HINT:
	case PERF_OPT_WRITE_CLASS:
		return parse_job_opt(o, prog, opt, arg);
	default:
		break;
	}
	if (opt != 'b') {
		if (o->bdev_config != NULL) {
			return perf_usage("one of --json-config and --bdev-config, once");
		}
		o->bdev_config = arg;
		o->bdev_config_is_file = opt != PERF_OPT_BDEV_CONFIG;
		return 0;
	}
	if (o->num_job_flags != 0) {
		return perf_usage("-b and --job: give each job its bdev with b=NAME");
	}
	if (o->num_jobs == PERF_MAX_JOBS || arg[0] == '\0' ||
	    strlen(arg) >= sizeof(o->jobs[0].bdev)) {
		return perf_usage("-b '%s': at most %d bdev names, none empty or longer than %zu",
				  arg, PERF_MAX_JOBS, sizeof(o->jobs[0].bdev) - 1);
	}
	/* each -b is a job of the flags' values, with its own --tenant, --write-* */
	perf_job_init(&o->jobs[o->num_jobs]);
	nvp_strlcpy(o->jobs[o->num_jobs].bdev, arg, sizeof(o->jobs[0].bdev));
	o->num_jobs++;
	o->num_bdevs++;
	return 0;
}

static bool
job_given(const struct perf_opts *o)
{
	const struct perf_job *j = &o->job_default;

	/* a -b's own are refused with the -b (it needs a configuration) */
	return j->tenant >= 0 || j->write_hint >= 0 || j->write_class >= 0;
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
	} else if (o->bdev_config == NULL && (o->sched != NULL || o->wbt_set || job_given(o))) {
		why = "--sched, --wbt, --tenant, --write-hint and --write-class apply to the bdev "
		      "mode only (-b with --json-config or --bdev-config)";
	}
	(void)prog;
	return why != NULL ? perf_usage("%s", why) : 0;
}
