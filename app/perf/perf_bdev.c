/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's bdev mode: -b NAME with --json-config FILE or --bdev-config LINE runs the
 * same workload through the block layer (descriptor, per-thread channel in a poll group,
 * the bdev I/O calls and their pipeline) instead of raw qpairs, so the two paths can be
 * compared with one tool; the report is the same, "CPU time ... per I/O" included.
 *
 *   nvp_perf -b emu0n1 --bdev-config "nvme:name=emu0,trtype=emu" -q 32 -w randread
 *   nvp_perf -b m0 --json-config bdev.json -q 1
 *
 * Each I/O thread opens one channel per bdev (its own qpair for nvme bdevs, its own ring
 * for uring) in its own poll group, keeps -q requests in flight per bdev, and records
 * latency from the call to the completion callback. Nothing is allocated while I/O runs.
 * With --poll MODE the thread waits through a lib/poll waiter over its poll group (the
 * group's poll hook tells the waiter every I/O; irq mode asks for interrupt channels).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "nvpoll/bdev.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/poll.h"
#include "nvpoll/sched.h"
#include "nvpoll/util.h"
#include "nvpoll/wbt.h"

#include "perf.h"

struct bdev_worker;

struct btask {
	struct bdev_worker *bw;
	void *buf;
	uint64_t submit_ticks;
	uint64_t offset_blocks;
	bool is_read;
	struct nvp_bdev_io_wait_entry wait; /* while the channel has no bdev_io free */
};

/* This thread's view of one bdev. */
struct bdev_worker {
	struct perf_ns_stats *stats;
	uint32_t write_flags; /* --write-class, --write-hint of this -b */
	struct nvp_bdev_channel *ch;
	struct btask *tasks;
	uint64_t seq_next;
	uint32_t outstanding; /* sent, or waiting for a bdev_io */
	uint32_t pool_size;   /* bdev_ios of the channel */
};

/* Per-thread state the completion path needs; the shared loop's state first. */
struct bctx {
	struct perf_loop loop;
	struct nvp_bdev_poll_group *group;
	struct bdev_worker *bws;
	uint64_t rng;
};

static struct perf_run *g_brun;
/* Per thread: workers whose I/O never came back when the drain gave up. */
static struct {
	struct bdev_worker *bws;
	struct nvp_bdev_poll_group *group;
} g_busy[PERF_MAX_CORES];
static __thread struct bctx *t_bctx;

/* ---- set-up on the main thread ---- */

/* --sched and --wbt, on each bdev before any channel exists. \return 0 or PERF_EXIT_*. */
static int
set_stages(const struct perf_opts *o, struct nvp_bdev *bdev)
{
	char name[32], lat[32], cause[PERF_MSG_MAX];
	const char *colon;
	int rc;

	if (o->sched != NULL) {
		colon = strchr(o->sched, ':');
		snprintf(name, sizeof(name), "%.*s",
			 (int)(colon != NULL ? (size_t)(colon - o->sched) : strlen(o->sched)),
			 o->sched);
		perf_log_mark();
		rc = nvp_bdev_set_scheduler(bdev, name, colon != NULL ? colon + 1 : NULL);
		/* the layer's message names what is wrong and what there is */
		perf_cause(rc, cause, sizeof(cause));
		if (rc == -ENOENT || rc == -EINVAL) {
			perf_usage("--sched %s: %s", o->sched, cause);
			return PERF_EXIT_USAGE;
		}
		if (rc != 0) {
			perf_fail("--sched %s: %s", o->sched, cause);
			return PERF_EXIT_FAIL;
		}
	}
	if (o->wbt_set) {
		snprintf(lat, sizeof(lat), "lat_us=%u", o->wbt_lat_us);
		perf_log_mark();
		rc = o->wbt_lat_us == 0 ? nvp_bdev_set_admission(bdev, "none", NULL) :
					  nvp_bdev_set_admission(bdev, "wbt", lat);
		if (rc == -EINVAL) {
			perf_usage("--wbt %u: %s", o->wbt_lat_us,
				   perf_cause(rc, cause, sizeof(cause)));
			return PERF_EXIT_USAGE;
		}
		if (rc != 0) {
			perf_fail("--wbt %u: cannot set the throttle: %s", o->wbt_lat_us,
				  perf_cause(rc, cause, sizeof(cause)));
			return PERF_EXIT_FAIL;
		}
	}
	return 0;
}

/* Is run->ns[@index] the first of its bdev (one bdev may be given twice, as two jobs)? */
static bool
first_of_bdev(const struct perf_run *run, uint32_t index)
{
	const struct nvp_bdev *b = nvp_bdev_desc_get_bdev(run->ns[index].bdev_desc);
	uint32_t i;

	for (i = 0; i < index; i++) {
		if (nvp_bdev_desc_get_bdev(run->ns[i].bdev_desc) == b) {
			return false;
		}
	}
	return true;
}

/* The job's tenant (--tenant, tenant=): the descriptor's tenant, its fair weight. */
static int
set_tenant(struct perf_ns *pns)
{
	const struct perf_job *j = pns->job;
	struct nvp_bdev *bdev = nvp_bdev_desc_get_bdev(pns->bdev_desc);
	int rc;

	if (j->tenant < 0) {
		return 0;
	}
	rc = nvp_bdev_desc_set_tenant(pns->bdev_desc, (uint32_t)j->tenant);
	if (rc == 0 && j->weight > 0) {
		rc = nvp_bdev_sched_fair_set_weight(bdev, (uint32_t)j->tenant, (uint32_t)j->weight);
		if (rc == -ENOENT) {
			perf_usage("--tenant %d:%d: a weight needs --sched fair (%s has %s)",
				   j->tenant, j->weight, pns->name, nvp_bdev_get_scheduler(bdev));
			return PERF_EXIT_USAGE;
		}
	}
	if (rc != 0) {
		perf_usage("--tenant %d: %s: %s", j->tenant, pns->name, strerror(-rc));
		return PERF_EXIT_USAGE;
	}
	return 0;
}

/* The I/O size against the bdev's blocks and size. \return 0 or PERF_EXIT_USAGE. */
static int
check_size(const struct perf_job *j, struct perf_ns *pns, const struct nvp_bdev *bdev)
{
	char what[64];

	perf_job_size_flag(j, what, sizeof(what));
	if (j->io_size % pns->sector_size != 0) {
		perf_usage("%s: not a multiple of the %u-byte blocks of %s", what, pns->sector_size,
			   pns->name);
		return PERF_EXIT_USAGE;
	}
	pns->lbas_per_io = j->io_size / pns->sector_size;
	pns->num_ios = nvp_bdev_get_num_blocks(bdev) / pns->lbas_per_io;
	if (pns->num_ios == 0) {
		perf_usage("%s: larger than %s itself", what, pns->name);
		return PERF_EXIT_USAGE;
	}
	return 0;
}

/* Bdev @name as a target of @j: its own descriptor (its tenant is the descriptor's). */
static int
add_bdev(struct perf_run *run, const struct perf_job *j, const char *name)
{
	const struct perf_opts *o = &run->opts;
	char cause[PERF_MSG_MAX];
	struct perf_ns *pns = perf_ns_add(run);
	struct nvp_bdev *bdev;
	int rc;

	if (pns == NULL) {
		return PERF_EXIT_FAIL;
	}
	pns->job = j;
	perf_log_mark();
	rc = nvp_bdev_open(name, j->read_pct != 100, perf_bdev_event, NULL, &pns->bdev_desc);
	if (rc == -ENODEV) {
		/* the layer's message lists the bdevs there are */
		perf_usage("-b %s: %s", name, perf_cause(rc, cause, sizeof(cause)));
		return PERF_EXIT_USAGE;
	}
	if (rc != 0) {
		perf_fail("-b %s: cannot open: %s", name, perf_cause(rc, cause, sizeof(cause)));
		return PERF_EXIT_FAIL;
	}
	run->num_ns++;
	bdev = nvp_bdev_desc_get_bdev(pns->bdev_desc);
	pns->sector_size = nvp_bdev_get_block_size(bdev);
	snprintf(pns->name, sizeof(pns->name), "BDEV %s (%s)", name,
		 nvp_bdev_get_module_name(bdev));
	rc = check_size(j, pns, bdev);
	if (rc == 0 && first_of_bdev(run, run->num_ns - 1)) {
		rc = set_stages(o, bdev);
	}
	if (rc == 0) {
		rc = set_tenant(pns);
	}
	if (rc != 0) {
		return rc;
	}
	/* the report's stream: standard error when standard output is for --json - */
	fprintf(run->out, "%s%s%s: opened %s for this run (%s); scheduler %s, admission %s\n",
		j->named ? j->name : "", j->named ? ": " : "", pns->name,
		j->read_pct != 100 ? "read-write" : "read-only",
		j->read_pct != 100 ? "the job writes" : "the job only reads",
		nvp_bdev_get_scheduler(bdev), nvp_bdev_get_admission(bdev));
	return 0;
}

void
perf_bdev_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)ctx;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		fprintf(stderr, "bdev %s removed: its I/O fails from now on\n",
			nvp_bdev_get_name(bdev));
	}
}

