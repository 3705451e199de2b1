/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdevs shared between fio's job threads: the configuration named by bdev_config= is
 * loaded once per process (behind a mutex: setup() may run in several job threads at
 * once), each job file opens its own descriptor, each job thread makes its own channel
 * (the thread that polls a channel must own it), and the bdevs are unloaded when the
 * last file closes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio_bdev.h"
#include "nvpoll/sched.h"
#include "nvpoll/util.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_config; /* the configuration loaded, while g_users > 0 */
static unsigned int g_users;

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)ctx;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		fprintf(stderr, "nvpoll_fio: bdev '%s' removed: its I/O fails from now on\n",
			nvp_bdev_get_name(bdev));
	}
}

/* Load @config unless it is loaded; under g_lock. */
static int
config_get(const char *config)
{
	int rc;

	if (g_users > 0) {
		if (strcmp(g_config, config) != 0) {
			fprintf(stderr,
				"nvpoll_fio: bdev_config '%s' differs from '%s' of another "
				"job; one configuration per fio process\n",
				config, g_config);
			return -EINVAL;
		}
		g_users++;
		return 0;
	}
	g_config = strdup(config);
	if (g_config == NULL) {
		return -ENOMEM;
	}
	rc = nvp_bdev_load_config(config);
	if (rc != 0) {
		fprintf(stderr, "nvpoll_fio: bdev_config '%s' not loaded: %s (message above)\n",
			config, strerror(-rc));
		free(g_config);
		g_config = NULL;
		/* the configuration's own fault (nvp_perf exits 2 for it): the job's error is
		 * EINVAL, as for a bad option; a failure to carry it out keeps its errno */
		return nvp_bdev_config_error_is_usage(rc) ? -EINVAL : rc;
	}
	g_users = 1;
	return 0;
}

static void
config_put(void)
{
	if (g_users > 0 && --g_users == 0) {
		nvp_bdev_fini();
		free(g_config);
		g_config = NULL;
	}
}

/* bdev_sched=: set unless the bdev has it already (another job's file). */
static int
set_sched(struct nvp_bdev *bdev, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char name[32];
	int rc;

	snprintf(name, sizeof(name), "%.*s",
		 (int)(colon != NULL ? (size_t)(colon - arg) : strlen(arg)), arg);
	if (colon == NULL && strcmp(nvp_bdev_get_scheduler(bdev), name) == 0) {
		return 0;
	}
	rc = nvp_bdev_set_scheduler(bdev, name, colon != NULL ? colon + 1 : NULL);
	if (rc != 0) {
		fprintf(stderr, "nvpoll_fio: bdev_sched=%s on %s: %s\n", arg,
			nvp_bdev_get_name(bdev),
			rc == -ENOENT ? "unknown scheduler" :
			rc == -EBUSY  ? "the bdev is in use (set it in every job, or the first)" :
					"bad parameters");
	}
	return rc;
}

/* bdev_wbt=LAT_US|off */
static int
set_wbt(struct nvp_bdev *bdev, const char *arg)
{
	char params[32];
	uint64_t v = 0;
	int rc;

	if (strcmp(arg, "off") != 0 && nvp_strtou64(arg, 1, 10000000, &v) != 0) {
		fprintf(stderr,
			"nvpoll_fio: bdev_wbt=%s: expected a read latency target in us "
			"(1..10000000) or off\n",
			arg);
		return -EINVAL;
	}
	snprintf(params, sizeof(params), "lat_us=%lu", (unsigned long)v);
	rc = v == 0 ? nvp_bdev_set_admission(bdev, "none", NULL) :
		      nvp_bdev_set_admission(bdev, "wbt", params);
	if (rc != 0) {
		fprintf(stderr, "nvpoll_fio: bdev_wbt=%s on %s: %s\n", arg, nvp_bdev_get_name(bdev),
			strerror(-rc));
	}
	return rc;
}

/* write_class=, fio's write_hint= \return 0 or -EINVAL (printed). */
static int
write_flags(const struct fiobdev_opts *o, uint32_t *flags)
{
	static const char *const classes[] = { "normal", "background", "sync" };
	uint32_t cls = 0;

	if (o->write_class != NULL && o->write_class[0] != '\0') {
		for (cls = 0; cls < 3 && strcmp(classes[cls], o->write_class) != 0; cls++) {
		}
		if (cls == 3) {
			fprintf(stderr,
				"nvpoll_fio: write_class=%s: expected background, normal "
				"or sync\n",
				o->write_class);
			return -EINVAL;
		}
	}
	*flags = nvp_bdev_write_flags(cls, (enum nvp_nvme_write_hint)NVP_MAX(o->write_hint, 0));
	return 0;
}

/* The job's settings on a bdev just opened (no channel of it exists yet). */
static int
apply_opts(struct fiobdev_file *bf, const struct fiobdev_opts *o)
{
	struct nvp_bdev *bdev = nvp_bdev_desc_get_bdev(bf->desc);
	int rc = write_flags(o, &bf->write_flags);

	if (rc == 0 && o->sched != NULL && o->sched[0] != '\0') {
		rc = set_sched(bdev, o->sched);
	}
	if (rc == 0 && o->wbt != NULL && o->wbt[0] != '\0') {
		rc = set_wbt(bdev, o->wbt);
	}
	if (rc == 0 && o->tenant >= 0) {
		rc = nvp_bdev_desc_set_tenant(bf->desc, (uint32_t)o->tenant);
	}
	if (rc == 0 && o->tenant >= 0 && o->weight > 0) {
		rc = nvp_bdev_sched_fair_set_weight(bdev, (uint32_t)o->tenant, (uint32_t)o->weight);
		if (rc != 0) {
			fprintf(stderr, "nvpoll_fio: tenant_weight=%d on %s: %s\n", o->weight,
				nvp_bdev_get_name(bdev),
				rc == -ENOENT ? "needs bdev_sched=fair" : strerror(-rc));
		}
	}
	return rc;
}

