/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nvme module's multipath controllers (SPDK's bdev_nvme_attach_controller with
 * "multipath": "failover" or "multipath"): the first attach of a name makes a multipath
 * controller (include/nvpoll/nvme_mpath.h) and its namespace's bdev "<name>n<nsid>"; a
 * later attach of the same name adds a path to it. Each channel owns a multipath I/O
 * handle (a qpair per path) made on its thread; its poll also runs the multipath admin
 * poll every ADMIN_POLL_MS (whichever channel gets there first: ANA change notices, the
 * ANA log re-reads, the resets of failed paths), so no thread of the application has to.
 * Read, write, flush, and write zeroes, unmap and compare where the controller's ONCS has
 * them (path 0's: the paths are one subsystem), as the single-path bdevs. Write lifetime
 * hints are not: they map to streams, which a controller allocates for its own host
 * (NVMe 1.4 section 9.3), so a stream opened through one path means nothing on another.
 *
 * Its bdevs are module "nvme_mpath" (the nvme module's calls on their bdevs say "not an
 * nvme bdev"); nvp_bdev_nvme_get_mpath() gives the multipath controller, whose paths and
 * ANA states nvp_nvme_mpath_get_path_info() tells. Uses only public headers.
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_nvme"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/env.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/util.h"

#include "bdev_nvme_oncs.h"

#define MPATH_MODULE "nvme_mpath"
#define ADMIN_POLL_MS 10u
#define NVME_MAX_LBA_COUNT 65536u /* NLB is 16 bits, 0's based */

struct mpath_entry {
	char name[NVP_BDEV_NAME_MAX - 12]; /* room for "n<nsid>" in the bdev name */
	struct nvp_nvme_mpath *mp;
	struct nvp_bdev *bdev; /* NULL once destructed */
	uint64_t admin_ticks;  /* between two admin polls */
	uint64_t next_admin;   /* atomic */
	TAILQ_ENTRY(mpath_entry) link;
};

struct mpath_channel {
	struct mpath_entry *e;
	struct nvp_nvme_mpath_io *io;
};

/* driver_ctx: where the SGL walk of a vectored request is; an unmap's range (it must
 * outlive the request: a path error sends it again from there) */
struct mpath_bio {
	int iov_idx;
	uint32_t iov_off;
	struct nvme_dsm_range range;
};

static pthread_mutex_t g_mpath_mutex = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, mpath_entry) g_mpaths = TAILQ_HEAD_INITIALIZER(g_mpaths);

/* ---- I/O ---- */

static void
mpath_io_done(void *arg, const struct nvme_cpl *cpl)
{
	nvp_bdev_io_complete(arg, cpl);
}

static void
mpath_reset_sgl(void *arg, uint32_t offset)
{
	struct nvp_bdev_io *io = arg;
	struct mpath_bio *b = (struct mpath_bio *)io->driver_ctx;

	b->iov_idx = 0;
	while (b->iov_idx < io->iovcnt && offset >= io->iovs[b->iov_idx].iov_len) {
		offset -= (uint32_t)io->iovs[b->iov_idx].iov_len;
		b->iov_idx++;
	}
	b->iov_off = offset;
}

static int
mpath_next_sge(void *arg, void **address, uint32_t *length)
{
	struct nvp_bdev_io *io = arg;
	struct mpath_bio *b = (struct mpath_bio *)io->driver_ctx;
	const struct iovec *iov;

	if (b->iov_idx >= io->iovcnt) {
		return -EINVAL;
	}
	iov = &io->iovs[b->iov_idx];
	*address = (char *)iov->iov_base + b->iov_off;
	*length = (uint32_t)(iov->iov_len - b->iov_off);
	b->iov_idx++;
	b->iov_off = 0;
	return 0;
}

static int
mpath_submit_rw(struct mpath_channel *ch, struct nvp_bdev_io *io)
{
	uint32_t n = (uint32_t)io->num_blocks;
	bool write = io->type == NVP_BDEV_IO_WRITE;
	uint32_t flags = write && (io->flags & NVP_BDEV_WRITE_FUA) ?
				 NVME_IO_FLAGS_FORCE_UNIT_ACCESS :
				 0;

	if (io->iovcnt == 1) {
		return write ? nvp_nvme_mpath_cmd_write(ch->io, io->iovs[0].iov_base,
							io->offset_blocks, n, mpath_io_done, io,
							flags) :
			       nvp_nvme_mpath_cmd_read(ch->io, io->iovs[0].iov_base,
						       io->offset_blocks, n, mpath_io_done, io, 0);
	}
	return write ? nvp_nvme_mpath_cmd_writev(ch->io, io->offset_blocks, n, mpath_io_done, io,
						 flags, mpath_reset_sgl, mpath_next_sge) :
		       nvp_nvme_mpath_cmd_readv(ch->io, io->offset_blocks, n, mpath_io_done, io, 0,
						mpath_reset_sgl, mpath_next_sge);
}

static int
mpath_submit_unmap(struct mpath_channel *ch, struct nvp_bdev_io *io)
{
	struct mpath_bio *b = (struct mpath_bio *)io->driver_ctx;

	memset(&b->range, 0, sizeof(b->range));
	b->range.starting_lba = io->offset_blocks;
	b->range.length = (uint32_t)io->num_blocks;
	return nvp_nvme_mpath_cmd_dataset_management(ch->io, NVME_DSM_ATTR_DEALLOCATE, &b->range, 1,
						     mpath_io_done, io);
}

static int
mpath_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct mpath_channel *ch = ch_ctx;
	int rc;

	switch (io->type) {
	case NVP_BDEV_IO_READ:
	case NVP_BDEV_IO_WRITE:
		rc = mpath_submit_rw(ch, io);
		break;
	case NVP_BDEV_IO_FLUSH:
		rc = nvp_nvme_mpath_cmd_flush(ch->io, mpath_io_done, io);
		break;
	case NVP_BDEV_IO_WRITE_ZEROES:
		rc = nvp_nvme_mpath_cmd_write_zeroes(
			ch->io, io->offset_blocks, (uint32_t)io->num_blocks, mpath_io_done, io, 0);
		break;
	case NVP_BDEV_IO_UNMAP:
		rc = mpath_submit_unmap(ch, io);
		break;
	case NVP_BDEV_IO_COMPARE:
		rc = nvp_nvme_mpath_cmd_compare(ch->io, io->iovs[0].iov_base, io->offset_blocks,
						(uint32_t)io->num_blocks, mpath_io_done, io, 0);
		break;
	default:
		rc = -ENOTSUP;
		break;
	}
	if (rc != 0) {
		nvp_bdev_io_submit_failed(io, rc);
	}
	return 0;
}