int
perf_bdev_attach(struct perf_run *run)
{
	const struct perf_opts *o = &run->opts;
	struct nvp_bdev *b;
	uint32_t i;
	int rc;

	perf_log_mark();
	rc = nvp_bdev_load_config(o->bdev_config);
	if (rc != 0) {
		char cause[PERF_MSG_MAX];

		/* the loader said what and where: its first message is the cause */
		perf_cause(rc, cause, sizeof(cause));
		if (nvp_bdev_config_error_is_usage(rc)) {
			perf_usage("the bdev configuration: %s", cause);
			return PERF_EXIT_USAGE;
		}
		perf_fail("the bdev configuration: %s", cause);
		return PERF_EXIT_FAIL;
	}
	g_brun = run;
	for (i = 0; i < o->num_jobs; i++) {
		const struct perf_job *j = &o->jobs[i];

		if (j->bdev[0] != '\0') {
			rc = add_bdev(run, j, j->bdev);
		}
		/* no b= (no -b): every bdev the configuration made */
		for (b = j->bdev[0] == '\0' ? nvp_bdev_first() : NULL; rc == 0 && b != NULL;
		     b = nvp_bdev_next(b)) {
			rc = add_bdev(run, j, nvp_bdev_get_name(b));
		}
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

/* ---- the throttle's and the scheduler's state, after the run ---- */

static void
report_wbt(const struct nvp_wbt_info *w, FILE *f)
{
	fprintf(f,
		"  wbt: target %" PRIu64 " us, step %d, limits background/normal/sync %u/%u/%u "
		"(base %u), windows %" PRIu64 " (up %" PRIu64 ", down %" PRIu64 "), min read "
		"%" PRIu64 " us\n"
		"       writes throttled %" PRIu64
		", time deferred %.3f ms total, deferred now %u\n",
		w->target_us, w->step, w->limit_background, w->limit_normal, w->limit_sync,
		w->base_depth, w->windows, w->steps_up, w->steps_down, w->last_min_read_us,
		w->throttled, (double)w->deferred_us / 1e3, w->deferred_now);
}

static void
report_sched(const struct nvp_sched_info *si, FILE *f)
{
	uint64_t total = 0;
	uint32_t t;

	fprintf(f, "  scheduler %s: dispatched %" PRIu64 ", depth %u", si->name, si->dispatched,
		si->depth);
	if (strcmp(si->name, "deadline") == 0) {
		fprintf(f, ", expired %" PRIu64 ", starved write batches %" PRIu64, si->expired,
			si->starved_writes);
	} else if (strcmp(si->name, "kyber") == 0) {
		fprintf(f,
			", depths read/write/discard/other %u/%u/%u/%u, windows %" PRIu64
			" (congested %" PRIu64 ")",
			si->kyber_depth[0], si->kyber_depth[1], si->kyber_depth[2],
			si->kyber_depth[3], si->kyber_windows, si->kyber_congested);
	}
	fprintf(f, "\n");
	for (t = 0; t < NVP_BDEV_MAX_TENANTS; t++) {
		total += si->tenant_bytes[t];
	}
	for (t = 0; t < NVP_BDEV_MAX_TENANTS && total != 0; t++) {
		if (si->tenant_ios[t] != 0) {
			fprintf(f,
				"    tenant %2u: weight %4u, %10" PRIu64
				" I/Os, %6.2f%% of bytes\n",
				t, si->tenant_weight[t], si->tenant_ios[t],
				100.0 * (double)si->tenant_bytes[t] / (double)total);
		}
	}
}

/* A multipath bdev's paths: where each goes, its ANA state, the I/O it carried. */
static void
report_mpath(struct nvp_bdev *b, FILE *f)
{
	struct nvp_nvme_mpath *mp = nvp_bdev_nvme_get_mpath(b);
	uint32_t n;

	if (mp == NULL) {
		return;
	}
	n = nvp_nvme_mpath_get_num_paths(mp);
	fprintf(f, "  multipath %s, %" PRIu32 " path%s:\n",
		nvp_nvme_mpath_policy_name(nvp_nvme_mpath_get_policy(mp)), n, n == 1 ? "" : "s");
	for (uint32_t i = 0; i < n; i++) {
		struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
		char trid[NVP_NVME_TRARGS_MAX];

		if (nvp_nvme_mpath_get_path_info(mp, i, &info) != 0 ||
		    nvp_nvme_transport_id_fmt(trid, sizeof(trid), info.trid) != 0) {
			continue;
		}
		fprintf(f,
			"    path %" PRIu32 ": %s: ANA %s%s, %" PRIu64 " I/Os, %" PRIu32
			" reconnects\n",
			i, trid, nvp_nvme_ana_state_name(info.ana_state),
			info.connected ? "" : " (down)", info.ios, info.reconnects);
	}
}

/*
 * The bdev layer's own view of the run's reads and writes (nvp_bdev_get_stats(), the
 * whole run, warm-up included): the time an I/O spent in the module and the device, to
 * the poll that completed it, and in the layer's queues before that. Beside nvp_perf's
 * latency (call to callback) it says where the time went: the rest is the layer's own
 * submission and completion work and the application's. eturn 0, or -ENOMEM.
 */
struct bdev_times {
	uint64_t ios[2];
	double device_mean_us[2], device_p99_us[2], queued_mean_us[2];
};

static int
bdev_times(struct nvp_bdev *b, struct bdev_times *t)
{
	struct nvp_bdev_stats *st = calloc(1, sizeof(*st));
	int type;

	memset(t, 0, sizeof(*t));
	if (st == NULL) {
		return -ENOMEM;
	}
	st->info_size = sizeof(*st);
	if (nvp_bdev_get_stats(b, st) != 0 || st->ticks_hz == 0) {
		free(st);
		return -EINVAL;
	}
	for (type = NVP_BDEV_IO_READ; type <= NVP_BDEV_IO_WRITE; type++) {
		const struct nvp_bdev_op_stats *op = &st->op[type];
		double us = 1e6 / (double)st->ticks_hz;

		t->ios[type] = op->ios;
		if (nvp_histogram_count(&op->device) != 0) {
			t->device_mean_us[type] = nvp_histogram_mean(&op->device) * us;
			t->device_p99_us[type] = (double)nvp_histogram_value_at_percentile(
							 &op->device, 99.0) *
						 us;
		}
		/* I/Os no stage held are not in the queued histogram: they count as 0 */
		if (op->ios != 0 && nvp_histogram_count(&op->queued) != 0) {
			t->queued_mean_us[type] = nvp_histogram_mean(&op->queued) * us *
						  (double)nvp_histogram_count(&op->queued) /
						  (double)op->ios;
		}
	}
	free(st);
	return 0;
}

static const char *const time_type[2] = { "read", "write" };

static void
report_times(struct nvp_bdev *b, FILE *f)
{
	struct bdev_times t;

	if (bdev_times(b, &t) != 0) {
		return;
	}
	for (int type = 0; type < 2; type++) {
		if (t.ios[type] != 0 && t.device_mean_us[type] > 0) {
			fprintf(f,
				"  %s (the bdev layer's view, warm-up included): %" PRIu64
				" I/Os, in the module/device %.1f us mean (p99 %.1f), queued "
				"%.1f us mean\n",
				time_type[type], t.ios[type], t.device_mean_us[type],
				t.device_p99_us[type], t.queued_mean_us[type]);
		}
	}
}

void
perf_bdev_report(const struct perf_run *run, FILE *f)
{
	struct nvp_wbt_info w = { .info_size = sizeof(w) };
	struct nvp_sched_info si = { .info_size = sizeof(si) };
	uint32_t i;

	for (i = 0; i < run->num_ns; i++) {
		struct nvp_bdev *b = nvp_bdev_desc_get_bdev(run->ns[i].bdev_desc);

		if (!first_of_bdev(run, i)) {
			continue;
		}
		fprintf(f, "%s: scheduler %s, admission %s\n", nvp_bdev_get_name(b),
			nvp_bdev_get_scheduler(b), nvp_bdev_get_admission(b));
		if (nvp_bdev_wbt_get_info(b, &w) == 0) {
			report_wbt(&w, f);
		}
		if (strcmp(nvp_bdev_get_scheduler(b), "none") != 0 &&
		    nvp_bdev_sched_get_info(b, &si) == 0) {
			report_sched(&si, f);
		}
		report_times(b, f);
		report_mpath(b, f);
	}
}

#define JU64(o, k, v) json_object_object_add((o), (k), json_object_new_int64((int64_t)(v)))

static json_object *
wbt_json(const struct nvp_wbt_info *w)
{
	json_object *o = json_object_new_object();

	JU64(o, "target_us", w->target_us);
	JU64(o, "step", w->step);
	JU64(o, "base_depth", w->base_depth);
	JU64(o, "limit_background", w->limit_background);
	JU64(o, "limit_normal", w->limit_normal);
	JU64(o, "limit_sync", w->limit_sync);
	JU64(o, "windows", w->windows);
	JU64(o, "steps_up", w->steps_up);
	JU64(o, "steps_down", w->steps_down);
	JU64(o, "last_min_read_us", w->last_min_read_us);
	JU64(o, "throttled", w->throttled);
	JU64(o, "deferred_us", w->deferred_us);
	return o;
}

static json_object *
sched_json(const struct nvp_sched_info *si)
{
	json_object *o = json_object_new_object(), *kd = json_object_new_array();
	json_object *tenants = json_object_new_array();
	uint32_t t;

	json_object_object_add(o, "name", json_object_new_string(si->name));
	JU64(o, "dispatched", si->dispatched);
	JU64(o, "depth", si->depth);
	JU64(o, "expired", si->expired);
	JU64(o, "starved_writes", si->starved_writes);
	for (t = 0; t < NVP_SCHED_KYBER_NUM_DOMAINS; t++) {
		json_object_array_add(kd, json_object_new_int64(si->kyber_depth[t]));
	}
	json_object_object_add(o, "kyber_depth", kd);
	JU64(o, "kyber_windows", si->kyber_windows);
	JU64(o, "kyber_congested", si->kyber_congested);
	for (t = 0; t < NVP_BDEV_MAX_TENANTS; t++) {
		json_object *te;

		if (si->tenant_ios[t] == 0) {
			continue;
		}
		te = json_object_new_object();
		JU64(te, "tenant", t);
		JU64(te, "weight", si->tenant_weight[t]);
		JU64(te, "ios", si->tenant_ios[t]);
		JU64(te, "bytes", si->tenant_bytes[t]);
		json_object_array_add(tenants, te);
	}
	json_object_object_add(o, "tenants", tenants);
	return o;
}

static json_object *
mpath_json(struct nvp_nvme_mpath *mp)
{
	json_object *o = json_object_new_object(), *paths = json_object_new_array();
	char trid[NVP_NVME_TRARGS_MAX];

	json_object_object_add(
		o, "policy",
		json_object_new_string(nvp_nvme_mpath_policy_name(nvp_nvme_mpath_get_policy(mp))));
	for (uint32_t i = 0; i < nvp_nvme_mpath_get_num_paths(mp); i++) {
		struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
		json_object *p;

		if (nvp_nvme_mpath_get_path_info(mp, i, &info) != 0 ||
		    nvp_nvme_transport_id_fmt(trid, sizeof(trid), info.trid) != 0) {
			continue;
		}
		p = json_object_new_object();
		json_object_object_add(p, "trid", json_object_new_string(trid));
		json_object_object_add(
			p, "ana_state",
			json_object_new_string(nvp_nvme_ana_state_name(info.ana_state)));
		JU64(p, "anagrpid", info.anagrpid);
		json_object_object_add(p, "connected", json_object_new_boolean(info.connected));
		JU64(p, "ios", info.ios);
		JU64(p, "reconnects", info.reconnects);
		json_object_array_add(paths, p);
	}
	json_object_object_add(o, "paths", paths);
	return o;
}

/* {read: {ios, device_mean_us, device_p99_us, queued_mean_us}, write: {..}} */
static json_object *
times_json(struct nvp_bdev *b)
{
	json_object *o = json_object_new_object();
	struct bdev_times t;

	if (bdev_times(b, &t) != 0) {
		return o;
	}
	for (int type = 0; type < 2; type++) {
		json_object *x = json_object_new_object();

		JU64(x, "ios", t.ios[type]);
		json_object_object_add(x, "device_mean_us",
				       json_object_new_double(t.device_mean_us[type]));
		json_object_object_add(x, "device_p99_us",
				       json_object_new_double(t.device_p99_us[type]));
		json_object_object_add(x, "queued_mean_us",
				       json_object_new_double(t.queued_mean_us[type]));
		json_object_object_add(o, time_type[type], x);
	}
	return o;
}

json_object *
perf_bdev_json(const struct perf_run *run)
{
	json_object *arr = json_object_new_array();
	uint32_t i;

	for (i = 0; i < run->num_ns; i++) {
		struct nvp_bdev *b = nvp_bdev_desc_get_bdev(run->ns[i].bdev_desc);
		struct nvp_wbt_info w = { .info_size = sizeof(w) };
		struct nvp_sched_info si = { .info_size = sizeof(si) };
		json_object *o;

		if (!first_of_bdev(run, i)) {
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(nvp_bdev_get_name(b)));
		json_object_object_add(o, "admission",
				       json_object_new_string(nvp_bdev_get_admission(b)));
		if (nvp_bdev_wbt_get_info(b, &w) == 0) {
			json_object_object_add(o, "wbt", wbt_json(&w));
		}
		if (nvp_bdev_sched_get_info(b, &si) == 0) {
			json_object_object_add(o, "scheduler", sched_json(&si));
		}
		json_object_object_add(o, "times", times_json(b));
		if (nvp_bdev_nvme_get_mpath(b) != NULL) {
			json_object_object_add(o, "multipath",
					       mpath_json(nvp_bdev_nvme_get_mpath(b)));
		}
		json_object_array_add(arr, o);
	}
	return arr;
}

int
perf_bdev_cleanup(struct perf_run *run)
{
	uint32_t i;
	int rc = 0;

	for (i = 0; i < run->num_ns; i++) {
		if (run->ns[i].bdev_desc != NULL) {
			nvp_bdev_close(run->ns[i].bdev_desc);
			run->ns[i].bdev_desc = NULL;
		}
	}
	if (run->opts.bdev_config != NULL) {
		rc = nvp_bdev_fini();
	}
	return rc;
}

/* ---- the I/O thread ---- */

static void bio_done(void *arg, const struct nvme_cpl *cpl);
static void bretry(void *arg);

/*
 * Send @t's I/O. No bdev_io free (more split children in flight than the pool was sized
 * for) is not an error: the task waits for one, as in SPDK's bdevperf, and is sent from
 * the poll that frees it. \return 0 (sent or waiting) or -errno.
 */
static int
bsend(struct btask *t)
{
	struct bdev_worker *bw = t->bw;
	const struct perf_ns *ns = bw->stats->ns;
	int rc;

	if (t->is_read) {
		rc = nvp_bdev_read_blocks(ns->bdev_desc, bw->ch, t->buf, t->offset_blocks,
					  ns->lbas_per_io, bio_done, t);
	} else {
		rc = nvp_bdev_write_blocks(ns->bdev_desc, bw->ch, t->buf, t->offset_blocks,
					   ns->lbas_per_io, bw->write_flags, bio_done, t);
	}
	if (__builtin_expect(rc == -ENOMEM, 0)) {
		t->wait.bdev = nvp_bdev_desc_get_bdev(ns->bdev_desc);
		t->wait.cb_fn = bretry;
		t->wait.cb_arg = t;
		rc = nvp_bdev_queue_io_wait(t->wait.bdev, bw->ch, &t->wait);
	}
	return rc;
}

/* A bdev_io is free for the waiting @t: send it (its latency counts the wait). */
static void
bretry(void *arg)
{
	struct btask *t = arg;
	struct bdev_worker *bw = t->bw;

	if (t_bctx->loop.draining) {
		bw->outstanding--; /* never sent: nothing to record */
		return;
	}
	if (bsend(t) != 0) {
		bw->outstanding--;
		bw->stats->errors++;
		bw->stats->submit_errors++;
	}
}

static int
bsubmit(struct bctx *ctx, struct btask *t)
{
	struct bdev_worker *bw = t->bw;
	const struct perf_ns *ns = bw->stats->ns;
	const struct perf_job *o = ns->job;
	uint64_t slot;
	int rc;

	if (o->random) {
		slot = perf_rng_below(&ctx->rng, ns->num_ios);
	} else {
		slot = bw->seq_next++;
		if (bw->seq_next >= ns->num_ios) {
			bw->seq_next = 0;
		}
	}
	t->offset_blocks = slot * ns->lbas_per_io;
	t->is_read = o->read_pct == 100 ||
		     (o->read_pct != 0 && perf_rng_below(&ctx->rng, 100) < o->read_pct);
	t->submit_ticks = nvp_env_get_ticks();
	rc = bsend(t);
	if (__builtin_expect(rc != 0, 0)) {
		bw->stats->errors++;
		bw->stats->submit_errors++;
		return rc;
	}
	bw->outstanding++;
	return 0;
}

static void
bio_done(void *arg, const struct nvme_cpl *cpl)
{
	struct btask *t = arg;
	struct bdev_worker *bw = t->bw;
	struct perf_ns_stats *st = bw->stats;
	struct bctx *ctx = t_bctx;
	uint64_t lat = nvp_env_get_ticks() - t->submit_ticks;

	bw->outstanding--;
	perf_loop_record(&ctx->loop, st, lat, t->is_read, nvme_cpl_is_error(cpl));
	if (!ctx->loop.draining) {
		bsubmit(ctx, t);
	}
}

/*
 * -q requests at once, each taking what the largest request of -o takes on the bdev (a
 * split one: its children in flight and itself); at least 64, as before.
 */
static uint32_t
bdev_pool_size(const struct perf_job *o, const struct nvp_bdev *bdev)
{
	uint64_t n = (uint64_t)o->queue_depth * nvp_bdev_get_max_ios_per_request(bdev, o->io_size);

	return (uint32_t)NVP_MIN(NVP_MAX(n, 64u), 65536u);
}

/* The module's queue: every request's children (or the request) at once. */
static uint32_t
bdev_module_depth(const struct perf_job *o, const struct nvp_bdev *bdev)
{
	uint32_t per_io = nvp_bdev_get_max_ios_per_request(bdev, o->io_size);

	return (uint32_t)NVP_MIN((uint64_t)o->queue_depth * (per_io > 1 ? per_io - 1 : 1) + 1,
				 65536u);
}

static int
setup_worker(struct bctx *ctx, struct bdev_worker *bw, struct perf_ns_stats *st)
{
	const struct perf_job *o = st->ns->job;
	struct nvp_bdev_channel_opts co;
	uint32_t i;
	int rc;

	bw->stats = st;
	bw->write_flags = perf_job_write_flags(o);
	bw->tasks = calloc(o->queue_depth, sizeof(*bw->tasks));
	if (bw->tasks == NULL) {
		return -ENOMEM;
	}
	nvp_bdev_channel_opts_init(&co, sizeof(co));
	co.io_pool_size = bdev_pool_size(o, nvp_bdev_desc_get_bdev(st->ns->bdev_desc));
	co.module_queue_depth = bdev_module_depth(o, nvp_bdev_desc_get_bdev(st->ns->bdev_desc));
	co.group = ctx->group;
	co.interrupts = perf_poll_wants_irq(&ctx->loop.run->opts);
	bw->pool_size = co.io_pool_size;
	rc = nvp_bdev_channel_create(st->ns->bdev_desc, &co, &bw->ch);
	if (rc != 0) {
		perf_fail("core %u: cannot create a channel of %s: %s", ctx->loop.thread->core,
			  st->ns->name, strerror(-rc));
		return rc;
	}
	for (i = 0; i < o->queue_depth; i++) {
		bw->tasks[i].bw = bw;
		bw->tasks[i].buf = nvp_env_dma_malloc(o->io_size, 4096, NULL);
		if (bw->tasks[i].buf == NULL) {
			perf_fail("core %u: out of DMA memory: pass a larger -s",
				  ctx->loop.thread->core);
			return -ENOMEM;
		}
		memset(bw->tasks[i].buf, 0x5a ^ (int)i, o->io_size);
	}
	bw->seq_next = perf_job_seq_start(o, ctx->loop.thread->core, st->ns->num_ios);
	return 0;
}

static uint32_t
boutstanding(const struct perf_loop *l)
{
	const struct bctx *ctx = (const struct bctx *)l;
	uint32_t n, sum = 0;

	for (n = 0; n < l->thread->num_ns; n++) {
		sum += ctx->bws[n].outstanding;
	}
	return sum;
}

static void
bstart_all(struct perf_loop *l)
{
	struct bctx *ctx = (struct bctx *)l;
	uint32_t n, i;

	for (n = 0; n < l->thread->num_ns; n++) {
		for (i = 0; i < l->thread->ns_stats[n].ns->job->queue_depth; i++) {
			bsubmit(ctx, &ctx->bws[n].tasks[i]);
		}
	}
}

static int
bpoll(struct perf_loop *l)
{
	struct bctx *ctx = (struct bctx *)l;
	int rc = ctx->loop.waiter != NULL ? nvp_poll_waiter_wait(ctx->loop.waiter) :
					    nvp_bdev_poll_group_poll(ctx->group);

	return rc < 0 ? rc : 0;
}

/*
 * A module completes what it accepted (the nvme module's qpair aborts a request older
 * than its timeout; a removed bdev fails its I/O), so the drain normally ends; if it does
 * not, the channels still busy are left as they are rather than freed under the device.
 */
static const struct perf_loop_ops g_bdev_ops = {
	.start_all = bstart_all,
	.poll = bpoll,
	.outstanding = boutstanding,
	.drain_note = "waiting for the bdev's module to complete or fail them",
	.give_up_note = "their channels and buffers are left in place, not freed",
};

static int
bthread_setup(struct bctx *ctx)
{
	struct perf_thread *th = ctx->loop.thread;
	cpu_set_t set;
	uint32_t n, pools = 0;
	int rc;

	CPU_ZERO(&set);
	CPU_SET(th->core, &set);
	rc = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc != 0) {
		perf_fail("cannot pin the I/O thread to core %u: %s", th->core, strerror(-rc));
		return rc;
	}
	ctx->bws = calloc(th->num_ns, sizeof(*ctx->bws));
	if (ctx->bws == NULL) {
		return -ENOMEM;
	}
	rc = nvp_bdev_poll_group_create(&ctx->group);
	for (n = 0; rc == 0 && n < th->num_ns; n++) {
		rc = setup_worker(ctx, &ctx->bws[n], &th->ns_stats[n]);
		pools += ctx->bws[n].pool_size;
	}
	if (rc == 0) {
		rc = perf_poll_setup(th, &ctx->loop.run->opts, NULL, 0, &ctx->loop.waiter);
	}
	if (rc == 0 && ctx->loop.waiter != NULL) {
		/* every bdev_io of the channels' pools may be in a module at once */
		rc = nvp_poll_waiter_add_bdev_group(ctx->loop.waiter, ctx->group, pools);
		if (rc != 0) {
			perf_fail("core %u: --poll %s: cannot wait on the poll group: %s", th->core,
				  ctx->loop.run->opts.poll_mode, strerror(-rc));
		}
	}
	return rc;
}

static void
bthread_teardown(struct bctx *ctx)
{
	uint32_t n, i;
	bool busy = false;

	/* before the channels and the group: it removes its hook from the group */
	perf_poll_teardown(ctx->loop.waiter);
	ctx->loop.waiter = NULL;
	for (n = 0; ctx->bws != NULL && n < ctx->loop.thread->num_ns; n++) {
		struct bdev_worker *bw = &ctx->bws[n];

		if (bw->outstanding != 0 ||
		    (bw->ch != NULL && nvp_bdev_channel_destroy(bw->ch) != 0)) {
			busy = true; /* the drain gave up: the device may still write the buffers */
			continue;
		}
		for (i = 0; bw->tasks != NULL && i < bw->stats->ns->job->queue_depth; i++) {
			nvp_env_dma_free(bw->tasks[i].buf);
		}
		free(bw->tasks);
	}
	if (busy) {
		/* kept reachable (not a leak to report): the device may still own them */
		g_busy[ctx->loop.thread->index % PERF_MAX_CORES].bws = ctx->bws;
		g_busy[ctx->loop.thread->index % PERF_MAX_CORES].group = ctx->group;
		return;
	}
	if (ctx->group != NULL) {
		nvp_bdev_poll_group_destroy(ctx->group);
	}
	free(ctx->bws);
}

void *
perf_bdev_thread_main(void *arg)
{
	struct perf_thread *th = arg;
	struct perf_run *run = g_brun;
	struct bctx ctx = { .loop = { .run = run, .thread = th, .ops = &g_bdev_ops } };
	int setup_rc;

	t_bctx = &ctx;
	ctx.loop.drain_limit_ms = (uint64_t)run->opts.io_timeout_ms + 1000;
	ctx.rng = 0x9E3779B97F4A7C15ull * (th->core + 1) ^ nvp_env_get_ticks();
	if (ctx.rng == 0) {
		ctx.rng = 1;
	}
	setup_rc = bthread_setup(&ctx);
	th->setup_rc = setup_rc;
	/* Everybody waits here, set up or not, so nobody waits forever. */
	perf_loop_start_barrier(run, th);
	th->rc = setup_rc;
	if (!perf_any_setup_failed(run)) {
		th->rc = perf_loop_run(&ctx.loop);
	}
	bthread_teardown(&ctx);
	t_bctx = NULL;
	return NULL;
}
