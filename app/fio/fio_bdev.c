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
		return rc;
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

int
fiobdev_open(const char *config, const char *name, struct fiobdev_file *bf)
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

int
fiobdev_channel(struct fiobdev_file *bf, uint32_t depth)
{
	struct nvp_bdev_channel_opts opts;

	if (bf->ch != NULL) {
		return 0;
	}
	nvp_bdev_channel_opts_init(&opts, sizeof(opts));
	opts.io_pool_size = NVP_MIN(NVP_MAX(depth * 2, 64u), 65536u); /* split children too */
	opts.module_queue_depth = depth + 1;
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

int
fiobdev_submit(struct fiobdev_file *bf, enum fiobdev_op op, void *buf, uint64_t offset,
	       uint64_t len, nvp_bdev_io_cb cb, void *cb_arg)
{
	switch (op) {
	case FIOBDEV_READ:
		return nvp_bdev_read(bf->desc, bf->ch, buf, offset, len, cb, cb_arg);
	case FIOBDEV_WRITE:
		return nvp_bdev_write(bf->desc, bf->ch, buf, offset, len, 0, cb, cb_arg);
	case FIOBDEV_TRIM:
		return nvp_bdev_unmap(bf->desc, bf->ch, offset, len, cb, cb_arg);
	case FIOBDEV_FLUSH:
		return nvp_bdev_flush(bf->desc, bf->ch, 0, bf->size, cb, cb_arg);
	}
	return -EINVAL;
}

int
fiobdev_poll(struct fiobdev_file *bf)
{
	return bf->ch != NULL ? nvp_bdev_channel_poll(bf->ch) : 0;
}