int
fiobdev_open(const char *config, const char *name, const struct fiobdev_opts *opts,
	     struct fiobdev_file *bf)
{
	struct nvp_bdev *bdev;
	int rc;

	memset(bf, 0, sizeof(*bf));
	pthread_mutex_lock(&g_lock);
	rc = config_get(config);
	if (rc == 0) {
		rc = nvp_bdev_open(name, true, ignore_event, NULL, &bf->desc);
		if (rc != 0) {
			fprintf(stderr,
				"nvpoll_fio: filename '%s': no such bdev in bdev_config "
				"(the message above lists them)\n",
				name);
			config_put();
		} else if (apply_opts(bf, opts) != 0) {
			nvp_bdev_close(bf->desc);
			bf->desc = NULL;
			config_put();
			rc = -EINVAL;
		}
	}
	pthread_mutex_unlock(&g_lock);
	if (rc != 0) {
		return rc;
	}
	bdev = nvp_bdev_desc_get_bdev(bf->desc);
	bf->block_size = nvp_bdev_get_block_size(bdev);
	bf->size = nvp_bdev_get_num_blocks(bdev) * bf->block_size;
	return 0;
}

/*
 * Every request of the job may be split at once: the pool holds @depth times what the
 * largest takes (its children and itself); the module's queue, their children. The
 * floor is the pool this engine always had.
 */
int
fiobdev_channel(struct fiobdev_file *bf, uint32_t depth, uint64_t max_bytes, uint32_t pool)
{
	struct nvp_bdev *bdev = nvp_bdev_desc_get_bdev(bf->desc);
	uint32_t per_io = nvp_bdev_get_max_ios_per_request(bdev, max_bytes);
	struct nvp_bdev_channel_opts opts;
	uint64_t need = (uint64_t)depth * per_io;

	if (bf->ch != NULL) {
		return 0;
	}
	nvp_bdev_channel_opts_init(&opts, sizeof(opts));
	opts.io_pool_size = pool != 0 ? pool : (uint32_t)NVP_MIN(NVP_MAX(need, 64u), 65536u);
	opts.module_queue_depth = (uint32_t)NVP_MIN(
		(uint64_t)depth * (per_io > 1 ? per_io - 1 : 1) + 1, 65536u);
	return nvp_bdev_channel_create(bf->desc, &opts, &bf->ch);
}

void
fiobdev_close(struct fiobdev_file *bf)
{
	if (bf->ch != NULL) {
		nvp_bdev_channel_destroy(bf->ch);
		bf->ch = NULL;
	}
	if (bf->desc != NULL) {
		pthread_mutex_lock(&g_lock);
		nvp_bdev_close(bf->desc);
		bf->desc = NULL;
		config_put();
		pthread_mutex_unlock(&g_lock);
	}
}

static int
submit_now(struct fiobdev_req *r)
{
	struct fiobdev_file *bf = r->bf;

	switch (r->op) {
	case FIOBDEV_READ:
		return nvp_bdev_read(bf->desc, bf->ch, r->buf, r->offset, r->len, r->cb, r->cb_arg);
	case FIOBDEV_WRITE:
		return nvp_bdev_write(bf->desc, bf->ch, r->buf, r->offset, r->len, bf->write_flags,
				      r->cb, r->cb_arg);
	case FIOBDEV_TRIM:
		return nvp_bdev_unmap(bf->desc, bf->ch, r->offset, r->len, r->cb, r->cb_arg);
	case FIOBDEV_FLUSH:
		return nvp_bdev_flush(bf->desc, bf->ch, 0, bf->size, r->cb, r->cb_arg);
	}
	return -EINVAL;
}

static void resubmit(void *arg);

static int
wait_for_io(struct fiobdev_req *r)
{
	r->wait.bdev = nvp_bdev_desc_get_bdev(r->bf->desc);
	r->wait.cb_fn = resubmit;
	r->wait.cb_arg = r;
	return nvp_bdev_queue_io_wait(r->wait.bdev, r->bf->ch, &r->wait);
}

/*
 * A bdev_io is free again (from the channel's poll): send the request, or wait again. A
 * refusal now has no caller to return to: the request completes with an error.
 */
static void
resubmit(void *arg)
{
	struct fiobdev_req *r = arg;
	struct nvme_cpl cpl;
	int rc = submit_now(r);

	if (rc == -ENOMEM) {
		rc = wait_for_io(r);
	}
	if (rc != 0) {
		fprintf(stderr, "nvpoll_fio: bdev '%s', offset %llu: resubmission failed: %s\n",
			nvp_bdev_get_name(r->wait.bdev), (unsigned long long)r->offset,
			strerror(-rc));
		memset(&cpl, 0, sizeof(cpl));
		cpl.status.sct = NVME_SCT_GENERIC;
		cpl.status.sc = NVME_SC_INTERNAL_DEVICE_ERROR;
		r->cb(r->cb_arg, &cpl);
	}
}

int
fiobdev_submit(struct fiobdev_req *req)
{
	int rc = submit_now(req);

	return rc == -ENOMEM ? wait_for_io(req) : rc;
}

int
fiobdev_poll(struct fiobdev_file *bf)
{
	return bf->ch != NULL ? nvp_bdev_channel_poll(bf->ch) : 0;
}
