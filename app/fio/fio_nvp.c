/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Controllers shared between fio's job threads. fio calls an engine's setup() per job, in
 * the main thread or (create_serialize=0) in the job threads at once, so the registry is
 * behind a mutex. A controller is keyed by its transport ID without the namespace, so
 * "trtype=emu name=emu0 ns=1" and "... ns=2" in two jobs use one controller.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "fio_nvp.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#define KEY_MAX (NVP_NVME_TRARGS_MAX + 384)

struct fionvp_ctrlr {
	char key[KEY_MAX];
	struct nvp_nvme_ctrlr *ctrlr;
	unsigned int refs;
	TAILQ_ENTRY(fionvp_ctrlr) link;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, fionvp_ctrlr) g_ctrlrs = TAILQ_HEAD_INITIALIZER(g_ctrlrs);
static bool g_env_started;
static int g_env_rc;

int
fionvp_env_start(const struct fionvp_env_opts *opts)
{
	struct nvp_env_opts eopts;

	pthread_mutex_lock(&g_lock);
	if (!g_env_started) {
		nvp_env_opts_init(&eopts, sizeof(eopts));
		eopts.name = "nvpoll_fio";
		if (opts != NULL) {
			eopts.mem_size_mb = opts->mem_size_mb;
			eopts.no_huge = opts->no_huge != 0;
		}
		g_env_rc = nvp_env_init(&eopts);
		g_env_started = true;
		if (g_env_rc != 0) {
			fprintf(stderr, "nvpoll_fio: environment (%s) failed to start: %s\n",
				nvp_env_name(), strerror(-g_env_rc));
		}
	}
	pthread_mutex_unlock(&g_lock);
	return g_env_rc;
}

/*
 * The registry key: a named virtual device by its name (the options that made it count
 * only the first time: "trtype=emu name=emu0 nn=2 ns=1" then "trtype=emu name=emu0 ns=2"
 * is one controller), anything else by its transport ID without the namespace id.
 */
static int
make_key(const struct nvp_nvme_transport_id *trid, char *key, size_t len)
{
	struct nvp_nvme_transport_id t = *trid;
	int n;

	if (t.trtype == NVP_NVME_TRANSPORT_VDEV && t.name[0] != '\0') {
		n = snprintf(key, len, "vdev %s %s", t.trstring, t.name);
		return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
	}
	t.nsid = 0;
	return nvp_nvme_transport_id_fmt(key, len, &t);
}

/* Find or attach the controller for @trid; called with g_lock held. */
static struct fionvp_ctrlr *
ctrlr_get(const struct nvp_nvme_transport_id *trid, const char *filename, int *rc)
{
	struct nvp_nvme_ctrlr_opts copts;
	struct fionvp_ctrlr *c;
	char key[KEY_MAX];

	*rc = make_key(trid, key, sizeof(key));
	if (*rc != 0) {
		fprintf(stderr, "nvpoll_fio: filename '%s': transport ID too long\n", filename);
		return NULL;
	}
	TAILQ_FOREACH (c, &g_ctrlrs, link) {
		if (strcmp(c->key, key) == 0) {
			c->refs++;
			return c;
		}
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	nvp_strlcpy(c->key, key, sizeof(c->key));
	nvp_nvme_ctrlr_opts_init(&copts, sizeof(copts));
	*rc = nvp_nvme_connect(trid, &copts, &c->ctrlr);
	if (*rc != 0) {
		fprintf(stderr, "nvpoll_fio: filename '%s': cannot attach the controller: %s\n",
			filename, strerror(-*rc));
		free(c);
		return NULL;
	}
	c->refs = 1;
	TAILQ_INSERT_TAIL(&g_ctrlrs, c, link);
	return c;
}

/* Called with g_lock held. */
static void
ctrlr_put(struct fionvp_ctrlr *c)
{
	if (--c->refs > 0) {
		return;
	}
	TAILQ_REMOVE(&g_ctrlrs, c, link);
	nvp_nvme_detach(c->ctrlr);
	free(c);
}

/* Pick the namespace: "ns=N" if given, else the first active one. */
static int
target_fill(struct fionvp_target *t, uint32_t nsid, const char *filename)
{
	if (nsid == 0) {
		nsid = nvp_nvme_ctrlr_get_first_active_ns(t->ctrlr);
	}
	t->ns = nsid != 0 ? nvp_nvme_ctrlr_get_ns(t->ctrlr, nsid) : NULL;
	if (t->ns == NULL) {
		fprintf(stderr,
			"nvpoll_fio: filename '%s': namespace %u is not active on the controller "
			"(it has %u); give an active one with ns=N\n",
			filename, nsid, nvp_nvme_ctrlr_get_num_ns(t->ctrlr));
		return -ENODEV;
	}
	t->sector_size = nvp_nvme_ns_get_sector_size(t->ns);
	/* fio's offsets count buffer bytes: blocks of data plus interleaved metadata. */
	t->size = nvp_nvme_ns_get_num_sectors(t->ns) * t->sector_size;
	t->max_xfer = nvp_nvme_ns_get_max_io_xfer_size(t->ns);
	return 0;
}

int
fionvp_target_open(const char *filename, struct fionvp_target *target)
{
	struct nvp_nvme_transport_id trid;
	int rc;

	memset(target, 0, sizeof(*target));
	/* The parser takes '=' as well as ':' and the PCI address "0000.01.00.0": fio
	 * splits filenames at ':', so its users write transport IDs that way. */
	rc = nvp_nvme_transport_id_parse(&trid, filename);
	if (rc != 0) {
		fprintf(stderr,
			"nvpoll_fio: filename '%s' is not a transport ID; write e.g. "
			"'trtype=PCIe traddr=0000.01.00.0 ns=1' or 'trtype=emu name=emu0 ns=1' "
			"(no ':', fio splits filenames there)\n",
			filename);
		return rc;
	}
	pthread_mutex_lock(&g_lock);
	target->ref = ctrlr_get(&trid, filename, &rc);
	if (target->ref != NULL) {
		target->ctrlr = target->ref->ctrlr;
		rc = target_fill(target, trid.nsid, filename);
		if (rc != 0) {
			ctrlr_put(target->ref);
			target->ref = NULL;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return rc;
}

void
fionvp_target_close(struct fionvp_target *target)
{
	if (target->ref == NULL) {
		return;
	}
	pthread_mutex_lock(&g_lock);
	ctrlr_put(target->ref);
	pthread_mutex_unlock(&g_lock);
	memset(target, 0, sizeof(*target));
}