static void
mpath_poll(void *ch_ctx)
{
	struct mpath_channel *ch = ch_ctx;
	struct mpath_entry *e = ch->e;
	uint64_t now;

	(void)nvp_nvme_mpath_io_process_completions(ch->io);
	now = nvp_env_get_ticks();
	if (nvp_unlikely(now >= __atomic_load_n(&e->next_admin, __ATOMIC_RELAXED))) {
		__atomic_store_n(&e->next_admin, now + e->admin_ticks, __ATOMIC_RELAXED);
		(void)nvp_nvme_mpath_process_admin_completions(e->mp); /* -EBUSY: another has it */
	}
}

/* ---- channels ---- */

static int
mpath_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct mpath_entry *e = ctx;
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
	struct nvp_nvme_io_qpair_opts qo;
	struct mpath_channel *ch;
	int rc;

	if (opts->interrupts) {
		return -ENOTSUP;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		return -ENOMEM;
	}
	ch->e = e;
	(void)nvp_nvme_mpath_get_path_info(e->mp, 0, &info);
	nvp_nvme_ctrlr_get_default_io_qpair_opts(info.ctrlr, &qo, sizeof(qo));
	qo.io_queue_requests = NVP_MAX(qo.io_queue_requests, opts->io_pool_size);
	rc = nvp_nvme_mpath_io_alloc(e->mp, &qo, &ch->io);
	if (rc != 0) {
		free(ch);
		return rc;
	}
	*ch_ctx = ch;
	return 0;
}

static void
mpath_channel_destroy(void *ctx, void *ch_ctx)
{
	struct mpath_channel *ch = ch_ctx;

	(void)ctx;
	(void)nvp_nvme_mpath_io_free(ch->io);
	free(ch);
}

static bool
mpath_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	struct mpath_entry *e = ctx;
	struct nvp_nvme_ns *ns = nvp_nvme_mpath_get_ns(e->mp, 0);
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(nvp_nvme_ns_get_ctrlr(ns));

	return bdev_nvme_oncs_supports(cd, type);
}

static void
mpath_destruct(void *ctx)
{
	struct mpath_entry *e = ctx;

	__atomic_store_n(&e->bdev, NULL, __ATOMIC_RELEASE);
}

static const struct nvp_bdev_fn_table g_mpath_fn = {
	.destruct = mpath_destruct,
	.io_type_supported = mpath_io_type_supported,
	.channel_create = mpath_channel_create,
	.channel_destroy = mpath_channel_destroy,
	.submit = mpath_submit,
	.poll = mpath_poll,
};

/* ---- attach and detach ---- */

static struct mpath_entry *
entry_find_locked(const char *name)
{
	struct mpath_entry *e;

	TAILQ_FOREACH (e, &g_mpaths, link) {
		if (strcmp(e->name, name) == 0) {
			return e;
		}
	}
	return NULL;
}

static int
entry_register(struct mpath_entry *e)
{
	struct nvp_nvme_ns *ns = nvp_nvme_mpath_get_ns(e->mp, 0);
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(nvp_nvme_ns_get_ctrlr(ns));
	struct nvp_bdev_spec spec;
	char name[NVP_BDEV_NAME_MAX];
	uint32_t bs = nvp_nvme_ns_get_sector_size(ns);

	snprintf(name, sizeof(name), "%sn%" PRIu32, e->name, nvp_nvme_mpath_get_nsid(e->mp));
	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.module_name = MPATH_MODULE;
	spec.block_size = bs;
	spec.num_blocks = nvp_nvme_ns_get_num_sectors(ns);
	spec.max_xfer_blocks = NVP_MIN(nvp_nvme_ns_get_max_io_xfer_size(ns) / bs,
				       NVME_MAX_LBA_COUNT);
	spec.write_cache = (cd->vwc & 1u) != 0;
	spec.io_ctx_size = sizeof(struct mpath_bio);
	spec.fn_table = &g_mpath_fn;
	spec.ctx = e;
	return nvp_bdev_register(&spec, &e->bdev);
}

/* A new multipath controller @name over @trid. Under g_mpath_mutex. */
static int
entry_create_locked(const char *name, const struct nvp_nvme_transport_id *trid,
		    enum nvp_nvme_mpath_policy policy, const struct nvp_nvme_ctrlr_opts *copts,
		    struct nvp_bdev **bdev)
{
	struct nvp_nvme_mpath_opts mo;
	struct mpath_entry *e = calloc(1, sizeof(*e));
	int rc;

	if (e == NULL) {
		return -ENOMEM;
	}
	nvp_strlcpy(e->name, name, sizeof(e->name));
	e->admin_ticks = nvp_env_get_ticks_hz() * ADMIN_POLL_MS / 1000u;
	nvp_nvme_mpath_opts_init(&mo, sizeof(mo));
	mo.policy = policy;
	mo.nsid = trid->nsid;
	rc = nvp_nvme_mpath_connect(trid, 1, copts, &mo, &e->mp);
	if (rc == 0) {
		rc = entry_register(e);
		if (rc != 0) {
			(void)nvp_nvme_mpath_detach(e->mp);
		}
	}
	if (rc != 0) {
		free(e);
		return rc;
	}
	TAILQ_INSERT_TAIL(&g_mpaths, e, link);
	if (bdev != NULL) {
		*bdev = e->bdev;
	}
	return 0;
}

int
nvp_bdev_nvme_mpath_attach(const char *name, const char *trid_str, const char *policy_str,
			   const struct nvp_nvme_ctrlr_opts *ctrlr_opts, struct nvp_bdev **bdev,
			   uint32_t *num_paths)
{
	enum nvp_nvme_mpath_policy policy;
	struct nvp_nvme_transport_id trid;
	struct mpath_entry *e;
	int rc;

	if (name == NULL || trid_str == NULL || policy_str == NULL ||
	    strlen(name) + 12 > NVP_BDEV_NAME_MAX) {
		NVP_ERRLOG("nvme multipath attach: a name (up to %d characters), a transport ID "
			   "and a policy are needed",
			   NVP_BDEV_NAME_MAX - 12);
		return -EINVAL;
	}
	if (nvp_nvme_mpath_policy_parse(policy_str, &policy) != 0) {
		NVP_ERRLOG("controller %s: multipath '%s': expected failover or multipath (or "
			   "disable for a controller of one path)",
			   name, policy_str);
		return -EINVAL;
	}
	rc = nvp_nvme_transport_id_parse(&trid, trid_str);
	if (rc != 0) {
		return rc;
	}
	pthread_mutex_lock(&g_mpath_mutex);
	e = entry_find_locked(name);
	if (e == NULL) {
		rc = entry_create_locked(name, &trid, policy, ctrlr_opts, bdev);
	} else if (nvp_nvme_mpath_get_policy(e->mp) != policy) {
		NVP_ERRLOG("controller %s is multipath %s; a path for it cannot ask for %s", name,
			   nvp_nvme_mpath_policy_name(nvp_nvme_mpath_get_policy(e->mp)),
			   policy_str);
		rc = -EINVAL;
	} else {
		rc = nvp_nvme_mpath_add_path(e->mp, &trid, ctrlr_opts);
		if (rc == 0 && bdev != NULL) {
			*bdev = e->bdev;
		}
	}
	e = rc == 0 ? entry_find_locked(name) : NULL;
	if (e != NULL && num_paths != NULL) {
		*num_paths = nvp_nvme_mpath_get_num_paths(e->mp);
	}
	pthread_mutex_unlock(&g_mpath_mutex);
	if (e != NULL) {
		NVP_INFOLOG("controller %s: path %u (%s), multipath %s", name,
			    nvp_nvme_mpath_get_num_paths(e->mp) - 1, trid_str, policy_str);
	}
	return rc;
}

/* Unregister @e's bdev and detach its paths. Under g_mpath_mutex. -EBUSY if it is open. */
static int
entry_release_locked(struct mpath_entry *e)
{
	if (e->bdev != NULL && nvp_bdev_get_open_count(e->bdev) != 0) {
		NVP_ERRLOG("controller %s: bdev %s is open; close it first", e->name,
			   nvp_bdev_get_name(e->bdev));
		return -EBUSY;
	}
	if (e->bdev != NULL) {
		(void)nvp_bdev_unregister(e->bdev);
	}
	TAILQ_REMOVE(&g_mpaths, e, link);
	(void)nvp_nvme_mpath_detach(e->mp);
	free(e);
	return 0;
}

int
nvp_bdev_nvme_mpath_detach(const char *name)
{
	struct mpath_entry *e;
	int rc;

	if (name == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_mpath_mutex);
	e = entry_find_locked(name);
	rc = e != NULL ? entry_release_locked(e) : -ENODEV;
	pthread_mutex_unlock(&g_mpath_mutex);
	return rc;
}

struct nvp_nvme_mpath *
nvp_bdev_nvme_get_mpath(struct nvp_bdev *bdev)
{
	struct mpath_entry *e;

	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), MPATH_MODULE) != 0) {
		return NULL;
	}
	e = nvp_bdev_get_module_ctx(bdev);
	return e->mp;
}

/* nvp_bdev_fini(): every multipath controller (no bdev is open by then). */
static void
mpath_module_fini(void)
{
	struct mpath_entry *e;

	pthread_mutex_lock(&g_mpath_mutex);
	while ((e = TAILQ_FIRST(&g_mpaths)) != NULL) {
		if (entry_release_locked(e) != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&g_mpath_mutex);
}

static struct nvp_bdev_module g_mpath_module = {
	.name = MPATH_MODULE,
	.fini = mpath_module_fini,
};

__attribute__((constructor)) static void
mpath_module_register(void)
{
	nvp_bdev_module_register(&g_mpath_module);
}
